//! `crawlrank seeds-eval` end to end: a hand-written seeds file (and its `.cores.json`) on a
//! small graph gives the table and every output file; bad input is a clear error naming the
//! file, with a non-zero exit, no panic and no output.

use crate::common;

use common::{assert_contains, fails, ok, Env};
use crawlrank_testkit as testkit;
use std::path::Path;

/// A `.cores.json` as `crawlrank seeds` writes it, for a graph of `pages` pages, with these
/// `(hubs, authorities)` cores.
fn cores_json(pages: u64, cores: &[(&[u32], &[u32])]) -> String {
    let rounds: Vec<String> = cores
        .iter()
        .enumerate()
        .map(|(i, (h, a))| {
            format!(
                r#"{{"round": {}, "seed": {}, "hubs": {h:?}, "authorities": {a:?}, "arcs": 0,
                    "hits_iterations": 60, "hits_seconds": 0.0, "core_seconds": 0.0}}"#,
                i + 1,
                h[0]
            )
        })
        .collect();
    format!(
        r#"{{"graph": "g", "method": "cover-density", "parameters": {{}}, "pruned": false,
            "pages": {pages}, "arcs": 0, "arcs_after_pruning": 0, "requested": {}, "seeds": [],
            "stop": "count reached", "rounds": [{}]}}"#,
        cores.len(),
        rounds.join(", ")
    )
}

#[test]
fn seeds_eval_prints_the_table_and_writes_summaries_and_plots() {
    let env = Env::new();
    // 200 pages, v → v+1 and v → 7v+3.
    let graph =
        testkit::ring_with_chords(200, &[(7, 3)]).write_arc_list(env.dir.path(), "ring.txt");
    let seeds = env.write("seeds.txt", "# two seeds\n0\n\n100\n");
    let cores = cores_json(200, &[(&[0], &[1, 2]), (&[100], &[101])]);
    env.write("seeds.txt.cores.json", &cores);
    let out = env.path("eval");
    let line = "seeds-eval --graph {} --seeds {} --random-seeds 7 --distance-samples 20 --out {}";
    let stdout = env.ok(line, &[&graph, &seeds, &out]);
    assert_contains(
        &stdout,
        &[
            "2 seeds against 2 random pages (rng seed 7)",
            "seeds: pages",
            "random: pages",
            "reached: 200 pages from the seeds",
            "average connected distance: ",
            "(20 sources, 3980 pairs",
            "core distances (2 cores, 2 ordered pairs)",
        ],
    );
    // The header, then depth 0: the two seeds.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header = "depth,seeds_pages,seeds_mean_pr,random_pages,random_mean_pr";
    assert!(csv.starts_with(&format!("{header}\n0,2,")), "{csv}");
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert_contains(&json, &["\"core_distances\": {", "\"matrix\": ["]);
    for svg in [
        "mean-pagerank.svg",
        "pages-per-depth.svg",
        "core-distances.svg",
    ] {
        let text = std::fs::read_to_string(out.join(svg)).unwrap();
        assert!(text.contains("<svg"), "{svg}");
    }
    // Nothing derived beside the inputs.
    assert_eq!(
        env.files(),
        ["eval", "ring.txt", "seeds.txt", "seeds.txt.cores.json"]
    );
    // Without a cores record: no distances between cores, no heatmap.
    let bare = env.write("bare.txt", "5\n");
    let out2 = env.path("eval2");
    let stdout = env.ok(
        "seeds-eval --graph {} --seeds {} --out {}",
        &[&graph, &bare, &out2],
    );
    assert!(
        stdout.contains("core distances: no cores given"),
        "{stdout}"
    );
    assert!(out2.join("summary.json").is_file() && !out2.join("core-distances.svg").exists());
}

#[test]
fn seeds_eval_bad_input_is_a_clear_error() {
    let env = Env::new();
    let graph = testkit::five_pages().write_arc_list(env.dir.path(), "five.txt");
    let out = env.path("eval");
    let run = |seeds: &Path| {
        env.run_line(
            "seeds-eval --graph {} --seeds {} --out {}",
            &[&graph, &seeds, &out],
        )
    };
    // A missing seeds file, a missing graph.
    fails(&run(&env.path("nope.txt")), &["nope.txt"]);
    let good = env.write("good.txt", "1\n");
    let missing = env.path("missing");
    env.fails(
        "seeds-eval --graph {} --seeds {}",
        &[&missing, &good],
        &["missing"],
    );
    // A page outside the graph: the file and the line.
    let bad = env.write("bad.txt", "# c\n1\n5\n");
    fails(&run(&bad), &["bad.txt:3", "5"]);
    // No seeds at all.
    let empty = env.write("empty.txt", "# nothing\n\n");
    fails(&run(&empty), &["empty.txt"]);
    // A corrupt cores record, one for another graph, one with a page outside this graph.
    let cores = env.path("good.txt.cores.json");
    std::fs::write(&cores, "{ not json").unwrap();
    fails(&run(&good), &["good.txt.cores.json"]);
    std::fs::write(&cores, cores_json(9, &[(&[0], &[1])])).unwrap();
    fails(&run(&good), &["good.txt.cores.json", "9 pages"]);
    std::fs::write(&cores, cores_json(5, &[(&[0], &[7])])).unwrap();
    fails(
        &run(&good),
        &[
            "good.txt.cores.json",
            "holds 7, which is not a page of the graph",
        ],
    );
    std::fs::write(&cores, cores_json(5, &[(&[0], &[1]), (&[1], &[2])])).unwrap();
    fails(&run(&good), &["good.txt.cores.json", "disjoint"]);
    // No output was started.
    assert!(!out.exists());
    // Once the record is right, the same command works.
    std::fs::write(&cores, cores_json(5, &[(&[0], &[1])])).unwrap();
    ok(&run(&good));
    assert!(out.join("core-distances.svg").is_file());
}
