//! The TCP connections the server speaks HTTP/2 over.
//!
//! h2 writes each frame it has queued as soon as its connection task runs, and that task
//! runs after every frame a stream hands it: ten thousand watchers of one game, woken by one
//! move, cost about a `send` each (a third of the server's core went to the kernel's
//! TCP path, on loopback the receiver's too). [`Connection`] coalesces: h2's writes go into
//! a buffer (up to [`COALESCE_BYTES`]); a flush sends at once, unless the connection sent
//! less than [`COALESCE_WINDOW`] ago (a burst: a broadcast, a group commit releasing many
//! answers), in which case it yields once to the runtime first (the task wakes itself and
//! goes to the back of the run queue), so that the other streams woken by the same event
//! add their frames and one `send` carries them all. A quiet connection's answer is never
//! held. h2 is also told that the socket has no vectored writes, so it copies small
//! payloads into its own buffer rather than handing them over one by one.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// The most bytes held back for one `send`; a write that would pass it sends what is held
/// first, and a larger write goes straight to the socket.
pub const COALESCE_BYTES: usize = 64 * 1024;

/// What a connection keeps of its buffer between bursts (a few answers' worth).
const KEEP_BYTES: usize = 4 * 1024;

/// A flush this soon after the connection's last `send` waits one pass of the run queue.
pub const COALESCE_WINDOW: Duration = Duration::from_millis(1);

/// An accepted TCP connection: writes coalesced (see the module docs), its place among the
/// server's connections held while it is open.
pub struct Connection {
    tcp: TcpStream,
    _slot: Option<OwnedSemaphorePermit>,
    /// Bytes written by h2 that the socket has not taken yet, from `sent` on.
    held: Vec<u8>,
    sent: usize,
    /// Whether the flush under way has already yielded once.
    yielded: bool,
    /// When a flush last sent something.
    last_send: Option<Instant>,
}

impl Connection {
    pub fn new(tcp: TcpStream, slot: Option<OwnedSemaphorePermit>) -> Connection {
        Connection {
            tcp,
            _slot: slot,
            held: Vec::new(),
            sent: 0,
            yielded: false,
            last_send: None,
        }
    }

    /// Sends what is held until none is left (ready) or the socket is full (pending, the
    /// socket's waker registered).
    fn send_held(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.held.len() {
            match ready!(Pin::new(&mut self.tcp).poll_write(cx, &self.held[self.sent..])) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => self.sent += n,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        self.held.clear();
        // A burst's buffer is not kept: tens of thousands of mostly idle connections
        // would each hold up to twice COALESCE_BYTES.
        self.held.shrink_to(KEEP_BYTES);
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    fn holds(&self) -> bool {
        self.sent < self.held.len()
    }
}

/// The accepted connections, at most `max` open at once: one more is closed as it
/// arrives (and counted), so that a flood of connections cannot exhaust the server's file
/// descriptors or memory. (Closing, not waiting: a waiting client would only time out.)
pub fn limited(
    incoming: impl Stream<Item = io::Result<TcpStream>>,
    max: usize,
    refused: prometheus::IntCounter,
) -> impl Stream<Item = io::Result<Connection>> {
    let slots = Arc::new(Semaphore::new(max.clamp(1, Semaphore::MAX_PERMITS)));
    incoming.filter_map(move |conn| match conn {
        Ok(tcp) => match slots.clone().try_acquire_owned() {
            Ok(permit) => Some(Ok(Connection::new(tcp, Some(permit)))),
            Err(_) => {
                refused.inc();
                None
            }
        },
        Err(e) => Some(Err(e)),
    })
}

impl AsyncRead for Connection {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.holds() && this.held.len() - this.sent + buf.len() > COALESCE_BYTES {
            ready!(this.send_held(cx))?;
        }
        if !this.holds() && buf.len() >= COALESCE_BYTES {
            return Pin::new(&mut this.tcp).poll_write(cx, buf);
        }
        this.held.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.holds() {
            let burst = this.last_send.is_some_and(|t| t.elapsed() < COALESCE_WINDOW);
            if burst && !this.yielded {
                // Let the other ready tasks queue their frames first: a task that wakes
                // itself is polled again after them.
                this.yielded = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            ready!(this.send_held(cx))?;
            this.last_send = Some(Instant::now());
        }
        this.yielded = false;
        Pin::new(&mut this.tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.send_held(cx))?;
        Pin::new(&mut this.tcp).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        false
    }
}

impl Connected for Connection {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.tcp.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    async fn pair() -> (Connection, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move { TcpStream::connect(addr).await.unwrap() });
        let (server, _) = listener.accept().await.unwrap();
        (Connection::new(server, None), client.await.unwrap())
    }

    #[tokio::test]
    async fn passes_bytes_through_and_reports_no_vectored_writes() {
        let (mut server, mut client) = pair().await;
        assert!(!server.is_write_vectored());
        assert_eq!(server.connect_info().remote_addr(), client.local_addr().ok());
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

    #[tokio::test]
    async fn small_writes_are_held_until_a_flush_sends_them_together() {
        let (mut server, mut client) = pair().await;
        for frame in [&b"one "[..], b"two ", b"three"] {
            server.write_all(frame).await.unwrap();
        }
        let mut got = [0u8; 13];
        let early = tokio::time::timeout(Duration::from_millis(50), client.read(&mut got)).await;
        assert!(early.is_err(), "nothing leaves before the flush");
        server.flush().await.unwrap();
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"one two three");
        // Right after a send, a flush yields once before sending: still whole, in order.
        server.write_all(b"four").await.unwrap();
        server.flush().await.unwrap();
        let mut got = [0u8; 4];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"four");
    }

    #[tokio::test]
    async fn large_and_many_writes_arrive_whole_and_in_order() {
        let (mut server, mut client) = pair().await;
        let bytes: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        let sent = bytes.clone();
        let reader = tokio::spawn(async move {
            let mut got = vec![0u8; 600_000];
            client.read_exact(&mut got).await.unwrap();
            got
        });
        // Small writes past the holding limit, one larger than it, then more small ones.
        let (small, rest) = sent.split_at(100_000);
        for chunk in small.chunks(700) {
            server.write_all(chunk).await.unwrap();
        }
        let (large, tail) = rest.split_at(2 * COALESCE_BYTES);
        server.write_all(large).await.unwrap();
        for chunk in tail.chunks(3000) {
            server.write_all(chunk).await.unwrap();
        }
        server.flush().await.unwrap();
        assert_eq!(reader.await.unwrap(), bytes);
    }
}
