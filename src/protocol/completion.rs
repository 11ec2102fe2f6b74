//! Tab completion's answer, the wire shape of the local pool's
//! `/.sessionpad/complete` ([`super::routes::COMPLETE_ROUTE`]).

use serde::{Deserialize, Serialize};

/// The kernel's completions for one cursor position.
///
/// Wire shape of `/.sessionpad/complete` (a sessionpad route; the service has
/// none): `{"matches": [..], "cursorStart": N, "cursorEnd": N, "busy": bool}`,
/// positions in Unicode code points of the request's `code` (Jupyter's unit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The candidates, each replacing `code[cursor_start..cursor_end]`.
    pub matches: Vec<String>,
    /// Where the replaced text starts, code points.
    pub cursor_start: usize,
    /// Where the replaced text ends, code points.
    pub cursor_end: usize,
    /// True when the kernel was running code and could not answer in time (no
    /// matches then).
    #[serde(default)]
    pub busy: bool,
}

impl Completion {
    /// No candidates because the kernel is running code.
    pub fn busy(cursor: usize) -> Self {
        Self {
            matches: Vec::new(),
            cursor_start: cursor,
            cursor_end: cursor,
            busy: true,
        }
    }
}
