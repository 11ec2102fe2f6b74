//! sessionpad: a terminal notebook for Azure Container Apps dynamic sessions, with a
//! local pool that speaks the same data-plane API on loopback.
//!
//! Parts, lowest layer first (`ARCHITECTURE.md` has the picture and the
//! import rules, which `tests/architecture.rs` checks): [`protocol`] (wire and
//! domain types, no I/O), [`events`] (the hub of recorded calls and live
//! output), [`ledger`] (the flight recorder's database), [`client`] (the
//! session client, no terminal code), [`mcp`] (the MCP server's tools),
//! [`pool`] (the local pool: HTTP server, sandboxed kernels), [`proxy`] (the
//! recording proxy), [`notebook`] (cells and outputs), [`config`], [`target`],
//! [`background`] (the background local pool), [`session`] (the worker a front
//! end hands commands to), [`tui`] (the terminal UI) and [`cli`].

pub mod background;
pub mod cli;
pub mod client;
pub mod config;
pub mod dirs;
pub mod events;
pub mod ledger;
pub mod localname;
pub mod mcp;
pub mod notebook;
pub mod pool;
pub mod protocol;
pub mod proxy;
pub mod session;
pub mod target;
pub mod text;
pub mod tui;
