//! How the test web behaves: its configuration, and the pure functions that turn the
//! configuration into what is served — robots.txt bodies and the injected errors.
//!
//! Kept apart from the server so that everything that reads the configuration (the server,
//! the trap catalogue, [`TestWeb`](crate::TestWeb)) depends on this module and not on each
//! other, and so that a test can predict every injected error ([`injected_error`]) without
//! a server.

use anyhow::{bail, Context, Result};
use crawlrank_rng::splitmix64;
use std::path::Path;
use std::time::Duration;

/// How the test web behaves. `Default` is a plain, fast, error-free web.
#[derive(Debug, Clone)]
pub struct TestWebConfig {
    /// Slept before every response.
    pub latency: Duration,
    /// Probability in `[0, 1]` that a request for a graph page gets a 500 or 503.
    pub error_rate: f64,
    /// Seeds the error draws.
    pub seed: u64,
    /// Robots rules for every host (e.g. `"Disallow: /private/\nCrawl-delay: 1"`); `None`:
    /// allow all. See [`robots_rules_from_arg`] for the command line's form.
    pub robots: Option<String>,
    /// Pages per generated host (see [`generated_url`](crate::generated_url)); at least 1.
    pub pages_per_host: u32,
    /// Serve the trap catalogue on [`TRAPS_HOST`](crate::TRAPS_HOST).
    pub traps: bool,
    /// Graph pages that also link to the trap index (after their successors) when `traps`.
    pub trap_link_nodes: Vec<u32>,
    /// Size of the trap `/huge.html` body (default 50 MB, streamed, never held in memory).
    pub huge_bytes: u64,
    /// How long the trap `/slow.html` waits before answering (default 30 s).
    pub slow_delay: Duration,
    /// Record every request in the log (turn off for very long benchmarks).
    pub record_log: bool,
    /// On shutdown, how long open responses may take before their connections are cut.
    pub shutdown_grace: Duration,
    /// Serve the graph's pages over HTTPS: their URLs become `https://`, a `CONNECT` to any
    /// host opens a TLS tunnel with a certificate signed by a CA made at start-up
    /// ([`TestWeb::ca_pem`](crate::TestWeb::ca_pem)). Plain proxied `http://` requests are
    /// still answered.
    pub tls: bool,
    /// Serve sitemaps on every graph host: `/sitemap.xml`, an index naming
    /// `/sitemap-pages.xml.gz` (a gzipped urlset of the host's pages), and a robots.txt line
    /// `Sitemap: <scheme>://<host>/sitemap-robots.xml` (a plain urlset of the same pages).
    pub sitemaps: bool,
    /// Serve the hosts of [`crate::sitemap_hosts`] (`NAME.sitemaps.crawlrank.test`), whose
    /// sitemaps are bad or unusual: a 404, a 503, an HTML page, 100,000 entries, other hosts'
    /// entries, an index with a redirect and a loop, broken XML.
    pub sitemap_hosts: bool,
    /// The `Retry-After` (seconds) of the rate-limit trap hosts (crate::trap_hosts).
    pub retry_after_secs: u64,
}

impl Default for TestWebConfig {
    fn default() -> Self {
        Self {
            latency: Duration::ZERO,
            error_rate: 0.0,
            seed: 0,
            robots: None,
            pages_per_host: 8,
            traps: false,
            trap_link_nodes: Vec::new(),
            huge_bytes: 50_000_000,
            slow_delay: Duration::from_secs(30),
            record_log: true,
            shutdown_grace: Duration::from_secs(2),
            sitemaps: false,
            sitemap_hosts: false,
            tls: false,
            retry_after_secs: 2,
        }
    }
}

impl TestWebConfig {
    /// Checks the values a user can get wrong.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.error_rate) {
            bail!(
                "the error rate must be between 0 and 1, not {}",
                self.error_rate
            );
        }
        if self.pages_per_host == 0 {
            bail!("pages per host must be at least 1");
        }
        if let Some(r) = &self.robots {
            robots_body(r)?;
        }
        Ok(())
    }
}

/// Reads the command line's `--robots` argument: the path of an existing file holding the
/// rules, else the rules themselves, with `\n` written as a literal backslash-n allowed
/// (`"Disallow: /private/\nCrawl-delay: 1"`). An argument without `:` can only be a file name,
/// so a missing file is an error rather than a rule.
pub fn robots_rules_from_arg(arg: &str) -> Result<String> {
    let path = Path::new(arg);
    let rules = if path.is_file() {
        std::fs::read_to_string(path).with_context(|| format!("cannot read robots file {arg}"))?
    } else if arg.contains(':') {
        arg.replace("\\n", "\n")
    } else {
        bail!("--robots {arg}: no such file, and not robots rules (a rule looks like 'Disallow: /private/')");
    };
    robots_body(&rules).with_context(|| format!("bad robots rules in --robots {arg}"))?;
    Ok(rules)
}

/// Whether robots `rules` have a `User-agent` line.
pub(crate) fn names_agent(rules: &str) -> bool {
    rules.lines().any(|l| {
        l.split_once(':')
            .is_some_and(|(f, _)| f.trim().eq_ignore_ascii_case("user-agent"))
    })
}

/// The robots.txt served for `rules`: `User-agent: *` first unless the rules name an agent.
/// Every non-empty, non-comment line must be a `Field: value` line.
pub(crate) fn robots_body(rules: &str) -> Result<String> {
    for (i, line) in rules.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if !l.is_empty() && !l.contains(':') {
            bail!("robots line {} has no ':': '{line}'", i + 1);
        }
    }
    let mut body = String::new();
    if !names_agent(rules) {
        body.push_str("User-agent: *\n");
    }
    body.push_str(rules.trim_end());
    body.push('\n');
    Ok(body)
}

/// The error injected for `node` at `attempt` (0 for its first request), if any: 500 or 503
/// with probability `error_rate`, from a hash of `(seed, node, attempt)`.
pub fn injected_error(seed: u64, error_rate: f64, node: u32, attempt: u32) -> Option<u16> {
    if error_rate <= 0.0 {
        return None;
    }
    let h = splitmix64(
        splitmix64(seed ^ 0x7465_7374_7765_6221) ^ (u64::from(node) << 32 | u64::from(attempt)),
    );
    let u = (h >> 11) as f64 / (1u64 << 53) as f64;
    (u < error_rate).then_some(if h & 1 == 0 { 500 } else { 503 })
}
