//! docs/configuration.md lists every setting with the default the code uses.

#[test]
fn every_default_is_documented_with_its_value() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md"),
    )
    .unwrap();
    for (key, default, _) in cell_model::DEFAULTS {
        let row = format!("| `{key}` | {default} |");
        assert!(
            doc.contains(&row),
            "docs/configuration.md lacks the row `{row}`"
        );
    }
}
