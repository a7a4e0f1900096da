//! The dashboard's HTTP API on a real loopback socket: `/metrics` parses as the Prometheus
//! text format and holds the crawl's counters, `/api/status` has the shape the page reads,
//! `/` is the self-contained page, and a port in use or a public address is a clear error.

use crate::common;

use common::{get, parse_prometheus, serve_loopback, Response};
use crawlrank_crawler::{Progress, Stats};
use crawlrank_dashboard::{serve, Access, DashboardHandle, DashboardState};
use std::sync::Arc;

fn fed_state() -> DashboardState {
    let st = DashboardState::new("live crawl of test-state");
    st.record(
        &Progress {
            pages_this_run: 12,
            pages_per_sec: 3.5,
            pages_total: 40,
            frontier: 17,
            waiting: 2,
            in_flight: 3,
            hosts: 5,
            hosts_active: 4,
            discovered: 60,
            errors: 6,
            stats: Stats {
                requests: 45,
                pages_html: 34,
                http_errors: 5,
                dns_errors: 1,
                fetch_errors: 1,
                bytes: 123_456,
                ..Stats::default()
            },
            frontier_top: vec![(Arc::from("http://a.test/x?<script>"), 2.5)],
            ranking_top: vec![(Arc::from("http://a.test/"), 9.0)],
            ..Progress::default()
        }
        .dashboard_numbers(),
    );
    st
}

/// `GET path` from the dashboard of [`fed_state`], checked to answer 200 with a content type
/// that starts with `content_type`; the handle keeps the dashboard up.
fn get_fed(path: &str, content_type: &str) -> (DashboardHandle, Response) {
    let h = serve_loopback(fed_state());
    let r = get(h.local_addr(), path);
    assert_eq!(r.status, 200, "{path}");
    assert!(
        r.headers["content-type"].starts_with(content_type),
        "{path}: {:?}",
        r.headers
    );
    (h, r)
}

#[test]
fn metrics_parse_as_prometheus_text_and_hold_the_counters() {
    let (_h, r) = get_fed("/metrics", "text/plain; version=0.0.4");
    let (samples, types) = parse_prometheus(&r.body).unwrap_or_else(|e| panic!("{e}\n{}", r.body));
    let value = |name: &str| {
        samples
            .iter()
            .find(|s| s.0 == name)
            .unwrap_or_else(|| panic!("no {name} in\n{}", r.body))
            .2
    };
    assert_eq!(value("crawlrank_pages_total"), 40.0);
    assert_eq!(value("crawlrank_requests_total"), 45.0);
    assert_eq!(value("crawlrank_http_errors_total"), 5.0);
    assert_eq!(value("crawlrank_dns_errors_total"), 1.0);
    assert_eq!(value("crawlrank_bytes_total"), 123_456.0);
    assert_eq!(value("crawlrank_page_errors_total"), 6.0);
    assert_eq!(value("crawlrank_frontier_pages"), 17.0);
    assert_eq!(value("crawlrank_in_flight_requests"), 3.0);
    assert_eq!(value("crawlrank_hosts_active"), 4.0);
    assert_eq!(value("crawlrank_waiting_pages"), 2.0);
    assert_eq!(value("crawlrank_crawl_running"), 1.0);
    // Every counter the summary prints is there, as a counter.
    for (field, _) in Stats::default().fields() {
        let name = format!("crawlrank_{field}_total");
        assert_eq!(
            types.get(&name).map(String::as_str),
            Some("counter"),
            "{name}"
        );
    }
    for (name, kind) in &types {
        assert_eq!(
            kind == "counter",
            name.ends_with("_total"),
            "{name} is a {kind}"
        );
    }
}

#[test]
fn api_status_has_the_shape_the_page_reads() {
    let (_h, r) = get_fed("/api/status", "application/json");
    let doc: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(doc["source"], "live crawl of test-state");
    assert_eq!(doc["running"], true);
    assert_eq!(doc["latest"]["pages_total"], 40);
    assert_eq!(doc["latest"]["frontier"], 17);
    assert_eq!(doc["latest"]["waiting"], 2);
    assert_eq!(doc["latest"]["hosts_active"], 4);
    let series = doc["series"].as_array().unwrap();
    assert_eq!(series.len(), 1);
    for k in [
        "t",
        "pages_total",
        "rate",
        "frontier",
        "in_flight",
        "errors",
    ] {
        assert!(series[0][k].is_number(), "series[0].{k}");
    }
    assert_eq!(doc["frontier_top"][0]["url"], "http://a.test/x?<script>");
    assert_eq!(doc["frontier_top"][0]["score"], 2.5);
    assert_eq!(doc["ranking_top"][0]["url"], "http://a.test/");
    let errors = doc["errors"].as_array().unwrap();
    assert!(errors
        .iter()
        .any(|e| e["name"] == "http_errors" && e["value"] == 5));
    assert!(errors.iter().any(|e| e["name"] == "robots_disallowed"));
    let counters = doc["counters"].as_array().unwrap();
    assert_eq!(counters.len(), Stats::default().fields().len());
}

#[test]
fn the_page_is_self_contained() {
    let (h, r) = get_fed("/", "text/html");
    assert!(r.headers["content-security-policy"].contains("default-src 'none'"));
    assert!(r.body.contains("api/status"));
    for external in ["src=\"http", "href=\"http", "//cdn", "@import"] {
        assert!(!r.body.contains(external), "the page loads {external}");
    }
    assert!(
        !r.body.contains("innerHTML"),
        "URLs must be inserted as text"
    );
    assert_eq!(get(h.local_addr(), "/nothing").status, 404);
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let err = serve(addr, Access::LoopbackOnly, DashboardState::new("x")).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!("cannot serve the dashboard on {addr}: address in use")
    );
}

#[test]
fn a_public_address_needs_the_opt_in() {
    let err = serve(
        "0.0.0.0:0".parse().unwrap(),
        Access::LoopbackOnly,
        DashboardState::new("x"),
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("--dashboard-public"), "{err:#}");
}

#[test]
fn shutdown_frees_the_port() {
    let h = serve_loopback(fed_state());
    let addr = h.local_addr();
    assert_eq!(get(addr, "/metrics").status, 200);
    h.shutdown().unwrap();
    let again = serve(addr, Access::LoopbackOnly, fed_state()).unwrap();
    assert_eq!(get(again.local_addr(), "/metrics").status, 200);
}
