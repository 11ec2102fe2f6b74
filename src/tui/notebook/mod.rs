//! The notebook's views: the cells and their outputs, the editor and the
//! history search (Ctrl+R), and the cell editor's state (`cell_editor.rs`).
//! The rest of its state and its reducer are still `App`'s
//! (`tui/app/mod.rs`, `cells.rs`, `modal.rs`); see `ARCHITECTURE.md`.

use std::time::Duration;

pub mod cell_editor;
pub mod cell_view;
pub mod editor;
pub mod history_search;
pub mod outputs;

/// The pool, as far as the UI knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolState {
    /// The embedded pool is starting (maybe building its Python environment).
    Starting,
    /// Executions can be sent.
    Ready,
    /// The pool could not be started or reached.
    Failed(String),
}

/// A duration the way people read it: `12 ms`, `1.2 s`, `3 min 5 s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        let secs = d.as_secs();
        format!("{} min {} s", secs / 60, secs % 60)
    }
}
