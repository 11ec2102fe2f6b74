//! Issue 27 item 11: the end of a huge output reaches the screen. The real
//! binary in a pseudo-terminal on the local pool runs a cell printing a million
//! lines; once it is done the screen shows its last line and the pool's marker.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::time::{Duration, Instant};

mod common;
mod pty;

use pty::*;

/// Runs `for i in range(n): print('line', i)` with the pool's stream limit set
/// to `limit` in the config file (none: the default 8 MiB); returns the screen
/// once the cell is done and its last line shows. Prints how long each phase
/// took (for the investigation of slow runs; nothing is asserted on it).
fn run_lines(n: u64, limit: Option<&str>) -> String {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    if let Some(limit) = limit {
        std::fs::write(
            data.path().join("no-config.toml"),
            format!("[pool]\nmax_stream_bytes = \"{limit}\"\n"),
        )
        .unwrap();
    }
    let start = Instant::now();
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    eprintln!("pool ready after {:?}", start.elapsed());
    // One line: the editor indents after `:` and Enter.
    pty.send(&format!("for i in range({n}): print('line', i){F5}"));
    let ran = Instant::now();
    let last = format!("line {}", n - 1);
    let screen = pty.wait_for("the cell to finish", Duration::from_secs(600), |s| {
        s.contains("done in")
    });
    eprintln!("done in after {:?}", ran.elapsed());
    let shown = Instant::now();
    let screen = if has_line(&screen, &last) {
        screen
    } else {
        pty.wait_for(&last, Duration::from_secs(120), |s| has_line(s, &last))
    };
    eprintln!("{last} shown {:?} after done in", shown.elapsed());
    pty.quit_with(CTRL_Q);
    screen
}

/// With the limit set small (64 KiB), the pool cuts the stream early (so the
/// notebook holds little and the test is as fast as the kernel): the screen
/// ends with the last line, and shows the pool's marker. `BIGOUT_LINES` and
/// `BIGOUT_LIMIT` change the count and the limit for an investigation by hand
/// (`scripts/bigout.sh` measures the full-size run in a release build).
#[test]
fn a_million_lines_end_on_screen_with_the_marker() {
    let n = std::env::var("BIGOUT_LINES").map_or(1_000_000, |v| v.parse().unwrap());
    let limit = std::env::var("BIGOUT_LIMIT").ok();
    let screen = run_lines(n, Some(limit.as_deref().unwrap_or("64 KiB")));
    assert!(has_line(&screen, &format!("line {}", n - 1)), "{screen}");
    // The marker sits between the head and the tail the pool kept, among the
    // rows the collapsed view leaves out: the view shows it under its note.
    let flat = screen.replace('\n', "");
    assert!(
        flat.contains("[output truncated by the local pool: ")
            && flat.contains("the first and last 32 KiB kept]"),
        "{screen}"
    );
}
