//! `crawlrank import --format wikispeedia` and `crawlrank impacts --wikispeedia` end to end on
//! a tiny hand-made Wikispeedia folder, and their bad input.

mod common;

use common::{fails, ok, Env};
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

#[test]
fn import_wikispeedia_then_write_impacts() {
    let env = Env::new();
    tiny(&env);
    let base = env.path("out/wiki");
    let stdout = ok(&env.run(&[
        "import",
        s(&env.path("wiki")),
        "--format",
        "wikispeedia",
        "--out",
        s(&base),
    ]));
    assert!(
        stdout.contains("4 nodes (1 without links), 4 arcs"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("out/wiki.urls")).unwrap(),
        "https://en.wikipedia.org/wiki/A\nhttps://en.wikipedia.org/wiki/B\n\
         https://en.wikipedia.org/wiki/C\nhttps://en.wikipedia.org/wiki/D\n"
    );
    let info = ok(&env.run(&["info", "--graph", s(&base)]));
    assert!(info.contains('4'), "{info}");

    let out = env.path("impacts.tsv");
    let stdout = ok(&env.run(&[
        "impacts",
        "--wikispeedia",
        s(&env.path("wiki")),
        "--graph",
        s(&base),
        "--out",
        s(&out),
    ]));
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
    tiny(&env);
    let base = env.path("wiki-graph");
    ok(&env.run(&[
        "import",
        s(&env.path("wiki/links.tsv")),
        "--format",
        "wikispeedia",
        "--out",
        s(&base),
    ]));
    let out = env.path("impacts.tsv");
    fails(
        &env.run(&["impacts", "--graph", s(&base), "--out", s(&out)]),
        &["synthetic impact model", "not built yet", "--wikispeedia"],
    );
    fails(
        &env.run(&[
            "impacts",
            "--wikispeedia",
            s(&env.path("nowhere")),
            "--graph",
            s(&base),
            "--out",
            s(&out),
        ]),
        &["nowhere"],
    );
    env.write("wiki/paths_unfinished.tsv", "h1\t1\t10\n");
    fails(
        &env.run(&[
            "impacts",
            "--wikispeedia",
            s(&env.path("wiki")),
            "--graph",
            s(&base),
            "--out",
            s(&out),
        ]),
        &["paths_unfinished.tsv:1:", "no path in column 4"],
    );
    assert!(!out.exists());
    env.write("wiki/links.tsv", "A\tZ\n");
    fails(
        &env.run(&[
            "import",
            s(&env.path("wiki")),
            "--format",
            "wikispeedia",
            "--out",
            s(&env.path("bad")),
        ]),
        &["links.tsv:1:", "'Z' is not an article"],
    );
    fails(
        &env.run(&[
            "import",
            s(&env.path("wiki")),
            "--format",
            "wikispeedia",
            "--keep-ids",
            "--out",
            s(&env.path("bad")),
        ]),
        &["do not apply"],
    );
}
