//! The documented exit codes.

use std::process::ExitCode;

/// What a command ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: everything held.
    Ok,
    /// 1: a gate tripped (wrong answer, checksum mismatch, tooth, regression, leak).
    Gate,
    /// 2: usage or infrastructure error.
    Infra,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        match e {
            Exit::Ok => Self::SUCCESS,
            Exit::Gate => Self::from(1),
            Exit::Infra => Self::from(2),
        }
    }
}
