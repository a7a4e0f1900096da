//! What became of a page: how its fetch ended ([`Outcome`], and [`TransportFailure`] when no
//! HTTP answer came) and what it said about itself ([`PageMeta`]).
//!
//! Why a module of its own: fetching produces these, the engine counts them, the store logs
//! and keeps them and the exports read them. Kept apart from all four, they are everyone's
//! vocabulary and nobody's dependency, so that the imports between the crate's files stay
//! one-way (fetch → page ← store, never fetch ↔ store).

use anyhow::{bail, Result};

/// How a fetched page ended. Logged as one byte (its discriminant), counted in the stats.
///
/// The byte values are on disk: never renumber them. `7` was once reserved for an
/// "unfetched" outcome that no build ever logged; it is read as an unknown outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Outcome {
    /// An HTML page; its links were extracted.
    Html = 0,
    /// A 2xx response that is not HTML (by `Content-Type`): stored, not parsed.
    NotHtml = 1,
    /// A final 4xx/5xx (after retries for 5xx).
    HttpError = 2,
    /// A 3xx: its `Location` is the page's one link.
    Redirect = 3,
    /// Connection, DNS or timeout failure after the retries.
    FetchError = 4,
    /// A redirect, error or sitemap body exceeded the size cap and was abandoned. (An HTML
    /// page over the cap is [`Html`](Self::Html), parsed from its first bytes; crawls logged
    /// before that have HTML pages here too.)
    TooLarge = 5,
    /// robots.txt disallows the URL (never fetched).
    RobotsDisallowed = 6,
    /// A page reached by a link that is a sitemap or sitemap index (crate::sitemap): it has
    /// no out-links, its entries enter the frontier as URLs found without a link. (In a crawl
    /// logged by an older build, a seed host's `/sitemap.xml` was such a page, its entries
    /// logged as its links.)
    Sitemap = 7,
}

impl Outcome {
    /// The byte the log stores.
    pub fn to_byte(self) -> u8 {
        self as u8
    }

    /// Reads [`to_byte`](Self::to_byte)'s value back.
    pub fn from_byte(b: u8) -> Result<Self> {
        Ok(match b {
            0 => Self::Html,
            1 => Self::NotHtml,
            2 => Self::HttpError,
            3 => Self::Redirect,
            4 => Self::FetchError,
            5 => Self::TooLarge,
            6 => Self::RobotsDisallowed,
            7 => Self::Sitemap,
            _ => bail!("unknown page outcome {b}"),
        })
    }

    /// A short name for status output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::NotHtml => "not-html",
            Self::HttpError => "http-error",
            Self::Redirect => "redirect",
            Self::FetchError => "fetch-error",
            Self::TooLarge => "too-large",
            Self::RobotsDisallowed => "robots-disallowed",
            Self::Sitemap => "sitemap",
        }
    }
}

/// Why a request got no HTTP answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportFailure {
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed (a certificate the client refuses, or a broken handshake).
    Tls,
    /// Anything else: refused or reset connections, timeouts, a body cut short.
    Other,
    /// The host's addresses are loopback, private, link-local or the like and the host is
    /// not a seed's own (`crate::addresses`): nothing was connected to.
    PrivateAddress,
    /// This process had no file descriptor left for the connection (`EMFILE`, or `ENFILE`
    /// for the whole system): not the host's fault, and never a failed attempt — the page
    /// is tried again once descriptors are free ([`crate::fds`]).
    FdLimit,
}

impl TransportFailure {
    /// Whether another try a few seconds later may succeed. A name that does not resolve, a
    /// certificate that is refused or an address the crawl refuses will not change within a
    /// retry's backoff, so retrying would only delay the page's end (and the host's other
    /// pages) for nothing.
    pub fn retryable(self) -> bool {
        matches!(self, Self::Other | Self::FdLimit)
    }
}

/// What a fetched HTML page said about itself, beyond its links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageMeta {
    /// Meta robots or `X-Robots-Tag` said `noindex`.
    pub noindex: bool,
    /// `<link rel=canonical>`, normalised, when it names another URL.
    pub canonical: Option<String>,
}

impl PageMeta {
    /// Whether there is anything to store.
    pub fn is_empty(&self) -> bool {
        !self.noindex && self.canonical.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_bytes_round_trip_and_8_is_unknown() {
        for b in 0..8 {
            assert_eq!(Outcome::from_byte(b).unwrap().to_byte(), b);
        }
        let err = Outcome::from_byte(8).unwrap_err().to_string();
        assert!(err.contains("unknown page outcome 8"), "{err}");
    }
}
