//! Bringing a run home: the GitHub client, the merge of DESIGN §5, the atomic and idempotent
//! run directory under `results/`, and the git commit and push.

pub mod collect;
pub mod git;
pub mod github;
pub mod merge;

pub use collect::{CollectError, Collected, Options, Source, Written, collect};
pub use merge::{AnyJob, JobInput, MergedCell, merge_run, write_run_dir};
