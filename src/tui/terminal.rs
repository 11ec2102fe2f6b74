//! The terminal guard: puts the terminal into the modes the UI needs (raw mode,
//! alternate screen, bracketed paste, mouse capture, the kitty keyboard flag that
//! makes Ctrl+Enter reportable) and takes them back out on every exit path: when
//! the guard drops, and from a panic hook that restores first and then lets the
//! previous hook print the panic.
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

/// True while the terminal is in the UI's modes (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Set by the panic hook: some task panicked, the terminal is already restored.
static PANICKED: AtomicBool = AtomicBool::new(false);

/// The terminal the UI draws on.
pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Owns the terminal while the UI runs; restores it when dropped.
pub struct TerminalGuard {
    terminal: Tui,
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
            enable_raw_mode()?;
            let mut out = io::stdout();
            execute!(
                out,
                EnterAlternateScreen,
                Clear(ClearType::All),
                EnableBracketedPaste,
                EnableMouseCapture,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
            )?;
            // Not `Terminal::clear`, which asks the terminal where its cursor is and
            // fails on terminals that do not answer.
            Terminal::new(CrosstermBackend::new(out))
        };
        match setup() {
            Ok(terminal) => Ok(Self { terminal }),
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

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
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
            tracing::error!("panic: {info}");
            previous(info);
        }));
    });
}
