//! The local pool's interrupt route, a sessionpad extension (the service has no
//! interrupt, `aca-api.md` §3, §4): `POST /.sessionpad/interrupt?api-version&identifier`
//! raises `KeyboardInterrupt` in the code the session is running, so that a
//! notebook attached to a pool in another process (the background local pool)
//! interrupts a cell as it does on a pool of its own. Behind the bearer token,
//! as every route of the pool.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use super::server::{Pool, target};
use super::wire_error::WireError;

use crate::protocol::routes::INTERRUPT_ROUTE;

/// The interrupt route, merged into the pool's router.
pub(crate) fn routes() -> Router<Pool> {
    Router::new().route(INTERRUPT_ROUTE, post(interrupt))
}

/// `POST /.sessionpad/interrupt?api-version&identifier` (empty body) → 200
/// `{"interrupted": bool}`: whether the session's kernel acknowledged the
/// interrupt (false when nothing could be interrupted). Answers at once; the
/// interrupted execution's own reply says what became of it. 400
/// `SessionWithIdentifierNotFound` for a session the pool does not have.
async fn interrupt(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>, WireError> {
    let (_, identifier) = target(&query)?;
    if pool.registry.get(&identifier).is_none() {
        return Err(WireError::bad_request(
            "SessionWithIdentifierNotFound",
            format!("session with identifier {identifier} was not found (it may have expired)"),
        ));
    }
    let interrupted = pool.registry.interrupt(&identifier).await;
    Ok(Json(json!({ "interrupted": interrupted })))
}
