//! What every end-to-end test of the `crawlrank` binary needs: a scratch folder and cache, a way
//! to run the binary, and checks for success and for a clean failure.
#![allow(dead_code)] // not every helper is used by a test today

pub mod serve;

use crawlrank_testkit as testkit;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary with `--cache cache` and `args`.
pub fn crawlrank(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .arg("--cache")
        .arg(cache)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Asserts success; returns stdout.
pub fn ok(out: &Output) -> String {
    ok_with_stderr(out).0
}

/// Asserts success; returns stdout and stderr.
pub fn ok_with_stderr(out: &Output) -> (String, String) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "failed: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// Asserts a clean failure whose message contains every one of `needles`: exit 1 when crawlrank
/// reported an error (after whatever progress it printed), 2 when clap rejected the arguments,
/// never a panic.
pub fn fails(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {stderr}");
    let expected = if stderr.contains("crawlrank: error:") {
        1
    } else {
        2
    };
    assert_eq!(out.status.code(), Some(expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "'{n}' not in: {stderr}");
    }
}

/// A scratch folder for inputs and outputs, and a cache folder of its own.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
        }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        testkit::write_file(self.dir.path(), name, text)
    }
    pub fn run(&self, args: &[&str]) -> Output {
        crawlrank(self.cache.path(), args)
    }
    pub fn files(&self) -> Vec<String> {
        testkit::file_names(self.dir.path())
    }
}
