//! Running an axum server until told to stop, gracefully: the local pool's
//! and the recording proxy's.

/// Serves `app` on `listener` on a task of its own until the returned sender
/// is used (or dropped): then it stops taking connections and ends once the
/// requests under way are answered. `what` names the server in the error
/// logged if serving fails. For the local pool and the recording proxy.
pub(crate) fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    what: &'static str,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::error!("{what} stopped: {e}");
        }
    });
    (stop, server)
}
