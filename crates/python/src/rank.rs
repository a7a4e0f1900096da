//! Rankings of a whole graph — PageRank, HITS, in-degree — with `crawlrank rank`'s code and
//! defaults, as NumPy arrays in node order.

use crate::graph::Graph;
use crate::to_py;
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// PageRank with damping `alpha`, iterated until the L1 change is below `tol` (at most
/// `max_iter` iterations); `crawlrank rank --algo pagerank`.
#[pyfunction]
#[pyo3(signature = (graph, alpha=0.85, tol=1e-10, max_iter=1000))]
pub fn pagerank<'py>(
    py: Python<'py>,
    graph: &Graph,
    alpha: f64,
    tol: f64,
    max_iter: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    if !(0.0..1.0).contains(&alpha) {
        return Err(PyValueError::new_err(format!(
            "alpha must be in [0, 1), not {alpha}"
        )));
    }
    if tol.is_nan() || tol <= 0.0 {
        return Err(PyValueError::new_err(format!("tol must be > 0, not {tol}")));
    }
    let data = graph.data.clone();
    let scores = py
        .allow_threads(move || {
            let cfg = crawlrank_rank::PageRankConfig {
                damping: alpha,
                threshold: tol,
                max_iterations: max_iter,
                preference: None,
            };
            crawlrank_rank::pagerank(&data.csr, &cfg).map(|r| r.scores)
        })
        .map_err(to_py)?;
    Ok(scores.into_pyarray(py))
}

/// Two score vectors: HITS's authorities and hubs.
type Scores2<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// HITS (`iterations` rounds, as `crawlrank rank --algo hits`): `(authorities, hubs)`.
#[pyfunction]
#[pyo3(signature = (graph, iterations=60))]
pub fn hits<'py>(py: Python<'py>, graph: &Graph, iterations: usize) -> PyResult<Scores2<'py>> {
    let data = graph.data.clone();
    let r = py
        .allow_threads(move || {
            let t = data.csr.transpose();
            let cfg = crawlrank_rank::HitsConfig {
                iterations,
                ..Default::default()
            };
            crawlrank_rank::hits(&data.csr, &t, &cfg)
        })
        .map_err(to_py)?;
    Ok((r.authorities.into_pyarray(py), r.hubs.into_pyarray(py)))
}

/// In-degree of every page (`crawlrank rank --algo indegree`).
#[pyfunction]
pub fn indegree<'py>(py: Python<'py>, graph: &Graph) -> Bound<'py, PyArray1<f64>> {
    let data = graph.data.clone();
    py.allow_threads(move || crawlrank_rank::indegree(&data.csr))
        .into_pyarray(py)
}
