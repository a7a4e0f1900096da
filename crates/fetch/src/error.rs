//! How a request failed ([`HttpError`], by [`ErrorKind`]): the one error type of the
//! connector (the `http` module) and of name resolution (the `dns` module), in a file of its own so
//! that each can name it without importing the other's module.

/// What went wrong with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The host name did not resolve, and will not soon: it does not exist, has no address,
    /// or its lookups failed too often (see the `dns` module).
    Dns,
    /// The name's lookup failed for now (no answer in time, a server's error): worth another
    /// try later.
    DnsTransient,
    /// No TCP connection (refused, unreachable), or the proxy refused the tunnel.
    Connect,
    /// The TLS handshake failed.
    Tls,
    /// The connect timeout passed.
    Timeout,
    /// The exchange failed after connecting (a reset, a malformed or cut response).
    Http,
    /// Every address of the host is loopback, private, link-local or the like, and the host
    /// is not a seed's own (see the `addresses` module): nothing was connected to.
    PrivateAddress,
}

/// A request's failure: its kind and its cause.
#[derive(Debug)]
pub struct HttpError {
    /// What kind of failure it was (how it is counted, and whether a retry may help).
    pub kind: ErrorKind,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl HttpError {
    /// A failure of `kind` caused by `source`.
    pub fn new(
        kind: ErrorKind,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            kind,
            source: Some(source.into()),
        }
    }

    /// Whether the request ran out of time.
    pub fn is_timeout(&self) -> bool {
        self.kind == ErrorKind::Timeout
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.kind {
            ErrorKind::Dns => "dns error",
            ErrorKind::DnsTransient => "dns error (temporary)",
            ErrorKind::Connect => "connect error",
            ErrorKind::Tls => "tls error",
            ErrorKind::Timeout => "connect timeout",
            ErrorKind::Http => "http error",
            ErrorKind::PrivateAddress => "private address refused",
        })
    }
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
