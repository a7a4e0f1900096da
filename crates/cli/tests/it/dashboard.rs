//! End-to-end tests of the dashboard from the command line: `crawl --dashboard ADDR` serves
//! `/metrics` and `/api/status` while it crawls a local test web (`crawlrank serve`), a port
//! in use is a clear error that leaves the crawl's state as it was, and `crawlrank dashboard
//! --state DIR` serves a finished crawl. (`crawlrank dashboard --frontier URL` over a cluster is
//! tested with the cluster, in frontier_cluster.rs.) (The page itself is tested in a real browser by
//! crates/dashboard/tests/it/browser.rs.)

use crate::common;

use common::{fails, ok, wait_for, words, Env};
use crawlrank_testkit as testkit;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SECS_30: Duration = Duration::from_secs(30);

/// A child `crawlrank` process, killed when dropped.
pub(crate) struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// Starts `crawlrank args` and returns it with the address after `http://` on the first
/// line that starts with `prefix`, read from its stdout when `on_stdout`, else its stderr.
pub(crate) fn start<S: AsRef<OsStr> + std::fmt::Debug>(
    env: &Env,
    args: &[S],
    prefix: &str,
    on_stdout: bool,
) -> (Running, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crawlrank"));
    cmd.arg("--cache").arg(env.cache.path()).args(args);
    if on_stdout {
        cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    } else {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    }
    let mut child = Running(cmd.spawn().expect("the binary runs"));
    let stream: Box<dyn Read + Send> = if on_stdout {
        Box::new(child.0.stdout.take().unwrap())
    } else {
        Box::new(child.0.stderr.take().unwrap())
    };
    let mut lines = BufReader::new(stream);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line).unwrap_or(0) == 0 {
            panic!("crawlrank {args:?} printed no '{prefix}' line: {seen}");
        }
        let url = line
            .strip_prefix(prefix)
            .and_then(|l| l.split("http://").nth(1));
        if let Some(url) = url {
            let addr = url.split_whitespace().next().unwrap();
            let addr = addr.trim_end_matches('/').to_string();
            // Keep draining the stream so the child never blocks on a full pipe.
            std::thread::spawn(move || {
                let mut sink = String::new();
                while lines.read_line(&mut sink).unwrap_or(0) > 0 {
                    sink.clear();
                }
            });
            return (child, addr);
        }
        seen.push_str(&line);
    }
}

/// `GET path` from `addr`: the body of a 200 answer.
fn get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    let (_, body) = out.split_once("\r\n\r\n").unwrap();
    body.to_string()
}

/// `/api/status` of the dashboard at `addr`.
pub(crate) fn api_status(addr: &str) -> serde_json::Value {
    serde_json::from_str(&get(addr, "/api/status")).unwrap()
}

/// `crawlrank dashboard` of the crawl state `st` on a free port, and its address.
fn dashboard(env: &Env, st: &str) -> (Running, String) {
    let args = ["dashboard", "--state", st, "--addr", "127.0.0.1:0"];
    start(env, &args, "dashboard: ", false)
}

/// The value of the unlabelled metric `name` in a Prometheus exposition.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// What every crawl of these tests needs: a scratch folder, a local test web serving a 100-page
/// ring, the seeds file of its first page and the state folder the crawl writes.
struct Fixture {
    // Declared first so that the test web stops before its scratch folder is removed.
    _web: Running,
    env: Env,
    proxy: String,
    seeds: String,
    state: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let env = Env::new();
        let arcs = env.write(
            "ring.txt",
            &testkit::ring_with_chords(100, &[(13, 7)]).arc_list(),
        );
        let serve = words("serve --graph {} --addr 127.0.0.1:0", &[&arcs]);
        let (web, addr) = start(&env, &serve, "", true);
        let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
        Fixture {
            _web: web,
            proxy: format!("http://{addr}"),
            seeds: seeds.to_str().unwrap().to_string(),
            state: env.path("state"),
            env,
        }
    }

    /// The state folder, as the command line takes it.
    fn st(&self) -> &str {
        self.state.to_str().unwrap()
    }

    /// The arguments of a crawl of the test web into the state folder, then the words `more`.
    fn crawl_args(&self, more: &str) -> Vec<String> {
        let line = format!("crawl --state {{}} --proxy {{}} --seeds {{}} --no-sitemaps {more}");
        words(&line, &[&self.st(), &self.proxy, &self.seeds])
    }
}

/// A slow crawl: one request at a time, a second apart per host (8 pages per host).
const SLOW: &str = "--delay 1000 --concurrency 1";

#[test]
fn crawl_serves_metrics_and_status_while_it_runs() {
    let f = Fixture::new();
    let env = &f.env;
    let args = f.crawl_args(&format!("{SLOW} --dashboard 127.0.0.1:0"));
    let (_crawl, addr) = start(env, &args, "dashboard: ", false);
    let metrics = wait_for(
        "a page crawled",
        SECS_30,
        Duration::from_millis(200),
        || {
            let m = get(&addr, "/metrics");
            (metric(&m, "crawlrank_pages_total").unwrap_or(0.0) > 0.0).then_some(m)
        },
    );
    assert_eq!(metric(&metrics, "crawlrank_crawl_running"), Some(1.0));
    assert!(metric(&metrics, "crawlrank_requests_total").unwrap() >= 1.0);
    assert!(metrics.contains("# TYPE crawlrank_http_errors_total counter"));
    let status = api_status(&addr);
    assert_eq!(status["running"], true);
    assert!(status["latest"]["discovered"].as_u64().unwrap() >= 1);
    assert!(get(&addr, "/").contains("<title>crawlrank dashboard</title>"));
}

#[test]
fn a_dashboard_port_in_use_fails_before_the_crawl_touches_its_state() {
    let f = Fixture::new();
    let (env, st) = (&f.env, f.st());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dash = format!("127.0.0.1:{port}");
    let args = f.crawl_args(&format!("--delay 0 --dashboard {dash}"));
    // A new crawl: nothing is created.
    fails(
        &env.run(&args),
        &[&format!(
            "cannot serve the dashboard on 127.0.0.1:{port}: address in use"
        )],
    );
    assert!(
        !f.state.exists(),
        "the failed start created {}",
        f.state.display()
    );
    // A resumed crawl: its state is as it was, and it resumes without the dashboard.
    ok(&env.run(&f.crawl_args("--delay 0 --max-pages 10")));
    fails(&env.run(&args), &["address in use"]);
    assert!(env
        .ok("status --state {}", &[&st])
        .contains("pages finished    10"));
    let out = env.ok("crawl --state {} --proxy {} --delay 0", &[&st, &f.proxy]);
    assert!(out.contains("the frontier is empty"), "{out}");
    // A public address needs the opt-in.
    let public = f.crawl_args("--dashboard 0.0.0.0:0");
    fails(&env.run(&public), &["--dashboard-public"]);
}

#[test]
fn dashboard_serves_a_finished_crawl_from_its_state() {
    let f = Fixture::new();
    let (env, st) = (&f.env, f.st());
    ok(&env.run(&f.crawl_args("--delay 0")));
    let (_dash, addr) = dashboard(env, st);
    let status = api_status(&addr);
    assert_eq!(status["running"], false);
    assert_eq!(status["latest"]["pages_total"], 100);
    assert_eq!(status["latest"]["frontier"], 0);
    let ranking = status["ranking_top"].as_array().unwrap();
    assert_eq!(ranking.len(), 20, "{status}");
    assert!(ranking[0]["url"].as_str().unwrap().starts_with("http://h"));
    let metrics = get(&addr, "/metrics");
    assert_eq!(metric(&metrics, "crawlrank_pages_total"), Some(100.0));
    assert_eq!(metric(&metrics, "crawlrank_pages_html_total"), Some(100.0));
}

#[test]
fn dashboard_of_a_missing_state_is_an_error() {
    let env = Env::new();
    let missing = env.path("nothing");
    env.fails(
        "dashboard --state {} --addr 127.0.0.1:0",
        &[&missing],
        &["holds no crawl state"],
    );
}

#[test]
fn dashboard_of_a_running_crawl_shows_its_ranking_snapshot() {
    let f = Fixture::new();
    let (env, st) = (&f.env, f.st());
    // Slow, and with 100 expected pages K = 2: the ranking snapshot is rewritten every 2 pages.
    let args = f.crawl_args(&format!("{SLOW} --expected-pages 100"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crawlrank"));
    cmd.args(&args).stdout(Stdio::null()).stderr(Stdio::null());
    let _crawl = Running(cmd.spawn().unwrap());
    let snapshot = f.state.join("ranking.tsv");
    wait_for(
        "a ranking snapshot",
        SECS_30,
        Duration::from_millis(50),
        || snapshot.is_file().then_some(()),
    );
    let (_dash, addr) = dashboard(env, st);
    let status = api_status(&addr);
    assert_eq!(status["running"], true, "{status}");
    assert!(
        status["note"]
            .as_str()
            .unwrap()
            .contains("a crawl is running"),
        "{status}"
    );
    assert!(
        !status["ranking_top"].as_array().unwrap().is_empty(),
        "{status}"
    );
}

#[test]
fn a_finished_crawl_lingers_with_every_counter_then_exits() {
    let f = Fixture::new();
    let env = &f.env;
    // No delay between a host's requests: what is tested is the dashboard's end, not the
    // crawl's pace (the default delay made the 100 pages take about 12 s).
    let more = "--delay 0 --dashboard 127.0.0.1:0 --dashboard-linger 4";
    let (mut crawl, addr) = start(env, &f.crawl_args(more), "dashboard: ", false);
    // The crawl of 100 pages ends; the dashboard stays up, saying so.
    let status = wait_for(
        "the crawl's end",
        SECS_30,
        Duration::from_millis(100),
        || {
            let s = api_status(&addr);
            (s["running"] == false).then_some(s)
        },
    );
    let ended = Instant::now();
    assert!(
        status["latest"]["pages_total"].as_u64().unwrap() >= 100,
        "{status}"
    );
    let metrics = get(&addr, "/metrics");
    assert_eq!(metric(&metrics, "crawlrank_crawl_running"), Some(0.0));
    // The hostile web's counters are exported like the others (zero here).
    for name in [
        "rate_limited",
        "backoff_seconds",
        "retry_after_invalid",
        "retry_after_too_long",
        "redirect_chain_too_long",
        "hop_limit_links",
        "pathological_links",
        "truncated_pages",
        "links_over_cap",
        "private_address_refused",
    ] {
        let m = format!("crawlrank_{name}_total");
        assert_eq!(metric(&metrics, &m), Some(0.0), "{m} in\n{metrics}");
    }
    // Then it exits by itself, successfully, once the 4 s are over.
    let code = loop {
        if let Some(code) = crawl.0.try_wait().unwrap() {
            break code;
        }
        assert!(ended.elapsed() < Duration::from_secs(20), "still lingering");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(code.success());
    assert!(
        ended.elapsed() >= Duration::from_secs(2),
        "left after {:?}",
        ended.elapsed()
    );
}
