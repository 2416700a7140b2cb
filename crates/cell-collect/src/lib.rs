//! Bringing a run home: the GitHub client, the artifact download (through `cell-fetch`), the
//! merge of a run's jobs into cell results, and the git commit and push. What it returns is
//! data; the binary renders it and writes it into the results store.

pub mod collect;
pub mod git;
pub mod github;
pub mod lock;
pub mod merge;

pub use collect::{CollectError, Collected, Options, Source, collect};
pub use merge::{JobInput, MergedCell, merge_run};
