//! Reading JSON that came from outside the process: a key given twice in one object is an
//! error, not "the last one wins", so a file cannot show one value to a reviewer and another
//! to the reader.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeOwned, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// Parses `text` as `T`, refusing any object that holds a key twice (at any depth).
pub fn from_str_unique<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str::<Unique>(text)?;
    serde_json::from_str(text)
}

/// Any JSON value, walked only to check that no object repeats a key.
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format_args!(
                    "duplicate key {:?}: a key may appear once per object",
                    crate::escape::one_line(&key)
                )));
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_key_given_twice_in_a_map_is_named_with_its_line() {
        let text = "{\n  \"rows\": {\n    \"a\": 1,\n    \"a\": 2\n  }\n}";
        let e = from_str_unique::<BTreeMap<String, BTreeMap<String, u8>>>(text).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("duplicate key \"a\""), "{msg}");
        assert!(msg.contains("line 4"), "{msg}");
    }

    #[test]
    fn the_same_key_in_sibling_objects_is_fine() {
        let text = r#"[{"a": 1}, {"a": 2}, {"b": {"a": [3]}}]"#;
        assert!(from_str_unique::<serde_json::Value>(text).is_ok());
    }

    #[test]
    fn a_duplicate_spelled_with_an_escape_is_still_a_duplicate() {
        let e = from_str_unique::<serde_json::Value>(r#"{"a": 1, "\u0061": 2}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key"), "{e}");
    }
}
