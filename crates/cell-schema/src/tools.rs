//! The tools a job used: each one's version as printed, the release under test and how its
//! digest was established, and the disk a toolchain's install takes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Sha256, ToolName, ToolchainName};

/// A tool's version, as the exact binary that builds printed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolVersion {
    /// The path the build invokes.
    pub path: String,
    /// That path with every link resolved.
    pub resolved: String,
    /// The version command.
    pub argv: Vec<String>,
    /// What it printed (stdout, else stderr), trimmed.
    pub printed: String,
    /// SHA-256 of the resolved binary: the exact program that built the rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<Sha256>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// How a release's digest was established before anything was unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verified {
    /// The pin in `versions.env`.
    Pin,
    /// The release's published checksum file.
    Checksum,
    /// Both, and they agreed.
    Both,
}

impl Verified {
    /// `by the pin`, `by the published checksum`, `by the pin and the published checksum`.
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Pin => "the pin",
            Self::Checksum => "the published checksum",
            Self::Both => "the pin and the published checksum",
        }
    }
}

/// The release under test, installed from its tarball and verified before unpacking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Subject {
    /// Release tag or version.
    pub tag: String,
    /// Asset file name.
    pub asset: String,
    /// The SHA-256 verified before unpacking.
    pub sha256: Sha256,
    /// The toolchain declared the release under test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<ToolchainName>,
    /// The version as pinned in `versions.env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The URL it was downloaded from (credentials removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// How its digest was established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Verified>,
    /// Its tools: the path, the version printed, and SHA-256 and size of each binary.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<ToolName, ToolVersion>,
    /// SHA-256 of the release's binary, when an imported record has one (a job records each
    /// tool's under `tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_sha256: Option<Sha256>,
    /// Size of the release's binary in bytes, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_bytes: Option<u64>,
    /// The version the binary printed, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<String>,
}

impl Subject {
    /// What the release calls itself: the version pinned in `versions.env`, else its tag.
    pub fn version_or_tag(&self) -> String {
        self.version.clone().unwrap_or_else(|| self.tag.clone())
    }

    /// `[<toolchain> ]<tag> <asset> sha256 <hex>`: how the gate, the step summary and the
    /// report name the release.
    pub fn summary(&self) -> String {
        let name = self
            .toolchain
            .as_ref()
            .map_or(String::new(), |t| format!("{t} "));
        format!("{name}{} {} sha256 {}", self.tag, self.asset, self.sha256)
    }
}

/// How an installed size was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeMethod {
    /// The bytes of every regular file under one directory (a tarball or a setup action's
    /// install root), symbolic links not followed, hard links counted once.
    Tree,
    /// dpkg's `Installed-Size` of an apt package and of every installed package it depends
    /// on, recursively.
    Dpkg,
    /// Not measured; `how` says why.
    None,
}

/// The disk a toolchain's install takes, and how that was measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Installed {
    /// Bytes installed (dpkg's KiB times 1024); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `tree`, `dpkg` or `none`.
    pub method: SizeMethod,
    /// One line a person reads: `files under /opt/go (3012 files)`, `dpkg Installed-Size of
    /// 23 packages`, or why nothing was measured.
    pub how: String,
    /// The directory measured (`tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Packages summed (`dpkg`): the package and the dependencies installed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<u32>,
}
