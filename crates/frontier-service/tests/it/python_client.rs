//! A client in a second language: Python's `grpcio`, with stubs generated at test time by
//! `grpcio-tools` from the project's own `.proto` files into a temporary directory, talks to
//! the service end to end over loopback — PutURLs, GetURLs, a known update, GetStats,
//! CountURLs, and crawlrank's ReportPage — the way a Scrapy scheduler or any non-Rust
//! crawler would. It proves the `.proto` is usable as published, not only by tonic.
//!
//! A second script is a client of a 3-node cluster that computes URLFrontier's ownership rule
//! itself, as StormCrawler's spout does, and gets a URL it put to the wrong node from its owner
//! (needs `nats-server` too).
//!
//! Needs `python3` with `grpcio` and `grpcio-tools` (`.ci/run` installs them): without them
//! the test fails when `CI=true` and skips with a message otherwise.

use crate::common;

use crawlrank_frontier_service::{
    policy_spec, spawn, ClusterConfig, FrontierService, ServiceConfig,
};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[2])
import grpc
import urlfrontier_pb2 as uf
import urlfrontier_pb2_grpc as uf_grpc
import crawlrank_frontier_pb2 as cf
import crawlrank_frontier_pb2_grpc as cf_grpc

channel = grpc.insecure_channel(sys.argv[1])
grpc.channel_ready_future(channel).result(timeout=10)
stub = uf_grpc.URLFrontierStub(channel)
ext = cf_grpc.CrawlrankFrontierStub(channel)

def discovered(url):
    return uf.URLItem(discovered=uf.DiscoveredURLItem(info=uf.URLInfo(url=url)))

urls = ["http://a.example/", "http://b.example/", "http://a.example/2", "not a url"]
acks = [a.status for a in stub.PutURLs(iter([discovered(u) for u in urls]), timeout=10)]
got = [i.url for i in stub.GetURLs(
    uf.GetParams(max_urls_per_queue=1, delay_requestable=60, crawlID=""), timeout=10)]
known = uf.URLItem(known=uf.KnownURLItem(
    info=uf.URLInfo(url="http://a.example/"), refetchable_from_date=0))
known_acks = [a.status for a in stub.PutURLs(iter([known]), timeout=10)]
report = ext.ReportPage(cf.PageReport(
    page=uf.KnownURLItem(info=uf.URLInfo(url="http://b.example/")),
    outlinks=["http://c.example/", "http://a.example/"]), timeout=10)
stats = stub.GetStats(uf.QueueWithinCrawlParams(), timeout=10)
count = stub.CountURLs(uf.CountUrlParams(), timeout=10)
ranking = [(r.rank, r.url) for r in ext.GetRanking(cf.RankingParams(limit=10), timeout=10)]
try:
    ext.GetRanking(cf.RankingParams(crawlID="NOPE"), timeout=10).next()
    missing = "no error"
except grpc.RpcError as e:
    missing = e.code().name
print(json.dumps({
    "acks": acks, "got": got, "known_acks": known_acks,
    "report": [report.discovered, report.known, report.invalid],
    "size": stats.size, "in_process": stats.inProcess, "completed": stats.counts["completed"],
    "queues": stats.numberOfQueues, "count": count.value, "ranking": ranking,
    "missing": missing,
}))
"#;

/// A client of a 3-node cluster that knows URLFrontier's ownership rule (as StormCrawler's
/// does): it lists the nodes, puts a URL to a node that does not own its queue, and leases it
/// from the owner (argv: any node's address, the stubs' folder).
const CLUSTER_SCRIPT: &str = r#"
import json, sys, time
sys.path.insert(0, sys.argv[2])
import grpc
import urlfrontier_pb2 as uf
import urlfrontier_pb2_grpc as uf_grpc

def stub(addr):
    channel = grpc.insecure_channel(addr)
    grpc.channel_ready_future(channel).result(timeout=10)
    return uf_grpc.URLFrontierStub(channel)

def java_hash(s):
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h

nodes = list(stub(sys.argv[1]).ListNodes(uf.Empty(), timeout=10).values)
url = "http://wrong-node.example/page"
queue = "DEFAULT_" + "wrong-node.example".replace("_", "%5F")
owner = abs(java_hash(queue)) % len(nodes)
wrong = (owner + 1) % len(nodes)
item = uf.URLItem(discovered=uf.DiscoveredURLItem(info=uf.URLInfo(url=url)))
acks = [a.status for a in stub(nodes[wrong]).PutURLs(iter([item]), timeout=10)]
params = uf.GetParams(max_urls_per_queue=1, delay_requestable=60, crawlID="")
at_wrong = [i.url for i in stub(nodes[wrong]).GetURLs(params, timeout=10)]
served, deadline = [], time.time() + 10
while not served and time.time() < deadline:
    served = [i.url for i in stub(nodes[owner]).GetURLs(params, timeout=10)]
    time.sleep(0.05)
print(json.dumps({"nodes": len(nodes), "sorted": nodes == sorted(nodes), "acks": acks,
                  "at_wrong": at_wrong, "served": served}))
"#;

/// Whether python3 has grpcio and grpcio-tools; on CI their absence is a failure.
fn python_ready() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import grpc, grpc_tools"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let msg = "python3 with grpcio and grpcio-tools is needed for the Python client test \
                   (python3 -m pip install grpcio grpcio-tools)";
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{msg}; CI=true, so this is a failure"
        );
        eprintln!("SKIPPED: {msg}");
    }
    ok
}

/// Runs `cmd`, killing it after `limit`; returns its stdout, failing on a non-zero exit.
fn run_bounded(cmd: &mut Command, limit: Duration) -> String {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start python3");
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran for more than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The Python stubs of the service's .proto files, generated into a temporary folder.
fn stubs() -> tempfile::TempDir {
    let stubs = tempfile::tempdir().unwrap();
    // The .proto files are the API crate's (crates/urlfrontier), published with it.
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../urlfrontier/proto");
    run_bounded(
        Command::new("python3")
            .args(["-m", "grpc_tools.protoc", "-I"])
            .arg(&proto)
            .arg("--python_out")
            .arg(stubs.path())
            .arg("--grpc_python_out")
            .arg(stubs.path())
            .args(["urlfrontier.proto", "crawlrank_frontier.proto"]),
        Duration::from_secs(60),
    );
    stubs
}

#[test]
fn a_python_client_of_a_cluster_agrees_on_owners_and_gets_a_url_put_elsewhere() {
    if !python_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = crawlrank_testkit::NatsServer::start(&dir.path().join("nats")) else {
        return;
    };
    let stubs = stubs();
    let script = stubs.path().join("cluster.py");
    std::fs::write(&script, CLUSTER_SCRIPT).unwrap();
    let runtime = common::runtime();
    let servers = runtime.block_on(async {
        let mut listeners = Vec::new();
        for _ in 0..3 {
            listeners.push(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap());
        }
        let nodes: Vec<String> = listeners
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect();
        let mut servers = Vec::new();
        for (i, listener) in listeners.into_iter().enumerate() {
            let config = ServiceConfig {
                policy: Some(policy_spec("bfs", None, None, 0).unwrap()),
                ..ServiceConfig::new(dir.path().join(format!("node{i}")))
            };
            let service = FrontierService::open(config).unwrap();
            let cluster = ClusterConfig {
                nats: nats.url(),
                nodes: nodes.clone(),
                me: nodes[i].clone(),
            };
            let applying = service.join_cluster(&cluster).await.unwrap();
            servers.push((spawn(service, listener).unwrap(), applying));
        }
        servers
    });
    let out = run_bounded(
        Command::new("python3")
            .arg(&script)
            .arg(servers[2].0.addr().to_string())
            .arg(stubs.path()),
        Duration::from_secs(60),
    );
    for (server, applying) in servers {
        applying.abort();
        runtime.block_on(server.shutdown()).unwrap();
    }
    let line = out.lines().last().unwrap_or_default();
    assert_eq!(
        line,
        r#"{"nodes": 3, "sorted": true, "acks": [0], "at_wrong": [], "served": ["http://wrong-node.example/page"]}"#
    );
}

#[test]
fn a_python_grpcio_client_works_end_to_end() {
    if !python_ready() {
        return;
    }
    let stubs = stubs();
    let script = stubs.path().join("client.py");
    std::fs::write(&script, SCRIPT).unwrap();

    let state = tempfile::tempdir().unwrap();
    let runtime = common::runtime();
    let server = runtime.block_on(async {
        let config = ServiceConfig {
            policy: Some(policy_spec("bfs", None, None, 0).unwrap()),
            ..ServiceConfig::new(state.path())
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        spawn(FrontierService::open(config).unwrap(), listener).unwrap()
    });
    let out = run_bounded(
        Command::new("python3")
            .arg(&script)
            .arg(server.addr().to_string())
            .arg(stubs.path()),
        Duration::from_secs(60),
    );
    runtime.block_on(server.shutdown()).unwrap();
    let line = out.lines().last().unwrap_or_default().to_string();
    let expect = |key: &str, want: &str| {
        let field = format!("\"{key}\": {want}");
        assert!(line.contains(&field), "wanted {field} in {line}");
    };
    expect("acks", "[0, 0, 0, 1]"); // OK ×3, SKIPPED for "not a url"
    expect("got", r#"["http://a.example/", "http://b.example/"]"#);
    expect("known_acks", "[0]");
    expect("report", "[1, 1, 0]"); // c new, a known
                                   // a/ and b/ done; a/2 and c/ left; nothing leased any more.
    expect("size", "2");
    expect("in_process", "0");
    expect("completed", "2");
    expect("queues", "3");
    expect("count", "4");
    expect(
        "ranking",
        r#"[[1, "http://a.example/2"], [2, "http://c.example/"]]"#,
    );
    expect("missing", "\"NOT_FOUND\"");
}

/// One long `PutURLs` stream whose client stops reading acks for a while (argv: address,
/// stubs' folder, URLs, seconds of pause): the requests are sent from grpcio's own thread,
/// one small message (one DATA frame) each, while the main thread reads nothing.
const LONG_STREAM_SCRIPT: &str = r#"
import json, sys, time
sys.path.insert(0, sys.argv[2])
import grpc
import urlfrontier_pb2 as uf

n, pause = int(sys.argv[3]), float(sys.argv[4])

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)

def item(i):
    # URLItem{discovered{info{url}}}, encoded by hand so that the client sends fast.
    u = f"http://h{i % 100}.example/p{i}".encode()
    info = b"\x0a" + varint(len(u)) + u
    disc = b"\x0a" + varint(len(info)) + info
    return b"\x0a" + varint(len(disc)) + disc

# Without its window probes, the client's window for the acks stays 64 KiB: the acks the
# client does not read soon hold the service up, as a client busy elsewhere would.
channel = grpc.insecure_channel(sys.argv[1], options=[("grpc.http2.bdp_probe", 0)])
grpc.channel_ready_future(channel).result(timeout=10)
put = channel.stream_stream("/urlfrontier.URLFrontier/PutURLs",
                            request_serializer=lambda b: b,
                            response_deserializer=uf.AckMessage.FromString)
acks, error = 0, None
acked = put((item(i) for i in range(n)), timeout=120)
try:
    for ack in acked:
        acks += 1
        if acks == 1:
            time.sleep(pause)
except grpc.RpcError as e:
    error = f"{e.code().name}: {e.details()}"
print(json.dumps({"acks": acks, "error": error}))
"#;

/// A client that stops reading its acks for a while is pushed back by HTTP/2 flow control,
/// and its stream goes on when it reads again: the service never drops the connection.
/// (With the HTTP/2 library's default windows, the small frames such a client sends while the
/// service waits for it to read spent the library's budget for small frames, and the service
/// answered GOAWAY "too_many_data_frames".)
#[test]
fn a_put_stream_whose_client_reads_late_is_pushed_back_not_dropped() {
    if !python_ready() {
        return;
    }
    let stubs = stubs();
    let script = stubs.path().join("long_stream.py");
    std::fs::write(&script, LONG_STREAM_SCRIPT).unwrap();
    let state = tempfile::tempdir().unwrap();
    let runtime = common::runtime();
    let server = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        spawn(
            FrontierService::open(ServiceConfig::new(state.path())).unwrap(),
            listener,
        )
        .unwrap()
    });
    let urls = 60_000;
    let out = run_bounded(
        Command::new("python3")
            .arg(&script)
            .arg(server.addr().to_string())
            .arg(stubs.path())
            .arg(urls.to_string())
            .arg("4"),
        Duration::from_secs(150),
    );
    runtime.block_on(server.shutdown()).unwrap();
    let line = out.lines().last().unwrap_or_default();
    assert_eq!(
        line,
        format!(r#"{{"acks": {urls}, "error": null}}"#),
        "the stream was cut"
    );
}
