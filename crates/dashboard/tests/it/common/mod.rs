//! Helpers shared by the dashboard's tests: the dashboard on a free loopback port, a plain
//! HTTP/1.1 GET over a loopback socket (so the tests need no HTTP client), and a strict parser
//! of the Prometheus text format.

#![allow(dead_code)] // each test file uses its own part

use crawlrank_dashboard::{serve, Access, DashboardHandle, DashboardState};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The dashboard of `state` on a free loopback port (port 0: the kernel picks one).
pub fn serve_loopback(state: DashboardState) -> DashboardHandle {
    serve("127.0.0.1:0".parse().unwrap(), Access::LoopbackOnly, state).unwrap()
}

/// A response: status code, headers (lower-case names), body.
pub struct Response {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: String,
}

/// `GET path` from `addr`, with `Connection: close` so the body ends with the connection.
pub fn get(addr: SocketAddr, path: &str) -> Response {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the response");
    let raw = String::from_utf8(raw).expect("a UTF-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect::<HashMap<_, _>>();
    let body = if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        dechunk(body)
    } else {
        body.to_string()
    };
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = s.split_once("\r\n").expect("a chunk size");
        let n = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
}

/// A metric sample: name, labels, value.
pub type PromSample = (String, Vec<(String, String)>, f64);

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
}

fn parse_value(v: &str) -> Result<f64, String> {
    match v {
        "NaN" => Ok(f64::NAN),
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        _ => v
            .parse::<f64>()
            .map_err(|e| format!("bad value '{v}': {e}")),
    }
}

fn parse_labels(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (name, after) = rest
            .split_once("=\"")
            .ok_or(format!("bad label in '{s}'"))?;
        if !is_name(name) {
            return Err(format!("bad label name '{name}'"));
        }
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c @ ('\\' | '"'))) => value.push(c),
                    _ => return Err(format!("bad escape in '{s}'")),
                },
                Some((i, '"')) => break i,
                Some((_, c)) => value.push(c),
                None => return Err(format!("unterminated label value in '{s}'")),
            }
        };
        out.push((name.to_string(), value));
        rest = &after[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    Ok(out)
}

/// Parses the Prometheus text exposition format 0.0.4 strictly: `# HELP` and `# TYPE` at most
/// once per family and before its samples, known types, valid names, label syntax and values,
/// each family's samples together, a final line feed. Returns the samples and each family's
/// type.
pub fn parse_prometheus(text: &str) -> Result<(Vec<PromSample>, HashMap<String, String>), String> {
    if !text.ends_with('\n') {
        return Err("the exposition must end with a line feed".into());
    }
    let mut types = HashMap::new();
    let mut helps = HashSet::new();
    let mut seen_samples: HashSet<String> = HashSet::new();
    let mut samples = Vec::new();
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let at = |m: String| format!("line {}: {m}: '{line}'", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut parts = comment.trim_start().splitn(3, ' ');
            match parts.next() {
                Some("HELP") => {
                    let name = parts
                        .next()
                        .ok_or_else(|| at("HELP without a name".into()))?;
                    if !is_name(name) || !helps.insert(name.to_string()) {
                        return Err(at(format!("bad or repeated HELP for {name}")));
                    }
                }
                Some("TYPE") => {
                    let name = parts
                        .next()
                        .ok_or_else(|| at("TYPE without a name".into()))?;
                    let kind = parts.next().unwrap_or("");
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                        return Err(at(format!("unknown type '{kind}'")));
                    }
                    if seen_samples.contains(name)
                        || types.insert(name.to_string(), kind.to_string()).is_some()
                    {
                        return Err(at(format!("TYPE of {name} repeated or after its samples")));
                    }
                }
                _ => {} // a plain comment
            }
            continue;
        }
        let (series, value) = match line.find('{') {
            Some(open) => {
                let close = line
                    .rfind('}')
                    .ok_or_else(|| at("unclosed labels".into()))?;
                let labels = parse_labels(&line[open + 1..close]).map_err(at)?;
                let rest = line[close + 1..].trim_start();
                ((line[..open].to_string(), labels), rest)
            }
            None => {
                let (name, rest) = line.split_once(' ').ok_or_else(|| at("no value".into()))?;
                ((name.to_string(), Vec::new()), rest)
            }
        };
        let (name, labels) = series;
        if !is_name(&name) {
            return Err(at(format!("bad metric name '{name}'")));
        }
        let mut fields = value.split_whitespace();
        let v = parse_value(fields.next().unwrap_or("")).map_err(at)?;
        if let Some(ts) = fields.next() {
            ts.parse::<i64>()
                .map_err(|_| at(format!("bad timestamp '{ts}'")))?;
        }
        if fields.next().is_some() {
            return Err(at("trailing fields".into()));
        }
        if current.as_deref() != Some(&name) {
            if seen_samples.contains(&name) {
                return Err(at(format!("the samples of {name} are not together")));
            }
            current = Some(name.clone());
        }
        seen_samples.insert(name.clone());
        samples.push((name, labels, v));
    }
    Ok((samples, types))
}

#[test]
fn the_parser_rejects_what_prometheus_rejects() {
    assert!(parse_prometheus("a 1\n").is_ok());
    assert!(parse_prometheus("a{k=\"v\\\"x\"} 1 123\n").is_ok());
    for bad in [
        "a 1",                     // no final line feed
        "1a 1\n",                  // bad name
        "a x\n",                   // bad value
        "# TYPE a countr\na 1\n",  // unknown type
        "a 1\n# TYPE a counter\n", // type after samples
        "a 1\nb 1\na 2\n",         // family split
        "a{k=v} 1\n",              // unquoted label
    ] {
        assert!(parse_prometheus(bad).is_err(), "{bad:?} should not parse");
    }
}
