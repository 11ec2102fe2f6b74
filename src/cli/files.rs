//! `sessionpad files ls|put|get|rm|stat`: the files of the session's `/mnt/data`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::output;
use super::target::{TargetOpt, connect};
use crate::client::SessionClient;
use crate::localname;
use crate::protocol::{FileKind, RemoteFile};

/// File commands.
#[derive(Debug, Subcommand)]
pub enum FilesCmd {
    /// List files (in FOLDER, all below it with --recursive).
    Ls {
        /// Folder below /mnt/data (default: /mnt/data itself).
        #[arg(value_name = "FOLDER")]
        folder: Option<String>,
        /// The same as FOLDER.
        #[arg(long, value_name = "FOLDER", conflicts_with = "folder")]
        path: Option<String>,
        /// Include every sub-folder (api-version 2025-10-02-preview).
        #[arg(long)]
        recursive: bool,
    },
    /// Upload local files (never replacing a file of the session without
    /// --force).
    Put {
        /// Local files (not folders).
        #[arg(required = true)]
        local: Vec<PathBuf>,
        /// Folder below /mnt/data to put them in.
        #[arg(long, value_name = "FOLDER")]
        path: Option<String>,
        /// Replace files the session already has.
        #[arg(long)]
        force: bool,
    },
    /// Download files into a local folder (never overwriting without --force):
    /// `get NAME` into the current folder, `get NAME... DIR` into DIR, `get
    /// NAME... -o DIR` likewise. A missing DIR is created after asking, or
    /// with --parents.
    #[command(override_usage = "sessionpad files get [OPTIONS] <NAME>... [DIR]")]
    Get {
        /// Remote file names, then the local folder when more than one is given
        /// and no --out (as `cp` and `scp` take their last argument).
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// Local folder; every argument is then a remote name.
        #[arg(long, short = 'o', value_name = "DIR")]
        out: Option<PathBuf>,
        /// Replace existing local files.
        #[arg(long)]
        force: bool,
        /// Create the folder (and its parents) when missing, without asking.
        #[arg(long, short = 'p')]
        parents: bool,
    },
    /// Delete files.
    Rm {
        /// Remote file names.
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Show one file's metadata.
    Stat {
        /// Remote file name.
        name: String,
    },
}

/// Runs a file command.
///
/// # Errors
///
/// Local files that cannot be uploaded (a folder, a missing file) and a
/// download folder that is missing and not to be created are refused before
/// the pool is reached; then the pool's errors, and a session file `put`
/// would replace without `--force`.
pub async fn run(cmd: FilesCmd, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    let settings = target.settings()?;
    let Some(cmd) = checked_locally(cmd)? else {
        return Ok(ExitCode::from(1));
    };
    let conn = connect(&settings).await?;
    let (client, id, json) = (&conn.client, settings.identifier.as_str(), target.json);
    match cmd {
        FilesCmd::Ls {
            folder,
            path,
            recursive,
        } => {
            let path = folder.or(path);
            let files = client.list_files(id, path.as_deref(), recursive).await?;
            if json {
                output::json(&serde_json::to_value(&files)?);
            } else if files.is_empty() {
                // Standard output stays a listing (of nothing) for scripts.
                eprintln!("no files in {}", data_folder(path.as_deref()));
            } else {
                print_listing(&files);
            }
        }
        FilesCmd::Stat { name } => {
            let f = client.file_info(id, &name).await?;
            if json {
                output::json(&serde_json::to_value(&f)?);
            } else {
                print_listing(std::slice::from_ref(&f));
            }
        }
        FilesCmd::Put { local, path, force } => {
            if !force {
                refuse_replacing(client, id, &local, path.as_deref()).await?;
            }
            let mut done = Vec::new();
            for file in &local {
                done.push(put(client, id, file, path.as_deref(), json).await?);
            }
            if json {
                output::json(&serde_json::to_value(&done)?);
            }
        }
        FilesCmd::Get {
            names, out, force, ..
        } => {
            let out = out.unwrap_or_else(|| PathBuf::from("."));
            let mut written = Vec::new();
            for name in &names {
                written.push(get(client, id, name, &out, force, json).await?);
            }
            if json {
                output::json(&json!(written));
            }
        }
        FilesCmd::Rm { names } => {
            for name in &names {
                client.delete_file(id, name).await?;
                if !json {
                    eprintln!("deleted {name}");
                }
            }
            if json {
                output::json(&json!({"deleted": names}));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What can be checked of a file command before the pool is reached: `put`'s
/// local files are files; `get`'s folder ([`destination`], then set as its
/// `out`) exists, or is created with `--parents` or after asking. `None` when
/// the person declined to create the folder (said).
///
/// # Errors
///
/// A local folder or missing file given to `put`; `get`'s folder missing
/// while nobody can be asked and `--parents` is not given, or not creatable.
fn checked_locally(cmd: FilesCmd) -> anyhow::Result<Option<FilesCmd>> {
    match cmd {
        FilesCmd::Put {
            ref local,
            ref path,
            ..
        } => {
            for file in local {
                uploadable(file, path.as_deref())?;
            }
            Ok(Some(cmd))
        }
        FilesCmd::Get {
            names,
            out,
            force,
            parents,
        } => {
            let (names, out) = destination(names, out)?;
            if !out.exists() && !folder_made(&out, parents)? {
                return Ok(None);
            }
            Ok(Some(FilesCmd::Get {
                names,
                out: Some(out),
                force,
                parents,
            }))
        }
        other => Ok(Some(other)),
    }
}

/// Refuses a local path `files put` cannot upload: a folder (named as such,
/// with what to type instead) or a path that is not there.
fn uploadable(file: &Path, path: Option<&str>) -> anyhow::Result<()> {
    let meta = std::fs::metadata(file).with_context(|| format!("reading {}", file.display()))?;
    if meta.is_dir() {
        let into = path.map_or_else(String::new, |p| format!(" --path {p}"));
        bail!(
            "{dir} is a folder; `files put` uploads files: use `sessionpad files put{into} {dir}/*` \
             for the files in it (sub-folders are not uploaded)",
            dir = file.display()
        );
    }
    Ok(())
}

/// Creates the missing download folder `out` with its parents when `parents`
/// is given or the person agrees; false when they decline (said).
///
/// # Errors
///
/// Nobody can be asked (standard input is not a terminal) and `parents` is
/// not given (the flag is named); the folder cannot be created.
fn folder_made(out: &Path, parents: bool) -> anyhow::Result<bool> {
    if !parents {
        let question = format!("{} does not exist; create it?", out.display());
        match output::confirm(&question)? {
            Some(true) => {}
            Some(false) => {
                eprintln!("nothing downloaded");
                return Ok(false);
            }
            None => bail!(
                "{} does not exist: give --parents (-p) to create it (standard input is not \
                 a terminal, so nobody can be asked)",
                out.display()
            ),
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    Ok(true)
}

/// Refuses an upload that would replace a file the session already has in
/// folder `path` (one listing of that folder for all of `local`). A folder
/// that is not there yet holds nothing to replace.
///
/// # Errors
///
/// A local file's name is in the listing (`--force` named), or the listing
/// failed, so whether one would be replaced cannot be told (said, with
/// `--force`).
async fn refuse_replacing(
    client: &SessionClient,
    id: &str,
    local: &[PathBuf],
    path: Option<&str>,
) -> anyhow::Result<()> {
    let listed = match client.list_files(id, path, false).await {
        Ok(listed) => listed,
        Err(crate::client::ClientError::NotFound { .. }) => return Ok(()),
        // The upload itself is not possible there either (a folder in
        // api-version family A): said as the upload would say it.
        Err(e @ crate::client::ClientError::NotSupported { .. }) => return Err(e.into()),
        Err(e) => bail!(
            "cannot tell whether the session already has these files, as its listing of {} \
             failed ({e}); `files put --force` uploads them anyway, replacing any",
            data_folder(path)
        ),
    };
    for file in local {
        let name = upload_name(file)?;
        if listed.iter().any(|f| f.path() == name) {
            bail!(
                "{} exists in the session's {}; use --force to replace it",
                crate::text::names::escape(name),
                data_folder(path)
            );
        }
    }
    Ok(())
}

/// The name a local file is uploaded under: its own file name.
fn upload_name(file: &Path) -> anyhow::Result<&str> {
    file.file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} has no usable file name", file.display()))
}

/// The remote names and the local folder of `files get`: `--out` when given
/// (every argument is then a name), else the last of two or more arguments,
/// else the current folder.
///
/// # Errors
///
/// The folder exists and is not a folder (nothing is downloaded then).
fn destination(
    mut names: Vec<String>,
    out: Option<PathBuf>,
) -> anyhow::Result<(Vec<String>, PathBuf)> {
    let out = match out {
        Some(dir) => dir,
        None if names.len() >= 2 => PathBuf::from(names.pop().unwrap_or_default()),
        None => PathBuf::from("."),
    };
    if out.exists() && !out.is_dir() {
        bail!(
            "{} is not a folder: `files get NAME... DIR` downloads into the folder DIR",
            out.display()
        );
    }
    Ok((names, out))
}

/// A folder of the session as a person reads it: `/mnt/data`, or
/// `/mnt/data/sub` for `--path sub` (or `--path /mnt/data/sub`).
fn data_folder(path: Option<&str>) -> String {
    let rel = path
        .map(|p| p.strip_prefix("/mnt/data").unwrap_or(p).trim_matches('/'))
        .unwrap_or_default();
    if rel.is_empty() {
        "/mnt/data".to_string()
    } else {
        format!("/mnt/data/{}", crate::text::names::escape(rel))
    }
}

fn print_listing(files: &[RemoteFile]) {
    for f in files {
        let size = f.size.map_or_else(|| "-".to_string(), output::human_size);
        let modified = f.modified.map_or_else(
            || "-".to_string(),
            |m| m.format("%Y-%m-%d %H:%M:%S").to_string(),
        );
        let mut name = f.path();
        if f.kind == FileKind::Directory {
            name.push('/');
        }
        // Names come from the session: never let them drive the terminal;
        // shown escaped as `ls -b` shows them.
        output::out(&format!(
            "{size:>10}  {modified}  {}\n",
            crate::text::names::escape(&name)
        ));
    }
}

/// A progress bar on standard error when it is a terminal (and not `--json`),
/// hidden otherwise.
fn bar(total: Option<u64>, label: &str, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(t) => ProgressBar::new(t),
        None => ProgressBar::no_length(),
    };
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(crate::text::names::escape(label));
    bar
}

async fn put(
    client: &SessionClient,
    id: &str,
    file: &Path,
    path: Option<&str>,
    json: bool,
) -> anyhow::Result<RemoteFile> {
    let name = upload_name(file)?;
    let size = std::fs::metadata(file)
        .with_context(|| format!("reading {}", file.display()))?
        .len();
    let pb = bar(Some(size), name, json);
    let progress = |done: u64, _total: u64| pb.set_position(done);
    let result = client.upload_file(id, file, name, path, &progress).await;
    pb.finish_and_clear();
    let remote = result?;
    if !json {
        eprintln!(
            "uploaded {} ({})",
            crate::text::names::escape(&remote.path()),
            output::human_size(size)
        );
    }
    Ok(remote)
}

/// Downloads `name` into the existing folder `out` under a safe local name,
/// through a temporary file in the same folder that is renamed into place only
/// when complete; an existing file is replaced only with `force`. The file
/// gets the mode a new file gets (0666 less the umask, as `cp` and `curl -O`
/// give), not the temporary file's 0600.
async fn get(
    client: &SessionClient,
    id: &str,
    name: &str,
    out: &Path,
    force: bool,
    json: bool,
) -> anyhow::Result<PathBuf> {
    let dest = localname::local_path(out, name);
    if dest.exists() && !force {
        bail!("{} exists; use --force to replace it", dest.display());
    }
    let tmp = tempfile::Builder::new()
        .prefix(".sessionpad-download-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(out)
        .with_context(|| format!("creating a temporary file in {}", out.display()))?;
    let pb = bar(None, name, json);
    let progress = |done: u64, total: Option<u64>| {
        if let Some(t) = total {
            pb.set_length(t);
        }
        pb.set_position(done);
    };
    // Large buffered writes: each tokio file write is a hop to a blocking thread.
    let file = tokio::fs::File::create(tmp.path()).await?;
    let mut writer = tokio::io::BufWriter::with_capacity(1 << 20, file);
    let result = client.download_file(id, name, &mut writer, &progress).await;
    pb.finish_and_clear();
    let bytes = result?;
    tokio::io::AsyncWriteExt::flush(&mut writer).await?;
    drop(writer);
    if force {
        tmp.persist(&dest)
            .with_context(|| format!("writing {}", dest.display()))?;
    } else {
        tmp.persist_noclobber(&dest)
            .with_context(|| format!("{} appeared meanwhile; not replaced", dest.display()))?;
    }
    if !json {
        eprintln!(
            "downloaded {} → {} ({})",
            crate::text::names::escape(name),
            dest.display(),
            output::human_size(bytes)
        );
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn the_last_of_several_arguments_is_the_folder_unless_out_is_given() {
        let (n, out) = destination(names(&["a"]), None).unwrap();
        assert_eq!((n, out), (names(&["a"]), PathBuf::from(".")));
        let (n, out) = destination(names(&["a", "b", "dir"]), None).unwrap();
        assert_eq!((n, out), (names(&["a", "b"]), PathBuf::from("dir")));
        let (n, out) = destination(names(&["a", "b"]), Some("o".into())).unwrap();
        assert_eq!((n, out), (names(&["a", "b"]), PathBuf::from("o")));
    }

    #[test]
    fn folders_are_named_below_mnt_data() {
        assert_eq!(data_folder(None), "/mnt/data");
        assert_eq!(data_folder(Some("/mnt/data/")), "/mnt/data");
        assert_eq!(data_folder(Some("sub/")), "/mnt/data/sub");
        assert_eq!(data_folder(Some("/mnt/data/a/b")), "/mnt/data/a/b");
    }
}
