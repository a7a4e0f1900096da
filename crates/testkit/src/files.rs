//! Files for tests: inputs written into a temporary directory, and the listing of what a
//! command left in one (tests check that nothing but the promised outputs appears).

use std::path::{Path, PathBuf};

/// Writes `contents` to `dir/name` (replacing it) and returns that path. Panics on error.
pub fn write_file(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// The names of the entries of `dir` (files and directories, hidden ones included), sorted.
/// Panics on error.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}
