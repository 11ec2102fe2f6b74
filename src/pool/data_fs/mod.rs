//! A `/mnt/data` of its own size for each session: a tmpfs of
//! [`crate::protocol::limits::Limits::data_bytes`] on the session's folder. As root, the
//! pool mounts it on the host ([`host`]); otherwise in a user and mount namespace
//! of the pool's own, where kernels start ([`namespace`]). Where neither works (no
//! sandbox, or no user namespaces), the folder is an ordinary one: each file is
//! limited by `RLIMIT_FSIZE`, the total is not, and the pool's info says so.

pub mod host;
pub mod namespace;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use self::namespace::Holder;
use super::sandbox::Sandbox;

/// How this pool gives session folders a size.
#[derive(Debug, Clone)]
pub enum DataFs {
    /// A tmpfs mounted on the host (the pool runs as root); owned by the
    /// session's uid.
    Host,
    /// A tmpfs mounted inside the holder's namespace (see [`namespace`]).
    Namespace(Arc<Holder>),
    /// Ordinary folders, not limited in total.
    Plain,
}

impl DataFs {
    /// How this machine lets the pool size the folders of `sandbox`'s sessions:
    /// on the host as root, in a holder's namespace otherwise when kernels start
    /// there (checked once, a few milliseconds), ordinary folders without a
    /// sandbox or when that fails (logged).
    pub fn detect(sandbox: Option<&Sandbox>) -> Self {
        let Some(sandbox) = sandbox else {
            return Self::Plain;
        };
        if sandbox.drops_root() {
            return Self::Host;
        }
        let holder = match Holder::start() {
            Ok(h) => Arc::new(h),
            Err(e) => {
                tracing::info!("no user namespace for sized /mnt/data folders: {e}");
                return Self::Plain;
            }
        };
        match sandbox.works_in(&holder) {
            Ok(()) => Self::Namespace(holder),
            Err(why) => {
                tracing::info!("kernels cannot start in the pool's user namespace: {why}");
                Self::Plain
            }
        }
    }

    /// What enforces the size, for the pool's info (`tmpfs`, `tmpfs in a user
    /// namespace`), or `None` for ordinary folders.
    pub fn mechanism(&self) -> Option<&'static str> {
        match self {
            Self::Host => Some("tmpfs"),
            Self::Namespace(_) => Some("tmpfs in the pool's user namespace"),
            Self::Plain => None,
        }
    }

    /// Gives the empty folder `folder` a tmpfs of `bytes`, owned by `uid` (host
    /// mounts; the namespace's belong to the pool's uid, which kernels run as
    /// there); nothing for ordinary folders.
    ///
    /// # Errors
    ///
    /// The OS's.
    pub fn mount(&self, folder: &Path, bytes: u64, uid: u32) -> std::io::Result<()> {
        match self {
            Self::Host => host::mount(folder, bytes, uid),
            Self::Namespace(holder) => holder.mount(folder, bytes),
            Self::Plain => Ok(()),
        }
    }

    /// Removes the tmpfs on `folder`, if any (its pages are freed).
    pub fn unmount(&self, folder: &Path) {
        match self {
            Self::Host => host::unmount(folder),
            Self::Namespace(holder) => holder.unmount(folder),
            Self::Plain => {}
        }
    }

    /// Where the pool reaches the files of `folder` (the file routes): the
    /// folder itself, or its view through the holder.
    pub fn view(&self, folder: &Path) -> PathBuf {
        match self {
            Self::Namespace(holder) => holder.view(folder),
            Self::Host | Self::Plain => folder.to_path_buf(),
        }
    }

    /// The holder that kernels must start in, if any.
    pub fn holder(&self) -> Option<&Arc<Holder>> {
        match self {
            Self::Namespace(holder) => Some(holder),
            Self::Host | Self::Plain => None,
        }
    }
}
