//! End to end (issue 27, items 13 to 15): the files pane of the real
//! `sessionpad` binary in a 100x30 pseudo-terminal on the local pool, with
//! names a cell writes itself: an OSC title sequence, a tab, a line break, a
//! hidden name and a `reports/` subfolder. They are shown escaped as
//! `ls -b` shows them (never raw on the terminal), marked new (the subfolder
//! too, and the file inside it once opened, marks kept after browsing), named
//! on a `files:` line under the cell, and each downloads under a safe local
//! name, the rename said. A local path with spaces uploads through the `u`
//! prompt (Tab quotes it), and in the `U` picker a folder opens on its first
//! entry, so Space and Enter upload the marked file.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::time::{Duration, Instant};

use expectrl::WaitStatus;

mod common;
mod nbformat;
mod pty;

use pty::*;

const F2: &str = "\x1bOQ";
const TAB: &str = "\t";
const ENTER: &str = "\r";
const BACKSPACE: &str = "\x7f";

fn wait_file(pty: &mut Pty, path: &Path) -> Vec<u8> {
    let start = Instant::now();
    loop {
        pty.pump();
        if let Ok(bytes) = std::fs::read(path)
            && !bytes.is_empty()
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

/// Moves the files pane's selection to the row showing `text` (from the top).
fn select_row(pty: &mut Pty, text: &str) {
    keys(pty, &["k"; 8]);
    let screen = pty.contents();
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows
        .iter()
        .position(|l| l.contains("│  Name"))
        .expect("the pane's header");
    // The pane is the right 40 % of the 100 columns.
    let at = rows
        .iter()
        .skip(top + 1)
        .position(|l| l.chars().skip(60).collect::<String>().contains(text))
        .unwrap_or_else(|| panic!("{text} listed:\n{screen}"));
    for _ in 0..at {
        keys(pty, &["j"]);
    }
}

const CELL: &str = "import os; os.makedirs('reports', exist_ok=True); \
    open('reports/describe.csv', 'w').write('a,b\\n1,2\\n'); \
    open('evil\\x1b]0;pwned\\x07title.txt', 'w').write('evil'); \
    open('tab\\tname.txt', 'w').write('tab'); \
    open('line\\nbreak.txt', 'w').write('line'); \
    open('.hidden', 'w').write('hidden'); print('written')";

#[test]
fn hostile_names_show_escaped_are_marked_and_download_under_safe_names_said() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    keys(&mut pty, &[F2]);
    pty.wait_for("the files pane", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data")
    });
    keys(&mut pty, &[TAB]);
    pty.send(CELL);
    pty.send(F5);
    let screen = pty.wait_for("the escaped names, marked", CELL_DEADLINE, |s| {
        s.contains("done in")
            && s.contains("+ reports/")
            && s.contains("+ tab\\tname.txt")
            && s.contains("+ line\\nbreak.txt")
            && s.contains("+ evil\\033]0;")
    });
    println!("{screen}");
    // The cell's own line names what it wrote, the subfolder's file included.
    pty.wait_for("the cell's files line", CELL_DEADLINE, |s| {
        s.contains("files: wrote") && s.contains("reports/describe.csv")
    });
    let raw = String::from_utf8_lossy(&pty.raw).into_owned();
    assert!(
        !raw.contains("\x1b]0;pwned"),
        "the title sequence reached the terminal"
    );

    // Into the new folder: the file inside is marked; back out: still marked.
    keys(&mut pty, &[F2]);
    select_row(&mut pty, "reports/");
    keys(&mut pty, &[ENTER]);
    pty.wait_for("the file inside marked", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data/reports") && s.contains("+ describe.csv")
    });
    keys(&mut pty, &[BACKSPACE]);
    pty.wait_for("the marks kept", CELL_DEADLINE, |s| {
        s.contains("+ reports/") && s.contains("+ tab\\tname.txt")
    });

    // Each hostile name downloads under a safe name, the rename said.
    select_row(&mut pty, "evil\\033");
    keys(&mut pty, &["d"]);
    let evil = wait_file(&mut pty, &work.path().join("evil_]0;pwned_title.txt"));
    assert_eq!(evil, b"evil");
    pty.wait_for("the rename said", CELL_DEADLINE, |s| {
        s.contains("saved evil\\033]0;pwned\\007title.txt as ./evil_]0;pwned_title.txt")
    });
    select_row(&mut pty, "tab\\tname.txt");
    keys(&mut pty, &["d"]);
    assert_eq!(
        wait_file(&mut pty, &work.path().join("tab_name.txt")),
        b"tab"
    );
    pty.wait_for("the rename said", CELL_DEADLINE, |s| {
        s.contains("saved tab\\tname.txt as ./tab_name.txt")
    });
    select_row(&mut pty, "line\\nbreak.txt");
    keys(&mut pty, &["d"]);
    assert_eq!(
        wait_file(&mut pty, &work.path().join("line_break.txt")),
        b"line"
    );
    let names: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.chars().any(char::is_control)),
        "{names:?}"
    );

    keys(&mut pty, &[TAB]);
    pty.focus_notebook();
    pty.send("q");
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );

    // The files line is kept with the cell: exported, it is a display line
    // nbformat accepts.
    let exported = work.path().join("names.ipynb");
    common::stdout_ok(
        common::sessionpad_command(data.path())
            .args(["export", "-o"])
            .arg(&exported)
            .current_dir(work.path()),
    );
    nbformat::validate(&exported);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    let line = doc["cells"][0]["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["output_type"] == "display_data")
        .map(|o| o["data"]["text/plain"].to_string())
        .unwrap_or_default();
    assert!(
        line.contains("files: wrote") && line.contains("reports/describe.csv"),
        "{doc}"
    );
    assert!(!line.contains("\\u001b"), "escaped, never raw: {line}");
}

#[test]
fn a_path_with_spaces_uploads_and_the_picker_opens_a_folder_on_its_first_file() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    std::fs::write(work.path().join("my notes file.txt"), "spaced out\n").expect("write");
    std::fs::write(work.path().join("second copy.txt"), "2\n").expect("write");
    std::fs::write(work.path().join("third copy.txt"), "3\n").expect("write");
    std::fs::create_dir(work.path().join("sub")).expect("sub");
    std::fs::write(work.path().join("sub/alpha.txt"), "alpha\n").expect("write");
    std::fs::write(work.path().join("sub/beta.txt"), "beta\n").expect("write");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    keys(&mut pty, &[F2]);
    pty.wait_for("the files pane", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data")
    });

    // Tab completes the spaced name quoted; Enter uploads it.
    keys(&mut pty, &["u"]);
    pty.send("my");
    keys(&mut pty, &[TAB]);
    pty.wait_for("the quoted completion", CELL_DEADLINE, |s| {
        s.contains("'my notes file.txt'")
    });
    keys(&mut pty, &[ENTER]);
    pty.wait_for("the upload", CELL_DEADLINE, |s| {
        s.contains("uploaded my notes file.txt")
    });
    // Typed with a backslash before the space, and in double quotes.
    keys(&mut pty, &["u"]);
    pty.send("second\\ copy.txt \"third copy.txt\"");
    keys(&mut pty, &[ENTER]);
    pty.wait_for("both uploaded", CELL_DEADLINE, |s| {
        s.contains("uploaded 2 files") && s.contains("second copy.txt")
    });

    // The picker: into sub/, the cursor on its first file; Space marks it,
    // Enter uploads the marked file.
    keys(&mut pty, &["U"]);
    pty.wait_for("the picker", CELL_DEADLINE, |s| {
        s.contains("Upload · ") && s.contains("sub/")
    });
    keys(&mut pty, &["j", ENTER]);
    pty.wait_for("inside sub", CELL_DEADLINE, |s| s.contains("alpha.txt"));
    keys(&mut pty, &[" "]);
    pty.wait_for("one mark", CELL_DEADLINE, |s| s.contains("[x] alpha.txt"));
    keys(&mut pty, &[ENTER]);
    pty.wait_for("alpha uploaded", CELL_DEADLINE, |s| {
        s.contains("uploaded alpha.txt") && !s.contains("Upload · ")
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
fn a_folder_downloads_with_everything_in_it_and_deletes_after_a_yes() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(
        "import os; os.makedirs('reports/deep', exist_ok=True); \
         open('reports/describe.csv', 'w').write('a,b\\n'); \
         open('reports/deep/x\\ty.txt', 'w').write('deep'); print('made')",
    );
    pty.send(F5);
    pty.wait_for("the cell", CELL_DEADLINE, |s| s.contains("done in"));
    keys(&mut pty, &[F2]);
    pty.wait_for("the folder listed", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data") && s.contains("reports/")
    });
    select_row(&mut pty, "reports/");
    keys(&mut pty, &["d"]);
    let csv = wait_file(&mut pty, &work.path().join("reports/describe.csv"));
    assert_eq!(csv, b"a,b\n");
    let deep = wait_file(&mut pty, &work.path().join("reports/deep/x_y.txt"));
    assert_eq!(deep, b"deep");

    keys(&mut pty, &["x"]);
    pty.wait_for("the question", CELL_DEADLINE, |s| {
        s.contains("Delete reports/ (2 files) with everything in it")
    });
    keys(&mut pty, &["y"]);
    pty.wait_for("the folder gone", CELL_DEADLINE, |s| {
        s.contains("deleted reports/ (2 files)") && s.contains("(no files)")
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
