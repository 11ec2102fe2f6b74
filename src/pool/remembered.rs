//! What a session remembers of its finished executions for `GET
//! executions/{id}` (`aca-api.md` §4.2): the last [`KEPT_EXECUTIONS`], within
//! [`KEPT_BYTES`] of output besides the newest, each shared with the reply that
//! answered it.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::protocol::Execution;

/// How many finished executions a session remembers for `GET executions/{id}`.
const KEPT_EXECUTIONS: usize = 64;

/// Bytes of output (streams and images) a session's remembered executions may
/// hold in all, the newest aside: older ones are forgotten first (`GET` of one
/// then answers 404, as for an id the session never had). Without it, 64
/// cells printing their 8 MiB each would hold a gigabyte in the pool.
const KEPT_BYTES: usize = 32 * 1024 * 1024;

/// An execution a session knows about, for `GET executions/{id}` (`aca-api.md` §4.2).
#[derive(Debug, Clone)]
pub enum ExecutionRecord {
    /// Submitted asynchronously and not finished yet.
    Running,
    /// Finished.
    Done {
        /// What it gave, shared with the reply that answers it (a cell's
        /// megabytes of output are held once, not once per holder).
        exec: Arc<Execution>,
        /// It was asked for the Jupyter format ([`super::kernel::OutputLimits::jupyter`]),
        /// so `GET executions/{id}` answers the value's `text/plain` form.
        jupyter: bool,
    },
}

/// Records execution `id` in a session's `list` (replacing its earlier
/// record), then forgets the oldest while there are over [`KEPT_EXECUTIONS`],
/// or while those before the newest hold over [`KEPT_BYTES`].
pub(super) fn remember(
    list: &mut VecDeque<(String, ExecutionRecord)>,
    id: &str,
    rec: ExecutionRecord,
) {
    if let Some(slot) = list.iter_mut().find(|(k, _)| k == id) {
        slot.1 = rec;
    } else {
        if list.len() >= KEPT_EXECUTIONS {
            list.pop_front();
        }
        list.push_back((id.to_string(), rec));
    }
    let newest = list.back().map_or(0, |(_, r)| r.output_bytes());
    let mut kept: usize = list.iter().map(|(_, r)| r.output_bytes()).sum();
    while kept > KEPT_BYTES + newest && list.len() > 1 {
        let Some((_, oldest)) = list.pop_front() else {
            break;
        };
        kept -= oldest.output_bytes();
    }
}

impl ExecutionRecord {
    /// Bytes of output it holds: its streams and images.
    fn output_bytes(&self) -> usize {
        match self {
            Self::Running => 0,
            Self::Done { exec, .. } => {
                exec.stdout.len()
                    + exec.stderr.len()
                    + exec.images.iter().map(|i| i.data.len()).sum::<usize>()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ExecutionStatus;

    fn done(stdout_bytes: usize) -> ExecutionRecord {
        ExecutionRecord::Done {
            exec: Arc::new(Execution {
                execution_count: None,
                id: None,
                status: ExecutionStatus::Succeeded,
                stdout: "x".repeat(stdout_bytes),
                stderr: String::new(),
                result: None,
                images: Vec::new(),
                duration: std::time::Duration::ZERO,
                network: Vec::new(),
            }),
            jupyter: false,
        }
    }

    /// Cells printing 8 MiB each: the session remembers the newest and
    /// 32 MiB of those before it, not 64 of them (half a gigabyte).
    #[test]
    fn remembered_executions_are_bounded_in_bytes_the_newest_always_kept() {
        let mut list = VecDeque::new();
        for n in 0..64 {
            remember(&mut list, &format!("e{n}"), done(8 * 1024 * 1024));
        }
        assert_eq!(list.len(), 5, "the newest and 4 × 8 MiB before it");
        assert_eq!(list.back().map(|(k, _)| k.as_str()), Some("e63"));
        remember(&mut list, "big", done(KEPT_BYTES * 2));
        assert_eq!(
            list.len(),
            5,
            "the newest, however big, and 32 MiB before it"
        );
        remember(&mut list, "after", done(1));
        assert_eq!(list.len(), 1, "no longer the newest, the big one went");
        assert_eq!(list.front().map(|(k, _)| k.as_str()), Some("after"));
        for n in 0..100 {
            remember(&mut list, &format!("s{n}"), done(10));
        }
        assert_eq!(list.len(), KEPT_EXECUTIONS);
        remember(&mut list, "s99", ExecutionRecord::Running);
        assert_eq!(list.len(), KEPT_EXECUTIONS, "replaced, not added");
    }
}
