//! `[cells]`: the runners jobs run on.

use std::collections::BTreeMap;

use crate::{CellId, CellLabel, FieldError, LOCAL_LABEL, check_name, raw, runners};

/// A runner: label, OS, architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The runner label jobs ask for (`runs-on`).
    pub label: CellLabel,
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
}

impl Cell {
    /// `<os>-<arch>-<label>`.
    pub fn id(&self) -> CellId {
        CellId::new(format!("{}-{}-{}", self.os, self.arch, self.label))
    }

    /// The cell as a job result records it.
    pub fn info(&self) -> cell_schema::CellInfo {
        cell_schema::CellInfo {
            id: self.id(),
            label: self.label.clone(),
            os: self.os.clone(),
            arch: self.arch.clone(),
        }
    }

    /// The machine this process runs on, as the `local` cell.
    pub fn local() -> Self {
        Self {
            label: CellLabel::from(LOCAL_LABEL),
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
        }
    }
}

/// `[cells]`.
pub(crate) fn resolve_cells(
    raw: BTreeMap<String, raw::RawCell>,
) -> Result<BTreeMap<CellLabel, Cell>, FieldError> {
    raw.into_iter()
        .map(|(label, c)| {
            let cell = resolve_cell(&label, c)?;
            Ok((cell.label.clone(), cell))
        })
        .collect()
}

/// One cell: its OS and architecture as written, else those of the GitHub-hosted label.
fn resolve_cell(label: &str, raw: raw::RawCell) -> Result<Cell, FieldError> {
    let f = format!("cells.{label}");
    check_name(label).map_err(|e| FieldError::new(f.clone(), e.to_string()))?;
    let known = runners::hosted(label);
    let os = raw.os.or_else(|| known.map(|k| k.0.to_owned()));
    let arch = raw.arch.or_else(|| known.map(|k| k.1.to_owned()));
    let (Some(os), Some(arch)) = (os, arch) else {
        return Err(FieldError::new(
            f,
            format!(
                "`{label}` is not a GitHub-hosted label cell knows: give its os and arch, e.g. os = \"linux\", arch = \"x86_64\""
            ),
        ));
    };
    if !matches!(os.as_str(), "linux" | "macos" | "windows") {
        return Err(FieldError::new(
            format!("{f}.os"),
            format!("`{os}`: write linux, macos or windows"),
        ));
    }
    if !matches!(arch.as_str(), "x86_64" | "aarch64") {
        return Err(FieldError::new(
            format!("{f}.arch"),
            format!("`{arch}`: write x86_64 or aarch64"),
        ));
    }
    Ok(Cell {
        label: CellLabel::from(label),
        os,
        arch,
    })
}
