//! The TCP connections the server speaks HTTP/2 over.
//!
//! h2 sends a DATA payload of more than 256 bytes as its own buffer when the socket takes
//! vectored writes, and then writes out everything queued before it takes another frame:
//! every answer larger than that (a move's answer is about 350 bytes) cost its own `writev`
//! calls (1.6 per move under load, against 0.7 per Ping). Told that the socket has no
//! vectored writes, h2 copies payloads of up to 1 KiB into its write buffer instead, so the
//! answers released together by one group commit leave in one write.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// A TCP stream that reports no vectored writes (see the module docs), holding its place
/// among the server's connections while it is open.
pub struct ScalarWrites(pub TcpStream, pub Option<OwnedSemaphorePermit>);

/// The accepted connections, at most `max` open at once: one more is closed as it
/// arrives (and counted), so that a flood of connections cannot exhaust the server's file
/// descriptors or memory. (Closing, not waiting: a waiting client would only time out.)
pub fn limited(
    incoming: impl Stream<Item = io::Result<TcpStream>>,
    max: usize,
    refused: prometheus::IntCounter,
) -> impl Stream<Item = io::Result<ScalarWrites>> {
    let slots = Arc::new(Semaphore::new(max.clamp(1, Semaphore::MAX_PERMITS)));
    incoming.filter_map(move |conn| match conn {
        Ok(tcp) => match slots.clone().try_acquire_owned() {
            Ok(permit) => Some(Ok(ScalarWrites(tcp, Some(permit)))),
            Err(_) => {
                refused.inc();
                None
            }
        },
        Err(e) => Some(Err(e)),
    })
}

impl AsyncRead for ScalarWrites {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for ScalarWrites {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        false
    }
}

impl Connected for ScalarWrites {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.0.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn passes_bytes_through_and_reports_no_vectored_writes() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move { TcpStream::connect(addr).await.unwrap() });
        let (server, _) = listener.accept().await.unwrap();
        let mut server = ScalarWrites(server, None);
        let mut client = ScalarWrites(client.await.unwrap(), None);
        assert!(!server.is_write_vectored());
        assert_eq!(server.connect_info().remote_addr(), client.0.local_addr().ok());
        server.write_all(b"answer").await.unwrap();
        server.flush().await.unwrap();
        let mut got = [0u8; 6];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"answer");
        client.write_all(b"call").await.unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"call");
        server.shutdown().await.unwrap();
        assert_eq!(client.read(&mut got).await.unwrap(), 0);
    }
}
