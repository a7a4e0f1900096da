//! What every end-to-end test of the `crawlrank` binary needs: a scratch folder and cache, a way
//! to run the binary, and checks for success and for a clean failure.
#![allow(dead_code)] // not every helper is used by a test today

pub mod cluster;
pub mod serve;
pub mod workers;

use crawlrank_testkit as testkit;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs the binary with `--cache cache` and `args`.
pub fn crawlrank<S: AsRef<OsStr>>(cache: &Path, args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .arg("--cache")
        .arg(cache)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The arguments of a command written as a user types it: the words of `line`, each word `{}`
/// replaced by the next of `values` (paths, and any value with spaces, go there). A test whose
/// `{}` and `values` do not pair up is a mistake in the test: it panics saying so.
pub fn words(line: &str, values: &[&dyn AsRef<OsStr>]) -> Vec<String> {
    let mut values = values.iter();
    let args: Vec<String> = line
        .split_whitespace()
        .map(|w| match w {
            "{}" => {
                let v = values
                    .next()
                    .unwrap_or_else(|| panic!("too few values for: {line}"));
                let v = v.as_ref();
                v.to_str()
                    .unwrap_or_else(|| panic!("not UTF-8: {v:?}"))
                    .to_string()
            }
            w => w.to_string(),
        })
        .collect();
    assert!(values.next().is_none(), "more values than {{}} in: {line}");
    args
}

/// Polls `done` every `every` until it gives a value, and returns it; panics saying `what` did
/// not happen once `within` has passed. The bound on every wait for a running process.
pub fn wait_for<T>(
    what: &str,
    within: Duration,
    every: Duration,
    mut done: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = done() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(every);
    }
}

/// Sends `signal` (`-INT`, `-TERM`, `-9`, …) to the process `pid` with kill(1), as a user at a
/// terminal or a service manager would, and asserts it was delivered.
pub fn kill(signal: &str, pid: impl std::fmt::Display) {
    let pid = pid.to_string();
    let status = Command::new("kill").args([signal, &pid]).status().unwrap();
    assert!(status.success(), "kill {signal} {pid}: {status}");
}

/// Asserts that `text` (what a command printed, a file it wrote) contains each of `needles`,
/// showing the text when one is missing.
pub fn assert_contains(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "'{n}' not in:\n{text}");
    }
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
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        crawlrank(self.cache.path(), args)
    }
    /// Runs the binary with the command `line` (see [`words`]): `env.run_line("rank --graph {}
    /// --top 3", &[&graph])`.
    pub fn run_line(&self, line: &str, values: &[&dyn AsRef<OsStr>]) -> Output {
        self.run(&words(line, values))
    }
    /// Runs the command `line` (see [`words`]) followed by the words `extra` as they are: the
    /// options a test varies from one run of the same command to the next.
    pub fn run_with(&self, line: &str, values: &[&dyn AsRef<OsStr>], extra: &[&str]) -> Output {
        let mut args = words(line, values);
        args.extend(extra.iter().map(|s| s.to_string()));
        self.run(&args)
    }
    /// Runs the command `line` (see [`words`]) and asserts success; returns stdout.
    pub fn ok(&self, line: &str, values: &[&dyn AsRef<OsStr>]) -> String {
        ok(&self.run_line(line, values))
    }
    /// Runs the command `line` (see [`words`]) and asserts a clean failure whose message says
    /// each of `needles` (see [`fails`]).
    pub fn fails(&self, line: &str, values: &[&dyn AsRef<OsStr>], needles: &[&str]) {
        fails(&self.run_line(line, values), needles)
    }
    /// Writes `text` (an arc list or URL pairs) as the file `input` and imports it into the
    /// basename `base` of the scratch folder; returns the basename and what `import` printed.
    pub fn import(&self, input: &str, text: &str, base: &str) -> (PathBuf, String) {
        let (input, base) = (self.write(input, text), self.path(base));
        let stdout = self.ok("import {} --out {}", &[&input, &base]);
        (base, stdout)
    }
    /// Imports the URL pairs `text` (a file `pairs.txt`) into the basename `web` (see
    /// [`Env::import`]).
    pub fn import_url_pairs(&self, text: &str) -> (PathBuf, String) {
        self.import("pairs.txt", text, "web")
    }
    pub fn files(&self) -> Vec<String> {
        testkit::file_names(self.dir.path())
    }
}

#[test]
fn words_fill_each_placeholder_with_the_next_value_and_keep_spaces_inside_values() {
    let dir = Path::new("/a dir/x");
    let args = words(
        "crawl --seeds {} --delay 0  --proxy {}",
        &[&dir, &"http://h:1"],
    );
    let expected = [
        "crawl",
        "--seeds",
        "/a dir/x",
        "--delay",
        "0",
        "--proxy",
        "http://h:1",
    ];
    assert_eq!(args, expected);
    let too_few = std::panic::catch_unwind(|| words("rank --graph {} --out {}", &[&"g"]));
    assert!(too_few.is_err(), "a missing value is a mistake in the test");
    let too_many = std::panic::catch_unwind(|| words("rank --graph {}", &[&"g", &"h"]));
    assert!(
        too_many.is_err(),
        "a value left over is a mistake in the test"
    );
}
