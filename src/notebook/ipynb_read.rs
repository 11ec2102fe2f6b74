//! Reading `.ipynb` text into a JSON tree without a node per line: nbformat's
//! multiline strings (`source`, a stream's `text`, a bundle's `text/plain`),
//! which Jupyter writes as lists of lines, are joined into one string as they
//! are read. A stored notebook whose cell printed a million lines then costs
//! its text once, not a `String` and a `Value` per line (about ten times the
//! output); the rest of the reader takes a multiline string in either form.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The keys whose value is an nbformat multiline string.
const MULTILINE: &[&str] = &["source", "text", "text/plain"];

/// A JSON document read as [`Value`] is, except that a list of strings under
/// a [`MULTILINE`] key is joined into one string while it is read.
pub(super) struct Lean(pub(super) Value);

impl<'de> Deserialize<'de> for Lean {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LeanVisitor { join: false }).map(Lean)
    }
}

/// A value under a [`MULTILINE`] key: a list of strings is joined.
struct Joined(Value);

impl<'de> Deserialize<'de> for Joined {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LeanVisitor { join: true }).map(Joined)
    }
}

struct LeanVisitor {
    /// Join a list of strings into one (the value is a multiline string).
    join: bool,
}

impl<'de> Visitor<'de> for LeanVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if !self.join {
            let mut items = Vec::new();
            while let Some(Lean(v)) = seq.next_element()? {
                items.push(v);
            }
            return Ok(Value::Array(items));
        }
        // Lines are appended as they come; an element that is not a string
        // (not nbformat) keeps the list as a list.
        let mut joined = String::new();
        let mut items: Option<Vec<Value>> = None;
        while let Some(Lean(v)) = seq.next_element()? {
            match (&mut items, v) {
                (None, Value::String(line)) => joined.push_str(&line),
                (None, other) => {
                    let mut list = vec![Value::String(std::mem::take(&mut joined))];
                    list.push(other);
                    items = Some(list);
                }
                (Some(list), v) => list.push(v),
            }
        }
        Ok(items.map_or(Value::String(joined), Value::Array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if MULTILINE.contains(&key.as_str()) {
                map.next_value::<Joined>()?.0
            } else {
                map.next_value::<Lean>()?.0
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn multiline_lists_are_joined_and_everything_else_is_as_serde_json_reads_it() {
        let text = r#"{"cells": [{"source": ["a\n", "b"], "outputs": [
            {"output_type": "stream", "text": ["x\n", "y\n"]},
            {"data": {"text/plain": ["1"], "application/json": [1, 2]}},
            {"traceback": ["l1", "l2"], "n": -3, "f": 1.5, "t": true, "z": null}
        ]}], "nbformat": 4, "odd": {"text": ["s", 7]}}"#;
        let Lean(v) = serde_json::from_str(text).unwrap();
        assert_eq!(
            v,
            json!({"cells": [{"source": "a\nb", "outputs": [
                {"output_type": "stream", "text": "x\ny\n"},
                {"data": {"text/plain": "1", "application/json": [1, 2]}},
                {"traceback": ["l1", "l2"], "n": -3, "f": 1.5, "t": true, "z": null}
            ]}], "nbformat": 4, "odd": {"text": ["s", 7]}})
        );
    }
}
