//! The configuration as it was at a commit: the tree of that commit without `results/`
//! (`git archive`), unpacked under the same caps as any archive, and loaded. A collect judges a
//! run by the thresholds it ran with; a job installs the previous release by the pins its
//! baseline ran with.

use std::path::Path;

use cell_model::Plan;

/// The plan of commit `rev` of the checkout at `root`, unpacked into `scratch`; the error is
/// one line naming what failed.
pub fn plan_at(root: &Path, rev: &str, scratch: &Path) -> Result<Plan, String> {
    if rev.is_empty() || rev.starts_with('-') || !rev.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "`{}` names no commit (a SHA or a ref)",
            cell_schema::escape::one_line(rev)
        ));
    }
    let zip = scratch.join("config.zip");
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["archive", "--format=zip", "-o"])
        .arg(&zip)
        // The whole tree but the history: the plan checks the rows' sources exist.
        .args([rev, "--", ".", ":(exclude)results"])
        .output()
        .map_err(|e| format!("running git archive: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "reading the configuration at {rev}: {}",
            cell_schema::escape::one_line(String::from_utf8_lossy(&out.stderr).trim())
        ));
    }
    let dir = scratch.join("config");
    cell_fetch::unpack(
        &zip,
        cell_fetch::ArchiveKind::Zip,
        &dir,
        &cell_fetch::UnpackOptions::default(),
    )
    .map_err(|e| format!("unpacking the configuration of {rev}: {e}"))?;
    Plan::load(&dir).map_err(|e| format!("loading the cell definition of commit {rev}: {e}"))
}
