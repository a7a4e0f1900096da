//! HTTP fetching: one page, one robots.txt or one sitemap per call, run as tokio tasks.
//!
//! Redirects are never followed by the client: a 3xx's `Location` becomes the page's single
//! out-link and goes through the frontier like any other link, so the policy (and
//! politeness, and dedup) decide about it. Bodies are streamed with a size cap (an HTML page
//! over it is parsed from its first bytes, see `fetch_page_on`); a response whose
//! `Content-Type` is not HTML is only downloaded to be archived or read as a sitemap. Parsing
//! and WARC compression are CPU work and run on the CPU pool ([`crate::cpu`]), off the I/O
//! threads.
//! Nothing here fails the crawl: every failure is an outcome the engine counts, retries or
//! records. A request is sent again here, at once, in one case only: its reused connection
//! was closed by the server before one byte of an answer came ([`FailedRequest`]); every
//! other failure closes its connection and goes back to the engine, whose retry waits for the
//! host's delay and back-off.

use crate::http::{Connection, Connector, ErrorKind, HttpError, Response};
use crate::links::{extract_links, UrlRules};
use crate::page::{Outcome, TransportFailure};
use crate::robots::{robots_rules, RobotsAnswer, RobotsRules};
use crate::warc;
use http_body_util::BodyExt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use url::Url;

/// What fetching needs to know.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// The `User-Agent` header; its product token is the robots.txt agent
    /// ([`robots_agent`](Self::robots_agent)).
    pub user_agent: String,
    /// Longest wait for a connection to be established.
    pub connect_timeout: Duration,
    /// Longest time for a whole request, body included.
    pub timeout: Duration,
    /// Largest body read, in bytes: an HTML page or a non-HTML body to archive is cut there
    /// (an HTML page is parsed from its first `max_body` bytes); a larger redirect, error or
    /// sitemap body is abandoned ([`Outcome::TooLarge`]).
    pub max_body: usize,
    /// Send every request through this HTTP proxy (tests route a whole synthetic web to one
    /// loopback server this way).
    pub proxy: Option<String>,
    /// PEM files of extra certificate authorities to trust for HTTPS, beside the built-in
    /// web PKI roots (the test web's own CA; a company's internal CA).
    pub ca_certs: Vec<std::path::PathBuf>,
    /// Which links are kept: URL length and depth limits against spider traps.
    pub url_rules: UrlRules,
    /// Write WARC records.
    pub warc: bool,
    /// Read non-HTML responses that may be sitemaps as sitemaps (crate::sitemap).
    pub sitemaps: bool,
    /// Archive non-HTML responses too (`--archive all`), their first `max_body` bytes, with
    /// `WARC-Truncated` when the cap cut the body; `false` (`--archive html`) archives HTML
    /// pages (and sitemaps) only.
    pub archive_all: bool,
    /// Connect to loopback, private, link-local and other non-public addresses of any host
    /// (`--allow-private-networks`); by default only the seeds' own hosts may have one
    /// (crate::addresses).
    pub allow_private_networks: bool,
    /// How host names are resolved (crate::dns): name servers, timeout, concurrent lookups,
    /// failures before a name is given up.
    pub dns: crate::dns::DnsConfig,
}

impl Default for FetchConfig {
    fn default() -> Self {
        Self {
            user_agent: format!(
                "crawlrank/{} (+https://crates.io/crates/crawlrank)",
                env!("CARGO_PKG_VERSION")
            ),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body: 10 << 20,
            proxy: None,
            ca_certs: Vec::new(),
            url_rules: UrlRules::default(),
            warc: true,
            sitemaps: false,
            archive_all: true,
            allow_private_networks: false,
            dns: crate::dns::DnsConfig::default(),
        }
    }
}

impl FetchConfig {
    /// The product token robots.txt groups are matched against (`crawlrank` for
    /// `crawlrank/0.1 (+…)`).
    pub fn robots_agent(&self) -> &str {
        self.user_agent
            .split(['/', ' '])
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("crawlrank")
    }
}

/// How one fetch attempt of a page ended.
#[derive(Debug, Default)]
pub struct PageFetch {
    /// How the fetch ended; `None` is taken as a fetch error.
    pub outcome: Option<Outcome>,
    /// The HTTP status, 0 when no answer came.
    pub status: u16,
    /// Normalised out-links in page order, deduplicated.
    pub links: Vec<String>,
    /// Compressed WARC records to append.
    pub warc: Vec<u8>,
    /// Why no HTTP answer came, when none did.
    pub failure: Option<TransportFailure>,
    /// Whether and when to try again.
    pub retry: RetryHint,
    /// What was read of the body.
    pub body: BodyRead,
    /// What the page says of itself: robots directives and its canonical URL.
    pub directives: PageDirectives,
    /// The links found but not kept in [`links`](Self::links).
    pub dropped: DroppedLinks,
    /// For a sitemap: what reading it left out.
    pub sitemap: SitemapRead,
}

/// Whether a page's fetch is worth another try, and when.
#[derive(Debug, Default)]
pub struct RetryHint {
    /// A 5xx, a timeout or a connection failure: worth another try later.
    pub retryable: bool,
    /// The request timed out.
    pub timed_out: bool,
    /// The response's `Retry-After` header, if it had one (crate::backoff).
    pub after: Option<crate::backoff::RetryAfter>,
}

/// What was read of a page's body.
#[derive(Debug, Default)]
pub struct BodyRead {
    /// Body bytes received (0 when the body was not read or was abandoned over the cap).
    pub bytes: u64,
    /// The body was cut at the size cap (`max_body`): a non-HTML body archived cut
    /// (`--archive all`), or an HTML page parsed (and archived) from its first `max_body`
    /// bytes. Its WARC record, if any, says `WARC-Truncated: length`.
    pub truncated: bool,
    /// The whole response was read (so its connection may carry another request).
    pub read_to_end: bool,
    /// The HTML parser gave up; the links found before are kept.
    pub parse_error: bool,
}

/// What an HTML page says of itself, in its meta robots, its `X-Robots-Tag` header and its
/// `<link rel=canonical>`.
#[derive(Debug, Default)]
pub struct PageDirectives {
    /// Meta robots or `X-Robots-Tag` said `nofollow` (then the page's links are empty).
    pub nofollow: bool,
    /// Meta robots or `X-Robots-Tag` said `noindex`.
    pub noindex: bool,
    /// `<link rel=canonical>`, normalised, when it names another URL.
    pub canonical: Option<String>,
}

/// The links of a page (or a redirect's target) that were not kept, by why.
#[derive(Debug, Default)]
pub struct DroppedLinks {
    /// `<a rel=nofollow>` links skipped.
    pub nofollow: u32,
    /// Links dropped as malformed or not http(s) (a redirect's bad `Location` included).
    pub invalid: u32,
    /// Links dropped by the trap rules.
    pub traps: u32,
    /// Links dropped by the pathological-path rule (a redirect's target included).
    pub pathological: u32,
    /// Distinct links dropped past [`UrlRules::max_links_per_page`].
    pub over_cap: u32,
}

/// What reading a sitemap fetched as a page left out.
#[derive(Debug, Default)]
pub struct SitemapRead {
    /// Entries dropped by its limits or on another host.
    pub dropped: u32,
    /// Its XML or gzip was broken or too large.
    pub error: bool,
}

/// Classifies a request error by walking its `source()` chain.
///
/// TLS: tokio-rustls reports a handshake failure as an `io::Error` wrapping a
/// `rustls::Error` (which may be wrapped in another `io::Error`); `io::Error::source()`
/// skips the error it wraps (it returns that error's own source), so the walk steps into an
/// `io::Error`'s payload with `get_ref()` instead. DNS: the resolver says so
/// ([`crate::http::ErrorKind::Dns`] for a name that will not resolve soon; a temporary
/// failure, [`crate::http::ErrorKind::DnsTransient`], is retryable like a refused
/// connection, crate::dns).
///
/// Running out of file descriptors is looked for first, along the whole chain: a resolver
/// that cannot open its socket reports it inside a DNS error, and it must not be taken for
/// the host's fault.
pub fn classify(e: &(dyn std::error::Error + 'static)) -> TransportFailure {
    if crate::fds::is_exhaustion(e) {
        return TransportFailure::FdLimit;
    }
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.is::<rustls::Error>() {
            return TransportFailure::Tls;
        }
        match err.downcast_ref::<HttpError>().map(|e| e.kind) {
            Some(ErrorKind::Dns) => return TransportFailure::Dns,
            Some(ErrorKind::PrivateAddress) => return TransportFailure::PrivateAddress,
            _ => {}
        }
        cur = match err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(payload) => Some(payload),
            None => err.source(),
        };
    }
    TransportFailure::Other
}

fn is_html(content_type: Option<&str>) -> bool {
    // No Content-Type: assume HTML, as browsers sniff most such pages to be.
    content_type.is_none_or(|ct| {
        let mime = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        mime.is_empty() || mime == "text/html" || mime == "application/xhtml+xml"
    })
}

fn request_head(url: &Url, ua: &str) -> Vec<u8> {
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let accept = crate::http::ACCEPT;
    format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {ua}\r\nAccept: {accept}\r\n\r\n")
        .into_bytes()
}

/// How long a connection whose response was read to its end may take to be ready for the
/// next request before it is closed instead.
const READY_WAIT: Duration = Duration::from_millis(100);

/// How a request that failed before its answer's head was read may be sent again.
///
/// A server may close a kept-alive connection whenever it is idle (its keep-alive timeout),
/// and a request sent on it at that moment fails with no answer at all: the server closed
/// the connection before reading it. Only that request may be sent again at once (on a new
/// connection; RFC 9112 §9.3.1 allows it for a GET). Any other failure means the server has
/// seen the request — it answered, and the answer was refused (a head over the client's
/// limit, a malformed status line) or cut — and may still be sending that answer: the request
/// is then a retry like any, that waits for the host's delay and back-off in the politeness
/// scheduler, so that the host never has two requests at once nor two closer than its delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedRequest {
    /// On a reused connection, the server closed the connection (end of stream, reset,
    /// broken pipe) and not one byte of an answer came: sent once more at once, on a new
    /// connection.
    Unanswered,
    /// Anything else: a first request on a new connection, an answer that came in part or
    /// whole, an error other than the server closing the connection. Not sent again here
    /// (the engine retries it after the host's delay and back-off).
    Answered,
}

impl FailedRequest {
    /// Classifies the failure `e` of a request sent on a connection that had carried
    /// `earlier` requests before it, during which the server sent `answer_bytes` bytes.
    pub fn of(earlier: u64, answer_bytes: u64, e: &(dyn std::error::Error + 'static)) -> Self {
        if earlier > 0 && answer_bytes == 0 && closed_by_server(e) {
            FailedRequest::Unanswered
        } else {
            FailedRequest::Answered
        }
    }
}

/// Whether `e` (along its `source()` chain) says that the other end closed the connection:
/// hyper's "connection closed before message completed" or a request it could not send on
/// a closed connection, or an I/O reset, abort, broken pipe or unexpected end of stream.
fn closed_by_server(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(h) = err.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() || h.is_canceled() || h.is_closed() {
                return true;
            }
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof
            ) {
                return true;
            }
        }
        cur = match err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(payload) => Some(payload),
            None => err.source(),
        };
    }
    false
}

/// Closes the connection in `conn`, if any, and returns once its socket is closed (so that
/// the host's next request cannot meet it still open).
async fn close(conn: &mut Option<Connection>) {
    if let Some(c) = conn.take() {
        c.close().await;
    }
}

/// `GET url` on the connection in `conn` if it serves `url`'s origin and is still open, else
/// on a new one (the old one closed first, so that a fetch never holds two). A request that
/// fails on a reused connection with no byte of an answer, the server having closed the
/// connection ([`FailedRequest::Unanswered`]: it closed it idle as the request left), is
/// sent once more at once on a new one; every other failure is returned, its connection
/// closed, for the engine to retry after the host's delay and back-off.
async fn send(
    connector: &Connector,
    conn: &mut Option<Connection>,
    url: &Url,
    ua: &str,
) -> Result<Response, HttpError> {
    if let Some(c) = conn.as_mut().filter(|c| c.serves(url)) {
        if c.reusable(Duration::ZERO).await {
            let (earlier, before) = (c.requests(), c.bytes_read());
            match c.get(url, ua).await {
                Ok(resp) => return Ok(resp),
                Err(e) => {
                    let answer_bytes = c.bytes_read().saturating_sub(before);
                    let failed = FailedRequest::of(earlier, answer_bytes, &e);
                    close(conn).await;
                    if failed == FailedRequest::Answered {
                        return Err(e);
                    }
                }
            }
        }
    }
    close(conn).await;
    let c = conn.insert(connector.connect(url).await?);
    c.get(url, ua).await
}

/// Keeps `conn` for the next request only if it can take one.
async fn keep_if_reusable(conn: &mut Option<Connection>) {
    if let Some(c) = conn {
        if !c.reusable(READY_WAIT).await {
            close(conn).await;
        }
    }
}

fn content_length(resp: &Response) -> Option<u64> {
    resp.headers()
        .get(hyper::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn response_head(resp: &Response) -> Vec<u8> {
    let status = resp.status();
    let mut h = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    for (k, v) in resp.headers() {
        // The record holds the body as decoded from the transfer coding: a reader must not try
        // to de-chunk it again (warcio and pywb do, from this header). Kept, renamed.
        if k == hyper::header::TRANSFER_ENCODING {
            h.push_str("X-Crawlrank-Orig-");
        }
        h.push_str(k.as_str());
        h.push_str(": ");
        h.push_str(&String::from_utf8_lossy(v.as_bytes()));
        h.push_str("\r\n");
    }
    h.push_str("\r\n");
    h.into_bytes()
}

/// The most of a robots.txt file read: 512 KiB (RFC 9309 §2.5: at least 500 KiB).
pub const ROBOTS_MAX_BYTES: usize = 512 << 10;

/// A robots.txt body cut at [`ROBOTS_MAX_BYTES`], up to its last whole line (a rule cut in the
/// middle — `Disallow: /pri` for `/private/` — would say something the file does not).
fn robots_prefix(mut body: Vec<u8>) -> Vec<u8> {
    let end = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    body.truncate(end);
    body
}

/// A non-HTML response kept for the archive only: its first `max_body` bytes in WARC records
/// (`WARC-Truncated: length` when the cap cut it), not parsed.
async fn archive_only(
    mut out: PageFetch,
    resp: &mut Response,
    cfg: &Arc<FetchConfig>,
    url: &str,
    parsed: &Url,
    date: SystemTime,
    head: &[u8],
) -> PageFetch {
    let (body, truncated) = match read_truncated(resp, cfg.max_body).await {
        Ok(r) => r,
        Err(e) => {
            let mut f = transport_failure(&e);
            f.status = out.status;
            return f;
        }
    };
    out.body.bytes = body.len() as u64;
    out.body.read_to_end = !truncated;
    out.body.truncated = truncated;
    let (url, request, head) = (
        url.to_string(),
        request_head(parsed, &cfg.user_agent),
        head.to_vec(),
    );
    let records =
        crate::cpu::run(move || warc::fetch_records(&url, date, &request, &head, &body, truncated))
            .await;
    out.warc = records.unwrap_or_default();
    out
}

/// Reads a body's first `cap` bytes; `true` with them when the body is longer (the rest is not
/// read: the connection must then be closed).
async fn read_truncated(resp: &mut Response, cap: usize) -> Result<(Vec<u8>, bool), HttpError> {
    let mut body = Vec::new();
    while let Some(frame) = resp.body_mut().frame().await {
        let frame = frame.map_err(|e| HttpError::new(ErrorKind::Http, e))?;
        if let Ok(chunk) = frame.into_data() {
            let room = cap - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
    }
    Ok((body, false))
}

/// Reads a body up to `cap` bytes; `Ok(None)` when it is larger (the rest is not read: the
/// connection must then be closed).
async fn read_capped(resp: &mut Response, cap: usize) -> Result<Option<Vec<u8>>, HttpError> {
    if content_length(resp).is_some_and(|n| n > cap as u64) {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(frame) = resp.body_mut().frame().await {
        let frame = frame.map_err(|e| HttpError::new(ErrorKind::Http, e))?;
        if let Ok(chunk) = frame.into_data() {
            if body.len() + chunk.len() > cap {
                return Ok(None);
            }
            body.extend_from_slice(&chunk);
        }
    }
    Ok(Some(body))
}

impl PageFetch {
    /// A fetch that ran out of its time (`FetchConfig::timeout`): retried.
    pub fn timed_out() -> Self {
        PageFetch {
            outcome: Some(Outcome::FetchError),
            retry: RetryHint {
                retryable: true,
                timed_out: true,
                after: None,
            },
            failure: Some(TransportFailure::Other),
            ..PageFetch::default()
        }
    }
}

fn transport_failure(e: &HttpError) -> PageFetch {
    let failure = classify(e);
    PageFetch {
        outcome: Some(Outcome::FetchError),
        retry: RetryHint {
            retryable: failure.retryable(),
            timed_out: e.is_timeout(),
            after: None,
        },
        failure: Some(failure),
        ..PageFetch::default()
    }
}

/// Fetches one page once, on the host's connection `conn` if it has one (left there if it can
/// take another request, else closed). Never fails: failures are outcomes.
pub async fn fetch_page(
    connector: &Connector,
    conn: &mut Option<Connection>,
    cfg: &Arc<FetchConfig>,
    url: &str,
) -> PageFetch {
    let fetch = fetch_page_on(connector, conn, cfg, url).await;
    if fetch.body.read_to_end {
        keep_if_reusable(conn).await;
    } else {
        close(conn).await;
    }
    fetch
}

async fn fetch_page_on(
    connector: &Connector,
    conn: &mut Option<Connection>,
    cfg: &Arc<FetchConfig>,
    url: &str,
) -> PageFetch {
    let Ok(parsed) = Url::parse(url) else {
        return PageFetch {
            outcome: Some(Outcome::FetchError),
            ..PageFetch::default()
        };
    };
    let date = SystemTime::now();
    let mut resp = match send(connector, conn, &parsed, &cfg.user_agent).await {
        Ok(r) => r,
        Err(e) => return transport_failure(&e),
    };
    let status = resp.status().as_u16();
    let head = response_head(&resp);
    let mut out = PageFetch {
        status,
        retry: RetryHint {
            after: resp
                .headers()
                .get(hyper::header::RETRY_AFTER)
                .map(|v| crate::backoff::parse_retry_after(v.as_bytes(), SystemTime::now())),
            ..RetryHint::default()
        },
        ..PageFetch::default()
    };
    let content_type = resp
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let x_robots = |directive: &str| {
        resp.headers().get_all("x-robots-tag").iter().any(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .to_ascii_lowercase()
                .contains(directive)
        })
    };
    let x_robots_nofollow = x_robots("nofollow");
    let x_robots_noindex = x_robots("noindex");
    if resp.status().is_redirection() {
        let target = resp
            .headers()
            .get(hyper::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(|l| crate::links::resolve(&parsed, l, &cfg.url_rules));
        match target {
            Some(Ok(t)) => out.links.push(t),
            Some(Err(crate::links::UrlRefusal::Trap)) => out.dropped.traps += 1,
            Some(Err(crate::links::UrlRefusal::Pathological)) => out.dropped.pathological += 1,
            _ => out.dropped.invalid += 1,
        }
        out.outcome = Some(Outcome::Redirect);
    } else if !resp.status().is_success() {
        out.outcome = Some(Outcome::HttpError);
        out.retry.retryable = resp.status().is_server_error() || status == 429;
    } else if !is_html(content_type.as_deref()) {
        out.outcome = Some(Outcome::NotHtml);
        if !(cfg.sitemaps && crate::sitemap::looks_like_sitemap(&parsed, content_type.as_deref())) {
            if !(cfg.warc && cfg.archive_all) {
                return out; // The body is not wanted: dropping the response abandons it.
            }
            return archive_only(out, &mut resp, cfg, url, &parsed, date, &head).await;
        }
    }
    // An HTML page over the cap is cut there and parsed all the same: its first `max_body`
    // bytes hold most of its links (a page that big is mostly a generated list or a trap), and
    // a page that yields nothing is a dead end for the crawl. Other bodies (redirects, error
    // pages, sitemaps) are read whole or not at all.
    let parse = out.outcome.is_none();
    let read = if parse {
        read_truncated(&mut resp, cfg.max_body).await.map(Some)
    } else {
        read_capped(&mut resp, cfg.max_body)
            .await
            .map(|b| b.map(|b| (b, false)))
    };
    let (body, truncated) = match read {
        Ok(Some(b)) => b,
        Ok(None) => {
            out.outcome = Some(Outcome::TooLarge);
            out.links.clear();
            out.retry.retryable = false;
            return out;
        }
        Err(e) => {
            let mut f = transport_failure(&e);
            f.status = status;
            return f;
        }
    };
    out.body.bytes = body.len() as u64;
    out.body.read_to_end = !truncated;
    out.body.truncated = truncated;
    let sitemap = out.outcome == Some(Outcome::NotHtml);
    let cfg2 = Arc::clone(cfg);
    let url2 = url.to_string();
    let done = crate::cpu::run(move || {
        let links = parse.then(|| extract_links(&parsed, &body, &cfg2.url_rules));
        let sitemap =
            sitemap.then(|| crate::sitemap::parse_sitemap(&parsed, &body, &cfg2.url_rules));
        let records = if cfg2.warc {
            warc::fetch_records(
                &url2,
                date,
                &request_head(&parsed, &cfg2.user_agent),
                &head,
                &body,
                truncated,
            )
        } else {
            Vec::new()
        };
        (links, sitemap, records)
    })
    .await;
    let Ok((links, sitemap, records)) = done else {
        // The parse task panicked (a bug in a dependency): count it as a parse failure.
        out.outcome = Some(out.outcome.unwrap_or(Outcome::Html));
        out.body.parse_error = true;
        return out;
    };
    out.warc = records;
    if let Some(s) = sitemap.filter(|s| s.is_sitemap) {
        out.outcome = Some(Outcome::Sitemap);
        out.links = s.links;
        out.dropped.invalid = s.invalid;
        out.sitemap.dropped = s.dropped;
        out.sitemap.error = s.error.is_some();
    }
    if let Some(p) = links {
        out.outcome = Some(Outcome::Html);
        out.directives.nofollow = p.nofollow || x_robots_nofollow;
        out.links = if x_robots_nofollow {
            Vec::new()
        } else {
            p.links
        };
        out.dropped = DroppedLinks {
            nofollow: p.nofollow_links,
            invalid: p.invalid,
            traps: p.traps,
            pathological: p.pathological,
            over_cap: p.over_cap,
        };
        out.body.parse_error = p.parse_error;
        out.directives.noindex = p.noindex || x_robots_noindex;
        out.directives.canonical = p.canonical;
    }
    out
}

/// The result of a robots.txt fetch.
#[derive(Debug)]
pub struct RobotsFetch {
    /// What robots.txt said: the host's rules, allow-all (no usable file), or unreachable (a
    /// 5xx or no answer).
    pub rules: RobotsRules,
    /// Requests made (redirects are followed, up to 5 hops as RFC 9309 asks).
    pub requests: u64,
    /// The request that failed timed out.
    pub timed_out: bool,
    /// The answer the rules come from, when there was one worth keeping.
    pub answer: Option<RobotsAnswer>,
    /// The host's own robots.txt URL got no HTTP answer, and why (a failure after a
    /// redirect to elsewhere says nothing about the host itself and is not reported).
    pub failure: Option<TransportFailure>,
}

impl RobotsFetch {
    fn unreachable(requests: u64) -> Self {
        RobotsFetch {
            rules: RobotsRules::Unreachable,
            requests,
            timed_out: false,
            answer: None,
            failure: None,
        }
    }

    fn unavailable(requests: u64) -> Self {
        RobotsFetch {
            rules: RobotsRules::AllowAll,
            answer: Some(RobotsAnswer::Unavailable),
            ..Self::unreachable(requests)
        }
    }
}

/// Redirects followed to a robots.txt file at most (RFC 9309 §2.3.1.2: at least five).
pub const ROBOTS_MAX_REDIRECTS: u32 = 5;

/// Fetches and parses `origin/robots.txt` (`origin` as from [`crate::links::origin_key`]) on
/// the host's connection `conn` if it has one. Each redirect is followed `hop_delay` after
/// the previous answer (the host's politeness delay: the hops are requests to the host like
/// any), at most [`ROBOTS_MAX_REDIRECTS`] of them. A redirect to another origin closes the
/// connection before opening one there (a fetch never holds two connections); what is left
/// in `conn` at the end is a connection to the host that can take another request, if any.
pub async fn fetch_robots(
    connector: &Connector,
    conn: &mut Option<Connection>,
    cfg: &FetchConfig,
    origin: &str,
    hop_delay: Duration,
) -> RobotsFetch {
    let (fetch, read_to_end) = fetch_robots_on(connector, conn, cfg, origin, hop_delay).await;
    let home = Url::parse(origin).ok();
    let at_home = conn
        .as_ref()
        .zip(home.as_ref())
        .is_some_and(|(c, h)| c.serves(h));
    if read_to_end && at_home {
        keep_if_reusable(conn).await;
    } else {
        close(conn).await;
    }
    fetch
}

/// [`fetch_robots`]'s fetch, and whether its last response was read to its end.
async fn fetch_robots_on(
    connector: &Connector,
    conn: &mut Option<Connection>,
    cfg: &FetchConfig,
    origin: &str,
    hop_delay: Duration,
) -> (RobotsFetch, bool) {
    let mut url = match Url::parse(origin).and_then(|o| o.join("/robots.txt")) {
        Ok(u) => u,
        Err(_) => {
            let fetch = RobotsFetch {
                rules: RobotsRules::AllowAll,
                ..RobotsFetch::unreachable(0)
            };
            return (fetch, false);
        }
    };
    let mut requests = 0;
    let mut drained = false;
    for hop in 0..=ROBOTS_MAX_REDIRECTS {
        if hop > 0 && !hop_delay.is_zero() {
            tokio::time::sleep(hop_delay).await;
        }
        requests += 1;
        let mut resp = match send(connector, conn, &url, &cfg.user_agent).await {
            Ok(r) => r,
            Err(e) => {
                let failure = classify(&e);
                // Running out of file descriptors is this process's trouble at any hop, and
                // says nothing about the host.
                let ours = failure == TransportFailure::FdLimit;
                // A redirect to an address the crawl refuses is a chain that leads nowhere
                // the crawl may go: as for too many hops, there is no file (allow all), but
                // nothing is kept (a later run may be allowed there).
                if hop > 0 && failure == TransportFailure::PrivateAddress {
                    let fetch = RobotsFetch {
                        rules: RobotsRules::AllowAll,
                        ..RobotsFetch::unreachable(requests)
                    };
                    return (fetch, false);
                }
                let fetch = RobotsFetch {
                    timed_out: e.is_timeout(),
                    failure: (hop == 0 || ours).then_some(failure),
                    ..RobotsFetch::unreachable(requests)
                };
                return (fetch, false);
            }
        };
        let st = resp.status();
        if !st.is_success() {
            // A short error or redirect body is read so that the connection can be reused.
            drained = matches!(read_capped(&mut resp, 64 << 10).await, Ok(Some(_)));
        }
        if st.is_redirection() {
            match resp
                .headers()
                .get(hyper::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok())
            {
                // Only http(s) is followed: `Url::join` takes any scheme, and the connector
                // would speak HTTP to `ftp://host/` on port 21, or to `file:`, `gopher:`…
                // A redirect elsewhere is as good as no file (allow all).
                Some(next) if matches!(next.scheme(), "http" | "https") => {
                    url = next;
                    continue;
                }
                _ => break,
            }
        }
        if st.is_server_error() || st.as_u16() == 429 {
            return (RobotsFetch::unreachable(requests), drained);
        }
        if !st.is_success() {
            break;
        }
        // RFC 9309 §2.5 asks parsers to read at least 500 KiB: a longer file is parsed up to
        // its last whole line within ROBOTS_MAX_BYTES, never thrown away (its first lines are
        // usually the ones that matter).
        let body = match read_truncated(&mut resp, ROBOTS_MAX_BYTES).await {
            Ok((b, false)) => {
                drained = true;
                b
            }
            Ok((b, true)) => robots_prefix(b),
            Err(e) => {
                let fetch = RobotsFetch {
                    timed_out: e.is_timeout(),
                    ..RobotsFetch::unreachable(requests)
                };
                return (fetch, false);
            }
        };
        let agent = cfg.robots_agent().to_string();
        let answer = RobotsAnswer::Body(body);
        let parsed = crate::cpu::run(move || (robots_rules(&agent, &answer), answer)).await;
        let fetch = match parsed {
            Ok((rules, answer)) => RobotsFetch {
                rules,
                answer: Some(answer),
                ..RobotsFetch::unreachable(requests)
            },
            // The parser panicked (a bug in a dependency): allow all, as for an unparseable
            // file, but keep nothing, so the next run tries again.
            Err(_) => RobotsFetch {
                rules: RobotsRules::AllowAll,
                ..RobotsFetch::unreachable(requests)
            },
        };
        return (fetch, drained);
    }
    (RobotsFetch::unavailable(requests), drained)
}

impl RobotsFetch {
    /// A robots.txt fetch that ran out of its time (`FetchConfig::timeout`): retried.
    pub fn timed_out() -> Self {
        RobotsFetch {
            timed_out: true,
            failure: Some(TransportFailure::Other),
            ..RobotsFetch::unreachable(1)
        }
    }
}

/// The result of a sitemap fetch (crate::sitemap): a side request of its host, not a page.
#[derive(Debug, Default)]
pub struct SitemapFetch {
    /// The HTTP status, 0 when no answer came.
    pub status: u16,
    /// Why no HTTP answer came, when none did.
    pub failure: Option<TransportFailure>,
    /// A 5xx, a 429, a timeout or a connection failure: worth another try later.
    pub retryable: bool,
    /// The request timed out.
    pub timed_out: bool,
    /// Body bytes received.
    pub bytes: u64,
    /// A redirect's target, normalised (`Err` when it is missing or unusable).
    pub redirect: Option<Result<String, crate::links::UrlRefusal>>,
    /// The answer's `Retry-After` header, if it had one (crate::backoff): a sitemap's
    /// refusal (429, 503) holds its host as a page's does.
    pub retry_after: Option<crate::backoff::RetryAfter>,
    /// The body was over `max_body` and abandoned.
    pub too_large: bool,
    /// What the body said, when a 2xx body was read.
    pub parsed: Option<crate::sitemap::SitemapLinks>,
    /// Compressed WARC records to append (with `warc` on).
    pub warc: Vec<u8>,
}

/// What a sitemap's answer leaves its reader to do ([`SitemapFetch::follow`]).
#[derive(Debug)]
pub enum SitemapStep {
    /// Ask it again after the back-off of retry number `attempt` (0-based), or after its
    /// host's hold when that is longer.
    Retry {
        /// The failed tries before this one.
        attempt: u32,
    },
    /// It is off its host's queue.
    Settled {
        /// Its queue entry, now done.
        done: Option<crate::sitemap::QueuedSitemap>,
        /// The sitemaps its answer queued on the host (an index's, a redirect's target), with
        /// their row numbers.
        queued: Vec<(u64, String)>,
        /// The page URLs it listed, in file order, for the crawl (as found without a link).
        entries: Vec<String>,
    },
}

/// What a sitemap that is off its queue said.
#[derive(Debug)]
pub(crate) enum SitemapEnd {
    /// No answer after the retries, or a body over the bound.
    Failed,
    /// A redirect: its target (`Err` when unusable), to be queued as a sitemap of its own
    /// when it is on the same host.
    Redirect(Result<String, crate::links::UrlRefusal>),
    /// No 2xx answer.
    NotFound,
    /// A 2xx body that is neither a sitemap nor an index.
    NotSitemap,
    /// A sitemap, or an index ([`crate::sitemap::SitemapLinks::index`]) whose entries are
    /// sitemaps to queue.
    Read(crate::sitemap::SitemapLinks),
}

impl SitemapFetch {
    /// The one rule by which `crawlrank crawl`'s engine and a `crawl --frontier` worker
    /// follow a sitemap's answer, once a refusal has held its host (`Retry-After`, the
    /// back-off): a failure a retry may mend is asked again `max_retries` times (counted on
    /// the sitemap's entry in `queue`, under `host`, whose origin is `origin`); anything else
    /// takes the sitemap off the queue, is counted in `stats`, and gives what it said: an
    /// index's sitemaps and a redirect's target are queued on the host (those of other hosts
    /// and past the host's cap dropped and counted), a sitemap's entries returned.
    pub fn follow(
        &mut self,
        queue: &mut crate::sitemap::SitemapQueue,
        host: u32,
        origin: &str,
        max_retries: u32,
        stats: &mut crate::stats::Stats,
    ) -> SitemapStep {
        if self.retryable {
            let attempts = queue.failed(host);
            if attempts <= max_retries {
                return SitemapStep::Retry {
                    attempt: attempts - 1,
                };
            }
        }
        let done = queue.pop(host);
        let end = if self.failure.is_some() || self.too_large {
            SitemapEnd::Failed
        } else if let Some(target) = self.redirect.take() {
            SitemapEnd::Redirect(target)
        } else {
            match self.parsed.take() {
                Some(read) if (200..300).contains(&self.status) => match read.is_sitemap {
                    true => SitemapEnd::Read(read),
                    false => SitemapEnd::NotSitemap,
                },
                _ => SitemapEnd::NotFound,
            }
        };
        stats.count_sitemap(&end);
        let mut entries = Vec::new();
        let children = match end {
            // The target is fetched as a sitemap of its own (when on this host).
            SitemapEnd::Redirect(Ok(u)) => vec![u],
            SitemapEnd::Read(read) if read.index => read.links,
            SitemapEnd::Read(read) => {
                entries = read.links;
                Vec::new()
            }
            _ => Vec::new(),
        };
        stats.sitemap_links += entries.len() as u64;
        let queued = children
            .into_iter()
            .filter_map(|u| queue.queue(host, origin, &u, stats).map(|seq| (seq, u)))
            .collect();
        SitemapStep::Settled {
            done,
            queued,
            entries,
        }
    }
}

/// Fetches `url` once as a sitemap on the host's connection `conn` if it has one (left
/// there if it can take another request, else closed). Whatever its `Content-Type`, a 2xx
/// body is read as a sitemap (a body that is not one says so: `is_sitemap` false). A
/// redirect is not followed: its target is returned. Never fails: failures are outcomes.
pub async fn fetch_sitemap(
    connector: &Connector,
    conn: &mut Option<Connection>,
    cfg: &Arc<FetchConfig>,
    url: &str,
) -> SitemapFetch {
    let (fetch, read_to_end) = fetch_sitemap_on(connector, conn, cfg, url).await;
    if read_to_end {
        keep_if_reusable(conn).await;
    } else {
        close(conn).await;
    }
    fetch
}

async fn fetch_sitemap_on(
    connector: &Connector,
    conn: &mut Option<Connection>,
    cfg: &Arc<FetchConfig>,
    url: &str,
) -> (SitemapFetch, bool) {
    let Ok(parsed) = Url::parse(url) else {
        let fetch = SitemapFetch {
            failure: Some(TransportFailure::Other),
            ..SitemapFetch::default()
        };
        return (fetch, false);
    };
    let date = SystemTime::now();
    let mut resp = match send(connector, conn, &parsed, &cfg.user_agent).await {
        Ok(r) => r,
        Err(e) => {
            let failure = classify(&e);
            let fetch = SitemapFetch {
                failure: Some(failure),
                retryable: failure.retryable(),
                timed_out: e.is_timeout(),
                ..SitemapFetch::default()
            };
            return (fetch, false);
        }
    };
    let st = resp.status();
    let head = response_head(&resp);
    let mut out = SitemapFetch {
        status: st.as_u16(),
        retry_after: resp
            .headers()
            .get(hyper::header::RETRY_AFTER)
            .map(|v| crate::backoff::parse_retry_after(v.as_bytes(), SystemTime::now())),
        ..SitemapFetch::default()
    };
    if !st.is_success() {
        if st.is_redirection() {
            let target = resp
                .headers()
                .get(hyper::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(|l| crate::links::resolve(&parsed, l, &cfg.url_rules));
            out.redirect = Some(target.unwrap_or(Err(crate::links::UrlRefusal::Invalid)));
        }
        out.retryable = st.is_server_error() || st.as_u16() == 429;
        // A short error or redirect body is read so that the connection can be reused.
        let drained = matches!(read_capped(&mut resp, 64 << 10).await, Ok(Some(_)));
        return (out, drained);
    }
    let body = match read_capped(&mut resp, cfg.max_body).await {
        Ok(Some(b)) => b,
        Ok(None) => {
            out.too_large = true;
            return (out, false);
        }
        Err(e) => {
            let failure = classify(&e);
            out.failure = Some(failure);
            out.retryable = failure.retryable();
            out.timed_out = e.is_timeout();
            return (out, false);
        }
    };
    out.bytes = body.len() as u64;
    let cfg2 = Arc::clone(cfg);
    let url2 = url.to_string();
    let done = crate::cpu::run(move || {
        let links = crate::sitemap::parse_sitemap(&parsed, &body, &cfg2.url_rules);
        let records = if cfg2.warc {
            let request = request_head(&parsed, &cfg2.user_agent);
            warc::fetch_records(&url2, date, &request, &head, &body, false)
        } else {
            Vec::new()
        };
        (links, records)
    })
    .await;
    match done {
        Ok((links, records)) => {
            out.parsed = Some(links);
            out.warc = records;
        }
        // The parser panicked (a bug in a dependency): read as no sitemap.
        Err(_) => out.parsed = Some(crate::sitemap::SitemapLinks::default()),
    }
    (out, true)
}

impl SitemapFetch {
    /// A sitemap fetch that ran out of its time (`FetchConfig::timeout`): retried.
    pub fn timed_out() -> Self {
        SitemapFetch {
            failure: Some(TransportFailure::Other),
            retryable: true,
            timed_out: true,
            ..SitemapFetch::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversize_robots_txt_keeps_its_whole_lines() {
        assert_eq!(
            robots_prefix(b"User-agent: *\nDisallow: /private/\nDisallow: /pri".to_vec()),
            b"User-agent: *\nDisallow: /private/\n"
        );
        assert_eq!(robots_prefix(b"no newline at all".to_vec()), b"");
    }

    #[test]
    fn html_content_types() {
        assert!(is_html(None));
        assert!(is_html(Some("text/html; charset=utf-8")));
        assert!(is_html(Some("Application/XHTML+XML")));
        assert!(!is_html(Some("image/png")));
        assert!(!is_html(Some("application/pdf")));
    }

    #[test]
    fn robots_agent_is_the_first_word_of_the_user_agent() {
        let cfg = FetchConfig {
            user_agent: "crawlrank/0.1 (+x)".into(),
            ..FetchConfig::default()
        };
        assert_eq!(cfg.robots_agent(), "crawlrank");
    }

    /// An error with a message and a cause, as layered errors are built.
    #[derive(Debug)]
    struct Layer(&'static str, Box<dyn std::error::Error + Send + Sync>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&*self.1)
        }
    }

    #[test]
    fn transport_failures_are_classified_from_the_source_chain() {
        use std::io::{Error, ErrorKind};
        let lookup =
            Error::other("failed to lookup address information: Name or service not known");
        let dns = Layer(
            "client error (Connect)",
            Box::new(HttpError::new(crate::http::ErrorKind::Dns, lookup)),
        );
        assert_eq!(classify(&dns), TransportFailure::Dns);
        // A lookup that failed for now (timeout, SERVFAIL) is worth another try.
        let later = HttpError::new(crate::http::ErrorKind::DnsTransient, "timed out");
        assert_eq!(classify(&later), TransportFailure::Other);
        assert!(classify(&later).retryable());
        let cert = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let tls = Layer(
            "client error (Connect)",
            Box::new(Error::other(Error::new(
                ErrorKind::InvalidData,
                cert.clone(),
            ))),
        );
        assert_eq!(classify(&tls), TransportFailure::Tls);
        assert_eq!(classify(&cert), TransportFailure::Tls);
        let refused = Layer(
            "client error (Connect)",
            Box::new(Layer(
                "tcp connect error",
                Box::new(Error::from(ErrorKind::ConnectionRefused)),
            )),
        );
        assert_eq!(classify(&refused), TransportFailure::Other);
        // Only the connector's own kind means DNS, not a message that mentions it.
        let text = Layer("dns error", Box::new(Error::other("x")));
        assert_eq!(classify(&text), TransportFailure::Other);
        // No descriptor for the resolver's socket, inside a DNS error: ours, not the host's.
        let no_fd = Layer(
            "client error (Connect)",
            Box::new(HttpError::new(
                crate::http::ErrorKind::Dns,
                Error::from_raw_os_error(24),
            )),
        );
        assert_eq!(classify(&no_fd), TransportFailure::FdLimit);
        let private = Layer(
            "client error (Connect)",
            Box::new(HttpError::new(
                crate::http::ErrorKind::PrivateAddress,
                "localhost is at 127.0.0.1",
            )),
        );
        assert_eq!(classify(&private), TransportFailure::PrivateAddress);
        assert!(!TransportFailure::PrivateAddress.retryable());
        assert!(TransportFailure::FdLimit.retryable());
        assert!(TransportFailure::Other.retryable());
        assert!(!TransportFailure::Dns.retryable() && !TransportFailure::Tls.retryable());
    }

    #[test]
    fn only_a_reused_connection_closed_without_an_answer_is_resent_at_once() {
        use std::io::{Error, ErrorKind};
        let reset = Error::from(ErrorKind::ConnectionReset);
        assert_eq!(FailedRequest::of(1, 0, &reset), FailedRequest::Unanswered);
        let wrapped = HttpError::new(
            crate::http::ErrorKind::Http,
            Error::from(ErrorKind::BrokenPipe),
        );
        assert_eq!(FailedRequest::of(3, 0, &wrapped), FailedRequest::Unanswered);
        let eof = Layer(
            "client error",
            Box::new(Error::from(ErrorKind::UnexpectedEof)),
        );
        assert_eq!(FailedRequest::of(1, 0, &eof), FailedRequest::Unanswered);
        // A byte of an answer came: the server saw the request, whatever the error.
        assert_eq!(FailedRequest::of(1, 1, &reset), FailedRequest::Answered);
        // A new connection's first request: not the idle-close race.
        assert_eq!(FailedRequest::of(0, 0, &reset), FailedRequest::Answered);
        // Not the server closing the connection.
        let other = Error::other("no buffer space");
        assert_eq!(FailedRequest::of(1, 0, &other), FailedRequest::Answered);
        let refused = Error::from(ErrorKind::ConnectionRefused);
        assert_eq!(FailedRequest::of(1, 0, &refused), FailedRequest::Answered);
    }

    /// How the loopback server of [`scripted`] treats the second request of a connection.
    #[derive(Clone, Copy)]
    enum Second {
        /// Closes the connection as the request arrives, without reading it.
        CloseUnread,
        /// Reads it, sends these bytes and closes the connection.
        Answer(&'static [u8]),
        /// Reads it and sends a head that never ends (header lines until the client leaves).
        EndlessHead,
    }

    /// A loopback server that answers each connection's first request `200 ok` (kept alive)
    /// and its second one as `second` says. Counts the connections and the requests it read.
    fn scripted(
        second: Second,
    ) -> (
        u16,
        Arc<std::sync::atomic::AtomicUsize>,
        Arc<std::sync::atomic::AtomicUsize>,
    ) {
        use std::io::{Read, Write};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let conns = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (c, r) = (conns.clone(), requests.clone());
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { return };
                c.fetch_add(1, Ordering::SeqCst);
                let r = r.clone();
                std::thread::spawn(move || {
                    let read_head = |s: &mut std::net::TcpStream| {
                        let mut head = Vec::new();
                        let mut b = [0u8; 1];
                        while !head.ends_with(b"\r\n\r\n") {
                            match s.read(&mut b) {
                                Ok(1) => head.push(b[0]),
                                _ => return false,
                            }
                        }
                        true
                    };
                    if !read_head(&mut s) {
                        return;
                    }
                    r.fetch_add(1, Ordering::SeqCst);
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                    match second {
                        Second::CloseUnread => {
                            let _ = s.read(&mut [0u8; 1]);
                        }
                        Second::Answer(bytes) => {
                            if read_head(&mut s) {
                                r.fetch_add(1, Ordering::SeqCst);
                                let _ = s.write_all(bytes);
                            }
                        }
                        Second::EndlessHead => {
                            if read_head(&mut s) {
                                r.fetch_add(1, Ordering::SeqCst);
                                let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
                                let line = format!("X-Filler: {}\r\n", "x".repeat(1000));
                                for _ in 0..100_000 {
                                    if s.write_all(line.as_bytes()).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                    }
                });
            }
        });
        (port, conns, requests)
    }

    #[tokio::test]
    async fn a_request_is_resent_at_once_only_when_its_kept_connection_closed_unanswered() {
        use std::sync::atomic::Ordering;
        let cases = [
            (Second::CloseUnread, true),
            (Second::Answer(b"HTTP/1.1 200 OK\r\nContent-Ty"), false),
            (Second::Answer(b"HTTP/1.1 2x0 OK\r\n\r\n"), false),
            (Second::EndlessHead, false),
        ];
        for (i, (second, resent)) in cases.into_iter().enumerate() {
            let (port, conns, requests) = scripted(second);
            let guard = crate::addresses::AddressGuard {
                allow_private: true,
                ..Default::default()
            };
            let connector = Connector::new(None, &[], Duration::from_secs(5), 4, guard).unwrap();
            let url = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
            let mut conn = None;
            let mut resp = send(&connector, &mut conn, &url, "ua").await.unwrap();
            assert_eq!(read_capped(&mut resp, 100).await.unwrap().unwrap(), b"ok");
            drop(resp);
            keep_if_reusable(&mut conn).await;
            assert!(conn.is_some(), "case {i}: the first connection is kept");
            let got = send(&connector, &mut conn, &url, "ua").await;
            assert_eq!(got.is_ok(), resent, "case {i}");
            if resent {
                // Read by the server once: on the new connection.
                assert_eq!(conns.load(Ordering::SeqCst), 2, "case {i}");
                assert_eq!(requests.load(Ordering::SeqCst), 2, "case {i}");
                assert_eq!(
                    got.as_ref().map(|r| r.status()).ok(),
                    Some(hyper::StatusCode::OK)
                );
            } else {
                // The server saw it and answered: not sent again, and its connection is
                // closed by the time the failure is returned (its socket's permit is back).
                assert!(conn.is_none(), "case {i}");
                assert_eq!(connector.available(), 4, "case {i}");
                assert_eq!(conns.load(Ordering::SeqCst), 1, "case {i}");
                assert_eq!(requests.load(Ordering::SeqCst), 2, "case {i}");
            }
            // Every socket closed: a connection given up holds none.
            drop(got);
            drop(conn);
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while connector.available() < 4 && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            assert_eq!(connector.available(), 4, "case {i}");
        }
    }

    /// A loopback HTTP server answering `GET PATH` with `replies(PATH)` (a whole response),
    /// one connection per request; counts the requests for each path.
    fn by_path(
        replies: impl Fn(&str, u16) -> String + Send + Sync + 'static,
    ) -> (u16, Arc<std::sync::Mutex<Vec<String>>>) {
        use std::io::{BufRead, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { return };
                let mut r = std::io::BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split(' ').nth(1).unwrap_or("").to_string();
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                log.lock().unwrap().push(path.clone());
                let _ = s.write_all(replies(&path, port).as_bytes());
            }
        });
        (port, seen)
    }

    #[tokio::test]
    async fn robots_txt_redirects_are_followed_to_http_and_https_only() {
        let (port, seen) = by_path(|path, port| {
            let (status, extra, body) = match path {
                "/robots.txt" => (
                    "301 Moved",
                    format!("Location: ftp://127.0.0.1:{port}/elsewhere.txt\r\n"),
                    "",
                ),
                "/http.txt" => ("302 Found", "Location: /disallow.txt\r\n".to_string(), ""),
                _ => ("200 OK", String::new(), "User-agent: *\nDisallow: /\n"),
            };
            format!(
                "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        });
        let guard = crate::addresses::AddressGuard {
            allow_private: true,
            ..Default::default()
        };
        let connector = Connector::new(None, &[], Duration::from_secs(5), 4, guard).unwrap();
        let cfg = FetchConfig::default();
        let origin = format!("http://127.0.0.1:{port}");
        let mut conn = None;
        let f = fetch_robots(&connector, &mut conn, &cfg, &origin, Duration::ZERO).await;
        // `ftp://127.0.0.1:PORT/` is the same server: followed, it would have said
        // "Disallow: /" over HTTP.
        assert!(matches!(f.rules, RobotsRules::AllowAll), "{:?}", f.rules);
        assert_eq!(f.requests, 1);
        assert_eq!(*seen.lock().unwrap(), ["/robots.txt"]);
        for scheme in [
            "file:///etc/passwd",
            "gopher://127.0.0.1/x",
            "data:text/plain,x",
        ] {
            let (p, seen) = by_path(move |path, _| {
                let (status, extra) = match path {
                    "/robots.txt" => ("301 Moved", format!("Location: {scheme}\r\n")),
                    _ => ("404 Not Found", String::new()),
                };
                format!(
                    "HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
                )
            });
            let origin = format!("http://127.0.0.1:{p}");
            let f = fetch_robots(&connector, &mut None, &cfg, &origin, Duration::ZERO).await;
            assert!(matches!(f.rules, RobotsRules::AllowAll), "{scheme}");
            assert_eq!((f.requests, seen.lock().unwrap().len()), (1, 1), "{scheme}");
        }
        // An http redirect is followed as before.
        let (p, _) = by_path(|path, _| {
            let (status, extra, body) = match path {
                "/robots.txt" => ("301 Moved", "Location: /http.txt\r\n", ""),
                "/http.txt" => ("302 Found", "Location: /disallow.txt\r\n", ""),
                _ => ("200 OK", "", "User-agent: *\nDisallow: /\n"),
            };
            format!(
                "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        });
        let origin = format!("http://127.0.0.1:{p}");
        let f = fetch_robots(&connector, &mut None, &cfg, &origin, Duration::ZERO).await;
        assert!(!f.rules.allowed(&format!("{origin}/x")), "{:?}", f.rules);
        assert_eq!(f.requests, 3);
    }

    #[test]
    fn request_head_form() {
        let u = Url::parse("http://a.test:8080/p?q=1#f").unwrap();
        let h = String::from_utf8(request_head(&u, "ua")).unwrap();
        assert!(
            h.starts_with("GET /p?q=1 HTTP/1.1\r\nHost: a.test:8080\r\n"),
            "{h}"
        );
    }
}
