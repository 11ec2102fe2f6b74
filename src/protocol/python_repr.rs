//! The Python literal a JSON result value came from: how a Python pool's
//! `result` / `executionResult` (`aca-api.md` §3.1, §4.2, every api-version
//! without `returnJupyterFormatExecutionResult`) is shown, as Python's `repr`
//! would show it: `{"a":1,"b":null}` → `{'a': 1, 'b': None}`, `true` → `True`,
//! `[1,2.5,"x"]` → `[1, 2.5, 'x']` (a tuple arrives as a JSON array and cannot be
//! told from a list).
//!
//! Pure functions; nothing here knows the wire or the terminal.

use serde_json::{Number, Value};

/// The text to show for a result value `value` read from a reply without the
/// Jupyter format: the Python literal it came from when the pool runs Python
/// (`python`), else the JSON itself (a string as its text, anything else as
/// compact JSON), so nothing is shown as Python that may not be.
///
/// A top-level string is ambiguous on the wire: it is a Python `str`, or the
/// `text/plain` form of a value without a JSON type (what a pool sends for a
/// DataFrame, an ndarray or a list of matplotlib artists), or the service's
/// spelling of a float that JSON cannot hold (`"nan"`, `"inf"`, `"-inf"`,
/// `aca-api.md` §4.2). It is quoted as a `str` only when it does not look like
/// one of the other two ([`looks_like_repr`]); a `str` whose text happens to look
/// like a repr is then shown unquoted. Strings inside a list or dict are always
/// `str` (they went through `json.dumps`) and are always quoted.
#[must_use]
pub fn display_text(value: &Value, python: bool) -> String {
    match (value, python) {
        (Value::String(s), true) if looks_like_repr(s) => s.clone(),
        (Value::String(s), false) => s.clone(),
        (other, true) => python_literal(other),
        (other, false) => other.to_string(),
    }
}

/// True when a top-level string result is more likely the `text/plain` form of
/// a value than a Python `str`: the float spellings `nan`, `inf`, `-inf`; more
/// than one line (tables, arrays); or the shape of a repr: `<…>` (an object's
/// default repr), a bracketed display `[…]`, `(…)`, `{…}`, a call such as
/// `array([1, 2])` or `Timestamp('2024-01-01 00:00:00')`, or a bytes literal
/// `b'…'`.
#[must_use]
pub fn looks_like_repr(s: &str) -> bool {
    if matches!(s, "nan" | "inf" | "-inf") || s.contains('\n') {
        return true;
    }
    let bracketed = |open: char, close: char| s.starts_with(open) && s.ends_with(close);
    if s.len() >= 2
        && (bracketed('<', '>')
            || bracketed('[', ']')
            || bracketed('(', ')')
            || bracketed('{', '}'))
    {
        return true;
    }
    if (s.starts_with("b'") && s.ends_with('\'')) || (s.starts_with("b\"") && s.ends_with('"')) {
        return s.len() >= 3;
    }
    // A call: a dotted name, then `(…)` to the end.
    match s.find('(') {
        Some(open) if open > 0 && s.ends_with(')') => {
            let name = &s[..open];
            name.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        }
        _ => false,
    }
}

/// The Python literal of a JSON value, as `repr` writes it: `None`,
/// `True`/`False`, ints as they are, floats as Python's shortest repr (`2.0`,
/// `1e+20`, `1.5e-07`), strings quoted ([`str_repr`]), lists `[a, b]`, dicts
/// `{'k': v}`.
#[must_use]
pub fn python_literal(value: &Value) -> String {
    let mut out = String::new();
    write_literal(value, &mut out);
    out
}

fn write_literal(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(&str_repr(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_literal(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&str_repr(key));
                out.push_str(": ");
                write_literal(item, out);
            }
            out.push('}');
        }
    }
}

/// An int as it is; a float as Python's `repr(float)`: the shortest digits that
/// read back the same, positional for exponents −4 to 15 (with `.0` when whole),
/// else `d.ddde±XX`.
fn number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    // `{:e}` is Rust's shortest round-trip digits in scientific form: `1.5e3`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{f}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    }
}

/// Python's `repr` of a `str`: in single quotes unless the text has a single
/// quote and no double quote; backslash, the quote, `\n`, `\r`, `\t` escaped,
/// other control characters as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
#[must_use]
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let code = u32::from(c);
                if code <= 0xff {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code <= 0xffff {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_values_read_as_the_python_literals_they_came_from() {
        assert_eq!(
            python_literal(&json!({"a": 1, "b": null})),
            "{'a': 1, 'b': None}"
        );
        assert_eq!(python_literal(&json!([1, 2.5, "x"])), "[1, 2.5, 'x']");
        assert_eq!(python_literal(&json!([true, false])), "[True, False]");
        assert_eq!(python_literal(&json!({})), "{}");
        assert_eq!(python_literal(&json!([])), "[]");
        assert_eq!(
            python_literal(&json!({"k": [1, {"n": null}]})),
            "{'k': [1, {'n': None}]}"
        );
    }

    #[test]
    fn floats_follow_python_repr() {
        for (v, shown) in [
            (json!(2.0), "2.0"),
            (json!(10.5), "10.5"),
            (json!(0.1), "0.1"),
            (json!(1e20), "1e+20"),
            (json!(1e16), "1e+16"),
            (json!(1e15), "1000000000000000.0"),
            (json!(1.5e-7), "1.5e-07"),
            (json!(0.0001), "0.0001"),
            (json!(-2.5), "-2.5"),
            (json!(36.017_857_142_857_146), "36.017857142857146"),
            (json!(-7), "-7"),
            (
                json!(18_446_744_073_709_551_615_u64),
                "18446744073709551615",
            ),
        ] {
            assert_eq!(python_literal(&v), shown, "{v}");
        }
    }

    #[test]
    fn strings_are_quoted_as_repr_quotes_them() {
        assert_eq!(str_repr("ab"), "'ab'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("both ' and \""), "'both \\' and \"'");
        assert_eq!(str_repr("a\nb\\c\t"), "'a\\nb\\\\c\\t'");
        assert_eq!(str_repr("\u{1b}[2J"), "'\\x1b[2J'");
        assert_eq!(str_repr("é"), "'é'");
    }

    #[test]
    fn a_top_level_string_is_quoted_unless_it_is_a_repr_already() {
        assert_eq!(display_text(&json!("ab"), true), "'ab'");
        assert_eq!(display_text(&json!("hello world"), true), "'hello world'");
        for repr in [
            "nan",
            "-inf",
            "[<matplotlib.lines.Line2D at 0x7f0>]",
            "<Figure size 640x480 with 1 Axes>",
            "   a  b\n0  1  2",
            "array([1, 2, 3])",
            "Timestamp('2024-01-01 00:00:00')",
            "datetime.date(2024, 1, 1)",
            "{1, 2}",
            "(1+2j)",
            "b'bytes'",
        ] {
            assert_eq!(display_text(&json!(repr), true), repr, "{repr}");
        }
        assert_eq!(display_text(&json!(""), true), "''");
        assert_eq!(display_text(&json!("f"), true), "'f'");
    }

    #[test]
    fn a_pool_not_known_to_run_python_shows_its_json() {
        assert_eq!(
            display_text(&json!({"a": 1, "b": null}), false),
            r#"{"a":1,"b":null}"#
        );
        assert_eq!(display_text(&json!("text"), false), "text");
        assert_eq!(display_text(&json!(true), false), "true");
    }
}
