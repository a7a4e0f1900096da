//! End-to-end tests of the test web: real HTTP over loopback, with reqwest both as a proxy
//! client (absolute-form requests) and with an explicit `Host` header, plus raw sockets where
//! the exact bytes matter.

use crawlrank_graph::Csr;
use crawlrank_testkit::write_file;
use crawlrank_testweb::{
    max_in_flight_per_host, min_gap_per_host, robots_rules_from_arg, TestWeb, TestWebConfig,
};
use reqwest::redirect::Policy;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A small graph with self-loops, dangling nodes and unsorted-looking arcs.
fn graph(n: u32) -> Arc<Csr> {
    let mut arcs = Vec::new();
    for v in 0..n {
        for k in [1, 2, 7, 13] {
            if (v + k) % 5 != 0 {
                arcs.push((v, (v * k + 3) % n));
            }
        }
    }
    arcs.push((0, 0));
    Arc::new(Csr::from_arcs(n as usize, &arcs))
}

fn proxy_client(web: &TestWeb) -> reqwest::Client {
    reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(web.proxy_url()).unwrap())
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// The length of the body a GET of `url` through `c` returns, which must arrive whole: for the
/// tests that only size or count what the server sent.
pub(crate) async fn body_len(c: &reqwest::Client, url: impl reqwest::IntoUrl) -> usize {
    c.get(url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .len()
}

/// The text a GET of `url` through `c` returns, which must arrive whole.
async fn body_text(c: &reqwest::Client, url: impl reqwest::IntoUrl) -> String {
    c.get(url).send().await.unwrap().text().await.unwrap()
}

/// A test web over `graph(n)` that holds every answer for `latency`, on the current runtime.
async fn start_slow(n: u32, latency: Duration) -> TestWeb {
    let cfg = TestWebConfig {
        latency,
        ..Default::default()
    };
    TestWeb::start(graph(n), None, any_port(), cfg)
        .await
        .unwrap()
}

fn direct_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// The hrefs of `html` in document order, entity-decoded and resolved against `base`
/// (honouring neither `<base>` nor comments: the graph pages have neither).
fn links(html: &str, base: &str) -> Vec<String> {
    let base = url::Url::parse(base).unwrap();
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("href=") {
        rest = &rest[i + 5..];
        let q = rest.chars().next().unwrap();
        let raw = if q == '"' || q == '\'' {
            let end = rest[1..].find(q).unwrap();
            &rest[1..1 + end]
        } else {
            &rest[..rest.find([' ', '>']).unwrap()]
        };
        let decoded = raw
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        out.push(base.join(&decoded).unwrap().to_string());
    }
    out
}

async fn check_all_pages(web: &TestWeb, client: &reqwest::Client) {
    let g = web.graph().clone();
    for v in 0..g.num_nodes() as u32 {
        let url = web.url(v).to_owned();
        let resp = client.get(&url).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{url}");
        assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
        let html = resp.text().await.unwrap();
        assert!(html.contains(&format!("<title>crawlrank test page {v}</title>")));
        let got: Vec<u32> = links(&html, &url)
            .iter()
            .map(|u| web.node_of(u).unwrap_or_else(|| panic!("{u} on {url}")))
            .collect();
        assert_eq!(got, g.successors(v as usize), "links of {url}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_urls_via_proxy_and_host_header() {
    let web = TestWeb::start(graph(40), None, any_port(), TestWebConfig::default())
        .await
        .unwrap();
    assert_eq!(web.url(0), "http://h0.crawlrank.test/p0.html");
    assert_eq!(web.url(17), "http://h2.crawlrank.test/p17.html");
    assert_eq!(web.num_hosts(), 5);
    assert_eq!(
        web.node_of("http://H2.crawlrank.test:8080/p17.html#x"),
        Some(17)
    );
    assert_eq!(web.node_of("http://h1.crawlrank.test/p17.html"), None);
    assert_eq!(
        web.seed_urls(&[3, 1]),
        vec![web.url(3).to_owned(), web.url(1).to_owned()]
    );
    check_all_pages(&web, &proxy_client(&web)).await;

    // Origin-form request with a Host header (with and without port).
    let c = direct_client();
    for host in ["h2.crawlrank.test", "H2.crawlrank.test:1234"] {
        let r = c
            .get(format!("http://{}/p17.html", web.addr()))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let html = r.text().await.unwrap();
        assert!(html.contains("crawlrank test page 17"));
    }
    // The right path under the wrong host is not a page.
    let r = c
        .get(format!("http://{}/p17.html", web.addr()))
        .header("host", "h0.crawlrank.test")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    web.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graph_urls_with_fallbacks() {
    let urls: Vec<String> = [
        "HTTP://Example.COM/a/b.html",
        "http://example.com/a/c.html?x=1&y=\"2\"",
        "https://example.com/",
        "http://other.org/dir/",
        "",
        "not a url",
        "http://example.com/a/b.html",
        "mailto:x@y.z",
        "http://other.org:8080/dir/p'q<r>.html",
        "http://example.com/a/sub/d.html",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let n = urls.len() as u32;
    let mut arcs = Vec::new();
    for v in 0..n {
        for w in 0..n {
            if (v + 2 * w) % 3 != 1 {
                arcs.push((v, w));
            }
        }
    }
    let g = Arc::new(Csr::from_arcs(n as usize, &arcs));
    let web = TestWeb::start(g, Some(urls), any_port(), TestWebConfig::default())
        .await
        .unwrap();
    assert_eq!(web.url(0), "http://example.com/a/b.html");
    assert_eq!(web.url(4), "http://h0.crawlrank.test/p4.html");
    assert_eq!(web.url(5), "http://h0.crawlrank.test/p5.html");
    assert_eq!(
        web.url(6),
        "http://h0.crawlrank.test/p6.html",
        "duplicate of node 0"
    );
    assert_eq!(web.url(7), "http://h0.crawlrank.test/p7.html");
    assert_eq!(web.num_fallback_urls(), 4);
    assert_eq!(
        web.node_of("http://example.com/a/c.html?x=1&y=%222%22"),
        Some(1)
    );
    assert_eq!(
        web.node_of("http://example.com/"),
        Some(2),
        "scheme is ignored"
    );
    for v in 0..n {
        assert_eq!(web.node_of(web.url(v)), Some(v));
    }
    check_all_pages(&web, &proxy_client(&web)).await;
    web.shutdown().await;
}

#[tokio::test]
async fn robots_404_and_methods() {
    let cfg = TestWebConfig {
        robots: Some("Disallow: /private/\nCrawl-delay: 1".into()),
        ..Default::default()
    };
    let web = TestWeb::start(graph(10), None, any_port(), cfg)
        .await
        .unwrap();
    let c = proxy_client(&web);
    let r = c
        .get("http://h1.crawlrank.test/robots.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.text().await.unwrap(),
        "User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n"
    );
    for url in [
        "http://h1.crawlrank.test/nothing.html",
        "http://h1.crawlrank.test/p1.html",
        "http://unknown.test/p1.html",
        "http://unknown.test/robots.txt",
        "http://traps.crawlrank.test/",
    ] {
        assert_eq!(c.get(url).send().await.unwrap().status(), 404, "{url}");
    }
    // An https URL through the proxy is a CONNECT: refused, and nothing leaves loopback.
    assert!(c
        .get("https://h1.crawlrank.test/p1.html")
        .send()
        .await
        .is_err());
    let r = c.post(web.url(1)).send().await.unwrap();
    assert_eq!(r.status(), 405);
    let r = c.head(web.url(1)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    web.shutdown().await;

    let web = TestWeb::start(graph(10), None, any_port(), TestWebConfig::default())
        .await
        .unwrap();
    let robots = body_text(&proxy_client(&web), "http://h0.crawlrank.test/robots.txt").await;
    assert_eq!(robots, "User-agent: *\nDisallow:\n");
    web.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_rate_is_deterministic_and_retries_succeed() {
    let n = 400;
    let cfg = TestWebConfig {
        error_rate: 0.25,
        seed: 7,
        ..Default::default()
    };
    let web = TestWeb::start(graph(n), None, any_port(), cfg.clone())
        .await
        .unwrap();
    let c = proxy_client(&web);
    let mut errors = 0;
    for v in 0..n {
        let s = c.get(web.url(v)).send().await.unwrap().status().as_u16();
        assert_eq!(web.error_status(v, 0).unwrap_or(200), s, "node {v}");
        if s != 200 {
            assert!(s == 500 || s == 503);
            errors += 1;
        }
    }
    // Binomial(400, 0.25): mean 100, sd ~8.7.
    assert!((65..=135).contains(&errors), "{errors} errors");
    // Retrying the failed ones: attempt 1 is an independent draw.
    for v in 0..n {
        if web.error_status(v, 0).is_some() {
            let s = c.get(web.url(v)).send().await.unwrap().status().as_u16();
            assert_eq!(web.error_status(v, 1).unwrap_or(200), s);
        }
    }
    let log = web.log();
    assert!(log
        .iter()
        .filter(|e| e.attempt == 1)
        .all(|e| e.node.is_some()));
    web.shutdown().await;
    // Same seed, same draws; another seed, other draws.
    let other = TestWeb::start(
        graph(n),
        None,
        any_port(),
        TestWebConfig {
            seed: 8,
            ..cfg.clone()
        },
    )
    .await
    .unwrap();
    let same = TestWeb::start(graph(n), None, any_port(), cfg)
        .await
        .unwrap();
    assert!((0..n).all(|v| same.error_status(v, 0) == web.error_status(v, 0)));
    assert!((0..n).any(|v| other.error_status(v, 0) != web.error_status(v, 0)));
    let cfg = TestWebConfig {
        error_rate: 1.0,
        ..Default::default()
    };
    let all = TestWeb::start(graph(5), None, any_port(), cfg)
        .await
        .unwrap();
    assert_ne!(
        proxy_client(&all)
            .get(all.url(1))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        proxy_client(&all)
            .get("http://h0.crawlrank.test/robots.txt")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test]
async fn latency_is_asynchronous() {
    // A single-threaded runtime: 8 concurrent requests only finish in ~1 latency if the
    // server sleeps without blocking.
    let web = start_slow(16, Duration::from_millis(200)).await;
    let c = proxy_client(&web);
    let t = Instant::now();
    let futs: Vec<_> = (0..8).map(|v| c.get(web.url(v)).send()).collect();
    let mut handles = Vec::new();
    for f in futs {
        handles.push(tokio::spawn(f));
    }
    for h in handles {
        assert_eq!(h.await.unwrap().unwrap().status(), 200);
    }
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_millis(1200), "{took:?}");
    for e in web.log() {
        assert!(e.finish - e.arrival >= Duration::from_millis(200));
    }
    web.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_records_every_request() {
    let web = TestWeb::start(graph(24), None, any_port(), TestWebConfig::default())
        .await
        .unwrap();
    let c = proxy_client(&web);
    let t0 = Instant::now();
    let mut sizes = Vec::new();
    for v in [3u32, 4, 11, 3] {
        sizes.push(body_len(&c, web.url(v)).await as u64);
    }
    body_len(&c, "http://h1.crawlrank.test/missing").await;
    let log = web.log();
    assert_eq!(log.len(), 5);
    for (e, (v, size)) in log.iter().zip([3u32, 4, 11, 3].iter().zip(&sizes)) {
        assert_eq!(e.node, Some(*v));
        assert_eq!(e.status, 200);
        assert_eq!(e.bytes, *size);
        assert!(e.complete);
        assert_eq!(e.host, format!("h{}.crawlrank.test", v / 8));
        assert_eq!(e.path, format!("/p{v}.html"));
        assert!(e.arrival >= t0 && e.finish >= e.arrival);
    }
    assert_eq!((log[3].attempt, log[0].attempt), (1, 0));
    assert_eq!(
        (log[4].status, log[4].node, log[4].path.as_str()),
        (404, None, "/missing")
    );
    // A sequential client: one request in flight per host, in order.
    assert!(max_in_flight_per_host(&log).values().all(|&m| m == 1));
    assert!(min_gap_per_host(&log).contains_key("h0.crawlrank.test"));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log.tsv");
    web.write_log(&p).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .contains("\th0.crawlrank.test\t/p3.html\t200\t"));
    web.clear_log();
    assert!(web.log().is_empty());
    // Concurrent requests to one host overlap in the log.
    let slow = start_slow(8, Duration::from_millis(100)).await;
    let c = proxy_client(&slow);
    let (a, b) = tokio::join!(c.get(slow.url(1)).send(), c.get(slow.url(2)).send());
    a.unwrap();
    b.unwrap();
    assert_eq!(max_in_flight_per_host(&slow.log())["h0.crawlrank.test"], 2);
    web.shutdown().await;
    slow.shutdown().await;
}

fn raw_get(addr: SocketAddr, request: &str) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    out
}

#[test]
fn blocking_helper_and_raw_requests() {
    let web =
        TestWeb::start_blocking(graph(12), None, any_port(), TestWebConfig::default()).unwrap();
    let resp = raw_get(web.addr(), "GET http://h1.crawlrank.test/p9.html HTTP/1.1\r\nHost: h1.crawlrank.test\r\nConnection: close\r\n\r\n");
    let text = String::from_utf8(resp).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("crawlrank test page 9"));
    let resp = raw_get(
        web.addr(),
        "GET /p9.html HTTP/1.1\r\nHost: h1.crawlrank.test\r\nConnection: close\r\n\r\n",
    );
    assert!(String::from_utf8(resp)
        .unwrap()
        .contains("crawlrank test page 9"));
    // No host at all (HTTP/1.0 without Host): 400.
    let resp = raw_get(web.addr(), "GET /p9.html HTTP/1.0\r\n\r\n");
    assert!(String::from_utf8(resp).unwrap().starts_with("HTTP/1.0 400"));
    web.shutdown_blocking();
    web.shutdown_blocking();
    assert_eq!(web.log().len(), 3);
    assert!(
        TcpStream::connect(web.addr()).is_err(),
        "still listening after shutdown"
    );
}

#[tokio::test]
async fn bad_input_is_an_error() {
    let g = graph(4);
    let bad = |cfg: TestWebConfig| async move {
        TestWeb::start(graph(4), None, any_port(), cfg)
            .await
            .err()
            .unwrap()
            .to_string()
    };
    let defaults = TestWebConfig::default;
    for (cfg, want) in [
        (
            TestWebConfig {
                error_rate: 1.5,
                ..defaults()
            },
            "error rate",
        ),
        (
            TestWebConfig {
                error_rate: f64::NAN,
                ..defaults()
            },
            "error rate",
        ),
        (
            TestWebConfig {
                pages_per_host: 0,
                ..defaults()
            },
            "pages per host",
        ),
        (
            TestWebConfig {
                robots: Some("Disallow /x".into()),
                ..defaults()
            },
            "no ':'",
        ),
    ] {
        let e = bad(cfg).await;
        assert!(e.contains(want), "expected '{want}' in: {e}");
    }
    let e = TestWeb::start(
        g.clone(),
        None,
        "10.1.2.3:80".parse().unwrap(),
        TestWebConfig::default(),
    )
    .await
    .err()
    .unwrap();
    assert!(e.to_string().contains("loopback"), "{e}");
    let e = TestWeb::start(
        g.clone(),
        Some(vec!["http://a.b/".into()]),
        any_port(),
        TestWebConfig::default(),
    )
    .await
    .err()
    .unwrap();
    assert!(e.to_string().contains("4 nodes but 1 URLs"), "{e}");
    let web = TestWeb::start(g.clone(), None, any_port(), TestWebConfig::default())
        .await
        .unwrap();
    let e = TestWeb::start(g.clone(), None, web.addr(), TestWebConfig::default())
        .await
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("cannot listen on"), "{e:#}");
    let e = TestWeb::start_blocking(g, None, web.addr(), TestWebConfig::default())
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("cannot listen on"), "{e:#}");

    // --robots: rules, a file, a missing file, a bad file.
    assert_eq!(
        robots_rules_from_arg("Disallow: /a/\\nDisallow: /b/").unwrap(),
        "Disallow: /a/\nDisallow: /b/"
    );
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(dir.path(), "robots.txt", "User-agent: *\nDisallow: /x/\n");
    assert_eq!(
        robots_rules_from_arg(f.to_str().unwrap()).unwrap(),
        "User-agent: *\nDisallow: /x/\n"
    );
    assert!(
        robots_rules_from_arg(dir.path().join("missing.txt").to_str().unwrap())
            .unwrap_err()
            .to_string()
            .contains("no such file")
    );
    write_file(dir.path(), "robots.txt", "this is not robots\n");
    assert!(format!(
        "{:#}",
        robots_rules_from_arg(f.to_str().unwrap()).unwrap_err()
    )
    .contains("no ':'"));
    write_file(dir.path(), "robots.txt", b"Disallow: \xff\n");
    assert!(robots_rules_from_arg(f.to_str().unwrap()).is_err());
}

fn trap_cfg() -> TestWebConfig {
    TestWebConfig {
        traps: true,
        trap_link_nodes: vec![0],
        huge_bytes: 3_000_000,
        slow_delay: Duration::from_secs(3),
        shutdown_grace: Duration::from_millis(200),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traps_behave_as_documented() {
    let web = TestWeb::start(graph(20), None, any_port(), trap_cfg())
        .await
        .unwrap();
    let c = proxy_client(&web);
    let index = web.traps_url().unwrap();
    assert_eq!(index, "http://traps.crawlrank.test/");
    // Node 0 links to the index after its successors; node 1 does not.
    let html = body_text(&c, web.url(0)).await;
    let l = links(&html, web.url(0));
    assert_eq!(l.last().unwrap(), &index);
    assert_eq!(l.len(), web.graph().successors(0).len() + 1);
    let html = body_text(&c, web.url(1)).await;
    assert_eq!(
        links(&html, web.url(1)).len(),
        web.graph().successors(1).len()
    );

    let get = |path: &str| c.get(format!("http://traps.crawlrank.test{path}")).send();
    let text = async |path: &str| get(path).await.unwrap().text().await.unwrap();
    let index_links = links(&text("/").await, &index);
    assert!(index_links.contains(&"http://traps.crawlrank.test/r301/19".to_owned()));
    assert!(index_links.contains(&"http://traps.crawlrank.test/grow?s=x".to_owned()));

    for (path, status, page) in [("/r301/19", 301, 19), ("/r302/10", 302, 10)] {
        let r = get(path).await.unwrap();
        let location = r.headers()["location"].to_str().unwrap();
        assert_eq!(
            (r.status().as_u16(), location),
            (status, web.url(page)),
            "{path}"
        );
    }
    assert_eq!(get("/r301/20").await.unwrap().status(), 404);
    for (path, location) in [
        ("/r-relative", "/found/relative-redirect"),
        ("/redirect-loop/a", "/redirect-loop/b"),
        ("/redirect-loop/b", "/redirect-loop/a"),
        ("/chain/2", "/chain/1"),
    ] {
        let r = get(path).await.unwrap();
        assert_eq!(r.headers()["location"], location, "{path}");
    }
    assert_eq!(get("/chain/0").await.unwrap().status(), 200);

    // Spider traps: always one level deeper / one character longer.
    let url = "http://traps.crawlrank.test/trap/a/b/";
    let l = links(&text("/trap/a/b/").await, url);
    assert_eq!(l, vec![format!("{url}a/"), format!("{url}b/")]);
    let l = links(
        &text("/calendar?day=41").await,
        "http://traps.crawlrank.test/calendar?day=41",
    );
    assert_eq!(l, vec!["http://traps.crawlrank.test/calendar?day=42"]);
    let l = links(
        &text("/grow?s=xx").await,
        "http://traps.crawlrank.test/grow?s=xx",
    );
    assert_eq!(l, vec!["http://traps.crawlrank.test/grow?s=xxx"]);

    // Huge: exactly huge_bytes, streamed, link at the tail.
    let r = get("/huge.html").await.unwrap();
    let len = r.content_length().unwrap();
    let body = r.bytes().await.unwrap();
    assert_eq!(body.len() as u64, len);
    assert!(
        body.len() as u64 >= 3_000_000 && body.len() < 3_000_000 + 64 * 1024,
        "{}",
        body.len()
    );
    assert!(String::from_utf8_lossy(&body[body.len() - 100..]).contains("/canary/huge-tail"));

    // Slow: exceeds a client timeout; the abandoned request is still logged.
    let t = Instant::now();
    let r = c
        .get("http://traps.crawlrank.test/slow.html")
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(r.unwrap_err().is_timeout());
    assert!(t.elapsed() < Duration::from_secs(2));

    let r = get("/doc.pdf").await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/pdf");
    assert!(r.bytes().await.unwrap().starts_with(b"%PDF-"));
    let r = get("/bad-utf8.html").await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
    let body = r.bytes().await.unwrap();
    assert!(std::str::from_utf8(&body).is_err());
    assert!(String::from_utf8_lossy(&body).contains("href=\"/found/bad-utf8\""));
    let html = text("/malformed.html").await;
    assert!(
        html.contains("<a href=/found/malformed-unquoted>")
            && html.contains("<!-- <a href=\"/canary/comment\">")
    );
    let html = text("/base/page.html").await;
    assert!(html.contains("<base href=\"http://traps.crawlrank.test/found/\">"));
    assert!(text("/nofollow.html").await.contains("rel=\"nofollow\""));
    assert!(text("/meta-nofollow.html")
        .await
        .contains("content=\"nofollow\""));
    assert!(text("/canonical.html?sessionid=42")
        .await
        .contains("rel=\"canonical\""));
    assert_eq!(get("/flaky.html").await.unwrap().status(), 503);
    assert_eq!(get("/flaky.html").await.unwrap().status(), 200);
    assert_eq!(get("/status/410").await.unwrap().status(), 410);
    let robots = text("/robots.txt").await;
    assert_eq!(
        robots,
        "User-agent: *\nDisallow: /disallowed/\n\nUser-agent: *\nDisallow:\n"
    );
    let cfg = TestWebConfig {
        robots: Some("Crawl-delay: 1".into()),
        ..trap_cfg()
    };
    let web2 = TestWeb::start(graph(3), None, any_port(), cfg)
        .await
        .unwrap();
    let robots = body_text(
        &proxy_client(&web2),
        "http://traps.crawlrank.test/robots.txt",
    )
    .await;
    assert_eq!(
        robots,
        "User-agent: *\nDisallow: /disallowed/\nCrawl-delay: 1\n"
    );
    web2.shutdown().await;

    // The expectations name real pages: every must-fetch URL answers 200 (graph pages and
    // /found/…), every must-not-fetch one exists or is the base-ignored 404.
    let exp = web.trap_expectations();
    assert!(
        exp.must_fetch.contains(&web.url(19).to_owned())
            && exp.must_fetch.contains(&web.url(10).to_owned())
    );
    for u in &exp.must_fetch {
        assert_eq!(c.get(u).send().await.unwrap().status(), 200, "{u}");
    }
    for u in &exp.must_not_fetch {
        let s = c.get(u).send().await.unwrap().status();
        assert!(s == 200 || u.ends_with("/base/based"), "{u}: {s}");
    }
    assert_eq!(exp.bounded_prefixes.len(), 8);

    web.shutdown().await;
    let log = web.log();
    let slow = log
        .iter()
        .find(|e| e.path == "/slow.html")
        .expect("slow request logged");
    assert!(!slow.complete);
    let huge = log.iter().find(|e| e.path == "/huge.html").unwrap();
    assert!(huge.complete && huge.bytes >= 3_000_000);
}

#[tokio::test]
async fn shutdown_cuts_slow_responses_after_the_grace() {
    let web = TestWeb::start(graph(4), None, any_port(), trap_cfg())
        .await
        .unwrap();
    let c = proxy_client(&web);
    let req =
        tokio::spawn(async move { c.get("http://traps.crawlrank.test/slow.html").send().await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    web.shutdown().await;
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(req.await.unwrap().is_err());
    assert_eq!(web.log()[0].status, 0, "the head was never sent");
}

fn https_client(web: &TestWeb, trust: bool) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(web.proxy_url()).unwrap())
        .redirect(Policy::none())
        .tls_built_in_root_certs(false);
    if trust {
        let pem = web.ca_pem().expect("TLS is on");
        b = b.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap());
    }
    b.build().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_through_connect_tunnels() {
    let cfg = TestWebConfig {
        tls: true,
        ..TestWebConfig::default()
    };
    let urls: Vec<String> = ["http://example.com/a.html", "https://other.org/", ""]
        .iter()
        .map(|s| s.to_string())
        .chain((3..24).map(|_| String::new()))
        .collect();
    let g = graph(24);
    let web = TestWeb::start(g.clone(), Some(urls), any_port(), cfg.clone())
        .await
        .unwrap();
    assert_eq!(web.url(0), "https://example.com/a.html");
    assert_eq!(web.url(1), "https://other.org/");
    assert_eq!(web.url(2), "https://h0.crawlrank.test/p2.html");
    assert_eq!(web.node_of("http://example.com/a.html"), Some(0));
    // Every page, over TLS, with links in https.
    check_all_pages(&web, &https_client(&web, true)).await;
    let log = web.log();
    assert_eq!(log.len(), 24, "CONNECTs are not logged");
    assert!(log.iter().all(|e| e.tls && e.status == 200));
    let (opened, failed) = web.tunnels();
    assert!((1..=24).contains(&opened), "{opened} tunnels");
    assert_eq!(failed, 0);
    // Plain proxied http still works beside the tunnels (and is logged as such).
    let r = proxy_client(&web)
        .get("http://h0.crawlrank.test/p2.html")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(!web.log().last().unwrap().tls);

    // A client that does not trust the test CA fails its handshake: no page is served.
    web.clear_log();
    let err = https_client(&web, false)
        .get(web.url(3))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect() || err.is_request(), "{err:?}");
    assert!(web.log().is_empty());
    // The server sees the failure when the client's alert arrives, maybe after `send` returned.
    let deadline = Instant::now() + Duration::from_secs(5);
    while web.tunnels().1 == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(web.tunnels().1, 1);

    // The CA is written atomically, and is a new one per server.
    let dir = tempfile::tempdir().unwrap();
    let pem_path = dir.path().join("ca.pem");
    web.write_ca_pem(&pem_path).unwrap();
    assert_eq!(
        std::fs::read_to_string(&pem_path).unwrap(),
        web.ca_pem().unwrap()
    );
    let other = TestWeb::start(g, None, any_port(), cfg).await.unwrap();
    assert_ne!(other.ca_pem(), web.ca_pem());
    // Trusting another server's CA is not enough.
    let wrong = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(other.proxy_url()).unwrap())
        .tls_built_in_root_certs(false)
        .add_root_certificate(
            reqwest::Certificate::from_pem(web.ca_pem().unwrap().as_bytes()).unwrap(),
        )
        .build()
        .unwrap();
    assert!(wrong.get(other.url(0)).send().await.is_err());
    other.shutdown().await;
    web.shutdown().await;

    // Without TLS there is no CA to write.
    let plain = TestWeb::start(graph(3), None, any_port(), TestWebConfig::default())
        .await
        .unwrap();
    assert!(plain.ca_pem().is_none());
    assert!(plain.write_ca_pem(&pem_path).is_err());
    plain.shutdown().await;
}

/// The broken-answer trap hosts answer as crate::broken documents, byte for byte on the raw
/// connection, after a well-formed robots.txt on the same connection; each answer is logged.
#[test]
fn broken_answer_hosts_answer_as_documented() {
    let web = TestWeb::start_blocking(graph(2), None, any_port(), trap_cfg()).unwrap();
    // robots.txt (kept alive), then `/` on the same connection: what the host sends, read
    // until it closes the connection, 200,000 bytes came, or (an answer kept alive) `until`.
    let exchange = |name: &str, until: &str| -> (Vec<u8>, Vec<u8>) {
        let host = format!("{name}.traps.crawlrank.test");
        let mut s = TcpStream::connect(web.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let get = |p: &str| format!("GET http://{host}{p} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        s.write_all(get("/robots.txt").as_bytes()).unwrap();
        let mut robots = Vec::new();
        let mut b = [0u8; 1];
        while !(robots.ends_with(b"not found\n")) {
            assert_eq!(s.read(&mut b).unwrap(), 1, "{name}: robots.txt cut");
            robots.push(b[0]);
        }
        s.write_all(get("/").as_bytes()).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        while out.len() < 200_000 && (until.is_empty() || !out.ends_with(until.as_bytes())) {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
        (robots, out)
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for name in crawlrank_testweb::trap_hosts::BROKEN_HOSTS {
        let until = match name {
            "bad-status" => "</body></html>\n",
            "bad-chunk" => "0\r\n\r\n",
            _ => "",
        };
        let (robots, out) = exchange(name, until);
        assert!(
            text(&robots).starts_with("HTTP/1.1 404 Not Found\r\n"),
            "{name}"
        );
        let out = text(&out);
        match name {
            "oversize-header" => {
                assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{name}");
                assert!(out.len() >= 200_000 && !out.contains("\r\n\r\n"), "{name}");
            }
            "bad-status" => assert!(out.starts_with("HTTP/1.1 2x0 OK\r\n"), "{name}"),
            "bad-chunk" => assert!(out.contains("\r\nzz\r\n"), "{name}"),
            "short-body" | "reset-body" => {
                assert!(out.contains("Content-Length: 100000\r\n\r\n"), "{name}");
                let body = &out[out.find("\r\n\r\n").unwrap() + 4..];
                assert_eq!(body.len(), 1000, "{name}");
            }
            "cut-head" => assert_eq!(out, "HTTP/1.1 200 OK\r\nContent-Ty", "{name}"),
            "endless-body" => {
                assert!(out.contains("Transfer-Encoding: chunked"), "{name}");
                assert!(out.len() >= 200_000, "{name}");
            }
            // The second request of a connection: closed before it is read, not one byte.
            "close-idle" => assert_eq!(out, "", "{name}"),
            _ => unreachable!("{name}"),
        }
    }
    web.shutdown_blocking();
    let log = web.log();
    for name in crawlrank_testweb::trap_hosts::BROKEN_HOSTS {
        let host = format!("{name}.traps.crawlrank.test");
        let paths: Vec<&str> = log
            .iter()
            .filter(|e| e.host == host)
            .map(|e| e.path.as_str())
            .collect();
        // close-idle never read its second request: it is not in the log.
        let expected: &[&str] = if name == "close-idle" {
            &["/robots.txt"]
        } else {
            &["/robots.txt", "/"]
        };
        assert_eq!(paths, expected, "{name}");
        for e in log.iter().filter(|e| e.host == host) {
            assert!(e.arrival <= e.finish, "{name}");
        }
    }
}
