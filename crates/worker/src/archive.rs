//! A worker's WARC files, as durable as `crawl`'s: a page's records are on the disk before the
//! page is reported done, and a run stopped at any instant leaves files of whole records only.
//!
//! Why: the service takes a report as the page done for good and never serves it again, so a
//! record lost after the report — to a power cut, while it sat in the page cache — is a page
//! the archive lacks for ever. `crawl` syncs its WARC file ahead of each commit of its state;
//! a worker syncs ahead of each report. One `fsync` a page would cap a worker at the disk's
//! syncs a second, so the fetch tasks share them (a group commit): a task whose records are
//! not yet on the disk syncs everything appended so far, and those that waited behind it find
//! theirs covered ([`Archive::on_disk`]).
//!
//! Each run writes a directory of its own (`STATE/warc/worker-<time>-<pid>-<n>`), so that
//! workers sharing a state directory never write into each other's files. No state says how
//! far a run's last file is whole, so a run that ends writes `closed` in its directory, and
//! the next run given the same state directory cuts the last file of each directory without
//! one back to its last whole record (what a `kill -9` in the middle of a write leaves),
//! skipping directories whose run still holds their `lock` (a worker still running).

use anyhow::{Context, Result};
use crawlrank_fetch::warc::{self, WarcPosition, WarcWriter};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// The file a run holds locked while it writes its directory.
const LOCK: &str = "lock";
/// The file a run writes in its directory when it ended with its files whole.
const CLOSED: &str = "closed";

/// A run's WARC files.
pub(crate) struct Archive {
    writer: Mutex<WarcWriter>,
    /// How far the files are on the disk; held by the one task syncing meanwhile.
    synced: tokio::sync::Mutex<WarcPosition>,
    dir: PathBuf,
    /// Held locked while the run lasts (released by the system however it ends).
    _lock: File,
}

/// A file of an earlier run cut back to its last whole record: its path, the length found
/// and the length kept (0: removed, no whole record in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repaired {
    /// The file.
    pub path: PathBuf,
    /// Its length as found.
    pub found: u64,
    /// Its length now.
    pub kept: u64,
}

impl Archive {
    /// Mends the directories of earlier runs in `state/warc` ([`repair`]), then opens this
    /// run's, locked.
    pub(crate) fn open(
        state: &Path,
        max_size: u64,
        user_agent: &str,
    ) -> Result<(Self, Vec<Repaired>)> {
        let parent = state.join("warc");
        std::fs::create_dir_all(&parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let repaired = repair(&parent)?;
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut n = 0u32;
        let dir = loop {
            let dir = parent.join(format!("worker-{stamp}-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", dir.display()))
                }
            }
        };
        // Locked before the first file is written: a run that finds files in a directory
        // finds it locked while its run lasts.
        let lock = File::create(dir.join(LOCK))
            .with_context(|| format!("cannot create {}", dir.join(LOCK).display()))?;
        lock.try_lock()
            .with_context(|| format!("cannot lock {}", dir.join(LOCK).display()))?;
        crawlrank_util::atomic::sync_dir(&parent)?;
        let writer = WarcWriter::open(&dir, WarcPosition::default(), max_size, user_agent)?;
        let archive = Archive {
            writer: Mutex::new(writer),
            synced: tokio::sync::Mutex::new(WarcPosition::default()),
            dir,
            _lock: lock,
        };
        Ok((archive, repaired))
    }

    /// The run's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends `records` (flushed to the system); where they end, for
    /// [`on_disk`](Self::on_disk). `None` when there are none.
    pub(crate) fn append(&self, records: &[u8]) -> Result<Option<WarcPosition>> {
        if records.is_empty() {
            return Ok(None);
        }
        let mut w = self.writer()?;
        w.append(records)?;
        w.flush()?;
        Ok(Some(w.position()))
    }

    /// Returns once the records up to `upto` are on the disk: at once when a sync covered
    /// them already, else after one that does (everything appended so far: the tasks that
    /// wait meanwhile are covered by it too).
    pub(crate) async fn on_disk(&self, upto: Option<WarcPosition>) -> Result<()> {
        let Some(upto) = upto else { return Ok(()) };
        let mut synced = self.synced.lock().await;
        if covers(*synced, upto) {
            return Ok(());
        }
        let point = self.writer()?.flush_for_sync()?;
        // The sync is a blocking call: off the runtime's threads, the writer free meanwhile.
        *synced = tokio::task::spawn_blocking(move || point.sync())
            .await
            .context("a WARC sync failed")??;
        Ok(())
    }

    /// Ends the run: everything on the disk, and the directory marked `closed`.
    pub(crate) fn close(&self) -> Result<()> {
        self.writer()?.sync()?;
        mark_closed(&self.dir)
    }

    fn writer(&self) -> Result<std::sync::MutexGuard<'_, WarcWriter>> {
        self.writer
            .lock()
            .map_err(|_| anyhow::anyhow!("the WARC writer was poisoned"))
    }
}

/// Whether `synced` is at or past `upto`.
fn covers(synced: WarcPosition, upto: WarcPosition) -> bool {
    (synced.file, synced.offset) >= (upto.file, upto.offset)
}

fn mark_closed(dir: &Path) -> Result<()> {
    crawlrank_util::atomic::write_file(&dir.join(CLOSED), |w| {
        use std::io::Write;
        w.write_all(b"the WARC files of this directory end with whole records\n")?;
        Ok(())
    })
}

/// Mends the run directories of `parent` (`STATE/warc`) that no run closed and none holds:
/// each one's last WARC file cut back to its last whole record ([`warc::repair_tail`]), then
/// marked closed. A directory still being written (its run holds its lock) is left alone, as
/// is one without WARC files (a run just starting: it locks its directory before its first
/// file).
pub(crate) fn repair(parent: &Path) -> Result<Vec<Repaired>> {
    let mut repaired = Vec::new();
    let entries =
        std::fs::read_dir(parent).with_context(|| format!("cannot list {}", parent.display()))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot list {}", parent.display()))?
            .path();
        let is_run = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("worker-"));
        if is_run && path.is_dir() && !path.join(CLOSED).exists() {
            dirs.push(path);
        }
    }
    dirs.sort();
    for dir in dirs {
        let files = warc::warc_files(&dir)?;
        let Some(last) = files.last() else { continue };
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK))
            .with_context(|| format!("cannot open {}", dir.join(LOCK).display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            // Its run is still writing it.
            Err(std::fs::TryLockError::WouldBlock) => continue,
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", dir.join(LOCK).display()))
            }
        }
        if let Some((found, kept)) = warc::repair_tail(last)? {
            repaired.push(Repaired {
                path: last.clone(),
                found,
                kept,
            });
            if kept == 0 {
                crawlrank_util::atomic::sync_dir(&dir)?;
            }
        }
        mark_closed(&dir)?;
    }
    Ok(repaired)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(url: &str) -> Vec<u8> {
        crawlrank_fetch::warc::fetch_records(
            url,
            SystemTime::now(),
            b"GET / HTTP/1.1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n",
            b"<p>hello</p>",
            false,
        )
    }

    #[test]
    fn a_stopped_runs_torn_file_is_cut_back_and_a_running_ones_left_alone() {
        let state = tempfile::tempdir().unwrap();
        let (a, none) = Archive::open(state.path(), 1 << 30, "test").unwrap();
        assert!(none.is_empty());
        let end = a.append(&record("http://a.test/1")).unwrap();
        a.append(&record("http://a.test/2")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(a.on_disk(end)).unwrap();
        let file = warc::warc_files(a.dir()).unwrap().pop().unwrap();
        let whole = std::fs::metadata(&file).unwrap().len();
        // Half a record more, as a write cut by a kill leaves it.
        let torn = record("http://a.test/3");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        std::io::Write::write_all(&mut f, &torn[..torn.len() / 2]).unwrap();
        // While its run holds the directory, another run leaves it alone.
        let (b, repaired) = Archive::open(state.path(), 1 << 30, "test").unwrap();
        assert!(repaired.is_empty(), "{repaired:?}");
        b.close().unwrap();
        // Its run gone (killed: no `closed`), the next run cuts the torn record off.
        let dir = a.dir().to_path_buf();
        drop(a);
        let (c, repaired) = Archive::open(state.path(), 1 << 30, "test").unwrap();
        assert_eq!(
            repaired,
            [Repaired {
                path: file.clone(),
                found: whole + (torn.len() / 2) as u64,
                kept: whole
            }]
        );
        assert_eq!(std::fs::metadata(&file).unwrap().len(), whole);
        assert!(dir.join(CLOSED).exists());
        // Once mended (or closed by its run), never read again.
        c.close().unwrap();
        let (_d, repaired) = Archive::open(state.path(), 1 << 30, "test").unwrap();
        assert!(repaired.is_empty(), "{repaired:?}");
    }

    #[test]
    fn positions_are_covered_across_files() {
        let p = |file, offset| WarcPosition { file, offset };
        assert!(covers(p(1, 10), p(1, 10)));
        assert!(covers(p(2, 0), p(1, 900)));
        assert!(!covers(p(1, 9), p(1, 10)));
        assert!(!covers(p(0, 900), p(1, 1)));
    }
}
