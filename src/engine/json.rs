//! JSON text to and from `Data`. In: the `data` record a caller sends as JSON text (see
//! `lib/data-text.js`, which sends only plain JSON), parsed in key order and charged against the
//! copy's caps exactly as a native copy of the same values is charged. Out: a copied value as
//! JSON, for every value JSON keeps exactly (used by the run reply, `reply.rs`).

use super::marshal::{CopyBudget, CopyLimits, Data, Path, Text};

/// Reads the `data` record given as JSON text (see `lib/data-text.js`, which sends only plain
/// JSON) and charges it against the copy's caps exactly as `HostReader` charges the same values.
pub fn read_data_text(text: &str, limits: CopyLimits) -> Result<Vec<(String, Data)>, String> {
    let JsonRecord(entries) =
        serde_json::from_str(text).map_err(|e| format!("data is not a JSON record: {e}"))?;
    let mut budget = CopyBudget::new(limits);
    let root = Path::Root("data");
    for (key, value) in &entries {
        charge(&mut budget, value, 0, &Path::Key(&root, key))?;
    }
    Ok(entries)
}

/// Charges one value and everything in it, in the order `HostReader` reads them.
pub(crate) fn charge(
    budget: &mut CopyBudget,
    v: &Data,
    depth: usize,
    path: &Path,
) -> Result<(), String> {
    let bytes = match v {
        Data::Bool(_) => 1,
        Data::Number(_) => 8,
        Data::String(t) => t.byte_len(),
        Data::Array(_) | Data::Object(_) => 16,
        _ => 0,
    };
    budget.node(bytes, depth, path)?;
    match v {
        Data::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                charge(budget, item, depth + 1, &Path::Index(path, i))?;
            }
        }
        Data::Object(entries) => {
            for (k, item) in entries {
                charge(budget, item, depth + 1, &Path::Key(path, k))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A JSON value as `Data`, keys in their order.
struct JsonValue(Data);
/// A JSON object as the `data` record.
struct JsonRecord(Vec<(String, Data)>);

impl<'de> serde::Deserialize<'de> for JsonValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor).map(JsonValue)
    }
}

impl<'de> serde::Deserialize<'de> for JsonRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_map(JsonVisitor)? {
            Data::Object(entries) => Ok(JsonRecord(entries)),
            _ => Err(serde::de::Error::custom("not an object")),
        }
    }
}

struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Data;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Data, E> {
        Ok(Data::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Data, E> {
        Ok(Data::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Data, E> {
        Ok(Data::Number(n as f64))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Data, E> {
        Ok(Data::Number(n as f64))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Data, E> {
        Ok(Data::Number(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Data, E> {
        Ok(Data::str(s))
    }
    fn visit_string<E>(self, s: String) -> Result<Data, E> {
        Ok(Data::str(s))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Data, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(JsonValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Data::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Data, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, JsonValue(v))) = map.next_entry::<String, JsonValue>()? {
            entries.push((k, v));
        }
        Ok(Data::Object(entries))
    }
}

/// A copied value written as JSON; fails for every value JSON would change or lose.
pub(crate) struct JsonData<'a>(pub(crate) &'a Data);

impl serde::Serialize for JsonData<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeMap, SerializeSeq};
        match self.0 {
            Data::Null => s.serialize_unit(),
            Data::Bool(b) => s.serialize_bool(*b),
            Data::Number(n) if n.is_finite() && !(*n == 0.0 && n.is_sign_negative()) => {
                // Integers print without a fraction ("3", not "3.0"); both parse to the same.
                if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                    s.serialize_i64(*n as i64)
                } else {
                    s.serialize_f64(*n)
                }
            }
            Data::String(Text::Utf8(text)) => s.serialize_str(text),
            Data::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&JsonData(item))?;
                }
                seq.end()
            }
            Data::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &JsonData(v))?;
                }
                map.end()
            }
            _ => Err(S::Error::custom("no JSON form")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_depth: usize, max_nodes: usize, max_bytes: usize) -> CopyLimits {
        CopyLimits {
            max_depth,
            max_nodes,
            max_bytes,
        }
    }

    #[test]
    fn a_record_keeps_its_keys_in_order_and_its_values() {
        let data = read_data_text(
            r#"{"b":1,"a":[true,null,"x",2.5],"c":{"__proto__":{"z":-3}}}"#,
            CopyLimits::default(),
        )
        .unwrap();
        assert_eq!(
            data,
            vec![
                ("b".into(), Data::Number(1.0)),
                (
                    "a".into(),
                    Data::Array(vec![
                        Data::Bool(true),
                        Data::Null,
                        Data::str("x"),
                        Data::Number(2.5)
                    ])
                ),
                (
                    "c".into(),
                    Data::Object(vec![(
                        "__proto__".into(),
                        Data::Object(vec![("z".into(), Data::Number(-3.0))])
                    )])
                ),
            ]
        );
    }

    #[test]
    fn text_that_is_not_a_record_is_refused() {
        for text in ["[1]", "1", "\"x\"", "{", "null"] {
            let e = read_data_text(text, CopyLimits::default()).unwrap_err();
            assert!(e.starts_with("data is not a JSON record"), "{text}: {e}");
        }
    }

    #[test]
    fn records_are_charged_as_a_copy_is() {
        // Depth: `data.a` is at depth 0, its array at 0 too, the inner items one deeper.
        let e = read_data_text(r#"{"a":[[1]]}"#, limits(1, 100, 1000)).unwrap_err();
        assert_eq!(e, "nesting deeper than 1 levels at data.a[0][0]");
        assert!(read_data_text(r#"{"a":[1]}"#, limits(1, 100, 1000)).is_ok());
        // Nodes: every value counts, containers included.
        let e = read_data_text(r#"{"a":[1,2,3]}"#, limits(10, 3, 1000)).unwrap_err();
        assert_eq!(e, "more than 3 values");
        assert!(read_data_text(r#"{"a":[1,2,3]}"#, limits(10, 4, 1000)).is_ok());
        // Bytes: 16 per container, 8 per number, 1 per boolean, the string's UTF-8 length.
        let text = r#"{"a":[1,true,"héllo"]}"#;
        assert!(read_data_text(text, limits(10, 100, 16 + 8 + 1 + 6)).is_ok());
        let e = read_data_text(text, limits(10, 100, 16 + 8 + 1 + 5)).unwrap_err();
        assert_eq!(e, "more than 30 bytes");
        // A key needing quotes is shown quoted in the path.
        let e = read_data_text(r#"{"a b":[[0]]}"#, limits(1, 100, 1000)).unwrap_err();
        assert_eq!(e, r#"nesting deeper than 1 levels at data["a b"][0][0]"#);
    }

    fn json(d: &Data) -> Option<String> {
        serde_json::to_string(&JsonData(d)).ok()
    }

    #[test]
    fn json_is_written_only_for_values_it_keeps_exactly() {
        let value = Data::Object(vec![
            ("n".into(), Data::Number(3.0)),
            ("f".into(), Data::Number(0.5)),
            ("big".into(), Data::Number(1e300)),
            ("s".into(), Data::str("q\"\n")),
            ("a".into(), Data::Array(vec![Data::Null, Data::Bool(false)])),
        ]);
        assert_eq!(
            json(&value).unwrap(),
            r#"{"n":3,"f":0.5,"big":1e+300,"s":"q\"\n","a":[null,false]}"#
        );
        for lost in [
            Data::Undefined,
            Data::Number(-0.0),
            Data::Number(f64::NAN),
            Data::Number(f64::INFINITY),
            Data::BigInt {
                negative: false,
                words: vec![1],
            },
            Data::Date(0.0),
            Data::Map(Vec::new()),
            Data::Set(Vec::new()),
            Data::Ref(0),
            Data::Array(vec![Data::Undefined]),
        ] {
            assert_eq!(json(&lost), None, "{lost:?}");
        }
    }
}
