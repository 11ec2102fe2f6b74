//! `sessionpad log [ID] [--since T] [--tail N] [--json]`: the calls the local
//! pool recorded in the flight recorder's ledger ([`crate::ledger`]), like
//! `kubectl logs`: each cell's time, client, code and outputs, every piece of
//! session text sanitised ([`crate::text::sanitize::plain`]); without an
//! identifier, every identifier's, most recently active first. `--json` prints
//! exactly what was recorded, one JSON object per call and line, in recording
//! order.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use chrono::{DateTime, Utc};
use clap::Args;

use super::target::TargetOpt;
use crate::ledger::{self, CallKind, Entry, Query};
use crate::text::sanitize::plain;

/// Options of `sessionpad log`.
#[derive(Debug, Args)]
pub struct LogOpt {
    /// The session identifier (or --identifier); every identifier when omitted.
    pub id: Option<String>,
    /// Only calls since T: a time (2026-05-01T10:00:00Z) or a duration before
    /// now (90s, 10m, 2h, 3d).
    #[arg(long, value_name = "T", value_parser = parse_since)]
    pub since: Option<DateTime<Utc>>,
    /// Only the last N calls (of the identifier, or in all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tail: Option<u64>,
    /// After the recorded calls, keep printing each call as the running local
    /// pool (a serve or the background pool, or --endpoint) records it, until
    /// the pool ends or Ctrl+C.
    #[arg(long, short = 'f')]
    pub follow: bool,
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
    let identifier = opt.id.clone().or_else(|| target.identifier.clone());
    if let Some(id) = &identifier {
        crate::pool::server::validate_identifier(id).map_err(|e| anyhow::anyhow!(e.message))?;
    }
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
    let query = Query {
        identifier: identifier.clone(),
        since: opt.since,
        tail: opt.tail.and_then(|n| usize::try_from(n).ok()),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let entries = ledger::read::entries(&conn, &query).map_err(read)?;
    if target.json {
        for e in &entries {
            serde_json::to_writer(&mut out, e)?;
            writeln!(out)?;
        }
    } else if identifier.is_some() {
        for e in &entries {
            write!(out, "{}", render(e, false))?;
        }
    } else {
        let order = ledger::read::identifiers(&conn, opt.since).map_err(read)?;
        for (id, n) in order {
            let mine: Vec<&Entry> = entries.iter().filter(|e| e.identifier == id).collect();
            if mine.is_empty() {
                continue;
            }
            writeln!(out, "=== {} ({n} call(s))", plain(&id))?;
            for e in mine {
                write!(out, "{}", render(e, true))?;
            }
            writeln!(out)?;
        }
    }
    out.flush().context("writing to standard output")?;
    if entries.is_empty() {
        match &identifier {
            Some(id) => eprintln!("no calls recorded for {id:?}"),
            None => eprintln!("no calls recorded"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One call as text: a header line (time, the identifier unless `in_group`, the
/// client, kind, status or exit code, duration in milliseconds), then the code
/// and outputs, labelled and indented; every piece of session text sanitised.
pub fn render(e: &Entry, in_group: bool) -> String {
    let mut s = format!("[{}]", e.at.format("%Y-%m-%dT%H:%M:%S%.3fZ"));
    if !in_group {
        s.push_str(&format!(" {}", plain(&e.identifier)));
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
    s.push_str(&format!(" {:.1} ms\n", e.duration_ms));
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
        CallKind::Upload | CallKind::Download | CallKind::Delete => {
            if let Some(f) = &e.file {
                let mut line = f.name.clone();
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
    s
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
        };
        let text = render(&e, false);
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(!text.contains('\u{7}'), "{text:?}");
        assert!(text.contains("Out    red"), "{text}");
        assert!(text.contains("agent/1.0 code Succeeded"), "{text}");
    }
}
