//! Bringing job results home: the merge of DESIGN §5 and the run directory it writes.
//! (The GitHub client and the git commit join this crate with `cell collect`.)

pub mod merge;

pub use merge::{JobInput, MergedCell, merge_run, write_run_dir};
