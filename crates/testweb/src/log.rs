//! The request log: one [`LogEntry`] per request, and the politeness measures tests assert on.
//!
//! The crawler's politeness ("never two requests in flight to one host", "at least D between
//! two requests to one host") can only be checked from the server's side, with the server's
//! clock, so every request is recorded with its arrival and finish `Instant`s. Entries are
//! pushed once per request into a `Mutex<Vec>`: one short critical section per response is
//! far below the cost of the response itself.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// When the server had received the whole request head (before `--latency` is slept):
    /// the request's start as the server sees it.
    pub arrival: Instant,
    /// When the answer ended as the server sees it: its last byte handed to the connection
    /// (or, for the broken-answer hosts' hand-written answers, written to the socket, and the
    /// connection closed when the answer closes it); for an answer the client left in the
    /// middle, when the server found the connection closed (a failed write) or gave up. A
    /// finished answer's `finish` is never after the client can have read it whole, so
    /// `a.finish <= b.arrival` holds for a client that waits for `a` before sending `b`; an
    /// answer still being sent when `b` arrives — two requests at once — shows as
    /// `b.arrival < a.finish`.
    pub finish: Instant,
    /// The requested host, lower case, without port (from the absolute URI or `Host`).
    pub host: String,
    /// The path with its query, as requested.
    pub path: String,
    /// The status sent; 0 when the client went away before the head was sent.
    pub status: u16,
    /// Body bytes handed to the connection.
    pub bytes: u64,
    /// Whether the whole body was sent (false: the client closed the connection early).
    pub complete: bool,
    /// The graph node served, for the graph's pages (including injected errors).
    pub node: Option<u32>,
    /// For graph pages: how many earlier requests this node had (0 for the first).
    pub attempt: u32,
    /// Whether the request came through a TLS tunnel (HTTPS) rather than plain HTTP.
    pub tls: bool,
}

/// The most requests ever in flight at once to each host, from a log: 1 everywhere for a
/// crawler that keeps one connection per host busy at a time.
pub fn max_in_flight_per_host(log: &[LogEntry]) -> HashMap<String, usize> {
    let mut events: HashMap<&str, Vec<(Instant, i32)>> = HashMap::new();
    for e in log {
        let ev = events.entry(&e.host).or_default();
        ev.push((e.arrival, 1));
        ev.push((e.finish, -1));
    }
    events
        .into_iter()
        .map(|(host, mut ev)| {
            // At equal instants a finish comes first: back-to-back requests do not overlap.
            ev.sort_unstable();
            let (mut cur, mut max) = (0i32, 0i32);
            for (_, d) in ev {
                cur += d;
                max = max.max(cur);
            }
            (host.to_owned(), max as usize)
        })
        .collect()
}

/// The smallest gap between the finish of one request to a host and the arrival of the next
/// one to that host, per host with at least two requests (`Duration::ZERO` when two overlap).
pub fn min_gap_per_host(log: &[LogEntry]) -> HashMap<String, Duration> {
    let mut by_host: HashMap<&str, Vec<&LogEntry>> = HashMap::new();
    for e in log {
        by_host.entry(&e.host).or_default().push(e);
    }
    by_host
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(host, mut v)| {
            v.sort_by_key(|e| e.arrival);
            let mut latest_finish = v[0].finish;
            let mut gap = Duration::MAX;
            for e in &v[1..] {
                gap = gap.min(e.arrival.saturating_duration_since(latest_finish));
                latest_finish = latest_finish.max(e.finish);
            }
            (host.to_owned(), gap)
        })
        .collect()
}

/// Writes `log` as tab-separated values with a header line; times are microseconds since
/// `origin` (the server's start).
pub fn write_log(log: &[LogEntry], origin: Instant, path: &Path) -> Result<()> {
    let f = std::fs::File::create(path)
        .with_context(|| format!("cannot create log file {}", path.display()))?;
    let mut w = BufWriter::new(f);
    let us = |t: Instant| t.saturating_duration_since(origin).as_micros();
    writeln!(
        w,
        "arrival_us\tfinish_us\thost\tpath\tstatus\tbytes\tcomplete\tnode\tattempt\ttls"
    )?;
    for e in log {
        let node = e.node.map_or_else(|| "-".to_owned(), |v| v.to_string());
        writeln!(
            w,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{node}\t{}\t{}",
            us(e.arrival),
            us(e.finish),
            e.host,
            e.path,
            e.status,
            e.bytes,
            e.complete,
            e.attempt,
            e.tls
        )?;
    }
    w.flush()
        .with_context(|| format!("cannot write log file {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &str, t0: Instant, a: u64, f: u64) -> LogEntry {
        LogEntry {
            arrival: t0 + Duration::from_millis(a),
            finish: t0 + Duration::from_millis(f),
            host: host.into(),
            path: "/".into(),
            status: 200,
            bytes: 0,
            complete: true,
            node: None,
            attempt: 0,
            tls: false,
        }
    }

    #[test]
    fn politeness_measures() {
        let t0 = Instant::now();
        let log = vec![
            entry("a", t0, 0, 10),
            entry("a", t0, 10, 20),
            entry("a", t0, 25, 30),
            entry("b", t0, 0, 10),
            entry("b", t0, 5, 8),
        ];
        let inflight = max_in_flight_per_host(&log);
        assert_eq!(inflight["a"], 1);
        assert_eq!(inflight["b"], 2);
        let gaps = min_gap_per_host(&log);
        assert_eq!(gaps["a"], Duration::ZERO);
        assert_eq!(gaps["b"], Duration::ZERO);
        let log = vec![
            entry("a", t0, 0, 10),
            entry("a", t0, 15, 20),
            entry("a", t0, 27, 30),
        ];
        assert_eq!(min_gap_per_host(&log)["a"], Duration::from_millis(5));
    }
}
