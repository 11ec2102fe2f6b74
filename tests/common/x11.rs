//! Real terminal emulators under a virtual X server, for the graphics tests
//! (issue 23): Debian's `Xvfb`, `xterm` and `kitty`, driven with `xdotool`,
//! read from screenshots (`import` of `ImageMagick`) by OCR (`tesseract`) and by
//! counting pixels. Nothing here leaves the machine: the X server listens on
//! a Unix socket only (`-nolisten tcp`).
//!
//! Every tool is looked up first; a test without them says which are missing
//! and how to install them, and skips.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use image::RgbImage;

/// The Debian packages that hold the tools, for the skip message.
pub const PACKAGES: &str = "xvfb xdotool imagemagick tesseract-ocr";

/// The tools of [`PACKAGES`] that are not on `PATH`.
pub fn missing_tools() -> Vec<&'static str> {
    ["Xvfb", "xdotool", "import", "convert", "tesseract"]
        .into_iter()
        .filter(|tool| !on_path(tool))
        .collect()
}

/// Whether `program` is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// A virtual X server, ended when dropped.
pub struct Xvfb {
    child: Child,
    /// `:N`, for `DISPLAY`.
    pub display: String,
}

impl Xvfb {
    /// Starts one on a display number it picks itself (`-displayfd`), with a
    /// 1280x800 screen of 24-bit colour.
    pub fn start() -> Self {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("Xvfb's stdout"))
            .read_line(&mut line)
            .expect("Xvfb says its display");
        let display = format!(":{}", line.trim());
        assert!(line.trim().parse::<u32>().is_ok(), "Xvfb said {line:?}");
        Self { child, display }
    }

    /// A command with this display in its environment.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("DISPLAY", &self.display);
        cmd
    }

    /// Runs `xdotool args`, returning its standard output.
    pub fn xdotool(&self, args: &[&str]) -> String {
        let out = self
            .command("xdotool")
            .args(args)
            .output()
            .expect("run xdotool");
        assert!(
            out.status.success(),
            "xdotool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A terminal emulator's window on an [`Xvfb`], with the program it runs.
pub struct Window<'x> {
    pub x: &'x Xvfb,
    child: Child,
    /// The X window id.
    pub id: String,
    /// Where screenshots are kept, for a person to look at.
    pub shots: PathBuf,
    /// Whether the terminal draws light text on a dark background.
    pub dark: bool,
    taken: usize,
}

impl<'x> Window<'x> {
    /// Starts `cmd` (a terminal emulator given its program) and waits for its
    /// window of `class`, then gives it the keyboard focus.
    pub fn open(x: &'x Xvfb, mut cmd: Command, class: &str, shots: PathBuf, dark: bool) -> Self {
        std::fs::create_dir_all(&shots).expect("the screenshots' folder");
        let child = cmd
            .env("DISPLAY", &x.display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the terminal emulator");
        let start = Instant::now();
        let id = loop {
            let out = x
                .command("xdotool")
                .args(["search", "--onlyvisible", "--class", class])
                .output()
                .expect("run xdotool");
            let found = String::from_utf8_lossy(&out.stdout);
            if let Some(id) = found.lines().next() {
                break id.to_string();
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no {class} window appeared"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        x.xdotool(&["windowfocus", &id]);
        Self {
            x,
            child,
            id,
            shots,
            dark,
            taken: 0,
        }
    }

    /// Types `text` as keystrokes, to the focused window (xterm ignores the
    /// synthetic events `xdotool --window` sends).
    pub fn type_text(&self, text: &str) {
        self.x.xdotool(&["type", "--delay", "12", "--", text]);
    }

    /// Presses `key` (an X keysym name: `F5`, `Prior`, `ctrl+q`).
    pub fn key(&self, key: &str) {
        self.x.xdotool(&["key", key]);
    }

    /// Resizes the window to `width` x `height` pixels.
    pub fn resize(&self, width: u32, height: u32) {
        self.x.xdotool(&[
            "windowsize",
            &self.id,
            &width.to_string(),
            &height.to_string(),
        ]);
    }

    /// A screenshot of the window, kept as `NN-name.png` in [`Window::shots`].
    pub fn shot(&mut self, name: &str) -> (PathBuf, RgbImage) {
        self.taken += 1;
        let path = self.shots.join(format!("{:02}-{name}.png", self.taken));
        let status = self
            .x
            .command("import")
            .args(["-window", &self.id])
            .arg(&path)
            .status()
            .expect("run import");
        assert!(status.success(), "import failed");
        let image = image::open(&path).expect("read the screenshot").to_rgb8();
        (path, image)
    }

    /// The text OCR reads in a screenshot, lower-cased with everything but
    /// letters and digits removed (OCR's spaces and punctuation vary); the
    /// screenshot is made grey, twice as large, dark on light, and cut to
    /// black and white first, which tesseract reads best.
    pub fn ocr(&self, screenshot: &Path) -> String {
        let prepared = screenshot.with_extension("ocr.png");
        let mut convert = Command::new("convert");
        convert
            .arg(screenshot)
            .args(["-colorspace", "Gray", "-resize", "200%"]);
        if self.dark {
            convert.arg("-negate");
        }
        let status = convert
            .args(["-threshold", "85%"])
            .arg(&prepared)
            .status()
            .expect("run convert");
        assert!(status.success(), "convert failed");
        let out = Command::new("tesseract")
            .arg(&prepared)
            .args(["-", "--psm", "6"])
            .stderr(Stdio::null())
            .output()
            .expect("run tesseract");
        normalize(&String::from_utf8_lossy(&out.stdout))
    }

    /// Takes screenshots until `pred` holds on one (given its OCR text and its
    /// pixels); panics with the last screenshot's path and text when
    /// `deadline` passes.
    pub fn wait_for(
        &mut self,
        what: &str,
        deadline: Duration,
        pred: impl Fn(&str, &RgbImage) -> bool,
    ) -> (PathBuf, String, RgbImage) {
        let start = Instant::now();
        let name: String = what
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        loop {
            let (path, image) = self.shot(&name);
            let text = self.ocr(&path);
            if pred(&text, &image) {
                return (path, text, image);
            }
            assert!(
                start.elapsed() <= deadline,
                "timed out after {deadline:?} waiting for {what}; last screenshot {} reads {text:?}",
                path.display()
            );
            // Only the last screenshot of a wait is worth keeping.
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(path.with_extension("ocr.png"));
            self.taken -= 1;
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` lower-cased, with only its letters and digits.
pub fn normalize(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Pixels of matplotlib's first line colour (C0, #1f77b4) drawn at full
/// resolution: saturated blue. Half-blocks average each block with the white
/// around the line, so a plot drawn with them has hardly any.
pub fn plot_blue(image: &RgbImage) -> usize {
    image
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0;
            b > 150 && r < 90 && g > 80 && g < 160
        })
        .count()
}
