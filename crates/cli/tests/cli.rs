//! The `crawlrank` binary end to end: the commands work on small graphs written here, and bad
//! input gets a clear error, a non-zero exit, no panic and no half-written output.

mod common;

use common::{fails, ok, Env};
use crawlrank_testkit as testkit;
use std::path::Path;
use std::process::{Command, Output};

/// An arc list of `n` pages, every one reachable from page 0: page `v` links to `v + 1` (a ring)
/// and to `a·v + b` for each chord `(a, b)`, all modulo `n`.
fn ring_with_chords(n: u32, chords: &[(u32, u32)]) -> String {
    testkit::ring_with_chords(n, chords).arc_list()
}

/// The 5-node PageRank example of issue 2, as an arc list, and its PageRank.
fn five() -> String {
    testkit::five_pages().arc_list()
}
const FIVE_PR: [f64; 5] = testkit::FIVE_PAGES_PAGERANK;

#[test]
fn rank_an_arc_list_on_the_fly_and_write_one_value_per_line() {
    let env = Env::new();
    let arcs = env.write("five.txt", &five());
    let out = env.path("pr.txt");
    let stdout = ok(&env.run(&[
        "rank",
        "--graph",
        arcs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--top",
        "2",
    ]));
    let values: Vec<f64> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(values.len(), 5);
    for (v, e) in values.iter().zip(FIVE_PR) {
        assert!((v - e).abs() < 1e-6, "{values:?}");
    }
    // --top: best first, id and score.
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[1].split_whitespace().nth(1) == Some("2"), "{stdout}");
    assert!(lines[2].split_whitespace().nth(1) == Some("0"), "{stdout}");
    // Nothing derived was written beside the input.
    assert_eq!(env.files(), vec!["five.txt", "pr.txt"]);
    // HITS and in-degree.
    ok(&env.run(&[
        "rank",
        "--graph",
        arcs.to_str().unwrap(),
        "--algo",
        "hits",
        "--top",
        "3",
    ]));
    let indeg = ok(&env.run(&[
        "rank",
        "--graph",
        arcs.to_str().unwrap(),
        "--algo",
        "indegree",
        "--top",
        "1",
    ]));
    assert!(
        indeg.lines().nth(1).unwrap().split_whitespace().nth(1) == Some("2"),
        "{indeg}"
    );
}

#[test]
fn import_url_pairs_then_info_and_rank_show_urls() {
    let env = Env::new();
    let input = env.write(
        "pairs.txt",
        "http://a.example/ http://b.example/x\nhttp://b.example/x http://A.example:80/\nhttp://c.example/ http://b.example/x#frag\n",
    );
    let base = env.path("web");
    let stdout = ok(&env.run(&[
        "import",
        input.to_str().unwrap(),
        "--out",
        base.to_str().unwrap(),
    ]));
    assert!(
        stdout.contains("3 nodes") && stdout.contains("3 arcs"),
        "{stdout}"
    );
    let urls = std::fs::read_to_string(env.path("web.urls")).unwrap();
    assert_eq!(
        urls,
        "http://a.example/\nhttp://b.example/x\nhttp://c.example/\n"
    );
    let info = ok(&env.run(&["info", "--graph", base.to_str().unwrap()]));
    assert!(info.contains('3'), "{info}");
    let top = ok(&env.run(&["rank", "--graph", base.to_str().unwrap(), "--top", "1"]));
    assert!(top.contains("http://b.example/x"), "{top}");
}

#[test]
fn convert_writes_arc_lists_that_import_back() {
    let env = Env::new();
    // FIVE, sorted and tab-separated: what `convert` writes for it.
    let sorted = "0\t1\n0\t2\n1\t2\n2\t0\n2\t2\n2\t4\n3\t0\n3\t2\n";
    let input = env.write("five.txt", &five());
    let base = env.path("five");
    ok(&env.run(&[
        "import",
        input.to_str().unwrap(),
        "--out",
        base.to_str().unwrap(),
    ]));
    assert!(env.path("five.ef").is_file());
    for graph in [&base, &input] {
        let out = env.path("arcs.tsv");
        let stdout = ok(&env.run(&[
            "convert",
            "--graph",
            graph.to_str().unwrap(),
            "--arcs",
            out.to_str().unwrap(),
        ]));
        assert!(stdout.contains("8 arcs (5 nodes)"), "{stdout}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), sorted);
    }
    // URL pairs: import, convert with URLs, and the same pairs come back.
    let pairs = "http://a.example/\thttp://b.example/x\nhttp://b.example/x\thttp://a.example/\n";
    let input = env.write("pairs.tsv", pairs);
    let web = env.path("web");
    ok(&env.run(&[
        "import",
        input.to_str().unwrap(),
        "--out",
        web.to_str().unwrap(),
    ]));
    let out = env.path("pairs-back.tsv");
    let args = [
        "convert",
        "--graph",
        web.to_str().unwrap(),
        "--arcs",
        out.to_str().unwrap(),
        "--urls",
    ];
    ok(&env.run(&args));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), pairs);
    // No URLs to give: the graph is named, nothing is written.
    let none = env.path("none.tsv");
    for graph in [&base, &env.path("five.txt")] {
        fails(
            &env.run(&[
                "convert",
                "--graph",
                graph.to_str().unwrap(),
                "--arcs",
                none.to_str().unwrap(),
                "--urls",
            ]),
            &[graph.to_str().unwrap(), "no URLs"],
        );
    }
    fails(
        &env.run(&[
            "convert",
            "--graph",
            env.path("missing").to_str().unwrap(),
            "--arcs",
            none.to_str().unwrap(),
        ]),
        &["missing", "neither a BVGraph"],
    );
    fails(
        &env.run(&["convert", "--graph", base.to_str().unwrap()]),
        &["--arcs"],
    );
    assert!(!none.exists());
}

#[test]
fn simulate_writes_summary_plots_and_orders() {
    let env = Env::new();
    let text = ring_with_chords(200, &[(7, 3)]);
    let arcs = env.write("ring.txt", &text);
    let out = env.path("sim");
    let stdout = ok(&env.run(&[
        "simulate",
        "--graph",
        arcs.to_str().unwrap(),
        "--policy",
        "bfs,fica,opic",
        "--seeds",
        "3",
        "--out",
        out.to_str().unwrap(),
        "--save-orders",
    ]));
    for p in ["bfs", "fica", "opic"] {
        assert!(stdout.contains(p), "{stdout}");
        let order = std::fs::read_to_string(out.join(format!("{p}.order"))).unwrap();
        assert_eq!(order.lines().count(), 200);
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 100);
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(json.contains("\"kendall_tau_b\""));
    let svg = std::fs::read_to_string(out.join("throughput.svg")).unwrap();
    assert!(
        svg.contains("<svg")
            && svg.contains("fica")
            && svg.contains("% of reachable pages crawled")
    );
    assert!(out.join("mass.svg").is_file());
}

#[test]
fn bad_input_is_a_clear_error() {
    let env = Env::new();
    let five = env.write("five.txt", &five());
    let g = five.to_str().unwrap();
    // A missing file.
    fails(
        &env.run(&["rank", "--graph", env.path("nope").to_str().unwrap()]),
        &["nope"],
    );
    fails(
        &env.run(&[
            "import",
            env.path("nope.txt").to_str().unwrap(),
            "--out",
            env.path("x").to_str().unwrap(),
        ]),
        &["nope.txt"],
    );
    // A malformed line: which line and why; no output left behind.
    let bad = env.write("bad.txt", "0 1\n1 2\n2 x\n");
    fails(
        &env.run(&[
            "import",
            bad.to_str().unwrap(),
            "--format",
            "arcs",
            "--out",
            env.path("bad").to_str().unwrap(),
        ]),
        &["line 3"],
    );
    assert!(
        !env.files()
            .iter()
            .any(|f| f.starts_with("bad.") && f != "bad.txt"),
        "{:?}",
        env.files()
    );
    // A URL that does not parse.
    let urls = env.write(
        "urls.txt",
        "http://a.example/ http://b.example/\nhttp://a.example/ http://[bad/\n",
    );
    fails(
        &env.run(&[
            "import",
            urls.to_str().unwrap(),
            "--format",
            "url-pairs",
            "--out",
            env.path("u").to_str().unwrap(),
        ]),
        &["line 2"],
    );
    // An empty graph.
    let empty = env.write("empty.txt", "# nothing\n");
    fails(
        &env.run(&[
            "import",
            empty.to_str().unwrap(),
            "--format",
            "arcs",
            "--out",
            env.path("e").to_str().unwrap(),
        ]),
        &["empty"],
    );
    // Unknown option values list the valid ones.
    fails(
        &env.run(&["rank", "--graph", g, "--algo", "pagerenk"]),
        &["pagerenk", "pagerank", "hits", "indegree"],
    );
    fails(
        &env.run(&["simulate", "--graph", g, "--policy", "fica,nope"]),
        &["nope", "batch-pagerank", "omniscient"],
    );
    // Seeds: not in the graph, empty, unreadable; K = 0.
    let seeds = env.write("seeds.txt", "0\n9\n");
    fails(
        &env.run(&[
            "simulate",
            "--graph",
            g,
            "--seeds-file",
            seeds.to_str().unwrap(),
        ]),
        &["seeds.txt:2", "9"],
    );
    let none = env.write("none.txt", "# no seeds\n");
    fails(
        &env.run(&[
            "simulate",
            "--graph",
            g,
            "--seeds-file",
            none.to_str().unwrap(),
        ]),
        &["no seeds"],
    );
    fails(
        &env.run(&[
            "simulate",
            "--graph",
            g,
            "--seeds-file",
            env.path("missing.txt").to_str().unwrap(),
        ]),
        &["missing.txt"],
    );
    fails(
        &env.run(&["simulate", "--graph", g, "--seeds", "0"]),
        &["--seeds"],
    );
    fails(
        &env.run(&["simulate", "--graph", g, "--batch", "0"]),
        &["--batch"],
    );
    // A bad preference vector.
    let pref = env.write("pref.txt", "0.5\n0.5\n");
    fails(
        &env.run(&["rank", "--graph", g, "--preference", pref.to_str().unwrap()]),
        &["preference"],
    );
}

#[test]
fn a_corrupt_graph_is_an_error_not_a_panic() {
    let env = Env::new();
    let five = env.write("five.txt", &five());
    let base = env.path("g");
    ok(&env.run(&[
        "import",
        five.to_str().unwrap(),
        "--out",
        base.to_str().unwrap(),
    ]));
    let gf = env.path("g.graph");
    let bytes = std::fs::read(&gf).unwrap();
    std::fs::write(&gf, &bytes[..bytes.len() / 2]).unwrap();
    fails(
        &env.run(&["info", "--graph", base.to_str().unwrap()]),
        &["g"],
    );
    std::fs::write(env.path("g.properties"), "nodes=banana\n").unwrap();
    fails(
        &env.run(&["rank", "--graph", base.to_str().unwrap()]),
        &["properties"],
    );
}

/// Sends one proxy-style HTTP/1.1 request to `addr` and returns the whole response.
fn http_get(addr: &str, url: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let host = url.split('/').nth(2).unwrap();
    write!(
        s,
        "GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// A `crawlrank serve` child process serving `graph` (an arc-list file) on a free loopback
/// port; killed when dropped.
struct Served {
    child: std::process::Child,
    addr: String,
    /// Kept open for the child's lifetime (unless a test closes it on purpose): nothing
    /// reads it after the first line, but the child's later prints should reach a pipe.
    stdout: Option<std::io::BufReader<std::process::ChildStdout>>,
}

impl Served {
    fn start(env: &Env, graph: &Path) -> Served {
        Served::start_with(env, graph, &[])
    }

    /// `serve` with `extra` arguments.
    fn start_with(env: &Env, graph: &Path, extra: &[&str]) -> Served {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
            .arg("--cache")
            .arg(env.cache.path())
            .args([
                "serve",
                "--graph",
                graph.to_str().unwrap(),
                "--addr",
                "127.0.0.1:0",
            ])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|s| s.split_whitespace().next());
        let Some(addr) = addr.map(str::to_string) else {
            child.kill().ok();
            panic!("serve did not print its address: {first}");
        };
        Served {
            child,
            addr,
            stdout: Some(stdout),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

#[test]
fn serve_a_graph_as_a_local_test_web() {
    let env = Env::new();
    let four = env.write("four.txt", "0 1\n0 2\n1 2\n2 0\n");
    {
        let web = Served::start(&env, &four);
        let page = http_get(&web.addr, "http://h0.crawlrank.test/p0.html");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        let p1 = page.find("/p1.html").expect("link to page 1");
        let p2 = page.find("/p2.html").expect("link to page 2");
        assert!(p1 < p2, "links in graph order");
        assert!(
            http_get(&web.addr, "http://h0.crawlrank.test/nope.html").starts_with("HTTP/1.1 404")
        );
        assert!(http_get(&web.addr, "http://h0.crawlrank.test/robots.txt").contains("User-agent"));
    }
    // Bad values are clear errors.
    fails(
        &env.run(&[
            "serve",
            "--graph",
            four.to_str().unwrap(),
            "--addr",
            "10.0.0.1:80",
        ]),
        &["loopback"],
    );
    fails(
        &env.run(&[
            "serve",
            "--graph",
            four.to_str().unwrap(),
            "--error-rate",
            "1.5",
        ]),
        &["error"],
    );
}

#[test]
fn serve_https_and_crawl_it_trusting_the_served_ca() {
    let env = Env::new();
    let arcs = env.write("ring.txt", &ring_with_chords(30, &[(4, 20)]));
    let ca = env.path("ca.pem");
    let web = Served::start_with(&env, &arcs, &["--tls", "--ca-out", ca.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&ca)
        .unwrap()
        .starts_with("-----BEGIN CERTIFICATE-----"));
    let proxy = format!("http://{}", web.addr);
    let seeds = env.write("seeds.txt", "https://h0.crawlrank.test/p0.html\n");
    let crawl = |state: &str, extra: &[&str]| {
        let st = env.path(state);
        let mut args = vec![
            "crawl",
            "--seeds",
            seeds.to_str().unwrap(),
            "--state",
            st.to_str().unwrap(),
            "--proxy",
            &proxy,
            "--delay",
            "0",
            "--max-retries",
            "0",
            "--no-sitemaps",
        ];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    let out = ok(&crawl("trusting", &["--ca-cert", ca.to_str().unwrap()]));
    assert!(out.contains("fetched pages     30 (html 30"), "{out}");
    // Without the CA nothing can be fetched: a clear error, not a hang or a panic.
    fails(
        &crawl("distrusting", &[]),
        &["no page could be fetched", "1 TLS", "--ca-cert"],
    );
    fails(
        &crawl("bad-ca", &["--ca-cert", arcs.to_str().unwrap()]),
        &["ring.txt", "no certificate"],
    );
    // --tls needs --ca-out: a client could not trust it otherwise.
    fails(
        &env.run(&["serve", "--graph", arcs.to_str().unwrap(), "--tls"]),
        &["--ca-out"],
    );
}

#[test]
fn serve_outlives_a_closed_stdout() {
    let env = Env::new();
    let arcs = env.write("ring.txt", &ring_with_chords(5, &[]));
    let mut web = Served::start(&env, &arcs);
    // Whoever watched the output went away; the server must go on, and stop cleanly.
    web.stdout = None;
    assert!(http_get(&web.addr, "http://h0.crawlrank.test/p0.html").starts_with("HTTP/1.1 200"));
    let pid = web.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let status = web.child.wait().unwrap();
    assert!(
        status.success(),
        "serve died after its stdout closed: {status:?}"
    );
}

/// One request of a `crawlrank serve --log` file: arrival and finish (µs, the server's
/// clock), host, path, status.
struct Logged {
    arrival: u64,
    finish: u64,
    host: String,
    path: String,
    status: u16,
}

/// The requests of a `crawlrank serve --log` file.
fn read_serve_log(path: &Path) -> Vec<Logged> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("arrival_us\tfinish_us\thost\tpath\tstatus"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Logged {
                arrival: f[0].parse().unwrap(),
                finish: f[1].parse().unwrap(),
                host: f[2].to_string(),
                path: f[3].to_string(),
                status: f[4].parse().unwrap(),
            }
        })
        .collect()
}

/// The `crawlrank` binary, with its default options but `--delay 300` and the proxy, on the
/// test web's broken-answer hosts (`crawlrank serve --traps`: crawlrank_testweb::broken),
/// checked on the server's request log: a host never has two requests at once (a request
/// arrives after the previous answer to its host was written or its connection closed), two
/// requests to one host start at least the delay apart, and an answer that came broken is
/// asked again only after the back-off (1 s, then 2 s), `--max-retries` (2) times.
#[test]
fn broken_answers_are_retried_after_the_hosts_delay_never_at_once() {
    use crawlrank_testweb::trap_hosts::{BROKEN_HOSTS, TRAP_HOST_SUFFIX};
    let env = Env::new();
    let arcs = env.write("two.txt", "0 1\n");
    let log = env.path("log.tsv");
    let mut web = Served::start_with(&env, &arcs, &["--traps", "--log", log.to_str().unwrap()]);
    let seeds: String = BROKEN_HOSTS
        .iter()
        .map(|h| format!("http://{h}{TRAP_HOST_SUFFIX}/\n"))
        .collect();
    let seeds = env.write("seeds.txt", &seeds);
    let state = env.path("state");
    let proxy = format!("http://{}", web.addr);
    let delay_ms = 300;
    let out = env.run(&[
        "crawl",
        "--seeds",
        seeds.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--proxy",
        &proxy,
        "--delay",
        &delay_ms.to_string(),
    ]);
    let (stdout, stderr) = common::ok_with_stderr(&out);
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("the frontier is empty"), "{said}");
    // SIGINT: the server writes its log and exits.
    let pid = web.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    assert!(web.child.wait().unwrap().success());
    web.stdout = None;
    let log = read_serve_log(&log);
    let delay_us = delay_ms * 1000;
    for name in BROKEN_HOSTS {
        let host = format!("{name}{TRAP_HOST_SUFFIX}");
        let mut reqs: Vec<&Logged> = log.iter().filter(|e| e.host == host).collect();
        reqs.sort_by_key(|e| e.arrival);
        assert!(reqs.len() >= 2, "{host}: {} requests", reqs.len());
        assert_eq!(reqs[0].path, "/robots.txt", "{host}");
        for w in reqs.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(
                b.arrival >= a.finish,
                "{host}: {} arrived {} µs before the answer to {} ended",
                b.path,
                a.finish - b.arrival,
                a.path
            );
            assert!(
                b.arrival - a.arrival >= delay_us,
                "{host}: {} started {} µs after {}",
                b.path,
                b.arrival - a.arrival,
                a.path
            );
        }
        let pages: Vec<&&Logged> = reqs.iter().filter(|e| e.path == "/").collect();
        match name {
            // Cut at --max-body and parsed: not retried.
            "endless-body" => assert_eq!(pages.len(), 1, "{host}"),
            // The request its kept connection closed unread was sent again on a new one: each
            // page fetched once.
            "close-idle" => {
                for p in ["/", "/p1", "/p2"] {
                    let got: Vec<u16> = reqs
                        .iter()
                        .filter(|e| e.path == p)
                        .map(|e| e.status)
                        .collect();
                    assert_eq!(got, vec![200], "{host}{p}");
                }
            }
            // A broken answer: asked 1 + --max-retries times, after the back-off each time.
            _ => {
                assert_eq!(pages.len(), 3, "{host}");
                assert!(pages[1].arrival - pages[0].arrival >= 1_000_000, "{host}");
                assert!(pages[2].arrival - pages[1].arrival >= 2_000_000, "{host}");
            }
        }
    }
}

#[test]
fn crawl_resume_status_and_export_a_served_graph() {
    let env = Env::new();
    let text = ring_with_chords(100, &[(13, 7)]);
    let arcs = env.write("ring.txt", &text);
    let web = Served::start(&env, &arcs);
    let proxy = format!("http://{}", web.addr);
    // The `id<TAB>url` form `crawlrank seeds` writes: the crawl takes the URL.
    let seeds = env.write(
        "seeds.txt",
        "# seeds\n0\thttp://h0.crawlrank.test/p0.html\n\n",
    );
    let state = env.path("state");
    let st = state.to_str().unwrap();
    let all = |out: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let crawl = |extra: &[&str]| {
        let mut args = vec![
            "crawl",
            "--state",
            st,
            "--proxy",
            &proxy,
            "--delay",
            "0",
            "--no-sitemaps",
        ];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    let out = crawl(&["--seeds", seeds.to_str().unwrap(), "--max-pages", "20"]);
    assert!(
        out.status.success()
            && all(&out).contains("--max-pages reached")
            && all(&out).contains("resume with"),
        "{}",
        all(&out)
    );
    let out = crawl(&[]);
    assert!(
        out.status.success() && all(&out).contains("the frontier is empty"),
        "{}",
        all(&out)
    );
    let status = ok(&env.run(&["status", "--state", st]));
    assert!(status.contains("pages finished    100"), "{status}");
    let base = env.path("crawled");
    let ranking = env.path("rank.tsv");
    let out = ok(&env.run(&[
        "export",
        "--state",
        st,
        "--out",
        base.to_str().unwrap(),
        "--ranking",
        ranking.to_str().unwrap(),
    ]));
    // The test web's pages carry no noindex or canonical: an empty companion file, named.
    assert!(out.contains("page marks: 0 pages"), "{out}");
    assert!(env.path("rank.pages.tsv").exists());
    let urls = std::fs::read_to_string(env.path("crawled.urls")).unwrap();
    assert_eq!(urls.lines().count(), 100);
    assert_eq!(
        std::fs::read_to_string(&ranking).unwrap().lines().count(),
        100
    );
    // The exported crawl is a graph the other commands take, with its .ef beside it.
    let info = ok(&env.run(&["info", "--graph", base.to_str().unwrap()]));
    assert!(info.contains("200"), "{info}");
    assert!(env.path("crawled.ef").is_file());
    // Its links as arc lists, by id and by URL: the arcs of the exported graph.
    for (file, urls) in [("links.tsv", false), ("links-urls.tsv", true)] {
        let arcs = env.path(file);
        let mut args = vec!["export", "--state", st, "--arcs", arcs.to_str().unwrap()];
        let converted = env.path(&format!("converted-{file}"));
        let mut conv = vec![
            "convert",
            "--graph",
            base.to_str().unwrap(),
            "--arcs",
            converted.to_str().unwrap(),
        ];
        if urls {
            args.push("--urls");
            conv.push("--urls");
        }
        let out = ok(&env.run(&args));
        assert!(out.contains("100 nodes, 200 arcs"), "{out}");
        ok(&env.run(&conv));
        let text = std::fs::read_to_string(&arcs).unwrap();
        assert_eq!(text.lines().count(), 200);
        assert_eq!(text, std::fs::read_to_string(&converted).unwrap());
        assert_eq!(
            text.starts_with("http://h0.crawlrank.test/"),
            urls,
            "{}",
            &text[..40]
        );
    }
    fails(&env.run(&["export", "--state", st, "--urls"]), &["--arcs"]);
    // Malformed and unreachable seeds are clear errors (port 9 on loopback: nothing listens).
    let bad = env.write("bad-seeds.txt", "not a url\n");
    let b = env.path("bad-state");
    fails(
        &env.run(&[
            "crawl",
            "--seeds",
            bad.to_str().unwrap(),
            "--state",
            b.to_str().unwrap(),
            "--proxy",
            &proxy,
        ]),
        &["not a url"],
    );
    let gone = env.write("gone.txt", "http://gone.crawlrank.test/\n");
    let g = env.path("gone-state");
    let args = [
        "crawl",
        "--seeds",
        gone.to_str().unwrap(),
        "--state",
        g.to_str().unwrap(),
        "--proxy",
        "http://127.0.0.1:9",
        "--delay",
        "0",
        "--max-retries",
        "0",
    ];
    fails(&env.run(&args), &["no page could be fetched"]);
    // A resumed crawl must keep its policy; a missing state is an error.
    fails(&crawl(&["--policy", "bfs"]), &["policy 'fica'"]);
    fails(
        &env.run(&["status", "--state", env.path("none").to_str().unwrap()]),
        &["holds no crawl state"],
    );
}

/// A tmpfs of a given size mounted on a fresh directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` (and a message) where mounting is not permitted, e.g. without root.
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status();
        if status.map(|s| s.success()).unwrap_or(false) {
            Some(SmallDisk { dir })
        } else {
            eprintln!(
                "skipping: cannot mount a tmpfs here (needs root), so no full disk to test on"
            );
            None
        }
    }

    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(self.dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_the_state_stays_usable() {
    let Some(disk) = SmallDisk::mount("400k") else {
        return;
    };
    let env = Env::new();
    let text = ring_with_chords(3000, &[(13, 7), (101, 3)]);
    let arcs = env.write("web.txt", &text);
    let web = Served::start(&env, &arcs);
    let proxy = format!("http://{}", web.addr);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = disk.dir.path().join("state");
    let st = state.to_str().unwrap();
    let crawl = |extra: &[&str]| {
        let mut args = vec![
            "crawl",
            "--state",
            st,
            "--proxy",
            &proxy,
            "--delay",
            "0",
            "--no-sitemaps",
        ];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    fails(
        &crawl(&["--seeds", seeds.to_str().unwrap()]),
        &["is the disk full?"],
    );
    // The state is readable as it stands, and a crawl resumed with room to spare finishes.
    let status = ok(&env.run(&["status", "--state", st]));
    assert!(status.contains("pages finished"), "{status}");
    disk.resize("64m");
    let out = crawl(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = ok(&env.run(&["status", "--state", st]));
    assert!(status.contains("pages finished    3000"), "{status}");
}

#[test]
fn the_ranking_is_exportable_while_a_crawl_runs() {
    let env = Env::new();
    let text = ring_with_chords(100, &[(13, 7)]);
    let arcs = env.write("ring.txt", &text);
    let web = Served::start(&env, &arcs);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = env.path("state");
    // A slow crawl: one request at a time, a second apart per host (8 pages per host); with
    // 100 expected pages, K = 2 and the ranking snapshot is refreshed every 2 pages.
    let mut crawl = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args([
            "crawl",
            "--seeds",
            seeds.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ])
        .args([
            "--proxy",
            &format!("http://{}", web.addr),
            "--delay",
            "1000",
            "--concurrency",
            "1",
            "--expected-pages",
            "100",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let snapshot = state.join("ranking.tsv");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !snapshot.is_file() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let ranking = env.path("ranking.tsv");
    let out = env.run(&[
        "export",
        "--state",
        state.to_str().unwrap(),
        "--ranking",
        ranking.to_str().unwrap(),
    ]);
    let running = crawl.try_wait().unwrap().is_none();
    crawl.kill().ok();
    crawl.wait().ok();
    let stdout = ok(&out);
    assert!(running, "the crawl should still have been running");
    assert!(stdout.contains("latest snapshot"), "{stdout}");
    let lines = std::fs::read_to_string(&ranking).unwrap();
    assert!(lines.lines().count() >= 2, "{lines}");
    assert!(
        lines
            .lines()
            .all(|l| l.split('\t').count() == 2 && l.contains("http://")),
        "{lines}"
    );
}

/// `--progress-log` writes a header and then lines of counters a reader can parse, the last
/// one the crawl's end; a log that cannot be created is an error before anything is crawled.
#[test]
fn crawl_writes_a_progress_log() {
    let env = Env::new();
    let arcs = env.write("ring.txt", &ring_with_chords(100, &[(13, 7)]));
    let web = Served::start(&env, &arcs);
    let proxy = format!("http://{}", web.addr);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = env.path("state");
    let log = env.path("progress.tsv");
    let crawl = |log: &Path| {
        env.run(&[
            "crawl",
            "--seeds",
            seeds.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
            "--proxy",
            &proxy,
            "--delay",
            "0",
            "--max-pages",
            "30",
            "--progress-log",
            log.to_str().unwrap(),
        ])
    };
    let bad = env.path("no-such-dir").join("progress.tsv");
    fails(
        &crawl(&bad),
        &["cannot create the progress log", "no-such-dir"],
    );
    assert!(!state.exists(), "nothing should have been crawled");
    ok(&crawl(&log));
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(header.len(), 14, "{text}");
    assert_eq!(header[0], "elapsed_s");
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split('\t').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.len() == 14),
        "{text}"
    );
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let last = rows.last().unwrap();
    assert_eq!(last[col("pages_total")], 30.0, "{text}");
    assert_eq!(last[col("pages_this_run")], 30.0, "{text}");
    assert!(last[col("discovered")] >= 30.0, "{text}");
    assert_eq!(last[col("fd_shortages")], 0.0, "{text}");
    assert!(last[col("hosts_active")] <= last[col("hosts")], "{text}");
}

/// The README's main command, on a small web: every step runs and says what it found, the
/// real crawl fetches its pages, the table has a row per policy, the files are written, and
/// a second run reuses the generated web from the cache.
#[test]
fn the_demo_runs_every_step_on_a_small_web() {
    let env = Env::new();
    let out_dir = env.path("demo");
    let args = [
        "demo",
        "--pages",
        "3000",
        "--crawl-pages",
        "300",
        "--policy",
        "bfs,fica,opic",
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = ok(&env.run(&args));
    for step in 1..=5 {
        assert!(out.contains(&format!("== {step}. ")), "step {step}: {out}");
    }
    assert!(out.contains("3000 pages"), "{out}");
    for policy in ["bfs ", "fica ", "opic "] {
        assert!(
            out.lines().any(|l| l.starts_with(policy)),
            "no {policy}row: {out}"
        );
    }
    assert!(
        out.contains("the real crawl's first 300 pages hold"),
        "{out}"
    );
    for f in ["summary.json", "summary.csv", "throughput.svg", "mass.svg"] {
        assert!(out_dir.join(f).is_file(), "{f} missing");
    }
    let status = ok(&env.run(&[
        "status",
        "--state",
        out_dir.join("crawl-state").to_str().unwrap(),
    ]));
    assert!(status.contains("pages finished    300"), "{status}");
    let again = ok(&env.run(&args));
    assert!(again.contains("reusing"), "{again}");
}

/// An open-file limit too low for `--concurrency` stops the crawl before anything is
/// written, naming the numbers and the fix (the limit is set with the shell's `ulimit`,
/// which lowers the hard limit too, so the crawl cannot raise it).
#[cfg(unix)]
#[test]
fn an_open_file_limit_too_low_for_the_concurrency_is_a_clear_error() {
    let env = Env::new();
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = env.path("state");
    let out = Command::new("sh")
        .args(["-c", r#"ulimit -n 200 && exec "$0" "$@""#])
        .arg(env!("CARGO_BIN_EXE_crawlrank"))
        .args([
            "--cache",
            env.cache.path().to_str().unwrap(),
            "crawl",
            "--seeds",
        ])
        .args([seeds.to_str().unwrap(), "--state", state.to_str().unwrap()])
        .args(["--concurrency", "100", "--proxy", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    fails(
        &out,
        &[
            "--concurrency 100 needs up to 264 open files",
            "the open-file limit is 200",
            "lower --concurrency to 68",
            "ulimit -n 264",
        ],
    );
    assert!(!state.exists(), "nothing written");
}
