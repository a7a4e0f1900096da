//! What the dashboard shows: the state a crawl (or a state directory read now and then) hands
//! it, kept behind one short lock.
//!
//! Why a store of its own rather than the crawl's own structures: the crawl runs on one owner
//! thread that must never wait for a web request (docs/crawler.md), so it *pushes* copies here
//! from its progress callback — O(1) work under the lock, the time series bounded — and the
//! server's handlers only read. [`DashboardState::status`] is the JSON document of
//! `GET /api/status`; `crate::metrics` renders the same numbers for Prometheus.
//!
//! Why its own view of a crawl ([`CrawlNumbers`]) rather than the crawler's types: the
//! dashboard shows numbers, whoever counts them; the front end that runs the crawl (the
//! `crawlrank` command) copies its progress, or a stopped crawl's status, into it, so the
//! dashboard does not depend on the crawler.

use serde::Serialize;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Samples kept: at one per [`SAMPLE_EVERY`], the last half hour.
pub const MAX_SAMPLES: usize = 3600;

/// Least time between two samples of the time series (the crawl reports about 4×/s).
pub const SAMPLE_EVERY: Duration = Duration::from_millis(500);

/// Most points of the series sent in one `/api/status` answer; a longer series is thinned
/// evenly (the page draws a line, not every sample).
pub const MAX_SERIES_POINTS: usize = 600;

/// The counters shown as errors, by kind (names of the crawl's counters, [`Counter::name`]).
pub const ERROR_KINDS: [&str; 14] = [
    "http_errors",
    "fetch_errors",
    "dns_errors",
    "tls_errors",
    "timeouts",
    "too_large",
    "robots_disallowed",
    "parse_errors",
    "fd_shortages",
    "rate_limited",
    "retry_after_too_long",
    "redirect_chain_too_long",
    "private_address_refused",
    "truncated_pages",
];

/// One point of the time series: a [`Snapshot`] of the crawl with its time and rate (in
/// `/api/status`, the snapshot's fields beside `t` and `rate`).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Sample {
    /// Seconds since the dashboard started.
    pub t: f64,
    /// Pages per second since the previous sample (what the chart draws).
    pub rate: f64,
    /// The crawl's figures then.
    #[serde(flatten)]
    pub snapshot: Snapshot,
}

/// The crawl's figures at one moment, as a crawl reports them ([`CrawlNumbers`]) and the time
/// series keeps them ([`Sample`]).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Snapshot {
    /// Pages finished over all runs.
    pub pages_total: u64,
    /// Pages per second in this run (its mean so far, as the progress line shows).
    pub pages_per_sec: f64,
    /// Pages in the frontier: discovered, not yet popped.
    pub frontier: u64,
    /// Popped pages waiting for their host (politeness).
    pub waiting: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Hosts discovered (distinct scheme, host and port).
    pub hosts: u64,
    /// Hosts with pages queued, a request in flight or a delay running.
    pub hosts_active: u64,
    /// URLs discovered over all runs.
    pub discovered: u64,
    /// Pages that ended in an error (HTTP, fetch, over-size), over all runs.
    pub errors: u64,
}

/// A URL with its policy score.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoredUrl {
    /// The URL.
    pub url: String,
    /// The policy's score (higher is more important).
    pub score: f64,
}

/// A named counter of the crawl.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Counter {
    /// Its name (the crawler's counter, e.g. `http_errors`): `crawlrank_<name>_total` in
    /// `/metrics`.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
    /// What it counts, one line (the metric's `# HELP`; not in `/api/status`).
    #[serde(skip)]
    pub help: &'static str,
}

/// What a crawl reports, as the dashboard shows it: a running crawl's progress (about 4×/s),
/// or a stopped crawl's status read from its state (then the rates, waiting pages and
/// requests in flight are 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrawlNumbers {
    /// The crawl's figures now.
    pub snapshot: Snapshot,
    /// Every counter of the crawl, in the crawl's order.
    pub counters: Vec<Counter>,
    /// The best-scored URLs still in the frontier, best first; empty when not computed this
    /// time (the last ones shown are kept).
    pub frontier_top: Vec<ScoredUrl>,
    /// The ranking so far: the best-scored crawled URLs, best first; empty as
    /// [`frontier_top`](Self::frontier_top).
    pub ranking_top: Vec<ScoredUrl>,
}

impl CrawlNumbers {
    /// The counters from the crawl's `(name, value)` pairs and `(name, help)` lines (the
    /// crawler's `Stats::fields` and `Stats::descriptions`), matched by name; a counter
    /// without a line gets an empty help.
    pub fn counters_from(
        values: Vec<(&'static str, u64)>,
        helps: &[(&'static str, &'static str)],
    ) -> Vec<Counter> {
        values
            .into_iter()
            .map(|(name, value)| Counter {
                name,
                value,
                help: helps
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, h)| h),
            })
            .collect()
    }
}

/// The document of `GET /api/status`.
#[derive(Debug, Clone, Serialize)]
pub struct StatusDoc {
    /// What is shown: `live crawl of DIR` or `crawl state DIR`.
    pub source: String,
    /// Whether the crawl is still running (a finished state, or a crawl that ended: false).
    pub running: bool,
    /// A line to show above the numbers, e.g. why only the ranking snapshot could be read.
    pub note: Option<String>,
    /// Seconds since the dashboard started.
    pub uptime_s: f64,
    /// The latest sample (all zeros before the first).
    pub latest: Sample,
    /// The time series, oldest first, at most [`MAX_SERIES_POINTS`].
    pub series: Vec<Sample>,
    /// Every counter of the crawl.
    pub counters: Vec<Counter>,
    /// The error counters ([`ERROR_KINDS`]).
    pub errors: Vec<Counter>,
    /// The best-scored URLs in the frontier, best first.
    pub frontier_top: Vec<ScoredUrl>,
    /// The ranking so far: the best-scored crawled URLs, best first.
    pub ranking_top: Vec<ScoredUrl>,
    /// Where the ranking comes from (the live crawl, or its last snapshot file).
    pub ranking_source: String,
}

#[derive(Debug)]
struct Inner {
    source: String,
    running: bool,
    note: Option<String>,
    samples: VecDeque<Sample>,
    last_sample_at: Option<Instant>,
    latest: Sample,
    counters: Vec<Counter>,
    frontier_top: Vec<ScoredUrl>,
    ranking_top: Vec<ScoredUrl>,
    ranking_source: String,
}

/// The shared state of one dashboard: written by the crawl's callback (or a state reader),
/// read by the server. Cheap to clone (an [`Arc`]).
#[derive(Debug, Clone)]
pub struct DashboardState {
    inner: Arc<Mutex<Inner>>,
    started: Instant,
}

impl DashboardState {
    /// An empty state describing `source` (shown in the page's title line), running.
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner {
                source: source.into(),
                running: true,
                note: None,
                samples: VecDeque::with_capacity(64),
                last_sample_at: None,
                latest: Sample::default(),
                counters: Vec::new(),
                frontier_top: Vec::new(),
                ranking_top: Vec::new(),
                ranking_source: "the running crawl".into(),
            })),
            started: Instant::now(),
        }
    }

    /// The lock; a handler that panicked holding it left plain numbers behind, still fine
    /// to show, so poisoning is ignored.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes what a crawl reports (its progress, or a stopped crawl's status): the counters
    /// always, the lists when given, a sample of the time series at most every
    /// [`SAMPLE_EVERY`]. O(1) but for the short lists' copies.
    pub fn record(&self, n: &CrawlNumbers) {
        let now = Instant::now();
        let t = now.duration_since(self.started).as_secs_f64();
        let mut inner = self.lock();
        let sample = Sample {
            t,
            rate: 0.0,
            snapshot: n.snapshot,
        };
        inner.counters.clone_from(&n.counters);
        if !n.frontier_top.is_empty() || !n.ranking_top.is_empty() {
            inner.frontier_top.clone_from(&n.frontier_top);
            inner.ranking_top.clone_from(&n.ranking_top);
        }
        inner.push_sample(sample, now);
    }

    /// Replaces the ranking with `top` (best first), read from `source`.
    pub fn set_ranking(&self, top: Vec<ScoredUrl>, source: impl Into<String>) {
        let mut inner = self.lock();
        inner.ranking_top = top;
        inner.ranking_source = source.into();
    }

    /// Sets (or clears) the line shown above the numbers.
    pub fn set_note(&self, note: Option<String>) {
        self.lock().note = note;
    }

    /// Marks the crawl as ended (the page stops expecting its numbers to move).
    pub fn set_running(&self, running: bool) {
        self.lock().running = running;
    }

    /// The latest sample and counters, for `/metrics`.
    pub fn latest(&self) -> (Sample, Vec<Counter>, bool) {
        let inner = self.lock();
        (inner.latest, inner.counters.clone(), inner.running)
    }

    /// The `GET /api/status` document. The lock is held only to copy.
    pub fn status(&self) -> StatusDoc {
        let inner = self.lock();
        let step = inner.samples.len().div_ceil(MAX_SERIES_POINTS).max(1);
        let mut series: Vec<Sample> = inner.samples.iter().step_by(step).copied().collect();
        if let Some(last) = inner.samples.back() {
            if series.last() != Some(last) {
                series.push(*last);
            }
        }
        let counters = inner.counters.clone();
        let errors = counters
            .iter()
            .filter(|c| ERROR_KINDS.contains(&c.name))
            .cloned()
            .collect();
        StatusDoc {
            source: inner.source.clone(),
            running: inner.running,
            note: inner.note.clone(),
            uptime_s: self.started.elapsed().as_secs_f64(),
            latest: inner.latest,
            series,
            counters,
            errors,
            frontier_top: inner.frontier_top.clone(),
            ranking_top: inner.ranking_top.clone(),
            ranking_source: inner.ranking_source.clone(),
        }
    }
}

impl Inner {
    /// Keeps `s` as the latest numbers, and in the series when the last sample is at least
    /// [`SAMPLE_EVERY`] old (its rate measured since that one).
    fn push_sample(&mut self, mut s: Sample, now: Instant) {
        let due = self
            .last_sample_at
            .is_none_or(|t| now.duration_since(t) >= SAMPLE_EVERY);
        if let Some(prev) = self.samples.back() {
            let dt = s.t - prev.t;
            if dt > 0.0 {
                let pages = s
                    .snapshot
                    .pages_total
                    .saturating_sub(prev.snapshot.pages_total);
                s.rate = pages as f64 / dt;
            }
        }
        if !due {
            // Between samples the latest numbers move, the rate keeps its last value.
            s.rate = self.latest.rate;
            self.latest = s;
            return;
        }
        self.latest = s;
        self.last_sample_at = Some(now);
        if self.samples.len() == MAX_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(pages: u64) -> CrawlNumbers {
        CrawlNumbers {
            snapshot: Snapshot {
                pages_total: pages,
                frontier: 7,
                ..Snapshot::default()
            },
            counters: CrawlNumbers::counters_from(
                vec![("http_errors", 2), ("requests", 9)],
                &[("http_errors", "HTTP errors.")],
            ),
            frontier_top: vec![ScoredUrl {
                url: "http://a/".into(),
                score: 1.5,
            }],
            ..CrawlNumbers::default()
        }
    }

    #[test]
    fn samples_are_thinned_to_one_per_interval_and_bounded() {
        let st = DashboardState::new("test");
        st.record(&progress(1));
        st.record(&progress(2)); // too soon: latest only
        let doc = st.status();
        assert_eq!(doc.series.len(), 1);
        assert_eq!(doc.latest.snapshot.pages_total, 2);
        assert_eq!(doc.frontier_top[0].url, "http://a/");
        assert!(doc
            .errors
            .iter()
            .any(|c| c.name == "http_errors" && c.value == 2));
        let mut inner = st.lock();
        let t0 = Instant::now();
        for i in 0..(MAX_SAMPLES as u64 + 10) {
            let s = Sample {
                t: i as f64,
                snapshot: Snapshot {
                    pages_total: i,
                    ..Snapshot::default()
                },
                ..Sample::default()
            };
            inner.push_sample(s, t0 + SAMPLE_EVERY * (i as u32 + 2));
        }
        assert_eq!(inner.samples.len(), MAX_SAMPLES);
        assert_eq!(inner.latest.rate, 1.0);
        drop(inner);
        let doc = st.status();
        assert!(doc.series.len() <= MAX_SERIES_POINTS + 1);
        assert_eq!(
            doc.series.last().unwrap().snapshot.pages_total,
            MAX_SAMPLES as u64 + 9
        );
    }
}
