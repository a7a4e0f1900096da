//! `crawlrank import --format wikispeedia` and `crawlrank impacts --wikispeedia` end to end on
//! a tiny hand-made Wikispeedia folder, the synthetic `crawlrank impacts --profile` on a
//! generated web, and their bad input.

use crate::common;

use common::Env;
use crawlrank_graph::{open_graph, Cache};
use crawlrank_impact::{read_impact_table, Pages};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Four articles (D has no links), a path file with back clicks and an unknown article.
fn tiny(env: &Env) {
    std::fs::create_dir_all(env.path("wiki")).unwrap();
    env.write("wiki/articles.tsv", "# articles\nA\nB\nC\nD\n");
    env.write("wiki/links.tsv", "# links\nA\tB\nB\tC\nC\tA\nA\tC\n");
    env.write(
        "wiki/paths_unfinished.tsv",
        "h1\t1\t10\tA;B;<;C\tD\ttimeout\n\
         h2\t2\t20\tB;C;A;X\tD\trestart\n",
    );
}

/// Writes [`tiny`] and imports `input` (the folder or its links file, relative to the work
/// directory) as the graph `out`: the basename and what `import` printed.
fn import_tiny(env: &Env, input: &str, out: &str) -> (std::path::PathBuf, String) {
    tiny(env);
    let base = env.path(out);
    let stdout = env.ok(
        "import {} --format wikispeedia --out {}",
        &[&s(&env.path(input)), &s(&base)],
    );
    (base, stdout)
}

#[test]
fn clickstream_search_referrals_and_clicks_become_an_impact_table() {
    let env = Env::new();
    let (base, _) = import_tiny(&env, "wiki", "out/wiki");
    let stream = env.write(
        "clicks.tsv",
        "prev\tcurr\ttype\tn\nother-search\tB\texternal\t40\nA\tB\tlink\t12\n\
         other-search\tC\texternal\t7\nother-search\tZebra\texternal\t99\nother-empty\tA\texternal\t5\n",
    );
    let out = env.path("cs.tsv");
    let stdout = env.ok(
        "impacts --clickstream {} --graph {} --out {}",
        &[&s(&stream), &s(&base), &s(&out)],
    );
    assert!(
        stdout.contains("Zebra") && stdout.contains("2 of 4 pages with search referrals"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "id\turl\tsearch\tclicks\n1\thttps://en.wikipedia.org/wiki/B\t40\t12\n\
         2\thttps://en.wikipedia.org/wiki/C\t7\t0\n"
    );
    // A bad row names its line; nothing is written.
    let bad = env.write(
        "bad.tsv",
        "other-search\tB\texternal\t40\nA\tB\tlink\tmany\n",
    );
    let bad_out = env.path("bad-out.tsv");
    env.fails(
        "impacts --clickstream {} --graph {} --out {}",
        &[&s(&bad), &s(&base), &s(&bad_out)],
        &["bad.tsv:2"],
    );
    assert!(!bad_out.exists());
}

#[test]
fn import_wikispeedia_then_write_impacts() {
    let env = Env::new();
    let (base, stdout) = import_tiny(&env, "wiki", "out/wiki");
    assert!(
        stdout.contains("4 nodes (1 without links), 4 arcs"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("out/wiki.urls")).unwrap(),
        "https://en.wikipedia.org/wiki/A\nhttps://en.wikipedia.org/wiki/B\n\
         https://en.wikipedia.org/wiki/C\nhttps://en.wikipedia.org/wiki/D\n"
    );
    let info = env.ok("info --graph {}", &[&s(&base)]);
    assert!(info.contains('4'), "{info}");

    let out = env.path("impacts.tsv");
    let stdout = env.ok(
        "impacts --wikispeedia {} --graph {} --out {}",
        &[&s(&env.path("wiki")), &s(&base), &s(&out)],
    );
    assert!(
        stdout.contains("replayed 2 paths from 1 files: 7 visits, 5 forward clicks"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 path steps name 1 articles not in the graph (not counted), e.g. X"),
        "{stdout}"
    );
    assert!(stdout.contains("3 of 4 pages visited"), "{stdout}");
    // A: visits 2 (start, from C), click 1; B: 2, 1; C: 2, 2; X unknown.
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "id\turl\tvisits\tclicks\n\
         0\thttps://en.wikipedia.org/wiki/A\t2\t1\n\
         1\thttps://en.wikipedia.org/wiki/B\t2\t1\n\
         2\thttps://en.wikipedia.org/wiki/C\t2\t2\n"
    );
}

#[test]
fn impacts_bad_input() {
    let env = Env::new();
    let (base, _) = import_tiny(&env, "wiki/links.tsv", "wiki-graph");
    let out = env.path("impacts.tsv");
    env.fails(
        "impacts --graph {} --out {} --profile news",
        &[&s(&base), &s(&out)],
        &["invalid value 'news'", "web", "wiki"],
    );
    env.fails(
        "impacts --wikispeedia {} --profile wiki --graph {} --out {}",
        &[&s(&env.path("wiki")), &s(&base), &s(&out)],
        &["cannot be used with"],
    );
    env.fails(
        "impacts --wikispeedia {} --graph {} --out {}",
        &[&s(&env.path("nowhere")), &s(&base), &s(&out)],
        &["nowhere"],
    );
    env.write("wiki/paths_unfinished.tsv", "h1\t1\t10\n");
    env.fails(
        "impacts --wikispeedia {} --graph {} --out {}",
        &[&s(&env.path("wiki")), &s(&base), &s(&out)],
        &["paths_unfinished.tsv:1:", "no path in column 4"],
    );
    assert!(!out.exists());
    env.write("wiki/links.tsv", "A\tZ\n");
    env.fails(
        "import {} --format wikispeedia --out {}",
        &[&s(&env.path("wiki")), &s(&env.path("bad"))],
        &["links.tsv:1:", "'Z' is not an article"],
    );
    env.fails(
        "import {} --format wikispeedia --keep-ids --out {}",
        &[&s(&env.path("wiki")), &s(&env.path("bad"))],
        &["do not apply"],
    );
}

/// The number after `label` in `text` (`label 123,`).
fn number_after(text: &str, label: &str) -> f64 {
    let rest = &text[text
        .find(label)
        .unwrap_or_else(|| panic!("{label} in {text}"))
        + label.len()..];
    rest.trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn synthetic_impacts_per_profile_and_seed() {
    let env = Env::new();
    let base = env.path("web");
    env.ok("generate --pages 20000 --out {}", &[&s(&base)]);
    let graph = open_graph(&base, &Cache::new(env.path("cache"))).unwrap();
    let pages = Pages::from_graph(&graph).unwrap();
    let mut files = Vec::new();
    for (profile, seed, share) in [
        ("web", "1", "(0.60%) viewed"),
        ("wiki", "1", "(31.00%) viewed"),
        ("wiki", "1", "(31.00%) viewed"),
        ("wiki", "2", "(31.00%) viewed"),
    ] {
        let out = env.path(&format!("{profile}-{seed}-{}.tsv", files.len()));
        let stdout = env.ok(
            "impacts --graph {} --out {} --profile {} --seed {}",
            &[&s(&base), &s(&out), &profile, &seed],
        );
        for needle in [
            &format!("profile {profile}, seed {seed}"),
            "hosts from the URLs",
            share,
            "Kendall tau_b: latent quality vs in-degree",
            "first 2000 pages of a BFS from 100 random seeds",
            "r_c(D_C ->F)",
            "r_c(D_NC->F)",
            "r_v(D_V ->F)",
            "r_v(D_NV->F)",
            "r_v(EG(D_V)->F)",
        ] {
            assert!(stdout.contains(needle), "'{needle}' not in {stdout}");
        }
        let tau = number_after(&stdout, "latent quality vs in-degree");
        assert!(0.1 < tau && tau < 0.9, "{stdout}");
        let with = number_after(&stdout, "r_v(D_V ->F)");
        let without = number_after(&stdout, "r_v(D_NV->F)");
        // The paper: 46x (web views), 4.3x (Wikipedia views).
        let factor = if profile == "web" { 3.0 } else { 2.0 };
        assert!(with > factor * without, "{stdout}");
        // The file reads back with the totals printed.
        let t = read_impact_table(&out, &pages).unwrap();
        assert_eq!(t.columns, ["views", "clicks"]);
        assert_eq!(t.report.totals[0], number_after(&stdout, "total views"));
        assert_eq!(t.report.totals[1], number_after(&stdout, ", clicks"));
        assert_eq!(
            t.report.pages_with_impact as f64,
            number_after(&stdout, "pages with impact:")
        );
        files.push(std::fs::read(&out).unwrap());
    }
    assert_ne!(files[0], files[1]);
    assert_eq!(files[1], files[2]);
    assert_ne!(files[2], files[3]);
    // The default is the web profile, seed 0.
    let out = env.path("default.tsv");
    let stdout = env.ok("impacts --graph {} --out {}", &[&s(&base), &s(&out)]);
    assert!(stdout.contains("profile web, seed 0"), "{stdout}");
}
