//! The screen composer: [`draw`] lays out the notebook, the side pane, the
//! status line and every overlay, calling each feature's view; [`Views`] holds
//! the view state and caches kept between frames. Views read the app state and
//! draw; the only state they change is their own. No view talks to the network
//! or logs.

use std::time::Instant;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Widget};

use crate::tui::app::App;
use crate::tui::app::status;
use crate::tui::app::{Focus, Overlay, SidePane};
use crate::tui::help;
use crate::tui::keymap::Mode;
use crate::tui::notebook::cell_view::{CellContext, RunClock};
use crate::tui::notebook::outputs;
use crate::tui::notebook::{Areas, PoolSays, SessionBoundary};
use crate::tui::notebook::{completion_popup, editor};
use crate::tui::pager::{self, PagerView};
use crate::tui::widgets::fit;
use crate::tui::widgets::highlight::Highlighter;
use crate::tui::widgets::image::ImageStore;
use crate::tui::widgets::long_output::LongTexts;
use crate::tui::{files, sessions};

/// The caches the views of several features keep between frames (the
/// notebook's own view state is in [`NotebookUi`](crate::tui::notebook::NotebookUi)).
#[derive(Debug, Default)]
pub struct Views {
    /// Highlighted code of the notebook's cells.
    pub highlighter: Highlighter,
    /// Decoded images and their protocols.
    pub images: ImageStore,
    /// Line indexes of long outputs (collapsed cells and the pager).
    pub texts: LongTexts,
}

impl Views {
    /// Highlights the cells' code as `language` from now on (the editor's
    /// text is the notebook's: [`NotebookUi::new`](crate::tui::notebook::NotebookUi::new)).
    pub fn set_language(&mut self, language: crate::notebook::language::Language) {
        self.highlighter.set_language(language);
    }

    /// True when a long output is still being read: another frame should follow.
    pub fn pending_work(&self) -> bool {
        self.texts.pending()
    }
}

/// Draws the whole screen: outputs on top, the editor under them, the status line
/// at the bottom. `now` is the clock the elapsed times are measured against.
/// Images an overlay covered in the last frame and no longer does are sent to
/// the terminal again ([`ImageStore::settle`]).
pub fn draw(frame: &mut Frame<'_>, app: &mut App, now: Instant) {
    compose(frame, app, now);
    app.views.images.settle(frame.buffer_mut());
}

/// Every pane and overlay of the screen, in drawing order.
fn compose(frame: &mut Frame<'_>, app: &mut App, now: Instant) {
    let area = frame.area();
    app.views.texts.begin_frame();
    if render_pager(frame, app) {
        return;
    }
    let editor_rows = editor::height(
        editor::wrapped_rows(app.notebook.editor.lines(), area.width),
        area.height,
    );
    let [outputs_area, editor_area, status_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(editor_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let notebook_area = outputs_area;
    let (outputs_area, files_area) =
        files::view::split(outputs_area, app.side.is_some(), app.focus == Focus::Pane);
    app.notebook.areas = Areas {
        outputs: outputs_area,
        editor: editor_area,
    };
    render_outputs(frame, app, outputs_area, now);
    if let Some(files_area) = files_area {
        render_side_pane(frame, app, files_area, notebook_area);
    }
    if let Some(picker) = app.overlays.picker_mut() {
        crate::tui::picker::view::render(picker, notebook_area, frame.buffer_mut(), &app.theme);
    }
    let next = app.notebook.next_count();
    let keys = app.key_context();
    let editor_has_keys = keys.mode == crate::tui::keymap::Mode::Editor && !keys.typing;
    let cursor = editor::render(
        frame,
        editor_area,
        app.notebook.editor.text(),
        &mut app.notebook.editor_view,
        next,
        // The editor shows its cursor when it has the keys: its focus, and no
        // overlay over it.
        editor_has_keys,
        &app.theme,
        &app.keymap,
    );
    render_pane_hints(app, editor_area, frame.buffer_mut());
    if editor_has_keys && let Some(popup) = app.notebook.completion.popup() {
        completion_popup::render(popup, cursor, notebook_area, frame.buffer_mut(), &app.theme);
    }
    status::render(app, now, status_area, frame.buffer_mut());
    render_overlays(frame, app, notebook_area, status_area);
}

/// The side pane in `area`: the sessions pane when it is open, else the files
/// pane; the pool info popup of the sessions pane over the whole notebook.
fn render_side_pane(frame: &mut Frame<'_>, app: &mut App, area: Rect, notebook_area: Rect) {
    let App {
        sessions,
        files,
        theme,
        views,
        keymap,
        isolation,
        side,
        focus,
        ..
    } = app;
    let focused = *focus == Focus::Pane;
    let buf = frame.buffer_mut();
    if *side == Some(SidePane::Sessions) {
        sessions::view::render(sessions, focused, theme, area, buf);
        let cx = sessions::view::PoolInfoView {
            keymap,
            isolation: isolation.as_ref(),
            theme,
        };
        sessions::view::render_pool_info_over(sessions, &cx, notebook_area, buf);
    } else {
        let mut cx = files::view::FilesView {
            focused,
            theme,
            images: &mut views.images,
        };
        files::view::render(files, &mut cx, area, buf);
    }
}

/// While the pane has the keys, the editor's top border (drawn just before)
/// shows the pane's key hints instead of the notebook's.
fn render_pane_hints(app: &App, editor_area: Rect, buf: &mut Buffer) {
    let mode = if app.pane_focused(SidePane::Files) {
        Mode::Files
    } else if app.pane_focused(SidePane::Sessions) {
        Mode::Sessions
    } else {
        return;
    };
    if editor_area.height == 0 {
        return;
    }
    let title = format!(" In [{}] ", app.notebook.next_count());
    let room = usize::from(editor_area.width).saturating_sub(fit::columns(&title) + 5);
    let hints = app.keymap.hint_line(mode, room);
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(app.theme.border)
        .title(title);
    if !hints.is_empty() {
        block =
            block.title_top(Line::styled(format!(" {hints} "), app.theme.muted).right_aligned());
    }
    let top = Rect {
        height: 1,
        ..editor_area
    };
    // Only the top row: the rest of the editor stays as drawn.
    let mut scratch = Buffer::empty(Rect { height: 2, ..top });
    block.render(scratch.area, &mut scratch);
    for x in top.left()..top.right() {
        if let (Some(src), Some(dst)) = (scratch.cell((x, top.y)), buf.cell_mut((x, top.y))) {
            *dst = src.clone();
        }
    }
}

/// The outputs of the cells (or the pool's banner before the first), with the
/// notebook's cursor, marks of followed calls and session boundaries.
fn render_outputs(frame: &mut Frame<'_>, app: &mut App, outputs_area: Rect, now: Instant) {
    let pending = app.pending_cells();
    let output_at_end = app.output_arrives_at_end();
    let marks = app.cell_marks();
    let replay_banner = app
        .recorded
        .replay
        .as_ref()
        .and_then(super::replay_watch::ReplayWatch::banner);
    let App {
        theme,
        views,
        notebook,
        pool,
        pool_log,
        ..
    } = app;
    if notebook.cells().is_empty() {
        outputs::render_banner(pool, pool_log, outputs_area, frame.buffer_mut(), theme);
    } else {
        let pager_key = pager::pager_key(&app.keymap);
        let more_key = app
            .keymap
            .key_for(
                &crate::tui::action::Action::Notebook(
                    crate::tui::notebook::NotebookAction::RunWithMoreOutput,
                ),
                &[Mode::Outputs],
            )
            .unwrap_or_else(|| "m".to_string());
        let mut ctx = CellContext {
            theme,
            highlighter: &mut views.highlighter,
            images: &mut views.images,
            texts: &mut views.texts,
            pending: &pending,
            clock: RunClock {
                now,
                limit: notebook.execution_limit,
                output_at_end,
            },
            pager_key: &pager_key,
            more_key: &more_key,
        };
        let outputs = &mut notebook.outputs;
        outputs.set_marks(marks);
        let mut boundaries = boundary_texts(&notebook.boundaries, notebook.book.cells.len());
        if let Some((after, text)) = replay_banner {
            match boundaries.iter_mut().find(|(a, _)| *a == after) {
                Some((_, said)) => *said = format!("{said} · {text}"),
                None => boundaries.push((after, text)),
            }
        }
        outputs.set_boundaries(boundaries);
        // The notebook's cursor shows only while the notebook has the keys.
        let selected = notebook
            .selected
            .filter(|_| app.focus == crate::tui::app::Focus::Notebook);
        outputs.select(selected);
        outputs.render(
            &notebook.book.cells,
            outputs_area,
            frame.buffer_mut(),
            &mut ctx,
        );
    }
}

/// The open pager over the whole frame, if there is one: true when it was
/// drawn (nothing else is). A pager whose output is gone closes.
fn render_pager(frame: &mut Frame<'_>, app: &mut App) -> bool {
    let App {
        overlays,
        views,
        notebook,
        theme,
        keymap,
        ..
    } = app;
    let Some(pager) = overlays.pager_mut() else {
        return false;
    };
    let mut cx = PagerView {
        cells: notebook.cells(),
        texts: &mut views.texts,
        theme,
        keymap,
    };
    if pager::render(frame, pager, &mut cx) {
        return true;
    }
    overlays.close(Overlay::Pager);
    false
}

/// What is drawn over the screen: the one prompt over the status line, the
/// history search and the pools chooser over the notebook, the help over all.
fn render_overlays(frame: &mut Frame<'_>, app: &mut App, notebook_area: Rect, status_area: Rect) {
    let area = frame.area();
    let App {
        overlays,
        notebook,
        theme,
        keymap,
        pools,
        views,
        ..
    } = app;
    // The one prompt over the status line, the history search over the notebook.
    if let Some(prompt) = overlays.prompt() {
        crate::tui::widgets::prompt::render(prompt, status_area, frame.buffer_mut(), theme);
    }
    if let Some(search) = overlays.history_search_mut() {
        search.render(notebook.cells(), notebook_area, frame.buffer_mut(), theme);
    }
    if let Some(files) = overlays.recorded_files_mut() {
        super::recorded_files::render(
            files,
            notebook_area,
            frame.buffer_mut(),
            theme,
            &mut views.images,
        );
    }
    if let Some(menu) = overlays.pools_menu() {
        crate::tui::pools::view::render(pools, menu, notebook_area, frame.buffer_mut(), theme);
    }
    if let Some(view) = overlays.help_mut() {
        help::render(area, frame.buffer_mut(), keymap, view, theme);
    }
}

/// What each session boundary says: the newest one says what was lost and
/// how to get it back (`R`). A reopened notebook's boundary says what the
/// pool answered about its session (issue 27 item 9): live, with variables
/// and files kept; ended, with its variables and `/mnt/data` files gone;
/// still asking; or that this pool cannot say.
fn boundary_texts(boundaries: &[SessionBoundary], cells: usize) -> Vec<(usize, String)> {
    let newest = boundaries.len().saturating_sub(1);
    boundaries
        .iter()
        .enumerate()
        .filter(|(_, b)| b.after <= cells)
        .map(|(i, b)| {
            if b.kernel_restarted {
                return (
                    b.after,
                    "kernel restarted — numbering starts again; the state of the cells above is gone"
                        .to_string(),
                );
            }
            let text = match (i == newest, b.replayed) {
                (false, _) if matches!(b.pool_says, PoolSays::Live { .. }) => {
                    "reopened: same session".to_string()
                }
                (false, _) => "new session".to_string(),
                (true, true) => {
                    "new session: the cells above ran in an earlier one; replayed below".to_string()
                }
                (true, false) => newest_boundary_text(b),
            };
            (b.after, text)
        })
        .collect()
}

/// The newest boundary's text, not replayed.
fn newest_boundary_text(b: &SessionBoundary) -> String {
    match b.pool_says {
        PoolSays::Live { created } => {
            let since = created
                .map(|at| format!(" (created {})", super::recorded_marks::local_time(at)))
                .unwrap_or_default();
            format!("reopened · session live{since}: variables and files kept")
        }
        PoolSays::Ended if b.known_new => {
            "session ended: variables and /mnt/data files are gone; R replays them".to_string()
        }
        _ if b.known_new => {
            "new session: the variables and /mnt/data files of the cells above are gone; \
             R replays them"
                .to_string()
        }
        PoolSays::Asking => {
            "reopened: asking the pool whether the session of the cells above is live…".to_string()
        }
        PoolSays::Ended | PoolSays::CannotAsk => "reopened: this pool cannot say whether the \
             session of the cells above is live (if it ended, its variables and /mnt/data \
             files are gone); R replays them"
            .to_string(),
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
