//! Tests of the Python environment builder.

use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn quiet(_: &str) {}

#[test]
fn env_key_is_stable_and_depends_on_both_inputs() {
    let reqs = "ipykernel>=7,<8\n";
    let version = "3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0]";
    // Fixed value: changing how the key is computed makes every user rebuild.
    assert_eq!(env_key(reqs, version), "4f40bc25c2c8");
    assert_eq!(env_key(reqs, version), env_key(reqs, version));
    assert_ne!(env_key(reqs, version), env_key(reqs, "3.12.1"));
    assert_ne!(env_key(reqs, version), env_key("numpy\n", version));
    let key = env_key(REQUIREMENTS, version);
    assert_eq!(key.len(), 12);
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(REQUIREMENTS.contains("ipykernel"));
}

/// A fake interpreter: a link named `python` to a system program (`true` or
/// `false`). A link rather than a freshly written script, which another test
/// thread forking at the wrong moment could make fail with "text file busy".
#[cfg(unix)]
fn fake_python(dir: &Path, program: &str) -> PathBuf {
    let target = base::find_on_path(program.as_ref(), std::env::var_os("PATH").as_deref())
        .expect("program on PATH");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let link = bin.join("python");
    std::os::unix::fs::symlink(target, &link).expect("symlink");
    link
}

#[cfg(unix)]
#[tokio::test]
async fn explicit_python_without_ipykernel_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let python = fake_python(tmp.path(), "false");
    let err = ensure(tmp.path(), Some(&python), Image::default(), &quiet)
        .await
        .expect_err("must refuse");
    assert!(
        matches!(&err, ImageError::MissingIpykernel { python: p, .. } if *p == python),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("cannot import ipykernel"), "{msg}");
    assert!(msg.contains("pip install ipykernel"), "{msg}");
}

#[cfg(unix)]
#[tokio::test]
async fn explicit_python_with_ipykernel_is_used_as_is() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let python = fake_python(tmp.path(), "true");
    let env = ensure(tmp.path(), Some(&python), Image::default(), &quiet)
        .await
        .expect("ok");
    assert_eq!(env.python, python);
    assert!(env.python.is_absolute());
    assert!(env.root.is_none());
    // Nothing was built.
    assert!(!tmp.path().join("python").exists());
    // A bare command name is looked up on PATH.
    let env = ensure(
        tmp.path(),
        Some(Path::new("true")),
        Image::default(),
        &quiet,
    )
    .await
    .expect("ok");
    assert!(env.python.is_absolute(), "{}", env.python.display());
}

#[tokio::test]
async fn explicit_python_that_does_not_exist_says_so() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("no-such-python");
    let err = ensure(tmp.path(), Some(&missing), Image::default(), &quiet)
        .await
        .expect_err("must fail");
    assert!(matches!(err, ImageError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-python"), "{err}");
}

/// A stand-in for the real build: makes the interpreter file, takes a while,
/// counts how often it ran.
async fn fake_build(dir: PathBuf, builds: Arc<AtomicUsize>) -> Result<(), ImageError> {
    builds.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let python = venv_python(&dir);
    std::fs::create_dir_all(python.parent().expect("parent")).expect("mkdir");
    std::fs::write(&python, "").expect("write");
    Ok(())
}

#[tokio::test]
async fn concurrent_callers_build_once_and_both_get_the_environment() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let python_dir = tmp.path().join("python");
    let builds = Arc::new(AtomicUsize::new(0));
    let lines = std::sync::Mutex::new(Vec::<String>::new());
    let progress = |l: &str| lines.lock().expect("lock").push(l.to_string());
    let (a, b) = tokio::join!(
        ensure_env(&python_dir, "abc", "hash", &progress, |d| fake_build(
            d,
            builds.clone()
        )),
        ensure_env(&python_dir, "abc", "hash", &progress, |d| fake_build(
            d,
            builds.clone()
        )),
    );
    let (a, b) = (a.expect("first"), b.expect("second"));
    assert_eq!(builds.load(Ordering::SeqCst), 1, "built twice");
    assert_eq!(a.python, b.python);
    let dir = python_dir.join("env-abc");
    assert_eq!(a.root.as_deref(), Some(dir.as_path()));
    assert!(is_ready(&dir, "hash"));
    assert!(!is_ready(&dir, "other requirements"));
    let lines = lines.lock().expect("lock");
    assert!(
        lines.iter().any(|l| l.starts_with("waiting for another")),
        "{lines:?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| *l == "Python environment ready")
            .count(),
        1
    );
}

#[tokio::test]
async fn half_built_folder_is_replaced_and_failed_build_leaves_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let python_dir = tmp.path().join("python");
    let dir = python_dir.join("env-k");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("leftover"), "x").expect("write");

    let err = ensure_env(&python_dir, "k", "h", &quiet, |_| async {
        Err(ImageError::Pip {
            dir: PathBuf::from("d"),
            status: "exit status: 1".into(),
            tail: "  boom".into(),
        })
    })
    .await
    .expect_err("build fails");
    assert!(err.to_string().contains("boom"));
    assert!(!dir.exists(), "failed build left its folder");

    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("leftover"), "x").expect("write");
    let builds = Arc::new(AtomicUsize::new(0));
    let env = ensure_env(&python_dir, "k", "h", &quiet, |d| {
        fake_build(d, builds.clone())
    })
    .await
    .expect("builds");
    assert!(!dir.join("leftover").exists());
    assert_eq!(env.python, venv_python(&dir));
    assert_eq!(builds.load(Ordering::SeqCst), 1);
}

#[test]
fn fast_path_uses_the_remembered_version_until_the_interpreter_changes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let python_dir = tmp.path().join("python");
    let base = tmp.path().join("base-python");
    std::fs::write(&base, "v1").expect("write");
    let (reqs, version) = ("numpy\n", "3.11.7 (test)");
    let dir = python_dir.join(format!("env-{}", env_key(reqs, version)));
    let python = venv_python(&dir);
    std::fs::create_dir_all(python.parent().expect("parent")).expect("mkdir");
    std::fs::write(&python, "").expect("write");

    // Not ready yet: no marker, nothing remembered.
    assert!(lookup_ready(&python_dir, &base, reqs, "h").is_none());
    remember_base_version(&python_dir, &base, version);
    assert!(lookup_ready(&python_dir, &base, reqs, "h").is_none());
    std::fs::write(dir.join(READY_MARKER), "h\n").expect("write");
    let env = lookup_ready(&python_dir, &base, reqs, "h").expect("ready");
    assert_eq!(env.python, python);
    assert_eq!(env.root.as_deref(), Some(dir.as_path()));
    // Other requirements: other folder.
    assert!(lookup_ready(&python_dir, &base, "pandas\n", "h").is_none());
    // The interpreter file changed: ask it again.
    std::fs::write(&base, "version 2").expect("write");
    assert!(lookup_ready(&python_dir, &base, reqs, "h").is_none());
}

/// Builds (on first run: a minute or two, from PyPI) or reuses the real
/// environment in the user's cache directory.
#[tokio::test]
async fn real_environment_has_the_packages() {
    let started = Instant::now();
    let env = ensure(&crate::dirs::cache_dir(), None, Image::default(), &|l| {
        eprintln!("{l}");
    })
    .await
    .expect("Python environment");
    eprintln!("ensure (build or reuse) took {:?}", started.elapsed());
    assert!(env.root.is_some());
    let status = std::process::Command::new(&env.python)
        .args(["-c", "import ipykernel, numpy, pandas, matplotlib"])
        .status()
        .expect("run python");
    assert!(
        status.success(),
        "imports failed in {}",
        env.python.display()
    );

    let started = Instant::now();
    let again = ensure(&crate::dirs::cache_dir(), None, Image::default(), &|l| {
        panic!("reuse printed {l}")
    })
    .await
    .expect("reuse");
    eprintln!("reuse took {:?}", started.elapsed());
    assert_eq!(again.python, env.python);

    // The built interpreter also passes as a `--python` one.
    let explicit = ensure(
        Path::new("/nonexistent"),
        Some(&env.python),
        Image::default(),
        &quiet,
    )
    .await
    .expect("explicit");
    assert_eq!(explicit.python, env.python);
    assert!(explicit.root.is_none());

    let (name, version) = env.runtime().await.expect("runtime");
    assert_eq!(name, "python");
    assert!(version.starts_with("3."), "{version}");

    let packages = env.installed_packages().await.expect("packages");
    let find = |list: &[(String, String)], name: &str| {
        list.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    for name in ["ipykernel", "ipython", "numpy", "pandas", "matplotlib"] {
        assert!(
            find(&packages, name).is_some(),
            "{name} missing: {packages:?}"
        );
    }
    // The fallback for interpreters without pip agrees with pip.
    let via_importlib = env.packages_via_importlib().await.expect("importlib");
    assert_eq!(find(&via_importlib, "numpy"), find(&packages, "numpy"));
}

/// An executable file standing for an interpreter (never run).
#[cfg(unix)]
fn executable(path: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_path_buf()
}

#[cfg(unix)]
#[test]
fn the_remembered_interpreter_wins_over_whatever_path_says() {
    use base::Chosen;
    let tmp = tempfile::tempdir().expect("tempdir");
    let python_dir = tmp.path().join("python");
    let first = executable(&tmp.path().join("first/bin/python3"));
    let other = executable(&tmp.path().join("other/bin/python3"));
    let first_path = tmp.path().join("first/bin").into_os_string();
    let other_path = tmp.path().join("other/bin").into_os_string();

    // Nothing remembered: the first python3 on PATH, and the note says so.
    let chosen = base::choose(&python_dir, None, Some(&first_path)).expect("found");
    assert_eq!(chosen.path, first);
    assert_eq!(chosen.how, Chosen::OnPath { forgot: None });
    let note = chosen.build_note("3.11.7 (main) [GCC]");
    assert!(
        note.contains(&format!("{} (Python 3.11.7)", first.display())),
        "{note}"
    );
    assert!(note.contains("first python3 on PATH"), "{note}");
    assert!(note.contains(BASE_PYTHON_VAR), "{note}");
    chosen.remember(&python_dir);

    // Another PATH, or none at all: still the remembered one.
    for path in [Some(other_path.as_os_str()), None] {
        let again = base::choose(&python_dir, None, path).expect("remembered");
        assert_eq!(again.path, first);
        assert_eq!(again.how, Chosen::Remembered);
    }

    // The variable wins, and is remembered in turn.
    let var = other.clone().into_os_string();
    let chosen = base::choose(&python_dir, Some(&var), Some(&first_path)).expect("var");
    assert_eq!(
        (chosen.path.clone(), chosen.how.clone()),
        (other.clone(), Chosen::Variable)
    );
    assert!(chosen.build_note("3.12.1").contains(BASE_PYTHON_VAR));
    chosen.remember(&python_dir);
    let again = base::choose(&python_dir, None, Some(&first_path)).expect("remembered");
    assert_eq!(again.path, other);

    // The remembered one is gone: PATH again, and the note says what happened.
    std::fs::remove_file(&other).expect("rm");
    let chosen = base::choose(&python_dir, None, Some(&first_path)).expect("found");
    assert_eq!(chosen.path, first);
    assert_eq!(
        chosen.how,
        Chosen::OnPath {
            forgot: Some(other.clone())
        }
    );
    let note = chosen.build_note("3.11.7");
    assert!(
        note.starts_with(&format!(
            "{}, the interpreter sessionpad used before, is gone",
            other.display()
        )),
        "{note}"
    );

    // Gone and nothing on PATH: a clear error naming both.
    let err = base::choose(&python_dir, None, Some(&other_path)).expect_err("nothing");
    let msg = err.to_string();
    assert!(msg.contains("used before) is gone"), "{msg}");
    assert!(
        msg.contains("neither python3 nor python is on PATH"),
        "{msg}"
    );

    // A variable naming nothing executable is refused, not silently replaced.
    let bad = tmp.path().join("nope").into_os_string();
    let err = base::choose(&python_dir, Some(&bad), Some(&first_path)).expect_err("bad var");
    assert!(
        err.to_string().contains("is not an executable file"),
        "{err}"
    );
}

#[test]
fn a_remembered_file_that_is_not_an_absolute_path_is_ignored() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let python_dir = tmp.path().join("python");
    std::fs::create_dir_all(&python_dir).expect("mkdir");
    std::fs::write(python_dir.join(base::REMEMBERED_FILE), "python3\n").expect("write");
    let err = base::choose(&python_dir, None, Some(tmp.path().as_os_str())).expect_err("none");
    assert!(
        err.to_string().contains("neither python3 nor python"),
        "{err}"
    );
}
