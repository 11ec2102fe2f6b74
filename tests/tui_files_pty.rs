//! End to end: the files pane of the real `sessionpad` binary in a 100x30
//! pseudo-terminal on the local pool: a cell writes a CSV and a PNG, the
//! pane marks both and previews the CSV's rows, both download with the exact
//! bytes into a typed folder, an uploaded file is read by a cell, and a delete
//! asks first; two files marked in the local file picker (`U`) upload together.
//! (The pty harness is the one of `tui_pty.rs`.)
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::time::{Duration, Instant};

use expectrl::WaitStatus;

mod pty;

use pty::*;

const F2: &str = "\x1bOQ";
const TAB: &str = "\t";
const ENTER: &str = "\r";
const BACKSPACE: &str = "\x7f";

fn wait_file(pty: &mut Pty, path: &Path, len: usize) -> Vec<u8> {
    let start = Instant::now();
    loop {
        pty.pump();
        if let Ok(bytes) = std::fs::read(path)
            && bytes.len() >= len
        {
            return bytes;
        }
        assert!(
            start.elapsed() < CELL_DEADLINE,
            "{} did not arrive; screen:\n{}",
            path.display(),
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

const CSV: &str = "region,units\nnorth,12\nsouth,7\n";

#[test]
fn a_cells_files_are_marked_previewed_downloaded_and_uploads_reach_the_session() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();

    // The pane opens beside the notebook (100 columns); Tab gives the keys back.
    keys(&mut pty, &[F2]);
    pty.wait_for("the files pane", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data")
    });
    keys(&mut pty, &[TAB]);

    // The cell writes a CSV and a PNG in the session's folder and says the PNG's size.
    pty.send(
        "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; \
         open('report.csv', 'w').write('region,units\\nnorth,12\\nsouth,7\\n'); \
         plt.plot([1, 3, 2]); plt.savefig('chart.png'); \
         print('png', len(open('chart.png', 'rb').read()))",
    );
    pty.send(F5);
    let screen = pty.wait_for("the radar's marks", PLOT_DEADLINE, |s| {
        s.contains("+ chart.png") && s.contains("+ report.csv")
    });
    println!("{screen}");
    let png_len: usize = screen
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("png "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the PNG's size is printed:\n{screen}"));

    // Focus the pane, select the CSV (after chart.png) and preview it.
    keys(&mut pty, &[F2, "j", ENTER]);
    let screen = pty.wait_for("the CSV's rows", CELL_DEADLINE, |s| {
        s.contains("north") && s.contains("south") && s.contains("region")
    });
    println!("{screen}");

    // Mark both, download them to a folder typed at the prompt.
    std::fs::create_dir(work.path().join("dl")).expect("dl folder");
    keys(&mut pty, &["k", " ", " ", "D", BACKSPACE]);
    pty.send("dl");
    keys(&mut pty, &[ENTER]);
    let csv = wait_file(&mut pty, &work.path().join("dl/report.csv"), CSV.len());
    assert_eq!(String::from_utf8_lossy(&csv), CSV);
    let png = wait_file(&mut pty, &work.path().join("dl/chart.png"), png_len);
    assert_eq!(png.len(), png_len);
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));

    // Downloading again asks before replacing; `n` keeps the file.
    keys(&mut pty, &["p"]);
    pty.wait_for("the preview", CELL_DEADLINE, |s| s.contains("north"));
    keys(&mut pty, &["D"]);
    keys(&mut pty, &[ENTER]);
    pty.wait_for("the question", CELL_DEADLINE, |s| s.contains("Replace?"));
    keys(&mut pty, &["n"]);
    pty.wait_for("the answer", CELL_DEADLINE, |s| {
        s.contains("existing files kept")
    });

    // Upload a local file through the prompt, then read it in a cell.
    std::fs::write(work.path().join("upload-me.txt"), "hello from upload\n").expect("write");
    keys(&mut pty, &["u"]);
    pty.send("upload-me");
    keys(&mut pty, &[TAB, ENTER]);
    pty.wait_for("the uploaded file listed", CELL_DEADLINE, |s| {
        s.contains("upload-me.txt")
    });
    keys(&mut pty, &[TAB]);
    pty.send("print(open('upload-me.txt').read().upper())");
    pty.send(F5);
    pty.wait_for("the cell reading the upload", CELL_DEADLINE, |s| {
        s.contains("HELLO FROM UPLOAD")
    });

    // Delete asks first.
    keys(&mut pty, &[F2]);
    let screen = pty.contents();
    let row = screen
        .lines()
        .position(|l| l.contains("upload-me.txt"))
        .expect("listed");
    let _ = row;
    // The selection is on chart.png (the first file); upload-me.txt is last.
    keys(&mut pty, &["j", "j", "x"]);
    pty.wait_for("the delete question", CELL_DEADLINE, |s| {
        s.contains("Delete upload-me.txt")
    });
    keys(&mut pty, &["y"]);
    pty.wait_for("the file gone", CELL_DEADLINE, |s| {
        !s.contains("upload-me.txt │") && s.contains("deleted upload-me.txt")
    });

    keys(&mut pty, &[TAB]);
    pty.focus_notebook();
    pty.send("q");
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );
}

#[test]
fn files_marked_in_the_picker_upload_together_and_a_cell_reads_them() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    std::fs::write(work.path().join("alpha.txt"), "first from the picker\n").expect("write");
    std::fs::write(work.path().join("beta.txt"), "second from the picker\n").expect("write");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();

    keys(&mut pty, &[F2]);
    pty.wait_for("the files pane", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data")
    });
    // The picker opens in the working directory: ../, alpha.txt, beta.txt.
    keys(&mut pty, &["U"]);
    let screen = pty.wait_for("the picker", CELL_DEADLINE, |s| {
        s.contains("Upload · ") && s.contains("alpha.txt") && s.contains("beta.txt")
    });
    println!("{screen}");
    // Space marks and moves down: both marked.
    keys(&mut pty, &["j", " ", " "]);
    let screen = pty.wait_for("two marks", CELL_DEADLINE, |s| {
        s.contains("[x] alpha.txt") && s.contains("[x] beta.txt") && s.contains("2 marked")
    });
    println!("{screen}");
    keys(&mut pty, &[ENTER]);
    let screen = pty.wait_for("both uploaded and listed", CELL_DEADLINE, |s| {
        s.contains("uploaded 2 files")
            && !s.contains("Upload · ")
            && s.contains("alpha.txt")
            && s.contains("beta.txt")
    });
    println!("{screen}");

    keys(&mut pty, &[TAB]);
    pty.send(
        "print(open('/mnt/data/alpha.txt').read().upper() + \
         open('/mnt/data/beta.txt').read().upper())",
    );
    pty.send(F5);
    let screen = pty.wait_for("the cell reading both", CELL_DEADLINE, |s| {
        s.contains("FIRST FROM THE PICKER") && s.contains("SECOND FROM THE PICKER")
    });
    println!("{screen}");

    pty.focus_notebook();
    pty.send("q");
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );
}

const F3: &str = "\x1bOR";

/// The identifier on the status line (its second field).
fn status_identifier(screen: &str) -> String {
    let status = screen.lines().last().unwrap_or_default();
    status
        .split('│')
        .nth(1)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn switching_sessions_keeps_notebooks_apart_and_an_ended_session_leaves_the_pool() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send("a = 'first'");
    pty.send(F5);
    let screen = pty.wait_for("the first cell", CELL_DEADLINE, |s| {
        s.contains("In [1]: a = 'first'") && s.contains("done in")
    });
    let first = status_identifier(&screen);
    assert!(first.starts_with("sp-"), "{screen}");

    // A new session from the pane: a random identifier, an empty notebook.
    keys(&mut pty, &[F3]);
    pty.wait_for("the sessions pane", CELL_DEADLINE, |s| {
        s.contains("Sessions · local")
    });
    keys(&mut pty, &["n", ENTER]);
    let screen = pty.wait_for("the switch", CELL_DEADLINE, |s| {
        s.contains("switched to sessionpad-")
    });
    let second = status_identifier(&screen);
    assert!(second.starts_with("sessionpad-"), "{screen}");
    assert!(
        !screen.contains("a = 'first'"),
        "the other notebook:\n{screen}"
    );
    keys(&mut pty, &[TAB]);
    pty.send("print('a' in globals(), 'second')");
    pty.send(F5);
    pty.wait_for("state kept apart", CELL_DEADLINE, |s| {
        s.contains("False second") && s.contains("In [1]: print(")
    });

    // Back to the first: its notebook (and its session's state) come back.
    keys(&mut pty, &[F3]);
    pty.wait_for("both listed", CELL_DEADLINE, |s| {
        s.contains(&first) && s.contains(&second)
    });
    // This machine's list is most recent first: the second, then the first.
    keys(&mut pty, &["j", ENTER]);
    pty.wait_for("the first notebook", CELL_DEADLINE, |s| {
        s.contains("In [1]: a = 'first'") && !s.contains("False second")
    });
    keys(&mut pty, &[TAB]);
    pty.send("print(a)");
    pty.send(F5);
    pty.wait_for("a from before", CELL_DEADLINE, |s| {
        s.contains("In [2]: print(a)")
    });
    let screen = pty.wait_for("first printed", CELL_DEADLINE, |s| {
        s.lines()
            .any(|l| l.trim_end() == "first" || l.starts_with("first "))
    });
    assert_eq!(status_identifier(&screen), first);

    // End the second from the pool's list: the refreshed list no longer has it.
    keys(&mut pty, &[F3]);
    let screen = pty.wait_for("the pool's list", CELL_DEADLINE, |s| s.contains("Pool · 2"));
    println!("{screen}");
    // Rows: this machine's two, then the pool's (sorted as the pool lists them).
    let pool_rows: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("Pool · 2"))
        .skip(2)
        .take(2)
        .collect();
    let second_row = pool_rows
        .iter()
        .position(|l| l.contains(&second))
        .expect("the second session in the pool's list");
    for _ in 0..(2 + second_row) {
        keys(&mut pty, &["j"]);
    }
    keys(&mut pty, &["e"]);
    pty.wait_for("the question", CELL_DEADLINE, |s| s.contains("End session"));
    keys(&mut pty, &["y"]);
    let screen = pty.wait_for("the pool without it", CELL_DEADLINE, |s| {
        s.contains("Pool · 1") && s.contains(&format!("session {second} ended"))
    });
    println!("{screen}");

    keys(&mut pty, &[TAB]);
    pty.focus_notebook();
    pty.send("q");
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );
}
