//! The lines drawn above cells (issue 26): in a recorded session shown
//! read-only, per cell, the client that ran it, when (local time) and for how
//! long, `client gone` when the recorder says nobody received the answer,
//! the uploads that came before it, and the files it changed (folded to a
//! count, one line per file on the selected cell); after a replay, each
//! replayed cell's uploads and verdict. Everything from the ledger is the
//! session's or a client's text: sanitised here, one line per piece.

use std::collections::BTreeMap;
use std::time::Duration;

use super::App;
use crate::protocol::record::{ContentKept, FileChange};
use crate::session::history::CellRecord;
use crate::tui::widgets::sanitize;

/// The time a recorded call arrived, in local time (`2026-05-01 14:03:22`).
pub fn local_time(at: chrono::DateTime<chrono::Utc>) -> String {
    at.with_timezone(&chrono::Local)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// A duration in milliseconds, short (`850 ms`, `1.2 s`, `3 min 5 s`).
fn took(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else if ms < 60_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        let secs = Duration::try_from_secs_f64(ms / 1000.0).map_or(0, |d| d.as_secs());
        format!("{} min {} s", secs / 60, secs % 60)
    }
}

/// One line for a changed file: change, path, size, and why its bytes are
/// not kept (when they are not).
pub fn file_line(f: &FileChange) -> String {
    let mut line = format!("{:<8} {}", f.change.as_str(), sanitize::plain(&f.path));
    if f.change != crate::protocol::record::FileChangeKind::Deleted {
        line.push_str(&format!("  {}", crate::text::human_size(f.size)));
        if let Some(why) = f.content.and_then(ContentKept::why_not) {
            line.push_str(&format!("  ({why})"));
        }
    }
    line
}

/// The lines above recorded cell with `record`, run by `client` (already
/// sanitised); `open`: the cell is selected, its files listed one a line.
pub fn record_lines(record: &CellRecord, client: Option<&str>, open: bool, key: &str) -> String {
    let mut head = match client {
        Some(c) => format!("ran by {c} · {}", local_time(record.at)),
        None => local_time(record.at),
    };
    head.push_str(&format!(" · took {}", took(record.duration_ms)));
    if record.client_gone {
        head.push_str(" · client gone");
    }
    let mut lines = vec![head];
    let uploads = &record.uploads_before;
    if open || uploads.len() <= 2 {
        lines.extend(uploads.iter().map(|u| {
            format!(
                "after upload of {} ({})",
                sanitize::plain(&u.name),
                crate::text::human_size(u.size)
            )
        }));
    } else {
        lines.push(format!("after {} uploads", uploads.len()));
    }
    let files = &record.files;
    match (files.len(), open) {
        (0, _) => {}
        (n, false) => lines.push(format!(
            "{n} file(s) changed (select the cell to list them)"
        )),
        (n, true) => {
            lines.push(format!(
                "{n} file(s) changed ({key} previews or saves one):"
            ));
            lines.extend(files.iter().map(|f| format!("  {}", file_line(f))));
        }
    }
    if let Some(note) = &record.files_note {
        lines.push(format!("(files: {})", sanitize::plain(note)));
    }
    lines.join("\n")
}

impl App {
    /// The lines to draw above cells: the follower's (the client of a
    /// followed cell), a recorded session's records, a replay's verdicts.
    pub(crate) fn cell_marks(&self) -> Vec<(usize, String)> {
        let mut marks: BTreeMap<usize, String> = self.follow.marks().into_iter().collect();
        if let Some(view) = &self.recorded.view {
            let key = self
                .keymap
                .key_for(
                    &crate::tui::action::Action::RecordedFiles,
                    &[crate::tui::keymap::Mode::Outputs],
                )
                .unwrap_or_else(|| "F".to_string());
            for (i, record) in view.records.iter().enumerate() {
                let client = self.follow.clients.get(&i).map(String::as_str);
                let open = self.notebook.selected == Some(i);
                marks.insert(i, record_lines(record, client, open, &key));
            }
        } else if let Some(watch) = &self.recorded.replay {
            for (cell, text) in watch.marks() {
                let joined = match marks.remove(&cell) {
                    Some(before) => format!("{before}\n{text}"),
                    None => text,
                };
                marks.insert(cell, joined);
            }
        }
        marks.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::FileChangeKind;
    use crate::session::replay::{Ending, RecordedUpload};

    fn record(files: Vec<FileChange>) -> CellRecord {
        CellRecord {
            seq: 3,
            pool: "local".into(),
            identifier: "agent-1".into(),
            at: chrono::Utc::now(),
            duration_ms: 1250.0,
            client_gone: true,
            files,
            files_note: None,
            uploads_before: vec![RecordedUpload {
                name: "in\u{1b}[31m.csv".into(),
                sha256: None,
                size: 21,
            }],
            ending: Ending::Exit(Some(0)),
        }
    }

    fn file(path: &str, content: ContentKept) -> FileChange {
        FileChange {
            path: path.into(),
            change: FileChangeKind::Added,
            size: 2048,
            sha256: Some("ab".into()),
            content: Some(content),
            data: None,
        }
    }

    #[test]
    fn a_record_folds_its_files_unless_selected_and_never_passes_escapes() {
        let r = record(vec![
            file("/mnt/data/out.csv", ContentKept::Kept),
            file("/mnt/data/big\u{7}.bin", ContentKept::TooBig),
        ]);
        let folded = record_lines(&r, Some("agent/1.0"), false, "F");
        assert!(folded.contains("ran by agent/1.0 · "), "{folded}");
        assert!(folded.contains("took 1.2 s · client gone"), "{folded}");
        assert!(folded.contains("2 file(s) changed (select"), "{folded}");
        assert!(!folded.contains("out.csv"), "{folded}");
        let open = record_lines(&r, Some("agent/1.0"), true, "F");
        assert!(
            open.contains("added    /mnt/data/out.csv  2.0 KiB"),
            "{open}"
        );
        assert!(open.contains("(too big to keep)"), "{open}");
        assert!(open.contains("F previews or saves one"), "{open}");
        assert!(open.contains("after upload of in"), "{open}");
        assert!(
            !open.contains('\u{1b}') && !open.contains('\u{7}'),
            "{open:?}"
        );
    }
}
