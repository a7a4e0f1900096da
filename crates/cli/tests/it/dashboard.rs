//! End-to-end tests of the dashboard from the command line: `crawl --dashboard ADDR` serves
//! `/metrics` and `/api/status` while it crawls a local test web (`crawlrank serve`), a port
//! in use is a clear error that leaves the crawl's state as it was, and `crawlrank dashboard
//! --state DIR` serves a finished crawl. (The page itself is tested in a real browser by
//! crates/dashboard/tests/it/browser.rs.)

use crate::common;

use common::{fails, ok, Env};
use crawlrank_testkit as testkit;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child `crawlrank` process, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// Starts `crawlrank args` and returns it with the address after `http://` on the first
/// line that starts with `prefix`, read from its stdout when `on_stdout`, else its stderr.
fn start(env: &Env, args: &[&str], prefix: &str, on_stdout: bool) -> (Running, String) {
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

/// The value of the unlabelled metric `name` in a Prometheus exposition.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// A local test web serving a 100-page ring, and the seeds file of its first page.
fn web(env: &Env) -> (Running, String, String) {
    let arcs = env.write(
        "ring.txt",
        &testkit::ring_with_chords(100, &[(13, 7)]).arc_list(),
    );
    let (served, addr) = start(
        env,
        &[
            "serve",
            "--graph",
            arcs.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
        ],
        "",
        true,
    );
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    (
        served,
        format!("http://{addr}"),
        seeds.to_str().unwrap().to_string(),
    )
}

fn crawl_args<'a>(state: &'a str, proxy: &'a str, seeds: &'a str) -> Vec<&'a str> {
    vec![
        "crawl",
        "--state",
        state,
        "--proxy",
        proxy,
        "--seeds",
        seeds,
        "--no-sitemaps",
    ]
}

#[test]
fn crawl_serves_metrics_and_status_while_it_runs() {
    let env = Env::new();
    let (_web, proxy, seeds) = web(&env);
    let state = env.path("state");
    let st = state.to_str().unwrap();
    // Slow: one request at a time, a second apart per host (8 pages per host).
    let mut args = crawl_args(st, &proxy, &seeds);
    args.extend([
        "--delay",
        "1000",
        "--concurrency",
        "1",
        "--dashboard",
        "127.0.0.1:0",
    ]);
    let (_crawl, addr) = start(&env, &args, "dashboard: ", false);
    let deadline = Instant::now() + Duration::from_secs(30);
    let metrics = loop {
        let m = get(&addr, "/metrics");
        if metric(&m, "crawlrank_pages_total").unwrap_or(0.0) > 0.0 {
            break m;
        }
        assert!(Instant::now() < deadline, "no page crawled in 30 s:\n{m}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(metric(&metrics, "crawlrank_crawl_running"), Some(1.0));
    assert!(metric(&metrics, "crawlrank_requests_total").unwrap() >= 1.0);
    assert!(metrics.contains("# TYPE crawlrank_http_errors_total counter"));
    let status: serde_json::Value = serde_json::from_str(&get(&addr, "/api/status")).unwrap();
    assert_eq!(status["running"], true);
    assert!(status["latest"]["discovered"].as_u64().unwrap() >= 1);
    assert!(get(&addr, "/").contains("<title>crawlrank dashboard</title>"));
}

#[test]
fn a_dashboard_port_in_use_fails_before_the_crawl_touches_its_state() {
    let env = Env::new();
    let (_web, proxy, seeds) = web(&env);
    let state = env.path("state");
    let st = state.to_str().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dash = format!("127.0.0.1:{port}");
    let mut args = crawl_args(st, &proxy, &seeds);
    args.extend(["--delay", "0", "--dashboard", &dash]);
    // A new crawl: nothing is created.
    fails(
        &env.run(&args),
        &[&format!(
            "cannot serve the dashboard on 127.0.0.1:{port}: address in use"
        )],
    );
    assert!(
        !state.exists(),
        "the failed start created {}",
        state.display()
    );
    // A resumed crawl: its state is as it was, and it resumes without the dashboard.
    let mut first = crawl_args(st, &proxy, &seeds);
    first.extend(["--delay", "0", "--max-pages", "10"]);
    ok(&env.run(&first));
    fails(&env.run(&args), &["address in use"]);
    assert!(ok(&env.run(&["status", "--state", st])).contains("pages finished    10"));
    let out = ok(&env.run(&["crawl", "--state", st, "--proxy", &proxy, "--delay", "0"]));
    assert!(out.contains("the frontier is empty"), "{out}");
    // A public address needs the opt-in.
    let mut public = crawl_args(st, &proxy, &seeds);
    public.extend(["--dashboard", "0.0.0.0:0"]);
    fails(&env.run(&public), &["--dashboard-public"]);
}

#[test]
fn dashboard_serves_a_finished_crawl_from_its_state() {
    let env = Env::new();
    let (_web, proxy, seeds) = web(&env);
    let state = env.path("state");
    let st = state.to_str().unwrap();
    let mut args = crawl_args(st, &proxy, &seeds);
    args.extend(["--delay", "0"]);
    ok(&env.run(&args));
    let (_dash, addr) = start(
        &env,
        &["dashboard", "--state", st, "--addr", "127.0.0.1:0"],
        "dashboard: ",
        false,
    );
    let status: serde_json::Value = serde_json::from_str(&get(&addr, "/api/status")).unwrap();
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
    fails(
        &env.run(&[
            "dashboard",
            "--state",
            missing.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
        ]),
        &["holds no crawl state"],
    );
}

#[test]
fn dashboard_of_a_running_crawl_shows_its_ranking_snapshot() {
    let env = Env::new();
    let (_web, proxy, seeds) = web(&env);
    let state = env.path("state");
    let st = state.to_str().unwrap();
    // Slow, and with 100 expected pages K = 2: the ranking snapshot is rewritten every 2 pages.
    let mut args = crawl_args(st, &proxy, &seeds);
    args.extend([
        "--delay",
        "1000",
        "--concurrency",
        "1",
        "--expected-pages",
        "100",
    ]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crawlrank"));
    cmd.args(&args).stdout(Stdio::null()).stderr(Stdio::null());
    let _crawl = Running(cmd.spawn().unwrap());
    let snapshot = state.join("ranking.tsv");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !snapshot.is_file() {
        assert!(Instant::now() < deadline, "no ranking snapshot in 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_dash, addr) = start(
        &env,
        &["dashboard", "--state", st, "--addr", "127.0.0.1:0"],
        "dashboard: ",
        false,
    );
    let status: serde_json::Value = serde_json::from_str(&get(&addr, "/api/status")).unwrap();
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
    let env = Env::new();
    let (_web, proxy, seeds) = web(&env);
    let state = env.path("state");
    let st = state.to_str().unwrap();
    let mut args = crawl_args(st, &proxy, &seeds);
    args.extend(["--dashboard", "127.0.0.1:0", "--dashboard-linger", "4"]);
    let (mut crawl, addr) = start(&env, &args, "dashboard: ", false);
    // The crawl of 100 pages ends; the dashboard stays up, saying so.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let s: serde_json::Value = serde_json::from_str(&get(&addr, "/api/status")).unwrap();
        if s["running"] == false {
            break s;
        }
        assert!(Instant::now() < deadline, "the crawl did not end in 30 s");
        std::thread::sleep(Duration::from_millis(100));
    };
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
