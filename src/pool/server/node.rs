//! Cells of a NodeLTS pool (`serve --container-type node`): the JavaScript of
//! `code` (`code/execute` of 2024-02-02-preview as Microsoft's Node.js tutorial
//! sends it, or `executions`) runs in the session's one `vm` context
//! (`assets/node/session.js`), reached through the session's sandboxed kernel
//! (`assets/python/node_session.py`). The answer has the shape of the
//! api-version's Python answer: `stdout` from `console.log`, the last
//! expression's value as the result, an exception's stack in `stderr`.

use std::time::Duration;

use base64::Engine;
use serde_json::json;

/// How much sooner than the pool's own limit the context's `vm` timeout ends
/// a synchronous cell, so that a long loop fails with its own message and the
/// context survives, instead of the pool killing the Node.js process.
const VM_MARGIN: Duration = Duration::from_millis(250);

/// The Python call that runs JavaScript `code` in a NodeLTS pool's kernel,
/// with the execution limit `timeout`: the request travels as base64 JSON, so
/// no part of it is read as Python.
pub(crate) fn runner_call(code: &str, timeout: Duration) -> String {
    let ms = timeout.saturating_sub(VM_MARGIN).as_millis().max(1);
    let req = json!({ "code": code, "timeoutMs": u64::try_from(ms).unwrap_or(u64::MAX) });
    let b64 = base64::engine::general_purpose::STANDARD.encode(req.to_string());
    format!("_sessionpad_node('{b64}')")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_carries_the_code_and_a_limit_inside_the_pools() {
        let call = runner_call("console.log('x'); '); import os", Duration::from_secs(10));
        let b64 = call
            .strip_prefix("_sessionpad_node('")
            .and_then(|c| c.strip_suffix("')"))
            .unwrap();
        let req: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            req,
            json!({"code": "console.log('x'); '); import os", "timeoutMs": 9750})
        );
    }
}
