//! The `http` and `soak` suites: servers under a load generator, measured from outside.

pub mod check;
pub mod load;
pub mod procfs;
pub mod server;
pub mod session;
pub mod soak;
pub mod suite;

pub use session::SuiteError;
