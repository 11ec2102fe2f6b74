//! The warm-up of a ready kernel: one silent `execute_request` (Jupyter
//! messaging protocol, "Execute": `silent: true`, `store_history: false`) run
//! while the kernel waits in the pool, so the first cell a user runs does not
//! pay IPython's first-run costs (its first compile and run of a cell). A
//! silent execution does not increment the kernel's execution count and
//! publishes no output; the pool does not record it (it is no call).

use std::time::Duration;

use super::outputs::Run;
use super::{Collect, ExecuteRequest, JupyterMessage, Kernel};

/// The code of the warm-up.
const WARM_UP_CODE: &str = "1+1";

/// How long the warm-up may take before the kernel is left as it is.
const WARM_UP_LIMIT: Duration = Duration::from_secs(10);

impl Kernel {
    /// Runs [`WARM_UP_CODE`] silently and waits until the kernel is idle again
    /// (at most 10 s), then reads its `execute_reply` so the next execution
    /// does not see it. True when the kernel went idle in time; false when it
    /// could not be sent, did not finish in time (it is then interrupted) or
    /// died, which the next execution notices as usual ([`Kernel::is_dead`]).
    pub async fn warm_up(&mut self) -> bool {
        if self.is_dead() {
            return false;
        }
        let request: JupyterMessage = ExecuteRequest {
            silent: true,
            store_history: false,
            ..ExecuteRequest::new(WARM_UP_CODE.to_string())
        }
        .into();
        let msg_id = request.header.msg_id.clone();
        if self.shell.send(request).await.is_err() {
            return false;
        }
        let deadline = tokio::time::Instant::now() + WARM_UP_LIMIT;
        let mut ignored = Run::discarding();
        let idle = matches!(
            self.collect(&msg_id, &mut ignored, Some(deadline)).await,
            Collect::Idle
        );
        if !idle {
            self.interrupt().await;
        }
        if self.relay.tripped_now().is_none() && !self.is_dead() {
            let _ = tokio::time::timeout(Duration::from_millis(200), self.shell.read()).await;
        }
        idle
    }
}
