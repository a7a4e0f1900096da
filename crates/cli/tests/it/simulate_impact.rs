//! `crawlrank simulate --impact`: the policies rw and rw-eg in the crawl loop and the impact
//! measure, end to end on a small graph, and their bad input.

use crate::common;

use common::Env;
use crawlrank_testkit as testkit;
use std::ffi::OsStr;

/// A command line that must fail: the line, its values and what its error must say.
type FailingCase<'a> = (&'a str, &'a [&'a dyn AsRef<OsStr>], &'a [&'a str]);

/// A ring of `n` pages with chords `v → 7v + 3` as the arc list `ring.txt`.
fn ring(env: &Env, n: u32) -> std::path::PathBuf {
    env.write(
        "ring.txt",
        &testkit::ring_with_chords(n, &[(7, 3)]).arc_list(),
    )
}

#[test]
fn simulate_rw_and_rw_eg_with_impacts() {
    let env = Env::new();
    let graph = ring(&env, 200);
    // A search log: every ninth page has an impact (id<TAB>value, with a header).
    let mut table = String::from("id\tclicks\n");
    for v in (0..200).step_by(9) {
        table.push_str(&format!("{v}\t{}\n", v % 4 + 1));
    }
    let impact = env.write("impact.tsv", &table);
    let run = |out: &str| {
        let out = env.path(out);
        let stdout = env.ok("simulate --graph {} --policy bfs,rw,rw-eg,learned --impact {} --impact-column clicks --seeds 3 --batch 10 --out {} --save-orders", &[&graph, &impact, &out]);
        (stdout, out)
    };
    let (stdout, out) = run("sim");
    assert!(
        stdout.contains("impact@5%") && stdout.contains("rw-eg") && stdout.contains("impact.svg"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.starts_with("graph,policy,rng_seed,seeds,reachable,percent,k,measure,value\n"));
    // Tidy: per policy 100 checkpoints of four measures (impact among them), and τ_b.
    assert_eq!(csv.lines().count(), 1 + 4 * (4 * 100 + 1));
    // Every crawl reaches all of R, so all of its impact: the last point is 1.
    for p in ["bfs", "rw", "rw-eg", "learned"] {
        let last = csv
            .lines()
            .find(|l| {
                let f: Vec<&str> = l.split(',').collect();
                f[1] == p && f[5] == "100" && f[7] == "impact"
            })
            .unwrap();
        let v: f64 = last.rsplit(',').next().unwrap().parse().unwrap();
        assert!((v - 1.0).abs() < 1e-9, "{last}");
    }
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(json.contains("\"impact_at\""));
    let svg = std::fs::read_to_string(out.join("impact.svg")).unwrap();
    assert!(svg.contains("rw-eg") && svg.contains("relative to the ideal"));
    // The same run again gives the same orders.
    let (_, again) = run("sim2");
    for p in ["rw", "rw-eg", "learned"] {
        let order = |d: &std::path::Path| std::fs::read_to_string(d.join(format!("{p}.order")));
        assert_eq!(order(&out).unwrap(), order(&again).unwrap(), "{p}");
        assert_eq!(order(&out).unwrap().lines().count(), 200);
    }
}

#[test]
fn rw_without_impacts_and_bad_impact_options_are_clear_errors() {
    let env = Env::new();
    let graph = ring(&env, 50);
    let g = graph.to_str().unwrap();
    let impact = env.write("impact.tsv", "0\t1\n5\t2\n");
    let i = impact.to_str().unwrap();
    let negative = env.write("negative.tsv", "0\t1\n5\t-2\n");
    let state = env.path("state");
    let state = state.to_str().unwrap();
    let cases: [FailingCase; 7] = [
        (
            "simulate --graph {} --policy bfs,rw",
            &[&g],
            &["rw", "--impact"],
        ),
        (
            "simulate --graph {} --policy rw-eg",
            &[&g],
            &["rw-eg", "--impact"],
        ),
        (
            "simulate --graph {} --policy rw --impact {} --impact-column 2",
            &[&g, &i],
            &["--impact-column 2", "1 impact column"],
        ),
        (
            "simulate --graph {} --policy rw-eg --impact {} --omega 1.5",
            &[&g, &i],
            &["omega", "1.5"],
        ),
        (
            "simulate --graph {} --policy rw --impact {}",
            &[&g, &negative],
            &["negative.tsv:2"],
        ),
        // A crawl with an impact-aware policy needs a search log, and only those policies read
        // one; neither mistake leaves a state behind.
        (
            "crawl --state {} --policy rw-eg",
            &[&state],
            &["rw-eg", "--impact FILE"],
        ),
        (
            "crawl --state {} --policy fica --impact {}",
            &[&state, &i],
            &["--impact is read by", "fica"],
        ),
    ];
    for (line, values, needles) in cases {
        // Names the case in the output of a failing test.
        eprintln!("checking: {line}");
        env.fails(line, values, needles);
    }
    assert!(!env.path("state").exists());
    // Without --impact, `all` runs every policy that does not need impacts.
    let stdout = env.ok("simulate --graph {} --seeds 2", &[&g]);
    assert!(
        stdout.contains("ieca") && !stdout.contains("rw"),
        "{stdout}"
    );
}
