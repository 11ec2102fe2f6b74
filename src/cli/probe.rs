//! `sessionpad probe`: runs a fixed battery of sandbox checks
//! (`assets/python/probe.py`, documented in docs/cli.md) as session code in a
//! fresh session of one pool, or of two side by side, and prints what held
//! and what was open: a table, or with `--json` one object a check
//! (`{"check","tried","result","evidence"}`, plus `"pool"` when two are
//! compared). The session is ended afterwards where the pool allows it.
//!
//! The battery prints one JSON line a check on the execution's stdout; every
//! text it returns is session output, so the table passes it through
//! [`crate::text::sanitize::plain`] before it reaches the terminal.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use super::output;
use super::target::{TargetOpt, connect};

/// The battery, run as session code (Python).
const PROBE_PY: &str = include_str!("../../assets/python/probe.py");

/// Characters of stdout asked for (`outputStreamsMaxLength`, api-version
/// 2025-10-02-preview, whose default of 4096 would cut the battery's lines).
const STDOUT_CHARS: u32 = 1 << 20;

/// Columns of the table when standard output is not a terminal.
const PIPE_WIDTH: usize = 120;

/// Options of `sessionpad probe`.
#[derive(Debug, Args)]
pub struct ProbeOpt {
    /// A pool to probe (pool management endpoint, or `local` for the local
    /// pool); give it twice to compare two pools side by side. Without it, the
    /// pool the other options choose (as for exec).
    // The id of the global `--endpoint`, so that this one takes its place
    // here (clap skips a global whose id a subcommand has), as serve's --token.
    #[arg(id = "endpoint", long = "endpoint", value_name = "ENDPOINT")]
    pub endpoints: Vec<String>,
}

/// One check of the battery, as `probe.py` prints it and `--json` writes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[allow(clippy::struct_field_names)] // `check` is the key probe.py prints and --json writes
pub struct Check {
    /// The check's fixed name (`host /etc/shadow`, `seccomp`, …).
    pub check: String,
    /// What it did, in words.
    pub tried: String,
    /// `held`, `open` or `not tried`.
    pub result: String,
    /// What it saw.
    pub evidence: String,
}

/// The checks of one pool and the name it is shown under.
struct Probed {
    pool: String,
    checks: Vec<Check>,
}

/// Runs `sessionpad probe`.
///
/// # Errors
///
/// More than two endpoints, a pool that cannot be reached or is not a Python
/// pool, or an execution that printed no check.
pub async fn run(opt: ProbeOpt, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    // Without `--endpoint` after `probe`, the global one (or
    // POOL_MANAGEMENT_ENDPOINT, or the profile) chooses, as for exec.
    let mut pools: Vec<Option<String>> = opt.endpoints.into_iter().map(Some).collect();
    if pools.is_empty() {
        pools.push(target.endpoint.clone());
    } else if endpoints_on_the_command_line(std::env::args_os()) > pools.len() {
        // `--endpoint A probe --endpoint B`: clap gives probe's own
        // `--endpoint` the global one's place, so A would go unprobed
        // without a word.
        bail!(
            "--endpoint before `probe` is not used by probe: give every pool to probe after it \
             (`sessionpad probe --endpoint A --endpoint B` compares two)"
        );
    }
    if pools.len() > 2 {
        bail!("probe compares at most two pools: give --endpoint once or twice");
    }
    let runs = pools.iter().map(|p| probe_one(p.as_deref(), target));
    let mut probed = Vec::new();
    for found in futures::future::join_all(runs).await {
        probed.push(found?);
    }
    if target.json {
        print_json(&probed);
    } else {
        let width = if std::io::stdout().is_terminal() {
            crossterm::terminal::size().map_or(PIPE_WIDTH, |(w, _)| usize::from(w))
        } else {
            PIPE_WIDTH
        };
        output::out(&table(&probed, width.max(40)));
    }
    Ok(ExitCode::SUCCESS)
}

/// How many `--endpoint` options `args` (a command line, any bytes) gives,
/// before a `--` that ends the options.
fn endpoints_on_the_command_line(args: impl Iterator<Item = std::ffi::OsString>) -> usize {
    use std::os::unix::ffi::OsStrExt;
    args.take_while(|a| a != "--")
        .filter(|a| a == "--endpoint" || a.as_bytes().starts_with(b"--endpoint="))
        .count()
}

/// Probes one pool: `endpoint` (`local`: the local pool) or, for `None`, the
/// one `target` chooses; a fresh session identifier, ended afterwards.
async fn probe_one(endpoint: Option<&str>, target: &TargetOpt) -> anyhow::Result<Probed> {
    let mut opts = target.clone();
    let local = endpoint.is_some_and(|e| e.eq_ignore_ascii_case("local"));
    if let Some(e) = endpoint.filter(|_| !local) {
        opts.endpoint = Some(e.to_string());
    }
    let mut settings = opts.settings()?;
    if local {
        settings.endpoint = None;
        settings.token = None;
        settings.auth = None;
    }
    settings.identifier = format!("probe-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let conn = connect(&settings).await?;
    let pool = match endpoint {
        Some(e) if !local => crate::target::endpoint_label(e),
        _ => conn.label.clone(),
    };
    let kind = conn.client.container_type();
    if kind.is_shell() || kind == crate::protocol::ContainerType::NodeLts {
        bail!("{pool}: the probe is Python; this pool runs {kind:?} sessions");
    }
    let code = format!(
        "_SP_PROBE_TIMEOUT = {}\n{PROBE_PY}",
        settings.timeout.as_secs()
    );
    let cap =
        (settings.api_version >= crate::protocol::ApiVersion::V2025_10_02).then_some(STDOUT_CHARS);
    let id = &settings.identifier;
    let exec = conn
        .client
        .execute_capped(id, &code, settings.timeout, cap)
        .await
        .with_context(|| format!("{pool}: running the probe"));
    if let Err(e) = conn.client.end_session(id).await {
        eprintln!("note: {pool}: session {id} was not ended: {e}");
    }
    let exec = exec?;
    let checks = parse(&exec.stdout);
    if checks.is_empty() {
        let err = crate::text::sanitize::plain(&exec.stderr);
        bail!(
            "{pool}: the probe printed no check (status {}): {}",
            exec.status.family_b_name(),
            err.lines().last().unwrap_or("no stderr")
        );
    }
    Ok(Probed { pool, checks })
}

/// The checks among `stdout`'s lines (each a JSON object); other lines are
/// skipped.
pub fn parse(stdout: &str) -> Vec<Check> {
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn print_json(probed: &[Probed]) {
    let two = probed.len() > 1;
    let all: Vec<serde_json::Value> = probed
        .iter()
        .flat_map(|p| {
            p.checks.iter().map(move |c| {
                let mut v = serde_json::to_value(c).unwrap_or_default();
                if two {
                    v["pool"] = serde_json::Value::String(p.pool.clone());
                }
                v
            })
        })
        .collect();
    output::json(&serde_json::Value::Array(all));
}

/// The check names in the order first seen across `probed`.
fn names(probed: &[Probed]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for p in probed {
        for c in &p.checks {
            if !out.contains(&c.check.as_str()) {
                out.push(&c.check);
            }
        }
    }
    out
}

/// `text` made plain (no escapes, one line) and cut to `width` columns.
fn clip(text: &str, width: usize) -> String {
    let plain = crate::text::sanitize::plain(&text.replace(['\r', '\n', '\t'], " "));
    if textwrap::core::display_width(&plain) <= width {
        return plain;
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in plain.chars() {
        let w = textwrap::core::display_width(ch.encode_utf8(&mut [0; 4]));
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(ch);
    }
    out.push('…');
    out
}

/// The table: a line a check (name, each pool's result, `≠` where the pools
/// differ), then what was tried and each pool's evidence, indented, each cut
/// to `width` columns.
fn table(probed: &[Probed], width: usize) -> String {
    let names = names(probed);
    let name_w = names
        .iter()
        .map(|n| textwrap::core::display_width(n))
        .max()
        .unwrap_or(5)
        .clamp(5, 32);
    // One column a pool: its name over its results (RESULT for one pool).
    let heads: Vec<String> = probed
        .iter()
        .map(|p| match probed.len() {
            1 => "RESULT".to_string(),
            _ => clip(&p.pool, 30),
        })
        .collect();
    let widths: Vec<usize> = heads
        .iter()
        .map(|h| textwrap::core::display_width(h).max(9))
        .collect();
    let mut out = String::new();
    let mut head = format!("{:name_w$}", "CHECK");
    for (h, w) in heads.iter().zip(&widths) {
        head.push_str(&format!("  {h:w$}"));
    }
    out.push_str(&clip(head.trim_end(), width));
    out.push('\n');
    for name in names {
        let found: Vec<Option<&Check>> = probed
            .iter()
            .map(|p| p.checks.iter().find(|c| c.check == name))
            .collect();
        let results: Vec<&str> = found
            .iter()
            .map(|c| c.map_or("missing", |c| c.result.as_str()))
            .collect();
        let differs = results.windows(2).any(|w| w[0] != w[1]);
        let mut line = format!("{:name_w$}", clip(name, name_w));
        for (r, w) in results.iter().zip(&widths) {
            line.push_str(&format!("  {:w$}", clip(r, *w)));
        }
        if differs {
            line.push_str("  ≠ differs");
        }
        out.push_str(&clip(line.trim_end(), width));
        out.push('\n');
        if let Some(c) = found.iter().flatten().next() {
            out.push_str(&clip(&format!("    tried: {}", c.tried), width));
            out.push('\n');
        }
        for (p, c) in probed.iter().zip(&found) {
            let label = if probed.len() > 1 {
                format!("    {}: ", p.pool)
            } else {
                "    saw: ".to_string()
            };
            let evidence = c.map_or("(not reported)", |c| c.evidence.as_str());
            out.push_str(&clip(&format!("{label}{evidence}"), width));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, result: &str, evidence: &str) -> Check {
        Check {
            check: name.into(),
            tried: "looked".into(),
            result: result.into(),
            evidence: evidence.into(),
        }
    }

    #[test]
    fn lines_that_are_not_checks_are_skipped() {
        let out = "hello\n{\"check\":\"a\",\"tried\":\"looked\",\"result\":\"held\",\"evidence\":\"e\"}\n{broken\n";
        assert_eq!(parse(out), vec![check("a", "held", "e")]);
    }

    #[test]
    fn the_table_clips_evidence_drops_escapes_and_marks_differences() {
        let probed = [
            Probed {
                pool: "A".into(),
                checks: vec![
                    check("seccomp", "held", "\x1b]52;c;aGk=\x07Seccomp 2"),
                    check("x", "open", "same"),
                ],
            },
            Probed {
                pool: "B".into(),
                checks: vec![
                    check("seccomp", "open", &"long ".repeat(100)),
                    check("x", "open", "same"),
                ],
            },
        ];
        let text = table(&probed, 60);
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(
            text.lines().all(|l| textwrap::core::display_width(l) <= 60),
            "{text}"
        );
        let seccomp = text.lines().find(|l| l.starts_with("seccomp")).unwrap();
        assert!(seccomp.contains("≠"), "{text}");
        let x = text.lines().find(|l| l.starts_with("x ")).unwrap();
        assert!(!x.contains("≠"), "{text}");
        assert!(text.contains("    A: Seccomp 2"), "{text}");
    }
}
