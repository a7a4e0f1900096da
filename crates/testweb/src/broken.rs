//! Trap hosts whose answers are broken at the HTTP level: a head without end, a status line
//! that is not one, a chunked body with a bad chunk size, a body shorter than its
//! `Content-Length` (closed or reset), a head cut in the middle, a body without end, and a
//! kept-alive connection closed as the next request arrives.
//!
//! hyper, which serves every other page, only writes well-formed HTTP, so these hosts are
//! answered by hand on the raw TCP connection: with [`crate::TestWebConfig::traps`] on, the
//! server reads each plain connection's first request head itself ([`read_first_head`]); a
//! connection whose first request names one of these hosts is served here to its end (a
//! crawler's connection serves one origin), any other goes on to hyper with the bytes already
//! read ([`Prefixed`]).
//!
//! Served on `NAME.traps.crawlrank.test` (the trap index links each one). Every host answers
//! `/robots.txt` with a well-formed `404`, kept alive, so that a crawler's next request
//! usually comes on that same, reused connection; every other path gets the host's answer:
//!
//! | host | answer | a correct crawler |
//! |---|---|---|
//! | `oversize-header` | `200`, then header lines without end (until the client leaves, at most 64 MiB) | gives the answer up, closes the connection, asks again only after the host's delay and back-off |
//! | `bad-status` | the status line `HTTP/1.1 2x0 OK` (kept alive) | the same |
//! | `bad-chunk` | `200` chunked, whose second chunk size is `zz` (kept alive) | the same |
//! | `short-body` | `200` with `Content-Length: 100000`, 1,000 bytes, then the connection closed | the same |
//! | `reset-body` | the same, then the connection reset (RST) | the same |
//! | `cut-head` | `HTTP/1.1 200 OK` and half a header line, then the connection closed | the same |
//! | `endless-body` | `200` HTML, chunked, without end (until the client leaves, at most 1 GiB) | reads its first `--max-body` bytes, closes the connection |
//! | `close-idle` | a connection's first request: a page (`/` links `/p1` and `/p2`); a second request on it: the connection closed before the request is read, as by a keep-alive timeout running out just then (not logged: the server never read it) | sends that request once more, at once, on a new connection |
//!
//! Logged like every request ([`crate::LogEntry`]): `arrival` when its head had been read,
//! `finish` when its answer was written, or when the connection was closed or found closed
//! (the client left), whichever came first; `status` is the status claimed (0 for
//! `bad-status`), `complete` whether the whole answer could be written.

use crate::log::LogEntry;
use crate::site::host_of_authority;
use crate::trap_hosts::{BROKEN_HOSTS, TRAP_HOST_SUFFIX};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

/// The longest request head read.
const MAX_HEAD: usize = 64 << 10;

/// Most bytes of header lines `oversize-header` writes.
const OVERSIZE_HEADER_BYTES: u64 = 64 << 20;

/// Most body bytes `endless-body` writes.
const ENDLESS_BODY_BYTES: u64 = 1 << 30;

/// A request head: host (lower case, without port) and path with query.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    host: String,
    path: String,
}

/// Where the head in `buf` ends (after its blank line), if it is whole.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// The host and path of a request head, from the absolute URI of a proxy-style request,
/// else from the `Host` header.
fn parse_head(head: &[u8]) -> Option<Head> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let target = lines.next()?.split(' ').nth(1)?;
    let (authority, path) = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (rest[..i].to_string(), rest[i..].to_string()),
            Some(i) => (rest[..i].to_string(), format!("/{}", &rest[i..])),
            None => (rest.to_string(), "/".to_string()),
        },
        None => {
            let host = lines.find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("host")
                    .then(|| v.trim().to_string())
            })?;
            (host, target.to_string())
        }
    };
    Some(Head {
        host: host_of_authority(&authority).to_ascii_lowercase(),
        path,
    })
}

/// The broken-answer host `host` names (its name before the suffix), if it names one.
fn broken_name(host: &str) -> Option<&'static str> {
    let name = host.strip_suffix(TRAP_HOST_SUFFIX)?;
    BROKEN_HOSTS.iter().copied().find(|&h| h == name)
}

/// Reads a connection's first request head: the bytes read (the whole head, maybe more) and
/// when the head was whole; `None` if the connection closed or failed first. A head over
/// 64 KiB is returned as it is, for hyper to refuse.
pub(crate) async fn read_first_head(io: &mut TcpStream) -> Option<(Vec<u8>, Instant)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while head_end(&buf).is_none() && buf.len() <= MAX_HEAD {
        match io.read(&mut chunk).await {
            Ok(0) | Err(_) if buf.is_empty() => return None,
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    Some((buf, Instant::now()))
}

/// Whether the first request read (by [`read_first_head`]) names a broken-answer host.
pub(crate) fn is_broken(first: &[u8]) -> bool {
    head_end(first)
        .and_then(|end| parse_head(&first[..end]))
        .is_some_and(|h| broken_name(&h.host).is_some())
}

/// How an answer was written: body bytes, whether all of it, and whether the connection
/// stays open for another request.
struct Written {
    bytes: u64,
    complete: bool,
    keep_alive: bool,
}

/// Serves a connection whose first request (in `buf`, whole at `arrival`) names a
/// broken-answer host, until the client or the answer closes it. `record` takes each
/// request's log entry when its answer is done.
pub(crate) async fn serve(
    mut io: TcpStream,
    mut buf: Vec<u8>,
    mut arrival: Instant,
    record: impl Fn(LogEntry),
) {
    let mut served = 0u32;
    loop {
        let end = loop {
            if let Some(end) = head_end(&buf) {
                break end;
            }
            if buf.len() > MAX_HEAD {
                return;
            }
            let mut chunk = [0u8; 4096];
            match io.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            arrival = Instant::now();
        };
        let Some(head) = parse_head(&buf[..end]) else {
            return;
        };
        buf.drain(..end);
        let Some(name) = broken_name(&head.host) else {
            return; // another host on this connection: not served here
        };
        let mut entry = LogEntry {
            arrival,
            finish: arrival,
            host: head.host,
            path: head.path,
            status: 0,
            bytes: 0,
            complete: false,
            node: None,
            attempt: 0,
            tls: false,
        };
        let written = answer(&mut io, name, &mut entry, served).await;
        served += 1;
        entry.finish = Instant::now();
        entry.bytes = written.bytes;
        entry.complete = written.complete;
        record(entry);
        if !written.keep_alive {
            return;
        }
        if name == "close-idle" && buf.is_empty() {
            // The next request closes the connection unread: wait for its first byte (left
            // unread, so that the close is a reset, as when a request meets a closed socket).
            let mut probe = [0u8; 1];
            let _ = io.peek(&mut probe).await;
            return;
        }
        arrival = Instant::now();
    }
}

/// A small HTML page linking `links`.
fn page(links: &[&str]) -> String {
    let mut body = String::from(
        "<!DOCTYPE html>\n<html><head><title>broken-answer host</title></head><body>\n",
    );
    for l in links {
        body.push_str(&format!("<p><a href=\"{l}\">{l}</a></p>\n"));
    }
    body.push_str("</body></html>\n");
    body
}

/// Writes all of `bytes`; false if the client left.
async fn write(io: &mut TcpStream, bytes: &[u8]) -> bool {
    io.write_all(bytes).await.is_ok()
}

/// Writes the answer of host `name` to a request for `entry.path`, the `served`-th of its
/// connection (0 for the first), and sets `entry.status`.
async fn answer(io: &mut TcpStream, name: &str, entry: &mut LogEntry, served: u32) -> Written {
    let whole = |bytes: u64, keep_alive: bool| Written {
        bytes,
        complete: true,
        keep_alive,
    };
    let cut = |bytes: u64| Written {
        bytes,
        complete: false,
        keep_alive: false,
    };
    let path = entry.path.split('?').next().unwrap_or("/").to_string();
    if path == "/robots.txt" || (name == "close-idle" && served == 0) {
        let (status, body) = match path.as_str() {
            "/robots.txt" => (404, "not found\n".to_string()),
            "/" => (200, page(&["/p1", "/p2"])),
            _ => (200, page(&[])),
        };
        entry.status = status;
        let reason = if status == 200 { "OK" } else { "Not Found" };
        let msg = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        return if write(io, msg.as_bytes()).await {
            whole(body.len() as u64, name != "close-idle" || served == 0)
        } else {
            cut(0)
        };
    }
    // Over 1,000 bytes: what `short-body` and `reset-body` send of their body.
    let filler = page(&[]).repeat(16);
    match name {
        "oversize-header" => {
            entry.status = 200;
            if !write(io, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n").await {
                return cut(0);
            }
            let line = format!("X-Filler: {}\r\n", "x".repeat(1000));
            let mut sent = 0u64;
            while sent < OVERSIZE_HEADER_BYTES {
                if !write(io, line.as_bytes()).await {
                    return cut(0); // the client gave up: the connection is closed
                }
                sent += line.len() as u64;
            }
            cut(0)
        }
        "bad-status" => {
            let body = page(&[]);
            let msg = format!(
                "HTTP/1.1 2x0 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            if write(io, msg.as_bytes()).await {
                whole(body.len() as u64, true)
            } else {
                cut(0)
            }
        }
        "bad-chunk" => {
            entry.status = 200;
            let msg = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n\
                 {:x}\r\n{filler}\r\nzz\r\n{filler}\r\n0\r\n\r\n",
                filler.len()
            );
            if write(io, msg.as_bytes()).await {
                whole(2 * filler.len() as u64, true)
            } else {
                cut(0)
            }
        }
        "short-body" | "reset-body" => {
            entry.status = 200;
            let body = &filler.as_bytes()[..1000.min(filler.len())];
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n";
            let ok = write(io, head.as_bytes()).await && write(io, body).await;
            if name == "reset-body" {
                let _ = io.set_zero_linger();
            }
            cut(if ok { body.len() as u64 } else { 0 })
        }
        "cut-head" => {
            entry.status = 200;
            let _ = write(io, b"HTTP/1.1 200 OK\r\nContent-Ty").await;
            cut(0)
        }
        "endless-body" => {
            entry.status = 200;
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";
            if !write(io, head.as_bytes()).await {
                return cut(0);
            }
            let chunk = format!("{:x}\r\n{filler}\r\n", filler.len());
            let mut sent = 0u64;
            while sent < ENDLESS_BODY_BYTES {
                if !write(io, chunk.as_bytes()).await {
                    break;
                }
                sent += filler.len() as u64;
            }
            cut(sent)
        }
        _ => cut(0),
    }
}

/// A connection whose first bytes were already read: they are read again first.
pub(crate) struct Prefixed<I> {
    prefix: Vec<u8>,
    at: usize,
    io: I,
}

impl<I> Prefixed<I> {
    /// `io`, with `prefix` read before it.
    pub fn new(prefix: Vec<u8>, io: I) -> Self {
        Self { prefix, at: 0, io }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Prefixed<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at < this.prefix.len() {
            let n = (this.prefix.len() - this.at).min(buf.remaining());
            buf.put_slice(&this.prefix[this.at..this.at + n]);
            this.at += n;
            if this.at == this.prefix.len() {
                this.prefix = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Prefixed<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_name_their_host_and_path() {
        let proxied =
            b"GET http://bad-status.traps.crawlrank.test:80/p?q=1 HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(
            parse_head(proxied),
            Some(Head {
                host: "bad-status.traps.crawlrank.test".into(),
                path: "/p?q=1".into()
            })
        );
        assert!(is_broken(proxied));
        let direct = b"GET / HTTP/1.1\r\nhost: Cut-Head.traps.crawlrank.test\r\n\r\n";
        assert_eq!(
            parse_head(direct).unwrap().host,
            "cut-head.traps.crawlrank.test"
        );
        assert!(is_broken(direct));
        let bare = b"GET http://close-idle.traps.crawlrank.test HTTP/1.1\r\n\r\n";
        assert_eq!(parse_head(bare).unwrap().path, "/");
        assert!(!is_broken(
            b"GET http://retry-after.traps.crawlrank.test/ HTTP/1.1\r\n\r\n"
        ));
        assert!(!is_broken(
            b"GET http://h0.crawlrank.test/p0.html HTTP/1.1\r\n"
        ));
        assert!(!is_broken(b"\x16\x03\x01 not http at all\r\n\r\n"));
    }
}
