//! The TUI's end of notebook persistence: at start, load the stored notebook of
//! (pool, identifier) off the UI task and hand its cells to the app as history
//! (and its draft, the text typed and not run when it was last quit, to the
//! editor); then start the background saver the app gives each settled cell
//! to; at the end, wait (bounded) for the last write.
//!
//! It never blocks the UI task: reading, decoding images and writing happen on
//! blocking threads.

use std::path::PathBuf;
use std::time::Duration;

use super::app::App;
use crate::notebook::Cell;
use crate::notebook::ipynb::NotebookMeta;
use crate::notebook::language::Language;
use crate::notebook::store::{self, SaverThread};
use crate::protocol::ApiVersion;
use crate::session::DecodedImage;
use crate::tui::widgets::image::ImageKey;

/// Where the notebook lives and what it says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The `.ipynb` file in the data directory.
    pub path: PathBuf,
    /// Pool, identifier and api-version for its metadata.
    pub meta: NotebookMeta,
}

impl Place {
    /// The notebook of (pool, identifier) in the data directory, whose cells
    /// are written in `language`.
    pub fn new(
        endpoint: Option<&str>,
        identifier: &str,
        api_version: ApiVersion,
        language: Language,
    ) -> Self {
        let pool = store::pool_name(endpoint, language);
        Self {
            path: store::notebook_path(&crate::dirs::data_dir(), &pool, identifier),
            meta: NotebookMeta {
                pool,
                identifier: identifier.to_string(),
                api_version: api_version.to_string(),
                language,
            },
        }
    }
}

/// What loading found: the cells, their decoded images, the draft typed and
/// not run when the notebook was last quit, and a notice for the user when
/// the file had to be set aside (or saving is off).
struct Loaded {
    cells: Vec<Cell>,
    images: Vec<(ImageKey, DecodedImage)>,
    draft: Option<String>,
    notice: Option<String>,
    save: bool,
    /// When the file was last written (its modification time).
    written_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Loads the stored notebook into `app` and starts its saver. `None` when the
/// notebook cannot be saved (the user is told in the start-up banner).
pub async fn attach(app: &mut App, place: Place) -> Option<SaverThread> {
    let path = place.path.clone();
    let loaded = tokio::task::spawn_blocking(move || load(&path))
        .await
        .unwrap_or_else(|e| Loaded {
            cells: Vec::new(),
            images: Vec::new(),
            draft: None,
            notice: Some(format!("notebook not loaded: {e}")),
            save: false,
            written_at: None,
        });
    if let Some(notice) = loaded.notice {
        tracing::warn!("{notice}");
        app.pool_log.push(notice);
    }
    if !loaded.save {
        return None;
    }
    let spawned = store::spawn_saver(
        place.path,
        place.meta,
        loaded.cells.clone(),
        loaded.draft.clone(),
    );
    app.notebook.loaded_at = loaded.written_at;
    app.load_history(loaded.cells, loaded.images);
    // The text typed and not run when the notebook was last quit comes back.
    if let Some(draft) = &loaded.draft {
        app.notebook.editor.restore_draft(draft);
    }
    match spawned {
        Ok((saver, thread)) => {
            app.notebook.set_saver(saver);
            Some(thread)
        }
        Err(e) => {
            let notice = format!("the notebook will not be saved: {e}");
            tracing::error!("{notice}");
            app.pool_log.push(notice);
            None
        }
    }
}

/// Waits up to `wait` for the saver to write what it was given (every
/// [`store::Saver`] must be dropped first, or this waits the whole time).
pub async fn finish(thread: SaverThread, wait: Duration) {
    let joined = tokio::task::spawn_blocking(move || thread.join());
    if tokio::time::timeout(wait, joined).await.is_err() {
        tracing::error!("the notebook was still being written after {wait:?}");
    }
}

fn load(path: &std::path::Path) -> Loaded {
    let empty = |notice: Option<String>, save: bool| Loaded {
        cells: Vec::new(),
        images: Vec::new(),
        draft: None,
        notice,
        save,
        written_at: None,
    };
    match store::load(path) {
        Ok(None) => empty(None, true),
        Ok(Some(nb)) => {
            let images = decode_images(&nb.cells);
            Loaded {
                cells: nb.cells,
                images,
                draft: nb.draft,
                notice: None,
                save: true,
                written_at: std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .ok()
                    .map(chrono::DateTime::<chrono::Utc>::from),
            }
        }
        // An unreadable file is kept for the user, never overwritten.
        Err(e) => match store::set_aside(path) {
            Ok(aside) => empty(
                Some(format!(
                    "{e}; moved to {} and starting afresh",
                    aside.display()
                )),
                true,
            ),
            Err(move_err) => empty(
                Some(format!(
                    "{e}; it could not be moved aside ({move_err}), so this notebook is not saved"
                )),
                false,
            ),
        },
    }
}

fn decode_images(cells: &[Cell]) -> Vec<(ImageKey, DecodedImage)> {
    crate::session::history::decode_images(cells)
        .into_iter()
        .map(|((cell, output), decoded)| (ImageKey { cell, output }, decoded))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::notebook::{CellOutcome, Output, StreamName};
    use crate::protocol::{Execution, ExecutionStatus};
    use crate::session::{RunId, SessionEvent};
    use crate::tui::action::{Action, Effect};
    use crate::tui::app::{AppConfig, PoolState};
    use crate::tui::notebook::NotebookAction;

    fn app() -> App {
        App::new(
            AppConfig {
                pool_label: "local".into(),
                identifier: "t".into(),
                api_version: ApiVersion::V2025_10_02,
                language: crate::notebook::language::Language::Python,
            },
            PoolState::Ready,
        )
    }

    /// A Python and a shell notebook of the same directory's identifier on
    /// the local pool are two notebooks: reopening one never brings the
    /// other's cells (Python replayed into bash).
    #[test]
    fn each_language_of_the_local_pool_has_its_own_notebook() {
        let place = |language| Place::new(None, "sp-0123", ApiVersion::V2025_10_02, language);
        let python = place(Language::Python);
        let shell = place(Language::Shell);
        let node = place(Language::JavaScript);
        assert_ne!(python.path, shell.path);
        assert_ne!(python.path, node.path);
        assert_ne!(shell.path, node.path);
        assert_eq!(python.meta.pool, "local");
        assert_eq!(shell.meta.pool, "local-shell");
        // A pool at an endpoint is one pool whatever it runs.
        let remote = |language| {
            Place::new(
                Some("https://p"),
                "sp-0123",
                ApiVersion::V2025_10_02,
                language,
            )
            .path
        };
        assert_eq!(remote(Language::Python), remote(Language::Shell));
    }

    fn meta() -> NotebookMeta {
        Place::new(None, "t", ApiVersion::V2025_10_02, Language::Python).meta
    }

    fn stored(source: &str) -> Cell {
        Cell {
            source: source.into(),
            execution_count: 1,
            outputs: vec![Output::Stream {
                name: StreamName::Stdout,
                text: "1\n".into(),
            }],
            outcome: Some(CellOutcome::Succeeded),
            duration: Some(Duration::from_millis(3)),
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        }
    }

    /// Runs the editor's contents and delivers a successful answer printing `out`.
    fn run_editor(app: &mut App, out: &str) -> RunId {
        let now = Instant::now();
        let run = match app
            .update(Action::Notebook(NotebookAction::RunCell), now)
            .as_slice()
        {
            [Effect::Execute { run, .. }] => *run,
            other => panic!("expected one execution, got {other:?}"),
        };
        let exec = Execution {
            execution_count: None,
            id: None,
            status: ExecutionStatus::Succeeded,
            stdout: out.into(),
            stderr: String::new(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(2),
            network: Vec::new(),
        };
        app.handle_event(
            SessionEvent::ExecutionFinished {
                run,
                outcome: Ok(exec),
                exit_code: None,
                images: vec![],
            },
            now,
        );
        run
    }

    #[test]
    fn reloaded_cells_are_history_and_every_finished_cell_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nb/t.ipynb");
        let loaded = vec![stored("a = 1")];
        let (saver, thread) =
            store::spawn_saver(path.clone(), meta(), loaded.clone(), None).unwrap();
        let mut app = app();
        app.load_history(loaded, vec![]);
        app.notebook.set_saver(saver);

        app.update(
            Action::Notebook(NotebookAction::HistoryPrev),
            Instant::now(),
        );
        assert_eq!(app.notebook.editor.lines(), ["a = 1"]);
        app.update(
            Action::Notebook(NotebookAction::HistoryNext),
            Instant::now(),
        );
        app.update(Action::Paste("print(2)".into()), Instant::now());
        run_editor(&mut app, "2\n");
        assert_eq!(app.notebook.book.cells[1].execution_count, 2);

        drop(app);
        thread.join();
        let nb = store::load(&path).unwrap().expect("saved");
        let sources: Vec<_> = nb.cells.iter().map(|c| c.source.as_str()).collect();
        assert_eq!(sources, ["a = 1", "print(2)"]);
        assert_eq!(
            nb.cells[1].outputs,
            vec![Output::Stream {
                name: StreamName::Stdout,
                text: "2\n".into()
            }]
        );
    }

    #[test]
    fn opened_cells_come_into_the_editor_one_per_run() {
        let mut app = app();
        app.queue_sources(vec!["x = 1".into(), "y = 2\nx + y".into()]);
        assert_eq!(app.notebook.editor.lines(), ["x = 1"]);
        run_editor(&mut app, "");
        assert_eq!(app.notebook.editor.lines(), ["y = 2", "x + y"]);
        run_editor(&mut app, "");
        assert!(app.notebook.editor.is_empty());
        let sources: Vec<_> = app
            .notebook
            .book
            .cells
            .iter()
            .map(|c| c.source.as_str())
            .collect();
        assert_eq!(sources, ["x = 1", "y = 2\nx + y"]);
    }

    #[test]
    fn stored_images_are_decoded_and_broken_ones_say_why() {
        let mut png = std::io::Cursor::new(Vec::new());
        image::DynamicImage::new_rgb8(2, 2)
            .write_to(&mut png, image::ImageFormat::Png)
            .unwrap();
        let mut cell = stored("plot()");
        cell.outputs = vec![
            Output::DisplayData {
                format: "png".into(),
                data: png.into_inner(),
            },
            Output::DisplayData {
                format: "png".into(),
                data: vec![1, 2],
            },
        ];
        let images = decode_images(&[stored("a"), cell]);
        assert_eq!(images.len(), 2);
        assert_eq!(images[0].0, ImageKey { cell: 1, output: 0 });
        assert!(images[0].1.is_ok());
        assert!(matches!(&images[1].1, Err(r) if r.starts_with("cannot decode")));
    }
}
