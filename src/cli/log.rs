//! `sessionpad log [ID] [--since T] [--tail N] [--all] [--json]`,
//! `sessionpad log --sessions`: the calls the local pool recorded in the
//! flight recorder's ledger ([`crate::ledger`]), like `kubectl logs`: each
//! cell's time, client, code and outputs, every piece of session text
//! sanitised ([`crate::text::sanitize::plain`]). Without an identifier it
//! lists the recorded sessions (as `--sessions`), unless `--all`, `--since`
//! or `--tail` ask for calls: then every identifier's, most recently active
//! first. `--json` prints exactly what was recorded, one JSON object per call
//! and line, in recording order.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use chrono::{DateTime, Utc};
use clap::Args;

use super::target::TargetOpt;
use crate::ledger::{self, Query};
use crate::protocol::record::{CallKind, Entry};
use crate::text::sanitize::plain;

/// Options of `sessionpad log`.
#[derive(Debug, Args)]
pub struct LogOpt {
    /// The session identifier (or --identifier). Without one, the recorded
    /// sessions are listed (as --sessions) unless --all, --since or --tail
    /// ask for calls.
    pub id: Option<String>,
    /// Only calls since T: a time (2026-05-01T10:00:00Z) or a duration before
    /// now (90s, 10m, 2h, 3d).
    #[arg(long, value_name = "T", value_parser = parse_since)]
    pub since: Option<DateTime<Utc>>,
    /// Only the last N calls (of the identifier, or in all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tail: Option<u64>,
    /// List the recorded sessions instead (pool, identifier, client, cells,
    /// calls, first and last activity), most recently active first.
    #[arg(long, conflicts_with_all = ["id", "since", "tail", "follow", "all"])]
    pub sessions: bool,
    /// Without an identifier: every call of every session, grouped by
    /// session, most recently active first (all outputs in full).
    #[arg(long, conflicts_with = "id")]
    pub all: bool,
    /// After the recorded calls, keep printing each call as the running local
    /// pool (a serve or the background pool, or --endpoint) records it, until
    /// the pool ends or Ctrl+C.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Under each call, the changes to the session's text files as unified
    /// diffs against their previous recorded version (added files against
    /// nothing); text only.
    #[arg(long)]
    pub diff: bool,
    /// Only the calls on this pool (its key as `log --sessions` prints it:
    /// `local/PythonLTS/127.0.0.1:8341`, or an endpoint), for an identifier
    /// used on several pools.
    #[arg(long, value_name = "KEY")]
    pub pool: Option<String>,
}

/// Reads `--since`: an RFC 3339 time, or a duration before now
/// (humantime's units: `90s`, `10m`, `2h`, `3d`).
///
/// # Errors
///
/// A message naming both accepted forms.
pub fn parse_since(s: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s.trim()) {
        return Ok(t.with_timezone(&Utc));
    }
    let ago = humantime::parse_duration(s.trim()).map_err(|e| {
        format!("{s:?} is neither a time (2026-05-01T10:00:00Z) nor a duration (10m, 2h): {e}")
    })?;
    let ago = chrono::Duration::from_std(ago).map_err(|e| e.to_string())?;
    Ok(Utc::now() - ago)
}

/// Runs `sessionpad log`. Exit 0 with the calls printed (nothing recorded is
/// said on standard error, still exit 0); with `--follow`, see
/// [`follow::run`].
///
/// # Errors
///
/// An identifier that breaks the rules, a ledger that cannot be read
/// (damaged, newer schema), standard output closed; with `--follow`, no pool
/// to follow.
pub async fn run(opt: &LogOpt, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    let identifier = checked(opt, target)?;
    if opt.follow {
        return follow::run(opt, target, identifier).await;
    }
    let path = ledger::default_path();
    let Some(conn) = ledger::schema::open_existing(&path)? else {
        eprintln!(
            "nothing recorded yet: no ledger at {} (the local pool records its clients' calls there)",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    let read = |e| ledger::LedgerError::sqlite(&path, e);
    let wants_calls = identifier.is_some() || opt.all || opt.since.is_some() || opt.tail.is_some();
    if opt.sessions || !wants_calls {
        let listed = ledger::read::sessions(&conn, usize::MAX).map_err(read)?;
        print_sessions(&listed, target.json, !opt.sessions)?;
        return Ok(ExitCode::SUCCESS);
    }
    let query = Query {
        pool: opt.pool.clone(),
        identifier: identifier.clone(),
        since: opt.since,
        tail: opt.tail.and_then(|n| usize::try_from(n).ok()),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // Streamed one call at a time: a ledger of a million calls is never held
    // in memory whole.
    let mut printed = 0_u64;
    let mut print = |e: &Entry, in_group: bool, out: &mut dyn Write| -> anyhow::Result<()> {
        printed += 1;
        if target.json {
            serde_json::to_writer(&mut *out, e)?;
            writeln!(out)?;
        } else {
            write!(out, "{}", render(e, in_group))?;
            if opt.diff {
                write!(out, "{}", crate::ledger::diff::of_call(&conn, e)?)?;
            }
        }
        Ok(())
    };
    // One identifier on several pools is several sessions: said, and each
    // printed under its pool.
    let several = match (&identifier, &opt.pool) {
        (Some(id), None) => on_several_pools(&conn, id).map_err(read)?,
        _ => false,
    };
    if target.json || (identifier.is_some() && !several) {
        ledger::read::each(&conn, &query, i64::MIN, &mut |e| {
            print(&e, false, &mut out).map_err(Failed::Print)
        })
        .map_err(|e| e.into_anyhow(&path))?;
    } else {
        // Grouped by session (pool and identifier), most recently active
        // first; `--tail` keeps the last N calls of all.
        let from = ledger::read::tail_start(&conn, &query).map_err(read)?;
        let order = ledger::read::identifiers(&conn, opt.since).map_err(read)?;
        for (pool, id, n) in order {
            if identifier.as_ref().is_some_and(|want| *want != id)
                || opt.pool.as_ref().is_some_and(|want| *want != pool)
            {
                continue;
            }
            let mut header = Some(format!(
                "=== {} on {} ({n} call(s))\n",
                plain(&id),
                plain(&pool)
            ));
            let one = Query {
                pool: Some(pool),
                identifier: Some(id),
                since: opt.since,
                tail: None,
            };
            ledger::read::each(&conn, &one, from, &mut |e| {
                if let Some(h) = header.take() {
                    out.write_all(h.as_bytes())
                        .map_err(|e| Failed::Print(e.into()))?;
                }
                print(&e, true, &mut out).map_err(Failed::Print)
            })
            .map_err(|e| e.into_anyhow(&path))?;
            if header.is_none() {
                writeln!(out)?;
            }
        }
    }
    out.flush().context("writing to standard output")?;
    if printed == 0 {
        match &identifier {
            Some(id) => eprintln!("no calls recorded for {id:?}"),
            None => eprintln!("no calls recorded"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The identifier `log` is about (the argument, else `--identifier`),
/// checked, and the options checked together.
///
/// # Errors
///
/// An identifier that breaks the rules; `--diff` with `--json`.
fn checked(opt: &LogOpt, target: &TargetOpt) -> anyhow::Result<Option<String>> {
    let identifier = opt.id.clone().or_else(|| target.identifier.clone());
    if let Some(id) = &identifier {
        crate::pool::server::validate_identifier(id).map_err(|e| anyhow::anyhow!(e.message))?;
    }
    if opt.diff && target.json {
        anyhow::bail!(
            "--diff prints text; with --json each call's files carry their sha256, and `sessionpad export --recorded ID --files DIR` writes their bytes"
        );
    }
    Ok(identifier)
}

/// Whether `id` was used on several pools; if so, says which on standard
/// error (each pool's calls are then printed under its name).
fn on_several_pools(conn: &rusqlite::Connection, id: &str) -> rusqlite::Result<bool> {
    let pools = ledger::read::pools_of(conn, id)?;
    if pools.len() > 1 {
        eprintln!(
            "{} was used on {} pools: {}; each pool's calls follow under its name (--pool KEY prints one)",
            plain(id),
            pools.len(),
            pools
                .iter()
                .map(|p| plain(&p.pool))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(pools.len() > 1)
}

/// The ledger, its path and the pool of recorded session `id` that
/// `export --recorded` and `replay` work on ([`choose_pool`] of `wanted`).
///
/// # Errors
///
/// An identifier that breaks the rules; no ledger yet; one that cannot be
/// read; `wanted` is not a pool `id` was used on.
pub(super) fn recorded_session(
    id: &str,
    wanted: Option<&str>,
) -> anyhow::Result<(rusqlite::Connection, std::path::PathBuf, Option<String>)> {
    crate::pool::server::validate_identifier(id).map_err(|e| anyhow::anyhow!(e.message))?;
    let path = ledger::default_path();
    let Some(conn) = ledger::schema::open_existing(&path)? else {
        anyhow::bail!("nothing recorded yet: no ledger at {}", path.display());
    };
    let pool = choose_pool(&conn, id, wanted)?;
    Ok((conn, path, pool))
}

/// The pool whose recorded session `id` a command works on: `wanted` when
/// given (an error naming the pools `id` was used on when it is not one of
/// them), else the only one, else the most recently active, said on
/// standard error with the others and `--pool`; `None` when nothing of `id`
/// is recorded.
///
/// # Errors
///
/// SQLite's error; `wanted` is not a pool `id` was used on.
pub(super) fn choose_pool(
    conn: &rusqlite::Connection,
    id: &str,
    wanted: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let pools = ledger::read::pools_of(conn, id)?;
    let names = || {
        pools
            .iter()
            .map(|p| plain(&p.pool))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(wanted) = wanted {
        if pools.iter().any(|p| p.pool == wanted) {
            return Ok(Some(wanted.to_string()));
        }
        anyhow::bail!(
            "nothing of {} is recorded on pool {}; it was used on: {}",
            plain(id),
            plain(wanted),
            if pools.is_empty() {
                "none".to_string()
            } else {
                names()
            }
        );
    }
    if pools.len() > 1 {
        eprintln!(
            "{} was used on {} pools ({}): taking the most recent, {} (--pool KEY takes another)",
            plain(id),
            pools.len(),
            names(),
            plain(&pools[0].pool)
        );
    }
    Ok(pools.first().map(|p| p.pool.clone()))
}

/// `log --sessions`: one line per recorded session (its identifier, cells and
/// calls, first and last activity, client, pool), or with `json` one
/// [`ledger::read::RecordedSession`] object per line; session text sanitised.
/// With `hint` (`log` without an identifier), says on a terminal how to
/// print calls; says so when none is recorded.
fn print_sessions(
    listed: &[ledger::read::RecordedSession],
    json: bool,
    hint: bool,
) -> anyhow::Result<()> {
    if listed.is_empty() {
        eprintln!("no sessions recorded");
    } else if hint && std::io::stderr().is_terminal() {
        eprintln!(
            "(the recorded sessions; `sessionpad log ID` prints one session's calls, `--all` every call)"
        );
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for s in listed {
        if json {
            serde_json::to_writer(&mut out, s)?;
            writeln!(out)?;
        } else {
            writeln!(
                out,
                "{}  {} cell(s), {} call(s)  {} .. {}  {}  {}",
                plain(&s.identifier),
                s.cells,
                s.calls,
                s.first.format("%Y-%m-%dT%H:%M:%SZ"),
                s.last.format("%Y-%m-%dT%H:%M:%SZ"),
                clients(s),
                plain(&s.pool),
            )?;
        }
    }
    out.flush().context("writing to standard output")
}

/// Who used recorded session `s`: the client that started it, then the
/// latest in brackets where another came after it; sanitised.
fn clients(s: &ledger::read::RecordedSession) -> String {
    let name = |c: Option<&str>| plain(c.unwrap_or("(no user agent)"));
    match (s.first_client.as_deref(), s.client.as_deref()) {
        (Some(first), Some(last)) if first != last => {
            format!("{} (last: {})", name(Some(first)), name(Some(last)))
        }
        (first, last) => name(first.or(last)),
    }
}

/// Why streaming the ledger to standard output stopped.
enum Failed {
    /// The ledger could not be read.
    Read(rusqlite::Error),
    /// Printing failed (standard output closed).
    Print(anyhow::Error),
}

impl From<rusqlite::Error> for Failed {
    fn from(e: rusqlite::Error) -> Self {
        Self::Read(e)
    }
}

impl Failed {
    fn into_anyhow(self, path: &std::path::Path) -> anyhow::Error {
        match self {
            Self::Read(e) => ledger::LedgerError::sqlite(path, e).into(),
            Self::Print(e) => e,
        }
    }
}

/// One call as text: a header line (time, the identifier unless `in_group`, the
/// client, kind, status or exit code, duration in milliseconds), then the code
/// and outputs, labelled and indented; every piece of session text sanitised.
pub fn render(e: &Entry, in_group: bool) -> String {
    let mut s = format!("[{}]", e.at.format("%Y-%m-%dT%H:%M:%S%.3fZ"));
    if !in_group {
        s.push_str(&format!(" {}", plain(&e.identifier)));
    }
    if e.kind == CallKind::End {
        return render_end(e, s);
    }
    s.push_str(&format!(
        " {} {}",
        plain(e.client.as_deref().unwrap_or("(no user agent)")),
        e.kind.as_str()
    ));
    match (&e.status, e.exit_code) {
        (_, Some(code)) => s.push_str(&format!(" exit {code}")),
        (Some(status), None) => s.push_str(&format!(" {}", plain(status))),
        (None, None) => {}
    }
    s.push_str(&format!(" {:.1} ms", e.duration_ms));
    if e.client_gone {
        s.push_str(" (the client had gone: nobody received this answer)");
    }
    s.push('\n');
    let block = |s: &mut String, label: &str, text: &str| {
        let text = plain(text);
        let text = text.trim_end_matches('\n');
        if text.is_empty() {
            return;
        }
        for (i, line) in text.split('\n').enumerate() {
            let head = if i == 0 { label } else { "" };
            s.push_str(&format!("  {head:<7}{line}\n"));
        }
    };
    match e.kind {
        CallKind::Code | CallKind::Shell => {
            block(
                &mut s,
                if e.kind == CallKind::Shell { "$" } else { "In" },
                e.code.as_deref().unwrap_or(""),
            );
            if let Some(stdin) = &e.stdin {
                block(&mut s, "stdin", stdin);
            }
            block(&mut s, "Out", e.stdout.as_deref().unwrap_or(""));
            block(&mut s, "Err", e.stderr.as_deref().unwrap_or(""));
            if let Some(text) = e
                .result
                .as_ref()
                .and_then(|r| r.get("text"))
                .and_then(serde_json::Value::as_str)
            {
                block(&mut s, "Value", text);
            }
            for image in &e.images {
                block(
                    &mut s,
                    "Image",
                    &format!(
                        "{}, {}, sha256 {}",
                        image.format,
                        crate::text::human_size(image.size),
                        image.sha256
                    ),
                );
            }
        }
        CallKind::Upload | CallKind::Download | CallKind::Delete | CallKind::End => {
            if let Some(f) = &e.file {
                let mut line = plain(&f.name);
                if let Some(size) = f.size {
                    line.push_str(&format!(", {}", crate::text::human_size(size)));
                }
                if let Some(sha) = &f.sha256 {
                    line.push_str(&format!(", sha256 {sha}"));
                }
                block(&mut s, "File", &line);
            }
        }
    }
    if let Some(line) = e
        .network
        .as_deref()
        .and_then(crate::protocol::egress::summary)
    {
        block(&mut s, "Net", &line);
    }
    let files: Vec<String> = e.files.iter().map(file_line).collect();
    block(&mut s, "Files", &files.join("\n"));
    if let Some(note) = &e.files_note {
        block(&mut s, "Files", &format!("(not seen: {note})"));
    }
    s
}

/// The end of a session as text, after `head` (its time and identifier):
/// why it ended, by which client when one asked, and the files changed since
/// its last call.
fn render_end(e: &Entry, mut head: String) -> String {
    head.push_str(&format!(
        " session ended: {}",
        plain(e.status.as_deref().unwrap_or("why not recorded"))
    ));
    if let Some(client) = &e.client {
        head.push_str(&format!(" ({})", plain(client)));
    }
    head.push_str("; its variables and /mnt/data files are gone\n");
    for (i, f) in e.files.iter().enumerate() {
        let label = if i == 0 { "Files" } else { "" };
        head.push_str(&format!("  {label:<7}{}\n", plain(&file_line(f))));
    }
    if let Some(note) = &e.files_note {
        head.push_str(&format!("  Files  (not seen: {})\n", plain(note)));
    }
    head
}

/// One changed file as `log` lists it under its call: the change, the path
/// as the session sees it, its size and the start of its SHA-256, and why
/// its bytes are not kept when they are not.
fn file_line(f: &crate::protocol::record::FileChange) -> String {
    use crate::protocol::record::FileChangeKind;
    let mut line = format!("{:<8} {}", f.change.as_str(), f.path);
    if f.change != FileChangeKind::Deleted {
        line.push_str(&format!(", {}", crate::text::human_size(f.size)));
        if let Some(sha) = &f.sha256 {
            line.push_str(&format!(", sha256 {}", sha.get(..12).unwrap_or(sha)));
        }
        if let Some(why) = f
            .content
            .and_then(crate::protocol::record::ContentKept::why_not)
        {
            line.push_str(&format!(" ({why})"));
        }
    }
    line
}

#[path = "log_follow.rs"]
pub mod follow;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_reads_a_time_or_a_duration() {
        let t = parse_since("2026-05-01T10:00:00Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-05-01T10:00:00+00:00");
        let ago = parse_since("10m").unwrap();
        let diff = Utc::now() - ago;
        assert!(diff >= chrono::Duration::minutes(10), "{diff}");
        let err = parse_since("yesterday-ish").unwrap_err();
        assert!(err.contains("neither a time"), "{err}");
    }

    #[test]
    fn rendering_sanitises_what_a_client_sent() {
        let e = Entry {
            seq: 1,
            at: Utc::now(),
            duration_ms: 1.5,
            pool: "local".into(),
            identifier: "evil\u{1b}]0;title\u{7}id".into(),
            client: Some("agent\u{1b}[2J/1.0".into()),
            kind: CallKind::Code,
            execution_id: None,
            code: Some("print('\u{1b}[31mred')".into()),
            stdin: None,
            status: Some("Succeeded".into()),
            exit_code: None,
            stdout: Some("\u{1b}[31mred\u{1b}[0m\n".into()),
            stderr: None,
            result: None,
            images: vec![],
            file: None,
            client_gone: false,
            files: vec![],
            files_note: None,
            network: None,
        };
        let text = render(&e, false);
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(!text.contains('\u{7}'), "{text:?}");
        assert!(text.contains("Out    red"), "{text}");
        assert!(text.contains("agent/1.0 code Succeeded"), "{text}");
    }
}
