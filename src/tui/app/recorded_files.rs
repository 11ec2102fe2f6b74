//! The files a recorded cell changed (issue 26), a part of [`App`]'s
//! reducer and its overlay: in a recorded session shown read-only, `F` on a
//! cell lists the files it changed in its `/mnt/data`; one is previewed with
//! the files pane's preview (text, CSV table, JSON, an image, a hex head)
//! from the bytes the flight recorder kept, a text file also as its diff
//! against the previous recorded version, and saved into a local folder the
//! user types (created when they say so; an existing file replaced only when
//! they say so). The session may be long gone: everything comes from this
//! user's ledger, read and written by the session worker
//! ([`SessionsCommand::ReadRecordedFile`], [`SessionsCommand::SaveRecordedFile`]:
//! names made safe, SHA-256 checked); the preview is built off the UI task
//! ([`Effect::BuildPreview`]).

use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};
use ratatui_textarea::{Input, Key};

use super::{App, Layer, Overlay};
use crate::protocol::record::{DATA_ROOT, FileChange};
use crate::session::recorded_files::{
    RecordedFileRead, RecordedFileRequest, SaveRecordedFile, Saved,
};
use crate::session::{FileHead, SessionsCommand};
use crate::tui::action::{Action, Effect};
use crate::tui::app::Purpose;
use crate::tui::files::preview::{Body, Preview, PreviewJob};
use crate::tui::theme::Theme;
use crate::tui::widgets::fit;
use crate::tui::widgets::image::{ImageKey, ImageLayout, ImageStore};
use crate::tui::widgets::prompt::{Answer, Prompt, Question};
use crate::tui::widgets::sanitize;

/// Preview generations of this overlay carry this bit (the files pane's
/// never reach it), so a built preview finds its way back here.
pub const PREVIEW_BIT: u64 = 1 << 62;

/// The image key of a previewed recorded image (no cell has this index).
pub const RECORDED_IMAGE: ImageKey = ImageKey {
    cell: usize::MAX - 1,
    output: 0,
};

/// The overlay's state: the cell's changed files and the one shown.
#[derive(Debug)]
pub struct RecordedFilesUi {
    /// The recorded call that changed them: pool key, identifier, `seq`.
    call: (String, String, i64),
    /// The cell's number, for the title.
    cell: usize,
    /// The files it changed.
    files: Vec<FileChange>,
    /// The file under the cursor.
    selected: usize,
    /// The file shown, once one is asked for.
    shown: Option<Shown>,
    /// Where the overlay was drawn last (the size a preview is built for).
    area: Rect,
}

/// A recorded file shown in the overlay.
#[derive(Debug)]
struct Shown {
    /// Which.
    file: FileChange,
    /// Its bytes and diff, once the worker read them.
    read: Option<RecordedFileRead>,
    /// Its preview, once built (or why not).
    preview: Option<Result<Preview, String>>,
    /// The generation the preview was asked with.
    generation: u64,
    /// The diff is shown rather than the preview.
    diff: bool,
    /// Rows scrolled.
    scroll: u16,
}

/// What saving a recorded file asks on the bottom row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedPrompt {
    /// The local folder to save this file version into.
    Folder(FileChange),
    /// The folder does not exist: create it and save there?
    CreateFolder(FileChange, PathBuf),
    /// A file exists where it would go: replace it?
    Replace(SaveRecordedFile),
}

/// The file's name relative to `/mnt/data` (`out/r.csv`).
fn relative(path: &str) -> &str {
    path.strip_prefix(DATA_ROOT)
        .unwrap_or(path)
        .trim_start_matches('/')
}

impl App {
    /// `F`: opens the files the selected recorded cell changed (the last
    /// cell when none is selected); a notice when there are none, or no
    /// recorded session is shown.
    pub(super) fn open_recorded_files(&mut self) -> Vec<Effect> {
        let Some(view) = &self.recorded.view else {
            self.notice = Some(
                "no recorded session shown: open one from the sessions pane (F3, Recorded)".into(),
            );
            return Vec::new();
        };
        let count = view.records.len();
        let Some(cell) = self.notebook.selected.or(count.checked_sub(1)) else {
            return Vec::new();
        };
        let Some(record) = view.records.get(cell) else {
            return Vec::new();
        };
        if record.files.is_empty() {
            self.notice = Some(format!("cell {} changed no file", cell + 1));
            return Vec::new();
        }
        let ui = RecordedFilesUi {
            call: (record.pool.clone(), record.identifier.clone(), record.seq),
            cell,
            files: record.files.clone(),
            selected: 0,
            shown: None,
            area: Rect::default(),
        };
        self.overlays.open(Layer::RecordedFiles(Box::new(ui)));
        Vec::new()
    }

    /// A key while the overlay is open: move, preview, diff, save, close.
    pub(super) fn recorded_files_action(&mut self, action: Action) -> Vec<Effect> {
        let input = match action {
            Action::Edit(input) => input,
            Action::Quit => {
                self.ask_to_quit();
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        let Some(ui) = self.overlays.recorded_files_mut() else {
            return Vec::new();
        };
        match ui.key(&input) {
            Step::Stay => Vec::new(),
            Step::Close => {
                self.overlays.close(Overlay::RecordedFiles);
                Vec::new()
            }
            Step::Read(request) => {
                vec![Effect::Sessions(SessionsCommand::ReadRecordedFile(request))]
            }
            Step::Save(file) => {
                let label = format!(
                    "Save {} into folder:",
                    fit::one_line(&sanitize::plain(relative(&file.path)))
                );
                let folder = self.files.download_folder.display().to_string();
                self.ask(Prompt::line(
                    Purpose::Recorded(RecordedPrompt::Folder(file)),
                    &label,
                    &folder,
                ));
                Vec::new()
            }
        }
    }

    /// The answer to a question of the save: the folder, whether to create
    /// it, whether to replace a file.
    pub(super) fn recorded_file_answer(
        &mut self,
        asked: RecordedPrompt,
        answer: Answer,
    ) -> Vec<Effect> {
        let save = |file: FileChange, folder: PathBuf, replace: bool| {
            vec![Effect::Sessions(SessionsCommand::SaveRecordedFile(
                SaveRecordedFile {
                    file,
                    folder,
                    replace,
                },
            ))]
        };
        match (asked, answer) {
            (RecordedPrompt::Folder(file), Answer::Text(text)) if !text.trim().is_empty() => {
                let typed = crate::tui::local::resolve(&text);
                let folder = std::path::absolute(&typed).unwrap_or(typed);
                if folder.is_dir() {
                    return save(file, folder, false);
                }
                if std::fs::symlink_metadata(&folder).is_ok() {
                    self.notice = Some(format!("{} is not a folder", folder.display()));
                    return Vec::new();
                }
                let question = Question::new(
                    "Create folder ",
                    folder.display().to_string(),
                    " and save into it?",
                );
                self.ask(Prompt::question(
                    Purpose::Recorded(RecordedPrompt::CreateFolder(file, folder)),
                    question,
                ));
                Vec::new()
            }
            (RecordedPrompt::CreateFolder(file, folder), Answer::Yes) => save(file, folder, false),
            (RecordedPrompt::Replace(request), Answer::Yes) => {
                save(request.file, request.folder, true)
            }
            (RecordedPrompt::Replace(_), _) => {
                self.notice = Some("the existing file was kept: nothing saved".into());
                Vec::new()
            }
            _ => {
                self.notice = Some("nothing saved".into());
                Vec::new()
            }
        }
    }

    /// The worker read a recorded file: the preview is built off the UI task.
    pub(super) fn recorded_file_read(
        &mut self,
        request: &RecordedFileRequest,
        result: Result<Box<RecordedFileRead>, crate::session::Failure>,
    ) -> Vec<Effect> {
        let colors = self.theme.colors;
        let Some(ui) = self.overlays.recorded_files_mut() else {
            return Vec::new();
        };
        let Some(shown) = ui.shown.as_mut().filter(|s| s.file == request.file) else {
            return Vec::new();
        };
        let read = match result {
            Ok(read) => *read,
            Err(e) => {
                shown.preview = Some(Err(e.to_string()));
                return Vec::new();
            }
        };
        let job = match &read.bytes {
            Ok(bytes) => Some(PreviewJob {
                generation: shown.generation,
                head: FileHead {
                    name: relative(&shown.file.path).to_string(),
                    content_type: None,
                    size: Some(bytes.len() as u64),
                    bytes: bytes.clone(),
                },
                width: ui.area.width.saturating_sub(2).max(20),
                height: ui.area.height.saturating_sub(3).max(5),
                colors,
            }),
            Err(why) => {
                shown.preview = Some(Err(why.clone()));
                None
            }
        };
        shown.read = Some(read);
        job.map(Effect::BuildPreview).into_iter().collect()
    }

    /// A preview of this overlay was built (or not).
    pub(super) fn recorded_preview_built(
        &mut self,
        generation: u64,
        result: Result<Box<Preview>, String>,
    ) {
        let Some(shown) = self
            .overlays
            .recorded_files_mut()
            .and_then(|ui| ui.shown.as_mut())
            .filter(|s| s.generation == generation)
        else {
            return;
        };
        if let Ok(preview) = &result
            && let Some(image) = preview.image()
        {
            self.views.images.insert(RECORDED_IMAGE, Ok(image.clone()));
        }
        shown.preview = Some(result.map(|p| *p));
    }

    /// How a save went: a notice, or the question before replacing a file.
    pub(super) fn recorded_file_saved(&mut self, request: SaveRecordedFile, saved: Saved) {
        match saved {
            Saved::Written(path, size) => {
                self.notice = Some(format!(
                    "saved {} ({}, sha256 checked)",
                    path.display(),
                    crate::text::human_size(size)
                ));
            }
            Saved::Exists(path) => {
                let question =
                    Question::new("", path.display().to_string(), " exists: replace it?");
                self.ask(Prompt::question(
                    Purpose::Recorded(RecordedPrompt::Replace(request)),
                    question,
                ));
            }
            Saved::Failed(why) => {
                self.notice = Some(format!("not saved: {}", sanitize::plain(&why)));
            }
        }
    }
}

/// What a key in the overlay asks for.
enum Step {
    Stay,
    Close,
    Read(RecordedFileRequest),
    Save(FileChange),
}

/// Generations of previews asked here, counted from [`PREVIEW_BIT`].
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(PREVIEW_BIT);

impl RecordedFilesUi {
    /// The overlay's reducer over its own state.
    fn key(&mut self, input: &Input) -> Step {
        let count = self.files.len();
        match (input.key, self.shown.as_mut()) {
            (Key::Esc | Key::Char('q'), None) => return Step::Close,
            (Key::Esc | Key::Char('q'), Some(_)) => self.shown = None,
            (Key::Down | Key::Char('j'), None) => {
                self.selected = (self.selected + 1) % count.max(1);
            }
            (Key::Up | Key::Char('k'), None) => {
                self.selected = (self.selected + count.max(1) - 1) % count.max(1);
            }
            (Key::Down | Key::Char('j'), Some(s)) => s.scroll = s.scroll.saturating_add(1),
            (Key::Up | Key::Char('k'), Some(s)) => s.scroll = s.scroll.saturating_sub(1),
            (Key::PageDown | Key::Char(' '), Some(s)) => s.scroll = s.scroll.saturating_add(10),
            (Key::PageUp, Some(s)) => s.scroll = s.scroll.saturating_sub(10),
            (Key::Char('d'), Some(s)) if s.read.as_ref().is_some_and(|r| r.diff.is_some()) => {
                s.diff = !s.diff;
                s.scroll = 0;
            }
            (Key::Enter | Key::Char('p' | 'd'), None) => {
                let diff = input.key == Key::Char('d');
                return self.show(diff);
            }
            (Key::Char('s'), shown) => {
                let file = shown.map_or_else(
                    || self.files.get(self.selected).cloned(),
                    |s| Some(s.file.clone()),
                );
                return file.map_or(Step::Stay, Step::Save);
            }
            _ => {}
        }
        Step::Stay
    }

    /// Shows the selected file (its diff when `diff`): the worker reads it.
    fn show(&mut self, diff: bool) -> Step {
        let Some(file) = self.files.get(self.selected).cloned() else {
            return Step::Stay;
        };
        let generation = GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.shown = Some(Shown {
            file: file.clone(),
            read: None,
            preview: None,
            generation,
            diff,
            scroll: 0,
        });
        let (pool, identifier, seq) = self.call.clone();
        Step::Read(RecordedFileRequest {
            pool,
            identifier,
            seq,
            file,
        })
    }
}

/// Draws the overlay over `area` (the notebook's).
pub fn render(
    ui: &mut RecordedFilesUi,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    images: &mut ImageStore,
) {
    ui.area = area;
    Clear.render(area, buf);
    match &ui.shown {
        None => render_list(ui, area, buf, theme),
        Some(shown) => render_shown(shown, area, buf, theme, images),
    }
}

fn render_list(ui: &RecordedFilesUi, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let title = format!(" Files cell {} changed ", ui.cell + 1);
    let block = Block::bordered()
        .border_style(theme.border)
        .title(Span::styled(title, theme.accent))
        .title_bottom(Line::styled(
            " Enter preview · d diff · s save · Esc close ",
            theme.muted,
        ));
    let inner = block.inner(area);
    block.render(area, buf);
    let rows = usize::from(inner.height);
    let skip = (ui.selected + 1).saturating_sub(rows);
    for (i, f) in ui.files.iter().enumerate().skip(skip).take(rows) {
        let mark = if i == ui.selected { "› " } else { "  " };
        let text = format!("{mark}{}", super::recorded_marks::file_line(f));
        let style = if i == ui.selected {
            theme.selection
        } else {
            ratatui::style::Style::default()
        };
        let line = Line::styled(fit::one_line(&text), style);
        let y = inner.y + u16::try_from(i - skip).unwrap_or(0);
        buf.set_line(inner.x, y, &line, inner.width);
    }
}

fn render_shown(
    shown: &Shown,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    images: &mut ImageStore,
) {
    let name = fit::one_line(&sanitize::plain(relative(&shown.file.path)));
    let can_diff = shown.read.as_ref().is_some_and(|r| r.diff.is_some());
    let keys = match (shown.diff, can_diff) {
        (true, _) => " d preview · s save · j/k scroll · Esc back ",
        (false, true) => " d diff · s save · j/k scroll · Esc back ",
        (false, false) => " s save · j/k scroll · Esc back ",
    };
    let what = if shown.diff { "diff of" } else { "recorded" };
    let block = Block::bordered()
        .border_style(theme.border)
        .title(Span::styled(format!(" {what} {name} "), theme.accent))
        .title_bottom(Line::styled(keys, theme.muted));
    let inner = block.inner(area);
    block.render(area, buf);
    let diff = shown.read.as_ref().and_then(|r| r.diff.as_deref());
    let lines: Vec<Line<'static>> = match (&shown.preview, shown.diff, diff) {
        (_, true, Some(diff)) => diff_lines(diff, theme),
        (None, ..) => vec![Line::styled(format!("reading {name}…"), theme.muted)],
        (Some(Err(why)), ..) => vec![Line::styled(
            format!("no preview: {}", fit::one_line(why)),
            theme.warning,
        )],
        (Some(Ok(preview)), ..) if matches!(preview.body, Body::Image(_)) => {
            let caption = preview
                .text(theme)
                .lines
                .first()
                .cloned()
                .unwrap_or_default();
            buf.set_line(inner.x, inner.y, &caption, inner.width);
            let rows = Rect {
                y: inner.y + 1,
                height: inner.height.saturating_sub(1),
                ..inner
            };
            match images.layout_in(RECORDED_IMAGE, rows.width, rows.height) {
                ImageLayout::Rows(_) => images.render_rows(RECORDED_IMAGE, 0, rows, buf),
                ImageLayout::Unavailable(why) => {
                    let line = Line::styled(fit::one_line(&why), theme.error);
                    buf.set_line(rows.x, rows.y, &line, rows.width);
                }
            }
            return;
        }
        (Some(Ok(preview)), ..) => preview.text(theme).lines,
    };
    Paragraph::new(lines)
        .scroll((shown.scroll, 0))
        .render(inner, buf);
}

/// The diff's lines (already sanitised by the ledger's diff), coloured.
fn diff_lines(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    diff.lines()
        .map(|l| {
            let l = l.strip_prefix("    ").unwrap_or(l);
            let style = match l.chars().next() {
                Some('+') if !l.starts_with("+++") => theme.success,
                Some('-') if !l.starts_with("---") => theme.error,
                Some('@') => theme.accent,
                _ => ratatui::style::Style::default(),
            };
            Line::styled(sanitize::plain(l), style)
        })
        .collect()
}

#[cfg(test)]
#[path = "recorded_files_tests.rs"]
mod tests;
