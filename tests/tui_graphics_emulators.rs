//! Plots in real terminal emulators (issue 23): Debian's `xterm` as a VT340
//! (sixel) and `kitty` under `Xvfb`, typed into with `xdotool`, read from
//! screenshots by OCR (`tesseract`) and by counting the plot's pixels.
//!
//! In each: a plot (also saved as `p.png`), then text typed in the editor, the
//! next cell and its output, `PageUp` back to the whole plot, the help opened over
//! it and closed (nothing of it left), a resize that hides
//! it and one that brings it back, the files pane's preview of `p.png`, and
//! the plot again once the pane is closed, with no other key, all on screen. Where the terminal got a pixel protocol, the plot is drawn at
//! full resolution each time it is whole on screen; where it did not (kitty
//! before 0.28 has no Unicode placeholders), the log says why.
//!
//! Needs `xvfb xdotool imagemagick tesseract-ocr` and the emulators (`xterm`,
//! `kitty`); `.ci/run` installs them. Without them the test says what is
//! missing and skips. Screenshots stay in
//! `target/tmp/tui_graphics_emulators/<terminal>/` to be looked at.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod pty;
#[path = "common/x11.rs"]
mod x11;

use x11::{Window, Xvfb, plot_blue};

/// The pool may have to build its Python environment first, and importing
/// matplotlib the first time builds its font cache.
const POOL_DEADLINE: Duration = Duration::from_secs(300);
const STEP_DEADLINE: Duration = Duration::from_secs(30);
/// Plot-blue pixels in a plot drawn at full resolution (a sixel plot of 20
/// rows shows about 1,500; half-blocks show next to none).
const DRAWN: usize = 400;

const PLOT: &str = "import matplotlib.pyplot as plt; plt.plot([1, 4, 9, 16]); plt.savefig('p.png'); plt.show(); 42";
const TYPED: &str = "print('typed after the plot')";

/// What the log says the probe chose (`protocol=Sixel`), and the whole line.
fn chosen_protocol(data: &Path) -> Option<(String, String)> {
    let log = std::fs::read_to_string(data.join("logs/sessionpad.log")).ok()?;
    let line = log.lines().find(|l| l.contains("image protocol"))?;
    let protocol = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("protocol="))?
        .to_string();
    Some((protocol, line.to_string()))
}

/// kitty's (major, minor) version in the log's line (`terminal="kitty(0.26.5)"`).
fn kitty_version(line: &str) -> Option<(u32, u32)> {
    let rest = &line[line.find("terminal=\"kitty(")? + "terminal=\"kitty(".len()..];
    let mut parts = rest.split(['.', ')']).map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// The environment sessionpad runs with in the emulator.
fn sessionpad_env(data: &Path) -> Vec<(String, String)> {
    vec![
        ("SESSIONPAD_DATA_DIR".into(), data.display().to_string()),
        (
            "SESSIONPAD_CONFIG".into(),
            data.join("no-config.toml").display().to_string(),
        ),
        ("SESSIONPAD_LOG".into(), "info".into()),
        ("RUST_LIB_BACKTRACE".into(), "0".into()),
    ]
}

/// The emulators this machine has, each with the command that opens it
/// at 100x30 running `program` in `work`.
fn emulators(work: &Path, data: &Path) -> Vec<(&'static str, Command, &'static str, bool)> {
    let program = env!("CARGO_BIN_EXE_sessionpad");
    let mut found = Vec::new();
    if x11::on_path("xterm") {
        let mut cmd = Command::new("xterm");
        cmd.args([
            "-ti",
            "vt340",
            "-xrm",
            "XTerm*numColorRegisters: 256",
            "-fa",
            "DejaVu Sans Mono",
            "-fs",
            "12",
            "-geometry",
            "100x30+0+0",
            "-e",
            program,
        ]);
        cmd.current_dir(work).envs(sessionpad_env(data));
        found.push(("xterm", cmd, "xterm", false));
    }
    if x11::on_path("kitty") {
        let mut cmd = Command::new("kitty");
        cmd.args([
            "--config",
            "NONE",
            "-o",
            "font_size=12",
            "-o",
            "initial_window_width=100c",
            "-o",
            "initial_window_height=30c",
            "-o",
            "remember_window_size=no",
            program,
        ]);
        // No GPU under Xvfb: Mesa's software OpenGL.
        cmd.current_dir(work)
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .envs(sessionpad_env(data));
        found.push(("kitty", cmd, "kitty", true));
    }
    found
}

#[test]
fn plots_in_real_emulators_leave_the_screen_alive() {
    let missing = x11::missing_tools();
    if !missing.is_empty() {
        println!(
            "skipped: {} not installed (apt-get install {} xterm kitty)",
            missing.join(", "),
            x11::PACKAGES
        );
        return;
    }
    let x = Xvfb::start();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tui_graphics_emulators");
    let data = tempfile::tempdir().expect("temp data dir");
    let mut ran = 0;
    for terminal in ["xterm", "kitty"] {
        let work = tempfile::tempdir().expect("temp working dir");
        let Some((name, cmd, class, dark)) = emulators(work.path(), data.path())
            .into_iter()
            .find(|(name, ..)| *name == terminal)
        else {
            println!("skipped {terminal}: not installed (apt-get install {terminal})");
            continue;
        };
        let _ = std::fs::remove_file(data.path().join("logs/sessionpad.log"));
        let window = Window::open(&x, cmd, class, shots.join(name), dark);
        run_in(window, data.path());
        ran += 1;
    }
    if ran == 0 {
        println!("skipped: neither xterm nor kitty is installed (apt-get install xterm kitty)");
    }
    pty::stop_background_pools(data.path());
}

/// The steps of the test in one emulator's window.
fn run_in(mut w: Window<'_>, data: &Path) {
    let name = w.shots.display().to_string();
    // The editor is there at once; the cell typed next runs once the pool is
    // ready (it may still be starting, or building its Python environment).
    w.wait_for("the editor", STEP_DEADLINE, |text, _| text.contains("in1"));
    let (protocol, line) = chosen_protocol(data).expect("the log says which image protocol");
    println!("{name}: {line}");
    // kitty before 0.28 shows Unicode placeholders as empty boxes.
    if let Some(version) = kitty_version(&line) {
        assert!(
            version >= (0, 28) || protocol != "Kitty",
            "kitty graphics chosen on a kitty without placeholders: {line}"
        );
    }
    let pixels = protocol != "Halfblocks";
    let drawn = |image: &image::RgbImage| !pixels || plot_blue(image) >= DRAWN;

    // 1. The plot, then its value.
    w.type_text(PLOT);
    w.key("F5");
    let (path, _, image) = w.wait_for("the plot and Out 1", POOL_DEADLINE, |text, image| {
        text.contains("out142") && drawn(image)
    });
    println!(
        "{name}: the plot, {} plot pixels: {}",
        plot_blue(&image),
        path.display()
    );

    // 2. Text typed after it shows in the editor.
    w.type_text(TYPED);
    // (Its first letter is under the cursor, which OCR misreads.)
    w.wait_for("the typed text", STEP_DEADLINE, |text, _| {
        text.contains("typedaftertheplot") && text.contains("in2")
    });

    // 3. The next cell runs; its output and the next prompt show.
    w.key("F5");
    w.wait_for("the second cell and In 3", STEP_DEADLINE, |text, _| {
        text.matches("typedaftertheplot").count() >= 2 && text.contains("in3")
    });

    // 4. PageUp: the whole plot again, drawn with the protocol, no ghost of
    // the text that was over it.
    w.key("Prior");
    w.wait_for(
        "the whole plot after PageUp",
        STEP_DEADLINE,
        |text, image| text.contains("out142") && drawn(image),
    );

    // The help over the plot, then closed: the plot whole again, none of the
    // help left over it.
    w.key("F1");
    w.wait_for("the help over the plot", STEP_DEADLINE, |text, _| {
        text.contains("celleditor") && text.contains("runthecell")
    });
    w.key("Escape");
    w.wait_for("the plot after the help", STEP_DEADLINE, |text, image| {
        !text.contains("runthecell") && text.contains("out142") && drawn(image)
    });

    // 5. A window too short for the plot, then tall again: the protocol comes
    // back once it fits.
    let (width, height) = {
        let (_, image) = w.shot("before-resize");
        (image.width(), image.height())
    };
    w.resize(width, height / 2);
    w.wait_for(
        "the plot cut by a short window",
        STEP_DEADLINE,
        |_, image| image.height() < height && (!pixels || plot_blue(image) < DRAWN),
    );
    w.resize(width, height);
    w.key("Prior");
    w.wait_for(
        "the plot back in a tall window",
        STEP_DEADLINE,
        |text, image| image.height() == height && text.contains("out142") && drawn(image),
    );

    // 6. The files pane previews p.png as an image.
    w.key("F2");
    w.wait_for("p.png in the files pane", STEP_DEADLINE, |text, _| {
        text.contains("ppng")
    });
    w.key("Return");
    let (path, ..) = w.wait_for("the preview of p.png", STEP_DEADLINE, |text, image| {
        !text.contains("loading") && drawn(image)
    });
    println!("{name}: the preview: {}", path.display());

    // 7. The preview and the files pane closed, with no other key: the plot
    // is drawn again where it was (sixel sends it again; kitty with
    // placeholders keeps the image sent before, whose id the placeholders
    // name: `widgets::image_tests`).
    w.key("Escape");
    w.wait_for("the preview closed", STEP_DEADLINE, |text, _| {
        text.contains("mntdata")
    });
    w.key("F2");
    let (path, _, image) = w.wait_for(
        "the plot after the files pane",
        STEP_DEADLINE,
        |text, image| !text.contains("mntdata") && text.contains("out142") && drawn(image),
    );
    println!(
        "{name}: the plot after the files pane, {} plot pixels: {}",
        plot_blue(&image),
        path.display()
    );
    w.key("ctrl+q");
}
