//! The non-interactive commands as a user runs them: the real binary against a
//! real `sessionpad serve` (real kernels).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::serve;

const TOKEN: &str = "cli-test-token";

struct Served {
    child: std::process::Child,
    endpoint: String,
    data: tempfile::TempDir,
}

impl Served {
    fn start() -> Self {
        let data = tempfile::tempdir().unwrap();
        let (child, endpoint) = serve(data.path(), TOKEN);
        Self {
            child,
            endpoint,
            data,
        }
    }

    /// `sessionpad serve --container-type shell`.
    fn start_shell() -> Self {
        let data = tempfile::tempdir().unwrap();
        let mut cmd = common::serve_command(data.path(), TOKEN, 1);
        cmd.args(["--container-type", "shell"])
            .stderr(std::process::Stdio::null());
        let (child, endpoint) = common::spawn_serve(cmd);
        Self {
            child,
            endpoint,
            data,
        }
    }

    /// `args` after the flags that point at this pool and session `identifier`.
    fn with_pool<'a>(&'a self, identifier: &'a str, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec![
            "--endpoint",
            &self.endpoint,
            "--token",
            TOKEN,
            "--identifier",
            identifier,
        ];
        all.extend_from_slice(args);
        all
    }

    /// `sessionpad ARGS` pointed at this pool with flags.
    fn run(&self, identifier: &str, args: &[&str]) -> Output {
        self.bare(&self.with_pool(identifier, args), Path::new("."))
    }

    /// [`Served::run`], which must succeed: its stdout.
    fn run_ok(&self, identifier: &str, args: &[&str]) -> String {
        self.bare_ok(&self.with_pool(identifier, args), Path::new("."))
    }

    /// `sessionpad ARGS` in `cwd` with no pool flags, sharing the serve's
    /// data directory.
    fn bare_command(&self, args: &[&str], cwd: &Path) -> Command {
        let mut cmd = common::sessionpad_command(self.data.path());
        cmd.args(args).current_dir(cwd);
        cmd
    }

    /// `sessionpad ARGS` with no pool flags, sharing the serve's data directory.
    fn bare(&self, args: &[&str], cwd: &Path) -> Output {
        self.bare_command(args, cwd).output().unwrap()
    }

    /// [`Served::bare`], which must succeed: its stdout.
    fn bare_ok(&self, args: &[&str], cwd: &Path) -> String {
        common::stdout_ok(&mut self.bare_command(args, cwd))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn exec_keeps_state_across_calls_and_sets_exit_codes() {
    let pool = Served::start();
    let id = "cli-exec-1";
    pool.run_ok(id, &["exec", "-c", "x = 6*7"]);
    let printed = pool.run(id, &["exec", "-c", "print(x)"]);
    assert_eq!(text(&printed.stdout), "42\n");
    let value = pool.run(id, &["exec", "-c", "x"]);
    assert_eq!(text(&value.stdout), "42\n");
    let failed = pool.run(
        id,
        &[
            "exec",
            "-c",
            "import sys; print('out'); print('err', file=sys.stderr); 1/0",
        ],
    );
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(text(&failed.stdout), "out\n");
    assert!(
        text(&failed.stderr).starts_with("err\n"),
        "{}",
        text(&failed.stderr)
    );
    assert!(text(&failed.stderr).contains("ZeroDivisionError"));
    let usage = pool.run(id, &["exec"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(text(&usage.stderr).contains("-c CODE"));
}

#[test]
fn exec_on_a_shell_pool_runs_commands_and_exits_with_their_code() {
    let pool = Served::start_shell();
    let id = "cli-shell-1";
    let shell = |args: &[&str]| {
        let mut all = vec!["--container-type", "shell"];
        all.extend_from_slice(args);
        pool.run(id, &all)
    };
    let ok = shell(&["exec", "-c", "echo hi > f.txt; cat f.txt"]);
    assert_eq!(
        (ok.status.code(), text(&ok.stdout)),
        (Some(0), "hi\n".to_string()),
        "{}",
        text(&ok.stderr)
    );
    // useEmptyKernel is about a kernel; a Shell pool's commands run without
    // one, so asking for it is refused rather than ignored.
    let refused = shell(&["--empty-kernel", "exec", "-c", "echo never"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("--empty-kernel (useEmptyKernel) is for code"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(text(&refused.stdout), "");
    let failed = shell(&["exec", "-c", "cat f.txt; echo bad >&2; exit 7"]);
    assert_eq!(failed.status.code(), Some(7));
    assert_eq!(text(&failed.stdout), "hi\n");
    assert_eq!(text(&failed.stderr), "bad\n");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "b\na\n").unwrap();
    let sorted = shell(&[
        "--json",
        "exec",
        "-c",
        "sort",
        "--stdin-file",
        input.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&sorted.stdout).unwrap();
    assert_eq!(
        (v["exit_code"].as_i64(), v["stdout"].as_str()),
        (Some(0), Some("a\nb\n"))
    );
    // --stdin-file is refused where the pool takes code (here: as told,
    // whatever the pool says).
    let python = pool.run(
        id,
        &[
            "--container-type",
            "python",
            "exec",
            "-c",
            "1",
            "--stdin-file",
            "x",
        ],
    );
    assert_eq!(python.status.code(), Some(2));
    assert!(text(&python.stderr).contains("--container-type shell"));
}

/// A `sessionpad serve` says what it runs in its metadata: pointed at a Shell
/// serve with no `--container-type` (nor a profile's), `exec` learns it and
/// runs the command instead of sending code the pool refuses.
#[test]
fn exec_learns_a_local_shell_pools_container_type() {
    let pool = Served::start_shell();
    let out = pool.run("cli-shell-2", &["exec", "-c", "echo learned; exit 3"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(3), "learned\n".to_string()),
        "{}",
        text(&out.stderr)
    );
    // What is given wins over what the pool says.
    let told = pool.run(
        "cli-shell-2",
        &["--container-type", "python", "exec", "-c", "1"],
    );
    assert_ne!(told.status.code(), Some(0), "{}", text(&told.stdout));
}

#[test]
fn exec_reads_files_and_stdin_and_speaks_json() {
    let pool = Served::start();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(&script, "y = [1, 2]\ny").unwrap();
    let out = pool.run_ok("cli-exec-2", &["--json", "exec", script.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "Succeeded");
    assert_eq!(v["result"], serde_json::json!([1, 2]));
    assert_eq!(v["identifier"], "cli-exec-2");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args([
            "--endpoint",
            &pool.endpoint,
            "--token",
            TOKEN,
            "--identifier",
            "cli-exec-2",
            "exec",
            "-",
        ])
        .env("SESSIONPAD_CONFIG", dir.path().join("none.toml"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"print(sum(y))").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stdout), "3\n");
}

#[test]
fn exec_saves_images_without_overwriting() {
    let pool = Served::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("image-1.png"), b"keep me").unwrap();
    let plot = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()";
    pool.run_ok(
        "cli-img",
        &[
            "exec",
            "-c",
            plot,
            "--save-images",
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        std::fs::read(dir.path().join("image-1.png")).unwrap(),
        b"keep me"
    );
    let png = std::fs::read(dir.path().join("image-2.png")).unwrap();
    assert!(image::load_from_memory(&png).is_ok());
}

#[test]
fn exec_shows_results_as_python_and_every_figure_next_to_a_value() {
    let pool = Served::start();
    let id = "cli-python";
    for (code, shown) in [
        ("{'a': 1, 'b': None}", "{'a': 1, 'b': None}\n"),
        ("(1, 2.5, 'x')", "(1, 2.5, 'x')\n"),
        ("'nan'", "'nan'\n"),
        ("float('nan')", "nan\n"),
        ("[True, None]", "[True, None]\n"),
    ] {
        let out = pool.run_ok(id, &["exec", "-c", code]);
        assert_eq!(out, shown, "{code}");
    }
    // An older api-version has no Jupyter format: the JSON, read as Python.
    let out = pool.run(
        id,
        &[
            "--api-version",
            "2024-10-02-preview",
            "exec",
            "-c",
            "{'a': 1, 'b': None}",
        ],
    );
    assert_eq!(
        text(&out.stdout),
        "{'a': 1, 'b': None}\n",
        "{}",
        text(&out.stderr)
    );
    // A figure shown, then a value: both come back.
    let dir = tempfile::tempdir().unwrap();
    let plot = "import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show(); 5";
    let out = pool.run_ok(
        id,
        &[
            "exec",
            "-c",
            plot,
            "--save-images",
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(out, "5\n");
    let png = std::fs::read(dir.path().join("image-1.png")).expect("the figure is saved");
    assert!(image::load_from_memory(&png).is_ok());
    let out = pool.run(id, &["--json", "exec", "-c", "plt.plot([1, 4, 9])"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["result_text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[<matplotlib.lines.Line2D")),
        "{v}"
    );
    assert_eq!(v["images"].as_array().map(Vec::len), Some(1), "{v}");
}

#[test]
fn without_an_endpoint_commands_find_the_running_serve() {
    let pool = Served::start();
    let cwd = tempfile::tempdir().unwrap();
    // No --endpoint, no --identifier: the serve's discovery file and this
    // directory's stable identifier, so state carries across calls.
    pool.bare_ok(&["exec", "-c", "z = 'kept'"], cwd.path());
    let get = pool.bare(&["exec", "-c", "z"], cwd.path());
    assert_eq!(text(&get.stdout), "'kept'\n", "{}", text(&get.stderr));
    let other = tempfile::tempdir().unwrap();
    let elsewhere = pool.bare(&["exec", "-c", "z"], other.path());
    assert_eq!(
        elsewhere.status.code(),
        Some(1),
        "another directory, another session"
    );
}

#[test]
fn a_broken_config_names_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        "[profiles.dev]\nendpoint = \"https://x\"\napi_verison = \"2025-10-02-preview\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args([
            "--config",
            cfg.to_str().unwrap(),
            "--profile",
            "dev",
            "exec",
            "-c",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("line 3") && err.contains("api_verison"),
        "{err}"
    );
}

#[test]
fn a_broken_keymap_or_theme_names_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    for (body, line, key) in [
        (
            "timeout = 9\n[keys.editor]\n\"<C-r>\" = \"run_cel\"\n",
            "line 3",
            "<C-r>",
        ),
        ("theme = \"solarized\"\n", "line 1", "solarized"),
    ] {
        std::fs::write(&cfg, body).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
            .args(["--config", cfg.to_str().unwrap(), "exec", "-c", "1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains("config.toml") && err.contains(line) && err.contains(key),
            "{err}"
        );
    }
}

#[test]
fn completions_are_printed() {
    let out = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("sessionpad"));
}

#[test]
fn files_put_ls_get_rm_round_trip_byte_identical() {
    let pool = Served::start();
    let id = "cli-files";
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("blob #1 ü.bin");
    let bytes: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13).to_le_bytes()[0])
        .collect();
    std::fs::write(&local, &bytes).unwrap();
    pool.run_ok(id, &["files", "put", local.to_str().unwrap()]);
    let ls = pool.run(id, &["files", "ls"]);
    assert!(
        text(&ls.stdout).contains("blob #1 ü.bin"),
        "{}",
        text(&ls.stdout)
    );
    let ls_json = pool.run(id, &["--json", "files", "ls"]);
    let v: serde_json::Value = serde_json::from_slice(&ls_json.stdout).unwrap();
    assert_eq!(v[0]["size"], 300_000);
    let out = dir.path().join("back");
    pool.run_ok(
        id,
        &[
            "files",
            "get",
            "-p",
            "blob #1 ü.bin",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(std::fs::read(out.join("blob #1 ü.bin")).unwrap(), bytes);
    // No overwrite without --force, and the existing file is untouched.
    std::fs::write(out.join("blob #1 ü.bin"), b"mine").unwrap();
    let again = pool.run(
        id,
        &["files", "get", "blob #1 ü.bin", "-o", out.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("--force"));
    assert_eq!(std::fs::read(out.join("blob #1 ü.bin")).unwrap(), b"mine");
    let forced = pool.run(
        id,
        &[
            "files",
            "get",
            "--force",
            "blob #1 ü.bin",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(forced.status.success());
    assert_eq!(std::fs::read(out.join("blob #1 ü.bin")).unwrap(), bytes);
    let leftovers: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left behind");
    // A file the code made is visible; then rm.
    pool.run(
        id,
        &["exec", "-c", "open('/mnt/data/made.txt', 'w').write('hi')"],
    );
    let stat = pool.run(id, &["--json", "files", "stat", "made.txt"]);
    let v: serde_json::Value = serde_json::from_slice(&stat.stdout).unwrap();
    assert_eq!(v["size"], 2);
    pool.run_ok(id, &["files", "rm", "made.txt"]);
    let ls = pool.run(id, &["files", "ls"]);
    assert!(!text(&ls.stdout).contains("made.txt"));
}

#[test]
fn sessions_ls_show_rm_and_pool_info() {
    let pool = Served::start();
    let id = "cli-sess";
    pool.run(id, &["exec", "-c", "a = 1"]);
    let ls = pool.run(id, &["sessions", "ls"]);
    assert!(text(&ls.stdout).contains(id), "{}", text(&ls.stdout));
    let show = pool.run(id, &["--json", "sessions", "show"]);
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(v["identifier"], id);
    pool.run_ok(id, &["sessions", "rm"]);
    let ls = pool.run(id, &["sessions", "ls"]);
    assert!(!text(&ls.stdout).contains(id));
    let gone = pool.run(id, &["sessions", "show"]);
    assert_eq!(gone.status.code(), Some(2));
    assert!(
        text(&gone.stderr).contains("SessionWithIdentifierNotFound"),
        "{}",
        text(&gone.stderr)
    );
    let info = pool.run(id, &["pool", "info"]);
    assert!(text(&info.stdout).contains("numpy"));
    assert!(text(&info.stdout).contains("runtime: python 3."));
}

/// A custom-container pool's sessions are listed, read and ended through
/// `.management/*` (`aca-api.md` §5.2): the profile's `pool_type` makes `rm` call
/// stopSession, whose plain-text answer the CLI prints, and the session is gone
/// from `sessions ls` (the local pool serves both families of calls).
#[test]
fn custom_container_profiles_end_sessions_with_stop_session() {
    let pool = Served::start();
    std::fs::write(
        pool.data.path().join("none.toml"),
        "default_profile = \"cc\"\n[profiles.cc]\npool_type = \"custom-container\"\n",
    )
    .unwrap();
    let id = "cli-cc";
    assert!(pool.run(id, &["exec", "-c", "b = 2"]).status.success());
    let ls = pool.run(id, &["--json", "sessions", "ls"]);
    let listed: serde_json::Value = serde_json::from_slice(&ls.stdout).unwrap();
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["identifier"] == id),
        "{listed}"
    );
    let show = pool.run(id, &["--json", "sessions", "show"]);
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(v["identifier"], id);
    let rm = pool.run(id, &["sessions", "rm"]);
    assert!(rm.status.success(), "{}", text(&rm.stderr));
    // stopSession's own words (`Session … in session pool … stopped.`).
    let said = text(&rm.stderr);
    assert!(
        said.contains(&format!("Session {id} in session pool")) && said.contains("stopped"),
        "{said}"
    );
    let ls = pool.run(id, &["sessions", "ls"]);
    assert!(!text(&ls.stdout).contains(id), "{}", text(&ls.stdout));
    // A flag overrides the profile: the code-interpreter call answers too.
    let gone = pool.run(id, &["--pool-type", "code-interpreter", "sessions", "show"]);
    assert_eq!(gone.status.code(), Some(2));
}

/// Issue 11, point 12: a file that is not there is named as missing, not blamed on
/// the endpoint or a full pool, for every file command that names one.
#[test]
fn a_missing_file_is_named_as_missing() {
    let pool = Served::start();
    let id = "cli-missing";
    for args in [
        &["files", "get", "nope.txt"][..],
        &["files", "stat", "nope.txt"],
        &["files", "rm", "nope.txt"],
    ] {
        let cwd = tempfile::tempdir().unwrap();
        let mut all = vec![
            "--endpoint",
            &pool.endpoint,
            "--token",
            TOKEN,
            "--identifier",
            id,
        ];
        all.extend_from_slice(args);
        let out = pool.bare(&all, cwd.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("no file nope.txt in the session's /mnt/data"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("maximum number of sessions"),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(cwd.path()).unwrap().count(),
            0,
            "nothing left behind"
        );
    }
    let out = pool.run(id, &["files", "ls", "--path", "nowhere"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no folder nowhere in the session's /mnt/data"),
        "{err}"
    );
}

/// Issue 11, point 12: `files get NAME DIR` downloads into DIR (created when
/// missing with `-p`, issue 27), as `cp` and `scp` take their last argument,
/// not into the current folder; `-o` still names the folder for every name.
#[test]
fn files_get_name_dir_downloads_into_dir() {
    let pool = Served::start();
    let id = "cli-get-dir";
    let src = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        std::fs::write(src.path().join(name), name).unwrap();
        pool.run_ok(
            id,
            &["files", "put", src.path().join(name).to_str().unwrap()],
        );
    }
    let cwd = tempfile::tempdir().unwrap();
    // `sessionpad ARGS` on this session, run in `cwd`.
    let with = |args: &[&str]| pool.bare(&pool.with_pool(id, args), cwd.path());
    let with_ok = |args: &[&str]| pool.bare_ok(&pool.with_pool(id, args), cwd.path());
    with_ok(&["files", "get", "-p", "a.txt", "into"]);
    assert_eq!(
        std::fs::read(cwd.path().join("into/a.txt")).unwrap(),
        b"a.txt"
    );
    assert!(
        !cwd.path().join("a.txt").exists(),
        "not into the current folder"
    );
    // Several names, then the folder.
    with_ok(&["files", "get", "-p", "a.txt", "b.txt", "both"]);
    assert!(cwd.path().join("both/a.txt").exists() && cwd.path().join("both/b.txt").exists());
    // One name alone: the current folder.
    with_ok(&["files", "get", "b.txt"]);
    assert_eq!(std::fs::read(cwd.path().join("b.txt")).unwrap(), b"b.txt");
    // A local file is no folder: refused, nothing written.
    std::fs::write(cwd.path().join("plain"), b"mine").unwrap();
    let out = with(&["files", "get", "a.txt", "plain"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not a folder"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(cwd.path().join("plain")).unwrap(), b"mine");
    // With -o every argument is a name.
    with_ok(&["files", "get", "-p", "a.txt", "b.txt", "-o", "named"]);
    assert!(cwd.path().join("named/a.txt").exists() && cwd.path().join("named/b.txt").exists());
}

/// Issue 11, point 12: listing an empty folder says so on standard error and
/// prints nothing on standard output (scriptable); `--json` prints `[]`.
#[test]
fn files_ls_of_an_empty_folder_says_it_is_empty() {
    let pool = Served::start();
    let id = "cli-empty";
    let out = pool.run(id, &["files", "ls"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("no files in /mnt/data"),
        "{}",
        text(&out.stderr)
    );
    pool.run(id, &["exec", "-c", "import os; os.mkdir('/mnt/data/sub')"]);
    let out = pool.run(id, &["files", "ls", "--path", "sub"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("no files in /mnt/data/sub"),
        "{}",
        text(&out.stderr)
    );
    let out = pool.run(id, &["--json", "files", "ls"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v.as_array().unwrap().iter().all(|f| f["name"] == "sub"),
        "{v}"
    );
}

/// Issue 11, point 12: pool options are accepted after the subcommand too, as
/// az and kubectl accept theirs.
#[test]
fn pool_options_are_accepted_after_the_subcommand() {
    let pool = Served::start();
    let id = "cli-after";
    let cwd = tempfile::tempdir().unwrap();
    let out = pool.bare_ok(
        &[
            "exec",
            "-c",
            "print(6*7)",
            "--endpoint",
            &pool.endpoint,
            "--token",
            TOKEN,
            "--identifier",
            id,
        ],
        cwd.path(),
    );
    assert_eq!(out, "42\n");
    let out = pool.bare_ok(
        &[
            "sessions",
            "ls",
            "--endpoint",
            &pool.endpoint,
            "--token",
            TOKEN,
            "--json",
        ],
        cwd.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v.as_array().unwrap().iter().any(|s| s["identifier"] == id),
        "{v}"
    );
    pool.bare_ok(
        &[
            "files",
            "ls",
            "--identifier",
            id,
            "--endpoint",
            &pool.endpoint,
            "--token",
            TOKEN,
        ],
        cwd.path(),
    );
}

/// Issue 27 item 16: `sessionpad completions SHELL | head -3` ended with a
/// panic (`failed to write completion file … Broken pipe`, exit 101). With
/// the reader gone before anything is written, every shell's completions
/// end quietly, exit 0.
#[test]
fn completions_into_a_closed_pipe_end_quietly() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
            .args(["completions", shell])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away at once: its end of the pipe closed.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{shell}: {:?} {stderr}", out.status);
        assert!(stderr.is_empty(), "{shell}: {stderr}");
    }
}

/// Issue 27 item 8: `sessions rm ID…` ends the sessions named (positionally,
/// as `log ID` and `replay ID` take theirs); `sessions show ID` likewise.
/// `sessions rm` with no identifier at all would end this folder's session:
/// with standard input not a terminal nobody can be asked, so it is refused
/// without `--yes` (saying so) and the session lives on.
#[test]
fn sessions_rm_takes_identifiers_and_asks_before_ending_this_folders() {
    let pool = Served::start();
    for id in ["cli-rm-a", "cli-rm-b", "cli-rm-c"] {
        pool.run_ok(id, &["exec", "-c", "a = 1"]);
    }
    let listed = |cwd: &Path| {
        pool.bare_ok(
            &[
                "--endpoint",
                &pool.endpoint,
                "--token",
                TOKEN,
                "sessions",
                "ls",
            ],
            cwd,
        )
    };
    let cwd = tempfile::tempdir().unwrap();
    let flags = ["--endpoint", &pool.endpoint, "--token", TOKEN];
    let with = |args: &[&str]| {
        let mut all = flags.to_vec();
        all.extend_from_slice(args);
        let mut cmd = pool.bare_command(&all, cwd.path());
        cmd.stdin(std::process::Stdio::null());
        cmd.output().unwrap()
    };
    let show = with(&["--json", "sessions", "show", "cli-rm-a"]);
    let v: serde_json::Value = serde_json::from_slice(&show.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&show.stderr)));
    assert_eq!(v["identifier"], "cli-rm-a");
    let rm = with(&["sessions", "rm", "cli-rm-a", "cli-rm-b"]);
    assert!(rm.status.success(), "{}", text(&rm.stderr));
    let ls = listed(cwd.path());
    assert!(
        !ls.contains("cli-rm-a") && !ls.contains("cli-rm-b") && ls.contains("cli-rm-c"),
        "{ls}"
    );
    // This folder's session, then `sessions rm` with no identifier.
    let here = with(&["--json", "exec", "-c", "b = 2"]);
    let v: serde_json::Value = serde_json::from_slice(&here.stdout).unwrap();
    let mine = v["identifier"].as_str().unwrap().to_string();
    let refused = with(&["sessions", "rm"]);
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--yes") && err.contains(&mine) && err.contains("not a terminal"),
        "{err}"
    );
    assert!(listed(cwd.path()).contains(&mine), "still there");
    let yes = with(&["sessions", "rm", "--yes"]);
    assert!(yes.status.success(), "{}", text(&yes.stderr));
    assert!(!listed(cwd.path()).contains(&mine));
}

/// Issue 28 item 4: `sessions ls --older-than` keeps the sessions created
/// longer ago than the age, and `sessions rm --older-than` ends just those,
/// asking first (`--yes` without a terminal), against the local pool.
#[test]
fn sessions_older_than_on_the_local_pool() {
    let pool = Served::start();
    for id in ["cli-old-a", "cli-old-b"] {
        pool.run_ok(id, &["exec", "-c", "a = 1"]);
    }
    let id = "cli-old-a";
    let ls = |age: &str| pool.run(id, &["sessions", "ls", "--older-than", age]);
    // Made seconds ago: none older than an hour, both older than nothing.
    let hour = ls("1h");
    assert!(hour.status.success(), "{}", text(&hour.stderr));
    assert!(text(&hour.stdout).is_empty(), "{}", text(&hour.stdout));
    assert!(text(&hour.stderr).contains("no sessions older than 1h"));
    let all = text(&ls("0s").stdout);
    assert!(
        all.contains("cli-old-a") && all.contains("cli-old-b"),
        "{all}"
    );
    // Nothing older than an hour: nothing ended, nothing asked.
    pool.run_ok(id, &["sessions", "rm", "--older-than", "1h"]);
    assert!(text(&ls("0s").stdout).contains("cli-old-b"));
    // Nobody to ask (standard input is not a terminal): refused, naming --yes.
    let mut cmd = pool.bare_command(
        &pool.with_pool(id, &["sessions", "rm", "--older-than", "0s"]),
        Path::new("."),
    );
    let refused = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("--yes"),
        "{}",
        text(&refused.stderr)
    );
    assert!(text(&ls("0s").stdout).contains("cli-old-b"));
    let ended = pool.run_ok(
        id,
        &["--json", "sessions", "rm", "--older-than", "0s", "--yes"],
    );
    let v: serde_json::Value = serde_json::from_str(&ended).unwrap();
    let mut ids: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["deleted"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["cli-old-a", "cli-old-b"]);
    assert!(text(&pool.run(id, &["sessions", "ls"]).stdout).is_empty());
}

/// Issue 27 item 8: `files ls FOLDER` lists the folder (as `ls` does), as
/// `--path FOLDER` still does.
#[test]
fn files_ls_takes_the_folder_positionally() {
    let pool = Served::start();
    let id = "cli-ls-sub";
    pool.run_ok(
        id,
        &[
            "exec",
            "-c",
            "import os; os.mkdir('/mnt/data/sub'); open('/mnt/data/sub/in.txt', 'w').write('x')",
        ],
    );
    for args in [
        &["files", "ls", "sub"][..],
        &["files", "ls", "--path", "sub"],
    ] {
        let out = pool.run(id, args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("in.txt"),
            "{args:?}: {}",
            text(&out.stdout)
        );
    }
}

/// Issue 27 item 8: `files get NAME DIR` with DIR missing creates nothing
/// without `--parents` when nobody can be asked (standard input not a
/// terminal), and says which flag; with `-p` it creates DIR and its parents.
/// Downloads get the mode a new file gets (0666 less the umask, as `cp` and
/// `curl -O` give), not 0600.
#[test]
fn files_get_into_a_missing_folder_needs_parents_and_gets_the_usual_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let pool = Served::start();
    let id = "cli-get-parents";
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a.txt"), "a").unwrap();
    pool.run_ok(
        id,
        &["files", "put", src.path().join("a.txt").to_str().unwrap()],
    );
    let cwd = tempfile::tempdir().unwrap();
    let deep = cwd.path().join("no/such/deep/dir");
    let with = |args: &[&str]| {
        let mut cmd = pool.bare_command(&pool.with_pool(id, args), cwd.path());
        cmd.stdin(std::process::Stdio::null());
        cmd.output().unwrap()
    };
    for args in [
        &["files", "get", "a.txt", deep.to_str().unwrap()][..],
        &["files", "get", "a.txt", "-o", deep.to_str().unwrap()],
    ] {
        let out = with(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--parents") && err.contains("does not exist"),
            "{err}"
        );
        assert!(!cwd.path().join("no").exists(), "{args:?}: nothing created");
    }
    let out = with(&["files", "get", "a.txt", "-p", deep.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = deep.join("a.txt");
    assert_eq!(std::fs::read(&got).unwrap(), b"a");
    // What a file this process creates gets: the same umask as the child's.
    let made = cwd.path().join("made-here");
    std::fs::write(&made, "").unwrap();
    let usual = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
    let got_mode = std::fs::metadata(&got).unwrap().permissions().mode() & 0o777;
    assert_eq!(format!("{got_mode:o}"), format!("{usual:o}"));
}

/// Issue 27 item 8: `files put` no longer replaces a file of the session
/// without `--force` (as `get` keeps local files), and a local folder is named
/// as a folder, not blamed on the pool.
#[test]
fn files_put_refuses_to_replace_without_force_and_names_folders() {
    let pool = Served::start();
    let id = "cli-put-force";
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("n.txt");
    std::fs::write(&local, "first").unwrap();
    pool.run_ok(id, &["files", "put", local.to_str().unwrap()]);
    std::fs::write(&local, "second").unwrap();
    let again = pool.run(id, &["files", "put", local.to_str().unwrap()]);
    let err = text(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert!(err.contains("n.txt") && err.contains("--force"), "{err}");
    let cat = pool.run_ok(id, &["exec", "-c", "print(open('/mnt/data/n.txt').read())"]);
    assert_eq!(cat, "first\n");
    pool.run_ok(id, &["files", "put", "--force", local.to_str().unwrap()]);
    let cat = pool.run_ok(id, &["exec", "-c", "print(open('/mnt/data/n.txt').read())"]);
    assert_eq!(cat, "second\n");
    // Into a folder: the same check there.
    pool.run_ok(
        id,
        &["files", "put", "--path", "sub", local.to_str().unwrap()],
    );
    let again = pool.run(
        id,
        &["files", "put", "--path", "sub", local.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    // A local folder.
    let folder = pool.run(id, &["files", "put", dir.path().to_str().unwrap()]);
    let err = text(&folder.stderr);
    assert_eq!(folder.status.code(), Some(2), "{err}");
    assert!(err.contains("is a folder"), "{err}");
    assert!(!err.contains("cannot reach"), "{err}");
}

/// Every key of `value` (at any depth), with its path, except below the keys
/// in `verbatim` (values the session or the service chose: a cell's result).
fn keys_of(value: &serde_json::Value, path: &str, verbatim: &[&str], out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(format!("{path}.{k}"));
                if !verbatim.contains(&k.as_str()) {
                    keys_of(v, &format!("{path}.{k}"), verbatim, out);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                keys_of(v, &format!("{path}[]"), verbatim, out);
            }
        }
        _ => {}
    }
}

/// Issue 27 item 17: every `--json` output of sessionpad's own shapes uses
/// one key style, `snake_case` (`duration_ms`, `exit_code`, `content_type`),
/// whatever the command: exec (Python and shell), files, sessions, pool,
/// log, replay, export.
#[test]
fn every_json_output_uses_snake_case_keys() {
    let pool = Served::start();
    let shell = Served::start_shell();
    let id = "cli-json-keys";
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("k.txt");
    std::fs::write(&local, "k").unwrap();
    let local = local.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let out_dir = out_dir.to_str().unwrap();
    let nb = dir.path().join("nb.ipynb");
    let nb = nb.to_str().unwrap();
    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut json = |pool: &Served, args: &[&str]| {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = pool.run(id, &all);
        outputs.push((args.join(" "), text(&out.stdout)));
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    };
    json(
        &pool,
        &[
            "exec",
            "-c",
            "import os; os.mkdir('/mnt/data/d'); {'camelKey': 1}",
        ],
    );
    json(&pool, &["files", "put", local]);
    json(&pool, &["files", "ls"]);
    json(&pool, &["files", "ls", "--recursive"]);
    json(&pool, &["files", "stat", "k.txt"]);
    json(&pool, &["files", "get", "-p", "k.txt", "-o", out_dir]);
    json(&pool, &["sessions", "ls"]);
    json(&pool, &["sessions", "show"]);
    json(&pool, &["pool", "info"]);
    json(&pool, &["export", "--recorded", id, "-o", nb]);
    json(&pool, &["files", "rm", "k.txt"]);
    json(
        &shell,
        &["--container-type", "shell", "exec", "-c", "exit 1"],
    );
    json(&shell, &["pool", "info"]);
    json(&pool, &["log", id]);
    json(&pool, &["log", "--sessions"]);
    json(&pool, &["replay", id]);
    json(&pool, &["sessions", "rm"]);
    let snake = |k: &str| {
        k.starts_with(|c: char| c.is_ascii_lowercase())
            && k.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !k.contains("__")
            && !k.ends_with('_')
    };
    let mut wrong = Vec::new();
    for (args, stdout) in &outputs {
        assert!(!stdout.trim().is_empty(), "{args}: nothing printed");
        // Pretty JSON, or one JSON object a line (`log`).
        let docs: Vec<serde_json::Value> = serde_json::from_str(stdout).map_or_else(
            |_| {
                stdout
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args}: {e}: {l}")))
                    .collect()
            },
            |v| vec![v],
        );
        let mut keys = Vec::new();
        for doc in &docs {
            keys_of(doc, "", &["result"], &mut keys);
        }
        // `files get` prints the paths written: no keys.
        assert!(
            !keys.is_empty() || args.starts_with("files get"),
            "{args}: no keys in {stdout}"
        );
        for k in keys {
            let last = k.rsplit('.').next().unwrap_or_default();
            if !snake(last) {
                wrong.push(format!("{args}: {k}"));
            }
        }
    }
    assert!(wrong.is_empty(), "not snake_case:\n{}", wrong.join("\n"));
}

/// Issue 27 item 18: a `sessionpad serve` on loopback, reached over http
/// without a token (or with a wrong one), is told apart from Azure: the error
/// says to use the token serve printed and how to pass it, not to install
/// the Azure CLI nor to get a token for Azure's audience.
#[test]
fn a_local_serve_without_or_with_a_wrong_token_says_to_use_the_printed_one() {
    let pool = Served::start();
    let cwd = tempfile::tempdir().unwrap();
    for extra in [&[][..], &["--token", "not-the-token"]] {
        let mut args = vec!["--endpoint", pool.endpoint.as_str()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--identifier", "cli-tok", "exec", "-c", "1"]);
        let mut cmd = pool.bare_command(&args, cwd.path());
        // No az on PATH: what a machine without the Azure CLI sees.
        cmd.env("PATH", "/nonexistent");
        let out = cmd.output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("the token `sessionpad serve` printed")
                && err.contains("--token")
                && err.contains("SESSIONPAD_TOKEN"),
            "{extra:?}: {err}"
        );
        assert!(
            !err.contains("Azure CLI") && !err.contains("audience"),
            "{extra:?}: {err}"
        );
    }
}

/// Issue 27 item 18: a pool that does not answer is reported with its cause
/// once, not the same words twice.
#[test]
fn a_connection_error_prints_its_cause_once() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let data = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{port}");
    let out = common::sessionpad_command(data.path())
        .args(["--endpoint", &endpoint, "--token", "t", "--identifier", "x"])
        .args(["exec", "-c", "1"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot reach the session pool"), "{err}");
    assert_eq!(err.matches("error sending request").count(), 1, "{err}");
    assert!(err.contains("Connection refused"), "{err}");
}
