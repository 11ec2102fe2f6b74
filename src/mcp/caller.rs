//! Who an MCP command is run for: the MCP host, by the name it gave in its
//! `initialize` request (`params.clientInfo`, `{name, version}`, MCP
//! specification 2025-03-26, "Lifecycle"), so that the flight recorder names
//! the host (Claude Code, an agent framework) rather than the HTTP library it
//! speaks through, or sessionpad itself for `sessionpad mcp` (issue 26).
//!
//! The recorded client of an MCP command is one line of text:
//!
//! - `<name>/<version> via MCP` (`acme-agent/0.3 via MCP`), or `<name> via
//!   MCP` when the host gave no version;
//! - for a host that gave no name (the service's tutorials post `initialize`
//!   without `params`): `<User-Agent> via MCP` with its HTTP client's
//!   `User-Agent` (`curl/8.5.0 via MCP`), else `unnamed-host via MCP`.
//!
//! The text is untrusted (the host chose it) and travels as an HTTP
//! `User-Agent` (`sessionpad mcp` names its calls to the pool with it), so it
//! is kept to printable ASCII: any other character of the name or version,
//! and `%`, is written as its UTF-8 bytes percent-encoded (`é` → `%C3%A9`),
//! and each part is cut at [`MAX_PART`] characters.

use axum::http::HeaderValue;

/// Most characters kept of the name and of the version (after encoding).
pub const MAX_PART: usize = 64;

/// What the label of a host that gave no name and has no `User-Agent` starts
/// with.
pub const UNNAMED: &str = "unnamed-host";

/// What every label ends with: the call came through MCP.
pub const VIA_MCP: &str = " via MCP";

/// The MCP host a command is run for, as its label (see the module doc).
/// Always a valid HTTP header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    label: String,
}

impl Caller {
    /// The host that gave `clientInfo` `name` and `version` in `initialize`;
    /// where the name is empty (or only spaces), the HTTP client's
    /// `user_agent` names it, else [`UNNAMED`].
    pub fn of_client_info(name: &str, version: &str, user_agent: Option<&str>) -> Self {
        let name = printable(name);
        let who = if name.is_empty() {
            user_agent
                .map(printable)
                .filter(|ua| !ua.is_empty())
                .unwrap_or_else(|| UNNAMED.to_string())
        } else {
            match printable(version) {
                v if v.is_empty() => name,
                v => format!("{name}/{v}"),
            }
        };
        Self {
            label: format!("{who}{VIA_MCP}"),
        }
    }

    /// A host that gave no name, known only by its HTTP client's `user_agent`
    /// (if any).
    pub fn unnamed(user_agent: Option<&str>) -> Self {
        Self::of_client_info("", "", user_agent)
    }

    /// The label the call is recorded under, e.g. `acme-agent/0.3 via MCP`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The label as an HTTP header value (a `User-Agent`).
    pub fn header_value(&self) -> HeaderValue {
        HeaderValue::from_str(&self.label)
            .unwrap_or_else(|_| HeaderValue::from_static("unnamed-host via MCP"))
    }
}

/// `text` trimmed, with every character but printable ASCII (and `%`)
/// percent-encoded, at most [`MAX_PART`] characters (never cutting an
/// encoded byte in two).
fn printable(text: &str) -> String {
    let mut out = String::new();
    for c in text.trim().chars() {
        let piece = if (c.is_ascii_graphic() && c != '%') || c == ' ' {
            c.to_string()
        } else {
            let mut buf = [0u8; 4];
            c.encode_utf8(&mut buf)
                .bytes()
                .map(|b| format!("%{b:02X}"))
                .collect()
        };
        if out.len() + piece.len() > MAX_PART {
            break;
        }
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_host_is_its_name_and_version_via_mcp() {
        let c = Caller::of_client_info("acme-agent", "0.3", Some("python-httpx/0.28"));
        assert_eq!(c.label(), "acme-agent/0.3 via MCP");
        assert_eq!(
            Caller::of_client_info(" claude-code ", "", None).label(),
            "claude-code via MCP"
        );
    }

    #[test]
    fn an_unnamed_host_is_its_user_agent_or_unnamed() {
        assert_eq!(
            Caller::of_client_info("", "1.0", Some("curl/8.5.0")).label(),
            "curl/8.5.0 via MCP"
        );
        assert_eq!(Caller::unnamed(Some("  ")).label(), "unnamed-host via MCP");
        assert_eq!(Caller::unnamed(None).label(), "unnamed-host via MCP");
    }

    #[test]
    fn what_is_not_printable_ascii_is_percent_encoded_and_cut() {
        let c = Caller::of_client_info("agent\r\nX-Evil: 1", "é%", None);
        assert_eq!(c.label(), "agent%0D%0AX-Evil: 1/%C3%A9%25 via MCP");
        assert_eq!(c.header_value().to_str().unwrap(), c.label());
        let long = "ü".repeat(100);
        let c = Caller::of_client_info(&long, "", None);
        let name = c.label().strip_suffix(VIA_MCP).unwrap();
        assert_eq!(name.len(), 60, "ten whole characters of six bytes each");
        assert!(name.len() <= MAX_PART);
        assert_eq!(c.header_value().to_str().unwrap(), c.label());
    }
}
