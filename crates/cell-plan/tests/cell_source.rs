//! `[workflow] cell`: a pinned release installed and checked in every job (no build job, no
//! cargo), an exact git revision built once per platform, or the repository's own commit.

mod support;

use cell_testkit::lint::lint_text;
use cell_testkit::planning::{BASE, Project, hosted, versions_for};
use serde_norway::Value;
use support::PlanOf as _;

const LINUX: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const ARM: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const MAC: &str = "3333333333333333333333333333333333333333333333333333333333333333";

/// The base fixture on three platforms, with `cell = …` in its `[workflow]`.
fn toml_with(cell: &str) -> String {
    let toml = format!(
        "{BASE}{}",
        hosted(&["ubuntu-24.04", "ubuntu-24.04-arm", "macos-15"])
    );
    assert!(toml.contains("[workflow]\ncell = \"source\"\n"));
    toml.replacen(
        "[workflow]\ncell = \"source\"\n",
        &format!("[workflow]\ncell = {cell}\n"),
        1,
    )
}

fn digests() -> String {
    format!(
        "CELL_SHA256_LINUX_X86_64={LINUX}\nCELL_SHA256_LINUX_AARCH64={ARM}\nCELL_SHA256_MACOS_AARCH64={MAC}\n"
    )
}

fn jobs(text: &str) -> Vec<(String, Value)> {
    let doc: Value = serde_norway::from_str(text).unwrap();
    doc["jobs"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_owned(), v.clone()))
        .collect()
}

#[test]
fn a_pinned_release_is_installed_and_checked_in_every_job_and_nothing_builds_cell() {
    let toml = toml_with("{ version = \"0.2.0\" }");
    let versions = versions_for(&toml).replace("RUST_VERSION=1.95.0\n", "") + &digests();
    let text = cell_plan::render(&Project::new(&versions, &toml).plan()).unwrap();
    assert!(!text.contains("cargo build"), "{text}");
    assert!(!text.contains("build-linux"), "a build job: {text}");
    for (id, job) in jobs(&text) {
        let steps = job["steps"].as_sequence().unwrap();
        let install = steps
            .iter()
            .find(|s| {
                s["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("install cell 0.2.0 (the pinned release"))
            })
            .unwrap_or_else(|| panic!("{id} does not install the release"));
        let env = &install["env"];
        let urls = env["CELL_URLS"].as_str().unwrap();
        let sums = env["CELL_SHA256S"].as_str().unwrap();
        if id == "plan" || id == "collect" {
            assert_eq!(
                urls,
                "linux-x86_64=https://github.com/cell-bench/cell/releases/download/v0.2.0/cell-0.2.0-linux-x86_64.tar.gz"
            );
            assert_eq!(sums, format!("linux-x86_64={LINUX}"));
            assert_eq!(env["PLATFORM"].as_str(), Some("linux-x86_64"));
        } else {
            // A matrix job over the three platforms picks its own line.
            assert_eq!(
                sums,
                format!("linux-aarch64={ARM}\nlinux-x86_64={LINUX}\nmacos-aarch64={MAC}")
            );
            assert!(urls.contains("cell-0.2.0-macos-aarch64.tar.gz"), "{urls}");
            assert_eq!(
                env["PLATFORM"].as_str(),
                Some("${{ matrix.os }}-${{ matrix.arch }}")
            );
        }
        let needs = serde_norway::to_string(&job["needs"]).unwrap_or_default();
        assert!(!needs.contains("build-"), "{id} waits for a build: {needs}");
    }
    lint_text(&text);
    insta::assert_snapshot!("pinned_release", text);
}

#[test]
fn a_mirror_serves_the_release_through_the_url_template() {
    let toml = toml_with(
        "{ version = \"0.2.0\", url = \"https://mirror.example.org/cell/{version}/cell-{version}-{target}.tar.gz\" }",
    );
    let versions = versions_for(&toml) + &digests();
    let text = cell_plan::render(&Project::new(&versions, &toml).plan()).unwrap();
    assert!(text.contains(
        "macos-aarch64=https://mirror.example.org/cell/0.2.0/cell-0.2.0-macos-aarch64.tar.gz"
    ));
    assert!(!text.contains("github.com/cell-bench"));
}

#[test]
fn a_release_without_a_platforms_digest_is_refused_naming_the_key_and_the_command() {
    let toml = toml_with("{ version = \"0.2.0\" }");
    let versions =
        versions_for(&toml) + &digests().replace(&format!("CELL_SHA256_MACOS_AARCH64={MAC}\n"), "");
    let e = cell_plan::render(&Project::new(&versions, &toml).plan()).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("CELL_SHA256_MACOS_AARCH64"), "{e}");
    assert!(e.contains("cell-0.2.0-macos-aarch64.tar.gz"), "{e}");
    assert!(e.contains("cell plan --cell-sums"), "{e}");
}

#[test]
fn digests_without_a_release_to_check_are_unknown_keys() {
    let toml = toml_with("\"source\"");
    let versions = versions_for(&toml) + &digests();
    let e = cell_model::Plan::load(&Project::new(&versions, &toml).root).unwrap_err();
    assert!(e.to_string().contains("unknown key `CELL_SHA256_"), "{e}");
}

#[test]
fn a_git_revision_is_built_once_per_platform_from_that_commit() {
    let rev = "0123456789abcdef0123456789abcdef01234567";
    let toml = toml_with(&format!(
        "{{ git = \"https://github.com/cell-bench/cell\", rev = \"{rev}\" }}"
    ));
    let text = cell_plan::render(&Project::of(&toml).plan()).unwrap();
    let builds: Vec<_> = jobs(&text)
        .into_iter()
        .filter(|(id, _)| id.starts_with("build-"))
        .collect();
    assert_eq!(builds.len(), 3, "{text}");
    for (id, job) in builds {
        let fetch = &job["steps"][0];
        assert_eq!(fetch["env"]["CELL_REV"].as_str(), Some(rev), "{id}");
        assert_eq!(
            fetch["env"]["CELL_GIT"].as_str(),
            Some("https://github.com/cell-bench/cell")
        );
        let script = serde_norway::to_string(&job["steps"]).unwrap();
        assert!(
            script.contains("(cd cell-src && cargo build --release --locked --bin cell)"),
            "{script}"
        );
        assert!(
            !script.contains("actions/checkout"),
            "{id} checks out the project"
        );
    }
    lint_text(&text);
}

#[test]
fn the_default_builds_its_own_commit_only_in_cells_own_repository() {
    let explicit = cell_plan::render(&Project::of(&toml_with("\"source\"")).plan()).unwrap();
    assert!(explicit.contains("cargo build --release --locked --bin cell"));
    assert!(explicit.contains("build-macos-aarch64"));
    let unset = toml_with("\"source\"").replace("cell = \"source\"\n", "");
    assert!(!unset.contains("cell ="), "{unset}");
    // Another project: building its commit would not build cell, so the key is asked for.
    let e = cell_plan::render(&Project::of(&unset).plan())
        .unwrap_err()
        .to_string();
    assert!(e.contains("workflow.cell"), "{e}");
    assert!(e.contains("not cell's own repository"), "{e}");
    assert!(e.contains("cell plan --cell-sums"), "{e}");
    // cell's own repository: the same workflow as "source".
    let own = Project::of(&unset);
    std::fs::create_dir_all(own.root.join("crates/cell")).unwrap();
    std::fs::write(
        own.root.join("crates/cell/Cargo.toml"),
        "[package]\nname = \"cell-bench\"\n",
    )
    .unwrap();
    let default = cell_plan::render(&own.plan()).unwrap();
    assert_eq!(default, explicit);
}

/// A cell on a platform cell publishes no release for (Intel macOS here) is named with what to
/// do, not reported as a missing digest; a mirror's URL may serve it, so there the digest is
/// what is asked for.
#[test]
fn a_cell_on_a_platform_without_a_release_is_named_with_the_way_out() {
    let toml = format!("{BASE}{}", hosted(&["ubuntu-24.04", "macos-15-intel"])).replacen(
        "cell = \"source\"",
        "cell = { version = \"0.2.0\" }",
        1,
    );
    let versions = versions_for(&toml) + &digests();
    let e = cell_plan::render(&Project::new(&versions, &toml).plan())
        .unwrap_err()
        .to_string();
    assert!(e.contains("macos-15-intel (macos-x86_64)"), "{e}");
    assert!(
        e.contains("built for linux-x86_64, linux-aarch64, macos-aarch64 only"),
        "{e}"
    );
    assert!(e.contains("git ="), "{e}");
    let mirror = toml.replace(
        "{ version = \"0.2.0\" }",
        "{ version = \"0.2.0\", url = \"https://mirror.example.org/{version}/cell-{version}-{target}.tar.gz\" }",
    );
    let e = cell_plan::render(&Project::new(&versions, &mirror).plan())
        .unwrap_err()
        .to_string();
    assert!(e.contains("CELL_SHA256_MACOS_X86_64"), "{e}");
}
