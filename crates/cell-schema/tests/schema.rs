//! The emitted JSON Schemas are snapshotted, so a change to the wire format shows in review;
//! the copies under docs/schema/ must match what `cell schema` prints.

#[test]
fn results_schema_snapshot() {
    insta::assert_json_snapshot!("results.schema", cell_schema::results_schema());
}

#[test]
fn facts_schema_snapshot() {
    insta::assert_json_snapshot!("facts.schema", cell_schema::facts_schema());
}

#[test]
fn imported_soak_schema_snapshot() {
    insta::assert_json_snapshot!("imported-soak.schema", cell_schema::imported_soak_schema());
}

#[test]
fn gate_schema_snapshot() {
    insta::assert_json_snapshot!("gate.schema", cell_schema::gate_schema());
}

#[test]
fn docs_copies_are_current() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    for (file, schema) in [
        ("results.schema.json", cell_schema::results_schema()),
        ("facts.schema.json", cell_schema::facts_schema()),
        ("gate.schema.json", cell_schema::gate_schema()),
        (
            "imported-soak.schema.json",
            cell_schema::imported_soak_schema(),
        ),
    ] {
        let committed = std::fs::read_to_string(docs.join(file)).unwrap_or_default();
        assert_eq!(
            committed,
            cell_schema::to_json(&schema),
            "docs/schema/{file} is stale: run `cargo run -p cell -- schema {} > docs/schema/{file}`",
            file.split(".schema").next().unwrap()
        );
    }
}

#[test]
fn a_newer_schema_version_is_refused() {
    let err = cell_schema::read_results(r#"{"schema_version": 2, "kind": "job"}"#).unwrap_err();
    assert!(
        err.to_string().contains(
            "written by a newer cell (schema_version 2; this cell reads up to 1): upgrade cell"
        ),
        "{err}"
    );
    assert!(cell_schema::read_results(r#"{"kind": "job"}"#).is_err());
}

/// Regression: the four kinds were one untagged enum, so a job missing one field was refused
/// as "did not match any variant" without saying which field.
#[test]
fn an_unreadable_file_names_the_field_of_its_kind() {
    let err = cell_schema::read_results(r#"{"schema_version": 1, "kind": "job"}"#).unwrap_err();
    assert!(err.to_string().contains("missing field"), "{err}");
    let err = cell_schema::read_results(r#"{"schema_version": 1, "kind": "tarball"}"#).unwrap_err();
    assert!(
        err.to_string().contains("kind \"tarball\" is not one of"),
        "{err}"
    );
    let err = cell_schema::read_results(r#"{"schema_version": 1}"#).unwrap_err();
    assert!(err.to_string().contains("kind missing"), "{err}");
}
