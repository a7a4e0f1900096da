//! `GET /metrics`: the crawl's numbers in the Prometheus text exposition format 0.0.4, for
//! Prometheus and Grafana (as StormCrawler and URLFrontier users watch their crawls).
//!
//! Written by hand rather than through a metrics library: the numbers already live in
//! [`DashboardState`](crate::DashboardState) (the crawl's own counters and its latest
//! progress), so the endpoint only has to print them, and the format is a few lines of
//! `# HELP`, `# TYPE` and `name value`. Every [`Counter`] of the crawl becomes one counter
//! `crawlrank_<field>_total` (help: its doc line) — the counters the crawl's summary prints —
//! and the progress numbers become gauges.

use crate::state::{Counter, Sample};
use std::fmt::Write;

/// The `Content-Type` of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Escapes a `# HELP` text: backslashes and line feeds.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Appends one metric family of a single unlabelled sample.
fn family(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    // Writing to a String cannot fail.
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(out, "{name} {value}");
}

/// Prometheus' text for a gauge value: finite numbers as they are, the rest as `NaN`/`±Inf`.
fn float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The exposition of the latest sample `s`, the crawl's `counters` and whether the crawl runs.
pub fn render(s: &Sample, counters: &[Counter], running: bool) -> String {
    let n = &s.snapshot;
    let mut out = String::with_capacity(4096);
    family(
        &mut out,
        "crawlrank_pages_total",
        "counter",
        "Pages whose fetch ended (any outcome), over all runs of the crawl.",
        n.pages_total,
    );
    family(
        &mut out,
        "crawlrank_page_errors_total",
        "counter",
        "Pages that ended in an HTTP error, a fetch error or an over-size body (the progress line's errors).",
        n.errors,
    );
    for c in counters {
        family(
            &mut out,
            &format!("crawlrank_{}_total", c.name),
            "counter",
            c.help,
            c.value,
        );
    }
    let gauges: [(&str, &str, f64); 9] = [
        (
            "crawlrank_crawl_running",
            "1 while the crawl runs, 0 once it ended (or for a state read from disk).",
            f64::from(u8::from(running)),
        ),
        (
            "crawlrank_pages_per_second",
            "Pages finished per second, averaged over the current run.",
            n.pages_per_sec,
        ),
        (
            "crawlrank_frontier_pages",
            "Pages in the frontier: discovered, not yet popped.",
            n.frontier as f64,
        ),
        (
            "crawlrank_waiting_pages",
            "Popped pages waiting for their host (politeness delays).",
            n.waiting as f64,
        ),
        (
            "crawlrank_in_flight_requests",
            "Requests in flight (pages and robots.txt files).",
            n.in_flight as f64,
        ),
        (
            "crawlrank_hosts",
            "Hosts discovered (distinct scheme, host and port).",
            n.hosts as f64,
        ),
        (
            "crawlrank_hosts_active",
            "Hosts with pages queued, a request in flight or a politeness delay running.",
            n.hosts_active as f64,
        ),
        (
            "crawlrank_discovered_urls",
            "URLs discovered over all runs.",
            n.discovered as f64,
        ),
        (
            "crawlrank_pages_per_second_recent",
            "Pages finished per second over the last sample interval (about 0.5 s).",
            s.rate,
        ),
    ];
    for (name, help, value) in gauges {
        family(&mut out, name, "gauge", help, float(value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_metrics_of_their_own_with_help() {
        let counters = crate::CrawlNumbers::counters_from(
            vec![
                ("sitemaps_fetched", 3),
                ("sitemaps_not_found", 1),
                ("sitemap_links", 16),
            ],
            &[(
                "sitemaps_fetched",
                "Sitemap requests sent (robots.txt's Sitemap: lines, /sitemap.xml, index entries).",
            )],
        );
        let text = render(&Sample::default(), &counters, true);
        assert!(
            text.contains("# HELP crawlrank_sitemaps_fetched_total Sitemap requests sent"),
            "{text}"
        );
        assert!(text.contains("\ncrawlrank_sitemaps_fetched_total 3\n"));
        assert!(text.contains("\ncrawlrank_sitemaps_not_found_total 1\n"));
        assert!(text.contains("\ncrawlrank_sitemap_links_total 16\n"));
    }

    #[test]
    fn special_floats_and_help_escapes() {
        assert_eq!(float(f64::NAN), "NaN");
        assert_eq!(float(f64::NEG_INFINITY), "-Inf");
        assert_eq!(float(2.5), "2.5");
        assert_eq!(escape_help("a\\b\nc"), "a\\\\b\\nc");
    }
}
