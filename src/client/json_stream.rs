//! A JSON document read into a [`serde_json::Value`] without a scratch copy of
//! its strings.
//!
//! `serde_json` unescapes every string with an escape in it (an output stream
//! has one per line: `\n`) into a scratch buffer, then copies it into the
//! `String` it returns: reading an execution's 7 MB stdout held 14 MB at once.
//! Here each string is read by `struson`'s streaming reader straight into the
//! `String` that the `Value` keeps, so a string costs its own size once
//! (`aca-api.md` §3.1, §4.2: the answers whose streams can be megabytes).

use std::io::Read;

use serde_json::{Map, Number, Value};
use struson::reader::{JsonReader, JsonStreamReader, ValueType};

/// Reads one JSON document from `input` (bytes as they arrive; buffered
/// inside) into a [`Value`]: the same value `serde_json::from_reader` gives,
/// duplicate member names keeping the last. Nesting is limited to 128 levels
/// (`struson`'s default), so hostile depth is an error, not a stack overflow.
///
/// # Errors
///
/// What is wrong with the document, as text, with where it went wrong
/// (`struson`'s JSON path and position), or what `input` failed with.
pub(crate) fn read_value<R: Read>(input: R) -> Result<Value, String> {
    let mut reader = JsonStreamReader::new(input);
    let value = next_value(&mut reader).map_err(|e| e.to_string())?;
    reader
        .consume_trailing_whitespace()
        .map_err(|e| e.to_string())?;
    Ok(value)
}

/// The next value of `reader`, whatever its type.
fn next_value<R: Read>(
    reader: &mut JsonStreamReader<R>,
) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(match reader.peek()? {
        ValueType::Object => {
            reader.begin_object()?;
            let mut map = Map::new();
            while reader.has_next()? {
                let name = reader.next_name_owned()?;
                let value = next_value(reader)?;
                map.insert(name, value);
            }
            reader.end_object()?;
            Value::Object(map)
        }
        ValueType::Array => {
            reader.begin_array()?;
            let mut items = Vec::new();
            while reader.has_next()? {
                items.push(next_value(reader)?);
            }
            reader.end_array()?;
            Value::Array(items)
        }
        ValueType::String => {
            let mut text = String::new();
            reader.next_string_reader()?.read_to_string(&mut text)?;
            Value::String(text)
        }
        ValueType::Number => {
            let number = reader.next_number_as_string()?;
            Value::Number(number.parse::<Number>()?)
        }
        ValueType::Boolean => Value::Bool(reader.next_bool()?),
        ValueType::Null => {
            reader.next_null()?;
            Value::Null
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of value reads as `serde_json` reads it, escapes and all.
    #[test]
    fn reads_what_serde_json_reads() {
        let text = r#"{"status":"Succeeded","n":-12,"f":1.5e3,"big":18446744073709551615,
            "t":true,"z":null,"a":[1,"x\n\"y\"\u00e9\ud83d\ude00",{"k":[]}],"dup":1,"dup":2,
            "result":{"stdout":"0\n1\n2\n","stderr":"","executionResult":{"x":[1.25,false]}}}"#;
        let ours = read_value(text.as_bytes()).unwrap();
        let theirs: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(ours["dup"], 2);
    }

    /// Broken, trailing and too deep documents are errors, not panics.
    #[test]
    fn bad_documents_are_errors() {
        for bad in ["{\"a\": [1, 2", "{\"a\": 1} x", "\"\\ud800\"", "nul", ""] {
            assert!(read_value(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(100_000);
        let err = read_value(deep.as_bytes()).unwrap_err();
        assert!(err.contains("nesting"), "{err}");
    }
}
