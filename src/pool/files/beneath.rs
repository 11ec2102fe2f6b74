//! Handle-based access to a session folder: every name is resolved beneath an open
//! handle of the folder with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//! (Linux 5.6+), so no symbolic link, `..` or race can take a file route out of
//! it, and every file is checked on the handle it was opened as (`fstat`), never
//! by a path looked at earlier.
//!
//! The session's code owns the folder and may swap anything in it at any moment
//! (a file for a link to a host file, a folder for a link to a host folder), so:
//!
//! - a symbolic link inside the folder is followed only while the kernel resolves
//!   it beneath the folder handle; one leading out (absolute, or `..` above the
//!   folder) is refused with `EXDEV` ([`FsError::Outside`], 400);
//! - only regular files and folders are read or written. Names are looked at with
//!   `O_PATH` (which opens nothing) and files opened with `O_NONBLOCK`, so a FIFO,
//!   socket or device is answered with [`FsError::Unsupported`] (400) and never
//!   blocks a thread;
//! - what the routes create (folders, upload files) is created relative to a
//!   folder handle, never through a link at the final name, and, when the pool
//!   runs as root for a folder owned by another user, given to that user with
//!   `fchown` on the new handle ([`Root::owner`]);
//! - deletion is `unlinkat` on the containing folder's handle; a folder is emptied
//!   through handles opened with `RESOLVE_NO_SYMLINKS`, so a link is removed
//!   itself and never followed.
//!
//! Errors are the [`FsError`]s the routes turn into Azure errors (`aca-api.md` §6).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, ResolveFlags, Stat, Uid};
use rustix::io::Errno;

use super::paths::{FsError, RelPath};

/// How every name below the session folder is resolved: beneath the folder
/// handle, never through `/proc` magic links.
const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// How one component that must not be a link is opened (a folder just made, a
/// folder being emptied or listed recursively).
const NO_LINKS: ResolveFlags = BENEATH.union(ResolveFlags::NO_SYMLINKS);

/// Flags of every open: no fd leaks into kernels, no blocking open of a FIFO,
/// never a controlling terminal.
const OPEN: OFlags = OFlags::CLOEXEC
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY);

/// How often an `openat2` that answered `EAGAIN` (a rename raced a `..` in a
/// link's target) is tried again before giving up.
const RETRIES: usize = 16;

/// Deepest folder nesting walked by recursive listings and deletes (levels below
/// the folder named in the request). Deeper folders are not listed; a delete of
/// a deeper tree fails with 500.
pub(crate) const MAX_DEPTH: usize = 128;

/// What a name is, from `fstat`/`fstatat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link (only seen when links are not followed).
    Link,
    /// Anything else, described for an error message (e.g. "a FIFO (named pipe)").
    Other(&'static str),
}

impl Kind {
    /// The kind of a `st_mode`.
    fn of(mode: u32) -> Self {
        match FileType::from_raw_mode(mode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Link,
            FileType::Fifo => Kind::Other("a FIFO (named pipe)"),
            FileType::Socket => Kind::Other("a socket"),
            FileType::CharacterDevice => Kind::Other("a character device"),
            FileType::BlockDevice => Kind::Other("a block device"),
            FileType::Unknown => Kind::Other("of an unknown type"),
        }
    }
}

/// What the routes report of a file or folder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    /// What it is.
    pub(crate) kind: Kind,
    /// Size in bytes (of the folder inode for a folder).
    pub(crate) size: u64,
    /// Last modification time.
    pub(crate) modified: SystemTime,
}

impl Meta {
    /// From a `stat` result.
    fn of(st: &Stat) -> Self {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // nanoseconds: 0..10^9
        let secs = Duration::new(st.st_mtime.unsigned_abs(), st.st_mtime_nsec as u32);
        let modified = if st.st_mtime >= 0 {
            UNIX_EPOCH.checked_add(secs)
        } else {
            UNIX_EPOCH.checked_sub(secs)
        };
        Self {
            kind: Kind::of(st.st_mode),
            size: u64::try_from(st.st_size).unwrap_or(0),
            modified: modified.unwrap_or(UNIX_EPOCH),
        }
    }

    /// The `fstat` of an open handle.
    pub(crate) fn of_fd(fd: impl AsFd) -> io::Result<Self> {
        Ok(Self::of(&rustix::fs::fstat(fd)?))
    }

    /// Whether it is a folder.
    pub(crate) fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// The error of a failed resolution of `shown` (the name as the session sees it).
fn fs_error(e: Errno, shown: String) -> FsError {
    match e {
        Errno::NOENT => FsError::NotFound(shown),
        Errno::NOTDIR => FsError::NotADirectory(shown),
        Errno::ISDIR => FsError::IsADirectory(shown),
        // RESOLVE_BENEATH: an absolute link or a `..` above the folder.
        Errno::XDEV => FsError::Outside(shown),
        Errno::LOOP => FsError::Loop(shown),
        // A socket (or a device without a driver) opened for reading.
        Errno::NXIO => FsError::Unsupported(shown, "not a regular file"),
        Errno::NOSYS => FsError::Io(
            shown,
            io::Error::other("this kernel has no openat2 (Linux 5.6 or later is needed)"),
        ),
        e => FsError::Io(shown, e.into()),
    }
}

/// `openat2(dir, path, flags, mode, resolve)`, tried again on `EAGAIN`.
fn openat2(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags, mode, resolve) {
            Err(Errno::AGAIN | Errno::INTR) if tries < RETRIES => tries += 1,
            r => return r,
        }
    }
}

/// Opens the folder `name` directly inside `dir`, refusing a link there
/// (`ELOOP`) and anything that is not a folder (`ENOTDIR`). For walking trees
/// the session may be changing.
pub(crate) fn open_child_dir(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    openat2(
        dir,
        name,
        OPEN | OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
        Mode::empty(),
        NO_LINKS,
    )
}

/// Opens the regular file `name` directly inside `dir` for reading, refusing
/// a link there (`ELOOP`); a FIFO, socket or device is opened without
/// blocking (`O_NONBLOCK`), and the caller checks the handle's `fstat`. For
/// reading files of a tree the session may be changing.
pub(crate) fn open_child_file(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    openat2(
        dir,
        name,
        OPEN | OFlags::RDONLY | OFlags::NOFOLLOW,
        Mode::empty(),
        NO_LINKS,
    )
}

/// What `name` directly inside `dir` is, without following a link.
pub(crate) fn lstat_child(dir: BorrowedFd<'_>, name: &str) -> Result<Meta, Errno> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map(|st| Meta::of(&st))
}

/// The names in the folder `dir` (not `.` and `..`; names that are not UTF-8 are
/// left out), sorted.
pub(crate) fn read_names(dir: BorrowedFd<'_>) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name != "." && name != ".." {
            names.push(name.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// The open session folder: every file route resolves its names beneath this
/// handle.
#[derive(Debug)]
pub(crate) struct Root {
    /// The folder, opened for reading.
    fd: OwnedFd,
    /// Who gets what the routes create: the folder's owner, when the pool runs as
    /// root (effective uid 0) and the folder belongs to another user (the
    /// unprivileged user its kernel runs as); `None` otherwise.
    owner: Option<(Uid, Gid)>,
}

impl Root {
    /// Opens the session folder `folder` (a path the pool made; the session cannot
    /// replace it). Errors: it cannot be opened or is not a folder.
    pub(crate) fn open(folder: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(
            folder,
            OPEN | OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )?;
        let st = rustix::fs::fstat(&fd)?;
        let owner = (rustix::process::geteuid().is_root() && st.st_uid != 0)
            .then(|| (Uid::from_raw(st.st_uid), Gid::from_raw(st.st_gid)));
        Ok(Self { fd, owner })
    }

    /// The folder's handle.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Who gets what the routes create, as raw (uid, gid) (see the field).
    #[cfg(test)]
    pub(crate) fn owner(&self) -> Option<(u32, u32)> {
        self.owner.map(|(u, g)| (u.as_raw(), g.as_raw()))
    }

    /// Gives the new file or folder `fd` to the folder's owner when the pool runs
    /// as root ([`Root::owner`]); nothing otherwise.
    pub(crate) fn give(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        match self.owner {
            Some((u, g)) => Ok(rustix::fs::fchown(fd, Some(u), Some(g))?),
            None => Ok(()),
        }
    }

    /// Opens `rel` beneath the folder with `flags`, following links that stay
    /// inside.
    fn open_at(&self, rel: &RelPath, flags: OFlags) -> Result<OwnedFd, FsError> {
        let path = if rel.is_empty() {
            ".".to_string()
        } else {
            rel.as_relative()
        };
        openat2(self.fd(), &path, flags, Mode::empty(), BENEATH)
            .map_err(|e| fs_error(e, rel.display()))
    }

    /// The existing folder `rel` (empty: the session folder itself), opened for
    /// reading. Errors: [`FsError::NotFound`], [`FsError::NotADirectory`],
    /// [`FsError::Outside`], [`FsError::Loop`].
    pub(crate) fn dir(&self, rel: &RelPath) -> Result<OwnedFd, FsError> {
        self.open_at(rel, OPEN | OFlags::RDONLY | OFlags::DIRECTORY)
    }

    /// What `rel` is, following links that stay inside; opens nothing (`O_PATH`).
    /// Errors as [`Root::dir`].
    pub(crate) fn stat(&self, rel: &RelPath) -> Result<Meta, FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC)?;
        Meta::of_fd(&fd).map_err(|e| FsError::Io(rel.display(), e))
    }

    /// What the name `rel` itself is (a link is not followed; its folder is
    /// resolved as in [`Root::dir`]).
    pub(crate) fn lstat(&self, rel: &RelPath) -> Result<Meta, FsError> {
        let Some(name) = rel.file_name() else {
            return self.stat(rel);
        };
        let dir = self.dir(&rel.parent_path())?;
        lstat_child(dir.as_fd(), name).map_err(|e| fs_error(e, rel.display()))
    }

    /// Opens the regular file `rel` for reading; returns it with its `fstat`.
    /// Errors: [`FsError::IsADirectory`], [`FsError::Unsupported`] for a FIFO,
    /// socket or device (which is never opened for reading), and those of
    /// [`Root::dir`].
    pub(crate) fn open_file(&self, rel: &RelPath) -> Result<(std::fs::File, Meta), FsError> {
        let refuse = |kind: Kind| match kind {
            Kind::File => Ok(()),
            Kind::Dir => Err(FsError::IsADirectory(rel.display())),
            Kind::Link => Err(FsError::Loop(rel.display())),
            Kind::Other(what) => Err(FsError::Unsupported(rel.display(), what)),
        };
        // Look first without opening: a device's driver is never asked to open.
        refuse(self.stat(rel)?.kind)?;
        // The name may have changed since: check what was actually opened.
        let fd = self.open_at(rel, OPEN | OFlags::RDONLY)?;
        let meta = Meta::of_fd(&fd).map_err(|e| FsError::Io(rel.display(), e))?;
        refuse(meta.kind)?;
        Ok((std::fs::File::from(fd), meta))
    }

    /// The folder `rel`, made with its missing parents (each made by `mkdirat`
    /// on its parent's handle and given to the folder's owner), opened for
    /// reading. Errors as [`Root::dir`]; a name raced into a link while being
    /// made is [`FsError::Loop`].
    pub(crate) fn make_dir(&self, rel: &RelPath) -> Result<OwnedFd, FsError> {
        let parts = rel.components();
        let mut cur: Option<OwnedFd> = None;
        for i in 0..parts.len() {
            let prefix = RelPath::from_components(&parts[..=i]);
            let next = match self.dir(&prefix) {
                Ok(fd) => fd,
                Err(FsError::NotFound(_)) => {
                    let parent = cur.as_ref().map_or(self.fd(), |f| f.as_fd());
                    self.make_child_dir(parent, &parts[i], &prefix)?
                }
                Err(e) => return Err(e),
            };
            cur = Some(next);
        }
        match cur {
            Some(fd) => Ok(fd),
            None => self.dir(rel),
        }
    }

    /// Makes the folder `name` in `parent` (or finds one that appeared there
    /// meanwhile) and opens it without following a link; `rel` is its whole name.
    fn make_child_dir(
        &self,
        parent: BorrowedFd<'_>,
        name: &str,
        rel: &RelPath,
    ) -> Result<OwnedFd, FsError> {
        let made = match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => true,
            Err(Errno::EXIST) => false,
            Err(e) => return Err(fs_error(e, rel.display())),
        };
        let fd = open_child_dir(parent, name).map_err(|e| fs_error(e, rel.display()))?;
        if made {
            self.give(fd.as_fd())
                .map_err(|e| FsError::Io(rel.display(), e))?;
        }
        Ok(fd)
    }

    /// Removes `rel` (not the session folder): a folder with everything in it, a
    /// link itself, a FIFO or socket by its name (nothing is opened but folders).
    /// Errors: [`FsError::NotFound`], those of [`Root::dir`] for its folder, 500
    /// for a tree deeper than [`MAX_DEPTH`] or one the session keeps filling.
    pub(crate) fn remove(&self, rel: &RelPath) -> Result<(), FsError> {
        let Some(name) = rel.file_name() else {
            return Err(FsError::IsADirectory(rel.display()));
        };
        let parent = self.dir(&rel.parent_path())?;
        let meta = lstat_child(parent.as_fd(), name).map_err(|e| fs_error(e, rel.display()))?;
        let done = if meta.is_dir() {
            remove_tree(parent.as_fd(), name, 0)
        } else {
            rustix::fs::unlinkat(parent.as_fd(), name, AtFlags::empty()).map_err(io::Error::from)
        };
        done.map_err(|e| match Errno::from_io_error(&e) {
            Some(Errno::NOENT) => FsError::NotFound(rel.display()),
            _ => FsError::Io(rel.display(), e),
        })
    }
}

/// Removes the folder `name` in `parent` and everything in it, through handles
/// that never follow a link; `depth` is its level below the request's name.
fn remove_tree(parent: BorrowedFd<'_>, name: &str, depth: usize) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(io::Error::other(format!(
            "folders nested more than {MAX_DEPTH} deep"
        )));
    }
    let dir = match open_child_dir(parent, name) {
        Ok(fd) => fd,
        // Swapped for a link or a file meanwhile: remove that name instead.
        Err(Errno::LOOP | Errno::NOTDIR) => {
            return Ok(rustix::fs::unlinkat(parent, name, AtFlags::empty())?);
        }
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    // The session may add files while we delete: a few passes, then give up.
    let mut passes = 0;
    loop {
        for child in read_names(dir.as_fd())? {
            let r = match lstat_child(dir.as_fd(), &child) {
                Ok(m) if m.is_dir() => remove_tree(dir.as_fd(), &child, depth + 1),
                Ok(_) => rustix::fs::unlinkat(dir.as_fd(), child.as_str(), AtFlags::empty())
                    .map_err(io::Error::from),
                Err(e) => Err(e.into()),
            };
            match r {
                Err(e) if Errno::from_io_error(&e) == Some(Errno::NOENT) => {}
                r => r?,
            }
        }
        match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => return Ok(()),
            Err(Errno::NOTEMPTY) if passes < 3 => passes += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, symlink};
    use std::time::Instant;

    use super::*;

    /// A session folder `s` beside a host folder `host` holding `secret.txt`.
    fn setup() -> (tempfile::TempDir, Root) {
        let t = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(t.path().join("s")).expect("s");
        std::fs::create_dir(t.path().join("host")).expect("host");
        std::fs::write(t.path().join("host/secret.txt"), "secret").expect("secret");
        std::fs::write(t.path().join("s/in.txt"), "in").expect("in");
        std::fs::create_dir(t.path().join("s/sub")).expect("sub");
        let root = Root::open(&t.path().join("s")).expect("root");
        (t, root)
    }

    fn rel(s: &str) -> RelPath {
        RelPath::parse_name(s).expect(s)
    }

    fn read(root: &Root, name: &str) -> Result<String, FsError> {
        let (file, meta) = root.open_file(&rel(name))?;
        let text = std::io::read_to_string(file).expect("read");
        assert_eq!(meta.size, text.len() as u64);
        Ok(text)
    }

    #[test]
    fn links_are_followed_only_while_they_stay_inside() {
        let (t, root) = setup();
        let s = t.path().join("s");
        symlink("in.txt", s.join("good")).expect("link");
        symlink("../in.txt", s.join("sub/up")).expect("link");
        symlink("sub", s.join("subdir")).expect("link");
        symlink(t.path().join("host/secret.txt"), s.join("abs")).expect("link");
        symlink("../host/secret.txt", s.join("rel")).expect("link");
        symlink(t.path().join("host"), s.join("hostdir")).expect("link");
        symlink("missing", s.join("dangling")).expect("link");
        symlink("loop", s.join("loop")).expect("link");
        assert_eq!(read(&root, "good").expect("good"), "in");
        assert_eq!(read(&root, "sub/up").expect("up"), "in");
        assert_eq!(read(&root, "subdir/up").expect("via dir link"), "in");
        for out in ["abs", "rel", "hostdir/secret.txt", "sub/../rel"] {
            let Ok(name) = RelPath::parse_name(out) else {
                continue; // `..` never gets this far.
            };
            assert!(
                matches!(root.open_file(&name), Err(FsError::Outside(_))),
                "{out}"
            );
            assert!(
                matches!(root.stat(&name), Err(FsError::Outside(_))),
                "{out}"
            );
        }
        assert!(matches!(
            root.dir(&rel("hostdir")),
            Err(FsError::Outside(_))
        ));
        assert!(matches!(
            root.make_dir(&rel("hostdir/new")),
            Err(FsError::Outside(_))
        ));
        assert!(!t.path().join("host/new").exists());
        assert!(matches!(read(&root, "dangling"), Err(FsError::NotFound(_))));
        assert!(matches!(read(&root, "loop"), Err(FsError::Loop(_))));
        assert!(matches!(
            read(&root, "in.txt/x"),
            Err(FsError::NotADirectory(_))
        ));
        assert!(matches!(read(&root, "sub"), Err(FsError::IsADirectory(_))));
        // The name itself, unfollowed.
        assert_eq!(root.lstat(&rel("abs")).expect("lstat").kind, Kind::Link);
        assert_eq!(root.stat(&rel("subdir")).expect("stat").kind, Kind::Dir);
    }

    #[test]
    fn fifos_and_sockets_are_refused_without_blocking() {
        let (t, root) = setup();
        let s = t.path().join("s");
        let dir = root.dir(&RelPath::default()).expect("dir");
        rustix::fs::mknodat(&dir, "pipe", FileType::Fifo, Mode::from_raw_mode(0o644), 0)
            .expect("mkfifo");
        let _sock = std::os::unix::net::UnixListener::bind(s.join("sock")).expect("socket");
        symlink("pipe", s.join("pipe_link")).expect("link");
        let started = Instant::now();
        for (name, what) in [
            ("pipe", "a FIFO (named pipe)"),
            ("pipe_link", "a FIFO (named pipe)"),
            ("sock", "a socket"),
        ] {
            match root.open_file(&rel(name)) {
                Err(FsError::Unsupported(_, w)) => assert_eq!(w, what, "{name}"),
                other => panic!("{name}: {other:?}"),
            }
            assert_eq!(root.stat(&rel(name)).expect("stat").kind, Kind::Other(what));
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no blocking open"
        );
        let wire =
            FsError::Unsupported("/mnt/data/pipe".into(), "a FIFO (named pipe)").into_wire(false);
        assert_eq!(wire.code, "SessionRequestValidationFailed");
        assert!(wire.message.contains("FIFO"), "{}", wire.message);
        // A listing leaves them out; deleting removes the names.
        let listed =
            super::super::entry::list(&root, &RelPath::default(), true, false).expect("list");
        let names: Vec<&str> = listed.iter().map(|e| e.rel.as_str()).collect();
        assert_eq!(names, ["in.txt", "sub"]);
        for name in ["pipe", "pipe_link", "sock"] {
            root.remove(&rel(name)).expect(name);
            assert!(std::fs::symlink_metadata(s.join(name)).is_err(), "{name}");
        }
    }

    #[test]
    fn folders_are_made_beneath_and_trees_removed_without_following_links() {
        let (t, root) = setup();
        let s = t.path().join("s");
        let made = root.make_dir(&rel("a/b/c")).expect("make");
        assert!(Meta::of_fd(&made).expect("fstat").is_dir());
        assert!(s.join("a/b/c").is_dir());
        root.make_dir(&rel("a/b")).expect("existing");
        std::fs::write(s.join("a/b/c/f.txt"), "f").expect("f");
        symlink(t.path().join("host"), s.join("a/hostdir")).expect("link");
        symlink(t.path().join("host/secret.txt"), s.join("a/b/secret")).expect("link");
        root.remove(&rel("a")).expect("remove tree");
        assert!(!s.join("a").exists());
        assert_eq!(
            std::fs::read_to_string(t.path().join("host/secret.txt")).expect("kept"),
            "secret"
        );
        // A link is removed itself, wherever it leads.
        symlink(t.path().join("host"), s.join("out")).expect("link");
        root.remove(&rel("out")).expect("remove link");
        assert!(t.path().join("host/secret.txt").exists());
        assert!(matches!(
            root.remove(&rel("out")),
            Err(FsError::NotFound(_))
        ));
        assert!(matches!(
            root.remove(&RelPath::default()),
            Err(FsError::IsADirectory(_))
        ));
        // A file on the way is not a folder.
        assert!(matches!(
            root.make_dir(&rel("in.txt/x")),
            Err(FsError::NotADirectory(_))
        ));
    }

    #[test]
    fn what_is_made_belongs_to_the_folder_owner_when_running_as_root() {
        let (t, _) = setup();
        let s = t.path().join("s");
        let root = Root::open(&s).expect("root");
        if !rustix::process::geteuid().is_root() {
            assert_eq!(root.owner(), None, "not root: nothing is given away");
            return;
        }
        assert_eq!(
            root.owner(),
            None,
            "a folder owned by root keeps root's files"
        );
        std::os::unix::fs::chown(&s, Some(4242), Some(4343)).expect("chown");
        let root = Root::open(&s).expect("root");
        assert_eq!(root.owner(), Some((4242, 4343)));
        root.make_dir(&rel("x/y")).expect("make");
        for p in ["x", "x/y"] {
            let m = std::fs::metadata(s.join(p)).expect(p);
            assert_eq!((m.uid(), m.gid()), (4242, 4343), "{p}");
        }
        // An existing folder is left as it is.
        let m = std::fs::metadata(s.join("sub")).expect("sub");
        assert_eq!(m.uid(), 0);
    }
}
