//! The crawl's own HTTP/1.1 connections, on hyper's connection API: opened by a
//! [`Connector`] (DNS by [`crate::dns`], TCP, the proxy's `CONNECT` tunnel, TLS), each one under a permit of a
//! global count that its socket returns only when it is closed ([`Connector::new`]'s
//! `max_open`), and carrying one request at a time ([`Connection`]).
//!
//! Why our own rather than reqwest's (or hyper-util's) client: those pool connections per
//! origin with no global cap, and a connection they drop is closed later, by a task of their
//! own, out of sight. Here a socket is counted from before it is created (before its name is
//! looked up, even) until after it is closed, so the number of open sockets is bounded by
//! construction, not by timing; which connections stay open is decided by the crawl
//! ([`crate::connections`]).
//!
//! Requests go through an HTTP proxy when one is set: `http://` ones in absolute form to the
//! proxy, `https://` ones through a `CONNECT` tunnel. Redirects are not followed and bodies
//! are not decoded (no `Accept-Encoding` is sent).
//!
//! Every address a connection would go to is first checked by the [`AddressGuard`]
//! (`crate::addresses`): loopback, private, link-local and the like are refused
//! ([`ErrorKind::PrivateAddress`]) unless the host is a seed's own. The check is on the
//! resolved addresses, so a name is judged by what it resolves to. Through a proxy the proxy
//! resolves names, so only an IP-literal host can be checked (the proxy's own address is the
//! user's choice and never checked).

use crate::addresses::AddressGuard;
use crate::dns::{Dns, DnsConfig};
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::Empty;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use url::{Host, Url};

pub use crate::error::{ErrorKind, HttpError};

/// A response whose body is still to be read.
pub type Response = hyper::Response<hyper::body::Incoming>;

/// The `Accept` header sent with every request (and recorded in the WARC request records).
pub const ACCEPT: &str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";

/// A socket and the permit it holds until it is closed (dropped after the socket: fields
/// drop in order), counting the bytes hyper reads from it (after TLS: the bytes of the
/// answers), so that a failed request can tell whether any of its answer came
/// ([`Connection::bytes_read`]).
struct Counted<T> {
    io: T,
    read: Arc<AtomicU64>,
    _permit: OwnedSemaphorePermit,
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        if n > 0 {
            self.read.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// An open HTTP/1.1 connection to one origin. Dropping it closes the connection (its task,
/// which owns the socket, ends when no request can come any more, a moment later);
/// [`close`](Self::close) closes it at once and returns when its socket is closed.
pub struct Connection {
    sender: http1::SendRequest<Empty<Bytes>>,
    /// The task that owns the socket and drives the connection.
    task: tokio::task::JoinHandle<()>,
    /// Bytes read from the connection so far (what the server sent, after TLS).
    read: Arc<AtomicU64>,
    /// Requests sent on it so far.
    requests: u64,
    /// `scheme://host:port` of the URLs it serves.
    origin: url::Origin,
    /// Requests in absolute form (plain HTTP through a proxy), with the proxy's credentials
    /// if it has any.
    absolute: bool,
    proxy_auth: Option<Arc<str>>,
}

impl Connection {
    /// Whether it serves `url`'s origin.
    pub fn serves(&self, url: &Url) -> bool {
        self.origin == url.origin()
    }

    /// Waits (at most `wait`) until it can take another request; false if it cannot (the
    /// server closed it, or said `Connection: close`).
    pub async fn reusable(&mut self, wait: Duration) -> bool {
        matches!(
            tokio::time::timeout(wait, self.sender.ready()).await,
            Ok(Ok(()))
        )
    }

    /// Bytes the server has sent on this connection so far (after TLS). A request whose
    /// failure leaves this unchanged got no byte of an answer.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Requests sent on this connection so far: more than 0 means it is a reused one.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Closes the connection now, whatever it was doing (an answer half read is abandoned),
    /// and returns once its socket is closed: a request started after this one returns
    /// cannot meet this connection still open at the server.
    pub async fn close(self) {
        let Connection { sender, task, .. } = self;
        drop(sender);
        task.abort();
        // The task is cancelled the next time the runtime runs it: its future, which owns the
        // socket, is dropped (the socket closed) before the handle resolves.
        let _ = task.await;
    }

    /// Sends `GET url` with the crawl's headers.
    pub async fn get(&mut self, url: &Url, user_agent: &str) -> Result<Response, HttpError> {
        self.requests += 1;
        let target = if self.absolute {
            url[..url::Position::AfterQuery].to_string()
        } else {
            url[url::Position::BeforePath..url::Position::AfterQuery].to_string()
        };
        let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
        let mut req = hyper::Request::get(target)
            .header(hyper::header::HOST, host)
            .header(hyper::header::USER_AGENT, user_agent)
            .header(hyper::header::ACCEPT, ACCEPT);
        if let Some(auth) = self.proxy_auth.as_deref().filter(|_| self.absolute) {
            req = req.header(hyper::header::PROXY_AUTHORIZATION, auth);
        }
        let req = req
            .body(Empty::new())
            .map_err(|e| HttpError::new(ErrorKind::Http, e))?;
        self.sender
            .send_request(req)
            .await
            .map_err(|e| HttpError::new(ErrorKind::Http, e))
    }
}

/// Opens connections, at most `max_open` at once (see the module docs).
pub struct Connector {
    tls: tokio_rustls::TlsConnector,
    /// The proxy's host and port.
    proxy: Option<(String, u16)>,
    /// `Basic …` for a proxy URL with a user name (`http://user:password@host:port`).
    proxy_auth: Option<Arc<str>>,
    connect_timeout: Duration,
    permits: Arc<Semaphore>,
    /// Which addresses may be connected to.
    guard: AddressGuard,
    /// Names to addresses.
    dns: Dns,
}

impl Connector {
    /// A connector through `proxy` (if any), trusting the web PKI roots and the certificates
    /// in the PEM files `ca_certs` (an error names a bad proxy URL or CA file), keeping at
    /// most `max_open` sockets open, connecting only to the addresses `guard` allows.
    pub fn new(
        proxy: Option<&str>,
        ca_certs: &[std::path::PathBuf],
        connect_timeout: Duration,
        max_open: usize,
        guard: AddressGuard,
    ) -> Result<Self> {
        let (proxy, proxy_auth) = match proxy {
            None => (None, None),
            Some(p) => {
                let u = Url::parse(p).with_context(|| format!("bad proxy URL '{p}'"))?;
                let host = u.host_str().filter(|_| u.scheme() == "http");
                let Some(host) = host else {
                    bail!("bad proxy URL '{p}': expected http://[USER:PASSWORD@]HOST[:PORT]");
                };
                let host = host.trim_start_matches('[').trim_end_matches(']');
                let auth = (!u.username().is_empty()).then(|| {
                    let decode =
                        |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
                    let mut pair = decode(u.username());
                    pair.push(b':');
                    pair.extend(decode(u.password().unwrap_or("")));
                    Arc::from(format!("Basic {}", data_encoding::BASE64.encode(&pair)))
                });
                (Some((host.to_string(), u.port().unwrap_or(80))), auth)
            }
        };
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for path in ca_certs {
            for cert in read_ca_file(path)? {
                roots
                    .add(cert)
                    .with_context(|| format!("{} holds a bad certificate", path.display()))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("cannot set up TLS")?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
            proxy,
            proxy_auth,
            connect_timeout,
            permits: Arc::new(Semaphore::new(max_open)),
            guard,
            dns: Dns::new(DnsConfig::default()),
        })
    }

    /// The same connector, resolving names as `dns` says (the default: the system's name
    /// servers, crate::dns).
    pub fn with_dns(mut self, dns: DnsConfig) -> Self {
        self.dns = Dns::new(dns);
        self
    }

    /// Its resolver.
    pub fn dns(&self) -> &Dns {
        &self.dns
    }

    /// Sockets that may still be opened now.
    pub fn available(&self) -> usize {
        self.permits.available_permits()
    }

    /// Opens a connection for `url`'s origin: the name's lookup within the DNS timeout
    /// (crate::dns), then the rest within the connect timeout.
    pub async fn connect(&self, url: &Url) -> Result<Connection, HttpError> {
        // The permit comes first: it covers the resolver's socket too.
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| HttpError::new(ErrorKind::Connect, e))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let target = url.host_str().unwrap_or("");
        let addrs = match &self.proxy {
            Some((h, p)) => {
                // The proxy resolves the target's name: only an IP literal can be checked.
                let literal = match url.host() {
                    Some(Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
                    Some(Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
                    _ => None,
                };
                if let Some(ip) = literal {
                    self.check(target, &[SocketAddr::new(ip, port)])?;
                }
                self.dns.lookup(h, *p).await?
            }
            None => {
                let addrs = self.dns.lookup(target, port).await?;
                self.check(target, &addrs)?
            }
        };
        match tokio::time::timeout(self.connect_timeout, self.open(url, &addrs, permit)).await {
            Ok(r) => r,
            Err(e) => Err(HttpError::new(ErrorKind::Timeout, e)),
        }
    }

    async fn open(
        &self,
        url: &Url,
        addrs: &[SocketAddr],
        permit: OwnedSemaphorePermit,
    ) -> Result<Connection, HttpError> {
        let https = url.scheme() == "https";
        let port = url.port_or_known_default().unwrap_or(80);
        let tcp = connect_any(addrs).await?;
        let _ = tcp.set_nodelay(true);
        let mut io = Counted {
            io: tcp,
            read: Arc::new(AtomicU64::new(0)),
            _permit: permit,
        };
        let origin = url.origin();
        let authority = format!("{}:{port}", url.host_str().unwrap_or(""));
        if !https {
            let auth = self.proxy_auth.clone();
            return handshake(io, origin, self.proxy.is_some(), auth).await;
        }
        if self.proxy.is_some() {
            tunnel(&mut io.io, &authority, self.proxy_auth.as_deref()).await?;
        }
        let name = match url.host() {
            Some(Host::Domain(d)) => ServerName::try_from(d.to_string()),
            Some(Host::Ipv4(ip)) => Ok(ServerName::from(std::net::IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => Ok(ServerName::from(std::net::IpAddr::V6(ip))),
            None => ServerName::try_from(String::new()),
        }
        .map_err(|e| HttpError::new(ErrorKind::Tls, e))?;
        let Counted {
            io: tcp,
            read,
            _permit,
        } = io;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| HttpError::new(ErrorKind::Tls, e))?;
        let io = Counted {
            io: tls,
            read,
            _permit,
        };
        handshake(io, origin, false, None).await
    }
}

impl Connector {
    /// The addresses of `addrs` (those of `host`) that may be connected to; an error when
    /// none may (then nothing is connected to). A name with public and non-public addresses
    /// keeps its public ones.
    fn check(&self, host: &str, addrs: &[SocketAddr]) -> Result<Vec<SocketAddr>, HttpError> {
        let mut refused = None;
        let allowed: Vec<SocketAddr> = addrs
            .iter()
            .filter(|a| match self.guard.refuses(host, a.ip()) {
                Some(kind) => {
                    refused.get_or_insert((a.ip(), kind));
                    false
                }
                None => true,
            })
            .copied()
            .collect();
        match refused {
            Some((ip, kind)) if allowed.is_empty() => Err(HttpError::new(
                ErrorKind::PrivateAddress,
                format!(
                    "{host} is at {ip}, not a public address ({kind}): not connected to (only \
                     the seeds' own hosts may be, unless --allow-private-networks)"
                ),
            )),
            _ => Ok(allowed),
        }
    }
}

/// A TCP connection to the first of `addrs` that accepts one.
async fn connect_any(addrs: &[SocketAddr]) -> Result<TcpStream, HttpError> {
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(HttpError::new(
        ErrorKind::Connect,
        last.unwrap_or_else(|| std::io::Error::other("no address")),
    ))
}

/// Asks the proxy on `tcp` for a tunnel to `authority` (`host:port`).
async fn tunnel(tcp: &mut TcpStream, authority: &str, auth: Option<&str>) -> Result<(), HttpError> {
    let auth = auth.map_or(String::new(), |a| format!("Proxy-Authorization: {a}\r\n"));
    let req = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{auth}\r\n");
    let io = |e| HttpError::new(ErrorKind::Connect, e);
    tcp.write_all(req.as_bytes()).await.map_err(io)?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tcp.read(&mut buf).await.map_err(io)?;
        if n == 0 || head.len() + n > 16 << 10 {
            return Err(HttpError::new(
                ErrorKind::Connect,
                "the proxy closed the tunnel",
            ));
        }
        head.extend_from_slice(&buf[..n]);
    }
    let status = head.split(|&b| b == b' ').nth(1).unwrap_or_default();
    if status != b"200" {
        let line = String::from_utf8_lossy(head.split(|&b| b == b'\r').next().unwrap_or_default())
            .into_owned();
        return Err(HttpError::new(
            ErrorKind::Connect,
            format!("the proxy refused the tunnel: {line}"),
        ));
    }
    Ok(())
}

/// The HTTP/1.1 handshake on `io`; the connection's task is spawned on the current runtime.
async fn handshake<T>(
    io: Counted<T>,
    origin: url::Origin,
    absolute: bool,
    proxy_auth: Option<Arc<str>>,
) -> Result<Connection, HttpError>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let read = io.read.clone();
    let (sender, conn) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| HttpError::new(ErrorKind::Http, e))?;
    let task = tokio::spawn(async move {
        // Ends when the connection closes or no request can come (its sender dropped);
        // the socket and its permit go with it.
        let _ = conn.await;
    });
    Ok(Connection {
        sender,
        task,
        read,
        requests: 0,
        origin,
        absolute,
        proxy_auth,
    })
}

/// The certificates of a PEM file; an error naming the file when it has none or a bad one.
fn read_ca_file(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>> {
    let pem = std::fs::read(path)
        .with_context(|| format!("cannot read CA certificate file {}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{e:?}"))
        .with_context(|| format!("{} is not a PEM certificate file", path.display()))?;
    if certs.is_empty() {
        bail!(
            "{} holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::io::{Read, Write};

    /// A one-connection proxy on loopback that answers every request `200 ok` and sends back
    /// the heads it received.
    fn proxy() -> (u16, std::sync::mpsc::Receiver<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    return;
                }
                head.extend_from_slice(&buf[..n]);
                if head.ends_with(b"\r\n\r\n") {
                    let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
                    head.clear();
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                }
            }
        });
        (port, rx)
    }

    #[tokio::test]
    async fn a_socket_is_counted_until_closed_and_requests_carry_the_proxy_credentials() {
        let (port, heads) = proxy();
        let p = format!("http://us%40er:p%3Ass@127.0.0.1:{port}");
        let connector = Connector::new(
            Some(&p),
            &[],
            Duration::from_secs(5),
            2,
            AddressGuard::default(),
        )
        .unwrap();
        assert_eq!(connector.available(), 2);
        let url = Url::parse("http://a.test/x?y#z").unwrap();
        let mut conn = connector.connect(&url).await.unwrap();
        assert_eq!(connector.available(), 1);
        for _ in 0..2 {
            let mut resp = conn.get(&url, "ua").await.unwrap();
            assert_eq!(resp.status(), 200);
            while resp.body_mut().frame().await.is_some() {}
            assert!(conn.reusable(Duration::from_secs(1)).await);
            let head = heads.recv().unwrap().to_ascii_lowercase();
            assert!(
                head.starts_with("get http://a.test/x?y http/1.1\r\n"),
                "{head}"
            );
            // base64("us@er:p:ss")
            assert!(
                head.contains("proxy-authorization: basic dxnazxi6cdpzcw=="),
                "{head}"
            );
            assert!(head.contains("host: a.test\r\n") && head.contains("user-agent: ua\r\n"));
        }
        assert!(conn.serves(&Url::parse("http://a.test/other").unwrap()));
        assert!(!conn.serves(&Url::parse("https://a.test/x").unwrap()));
        drop(conn);
        // The permit comes back once the connection's task has closed the socket.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while connector.available() < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(connector.available(), 2);
    }

    #[tokio::test]
    async fn non_public_addresses_are_refused_unless_the_host_is_named() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let guard = AddressGuard {
            allow_private: false,
            named_hosts: ["127.0.0.1".to_string()].into(),
        };
        let timeout = Duration::from_secs(5);
        let direct = Connector::new(None, &[], timeout, 2, guard.clone()).unwrap();
        let url = |u: String| Url::parse(&u).unwrap();
        // localhost resolves to loopback, and is not the seed's host name.
        let err = direct
            .connect(&url(format!("http://localhost:{port}/")))
            .await
            .err()
            .unwrap();
        assert_eq!(err.kind, ErrorKind::PrivateAddress);
        let said = std::error::Error::source(&err).unwrap().to_string();
        assert!(
            said.contains("localhost is at") && said.contains("(loopback)"),
            "{said}"
        );
        for other in ["127.0.0.2", "[::ffff:127.0.0.1]", "0.0.0.0"] {
            let err = direct
                .connect(&url(format!("http://{other}:{port}/")))
                .await
                .err()
                .unwrap();
            assert_eq!(err.kind, ErrorKind::PrivateAddress, "{other}");
        }
        assert!(direct
            .connect(&url(format!("http://127.0.0.1:{port}/")))
            .await
            .is_ok());
        // No socket was left counted by the refusals.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while direct.available() < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(direct.available(), 2);
        // Through a proxy (nothing listens on port 9): an IP literal is refused before the
        // proxy is asked, a name is the proxy's business.
        let proxied = Connector::new(Some("http://127.0.0.1:9"), &[], timeout, 2, guard).unwrap();
        for (target, kind) in [
            ("http://10.0.0.1/", ErrorKind::PrivateAddress),
            ("http://intranet.test/", ErrorKind::Connect),
        ] {
            let err = proxied.connect(&url(target.into())).await.err().unwrap();
            assert_eq!(err.kind, kind, "{target}");
        }
    }

    #[test]
    fn a_bad_proxy_url_is_refused() {
        for p in ["not a url", "https://127.0.0.1:1", "socks5://127.0.0.1:1"] {
            let guard = AddressGuard::default();
            let err = Connector::new(Some(p), &[], Duration::from_secs(1), 1, guard)
                .err()
                .unwrap();
            assert!(format!("{err:#}").contains("bad proxy URL"), "{err:#}");
        }
    }
}
