//! Which graphics protocol images are drawn with: asked of the terminal once at
//! start, after the terminal guard entered raw mode and the alternate screen and
//! before the input stream starts; or chosen by the config file
//! (`image_protocol`) or `SESSIONPAD_IMAGE_PROTOCOL` (`auto`, `kitty`, `sixel`,
//! `iterm2`, `halfblocks`).
//!
//! The question is ratatui-image's own (kitty graphics query, device
//! attributes for sixel, cell size in pixels, ended by a status report that
//! every terminal answers), parsed by its parser. The answer is read here rather
//! than by `Picker::from_query_stdio`, whose reader thread stays blocked on
//! standard input when a terminal never answers and then swallows the first
//! keys typed. This one reads a separate, non-blocking handle on `/dev/tty` and
//! gives up after [`PROBE_TIMEOUT`], leaving nothing behind; no answer means
//! half-blocks.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use ratatui_image::picker::cap_parser::{Parser, QueryStdioOptions, Response};
use ratatui_image::picker::{Picker, ProtocolType};

use crate::config::ImageProtocol;

/// How long the terminal gets to answer. A terminal answers in a few
/// milliseconds (a status report is as old as the VT100); what does not answer
/// within this is taken to have no graphics.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(150);
/// The environment variable that overrides the config file.
pub const ENV: &str = "SESSIONPAD_IMAGE_PROTOCOL";

/// The protocol asked for: the environment variable when it names one, else the
/// config file's.
pub fn choice(config: ImageProtocol) -> ImageProtocol {
    match std::env::var(ENV).ok().as_deref().map(str::trim) {
        Some("auto") => ImageProtocol::Auto,
        Some("kitty") => ImageProtocol::Kitty,
        Some("sixel") => ImageProtocol::Sixel,
        Some("iterm2") => ImageProtocol::Iterm2,
        Some("halfblocks") => ImageProtocol::Halfblocks,
        Some(other) => {
            tracing::warn!("{ENV}={other:?} is not a protocol; using the config's");
            config
        }
        None => config,
    }
}

/// The picker for `choice`: half-blocks without asking; otherwise the terminal
/// is asked (for its cell size, and for the protocol under `auto`). Also the
/// keys typed while the answer was read, in order, for the input loop.
pub fn picker(choice: ImageProtocol) -> (Picker, Vec<crossterm::event::Event>) {
    let forced = match choice {
        ImageProtocol::Halfblocks => return (Picker::halfblocks(), Vec::new()),
        ImageProtocol::Auto => None,
        ImageProtocol::Kitty => Some(ProtocolType::Kitty),
        ImageProtocol::Sixel => Some(ProtocolType::Sixel),
        ImageProtocol::Iterm2 => Some(ProtocolType::Iterm2),
    };
    let started = Instant::now();
    let mut typed = Vec::new();
    let answer = ask(PROBE_TIMEOUT, &mut typed);
    let mut picker = match &answer {
        Ok(answer) => answer.picker(),
        Err(e) => {
            tracing::info!("the terminal did not tell its graphics ({e}): half-blocks");
            Picker::halfblocks()
        }
    };
    if let Some(protocol) = forced {
        picker.set_protocol_type(protocol);
    }
    tracing::info!(
        protocol = ?picker.protocol_type(),
        font = ?picker.font_size(),
        took = ?started.elapsed(),
        typed = typed.len(),
        "image protocol"
    );
    (picker, super::typeahead::key_events(&typed))
}

/// What the terminal said.
#[derive(Debug, Default, PartialEq)]
struct Answer {
    kitty: bool,
    sixel: bool,
    cell: Option<(u16, u16)>,
}

impl Answer {
    fn take(&mut self, response: &Response) {
        match *response {
            Response::Kitty => self.kitty = true,
            Response::Sixel => self.sixel = true,
            Response::CellSize(Some(size)) => self.cell = Some(size),
            _ => {}
        }
    }

    /// The picker the answer makes: kitty over sixel (except on terminals known
    /// to implement them badly, as ratatui-image does), else what the
    /// environment suggests (iTerm2, tmux); half-blocks without a cell size.
    fn picker(&self) -> Picker {
        let Some(cell) = self.cell.or_else(cell_from_window) else {
            return Picker::halfblocks();
        };
        // The constructor that takes a known cell size; it also reads the
        // environment for iTerm2 and tmux.
        #[allow(deprecated)]
        let mut picker = Picker::from_fontsize(cell);
        let set = |v: &str| std::env::var(v).is_ok_and(|s| !s.is_empty());
        let unreliable = set("WEZTERM_EXECUTABLE") || set("KONSOLE_VERSION");
        if !unreliable {
            if self.kitty {
                picker.set_protocol_type(ProtocolType::Kitty);
            } else if self.sixel {
                picker.set_protocol_type(ProtocolType::Sixel);
            }
        }
        picker
    }
}

/// The cell size from the window's pixel size, for terminals that do not
/// answer the cell-size query but fill in `TIOCGWINSZ`.
fn cell_from_window() -> Option<(u16, u16)> {
    let size = crossterm::terminal::window_size().ok()?;
    if size.columns == 0 || size.rows == 0 || size.width == 0 || size.height == 0 {
        return None;
    }
    Some((size.width / size.columns, size.height / size.rows))
}

/// Reads answers from `input` until the status report or `deadline`; every
/// byte read (answers and typed keys alike) is appended to `seen`.
fn read_answer(input: &mut impl Read, deadline: Instant, seen: &mut Vec<u8>) -> io::Result<Answer> {
    let mut parser = Parser::new();
    let mut answer = Answer::default();
    let mut buf = [0u8; 256];
    loop {
        match input.read(&mut buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                seen.extend_from_slice(&buf[..n]);
                for byte in &buf[..n] {
                    for response in parser.push(char::from(*byte)) {
                        if response == Response::Status {
                            return Ok(answer);
                        }
                        answer.take(&response);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                std::thread::sleep(Duration::from_millis(3));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Writes the question and reads the answer within `timeout`; the bytes read
/// go to `seen`.
#[cfg(unix)]
fn ask(timeout: Duration, seen: &mut Vec<u8>) -> io::Result<Answer> {
    use std::os::unix::fs::OpenOptionsExt;

    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        // O_NONBLOCK on this handle only (its own open file description): reads never
        // wait, while the terminal input crossterm reads stays blocking.
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/tty")?;
    let tmux = std::env::var("TMUX").is_ok_and(|s| !s.is_empty());
    let question = Parser::query(tmux, QueryStdioOptions::default());
    let mut out = io::stdout();
    out.write_all(question.as_bytes())?;
    out.flush()?;
    read_answer(&mut tty, Instant::now() + timeout, seen)
}

#[cfg(not(unix))]
fn ask(_timeout: Duration, _seen: &mut Vec<u8>) -> io::Result<Answer> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Input that yields `chunks`, then would block forever.
    struct Chunks(Vec<Vec<u8>>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn a_kitty_answer_with_a_cell_size() {
        let answer = read_answer(
            &mut Chunks(vec![
                b"\x1b_Gi=31;OK\x1b\\\x1b[?62;4;22c".to_vec(),
                b"\x1b[6;20;10t\x1b[0n".to_vec(),
            ]),
            Instant::now() + Duration::from_secs(1),
            &mut Vec::new(),
        );
        let answer = answer.expect("an answer");
        assert_eq!(
            answer,
            Answer {
                kitty: true,
                sixel: true,
                cell: Some((10, 20))
            }
        );
        assert_eq!(answer.picker().font_size(), (10, 20));
    }

    #[test]
    fn silence_times_out_quickly() {
        let started = Instant::now();
        let answer = read_answer(
            &mut Chunks(vec![]),
            started + Duration::from_millis(50),
            &mut Vec::new(),
        );
        assert_eq!(answer.map_err(|e| e.kind()), Err(io::ErrorKind::TimedOut));
        assert!(started.elapsed() < Duration::from_millis(200));
    }

    #[test]
    fn halfblocks_are_chosen_without_asking() {
        assert_eq!(
            picker(ImageProtocol::Halfblocks).0.protocol_type(),
            ProtocolType::Halfblocks
        );
    }
}
