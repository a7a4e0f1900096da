//! A crawl's counters ([`Stats`]): what happened, for the progress line, the final summary,
//! `crawlrank status` and the dashboard's metrics. One set, counted one way: `crawlrank
//! crawl`'s engine keeps them (its thread alone, no atomics) and saves them with every commit,
//! so they survive restarts and add up across runs; a crawl worker counts its run's pages
//! with the same calls ([`Stats::count_outcome`], [`Stats::count_page`]), so that a worker's
//! counters read as `crawl`'s.

use crate::page::{Outcome, TransportFailure};
use std::fmt;

macro_rules! stats {
    ($($field:ident: $doc:literal),* $(,)?) => {
        /// Counters of a crawl, cumulative over all its runs.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct Stats {
            $(#[doc = $doc] pub $field: u64,)*
        }

        impl Stats {
            /// `name=value` lines.
            pub fn encode(&self) -> Vec<u8> {
                let mut s = String::new();
                $(s.push_str(&format!("{}={}\n", stringify!($field), self.$field));)*
                s.into_bytes()
            }

            /// Reads [`encode`](Self::encode)'s output; unknown or bad lines are ignored
            /// (counters are informative, never worth refusing a state for).
            pub fn decode(b: &[u8]) -> Self {
                let mut st = Self::default();
                for line in String::from_utf8_lossy(b).lines() {
                    let Some((k, v)) = line.split_once('=') else { continue };
                    // The page counter's name before sitemaps were side requests.
                    let k = if k == "sitemaps" { "sitemap_pages" } else { k };
                    let Ok(v) = v.parse::<u64>() else { continue };
                    match k {
                        $(stringify!($field) => st.$field = v,)*
                        _ => {}
                    }
                }
                st
            }

            /// Adds `other`'s counts to these (a worker's pages to its run's counters).
            pub fn add(&mut self, other: &Self) {
                $(self.$field += other.$field;)*
            }

            /// Every counter with its name.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($field), self.$field),)*]
            }

            /// Every counter's name with what it counts (its doc line), in
            /// [`fields`](Self::fields)' order: the help text of a metrics endpoint.
            pub fn descriptions() -> Vec<(&'static str, &'static str)> {
                vec![$((stringify!($field), $doc),)*]
            }
        }
    };
}

stats! {
    requests: "HTTP requests sent (pages, robots.txt, sitemaps and retries).",
    pages_html: "HTML pages fetched and parsed.",
    pages_not_html: "Responses skipped as not HTML (by Content-Type).",
    sitemap_pages: "Pages reached by a link that were sitemaps: counted in fetched pages, their entries given to the frontier as found without a link, not as out-links (a crawl begun by an older crawlrank also counts here the /sitemap.xml it fetched as a page).",
    sitemaps_fetched: "Sitemap requests sent (retries included): each seed host's /sitemap.xml, its robots.txt Sitemap: files, the sitemaps of indexes. Side requests of their host like robots.txt: not pages, not in --max-pages.",
    sitemaps_read: "Sitemaps and sitemap indexes read (a urlset or sitemapindex body).",
    sitemaps_not_found: "Sitemap requests answered with a 4xx or 5xx (a site without /sitemap.xml answers 404): no entries.",
    sitemaps_not_sitemap: "Sitemap requests answered 2xx with a body that is not a sitemap (an HTML page): no entries.",
    sitemaps_disallowed: "Sitemaps not fetched because robots.txt disallows them.",
    sitemap_errors: "Sitemaps given up or cut short: broken XML or gzip (the entries before the fault were kept), a body over --max-body, no answer after the retries, a redirect to no usable URL.",
    sitemap_links: "Sitemap entries read and kept, given to the frontier as URLs found without a link (each then passes the scope, filters and per-host cap like a link; one already known changes nothing).",
    sitemap_dropped: "Sitemap entries and files dropped: past the protocol's limits (50,000 entries, 50 MiB), on another host than their sitemap (robots.txt Sitemap: files and redirects too), or past 1,000 sitemap files per host.",
    sitemap_invalid: "Sitemap entries that were malformed, not http(s), or caught by the trap rules.",
    redirects: "3xx responses (their target became a discovered link).",
    http_errors: "Final 4xx/5xx responses.",
    retries: "Fetches retried after a 5xx, a timeout or a connection error.",
    fetch_errors: "Pages given up after connection, DNS, TLS or timeout failures.",
    dns_errors: "Pages given up because their host name did not resolve (part of fetch errors).",
    tls_errors: "Pages given up on a TLS certificate or handshake failure (part of fetch errors).",
    private_address_refused: "Pages given up because their host is at a loopback, private, link-local or other non-public address and is not a seed's own (part of fetch errors; --allow-private-networks).",
    timeouts: "Requests that timed out (each attempt).",
    too_large: "Redirect, error and sitemap-page bodies over the size cap, abandoned.",
    truncated_pages: "HTML pages over --max-body, parsed from their first --max-body bytes (counted in html pages).",
    archived_truncated: "Bodies archived cut at the size cap (WARC-Truncated): non-HTML ones, and HTML pages (truncated pages).",
    robots_fetched: "robots.txt files requested.",
    robots_cached: "robots.txt files reused from the state (fetched by an earlier run less than 24 h ago).",
    robots_disallowed: "Pages not fetched because robots.txt disallows them.",
    nofollow_pages: "Pages whose meta robots said nofollow.",
    noindex_pages: "Pages whose meta robots or X-Robots-Tag said noindex.",
    canonical_pages: "Pages whose link rel=canonical names another URL.",
    nofollow_links: "a rel=nofollow links skipped.",
    invalid_links: "Links that were malformed or not http(s).",
    trap_links: "Links dropped as too long or too deep.",
    pathological_links: "Links dropped by the pathological-path rule (a path segment, or a run of them, three times in a row: /a/a/a/, /a/b/a/b/a/b/).",
    links_over_cap: "Links dropped because their page already had --max-links-per-page links (the first ones in page order are kept).",
    host_cap_links: "Links dropped because their host reached --max-pages-per-host.",
    domain_host_cap_links: "Links dropped because they named a new host of a registrable domain (eTLD+1) that has --max-hosts-per-domain hosts already (a wildcard-DNS site names a new host with every link).",
    domain_cap_links: "Links dropped because their registrable domain (eTLD+1) reached --max-urls-per-domain.",
    url_limit_links: "New URLs (links, sitemap entries, seeds) refused because the crawl has --max-urls URLs (at most 2^32 - 1: page ids are 32-bit).",
    out_of_scope_links: "Links dropped as outside --scope (another host or domain than the seeds').",
    filtered_links: "Links dropped by --include / --exclude.",
    parse_errors: "Pages the HTML parser gave up on (links found before were kept).",
    bytes: "Body bytes received.",
    rate_limited: "429 and 503 answers: each slowed its host down (Retry-After or exponential back-off).",
    backoff_seconds: "Seconds of pause imposed on hosts by their 429/503 answers, summed.",
    retry_after_invalid: "Retry-After values that were neither seconds nor an HTTP-date (ignored: the host backed off as without one).",
    retry_after_too_long: "Pages given up because Retry-After asked for more than --max-retry-after.",
    redirect_chain_too_long: "Redirect targets dropped: more redirects in a row than --max-redirects.",
    hop_limit_links: "Links dropped: more link hops from a seed than --max-hops.",
    warc_damaged_pages: "Crawled pages whose WARC records a damaged file lost (found shorter than the state says it was when the crawl resumed: cut back to its last whole record, never padded): fetched again for the archive, without changing the crawl.",
    warc_refetched: "Pages fetched again to replace WARC records a damaged file lost.",
    warc_refetch_failed: "Pages whose lost WARC records could not be replaced (no answer after the retries, or robots.txt now disallows them).",
    fd_shortages: "Connections and files that failed for want of file descriptors (EMFILE/ENFILE): retried later, never counted as failed attempts.",
}

#[cfg(feature = "net")]
impl Stats {
    /// Counts a request that got an answer or failed: `bytes` of body received, and whether
    /// it timed out.
    pub fn count_answer(&mut self, bytes: u64, timed_out: bool) {
        self.requests += 1;
        self.bytes += bytes;
        self.timeouts += u64::from(timed_out);
    }

    /// Counts a robots.txt fetch that ended: its requests (redirects included) and whether
    /// the last timed out (the file itself is counted in `robots_fetched` when requested).
    pub fn count_robots(&mut self, f: &crate::fetch::RobotsFetch) {
        self.requests += f.requests;
        self.timeouts += u64::from(f.timed_out);
    }

    /// Counts how a sitemap request settled: read (with what it left out), not found, not a
    /// sitemap, or failed; a redirect to a usable URL is counted when its target is fetched.
    pub(crate) fn count_sitemap(&mut self, end: &crate::fetch::SitemapEnd) {
        use crate::fetch::SitemapEnd;
        match end {
            SitemapEnd::Failed | SitemapEnd::Redirect(Err(_)) => self.sitemap_errors += 1,
            SitemapEnd::Redirect(Ok(_)) => {}
            SitemapEnd::NotFound => self.sitemaps_not_found += 1,
            SitemapEnd::NotSitemap => self.sitemaps_not_sitemap += 1,
            SitemapEnd::Read(read) => {
                self.sitemaps_read += 1;
                self.sitemap_dropped += u64::from(read.dropped);
                self.sitemap_invalid += u64::from(read.invalid);
                self.sitemap_errors += u64::from(read.error.is_some());
            }
        }
    }

    /// Counts what a finished page's fetch and parse found besides its outcome (which
    /// [`count_outcome`](Self::count_outcome) counts): its directives, the links it dropped
    /// and why, a body cut at the cap or left unparsed, what a sitemap fetched as a page left
    /// out (its entries are counted as a sitemap file's are).
    pub fn count_page(&mut self, f: &crate::fetch::PageFetch) {
        self.nofollow_pages += u64::from(f.directives.nofollow);
        self.noindex_pages += u64::from(f.directives.noindex);
        self.canonical_pages += u64::from(f.directives.canonical.is_some());
        self.nofollow_links += u64::from(f.dropped.nofollow);
        self.invalid_links += u64::from(f.dropped.invalid);
        self.trap_links += u64::from(f.dropped.traps);
        self.pathological_links += u64::from(f.dropped.pathological);
        self.links_over_cap += u64::from(f.dropped.over_cap);
        self.parse_errors += u64::from(f.body.parse_error);
        self.archived_truncated += u64::from(f.body.truncated && !f.warc.is_empty());
        self.truncated_pages += u64::from(f.body.truncated && f.outcome == Some(Outcome::Html));
        if f.outcome == Some(Outcome::Sitemap) {
            self.sitemaps_read += 1;
            self.sitemap_links += f.links.len() as u64;
            self.sitemap_dropped += u64::from(f.sitemap.dropped);
            self.sitemap_errors += u64::from(f.sitemap.error);
        }
    }
}

impl Stats {
    /// Counts what an answer did to its host's back-off
    /// ([`Backoffs::answer`](crate::backoff::Backoffs::answer)): a refusal (rate limited,
    /// and the seconds it holds the host), a `Retry-After` of neither form.
    pub fn count_back_off(&mut self, after: &crate::backoff::AfterAnswer) {
        if let Some(refusal) = after.refusal {
            self.rate_limited += 1;
            self.backoff_seconds += refusal.wait.as_secs();
        }
        self.retry_after_invalid += u64::from(after.invalid_retry_after);
    }

    /// Counts a finished page in the one counter of its outcome (so that they add up to
    /// [`pages_done`](Self::pages_done)); a fetch error also in `dns_errors` or `tls_errors`
    /// when its `failure` says so.
    pub fn count_outcome(&mut self, outcome: Outcome, failure: Option<TransportFailure>) {
        match outcome {
            Outcome::Html => self.pages_html += 1,
            Outcome::NotHtml => self.pages_not_html += 1,
            Outcome::Sitemap => self.sitemap_pages += 1,
            Outcome::HttpError => self.http_errors += 1,
            Outcome::Redirect => self.redirects += 1,
            Outcome::FetchError => {
                self.fetch_errors += 1;
                match failure {
                    Some(TransportFailure::Dns) => self.dns_errors += 1,
                    Some(TransportFailure::Tls) => self.tls_errors += 1,
                    Some(TransportFailure::PrivateAddress) => self.private_address_refused += 1,
                    _ => {}
                }
            }
            Outcome::TooLarge => self.too_large += 1,
            Outcome::RobotsDisallowed => self.robots_disallowed += 1,
        }
    }

    /// Pages whose fetch ended, whatever the outcome.
    pub fn pages_done(&self) -> u64 {
        self.pages_html
            + self.pages_not_html
            + self.sitemap_pages
            + self.redirects
            + self.http_errors
            + self.fetch_errors
            + self.too_large
            + self.robots_disallowed
    }

    /// Responses received from a server for pages (not robots.txt), whatever their status.
    pub fn pages_answered(&self) -> u64 {
        self.pages_html
            + self.pages_not_html
            + self.sitemap_pages
            + self.redirects
            + self.http_errors
            + self.too_large
    }

    /// Pages given up without a server's answer: robots.txt disallowed them, or their
    /// fetch failed after the retries. Not counted against `--max-pages`.
    pub fn pages_given_up(&self) -> u64 {
        self.robots_disallowed + self.fetch_errors
    }

    /// Lines for summaries: the fetched pages (what `--max-pages` counts) by outcome, the
    /// pages given up, by reason, and, when any was requested, the sitemaps (side requests,
    /// not pages).
    pub fn pages_summary(&self) -> String {
        let sitemap_pages = match self.sitemap_pages {
            0 => String::new(),
            n => format!(", sitemaps {n}"),
        };
        let sitemaps = if self.sitemaps_fetched + self.sitemaps_disallowed > 0 {
            format!(
                "sitemaps          {} requests, not pages (read {}, not found {}, not a sitemap {}, errors {}, robots.txt disallowed {}); entries: {} given to the frontier, {} dropped, {} invalid\n",
                self.sitemaps_fetched,
                self.sitemaps_read,
                self.sitemaps_not_found,
                self.sitemaps_not_sitemap,
                self.sitemap_errors,
                self.sitemaps_disallowed,
                self.sitemap_links,
                self.sitemap_dropped,
                self.sitemap_invalid
            )
        } else {
            String::new()
        };
        format!(
            "fetched pages     {} (html {}, not html {}{sitemap_pages}, redirects {}, http errors {}, too large {})\n\
             given up          {} (robots.txt disallowed {}, fetch failed {}: dns {}, tls {}, private address {})\n{sitemaps}",
            self.pages_answered(),
            self.pages_html,
            self.pages_not_html,
            self.redirects,
            self.http_errors,
            self.too_large,
            self.pages_given_up(),
            self.robots_disallowed,
            self.fetch_errors,
            self.dns_errors,
            self.tls_errors,
            self.private_address_refused
        )
    }

    /// Errors of any kind (for the progress line).
    pub fn errors(&self) -> u64 {
        self.http_errors + self.fetch_errors + self.too_large
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.fields();
        let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (k, v) in fields {
            writeln!(f, "  {:<width$} {v}", k.replace('_', " "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = Stats {
            requests: 5,
            bytes: 1 << 40,
            trap_links: 2,
            ..Stats::default()
        };
        assert_eq!(Stats::decode(&s.encode()), s);
        assert_eq!(
            Stats::decode(b"junk\nrequests=x\nfuture_field=3\npages_html=2"),
            Stats {
                pages_html: 2,
                ..Stats::default()
            }
        );
        // An older state's sitemap pages keep counting as pages.
        let old = Stats::decode(b"sitemaps=2\npages_html=3");
        assert_eq!((old.sitemap_pages, old.pages_answered()), (2, 5));
    }

    #[test]
    fn each_outcome_is_counted_once() {
        let mut s = Stats::default();
        for b in 0..8 {
            s.count_outcome(Outcome::from_byte(b).unwrap(), None);
        }
        s.count_outcome(Outcome::FetchError, Some(TransportFailure::Dns));
        s.count_outcome(Outcome::FetchError, Some(TransportFailure::Tls));
        s.count_outcome(Outcome::FetchError, Some(TransportFailure::Other));
        s.count_outcome(Outcome::FetchError, Some(TransportFailure::PrivateAddress));
        assert_eq!(s.pages_done(), 12);
        assert_eq!(
            (
                s.fetch_errors,
                s.dns_errors,
                s.tls_errors,
                s.private_address_refused
            ),
            (5, 1, 1, 1)
        );
    }
}
