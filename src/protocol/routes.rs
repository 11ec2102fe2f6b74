//! The local pool's routes of its own, outside the Azure data-plane API: each
//! starts with `/.sessionpad/` (a path the service never uses, so none can
//! shadow an Azure route) or is the MCP server's `/mcp`. The event stream's
//! route and wire are in [`super::events`].

/// `POST /.sessionpad/interrupt?identifier=ID`: interrupts the execution
/// running in a local-pool session (the kernel's `interrupt_request`); the
/// service has no such call.
pub const INTERRUPT_ROUTE: &str = "/.sessionpad/interrupt";

/// `POST /.sessionpad/complete?identifier=ID` with `{"code", "cursorPos"}`:
/// Tab completion from the session's kernel (`complete_request`), answered
/// with `{"matches", "cursorStart", "cursorEnd", "busy"}` (code points); the
/// service has no such call (it answers 404).
pub const COMPLETE_ROUTE: &str = "/.sessionpad/complete";

/// Where the local pool serves its MCP server (streamable HTTP).
pub const MCP_ROUTE: &str = "/mcp";
