//! sessionpad: a terminal notebook for Azure Container Apps dynamic sessions, with a
//! local pool that speaks the same data-plane API on loopback.
//!
//! Parts (`design.md`): [`client`] (the session client, no terminal code),
//! [`pool`] (the local pool: HTTP server + IPython kernels, no terminal code),
//! [`session`] (the session worker a front end hands commands to: executions,
//! files, sessions; typed events back, no terminal code), [`mcp`] (the pool's
//! MCP server, over HTTP in the pool and over stdio as `sessionpad mcp`, no
//! terminal code), [`notebook`] (cells and outputs), [`tui`] (the terminal UI)
//! and [`cli`].

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
