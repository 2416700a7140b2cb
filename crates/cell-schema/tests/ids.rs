//! Identifiers read from a file are checked where they enter: a name that could climb a path,
//! carry a workflow command or break a table never becomes a typed id.

use cell_schema::{CellId, Phase, RowName, ServerName, ToolchainName};

fn read<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).map_err(|e| e.to_string())
}

#[test]
fn names_that_climb_paths_or_carry_commands_are_refused_where_they_enter() {
    let hostile = [
        "",
        ".",
        "..",
        "x/../../2026-11-27-100/linux-x86_64-local",
        "../../../../evil_tc",
        "-rf",
        ".hidden",
        "a b",
        "row\n::warning::pwned",
        "col|umn",
        "`code`",
        "<script>",
        "\u{1b}[31mred",
        "a\\b",
    ];
    for h in hostile {
        for e in [
            read::<CellId>(h).err(),
            read::<ToolchainName>(h).err(),
            read::<RowName>(h).err(),
            read::<ServerName>(h).err(),
            read::<Phase>(h).err(),
        ] {
            let e = e.unwrap_or_else(|| panic!("{h:?} was accepted"));
            assert!(e.contains("is not a valid"), "{e}");
            assert!(
                !e.contains('\n'),
                "the message itself carries the line break: {e}"
            );
        }
    }
    let long = "x".repeat(cell_schema::ids::MAX_ID_LEN + 1);
    assert!(read::<RowName>(&long).is_err());
    for ok in [
        "linux-x86_64-ubuntu-24.04",
        "c-fast",
        "gcc-O2",
        "http-rust",
        "mix",
        "c++17",
    ] {
        assert!(read::<CellId>(ok).is_ok(), "{ok}");
    }
}

#[test]
fn a_map_keyed_by_a_hostile_name_is_refused_too() {
    let map: Result<std::collections::BTreeMap<RowName, u32>, _> =
        serde_json::from_str(r#"{"../up": 1}"#);
    assert!(map.is_err());
}
