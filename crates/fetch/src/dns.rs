//! Name resolution for the crawl's connections ([`Dns`]): an asynchronous DNS stub resolver
//! (hickory-resolver) with a cache that honours the answers' TTLs, a timeout per lookup, a
//! bound on the lookups under way at once, and the failed lookups counted per host name.
//!
//! Why not `getaddrinfo` (`ToSocketAddrs`), as before: it blocks a thread per lookup and
//! caches nothing, so at crawl scale every new connection waited for a fresh lookup on the
//! blocking pool, and a hostile or broken name server that never answers held a fetch slot and
//! a thread for as long as the system's resolver kept trying. Here a lookup is a future with a
//! deadline; answers are kept for their TTL (a host's second connection asks no one); and a
//! name whose lookups keep failing is given up, not asked again for every one of its pages.
//!
//! The rules (docs/crawler.md, DNS):
//! - an IP literal is used as it is, `localhost` and `*.localhost` are loopback and
//!   `*.invalid` does not exist (RFC 6761 §6.3, §6.4), without a name server; other names are looked up in `/etc/hosts`, then through
//!   the name servers of `/etc/resolv.conf` (or [`DnsConfig::servers`]);
//! - a lookup that has no answer within [`DnsConfig::timeout`] fails, as does a server's
//!   error (SERVFAIL, REFUSED): a *transient* failure ([`ErrorKind::DnsTransient`]), which a
//!   crawl retries like a connection failure;
//! - a name that does not exist (NXDOMAIN) or has no address fails for good
//!   ([`ErrorKind::Dns`]), as does a name whose lookups failed [`DnsConfig::max_failures`]
//!   times in a row: it is given up without another query (a success clears its count);
//! - at most [`DnsConfig::max_lookups`] lookups are under way at once; more wait their turn.

use crate::error::{ErrorKind, HttpError};
use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::TokioResolver;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How names are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsConfig {
    /// The name servers to ask (UDP, then TCP for a truncated answer); empty: the system's,
    /// from `/etc/resolv.conf`.
    pub servers: Vec<SocketAddr>,
    /// The longest a lookup may take, every server and retry included.
    pub timeout: Duration,
    /// Lookups under way at once, at most.
    pub max_lookups: usize,
    /// Failed lookups in a row after which a name is given up for the rest of the run.
    pub max_failures: u32,
    /// Answers kept in the cache, at most (each for its TTL).
    pub cache_size: u64,
}

/// [`DnsConfig::timeout`]'s default.
pub const DEFAULT_DNS_TIMEOUT: Duration = Duration::from_secs(5);
/// [`DnsConfig::max_failures`]'s default.
pub const DEFAULT_MAX_DNS_FAILURES: u32 = 3;

impl Default for DnsConfig {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            timeout: DEFAULT_DNS_TIMEOUT,
            max_lookups: 64,
            max_failures: DEFAULT_MAX_DNS_FAILURES,
            cache_size: 16_384,
        }
    }
}

/// A resolver shared by a crawl's connections (see the module docs).
pub struct Dns {
    cfg: DnsConfig,
    /// Built at the first lookup of a name (inside the runtime, which hickory needs); the
    /// error says why there is no resolver (no `/etc/resolv.conf`…).
    resolver: OnceLock<Result<TokioResolver, String>>,
    lookups: Semaphore,
    /// Failed lookups in a row, by host name; a name is removed when it resolves.
    failures: Mutex<HashMap<String, u32>>,
    /// Queries sent to a resolver (not answered from the literal, localhost or given-up
    /// rules), for the tests.
    asked: std::sync::atomic::AtomicU64,
}

impl Dns {
    /// A resolver for `cfg`. Never fails: a system without a usable `/etc/resolv.conf` can
    /// still crawl IP literals, `localhost` and through a proxy; its name lookups fail,
    /// naming the cause.
    pub fn new(cfg: DnsConfig) -> Self {
        let lookups = Semaphore::new(cfg.max_lookups.max(1));
        Self {
            cfg,
            resolver: OnceLock::new(),
            lookups,
            failures: Mutex::new(HashMap::new()),
            asked: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn build(&self) -> Result<TokioResolver, String> {
        let provider = TokioRuntimeProvider::default();
        let mut builder = if self.cfg.servers.is_empty() {
            TokioResolver::builder(provider)
                .map_err(|e| format!("cannot read the system's DNS configuration: {e}"))?
        } else {
            let mut config = ResolverConfig::default();
            config.name_servers = self
                .cfg
                .servers
                .iter()
                .map(|s| {
                    let mut ns = NameServerConfig::udp_and_tcp(s.ip());
                    for c in &mut ns.connections {
                        c.port = s.port();
                    }
                    ns
                })
                .collect();
            let mut b = TokioResolver::builder_with_config(config, provider);
            *b.options_mut() = ResolverOpts::default();
            b
        };
        let opts = builder.options_mut();
        // Each query gets half the lookup's time, and one more try (another server, or the
        // same again): the lookup's own deadline is enforced around it all.
        opts.timeout = (self.cfg.timeout / 2).max(Duration::from_millis(1));
        opts.attempts = 1;
        opts.cache_size = self.cfg.cache_size;
        // A first, AAAA only for a name without one: one query for most hosts.
        opts.ip_strategy = hickory_resolver::config::LookupIpStrategy::Ipv4thenIpv6;
        builder
            .build()
            .map_err(|e| format!("cannot set up the DNS resolver: {e}"))
    }

    /// The addresses of `host` (a name, or an IP literal with or without brackets) at `port`.
    pub async fn lookup(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, HttpError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let name = bare.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return Ok(vec![
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
                SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
            ]);
        }
        // RFC 6761 §6.4: `.invalid` never resolves, and resolvers are to say so at once.
        if name == "invalid" || name.ends_with(".invalid") {
            return Err(HttpError::new(
                ErrorKind::Dns,
                format!("{name} does not resolve (a .invalid name, RFC 6761)"),
            ));
        }
        let failed = self.failures(&name);
        if failed >= self.cfg.max_failures {
            return Err(HttpError::new(
                ErrorKind::Dns,
                format!("{name}: given up after {failed} failed DNS lookups"),
            ));
        }
        let resolver = match self.resolver.get_or_init(|| self.build()) {
            Ok(r) => r,
            Err(e) => return Err(HttpError::new(ErrorKind::Dns, e.clone())),
        };
        let _turn = self
            .lookups
            .acquire()
            .await
            .map_err(|e| HttpError::new(ErrorKind::DnsTransient, e))?;
        self.asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let looked =
            tokio::time::timeout(self.cfg.timeout, resolver.lookup_ip(name.as_str())).await;
        let (kind, why) = match looked {
            Ok(Ok(ips)) => {
                let addrs: Vec<SocketAddr> =
                    ips.iter().map(|ip| SocketAddr::new(ip, port)).collect();
                if !addrs.is_empty() {
                    self.lock().remove(&name);
                    return Ok(addrs);
                }
                (ErrorKind::Dns, format!("{name} has no address"))
            }
            Ok(Err(e)) if e.is_no_records_found() || e.is_nx_domain() => {
                (ErrorKind::Dns, format!("{name} does not resolve: {e}"))
            }
            Ok(Err(e)) => {
                // The resolver's own error stays in the chain: running out of file
                // descriptors for its socket must be seen as ours (crate::fds), not the host's,
                // and is not held against the name either.
                if crate::fds::is_exhaustion(&e) {
                    return Err(HttpError::new(
                        ErrorKind::DnsTransient,
                        LookupError { name, source: e },
                    ));
                }
                let n = self.count_failure(&name);
                let kind = self.kind_after(n, ErrorKind::DnsTransient);
                return Err(HttpError::new(kind, LookupError { name, source: e }));
            }
            Err(_) => (
                ErrorKind::DnsTransient,
                format!(
                    "DNS lookup of {name} timed out after {:?}",
                    self.cfg.timeout
                ),
            ),
        };
        let n = self.count_failure(&name);
        Err(HttpError::new(self.kind_after(n, kind), why))
    }

    /// Counts a failed lookup of `name`; returns its failures in a row.
    fn count_failure(&self, name: &str) -> u32 {
        let mut failures = self.lock();
        let n = failures.entry(name.to_string()).or_insert(0);
        *n += 1;
        *n
    }

    /// The last try a name gets fails for good, whatever the cause.
    fn kind_after(&self, failures: u32, kind: ErrorKind) -> ErrorKind {
        if failures >= self.cfg.max_failures {
            ErrorKind::Dns
        } else {
            kind
        }
    }

    /// Failed lookups in a row of `name` so far.
    pub fn failures(&self, name: &str) -> u32 {
        self.lock().get(name).copied().unwrap_or(0)
    }

    /// Lookups that went to the resolver so far (its cache answers some of them).
    pub fn lookups_made(&self) -> u64 {
        self.asked.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        // A panic while holding it leaves a count, which is still right.
        self.failures
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A lookup the resolver failed: which name, and the resolver's error as its source.
#[derive(Debug)]
struct LookupError {
    name: String,
    source: hickory_resolver::net::NetError,
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DNS lookup of {} failed", self.name)
    }
}

impl std::error::Error for LookupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_testkit::{DnsAnswer, DnsServer};
    use std::sync::Arc;

    /// A tiny DNS server on loopback UDP, answering by name: `ok.test` A 127.0.0.1 with a TTL
    /// of 300 s, `zero.test` A 127.0.0.2 with a TTL of 0, `nx.test` NXDOMAIN, `fail.test`
    /// SERVFAIL, `slow.test` never (and any other name NXDOMAIN); AAAA questions get an empty
    /// answer. Counts the queries.
    fn server() -> (SocketAddr, DnsServer) {
        let server = DnsServer::start(
            &[
                ("ok.test", DnsAnswer::A(Ipv4Addr::new(127, 0, 0, 1))),
                ("zero.test", DnsAnswer::ATtl(Ipv4Addr::new(127, 0, 0, 2), 0)),
                ("nx.test", DnsAnswer::NxDomain),
                ("fail.test", DnsAnswer::ServFail),
                ("slow.test", DnsAnswer::Silent),
            ],
            DnsAnswer::NxDomain,
        );
        (server.addr(), server)
    }

    fn dns(server: SocketAddr, timeout: Duration) -> Dns {
        Dns::new(DnsConfig {
            servers: vec![server],
            timeout,
            ..DnsConfig::default()
        })
    }

    /// How many queries `server` got for `name`.
    fn count(server: &DnsServer, name: &str) -> u32 {
        server.asked().get(name).copied().unwrap_or(0)
    }

    #[tokio::test]
    async fn answers_are_cached_for_their_ttl() {
        let (addr, asked) = server();
        let d = dns(addr, Duration::from_secs(5));
        let ok: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert_eq!(d.lookup("ok.test", 80).await.unwrap(), [ok]);
        let first = count(&asked, "ok.test");
        assert!(first >= 1);
        for port in [81, 82, 83] {
            let got = d.lookup("OK.test", port).await.unwrap();
            assert_eq!(got, [SocketAddr::new(ok.ip(), port)]);
        }
        assert_eq!(
            count(&asked, "ok.test"),
            first,
            "a 300 s answer is asked once"
        );
        // A TTL of 0 is not kept: each lookup asks again.
        for _ in 0..3 {
            assert_eq!(
                d.lookup("zero.test", 80).await.unwrap(),
                ["127.0.0.2:80".parse().unwrap()]
            );
        }
        assert_eq!(count(&asked, "zero.test"), 3 * first);
    }

    #[tokio::test]
    async fn literals_and_localhost_need_no_name_server() {
        // A server that does not exist: nothing may ask it.
        let d = dns("127.0.0.1:9".parse().unwrap(), Duration::from_secs(5));
        for (host, want) in [
            ("10.1.2.3", vec!["10.1.2.3:8080"]),
            ("[::1]", vec!["[::1]:8080"]),
            ("localhost", vec!["127.0.0.1:8080", "[::1]:8080"]),
            ("a.LOCALHOST.", vec!["127.0.0.1:8080", "[::1]:8080"]),
        ] {
            let want: Vec<SocketAddr> = want.iter().map(|a| a.parse().unwrap()).collect();
            assert_eq!(d.lookup(host, 8080).await.unwrap(), want, "{host}");
        }
        let err = d.lookup("nonexistent.invalid", 80).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Dns);
        assert_eq!(d.lookups_made(), 0);
    }

    #[tokio::test]
    async fn a_name_that_does_not_exist_fails_for_good() {
        let (addr, asked) = server();
        let d = dns(addr, Duration::from_secs(5));
        let err = d.lookup("nx.test", 80).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Dns);
        let why = std::error::Error::source(&err).unwrap().to_string();
        assert!(why.contains("nx.test does not resolve"), "{why}");
        assert!(count(&asked, "nx.test") >= 1);
    }

    #[tokio::test]
    async fn a_silent_name_server_times_out_and_failing_names_are_given_up() {
        let (addr, asked) = server();
        let d = dns(addr, Duration::from_millis(300));
        // Each try fails within the timeout, as a transient failure, until the last one.
        for attempt in 1..=DEFAULT_MAX_DNS_FAILURES {
            let err = tokio::time::timeout(Duration::from_secs(30), d.lookup("slow.test", 80))
                .await
                .expect("the lookup's own timeout ends it")
                .unwrap_err();
            let want = if attempt < DEFAULT_MAX_DNS_FAILURES {
                ErrorKind::DnsTransient
            } else {
                ErrorKind::Dns
            };
            assert_eq!(err.kind, want, "attempt {attempt}");
            assert_eq!(d.failures("slow.test"), attempt);
        }
        let queries = count(&asked, "slow.test");
        assert!(queries >= DEFAULT_MAX_DNS_FAILURES);
        // Given up: failed at once, nothing asked.
        let err = d.lookup("slow.test", 80).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Dns);
        let why = std::error::Error::source(&err).unwrap().to_string();
        assert!(why.contains("given up after 3 failed DNS lookups"), "{why}");
        // SERVFAIL counts alike; a name that resolves again is cleared.
        for _ in 0..DEFAULT_MAX_DNS_FAILURES {
            assert!(d.lookup("fail.test", 80).await.is_err());
        }
        let before = count(&asked, "fail.test");
        assert_eq!(
            d.lookup("fail.test", 80).await.unwrap_err().kind,
            ErrorKind::Dns
        );
        assert_eq!(count(&asked, "fail.test"), before);
        assert_eq!(count(&asked, "slow.test"), queries);
        assert!(d.lookup("ok.test", 80).await.is_ok());
        assert_eq!(d.failures("ok.test"), 0);
    }

    #[tokio::test]
    async fn lookups_under_way_are_bounded() {
        let (addr, asked) = server();
        let d = Arc::new(Dns::new(DnsConfig {
            servers: vec![addr],
            timeout: Duration::from_millis(500),
            max_lookups: 2,
            max_failures: 100,
            ..DnsConfig::default()
        }));
        // Six lookups of a silent name at once: only two are under way at a time, so the
        // server sees the first two lookups' queries before any third lookup starts.
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..6 {
            let d = d.clone();
            tasks.spawn(async move { d.lookup("slow.test", 80).await.is_err() });
        }
        let mut waited = 0;
        while d.lookups_made() < 2 && waited < 5000 {
            tokio::time::sleep(Duration::from_millis(1)).await;
            waited += 1;
        }
        assert_eq!(d.lookups.available_permits(), 0);
        assert_eq!(d.lookups_made(), 2, "two lookups under way, four waiting");
        while let Some(failed) = tasks.join_next().await {
            assert!(failed.unwrap());
        }
        assert_eq!(d.lookups_made(), 6);
        assert!(count(&asked, "slow.test") >= 6);
    }
}
