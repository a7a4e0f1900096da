//! Graph basenames: the one name that the files of a graph share.
//!
//! A graph `X` is a family of files — `X.graph`, `X.offsets`, `X.properties`, `X.ef`,
//! `X.urls`, `X.ids`, … — and every module that reads or writes one of them needs the same two
//! path rules. They live here, below everything else, so that crawlrank-graph's `bv`,
//! [`urls`](crate::urls), [`hosts`](crate::hosts) and the importers depend on this module
//! rather than on each other.

use std::path::{Path, PathBuf};

/// Appends `ext` to a basename without touching dots already in it (`a.b` → `a.b.graph`).
pub fn with_ext(basename: &Path, ext: &str) -> PathBuf {
    let mut s = basename.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Accepts `X`, `X.graph`, `X.properties`, `X.offsets` or `X.ef` and returns the basename `X`.
pub fn basename_of(path: &Path) -> PathBuf {
    match path.extension().and_then(|e| e.to_str()) {
        Some("graph" | "properties" | "offsets" | "ef") => path.with_extension(""),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_keep_dots_in_the_basename() {
        assert_eq!(
            with_ext(Path::new("d/a.b"), "graph"),
            PathBuf::from("d/a.b.graph")
        );
        assert_eq!(
            with_ext(Path::new("g"), "urls.gz"),
            PathBuf::from("g.urls.gz")
        );
        assert_eq!(basename_of(Path::new("d/g.graph")), PathBuf::from("d/g"));
        assert_eq!(basename_of(Path::new("d/g.ef")), PathBuf::from("d/g"));
        assert_eq!(basename_of(Path::new("d/g.v1")), PathBuf::from("d/g.v1"));
        assert_eq!(
            basename_of(Path::new("d/g.urls")),
            PathBuf::from("d/g.urls")
        );
    }
}
