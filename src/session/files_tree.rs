//! Folders of the file work: a remote folder downloaded with everything in it,
//! and deleted with everything in it. Both list the folder recursively
//! (`GET files?path&recursive=true`, api-version 2025-10-02 and later,
//! `aca-api.md` §4.3); older api-versions are refused before this is asked.
//!
//! A download maps every remote path below the folder to a local path below
//! the local folder, one safe component per remote component
//! ([`crate::localname::safe_file_name`]), and creates the local subfolders
//! one level at a time, refusing any that exists as something else than a
//! real folder (a symbolic link is never followed): nothing is written outside
//! the folder the user chose. A delete removes the files, then the folders
//! deepest first, then the folder itself (so it works whether or not the pool
//! deletes a folder that still holds something).

use std::path::{Path, PathBuf};

use crate::client::SessionClient;
use crate::localname::safe_file_name;
use crate::protocol::{FileKind, RemoteFile};
use crate::text::names::escape;

/// Each remote folder's files as (remote name, local path) pairs, the local
/// subfolders created.
///
/// # Errors
///
/// What to say when a folder cannot be listed or a local folder cannot be
/// made (nothing is downloaded then).
pub(super) async fn expand(
    client: &SessionClient,
    identifier: &str,
    folders: Vec<(String, PathBuf)>,
) -> Result<Vec<(String, PathBuf)>, String> {
    let mut out = Vec::new();
    for (folder, local) in folders {
        let listing = list_below(client, identifier, &folder).await?;
        let shown = escape(&folder);
        let made = local.clone();
        let dirs: Vec<Vec<String>> = listing
            .iter()
            .filter(|(_, f)| f.kind == FileKind::Directory)
            .map(|(rel, _)| rel.split('/').map(String::from).collect())
            .collect();
        tokio::task::spawn_blocking(move || {
            make_dir(&made)?;
            for parts in &dirs {
                make_below(&made, parts)?;
            }
            Ok::<(), std::io::Error>(())
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| {
            format!(
                "cannot make the folders of {shown} in {}: {e}",
                local.display()
            )
        })?;
        for (rel, file) in listing {
            if file.kind != FileKind::File {
                continue;
            }
            let parts: Vec<&str> = rel.split('/').collect();
            out.push((format!("{folder}/{rel}"), local_below(&local, &parts)));
        }
    }
    Ok(out)
}

/// Deletes each folder with everything in it; the summary of what happened.
pub(super) async fn delete_folders(
    client: &SessionClient,
    identifier: &str,
    folders: &[String],
) -> String {
    let mut files = 0;
    for folder in folders {
        let listing = match list_below(client, identifier, folder).await {
            Ok(l) => l,
            Err(why) => return why,
        };
        let (mut dirs, plain): (Vec<_>, Vec<_>) = listing
            .into_iter()
            .partition(|(_, f)| f.kind == FileKind::Directory);
        // Deepest first, so each folder is empty when it goes.
        dirs.sort_by_key(|(rel, _)| std::cmp::Reverse(rel.matches('/').count()));
        let names = plain
            .iter()
            .chain(&dirs)
            .map(|(rel, _)| format!("{folder}/{rel}"))
            .chain(std::iter::once(folder.clone()));
        for name in names {
            if let Err(e) = client.delete_file(identifier, &name).await {
                return format!("cannot delete {}: {e}", escape(&name));
            }
        }
        files += plain.len();
    }
    let noun = if files == 1 { "file" } else { "files" };
    match folders {
        [one] => format!("deleted {}/ ({files} {noun})", escape(one)),
        many => format!("deleted {} folders ({files} {noun})", many.len()),
    }
}

/// How many files (not folders) the remote `folders` hold, at every level.
///
/// # Errors
///
/// What to say when a folder cannot be listed.
pub(super) async fn count_files(
    client: &SessionClient,
    identifier: &str,
    folders: &[String],
) -> Result<usize, String> {
    let mut count = 0;
    for folder in folders {
        let listing = list_below(client, identifier, folder).await?;
        count += listing
            .iter()
            .filter(|(_, f)| f.kind == FileKind::File)
            .count();
    }
    Ok(count)
}

/// Everything below remote `folder`, listed recursively, each with its path
/// relative to the folder (whether the pool gives `directory` relative to
/// the folder or to `/mnt/data`).
async fn list_below(
    client: &SessionClient,
    identifier: &str,
    folder: &str,
) -> Result<Vec<(String, RemoteFile)>, String> {
    let listing = client
        .list_files(identifier, Some(folder), true)
        .await
        .map_err(|e| format!("cannot list {}: {e}", escape(folder)))?;
    let prefix = format!("{}/", folder.trim_matches('/'));
    Ok(listing
        .into_iter()
        .map(|f| {
            let path = f.path();
            let rel = path.strip_prefix(&prefix).unwrap_or(&path).to_string();
            (rel, f)
        })
        .filter(|(rel, _)| !rel.is_empty())
        .collect())
}

/// `root` joined with one safe component per remote part: always below
/// `root`.
fn local_below(root: &Path, parts: &[&str]) -> PathBuf {
    parts
        .iter()
        .fold(root.to_path_buf(), |p, part| p.join(safe_file_name(part)))
}

/// Makes `dir` unless it is a real folder already; refuses anything else
/// there (a link, a file).
fn make_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is not a folder", dir.display()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(dir),
        Err(e) => Err(e),
    }
}

/// Makes the local folders for remote `parts` below `root`, one level at a
/// time ([`make_dir`]).
fn make_below(root: &Path, parts: &[String]) -> std::io::Result<()> {
    let mut dir = root.to_path_buf();
    for part in parts {
        dir = dir.join(safe_file_name(part));
        make_dir(&dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths_stay_below_the_local_folder() {
        let root = Path::new("/tmp/dl/reports");
        for parts in [
            &["..", "..", "etc", "passwd"][..],
            &["/etc", "x"],
            &["a\u{1b}]0;t\u{7}", "b\nc.txt"],
        ] {
            let p = local_below(root, parts);
            assert!(p.starts_with(root), "{parts:?} -> {p:?}");
            assert!(
                !p.components().any(|c| c == std::path::Component::ParentDir),
                "{p:?}"
            );
            assert!(!p.to_string_lossy().contains(['\u{1b}', '\n']), "{p:?}");
        }
    }

    #[test]
    fn a_link_where_a_folder_goes_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().join("reports");
        std::os::unix::fs::symlink(outside.path(), &root).unwrap();
        assert!(make_dir(&root).is_err());
        let real = dir.path().join("real");
        make_dir(&real).unwrap();
        std::os::unix::fs::symlink(outside.path(), real.join("sub")).unwrap();
        assert!(make_below(&real, &["sub".into(), "deep".into()]).is_err());
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        make_below(&real, &["a".into(), "b".into()]).unwrap();
        assert!(real.join("a/b").is_dir());
    }
}
