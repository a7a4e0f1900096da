//! The dashboard in a real browser: Debian's headless Chromium, driven through chromedriver
//! (WebDriver, by `fantoccini`), opens the page of a crawl of the local test web while it
//! runs, and sees its numbers appear and move, its tables fill and no console error.
//!
//! Needs `chromium` and `chromium-driver` (Debian packages; `.ci/run` installs them on CI).
//! Without them the test fails with a clear message when `CI=true`, and skips with one
//! otherwise. With `CRAWLRANK_SCREENSHOT=1` it also writes `docs/img/dashboard.png`.

use crate::common::serve_loopback;
use crawlrank_crawler::{crawl, CrawlConfig, Resources};
use crawlrank_dashboard::DashboardState;
use crawlrank_frontier::PolicyKind;
use crawlrank_graph::Csr;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The first of `candidates` (or `$var`) that exists.
fn find(var: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// Chromium and chromedriver, or why the test cannot run.
fn browser() -> Result<(PathBuf, PathBuf), String> {
    let chromium = find(
        "CHROMIUM",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    )
    .ok_or("no Chromium (apt-get install chromium, or set CHROMIUM)")?;
    let driver = find("CHROMEDRIVER", &["/usr/bin/chromedriver"])
        .ok_or("no chromedriver (apt-get install chromium-driver, or set CHROMEDRIVER)")?;
    Ok((chromium, driver))
}

/// chromedriver on a free loopback port; killed (it is our child) when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start(path: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on {addr} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Driver { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// chromedriver's browser log (`POST /session/{id}/se/log`, type `browser`): console
/// messages, uncaught exceptions and failed loads since the last call.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({"type": "browser"}).to_string()),
        )
    }
}

/// A web of `n` pages on which every page is reachable from page 0 (a binary tree) plus
/// some cross links, so a crawl has a frontier worth showing.
fn web_graph(n: u32) -> Csr {
    let mut arcs = Vec::new();
    for v in 0..n {
        for w in [2 * v + 1, 2 * v + 2, (v * 7 + 3) % n, (v * 13 + 5) % n] {
            if w < n && w != v {
                arcs.push((v, w));
            }
        }
    }
    arcs.sort_unstable();
    arcs.dedup();
    Csr::from_arcs(n as usize, &arcs)
}

/// Runs `js` in the page.
async fn js(c: &Client, js: &str) -> Result<Value, String> {
    c.execute(js, vec![])
        .await
        .map_err(|e| format!("cannot run {js:?} in the page: {e}"))
}

/// The number a card shows (`1,234` → 1234); `None` while it shows `–`.
async fn card(c: &Client, id: &str) -> Result<Option<f64>, String> {
    let v = js(
        c,
        &format!("return document.getElementById('{id}').textContent"),
    )
    .await?;
    Ok(v.as_str().and_then(|s| s.replace(',', "").parse().ok()))
}

/// Waits (at most `limit`) until the card `id` shows a number above `floor`; returns it.
async fn wait_above(c: &Client, id: &str, floor: f64, limit: Duration) -> Result<f64, String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = card(c, id).await? {
            if v > floor {
                return Ok(v);
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the page's '{id}' did not rise above {floor} within {limit:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The URLs a table shows.
async fn rows(c: &Client, table: &str) -> Result<Vec<String>, String> {
    let script = format!(
        "return Array.from(document.querySelectorAll('#{table} tbody td.url')).map(td => td.textContent)"
    );
    let v = js(c, &script).await?;
    let urls = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(String::from));
    Ok(urls.map(Iterator::collect).unwrap_or_default())
}

#[test]
fn the_page_shows_a_running_crawl_and_its_numbers_move() {
    let (chromium, driver_path) = match browser() {
        Ok(b) => b,
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("the browser test needs Chromium on CI: {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };

    // A crawl slow enough to watch: 3,000 pages served after 20 ms each, 4 at a time.
    let web = TestWeb::start_blocking(
        Arc::new(web_graph(3000)),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            latency: Duration::from_millis(20),
            pages_per_host: 50,
            record_log: false,
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let state_dir = tempfile::tempdir().unwrap();
    let mut cfg = CrawlConfig {
        state_dir: state_dir.path().join("state"),
        seeds: web.seed_urls(&[0]),
        report_top: 20,
        policy: PolicyKind::parse("backlink").unwrap().into(),
        resources: Resources {
            concurrency: 4,
            ..Resources::default()
        },
        ..CrawlConfig::default()
    };
    cfg.fetch.proxy = Some(web.proxy_url());
    cfg.fetch.timeout = Duration::from_secs(5);
    cfg.fetch.warc = false;

    let dash = DashboardState::new("live crawl of the test web");
    let server = serve_loopback(dash.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let crawler = {
        let (stop, dash) = (stop.clone(), dash.clone());
        std::thread::spawn(move || {
            let report = crawl(&cfg, &stop, &mut |p| dash.record(&p.dashboard_numbers()));
            dash.set_running(false);
            report
        })
    };

    let driver = Driver::start(&driver_path);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = rt.block_on(async {
        let mut caps = Capabilities::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1400,1100"],
            }),
        );
        caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let c = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .expect("a WebDriver session in headless Chromium");
        let result = watch(&c, &server.url()).await;
        let _ = c.close().await;
        result
    });

    stop.store(true, Ordering::SeqCst);
    let report = crawler.join().unwrap().expect("the crawl ends cleanly");
    assert!(report.crawled > 0);
    web.shutdown_blocking();
    drop(driver);
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

/// What the test checks in the browser; an `Err` describes what the page did wrong.
async fn watch(c: &Client, url: &str) -> Result<(), String> {
    c.goto(url)
        .await
        .map_err(|e| format!("cannot open {url}: {e}"))?;
    // The numbers appear, then move.
    let first = wait_above(c, "pages_total", 0.0, Duration::from_secs(20)).await?;
    wait_above(c, "pages_total", first, Duration::from_secs(20)).await?;
    // The tables fill: the top of the frontier and the ranking so far, with the web's URLs.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (frontier, ranking) = (
            rows(c, "frontier_top").await?,
            rows(c, "ranking_top").await?,
        );
        if !frontier.is_empty() && !ranking.is_empty() {
            if !frontier
                .iter()
                .chain(&ranking)
                .all(|u| u.starts_with("http://"))
            {
                return Err(format!("the tables show no URLs: {frontier:?} {ranking:?}"));
            }
            break;
        }
        if Instant::now() >= deadline {
            return Err(format!("the tables stayed empty: {frontier:?} {ranking:?}"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let state = js(c, "return document.getElementById('state').textContent").await?;
    if state != "running" {
        return Err(format!("the page says '{state}', not 'running'"));
    }
    let chart_points = js(
        c,
        "const p = document.querySelector('#chart path.line'); \
         return p ? p.getAttribute('d').split('L').length : 0",
    )
    .await?;
    if chart_points.as_u64().unwrap_or(0) < 2 {
        return Err(format!("the chart has {chart_points} points"));
    }
    if std::env::var("CRAWLRANK_SCREENSHOT").as_deref() == Ok("1") {
        // A few more seconds of the chart for the picture.
        tokio::time::sleep(Duration::from_secs(5)).await;
        let png = c.screenshot().await.map_err(|e| e.to_string())?;
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/img/dashboard.png");
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::fs::write(&out, png).unwrap();
        eprintln!("screenshot: {}", out.display());
    }
    let log: Value = c
        .issue_cmd(BrowserLog)
        .await
        .map_err(|e| format!("cannot read the browser log: {e}"))?;
    let problems: Vec<&Value> = log
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter(|e| matches!(e["level"].as_str(), Some("SEVERE" | "WARNING")))
                .collect()
        })
        .unwrap_or_default();
    if !problems.is_empty() {
        return Err(format!("console errors: {problems:#?}"));
    }
    // The log is really read: an error the test makes itself shows up in it.
    c.execute("console.error('crawlrank-probe')", vec![])
        .await
        .map_err(|e| e.to_string())?;
    let log: Value = c.issue_cmd(BrowserLog).await.map_err(|e| e.to_string())?;
    if !log.to_string().contains("crawlrank-probe") {
        return Err(format!(
            "the browser log does not show console errors: {log}"
        ));
    }
    Ok(())
}
