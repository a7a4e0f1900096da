//! The HTTP server: accept loop, routing by host, responses, the streamed body type that
//! records each request in the log, and shutdown.
//!
//! hyper 1 directly (no framework) because routing is by host before path, requests arrive
//! in proxy (absolute-URI) form as well as origin form, and the body type must know when its
//! last byte leaves so the log's `finish` times are exact. The hot path — a graph page — takes
//! one hash lookup, one atomic increment and one small `String` for the HTML; the only lock is
//! the log's push.
//!
//! HTTPS goes through the proxy route too: with [`TestWebConfig::tls`] a `CONNECT host:port`
//! is answered 200, the upgraded connection is wrapped in TLS with a certificate for the SNI
//! name (see [`crate::tls`]), and the tunnel is served by the same handler, its requests
//! logged with `tls: true`. The `CONNECT` itself is not logged: it is not a page request, and
//! counting it would make a polite crawler look impolite (it precedes the first `GET` by
//! microseconds).

use crate::broken;
use crate::config::{injected_error, names_agent, robots_body, TestWebConfig};
use crate::log::LogEntry;
use crate::reply::{BodySpec, Reply};
use crate::site::{host_of_authority, Site};
use crate::tls::TestCa;
use crate::traps::{self, TRAPS_HOST};
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use crawlrank_graph::Csr;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{HeaderValue, CONTENT_TYPE, HOST, LOCATION};
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

/// Everything the request handlers share.
pub(crate) struct Shared {
    pub site: Site,
    pub cfg: TestWebConfig,
    robots: Bytes,
    traps_robots: Bytes,
    /// Requests so far per node: the `attempt` of error injection.
    attempts: Vec<AtomicU32>,
    pub trap_state: traps::State,
    trap_hosts: crate::trap_hosts::State,
    pub log: Mutex<Vec<LogEntry>>,
    /// Requests received, counted even when the log is off.
    pub requests: AtomicU64,
    pub started: Instant,
    /// Set (and notified) when the accept loop and every connection have ended.
    done: (Mutex<bool>, Condvar),
    done_tx: watch::Sender<bool>,
    /// With [`TestWebConfig::tls`]: the CA and the acceptor of `CONNECT` tunnels.
    pub tls: Option<(Arc<TestCa>, TlsAcceptor)>,
    /// The tunnels' tasks, so that shutdown waits for (and then cuts) them like connections.
    tunnels: Mutex<JoinSet<()>>,
    /// `CONNECT` tunnels opened, and TLS handshakes that failed in them.
    pub tunnels_opened: AtomicU64,
    pub handshake_failures: AtomicU64,
    /// Stays `false` until shutdown (tunnels are spawned by handlers, which have no receiver
    /// of their own).
    stop_rx: watch::Receiver<bool>,
}

/// What a [`crate::TestWeb`] is started with: the graph, one URL per node when given, the
/// address to listen on and the configuration.
pub(crate) struct Spec {
    pub graph: Arc<Csr>,
    pub urls: Option<Vec<String>>,
    pub addr: SocketAddr,
    pub cfg: TestWebConfig,
}

/// The server side of a [`crate::TestWeb`].
pub(crate) struct Handle {
    pub shared: Arc<Shared>,
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Handle {
    pub async fn start(spec: Spec) -> Result<Handle> {
        let (stop, stop_rx) = watch::channel(false);
        let (shared, listener, addr) = prepare(spec, stop_rx.clone()).await?;
        tokio::spawn(accept_loop(listener, shared.clone(), stop_rx));
        Ok(Handle {
            shared,
            addr,
            stop,
            thread: Mutex::new(None),
        })
    }

    pub fn start_blocking(spec: Spec) -> Result<Handle> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("crawlrank-testweb".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = tx.send(Err(
                            anyhow::Error::from(e).context("cannot start a tokio runtime")
                        ));
                        return;
                    }
                };
                rt.block_on(async move {
                    let (stop, stop_rx) = watch::channel(false);
                    match prepare(spec, stop_rx.clone()).await {
                        Ok((shared, listener, addr)) => {
                            let _ = tx.send(Ok((shared.clone(), addr, stop)));
                            accept_loop(listener, shared, stop_rx).await;
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                });
            })
            .context("cannot start the server thread")?;
        match rx.recv() {
            Ok(Ok((shared, addr, stop))) => Ok(Handle {
                shared,
                addr,
                stop,
                thread: Mutex::new(Some(thread)),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                bail!("the server thread died while starting")
            }
        }
    }

    pub async fn shutdown(&self) {
        self.stop.send_replace(true);
        let mut rx = self.shared.done_tx.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }

    pub fn shutdown_blocking(&self) {
        self.stop.send_replace(true);
        let (lock, cv) = &self.shared.done;
        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        drop(done);
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// Validates, builds the site and binds: everything that can fail, before anything runs.
async fn prepare(
    spec: Spec,
    stop_rx: watch::Receiver<bool>,
) -> Result<(Arc<Shared>, TcpListener, SocketAddr)> {
    let Spec {
        graph,
        urls,
        addr,
        cfg,
    } = spec;
    cfg.validate()?;
    if !addr.ip().is_loopback() {
        bail!(
            "the test web listens on loopback addresses only (127.0.0.0/8, ::1), not {}",
            addr.ip()
        );
    }
    let n = graph.num_nodes();
    let site = Site::new(graph, urls, cfg.pages_per_host, cfg.tls)?;
    let tls = if cfg.tls {
        let ca = Arc::new(TestCa::new()?);
        let acceptor = TlsAcceptor::from(ca.server_config()?);
        Some((ca, acceptor))
    } else {
        None
    };
    let robots = match &cfg.robots {
        Some(r) => robots_body(r)?,
        None => "User-agent: *\nDisallow:\n".to_owned(),
    };
    // One `User-agent: *` group when the rules name no agent: not every robots parser merges
    // groups for the same agent, as RFC 9309 asks.
    let traps_robots = match &cfg.robots {
        Some(r) if !names_agent(r) => format!(
            "User-agent: *\nDisallow: {}\n{}\n",
            traps::DISALLOWED_PREFIX,
            r.trim_end()
        ),
        _ => format!(
            "User-agent: *\nDisallow: {}\n\n{robots}",
            traps::DISALLOWED_PREFIX
        ),
    };
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        site,
        robots: Bytes::from(robots),
        traps_robots: Bytes::from(traps_robots),
        attempts: (0..n).map(|_| AtomicU32::new(0)).collect(),
        trap_state: traps::State::new(&cfg),
        trap_hosts: crate::trap_hosts::State::new(&cfg),
        cfg,
        log: Mutex::new(Vec::new()),
        requests: AtomicU64::new(0),
        started: Instant::now(),
        done: (Mutex::new(false), Condvar::new()),
        done_tx: watch::channel(false).0,
        tls,
        tunnels: Mutex::new(JoinSet::new()),
        tunnels_opened: AtomicU64::new(0),
        handshake_failures: AtomicU64::new(0),
        stop_rx,
    });
    Ok((shared, listener, addr))
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut conns = JoinSet::new();
    let conn_stop = stop.clone();
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            r = listener.accept() => r,
            // Reap finished connections so the set does not grow with every connection.
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
        };
        let Ok((stream, _)) = accepted else {
            // Out of file descriptors and the like: wait instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        // Small responses must not wait for Nagle's algorithm.
        let _ = stream.set_nodelay(true);
        conns.spawn(serve_tcp(stream, shared.clone(), conn_stop.clone()));
    }
    drop(listener);
    let grace = shared.cfg.shutdown_grace;
    let take_tunnels =
        || std::mem::take(&mut *shared.tunnels.lock().unwrap_or_else(|e| e.into_inner()));
    // Dropping the drain at the deadline drops (and so aborts) the tunnels it holds.
    let _ = tokio::time::timeout(grace, async {
        while conns.join_next().await.is_some() {}
        // Connections still draining may have opened tunnels meanwhile: until none is left.
        loop {
            let mut tunnels = take_tunnels();
            if tunnels.is_empty() {
                break;
            }
            while tunnels.join_next().await.is_some() {}
        }
    })
    .await;
    conns.abort_all();
    while conns.join_next().await.is_some() {}
    let mut tunnels = take_tunnels();
    tunnels.abort_all();
    while tunnels.join_next().await.is_some() {}
    let (lock, cv) = &shared.done;
    *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
    cv.notify_all();
    shared.done_tx.send_replace(true);
}

/// Serves a plain TCP connection. With traps on, its first request head is read here first: a
/// connection whose first request names a broken-answer trap host is answered by hand
/// ([`crate::broken`]: hyper writes only well-formed HTTP), any other goes on to hyper with
/// the bytes already read.
async fn serve_tcp(stream: TcpStream, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    if !shared.cfg.traps {
        return serve_connection(stream, shared, false, stop).await;
    }
    let mut stream = stream;
    let first = tokio::select! {
        first = broken::read_first_head(&mut stream) => first,
        _ = stop.wait_for(|s| *s) => return,
    };
    let Some((buf, arrival)) = first else {
        return;
    };
    if !broken::is_broken(&buf) {
        return serve_connection(broken::Prefixed::new(buf, stream), shared, false, stop).await;
    }
    let record = |entry: LogEntry| {
        shared.requests.fetch_add(1, Ordering::Relaxed);
        if shared.cfg.record_log {
            shared
                .log
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(entry);
        }
    };
    tokio::select! {
        _ = broken::serve(stream, buf, arrival, record) => {}
        _ = stop.wait_for(|s| *s) => {}
    }
}

/// Serves one connection — a TCP connection, or the inside of a TLS tunnel (`tls`) — until
/// the client closes it or the server stops.
async fn serve_connection<I>(io: I, shared: Arc<Shared>, tls: bool, mut stop: watch::Receiver<bool>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req| handle(shared.clone(), req, tls));
    let conn = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), svc)
        .with_upgrades();
    tokio::pin!(conn);
    let stopped = tokio::select! {
        _ = conn.as_mut() => false,
        _ = stop.wait_for(|s| *s) => true,
    };
    if stopped {
        conn.as_mut().graceful_shutdown();
        let _ = conn.await;
    }
}

/// Answers a `CONNECT`: 200, then TLS and the usual handler inside the upgraded connection.
/// (Without TLS configured a `CONNECT` is 405, as any method but `GET` and `HEAD`.)
fn connect(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<TwBody> {
    let acceptor = shared.tls.as_ref().expect("TLS configured").1.clone();
    shared.tunnels_opened.fetch_add(1, Ordering::Relaxed);
    let tunnel_shared = shared.clone();
    let stop = shared.stop_rx.clone();
    let mut tunnels = shared.tunnels.lock().unwrap_or_else(|e| e.into_inner());
    while tunnels.try_join_next().is_some() {}
    tunnels.spawn(async move {
        let Ok(upgraded) = hyper::upgrade::on(req).await else {
            return;
        };
        match acceptor.accept(TokioIo::new(upgraded)).await {
            Ok(stream) => serve_connection(stream, tunnel_shared, true, stop).await,
            Err(_) => {
                tunnel_shared
                    .handshake_failures
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    // Unlogged (see the module's comment): the pending entry never reaches the log.
    let pending = Pending {
        shared: shared.clone(),
        entry: None,
    };
    Response::builder()
        .status(200)
        .body(TwBody::new(BodySpec::Bytes(Bytes::new()), pending))
        .expect("valid status")
}

/// The log entry of a request being answered; pushed exactly once, when the body is done or
/// abandoned (or, if the handler itself is dropped — client gone during `--latency` —, then).
struct Pending {
    shared: Arc<Shared>,
    entry: Option<LogEntry>,
}

impl Pending {
    fn finish(&mut self, bytes: u64, complete: bool) {
        if let Some(mut e) = self.entry.take() {
            if self.shared.cfg.record_log {
                e.finish = Instant::now();
                e.bytes = bytes;
                e.complete = complete;
                self.shared
                    .log
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(e);
            }
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.finish(0, false);
    }
}

/// The response body: the bytes of a [`BodySpec`], logging the request when the last frame
/// is handed out (so before the client can have it) or when dropped unfinished.
pub(crate) struct TwBody {
    spec: BodySpec,
    /// Frames handed out so far in a `Repeat` (head = 0, chunks 1..=count, tail = count + 1).
    next: u64,
    sent: u64,
    total: u64,
    pending: Pending,
}

impl TwBody {
    fn new(spec: BodySpec, pending: Pending) -> TwBody {
        let total = match &spec {
            BodySpec::Bytes(b) => b.len() as u64,
            BodySpec::Repeat {
                head,
                chunk,
                count,
                tail,
            } => head.len() as u64 + chunk.len() as u64 * count + tail.len() as u64,
        };
        TwBody {
            spec,
            next: 0,
            sent: 0,
            total,
            pending,
        }
    }
}

impl Body for TwBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let data = match &this.spec {
            BodySpec::Bytes(b) => (this.next == 0).then(|| b.clone()),
            BodySpec::Repeat {
                head,
                chunk,
                count,
                tail,
            } => match this.next {
                0 => Some(head.clone()),
                i if i <= *count => Some(chunk.clone()),
                i if i == count + 1 => Some(tail.clone()),
                _ => None,
            },
        };
        this.next += 1;
        match data {
            Some(d) => {
                this.sent += d.len() as u64;
                if this.sent == this.total {
                    this.pending.finish(this.sent, true);
                }
                Poll::Ready(Some(Ok(Frame::data(d))))
            }
            None => {
                this.pending.finish(this.sent, true);
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        // Only once logged: hyper then skips a last poll, and an empty body is still polled
        // once so that it gets logged at the right moment.
        self.pending.entry.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.total - self.sent)
    }
}

impl Drop for TwBody {
    fn drop(&mut self) {
        let complete = self.sent == self.total;
        self.pending.finish(self.sent, complete);
    }
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    tls: bool,
) -> Result<Response<TwBody>, Infallible> {
    let arrival = Instant::now();
    if req.method() == Method::CONNECT && !tls && shared.tls.is_some() {
        return Ok(connect(&shared, req));
    }
    shared.requests.fetch_add(1, Ordering::Relaxed);
    let authority = match req.uri().authority() {
        Some(a) => Some(a.as_str()),
        None => req.headers().get(HOST).and_then(|h| h.to_str().ok()),
    };
    let host = authority.map(|a| host_of_authority(a).to_ascii_lowercase());
    let path = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let mut pending = Pending {
        shared: shared.clone(),
        entry: Some(LogEntry {
            arrival,
            finish: arrival,
            host: host.clone().unwrap_or_default(),
            path,
            status: 0,
            bytes: 0,
            complete: false,
            node: None,
            attempt: 0,
            tls,
        }),
    };
    if !shared.cfg.latency.is_zero() {
        tokio::time::sleep(shared.cfg.latency).await;
    }
    let entry = pending.entry.as_mut().expect("not finished yet");
    let reply = if req.method() != Method::GET && req.method() != Method::HEAD {
        Reply::status_page(405)
    } else if let Some(host) = &host {
        route(&shared, host, entry)
    } else {
        Reply::status_page(400)
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    entry_status(&mut pending, reply.status);
    let mut builder = Response::builder().status(reply.status);
    if let Some(ct) = reply.content_type {
        builder = builder.header(CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    if let Some(loc) = &reply.location {
        if let Ok(v) = HeaderValue::from_str(loc) {
            builder = builder.header(LOCATION, v);
        }
    }
    if let Some(ra) = &reply.retry_after {
        if let Ok(v) = HeaderValue::from_str(ra) {
            builder = builder.header(hyper::header::RETRY_AFTER, v);
        }
    }
    if reply.status == 405 {
        builder = builder.header(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    }
    let body = if req.method() == Method::HEAD {
        BodySpec::Bytes(Bytes::new())
    } else {
        reply.body
    };
    let resp = builder
        .body(TwBody::new(body, pending))
        .expect("valid status and headers");
    Ok(resp)
}

fn entry_status(p: &mut Pending, status: u16) {
    if let Some(e) = p.entry.as_mut() {
        e.status = status;
    }
}

/// `scheme://host` of the graph's pages on `host`.
fn origin(shared: &Shared, host: &str) -> String {
    let scheme = if shared.cfg.tls { "https" } else { "http" };
    format!("{scheme}://{host}")
}

/// The sitemaps of a graph host ([`TestWebConfig::sitemaps`]), `None` for other paths. The
/// host's pages are found by a scan of every node: fine for tests, not for huge webs.
fn sitemap_reply(shared: &Shared, host: &str, path: &str) -> Option<Reply> {
    let urlset = || {
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for v in 0..shared.site.num_nodes() as u32 {
            let url = shared.site.url(v);
            if crate::site::split_url(url).is_some_and(|(_, h, _)| h == host) {
                xml.push_str(&format!("<url><loc>{url}</loc></url>\n"));
            }
        }
        xml.push_str("</urlset>\n");
        xml
    };
    Some(match path {
        "/sitemap.xml" => Reply::with_body(
            200,
            "application/xml",
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
                 <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
                 <sitemap><loc>{}/sitemap-pages.xml.gz</loc></sitemap>\n</sitemapindex>\n",
                origin(shared, host)
            ),
        ),
        "/sitemap-pages.xml.gz" => {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(urlset().as_bytes()).ok()?;
            Reply::with_body(200, "application/gzip", gz.finish().ok()?)
        }
        "/sitemap-robots.xml" => Reply::with_body(200, "application/xml", urlset()),
        _ => return None,
    })
}

/// Chooses the reply for `host` + the entry's path; fills in `node` and `attempt`.
fn route(shared: &Shared, host: &str, entry: &mut LogEntry) -> Reply {
    let path = entry.path.as_str();
    if shared.cfg.traps && host == TRAPS_HOST {
        if path == "/robots.txt" {
            return Reply::with_body(
                200,
                "text/plain; charset=utf-8",
                shared.traps_robots.clone(),
            );
        }
        return traps::reply(&shared.site, &shared.trap_state, path);
    }
    if shared.cfg.traps {
        if let Some(r) = crate::trap_hosts::farm_reply(host, path) {
            return r;
        }
        let name = host.strip_suffix(crate::trap_hosts::TRAP_HOST_SUFFIX);
        if let Some(r) = name.and_then(|n| crate::trap_hosts::reply(&shared.trap_hosts, n, path)) {
            return r;
        }
    }
    if shared.cfg.sitemap_hosts {
        if let Some(r) = crate::sitemap_hosts::reply(host, path) {
            return r;
        }
    }
    if path == "/robots.txt" {
        return if !shared.site.has_host(host) {
            Reply::status_page(404)
        } else if shared.cfg.sitemaps {
            let mut body = shared.robots.to_vec();
            body.extend_from_slice(
                format!("\nSitemap: {}/sitemap-robots.xml\n", origin(shared, host)).as_bytes(),
            );
            Reply::with_body(200, "text/plain; charset=utf-8", body)
        } else {
            Reply::with_body(200, "text/plain; charset=utf-8", shared.robots.clone())
        };
    }
    if shared.cfg.sitemaps && shared.site.has_host(host) {
        if let Some(reply) = sitemap_reply(shared, host, path) {
            return reply;
        }
    }
    let Some(v) = shared.site.lookup(host, path) else {
        return Reply::status_page(404);
    };
    let attempt = shared.attempts[v as usize].fetch_add(1, Ordering::Relaxed);
    entry.node = Some(v);
    entry.attempt = attempt;
    if let Some(code) = injected_error(shared.cfg.seed, shared.cfg.error_rate, v, attempt) {
        return Reply::status_page(code);
    }
    let extra: &[&str] = if shared.cfg.traps && shared.cfg.trap_link_nodes.contains(&v) {
        &[traps::INDEX_URL]
    } else {
        &[]
    };
    Reply::html(shared.site.render(v, extra))
}
