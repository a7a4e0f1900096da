//! The Python package's tests, run from `cargo test`: builds the extension module and the
//! `crawlrank` binary with the workspace's dev profile (reusing the test build's artifacts),
//! lays the package out in the target directory, and runs pytest on `crates/python/tests`,
//! whose tests compare every function with the CLI's outputs.
//!
//! Outside CI the test skips, saying why, when python3, NumPy, SciPy or pytest are missing; on
//! CI (`CI=true`) that is a failure, as `.ci/run` installs them.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long pytest may run before the test fails.
const PYTEST_TIMEOUT: Duration = Duration::from_secs(900);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join("target"),
    }
}

/// Whether python3 with NumPy, SciPy and pytest is there; `Err` says what is missing.
fn python_ready() -> Result<(), String> {
    let out = Command::new("python3")
        .args(["-c", "import numpy, scipy, pytest"])
        .output()
        .map_err(|e| format!("python3 cannot be run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "python3 lacks NumPy, SciPy or pytest (python3 -m pip install numpy scipy pandas pytest): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Makes sure the extension module and the `crawlrank` binary are built and fresh: the
/// README's test command again, without running it (`cargo test --workspace --no-run`). Under
/// `cargo test --workspace` everything is already built with exactly these features and
/// profile, so this only checks fingerprints; a narrower command (`cargo build -p …`) would
/// unify features differently and rebuild half the workspace.
///
/// The variables cargo sets for a test process (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, …) are
/// removed first: build scripts watch some of them (ring's does), and seeing them set would make
/// the inner cargo rebuild those crates and all that depends on them.
fn build() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_tests = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_CFG_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || [
                "CARGO_TARGET_TMPDIR",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&name.as_ref());
        if set_for_tests {
            command.env_remove(name.as_ref());
        }
    }
    let status = command
        .current_dir(workspace_root())
        .args(["test", "--workspace", "--no-run", "--quiet"])
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build of the extension failed");
    target_dir().join("debug")
}

/// `OUT/crawlrank/`: the Python sources beside the freshly built extension module.
fn lay_out_package(debug: &Path) -> PathBuf {
    let root = debug.join("python-package");
    let pkg = root.join("crawlrank");
    std::fs::create_dir_all(&pkg).expect("package folder");
    let sources = workspace_root().join("crates/python/python/crawlrank");
    for entry in std::fs::read_dir(&sources).expect("package sources") {
        let entry = entry.expect("package source");
        let name = entry.file_name().to_string_lossy().into_owned();
        // The sources only: not an extension module `maturin develop` may have left there.
        let source = name.ends_with(".py") || name.ends_with(".pyi") || name == "py.typed";
        if source && entry.file_type().expect("file type").is_file() {
            std::fs::copy(entry.path(), pkg.join(entry.file_name())).expect("copy source");
        }
    }
    let built = ["lib_crawlrank.so", "lib_crawlrank.dylib"]
        .iter()
        .map(|name| debug.join(name))
        .find(|p| p.exists())
        .expect("the extension module was built");
    let module = pkg.join("_crawlrank.abi3.so");
    let _ = std::fs::remove_file(&module);
    std::fs::copy(&built, &module).expect("copy the extension module");
    root
}

#[test]
fn pytest() {
    let on_ci = std::env::var("CI").as_deref() == Ok("true");
    if let Err(why) = python_ready() {
        assert!(!on_ci, "the Python tests must run on CI: {why}");
        eprintln!("skipping the Python package's tests: {why}");
        return;
    }
    let debug = build();
    let package = lay_out_package(&debug);
    let mut child = Command::new("python3")
        .current_dir(workspace_root())
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "crates/python/tests",
        ])
        .env("PYTHONPATH", &package)
        .env("CRAWLRANK_BIN", debug.join("crawlrank"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pytest starts");
    // Drain the pipes on threads, so that a chatty run cannot block on a full pipe.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("pytest runs") {
            break Some(status);
        }
        if start.elapsed() > PYTEST_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (out, err) = (out.join().expect("stdout"), err.join().expect("stderr"));
    match status {
        None => panic!("pytest did not finish in {PYTEST_TIMEOUT:?}:\n{out}\n{err}"),
        Some(s) if !s.success() => panic!("pytest failed ({s}):\n{out}\n{err}"),
        Some(_) => println!("{out}"),
    }
}
