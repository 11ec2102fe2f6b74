//! End to end: the side panes of the real `sessionpad` binary in a
//! pseudo-terminal on the local pool, read as a person reads them
//! (issue 11, points 7, 8, 9 and 11): the sessions pane's times, refresh,
//! selection and marks; the pool info's kernel and scrolling; the help at 160
//! columns; the panes and an image preview at 80x24; a download into a folder
//! that does not exist yet. (The pty harness is the one of `tui_pty.rs`; these
//! tests size the pty themselves.)
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod pty;

use pty::*;

const F1: &str = "\x1bOP";
const F2: &str = "\x1bOQ";
const F3: &str = "\x1bOR";
const TAB: &str = "\t";
const ENTER: &str = "\r";
const BACKSPACE: &str = "\x7f";
const PAGE_DOWN: &str = "\x1b[6~";

/// The binary in a pty of `cols` x `rows`, started in `work` with no config
/// file and no endpoint from the environment (the local pool).
fn spawn_sized(data: &Path, work: &Path, cols: u16, rows: u16) -> Pty {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("stty cols {cols} rows {rows} && exec \"$0\""))
        .arg(env!("CARGO_BIN_EXE_sessionpad"))
        .current_dir(work)
        .env("SESSIONPAD_DATA_DIR", data)
        .env("SESSIONPAD_CONFIG", data.join("no-config.toml"))
        .env("TERM", "xterm-256color")
        .env("RUST_LIB_BACKTRACE", "0")
        .env_remove("POOL_MANAGEMENT_ENDPOINT");
    let mut pty = Pty::start(cmd);
    pty.session
        .get_process_mut()
        .set_window_size(cols, rows)
        .expect("set the pty size");
    pty.parser = vt100::Parser::new(rows, cols, 0);
    pty
}

/// Runs `code` in the editor and waits until the screen shows `done`.
fn run_cell(pty: &mut Pty, code: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    pty.send(code);
    pty.send(F5);
    pty.wait_for(what, PLOT_DEADLINE, done)
}

/// The session identifier on the status line.
fn status_identifier(screen: &str) -> String {
    let status = screen.lines().last().unwrap_or_default();
    status
        .split('│')
        .nth(1)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The first screen line that holds `needle`.
fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen.lines().find(|l| l.contains(needle)).unwrap_or("")
}

/// The line of this machine's list (the first list) that shows `id`.
fn local_row<'a>(screen: &'a str, id: &str) -> &'a str {
    screen
        .lines()
        .skip_while(|l| !l.contains("This machine"))
        .take_while(|l| !l.contains("Pool"))
        .find(|l| l.contains(id))
        .unwrap_or("")
}

#[test]
fn the_sessions_pane_shows_real_times_refreshes_and_keeps_the_selection_on_its_identifier() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = spawn_sized(data.path(), work.path(), 160, 48);
    pty.wait_local_ready();
    let screen = run_cell(&mut pty, "x = 1", "the first cell", |s| {
        s.contains("In [1]: x = 1") && s.contains("done in")
    });
    let first = status_identifier(&screen);

    // The pane beside the notebook; a new session from it, the pane still open.
    keys(&mut pty, &[F3]);
    pty.wait_for("the pool's list", CELL_DEADLINE, |s| s.contains("Pool · 1"));
    keys(&mut pty, &["n", ENTER]);
    let screen = pty.wait_for("the switch", CELL_DEADLINE, |s| {
        s.contains("switched to sessionpad-")
    });
    let second = status_identifier(&screen);
    println!("{screen}");
    // Nothing ran there yet: never "in the future", never the opening time.
    let row = local_row(&screen, &second);
    assert!(row.contains("no run yet"), "{row}\n{screen}");
    assert!(!screen.contains("in the future"), "{screen}");

    // With no key pressed, the pane refreshes: the first session's last use
    // (its last execution) ages on screen.
    let screen = pty.wait_for("the first session's last use to age", CELL_DEADLINE, |s| {
        local_row(s, &first).contains(" s ago")
    });
    println!("{screen}");

    // The new session took row 0 of this machine's list; the selection stayed
    // on the first session's identifier (now row 1): Enter switches back to
    // it, which becomes row 0 again, and the selection goes with it.
    let row = local_row(&screen, &first);
    assert!(row.contains(&format!("›  {first}")), "{row}\n{screen}");
    keys(&mut pty, &[ENTER]);
    pty.wait_for("the switch back", CELL_DEADLINE, |s| {
        status_identifier(s) == first && local_row(s, &first).contains('●')
    });
    keys(&mut pty, &["r"]);
    // The current session is marked ●, the selection ›: here one row has both.
    let screen = pty.wait_for("the refreshed list", CELL_DEADLINE, |s| {
        local_row(s, &first).contains(&format!("›● {first}"))
    });
    println!("{screen}");
    let other = local_row(&screen, &second);
    assert!(other.contains(&format!("   {second}")), "{other}\n{screen}");
    // `e` asks about the marked session, by its identifier.
    keys(&mut pty, &["e"]);
    let screen = pty.wait_for("the question", CELL_DEADLINE, |s| s.contains("End session"));
    let question = line_with(&screen, "End session");
    assert!(
        question.contains(&format!("End session {first}?")),
        "{question}\n{screen}"
    );
    keys(&mut pty, &["n"]);
}

#[test]
fn the_pool_info_names_the_kernel_right_scrolls_to_its_last_package_and_shows_the_sandbox() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = spawn_sized(data.path(), work.path(), 100, 30);
    pty.wait_local_ready();
    let code = "import ipykernel, IPython, importlib.metadata as m; \
                names = sorted({d.metadata['Name'].lower() for d in m.distributions()}); \
                print('VERSIONS', ipykernel.__version__, IPython.__version__, 'LAST', names[-1])";
    let screen = run_cell(&mut pty, code, "the versions", |s| s.contains("VERSIONS "));
    let printed: Vec<&str> = line_with(&screen, "VERSIONS ").split_whitespace().collect();
    let (ipykernel, ipython, last) = (printed[1], printed[2], printed[4]);

    keys(&mut pty, &[F3, "i"]);
    // (The isolation report comes first: the packages may start below the
    // first page, and the scrolling below reaches them.)
    let screen = pty.wait_for("the pool info", CELL_DEADLINE, |s| {
        s.contains("Pool info") && s.contains("kernel ")
    });
    println!("{screen}");
    let kernel = line_with(&screen, "kernel ");
    assert!(
        kernel.contains(&format!("ipykernel {ipykernel} (IPython {ipython})")),
        "{kernel}\n{screen}"
    );
    // The sandbox comes first: what it is and who the sessions run as.
    assert!(screen.lines().any(|l| l.contains("sandbox ")), "{screen}");
    assert!(screen.contains("uid"), "{screen}");
    // The list is longer than the popup: it says so, and scrolls to its end.
    assert!(
        !screen.lines().any(|l| l.contains(&format!(" {last} "))),
        "{screen}"
    );
    let indicator = |s: &str| {
        let l = line_with(s, " of ");
        let tail = l.split(" of ").nth(1).unwrap_or("");
        let total = tail.split_whitespace().next().unwrap_or("").to_string();
        (l.contains(&format!("-{total} of {total}")), total)
    };
    assert!(!indicator(&screen).1.is_empty(), "{screen}");
    let mut screen = screen;
    for _ in 0..40 {
        if indicator(&screen).0 {
            break;
        }
        keys(&mut pty, &[PAGE_DOWN]);
        screen = pty.contents();
    }
    println!("{screen}");
    assert!(indicator(&screen).0, "scrolled to the end:\n{screen}");
    assert!(
        screen.lines().any(|l| l.contains(&format!(" {last} "))),
        "the last package, {last}, shows:\n{screen}"
    );
}

/// Reads, from the help's screen, the description that starts like `desc`: its
/// first line from where it starts to the popup's border, then the lines under
/// it at the same column while the keys column beside them is blank.
fn help_description(screen: &str, desc: &str) -> String {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let head: String = desc.split(' ').take(3).collect::<Vec<_>>().join(" ");
    for (i, line) in lines.iter().enumerate() {
        let text: String = line.iter().collect();
        let Some(byte) = text.find(&head) else {
            continue;
        };
        let x = text[..byte].chars().count();
        let piece = |l: &[char]| -> String {
            l.iter()
                .skip(x)
                .take_while(|&&c| c != '│')
                .collect::<String>()
                .trim()
                .to_string()
        };
        // The keys of the row: the text left of the description, back to a
        // run of two spaces.
        let mut keys_start = x.saturating_sub(2);
        while keys_start > 0 && line[keys_start - 1] == ' ' {
            keys_start -= 1;
        }
        while keys_start > 1 && !(line[keys_start - 1] == ' ' && line[keys_start - 2] == ' ') {
            keys_start -= 1;
        }
        let mut out = piece(line);
        for next in &lines[i + 1..] {
            let keys_blank = next.len() > x && next[keys_start..x].iter().all(|c| *c == ' ');
            if !keys_blank || next[x] == ' ' {
                break;
            }
            out.push(' ');
            out.push_str(&piece(next));
        }
        return out;
    }
    String::new()
}

#[test]
fn the_help_reads_whole_at_160_columns() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = spawn_sized(data.path(), work.path(), 160, 48);
    pty.wait_for("the first frame", Duration::from_secs(30), |s| {
        s.contains("2025-10-02-preview")
    });
    keys(&mut pty, &[F1]);
    let screen = pty.wait_for("the help", Duration::from_secs(30), |s| {
        s.contains(" Keys ")
    });
    println!("{screen}");
    for desc in [
        "Download the marked or selected files and folders to the download folder",
        "Cancel the transfer, close the preview, or back to the cell",
        "The pool's isolation, runtime, kernel and packages",
    ] {
        assert_eq!(help_description(&screen, desc), desc, "{screen}");
    }
}

/// Whether some cell of the screen is drawn in red (the bottom band of the test
/// image), as a foreground or background colour.
fn shows_red(pty: &Pty) -> bool {
    let screen = pty.parser.screen();
    let (rows, cols) = screen.size();
    let red =
        |c: vt100::Color| matches!(c, vt100::Color::Rgb(r, g, b) if r > 180 && g < 90 && b < 90);
    (0..rows).any(|y| {
        (0..cols).any(|x| {
            screen
                .cell(y, x)
                .is_some_and(|c| red(c.fgcolor()) || red(c.bgcolor()))
        })
    })
}

#[test]
fn at_80x24_the_panes_leave_the_notebook_readable_and_previews_fit() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = spawn_sized(data.path(), work.path(), 80, 24);
    pty.wait_local_ready();
    // A tall image whose bottom eighth is red: a preview that crops it shows
    // no red.
    let code = "import numpy as np, matplotlib.pyplot as plt; \
                a = np.ones((800, 100, 3)); a[700:, :, 1:] = 0; plt.imsave('tall.png', a); \
                print('MARK-' + 'OUTPUT')";
    run_cell(&mut pty, code, "the cell", |s| has_line(s, "MARK-OUTPUT"));

    // The files pane with the keys (previewing the new image, or listing the
    // folder): the newest output stays in view above it.
    keys(&mut pty, &[F2]);
    let screen = pty.wait_for("the files pane", CELL_DEADLINE, |s| {
        s.contains("Files · /mnt/data") || s.contains("PNG image")
    });
    println!("{screen}");
    assert!(has_line(&screen, "MARK-OUTPUT"), "{screen}");

    // The image's preview fits the pane: its bottom (red) is drawn.
    if !screen.contains("PNG image") {
        keys(&mut pty, &[ENTER]);
    }
    let start = Instant::now();
    while !shows_red(&pty) {
        pty.pump();
        assert!(
            start.elapsed() < CELL_DEADLINE,
            "the bottom of the image never showed:\n{}",
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("{}", pty.contents());

    // The sessions pane too.
    keys(&mut pty, &[F3]);
    let screen = pty.wait_for("the sessions pane", CELL_DEADLINE, |s| {
        s.contains("Sessions · local")
    });
    println!("{screen}");
    assert!(has_line(&screen, "MARK-OUTPUT"), "{screen}");
    // Back to the editor: the pane gives the notebook its rows back.
    keys(&mut pty, &[TAB]);
    pty.wait_for("the notebook alone", CELL_DEADLINE, |s| {
        !s.contains("Sessions · local") && has_line(s, "MARK-OUTPUT")
    });
}

#[test]
fn a_download_into_a_missing_folder_asks_to_create_it_and_writes_only_there() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = spawn_sized(data.path(), work.path(), 100, 30);
    pty.wait_local_ready();
    run_cell(
        &mut pty,
        "open('report.csv', 'w').write('a,b\\n1,2\\n')",
        "the cell",
        |s| s.contains("done in"),
    );
    keys(&mut pty, &[F2]);
    pty.wait_for("the file", CELL_DEADLINE, |s| s.contains("report.csv"));
    keys(&mut pty, &["D"]);
    pty.wait_for("the folder prompt", CELL_DEADLINE, |s| {
        s.contains("Download to folder:")
    });
    // Clear the offered folder, type one that does not exist.
    for _ in 0..4 {
        keys(&mut pty, &[BACKSPACE]);
    }
    pty.send("new/sub");
    keys(&mut pty, &[ENTER]);
    let folder = std::path::absolute(work.path().join("new/sub")).expect("absolute");
    let screen = pty.wait_for("the question", CELL_DEADLINE, |s| {
        s.contains("Create folder")
    });
    println!("{screen}");
    let question = line_with(&screen, "Create folder");
    assert!(
        question.contains(&format!(
            "Create folder {} and download into it? y/N",
            folder.display()
        )),
        "{question}"
    );
    assert!(!folder.exists(), "nothing is created before the answer");
    keys(&mut pty, &["y"]);
    let dest = folder.join("report.csv");
    let start = Instant::now();
    while std::fs::read(&dest).map_or(0, |b| b.len()) < 8 {
        pty.pump();
        assert!(
            start.elapsed() < CELL_DEADLINE,
            "{} did not arrive:\n{}",
            dest.display(),
            pty.contents()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&dest).expect("read"), "a,b\n1,2\n");
    let mut names: Vec<String> = std::fs::read_dir(work.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["new"], "nothing written beside the folder");
}
