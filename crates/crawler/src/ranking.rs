//! The ranking files: `score<TAB>url` lines, best first ([`write_ranking`]), and their
//! companion of page marks ([`write_page_marks`], [`page_marks_path`]).
//!
//! Why a module of its own: two writers share them — a running crawl rewrites its snapshots
//! in the state directory ([`RANKING_SNAPSHOT`], [`PAGE_MARKS_SNAPSHOT`]) so that the ranking
//! can be read while it holds the state, and `export --ranking` writes them from a stopped
//! crawl's state (or copies the snapshots). Neither writer depends on the other.
//!
//! The ranking is `score<TAB>url` lines, and stays so: scripts and tests read exactly those
//! two columns. What fetched pages said about themselves — `noindex`, a canonical URL — goes
//! to a companion file next to it ([`page_marks_path`]) rather than into extra columns.

use anyhow::{Context, Result};
use crawlrank_fetch::page::PageMeta;
use crawlrank_frontier::PageId;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The ranking snapshot a crawl keeps in its state directory, refreshed every `K` crawled
/// pages and when it stops, so the ranking can be read while the crawl holds the state.
pub const RANKING_SNAPSHOT: &str = "ranking.tsv";

/// The companion of [`RANKING_SNAPSHOT`] (see [`page_marks_path`]), written with it.
pub const PAGE_MARKS_SNAPSHOT: &str = "ranking.pages.tsv";

/// Longest time between two ranking snapshots while pages are being crawled.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_secs(30);

/// When a running crawl rewrites its snapshots: every `K` crawled pages, and at least every
/// [`SNAPSHOT_INTERVAL`] while pages are being crawled — but never sooner after the last
/// one than [`SNAPSHOT_SHARE`] times what it took, so that a snapshot, which sorts and
/// writes every URL, takes at most a twentieth of a big crawl's time however big it grows.
#[derive(Debug, Clone)]
pub struct SnapshotSchedule {
    every: u64,
    /// Pages crawled at the last snapshot, when it was written and how long it took.
    last: u64,
    last_at: Instant,
    took: Duration,
}

/// A snapshot waits at least this many times its own duration after the last one.
pub const SNAPSHOT_SHARE: u32 = 19;

impl SnapshotSchedule {
    /// A schedule of snapshots every `every` pages, `crawled` pages having been crawled.
    pub fn new(every: u64, crawled: u64) -> Self {
        Self {
            every: every.max(1),
            last: crawled,
            last_at: Instant::now(),
            took: Duration::ZERO,
        }
    }

    /// Whether a snapshot is due, `crawled` pages having been crawled.
    pub fn due(&self, crawled: u64) -> bool {
        let since = self.last_at.elapsed();
        since >= self.took * SNAPSHOT_SHARE
            && (crawled >= self.last + self.every
                || (crawled > self.last && since >= SNAPSHOT_INTERVAL))
    }

    /// A snapshot that started at `started` was written, `crawled` pages having been crawled.
    pub fn written(&mut self, crawled: u64, started: Instant) {
        self.last = crawled;
        self.last_at = Instant::now();
        self.took = self.last_at - started;
    }
}

/// A ranking snapshot being written by a thread of its own, so that the crawl goes on
/// meanwhile: the engine hands it each page's score (8 bytes a page, `NaN` for the unscored:
/// one pass over the frontier), a reader of the page marks in the state (with the step's
/// marks not committed yet) and a URL lookup, and the thread sorts, looks the URLs up and
/// writes both files ([`write_ranking`], [`write_page_marks`]). The marks are never copied
/// whole: they grow with the crawled pages.
pub struct SnapshotJob {
    thread: std::thread::JoinHandle<Result<()>>,
    started: Instant,
    /// Pages crawled when the scores were taken.
    crawled: u64,
}

impl SnapshotJob {
    /// Starts writing `ranking` and `marks_out` from `scores` (by page id) and `marks` (by
    /// id).
    pub fn spawn<U, M>(
        ranking: PathBuf,
        marks_out: PathBuf,
        scores: Vec<f64>,
        marks: M,
        crawled: u64,
        url_of: U,
    ) -> Self
    where
        U: FnMut(PageId) -> Result<Arc<str>> + Send + 'static,
        M: Iterator<Item = Result<(PageId, PageMeta)>> + Send + 'static,
    {
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let mut url_of = url_of;
            write_page_marks(&marks_out, marks, &mut url_of)?;
            let score = |id: u32| Some(scores[id as usize]);
            write_ranking(&ranking, scores.len(), score, url_of)?;
            Ok(())
        });
        Self {
            thread,
            started,
            crawled,
        }
    }

    /// Whether the thread is done.
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the thread; its result, with the pages crawled when the scores were taken
    /// and when it started (for [`SnapshotSchedule::written`]).
    pub fn join(self) -> (Result<()>, u64, Instant) {
        let res = match self.thread.join() {
            Ok(res) => res,
            Err(_) => Err(anyhow::anyhow!("the ranking snapshot's thread panicked")),
        };
        (res, self.crawled, self.started)
    }
}

/// Where [`export_ranking`](crate::export::export_ranking) writes the page marks of a
/// ranking written to `ranking`: the same name with `.pages.tsv` in place of a `.tsv`
/// extension (`rank.tsv` → `rank.pages.tsv`), else appended (`rank` → `rank.pages.tsv`).
pub fn page_marks_path(ranking: &Path) -> PathBuf {
    let name = ranking
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".tsv").unwrap_or(&name);
    ranking.with_file_name(format!("{stem}.pages.tsv"))
}

/// Writes `url<TAB>noindex<TAB>canonical` for every fetched page that said `noindex`
/// (`1`, else `0`) or named a canonical URL other than its own (else the field is empty),
/// in the order of `marks` (by id: discovery order), atomically; `url_of` gives a page's URL.
/// Marks are read one at a time (from the state: [`crate::store::Store::marks`]). Returns
/// the number of lines.
pub fn write_page_marks<S: AsRef<str>>(
    out: &Path,
    marks: impl IntoIterator<Item = Result<(PageId, PageMeta)>>,
    mut url_of: impl FnMut(PageId) -> Result<S>,
) -> Result<usize> {
    let mut n = 0;
    crawlrank_graph::atomic::write_file(out, |w| {
        for mark in marks {
            let (id, m) = mark?;
            let url = url_of(id)?;
            writeln!(
                w,
                "{}\t{}\t{}",
                url.as_ref(),
                u8::from(m.noindex),
                m.canonical.as_deref().unwrap_or("")
            )
            .with_context(|| format!("cannot write {}", out.display()))?;
            n += 1;
        }
        Ok(())
    })?;
    Ok(n)
}

/// The marks of `stored` (by id) and of `unsaved` (not committed yet, any order) together,
/// by id; an id in both takes the unsaved marks.
pub fn merge_marks(
    stored: impl Iterator<Item = Result<(PageId, PageMeta)>>,
    unsaved: Vec<(PageId, PageMeta)>,
) -> impl Iterator<Item = Result<(PageId, PageMeta)>> {
    let mut unsaved: BTreeMap<PageId, PageMeta> = unsaved.into_iter().collect();
    let mut stored = stored.peekable();
    std::iter::from_fn(move || {
        let next_unsaved = unsaved.first_key_value().map(|(&id, _)| id);
        match (stored.peek(), next_unsaved) {
            (Some(Ok((id, _))), Some(u)) if u <= *id => {
                if u == *id {
                    stored.next();
                }
                unsaved.pop_first().map(Ok)
            }
            (Some(_), _) => stored.next(),
            (None, Some(_)) => unsaved.pop_first().map(Ok),
            (None, None) => None,
        }
    })
}

/// Writes `score\turl` for every page of `0..pages` the policy scores, by decreasing score
/// (ties by discovery order), atomically; `url_of` gives a page's URL (it is asked in score
/// order, once per scored page). Returns (scored, unscored) counts.
pub fn write_ranking<S: AsRef<str>>(
    out: &Path,
    pages: usize,
    score: impl Fn(u32) -> Option<f64>,
    mut url_of: impl FnMut(PageId) -> Result<S>,
) -> Result<(usize, usize)> {
    // `+ 0.0` turns -0 (FICA's score of a seed, −distance) into 0: printed as "0", and
    // equal to +0 for `total_cmp`, so ties stay in discovery order.
    let key = |id: u32| score(id).filter(|s| !s.is_nan()).map(|s| s + 0.0);
    // Ids alone are sorted (4 bytes a page rather than 16 with their scores), the scores
    // looked up again by the comparison: a policy's score is an array read.
    let mut scored: Vec<u32> = (0..pages as u32).filter(|&id| key(id).is_some()).collect();
    let by_score = |id: u32| key(id).unwrap_or(f64::NEG_INFINITY);
    scored.sort_unstable_by(|&a, &b| by_score(b).total_cmp(&by_score(a)).then(a.cmp(&b)));
    crawlrank_graph::atomic::write_file(out, |w| {
        for &id in &scored {
            let url = url_of(id)?;
            writeln!(w, "{}\t{}", by_score(id), url.as_ref())
                .with_context(|| format!("cannot write {}", out.display()))?;
        }
        Ok(())
    })?;
    Ok((scored.len(), pages - scored.len()))
}

/// A URL lookup over a slice of URLs by id, for [`write_ranking`] and [`write_page_marks`]
/// when all URLs are at hand: an error names a page with no URL.
pub fn url_in<'a, S: AsRef<str>>(urls: &'a [S]) -> impl FnMut(PageId) -> Result<&'a str> {
    move |id| {
        urls.get(id as usize)
            .map(|u| u.as_ref())
            .with_context(|| format!("page {id} has no URL in the state"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_is_by_score_then_discovery_and_prints_no_negative_zero() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.tsv");
        let urls = ["a", "b", "c", "d", "e"];
        let scores = [Some(-0.0), Some(0.0), None, Some(f64::NAN), Some(-1.5)];
        let (scored, unscored) =
            write_ranking(&out, urls.len(), |id| scores[id as usize], url_in(&urls)).unwrap();
        assert_eq!((scored, unscored), (3, 2));
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "0\ta\n0\tb\n-1.5\te\n"
        );
    }

    #[test]
    fn stored_and_unsaved_marks_merge_by_id() {
        let m = |noindex| PageMeta {
            noindex,
            canonical: None,
        };
        let stored = vec![Ok((1, m(false))), Ok((4, m(false))), Ok((6, m(false)))];
        let unsaved = vec![(5, m(true)), (0, m(true)), (4, m(true)), (9, m(true))];
        let merged: Vec<(PageId, bool)> = merge_marks(stored.into_iter(), unsaved)
            .map(|r| r.map(|(id, m)| (id, m.noindex)).unwrap())
            .collect();
        assert_eq!(
            merged,
            [
                (0, true),
                (1, false),
                (4, true),
                (5, true),
                (6, false),
                (9, true)
            ]
        );
    }
}
