//! The `crawlrank` binary end to end: the commands work on small graphs written here, and bad
//! input gets a clear error, a non-zero exit, no panic and no half-written output.

use crate::common;

use common::{fails, ok, wait_for, words, Env};
use crawlrank_testkit as testkit;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// An arc list of `n` pages, every one reachable from page 0: page `v` links to `v + 1` (a ring)
/// and to `a·v + b` for each chord `(a, b)`, all modulo `n`.
fn ring_with_chords(n: u32, chords: &[(u32, u32)]) -> String {
    testkit::ring_with_chords(n, chords).arc_list()
}

/// The 5-node PageRank example of docs/algorithms.md §7.1, as an arc list, and its PageRank.
fn five() -> String {
    testkit::five_pages().arc_list()
}
const FIVE_PR: [f64; 5] = testkit::FIVE_PAGES_PAGERANK;

#[test]
fn rank_an_arc_list_on_the_fly_and_write_one_value_per_line() {
    let env = Env::new();
    let arcs = env.write("five.txt", &five());
    let out = env.path("pr.txt");
    let stdout = env.ok("rank --graph {} --out {} --top 2", &[&arcs, &out]);
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
    env.ok("rank --graph {} --algo hits --top 3", &[&arcs]);
    let indeg = env.ok("rank --graph {} --algo indegree --top 1", &[&arcs]);
    assert!(
        indeg.lines().nth(1).unwrap().split_whitespace().nth(1) == Some("2"),
        "{indeg}"
    );
}

#[test]
fn import_url_pairs_then_info_and_rank_show_urls() {
    let env = Env::new();
    let (base, stdout) = env.import_url_pairs(
        "http://a.example/ http://b.example/x\n\
         http://b.example/x http://A.example:80/\n\
         http://c.example/ http://b.example/x#frag\n",
    );
    assert!(
        stdout.contains("3 nodes") && stdout.contains("3 arcs"),
        "{stdout}"
    );
    let urls = std::fs::read_to_string(env.path("web.urls")).unwrap();
    assert_eq!(
        urls,
        "http://a.example/\nhttp://b.example/x\nhttp://c.example/\n"
    );
    let info = env.ok("info --graph {}", &[&base]);
    assert!(info.contains('3'), "{info}");
    let top = env.ok("rank --graph {} --top 1", &[&base]);
    assert!(top.contains("http://b.example/x"), "{top}");
}

#[test]
fn convert_writes_arc_lists_that_import_back() {
    let env = Env::new();
    // FIVE, sorted and tab-separated: what `convert` writes for it.
    let sorted = "0\t1\n0\t2\n1\t2\n2\t0\n2\t2\n2\t4\n3\t0\n3\t2\n";
    let input = env.write("five.txt", &five());
    let base = env.path("five");
    env.ok("import {} --out {}", &[&input, &base]);
    assert!(env.path("five.ef").is_file());
    for graph in [&base, &input] {
        let out = env.path("arcs.tsv");
        let stdout = env.ok("convert --graph {} --arcs {}", &[&graph, &out]);
        assert!(stdout.contains("8 arcs (5 nodes)"), "{stdout}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), sorted);
    }
    // URL pairs: import, convert with URLs, and the same pairs come back.
    let pairs = "http://a.example/\thttp://b.example/x\nhttp://b.example/x\thttp://a.example/\n";
    let (web, _) = env.import("pairs.tsv", pairs, "web");
    let out = env.path("pairs-back.tsv");
    let args = words("convert --graph {} --arcs {} --urls", &[&web, &out]);
    ok(&env.run(&args));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), pairs);
    // No URLs to give: the graph is named, nothing is written.
    let none = env.path("none.tsv");
    for graph in [&base, &env.path("five.txt")] {
        env.fails(
            "convert --graph {} --arcs {} --urls",
            &[&graph, &none],
            &[graph.to_str().unwrap(), "no URLs"],
        );
    }
    env.fails(
        "convert --graph {} --arcs {}",
        &[&env.path("missing"), &none],
        &["missing", "neither a BVGraph"],
    );
    env.fails("convert --graph {}", &[&base], &["--arcs"]);
    assert!(!none.exists());
}

#[test]
fn simulate_writes_summary_plots_and_orders() {
    let env = Env::new();
    let text = ring_with_chords(200, &[(7, 3)]);
    let arcs = env.write("ring.txt", &text);
    let out = env.path("sim");
    let stdout = env.ok(
        "simulate --graph {} --policy bfs,fica,opic --seeds 3 --out {} --save-orders",
        &[&arcs, &out],
    );
    for p in ["bfs", "fica", "opic"] {
        assert!(stdout.contains(p), "{stdout}");
        let order = std::fs::read_to_string(out.join(format!("{p}.order"))).unwrap();
        assert_eq!(order.lines().count(), 200);
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    // Tidy: per policy 100 checkpoints of throughput, mass and mean PageRank, and τ_b.
    assert!(csv.starts_with("graph,policy,rng_seed,seeds,reachable,percent,k,measure,value\n"));
    assert_eq!(csv.lines().count(), 1 + 3 * (3 * 100 + 1));
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
    env.fails("rank --graph {}", &[&env.path("nope")], &["nope"]);
    env.fails(
        "import {} --out {}",
        &[&env.path("nope.txt"), &env.path("x")],
        &["nope.txt"],
    );
    // Malformed input: which line and why; no output left behind.
    let url_pairs = "http://a.example/ http://b.example/\nhttp://a.example/ http://[bad/\n";
    for (name, text, format, says) in [
        ("bad", "0 1\n1 2\n2 x\n", "arcs", "line 3"),
        ("urls", url_pairs, "url-pairs", "line 2"),
        ("empty", "# nothing\n", "arcs", "empty"),
    ] {
        let input = env.write(&format!("{name}.txt"), text);
        let line = "import {} --format {} --out {}";
        env.fails(line, &[&input, &format, &env.path(name)], &[says]);
        let input_name = format!("{name}.txt");
        let left: Vec<String> = (env.files().into_iter())
            .filter(|f| f.starts_with(&format!("{name}.")) && *f != input_name)
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // Unknown option values list the valid ones.
    env.fails(
        "rank --graph {} --algo pagerenk",
        &[&g],
        &["pagerenk", "pagerank", "hits", "indegree"],
    );
    env.fails(
        "simulate --graph {} --policy fica,nope",
        &[&g],
        &["nope", "batch-pagerank", "omniscient"],
    );
    // Seeds: not in the graph, empty, unreadable; K = 0.
    let seeds = env.write("seeds.txt", "0\n9\n");
    let none = env.write("none.txt", "# no seeds\n");
    let missing = env.path("missing.txt");
    for (file, says) in [
        (&seeds, &["seeds.txt:2", "9"][..]),
        (&none, &["no seeds"]),
        (&missing, &["missing.txt"]),
    ] {
        env.fails("simulate --graph {} --seeds-file {}", &[&g, file], says);
    }
    env.fails("simulate --graph {} --seeds 0", &[&g], &["--seeds"]);
    env.fails("simulate --graph {} --batch 0", &[&g], &["--batch"]);
    // A bad preference vector.
    let pref = env.write("pref.txt", "0.5\n0.5\n");
    env.fails(
        "rank --graph {} --preference {}",
        &[&g, &pref],
        &["preference"],
    );
}

#[test]
fn a_corrupt_graph_is_an_error_not_a_panic() {
    let env = Env::new();
    let five = env.write("five.txt", &five());
    let base = env.path("g");
    env.ok("import {} --out {}", &[&five, &base]);
    let gf = env.path("g.graph");
    let bytes = std::fs::read(&gf).unwrap();
    std::fs::write(&gf, &bytes[..bytes.len() / 2]).unwrap();
    env.fails("info --graph {}", &[&base], &["g"]);
    std::fs::write(env.path("g.properties"), "nodes=banana\n").unwrap();
    env.fails("rank --graph {}", &[&base], &["properties"]);
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
    /// Serves the 100-page ring with the chord 13 → 7 (written as `ring.txt`): the test web of
    /// the crawls that need no particular shape.
    fn ring(env: &Env) -> Served {
        let arcs = env.write("ring.txt", &ring_with_chords(100, &[(13, 7)]));
        Served::start(env, &arcs)
    }

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
    // An arc list with gaps in its ids: pages are named by those ids, --trap-links too.
    let sparse = env.write(
        "sparse.txt",
        "0 5
5 10
10 0
10 5
20 10
",
    );
    {
        let web = Served::start_with(&env, &sparse, &["--traps", "--trap-links", "20"]);
        let page = http_get(&web.addr, "http://h2.crawlrank.test/p20.html");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains("http://h1.crawlrank.test/p10.html"), "{page}");
        assert!(page.contains("traps.crawlrank.test"), "{page}");
        let p10 = http_get(&web.addr, "http://h1.crawlrank.test/p10.html");
        assert!(
            p10.contains("/p0.html") && p10.contains("/p5.html") && !p10.contains("traps."),
            "{p10}"
        );
        // Page 3 of the dense numbering is not a page here.
        assert!(http_get(&web.addr, "http://h0.crawlrank.test/p3.html").starts_with("HTTP/1.1 404"));
    }
    env.fails(
        "serve --graph {} --traps --trap-links 5,7",
        &[&sparse],
        &["--trap-links", "id 7 is not a page of the graph"],
    );
    // Bad values are clear errors.
    env.fails(
        "serve --graph {} --addr 10.0.0.1:80",
        &[&four],
        &["loopback"],
    );
    env.fails("serve --graph {} --error-rate 1.5", &[&four], &["error"]);
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
        env.run_with(
            "crawl --seeds {} --state {} --proxy {} --delay 0 --max-retries 0 --no-sitemaps",
            &[&seeds, &st, &proxy],
            extra,
        )
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
    env.fails("serve --graph {} --tls", &[&arcs], &["--ca-out"]);
}

#[test]
fn serve_outlives_a_closed_stdout() {
    let env = Env::new();
    let arcs = env.write("ring.txt", &ring_with_chords(5, &[]));
    let mut web = Served::start(&env, &arcs);
    // Whoever watched the output went away; the server must go on, and stop cleanly.
    web.stdout = None;
    assert!(http_get(&web.addr, "http://h0.crawlrank.test/p0.html").starts_with("HTTP/1.1 200"));
    common::kill("-INT", web.child.id());
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
    let out = env.run_line(
        "crawl --seeds {} --state {} --proxy {} --delay {}",
        &[&seeds, &state, &proxy, &delay_ms.to_string()],
    );
    let (stdout, stderr) = common::ok_with_stderr(&out);
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("the frontier is empty"), "{said}");
    // SIGINT: the server writes its log and exits.
    common::kill("-INT", web.child.id());
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
    let web = Served::ring(&env);
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
        env.run_with(
            "crawl --state {} --proxy {} --delay 0 --no-sitemaps",
            &[&st, &proxy],
            extra,
        )
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
    let status = env.ok("status --state {}", &[&st]);
    assert!(status.contains("pages finished    100"), "{status}");
    let base = env.path("crawled");
    let ranking = env.path("rank.tsv");
    let out = env.ok(
        "export --state {} --out {} --ranking {}",
        &[&st, &base, &ranking],
    );
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
    let info = env.ok("info --graph {}", &[&base]);
    assert!(info.contains("200"), "{info}");
    assert!(env.path("crawled.ef").is_file());
    // Its links as arc lists, by id and by URL: the arcs of the exported graph.
    for (file, urls) in [("links.tsv", false), ("links-urls.tsv", true)] {
        let arcs = env.path(file);
        let mut args = vec!["export", "--state", st, "--arcs", arcs.to_str().unwrap()];
        let converted = env.path(&format!("converted-{file}"));
        let mut conv = words("convert --graph {} --arcs {}", &[&base, &converted]);
        if urls {
            args.push("--urls");
            conv.push("--urls".into());
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
    env.fails("export --state {} --urls", &[&st], &["--arcs"]);
    // Malformed and unreachable seeds are clear errors (port 9 on loopback: nothing listens).
    let bad = env.write("bad-seeds.txt", "not a url\n");
    let b = env.path("bad-state");
    env.fails(
        "crawl --seeds {} --state {} --proxy {}",
        &[&bad, &b, &proxy],
        &["not a url"],
    );
    let gone = env.write("gone.txt", "http://gone.crawlrank.test/\n");
    let g = env.path("gone-state");
    let args = words(
        "crawl --seeds {} --state {} --proxy http://127.0.0.1:9 --delay 0 --max-retries 0",
        &[&gone, &g],
    );
    fails(&env.run(&args), &["no page could be fetched"]);
    // A resumed crawl must keep its policy; a missing state is an error.
    fails(&crawl(&["--policy", "bfs"]), &["policy 'fica'"]);
    env.fails(
        "status --state {}",
        &[&env.path("none")],
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
        env.run_with(
            "crawl --state {} --proxy {} --delay 0 --no-sitemaps",
            &[&st, &proxy],
            extra,
        )
    };
    fails(
        &crawl(&["--seeds", seeds.to_str().unwrap()]),
        &["is the disk full?"],
    );
    // The state is readable as it stands, and a crawl resumed with room to spare finishes.
    let status = env.ok("status --state {}", &[&st]);
    assert!(status.contains("pages finished"), "{status}");
    disk.resize("64m");
    let out = crawl(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = env.ok("status --state {}", &[&st]);
    assert!(status.contains("pages finished    3000"), "{status}");
}

#[test]
fn the_ranking_is_exportable_while_a_crawl_runs() {
    let env = Env::new();
    let web = Served::ring(&env);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = env.path("state");
    // A slow crawl: one request at a time, a second apart per host (8 pages per host); with
    // 100 expected pages, K = 2 and the ranking snapshot is refreshed every 2 pages.
    let args = words(
        "crawl --seeds {} --state {} --proxy {} --delay 1000 --concurrency 1 --expected-pages 100",
        &[&seeds, &state, &format!("http://{}", web.addr)],
    );
    let mut crawl = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let snapshot = state.join("ranking.tsv");
    let (secs_30, ms_50) = (Duration::from_secs(30), Duration::from_millis(50));
    wait_for("a ranking snapshot", secs_30, ms_50, || {
        snapshot.is_file().then_some(())
    });
    let ranking = env.path("ranking.tsv");
    let out = env.run_line("export --state {} --ranking {}", &[&state, &ranking]);
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
    let web = Served::ring(&env);
    let proxy = format!("http://{}", web.addr);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = env.path("state");
    let log = env.path("progress.tsv");
    let crawl = |log: &Path| {
        env.run_line(
            "crawl --seeds {} --state {} --proxy {} --delay 0 --max-pages 30 --progress-log {}",
            &[&seeds, &state, &proxy, &log],
        )
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
    let args = words(
        "demo --pages 3000 --crawl-pages 300 --policy bfs,fica,opic --out {}",
        &[&out_dir],
    );
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
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["provenance"]["command"], "demo");
    assert_eq!(
        summary["provenance"]["seed_ids"].as_array().unwrap().len(),
        100
    );
    let status = env.ok("status --state {}", &[&out_dir.join("crawl-state")]);
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

/// Every command speaks the user's ids: an arc list whose ids have gaps, given on the command
/// line (imported on the fly) or imported first, gives exactly the answers of the same graph
/// numbered `0..n`, each id read and written as the user's own.
mod user_ids {
    use super::common::{fails, ok, Env};
    use crawlrank_testkit as testkit;
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    /// The issue's example, `0→5, 5→10, 10→0, 10→5, 20→10`, and its ids.
    const SMALL: &str = "0 5\n5 10\n10 0\n10 5\n20 10\n";
    const SMALL_IDS: [u64; 4] = [0, 5, 10, 20];

    /// A larger graph (a ring with chords, 60 pages) with ids `f(v)`, strictly increasing with
    /// gaps, some above 2^32.
    fn larger_id(v: u64) -> u64 {
        4_294_967_000 + 3 * v * v + v
    }

    /// One graph twice: with ids `ids[v]` (sparse) and numbered `0..n` (dense, `ids` sorted).
    struct Pair {
        env: Env,
        sparse: PathBuf,
        dense: PathBuf,
        ids: Vec<u64>,
    }

    impl Pair {
        /// `sparse_text` is an arc list; the dense twin relabels each id by its rank.
        fn new(sparse_text: &str) -> Self {
            let env = Env::new();
            let mut ids: Vec<u64> = sparse_text
                .split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            let rank: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, &v)| (v, i)).collect();
            let dense_text: String = sparse_text
                .lines()
                .map(|l| {
                    let f: Vec<usize> = l
                        .split_whitespace()
                        .map(|t| rank[&t.parse().unwrap()])
                        .collect();
                    format!("{} {}\n", f[0], f[1])
                })
                .collect();
            let sparse = env.write("sparse.arcs", sparse_text);
            let dense = env.write("dense.arcs", &dense_text);
            Self {
                env,
                sparse,
                dense,
                ids,
            }
        }

        fn larger() -> Self {
            let dense = testkit::ring_with_chords(60, &[(7, 3), (11, 5)]);
            let text: String = dense
                .arcs
                .iter()
                .map(|&(s, d)| format!("{} {}\n", larger_id(s as u64), larger_id(d as u64)))
                .collect();
            let p = Self::new(&text);
            assert_eq!(p.ids.len(), 60);
            p
        }

        fn s(&self) -> &str {
            self.sparse.to_str().unwrap()
        }

        fn d(&self) -> &str {
            self.dense.to_str().unwrap()
        }

        fn path(&self, name: &str) -> String {
            self.env.path(name).to_str().unwrap().to_string()
        }

        fn write(&self, name: &str, text: &str) -> String {
            self.env.write(name, text).to_str().unwrap().to_string()
        }

        fn read(&self, name: &str) -> String {
            std::fs::read_to_string(self.env.path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
        }

        /// The sparse id of dense id `t` (a field of text).
        fn id(&self, t: &str) -> String {
            self.ids[t.parse::<usize>().unwrap()].to_string()
        }

        /// A tidy summary.csv without its first column, the graph as the user named it (the
        /// two graphs have two names; everything else must be the same).
        fn read_csv(&self, name: &str) -> String {
            self.read(name)
                .lines()
                .map(|l| l.split_once(',').map_or(l, |(_, rest)| rest).to_string() + "\n")
                .collect()
        }

        /// `text` with the fields numbered `columns` (0-based, tab- or space-separated) of
        /// every line after `skip` header lines mapped from dense ids to sparse ids.
        fn map_columns(&self, text: &str, columns: &[usize], skip: usize, sep: char) -> String {
            text.lines()
                .enumerate()
                .map(|(i, l)| {
                    if i < skip || l.is_empty() {
                        return format!("{l}\n");
                    }
                    let f: Vec<String> = l
                        .split(sep)
                        .enumerate()
                        .map(|(c, t)| {
                            if columns.contains(&c) {
                                self.id(t)
                            } else {
                                t.to_string()
                            }
                        })
                        .collect();
                    format!("{}\n", f.join(&sep.to_string()))
                })
                .collect()
        }
    }

    /// The `k`-th whitespace-separated column of the table rows of `--top` output.
    fn top_column(stdout: &str, k: usize) -> Vec<String> {
        stdout
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().nth(k).unwrap().to_string())
            .collect()
    }

    #[test]
    fn rank_writes_id_tab_score_and_tops_by_id() {
        for p in [Pair::new(SMALL), Pair::larger()] {
            let (so, dout) = (p.path("s.pr"), p.path("d.pr"));
            let ss = ok(&p
                .env
                .run_line("rank --graph {} --out {} --top 4", &[&p.s(), &so]));
            let ds = ok(&p
                .env
                .run_line("rank --graph {} --out {} --top 4", &[&p.d(), &dout]));
            // Dense ids: one value per line; the user's ids: `id<TAB>score`, the same scores.
            let dense = p.read("d.pr");
            assert!(dense.lines().all(|l| !l.contains('\t')), "{dense}");
            let want: String = dense
                .lines()
                .enumerate()
                .map(|(v, s)| format!("{}\t{s}\n", p.ids[v]))
                .collect();
            assert_eq!(p.read("s.pr"), want);
            // --top: the same pages and scores, named by their ids.
            let want: Vec<String> = top_column(&ds, 1).iter().map(|t| p.id(t)).collect();
            assert_eq!(top_column(&ss, 1), want, "{ss}");
            assert_eq!(top_column(&ss, 2), top_column(&ds, 2));
            assert_eq!(
                ss.lines().next().unwrap().split_whitespace().nth(1),
                Some("id")
            );
            // A preference vector by id gives the ranking of the same vector by node.
            let last = *p.ids.last().unwrap();
            let pref_s = p.write("s.pref", &format!("{}\t0.25\n{last}\t0.75\n", p.ids[0]));
            let pref_d = p.write("d.pref", &format!("0\t0.25\n{}\t0.75\n", p.ids.len() - 1));
            let plain: String = (0..p.ids.len())
                .map(|v| match v {
                    0 => "0.25\n".to_string(),
                    v if v == p.ids.len() - 1 => "0.75\n".into(),
                    _ => "0\n".into(),
                })
                .collect();
            let pref_plain = p.write("plain.pref", &plain);
            let run = |g: &str, pref: &str, out: &str| {
                p.env.ok(
                    "rank --graph {} --preference {} --out {}",
                    &[&g, &pref, &out],
                );
            };
            run(p.s(), &pref_s, &p.path("s.ppr"));
            run(p.d(), &pref_d, &p.path("d.ppr"));
            run(p.d(), &pref_plain, &p.path("d2.ppr"));
            assert_eq!(p.read("d.ppr"), p.read("d2.ppr"));
            assert_eq!(
                p.read("s.ppr"),
                p.map_columns(
                    &p.read("d.ppr")
                        .lines()
                        .enumerate()
                        .map(|(v, s)| format!("{v}\t{s}\n"))
                        .collect::<String>(),
                    &[0],
                    0,
                    '\t'
                )
            );
            // Values alone cannot name pages whose ids are not 0..n.
            fails(
                &p.env
                    .run_line("rank --graph {} --preference {}", &[&p.s(), &pref_plain]),
                &["plain.pref:1", "id<TAB>value"],
            );
        }
    }

    #[test]
    fn simulate_reads_seeds_and_writes_orders_by_id() {
        let p = Pair::larger();
        let seeds_s = p.write(
            "s.seeds",
            &format!("# two seeds\n{}\n{}\t\n", p.ids[17], p.ids[3]),
        );
        let seeds_d = p.write("d.seeds", "# two seeds\n17\n3\n");
        let policies = "bfs,fica,opic,batch-pagerank,random";
        for (g, seeds, out) in [(p.s(), &seeds_s, "s.sim"), (p.d(), &seeds_d, "d.sim")] {
            p.env.ok(
                "simulate --graph {} --policy {} --seeds-file {} --out {} --save-orders",
                &[&g, &policies, &seeds, &p.path(out)],
            );
        }
        for policy in policies.split(',') {
            let d = p.read(&format!("d.sim/{policy}.order"));
            assert_eq!(d.lines().count(), 60);
            assert_eq!(
                p.read(&format!("s.sim/{policy}.order")),
                p.map_columns(&d, &[0], 0, '\t'),
                "{policy}"
            );
        }
        assert_eq!(
            p.read_csv("s.sim/summary.csv"),
            p.read_csv("d.sim/summary.csv")
        );
        // Random seeds are the same pages too.
        for (g, out) in [(p.s(), "s.rnd"), (p.d(), "d.rnd")] {
            p.env.ok(
                "simulate --graph {} --policy fica --seeds 4 --out {} --save-orders",
                &[&g, &p.path(out)],
            );
        }
        assert_eq!(
            p.read("s.rnd/fica.order"),
            p.map_columns(&p.read("d.rnd/fica.order"), &[0], 0, '\t')
        );
    }

    #[test]
    fn seeds_and_seeds_eval_speak_the_users_ids() {
        let p = Pair::larger();
        for method in ["top-pagerank", "random", "cover-density"] {
            let (so, dout) = (
                p.path(&format!("s.{method}")),
                p.path(&format!("d.{method}")),
            );
            for (g, out) in [(p.s(), &so), (p.d(), &dout)] {
                p.env.ok(
                    "seeds --graph {} --count 3 --method {} --out {}",
                    &[&g, &method, &out],
                );
            }
            let d = p.read(&format!("d.{method}"));
            assert!(!d.is_empty());
            assert_eq!(
                p.read(&format!("s.{method}")),
                p.map_columns(&d, &[0], 0, '\t'),
                "{method}"
            );
            // .cores.json names its pages by id.
            let json = |name: &str| -> serde_json::Value {
                serde_json::from_str(&p.read(&format!("{name}.{method}.cores.json"))).unwrap()
            };
            let (sj, dj) = (json("s"), json("d"));
            let map = |v: &serde_json::Value| -> serde_json::Value {
                match v {
                    serde_json::Value::Array(a) => a
                        .iter()
                        .map(|x| p.ids[x.as_u64().unwrap() as usize])
                        .collect(),
                    serde_json::Value::Null => serde_json::Value::Null,
                    x => p.ids[x.as_u64().unwrap() as usize].into(),
                }
            };
            assert_eq!(sj["seeds"], map(&dj["seeds"]));
            let rounds = dj["rounds"].as_array().unwrap();
            for (i, r) in rounds.iter().enumerate() {
                for key in ["seed", "hubs", "authorities"] {
                    assert_eq!(
                        sj["rounds"][i][key],
                        map(&r[key]),
                        "{method} round {i} {key}"
                    );
                }
            }
            // seeds-eval reads the seeds file and its cores back.
            for (g, seeds, out) in [(p.s(), &so, "s.eval"), (p.d(), &dout, "d.eval")] {
                p.env.ok(
                    "seeds-eval --graph {} --seeds {} --distance-samples 5 --out {}",
                    &[&g, &seeds, &p.path(out)],
                );
            }
            assert_eq!(p.read("s.eval/summary.csv"), p.read("d.eval/summary.csv"));
            let eval = |name: &str| -> serde_json::Value {
                serde_json::from_str(&p.read(&format!("{name}.eval/summary.json"))).unwrap()
            };
            let (se, de) = (eval("s"), eval("d"));
            assert_eq!(se["seeds"], map(&de["seeds"]));
            assert_eq!(se["random_seeds"], map(&de["random_seeds"]));
            assert_eq!(se["core_distances"], de["core_distances"]);
        }
    }

    #[test]
    fn impacts_frontier_rank_and_simulate_impact_by_id() {
        let p = Pair::larger();
        for (g, out) in [(p.s(), "s.imp"), (p.d(), "d.imp")] {
            p.env.ok(
                "impacts --graph {} --profile wiki --seed 3 --out {}",
                &[&g, &p.path(out)],
            );
        }
        let d = p.read("d.imp");
        assert!(d.starts_with("id\t") && d.lines().count() > 5, "{d}");
        assert_eq!(p.read("s.imp"), p.map_columns(&d, &[0], 1, '\t'));
        // The downloaded set by id, with a comment and an id<TAB>url-less line.
        let down_s = p.write(
            "s.down",
            &format!("# D\n{}\n{}\n{}\n", p.ids[0], p.ids[1], p.ids[2]),
        );
        let down_d = p.write("d.down", "# D\n0\n1\n2\n");
        let methods = "random,indegree,pagerank,rw,rw-eg,rw-virtual";
        for (g, down, imp, out) in [
            (p.s(), &down_s, p.path("s.imp"), "s.fr"),
            (p.d(), &down_d, p.path("d.imp"), "d.fr"),
        ] {
            p.env.ok(
                "frontier-rank --graph {} --downloaded {} --impact {} --method {} --out {}",
                &[&g, &down, &imp, &methods, &p.path(out)],
            );
        }
        let scores = p.read("d.fr/scores.tsv");
        assert!(scores.lines().count() > 3, "{scores}");
        assert_eq!(
            p.read("s.fr/scores.tsv"),
            p.map_columns(&scores, &[0], 1, '\t')
        );
        assert_eq!(
            p.read_csv("s.fr/summary.csv"),
            p.read_csv("d.fr/summary.csv")
        );
        // simulate --impact: the impact-aware policies crawl the same pages.
        for (g, imp, out) in [
            (p.s(), p.path("s.imp"), "s.si"),
            (p.d(), p.path("d.imp"), "d.si"),
        ] {
            p.env.ok("simulate --graph {} --policy rw,rw-eg,fica --seeds 3 --impact {} --out {} --save-orders", &[&g, &imp, &p.path(out)]);
        }
        for policy in ["rw", "rw-eg", "fica"] {
            let d = p.read(&format!("d.si/{policy}.order"));
            assert_eq!(
                p.read(&format!("s.si/{policy}.order")),
                p.map_columns(&d, &[0], 0, '\t')
            );
        }
        assert_eq!(
            p.read_csv("s.si/summary.csv"),
            p.read_csv("d.si/summary.csv")
        );
    }

    #[test]
    fn convert_info_and_import_keep_the_users_ids() {
        let p = Pair::new(SMALL);
        assert_eq!(p.ids, SMALL_IDS);
        for (g, out) in [(p.s(), "s.tsv"), (p.d(), "d.tsv")] {
            ok(&p
                .env
                .run_line("convert --graph {} --arcs {}", &[&g, &p.path(out)]));
        }
        // The user's arcs come back as they were given (sorted), not renumbered.
        assert_eq!(p.read("s.tsv"), "0\t5\n5\t10\n10\t0\n10\t5\n20\t10\n");
        assert_eq!(
            p.read("s.tsv"),
            p.map_columns(&p.read("d.tsv"), &[0, 1], 0, '\t')
        );
        // info: the ids, and the pages of largest degree by their ids (in-degree: 5 and 10
        // have 2, the first is shown; outdegree: 10).
        let info = p.env.ok("info --graph {}", &[&p.s()]);
        assert!(info.contains("0 to 20 with gaps (4 pages"), "{info}");
        let line = |what: &str| info.lines().find(|l| l.starts_with(what)).unwrap();
        assert!(line("in-degree  ").contains("max 2 (node 5)"), "{info}");
        assert!(line("outdegree  ").contains("max 2 (node 10)"), "{info}");
        let dense = p.env.ok("info --graph {}", &[&p.d()]);
        assert!(!dense.contains("with gaps"), "{dense}");
        // `import` then the basename: the same ids as on the fly.
        let base = p.path("imported");
        let stdout = p.env.ok("import {} --out {}", &[&p.s(), &base]);
        assert!(stdout.contains("imported.ids"), "{stdout}");
        ok(&p
            .env
            .run_line("rank --graph {} --out {}", &[&base, &p.path("b.pr")]));
        ok(&p
            .env
            .run_line("rank --graph {} --out {}", &[&p.s(), &p.path("f.pr")]));
        assert_eq!(p.read("b.pr"), p.read("f.pr"));
        assert!(p.read("b.pr").starts_with("0\t"));
        // --keep-ids: phantom pages for the gaps, one value per line (ids 0..=20).
        let kept = p.path("kept");
        ok(&p
            .env
            .run_line("import {} --out {} --keep-ids", &[&p.s(), &kept]));
        p.env.ok(
            "rank --graph {} --algo indegree --out {}",
            &[&kept, &p.path("k.pr")],
        );
        let k = p.read("k.pr");
        assert_eq!(k.lines().count(), 21);
        assert_eq!(k.lines().nth(10), Some("2"));
        // A corrupt .ids is an error, never shifted ids.
        std::fs::write(p.env.path("imported.ids"), "0\n10\n5\n20\n").unwrap();
        p.env.fails(
            "rank --graph {} --top 1",
            &[&base],
            &["imported.ids", "line 3", "strictly increasing"],
        );
        std::fs::write(p.env.path("imported.ids"), "0\n5\n10\n").unwrap();
        p.env.fails(
            "rank --graph {} --top 1",
            &[&base],
            &["imported.ids", "3 ids, but the graph has 4 nodes"],
        );
    }

    #[test]
    fn seeds_by_id_and_url_on_a_graph_with_urls_and_its_own_ids() {
        // An arc list with an id→URL table (the Hollins layout), ids with gaps.
        let env = Env::new();
        let arcs = env.write("arcs.txt", SMALL);
        let table = env.write(
            "ids.txt",
            "0 http://a.example/\n5 http://b.example/\n10 http://c.example/\n20 http://d.example/\n",
        );
        let base = env.path("web");
        let base = base.to_str().unwrap();
        env.ok("import {} --urls {} --out {}", &[&arcs, &table, &base]);
        let seeds = env.path("seeds.txt");
        let seeds = seeds.to_str().unwrap();
        env.ok(
            "seeds --graph {} --count 2 --method top-pagerank --out {}",
            &[&base, &seeds],
        );
        // Ids with their URLs: the page of id 10 is http://c.example/.
        assert_eq!(
            std::fs::read_to_string(seeds).unwrap(),
            "10\thttp://c.example/\n5\thttp://b.example/\n"
        );
        // The order of a BFS crawl from a seeds file.
        let bfs_order = |seeds: &Path| {
            let out = env.path("sim");
            let line = "simulate --graph {} --seeds-file {} --policy bfs --out {} --save-orders";
            env.ok(line, &[&base, &seeds, &out]);
            std::fs::read_to_string(out.join("bfs.order")).unwrap()
        };
        assert_eq!(bfs_order(Path::new(seeds)), "10\n5\n0\n");
        // A URL, or an id with its URL, names the same page; an id with another page's URL is
        // an error.
        let mixed = env.write("mixed.txt", "http://c.example/\n5\thttp://b.example/\n");
        assert_eq!(bfs_order(&mixed), "10\n5\n0\n");
        let wrong = env.write("wrong.txt", "10\thttp://b.example/\n");
        env.fails(
            "simulate --graph {} --seeds-file {}",
            &[&base, &wrong],
            &["wrong.txt:1", "page 10 of the graph is http://c.example/"],
        );
        env.ok(
            "seeds-eval --graph {} --seeds {} --distance-samples 2",
            &[&base, &seeds],
        );
    }

    #[test]
    fn an_id_that_is_not_a_page_is_an_error_naming_file_line_and_id() {
        let p = Pair::new(SMALL);
        let imp = p.write("imp.tsv", "id\tclicks\n0\t1\n5\t2\n10\t3\n20\t4\n");
        // Page 20 is a seed like any other.
        let good = p.write("good.txt", "20\n");
        p.env.ok(
            "simulate --graph {} --seeds-file {} --policy bfs",
            &[&p.s(), &good],
        );
        let cases = [
            (
                "absent.txt",
                "0\n5\n7\n",
                vec!["absent.txt:3", "id 7 is not a page of the graph"],
            ),
            (
                "past.txt",
                "# c\n21\n",
                vec!["past.txt:2", "id 21 is not a page"],
            ),
            (
                "negative.txt",
                "0\n-5\n",
                vec!["negative.txt:2", "'-5'", "negative"],
            ),
            (
                "fraction.txt",
                "2.5\n",
                vec!["fraction.txt:1", "'2.5'", "integers"],
            ),
            (
                "tabbed.txt",
                "x\thttp://a/\n",
                vec!["tabbed.txt:1", "'x'", "not a page id"],
            ),
        ];
        for (name, text, needles) in cases {
            let f = p.write(name, text);
            let needles: Vec<&str> = needles.to_vec();
            fails(
                &p.env
                    .run_line("simulate --graph {} --seeds-file {}", &[&p.s(), &f]),
                &needles,
            );
            fails(
                &p.env
                    .run_line("seeds-eval --graph {} --seeds {}", &[&p.s(), &f]),
                &needles,
            );
            p.env.fails(
                "frontier-rank --graph {} --downloaded {} --impact {} --out {}",
                &[&p.s(), &f, &imp, &p.path("fr")],
                &needles,
            );
            if !text.contains('\t') {
                let pref = p.write("p.txt", &text.replace('\n', "\t1\n"));
                let mut needles = needles.clone();
                needles[0] = "p.txt:";
                fails(
                    &p.env
                        .run_line("rank --graph {} --preference {}", &[&p.s(), &pref]),
                    &needles,
                );
            }
        }
        // Ids that name no page in an impact table are counted, not taken for other pages.
        let other = p.write("other.tsv", "id\tclicks\n0\t1\n1\t9\n2\t9\n");
        let down = p.write("down.txt", "0\n");
        let (_, stderr) = super::common::ok_with_stderr(&p.env.run_line(
            "simulate --graph {} --seeds-file {} --policy rw --impact {}",
            &[&p.s(), &good, &other],
        ));
        assert!(
            stderr.contains("1 pages with impact; 2 rows name pages not in the graph"),
            "{stderr}"
        );
        for bad in ["-1\t3\n", "1.5\t3\n"] {
            let t = p.write("bad.tsv", &format!("id\tclicks\n0\t1\n{bad}"));
            p.env.fails(
                "frontier-rank --graph {} --downloaded {} --impact {} --out {}",
                &[&p.s(), &down, &t, &p.path("fr")],
                &["bad.tsv:3", "not a page id"],
            );
        }
    }
}

/// A deterministic web of `n` pages on which every page is reachable from page 0 unless it
/// is in `unlinked` (pages no link points to; they still link to others): a ring through the
/// linked pages and three chords from each page, distinct, no self-loop.
fn web_arcs(n: u32, unlinked: &[u32]) -> (String, usize) {
    let linked: Vec<u32> = (0..n).filter(|v| !unlinked.contains(v)).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut text = String::new();
    let mut arcs = 0;
    for v in 0..n {
        let next = linked[(linked.iter().position(|&w| w > v).unwrap_or(0)) % linked.len()];
        let mut succ = vec![next];
        for _ in 0..3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Preferential towards low ids, so some pages matter much more.
            let w = if x.is_multiple_of(3) {
                linked[(x >> 8) as usize % 16]
            } else {
                linked[(x >> 8) as usize % linked.len()]
            };
            if w != v && !succ.contains(&w) {
                succ.push(w);
            }
        }
        for w in succ {
            text.push_str(&format!("{v}\t{w}\n"));
            arcs += 1;
        }
    }
    (text, arcs)
}

/// A crawl of the served web at `proxy` from `seeds` that pops pages as the simulator does,
/// with `more` options (the policy, the delay, a budget); returns its stdout. One request at a
/// time: the fetch order is then the pop order. At one slot the crawl waits out a host's delay
/// rather than pop ahead, so the order does not depend on `--delay` (the default 1 s would make
/// a crawl of a few hundred pages take minutes). The simulator knows R, the pages reachable
/// from the seeds (here all `pages`), and takes K = ceil(R/72) and IECA's and FICA+'s R from
/// it; a crawl cannot know it and assumes 100,000 unless told (`--expected-pages`).
fn crawl_as_simulated(
    env: &Env,
    seeds: &Path,
    state: &Path,
    proxy: &str,
    pages: u32,
    more: &[&str],
) -> String {
    let line = "crawl --seeds {} --state {} --proxy {} --concurrency 1 --expected-pages {}";
    let mut args = words(line, &[&seeds, &state, &proxy, &pages.to_string()]);
    args.extend(more.iter().map(|s| s.to_string()));
    ok(&env.run(&args))
}

/// The page ids of a crawl's pop order (`http://hK.crawlrank.test/pV.html` → V).
fn crawled_ids(state: &Path) -> Vec<u32> {
    crawlrank_crawler::crawl_order(state)
        .unwrap()
        .iter()
        .map(|u| {
            let name = u.rsplit('/').next().unwrap();
            name.trim_start_matches('p')
                .trim_end_matches(".html")
                .parse()
                .unwrap_or_else(|_| panic!("not a page of the test web: {u}"))
        })
        .collect()
}

/// The policies a crawl can run without a search log (rw, rw-eg and learned need --impact).
const CRAWL_POLICIES: [&str; 10] = [
    "bfs",
    "random",
    "backlink",
    "indegree",
    "batch-pagerank",
    "partial-pagerank",
    "opic",
    "fica",
    "fica-plus",
    "ieca",
];

/// `crawlrank crawl` with its default options — sitemaps on among them — fetches a site that
/// has no sitemap in exactly the order `crawlrank simulate` gives, for every policy a crawl
/// can run without a search log (rw, rw-eg and learned need --impact: the library's
/// impact_aware_crawls_are_the_simulators covers them); --max-pages N fetches N pages.
#[test]
fn a_default_crawl_follows_the_simulators_order() {
    let env = Env::new();
    let n = 240;
    let (text, _) = web_arcs(n, &[]);
    let arcs = env.write("web.txt", &text);
    let web = Served::start(&env, &arcs);
    let proxy = format!("http://{}", web.addr);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let seed_ids = env.write("seed-ids.txt", "0\n");
    let policies = CRAWL_POLICIES;
    for p in crawlrank_frontier::PolicyKind::ALL {
        assert!(
            p.needs_impact() || policies.contains(&p.name()),
            "{} is not tested",
            p.name()
        );
    }
    let sim = env.path("sim");
    // --rng-seed 0: the crawl's default seed of the random policy (the simulator's is 42).
    env.ok(
        "simulate --graph {} --policy {} --seeds-file {} --out {} --save-orders --rng-seed 0",
        &[&arcs, &policies.join(","), &seed_ids, &sim],
    );
    let crawl = |policy: &str, state: &Path, delay: &str, extra: &[&str]| {
        let mut more = vec!["--policy", policy, "--delay", delay];
        more.extend_from_slice(extra);
        crawl_as_simulated(&env, &seeds, state, &proxy, n, &more)
    };
    for policy in policies {
        let expected: Vec<u32> = std::fs::read_to_string(sim.join(format!("{policy}.order")))
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!(expected.len(), n as usize, "{policy}");
        let state = env.path(&format!("state-{policy}"));
        let out = crawl(policy, &state, "0", &[]);
        assert!(
            out.contains(&format!("fetched pages     {n} (html {n}")),
            "{out}"
        );
        // The site's missing /sitemap.xml: one request, counted apart, no page.
        assert!(
            out.contains("sitemaps          1 requests, not pages (read 0, not found 1"),
            "{out}"
        );
        assert_eq!(crawled_ids(&state), expected, "{policy}");
    }
    // --max-pages N: N pages fetched, the 404 of /sitemap.xml not among them.
    let state = env.path("state-budget");
    let out = crawl("fica", &state, "0", &["--max-pages", "40"]);
    assert!(out.contains("fetched pages     40 (html 40"), "{out}");
    assert_eq!(crawled_ids(&state).len(), 40);
    // A delay between two requests to a host does not bend the order of a crawl of one slot:
    // it waits for the host instead of popping pages ahead of the one that waits.
    let fica: Vec<u32> = std::fs::read_to_string(sim.join("fica.order"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let state = env.path("state-delay");
    let out = crawl("fica", &state, "100", &["--max-pages", "60"]);
    assert!(out.contains("fetched pages     60 (html 60"), "{out}");
    assert_eq!(crawled_ids(&state), fica[..60], "fica with --delay 100");
}

/// With a real sitemap (`serve --sitemaps`: /sitemap.xml, an index naming a gzipped list of
/// the host's pages, and robots.txt's Sitemap: file), a default crawl finds the pages no link
/// reaches, fetches exactly --max-pages pages, keeps the sitemaps out of its link graph and
/// counts them apart. Its entries enter the frontier as seeds do, before the seed is
/// crawled: the order is the simulator's from the seed followed by the sitemap's entries
/// (`random` aside: it draws from the pages in the frontier when it pops, and the seed was
/// popped before the entries came).
#[test]
fn a_crawl_reads_a_real_sitemap_outside_its_budget_and_graph() {
    let env = Env::new();
    // Pages 1..7 of h0 (8 pages per host) are linked from nowhere: only the sitemap lists
    // them.
    let n = 160;
    let unlinked: Vec<u32> = (1..8).collect();
    let (text, arcs_total) = web_arcs(n, &unlinked);
    let arcs = env.write("web.txt", &text);
    let web = Served::start_with(&env, &arcs, &["--sitemaps"]);
    let proxy = format!("http://{}", web.addr);
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    // The seed, then the sitemap's entries in file order (the pages of h0).
    let seeds_and_entries = env.write("seed-ids.txt", "0\n1\n2\n3\n4\n5\n6\n7\n");
    let crawl = |state: &Path, extra: &[&str]| {
        let mut more = vec!["--delay", "0"];
        more.extend_from_slice(extra);
        crawl_as_simulated(&env, &seeds, state, &proxy, n, &more)
    };
    let state = env.path("budget");
    let out = crawl(&state, &["--max-pages", "25"]);
    assert!(out.contains("fetched pages     25 (html 25"), "{out}");
    assert_eq!(crawled_ids(&state).len(), 25);
    // The three sitemap files: requests of their own, not pages.
    assert!(
        out.contains("sitemaps          3 requests, not pages (read 3"),
        "{out}"
    );
    let policies: Vec<&str> = CRAWL_POLICIES
        .into_iter()
        .filter(|p| *p != "random")
        .collect();
    let sim = env.path("sim");
    env.ok(
        "simulate --graph {} --policy {} --seeds-file {} --out {} --save-orders",
        &[&arcs, &policies.join(","), &seeds_and_entries, &sim],
    );
    for policy in policies {
        // The whole site: every page, the unlinked ones too.
        let state = env.path(&format!("all-{policy}"));
        let out = crawl(&state, &["--policy", policy]);
        assert!(
            out.contains(&format!("fetched pages     {n} (html {n}")),
            "{out}"
        );
        let expected: Vec<u32> = std::fs::read_to_string(sim.join(format!("{policy}.order")))
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!(crawled_ids(&state), expected, "{policy}");
    }
    let state = env.path("all-fica");
    let st = state.to_str().unwrap();
    let status = env.ok("status --state {}", &[&st]);
    for (line, value) in [
        ("sitemaps fetched", 3),
        ("sitemaps read", 3),
        ("sitemap links", 2 * 8),
        ("sitemaps not found", 0),
    ] {
        let found = status
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{line} ")))
            .unwrap_or_else(|| panic!("no '{line}' in {status}"));
        assert!(found.trim_end().ends_with(&format!(" {value}")), "{found}");
    }
    // The link graph: the web's pages and arcs, no sitemap.
    let links = env.path("links.tsv");
    let out = env.ok("export --state {} --arcs {} --urls", &[&st, &links]);
    assert!(
        out.contains(&format!("{n} nodes, {arcs_total} arcs")),
        "{out}"
    );
    let links = std::fs::read_to_string(&links).unwrap();
    assert!(!links.contains("sitemap"), "a sitemap in the link graph");
    assert_eq!(links.lines().count(), arcs_total);
}

/// Provenance: `--version` names the commit, and every JSON output records the build, the
/// command line, every parameter with its defaults, the graph's checksum and the seeds by the
/// user's ids.
mod provenance {
    use super::common::{ok, words, Env};
    use super::testkit;
    use serde_json::Value;

    /// What the binary must report as its commit: the checkout's short HEAD, or `unknown`
    /// outside a git checkout.
    fn expected_commit() -> String {
        std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_owned())
            .unwrap_or_else(|| "unknown".into())
    }

    /// Page `v` of the ring is named `1000 + 7·v`: ids that are not 0..n.
    fn sparse_id(v: u32) -> u64 {
        1000 + 7 * v as u64
    }

    fn sparse_ring(env: &Env, name: &str, n: u32, chords: &[(u32, u32)]) -> String {
        let text: String = testkit::ring_with_chords(n, chords)
            .arcs
            .iter()
            .map(|&(s, d)| format!("{} {}\n", sparse_id(s), sparse_id(d)))
            .collect();
        env.write(name, &text).to_str().unwrap().to_owned()
    }

    fn json(path: &std::path::Path) -> Value {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
    }

    /// The checks every provenance record passes: the build, argv ending in `args`, the
    /// command.
    fn check_common<S: AsRef<str>>(p: &Value, command: &str, args: &[S]) {
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        assert_eq!(p["crawlrank"]["version"], env!("CARGO_PKG_VERSION"), "{p}");
        assert_eq!(p["crawlrank"]["commit"], expected_commit().as_str(), "{p}");
        assert_eq!(p["command"], command);
        let argv: Vec<&str> = p["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(argv.ends_with(&args), "{argv:?} does not end with {args:?}");
        assert!(p["time"].as_str().unwrap().ends_with('Z'), "{p}");
    }

    #[test]
    fn version_names_the_commit() {
        let env = Env::new();
        let out = env.ok("--version", &[]);
        let expected = format!(
            "crawlrank {} (commit {}",
            env!("CARGO_PKG_VERSION"),
            expected_commit()
        );
        assert!(out.starts_with(&expected), "{out:?} vs {expected:?}");
    }

    #[test]
    fn simulate_records_parameters_graph_checksum_and_seed_ids() {
        let env = Env::new();
        let graph = sparse_ring(&env, "ring.arcs", 40, &[(7, 3)]);
        let other = sparse_ring(&env, "other.arcs", 40, &[(11, 5)]);
        let seeds = env.write("s.seeds", &format!("{}\n{}\n", sparse_id(17), sparse_id(3)));
        let seeds = seeds.to_str().unwrap();
        let run = |graph: &str, out: &str| -> (Value, Vec<String>) {
            let out = env.path(out);
            let args = words(
                "simulate --graph {} --policy bfs,fica --seeds-file {} --out {} --save-orders",
                &[&graph, &seeds, &out],
            );
            ok(&env.run(&args));
            let summary = json(&out.join("summary.json"));
            let p = summary["provenance"].clone();
            check_common(&p, "simulate", &args);
            // The writer's own fields are all still there.
            assert_eq!(summary["seeds"], 2);
            assert_eq!(summary["policies"].as_array().unwrap().len(), 2);
            // orders.json: the same provenance beside the .order files.
            let orders = json(&out.join("orders.json"));
            assert_eq!(orders["provenance"], p);
            assert_eq!(orders["orders"]["fica"], "fica.order");
            let fica = std::fs::read_to_string(out.join("fica.order")).unwrap();
            let ids: Vec<String> = fica.lines().map(String::from).collect();
            (p, ids)
        };
        let (p, order) = run(&graph, "a");
        // Every parameter, given or defaulted.
        let params = &p["parameters"];
        assert_eq!(params["policy"], "bfs,fica");
        assert_eq!(params["batch"], Value::Null);
        assert_eq!(params["batch-pagerank-threshold"], "0.000001");
        assert_eq!(params["omega"], "0.8");
        assert_eq!(params["gamma"], "0");
        assert_eq!(params["rng-seed"], "42");
        assert_eq!(params["save-orders"], true);
        assert_eq!(params["compare-random"], false);
        assert!(params["cache"].is_string(), "{p}");
        let defaulted = p["defaulted"].as_array().unwrap();
        assert!(defaulted.contains(&"omega".into()), "{p}");
        assert!(!defaulted.contains(&"policy".into()), "{p}");
        // What no option states: K = ceil(R / 72) = 1 for 40 pages, FICA's β.
        assert_eq!(p["resolved"]["batch"], 1);
        assert_eq!(p["resolved"]["reachable"], 40);
        assert_eq!(p["resolved"]["fica_beta"], 0.1);
        // The seeds by the user's ids, in the file's order; the order file too.
        assert_eq!(
            p["seed_ids"],
            serde_json::json!([sparse_id(17), sparse_id(3)])
        );
        assert_eq!(order.len(), 40);
        assert_eq!(order[0], sparse_id(17).to_string());
        // The graph: its name and a checksum that a second run repeats and another graph does
        // not.
        assert_eq!(p["graph"]["basename"], "ring.arcs");
        let files = p["graph"]["files"].as_array().unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0]["bytes"], std::fs::metadata(&graph).unwrap().len());
        assert_eq!(files[0]["sampled"], false);
        assert_eq!(files[0]["xxh3_64"].as_str().unwrap().len(), 16);
        let (again, _) = run(&graph, "b");
        assert_eq!(again["graph"], p["graph"]);
        let (different, _) = run(&other, "c");
        assert_ne!(
            different["graph"]["files"][0]["xxh3_64"],
            p["graph"]["files"][0]["xxh3_64"]
        );
    }

    #[test]
    fn random_seeds_and_the_impact_file_are_recorded() {
        let env = Env::new();
        let graph = sparse_ring(&env, "ring.arcs", 60, &[(7, 3)]);
        let mut table = String::from("id\tviews\tclicks\n");
        for v in (0..60).step_by(4) {
            table.push_str(&format!("{}\t{}\t{}\n", sparse_id(v), v + 1, v % 3));
        }
        let impact = env.write("impact.tsv", &table);
        let out = env.path("sim");
        let args = words("simulate --graph {} --policy bfs,rw-eg --seeds 3 --impact {} --impact-column 2 --omega 0.5 --out {}", &[&graph, &impact, &out]);
        ok(&env.run(&args));
        let p = json(&out.join("summary.json"))["provenance"].clone();
        check_common(&p, "simulate", &args);
        assert_eq!(p["parameters"]["omega"], "0.5");
        assert_eq!(p["parameters"]["impact-column"], "2");
        assert_eq!(p["impact"]["column"], "clicks");
        assert_eq!(p["impact"]["file"]["bytes"], table.len());
        let seeds = p["seed_ids"].as_array().unwrap();
        assert_eq!(seeds.len(), 3);
        for s in seeds {
            let id = s.as_u64().unwrap();
            assert!(
                id >= 1000 && (id - 1000) % 7 == 0 && id < sparse_id(60),
                "{s}"
            );
        }
        // No orders asked for: no sidecar.
        assert!(!out.join("orders.json").exists());

        // frontier-rank: the impact column, the downloaded fraction and the BFS's seeds.
        let fr = env.path("fr");
        let args = words("frontier-rank --graph {} --downloaded-fraction 0.3 --seeds 2 --impact {} --impact-column views --method indegree,rw --out {}", &[&graph, &impact, &fr]);
        ok(&env.run(&args));
        let summary = json(&fr.join("summary.json"));
        let p = &summary["provenance"];
        check_common(p, "frontier-rank", &args);
        assert_eq!(p["parameters"]["downloaded-fraction"], "0.3");
        assert_eq!(p["parameters"]["omega"], "0.8");
        assert_eq!(p["parameters"]["bootstrap"], "20");
        assert_eq!(p["impact"]["column"], "views");
        assert_eq!(p["seed_ids"].as_array().unwrap().len(), 2);
        assert_eq!(p["graph"]["basename"], "ring.arcs");

        // A downloaded set from a file: its digest, and no seeds.
        let d: String = (0..20).map(|v| format!("{}\n", sparse_id(v))).collect();
        let downloaded = env.write("d.txt", &d);
        let fr = env.path("fr2");
        env.ok(
            "frontier-rank --graph {} --downloaded {} --impact {} --method indegree --out {}",
            &[&graph, &downloaded, &impact, &fr],
        );
        let p = json(&fr.join("summary.json"))["provenance"].clone();
        assert_eq!(p["downloaded"]["bytes"], d.len());
        assert_eq!(
            p["parameters"]["downloaded-fraction"],
            serde_json::Value::Null
        );
        assert!(p.get("seed_ids").is_none(), "{p}");
        assert_eq!(p["impact"]["column"], "views");
    }

    #[test]
    fn seeds_and_seeds_eval_record_theirs() {
        let env = Env::new();
        let graph = sparse_ring(&env, "ring.arcs", 50, &[(7, 3)]);
        let seeds = env.path("r.seeds");
        let args = words(
            "seeds --graph {} --count 4 --method random --out {}",
            &[&graph, &seeds],
        );
        ok(&env.run(&args));
        let cores = json(&env.path("r.seeds.cores.json"));
        check_common(&cores["provenance"], "seeds", &args);
        assert_eq!(cores["provenance"]["parameters"]["count"], "4");
        assert_eq!(cores["found"], 4);
        // seeds-eval reads the stamped record back, and records the seeds by the user's ids.
        let out = env.path("eval");
        let args = words(
            "seeds-eval --graph {} --seeds {} --distance-samples 5 --out {}",
            &[&graph, &seeds, &out],
        );
        ok(&env.run(&args));
        let p = json(&out.join("summary.json"))["provenance"].clone();
        check_common(&p, "seeds-eval", &args);
        let file_ids: Vec<u64> = std::fs::read_to_string(&seeds)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(p["seed_ids"], serde_json::json!(file_ids));
        assert!(file_ids.iter().all(|&id| id >= 1000), "{file_ids:?}");
        assert_eq!(p["parameters"]["random-seeds"], "42");
        assert_eq!(
            p["seeds_file"]["bytes"],
            std::fs::metadata(&seeds).unwrap().len()
        );
    }

    #[test]
    fn compared_seed_sets_each_record_their_own_seeds() {
        let env = Env::new();
        let graph = sparse_ring(&env, "ring.arcs", 40, &[(7, 3)]);
        let seeds = env.write("s.seeds", &format!("{}\n{}\n", sparse_id(5), sparse_id(30)));
        let out = env.path("cmp");
        env.ok("simulate --graph {} --policy bfs --seeds-file {} --compare-random --rng-seed 7 --out {}", &[&graph, &seeds, &out]);
        let file = json(&out.join("file/summary.json"));
        let random = json(&out.join("random/summary.json"));
        assert_eq!(
            file["provenance"]["seed_ids"],
            serde_json::json!([sparse_id(5), sparse_id(30)])
        );
        // The random set: as many pages, drawn with --rng-seed, named by the user's ids.
        let drawn = random["provenance"]["seed_ids"].as_array().unwrap();
        assert_eq!(drawn.len(), 2);
        assert!(drawn.iter().all(|s| (s.as_u64().unwrap() - 1000) % 7 == 0));
        assert_eq!(random["provenance"]["parameters"]["rng-seed"], "7");
        assert_eq!(random["seed_source"], "2 random, rng seed 7");
        assert_eq!(
            random["provenance"]["resolved"]["seed_source"],
            random["seed_source"]
        );
        assert_eq!(file["seed_source"], seeds.to_str().unwrap());
    }

    #[test]
    fn a_bvgraph_is_checksummed_by_its_graph_properties_and_ids() {
        let env = Env::new();
        let arcs = sparse_ring(&env, "ring.arcs", 30, &[(7, 3)]);
        let base = env.path("ring");
        env.ok("import {} --out {}", &[&arcs, &base]);
        let seeds = env.path("r.seeds");
        env.ok(
            "seeds --graph {} --count 2 --method random --out {}",
            &[&base, &seeds],
        );
        let cores = json(&env.path("r.seeds.cores.json"));
        let graph = &cores["provenance"]["graph"];
        assert_eq!(graph["basename"], "ring");
        let files = graph["files"].as_array().unwrap();
        let names: Vec<&str> = files.iter().map(|f| f["file"].as_str().unwrap()).collect();
        let expected: Vec<String> = ["graph", "properties", "ids"]
            .iter()
            .map(|e| format!("{}.{e}", base.display()))
            .collect();
        assert_eq!(names, expected);
        for f in files {
            let len = std::fs::metadata(f["file"].as_str().unwrap())
                .unwrap()
                .len();
            assert_eq!(f["bytes"], len, "{f}");
        }
    }
}

/// `score-order`: an order computed elsewhere, scored with the simulator's measures.
mod score_order {
    use super::common::{fails, ok, words, Env};
    use super::ring_with_chords;
    use std::path::Path;

    /// The lines of a tidy summary.csv for `policy`, under its header, without τ_b (an order
    /// from outside has no scores: its τ_b is that of its crawl positions, docs/algorithms.md
    /// §4.9).
    fn csv_of(csv: &str, policy: &str) -> String {
        let mut lines = csv.lines();
        let mut out = vec![lines.next().unwrap()];
        out.extend(lines.filter(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[1] == policy && f[7] != "tau_b"
        }));
        out.join("\n") + "\n"
    }

    /// The table row of `policy`: its name and the hot@ and mass@ cells (`cells` of them).
    fn row(table: &str, policy: &str, cells: usize) -> Vec<String> {
        let line = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(policy))
            .unwrap_or_else(|| panic!("no row {policy} in {table}"));
        line.split_whitespace()
            .take(1 + cells)
            .map(String::from)
            .collect()
    }

    /// Runs simulate with `seeds` (args) and --save-orders into `out`, then score-order on each
    /// policy's order with the same seeds, and checks every curve point is the same.
    fn reproduces(env: &Env, graph: &str, seeds: &[&str], policies: &[&str], out: &Path) {
        let dir = out.to_str().unwrap();
        let mut args = vec!["simulate", "--graph", graph, "--out", dir, "--save-orders"];
        let list = policies.join(",");
        args.extend(["--policy", &list]);
        args.extend(seeds);
        let table = ok(&env.run(&args));
        let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        for p in policies {
            let order = out.join(format!("{p}.order"));
            let scored = out.join(format!("{p}.scored"));
            let mut args = words(
                "score-order --graph {} --order {} --out {}",
                &[&graph, &order, &scored],
            );
            args.extend(seeds.iter().map(|s| s.to_string()));
            let mine = ok(&env.run(&args));
            // Named by the file: "<policy>.order" is the policy's own name.
            assert_eq!(
                row(&mine, p, 10),
                row(&table, p, 10),
                "{p}: {mine}\n{table}"
            );
            let scored_csv = std::fs::read_to_string(scored.join("summary.csv")).unwrap();
            assert_eq!(csv_of(&scored_csv, p), csv_of(&csv, p), "{p}");
            assert_eq!(scored_csv.lines().count(), 1 + 3 * 100 + 1);
            // The summary records what produced it, the order file by its digest.
            let json = std::fs::read_to_string(scored.join("summary.json")).unwrap();
            assert!(
                json.contains("\"provenance\"") && json.contains("\"order_file\""),
                "{json}"
            );
        }
    }

    #[test]
    fn a_simulated_order_scores_as_its_run() {
        let env = Env::new();
        // 0 → … with pages 200..210 unreachable from the ring (they link into it).
        let mut text = ring_with_chords(200, &[(7, 3)]);
        for v in 200..210 {
            text += &format!("{v} {}\n", v - 200);
        }
        let g = env.write("ring.txt", &text);
        let g = g.to_str().unwrap();
        let policies = ["fica", "opic", "bfs", "ieca", "batch-pagerank"];
        reproduces(
            &env,
            g,
            &["--seeds", "3", "--rng-seed", "5"],
            &policies,
            &env.path("rnd"),
        );
        let seeds = env.write("s.seeds", "17\n3\n");
        let seeds = seeds.to_str().unwrap();
        reproduces(
            &env,
            g,
            &["--seeds-file", seeds],
            &policies,
            &env.path("file"),
        );
        // Without seeds the order's first page is the only one: bfs from page 42 is scored as
        // simulate's bfs from that page.
        let one = env.write("one.seeds", "42\n");
        let one = one.to_str().unwrap();
        let out = env.path("one");
        let table = env.ok(
            "simulate --graph {} --policy bfs --seeds-file {} --out {} --save-orders",
            &[&g, &one, &out],
        );
        let order = out.join("bfs.order");
        let mine = env.ok(
            "score-order --graph {} --order {} --checkpoints 1,50,100",
            &[&g, &order],
        );
        assert!(mine.contains("R = 200 reachable"), "{mine}");
        assert!(mine.contains("the order's first page, 42"), "{mine}");
        let cells: Vec<_> = row(&mine, "bfs", 6);
        assert_eq!(cells[3], "1.000", "hot@100% is 1: {mine}"); // hot@1, hot@50, hot@100
        assert_eq!(cells[6], "1.000", "mass@100% is 1: {mine}");
        assert!(
            mine.contains("hot@50%") && !mine.contains("hot@15%"),
            "{mine}"
        );
        assert!(table.contains("hot@15%"));
    }

    #[test]
    fn a_simulated_order_scores_as_its_run_with_sparse_ids() {
        let p = super::user_ids_pair();
        let env = &p.0;
        let seeds = env.write("s.seeds", &format!("{}\n{}\n", p.2[17], p.2[3]));
        let seeds = seeds.to_str().unwrap();
        reproduces(
            env,
            p.1.to_str().unwrap(),
            &["--seeds-file", seeds],
            &["fica", "opic", "bfs"],
            &env.path("sparse"),
        );
        reproduces(
            env,
            p.1.to_str().unwrap(),
            &["--seeds", "4"],
            &["fica"],
            &env.path("sparse-rnd"),
        );
    }

    #[test]
    fn an_order_of_urls_scores_as_one_of_ids() {
        let env = Env::new();
        // a → b, b → a, b → c, c → d.
        let (base, _) = env.import_url_pairs(
            "http://a.test/ http://b.test/\n\
             http://b.test/ http://a.test/\n\
             http://b.test/ http://c.test/\n\
             http://c.test/ http://d.test/\n",
        );
        let g = base.to_str().unwrap();
        let score = |name: &str, text: &str| {
            let f = env.write(name, text);
            let out = env.path(&format!("{name}.out"));
            let table = env.ok(
                "score-order --graph {} --order {} --name x --out {}",
                &[&g, &f, &out],
            );
            (
                table,
                std::fs::read_to_string(out.join("summary.csv")).unwrap(),
            )
        };
        let by_url = score(
            "urls.order",
            "http://a.test/\nhttp://B.test:80/\nhttp://c.test/\nhttp://d.test/\n",
        );
        let by_id = score("ids.order", "0\n1\n2\n3\n");
        assert_eq!(by_url.1, by_id.1);
        assert!(by_url.0.contains("R = 4 reachable"), "{}", by_url.0);
        let f = env.write("bad.order", "http://a.test/\nhttp://e.test/\n");
        env.fails(
            "score-order --graph {} --order {}",
            &[&g, &f],
            &["bad.order:2", "http://e.test/ is not a page of the graph"],
        );
    }

    #[test]
    fn bad_orders_are_errors_naming_the_line() {
        let env = Env::new();
        // 0 → 1 → 2 → 3, 0 → 2; 4 → 0 (4 unreachable from 0).
        let g = env.write("g.txt", "0 1\n1 2\n2 3\n0 2\n4 0\n");
        let g = g.to_str().unwrap();
        let score = |name: &str, text: &str, extra: &[&str]| {
            let f = env.write(name, text);
            let mut args = vec!["score-order", "--graph", g, "--order", f.to_str().unwrap()];
            args.extend(extra);
            env.run(&args)
        };
        let good = ok(&score("good.order", "# from 0\n0\n2\n1\n3\n", &[]));
        assert!(good.contains("R = 4 reachable"), "{good}");
        fails(
            &score("dup.order", "0\n1\n\n1\n2\n3\n", &[]),
            &["dup.order:4", "page 1 is listed again (first at line 2)"],
        );
        fails(
            &score("absent.order", "0\n1\n9\n", &[]),
            &["absent.order:3", "9"],
        );
        fails(
            &score("text.order", "0\n1\ntwo\n", &[]),
            &["text.order:3", "two"],
        );
        fails(&score("neg.order", "0\n-1\n", &[]), &["neg.order:2"]);
        fails(
            &score("far.order", "0\n1\n2\n4\n3\n", &[]),
            &["far.order:4", "page 4 is not reachable from the seeds"],
        );
        fails(
            &score("jump.order", "0\n3\n1\n2\n", &[]),
            &[
                "jump.order:2",
                "page 3 is listed before any page listed earlier links to it",
            ],
        );
        // Allowed, and counted.
        let out = score("jump2.order", "0\n3\n1\n2\n", &["--allow-unlinked"]);
        let (table, stderr) = super::common::ok_with_stderr(&out);
        assert!(stderr.contains("1 pages of"), "{stderr}");
        assert!(table.contains("jump2"), "{table}");
        fails(
            &score("short.order", "0\n1\n2\n", &[]),
            &[
                "short.order lists 3 pages",
                "R = 4",
                "page 3 is one it misses",
            ],
        );
        fails(
            &score("empty.order", "# nothing\n\n", &[]),
            &["empty.order lists no pages"],
        );
        // With a seed that is not the first page: 1 then 0 from seeds {0, 1}.
        let seeds = env.write("two.seeds", "1\n0\n");
        ok(&score(
            "two.order",
            "1\n0\n2\n3\n",
            &["--seeds-file", seeds.to_str().unwrap()],
        ));
        fails(
            &score("two2.order", "1\n0\n2\n3\n", &[]),
            &[
                "two2.order:2",
                "page 0 is not reachable from the seeds (the order's first page, 1)",
            ],
        );
        fails(
            &score("c.order", "0\n2\n1\n3\n", &["--checkpoints", "0,5"]),
            &["1..=100"],
        );
        fails(
            &score("n.order", "0\n2\n1\n3\n", &["--name", "a,b"]),
            &["no comma"],
        );
    }
}

/// An `Env` with the 60-page graph of `user_ids` under sparse ids, and its ids.
fn user_ids_pair() -> (Env, std::path::PathBuf, Vec<u64>) {
    let env = Env::new();
    let n = 60u64;
    let id = |v: u64| 4_294_967_000 + 3 * v * v + v;
    let mut text = String::new();
    for v in 0..n {
        for u in [(v + 1) % n, (7 * v + 3) % n] {
            text += &format!("{} {}\n", id(v), id(u));
        }
    }
    let g = env.write("sparse.txt", &text);
    (env, g, (0..n).map(id).collect())
}

/// `simulate --beta`, `--delta-initial`, `--delta-slope` and `--checkpoints`.
mod simulate_parameters {
    use super::common::{fails, ok, Env};
    use super::ring_with_chords;

    fn orders(env: &Env, g: &str, out: &str, extra: &[&str]) -> (String, Vec<String>) {
        let dir = env.path(out);
        let table = ok(&env.run_with(
            "simulate --graph {} --policy fica,ieca,fica-plus,bfs --seeds 3 --out {} --save-orders",
            &[&g, &dir],
            extra,
        ));
        let read = |p: &str| std::fs::read_to_string(dir.join(format!("{p}.order"))).unwrap();
        let json = std::fs::read_to_string(dir.join("summary.json")).unwrap();
        (
            table,
            vec![
                read("fica"),
                read("ieca"),
                read("fica-plus"),
                read("bfs"),
                json,
            ],
        )
    }

    #[test]
    fn beta_and_delta_change_the_orders_and_their_defaults_do_not() {
        let env = Env::new();
        let g = env.write("ring.txt", &ring_with_chords(300, &[(7, 3), (13, 5)]));
        let g = g.to_str().unwrap();
        let (_, default) = orders(&env, g, "default", &[]);
        let explicit = [
            "--beta",
            "0.1",
            "--delta-initial",
            "0.35",
            "--delta-slope",
            "0.28",
        ];
        let (_, same) = orders(&env, g, "explicit", &explicit);
        assert_eq!(default[..4], same[..4]);
        assert!(default[4].contains("\"beta\": 0.1"), "{}", default[4]);
        assert!(
            default[4].contains("\"delta_initial\": 0.35"),
            "{}",
            default[4]
        );
        assert!(
            default[4].contains("\"delta_slope\": 0.28"),
            "{}",
            default[4]
        );

        let (_, beta) = orders(&env, g, "beta", &["--beta", "3"]);
        assert_ne!(beta[0], default[0], "fica's order does not depend on β");
        assert_ne!(beta[1], default[1], "ieca's order does not depend on β");
        assert_eq!(beta[3], default[3], "bfs has no β");
        assert!(beta[4].contains("\"beta\": 3.0"), "{}", beta[4]);

        let (_, delta) = orders(
            &env,
            g,
            "delta",
            &["--delta-initial", "0.9", "--delta-slope", "0.9"],
        );
        assert_eq!(delta[0], default[0], "fica has no δ");
        assert_ne!(delta[1], default[1], "ieca's order does not depend on δ");
        assert_ne!(
            delta[2], default[2],
            "fica-plus's order does not depend on δ"
        );

        for bad in [
            &["--beta", "0"][..],
            &["--beta=-1"],
            &["--beta", "NaN"],
            &["--beta", "inf"],
        ] {
            let mut args = vec!["simulate", "--graph", g, "--policy", "fica"];
            args.extend(bad);
            fails(&env.run(&args), &["must be a finite number > 0"]);
        }
        for (bad, needle) in [
            (&["--delta-initial", "1.5"][..], "δ must stay in [0, 1]"),
            (&["--delta-slope", "0.5"], "δ must stay in [0, 1]"),
            (&["--delta-slope=-0.7"], "δ must stay in [0, 1]"),
        ] {
            let mut args = vec!["simulate", "--graph", g, "--policy", "ieca"];
            args.extend(bad);
            fails(&env.run(&args), &[needle]);
        }
    }

    #[test]
    fn checkpoints_set_the_table_columns() {
        let env = Env::new();
        let g = env.write("ring.txt", &ring_with_chords(200, &[(7, 3)]));
        let g = g.to_str().unwrap();
        let (default, d) = orders(&env, g, "default", &[]);
        let header = |t: &str| -> Vec<String> {
            let line = t.lines().find(|l| l.starts_with("policy")).unwrap();
            line.split_whitespace().map(String::from).collect()
        };
        let h = header(&default);
        assert_eq!(
            h[1..6],
            ["hot@5%", "hot@10%", "hot@15%", "hot@25%", "hot@45%"]
        );
        let (custom, c) = orders(&env, g, "custom", &["--checkpoints", "50,2,100"]);
        let h = header(&custom);
        assert_eq!(
            h[1..7],
            [
                "hot@2%",
                "hot@50%",
                "hot@100%",
                "mass@2%",
                "mass@50%",
                "mass@100%"
            ]
        );
        assert_eq!(h[7], "tau_b");
        // The same crawls: only the columns differ, and at 100% every policy has all of R.
        assert_eq!(d[..4], c[..4]);
        let bfs = custom.lines().find(|l| l.starts_with("bfs ")).unwrap();
        let cells: Vec<_> = bfs.split_whitespace().collect();
        assert_eq!((cells[3], cells[6]), ("1.000", "1.000"), "{custom}");
        assert!(
            c[4].contains("\"percents\": [\n    2,\n    50,\n    100\n  ]"),
            "{}",
            c[4]
        );
        assert!(c[4].contains("\"50\":"), "{}", c[4]);
        // A repeated experiment reports the same checkpoints, as mean ± interval.
        let repeated = env.ok(
            "simulate --graph {} --policy bfs,fica --seeds 3 --repeat 2 --checkpoints 50,2,100",
            &[&g],
        );
        let line = repeated.lines().find(|l| l.starts_with("policy")).unwrap();
        assert!(
            line.contains("hot@2%") && line.contains("hot@100%") && !line.contains("hot@15%"),
            "{repeated}"
        );
        for bad in ["0", "101", "5,5", "x", ","] {
            env.fails(
                "simulate --graph {} --checkpoints {}",
                &[&g, &bad],
                &["--checkpoints"],
            );
        }
    }
}

/// `simulate --repeat N` / `--rng-seeds LIST`: repeated seed sets, intervals, paired tests.
mod simulate_repeat {
    use super::*;
    use serde_json::Value;

    /// `summary.json` without what differs between two runs of the same crawl (timings, memory).
    fn numbers(path: &Path) -> Value {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        // What produced the run (its command line, its time) is not one of its numbers.
        assert!(v.as_object_mut().unwrap().remove("provenance").is_some());
        for run in v["policies"].as_array_mut().unwrap() {
            let run = run.as_object_mut().unwrap();
            run.remove("crawl_seconds").unwrap();
            run.remove("peak_rss_bytes").unwrap();
        }
        v
    }

    /// The table's cells that do not depend on timing (policy to τ_b).
    fn table(stdout: &str) -> Vec<String> {
        stdout
            .lines()
            .filter(|l| !l.starts_with("wrote"))
            .map(|l| l.split_whitespace().take(12).collect::<Vec<_>>().join(" "))
            .collect()
    }

    fn simulate(env: &Env, graph: &Path, out: &str, extra: &[&str]) -> String {
        let out = env.path(out);
        let line = "simulate --graph {} --policy bfs,fica,batch-pagerank,opic,random,omniscient --seeds 3 --out {}";
        ok(&env.run_with(line, &[&graph, &out], extra))
    }

    #[test]
    fn repeat_1_is_the_single_run_bit_for_bit() {
        let env = Env::new();
        let g = env.write("g.txt", &ring_with_chords(400, &[(7, 3), (13, 5)]));
        let single = simulate(&env, &g, "single", &["--rng-seed", "7"]);
        let repeat = simulate(&env, &g, "repeat", &["--rng-seed", "7", "--repeat", "1"]);
        let listed = simulate(&env, &g, "listed", &["--rng-seeds", "7"]);
        let want = numbers(&env.path("single/summary.json"));
        assert_eq!(numbers(&env.path("repeat/summary.json")), want);
        assert_eq!(numbers(&env.path("listed/summary.json")), want);
        for dir in ["repeat", "listed"] {
            assert_eq!(
                std::fs::read(env.path(dir).join("summary.csv")).unwrap(),
                std::fs::read(env.path("single/summary.csv")).unwrap()
            );
        }
        assert_eq!(table(&repeat), table(&single));
        assert_eq!(table(&listed), table(&single));

        // Run i of --repeat N is the single run with rng seed --rng-seed + i.
        simulate(&env, &g, "three", &["--rng-seed", "6", "--repeat", "3"]);
        let three: Value =
            serde_json::from_str(&std::fs::read_to_string(env.path("three/summary.json")).unwrap())
                .unwrap();
        assert_eq!(three["rng_seeds"], serde_json::json!([6, 7, 8]));
        let mut second = three["runs"][1].clone();
        for run in second["policies"].as_array_mut().unwrap() {
            let run = run.as_object_mut().unwrap();
            run.remove("crawl_seconds").unwrap();
            run.remove("peak_rss_bytes").unwrap();
        }
        assert_eq!(second, want);
    }

    #[test]
    fn identical_crawls_tie_and_a_dominating_policy_wins_every_seed_set() {
        let env = Env::new();
        // A ring from one seed: the frontier never holds more than one page, so every policy
        // crawls the same order and they tie exactly in every seed set.
        let ring = env.write("ring.txt", &ring_with_chords(300, &[]));
        let out = env.path("ring");
        let stdout = env.ok(
            "simulate --graph {} --policy bfs,fica,opic --seeds 1 --repeat 6 --out {}",
            &[&ring, &out],
        );
        assert!(
            stdout.contains("fica vs opic: 0–0 (6 ties), p = 1.0000"),
            "{stdout}"
        );
        let paired = std::fs::read_to_string(out.join("paired.csv")).unwrap();
        let mut rows = 0;
        for line in paired.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            if f[1] == "tau_b" {
                continue; // final scores differ even when the orders do not
            }
            rows += 1;
            assert_eq!(&f[5..], ["6", "0", "0", "6", "1"], "{line}");
        }
        assert_eq!(
            rows,
            3 * 2 * 100,
            "3 pairs × throughput, mass × 100 checkpoints"
        );

        // omniscient against random on a graph whose PageRank is skewed (a ring, and every page
        // v links to v/2 and v/7: low ids collect the rank): omniscient wins all 8 seed sets at
        // 15% crawled, exact p = 2/2^8.
        let mut text = ring_with_chords(600, &[]);
        for v in 1..600 {
            text.push_str(&format!("{v} {}\n{v} {}\n", v / 2, v / 7));
        }
        let g = env.write("g.txt", &text);
        let out = env.path("dom");
        let stdout = env.ok("simulate --graph {} --policy random,omniscient,bfs --seeds 2 --rng-seeds 1,2,3,4,5,6,7,8 --baseline random --out {}", &[&g, &out]);
        assert!(
            stdout.contains("omniscient vs random: 8–0 (0 ties), p = 0.0078"),
            "{stdout}"
        );
        assert!(!stdout.contains("omniscient vs bfs"), "{stdout}");
        let paired = std::fs::read_to_string(out.join("paired.csv")).unwrap();
        assert!(paired.contains(",throughput,15,omniscient,random,8,8,0,0,0.0078125\n"));
        assert!(paired.lines().skip(1).all(|l| l.contains(",random,")));

        // The interval of omniscient's throughput at 15%: recomputed from the per-run rows of
        // the tidy summary.csv with t(0.975, 7) = 2.365.
        let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(csv.starts_with("graph,policy,rng_seed,seeds,reachable,percent,k,measure,value\n"));
        let v: Vec<f64> = csv
            .lines()
            .filter(|l| {
                l.contains(",omniscient,") && l.contains(",15,") && l.contains(",throughput,")
            })
            .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(v.len(), 8);
        let mean = v.iter().sum::<f64>() / 8.0;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 7.0).sqrt();
        let stats = std::fs::read_to_string(out.join("summary-stats.csv")).unwrap();
        let row = stats
            .lines()
            .find(|l| l.contains(",omniscient,15,throughput,"))
            .unwrap();
        let f: Vec<f64> = row.split(',').skip(4).map(|x| x.parse().unwrap()).collect();
        assert_eq!(f[0], 8.0);
        assert!(
            (f[1] - mean).abs() < 1e-12 && (f[2] - sd).abs() < 1e-12,
            "{row}"
        );
        let half = 2.365 * sd / 8f64.sqrt();
        assert!((f[3] - (mean - half)).abs() < 1e-12 && (f[4] - (mean + half)).abs() < 1e-12);
        // The table prints mean ± half-width; the plots draw the bands.
        assert!(
            stdout.contains(&format!("{mean:.3} ± {half:.3}")),
            "{stdout}"
        );
        let svg = std::fs::read_to_string(out.join("throughput.svg")).unwrap();
        assert!(svg.contains("<polygon") && svg.contains("8 seed sets"));
    }

    #[test]
    fn bad_repeats_are_clear_errors() {
        let env = Env::new();
        let g = env.write("g.txt", &ring_with_chords(50, &[(7, 3)]));
        let g = g.to_str().unwrap();
        let base = [
            "simulate", "--graph", g, "--policy", "bfs,fica", "--seeds", "2",
        ];
        let with = |extra: &[&str]| {
            let mut a = base.to_vec();
            a.extend_from_slice(extra);
            env.run(&a)
        };
        fails(&with(&["--repeat", "0"]), &["--repeat must be at least 1"]);
        fails(
            &with(&["--repeat", "3", "--baseline", "opic"]),
            &["--baseline opic is not among the policies", "bfs, fica"],
        );
        fails(&with(&["--baseline", "bfs"]), &["--baseline", "--repeat"]);
        fails(&with(&["--rng-seeds", "1,2,1"]), &["rng seed 1 twice"]);
        fails(&with(&["--rng-seeds", "1,x"]), &["x"]);
        fails(
            &with(&["--repeat", "2", "--rng-seeds", "1,2"]),
            &["--rng-seeds"],
        );
        let seeds = env.write("seeds.txt", "0\n");
        env.fails(
            "simulate --graph {} --seeds-file {} --repeat 2",
            &[&g, &seeds],
            &["--seeds-file", "random seeds"],
        );
        assert!(env.files().iter().all(|f| f == "g.txt" || f == "seeds.txt"));
    }
}

/// `crawl --max-hosts-per-domain`: the served web's hosts (`h0.crawlrank.test`, … eight pages
/// each) share one registrable domain, as a wildcard-DNS site's do; a crawl of its ring
/// stops at the third host, and says how many links it dropped. The options are in `--help`.
#[test]
fn crawl_caps_the_hosts_of_a_registrable_domain() {
    let env = Env::new();
    let arcs = env.write("ring.txt", &ring_with_chords(100, &[]));
    let web = Served::start(&env, &arcs);
    let help = env.ok("crawl --help", &[]);
    for option in [
        "--max-hosts-per-domain <N>",
        "--max-urls-per-domain <N>",
        "--max-urls <N>",
    ] {
        assert!(help.contains(option), "{help}");
    }
    let seeds = env.write("seeds.txt", "http://h0.crawlrank.test/p0.html\n");
    let state = env.path("state");
    let st = state.to_str().unwrap();
    let proxy = format!("http://{}", web.addr);
    let out = env.ok(
        "crawl --state {} --proxy {} --delay 0 --no-sitemaps --seeds {} --max-hosts-per-domain 3",
        &[&st, &proxy, &seeds],
    );
    assert!(out.contains("24 URLs discovered on 3 hosts"), "{out}");
    let status = env.ok("status --state {}", &[&st]);
    let dropped = status
        .lines()
        .find_map(|l| l.trim().strip_prefix("domain host cap links"))
        .map(|v| v.trim().to_string());
    assert_eq!(dropped.as_deref(), Some("1"), "{status}");
}

/// `crawlrank crawl --dns-server`: a direct crawl (no proxy) whose names are resolved by a
/// DNS server on loopback UDP (`crawlrank_testkit::DnsServer`). `site.test` (the seed's host,
/// 127.0.0.1, TTL 300 s) is asked once for robots.txt and both pages, each on a new connection;
/// `mute.test`, never answered, is given up after 3 lookups, counted in `dns`, and the crawl
/// ends.
#[test]
fn a_direct_crawl_resolves_names_with_the_given_dns_server() {
    use crawlrank_testkit::{DnsAnswer, DnsServer};
    use std::io::{BufRead, BufReader, Write};
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = http.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in http.incoming() {
            let Ok(conn) = conn else { continue };
            // The request line names the path; the rest of the head is read to its blank line,
            // so that closing the connection does not reset it under the answer.
            let mut head = BufReader::new(&conn).lines().map_while(Result::ok);
            let request = head.next().unwrap_or_default();
            head.take_while(|l| !l.is_empty()).for_each(drop);
            let body = match request.split(' ').nth(1).unwrap_or("") {
                "/" => format!("<a href=\"/a\">a</a> <a href=\"http://mute.test:{port}/y\">y</a>"),
                "/a" => "a".to_string(),
                _ => String::new(),
            };
            let status = if body.is_empty() {
                "404 Not Found"
            } else {
                "200 OK"
            };
            let _ = (&conn).write_all(
                format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    // `site.test` is 127.0.0.1 (TTL 300 s); every other name is never answered.
    let dns = DnsServer::start(
        &[("site.test", DnsAnswer::A(std::net::Ipv4Addr::LOCALHOST))],
        DnsAnswer::Silent,
    );
    let dns_addr = dns.addr();
    let env = Env::new();
    let seeds = env.write("seeds.txt", &format!("http://site.test:{port}/\n"));
    let state = env.path("state");
    let out = env.run_line(
        "crawl --seeds {} --state {} --dns-server {} --dns-timeout 1",
        &[&seeds, &state, &dns_addr.to_string()],
    );
    let (stdout, stderr) = common::ok_with_stderr(&out);
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("the frontier is empty"), "{said}");
    assert!(said.contains(": dns 1,"), "{said}");
    let asked = dns.asked();
    assert_eq!(asked.get("site.test"), Some(&1), "{asked:?}");
    // Asked (the resolver may send a lookup's query more than once), then given up: counted
    // in `dns` above, which a name that failed only with timeouts never was before.
    assert!(asked.get("mute.test").is_some_and(|&n| n >= 3), "{asked:?}");
}
