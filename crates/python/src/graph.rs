//! `crawlrank.Graph`: a graph opened exactly as the command line's `--graph` opens it (a BVGraph
//! basename, or an arc list imported into the cache), decoded once into memory, with NumPy and
//! SciPy views of it.
//!
//! Pages are named by their ids — the graph's own ids (`BASENAME.ids` of an arc list whose
//! ids have gaps), as every CLI command names them; arrays indexed by page (rankings,
//! `outdegrees`) are in node order, and `Graph.ids` gives the id of each node.

use crate::to_py;
use anyhow::Context;
use crawlrank_graph::{open_graph, BvWebGraph, Cache, Csr, PageIds};
use numpy::ndarray::ArrayView1;
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A graph and what every function needs of it.
pub struct GraphData {
    /// The graph as opened (its basename, cache directory, URLs).
    pub bv: BvWebGraph,
    /// Its arcs, decoded.
    pub csr: Csr,
    /// The users' id of each node.
    pub ids: PageIds,
    /// The path the user gave.
    pub path: PathBuf,
}

impl GraphData {
    /// The node of the page with id `id`, or a `ValueError` naming it.
    pub fn node(&self, id: i64) -> PyResult<usize> {
        u64::try_from(id)
            .ok()
            .and_then(|id| self.ids.node(id))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{id} is not a page of {} ({} pages{})",
                    self.path.display(),
                    self.csr.num_nodes(),
                    if self.ids.is_dense() {
                        format!(": ids 0..{}", self.csr.num_nodes().saturating_sub(1))
                    } else {
                        ", see Graph.ids".into()
                    }
                ))
            })
    }

    /// The ids of `nodes`, as an array.
    pub fn ids_of(&self, nodes: &[u32]) -> Vec<i64> {
        self.ids.ids_of(nodes).map(|id| id as i64).collect()
    }
}

/// Opens `path` (a BVGraph basename or an arc-list file) with `cache` (or the CLI's default:
/// `$CRAWLRANK_CACHE`, else `~/.cache/crawlrank`), decoding it into memory.
pub fn load(path: &Path, cache: Option<&Path>) -> anyhow::Result<GraphData> {
    let cache = match cache {
        Some(dir) => Cache::new(dir),
        None => Cache::from_env(),
    };
    let bv = open_graph(path, &cache)?;
    let ids = bv.page_ids()?;
    let csr = bv
        .to_csr()
        .with_context(|| format!("cannot decode {}", path.display()))?;
    Ok(GraphData {
        bv,
        csr,
        ids,
        path: path.to_path_buf(),
    })
}

/// A web graph in memory: a BVGraph (LAW's, webgraph-rs's, `crawlrank import`'s or
/// `generate`'s) or an arc list, opened as `crawlrank --graph` opens it.
#[pyclass(module = "crawlrank._crawlrank", frozen)]
pub struct Graph {
    pub data: Arc<GraphData>,
}

/// A read-only NumPy array over memory `owner` keeps alive.
///
/// # Safety
/// `view` must point into memory owned by `owner`'s Rust value, which must not change while
/// `owner` lives.
unsafe fn borrowed<'py, T: numpy::Element>(
    view: ArrayView1<'_, T>,
    owner: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<T>>> {
    let array = unsafe { PyArray1::borrow_from_array(&view, owner) };
    read_only(&array)?;
    Ok(array)
}

/// Marks `array` read-only, so that Python cannot write into memory Rust owns or shares.
pub fn read_only<T: numpy::Element>(array: &Bound<'_, PyArray1<T>>) -> PyResult<()> {
    let kwargs = PyDict::new(array.py());
    kwargs.set_item("write", false)?;
    array.call_method("setflags", (), Some(&kwargs))?;
    Ok(())
}

#[pymethods]
impl Graph {
    /// Opens a BVGraph basename (`DIR/NAME` for `DIR/NAME.graph`, `.properties`, …) or an arc
    /// list (imported into the cache once, as the CLI does).
    #[staticmethod]
    #[pyo3(signature = (path, cache=None))]
    fn load(py: Python<'_>, path: PathBuf, cache: Option<PathBuf>) -> PyResult<Self> {
        if !path.is_file() && !crawlrank_graph::is_bvgraph(&path) {
            return Err(PyFileNotFoundError::new_err(format!(
                "{}: no such graph (neither a BVGraph basename with {}.graph and .properties nor an arc-list file)",
                path.display(),
                path.display()
            )));
        }
        let data = py
            .allow_threads(|| load(&path, cache.as_deref()))
            .map_err(to_py)?;
        Ok(Self {
            data: Arc::new(data),
        })
    }

    /// Number of pages.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.data.csr.num_nodes()
    }

    /// Number of arcs.
    #[getter]
    fn num_arcs(&self) -> u64 {
        self.data.csr.num_arcs()
    }

    /// The graph's basename (the imported copy's, for an arc list).
    #[getter]
    fn basename(&self) -> String {
        self.data.bv.basename().display().to_string()
    }

    /// The path as given to `load`.
    #[getter]
    fn path(&self) -> String {
        self.data.path.display().to_string()
    }

    /// The id of each node (node order): `0..n` unless the graph came from an arc list whose
    /// ids have gaps or do not start at 0.
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let n = self.data.csr.num_nodes();
        (0..n)
            .map(|v| self.data.ids.id(v) as i64)
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// The node (0..n, the index into rankings and `to_scipy()`) of the page with id `id`.
    fn node(&self, id: i64) -> PyResult<usize> {
        self.data.node(id)
    }

    /// The out-links of page `id`, as page ids.
    fn successors<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let v = self.data.node(id)?;
        Ok(self
            .data
            .ids_of(self.data.csr.successors(v))
            .into_pyarray(py))
    }

    /// The outdegree of every page, in node order.
    fn outdegrees<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let (offsets, _) = self.data.csr.parts();
        offsets
            .windows(2)
            .map(|w| (w[1] - w[0]) as i64)
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// The URL of every page (node order), or `None` when the graph has no `.urls`.
    fn urls(&self, py: Python<'_>) -> PyResult<Option<Vec<String>>> {
        py.allow_threads(|| self.data.bv.urls()).map_err(to_py)
    }

    /// The adjacency matrix as a `scipy.sparse.csr_array` over nodes (row `u`, column `v`
    /// for an arc `u → v`; `Graph.ids` names them). Its `indices` share the graph's memory
    /// (read-only) when the graph has fewer than 2^31 arcs and nodes; `data` is ones of `dtype`.
    #[pyo3(signature = (dtype=None))]
    fn to_scipy<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        dtype: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data = &slf.get().data;
        let (offsets, succ) = data.csr.parts();
        let n = data.csr.num_nodes();
        let np = py.import("numpy")?;
        let small = succ.len() < i32::MAX as usize && n < i32::MAX as usize;
        let (indptr, indices): (Bound<'py, PyAny>, Bound<'py, PyAny>) = if small {
            let indptr: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
            // SAFETY: node ids below 2^31 read the same as u32 and i32; the slice lives in the
            // graph, which the array keeps alive and which never changes.
            let as_i32 =
                unsafe { std::slice::from_raw_parts(succ.as_ptr().cast::<i32>(), succ.len()) };
            let indices = unsafe { borrowed(ArrayView1::from(as_i32), slf.clone().into_any())? };
            (indptr.into_pyarray(py).into_any(), indices.into_any())
        } else {
            let indptr: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
            let indices: Vec<i64> = succ.iter().map(|&s| i64::from(s)).collect();
            (
                indptr.into_pyarray(py).into_any(),
                indices.into_pyarray(py).into_any(),
            )
        };
        let dtype = match dtype {
            Some(d) => d,
            None => np.getattr("float64")?,
        };
        let ones = np.call_method1("ones", (succ.len(), dtype))?;
        let sparse = py.import("scipy.sparse")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("shape", (n, n))?;
        kwargs.set_item("copy", false)?;
        let parts = PyTuple::new(py, [ones, indices, indptr])?;
        sparse.call_method("csr_array", (parts,), Some(&kwargs))
    }

    fn __len__(&self) -> usize {
        self.data.csr.num_nodes()
    }

    fn __repr__(&self) -> String {
        format!(
            "<crawlrank.Graph {}: {} pages, {} arcs>",
            self.data.path.display(),
            self.data.csr.num_nodes(),
            self.data.csr.num_arcs()
        )
    }
}
