//! The `http` and `soak` suites: servers under a load generator, measured from outside.

pub mod check;
pub mod error;
pub mod http;
pub mod load;
pub mod procfs;
pub mod server;
pub mod session;
pub mod soak;

pub use session::SuiteError;
