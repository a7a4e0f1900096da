"""Shared fixtures of the Python package's tests: the crawlrank CLI they compare with, a
scratch cache, a generated web, and LAW's cnr-2000 when the shared data is present."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def cli_path() -> Path:
    env = os.environ.get("CRAWLRANK_BIN")
    if env:
        return Path(env).resolve()
    found = shutil.which("crawlrank")
    if found:
        return Path(found)
    return REPO / "target" / "debug" / "crawlrank"


@pytest.fixture(scope="session")
def cli():
    """Runs the crawlrank binary; returns its stdout, failing with its stderr."""
    path = cli_path()
    if not path.exists():
        pytest.skip(f"the crawlrank binary is not built ({path}): cargo build -p crawlrank-cli")

    def run(*args: object, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run(
            [str(path), *map(str, args)], capture_output=True, text=True, timeout=600
        )
        if check and p.returncode != 0:
            raise AssertionError(f"crawlrank {' '.join(map(str, args))} failed:\n{p.stderr}")
        return p

    return run


@pytest.fixture(scope="session", autouse=True)
def scratch_cache(tmp_path_factory):
    """Every test and every CLI run it makes use a cache of their own."""
    cache = tmp_path_factory.mktemp("cache")
    old = os.environ.get("CRAWLRANK_CACHE")
    os.environ["CRAWLRANK_CACHE"] = str(cache)
    yield cache
    if old is None:
        del os.environ["CRAWLRANK_CACHE"]
    else:
        os.environ["CRAWLRANK_CACHE"] = old


@pytest.fixture(scope="session")
def web(cli, tmp_path_factory) -> Path:
    """A generated web of 3,000 pages with URLs (BVGraph basename)."""
    base = tmp_path_factory.mktemp("web") / "web"
    cli("generate", "--pages", 3000, "--out", base, "--seed", 7)
    return base


def shared_data() -> Path:
    env = os.environ.get("CRAWLRANK_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def cnr2000() -> Path:
    base = shared_data() / "cnr-2000" / "cnr-2000"
    if not base.with_suffix(".graph").exists():
        pytest.skip(
            f"{base}.graph not found (set CRAWLRANK_SHARED_DATA to the folder holding the shared graphs)"
        )
    return base


def read_scores(path: Path):
    import numpy as np

    return np.array([float(line) for line in path.read_text().split()])
