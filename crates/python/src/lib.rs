//! The Python package `crawlrank`'s native module (`crawlrank._crawlrank`): crawlrank's graphs,
//! rankings, simulator, seeds and crawl states for researchers who work in Python.
//!
//! Crawl-ordering research happens in notebooks, next to NumPy, SciPy and pandas; this module
//! hands them the very code the command line runs, so that a number computed in Python is the
//! number `crawlrank` prints. The pure-Python layer (`python/crawlrank/__init__.py`) wraps
//! what this module returns into result objects and DataFrames; everything that costs time runs
//! here, outside the GIL:
//!
//! - [`graph`]: `Graph` — a BVGraph or an arc list opened as the CLI opens it, and its arrays;
//! - [`rank`]: PageRank, HITS and in-degree;
//! - [`simulate`]: the simulator over built-in policies and policies written in Python;
//! - [`policy`]: a Python batch policy as a frontier [`Policy`](crawlrank_frontier::Policy);
//! - [`seeds`]: seed sets and the RW paper's offline frontier ranking;
//! - [`crawl`]: a crawl's state, read-only.

use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

mod crawl;
mod graph;
mod policy;
mod rank;
mod seeds;
mod simulate;

create_exception!(
    crawlrank,
    PolicyError,
    PyRuntimeError,
    "A policy written in Python failed: it raised, or returned scores that cannot order the frontier."
);
create_exception!(
    crawlrank,
    CrawlrankError,
    PyRuntimeError,
    "crawlrank could not do what was asked (a corrupt graph, an unreadable file, …)."
);

/// An error of the Rust side as a Python exception: a `PyErr` it carries (a policy's own
/// exception, a KeyboardInterrupt) as it is, anything else as [`CrawlrankError`] with the whole
/// chain of context.
pub(crate) fn to_py(e: anyhow::Error) -> PyErr {
    match e.downcast::<PyErr>() {
        Ok(e) => e,
        Err(e) => CrawlrankError::new_err(format!("{e:#}")),
    }
}

#[pymodule]
fn _crawlrank(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PolicyError", py.get_type::<PolicyError>())?;
    m.add("CrawlrankError", py.get_type::<CrawlrankError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<graph::Graph>()?;
    m.add_class::<policy::PolicyView>()?;
    m.add_function(wrap_pyfunction!(rank::pagerank, m)?)?;
    m.add_function(wrap_pyfunction!(rank::hits, m)?)?;
    m.add_function(wrap_pyfunction!(rank::indegree, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::plot, m)?)?;
    m.add_function(wrap_pyfunction!(seeds::seeds, m)?)?;
    m.add_function(wrap_pyfunction!(seeds::frontier_rank, m)?)?;
    m.add_class::<crawl::Crawl>()?;
    Ok(())
}
