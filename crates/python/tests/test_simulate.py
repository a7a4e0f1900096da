"""crawlrank.simulate against `crawlrank simulate`: the same orders, curves, τ_b and R."""

import json

import numpy as np
import pytest

import crawlrank

POLICIES = "bfs,random,backlink,indegree,batch-pagerank,partial-pagerank,opic,fica,fica-plus,ieca,omniscient"


def cli_simulate(cli, graph, out, *args):
    cli("simulate", "--graph", graph, "--out", out, "--save-orders", *args)
    return json.loads((out / "summary.json").read_text())


def check_same(sim, summary, out):
    assert sim.reachable == summary["reachable"]
    assert len(sim.seeds) == summary["seeds"]
    by_name = {p["policy"]: p for p in summary["policies"]}
    assert sim.policies == list(by_name)
    for r in sim:
        theirs = by_name[r.policy]
        order = np.loadtxt(out / f"{r.policy}.order", dtype=np.int64, ndmin=1)
        assert np.array_equal(r.order, order), r.policy
        for m in ("throughput", "mass", "mean_pagerank"):
            assert np.array_equal(getattr(r, m), np.array(theirs[m])), (r.policy, m)
        assert list(r.checkpoints) == theirs["checkpoints"]
        assert r.tau_b == theirs["kendall_tau_b"]
        assert r.batch == theirs["batch"]
        assert r.at("throughput", 10) == theirs["throughput_at"]["10"]


def test_simulate_matches_the_cli(cli, web, tmp_path):
    summary = cli_simulate(cli, web, tmp_path, "--policy", POLICIES, "--seeds", 20, "--rng-seed", 3)
    g = crawlrank.Graph.load(web)
    sim = crawlrank.simulate(g, POLICIES, n_seeds=20, rng_seed=3, progress=False)
    check_same(sim, summary, tmp_path)
    assert sim["fica"] is sim[7]
    curves = sim["fica"].curves
    assert list(curves["percent"]) == list(range(1, 101))
    assert list(sim.table().index) == POLICIES.split(",")


def test_seed_ids_batch_and_outputs(cli, web, tmp_path):
    seeds = [5, 17, 2999, 40]
    seeds_file = tmp_path / "seeds.txt"
    seeds_file.write_text("".join(f"{s}\n" for s in seeds))
    cli_out = tmp_path / "cli"
    summary = cli_simulate(
        cli, web, cli_out, "--policy", "backlink,opic", "--seeds-file", seeds_file, "--batch", 25
    )
    g = crawlrank.Graph.load(web)
    py_out = tmp_path / "py"
    sim = crawlrank.simulate(
        g, ["backlink", "opic"], seeds=seeds, batch=25, progress=False, out=py_out, save_orders=True
    )
    check_same(sim, summary, cli_out)
    assert list(sim.seeds) == seeds
    ours = json.loads((py_out / "summary.json").read_text())
    for a, b in zip(ours["policies"], summary["policies"]):
        assert a["throughput"] == b["throughput"] and a["mass"] == b["mass"]
    assert (py_out / "throughput.svg").exists() and (py_out / "opic.order").exists()
    # A seeds file works as the CLI's --seeds-file.
    again = crawlrank.simulate(g, "backlink", seeds=seeds_file, batch=25, progress=False)
    assert np.array_equal(again["backlink"].order, sim["backlink"].order)


def test_impact_vector(web):
    g = crawlrank.Graph.load(web)
    impact = np.zeros(g.num_nodes)
    impact[::7] = 1.0
    sim = crawlrank.simulate(g, ["rw", "fica"], n_seeds=10, impact=impact, progress=False)
    assert sim["rw"].impact is not None and len(sim["fica"].impact) == 100
    with pytest.raises(ValueError, match="impact"):
        crawlrank.simulate(g, "rw", progress=False)


def test_bad_input(web):
    g = crawlrank.Graph.load(web)
    with pytest.raises(ValueError, match="seed 3000 is not a page"):
        crawlrank.simulate(g, "bfs", seeds=[1, 3000], progress=False)
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        crawlrank.simulate(g, "nope", progress=False)
    with pytest.raises(TypeError, match="reorder"):
        crawlrank.simulate(g, [object()], progress=False)
    with pytest.raises(ValueError, match="batch"):
        crawlrank.simulate(g, "bfs", batch=0, progress=False)


def test_progress_callback(web):
    g = crawlrank.Graph.load(web)
    seen = []
    sim = crawlrank.simulate(g, ["bfs", "fica"], n_seeds=5, progress=lambda *a: seen.append(a))
    assert seen[-1] == ("fica", sim.reachable, sim.reachable)
    assert ("bfs", sim.reachable, sim.reachable) in seen


def test_interrupt_from_progress(web):
    g = crawlrank.Graph.load(web)

    def stop(*_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        crawlrank.simulate(g, "fica", n_seeds=5, progress=stop)


def test_plot(web, tmp_path):
    g = crawlrank.Graph.load(web)
    sim = crawlrank.simulate(g, ["bfs", "fica"], n_seeds=5, progress=False)
    sim.plot(tmp_path / "t.svg")
    crawlrank.plot(sim, tmp_path / "m.svg", measure="mass")
    assert "<svg" in (tmp_path / "t.svg").read_text() and "fica" in (tmp_path / "m.svg").read_text()


def test_simulate_on_cnr2000(cli, cnr2000, tmp_path):
    summary = cli_simulate(cli, cnr2000, tmp_path, "--policy", "fica,backlink", "--seeds", 100)
    g = crawlrank.Graph.load(cnr2000)
    sim = crawlrank.simulate(g, "fica,backlink", progress=False)
    check_same(sim, summary, tmp_path)
