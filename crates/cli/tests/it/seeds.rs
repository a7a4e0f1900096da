//! `crawlrank seeds` end to end, and its seeds file fed to `simulate` and `crawl`: host pruning
//! by default on a graph with URLs, the file formats, and bad input.

use crate::common;

use common::{fails, ok_with_stderr as ok, Env};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A K_{3,3} inside host big.example and a K_{2,2} from hub1/hub2.example to
/// auth1/auth2.example, imported as URL pairs. Ids follow URL order: auth1 0, auth2 1,
/// big.example/a0–a2 2–4, big.example/h0–h2 5–7, hub1 8, hub2 9.
fn two_communities(env: &Env) -> PathBuf {
    let mut pairs = String::new();
    for h in 0..3 {
        for a in 0..3 {
            pairs += &format!("http://big.example/h{h} http://big.example/a{a}\n");
        }
    }
    for h in 1..=2 {
        for a in 1..=2 {
            pairs += &format!("http://hub{h}.example/p http://auth{a}.example/\n");
        }
    }
    env.import_url_pairs(&pairs).0
}

#[test]
fn seeds_prune_hosts_by_default_and_write_ids_with_urls() {
    let env = Env::new();
    let web = two_communities(&env);
    let out = env.path("seeds.txt");
    let (stdout, stderr) =
        ok(&env.run_line("seeds --graph {} --count 3 --out {}", &[&s(&web), &s(&out)]));
    assert!(stdout.contains("wrote 1 seeds"), "{stdout}");
    assert!(stderr.contains("found 1 of the 3 seeds"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "8\thttp://hub1.example/p\n"
    );
    let cores: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("seeds.txt.cores.json")).unwrap())
            .unwrap();
    assert_eq!(cores["pruned"], true);
    assert_eq!(cores["arcs_after_pruning"], 4);
    assert_eq!(cores["stop"], "no arcs left");
    assert_eq!(cores["rounds"][0]["hubs"], serde_json::json!([8, 9]));
    assert_eq!(cores["rounds"][0]["authorities"], serde_json::json!([0, 1]));
    assert_eq!(cores["rounds"][0]["cover_density"], 100.0);
    assert_eq!(cores["rounds"][0]["seed_url"], "http://hub1.example/p");

    // Unpruned, the site's own core comes first.
    ok(&env.run_line(
        "seeds --graph {} --count 2 --out {} --no-prune",
        &[&s(&web), &s(&out)],
    ));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "5\thttp://big.example/h0\n8\thttp://hub1.example/p\n"
    );

    // The file feeds simulate (ids) and names the pages of this graph.
    let (table, _) = ok(&env.run_line(
        "simulate --graph {} --seeds-file {} --policy bfs,fica",
        &[&s(&web), &s(&out)],
    ));
    assert!(table.contains("fica"), "{table}");
    // Against as many random seeds.
    let dir = env.path("cmp");
    let (table, _) = ok(&env.run_line(
        "simulate --graph {} --seeds-file {} --compare-random --policy bfs --out {}",
        &[&s(&web), &s(&out), &s(&dir)],
    ));
    assert!(table.contains("file vs random seeds:"), "{table}");
    assert!(dir.join("file/summary.csv").exists() && dir.join("random/summary.csv").exists());
    env.fails(
        "simulate --graph {} --compare-random",
        &[&s(&web)],
        &["--compare-random needs --seeds-file or --seeds community:N"],
    );
    let other = env.write("other.txt", "5\thttp://elsewhere.example/\n");
    env.fails(
        "simulate --graph {} --seeds-file {}",
        &[&s(&web), &s(&other)],
        &["other.txt:1", "not http://elsewhere.example/"],
    );

    // Baselines.
    ok(&env.run_line(
        "seeds --graph {} --count 2 --out {} --method top-pagerank",
        &[&s(&web), &s(&out)],
    ));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2);
    ok(&env.run_line(
        "seeds --graph {} --count 4 --out {} --method random",
        &[&s(&web), &s(&out)],
    ));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 4);
}

#[test]
fn simulate_compares_community_and_random_seeds() {
    let env = Env::new();
    let web = two_communities(&env);
    let dir = env.path("sim");
    let (stdout, _) = ok(&env.run_line(
        "simulate --graph {} --seeds community:1 --policy bfs,opic --out {}",
        &[&s(&web), &s(&dir)],
    ));
    assert!(stdout.contains("from community seeds:"), "{stdout}");
    assert!(stdout.contains("community vs random seeds:"), "{stdout}");
    assert!(
        stdout.contains("1 community seeds, host-pruned"),
        "{stdout}"
    );
    for f in [
        "community/summary.csv",
        "random/summary.json",
        "comparison.csv",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(dir.join("comparison.csv")).unwrap();
    assert!(csv.starts_with("policy,percent,community_mass,random_mass"));
    assert_eq!(csv.lines().count(), 1 + 2 * 100);
    env.fails(
        "simulate --graph {} --seeds community:x",
        &[&s(&web)],
        &["neither a number of seeds N nor community:N"],
    );
}

#[test]
fn bad_seeds_input_is_a_clear_error_and_writes_nothing() {
    let env = Env::new();
    let arcs = env.write("arcs.txt", "0 1\n1 2\n2 0\n");
    let out = env.path("s.txt");
    let seeds = |extra: &[&str]| {
        env.run_with(
            "seeds --graph {} --count 2 --out {}",
            &[&s(&arcs), &s(&out)],
            extra,
        )
    };
    fails(&seeds(&["--prune-same-host"]), &["has none", "--no-prune"]);
    fails(
        &seeds(&["--cover-density", "0"]),
        &["--cover-density must be in (0, 100]"],
    );
    fails(&seeds(&["--cover-density", "100.5"]), &["(0, 100]"]);
    fails(&seeds(&["--method", "fixed-size"]), &["--core-size"]);
    fails(&seeds(&["--method", "best"]), &["invalid value 'best'"]);
    assert!(!out.exists());
    let empty = env.write("empty.txt", "# no arcs\n");
    env.fails(
        "seeds --graph {} --count 1 --out {}",
        &[&s(&empty), &s(&out)],
        &[],
    );
    let lonely = env.write("lonely.txt", "0 0\n");
    env.fails(
        "seeds --graph {} --count 1 --out {}",
        &[&s(&lonely), &s(&out)],
        &["no seeds found", "nothing written"],
    );
    assert!(!out.exists() && !env.path("s.txt.cores.json").exists());

    // A crawl needs URLs: a file of ids is refused, naming the line.
    let ids = env.write("ids.txt", "# ids\n3\n");
    env.fails(
        "crawl --seeds {} --state {} --max-pages 1",
        &[&s(&ids), &s(&env.path("state"))],
        &["ids.txt:2", "is a page id, not a URL"],
    );
}
