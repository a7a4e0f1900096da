//! A response as the handlers decide it — status, content type, redirect target, body and
//! delay — before the server turns it into a hyper `Response`.
//!
//! Its own module so that the producers of replies (the graph pages in the server, the trap
//! catalogue in [`traps`](crate::traps)) depend on this small type rather than on each other.

use bytes::Bytes;
use hyper::StatusCode;
use std::time::Duration;

/// The content type of every HTML page served.
pub(crate) const HTML: &str = "text/html; charset=utf-8";

/// A response before it becomes a hyper `Response`.
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub location: Option<String>,
    pub body: BodySpec,
    /// Slept before the head is sent (the slow trap).
    pub delay: Duration,
    /// A `Retry-After` header, sent as is (the rate-limit traps).
    pub retry_after: Option<String>,
}

/// The bytes of a response body.
pub(crate) enum BodySpec {
    /// Held in memory.
    Bytes(Bytes),
    /// `head`, then `chunk` `count` times, then `tail`: large bodies without large buffers.
    Repeat {
        head: Bytes,
        chunk: Bytes,
        count: u64,
        tail: Bytes,
    },
}

impl Reply {
    /// `status` with `body`, of type `content_type`.
    pub fn with_body(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
        Reply {
            status,
            content_type: Some(content_type),
            location: None,
            body: BodySpec::Bytes(body.into()),
            delay: Duration::ZERO,
            retry_after: None,
        }
    }

    /// 200 with an HTML page.
    pub fn html(body: impl Into<Bytes>) -> Reply {
        Reply::with_body(200, HTML, body)
    }

    /// `status` with a small HTML page naming it.
    pub fn status_page(status: u16) -> Reply {
        let reason = StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        Reply::with_body(
            status,
            HTML,
            format!("<!DOCTYPE html>\n<html><head><title>{status} {reason}</title></head><body><h1>{status} {reason}</h1></body></html>\n"),
        )
    }

    /// `status` (a 3xx) to `location`, with the status page as its body.
    pub fn redirect(status: u16, location: String) -> Reply {
        let mut r = Reply::status_page(status);
        r.location = Some(location);
        r
    }
}
