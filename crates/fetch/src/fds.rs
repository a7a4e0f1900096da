//! File descriptors: how many a crawl needs ([`FdBudget`]), the process's open-file limit
//! raised to its hard limit ([`raise_open_file_limit`]) and checked against that need
//! ([`check_open_file_limit`]), and how running out of them anyway is recognised
//! ([`is_exhaustion`]).
//!
//! Why a module of its own: the bound is one formula that the engine checks at start, the
//! connection pool keeps, the docs state and the tests assert, and "too many open files" is
//! one condition that fetching, the store and the snapshots all treat the same way — a
//! transient shortage that slows the crawl down, never an error that ends it.
//!
//! The bound (docs/crawler.md, Connections): at most `concurrency` connections in flight (one
//! per request under way: one request per host, one connection per host's client) plus at
//! most `idle` kept-alive connections of hosts fetched recently ([`crate::connections`]),
//! plus [`RESERVED_FDS`] for everything else the process holds open (the standard streams,
//! the state's database, the WARC file being written, a snapshot being written, the async
//! runtime's event descriptors, the signal handler's pipe).

use std::io;

/// After a shortage of file descriptors, a request (a page's, robots.txt's, a sitemap's) is
/// made again this much later, as if it had not been made: the shortage is no failed attempt
/// (the engine's rule and a worker's).
pub const FD_RETRY: std::time::Duration = std::time::Duration::from_millis(250);

/// File descriptors set aside for what is not a connection (see the module docs); generous,
/// as it costs nothing but a slightly higher minimum limit.
pub const RESERVED_FDS: u64 = 64;

/// The file descriptors a crawl may hold at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdBudget {
    /// Connections of requests in flight: `--concurrency`.
    pub in_flight: u64,
    /// Idle kept-alive connections at most.
    pub idle: u64,
    /// Everything else ([`RESERVED_FDS`]).
    pub reserved: u64,
}

impl FdBudget {
    /// The budget of a crawl with `concurrency` requests in flight and at most `idle` idle
    /// connections.
    pub fn new(concurrency: usize, idle: usize) -> Self {
        Self {
            in_flight: concurrency as u64,
            idle: idle as u64,
            reserved: RESERVED_FDS,
        }
    }

    /// Open sockets at most: `in_flight + idle`.
    pub fn sockets(&self) -> u64 {
        self.in_flight + self.idle
    }

    /// Open files of any kind at most: `in_flight + idle + reserved`.
    pub fn total(&self) -> u64 {
        self.sockets() + self.reserved
    }
}

/// The open-file limits after [`raise_open_file_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileLimit {
    /// The limit in force for this process (what "too many open files" is measured against).
    pub soft: u64,
    /// The most the soft limit may be raised to without privileges.
    pub hard: u64,
}

/// Raises the soft open-file limit (`RLIMIT_NOFILE`) of the process to its hard limit, as
/// servers and build tools do at start (the usual soft default of 1,024 is a relic of
/// `select`), and returns both. Where the hard limit is "unlimited" the kernel still caps
/// the soft one (Linux: `fs.nr_open`), so a refused raise is tried again at 2^20, then left.
pub fn raise_open_file_limit() -> io::Result<OpenFileLimit> {
    let (soft, hard) = rlimit::Resource::NOFILE.get()?;
    if soft < hard {
        for target in [hard, 1 << 20] {
            if target > soft && rlimit::Resource::NOFILE.set(target, hard).is_ok() {
                break;
            }
        }
    }
    let (soft, hard) = rlimit::Resource::NOFILE.get()?;
    Ok(OpenFileLimit { soft, hard })
}

/// Checks that `limit` (the soft limit, once raised) allows `budget`; else a clear error
/// naming both numbers and the two ways out.
pub fn check_open_file_limit(
    budget: FdBudget,
    limit: OpenFileLimit,
    concurrency: usize,
) -> anyhow::Result<()> {
    if limit.soft >= budget.total() {
        return Ok(());
    }
    // The largest concurrency that fits, with the idle pool as large as the concurrency.
    let fits = limit.soft.saturating_sub(budget.reserved) / 2;
    let lower = if fits >= 1 {
        format!("lower --concurrency to {fits} or less")
    } else {
        "lower --concurrency".to_string()
    };
    anyhow::bail!(
        "--concurrency {concurrency} needs up to {} open files ({} connections in flight, {} idle \
         kept-alive connections, {} for the state, WARC and runtime), but the open-file limit is {} \
         (hard limit {}): {lower}, or raise the limit (e.g. `ulimit -n {}` before crawling, or the \
         hard limit in /etc/security/limits.conf or the service's LimitNOFILE)",
        budget.total(),
        budget.in_flight,
        budget.idle,
        budget.reserved,
        limit.soft,
        limit.hard,
        budget.total()
    )
}

/// Whether an I/O error means the process (`EMFILE`) or the system (`ENFILE`) has no file
/// descriptor left.
pub fn is_exhausted_io(e: &io::Error) -> bool {
    // The two errno values are the same on Linux, the BSDs and macOS.
    const ENFILE: i32 = 23;
    const EMFILE: i32 = 24;
    matches!(e.raw_os_error(), Some(EMFILE | ENFILE))
}

/// Whether any error in `e`'s chain is [`is_exhausted_io`]. The walk steps into an
/// `io::Error`'s payload with `get_ref()` (its `source()` skips it), as
/// [`crate::fetch::classify`] does. Some wrappers hide the `io::Error` they wrap — tempfile's
/// error naming the path (what a snapshot's temporary file fails with) keeps only its text
/// and skips it in `source()` — so an error whose text carries the operating system's own
/// "(os error 24)" (or 23) counts too.
pub fn is_exhaustion(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        let io = err.downcast_ref::<io::Error>();
        if io.is_some_and(is_exhausted_io) {
            return true;
        }
        let text = err.to_string();
        if text.contains("(os error 24)") || text.contains("(os error 23)") {
            return true;
        }
        cur = match io.and_then(|io| io.get_ref()) {
            Some(payload) => Some(payload),
            None => err.source(),
        };
    }
    false
}

/// [`is_exhaustion`] for an `anyhow::Error` (the store's and the snapshots' errors).
pub fn is_exhaustion_anyhow(e: &anyhow::Error) -> bool {
    e.chain().any(is_exhaustion)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_in_flight_plus_idle_plus_reserved() {
        let b = FdBudget::new(16, 16);
        assert_eq!((b.sockets(), b.total()), (32, 32 + RESERVED_FDS));
    }

    #[test]
    fn a_low_limit_is_a_clear_error_naming_both_numbers_and_the_fix() {
        let b = FdBudget::new(100, 100);
        let ok = OpenFileLimit {
            soft: 1024,
            hard: 1024,
        };
        assert!(check_open_file_limit(b, ok, 100).is_ok());
        let low = OpenFileLimit {
            soft: 200,
            hard: 200,
        };
        let msg = check_open_file_limit(b, low, 100).unwrap_err().to_string();
        assert!(msg.contains("needs up to 264 open files"), "{msg}");
        assert!(msg.contains("the open-file limit is 200"), "{msg}");
        assert!(msg.contains("lower --concurrency to 68"), "{msg}");
        assert!(msg.contains("ulimit -n 264"), "{msg}");
    }

    #[test]
    fn exhaustion_is_found_anywhere_in_a_chain() {
        #[derive(Debug)]
        struct Layer(Box<dyn std::error::Error + Send + Sync>);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error (Connect)")
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&*self.0)
            }
        }
        let emfile = io::Error::from_raw_os_error(24);
        assert!(is_exhausted_io(&emfile));
        let wrapped = Layer(Box::new(io::Error::other(Layer(Box::new(emfile)))));
        assert!(is_exhaustion(&wrapped));
        let refused = Layer(Box::new(io::Error::from(io::ErrorKind::ConnectionRefused)));
        assert!(!is_exhaustion(&refused));
        let any = anyhow::Error::from(io::Error::from_raw_os_error(23)).context("cannot create");
        assert!(is_exhaustion_anyhow(&any));
        // What tempfile returns: the path wrapper hides the io::Error but keeps its text.
        let hidden = io::Error::other(format!(
            "{} at path \"/state/.tmp\"",
            io::Error::from_raw_os_error(24)
        ));
        assert!(is_exhaustion(&hidden));
    }
}
