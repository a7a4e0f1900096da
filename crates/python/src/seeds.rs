//! Seed sets (`crawlrank seeds`) and the RW paper's offline frontier ranking
//! (`crawlrank frontier-rank`) from Python, with the CLI's code and defaults.

use crate::graph::Graph;
use crate::to_py;
use crawlrank_frontier_rank::{bfs_downloaded, evaluate_with, Config, Method, OmegaChoice};
use crawlrank_rank::HitsConfig;
use crawlrank_seeds::{
    extract_seeds, prepare, random_seeds, top_pagerank_seeds, CoreRule, Pruning, SeedsConfig,
};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::path::PathBuf;

fn value_error(e: anyhow::Error) -> PyErr {
    PyValueError::new_err(format!("{e:#}"))
}

/// A seed set of `count` pages, as `crawlrank seeds --method METHOD` chooses it (the graph's
/// ids, in the order chosen).
#[pyfunction]
#[pyo3(signature = (graph, count, method="cover-density", rng_seed=42, cover_density=100.0,
    max_hubs=999, core_size=None, new_members=1, hits_iterations=60, prune=None))]
#[allow(clippy::too_many_arguments)]
pub fn seeds<'py>(
    py: Python<'py>,
    graph: &Graph,
    count: usize,
    method: &str,
    rng_seed: u64,
    cover_density: f64,
    max_hubs: usize,
    core_size: Option<usize>,
    new_members: usize,
    hits_iterations: usize,
    prune: Option<bool>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    if count == 0 {
        return Err(PyValueError::new_err("count must be at least 1"));
    }
    let rule = match (method, core_size) {
        ("fixed-size", Some(size)) => CoreRule::FixedSize { size, new_members },
        ("fixed-size", None) => {
            return Err(PyValueError::new_err(
                "method=\"fixed-size\" needs core_size (the pages of each core)",
            ))
        }
        ("cover-density" | "random" | "top-pagerank", None) => CoreRule::CoverDensity {
            min_density: cover_density,
            max_hubs,
        },
        ("cover-density" | "random" | "top-pagerank", Some(_)) => {
            return Err(PyValueError::new_err(
                "core_size is for method=\"fixed-size\"",
            ))
        }
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "unknown seeds method {other:?}: cover-density, fixed-size, random or top-pagerank"
            )))
        }
    };
    let config = SeedsConfig {
        count,
        rule,
        hits: HitsConfig {
            iterations: hits_iterations,
            tolerance: None,
        },
    };
    config.validate().map_err(value_error)?;
    let pruning = match prune {
        None => Pruning::Auto,
        Some(true) => Pruning::SameHost,
        Some(false) => Pruning::None,
    };
    let data = graph.data.clone();
    let method = method.to_string();
    let pages = py
        .allow_threads(move || -> anyhow::Result<Vec<u32>> {
            let n = data.csr.num_nodes();
            anyhow::ensure!(n > 0, "{} is an empty graph", data.path.display());
            Ok(match method.as_str() {
                "random" => random_seeds(n, count, rng_seed),
                "top-pagerank" => {
                    let pr = crawlrank_sim::reference_pagerank(&data.bv, &data.csr)?;
                    top_pagerank_seeds(&pr, count)
                }
                _ => {
                    let urls = data.bv.urls()?;
                    let prepared = prepare(&data.bv, &data.csr, pruning, urls.as_deref())?;
                    extract_seeds(&prepared.graph, &config, &mut |_| {})?.seeds
                }
            })
        })
        .map_err(to_py)?;
    Ok(graph.data.ids_of(&pages).into_pyarray(py))
}

/// Methods by name: `"rw,rw-eg"` or `["rw", "rw-eg"]`.
fn parse_methods(methods: &Bound<'_, PyAny>) -> PyResult<Vec<Method>> {
    if methods.is_instance_of::<PyString>() {
        return Method::parse_list(&methods.extract::<String>()?).map_err(value_error);
    }
    let names: Vec<String> = methods
        .extract()
        .map_err(|_| PyTypeError::new_err("methods is a name list or a list of names"))?;
    Method::parse_list(&names.join(",")).map_err(value_error)
}

/// The RW paper's offline experiment (`crawlrank frontier-rank`, one split): rank the frontier
/// of a downloaded set by each method and measure the impact gathered.
#[pyfunction]
#[pyo3(signature = (graph, impact, methods=None,
    downloaded=None, downloaded_fraction=None, n_seeds=10, rng_seed=42, impact_column="1",
    omega=0.8))]
#[allow(clippy::too_many_arguments)]
pub fn frontier_rank<'py>(
    py: Python<'py>,
    graph: &Graph,
    impact: &Bound<'py, PyAny>,
    methods: Option<Bound<'py, PyAny>>,
    downloaded: Option<Vec<i64>>,
    downloaded_fraction: Option<f64>,
    n_seeds: usize,
    rng_seed: u64,
    impact_column: &str,
    omega: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let data = graph.data.clone();
    let n = data.csr.num_nodes();
    let methods: Vec<Method> = if let Some(methods) = methods.filter(|m| !m.is_none()) {
        parse_methods(&methods)?
    } else {
        Method::parse_list("random,indegree,pagerank,rw,rw-eg").map_err(value_error)?
    };
    // The impact column, and (from a table) its other columns, which `learned` also walks
    // (as `crawlrank frontier-rank` does).
    let (impact, others): (Vec<f64>, Vec<Vec<f64>>) = if let Ok(path) = impact.extract::<PathBuf>()
    {
        let bv = &data.bv;
        py.allow_threads(|| -> anyhow::Result<(Vec<f64>, Vec<Vec<f64>>)> {
            let pages = crawlrank_impact::Pages::from_graph(bv)?;
            let mut table = crawlrank_impact::read_impact_table(&path, &pages)?;
            let index = crawlrank_impact::column_index(&path, &table.columns, impact_column)?;
            let chosen = table.values.remove(index);
            Ok((chosen, table.values))
        })
        .map_err(to_py)?
    } else {
        let values = py
            .import("numpy")?
            .call_method1("asarray", (impact, "float64"))?
            .downcast_into::<PyArray1<f64>>()
            .map_err(|_| PyValueError::new_err("impact must be a file or one number per page"))?
            .to_vec()?;
        (values, Vec::new())
    };
    if impact.len() != n {
        return Err(PyValueError::new_err(format!(
            "impact has {} values for {n} pages",
            impact.len()
        )));
    }
    let downloaded: Vec<u32> = match (downloaded, downloaded_fraction) {
        (Some(ids), None) => ids
            .iter()
            .map(|&id| data.node(id).map(|v| v as u32))
            .collect::<PyResult<_>>()?,
        (None, Some(x)) if x > 0.0 && x < 1.0 => {
            let seeds = random_seeds(n, n_seeds, rng_seed);
            let count = ((x * n as f64).round() as usize).max(1);
            bfs_downloaded(&data.csr, &seeds, count)
        }
        (None, Some(x)) => {
            return Err(PyValueError::new_err(format!(
                "downloaded_fraction must be in (0, 1), not {x}"
            )))
        }
        _ => {
            return Err(PyValueError::new_err(
                "give either downloaded (page ids) or downloaded_fraction",
            ))
        }
    };
    let config = Config {
        methods,
        omega: OmegaChoice::Fixed(omega),
        rng_seed,
        ..Config::default()
    };
    let ev = py
        .allow_threads(|| -> anyhow::Result<_> {
            let pr = crawlrank_sim::reference_pagerank(&data.bv, &data.csr)?;
            let others: Vec<&[f64]> = others.iter().map(Vec::as_slice).collect();
            evaluate_with(
                &data.csr,
                &downloaded,
                &impact,
                &others,
                Some(&pr),
                &config,
                &mut |_| {},
            )
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("downloaded", ev.downloaded)?;
    d.set_item("known_arcs", ev.known_arcs)?;
    d.set_item("frontier", data.ids_of(&ev.frontier).into_pyarray(py))?;
    d.set_item("truth", ev.truth.clone().into_pyarray(py))?;
    d.set_item("is_test", ev.is_test.clone())?;
    d.set_item("omega", ev.omega)?;
    let list = PyList::empty(py);
    for m in &ev.methods {
        let r = PyDict::new(py);
        r.set_item("method", m.method.name())?;
        r.set_item("scores", m.scores.clone().into_pyarray(py))?;
        r.set_item("seconds", m.seconds)?;
        r.set_item(
            "permille",
            m.curve.iter().map(|p| p.permille).collect::<Vec<_>>(),
        )?;
        r.set_item("pages", m.curve.iter().map(|p| p.pages).collect::<Vec<_>>())?;
        r.set_item(
            "impact",
            m.curve.iter().map(|p| p.impact).collect::<Vec<_>>(),
        )?;
        r.set_item(
            "pagerank",
            m.curve.iter().map(|p| p.pagerank).collect::<Vec<_>>(),
        )?;
        list.append(r)?;
    }
    d.set_item("methods", list)?;
    Ok(d)
}
