//! File routes of the local pool (family A `files/upload`, `files`,
//! `files/content/{name}`; family B `files`, `files/{name}`, `files/{name}/content`).
//! Being written.

use axum::Router;

use super::server::Pool;

/// The file routes, merged into the pool's router.
pub(crate) fn routes() -> Router<Pool> {
    Router::new()
}
