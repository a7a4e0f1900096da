//! `crawlrank.simulate`: `crawlrank simulate` from Python — the same seeds, reference, crawl
//! loop and measures ([`crawlrank_sim`]), with policies written in Python beside the built-in
//! ones — and `crawlrank.plot`, the simulator's SVG line charts for any curves.

use crate::graph::Graph;
use crate::policy::{ErrorSlot, PyBatchPolicy};
use crate::to_py;
use anyhow::Context;
use crawlrank_frontier::{Impacts, PageId, PolicyConfig};
use crawlrank_sim::{
    measure, reference_pagerank, simulate_policy, write_outputs, PolicyResult, Reference,
    SeedChoice, SimConfig, SimPolicy, Summary,
};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A policy to simulate: a built-in one, or a Python object with `reorder`.
enum PolicyArg {
    Builtin(SimPolicy),
    Python {
        name: &'static str,
        object: Py<PyAny>,
    },
}

impl PolicyArg {
    fn name(&self) -> &'static str {
        match self {
            PolicyArg::Builtin(p) => p.name(),
            PolicyArg::Python { name, .. } => name,
        }
    }
}

fn parse_policies(
    py: Python<'_>,
    policies: &Bound<'_, PyAny>,
    impacts: bool,
) -> PyResult<Vec<PolicyArg>> {
    let items: Vec<Bound<'_, PyAny>> = if policies.is_instance_of::<PyString>() {
        vec![policies.clone()]
    } else {
        policies.try_iter()?.collect::<PyResult<_>>()?
    };
    let mut out: Vec<PolicyArg> = Vec::new();
    for item in items {
        if let Ok(list) = item.extract::<String>() {
            let parsed = SimPolicy::parse_list_with(&list, impacts)
                .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
            for p in parsed {
                if !out.iter().any(|o| o.name() == p.name()) {
                    out.push(PolicyArg::Builtin(p));
                }
            }
            continue;
        }
        let reorder = item.getattr("reorder").ok().filter(|r| r.is_callable());
        if reorder.is_none() {
            return Err(PyTypeError::new_err(format!(
                "a policy is a name (\"fica\", \"opic,backlink\", \"all\") or an object with a \
                 reorder(view) method, not {}",
                item.repr()?
            )));
        }
        let name: String = match item.getattr("name") {
            Ok(n) if n.is_instance_of::<PyString>() => n.extract()?,
            _ => item.get_type().name()?.to_string(),
        };
        if out.iter().any(|o| o.name() == name) {
            return Err(PyValueError::new_err(format!(
                "two policies are named {name:?}: give the Python policy another `name`"
            )));
        }
        out.push(PolicyArg::Python {
            name: Box::leak(name.into_boxed_str()),
            object: item.unbind(),
        });
    }
    if out.is_empty() {
        return Err(PyValueError::new_err("no policy given"));
    }
    let _ = py;
    Ok(out)
}

/// How the run reports progress: nothing, a line on `sys.stderr`, or a callable.
enum Progress {
    Quiet,
    Stderr,
    Callback(Py<PyAny>),
}

impl Progress {
    fn from_arg(py: Python<'_>, arg: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(match arg {
            None => {
                let tty: bool = py
                    .import("sys")?
                    .getattr("stderr")?
                    .call_method0("isatty")
                    .and_then(|t| t.extract())
                    .unwrap_or(false);
                if tty {
                    Progress::Stderr
                } else {
                    Progress::Quiet
                }
            }
            Some(a) if a.is_callable() => Progress::Callback(a.unbind()),
            Some(a) => {
                if a.is_truthy()? {
                    Progress::Stderr
                } else {
                    Progress::Quiet
                }
            }
        })
    }

    /// Reports `done` of `total` pages crawled by `policy`, and checks for Ctrl-C.
    fn report(&self, py: Python<'_>, policy: &str, done: u64, total: u64) -> PyResult<()> {
        py.check_signals()?;
        match self {
            Progress::Quiet => {}
            Progress::Stderr => {
                let pct = if total == 0 {
                    100.0
                } else {
                    done as f64 * 100.0 / total as f64
                };
                let end = if done >= total { "\n" } else { "" };
                let line = format!("\r{policy}: {done}/{total} pages crawled ({pct:.0}%){end}");
                let err = py.import("sys")?.getattr("stderr")?;
                err.call_method1("write", (line,))?;
                err.call_method0("flush")?;
            }
            Progress::Callback(f) => {
                f.call1(py, (policy, done, total))?;
            }
        }
        Ok(())
    }
}

/// The impact vector: per-node values, or the impact table at `path` (column `column`).
fn read_impact(
    graph: &Graph,
    impact: &Bound<'_, PyAny>,
    column: &str,
) -> PyResult<(Impacts, String)> {
    if let Ok(path) = impact.extract::<PathBuf>() {
        let data = &graph.data;
        let run = || -> anyhow::Result<(Impacts, String)> {
            let pages = crawlrank_impact::Pages::from_graph(&data.bv)?;
            let mut table = crawlrank_impact::read_impact_table(&path, &pages)?;
            let index = crawlrank_impact::column_index(&path, &table.columns, column)?;
            let name = table.columns[index].clone();
            Ok((Impacts::new(table.values.swap_remove(index)), name))
        };
        return impact.py().allow_threads(run).map_err(to_py);
    }
    let values: Vec<f64> = impact
        .py()
        .import("numpy")?
        .call_method1("asarray", (impact, "float64"))?
        .downcast_into::<PyArray1<f64>>()
        .map_err(|_| PyValueError::new_err("impact must be a file or one number per page"))?
        .to_vec()?;
    let n = graph.data.csr.num_nodes();
    if values.len() != n {
        return Err(PyValueError::new_err(format!(
            "impact has {} values for {n} pages: give one per page, in node order",
            values.len()
        )));
    }
    if let Some(bad) = values.iter().find(|v| !v.is_finite() || **v < 0.0) {
        return Err(PyValueError::new_err(format!(
            "impacts must be finite and ≥ 0, not {bad}"
        )));
    }
    Ok((Impacts::new(values), "impact".into()))
}

/// Replays a crawl of `graph` with each policy and measures it (see the Python docstring).
#[pyfunction]
#[pyo3(signature = (graph, policies, seeds=None, n_seeds=100, rng_seed=42, batch=None,
    impact=None, impact_column="1", beta=PolicyConfig::BETA,
    delta_initial=PolicyConfig::DELTA_INITIAL, delta_slope=PolicyConfig::DELTA_SLOPE,
    omega=PolicyConfig::OMEGA, gamma=PolicyConfig::GAMMA, checkpoints=None, progress=None,
    out=None, save_orders=false))]
#[allow(clippy::too_many_arguments)]
pub fn simulate<'py>(
    py: Python<'py>,
    graph: &Graph,
    policies: &Bound<'py, PyAny>,
    seeds: Option<Bound<'py, PyAny>>,
    n_seeds: usize,
    rng_seed: u64,
    batch: Option<u64>,
    impact: Option<Bound<'py, PyAny>>,
    impact_column: &str,
    beta: f64,
    delta_initial: f64,
    delta_slope: f64,
    omega: f64,
    gamma: f64,
    checkpoints: Option<Vec<usize>>,
    progress: Option<Bound<'py, PyAny>>,
    out: Option<PathBuf>,
    save_orders: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let data = graph.data.clone();
    if batch == Some(0) {
        return Err(PyValueError::new_err("batch must be at least 1"));
    }
    let (impact, impact_name) = match &impact {
        Some(i) => {
            let (v, name) = read_impact(graph, i, impact_column)?;
            (Some(v), Some(name))
        }
        None => (None, None),
    };
    let policies = parse_policies(py, policies, impact.is_some())?;
    let choice = match seeds {
        None => {
            if n_seeds == 0 {
                return Err(PyValueError::new_err("n_seeds must be at least 1"));
            }
            SeedChoice::Random {
                count: n_seeds,
                rng_seed,
            }
        }
        Some(s) if s.is_instance_of::<PyString>() || s.hasattr("__fspath__")? => {
            SeedChoice::File(s.extract::<PathBuf>()?)
        }
        Some(s) => {
            let ids: Vec<i64> = s.extract().map_err(|_| {
                PyTypeError::new_err("seeds must be page ids, a seeds file's path, or None")
            })?;
            if ids.is_empty() {
                return Err(PyValueError::new_err("the seed set is empty"));
            }
            let pages = ids
                .iter()
                .map(|&id| {
                    data.node(id).map(|v| v as PageId).map_err(|_| {
                        PyValueError::new_err(format!(
                            "seed {id} is not a page of {} ({} pages)",
                            data.path.display(),
                            data.csr.num_nodes()
                        ))
                    })
                })
                .collect::<PyResult<Vec<_>>>()?;
            SeedChoice::Pages(pages)
        }
    };
    let percents = checkpoints.unwrap_or_else(|| crawlrank_sim::TABLE_PERCENTS.to_vec());
    if let Some(bad) = percents.iter().find(|&&p| p == 0 || p > 100) {
        return Err(PyValueError::new_err(format!(
            "checkpoints are percentages 1..=100, not {bad}"
        )));
    }
    let config = SimConfig {
        batch,
        rng_seed,
        impact,
        omega,
        gamma,
        beta,
        delta_initial,
        delta_slope,
        percents,
        ..SimConfig::default()
    };
    PolicyConfig {
        beta,
        delta_initial,
        delta_slope,
        ..PolicyConfig::default()
    }
    .check()
    .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    let progress = Progress::from_arg(py, progress)?;

    let error: ErrorSlot = Arc::new(Mutex::new(None));
    let run = || -> anyhow::Result<(Summary, Vec<PageId>)> {
        let pagerank = Arc::new(reference_pagerank(&data.bv, &data.csr)?);
        let (seeds, seed_source) = choice.resolve(&data.bv, &data.csr)?;
        let mut reference = Reference::new(&data.csr, pagerank, &seeds)?;
        if let Some(impact) = &config.impact {
            reference = reference.with_impact(impact.clone())?;
        }
        let batch = config.batch.unwrap_or_else(|| reference.default_batch());
        let total = reference.reachable;
        let mut results = Vec::new();
        for policy in &policies {
            let name = policy.name();
            let mut build =
                |c: &PolicyConfig| -> anyhow::Result<Box<dyn crawlrank_frontier::Policy>> {
                    match policy {
                        PolicyArg::Builtin(p) => p.build(c, &reference.pagerank),
                        PolicyArg::Python { name, object } => Python::with_gil(|py| {
                            let p = PyBatchPolicy::new(
                                py,
                                name,
                                object.clone_ref(py),
                                data.csr.num_nodes(),
                                batch,
                                error.clone(),
                            )?;
                            Ok(Box::new(p) as Box<dyn crawlrank_frontier::Policy>)
                        }),
                    }
                };
            let sim_policy = match policy {
                PolicyArg::Builtin(p) => *p,
                PolicyArg::Python { name, .. } => SimPolicy::Given(name),
            };
            let mut report = |done: u64| -> ControlFlow<()> {
                match Python::with_gil(|py| progress.report(py, name, done, total)) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        let mut slot = error.lock().expect("error slot");
                        if slot.is_none() {
                            *slot = Some(e);
                        }
                        ControlFlow::Break(())
                    }
                }
            };
            let run = simulate_policy(
                &data.csr,
                &seeds,
                sim_policy,
                &mut build,
                &reference,
                &config,
                &mut report,
            );
            if let Some(e) = error.lock().expect("error slot").take() {
                return Err(e.into());
            }
            let run = run?;
            let measures = measure(&run, &reference)?;
            results.push(PolicyResult { run, measures });
        }
        let summary = Summary {
            impact_column: impact_name.clone(),
            ..Summary::new(
                data.path.display().to_string(),
                &data.csr,
                seeds.len(),
                seed_source,
                &reference,
                &config,
                results,
            )
        };
        if let Some(dir) = &out {
            write_outputs(&summary, dir, save_orders, &data.ids)
                .with_context(|| format!("cannot write the results into {}", dir.display()))?;
        }
        Ok((summary, seeds))
    };
    let (summary, seeds) = py.allow_threads(run).map_err(to_py)?;
    to_dict(py, graph, &summary, &seeds)
}

fn to_dict<'py>(
    py: Python<'py>,
    graph: &Graph,
    s: &Summary,
    seeds: &[PageId],
) -> PyResult<Bound<'py, PyDict>> {
    let data = &graph.data;
    let d = PyDict::new(py);
    d.set_item("graph", &s.graph)?;
    d.set_item("nodes", s.nodes)?;
    d.set_item("arcs", s.arcs)?;
    d.set_item("seeds", data.ids_of(seeds).into_pyarray(py))?;
    d.set_item("seed_source", &s.seed_source)?;
    d.set_item("rng_seed", s.rng_seed)?;
    d.set_item("reachable", s.reachable)?;
    d.set_item("percents", s.percents.clone())?;
    d.set_item("impact_column", s.impact_column.clone())?;
    let params = PyDict::new(py);
    for (k, v) in &s.parameters {
        params.set_item(*k, *v)?;
    }
    d.set_item("parameters", params)?;
    let list = PyList::empty(py);
    for r in &s.results {
        let m = &r.measures;
        let p = PyDict::new(py);
        p.set_item("policy", r.run.policy.name())?;
        p.set_item("order", data.ids_of(&r.run.order).into_pyarray(py))?;
        p.set_item("final_scores", r.run.final_scores.clone().into_pyarray(py))?;
        p.set_item("batch", r.run.batch)?;
        p.set_item("kendall_tau_b", m.kendall_tau)?;
        p.set_item("crawl_seconds", r.run.crawl_time.as_secs_f64())?;
        p.set_item("arcs", r.run.arcs)?;
        p.set_item("peak_frontier", r.run.peak_frontier)?;
        p.set_item("peak_rss_bytes", r.run.peak_rss_bytes)?;
        p.set_item("checkpoints", m.checkpoints.clone().into_pyarray(py))?;
        p.set_item("throughput", m.throughput.clone().into_pyarray(py))?;
        p.set_item("mass", m.mass.clone().into_pyarray(py))?;
        p.set_item("mean_pagerank", m.mean_pagerank.clone().into_pyarray(py))?;
        p.set_item("impact", m.impact.clone().map(|c| c.into_pyarray(py)))?;
        list.append(p)?;
    }
    d.set_item("policies", list)?;
    Ok(d)
}

/// Writes an SVG line chart of curves over "% of reachable pages crawled" (one value per
/// percent, 1..=100), in the style of `crawlrank simulate`'s plots.
#[pyfunction]
#[pyo3(signature = (path, series, title="", y_label="fraction of hot pages crawled (throughput)"))]
pub fn plot(
    py: Python<'_>,
    path: PathBuf,
    series: Vec<(String, Vec<f64>)>,
    title: &str,
    y_label: &str,
) -> PyResult<()> {
    py.allow_threads(|| crawlrank_sim::report::plot(&path, title, y_label, &series))
        .map_err(to_py)
}
