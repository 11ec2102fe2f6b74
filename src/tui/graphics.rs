//! Which graphics protocol images are drawn with: asked of the terminal once at
//! start, after the terminal guard entered raw mode and the alternate screen and
//! before the input stream starts; or chosen by the config file
//! (`image_protocol`) or `SESSIONPAD_IMAGE_PROTOCOL` (`auto`, `kitty`, `sixel`,
//! `iterm2`, `halfblocks`).
//!
//! The question is the terminal's name and version (XTVERSION, `CSI > 0 q`)
//! followed by ratatui-image's own (kitty graphics query, device attributes
//! for sixel, cell size in pixels, ended by a status report that every
//! terminal answers), parsed by its parser and, for XTVERSION's `DCS > |`
//! reply, by vte. The answer is read here rather than by
//! `Picker::from_query_stdio`, whose reader thread stays blocked on standard
//! input when a terminal never answers and then swallows the first keys typed.
//! This one reads a separate, non-blocking handle on `/dev/tty` and gives up
//! after [`PROBE_TIMEOUT`], leaving nothing behind; no answer means half-blocks,
//! said in the log with the variable that forces a protocol.
//!
//! A protocol is taken only where the terminal can show it: kitty's graphics
//! are drawn with Unicode placeholders, which kitty has only since 0.28, so an
//! older kitty (Debian 12's 0.26.5 answers the graphics query yet shows every
//! placeholder as an empty box) gets sixel if it reports it, else half-blocks.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use ratatui_image::FontSize;
use ratatui_image::picker::cap_parser::{Parser, QueryStdioOptions, Response};
use ratatui_image::picker::{Picker, ProtocolType};

use crate::config::ImageProtocol;

/// How long the terminal gets to answer. A terminal answers in a few
/// milliseconds (a status report is as old as the VT100), but a busy one takes
/// longer: kitty drawing with software OpenGL under Xvfb took 92 ms. What does
/// not answer within this is taken to have no graphics, and the log says so.
/// Only a terminal that never answers waits this long, and the first frame is
/// on screen meanwhile (keys typed are kept).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// An answer slower than this is logged as late (it still counts).
const PROBE_SLOW: Duration = Duration::from_millis(150);
/// The first kitty release that shows images placed with Unicode placeholders,
/// which ratatui-image's kitty protocol uses (kitty's changelog, 0.28.0).
const KITTY_PLACEHOLDERS: (u32, u32, u32) = (0, 28, 0);
/// XTVERSION: asks the terminal's name and version (`DCS > | name(version) ST`).
const XTVERSION: &str = "[>0q";
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

/// The question asked of the terminal, its answer still to be read
/// ([`Asked::answer`]): made by [`ask_terminal`] on the UI task, which owns
/// standard output, so that the question's bytes never land inside a frame
/// the loop draws while the answer is read on a blocking thread.
pub struct Asked {
    /// `None`: the picker is known without asking (half-blocks chosen), or
    /// the question could not be asked (why, in the log and `failed`).
    tty: Option<(std::fs::File, Ending)>,
    forced: Option<ProtocolType>,
    /// Why the question could not be asked.
    failed: Option<io::Error>,
    started: Instant,
}

/// Asks the terminal about its graphics for `choice` now (half-blocks need no
/// question): writes the question to standard output, after `tmux set -p
/// allow-passthrough on` inside tmux. The answer is read by
/// [`Asked::answer`], off the UI task.
pub fn ask_terminal(choice: ImageProtocol) -> Asked {
    let forced = match choice {
        ImageProtocol::Halfblocks => None,
        ImageProtocol::Auto => None,
        ImageProtocol::Kitty => Some(ProtocolType::Kitty),
        ImageProtocol::Sixel => Some(ProtocolType::Sixel),
        ImageProtocol::Iterm2 => Some(ProtocolType::Iterm2),
    };
    let started = Instant::now();
    if choice == ImageProtocol::Halfblocks {
        return Asked {
            tty: None,
            forced,
            failed: None,
            started,
        };
    }
    match ask() {
        Ok(tty) => Asked {
            tty: Some(tty),
            forced,
            failed: None,
            started,
        },
        Err(e) => Asked {
            tty: None,
            forced,
            failed: Some(e),
            started,
        },
    }
}

impl Asked {
    /// Reads the terminal's answer (blocking, at most [`PROBE_TIMEOUT`]) and
    /// returns the picker it makes. The keys typed meanwhile are handed to
    /// `typed` as soon as each is whole, in order (issue 27: they waited for
    /// the end of the probe, 150 ms inside tmux), without the answers.
    ///
    /// `stop` is asked before each read: true ends the reading at once (the
    /// loop handed the terminal to `$EDITOR`, whose keys the probe must not
    /// take), with half-blocks.
    pub fn answer(
        self,
        typed: &mut impl FnMut(Vec<crossterm::event::Event>),
        stop: &dyn Fn() -> bool,
    ) -> Picker {
        let Self {
            tty,
            forced,
            failed,
            started,
        } = self;
        let Some((mut tty, ending)) = tty else {
            return match failed {
                None => Picker::halfblocks(),
                Some(e) => settle(forced, started, &Err(e), 0),
            };
        };
        let mut keys = super::typeahead::Typeahead::default();
        let mut bytes = 0;
        let answer = read_answer(
            &mut tty,
            started + PROBE_TIMEOUT,
            ending,
            stop,
            &mut |chunk| {
                bytes += chunk.len();
                let events = keys.feed(chunk);
                if !events.is_empty() {
                    typed(events);
                }
            },
        );
        let took = started.elapsed();
        if ending == Ending::Status && took > PROBE_SLOW && answer.is_ok() {
            tracing::warn!("the terminal answered the graphics probe late, in {took:?}");
        }
        settle(forced, started, &answer, bytes)
    }
}

/// The picker `answer` makes (or half-blocks without one), with `forced`'s
/// protocol where one was chosen; logged with why, how long since `started`
/// and how many bytes were read.
fn settle(
    forced: Option<ProtocolType>,
    started: Instant,
    answer: &io::Result<Answer>,
    bytes: usize,
) -> Picker {
    let (mut picker, why) = match answer {
        Ok(answer) => answer.picker(),
        Err(e) => {
            tracing::warn!(
                "the terminal did not say what graphics it has within {PROBE_TIMEOUT:?} ({e}): \
                 half-blocks; {ENV}=kitty, sixel or iterm2 forces a protocol"
            );
            (Picker::halfblocks(), "no answer".to_string())
        }
    };
    let why = match forced {
        Some(protocol) => {
            picker.set_protocol_type(protocol);
            format!("{ENV} or the config chose it ({why})")
        }
        None => why,
    };
    tracing::info!(
        protocol = ?picker.protocol_type(),
        font = ?picker.font_size(),
        terminal = answer.as_ref().ok().and_then(|a| a.terminal.as_deref()).unwrap_or("?"),
        why,
        took = ?started.elapsed(),
        bytes,
        "image protocol"
    );
    picker
}

/// The picker for `choice`, asked and answered in one go (blocking), with the
/// keys typed while the answer was read, in order.
pub fn picker(choice: ImageProtocol) -> (Picker, Vec<crossterm::event::Event>) {
    let mut typed = Vec::new();
    let picker = ask_terminal(choice).answer(&mut |keys| typed.extend(keys), &|| false);
    (picker, typed)
}

/// What the terminal said.
#[derive(Debug, Default, PartialEq)]
struct Answer {
    kitty: bool,
    sixel: bool,
    cell: Option<(u16, u16)>,
    /// Its name and version from XTVERSION, as sent (`kitty(0.26.5)`,
    /// `XTerm(379)`, `tmux 3.3a`).
    terminal: Option<String>,
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

    /// Whether kitty graphics can be drawn: the terminal answered the kitty
    /// query, and is not a kitty older than [`KITTY_PLACEHOLDERS`] (other
    /// terminals that answer it, such as ghostty, have placeholders).
    fn kitty_placeholders(&self) -> Result<(), String> {
        if !self.kitty {
            return Err("no kitty graphics".into());
        }
        match self.terminal.as_deref().and_then(kitty_version) {
            Some(v) if v < KITTY_PLACEHOLDERS => Err(format!(
                "kitty {}.{}.{} has kitty graphics but no Unicode placeholders (0.28 and later)",
                v.0, v.1, v.2
            )),
            _ => Ok(()),
        }
    }

    /// The picker the answer makes, and why: kitty over sixel (except on
    /// terminals known to implement them badly, as ratatui-image does, and on
    /// a kitty without placeholders), else what the environment suggests
    /// (iTerm2, tmux); half-blocks without a cell size.
    fn picker(&self) -> (Picker, String) {
        let Some(cell) = self.cell.or_else(cell_from_window) else {
            return (Picker::halfblocks(), "no cell size in pixels".into());
        };
        // The constructor that takes a known cell size; it also reads the
        // environment for iTerm2 and tmux.
        #[allow(deprecated)]
        let mut picker = Picker::from_fontsize(FontSize::from(cell));
        let set = |v: &str| std::env::var(v).is_ok_and(|s| !s.is_empty());
        if set("WEZTERM_EXECUTABLE") || set("KONSOLE_VERSION") {
            return (
                picker,
                "WezTerm or Konsole: their kitty and sixel are unreliable".into(),
            );
        }
        let kitty = self.kitty_placeholders();
        let why = match (&kitty, self.sixel) {
            (Ok(()), _) => {
                picker.set_protocol_type(ProtocolType::Kitty);
                "kitty graphics with Unicode placeholders".to_string()
            }
            (Err(no), true) => {
                picker.set_protocol_type(ProtocolType::Sixel);
                format!("sixel ({no})")
            }
            (Err(no), false) => format!("{no}, no sixel"),
        };
        (picker, why)
    }
}

/// kitty's version from its XTVERSION reply (`kitty(0.26.5)`).
fn kitty_version(terminal: &str) -> Option<(u32, u32, u32)> {
    let version = terminal.strip_prefix("kitty(")?.strip_suffix(')')?;
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// Collects the text of an XTVERSION reply (`DCS > | text ST`) from the bytes
/// vte parses.
#[derive(Default)]
struct XtVersion {
    /// Inside a `DCS > |` string.
    open: bool,
    text: Vec<u8>,
    done: Option<String>,
}

impl vte::Perform for XtVersion {
    fn hook(&mut self, _params: &vte::Params, intermediates: &[u8], _ignore: bool, action: char) {
        self.open = action == '|' && intermediates == b">";
        self.text.clear();
    }

    fn put(&mut self, byte: u8) {
        // A name and version is short; more is not an XTVERSION reply.
        if self.open && self.text.len() < 256 {
            self.text.push(byte);
        }
    }

    fn unhook(&mut self) {
        if std::mem::take(&mut self.open) {
            let text = String::from_utf8_lossy(&self.text);
            self.done = Some(crate::text::sanitize::plain(&text).trim().to_string());
        }
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

/// How the answer ends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ending {
    /// At the status report that ends the question.
    Status,
    /// Inside tmux: tmux answers the status report sent outside its
    /// passthrough at once; the terminal outside tmux answers the one inside
    /// it, or never when passthrough is off. After tmux's, the outer one gets
    /// this long.
    Tmux(Duration),
}

/// Reads answers from `input` until the status report ([`Ending`]) or
/// `deadline`; every chunk read (answers and typed keys alike) is handed to
/// `seen` as it is read.
fn read_answer(
    input: &mut impl Read,
    mut deadline: Instant,
    ending: Ending,
    stop: &dyn Fn() -> bool,
    seen: &mut dyn FnMut(&[u8]),
) -> io::Result<Answer> {
    let mut parser = Parser::new();
    let mut dcs = vte::Parser::new();
    let mut version = XtVersion::default();
    let mut answer = Answer::default();
    let mut statuses = 0;
    let mut buf = [0u8; 256];
    loop {
        if stop() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        match input.read(&mut buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                seen(&buf[..n]);
                dcs.advance(&mut version, &buf[..n]);
                if let Some(terminal) = version.done.take() {
                    answer.terminal = Some(terminal);
                }
                for byte in &buf[..n] {
                    for response in parser.push(char::from(*byte)) {
                        if response == Response::Status {
                            statuses += 1;
                            match ending {
                                Ending::Status => return Ok(answer),
                                Ending::Tmux(_) if statuses == 2 => return Ok(answer),
                                Ending::Tmux(grace) => {
                                    deadline = deadline.min(Instant::now() + grace);
                                }
                            }
                        }
                        answer.take(&response);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    // tmux answered; what is outside it did not.
                    return if statuses > 0 {
                        Ok(answer)
                    } else {
                        Err(io::ErrorKind::TimedOut.into())
                    };
                }
                std::thread::sleep(Duration::from_millis(3));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The bytes that ask the terminal: XTVERSION, then ratatui-image's query
/// (which ends with the status report that ends the answer); wrapped for
/// tmux's passthrough inside tmux, as ratatui-image wraps its own, and then
/// a status report for tmux itself (see [`Ending::Tmux`]).
fn question(tmux: bool) -> String {
    let (start, escape, end) = Parser::tmux_start_escape_end(tmux);
    let mut question = format!("{start}{escape}{XTVERSION}{end}");
    question.push_str(&Parser::query(tmux, QueryStdioOptions::default()));
    if tmux {
        question.push_str("\x1b[5n");
    }
    question
}

/// Opens the terminal for reading (a non-blocking handle of its own) and
/// writes the question; the answer is read from the handle returned, until
/// the [`Ending`] returned.
#[cfg(unix)]
fn ask() -> io::Result<(std::fs::File, Ending)> {
    use std::os::unix::fs::OpenOptionsExt;

    let tty = std::fs::OpenOptions::new()
        .read(true)
        // O_NONBLOCK on this handle only (its own open file description): reads never
        // wait, while the terminal input crossterm reads stays blocking.
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/tty")?;
    let tmux = std::env::var("TMUX").is_ok_and(|s| !s.is_empty());
    if tmux {
        // What ratatui-image's own probe does: the question and the images
        // reach the terminal outside tmux only through passthrough (off by
        // default since tmux 3.3). Only this pane's option is set.
        let passthrough = std::process::Command::new("tmux")
            .args(["set", "-p", "allow-passthrough", "on"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        tracing::info!("tmux: allow-passthrough on for this pane ({passthrough:?})");
    }
    let question = question(tmux);
    let mut out = io::stdout();
    out.write_all(question.as_bytes())?;
    out.flush()?;
    let ending = if tmux {
        Ending::Tmux(PROBE_SLOW)
    } else {
        Ending::Status
    };
    Ok((tty, ending))
}

#[cfg(not(unix))]
fn ask() -> io::Result<(std::fs::File, Ending)> {
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

    fn read(chunks: &[&[u8]]) -> Answer {
        read_answer(
            &mut Chunks(chunks.iter().map(|c| c.to_vec()).collect()),
            Instant::now() + Duration::from_secs(1),
            Ending::Status,
            &|| false,
            &mut |_: &[u8]| {},
        )
        .expect("an answer")
    }

    #[test]
    fn a_kitty_answer_with_a_cell_size() {
        let answer = read(&[
            b"\x1b_Gi=31;OK\x1b\\\x1b[?62;4;22c",
            b"\x1b[6;20;10t\x1b[0n",
        ]);
        assert_eq!(
            answer,
            Answer {
                kitty: true,
                sixel: true,
                cell: Some((10, 20)),
                terminal: None,
            }
        );
        let (picker, _) = answer.picker();
        assert_eq!(
            (picker.font_size().width, picker.font_size().height),
            (10, 20)
        );
        assert_eq!(picker.protocol_type(), ProtocolType::Kitty);
    }

    /// Debian 12's kitty answers the graphics query but has no Unicode
    /// placeholders (issue 23: every plot was rows of empty boxes); a newer
    /// kitty, and a terminal that does not say its version, get kitty.
    #[test]
    fn a_kitty_without_placeholders_is_not_given_kitty_graphics() {
        let kitty = |version: &str| {
            let reply = format!("\x1bP>|kitty({version})\x1b\\");
            read(&[
                reply.as_bytes(),
                b"\x1b_Gi=31;OK\x1b\\\x1b[?62;c\x1b[6;20;10t\x1b[0n",
            ])
        };
        let old = kitty("0.26.5");
        assert_eq!(old.terminal.as_deref(), Some("kitty(0.26.5)"));
        let (picker, why) = old.picker();
        assert_eq!(picker.protocol_type(), ProtocolType::Halfblocks, "{why}");
        assert!(why.contains("0.26.5"), "{why}");
        assert_eq!(
            kitty("0.28.0").picker().0.protocol_type(),
            ProtocolType::Kitty
        );
        assert_eq!(
            kitty("0.43.1").picker().0.protocol_type(),
            ProtocolType::Kitty
        );
        let unnamed = read(&[b"\x1b_Gi=31;OK\x1b\\\x1b[6;20;10t\x1b[0n"]);
        assert_eq!(unnamed.picker().0.protocol_type(), ProtocolType::Kitty);
    }

    /// xterm as a VT340 (`-ti vt340`): XTVERSION, sixel in its device
    /// attributes, its cell size.
    #[test]
    fn xterm_as_a_vt340_gets_sixel() {
        let answer = read(&[
            b"\x1bP>|XTerm(379)\x1b\\",
            b"\x1b[?63;1;2;4;6;9;15;16;22;28c\x1b[6;17;9t",
            b"\x1b[0n",
        ]);
        assert_eq!(answer.terminal.as_deref(), Some("XTerm(379)"));
        let (picker, why) = answer.picker();
        assert_eq!(picker.protocol_type(), ProtocolType::Sixel, "{why}");
    }

    /// Inside tmux: tmux's own status report comes first; the terminal
    /// outside answers through passthrough, or never when passthrough is off
    /// (then the answer is tmux's alone, after a short wait, not the whole
    /// timeout).
    #[test]
    fn inside_tmux_the_outer_terminal_gets_a_short_wait() {
        let outer = read_answer(
            &mut Chunks(vec![
                b"\x1b[0n".to_vec(),
                b"\x1bP>|kitty(0.43.1)\x1b\\\x1b_Gi=31;OK\x1b\\\x1b[6;20;10t\x1b[0n".to_vec(),
            ]),
            Instant::now() + Duration::from_secs(1),
            Ending::Tmux(Duration::from_millis(100)),
            &|| false,
            &mut |_: &[u8]| {},
        )
        .expect("an answer");
        assert!(outer.kitty && outer.terminal.as_deref() == Some("kitty(0.43.1)"));
        let started = Instant::now();
        let alone = read_answer(
            &mut Chunks(vec![b"\x1b[0n".to_vec()]),
            started + Duration::from_secs(5),
            Ending::Tmux(Duration::from_millis(100)),
            &|| false,
            &mut |_: &[u8]| {},
        )
        .expect("tmux's answer");
        assert_eq!(alone, Answer::default());
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn kitty_versions_are_read_from_xtversion() {
        assert_eq!(kitty_version("kitty(0.26.5)"), Some((0, 26, 5)));
        assert_eq!(kitty_version("kitty(0.28)"), Some((0, 28, 0)));
        assert_eq!(kitty_version("XTerm(379)"), None);
        assert_eq!(kitty_version("kitty(x.y)"), None);
    }

    #[test]
    fn silence_times_out_quickly() {
        let started = Instant::now();
        let answer = read_answer(
            &mut Chunks(vec![]),
            started + Duration::from_millis(50),
            Ending::Status,
            &|| false,
            &mut |_: &[u8]| {},
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
