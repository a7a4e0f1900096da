#!/usr/bin/env bash
# Builds the Python package's wheel the way a user's `pip install ./crates/python` does — maturin,
# from crates/python/pyproject.toml — installs it into a fresh virtual environment and imports it
# there: the check that the packaging itself (the python/ sources, the stubs, the native module's
# name, the metadata) still makes an installable, importable package, which the pytest suite
# (run on the package laid out by hand) does not see.
#
# Where it builds: the target directory of `cargo test` by default, where a check after an earlier
# one is cheap (about 15 s: PyO3's own six crates and the extension again, because their build
# script watches the PYO3_PYTHON and PYO3_ENVIRONMENT_SIGNATURE variables that maturin sets and
# `cargo test` does not). A clean build gains nothing from sharing: maturin selects the Python
# package alone, so cargo resolves the shared dependencies' features for it alone (fewer than the
# whole workspace's tests ask for) and compiles about a hundred of them again either way. CI
# therefore gives it a directory of its own (WHEEL_CHECK_TARGET_DIR) and runs it beside `cargo test`
# at the lowest CPU priority, so that it takes only what the tests leave idle; a shared directory
# would make the two wait on each other's cargo lock. The virtual environment sees the system's
# NumPy and SciPy (--system-site-packages) and installs nothing from the network.
#
# Usage: scripts/python-wheel-check.sh            (needs maturin and python3 with NumPy and SciPy)
#        WHEEL_CHECK_TARGET_DIR=DIR scripts/python-wheel-check.sh   (build in DIR instead)
# Prints the time each step took; exits non-zero when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${WHEEL_CHECK_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}}"
for tool in maturin python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "python-wheel-check: $tool is required (python3 -m pip install maturin)" >&2
        exit 1
    fi
done
work="$(mktemp -d "${TMPDIR:-/tmp}/crawlrank-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
step() {
    local name="$1"
    shift
    local t0=$SECONDS
    "$@"
    echo "python-wheel-check: $name: $((SECONDS - t0)) s" >&2
}
# --compatibility linux: a wheel for this machine (no manylinux audit, which needs the
# wheel's shared libraries checked against a policy that only matters for a public upload).
step "maturin build (dev profile, in $target)" \
    maturin build --manifest-path crates/python/Cargo.toml --profile dev \
    --target-dir "$target" --interpreter python3 --compatibility linux --out "$work/wheels"
wheel=("$work"/wheels/crawlrank-*.whl)
if [ ! -f "${wheel[0]}" ]; then
    echo "python-wheel-check: maturin made no wheel in $work/wheels" >&2
    exit 1
fi
step "virtual environment" python3 -m venv --system-site-packages "$work/venv"
step "pip install the wheel" "$work/venv/bin/python" -m pip install --quiet --no-deps --no-index \
    --disable-pip-version-check "${wheel[0]}"
# Outside the checkout, so that only the installed package can be imported; it must be the
# wheel's (not another crawlrank on the system's path), with its native module and stubs, and
# work: a small graph's PageRank sums to one.
cd "$work"
step "import and use" "$work/venv/bin/python" - "$work/venv" <<'EOF'
import os
import sys
from pathlib import Path

import numpy as np

import crawlrank
from crawlrank import _crawlrank

venv = Path(sys.argv[1]).resolve()
package = Path(crawlrank.__file__).resolve().parent
assert venv in package.parents, f"crawlrank imported from {package}, not the wheel in {venv}"
for name in ("__init__.py", "_crawlrank.pyi", "py.typed"):
    assert (package / name).is_file(), f"the wheel lacks crawlrank/{name}"
assert Path(_crawlrank.__file__).resolve().parent == package
arcs = Path("arcs.txt")
arcs.write_text("0 1\n1 2\n2 0\n2 3\n3 0\n")
os.environ["CRAWLRANK_CACHE"] = str(Path("cache").resolve())
g = crawlrank.Graph.load(arcs)
assert (g.num_nodes, g.num_arcs) == (4, 5), (g.num_nodes, g.num_arcs)
pr = crawlrank.pagerank(g)
assert abs(pr.sum() - 1.0) < 1e-9, pr
print(f"python-wheel-check: crawlrank {crawlrank.__version__} installed from the wheel and working")
EOF
