//! The files `crawlrank seeds` writes and `seeds-eval`, `simulate` and `crawl` read.
//!
//! - The **seeds file**: one seed per line, `id`, or `id<TAB>url` when the graph has URLs; lines
//!   starting with `#` are comments. `simulate --seeds-file` takes the id, `crawl --seeds` the URL.
//! - **`FILE.cores.json`** beside it: how the seeds were found — the method and its parameters,
//!   the graph, and for each round its core's hubs, authorities, arcs, cover density, seed and
//!   timings. `seeds-eval` reads the cores from it to measure the distances between them.
//!
//! Pages are named in both files by the ids users see ([`PageIds`]: an imported arc list's own
//! ids, `0..n` for a graph without `.ids`); in memory they are the graph's nodes.
//!
//! Both are written to a temporary file and renamed, so a failed run never leaves a file that
//! looks complete.

use crate::extract::Round;
use anyhow::{bail, Context, Result};
use crawlrank_graph::atomic;
use crawlrank_graph::PageIds;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The path of the cores record of a seeds file: `FILE.cores.json`.
pub fn cores_path(seeds_file: &Path) -> PathBuf {
    let mut name = seeds_file.as_os_str().to_owned();
    name.push(".cores.json");
    PathBuf::from(name)
}

/// Writes `seeds` (nodes) to `path`, one per line by its id in `ids`, with its URL after a tab
/// when `urls` is given.
pub fn write_seeds_file(
    path: &Path,
    seeds: &[u32],
    urls: Option<&[String]>,
    ids: &PageIds,
) -> Result<()> {
    atomic::write_file(path, |w| {
        for &s in seeds {
            let id = ids.id(s as usize);
            match urls {
                Some(u) => writeln!(w, "{id}\t{}", u[s as usize])?,
                None => writeln!(w, "{id}")?,
            }
        }
        Ok(())
    })
}

/// What a `.cores.json` says about how seeds were chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct CoresRecord {
    /// The graph's basename or file, as given.
    pub graph: String,
    /// The method (`cover-density`, `fixed-size`, `random`, `top-pagerank`).
    pub method: String,
    /// The method's parameters, as JSON.
    pub parameters: Value,
    /// Whether arcs within a host were pruned before HITS.
    pub pruned: bool,
    /// Pages of the graph.
    pub pages: u64,
    /// Arcs of the graph, and after pruning.
    pub arcs: (u64, u64),
    /// Seeds asked for.
    pub requested: usize,
    /// The seeds found.
    pub seeds: Vec<u32>,
    /// Why the extraction stopped (`count reached`, `no arcs left`), or `baseline`.
    pub stop: String,
    /// Each round's core: (hubs, authorities, arcs, seed).
    pub cores: Vec<CoreEntry>,
}

/// One core as the record keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreEntry {
    /// 1 for the first round.
    pub round: usize,
    /// Hubs, in the order they joined.
    pub hubs: Vec<u32>,
    /// Authorities, in the order they joined.
    pub authorities: Vec<u32>,
    /// `|E(H,A)|`.
    pub arcs: u64,
    /// The round's seed.
    pub seed: Option<u32>,
    /// HITS iterations, seconds in HITS, seconds for the core.
    pub timing: (usize, f64, f64),
}

impl CoreEntry {
    /// The entry of a round of the extraction.
    pub fn of(round: &Round) -> Self {
        Self {
            round: round.round,
            hubs: round.core.hubs.clone(),
            authorities: round.core.authorities.clone(),
            arcs: round.core.arcs,
            seed: round.core.seed,
            timing: (
                round.hits_iterations,
                round.hits_time.as_secs_f64(),
                round.core_time.as_secs_f64(),
            ),
        }
    }

    /// `100·arcs / (|H|·|A|)`, 0 without hubs.
    pub fn cover_density(&self) -> f64 {
        crate::cores::cover_density(self.arcs, self.hubs.len(), self.authorities.len())
    }

    /// Every page of the core, hubs first.
    pub fn pages(&self) -> Vec<u32> {
        self.hubs.iter().chain(&self.authorities).copied().collect()
    }
}

/// Writes `record` as JSON to `path` (atomically), its pages named by their ids in `ids`.
pub fn write_cores_json(
    path: &Path,
    record: &CoresRecord,
    urls: Option<&[String]>,
    ids: &PageIds,
) -> Result<()> {
    let url = |p: u32| urls.map(|u| u[p as usize].clone());
    let named = |pages: &[u32]| ids.ids_of(pages).collect::<Vec<u64>>();
    let rounds: Vec<Value> = record
        .cores
        .iter()
        .map(|c| {
            json!({
                "round": c.round,
                "seed": c.seed.map(|s| ids.id(s as usize)),
                "seed_url": c.seed.and_then(url),
                "hubs": named(&c.hubs),
                "authorities": named(&c.authorities),
                "arcs": c.arcs,
                "cover_density": c.cover_density(),
                "hits_iterations": c.timing.0,
                "hits_seconds": c.timing.1,
                "core_seconds": c.timing.2,
            })
        })
        .collect();
    let doc = json!({
        "graph": record.graph,
        "method": record.method,
        "parameters": record.parameters,
        "pruned": record.pruned,
        "pages": record.pages,
        "arcs": record.arcs.0,
        "arcs_after_pruning": record.arcs.1,
        "requested": record.requested,
        "found": record.seeds.len(),
        "seeds": named(&record.seeds),
        "stop": record.stop,
        "rounds": rounds,
    });
    atomic::write_file(path, |w| {
        serde_json::to_writer_pretty(&mut *w, &doc)?;
        writeln!(w)?;
        Ok(())
    })
}

/// Reads a `.cores.json` written by [`write_cores_json`] for the graph whose pages have the
/// ids `ids`; errors name the file and the field, and an id that is not a page of the graph
/// is an error.
pub fn read_cores_json(path: &Path, ids: &PageIds) -> Result<CoresRecord> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the cores record {}", path.display()))?;
    let doc: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    parse_record(&doc, ids)
        .with_context(|| format!("{} is not a cores record of this graph", path.display()))
}

fn parse_record(doc: &Value, pages: &PageIds) -> Result<CoresRecord> {
    let field = |name: &str| doc.get(name).with_context(|| format!("no field '{name}'"));
    let text = |name: &str| -> Result<String> {
        Ok(field(name)?
            .as_str()
            .with_context(|| format!("'{name}' is not a string"))?
            .to_owned())
    };
    let int = |v: &Value, name: &str| -> Result<u64> {
        v.as_u64()
            .with_context(|| format!("'{name}' is not a non-negative integer"))
    };
    let page = |x: &Value, name: &str| -> Result<u32> {
        let id = int(x, name)?;
        match pages.node(id) {
            Some(node) => Ok(node as u32),
            None => bail!("'{name}' holds {id}, which is not a page of the graph"),
        }
    };
    let ids = |v: &Value, name: &str| -> Result<Vec<u32>> {
        let list = v
            .as_array()
            .with_context(|| format!("'{name}' is not a list"))?;
        list.iter().map(|x| page(x, name)).collect()
    };
    let mut cores = Vec::new();
    let rounds = field("rounds")?
        .as_array()
        .context("'rounds' is not a list")?;
    for (i, r) in rounds.iter().enumerate() {
        let at = || format!("round {}", i + 1);
        let get = |name: &str| {
            r.get(name)
                .with_context(|| format!("{}: no field '{name}'", at()))
        };
        let seed = match get("seed")? {
            Value::Null => None,
            v => Some(page(v, "seed").with_context(at)?),
        };
        cores.push(CoreEntry {
            round: int(get("round")?, "round").with_context(at)? as usize,
            hubs: ids(get("hubs")?, "hubs").with_context(at)?,
            authorities: ids(get("authorities")?, "authorities").with_context(at)?,
            arcs: int(get("arcs")?, "arcs").with_context(at)?,
            seed,
            timing: (
                int(get("hits_iterations")?, "hits_iterations").with_context(at)? as usize,
                get("hits_seconds")?.as_f64().unwrap_or(0.0),
                get("core_seconds")?.as_f64().unwrap_or(0.0),
            ),
        });
    }
    let pruned = match field("pruned")? {
        Value::Bool(b) => *b,
        _ => bail!("'pruned' is not true or false"),
    };
    Ok(CoresRecord {
        graph: text("graph")?,
        method: text("method")?,
        parameters: field("parameters")?.clone(),
        pruned,
        pages: int(field("pages")?, "pages")?,
        arcs: (
            int(field("arcs")?, "arcs")?,
            int(field("arcs_after_pruning")?, "arcs_after_pruning")?,
        ),
        requested: int(field("requested")?, "requested")? as usize,
        seeds: ids(field("seeds")?, "seeds")?,
        stop: text("stop")?,
        cores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> CoresRecord {
        CoresRecord {
            graph: "g".into(),
            method: "cover-density".into(),
            parameters: json!({"cover_density": 100.0}),
            pruned: false,
            pages: 10,
            arcs: (20, 20),
            requested: 3,
            seeds: vec![4],
            stop: "no arcs left".into(),
            cores: vec![
                CoreEntry {
                    round: 1,
                    hubs: vec![4, 5],
                    authorities: vec![1],
                    arcs: 2,
                    seed: Some(4),
                    timing: (60, 0.5, 0.25),
                },
                CoreEntry {
                    round: 2,
                    hubs: vec![],
                    authorities: vec![7],
                    arcs: 0,
                    seed: None,
                    timing: (60, 0.5, 0.25),
                },
            ],
        }
    }

    #[test]
    fn cores_record_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.txt.cores.json");
        let ids = PageIds::dense(10);
        write_cores_json(&p, &record(), None, &ids).unwrap();
        assert_eq!(read_cores_json(&p, &ids).unwrap(), record());
        // With the user's own ids: written as those, read back as the nodes.
        let sparse = PageIds::from_sorted((0..10).map(|v| 3 * v + 1).collect(), "t").unwrap();
        write_cores_json(&p, &record(), None, &sparse).unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(doc["seeds"], json!([13]));
        assert_eq!(doc["rounds"][0]["hubs"], json!([13, 16]));
        assert_eq!(doc["rounds"][1]["authorities"], json!([22]));
        assert_eq!(read_cores_json(&p, &sparse).unwrap(), record());
        let e = format!("{:#}", read_cores_json(&p, &ids).unwrap_err());
        assert!(
            e.contains("'seed' holds 13, which is not a page of the graph"),
            "{e}"
        );
        assert_eq!(
            cores_path(Path::new("a/s.txt")),
            Path::new("a/s.txt.cores.json")
        );
    }

    #[test]
    fn a_broken_record_is_an_error_naming_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.json");
        std::fs::write(&p, "{\"rounds\": [{\"round\": 1}]}").unwrap();
        let ids = PageIds::dense(10);
        let e = format!("{:#}", read_cores_json(&p, &ids).unwrap_err());
        assert!(e.contains("bad.json") && e.contains("round 1"), "{e}");
        std::fs::write(&p, "not json").unwrap();
        let e = format!("{:#}", read_cores_json(&p, &ids).unwrap_err());
        assert!(e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn seeds_file_has_urls_when_known() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.txt");
        let urls = vec!["http://a/".to_string(), "http://b/".to_string()];
        let ids = PageIds::dense(2);
        write_seeds_file(&p, &[1, 0], Some(&urls), &ids).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "1\thttp://b/\n0\thttp://a/\n"
        );
        write_seeds_file(&p, &[1], None, &ids).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n");
        let sparse = PageIds::from_sorted(vec![7, 20], "t").unwrap();
        write_seeds_file(&p, &[1, 0], Some(&urls), &sparse).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "20\thttp://b/\n7\thttp://a/\n"
        );
    }
}
