//! `scripts/setup` runs before cell is built, so it cannot ask cell which load generators to
//! install: this checks that it installs every one the table lists, the way the table says.

use cell_model::{LOAD_TOOLS, LoadInstall};

fn setup_script() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/setup");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A load generator added to the table was missing from a contributor's machine until
/// `scripts/setup --http` learnt it by hand.
#[test]
fn setup_installs_every_load_generator_as_the_table_says() {
    let script = setup_script();
    for tool in LOAD_TOOLS {
        let wanted: Vec<String> = match tool.install {
            LoadInstall::Apt { package } => vec![format!("need {} {package}\n", tool.name)],
            LoadInstall::Crate { krate, version_key } => vec![
                format!("sed -n 's/^{version_key}=//p' versions.env"),
                format!("cargo install -q {krate} --locked --version \""),
            ],
            // Before cell is built there is no `cell fetch`: the script reads both keys and
            // checks the digest itself before unpacking.
            LoadInstall::Tarball {
                url_key,
                sha256_key,
                ..
            } => vec![
                format!("sed -n 's/^{url_key}=//p' versions.env"),
                format!("sed -n 's/^{sha256_key}=//p' versions.env"),
                "sha256sum -c".to_owned(),
            ],
        };
        for line in wanted {
            assert!(
                script.contains(&line),
                "scripts/setup does not install `{}` as the load tool table says: it lacks `{}`",
                tool.name,
                line.trim_end()
            );
        }
    }
}
