//! The HTTP server: `GET /` (the page), `GET /api/status` (JSON), `GET /metrics`
//! (Prometheus), served by axum on a one-thread tokio runtime of its own.
//!
//! Why its own runtime on its own thread: the crawl's engine is synchronous and owns its I/O
//! runtime, and `crawlrank dashboard --state` has none; a separate small runtime serves both
//! the same way and can never take a worker from the crawl's fetches. The listener is bound
//! *before* anything else starts, so a port in use is an error before the crawl opens its
//! state (nothing is written, nothing lost).

use crate::state::DashboardState;
use anyhow::{bail, Context, Result};
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::{Json, Router};
use std::net::SocketAddr;

/// The page: one self-contained HTML file (inline CSS and JS, no external request).
const PAGE: &str = include_str!("page.html");

/// Who may reach the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only loopback addresses may be bound (the default: a crawl's URLs and numbers are
    /// nobody else's business, and the server has no authentication).
    LoopbackOnly,
    /// Any address (`--dashboard-public`): the operator chose to expose it.
    Public,
}

/// A running dashboard server; dropping it (or [`shutdown`](Self::shutdown)) stops it.
#[derive(Debug)]
pub struct DashboardHandle {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The server's thread; its result is why the server stopped, if it failed.
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl DashboardHandle {
    /// The address actually bound (the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL, `http://ADDR/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops the server, letting requests being answered finish, and waits for its thread.
    /// An error says why the server had stopped by itself before (it serves a view: the
    /// caller reports it and goes on).
    pub fn shutdown(mut self) -> Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(()); // the server may already be gone
        }
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        match thread.join() {
            Ok(served) => served.with_context(|| format!("the dashboard on {} failed", self.addr)),
            Err(_) => bail!("the dashboard on {} panicked", self.addr),
        }
    }
}

impl Drop for DashboardHandle {
    fn drop(&mut self) {
        let _ = self.stop_and_join(); // nobody to tell: `shutdown` is the way to hear it
    }
}

/// The routes over `state`.
pub fn router(state: DashboardState) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/status", get(api_status))
        .route("/metrics", get(metrics))
        .with_state(state)
}

async fn page() -> impl IntoResponse {
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            // The page needs nothing from elsewhere: say so, and the browser enforces it.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; img-src data:",
            ),
        ],
        Html(PAGE),
    )
}

async fn api_status(State(state): State<DashboardState>) -> impl IntoResponse {
    ([(header::CACHE_CONTROL, "no-store")], Json(state.status()))
}

async fn metrics(State(state): State<DashboardState>) -> impl IntoResponse {
    let (sample, counters, running) = state.latest();
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        crate::metrics::render(&sample, &counters, running),
    )
}

/// Binds `addr` and serves `state` there until the handle is dropped. A port in use, or a
/// non-loopback address under [`Access::LoopbackOnly`], is an error naming the address.
pub fn serve(addr: SocketAddr, access: Access, state: DashboardState) -> Result<DashboardHandle> {
    if access == Access::LoopbackOnly && !addr.ip().is_loopback() {
        bail!(
            "the dashboard serves loopback addresses only (127.0.0.1, [::1]), not {addr}: \
             it has no authentication; add --dashboard-public to serve {addr} anyway"
        );
    }
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::AddrInUse => "address in use".to_string(),
            _ => e.to_string(),
        };
        anyhow::anyhow!("cannot serve the dashboard on {addr}: {why}")
    })?;
    let bound = listener
        .local_addr()
        .with_context(|| format!("cannot read the dashboard's address {addr}"))?;
    listener
        .set_nonblocking(true)
        .with_context(|| format!("cannot serve the dashboard on {bound}"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("cannot start the dashboard's runtime")?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let app = router(state);
    // `from_std` registers the socket with the runtime's reactor, which must be entered: done
    // here, so that a failure is reported before the crawl starts.
    let listener = {
        let _guard = rt.enter();
        tokio::net::TcpListener::from_std(listener)
            .with_context(|| format!("cannot serve the dashboard on {bound}"))?
    };
    let thread = std::thread::Builder::new()
        .name("crawlrank-dashboard".into())
        .spawn(move || {
            // A failure ends the server, not the crawl: it is a view, never a reason to stop
            // fetching; `DashboardHandle::shutdown` returns it.
            rt.block_on(async move {
                let shutdown = async {
                    let _ = stop_rx.await;
                };
                axum::serve(listener, app)
                    .with_graceful_shutdown(shutdown)
                    .await
            })
        })
        .context("cannot start the dashboard's thread")?;
    Ok(DashboardHandle {
        addr: bound,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}
