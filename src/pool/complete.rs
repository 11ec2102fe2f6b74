//! The local pool's completion route, a sessionpad extension (the service has
//! no completion call, `aca-api.md` §3, §4): `POST
//! /.sessionpad/complete?api-version&identifier` with `{"code": str,
//! "cursorPos": N}` (N in Unicode code points, as Jupyter's protocol counts)
//! answers the kernel's `complete_request` as [`Completion`]. Behind the bearer
//! token, as every route of the pool.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;

use super::kernel::Completion;
use super::server::{Pool, target};
use super::wire_error::WireError;

use crate::protocol::ContainerType;
use crate::protocol::routes::COMPLETE_ROUTE;

/// The completion route, merged into the pool's router.
pub(crate) fn routes() -> Router<Pool> {
    Router::new().route(COMPLETE_ROUTE, post(complete))
}

/// The request body.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompleteBody {
    code: String,
    cursor_pos: usize,
}

/// `POST /.sessionpad/complete?api-version&identifier` → 200 [`Completion`].
/// 400 `SessionWithIdentifierNotFound` for a session the pool does not have;
/// 400 `CompletionNotSupported` in a Shell or NodeLTS pool (their kernel is the
/// Python that hosts the runner, whose completions would be wrong); 400
/// `SessionRequestValidationFailed` for a cursor past the end of `code`.
async fn complete(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    Json(body): Json<CompleteBody>,
) -> Result<Json<Completion>, WireError> {
    let (_, identifier) = target(&query)?;
    if pool.registry.container_type() != ContainerType::PythonLts {
        return Err(WireError::bad_request(
            "CompletionNotSupported",
            "no completion for this container type",
        ));
    }
    if body.cursor_pos > body.code.chars().count() {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            "cursorPos is past the end of code",
        ));
    }
    pool.registry
        .complete(&identifier, &body.code, body.cursor_pos)
        .await
        .map(Json)
        .ok_or_else(|| {
            WireError::bad_request(
                "SessionWithIdentifierNotFound",
                format!("session with identifier {identifier} was not found (it may have expired)"),
            )
        })
}
