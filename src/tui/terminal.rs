//! The terminal guard: puts the terminal into the modes the UI needs (raw mode,
//! alternate screen, bracketed paste, mouse capture, the kitty keyboard flag that
//! makes Ctrl+Enter reportable) and takes them back out on every exit path: when
//! the guard drops, and from a panic hook that restores first and then lets the
//! previous hook print the panic.
//!
//! [`suspend`] and [`resume`] hand the terminal to another program (`$EDITOR`)
//! and take it back. [`copy_to_clipboard`] writes the one escape sequence of
//! ours that is not drawing: OSC 52, which asks the terminal to set the
//! clipboard. (Session output never reaches the terminal raw: `widgets/sanitize.rs`
//! removes every OSC 52 it carries.)
//!
//! It never queries the terminal (no `supports_keyboard_enhancement`, no cursor
//! position request; they block or fail on terminals that do not answer): pushing
//! the keyboard flags is harmless where they are not understood.

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;

/// True while the terminal is in the UI's modes (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Set by the panic hook: some task panicked, the terminal is already restored.
static PANICKED: AtomicBool = AtomicBool::new(false);

/// The terminal the UI draws on.
pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Owns the terminal while the UI runs; restores it when dropped.
pub struct TerminalGuard {
    /// Dropped by hand, only while the terminal is still there (see the
    /// `Drop` impl).
    terminal: std::mem::ManuallyDrop<Tui>,
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen and enables the input modes.
    ///
    /// # Errors
    ///
    /// The terminal refused a mode (not a tty, for instance); whatever was already
    /// enabled is undone before returning.
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        ACTIVE.store(true, Ordering::SeqCst);
        let setup = || -> io::Result<Tui> {
            enable_modes()?;
            // Not `Terminal::clear`, which asks the terminal where its cursor is and
            // fails on terminals that do not answer.
            Terminal::new(CrosstermBackend::new(io::stdout()))
        };
        match setup() {
            Ok(terminal) => Ok(Self {
                terminal: std::mem::ManuallyDrop::new(terminal),
            }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }

    /// The terminal to draw on.
    pub fn terminal_mut(&mut self) -> &mut Tui {
        &mut self.terminal
    }
}

/// Raw mode, the alternate screen (cleared) and the input modes.
fn enable_modes() -> io::Result<()> {
    enable_raw_mode()?;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        Clear(ClearType::All),
        EnableBracketedPaste,
        EnableMouseCapture,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
    )
}

/// Gives the terminal back as it was before the UI, for another program to use.
/// The caller must stop reading input first (drop its `EventStream`), or the two
/// programs fight over the keys.
pub fn suspend() {
    restore();
}

/// Takes the terminal back after [`suspend`] and makes the next draw repaint
/// the whole screen (at its size now, which may have changed meanwhile).
///
/// # Errors
///
/// The terminal refused a mode, or its size cannot be read.
pub fn resume(terminal: &mut Tui) -> io::Result<()> {
    ACTIVE.store(true, Ordering::SeqCst);
    enable_modes()?;
    let size = terminal.size()?;
    // Not `Terminal::clear` (see `enter`); `resize` clears and forgets the last
    // frame without asking the terminal anything.
    terminal.resize(Rect::new(0, 0, size.width, size.height))
}

/// The OSC 52 sequence that asks the terminal to put `text` on the clipboard
/// (`c`), base64-encoded so nothing in `text` can end the sequence early.
pub fn osc52(text: &str) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{encoded}\x07")
}

/// Asks the terminal to put `text` on the system clipboard (OSC 52). Terminals
/// do not answer, so success means only that the request was written.
///
/// # Errors
///
/// Writing to the terminal failed.
pub fn copy_to_clipboard(terminal: &mut Tui, text: &str) -> io::Result<()> {
    let out = terminal.backend_mut();
    out.write_all(osc52(text).as_bytes())?;
    out.flush()
}

impl Drop for TerminalGuard {
    /// Restores the terminal. ratatui's `Terminal` shows the cursor when it is
    /// dropped and, when that fails, says so with `eprintln!`, which panics
    /// when standard error is that same terminal and it has gone away (a
    /// closed window, a dropped connection). So the cursor is shown here
    /// first, and when even that fails the terminal is gone and ratatui's drop
    /// is skipped (it would only have written to it).
    fn drop(&mut self) {
        restore();
        if self.terminal.show_cursor().is_ok() {
            // SAFETY: dropped once, here, and never used again.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.terminal) };
        }
    }
}

/// Puts the terminal back as it was. Safe to call more than once and from a panic
/// hook; errors are ignored because there is nowhere left to report them.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = execute!(
        out,
        PopKeyboardEnhancementFlags,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show,
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// True once any thread has panicked while the UI ran: the terminal is restored
/// already and the loop must end.
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

/// Chains a panic hook that restores the terminal first, so the panic message is
/// printed on a sane screen. Installed once per process.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let was_active = ACTIVE.load(Ordering::SeqCst);
            restore();
            if was_active {
                PANICKED.store(true, Ordering::SeqCst);
            }
            tracing::error!(
                "panic: {info}\n{}",
                std::backtrace::Backtrace::force_capture()
            );
            previous(info);
        }));
    });
}
