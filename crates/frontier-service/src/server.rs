//! Serving a [`FrontierService`] (the URLFrontier service and crawlrank's extension, on one
//! port) over gRPC (HTTP/2, plaintext) on a TCP listener: in a
//! tokio runtime of the caller's ([`spawn`], used by the tests) or of its own until Ctrl-C
//! or SIGTERM ([`serve_until_ctrl_c`], used by `crawlrank frontier serve`).
//!
//! Stopping is one call, [`RunningServer::shutdown`], and it returns only once the node is
//! wholly stopped — calls answered, background tasks ended, store closed — so that a node can
//! be started again on the same state directory at once, in the same process (a test, an
//! embedding program) or another.

use crate::cluster::ClusterConfig;
use crate::ext_proto::crawlrank_frontier_server::CrawlrankFrontierServer;
use crate::proto::url_frontier_server::UrlFrontierServer;
use crate::service::FrontierService;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::TcpListenerStream;

/// HTTP/2's flow-control window of each stream the service reads: what a client may send
/// ahead of what the service has read.
///
/// Why this small, and the connection's window ([`CONNECTION_WINDOW`]) that large: a client
/// held back by flow control must be pushed back, never disconnected. The HTTP/2 library
/// (h2) charges every DATA frame under 256 bytes that the service has not read yet
/// `256 - length` bytes against a budget of half the connection's window, and answers GOAWAY
/// "too_many_data_frames" once the budget is spent. gRPC clients such as Python's grpcio send
/// each message of a stream in a frame of its own, a `PutURLs` item in about 50 bytes; when
/// the service stops reading a stream (its acks wait for a client that does not read them,
/// or for a commit), the stream's window is what the client may still send. With the
/// library's default windows (1 MiB each: 20,000 such frames, 4 MB charged against a budget
/// of 512 KiB) a stalled stream spent the budget. With 64 KiB, a stalled stream holds at
/// most 6,554 frames of 10 bytes or more (gRPC's 5-byte prefix and the smallest item),
/// 1.6 MB charged, against a budget of 8 MiB: five streams stalled at once with the smallest
/// items, dozens with real URLs, stay within it.
const STREAM_WINDOW: u32 = 64 * 1024;

/// HTTP/2's flow-control window of a whole connection, whose half is the budget for small
/// frames ([`STREAM_WINDOW`] says why it is large).
const CONNECTION_WINDOW: u32 = 16 * 1024 * 1024;

/// A server running on the current tokio runtime.
pub struct RunningServer {
    addr: SocketAddr,
    /// What is served, shut down after serving stops.
    service: FrontierService,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), tonic::transport::Error>>,
}

impl RunningServer {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, lets the calls in progress finish, then shuts the service down
    /// ([`FrontierService::shutdown`]: its background tasks end, what is queued is committed,
    /// the store is closed), and returns once all of that is done: the state directory may
    /// be opened again at once.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let served = match self.task.await {
            Ok(r) => r.context("the frontier server failed"),
            Err(e) => Err(anyhow::Error::from(e).context("the frontier server task failed")),
        };
        // Even when serving failed: the store must be closed all the same.
        let stopped = self.service.shutdown().await;
        served.and(stopped)
    }
}

/// Serves `service` on `listener` from the current tokio runtime.
pub fn spawn(service: FrontierService, listener: TcpListener) -> Result<RunningServer> {
    let addr = listener
        .local_addr()
        .context("the listener has no address")?;
    service.set_node_address(addr.to_string());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(
        tonic::transport::Server::builder()
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .add_service(UrlFrontierServer::new(service.clone()))
            .add_service(CrawlrankFrontierServer::new(service.clone()))
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async {
                let _ = stopped.await;
            }),
    );
    Ok(RunningServer {
        addr,
        service,
        stop: Some(stop),
        task,
    })
}

/// Binds `addr` and serves `service` there until Ctrl-C (or SIGTERM, on Unix: what a
/// service manager or `kill` sends), then shuts it down ([`RunningServer::shutdown`]: the
/// store is closed when this returns), on a runtime of its own, as a node
/// of `cluster` if one is given (joined before listening; serving stops with an error if the
/// node can no longer apply what the other nodes hand it); `on_listening` is told the bound
/// address first.
pub fn serve_until_ctrl_c(
    service: FrontierService,
    addr: SocketAddr,
    cluster: Option<&ClusterConfig>,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the frontier service's runtime")?;
    runtime.block_on(async move {
        let mut applying = match cluster {
            Some(c) => Some(service.join_cluster(c).await?),
            None => None,
        };
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        // Listening for SIGTERM before serving: one sent as soon as the address is said
        // stops the service gracefully too.
        let stop = stop_signal()?;
        let server = spawn(service, listener)?;
        on_listening(server.addr());
        let failed = async {
            match applying.as_mut() {
                Some(task) => match task.await {
                    Ok(Ok(())) => anyhow::anyhow!("the node stopped applying forwarded items"),
                    Ok(Err(e)) => e,
                    Err(e) => anyhow::anyhow!("the task applying forwarded items failed: {e}"),
                },
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            stop = stop => {
                if let Err(e) = stop {
                    let _ = server.shutdown().await;
                    return Err(e);
                }
                server.shutdown().await
            }
            e = failed => {
                let _ = server.shutdown().await;
                Err(e)
            }
        }
    })
}

/// Ends at Ctrl-C (SIGINT) or, on Unix, SIGTERM. SIGTERM's handler is installed when this is
/// called, Ctrl-C's when the future is first polled.
fn stop_signal() -> Result<impl std::future::Future<Output = Result<()>>> {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    Ok(async move {
        #[cfg(unix)]
        tokio::select! {
            stop = tokio::signal::ctrl_c() => stop.context("cannot wait for Ctrl-C"),
            _ = term.recv() => Ok(()),
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c()
            .await
            .context("cannot wait for Ctrl-C")
    })
}
