//! `sessionpad log --follow`: the recorded calls, then each call as the
//! running local pool records it, like `kubectl logs -f`.
//!
//! The pool is the one `--endpoint` names (with its `--token` or credential),
//! else the running `serve` or background pool found through its discovery
//! file; no pool is started. The follower subscribes to the pool's event
//! stream ([`crate::events`]) *before* reading the ledger, and skips every
//! call whose ledger `seq` it has printed: nothing recorded in between is
//! missed or printed twice. A follower that fell behind (the pool drops events
//! rather than wait) reads what it missed back from the ledger.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use futures::StreamExt;

use super::{LogOpt, render};
use crate::cli::target::TargetOpt;
use crate::client::SessionClient;
use crate::ledger::{self, Query};
use crate::protocol::events::PoolEvent;
use crate::protocol::record::Entry;
/// Runs `log --follow` for `identifier` (every identifier when `None`):
/// prints the recorded calls `opt` selects, then each new one as it is
/// recorded, flushing after each. Returns exit 0 when the pool ends the stream.
///
/// # Errors
///
/// No running local pool and no `--endpoint`; the pool refuses the stream (a
/// wrong token: 401; not a sessionpad pool: 404); the ledger cannot be read;
/// standard output closed.
pub async fn run(
    opt: &LogOpt,
    target: &TargetOpt,
    identifier: Option<String>,
) -> anyhow::Result<ExitCode> {
    let (client, key) = pool_client(target, identifier.as_deref()).await?;
    let mut events = client
        .events(identifier.as_deref())
        .await
        .with_context(|| format!("following the pool at {}", client.endpoint()))?;
    let mut printer = Printer {
        json: target.json,
        last_seq: 0,
        out: std::io::BufWriter::new(std::io::stdout()),
    };
    // The followed pool's calls only: the identifier may have been used on
    // others (issue 26).
    let query = Query {
        pool: key.clone(),
        identifier: identifier.clone(),
        since: opt.since,
        tail: opt.tail.and_then(|n| usize::try_from(n).ok()),
    };
    printer.print_all(&recorded(&query)?)?;
    while let Some(event) = events.next().await {
        match event {
            Ok(PoolEvent::Call(call)) => printer.print(&call.entry)?,
            Ok(PoolEvent::Lagged(lag)) => {
                tracing::warn!("log --follow missed {} event(s)", lag.missed);
                let since = Query {
                    pool: key.clone(),
                    identifier: identifier.clone(),
                    since: opt.since,
                    tail: None,
                };
                printer.print_all(&recorded(&since)?)?;
            }
            // Running cells' output: the call itself comes when it ends.
            Ok(PoolEvent::Output(_)) => {}
            Err(e) => return Err(e).context("following the pool"),
        }
    }
    eprintln!("the pool closed its event stream (it ended)");
    Ok(ExitCode::SUCCESS)
}

/// The client of the pool to follow and its ledger key: `--endpoint` (with
/// its token or credential), else the running local pool that records
/// `identifier` ([`super::super::locate`]), else the local pool the
/// discovery file names.
///
/// # Errors
///
/// No pool to follow; the identifier is recorded by a pool that is not the
/// discovered one (its endpoint named) or by several.
async fn pool_client(
    target: &TargetOpt,
    identifier: Option<&str>,
) -> anyhow::Result<(SessionClient, Option<String>)> {
    use crate::protocol::record::pool_key_of;
    let settings = target.settings()?;
    if let Some(endpoint) = &settings.endpoint {
        let client = crate::target::remote_client(
            endpoint,
            settings.api_version,
            settings.token.clone(),
            settings.auth.as_ref(),
            settings.pool_type,
        )?;
        let key = pool_key_of(endpoint, settings.container_type);
        return Ok((client, Some(key)));
    }
    let found = crate::background::discovery::Discovery::find(settings.container_type);
    if let Some(id) = identifier {
        let located =
            super::super::locate::locate(id, found.as_ref().map(|f| f.endpoint.as_str())).await?;
        if let Some(why) = super::super::locate::refusal(id, &located, "sessionpad log -f") {
            anyhow::bail!(why);
        }
    }
    let found = found.ok_or_else(|| {
        anyhow::anyhow!(
            "no local pool is running to follow: start one (sessionpad serve) or name one with --endpoint"
        )
    })?;
    let key = pool_key_of(&found.endpoint, settings.container_type);
    Ok((
        crate::target::remote_client(
            &found.endpoint,
            settings.api_version,
            found.token,
            None,
            settings.pool_type,
        )?,
        Some(key),
    ))
}

/// The calls `query` selects from the ledger (none when there is no ledger yet).
fn recorded(query: &Query) -> anyhow::Result<Vec<Entry>> {
    let path = ledger::default_path();
    let Some(conn) = ledger::schema::open_existing(&path)? else {
        return Ok(Vec::new());
    };
    Ok(ledger::read::entries(&conn, query).map_err(|e| ledger::LedgerError::sqlite(&path, e))?)
}

/// Prints calls in `seq` order, each once.
struct Printer<W: Write> {
    json: bool,
    last_seq: i64,
    out: W,
}

impl<W: Write> Printer<W> {
    fn print_all(&mut self, entries: &[Entry]) -> anyhow::Result<()> {
        for e in entries {
            self.print(e)?;
        }
        Ok(())
    }

    /// Prints `e` (as `log --json` or as text with its identifier) unless a
    /// call at or after its `seq` was printed; flushes.
    fn print(&mut self, e: &Entry) -> anyhow::Result<()> {
        if e.seq <= self.last_seq {
            return Ok(());
        }
        self.last_seq = e.seq;
        if self.json {
            serde_json::to_writer(&mut self.out, e)?;
            writeln!(self.out)?;
        } else {
            write!(self.out, "{}", render(e, false))?;
        }
        self.out.flush().context("writing to standard output")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: i64) -> Entry {
        Entry {
            seq,
            at: chrono::Utc::now(),
            duration_ms: 1.0,
            pool: "local".into(),
            identifier: "agent".into(),
            client: None,
            kind: crate::protocol::record::CallKind::Code,
            execution_id: None,
            code: Some(format!("x = {seq}")),
            stdin: None,
            status: Some("Succeeded".into()),
            exit_code: None,
            stdout: None,
            stderr: None,
            result: None,
            images: vec![],
            file: None,
            client_gone: false,
            files: vec![],
            files_note: None,
            network: None,
        }
    }

    #[test]
    fn each_call_is_printed_once_in_order_whether_read_or_pushed() {
        let mut p = Printer {
            json: true,
            last_seq: 0,
            out: Vec::new(),
        };
        // History 1..=2; the stream also delivers 2 (recorded while the
        // history was read), then 3; a lag makes the history come again.
        p.print_all(&[entry(1), entry(2)]).unwrap();
        p.print(&entry(2)).unwrap();
        p.print(&entry(3)).unwrap();
        p.print_all(&[entry(1), entry(2), entry(3), entry(4)])
            .unwrap();
        let text = String::from_utf8(p.out).unwrap();
        let seqs: Vec<i64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        assert_eq!(seqs, vec![1, 2, 3, 4]);
    }
}
