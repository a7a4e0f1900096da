//! Wikispeedia: a real Wikipedia link graph with real human navigation, as a graph and as
//! per-article traffic.
//!
//! Wikispeedia (West & Leskovec, SNAP) is 4,604 articles of the 2007 Wikipedia Selection for
//! Schools, their 119,882 links, and the paths people clicked through playing a game: reach a
//! target article from a start article by following links only. It is the one public data set
//! here with both a closed link graph and observed traffic on it, so it is the real case beside
//! the synthetic impacts. **Its traffic is goal-directed game play, not search traffic**: people
//! walk towards a given target, which favours hubs (`United_States`) and says nothing about
//! what anyone would search for. It stands in for the paper's search impact only as "some real
//! human interest signal on a real graph".
//!
//! # The folder
//!
//! `articles.tsv`, `links.tsv`, `paths_finished*.tsv` and `paths_unfinished.tsv`, each plain or
//! gzip (`.tsv.gz`), `#` comment lines, article names URL-encoded as in the original release.
//!
//! # Import ([`import_wikispeedia`])
//!
//! One node per line of `articles.tsv`, in that file's order (so ids are stable, and the
//! articles without links are isolated nodes); arcs from `links.tsv` (`src<TAB>dst`, both
//! articles of `articles.tsv`, else an error naming `file:line`; repeated arcs are dropped and
//! counted); `.urls` line `i` = `https://en.wikipedia.org/wiki/<name i as in the file>`
//! (normalised, which leaves the encoded names as they are). The graph is written through
//! [`GraphWriter`], so it appears whole or not at all.
//!
//! # Replay ([`replay_paths`])
//!
//! Each path is a `;`-separated list of article names where `<` is a back click. Replaying a
//! path keeps the stack of articles the player is on:
//!
//! - the first article is a **visit** (no click: the game put the player there);
//! - an article name is a **forward click** from the article on top of the stack into it: one
//!   **click** and one **visit** of that article, and it is pushed;
//! - `<` returns to the previous article (pops the stack): a back click, neither a visit nor a
//!   click of anything (the article was counted when first reached). A `<` with nothing to go
//!   back to is counted in [`ReplayReport::unmatched_back_clicks`] and ignored.
//!
//! So visits = paths + forward clicks. The path is the column named `path` in a header line
//! (the SUBSET file of `shared/data` has one), else the fourth column, as in the original
//! `paths_finished.tsv` and `paths_unfinished.tsv`. Steps naming articles that the graph does
//! not have are counted and named in [`WikispeediaImpact`], not dropped silently.

use crate::pages::{wiki_url, Pages};
use crate::table::EXAMPLES;
use anyhow::{bail, ensure, Context, Result};
use crawlrank_graph::text::{is_comment, shorten, Lines};
use crawlrank_graph::GraphWriter;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use webgraph::prelude::VecGraph;

/// `DIR/STEM.tsv`, else `DIR/STEM.tsv.gz`, if either exists.
pub fn find_file(dir: &Path, stem: &str) -> Option<PathBuf> {
    [".tsv", ".tsv.gz"]
        .iter()
        .map(|ext| dir.join(format!("{stem}{ext}")))
        .find(|p| p.is_file())
}

fn need_file(dir: &Path, stem: &str) -> Result<PathBuf> {
    find_file(dir, stem).with_context(|| {
        format!(
            "{}: no {stem}.tsv or {stem}.tsv.gz: not a Wikispeedia folder",
            dir.display()
        )
    })
}

/// The folder of a Wikispeedia input: `input` itself if it is a folder, else the folder of
/// the file (`links.tsv(.gz)`).
pub fn folder_of(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.to_path_buf()
    } else {
        input
            .parent()
            .map(Path::to_path_buf)
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// Reads `articles.tsv`: one article name per line, in order. Duplicates are an error.
pub fn read_articles(path: &Path) -> Result<Vec<String>> {
    let mut lines = Lines::open(path)?;
    let mut names = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    while let Some((at, line)) = lines.next_line()? {
        if is_comment(line) {
            continue;
        }
        let name = line.trim();
        ensure!(
            !name.contains('\t'),
            "{}: '{}': articles.tsv has one article name per line",
            at,
            shorten(name)
        );
        if let Some(first) = seen.insert(name.to_owned(), at.line) {
            bail!(
                "{}: article '{}' was already listed on line {first}",
                at,
                shorten(name)
            );
        }
        names.push(name.to_owned());
    }
    ensure!(!names.is_empty(), "{}: no articles", path.display());
    Ok(names)
}

/// What [`import_wikispeedia`] did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WikispeediaImport {
    /// The output basename.
    pub basename: PathBuf,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// Nodes (articles).
    pub nodes: u64,
    /// Distinct arcs.
    pub arcs: u64,
    /// Link lines repeating an earlier one (dropped).
    pub duplicate_arcs_dropped: u64,
    /// Self-loops.
    pub self_loops: u64,
    /// Articles without any link in or out.
    pub isolated: u64,
}

/// Imports the Wikispeedia graph of `input` (the folder, or its `links.tsv(.gz)`) into the
/// BVGraph `out` with `.urls` (see the [module documentation](self#import-import_wikispeedia)).
pub fn import_wikispeedia(input: &Path, out: &Path) -> Result<WikispeediaImport> {
    ensure!(
        input.exists(),
        "cannot import {}: no such file or folder",
        input.display()
    );
    let dir = folder_of(input);
    let articles = read_articles(&need_file(&dir, "articles")?)?;
    let links = if input.is_dir() {
        need_file(&dir, "links")?
    } else {
        input.to_path_buf()
    };
    let index: HashMap<&str, usize> = articles
        .iter()
        .enumerate()
        .map(|(i, a)| (a.as_str(), i))
        .collect();
    let mut arcs = Vec::new();
    let mut lines = Lines::open(&links)?;
    while let Some((at, line)) = lines.next_line()? {
        if is_comment(line) {
            continue;
        }
        let f: Vec<&str> = line.split('\t').map(str::trim).collect();
        ensure!(
            f.len() == 2,
            "{}: {} fields: a link line is 'source<TAB>target'",
            at,
            f.len()
        );
        let id = |name: &str| {
            index.get(name).copied().with_context(|| {
                format!(
                    "{}: '{}' is not an article of articles.tsv",
                    at,
                    shorten(name)
                )
            })
        };
        let (s, d) = (id(f[0])?, id(f[1])?);
        arcs.push((s, d));
    }
    let input_arcs = arcs.len() as u64;
    arcs.sort_unstable();
    arcs.dedup();
    let n = articles.len();
    let mut touched = vec![false; n];
    let mut g = VecGraph::empty(n);
    let mut self_loops = 0;
    for &(s, d) in &arcs {
        g.add_arc(s, d);
        touched[s] = true;
        touched[d] = true;
        self_loops += u64::from(s == d);
    }
    let writer = GraphWriter::new(out)?;
    writer.compress(&g)?;
    writer.write_urls(articles.iter().map(|a| wiki_url(a)))?;
    let basename = writer.basename().to_path_buf();
    let files = writer.commit()?;
    Ok(WikispeediaImport {
        basename,
        files,
        nodes: n as u64,
        arcs: arcs.len() as u64,
        duplicate_arcs_dropped: input_arcs - arcs.len() as u64,
        self_loops,
        isolated: touched.iter().filter(|&&t| !t).count() as u64,
    })
}

/// The navigation paths of a folder replayed into counts per article name
/// (see the [module documentation](self#replay-replay_paths)).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    /// Visits per article, by name as written in the paths.
    pub visits: HashMap<String, u64>,
    /// Forward clicks into each article.
    pub clicks: HashMap<String, u64>,
    /// What the replay counted.
    pub report: ReplayReport,
}

/// What [`replay_paths`] counted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayReport {
    /// The path files read, in order.
    pub files: Vec<PathBuf>,
    /// Paths replayed.
    pub paths: u64,
    /// Visits (paths + forward clicks).
    pub visits: u64,
    /// Forward clicks.
    pub forward_clicks: u64,
    /// Distinct (from, to) pairs of forward clicks.
    pub distinct_click_arcs: u64,
    /// Back clicks (`<`).
    pub back_clicks: u64,
    /// `<` with nothing to go back to (ignored).
    pub unmatched_back_clicks: u64,
}

/// The path files of a Wikispeedia folder: `paths_finished*` and `paths_unfinished*` with
/// `.tsv` or `.tsv.gz`, by name, a plain file shadowing its `.gz` twin.
pub fn path_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for e in entries {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let paths_file = name.starts_with("paths_finished") || name.starts_with("paths_unfinished");
        if paths_file && (name.ends_with(".tsv") || name.ends_with(".tsv.gz")) {
            found.push(name);
        }
    }
    found.sort();
    let plain: HashSet<String> = found
        .iter()
        .filter(|n| n.ends_with(".tsv"))
        .cloned()
        .collect();
    found.retain(|n| !n.strip_suffix(".gz").is_some_and(|p| plain.contains(p)));
    ensure!(
        !found.is_empty(),
        "{}: no paths_finished*.tsv(.gz) or paths_unfinished.tsv(.gz): no navigation paths to replay",
        dir.display()
    );
    Ok(found.into_iter().map(|n| dir.join(n)).collect())
}

/// Replays every path file of the Wikispeedia folder `dir` (see [`path_files`]).
pub fn replay_paths(dir: &Path) -> Result<Replay> {
    let mut replay = Replay::default();
    let mut arcs: HashSet<(String, String)> = HashSet::new();
    for file in path_files(dir)? {
        replay_file(&file, &mut replay, &mut arcs)?;
        replay.report.files.push(file);
    }
    replay.report.distinct_click_arcs = arcs.len() as u64;
    Ok(replay)
}

fn replay_file(
    path: &Path,
    replay: &mut Replay,
    arcs: &mut HashSet<(String, String)>,
) -> Result<()> {
    let mut lines = Lines::open(path)?;
    let mut column: Option<usize> = None;
    let r = &mut replay.report;
    while let Some((at, line)) = lines.next_line()? {
        if is_comment(line) {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        let col = match column {
            Some(c) => c,
            None => {
                if let Some(c) = fields.iter().position(|&f| f == "path") {
                    column = Some(c);
                    continue; // the header
                }
                column = Some(3);
                3
            }
        };
        let Some(&text) = fields.get(col) else {
            bail!(
                "{}: {} fields: no path in column {}",
                at,
                fields.len(),
                col + 1
            );
        };
        ensure!(!text.is_empty(), "{}: the path is empty", at);
        let mut stack: Vec<&str> = Vec::new();
        for step in text.split(';') {
            let step = step.trim();
            if step == "<" {
                if stack.len() >= 2 {
                    stack.pop();
                    r.back_clicks += 1;
                } else {
                    r.unmatched_back_clicks += 1;
                }
                continue;
            }
            ensure!(
                !step.is_empty(),
                "{}: an empty step in path '{}'",
                at,
                shorten(text)
            );
            if let Some(&from) = stack.last() {
                r.forward_clicks += 1;
                *replay.clicks.entry(step.to_owned()).or_default() += 1;
                if !arcs.contains(&(from.to_owned(), step.to_owned())) {
                    arcs.insert((from.to_owned(), step.to_owned()));
                }
            }
            r.visits += 1;
            *replay.visits.entry(step.to_owned()).or_default() += 1;
            stack.push(step);
        }
        r.paths += 1;
    }
    Ok(())
}

/// Replayed traffic on the pages of a graph ([`Replay::on_pages`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WikispeediaImpact {
    /// Visits per page.
    pub visits: Vec<f64>,
    /// Forward clicks into each page.
    pub clicks: Vec<f64>,
    /// Pages with a visit.
    pub pages_visited: u64,
    /// Path steps (visits) naming articles the graph does not have.
    pub unknown_steps: u64,
    /// Distinct such articles.
    pub unknown_articles: u64,
    /// The first few of them, by name (most visited first).
    pub unknown_examples: Vec<String>,
}

impl Replay {
    /// The visits and clicks on the pages of a graph whose URLs are Wikipedia article URLs
    /// (as [`import_wikispeedia`] writes them).
    pub fn on_pages(&self, pages: &Pages) -> Result<WikispeediaImpact> {
        ensure!(
            pages.has_urls(),
            "articles are found through the graph's URLs, and the graph has none"
        );
        let n = pages.len();
        let mut out = WikispeediaImpact {
            visits: vec![0.0; n],
            clicks: vec![0.0; n],
            ..Default::default()
        };
        let mut unknown: Vec<(&str, u64)> = Vec::new();
        for (name, &v) in &self.visits {
            match pages.by_article(name) {
                Some(p) => out.visits[p] += v as f64,
                None => {
                    out.unknown_steps += v;
                    unknown.push((name, v));
                }
            }
        }
        for (name, &c) in &self.clicks {
            if let Some(p) = pages.by_article(name) {
                out.clicks[p] += c as f64;
            }
        }
        unknown.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out.unknown_articles = unknown.len() as u64;
        out.unknown_examples = unknown
            .iter()
            .take(EXAMPLES)
            .map(|(s, _)| s.to_string())
            .collect();
        out.pages_visited = out.visits.iter().filter(|&&v| v > 0.0).count() as u64;
        ensure!(
            out.pages_visited > 0,
            "no article of the paths is a page of the graph (e.g. {})",
            out.unknown_examples.join(", ")
        );
        Ok(out)
    }
}

/// Writes an impact table `id<TAB>url<TAB>visits<TAB>clicks` (header first; one row per
/// page with a visit or a click, by id; the URL empty when unknown), atomically. It reads
/// back with [`read_impact_table`](crate::read_impact_table).
pub fn write_impacts(path: &Path, pages: &Pages, impact: &WikispeediaImpact) -> Result<()> {
    crate::table::write_impact_table(
        path,
        pages,
        &["visits", "clicks"],
        &[&impact.visits, &impact.clicks],
    )
}
