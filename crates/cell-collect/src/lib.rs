//! Bringing a run home: the run's records and artifacts (through `cell-github`), the
//! merge of a run's jobs into cell results, the git commit and push, and a pull request
//! run's `cell-pr` artifact read as hostile (`pr`). What it returns is
//! data; the binary renders it and writes it into the results store.

pub mod collect;
pub mod git;
pub mod lock;
pub mod merge;
pub mod pr;

pub use collect::{CollectError, Collected, Options, Source, collect};
pub use merge::{JobInput, MergedCell, merge_run};
