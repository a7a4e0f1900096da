//! A batch policy written in Python, run by the frontier like the built-in batch policies.
//!
//! The object's `reorder(view)` is called every `K` crawled pages (at each batch boundary,
//! where `backlink` and the PageRank policies reorder) and returns one score per frontier page;
//! the frontier is then sorted by score, descending, ties in order of first discovery, and
//! pages found until the next reorder are appended in discovery order — exactly what the
//! built-in `backlink` does with its counts. The view hands the policy NumPy arrays and a SciPy
//! matrix of the known graph, built only when asked for.
//!
//! The known graph is handed over as a CSC matrix (columns by link target), because the
//! commonest question asked of it — back-link counts, its column sums — is then one pass over
//! runs of its arrays. The arrays are kept from reorder to reorder: each reorder merges in only
//! the arcs found since, into new arrays moved into NumPy without a copy (earlier views keep
//! theirs), so a reorder costs one pass over the known arcs, not a sort of them. The column
//! pointers come from in-link counts kept up to date, and each array is built only when
//! something reads it: column sums (back-link counts) come from the counts and read neither.
//!
//! A policy that raises, or returns scores that cannot order the frontier (a wrong length,
//! NaN, something that is not numbers), stops the crawl at once: its `pop` returns nothing, and
//! the simulator raises the stored exception instead of measuring a half crawl.

use crate::graph::read_only;
use crate::PolicyError;
use crawlrank_frontier::{BatchClock, Link, PageId, PageTable, Policy, Target};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
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
    /// The CSC arrays (columns by link target, each column's sources in node order) of the
    /// first `cached_rows` crawled pages, as handed to Python: read-only NumPy arrays that the
    /// views share without a copy. Each reorder merges in the arcs found since the last one
    /// instead of sorting every arc again.
    cached_rows: usize,
    cached: Option<CscArrays>,
    /// In-links from the first `indegree_rows` crawled pages, one count per node: a view's
    /// column sums, and its `indptr` as their prefix sums, without the index arrays.
    indegree_rows: usize,
    indegree: Vec<i32>,
}

/// Sorts arcs packed as `target << 32 | source` by target, stably (least significant digit
/// first, 11 bits a pass, as many passes as node ids of `n` nodes have bits): a batch's arcs
/// in a few linear passes, where a comparison sort costs a logarithmic factor more.
fn radix_sort_by_target(arcs: &mut Vec<u64>, n: usize) {
    const BITS: u32 = 11;
    let id_bits = usize::BITS - n.saturating_sub(1).leading_zeros();
    let mut scratch = vec![0u64; arcs.len()];
    let mut shift = 0;
    while shift < id_bits {
        let digit = |a: u64| ((a >> (32 + shift)) & ((1 << BITS) - 1)) as usize;
        let mut start = [0usize; 1 << BITS];
        for &a in arcs.iter() {
            start[digit(a)] += 1;
        }
        let mut total = 0;
        for s in start.iter_mut() {
            (*s, total) = (total, total + *s);
        }
        for &a in arcs.iter() {
            let slot = &mut start[digit(a)];
            scratch[*slot] = a;
            *slot += 1;
        }
        std::mem::swap(arcs, &mut scratch);
        shift += BITS;
    }
}

/// A known graph's CSC arrays, owned by NumPy: `(indptr, indices)`.
type CscArrays = (Py<PyArray1<i32>>, Py<PyArray1<i32>>);

impl Known {
    /// The links of the `i`-th crawled page.
    fn row(&self, i: usize) -> &[PageId] {
        &self.links[self.offsets[i]..self.offsets[i + 1]]
    }

    /// CSC arrays over `n` nodes of the arcs of crawled pages `from..rows`, merged into `old`
    /// (those of the pages before `from`; `None` when `from` is 0): each column's sources in
    /// node order, so merging batch by batch gives exactly the arrays of one build from
    /// scratch.
    fn merge(
        &self,
        n: usize,
        old: Option<(&[i32], &[i32])>,
        from: usize,
        rows: usize,
    ) -> (Vec<i32>, Vec<i32>) {
        let zeros;
        let (old_ptr, old_ind) = match old {
            Some(o) => o,
            None => {
                zeros = vec![0i32; n + 1];
                (&zeros[..], &[][..])
            }
        };
        // The new arcs as (target, source), sorted: each column's new sources in node order.
        // Only these are sorted (a batch's arcs, at a reorder); the rest is copied or merged.
        // Each arc packed as `target << 32 | source`, ordered by target, then source: the
        // pages taken in node order, then a stable radix sort of their arcs by target.
        let mut pages: Vec<usize> = (from..rows).collect();
        pages.sort_unstable_by_key(|&i| self.crawled[i]);
        let mut arcs: Vec<u64> = Vec::with_capacity(self.offsets[rows] - self.offsets[from]);
        for i in pages {
            let source = u64::from(self.crawled[i]);
            arcs.extend(self.row(i).iter().map(|&t| u64::from(t) << 32 | source));
        }
        radix_sort_by_target(&mut arcs, n);
        let target = |a: u64| (a >> 32) as usize;
        let source = |a: u64| a as u32 as i32;
        let groups = || arcs.chunk_by(|&a, &b| a >> 32 == b >> 32);
        // Columns before a gaining column keep their old pointers, shifted by what was added
        // before them.
        let mut indptr = Vec::with_capacity(n + 1);
        indptr.push(0i32);
        let mut added = 0i32;
        let mut next = 0usize; // the first column whose pointer is not written yet
        for group in groups() {
            let v = target(group[0]);
            indptr.extend(old_ptr[next + 1..=v].iter().map(|&p| p + added));
            added += group.len() as i32;
            indptr.push(old_ptr[v + 1] + added);
            next = v + 1;
        }
        indptr.extend(old_ptr[next + 1..=n].iter().map(|&p| p + added));
        // Old runs of columns that gained nothing are copied as one block; a column that
        // gained sources gets its old and new ones merged, so that every column stays sorted
        // (SciPy's canonical format: nothing it does has to sort the shared arrays in place).
        let mut indices = Vec::with_capacity(old_ind.len() + arcs.len());
        let mut block = 0usize; // first column whose old run is not copied yet
        for group in groups() {
            let v = target(group[0]);
            indices.extend_from_slice(&old_ind[old_ptr[block] as usize..old_ptr[v] as usize]);
            let old = &old_ind[old_ptr[v] as usize..old_ptr[v + 1] as usize];
            let mut copied = 0usize;
            for &a in group {
                let s = source(a);
                // A forward scan, not a binary search: the run is copied right after, and
                // scanning it in order is what the caches prefetch.
                let before = copied
                    + old[copied..]
                        .iter()
                        .position(|&o| o > s)
                        .unwrap_or(old.len() - copied);
                indices.extend_from_slice(&old[copied..before]);
                indices.push(s);
                copied = before;
            }
            indices.extend_from_slice(&old[copied..]);
            block = v + 1;
        }
        indices.extend_from_slice(&old_ind[old_ptr[block] as usize..old_ptr[n] as usize]);
        debug_assert_eq!(indices.len(), indptr[n] as usize);
        (indptr, indices)
    }

    /// `f` of the in-link counts (one per node of `n`) from the first `rows` crawled pages,
    /// kept up to date from the arcs found since the last call (one pass over those, not over
    /// every arc). A view older than the counts (none that the frontier makes) counts from
    /// scratch.
    fn with_indegree<R>(&mut self, n: usize, rows: usize, f: impl FnOnce(&[i32]) -> R) -> R {
        let mut scratch = Vec::new();
        let (counts, from) = if self.indegree.len() == n && rows >= self.indegree_rows {
            (&mut self.indegree, self.indegree_rows)
        } else if rows >= self.indegree_rows {
            self.indegree = vec![0; n];
            (&mut self.indegree, 0)
        } else {
            scratch = vec![0; n];
            (&mut scratch, 0)
        };
        for &t in &self.links[self.offsets[from]..self.offsets[rows]] {
            counts[t as usize] += 1;
        }
        let out = f(counts);
        if scratch.is_empty() {
            self.indegree_rows = rows;
        }
        out
    }

    /// The CSC `indptr` over `n` nodes of the first `rows` crawled pages: the prefix sums of
    /// their in-link counts.
    fn indptr(&mut self, n: usize, rows: usize) -> Vec<i32> {
        self.with_indegree(n, rows, |counts| {
            let mut indptr = Vec::with_capacity(n + 1);
            indptr.push(0i32);
            let mut total = 0i32;
            indptr.extend(counts.iter().map(|&c| {
                total += c;
                total
            }));
            indptr
        })
    }

    /// The CSC arrays over `n` nodes of the first `rows` crawled pages, for a view: the cached
    /// ones brought up to `rows` (and cached again), or, for a view older than the cache, built
    /// from scratch.
    fn csc(&mut self, py: Python<'_>, n: usize, rows: usize) -> PyResult<CscArrays> {
        let fits = |c: &CscArrays| c.0.bind(py).len() == n + 1;
        let cache_usable = self.cached.as_ref().is_some_and(fits) && rows >= self.cached_rows;
        if cache_usable && rows == self.cached_rows {
            let (p, i) = self.cached.as_ref().expect("checked");
            return Ok((p.clone_ref(py), i.clone_ref(py)));
        }
        let (indptr, indices) = if cache_usable {
            let (p, i) = self.cached.as_ref().expect("checked");
            let (p, i) = (p.bind(py).readonly(), i.bind(py).readonly());
            self.merge(
                n,
                Some((p.as_slice()?, i.as_slice()?)),
                self.cached_rows,
                rows,
            )
        } else {
            self.merge(n, None, 0, rows)
        };
        // Moved into NumPy, not copied; read-only, since every view shares them.
        let (indptr, indices) = (indptr.into_pyarray(py), indices.into_pyarray(py));
        read_only(&indptr)?;
        read_only(&indices)?;
        let arrays = (indptr.unbind(), indices.unbind());
        if self.cached.is_none() || rows >= self.cached_rows {
            self.cached = Some((arrays.0.clone_ref(py), arrays.1.clone_ref(py)));
            self.cached_rows = rows;
        }
        Ok(arrays)
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
        let frontier: Vec<i64> = frontier.iter().map(|&p| i64::from(p)).collect();
        let frontier = frontier.into_pyarray(py);
        read_only(&frontier)?;
        Py::new(
            py,
            PolicyView {
                crawled: Mutex::new(None),
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
    /// Built when first asked for (most policies never do).
    crawled: Mutex<Option<Py<PyArray1<i64>>>>,
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
    fn crawled(&self, py: Python<'_>) -> PyResult<Py<PyArray1<i64>>> {
        let mut cached = self.crawled.lock().expect("crawled pages");
        if let Some(c) = &*cached {
            return Ok(c.clone_ref(py));
        }
        let known = self.known_graph.lock().expect("known graph");
        let crawled: Vec<i64> = known.crawled[..self.known_rows]
            .iter()
            .map(|&p| i64::from(p))
            .collect();
        drop(known);
        let crawled = crawled.into_pyarray(py);
        read_only(&crawled)?;
        *cached = Some(crawled.clone().unbind());
        Ok(crawled.unbind())
    }

    /// The frontier — pages found and not yet crawled — in order of first discovery (node ids,
    /// read-only `int64` array). `reorder` returns one score per entry, in this order.
    #[getter]
    fn frontier(&self, py: Python<'_>) -> Py<PyArray1<i64>> {
        self.frontier.clone_ref(py)
    }

    /// The known graph: the out-links of every crawled page, as an `n × n`
    /// `scipy.sparse.csc_array` of ones over node ids (row `u` holds `u`'s out-links when `u`
    /// was crawled, and is empty otherwise; column `v` lists the crawled pages linking to `v`,
    /// in node order). Built on first use, and each of its arrays when first read: `indptr`
    /// from in-link counts kept between reorders, `indices` merged into arrays kept between
    /// reorders and shared, read-only, by every view. Its column sums come from the counts,
    /// so a policy that asks only for them builds neither array.
    #[getter]
    fn known(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let view = slf.get();
        if let Some(m) = &*view.known_matrix.lock().expect("known matrix") {
            return Ok(m.clone_ref(py));
        }
        let m = Self::build_known(slf)?;
        *view.known_matrix.lock().expect("known matrix") = Some(m.clone_ref(py));
        Ok(m)
    }

    /// The known graph's `indices` (read-only `int32`), for the matrix [`known`] returned:
    /// merged when the matrix first needs them.
    fn _known_indices(&self, py: Python<'_>) -> PyResult<Py<PyArray1<i32>>> {
        let mut known = self.known_graph.lock().expect("known graph");
        let (_, indices) = known.csc(py, self.num_nodes, self.known_rows)?;
        Ok(indices)
    }

    /// The known graph's `indptr` (read-only `int32`), for the matrix [`known`] returned:
    /// the prefix sums of the in-link counts, built when the matrix first needs them.
    fn _known_indptr<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let indptr = self
            .known_graph
            .lock()
            .expect("known graph")
            .indptr(self.num_nodes, self.known_rows)
            .into_pyarray(py);
        read_only(&indptr)?;
        Ok(indptr)
    }

    /// The known graph's column sums (`float64`, a new array each call, as SciPy's): the
    /// in-link counts from crawled pages, without the matrix's arrays.
    fn _known_column_sums<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.known_graph
            .lock()
            .expect("known graph")
            .with_indegree(self.num_nodes, self.known_rows, |counts| {
                counts.iter().map(|&c| f64::from(c)).collect::<Vec<f64>>()
            })
            .into_pyarray(py)
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
    fn build_known(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let (py, this) = (slf.py(), slf.get());
        let n = this.num_nodes;
        let rows = this.known_rows;
        let mut known = this.known_graph.lock().expect("known graph");
        let nnz = known.offsets[rows];
        if nnz >= i32::MAX as usize {
            return Err(PolicyError::new_err(
                "the known graph has 2^31 arcs or more: too many for a view",
            ));
        }
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
        let data = ones.get_item(pyo3::types::PySlice::new(py, 0, nnz as isize, 1))?;
        drop(known);
        // A `scipy.sparse.csc_array` (crawlrank/_known.py) over the arrays, not copied, each
        // built when first used.
        Ok(py
            .import("crawlrank._known")?
            .call_method1(
                "known_graph",
                (
                    data,
                    n,
                    slf.getattr("_known_indptr")?,
                    slf.getattr("_known_indices")?,
                    slf.getattr("_known_column_sums")?,
                ),
            )?
            .unbind())
    }
}
