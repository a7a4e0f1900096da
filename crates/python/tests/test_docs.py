"""docs/python.md's worked example runs as written and does what the page says."""

import os
import re
from pathlib import Path

from conftest import REPO, cli_path


def example() -> str:
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    (session,) = [b for b in blocks if "class SharedVotes" in b]
    return session


def test_worked_example_runs(cli, tmp_path, monkeypatch, capsys):
    bin_dir = cli_path().parent
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    scope: dict = {}
    exec(compile(example(), "docs/python.md", "exec"), scope)
    sim = scope["sim"]
    assert sim.policies == ["fica", "backlink", "shared-votes"]
    assert sim.reachable > 10000
    for svg in ("throughput.svg", "mass.svg"):
        assert "shared-votes" in Path(svg).read_text()
    out = capsys.readouterr().out
    assert "shared-votes finds" in out and "hot@10%" in out
