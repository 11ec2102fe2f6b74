//! The views: one module per pane plus the helpers they share. Views read the app
//! state and draw; the only state they change is their own (scroll positions and
//! caches, kept in [`Views`]). No view talks to the network or logs.

pub mod cell_view;
pub mod editor;
pub mod highlight;
pub mod image;
pub mod outputs;
pub mod sanitize;
pub mod status;
pub mod wrap;

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};

use self::cell_view::CellContext;
use self::editor::EditorView;
use self::highlight::Highlighter;
use self::image::ImageStore;
use self::outputs::OutputsView;
use super::app::App;

/// View state and caches the views keep between frames.
#[derive(Debug, Default)]
pub struct Views {
    /// Scroll position and row cache of the outputs pane.
    pub outputs: OutputsView,
    /// Highlighted lines and scroll position of the editor.
    pub editor: EditorView,
    /// Highlighted code of the notebook's cells.
    pub highlighter: Highlighter,
    /// Decoded images and their protocols.
    pub images: ImageStore,
}

/// Draws the whole screen: outputs on top, the editor under them, the status line
/// at the bottom. `now` is the clock the elapsed times are measured against.
pub fn draw(frame: &mut Frame<'_>, app: &mut App, now: Instant) {
    let area = frame.area();
    let editor_rows = editor::height(app.editor.lines().len(), area.height);
    let [outputs_area, editor_area, status_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(editor_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let App {
        theme,
        views,
        notebook,
        pool,
        pool_log,
        ..
    } = app;
    if notebook.cells.is_empty() {
        outputs::render_banner(pool, pool_log, outputs_area, frame.buffer_mut(), theme);
    } else {
        let mut ctx = CellContext {
            theme,
            highlighter: &mut views.highlighter,
            images: &mut views.images,
        };
        views
            .outputs
            .render(&notebook.cells, outputs_area, frame.buffer_mut(), &mut ctx);
    }
    let next = notebook.next_count();
    editor::render(
        frame,
        editor_area,
        &app.editor,
        &mut app.views.editor,
        next,
        !app.outputs_focused,
        &app.theme,
    );
    status::render(app, now, status_area, frame.buffer_mut());
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

#[cfg(test)]
mod tests;
