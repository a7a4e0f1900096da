//! `crawlrank.Crawl`: a crawl's state directory (`crawlrank crawl --state DIR`), read-only —
//! its counters (`crawlrank status`), its link graph as a [`Graph`] (`crawlrank export`), its
//! URLs, its crawl order and its current ranking. Each call reads the state afresh; while a
//! crawl runs and holds the state, the ranking comes from the snapshot it keeps refreshing.
//!
//! Exporting the link graph sorts and compresses every arc, so `graph()` keeps its export in
//! the cache with the crawl's counters beside it, and exports again only when the crawl has
//! moved on since (read from the state, not from file times: merely opening the state's
//! database rewrites its file).

use crate::graph::{load, Graph, GraphData};
use crate::to_py;
use anyhow::Context;
use crawlrank_crawler::{crawl_order, export_graph, export_ranking, status};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A crawl's state directory, opened read-only.
#[pyclass(module = "crawlrank._crawlrank", frozen)]
pub struct Crawl {
    dir: PathBuf,
    /// The graph last returned by `graph()`, with the [`crawl_key`] it was exported at.
    graph: Mutex<Option<(String, Arc<GraphData>)>>,
}

/// What changes whenever the crawl's link graph can: the URLs discovered (its nodes), the
/// pages popped and crawled (a crawled page's links are its arcs) and every counter of the
/// crawl. Equal keys of one state directory mean the same graph.
fn crawl_key(state: &Path) -> anyhow::Result<String> {
    let s = status(state)?;
    let mut key = format!(
        "discovered {} popped {} crawled {}",
        s.discovered, s.popped, s.crawled
    );
    for (name, value) in s.stats.fields() {
        key.push_str(&format!(" {name} {value}"));
    }
    Ok(key)
}

/// The crawl's link graph: the export in the cache when it was made at `key`, else a new one
/// (the graph, then the key beside it, so an interrupted export is never taken for current).
fn exported_graph(state: &Path, key: &str) -> anyhow::Result<GraphData> {
    let dir = export_dir(state)?;
    let base = dir.join("graph");
    let key_file = dir.join("graph.key");
    if std::fs::read_to_string(&key_file).is_ok_and(|k| k == key) {
        if let Ok(data) = load(&base, None) {
            return Ok(data);
        }
    }
    let _ = std::fs::remove_file(&key_file);
    export_graph(state, &base)?;
    std::fs::write(&key_file, key)
        .with_context(|| format!("cannot write {}", key_file.display()))?;
    load(&base, None)
}

/// A folder of the cache for this state's exports (the same state, the same folder).
fn export_dir(state: &Path) -> anyhow::Result<PathBuf> {
    let cache = crawlrank_graph::Cache::from_env();
    let absolute = std::fs::canonicalize(state)
        .with_context(|| format!("cannot resolve {}", state.display()))?;
    let key = absolute.display().to_string();
    // FNV-1a: a stable, dependency-free name for the folder.
    let hash = key.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    let dir = cache
        .root()
        .join("crawl-exports")
        .join(format!("{hash:016x}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

#[pymethods]
impl Crawl {
    /// Opens the crawl state in `state_dir` (read-only: nothing in it is changed).
    #[staticmethod]
    fn open(state_dir: PathBuf) -> PyResult<Self> {
        if !state_dir.is_dir() {
            return Err(PyFileNotFoundError::new_err(format!(
                "{}: no such crawl state directory",
                state_dir.display()
            )));
        }
        Ok(Self {
            dir: state_dir,
            graph: Mutex::new(None),
        })
    }

    /// The state directory.
    #[getter]
    fn state_dir(&self) -> String {
        self.dir.display().to_string()
    }

    /// Where the crawl stands (`crawlrank status`): the policy, URLs discovered, pages popped,
    /// crawled, pending and in the frontier, outcomes, hosts, WARC files and every counter.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = py.allow_threads(|| status(&self.dir)).map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("policy", s.config.as_ref().map(|c| c.kind.name()))?;
        d.set_item("discovered", s.discovered)?;
        d.set_item("popped", s.popped)?;
        d.set_item("crawled", s.crawled)?;
        d.set_item("pending", s.pending)?;
        d.set_item("frontier", s.frontier)?;
        let outcomes = PyDict::new(py);
        for (k, v) in &s.outcomes {
            outcomes.set_item(*k, *v)?;
        }
        d.set_item("outcomes", outcomes)?;
        d.set_item("hosts", s.hosts)?;
        d.set_item("warc_files", s.warc_files)?;
        let counters = PyDict::new(py);
        for (k, v) in s.stats.fields() {
            counters.set_item(k, v)?;
        }
        d.set_item("counters", counters)?;
        Ok(d)
    }

    /// The crawl's link graph (`crawlrank export --out`): every discovered URL a node (ids in
    /// discovery order), the out-links of the crawled pages its arcs; `Graph.urls()` names them.
    /// Exported into the cache once, and again only when the crawl has changed since.
    fn graph(&self, py: Python<'_>) -> PyResult<Graph> {
        let data = py
            .allow_threads(|| -> anyhow::Result<_> {
                let key = crawl_key(&self.dir)?;
                let mut cached = self.graph.lock().expect("cached graph");
                if let Some((k, data)) = &*cached {
                    if *k == key {
                        return Ok(data.clone());
                    }
                }
                let data = Arc::new(exported_graph(&self.dir, &key)?);
                *cached = Some((key, data.clone()));
                Ok(data)
            })
            .map_err(to_py)?;
        Ok(Graph { data })
    }

    /// The URL of every discovered page, by id (the link graph's node order).
    fn urls(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let graph = self.graph(py)?;
        Ok(py
            .allow_threads(|| graph.data.bv.urls())
            .map_err(to_py)?
            .unwrap_or_default())
    }

    /// The URLs popped so far, in the policy's crawl order.
    fn order(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        py.allow_threads(|| crawl_order(&self.dir)).map_err(to_py)
    }

    /// The policy's current ranking (`crawlrank export --ranking`): URLs best first and their
    /// scores.
    fn ranking<'py>(&self, py: Python<'py>) -> PyResult<(Vec<String>, Bound<'py, PyArray1<f64>>)> {
        let (urls, scores) = py
            .allow_threads(|| -> anyhow::Result<(Vec<String>, Vec<f64>)> {
                let out = export_dir(&self.dir)?.join("ranking.tsv");
                export_ranking(&self.dir, &out)?;
                let text = std::fs::read_to_string(&out)
                    .with_context(|| format!("cannot read {}", out.display()))?;
                let mut urls = Vec::new();
                let mut scores = Vec::new();
                for (i, line) in text.lines().enumerate() {
                    let (score, url) = line.split_once('\t').with_context(|| {
                        format!("{}:{}: not score<TAB>url", out.display(), i + 1)
                    })?;
                    scores.push(score.parse::<f64>().with_context(|| {
                        format!("{}:{}: bad score {score:?}", out.display(), i + 1)
                    })?);
                    urls.push(url.to_string());
                }
                Ok((urls, scores))
            })
            .map_err(to_py)?;
        Ok((urls, scores.into_pyarray(py)))
    }

    fn __repr__(&self) -> String {
        format!("<crawlrank.Crawl {}>", self.dir.display())
    }
}
