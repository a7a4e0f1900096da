//! Outputs that appear whole or not at all.
//!
//! A crash, a full disk or a bad input line half-way through an import must never leave a
//! file behind that looks like a valid result. Every output is therefore written under a
//! temporary name in the destination's own directory (so that the final `rename` is atomic
//! on the same filesystem) and renamed into place only once it is complete.
//!
//! "Complete" means on the disk, not in the page cache: the file's data is synced before the
//! rename, and the directory after it ([`sync_dir`]), so that a power cut after the call
//! returns leaves the new file whole (never an empty or short file under the final name, as
//! a rename of unsynced data may leave on ext4 and XFS) and its name in the directory.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// How the temporary files of [`write_file`] are named (then a random part).
const TEMP_PREFIX: &str = ".crawlrank-";

/// Writes `path` through `fill`, atomically: the file appears only if `fill` succeeds.
pub fn write_file<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
{
    let dir = parent_dir(path);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // The mode `File::create` would give (0o666 less the umask), not a temporary file's
    // owner-only 0o600, which would hide the finished output from other users.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder
        .tempfile_in(&dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let mut w = BufWriter::new(tmp.as_file().try_clone()?);
    fill(&mut w)?;
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    drop(w);
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("cannot write {} (sync failed)", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot move the finished file to {}", path.display()))?;
    sync_dir(&dir)
}

/// Makes the entries of directory `dir` durable: a file created, renamed or removed in it is
/// only sure to be found (or gone) after a power cut once its directory is synced. Where a
/// directory cannot be opened as a file (Windows), this does nothing: there the filesystem
/// journals names with the data.
pub fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let d = File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
        d.sync_all()
            .with_context(|| format!("cannot sync the directory {}", dir.display()))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Syncs the file at `path` (data and size) to the disk.
pub fn sync_file(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot sync {}", path.display()))
}

/// A set of files sharing one basename (`X.graph`, `X.offsets`, `X.properties`, `X.urls`, …)
/// written in a private staging directory and moved next to the final basename on
/// [`commit`](Self::commit). Dropping it without committing removes everything staged.
#[derive(Debug)]
pub struct StagedBasename {
    staging: tempfile::TempDir,
    name: String,
    target: PathBuf,
}

impl StagedBasename {
    /// Starts staging files for the final basename `target`.
    pub fn new(target: &Path) -> Result<Self> {
        let dir = parent_dir(target);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let name = target
            .file_name()
            .with_context(|| format!("{} is not a valid output basename", target.display()))?
            .to_string_lossy()
            .into_owned();
        let staging = tempfile::Builder::new()
            .prefix(".crawlrank-staging-")
            .tempdir_in(&dir)
            .with_context(|| format!("cannot create a staging directory in {}", dir.display()))?;
        Ok(Self {
            staging,
            name,
            target: target.to_path_buf(),
        })
    }

    /// The basename to write the staged files under.
    pub fn basename(&self) -> PathBuf {
        self.staging.path().join(&self.name)
    }

    /// The staged path of `basename + suffix` (e.g. `".urls"`).
    pub fn path(&self, suffix: &str) -> PathBuf {
        self.staging.path().join(format!("{}{suffix}", self.name))
    }

    /// Moves every staged file into place and returns their final paths. Each is synced
    /// first and the directory after, so what appears survives a power cut whole. The
    /// `.properties` file, which is what makes a BVGraph loadable, is moved last, so a reader
    /// never sees a graph without its parts.
    pub fn commit(self) -> Result<Vec<PathBuf>> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(self.staging.path())
            .and_then(|d| d.map(|e| e.map(|e| e.path())).collect())
            .with_context(|| {
                format!(
                    "cannot list the staging directory {}",
                    self.staging.path().display()
                )
            })?;
        entries.sort_by_key(|p| p.extension().is_some_and(|e| e == "properties"));
        for p in &entries {
            sync_file(p)?;
        }
        let dir = parent_dir(&self.target);
        let mut moved = Vec::with_capacity(entries.len());
        for p in entries {
            let to = dir.join(p.file_name().expect("staged files have names"));
            std::fs::rename(&p, &to)
                .with_context(|| format!("cannot move {} to {}", p.display(), to.display()))?;
            moved.push(to);
        }
        sync_dir(&dir)?;
        Ok(moved)
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Removes from `dir` the temporary files of [`write_file`] (`.crawlrank-…`) last written more
/// than `older_than` ago: those a process killed in the middle of a write left behind (one
/// still writing renames its file within moments). Returns how many; a missing `dir` has none.
pub fn remove_stale_temporaries(dir: &Path, older_than: std::time::Duration) -> Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        // A file gone meanwhile (renamed by its writer) is not stale.
        let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        if now.duration_since(modified).unwrap_or_default() > older_than
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_temporaries_are_removed_and_fresh_ones_and_outputs_kept() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(".crawlrank-abc");
        let fresh = dir.path().join(".crawlrank-def");
        let output = dir.path().join("kept");
        for p in [&stale, &fresh, &output] {
            std::fs::write(p, b"x").unwrap();
        }
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for p in [&stale, &output] {
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let minute = std::time::Duration::from_secs(60);
        assert_eq!(remove_stale_temporaries(dir.path(), minute).unwrap(), 1);
        assert!(!stale.exists() && fresh.exists() && output.exists());
        assert_eq!(
            remove_stale_temporaries(&dir.path().join("none"), minute).unwrap(),
            0
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_finished_output_has_the_mode_of_an_ordinary_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        write_file(&out, |w| Ok(w.write_all(b"x")?)).unwrap();
        let plain = dir.path().join("plain.txt");
        File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&out), mode(&plain));
        assert_eq!(std::fs::read(&out).unwrap(), b"x");
    }
}
