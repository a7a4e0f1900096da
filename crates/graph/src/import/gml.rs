//! GML (Graph Modelling Language): `graph [ directed 1 node [ id 1 label "…" ] edge [ source
//! 1 target 2 ] ]`.
//!
//! A streaming tokenizer and a pull parser that yields nodes and edges as it meets them; the
//! file is parsed twice (nodes first, then edges renumbered into the external sort), so memory
//! is O(nodes) even for files listing edges before nodes.

use super::ids::{NodeIds, MAX_NODES};
use super::lines::{line_error, sort_unique_ids};
use super::{count_duplicate_urls, Ctx, ImportPhase, ImportProgress, ImportReport};
use anyhow::{bail, Context, Result};
use std::io::BufRead;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Key(String),
    Int(i64),
    Real,
    Str(String),
    Open,
    Close,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Key(k) => format!("'{k}'"),
            Tok::Int(i) => format!("the number {i}"),
            Tok::Real => "a number".into(),
            Tok::Str(s) => format!("the string \"{}\"", crate::urls::shorten(s)),
            Tok::Open => "'['".into(),
            Tok::Close => "']'".into(),
        }
    }
}

struct Tokenizer {
    path: PathBuf,
    r: Box<dyn BufRead + Send>,
    /// Current line (1-based).
    line: u64,
    bytes: u64,
    last_byte: Option<u8>,
    word: Vec<u8>,
}

impl Tokenizer {
    fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            r: crate::urls::open_maybe_gz(path)?,
            line: 1,
            bytes: 0,
            last_byte: None,
            word: Vec::new(),
        })
    }

    #[inline]
    fn peek(&mut self) -> Result<Option<u8>> {
        let buf = self
            .r
            .fill_buf()
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(buf.first().copied())
    }

    #[inline]
    fn bump(&mut self, b: u8) {
        self.r.consume(1);
        self.bytes += 1;
        self.last_byte = Some(b);
        if b == b'\n' {
            self.line += 1;
        }
    }

    /// Lines in the file (a last line without `\n` counts).
    fn lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.line - 1,
            Some(_) => self.line,
        }
    }

    fn err(&self, line: u64, msg: impl std::fmt::Display) -> anyhow::Error {
        line_error(&self.path, line, msg)
    }

    /// The next token and the line it starts on.
    fn next(&mut self) -> Result<Option<(Tok, u64)>> {
        loop {
            let Some(b) = self.peek()? else {
                return Ok(None);
            };
            match b {
                b'#' => {
                    while let Some(c) = self.peek()? {
                        if c == b'\n' {
                            break;
                        }
                        self.bump(c);
                    }
                }
                _ if b.is_ascii_whitespace() => self.bump(b),
                b'[' => {
                    self.bump(b);
                    return Ok(Some((Tok::Open, self.line)));
                }
                b']' => {
                    self.bump(b);
                    return Ok(Some((Tok::Close, self.line)));
                }
                b'"' => {
                    let start = self.line;
                    self.bump(b);
                    self.word.clear();
                    loop {
                        match self.peek()? {
                            None => {
                                return Err(self.err(start, "unterminated string (no closing '\"')"))
                            }
                            Some(b'"') => {
                                self.bump(b'"');
                                break;
                            }
                            Some(c) => {
                                self.bump(c);
                                self.word.push(c);
                            }
                        }
                    }
                    let s = decode_entities(&String::from_utf8_lossy(&self.word));
                    return Ok(Some((Tok::Str(s), start)));
                }
                _ => {
                    let start = self.line;
                    self.word.clear();
                    while let Some(c) = self.peek()? {
                        if c.is_ascii_whitespace() || matches!(c, b'[' | b']' | b'"') {
                            break;
                        }
                        self.bump(c);
                        self.word.push(c);
                    }
                    let w = String::from_utf8_lossy(&self.word).into_owned();
                    let first = w.as_bytes()[0];
                    if first.is_ascii_alphabetic() || first == b'_' {
                        if !w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                            return Err(self.err(start, format!("'{w}' is not a valid GML key")));
                        }
                        return Ok(Some((Tok::Key(w), start)));
                    }
                    if let Ok(i) = w.parse::<i64>() {
                        return Ok(Some((Tok::Int(i), start)));
                    }
                    if w.parse::<f64>().is_ok() {
                        return Ok(Some((Tok::Real, start)));
                    }
                    return Err(self.err(
                        start,
                        format!(
                            "unexpected '{}' (not a key, number, string or bracket)",
                            crate::urls::shorten(&w)
                        ),
                    ));
                }
            }
        }
    }
}

/// Decodes the character entities GML writers use inside strings.
fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = rest.find(';').filter(|&j| j <= 10).and_then(|j| {
            let ent = &rest[1..j];
            let c = match ent {
                "amp" => Some('&'),
                "quot" => Some('"'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "apos" => Some('\''),
                _ => ent
                    .strip_prefix("#x")
                    .or_else(|| ent.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| ent.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, j))
        });
        match decoded {
            Some((c, j)) => {
                out.push(c);
                rest = &rest[j + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Directed(bool),
    Node {
        id: i64,
        label: Option<String>,
        line: u64,
    },
    Edge {
        source: i64,
        target: i64,
        line: u64,
    },
}

enum Frame {
    Graph,
    Node {
        line: u64,
        id: Option<i64>,
        label: Option<String>,
    },
    Edge {
        line: u64,
        source: Option<i64>,
        target: Option<i64>,
    },
    Skip,
}

struct Parser {
    tok: Tokenizer,
    /// Open lists and the lines they were opened on.
    stack: Vec<(Frame, u64)>,
    seen_graph: bool,
}

impl Parser {
    fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            tok: Tokenizer::open(path)?,
            stack: Vec::new(),
            seen_graph: false,
        })
    }

    fn next_event(&mut self) -> Result<Option<Event>> {
        loop {
            let Some((tok, line)) = self.tok.next()? else {
                if let Some((_, open)) = self.stack.last() {
                    return Err(self.tok.err(
                        self.tok.line,
                        format!(
                            "unexpected end of file: the list opened on line {open} is not closed"
                        ),
                    ));
                }
                if !self.seen_graph {
                    bail!(
                        "{}: not a GML graph: no 'graph [ … ]' block",
                        self.tok.path.display()
                    );
                }
                return Ok(None);
            };
            if matches!(self.stack.last(), Some((Frame::Skip, _))) {
                match tok {
                    Tok::Open => self.stack.push((Frame::Skip, line)),
                    Tok::Close => {
                        self.stack.pop();
                    }
                    _ => {}
                }
                continue;
            }
            match tok {
                Tok::Close => match self.stack.pop() {
                    None => return Err(self.tok.err(line, "unexpected ']' (no list is open)")),
                    Some((Frame::Node { line, id, label }, _)) => {
                        let Some(id) = id else {
                            return Err(self.tok.err(line, "node without an 'id'"));
                        };
                        return Ok(Some(Event::Node { id, label, line }));
                    }
                    Some((
                        Frame::Edge {
                            line,
                            source,
                            target,
                        },
                        _,
                    )) => {
                        let (Some(source), Some(target)) = (source, target) else {
                            return Err(self
                                .tok
                                .err(line, "edge without a 'source' and a 'target'"));
                        };
                        return Ok(Some(Event::Edge {
                            source,
                            target,
                            line,
                        }));
                    }
                    Some(_) => {}
                },
                Tok::Key(key) => {
                    let Some((value, vline)) = self.tok.next()? else {
                        return Err(self
                            .tok
                            .err(line, format!("key '{key}' has no value (end of file)")));
                    };
                    if matches!(value, Tok::Close | Tok::Key(_)) {
                        return Err(self.tok.err(
                            vline,
                            format!("key '{key}' has no value (found {})", value.describe()),
                        ));
                    }
                    if let Some(e) = self.value(key, value, vline)? {
                        return Ok(Some(e));
                    }
                }
                other => {
                    return Err(self
                        .tok
                        .err(line, format!("expected a key, found {}", other.describe())))
                }
            }
        }
    }

    fn value(&mut self, key: String, value: Tok, line: u64) -> Result<Option<Event>> {
        let top = self.stack.last_mut().map(|(f, _)| f);
        match (top, key.as_str(), value) {
            (None, "graph", Tok::Open) => {
                if self.seen_graph {
                    return Err(self
                        .tok
                        .err(line, "a second 'graph' block (one graph per file)"));
                }
                self.seen_graph = true;
                self.stack.push((Frame::Graph, line));
            }
            (Some(Frame::Graph), "directed", Tok::Int(i)) => {
                return Ok(Some(Event::Directed(i != 0)))
            }
            (Some(Frame::Graph), "node", Tok::Open) => self.stack.push((
                Frame::Node {
                    line,
                    id: None,
                    label: None,
                },
                line,
            )),
            (Some(Frame::Graph), "edge", Tok::Open) => self.stack.push((
                Frame::Edge {
                    line,
                    source: None,
                    target: None,
                },
                line,
            )),
            (Some(Frame::Node { id, .. }), "id", v) => match v {
                Tok::Int(i) => *id = Some(i),
                other => {
                    return Err(self.tok.err(
                        line,
                        format!("node id must be an integer, found {}", other.describe()),
                    ))
                }
            },
            (Some(Frame::Node { label, .. }), "label", v) => match v {
                Tok::Str(s) => *label = Some(s),
                Tok::Int(i) => *label = Some(i.to_string()),
                Tok::Open => self.stack.push((Frame::Skip, line)),
                _ => {}
            },
            (Some(Frame::Edge { source, target, .. }), k @ ("source" | "target"), v) => match v {
                Tok::Int(i) => {
                    if k == "source" {
                        *source = Some(i)
                    } else {
                        *target = Some(i)
                    }
                }
                other => {
                    return Err(self.tok.err(
                        line,
                        format!(
                            "edge {k} must be an integer node id, found {}",
                            other.describe()
                        ),
                    ))
                }
            },
            (_, _, Tok::Open) => self.stack.push((Frame::Skip, line)),
            _ => {}
        }
        Ok(None)
    }
}

pub(super) fn import_gml(input: &Path, ctx: &Ctx) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    let total = std::fs::metadata(input).ok().map(|m| m.len());
    let tick = |phase, p: &Parser, count: &mut u64| {
        *count += 1;
        if *count & 0xFFFF == 0 {
            ctx.progress.report(ImportProgress {
                phase,
                lines: p.tok.line,
                bytes: p.tok.bytes,
                total_bytes: total,
            });
        }
    };

    // Pass 1: nodes.
    ctx.progress.phase(ImportPhase::Scan, total);
    let mut p = Parser::open(input)?;
    let mut nodes: Vec<(u64, u64, Option<String>)> = Vec::new();
    let mut directed = false;
    let mut edges = 0u64;
    let mut count = 0;
    while let Some(e) = p.next_event()? {
        tick(ImportPhase::Scan, &p, &mut count);
        match e {
            Event::Directed(d) => directed = d,
            Event::Node { id, label, line } => {
                if id < 0 {
                    return Err(line_error(
                        input,
                        line,
                        format!("negative node id {id} (ids must be non-negative)"),
                    ));
                }
                nodes.push((id as u64, line, label));
            }
            Event::Edge { .. } => edges += 1,
        }
    }
    report.lines = p.tok.lines();
    drop(p);
    if nodes.is_empty() {
        bail!(
            "{}: empty graph: the GML graph has no nodes{}",
            input.display(),
            if edges > 0 { " (but has edges)" } else { "" }
        );
    }
    sort_unique_ids(&mut nodes, input, |id, a| {
        format!("node id {id} is already declared (line {a})")
    })?;
    let known = NodeIds::from_sorted_unique(nodes.iter().map(|n| n.0).collect());
    let keep = ctx.opts.keep_ids;
    let max = nodes.last().map_or(0, |n| n.0);
    if keep && max >= MAX_NODES {
        bail!("{}: the largest node id is {max}; keeping the original ids needs more nodes than crawlrank supports", input.display());
    }
    let n = if keep { max as usize + 1 } else { nodes.len() };

    // Labels → URLs, in node order.
    let has_labels = nodes.iter().any(|n| n.2.is_some());
    let urls: Vec<Box<str>> = if has_labels {
        let mut urls: Vec<Box<str>> = vec!["".into(); n];
        let mut filled = 0u64;
        for (i, (id, _, label)) in nodes.iter_mut().enumerate() {
            let node = if keep { *id as usize } else { i };
            if let Some(l) = label.take() {
                filled += 1;
                urls[node] = match crate::urls::normalize_url_or_host(&l) {
                    Ok(u) => u.into(),
                    Err(_) => {
                        report.invalid_urls += 1;
                        l.trim().into()
                    }
                };
            }
        }
        report.missing_urls = n as u64 - filled;
        report.duplicate_urls = count_duplicate_urls(&urls);
        report.implausible_hosts = crate::hosts::implausible_hosts(&urls);
        urls
    } else {
        Vec::new()
    };
    drop(nodes);

    // Pass 2: edges.
    ctx.progress.phase(ImportPhase::Sort, total);
    let mut p = Parser::open(input)?;
    let mut pending: Option<(usize, usize)> = None;
    let mut count = 0;
    let map = |id: i64| -> Option<usize> {
        let node = known.get(u64::try_from(id).ok()?)?;
        Some(if keep { id as usize } else { node })
    };
    let pairs = std::iter::from_fn(|| {
        if let Some(pair) = pending.take() {
            return Some(Ok(pair));
        }
        loop {
            let e = match p.next_event() {
                Ok(Some(e)) => e,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            tick(ImportPhase::Sort, &p, &mut count);
            if let Event::Edge {
                source,
                target,
                line,
            } = e
            {
                let (Some(s), Some(d)) = (map(source), map(target)) else {
                    let (what, id) = if map(source).is_none() {
                        ("source", source)
                    } else {
                        ("target", target)
                    };
                    return Some(Err(line_error(
                        input,
                        line,
                        format!("edge {what} {id} is not a declared node"),
                    )));
                };
                if !directed && s != d {
                    pending = Some((d, s));
                }
                return Some(Ok((s, d)));
            }
        }
    });
    let stats = ctx.write_graph(n, pairs)?;
    report.set_graph(n, &stats);
    report.symmetrized = !directed;
    if has_labels {
        ctx.write_staged(".urls", |w| crate::urls::write_urls_to(w, &urls))?;
        report.urls_written = true;
    }
    ctx.write_ids_if_renumbered(&known, &mut report)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<Vec<Event>> {
        let dir = tempfile::tempdir().unwrap();
        let f = crawlrank_testkit::write_file(dir.path(), "g.gml", text);
        let mut p = Parser::open(&f)?;
        let mut v = Vec::new();
        while let Some(e) = p.next_event()? {
            v.push(e);
        }
        Ok(v)
    }

    #[test]
    fn parses_nested_lists_strings_and_comments() {
        let ev = events(
            "Creator \"me [not a bracket]\"\n# comment [\ngraph [\n directed 1\n  node [ id 3 label \"a b &amp; c\" graphics [ x 1.5 y -2 ] source \"Blogarama\" ]\n\
             node [ id 7 ]\n  edge [ source 3 target 7 value 0.5 ]\n]\n",
        )
        .unwrap();
        assert_eq!(
            ev,
            [
                Event::Directed(true),
                Event::Node {
                    id: 3,
                    label: Some("a b & c".into()),
                    line: 5
                },
                Event::Node {
                    id: 7,
                    label: None,
                    line: 6
                },
                Event::Edge {
                    source: 3,
                    target: 7,
                    line: 7
                },
            ]
        );
        for (bad, msg) in [
            ("graph [ node [ id 1 ]", "line 1: unexpected end of file"),
            (
                "graph [ node [ label \"x\" ] ]",
                "line 1: node without an 'id'",
            ),
            ("graph [ edge [ source 1 ] ]", "line 1: edge without"),
            (
                "graph [\n node [ id \"x\" ] ]",
                "line 2: node id must be an integer",
            ),
            ("graph [ ] ]", "unexpected ']'"),
            ("graph [ label \"abc ]", "unterminated string"),
            ("node [ id 1 ]", "no 'graph"),
            ("graph [ ] graph [ ]", "second 'graph'"),
            ("graph [ directed ]", "has no value"),
        ] {
            let e = events(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad:?}: {e}");
        }
        assert_eq!(
            decode_entities("a&amp;b&#65;&#x42;&bogus;&"),
            "a&bAB&bogus;&"
        );
    }
}
