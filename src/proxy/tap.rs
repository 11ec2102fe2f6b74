//! Taps on bodies the proxy streams, so files are recorded without being held:
//! an upload's multipart body goes to the upstream chunk by chunk while
//! reference-counted slices of each chunk ([`Bytes::slice`], not copies), at
//! most [`PARSER_PIECE`] bytes each, feed a multipart parser ([`multer`]) that
//! hashes the file part; a download is counted and hashed as it goes to the
//! agent ([`DownloadTap`]).
//!
//! Why slices: multer copies whatever its input stream has ready into one
//! buffer before it looks for the next boundary, so whole chunks (hyper hands
//! over up to ~400 KiB at a time) with a queue of 8 of them let that buffer
//! grow to 8 MiB during a 100 MiB upload (heaptrack, release build), and each
//! queued chunk kept its own read buffer of hyper's alive. Small pieces
//! through a short queue keep the parser's buffer under a few hundred KiB and
//! pin at most the chunk being forwarded.

use std::convert::Infallible;

use axum::body::Body;
use bytes::Bytes;
use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use sha2::Digest;
use tokio::sync::oneshot;

use crate::pool::record::DownloadTap;

/// Pieces of an upload the parser may lag behind the upstream: beyond this
/// the forwarding waits for it (so memory stays bounded).
const PARSER_QUEUE: usize = 2;

/// Largest piece of an upload handed to the parser at once, in bytes (a
/// slice of the chunk being forwarded): 64 KiB.
const PARSER_PIECE: usize = 64 * 1024;

/// What was learned of the file part of an upload's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UploadedPart {
    /// The part's file name as the client sent it.
    pub(crate) file_name: String,
    /// Bytes of the part.
    pub(crate) size: u64,
    /// Their SHA-256, lowercase hex.
    pub(crate) sha256: String,
}

/// The body of an upload, to send upstream, and the receiver of what its file
/// part was (`None` when the body was not the multipart form of `aca-api.md`
/// §3.2/§4.3: no `boundary`, no part with a file name, or cut short).
pub(crate) fn tee_upload(
    body: Body,
    content_type: Option<&str>,
) -> (
    impl Stream<Item = Result<Bytes, axum::Error>> + Send + 'static,
    oneshot::Receiver<Option<UploadedPart>>,
) {
    let (done_tx, done_rx) = oneshot::channel();
    let boundary = content_type.and_then(|ct| multer::parse_boundary(ct).ok());
    let (tx, rx) = mpsc::channel::<Bytes>(PARSER_QUEUE);
    let tx = match boundary {
        Some(boundary) => {
            tokio::spawn(async move {
                let part = parse(rx, boundary).await;
                let _ = done_tx.send(part);
            });
            Some(tx)
        }
        None => {
            let _ = done_tx.send(None);
            None
        }
    };
    let stream = futures::stream::unfold(
        (body.into_data_stream(), tx),
        |(mut body, mut tx)| async move {
            let chunk = body.next().await?;
            if let (Ok(bytes), Some(sender)) = (&chunk, tx.as_mut())
                && feed(sender, bytes).await.is_err()
            {
                // The parser is done (or gave up): the rest only goes upstream.
                tx = None;
            }
            Some((chunk, (body, tx)))
        },
    );
    (stream, done_rx)
}

/// Hands `chunk` to the parser in slices of at most [`PARSER_PIECE`] bytes,
/// waiting while its queue is full; an error when the parser has stopped.
async fn feed(sender: &mut mpsc::Sender<Bytes>, chunk: &Bytes) -> Result<(), mpsc::SendError> {
    let mut start = 0;
    while start < chunk.len() {
        let end = chunk.len().min(start + PARSER_PIECE);
        sender.send(chunk.slice(start..end)).await?;
        start = end;
    }
    Ok(())
}

/// Reads the multipart body coming through `rx` and hashes the first part
/// that has a file name (the `file` field of every client).
async fn parse(rx: mpsc::Receiver<Bytes>, boundary: String) -> Option<UploadedPart> {
    let mut form = multer::Multipart::new(rx.map(Ok::<Bytes, Infallible>), boundary);
    while let Ok(Some(mut field)) = form.next_field().await {
        let Some(file_name) = field.file_name().map(str::to_string) else {
            continue;
        };
        let mut hasher = sha2::Sha256::new();
        let mut size = 0u64;
        loop {
            match field.chunk().await {
                Ok(Some(chunk)) => {
                    size += chunk.len() as u64;
                    hasher.update(&chunk);
                }
                Ok(None) => break,
                Err(_) => return None,
            }
        }
        return Some(UploadedPart {
            file_name,
            size,
            sha256: crate::protocol::record::hex(&hasher.finalize()),
        });
    }
    None
}

/// The upstream's download body on its way to the agent, counted and hashed
/// by `tap`, which records the call when the body ends whole, fails or is
/// dropped (an agent that broke off).
pub(crate) fn tap_download(
    upstream: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    tap: DownloadTap,
) -> Body {
    let stream = futures::stream::unfold(
        (Box::pin(upstream), Some(tap)),
        |(mut upstream, mut tap)| async move {
            match upstream.next().await {
                Some(Ok(bytes)) => {
                    if let Some(t) = tap.as_mut() {
                        t.update(&bytes);
                    }
                    Some((Ok(bytes), (upstream, tap)))
                }
                Some(Err(e)) => {
                    // Recorded now, with the bytes sent and no hash.
                    drop(tap.take());
                    Some((Err(e), (upstream, None)))
                }
                None => {
                    if let Some(mut t) = tap {
                        t.complete();
                    }
                    None
                }
            }
        },
    );
    Body::from_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(boundary: &str, name: &str, content: &[u8]) -> Vec<u8> {
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(content);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        body
    }

    #[tokio::test]
    async fn an_upload_passes_unchanged_and_its_file_part_is_hashed() {
        let content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let body = form("XyZ", "data.bin", &content);
        // Small pieces, as a network delivers them, and chunks larger than
        // what the parser takes at once (each is handed over in slices).
        for size in [1000, PARSER_PIECE + 1, 3 * PARSER_PIECE] {
            let pieces: Vec<Result<Bytes, Infallible>> = body
                .chunks(size)
                .map(|c| Ok(Bytes::copy_from_slice(c)))
                .collect();
            let (stream, part) = tee_upload(
                Body::from_stream(futures::stream::iter(pieces)),
                Some("multipart/form-data; boundary=XyZ"),
            );
            let sent: Vec<u8> = stream.map(|c| c.unwrap().to_vec()).concat().await;
            assert_eq!(sent, body, "the bytes go upstream unchanged ({size})");
            let part = part.await.unwrap().unwrap();
            assert_eq!(part.file_name, "data.bin");
            assert_eq!(part.size, content.len() as u64, "{size}");
            assert_eq!(
                part.sha256,
                crate::protocol::record::sha256_hex(&content),
                "{size}"
            );
        }
    }

    #[tokio::test]
    async fn a_body_that_is_not_a_form_still_passes_and_says_so() {
        let (stream, part) = tee_upload(Body::from("plain"), Some("text/plain"));
        let sent: Vec<u8> = stream.map(|c| c.unwrap().to_vec()).concat().await;
        assert_eq!(sent, b"plain");
        assert_eq!(part.await.unwrap(), None);
        let (stream, part) = tee_upload(
            Body::from("--b\r\nbroken"),
            Some("multipart/form-data; boundary=b"),
        );
        let sent: Vec<u8> = stream.map(|c| c.unwrap().to_vec()).concat().await;
        assert_eq!(sent, b"--b\r\nbroken");
        assert_eq!(part.await.unwrap(), None);
    }
}
