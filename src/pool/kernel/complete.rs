//! Tab completion: a Jupyter `complete_request` on the kernel's shell channel
//! (jupyter-client messaging protocol, "Completion"), for the local pool's
//! `/.sessionpad/complete` route. It does not run code, so the kernel's
//! execution count is unchanged.

use std::time::Duration;

pub use crate::protocol::Completion;

use super::{CompleteRequest, JupyterMessage, JupyterMessageContent, Kernel, parent_id};

impl Kernel {
    /// Asks the kernel for the completions of `code` at `cursor` (code points),
    /// waiting at most `wait` for the answer. Call it only while no execution
    /// runs (the caller holds the kernel). A kernel that does not answer in
    /// time, is dead or sends an error gives no matches (`busy` when it timed
    /// out).
    pub async fn complete(&mut self, code: &str, cursor: usize, wait: Duration) -> Completion {
        let mut empty = Completion::busy(cursor);
        empty.busy = false;
        if self.is_dead() {
            return empty;
        }
        let request: JupyterMessage = CompleteRequest {
            code: code.to_string(),
            cursor_pos: cursor,
        }
        .into();
        let msg_id = request.header.msg_id.clone();
        let deadline = tokio::time::Instant::now() + wait;
        match tokio::time::timeout_at(deadline, self.shell.send(request)).await {
            Ok(Ok(())) => {}
            _ => return Completion::busy(cursor),
        }
        loop {
            match tokio::time::timeout_at(deadline, self.shell.read()).await {
                Err(_) => return Completion::busy(cursor),
                Ok(Err(e)) => {
                    tracing::warn!("complete_reply not read: {e}");
                    return empty;
                }
                // A stale reply (an earlier request's) is skipped.
                Ok(Ok(msg)) if parent_id(&msg) != Some(msg_id.as_str()) => {}
                Ok(Ok(msg)) => {
                    return match msg.content {
                        JupyterMessageContent::CompleteReply(r) if r.error.is_none() => {
                            Completion {
                                matches: r.matches,
                                cursor_start: r.cursor_start,
                                cursor_end: r.cursor_end,
                                busy: false,
                            }
                        }
                        _ => empty,
                    };
                }
            }
        }
    }
}
