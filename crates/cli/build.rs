//! Build script of the `crawlrank` binary: records the git commit it is built from, so that
//! `crawlrank --version` and every output's provenance can name it.
//!
//! It sets `CRAWLRANK_COMMIT` (the short commit hash, or `unknown` outside a git checkout, e.g.
//! a build from a source tarball, or without git), `CRAWLRANK_COMMIT_DATE` (the commit's date,
//! `YYYY-MM-DD`, or empty) and `CRAWLRANK_DIRTY` (`true` when tracked files differed from the
//! commit when this script last ran, `false`, or `unknown`) and `CRAWLRANK_VERSION_TEXT`
//! (what `--version` prints, e.g. `0.1.0 (commit 3dd6670, 2026-11-26)`, `, modified` after
//! the hash when the tree was dirty). Cargo reruns it when HEAD moves
//! (the HEAD file and the branch's ref, found through `git rev-parse --git-path`, which also
//! resolves them in a linked worktree, whose git dir is not the repository's), and when a
//! file under `crates/` changes, so the dirty flag follows source edits.

use std::path::Path;
use std::process::Command;

/// `git ARGS` run in `dir`: its trimmed stdout when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        // No index refresh: a write to the index would make every build look changed.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest);
    println!("cargo:rerun-if-changed=build.rs");
    // Only a checkout of crawlrank counts: a source tarball unpacked inside some other git
    // repository (whose files it is not) has no commit of its own.
    let ours = git(dir, &["ls-files", "--error-unmatch", "Cargo.toml"]).is_some();
    let commit = ours
        .then(|| git(dir, &["rev-parse", "--short", "HEAD"]))
        .flatten()
        .filter(|c| !c.is_empty());
    if commit.is_some() {
        // The files that change when HEAD moves: HEAD itself, the ref it points to (loose or
        // packed). `--git-path` gives their real places, in a linked worktree too.
        let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
        if let Some(r) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
            watched.push(r);
        }
        for name in watched {
            if let Some(p) = git(dir, &["rev-parse", "--git-path", &name]) {
                let p = dir.join(p);
                if p.exists() {
                    println!("cargo:rerun-if-changed={}", p.display());
                }
            }
        }
        if let Some(top) = git(dir, &["rev-parse", "--show-toplevel"]) {
            let crates = Path::new(&top).join("crates");
            if crates.is_dir() {
                println!("cargo:rerun-if-changed={}", crates.display());
            }
        }
    }
    let dirty = match &commit {
        Some(_) => match git(dir, &["status", "--porcelain", "--untracked-files=no"]) {
            Some(s) => (!s.is_empty()).to_string(),
            None => "unknown".to_owned(),
        },
        None => "unknown".to_owned(),
    };
    let date = commit
        .as_ref()
        .and_then(|_| git(dir, &["log", "-1", "--format=%cd", "--date=short"]))
        .unwrap_or_default();
    println!(
        "cargo:rustc-env=CRAWLRANK_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!("cargo:rustc-env=CRAWLRANK_COMMIT_DATE={date}");
    println!("cargo:rustc-env=CRAWLRANK_DIRTY={dirty}");
    // What `crawlrank --version` prints after the name.
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let mut about = format!("commit {}", commit.as_deref().unwrap_or("unknown"));
    if dirty == "true" {
        about.push_str(", modified");
    }
    if !date.is_empty() {
        about.push_str(", ");
        about.push_str(&date);
    }
    println!("cargo:rustc-env=CRAWLRANK_VERSION_TEXT={version} ({about})");
}
