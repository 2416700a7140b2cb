//! What runs inside one job: probe tools, build rows, time them per the protocol, read host
//! facts, and the http and soak suites. Every function returns data (a job result); the
//! binary renders it and writes the job dir.

pub mod build;
pub mod cache;
pub mod calibrate;
pub mod capture;
pub mod code_size;
mod config_at;
pub mod cpus;
pub mod facts;
pub mod install;
pub mod installed;
pub mod instructions;
pub mod job;
pub mod protocol;
pub mod scripted;
pub mod suites;
pub mod timing;
pub mod tools;

pub use calibrate::calibrate;
pub use code_size::text_bytes;
pub use config_at::plan_at;
pub use installed::{installed_dir, tree_size};
pub use job::{BaselineSource, Event, JobError, JobOptions, run_job};
