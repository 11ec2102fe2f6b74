//! The environment a kernel starts with: an allow-list, never the pool's own
//! (which may hold a user's secrets, tokens and cloud credentials).

use std::path::Path;

/// Variables copied from the pool's environment when set: the time zone and
/// `OpenBLAS`'s processor settings (which some machines need for numpy to compute
/// right; see the machine notes).
const PASSED: &[&str] = &["TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

/// The kernel's environment: `PATH` (the Python environment's `bin` first, then
/// the system folders), `HOME=/tmp`, `LANG=C.UTF-8`, unbuffered Python output,
/// `TZ` and `OPENBLAS_CORETYPE`/`OPENBLAS_L2_SIZE` where the pool has them, and, for an unsandboxed
/// kernel, `SESSIONPAD_MNT_DATA` (the session folder, which the start-up script
/// maps `/mnt/data` to). `python_bin` is the folder of the interpreter.
pub fn kernel_env(
    python_bin: Option<&Path>,
    unsandboxed_folder: Option<&Path>,
) -> Vec<(String, String)> {
    let mut path = String::new();
    if let Some(bin) = python_bin {
        path.push_str(&bin.to_string_lossy());
        path.push(':');
    }
    path.push_str("/usr/local/bin:/usr/bin:/bin");
    let mut env = vec![
        ("PATH".to_string(), path),
        ("HOME".to_string(), "/tmp".to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
        (
            "PYDEVD_DISABLE_FILE_VALIDATION".to_string(),
            "1".to_string(),
        ),
    ];
    for name in PASSED {
        if let Ok(v) = std::env::var(name) {
            env.push(((*name).to_string(), v));
        }
    }
    if let Some(folder) = unsandboxed_folder {
        env.push((
            "SESSIONPAD_MNT_DATA".to_string(),
            folder.to_string_lossy().into_owned(),
        ));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_but_the_allow_list_is_passed() {
        let env = kernel_env(Some(Path::new("/venv/bin")), None);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        for n in &names {
            assert!(
                [
                    "PATH",
                    "HOME",
                    "LANG",
                    "PYTHONUNBUFFERED",
                    "PYDEVD_DISABLE_FILE_VALIDATION"
                ]
                .contains(n)
                    || PASSED.contains(n),
                "{n}"
            );
        }
        assert_eq!(env[0].1, "/venv/bin:/usr/local/bin:/usr/bin:/bin");
        assert!(env.iter().any(|(k, v)| k == "HOME" && v == "/tmp"));
    }
}
