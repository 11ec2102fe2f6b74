//! The head of a remote file: its first bytes, read by stopping the download
//! as soon as enough arrived (a preview never fetches a whole large file).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

use crate::client::{ClientError, SessionClient};

/// The first `limit` bytes of remote file `name` in session `identifier` (all
/// of it when smaller): the download stops as soon as `limit` bytes arrived.
///
/// # Errors
///
/// The download's [`ClientError`], unless it ended only because `limit` bytes
/// had arrived.
pub async fn read_head(
    client: &SessionClient,
    identifier: &str,
    name: &str,
    limit: usize,
) -> Result<Vec<u8>, ClientError> {
    let mut head = HeadWriter {
        bytes: Vec::new(),
        limit,
    };
    match client
        .download_file(identifier, name, &mut head, &|_, _| {})
        .await
    {
        Ok(_) => Ok(head.bytes),
        Err(ClientError::Local { .. }) if head.bytes.len() >= limit => Ok(head.bytes),
        Err(e) => Err(e),
    }
}

/// A writer that keeps the first `limit` bytes and then refuses more, which ends
/// the download.
struct HeadWriter {
    bytes: Vec<u8>,
    limit: usize,
}

impl AsyncWrite for HeadWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let room = self.limit.saturating_sub(self.bytes.len());
        if room == 0 {
            return Poll::Ready(Err(io::Error::other("preview head complete")));
        }
        let take = room.min(buf.len());
        self.bytes.extend_from_slice(&buf[..take]);
        Poll::Ready(Ok(take))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test]
    async fn the_head_writer_keeps_the_first_bytes_then_stops_the_download() {
        let mut head = HeadWriter {
            bytes: Vec::new(),
            limit: 5,
        };
        head.write_all(b"abc").await.expect("room");
        let full = head.write_all(b"defgh").await;
        assert!(full.is_err(), "more than the limit ends the download");
        assert_eq!(head.bytes, b"abcde");
    }
}
