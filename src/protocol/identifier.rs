//! The rules a session identifier must meet (`aca-api.md` §4.5): 4 to 128
//! characters from the spec's set. The local pool answers a breach with 400
//! `SessionRequestValidationFailed`; the command line refuses it before any
//! call.

/// The characters besides ASCII letters and digits an identifier may hold.
pub const EXTRA: &str = "_|}{[]:\"';<>?/.,@#$%^&*()-+=!~`";

/// Checks `id` against the identifier rules.
///
/// # Errors
///
/// A message naming the identifier and the rule it breaks.
pub fn check(id: &str) -> Result<(), String> {
    let len = id.chars().count();
    let ok_chars = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || EXTRA.contains(c));
    if (4..=128).contains(&len) && ok_chars {
        Ok(())
    } else {
        Err(format!(
            "identifier {id:?} is invalid: it must be 4 to 128 characters, letters, digits or {EXTRA}"
        ))
    }
}
