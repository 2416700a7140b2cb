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
fn pr_schema_snapshot() {
    insta::assert_json_snapshot!("pr.schema", cell_schema::pr_schema());
}

#[test]
fn docs_copies_are_current() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    for (file, schema) in [
        ("results.schema.json", cell_schema::results_schema()),
        ("facts.schema.json", cell_schema::facts_schema()),
        ("gate.schema.json", cell_schema::gate_schema()),
        ("pr.schema.json", cell_schema::pr_schema()),
        (
            "imported-soak.schema.json",
            cell_schema::imported_soak_schema(),
        ),
    ] {
        let committed = std::fs::read_to_string(docs.join(file)).unwrap_or_default();
        if file == "results.schema.json" {
            assert!(
                committed.contains("\"samples\"") && !committed.contains("\"wall_s\""),
                "docs/schema/results.schema.json is the current version's"
            );
        }
        assert_eq!(
            committed,
            cell_schema::to_json(&schema),
            "docs/schema/{file} is stale: run `cargo run -p cell-bench -- schema {} > docs/schema/{file}`",
            file.split(".schema").next().unwrap()
        );
    }
}

/// Version 1 is frozen: its schema is the one emitted when it was written, kept beside the
/// current one, and `cell schema results --schema-version 1` prints it.
#[test]
fn the_version_one_schema_is_kept_as_it_was() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    let v1 = cell_schema::results_schema_of(1).expect("version 1 is read");
    assert_eq!(
        std::fs::read_to_string(docs.join("results.v1.schema.json")).unwrap(),
        v1,
        "docs/schema/results.v1.schema.json is the frozen version 1"
    );
    let parsed: serde_json::Value = serde_json::from_str(v1).unwrap();
    let phase = &parsed["$defs"]["PhaseResult"]["properties"];
    assert!(
        phase["runs"].is_object() && phase["samples"].is_null(),
        "{phase}"
    );
    assert_eq!(
        cell_schema::results_schema_of(cell_schema::SCHEMA_VERSION),
        None
    );
    assert_eq!(cell_schema::results_schema_of(0), None);
}

#[test]
fn a_newer_schema_version_is_refused() {
    let err = cell_schema::read_results(r#"{"schema_version": 3, "kind": "job"}"#).unwrap_err();
    assert!(
        err.to_string().contains(
            "written by a newer cell (schema_version 3; this cell reads up to 2): upgrade cell"
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
