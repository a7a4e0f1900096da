//! A batch policy written in Python, run by the frontier like the built-in batch policies.
//!
//! The object's `reorder(view)` is called every `K` crawled pages (at each batch boundary,
//! where `backlink` and the PageRank policies reorder) and returns one score per frontier page;
//! the frontier is then sorted by score, descending, ties in order of first discovery, and
//! pages found until the next reorder are appended in discovery order — exactly what the
//! built-in `backlink` does with its counts. The view hands the policy NumPy arrays and a SciPy
//! matrix of the known graph, built only when asked for.
//!
//! A policy that raises, or returns scores that cannot order the frontier (a wrong length,
//! NaN, something that is not numbers), stops the crawl at once: its `pop` returns nothing, and
//! the simulator raises the stored exception instead of measuring a half crawl.

use crate::graph::read_only;
use crate::PolicyError;
use crawlrank_frontier::{BatchClock, Link, PageId, PageTable, Policy, Target};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The known graph: every crawled page, in crawl order, with its out-links. Appended to only,
/// so a prefix of it is the known graph as it was at an earlier reorder.
#[derive(Default)]
pub struct Known {
    crawled: Vec<PageId>,
    offsets: Vec<usize>,
    links: Vec<PageId>,
    /// Ones for the matrices' `data`, shared read-only by every view (grown when short).
    ones: Option<Py<PyArray1<f64>>>,
    /// The CSR arrays (rows by node) of the first `cached_rows` crawled pages: each reorder
    /// merges in the pages crawled since the last one instead of sorting every row again.
    cached_rows: usize,
    cached_indptr: Vec<i32>,
    cached_indices: Vec<i32>,
}

impl Known {
    /// The links of the `i`-th crawled page.
    fn row(&self, i: usize) -> &[PageId] {
        &self.links[self.offsets[i]..self.offsets[i + 1]]
    }

    /// CSR arrays over `n` nodes of the first `rows` crawled pages, from scratch: a counting
    /// sort of their link lists (each page is crawled once, so each row is one list).
    fn build(&self, n: usize, rows: usize) -> (Vec<i32>, Vec<i32>) {
        let mut indptr = vec![0i32; n + 1];
        for i in 0..rows {
            indptr[self.crawled[i] as usize + 1] = self.row(i).len() as i32;
        }
        for v in 0..n {
            indptr[v + 1] += indptr[v];
        }
        let mut indices = vec![0i32; self.offsets[rows]];
        for i in 0..rows {
            let start = indptr[self.crawled[i] as usize] as usize;
            let src = self.row(i);
            for (d, &s) in indices[start..start + src.len()].iter_mut().zip(src) {
                *d = s as i32;
            }
        }
        (indptr, indices)
    }

    /// Brings the cached CSR arrays up to the first `rows` crawled pages: the new rows, in
    /// node order, are spliced between the cached rows' runs, which move as whole blocks.
    fn extend_cache(&mut self, n: usize, rows: usize) {
        if self.cached_indptr.len() != n + 1 {
            self.cached_indptr = vec![0; n + 1];
            self.cached_indices.clear();
            self.cached_rows = 0;
        }
        if rows == self.cached_rows {
            return;
        }
        let mut new: Vec<(PageId, usize)> = (self.cached_rows..rows)
            .map(|i| (self.crawled[i], i))
            .collect();
        new.sort_unstable();
        let old_ptr = &self.cached_indptr;
        let old = &self.cached_indices;
        let mut indices = Vec::with_capacity(self.offsets[rows]);
        let mut indptr = Vec::with_capacity(n + 1);
        let mut from = 0usize; // the next cached node whose run is not yet copied
        indptr.push(0i32);
        for &(p, i) in &new {
            let p = p as usize;
            // Cached rows of nodes from..p keep their runs, shifted by what was inserted.
            let shift = indices.len() as i32 - old_ptr[from];
            indices.extend_from_slice(&old[old_ptr[from] as usize..old_ptr[p] as usize]);
            indptr.extend(old_ptr[from + 1..=p].iter().map(|&o| o + shift));
            // Node p had no row (it is crawled once): its row is the new one.
            indices.extend(self.row(i).iter().map(|&s| s as i32));
            indptr.push(indices.len() as i32);
            from = p + 1;
        }
        let shift = indices.len() as i32 - old_ptr[from.min(n)];
        if from < n {
            indices.extend_from_slice(&old[old_ptr[from] as usize..]);
            indptr.extend(old_ptr[from + 1..=n].iter().map(|&o| o + shift));
        }
        debug_assert_eq!(indptr.len(), n + 1);
        self.cached_indptr = indptr;
        self.cached_indices = indices;
        self.cached_rows = rows;
    }
}

/// The first error of a policy (its own exception, or what was wrong with its scores).
pub type ErrorSlot = Arc<Mutex<Option<PyErr>>>;

/// A Python object with `reorder(view) -> scores` as a frontier [`Policy`].
pub struct PyBatchPolicy {
    name: &'static str,
    object: Py<PyAny>,
    queue: VecDeque<PageId>,
    /// Pages discovered and possibly still pending, in discovery order; popped ones are
    /// dropped at each reorder.
    discovered: Vec<PageId>,
    known: Arc<Mutex<Known>>,
    num_nodes: usize,
    batch: u64,
    error: ErrorSlot,
    has_final_scores: bool,
    /// Crawled pages at the last reorder.
    reordered_at: usize,
}

impl PyBatchPolicy {
    /// Wraps `object` (which has `reorder`), crawling a graph of `num_nodes` pages in batches
    /// of `batch`; its first error goes to `error`.
    pub fn new(
        py: Python<'_>,
        name: &'static str,
        object: Py<PyAny>,
        num_nodes: usize,
        batch: u64,
        error: ErrorSlot,
    ) -> PyResult<Self> {
        let has_final_scores = object.bind(py).hasattr("final_scores")?;
        Ok(Self {
            name,
            object,
            queue: VecDeque::new(),
            discovered: Vec::new(),
            known: Arc::new(Mutex::new(Known {
                offsets: vec![0],
                ..Known::default()
            })),
            num_nodes,
            batch,
            error,
            has_final_scores,
            reordered_at: 0,
        })
    }

    fn failed(&self) -> bool {
        self.error.lock().expect("error slot").is_some()
    }

    fn fail(&self, e: PyErr) {
        let mut slot = self.error.lock().expect("error slot");
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    fn view(&self, py: Python<'_>, frontier: &[PageId], since: usize) -> PyResult<Py<PolicyView>> {
        let known = self.known.lock().expect("known graph");
        let crawled: Vec<i64> = known.crawled.iter().map(|&p| i64::from(p)).collect();
        let frontier: Vec<i64> = frontier.iter().map(|&p| i64::from(p)).collect();
        let crawled = crawled.into_pyarray(py);
        let frontier = frontier.into_pyarray(py);
        read_only(&crawled)?;
        read_only(&frontier)?;
        Py::new(
            py,
            PolicyView {
                crawled: crawled.unbind(),
                frontier: frontier.unbind(),
                known_graph: self.known.clone(),
                known_rows: known.crawled.len(),
                since,
                known_matrix: Mutex::new(None),
                num_nodes: self.num_nodes,
                batch: self.batch,
            },
        )
    }

    /// Calls `method(view)` and checks that it returned `expected` numbers, none NaN.
    fn call_scores(
        &self,
        py: Python<'_>,
        method: &str,
        view: Py<PolicyView>,
        expected: usize,
        what: &str,
    ) -> PyResult<Vec<f64>> {
        let crawled = view.get().known_rows;
        let at = format!("{}.{method}() after {crawled} crawled pages", self.name);
        let result = match self.object.bind(py).call_method1(method, (view,)) {
            Ok(r) => r,
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => {
                return Err(e)
            }
            Err(e) => {
                let wrapped = PolicyError::new_err(format!(
                    "{at} raised {}",
                    e.value(py)
                        .repr()
                        .map_or_else(|_| "an exception".into(), |r| r.to_string())
                ));
                wrapped.set_cause(py, Some(e));
                return Err(wrapped);
            }
        };
        let np = py.import("numpy")?;
        let array = np.call_method1("asarray", (&result,)).map_err(|e| {
            let w = PolicyError::new_err(format!(
                "{at} returned {} that is not an array of numbers",
                type_name(&result)
            ));
            w.set_cause(py, Some(e));
            w
        })?;
        let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
        if !matches!(kind.as_str(), "b" | "i" | "u" | "f") {
            return Err(PolicyError::new_err(format!(
                "{at} returned {} of dtype {}: scores must be numbers (int or float)",
                type_name(&result),
                array.getattr("dtype")?.str()?
            )));
        }
        let ndim: usize = array.getattr("ndim")?.extract()?;
        let len: usize = if ndim == 1 { array.len()? } else { 0 };
        if ndim != 1 || len != expected {
            let shape = array.getattr("shape")?.str()?;
            return Err(PolicyError::new_err(format!(
                "{at} returned scores of shape {shape}: expected one score per {what} ({expected})"
            )));
        }
        let floats = array.call_method1("astype", ("float64",))?;
        let floats = floats.downcast::<PyArray1<f64>>()?;
        let scores: Vec<f64> = floats.to_vec()?;
        if let Some(i) = scores.iter().position(|s| s.is_nan()) {
            return Err(PolicyError::new_err(format!(
                "{at} returned NaN as the score of {what} {i} (page {}): scores must be numbers, \
                 ±inf allowed",
                match what {
                    "frontier page" => self.discovered.get(i).copied().unwrap_or(u32::MAX),
                    _ => self
                        .known
                        .lock()
                        .expect("known")
                        .crawled
                        .get(i)
                        .copied()
                        .unwrap_or(u32::MAX),
                }
            )));
        }
        Ok(scores)
    }
}

/// An integer that sorts like `-score` (NaN excluded; −0 and +0 equal), for sorting scores
/// in descending order as integers.
fn descending_key(score: f64) -> u64 {
    let bits = if score == 0.0 { 0 } else { score.to_bits() };
    // IEEE 754 bits, made monotonic: negatives flipped whole, positives above them.
    let ascending = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    !ascending
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an object".into(), |n| format!("a {n}"))
}

impl Policy for PyBatchPolicy {
    fn name(&self) -> &'static str {
        self.name
    }
    fn push_seed(&mut self, page: PageId, _: &PageTable) {
        self.queue.push_back(page);
        self.discovered.push(page);
    }
    fn pop(&mut self, _: &PageTable) -> Option<PageId> {
        if self.failed() {
            return None;
        }
        self.queue.pop_front()
    }
    fn crawled(&mut self, page: PageId, links: &[Link], _: &PageTable, _: &BatchClock) {
        let mut known = self.known.lock().expect("known graph");
        known.crawled.push(page);
        known.links.extend(links.iter().map(|l| l.page));
        let end = known.links.len();
        known.offsets.push(end);
        drop(known);
        for l in links.iter().filter(|l| l.target == Target::New) {
            self.queue.push_back(l.page);
            self.discovered.push(l.page);
        }
    }
    fn reorder(&mut self, pages: &PageTable, _: &BatchClock) {
        if self.failed() {
            return;
        }
        self.discovered.retain(|&p| !pages.is_popped(p));
        let since = self.reordered_at;
        self.reordered_at = self.known.lock().expect("known graph").crawled.len();
        let outcome = Python::with_gil(|py| -> PyResult<Vec<f64>> {
            let view = self.view(py, &self.discovered, since)?;
            let n = self.discovered.len();
            self.call_scores(py, "reorder", view, n, "frontier page")
        });
        match outcome {
            Ok(scores) => {
                // Sorted by (score descending, discovery order), each key packed into one
                // integer with its position beside it, as `backlink` sorts.
                let mut order: Vec<(u64, u32)> = scores
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| (descending_key(s), i as u32))
                    .collect();
                order.sort_unstable();
                self.queue.clear();
                self.queue
                    .extend(order.into_iter().map(|(_, i)| self.discovered[i as usize]));
            }
            Err(e) => self.fail(e),
        }
    }
    fn score(&self, _: PageId, _: &PageTable) -> Option<f64> {
        None
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    fn final_scores(&mut self, order: &[PageId], _: &PageTable) -> Vec<f64> {
        let fallback = crawlrank_frontier::crawl_position_scores(order);
        if !self.has_final_scores || self.failed() {
            return fallback;
        }
        let outcome = Python::with_gil(|py| -> PyResult<Vec<f64>> {
            let view = self.view(py, &[], self.reordered_at)?;
            self.call_scores(py, "final_scores", view, order.len(), "crawled page")
        });
        outcome.unwrap_or_else(|e| {
            self.fail(e);
            fallback
        })
    }
}

/// What a Python policy sees at a reorder: the crawl so far and the known graph.
#[pyclass(module = "crawlrank._crawlrank", frozen)]
pub struct PolicyView {
    crawled: Py<PyArray1<i64>>,
    frontier: Py<PyArray1<i64>>,
    known_graph: Arc<Mutex<Known>>,
    known_rows: usize,
    /// Crawled pages at the previous reorder: `new_arcs` are the links of the pages since.
    since: usize,
    known_matrix: Mutex<Option<Py<PyAny>>>,
    num_nodes: usize,
    batch: u64,
}

#[pymethods]
impl PolicyView {
    /// The crawled pages, in crawl order (node ids, read-only `int64` array).
    #[getter]
    fn crawled(&self, py: Python<'_>) -> Py<PyArray1<i64>> {
        self.crawled.clone_ref(py)
    }

    /// The frontier — pages found and not yet crawled — in order of first discovery (node ids,
    /// read-only `int64` array). `reorder` returns one score per entry, in this order.
    #[getter]
    fn frontier(&self, py: Python<'_>) -> Py<PyArray1<i64>> {
        self.frontier.clone_ref(py)
    }

    /// The known graph: the out-links of every crawled page, as an `n × n`
    /// `scipy.sparse.csr_array` of ones over node ids (row `u` holds `u`'s out-links when `u`
    /// was crawled, and is empty otherwise). Built on first use.
    #[getter]
    fn known(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(m) = &*self.known_matrix.lock().expect("known matrix") {
            return Ok(m.clone_ref(py));
        }
        let m = self.build_known(py)?;
        *self.known_matrix.lock().expect("known matrix") = Some(m.clone_ref(py));
        Ok(m)
    }

    /// The arcs found since the previous reorder (the out-links of the pages crawled since,
    /// the last entries of `crawled`), as two `int64` arrays `(sources, targets)`: what a
    /// policy that keeps its own counts needs, without the whole known graph.
    #[getter]
    fn new_arcs<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let known = self.known_graph.lock().expect("known graph");
        let (start, end) = (known.offsets[self.since], known.offsets[self.known_rows]);
        let mut sources = Vec::with_capacity(end - start);
        for i in self.since..self.known_rows {
            let p = i64::from(known.crawled[i]);
            sources.extend(std::iter::repeat_n(p, known.row(i).len()));
        }
        let targets: Vec<i64> = known.links[start..end]
            .iter()
            .map(|&t| i64::from(t))
            .collect();
        drop(known);
        (sources.into_pyarray(py), targets.into_pyarray(py))
    }

    /// Pages in the graph.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// `K`: the policy reorders every `batch` crawled pages.
    #[getter]
    fn batch(&self) -> u64 {
        self.batch
    }

    fn __repr__(&self) -> String {
        format!(
            "<crawlrank.PolicyView: {} crawled of {} pages, K = {}>",
            self.known_rows, self.num_nodes, self.batch
        )
    }
}

impl PolicyView {
    fn build_known(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let n = self.num_nodes;
        let rows = self.known_rows;
        let mut known = self.known_graph.lock().expect("known graph");
        let nnz = known.offsets[rows];
        if nnz >= i32::MAX as usize {
            return Err(PolicyError::new_err(
                "the known graph has 2^31 arcs or more: too many for a view",
            ));
        }
        let (indptr, indices) = if rows >= known.cached_rows {
            known.extend_cache(n, rows);
            (known.cached_indptr.clone(), known.cached_indices.clone())
        } else {
            known.build(n, rows)
        };
        let np = py.import("numpy")?;
        let grow = match &known.ones {
            Some(o) => o.bind(py).len() < nnz,
            None => true,
        };
        if grow {
            let ones = PyArray1::<f64>::from_vec(py, vec![1.0; (nnz * 2).max(1024)]);
            read_only(&ones)?;
            known.ones = Some(ones.unbind());
        }
        let ones = known.ones.as_ref().expect("set above").bind(py);
        drop(np);
        let data = ones.get_item(pyo3::types::PySlice::new(py, 0, nnz as isize, 1))?;
        drop(known);
        let sparse = py.import("scipy.sparse")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("shape", (n, n))?;
        kwargs.set_item("copy", false)?;
        let parts = PyTuple::new(
            py,
            [
                data,
                indices.into_pyarray(py).into_any(),
                indptr.into_pyarray(py).into_any(),
            ],
        )?;
        Ok(sparse
            .call_method("csr_array", (parts,), Some(&kwargs))?
            .unbind())
    }
}
