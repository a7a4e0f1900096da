//! Seed sets (`crawlrank seeds`) and the RW paper's offline frontier ranking
//! (`crawlrank frontier-rank`) from Python, with the CLI's code and defaults.

use crate::graph::Graph;
use crate::to_py;
use anyhow::Context;
use crawlrank_frontier_rank::repeat;
use crawlrank_frontier_rank::{
    bfs_downloaded, evaluate_with, Config, Evaluation, Method, OmegaChoice,
};
use crawlrank_rank::HitsConfig;
use crawlrank_seeds::{
    random_seeds, CoreParams, Method as SeedMethod, MethodError, Pruning, RuleError,
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
    let method = SeedMethod::parse(method).map_err(value_error)?;
    let params = CoreParams {
        cover_density,
        max_hubs,
        core_size,
        new_members,
        hits: HitsConfig {
            iterations: hits_iterations,
            tolerance: None,
        },
    };
    let config = match method.config(count, &params) {
        Ok(config) => config,
        Err(MethodError::Rule(RuleError::NeedsCoreSize)) => {
            return Err(PyValueError::new_err(
                "method=\"fixed-size\" needs core_size (the pages of each core)",
            ))
        }
        Err(MethodError::Rule(RuleError::CoreSizeOnlyForFixedSize)) => {
            return Err(PyValueError::new_err(
                "core_size is for method=\"fixed-size\"",
            ))
        }
        Err(MethodError::Invalid(e)) => return Err(value_error(e)),
    };
    let pruning = match prune {
        None => Pruning::Auto,
        Some(true) => Pruning::SameHost,
        Some(false) => Pruning::None,
    };
    let data = graph.data.clone();
    let pages = py
        .allow_threads(move || -> anyhow::Result<Vec<u32>> {
            let n = data.csr.num_nodes();
            anyhow::ensure!(n > 0, "{} is an empty graph", data.path.display());
            let pagerank = || crawlrank_sim::reference_pagerank(&data.bv, &data.csr);
            let chosen = method.choose(
                &data.bv,
                Some(&data.csr),
                // The URLs are not read here: pruning reads them when it prunes.
                None,
                &config,
                rng_seed,
                pruning,
                pagerank,
                &mut |_| {},
            )?;
            Ok(chosen.seeds().to_vec())
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

/// The rng seeds of a repeated experiment, as `crawlrank frontier-rank --repeat N` and
/// `--rng-seeds LIST` choose them: `rng_seed`, `rng_seed + 1`, … or the list; `None` for one run.
fn rng_seed_list(
    repeat: Option<usize>,
    list: Option<Vec<u64>>,
    start: u64,
) -> PyResult<Option<Vec<u64>>> {
    Ok(Some(match (repeat, list) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "give either repeat or rng_seeds, not both",
            ))
        }
        (Some(0), None) => return Err(PyValueError::new_err("repeat must be at least 1")),
        (Some(n), None) => (0..n as u64)
            .map(|i| {
                start.checked_add(i).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "rng_seed {start} + {i} overflows a 64-bit rng seed"
                    ))
                })
            })
            .collect::<PyResult<Vec<_>>>()?,
        (None, Some(list)) => {
            if list.is_empty() {
                return Err(PyValueError::new_err(
                    "rng_seeds needs at least one rng seed",
                ));
            }
            for (i, s) in list.iter().enumerate() {
                if list[..i].contains(s) {
                    return Err(PyValueError::new_err(format!(
                        "rng_seeds lists rng seed {s} twice: the two runs would be the same"
                    )));
                }
            }
            list
        }
    }))
}

/// One run's results as a dict (the numbers of a single `crawlrank frontier-rank`).
fn evaluation_dict<'py>(
    py: Python<'py>,
    graph: &Graph,
    ev: &Evaluation,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("rng_seed", ev.config.rng_seed)?;
    d.set_item("downloaded", ev.downloaded)?;
    d.set_item("known_arcs", ev.known_arcs)?;
    d.set_item("frontier", graph.data.ids_of(&ev.frontier).into_pyarray(py))?;
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

/// The RW paper's offline experiment (`crawlrank frontier-rank`): rank the frontier of a
/// downloaded set by each method and measure the impact gathered — one split, or with `repeat`
/// / `rng_seeds` one run per rng seed and the statistics over them (`--repeat`, `--rng-seeds`).
#[pyfunction]
#[pyo3(signature = (graph, impact, methods=None,
    downloaded=None, downloaded_fraction=None, n_seeds=10, rng_seed=42, impact_column="1",
    omega=0.8, repeat=None, rng_seeds=None, baseline=None))]
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
    repeat: Option<usize>,
    rng_seeds: Option<Vec<u64>>,
    baseline: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let data = graph.data.clone();
    let n = data.csr.num_nodes();
    let methods: Vec<Method> = if let Some(methods) = methods.filter(|m| !m.is_none()) {
        parse_methods(&methods)?
    } else {
        Method::parse_list("random,indegree,pagerank,rw,rw-eg").map_err(value_error)?
    };
    let runs = rng_seed_list(repeat, rng_seeds, rng_seed)?;
    let baseline = match (baseline, &runs) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(PyValueError::new_err(
                "baseline compares methods over runs: it needs repeat=N or rng_seeds=[...]",
            ))
        }
        (Some(b), Some(_)) => {
            let m = Method::parse(&b).map_err(value_error)?;
            Some(methods.iter().position(|&x| x == m).ok_or_else(|| {
                PyValueError::new_err(format!("baseline {b} is not among the methods"))
            })?)
        }
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
    // D for an rng seed: the given pages (the same for every run), or a BFS from random seeds
    // drawn with it.
    let given: Option<Vec<u32>> = match (downloaded, downloaded_fraction) {
        (Some(ids), None) => Some(
            ids.iter()
                .map(|&id| data.node(id).map(|v| v as u32))
                .collect::<PyResult<_>>()?,
        ),
        (None, Some(x)) if x > 0.0 && x <= 1.0 => None,
        (None, Some(x)) => {
            return Err(PyValueError::new_err(format!(
                "downloaded_fraction must be in (0, 1], as the CLI's --downloaded-fraction, not {x}"
            )))
        }
        _ => {
            return Err(PyValueError::new_err(
                "give either downloaded (page ids) or downloaded_fraction",
            ))
        }
    };
    let downloaded_for = |rng_seed: u64| -> Vec<u32> {
        match (&given, downloaded_fraction) {
            (Some(pages), _) => pages.clone(),
            (None, x) => {
                let x = x.expect("checked above");
                let seeds = random_seeds(n, n_seeds, rng_seed);
                let count = ((x * n as f64).round() as usize).max(1);
                bfs_downloaded(&data.csr, &seeds, count)
            }
        }
    };
    let config = Config {
        methods,
        omega: OmegaChoice::Fixed(omega),
        rng_seed,
        ..Config::default()
    };
    let seeds = runs.clone().unwrap_or_else(|| vec![rng_seed]);
    let evaluations = py
        .allow_threads(|| -> anyhow::Result<Vec<Evaluation>> {
            let pr = crawlrank_sim::reference_pagerank(&data.bv, &data.csr)?;
            let others: Vec<&[f64]> = others.iter().map(Vec::as_slice).collect();
            let mut evaluations = Vec::with_capacity(seeds.len());
            for &rng_seed in &seeds {
                let config = Config {
                    rng_seed,
                    ..config.clone()
                };
                let e = evaluate_with(
                    &data.csr,
                    &downloaded_for(rng_seed),
                    &impact,
                    &others,
                    Some(&pr),
                    &config,
                    &mut |_| {},
                )
                .with_context(|| format!("the run with rng seed {rng_seed}"))?;
                evaluations.push(e);
            }
            Ok(evaluations)
        })
        .map_err(to_py)?;
    if runs.is_none() {
        return evaluation_dict(py, graph, &evaluations[0]);
    }
    let d = PyDict::new(py);
    d.set_item("rng_seeds", seeds)?;
    let list = PyList::empty(py);
    for e in &evaluations {
        list.append(evaluation_dict(py, graph, e)?)?;
    }
    d.set_item("runs", list)?;
    let list = PyList::empty(py);
    for s in repeat::stats(&evaluations) {
        let r = PyDict::new(py);
        let i = &s.interval;
        r.set_item("method", s.method)?;
        r.set_item("x_percent", f64::from(s.permille) / 10.0)?;
        r.set_item("k", s.k)?;
        r.set_item("measure", s.measure)?;
        r.set_item("n", i.n)?;
        r.set_item("mean", i.mean)?;
        r.set_item("sd", i.sd)?;
        r.set_item("ci95_low", i.low())?;
        r.set_item("ci95_high", i.high())?;
        list.append(r)?;
    }
    d.set_item("stats", list)?;
    let list = PyList::empty(py);
    for p in repeat::paired(&evaluations, baseline) {
        let r = PyDict::new(py);
        r.set_item("measure", p.measure)?;
        r.set_item("x_percent", f64::from(p.at) / 10.0)?;
        r.set_item("method_a", p.a)?;
        r.set_item("method_b", p.b)?;
        r.set_item("runs", p.wins.runs())?;
        r.set_item("a_wins", p.wins.a_wins)?;
        r.set_item("b_wins", p.wins.b_wins)?;
        r.set_item("ties", p.wins.ties)?;
        r.set_item("wilcoxon_p", p.wins.p)?;
        list.append(r)?;
    }
    d.set_item("paired", list)?;
    Ok(d)
}
