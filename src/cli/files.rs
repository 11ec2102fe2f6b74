//! `sessionpad files ls|put|get|rm|stat`: the files of the session's `/mnt/data`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use super::target::TargetOpt;

/// File commands.
#[derive(Debug, Subcommand)]
pub enum FilesCmd {
    /// List files (in a folder with --path, all below it with --recursive).
    Ls {
        /// Folder below /mnt/data.
        #[arg(long)]
        path: Option<String>,
        /// Include every sub-folder (api-version 2025-10-02-preview).
        #[arg(long)]
        recursive: bool,
    },
    /// Upload local files.
    Put {
        /// Local files.
        #[arg(required = true)]
        local: Vec<PathBuf>,
        /// Folder below /mnt/data to put them in.
        #[arg(long)]
        path: Option<String>,
    },
    /// Download files into a local folder (never overwriting without --force).
    Get {
        /// Remote file names.
        #[arg(required = true)]
        names: Vec<String>,
        /// Local folder (default: the current directory).
        #[arg(long, short = 'o', default_value = ".")]
        out: PathBuf,
        /// Replace existing local files.
        #[arg(long)]
        force: bool,
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
pub async fn run(_cmd: FilesCmd, _target: &TargetOpt) -> anyhow::Result<ExitCode> {
    anyhow::bail!("file commands are being written")
}
