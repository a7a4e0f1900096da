//! Graphs past memory: `--in-memory never` (the memory-mapped compressed graph) gives what
//! `--in-memory always` (the decoded CSR) gives, bit for bit, and PageRank across processes
//! (`rank --processes`, `--hostfile`) gives the one-process vector, survives a killed process
//! through its checkpoints, and refuses bad clusters with clear errors, never a hang.

use crate::common::{crawlrank, fails, kill, ok, ok_with_stderr, words, Env};
use crawlrank_testkit::free_port;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A generated web of `pages` pages at `BASENAME` in `env`.
fn generated(env: &Env, name: &str, pages: usize, seed: u64) -> String {
    let base = env.path(name);
    let base = base.to_str().unwrap().to_string();
    let line = "generate --pages {} --out {} --seed {}";
    env.ok(line, &[&pages.to_string(), &base, &seed.to_string()]);
    base
}

/// Runs the command `line` (see [`words`]) with a cache of its own, so that each `--in-memory`
/// path computes its own reference PageRank and transpose.
fn run_own_cache(line: &str, values: &[&dyn AsRef<OsStr>]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    crawlrank(cache.path(), &words(line, values))
}

/// [`run_own_cache`] of a command given `--in-memory mode`: asserts success and that the
/// command says which path it took; returns stdout.
fn run_path(line: &str, values: &[&dyn AsRef<OsStr>], mode: &str) -> String {
    let (stdout, stderr) = ok_with_stderr(&run_own_cache(line, values));
    assert!(
        stderr.contains(&format!("--in-memory {mode}")),
        "the command says which path it took: {stderr}"
    );
    stdout
}

/// Runs `simulate` with every policy from the same seeds with `--in-memory mode`, the batch
/// policies' PageRank computed to `threshold`, and a cache of its own (see [`run_path`]).
fn simulate(graph: &str, mode: &str, out: &Path, seeds: &str, threshold: &str) -> String {
    let line = "simulate --graph {} --policy all --seeds {} --batch-pagerank-threshold {} --in-memory {} --save-orders --out {}";
    run_path(line, &[&graph, &seeds, &threshold, &mode, &out], mode);
    std::fs::read_to_string(out.join("summary.csv")).unwrap()
}

/// The same `.order` files and `summary.csv` from both paths, for every policy (see
/// [`simulate`]).
fn assert_same_simulation(env: &Env, graph: &str, seeds: &str, threshold: &str) {
    let (a, b) = (env.path("always"), env.path("never"));
    let summary_always = simulate(graph, "always", &a, seeds, threshold);
    let summary_never = simulate(graph, "never", &b, seeds, threshold);
    assert_eq!(summary_always, summary_never, "summary.csv differs");
    let mut orders = 0;
    for entry in std::fs::read_dir(&a).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "order") {
            let name = path.file_name().unwrap();
            let x = std::fs::read(&path).unwrap();
            let y = std::fs::read(b.join(name)).unwrap();
            assert!(!x.is_empty());
            assert!(
                x == y,
                "{} differs between the paths",
                name.to_string_lossy()
            );
            orders += 1;
        }
    }
    assert!(orders >= 11, "every policy wrote its order ({orders})");
}

#[test]
fn compressed_simulation_equals_in_memory_on_a_generated_graph() {
    let env = Env::new();
    let g = generated(&env, "web", 6000, 5);
    assert_same_simulation(&env, &g, "20", "1e-6");
}

#[test]
fn compressed_simulation_equals_in_memory_on_cnr_2000() {
    let Some(dir) = crawlrank_graph::testdata::shared_data_or_skip("cnr-2000/cnr-2000.graph")
    else {
        return;
    };
    let env = Env::new();
    let g = dir.join("cnr-2000/cnr-2000");
    // The batch policies' PageRank to 1e-2, not the default 1e-6: both paths still compute
    // it alike, and their reorders, which took 24 of the test's 30 s, take 8.
    assert_same_simulation(&env, g.to_str().unwrap(), "100", "1e-2");
}

/// `frontier-rank` on the compressed graph: the same scores, table and summary as on the CSR,
/// for every method, with the downloaded set drawn by a BFS from random seeds.
#[test]
fn compressed_frontier_rankings_equal_in_memory_ones() {
    let env = Env::new();
    let g = generated(&env, "web", 3000, 8);
    let mut imp = String::from("id,clicks\n");
    for v in (0..3000).step_by(2) {
        imp += &format!("{v},{}\n", (v * 7) % 31);
    }
    let imp = env.write("imp.csv", &imp);
    let mut outs = Vec::new();
    for mode in ["always", "never"] {
        let out = env.path(&format!("fr-{mode}"));
        let line = "frontier-rank --graph {} --downloaded-fraction 0.2 --seeds 3 --impact {} --in-memory {} --out {}";
        let stdout = run_path(line, &[&g, &imp, &mode, &out], mode);
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
        // The table without its timings (the last column of each method's row: its only
        // rows of 8 or more numbers and words) and the line naming the folder.
        let table: Vec<String> = stdout
            .lines()
            .filter(|l| !l.starts_with("wrote "))
            .map(|l| {
                let mut words: Vec<&str> = l.split_whitespace().collect();
                if words.len() >= 8 && words.last().is_some_and(|w| w.parse::<f64>().is_ok()) {
                    words.pop();
                }
                words.join(" ")
            })
            .collect();
        outs.push((table, read("scores.tsv"), read("summary.csv")));
    }
    assert!(outs[0].1.lines().count() > 100, "a frontier to rank");
    assert_eq!(outs[0].0, outs[1].0, "the table differs between the paths");
    assert!(
        outs[0].1 == outs[1].1,
        "scores.tsv differs between the paths"
    );
    assert!(
        outs[0].2 == outs[1].2,
        "summary.csv differs between the paths"
    );
}

#[test]
fn compressed_rankings_and_statistics_equal_in_memory_ones() {
    let env = Env::new();
    let g = generated(&env, "web", 9000, 6);
    for algo in ["pagerank", "hits", "indegree"] {
        let mut outs = Vec::new();
        for mode in ["always", "never"] {
            let out = env.path(&format!("{algo}-{mode}.txt"));
            let line = "rank --graph {} --algo {} --in-memory {} --out {}";
            ok(&run_own_cache(line, &[&g, &algo, &mode, &out]));
            outs.push(std::fs::read(&out).unwrap());
        }
        assert!(
            outs[0] == outs[1],
            "{algo}: the scores differ between the paths"
        );
    }
    let info = |mode: &str| {
        env.ok(
            "info --graph {} --reachability 4 --scc --in-memory {}",
            &[&g, &mode],
        )
    };
    let always = info("always");
    assert!(always.contains("reach") || always.contains("scc") || always.contains("SCC"));
    assert_eq!(always, info("never"));
    fails(
        &env.run(&["rank", "--graph", &g, "--in-memory", "sometimes"]),
        &["sometimes"],
    );
}

/// Scores as `rank --out` writes them (one per line).
fn scores(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

fn top_order(s: &[f64], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..s.len()).collect();
    idx.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
    idx.truncate(k);
    idx
}

fn assert_same_vector(one: &[f64], many: &[f64]) {
    assert_eq!(one.len(), many.len());
    let l1: f64 = one.iter().zip(many).map(|(a, b)| (a - b).abs()).sum();
    assert!(l1 <= 1e-12, "L1 distance {l1}");
    assert_eq!(top_order(one, 1000), top_order(many, 1000));
}

/// The one-process PageRank of `g`, as `rank --out` writes it (`extra`: more options).
fn one_process(env: &Env, g: &str, extra: &[&str]) -> Vec<f64> {
    let out = env.path("one.txt");
    ok(&env.run_with(
        "rank --graph {} --in-memory always --out {}",
        &[&g, &out],
        extra,
    ));
    scores(&out)
}

#[test]
fn pagerank_in_three_processes_equals_one_process() {
    let env = Env::new();
    let g = generated(&env, "web", 20000, 7);
    let one = one_process(&env, &g, &[]);
    let out = env.path("three.txt");
    let three = env.run_line("rank --graph {} --processes 3 --out {}", &[&g, &out]);
    let (_, stderr) = ok_with_stderr(&three);
    assert!(stderr.contains("3 processes"), "{stderr}");
    assert_same_vector(&one, &scores(&out));
}

#[test]
fn hits_and_indegree_in_three_processes_equal_one_process() {
    let env = Env::new();
    let g = generated(&env, "web", 20000, 7);
    for algo in [
        &["--algo", "hits"][..],
        &["--algo", "hits", "--hits-score", "hub"],
        &["--algo", "indegree"],
    ] {
        let one = one_process(&env, &g, algo);
        let out = env.path("three.txt");
        let mut args = vec!["rank", "--graph", &g, "--processes", "3"];
        args.extend_from_slice(algo);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let (_, stderr) = ok_with_stderr(&env.run(&args));
        assert!(stderr.contains("3 processes"), "{algo:?}: {stderr}");
        assert_same_vector(&one, &scores(&out));
    }
}

#[test]
fn a_killed_process_then_a_rerun_with_checkpoints_ends_with_the_same_vector() {
    let env = Env::new();
    let g = generated(&env, "web", 20000, 8);
    // A fixed number of sweeps, long enough for the kill to land mid-run.
    let sweeps = ["--threshold", "0", "--max-iter", "600"];
    let one = one_process(&env, &g, &sweeps);
    let ckpt = env.path("ckpt");
    let out = env.path("three.txt");
    let args = [
        "--cache",
        env.cache.path().to_str().unwrap(),
        "rank",
        "--graph",
        &g,
        "--processes",
        "3",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--checkpoint-every",
        "2",
        "--out",
        out.to_str().unwrap(),
        sweeps[0],
        sweeps[1],
        sweeps[2],
        sweeps[3],
    ];
    let mut launcher = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(launcher.stderr.take().unwrap()).lines();
    let pids: Vec<String> = loop {
        let line = lines
            .next()
            .expect("the launcher names its processes")
            .unwrap();
        if let Some(rest) = line.split("(pids ").nth(1) {
            break rest
                .trim_end_matches(')')
                .split(", ")
                .map(str::to_string)
                .collect();
        }
    };
    assert_eq!(pids.len(), 3);
    // Kill process 1 once every process has saved a checkpoint, mid-run.
    let start = Instant::now();
    loop {
        let saved = std::fs::read_dir(&ckpt)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".ckpt"))
                    .count()
            })
            .unwrap_or(0);
        if saved >= 3 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no checkpoint appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    kill("-9", &pids[1]);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = launcher.wait().unwrap();
    let rest = rest.join("\n");
    assert!(!status.success(), "the launcher reports the death: {rest}");
    assert!(rest.contains("process 1 was killed by signal 9"), "{rest}");
    assert!(!out.exists(), "no vector is written by a run that stopped");

    let rerun = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(args)
        .output()
        .unwrap();
    let (_, stderr) = ok_with_stderr(&rerun);
    assert!(
        stderr.contains("resumed from the checkpoint of iteration"),
        "{stderr}"
    );
    assert_same_vector(&one, &scores(&out));
}

/// A hostfile of two processes on loopback at `ports`.
fn hostfile(env: &Env, name: &str, ports: [u16; 2]) -> std::path::PathBuf {
    env.write(
        name,
        &format!("127.0.0.1:{}\n127.0.0.1:{}\n", ports[0], ports[1]),
    )
}

#[test]
fn bad_clusters_fail_clearly_and_never_hang() {
    let env = Env::new();
    let g1 = generated(&env, "one", 3000, 1);
    let g2 = generated(&env, "two", 3000, 2);

    // A peer that never comes: a clear error within the timeout.
    // Process `i` of the hostfile `hosts` on g1, waiting 2 s for its peer.
    let rank_process = |hosts: &Path, i: &str| {
        env.run(&[
            "rank",
            "--graph",
            &g1,
            "--hostfile",
            hosts.to_str().unwrap(),
            "--process",
            i,
            "--connect-timeout",
            "2",
        ])
    };
    let hosts = hostfile(&env, "hosts-unreachable", [free_port(), free_port()]);
    let start = Instant::now();
    let o = rank_process(&hosts, "1");
    fails(&o, &["cannot reach process 0"]);
    assert!(start.elapsed() < Duration::from_secs(30));

    // Two processes on different graphs: both refuse.
    let hosts = hostfile(&env, "hosts-two", [free_port(), free_port()]);
    let spawn = |graph: &str, i: &str| {
        Command::new(env!("CARGO_BIN_EXE_crawlrank"))
            .args(["--cache", env.cache.path().to_str().unwrap()])
            .args(["rank", "--graph", graph, "--hostfile"])
            .arg(&hosts)
            .args(["--process", i, "--connect-timeout", "20"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let p0 = spawn(&g1, "0");
    let p1 = spawn(&g2, "1");
    for p in [p0, p1] {
        let o = p.wait_with_output().unwrap();
        fails(&o, &["another graph"]);
    }

    // A port in use.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hosts = hostfile(
        &env,
        "hosts-taken",
        [taken.local_addr().unwrap().port(), free_port()],
    );
    let o = rank_process(&hosts, "0");
    fails(&o, &["cannot listen on"]);
    drop(taken);

    // A checkpoint of another graph.
    let ckpt = env.path("ckpt");
    let ck = ckpt.to_str().unwrap();
    ok(&env.run(&[
        "rank",
        "--graph",
        &g1,
        "--processes",
        "2",
        "--checkpoint",
        ck,
        "--checkpoint-every",
        "1",
    ]));
    let o = env.run(&[
        "rank",
        "--graph",
        &g2,
        "--processes",
        "2",
        "--checkpoint",
        ck,
    ]);
    fails(&o, &["checkpoint of another graph"]);

    // Only PageRank keeps checkpoints.
    fails(
        &env.run(&[
            "rank",
            "--graph",
            &g1,
            "--algo",
            "hits",
            "--processes",
            "2",
            "--checkpoint",
            ck,
        ]),
        &["PageRank only"],
    );
}

#[test]
fn seeds_eval_and_score_order_give_the_same_numbers_compressed() {
    let env = Env::new();
    let g = generated(&env, "web", 5000, 11);
    let sim = env.path("sim");
    ok(&env.run(&[
        "simulate",
        "--graph",
        &g,
        "--policy",
        "bfs",
        "--seeds",
        "5",
        "--save-orders",
        "--out",
        sim.to_str().unwrap(),
    ]));
    let seeds = env.path("seeds.txt");
    ok(&env.run(&[
        "seeds",
        "--graph",
        &g,
        "--count",
        "10",
        "--method",
        "top-pagerank",
        "--out",
        seeds.to_str().unwrap(),
    ]));
    let order = sim.join("bfs.order");
    for (what, args) in [
        (
            "seeds-eval",
            vec![
                "seeds-eval",
                "--graph",
                &g,
                "--seeds",
                seeds.to_str().unwrap(),
            ],
        ),
        (
            "score-order",
            vec![
                "score-order",
                "--graph",
                &g,
                "--order",
                order.to_str().unwrap(),
                "--seeds",
                "5",
            ],
        ),
    ] {
        let mut tables = Vec::new();
        for mode in ["always", "never"] {
            // A cache of its own: `never` must not find the decoded graph's reference PageRank.
            let cache = tempfile::tempdir().unwrap();
            let mut a = args.clone();
            a.extend(["--in-memory", mode]);
            let (table, stderr) = ok_with_stderr(&crate::common::crawlrank(cache.path(), &a));
            tables.push(table);
            let held = if mode == "never" {
                "compressed"
            } else {
                "in memory"
            };
            assert!(stderr.contains(held), "{what} --in-memory {mode}: {stderr}");
        }
        assert!(!tables[0].trim().is_empty(), "{what}: no table");
        assert_eq!(tables[0], tables[1], "{what}: the paths differ");
    }
}

#[test]
fn baseline_seeds_run_compressed_and_core_seeds_say_why_they_cannot() {
    let env = Env::new();
    let g = generated(&env, "web", 5000, 9);
    let mut files = Vec::new();
    for mode in ["always", "never"] {
        let cache = tempfile::tempdir().unwrap();
        let out = env.path(&format!("seeds-{mode}.txt"));
        ok(&crate::common::crawlrank(
            cache.path(),
            &[
                "seeds",
                "--graph",
                &g,
                "--count",
                "20",
                "--method",
                "top-pagerank",
                "--in-memory",
                mode,
                "--out",
                out.to_str().unwrap(),
            ],
        ));
        files.push(std::fs::read(&out).unwrap());
    }
    assert!(
        files[0] == files[1],
        "top-pagerank seeds differ between the paths"
    );
    let out = env.path("cores.txt");
    fails(
        &env.run(&[
            "seeds",
            "--graph",
            &g,
            "--count",
            "5",
            "--in-memory",
            "never",
            "--out",
            out.to_str().unwrap(),
        ]),
        &["held in memory"],
    );
    fails(
        &env.run(&[
            "simulate",
            "--graph",
            &g,
            "--seeds",
            "community:5",
            "--policy",
            "bfs",
            "--in-memory",
            "never",
        ]),
        &["community seeds", "--seeds-file"],
    );
}
