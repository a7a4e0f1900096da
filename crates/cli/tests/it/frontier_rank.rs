//! `crawlrank frontier-rank` end to end: a hand graph with a hand-written impact file gives the
//! table, `scores.tsv`, the summaries and the plots with known values; a generated graph with
//! `--downloaded-fraction` and `--omega tune` runs reproducibly; bad input is a clear error with
//! a non-zero exit and no output.

use crate::common;

use common::{assert_contains, fails, ok, words, Env};
use crawlrank_testkit as testkit;
use std::path::PathBuf;

/// 0 → 1..=20 and 0 → 21; 21 → 22..=41.
fn star_graph(env: &Env) -> String {
    let mut arcs: Vec<(u32, u32)> = (1..=21).map(|j| (0, j)).collect();
    arcs.extend((22..=41).map(|j| (21, j)));
    let g = testkit::SmallGraph::new(42, arcs).write_arc_list(env.dir.path(), "star.txt");
    g.to_str().unwrap().to_string()
}

/// Page 0 has impact 5; its links 1..=20 have impact j; 21's links 22..=41 have 0.5.
fn star_impacts() -> String {
    let mut s = String::from("# hand-written\nid\tclicks\n0\t5\n");
    for j in 1..=20 {
        s += &format!("{j}\t{j}\n");
    }
    for j in 22..=41 {
        s += &format!("{j}\t0.5\n");
    }
    s
}

/// The star graph, its impacts and the downloaded set `downloaded` (the file's text) written
/// into `env`, and the output folder: `(graph, impact, downloaded, out)`.
fn star_files(env: &Env, downloaded: &str) -> (String, PathBuf, PathBuf, PathBuf) {
    let g = star_graph(env);
    let imp = env.write("impact.tsv", &star_impacts());
    let d = env.write("d.txt", downloaded);
    (g, imp, d, env.path("out"))
}

/// A ring of 300 pages with chords `v → 7v + 3` and `v → 13v + 5`, as the arc list `ring.txt`.
fn ring300(env: &Env) -> PathBuf {
    testkit::ring_with_chords(300, &[(7, 3), (13, 5)]).write_arc_list(env.dir.path(), "ring.txt")
}

/// The impact table `imp.csv` of [`ring300`]: `header`, then `row(v)` for every `step`-th page.
fn impact_csv(env: &Env, header: &str, step: usize, row: impl Fn(usize) -> String) -> PathBuf {
    let mut imp = format!("{header}\n");
    for v in (0..300).step_by(step) {
        imp += &row(v);
        imp.push('\n');
    }
    env.write("imp.csv", &imp)
}

#[test]
fn a_hand_graph_gives_the_table_and_every_file() {
    let env = Env::new();
    let (g, imp, d, out) = star_files(&env, "# D\n0\n21\n");
    let args = words("frontier-rank --graph {} --downloaded {} --impact {} --method random,pagerank,rw,rw-eg --omega tune --rng-seed 3 --out {}", &[&g, &d, &imp, &out]);
    let stdout = ok(&env.run(&args));
    assert!(
        stdout.contains("D: 2 pages (1 with impact); F: 40 pages, 26 train / 14 test"),
        "{stdout}"
    );
    for m in ["random ", "pagerank ", "rw ", "rw-eg "] {
        assert!(stdout.lines().any(|l| l.starts_with(m)), "{m}: {stdout}");
    }
    assert!(!stdout.contains("rw-virtual"));
    assert!(stdout.contains("omega tuning (mean over 1-10% on the training part, 20 bootstrap"));
    // r(X→F): 0 reaches 1..=20 (210), 21 reaches 22..=41 (10); with virtual arcs 0 has no
    // in-linker, and 21's in-linker 0 adds 1..=20: 220.
    assert_contains(
        &stdout,
        &[
            "r = 210.000      with virtual arcs r = 210.000",
            "r = 10.000       with virtual arcs r = 220.000",
        ],
    );
    let mut names = testkit::file_names(&out);
    names.sort();
    assert_eq!(
        names,
        [
            "impact.svg",
            "omega.svg",
            "scores.tsv",
            "summary.csv",
            "summary.json"
        ]
    );
    let scores = std::fs::read_to_string(out.join("scores.tsv")).unwrap();
    let lines: Vec<&str> = scores.lines().collect();
    assert_eq!(
        lines[0],
        "id\turl\tsplit\timpact\trandom\tpagerank\trw\trw-eg"
    );
    assert_eq!(lines.len(), 41);
    assert!(lines[1].starts_with("1\t\t"));
    assert!(lines[40].starts_with("41\t\t"));
    assert_eq!(lines.iter().filter(|l| l.contains("\ttest\t")).count(), 14);
    // RW scores 0's links above 21's: column 7.
    let rw = |l: &str| l.split('\t').nth(6).unwrap().parse::<f64>().unwrap();
    assert!(rw(lines[1]) > rw(lines[40]));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["frontier"], 40);
    assert_eq!(json["test"], 14);
    assert_eq!(json["tuning"].as_array().unwrap().len(), 11);
    assert_eq!(json["parameters"]["bootstrap"], 20);
    assert_eq!(json["methods"].as_array().unwrap().len(), 4);
    assert_eq!(
        json["frontier_impact_ratios"]["with_impact"]["ratio"],
        210.0
    );
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    // Tidy: per method 18 values of x, each with the impact and the PageRank ratio.
    assert!(csv.starts_with("graph,impact_column,method,rng_seed,x_percent,k,measure,value\n"));
    assert_eq!(csv.lines().count(), 1 + 4 * 18 * 2);
    assert!(csv.contains(",clicks,rw,3,1,1,impact_relative,"), "{csv}");
    // k beside every measure: 1% of the 14 test pages is 1 page, 10% is 2.
    let k_row = stdout.lines().find(|l| l.starts_with("k (pages)")).unwrap();
    assert_eq!(
        k_row.split_whitespace().collect::<Vec<_>>(),
        ["k", "(pages)", "1", "1", "1", "1", "2", "2"]
    );
    // The same seed, the same files.
    let first = (scores, csv);
    ok(&env.run(&args));
    let again = (
        std::fs::read_to_string(out.join("scores.tsv")).unwrap(),
        std::fs::read_to_string(out.join("summary.csv")).unwrap(),
    );
    assert_eq!(first, again);
}

#[test]
fn a_bfs_downloaded_set_on_a_ring() {
    let env = Env::new();
    let g = ring300(&env);
    let imp = impact_csv(&env, "id,clicks,views", 3, |v| {
        format!("{v},{},{}", v % 17, (v * 7) % 23)
    });
    let out = env.path("out");
    let stdout = env.ok("frontier-rank --graph {} --downloaded-fraction 0.3 --seeds 3 --impact {} --impact-column views --out {}", &[&g, &imp, &out]);
    assert_contains(&stdout, &["D: 90 pages", "omega = 0.8"]);
    for m in [
        "random",
        "indegree",
        "pagerank",
        "rw",
        "rw-eg",
        "rw-virtual",
        "learned",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{m} "))),
            "{m}"
        );
    }
    assert!(out.join("impact.svg").exists() && !out.join("omega.svg").exists());
}

/// `learned` on a ring with two impact columns: a `learned` column in every output, the model
/// named in `summary.json`, the same files on a rerun, other files with the other model, and the
/// model fitted on the training part only (absurd test impacts leave its scores unchanged).
#[test]
fn learned_on_a_ring_with_two_impact_columns() {
    let env = Env::new();
    let g = ring300(&env);
    let table = |absurd_from: Option<&[String]>| {
        let mut imp = String::from("id,clicks,views\n");
        for v in 0..300usize {
            let test = absurd_from.is_some_and(|t| t.contains(&v.to_string()));
            let views = if test { 1e9 } else { ((v * 7) % 23) as f64 };
            imp += &format!("{v},{},{views}\n", v % 17);
        }
        imp
    };
    let run = |imp: &str, model: &str, out: &str| {
        let imp = env.write("imp.csv", imp);
        let out = env.path(out);
        let stdout = env.ok("frontier-rank --graph {} --downloaded-fraction 0.3 --seeds 3 --impact {} --impact-column views --method random,learned --learned-model {} --out {}", &[&g, &imp, &model, &out]);
        assert!(
            stdout.lines().any(|l| l.starts_with("learned ")),
            "{stdout}"
        );
        let scores = std::fs::read_to_string(out.join("scores.tsv")).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(json["parameters"]["learned_model"], model);
        scores
    };
    let forest = run(&table(None), "forest", "f1");
    assert_eq!(
        forest.lines().next().unwrap(),
        "id\turl\tsplit\timpact\trandom\tlearned"
    );
    assert_eq!(run(&table(None), "forest", "f2"), forest);
    let tree = run(&table(None), "tree", "t1");
    assert_ne!(tree, forest);
    // The test pages' views set to 1e9: the learned column is unchanged.
    let rows: Vec<Vec<String>> = forest
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    let test: Vec<String> = rows
        .iter()
        .filter(|r| r[2] == "test")
        .map(|r| r[0].clone())
        .collect();
    assert!(!test.is_empty());
    let absurd = run(&table(Some(&test)), "forest", "f3");
    let learned = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| l.split('\t').nth(5).unwrap().to_string())
            .collect()
    };
    assert_eq!(learned(&absurd), learned(&forest));
    assert_ne!(absurd, forest, "the truth column moved");
}

#[test]
fn bad_input_is_a_clear_error() {
    let env = Env::new();
    let (g, imp, d, out) = star_files(&env, "0\n21\n");
    let run = |d: &str, imp: &str, extra: &[&str]| {
        env.run_with(
            "frontier-rank --graph {} --downloaded {} --impact {} --out {}",
            &[&g, &d, &imp, &out],
            extra,
        )
    };
    let (d_ok, imp_ok) = (d.to_str().unwrap(), imp.to_str().unwrap());
    // A downloaded set with no seeds; 41 links nowhere: no frontier; 21 has no impact.
    for (name, text, says) in [
        (
            "empty.txt",
            "# nothing\n",
            &["downloaded set", "no seeds"][..],
        ),
        ("isolated.txt", "41\n", &["frontier F is empty"]),
        (
            "d21.txt",
            "21\n",
            &["no downloaded page has a positive impact"],
        ),
    ] {
        let d = env.write(name, text);
        fails(&run(d.to_str().unwrap(), imp_ok, &[]), says);
    }
    for (extra, says) in [
        (&["--omega", "1.5"][..], "omega must be in [0, 1]"),
        (&["--omega", "best"], "neither a number nor 'tune'"),
        (&["--method", "rw,learnt"], "unknown method 'learnt'"),
        (
            &["--method", "learned", "--learned-model", "svm"],
            "unknown model 'svm'",
        ),
        (&["--impact-column", "views"], "has the columns clicks"),
        (&["--impact-column", "2"], "has 1 impact column"),
    ] {
        fails(&run(d_ok, imp_ok, extra), &[says]);
    }
    // Impact tables with a negative, an infinite or no positive impact.
    for (name, text, says) in [
        ("neg.tsv", "id\tclicks\n0\t5\n1\t-2\n", "neg.tsv:3"),
        ("nan.tsv", "0\tinf\n", "nan.tsv:1"),
        ("zeros.tsv", "0\t0\n1\t0\n", "zeros.tsv"),
    ] {
        let imp = env.write(name, text);
        fails(&run(d_ok, imp.to_str().unwrap(), &[]), &[says]);
    }
    // Neither --downloaded nor --downloaded-fraction; a fraction out of range.
    env.fails(
        "frontier-rank --graph {} --impact {} --out x",
        &[&g, &imp_ok],
        &["--downloaded"],
    );
    env.fails(
        "frontier-rank --graph {} --downloaded-fraction 1.5 --impact {} --out x",
        &[&g, &imp_ok],
        &["(0, 1]"],
    );
    assert!(!out.exists(), "no output after an error");
}

#[test]
fn urls_name_the_downloaded_pages_the_impacts_and_the_scores() {
    let env = Env::new();
    // h links to h/p0..p7; z links to h and to z/q0..q7.
    let mut pairs = String::new();
    for i in 0..8 {
        pairs += &format!("http://h.example/ http://h.example/p{i}\n");
        pairs += &format!("http://z.example/ http://z.example/q{i}\n");
    }
    pairs += "http://z.example/ http://h.example/\n";
    let pairs = env.write("pairs.txt", &pairs);
    let base = env.path("web");
    env.ok("import {} --format url-pairs --out {}", &[&pairs, &base]);
    let d = env.write("d.txt", "http://h.example/\nhttp://z.example/\n");
    let mut imp = String::from("url,clicks\nhttp://h.example/,9\n");
    for i in 0..8 {
        imp += &format!("http://h.example/p{i},{}\n", i + 1);
    }
    let imp = env.write("imp.csv", &imp);
    let out = env.path("out");
    let stdout = env.ok(
        "frontier-rank --graph {} --downloaded {} --impact {} --method rw,rw-virtual --out {}",
        &[&base, &d, &imp, &out],
    );
    assert!(
        stdout.contains("D: 2 pages (1 with impact); F: 16 pages"),
        "{stdout}"
    );
    let urls: Vec<String> = std::fs::read_to_string(env.path("web.urls"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let scores = std::fs::read_to_string(out.join("scores.tsv")).unwrap();
    let rows: Vec<Vec<&str>> = scores
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 16);
    for r in &rows {
        let id: usize = r[0].parse().unwrap();
        assert_eq!(r[1], urls[id], "the URL column is the page's URL");
        let expected = match r[1].strip_prefix("http://h.example/p") {
            Some(i) => (i.parse::<f64>().unwrap() + 1.0).to_string(),
            None => "0".to_string(),
        };
        assert_eq!(r[3], expected, "{r:?}");
        // RW passes h's impact to its links only.
        let rw: f64 = r[4].parse().unwrap();
        let is_h_link = r[1].starts_with("http://h.example/p");
        let q = rows
            .iter()
            .find(|o| o[1].starts_with("http://z.example/q"))
            .unwrap();
        let z_rw: f64 = q[4].parse().unwrap();
        assert_eq!(is_h_link, rw > z_rw, "{r:?}");
    }
}

/// `--repeat N`: run i is the single run with rng seed `--rng-seed + i` (its numbers in the
/// repeated summary.json are the single run's), and the repeated outputs hold the intervals,
/// the ranges of k and the paired comparisons.
#[test]
fn repeated_runs_are_the_single_runs_with_intervals_and_paired_tests() {
    let env = Env::new();
    let g = ring300(&env);
    let imp = impact_csv(&env, "id,clicks", 2, |v| format!("{v},{}", 1 + v % 17));
    let run = |out: &str, extra: &[&str]| {
        let out = env.path(out);
        let line = "frontier-rank --graph {} --downloaded-fraction 0.3 --seeds 3 --impact {} --method random,indegree,rw --out {}";
        (ok(&env.run_with(line, &[&g, &imp, &out], extra)), out)
    };
    let json = |p: std::path::PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (stdout, out) = run("rep", &["--rng-seed", "5", "--repeat", "3"]);
    assert!(stdout.contains("3 runs (rng seeds 5,6,7)"), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("k (pages)")),
        "{stdout}"
    );
    assert!(
        stdout.contains("paired, impact relative to the ideal at 1%"),
        "{stdout}"
    );
    assert!(stdout.contains("±"), "{stdout}");
    let mut names = testkit::file_names(&out);
    names.sort();
    assert_eq!(
        names,
        [
            "impact.svg",
            "paired.csv",
            "summary-stats.csv",
            "summary.csv",
            "summary.json"
        ]
    );
    let repeated = json(out.join("summary.json"));
    assert_eq!(repeated["rng_seeds"], serde_json::json!([5, 6, 7]));
    assert_eq!(
        repeated["provenance"]["seed_ids_per_run"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    for (i, seed) in ["5", "6", "7"].iter().enumerate() {
        let (_, single) = run(&format!("single-{seed}"), &["--rng-seed", seed]);
        let one = json(single.join("summary.json"));
        let mut from_repeat = repeated["runs"][i].clone();
        let mut alone = one.clone();
        // Timings differ run to run; everything else is the same.
        for v in [&mut from_repeat, &mut alone] {
            for m in v["methods"].as_array_mut().unwrap() {
                m["seconds"] = 0.into();
            }
            v.as_object_mut().unwrap().remove("provenance");
        }
        assert_eq!(from_repeat, alone, "rng seed {seed}");
        assert_eq!(one["provenance"]["seed_ids"].as_array().unwrap().len(), 3);
    }
    let stats = std::fs::read_to_string(out.join("summary-stats.csv")).unwrap();
    assert!(stats.starts_with(
        "graph,impact_column,method,x_percent,k,measure,n,mean,sd,ci95_low,ci95_high\n"
    ));
    let paired = std::fs::read_to_string(out.join("paired.csv")).unwrap();
    // Every pair of 3 methods, 2 measures, 18 values of x.
    assert_eq!(paired.lines().count(), 1 + 3 * 2 * 18);
    // Against one baseline: 2 pairs.
    let (_, base) = run("base", &["--rng-seeds", "5,6,7", "--baseline", "random"]);
    let paired = std::fs::read_to_string(base.join("paired.csv")).unwrap();
    assert_eq!(paired.lines().count(), 1 + 2 * 2 * 18);
    assert!(paired
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(5) == Some("random")));
    // Bad repeats.
    let bad = |extra: &[&str], want: &[&str]| {
        let line = "frontier-rank --graph {} --downloaded-fraction 0.3 --impact {} --method random,rw --out {}";
        fails(
            &env.run_with(line, &[&g, &imp, &env.path("bad")], extra),
            want,
        );
        assert!(!env.path("bad").exists());
    };
    bad(&["--repeat", "0"], &["--repeat must be at least 1"]);
    bad(&["--rng-seeds", "3,3"], &["rng seed 3 twice"]);
    bad(
        &["--repeat", "2", "--baseline", "pagerank"],
        &["--baseline pagerank is not among the methods"],
    );
    bad(
        &["--baseline", "random"],
        &["--baseline compares methods over runs"],
    );
    bad(&["--x-range", "5,2"], &["not an x range"]);
}
