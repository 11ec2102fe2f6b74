//! What copy and save take from a notebook cell: its output as plain text (every
//! escape sequence removed: a clipboard or a file is no place for a session's
//! terminal commands), its images as the bytes the session sent, and a default
//! file name. Pure: no terminal, no file system (`local.rs` writes the files).

use std::path::Path;

use crate::notebook::{Cell, Output};
use crate::tui::widgets::sanitize;

/// File extensions saved as an image, with the output format each one means.
const IMAGE_EXTENSIONS: [(&str, &str); 4] = [
    ("png", "png"),
    ("jpg", "jpeg"),
    ("jpeg", "jpeg"),
    ("gif", "gif"),
];

/// The text of a cell's outputs as a person would copy it off the screen: the
/// streams, the result, the traceback (or `ename: evalue`), in order, without
/// escape sequences. Images are left out. Empty when there is no text.
pub fn output_text(cell: &Cell) -> String {
    let mut text = String::new();
    for output in &cell.outputs {
        let part = match output {
            Output::Stream { text, .. } => text.to_string(),
            Output::ExecuteResult { text, .. } => text.clone(),
            Output::Error {
                ename,
                evalue,
                traceback,
            } => {
                if traceback.iter().all(|l| l.trim().is_empty()) {
                    format!("{ename}: {evalue}")
                } else {
                    traceback.join("\n")
                }
            }
            Output::Files { line } => line.clone(),
            Output::DisplayData { .. } => continue,
        };
        text.push_str(&part);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    sanitize::plain(&text)
}

/// The cell's images: (format, bytes), in output order.
fn images(cell: &Cell) -> impl Iterator<Item = (&str, &[u8])> {
    cell.outputs.iter().filter_map(|o| match o {
        Output::DisplayData { format, data } => Some((format.as_str(), data.as_slice())),
        _ => None,
    })
}

/// The file name offered when saving a cell's output: its first image
/// (`out-3.png`) if it has one, else its text (`out-3.txt`); `None` when the
/// cell has neither.
pub fn default_name(cell: &Cell) -> Option<String> {
    let n = cell.execution_count;
    if let Some((format, _)) = images(cell).next() {
        let ext = if format == "jpeg" { "jpg" } else { format };
        return Some(format!("out-{n}.{}", sanitize::plain(ext)));
    }
    (!output_text(cell).is_empty()).then(|| format!("out-{n}.txt"))
}

/// What saving `cell` to `path` writes, chosen by the path's extension: an image
/// extension writes the cell's image of that format (its bytes as the session
/// sent them), anything else writes the output text. Also says what it is
/// (`image`, `text`), for the notice.
///
/// # Errors
///
/// The cell has no image of that format, or no text (the message says so).
pub fn content_for(cell: &Cell, path: &Path) -> Result<(Vec<u8>, &'static str), String> {
    let n = cell.execution_count;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let wanted = ext
        .as_deref()
        .and_then(|e| IMAGE_EXTENSIONS.iter().find(|(x, _)| *x == e))
        .map(|(_, format)| *format);
    if let Some(format) = wanted {
        if let Some((_, data)) = images(cell).find(|(f, _)| f.eq_ignore_ascii_case(format)) {
            return Ok((data.to_vec(), "image"));
        }
        let have: Vec<String> = images(cell).map(|(f, _)| sanitize::plain(f)).collect();
        return Err(if have.is_empty() {
            format!("In [{n}] has no image")
        } else {
            format!(
                "In [{n}] has no {format} image (it has {})",
                have.join(", ")
            )
        });
    }
    let text = output_text(cell);
    if text.is_empty() {
        return Err(format!("In [{n}] has no text output"));
    }
    Ok((text.into_bytes(), "text"))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::notebook::{CellOutcome, StreamName};

    fn cell(outputs: Vec<Output>) -> Cell {
        Cell {
            source: "x".into(),
            execution_count: 3,
            outputs,
            outcome: Some(CellOutcome::Succeeded),
            duration: None,
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        }
    }

    fn png() -> Output {
        Output::DisplayData {
            format: "png".into(),
            data: vec![0x89, b'P', b'N', b'G'],
        }
    }

    #[test]
    fn text_is_every_text_output_without_escapes() {
        let c = cell(vec![
            Output::Stream {
                name: StreamName::Stdout,
                text: "\x1b[31mred\x1b[0m\x1b]52;c;aGk=\x07".into(),
            },
            png(),
            Output::ExecuteResult {
                execution_count: 3,
                text: "[1, 2]".into(),
                json: Some(json!([1, 2])),
            },
            Output::Error {
                ename: "E".into(),
                evalue: "bad".into(),
                traceback: vec![],
            },
        ]);
        assert_eq!(output_text(&c), "red\n[1, 2]\nE: bad\n");
    }

    #[test]
    fn the_default_name_prefers_the_image() {
        assert_eq!(
            default_name(&cell(vec![png()])).as_deref(),
            Some("out-3.png")
        );
        let text = Output::Stream {
            name: StreamName::Stdout,
            text: "hi\n".into(),
        };
        assert_eq!(
            default_name(&cell(vec![text])).as_deref(),
            Some("out-3.txt")
        );
        assert_eq!(default_name(&cell(vec![])), None);
    }

    #[test]
    fn the_extension_chooses_image_or_text() {
        let text = Output::Stream {
            name: StreamName::Stdout,
            text: "hi\n".into(),
        };
        let c = cell(vec![text, png()]);
        assert_eq!(
            content_for(&c, Path::new("plot.PNG")),
            Ok((vec![0x89, b'P', b'N', b'G'], "image"))
        );
        assert_eq!(
            content_for(&c, Path::new("a/b.log")),
            Ok((b"hi\n".to_vec(), "text"))
        );
        assert_eq!(
            content_for(&c, Path::new("p.jpg")),
            Err("In [3] has no jpeg image (it has png)".into())
        );
        assert_eq!(
            content_for(&cell(vec![png()]), Path::new("t.txt")),
            Err("In [3] has no text output".into())
        );
    }
}
