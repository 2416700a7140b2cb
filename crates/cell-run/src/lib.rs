//! What runs inside one job: fetch and verify a tarball, probe tools, build rows, time them
//! per the protocol, read host facts, and write the job dir.

pub mod facts;
pub mod http;
pub mod job;
pub mod protocol;
pub mod timing;
pub mod tools;

pub use job::{Event, JobError, JobOptions, run_job, write_atomic};
