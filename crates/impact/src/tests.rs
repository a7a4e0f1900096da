//! Unit tests of the readers on small hand-written files, and two checks against the real
//! Wikispeedia and clickstream files of `shared/data` (skipped when it is absent).

use super::*;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Writes `text` as the file `name` in a fresh folder, which goes when the returned guard is
/// dropped.
fn in_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), name, text);
    (d, p)
}

fn gz(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, e.finish().unwrap()).unwrap();
    p
}

/// Four pages with URLs http://a.example/0 … /3.
fn four() -> Pages {
    Pages::new(
        4,
        Some((0..4).map(|i| format!("http://a.example/{i}")).collect()),
    )
}

fn err(path: &Path, pages: &Pages) -> String {
    format!("{:#}", read_impact_table(path, pages).unwrap_err())
}

#[test]
fn tsv_by_id_one_column_without_header() {
    let (_d, p) = in_temp("i.tsv", "# impacts\n0\t3\n\n2\t1.5\n");
    let t = read_impact_table(&p, &four()).unwrap();
    assert_eq!(t.columns, ["impact"]);
    assert_eq!(t.values, [vec![3.0, 0.0, 1.5, 0.0]]);
    let r = &t.report;
    assert_eq!((r.rows, r.pages_with_impact, r.header), (2, 2, false));
    assert_eq!(r.delimiter, Some(Delimiter::Tab));
    assert_eq!(r.totals, [4.5]);
    assert_eq!((r.unknown_rows, r.duplicate_rows), (0, 0));
}

#[test]
fn csv_by_url_two_columns_with_header_duplicates_and_unknowns() {
    let (_d, p) = in_temp(
        "i.csv",
        "url,clicks,views\n\
         # a comment\n\
         HTTP://A.example/1#x,1,10\n\
         \"http://a.example/3\",0,5\n\
         http://other.example/,7,7\n\
         http://a.example/1,2,0\n\
         9,1,1\n",
    );
    let t = read_impact_table(&p, &four()).unwrap();
    assert_eq!(t.columns, ["clicks", "views"]);
    assert_eq!(t.column("clicks").unwrap(), [0.0, 3.0, 0.0, 0.0]);
    assert_eq!(t.column("views").unwrap(), [0.0, 10.0, 0.0, 5.0]);
    let r = &t.report;
    assert!(r.header);
    assert_eq!(r.delimiter, Some(Delimiter::Comma));
    assert_eq!(r.rows, 5);
    assert_eq!(r.pages_with_impact, 2);
    assert_eq!(r.pages_with_impact_per_column, [1, 2]);
    assert_eq!(r.duplicate_rows, 1);
    assert_eq!(r.unknown_rows, 2);
    let at = p.display().to_string();
    assert_eq!(
        r.unknown_examples,
        [
            format!("{at}:5: http://other.example/"),
            format!("{at}:7: 9")
        ]
    );
    let shown = r.to_string();
    assert!(
        shown.contains("1 rows repeat an earlier page (summed)"),
        "{shown}"
    );
    assert!(
        shown.contains("2 rows name pages not in the graph"),
        "{shown}"
    );
}

#[test]
fn id_and_url_key_is_checked_against_the_graph() {
    let (d, p) = in_temp(
        "i.tsv",
        "id\turl\tvisits\tclicks\n1\thttp://a.example/1\t4\t3\n7\thttp://a.example/7\t1\t1\n",
    );
    let t = read_impact_table(&p, &four()).unwrap();
    assert_eq!(t.columns, ["visits", "clicks"]);
    assert_eq!(
        t.values,
        [vec![0.0, 4.0, 0.0, 0.0], vec![0.0, 3.0, 0.0, 0.0]]
    );
    assert_eq!(t.report.unknown_rows, 1);
    // Without a header: an integer then a URL is the id+URL key too.
    let p = write(d.path(), "j.tsv", "2\thttp://a.example/2\t5\n");
    let t = read_impact_table(&p, &four()).unwrap();
    assert_eq!(t.values, [vec![0.0, 0.0, 5.0, 0.0]]);
    // A URL that is not the page's: made for another graph.
    let p = write(d.path(), "k.tsv", "2\thttp://a.example/3\t5\n");
    let e = err(&p, &four());
    assert!(
        e.contains("k.tsv:1: page 2 of the graph is http://a.example/2"),
        "{e}"
    );
    assert!(e.contains("another graph"), "{e}");
}

#[test]
fn ids_are_the_users_ids_in_and_out() {
    // Four pages whose ids are 10, 20, 30, 40 (an arc list imported with gaps).
    let ids = crawlrank_graph::PageIds::from_sorted(vec![10, 20, 30, 40], "t").unwrap();
    let pages = four().with_ids(ids).unwrap();
    let (d, p) = in_temp(
        "i.tsv",
        "id\turl\tclicks\n30\thttp://a.example/2\t2\n10\thttp://a.example/0\t1\n",
    );
    let t = read_impact_table(&p, &pages).unwrap();
    assert_eq!(t.values, [vec![1.0, 0.0, 2.0, 0.0]]);
    // The id names the page: 30 is the third page, whose URL is /2; /3 is not its URL.
    let p = write(
        d.path(),
        "j.tsv",
        "id\turl\tclicks\n30\thttp://a.example/3\t2\n",
    );
    assert!(err(&p, &pages).contains("page 30 of the graph is http://a.example/2"));
    // Ids that are not pages (0..3 are the nodes, not ids) are counted, not taken.
    let p = write(d.path(), "k.tsv", "0\t5\n1\t5\n20\t1\n");
    let t = read_impact_table(&p, &pages).unwrap();
    assert_eq!(t.values, [vec![0.0, 1.0, 0.0, 0.0]]);
    assert_eq!(t.report.unknown_rows, 2);
    // Negative and non-integer ids are errors naming the line.
    for bad in ["-20\t1\n", "2.5\t1\n"] {
        let p = write(d.path(), "l.tsv", &format!("20\t1\n{bad}"));
        let e = err(&p, &pages);
        assert!(e.contains("l.tsv:2") && e.contains("not a page id"), "{e}");
    }
    // Written back by id.
    let out = d.path().join("out.tsv");
    write_impact_table(&out, &pages, &["clicks"], &[&[1.0, 0.0, 2.0, 0.0]]).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "id\turl\tclicks\n10\thttp://a.example/0\t1\n30\thttp://a.example/2\t2\n"
    );
    let t = read_impact_table(&out, &pages).unwrap();
    assert_eq!(t.values, [vec![1.0, 0.0, 2.0, 0.0]]);
    assert!(four().with_ids(crawlrank_graph::PageIds::dense(3)).is_err());
}

#[test]
fn bad_rows_name_their_line_and_why() {
    let d = tempfile::tempdir().unwrap();
    let pages = four();
    let cases: &[(&str, &str)] = &[
        (
            "0\t1\n1\t-2\n",
            ":2: impact -2 in column 'impact' is negative",
        ),
        (
            "0\t1\n#c\n1\tmany\n",
            ":3: 'many' in column 'impact' is not a number",
        ),
        (
            "0\t1\n1\tinf\n",
            ":2: impact 'inf' in column 'impact' is not finite",
        ),
        (
            "0\t1\n1\tNaN\n",
            ":2: impact 'NaN' in column 'impact' is not finite",
        ),
        ("0\t1\n1\t2\t3\n", ":2: 3 fields where the table has 2"),
        ("page\tclicks\n0\n", ":2: 1 fields where the table has 2"),
        (
            "0\t1\t2\t3\n",
            ":1: 4 fields: an impact table has a page id or URL then one or two",
        ),
        ("0 1\n", ":1: cannot tell the delimiter"),
        ("0\t1\nfoo\t2\n", ":2: 'foo' is neither a page id nor a URL"),
        ("0,1\n\"1,2\n", ":2: a quoted field is not closed"),
        (
            "0\t1\nhttp://\t2\n",
            ":2: 'http://' is not a valid absolute URL",
        ),
        ("0\t0\n1\t0\n", "no page of the graph has a positive impact"),
        ("7\t1\n", "none of its 1 rows names a page of the graph"),
        ("# nothing\n", "the impact table has no rows"),
        ("url\tclicks\n", "the impact table has no rows"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = write(d.path(), &format!("bad{i}.tsv"), text);
        let e = err(&p, &pages);
        assert!(e.contains(want), "case {i}: '{want}' not in: {e}");
        assert!(
            e.contains(&format!("bad{i}.tsv")),
            "case {i}: no file in: {e}"
        );
    }
    // A URL key needs a graph with URLs.
    let p = write(d.path(), "u.tsv", "http://a.example/1\t1\n");
    let e = err(&p, &Pages::new(4, None));
    assert!(
        e.contains("u.tsv:1:") && e.contains("the graph has no URLs"),
        "{e}"
    );
    assert!(read_impact_table(&d.path().join("none.tsv"), &pages).is_err());
}

#[test]
fn gzip_tables_and_crlf_are_read() {
    let d = tempfile::tempdir().unwrap();
    let p = gz(d.path(), "i.tsv.gz", "id\tviews\r\n3\t2\r\n");
    let t = read_impact_table(&p, &four()).unwrap();
    assert_eq!(t.values, [vec![0.0, 0.0, 0.0, 2.0]]);
}

const CLICKSTREAM: &str = "\
other-search\tAlpha\texternal\t100
other-search\tBeta\texternal\t20
other-search\tAlpha\texternal\t5
Alpha\tBeta\tlink\t30
Beta\tAlpha\tlink\t12
Gamma\tAlpha\tlink\t11
Alpha\tNowhere\tlink\t40
other-empty\tMain_Page\texternal\t999
Alpha\tBeta's_page\tother\t15
other-search\tHuntington's_disease\texternal\t50
";

#[test]
fn clickstream_by_name_and_on_pages() {
    let d = tempfile::tempdir().unwrap();
    let p = gz(d.path(), "cs.tsv.gz", CLICKSTREAM);
    let cs = read_clickstream(&p).unwrap();
    assert_eq!(
        cs.search,
        [
            ("Alpha".to_string(), 105),
            ("Beta".to_string(), 20),
            ("Huntington's_disease".to_string(), 50)
        ]
    );
    assert_eq!(
        cs.link_clicks,
        [
            ("Alpha".to_string(), 23),
            ("Beta".to_string(), 30),
            ("Nowhere".to_string(), 40)
        ]
    );
    assert_eq!(cs.links.len(), 4);
    assert_eq!(
        cs.links[0],
        ClickArc {
            from: "Alpha".into(),
            to: "Beta".into(),
            n: 30
        }
    );
    let r = &cs.report;
    assert_eq!(
        (r.rows, r.search_rows, r.link_rows, r.other_rows),
        (10, 4, 4, 2)
    );
    assert_eq!((r.search_total, r.link_total), (175, 93));

    let pages = Pages::new(
        4,
        Some(vec![
            wiki_url("Alpha"),
            wiki_url("Beta"),
            wiki_url("Huntington%27s_disease"),
            "http://a.example/".into(),
        ]),
    );
    let on = cs.on_pages(&pages).unwrap();
    assert_eq!(on.search, [105.0, 20.0, 50.0, 0.0]);
    assert_eq!(on.clicks, [23.0, 30.0, 0.0, 0.0]);
    assert_eq!(on.arcs, [(0, 1, 30), (1, 0, 12)]);
    assert_eq!(on.arcs_unknown, 2);
    assert_eq!(on.unknown_articles, 1);
    assert_eq!(on.unknown_examples, ["Nowhere"]);
    assert!(cs.on_pages(&Pages::new(4, None)).is_err());
}

#[test]
fn clickstream_csv_with_index_column_and_bad_rows() {
    let (d, p) = in_temp(
        "cs.csv",
        ",prev,curr,type,n\n0,other-search,\"A,B\",external,7\n1,A,B,link,12\n",
    );
    let cs = read_clickstream(&p).unwrap();
    assert_eq!(cs.search, [("A,B".to_string(), 7)]);
    assert_eq!(cs.link_clicks, [("B".to_string(), 12)]);
    for (i, (text, want)) in [
        (
            "a\tb\tlink\t3\na\tb\tlink\t-1\n",
            ":2: count '-1' is not a non-negative integer",
        ),
        (
            "a\tb\tlink\t3\na\tb\tlink\n",
            ":2: 3 fields where the file has 4",
        ),
        (
            "a\tb\n",
            ":1: 2 fields: a clickstream row is prev, curr, type, n",
        ),
        ("a\tb\tlink\tx\ta\tb\n", ":1: 6 fields"),
        ("# none\n", "no clickstream rows"),
        (
            "a\tb\tlink\tmany\n",
            ":1: count 'many' is not a non-negative integer",
        ),
        ("prev\tcurr\ttype\tn\n", "no clickstream rows"),
    ]
    .iter()
    .enumerate()
    {
        let p = write(d.path(), &format!("bad{i}.tsv"), text);
        let e = format!("{:#}", read_clickstream(&p).unwrap_err());
        assert!(e.contains(want), "case {i}: '{want}' not in: {e}");
    }
}

/// A tiny Wikispeedia folder: five articles (E has no links), one path file with back clicks
/// and an unknown article, plus a finished-paths file with a header (the SUBSET layout).
pub(crate) fn tiny_wikispeedia(dir: &Path) {
    write(
        dir,
        "articles.tsv",
        "# The list of all articles.\n\nA\nB\nC\n%C3%85land\nE\n",
    );
    gz(
        dir,
        "links.tsv.gz",
        "# links\nA\tB\nA\tC\nB\tC\nC\tA\nC\t%C3%85land\nA\tB\nC\tC\n",
    );
    write(
        dir,
        "paths_unfinished.tsv",
        "# FORMAT: hashedIpAddress timestamp durationInSec path target type\n\
         h1\t1\t10\tA;B;<;C;%C3%85land\tE\ttimeout\n\
         h2\t2\t20\tB;C;<;<;<;A\tE\trestart\n\
         h3\t3\t30\tC;Zed;<;A\tE\trestart\n",
    );
    gz(
        dir,
        "paths_finished_unique.SUBSET.tsv.gz",
        "path_id\thashedIpAddress\ttimestamp\tdurationInSec\tpath\trating\n\
         0\th4\t4\t40\tA;C\t1.0\n",
    );
}

#[test]
fn wikispeedia_import_and_replay_exactly() {
    let d = tempfile::tempdir().unwrap();
    tiny_wikispeedia(d.path());
    let out = d.path().join("out/wiki");
    let imp = import_wikispeedia(d.path(), &out).unwrap();
    assert_eq!(imp.nodes, 5);
    assert_eq!(imp.arcs, 6);
    assert_eq!(imp.duplicate_arcs_dropped, 1);
    assert_eq!(imp.self_loops, 1);
    assert_eq!(imp.isolated, 1);
    let urls = std::fs::read_to_string(out.with_extension("urls")).unwrap();
    assert_eq!(
        urls,
        "https://en.wikipedia.org/wiki/A\nhttps://en.wikipedia.org/wiki/B\n\
         https://en.wikipedia.org/wiki/C\nhttps://en.wikipedia.org/wiki/%C3%85land\n\
         https://en.wikipedia.org/wiki/E\n"
    );
    // The same from links.tsv.gz named directly.
    let imp2 = import_wikispeedia(&d.path().join("links.tsv.gz"), &d.path().join("w2")).unwrap();
    assert_eq!((imp2.nodes, imp2.arcs), (5, 6));

    let replay = replay_paths(d.path()).unwrap();
    let r = &replay.report;
    assert_eq!(r.files.len(), 2);
    assert_eq!(r.paths, 4);
    // A;B;<;C;Åland: visits A B C Å, clicks A→B A→C C→Å, one back.  B;C;<;<;<;A: visits
    // B C A, clicks B→C B→A, one back, two unmatched.  C;Zed;<;A: visits C Zed A, clicks
    // C→Zed C→A, one back.  A;C: visits A C, click A→C.
    assert_eq!(r.visits, 12);
    assert_eq!(r.forward_clicks, 8);
    assert_eq!(r.back_clicks, 3);
    assert_eq!(r.unmatched_back_clicks, 2);
    // A→B, A→C (twice), C→Å, B→C, B→A, C→Zed, C→A.
    assert_eq!(r.distinct_click_arcs, 7);
    assert_eq!(r.visits, r.paths + r.forward_clicks);

    let pages = Pages::new(5, Some(urls.lines().map(str::to_owned).collect::<Vec<_>>()));
    let on = replay.on_pages(&pages).unwrap();
    assert_eq!(on.visits, [4.0, 2.0, 4.0, 1.0, 0.0]);
    assert_eq!(on.clicks, [2.0, 1.0, 3.0, 1.0, 0.0]);
    assert_eq!(on.pages_visited, 4);
    assert_eq!((on.unknown_steps, on.unknown_articles), (1, 1));
    assert_eq!(on.unknown_examples, ["Zed"]);

    // Written and read back as an impact table.
    let f = d.path().join("impacts.tsv");
    write_impacts(&f, &pages, &on).unwrap();
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "id\turl\tvisits\tclicks\n\
         0\thttps://en.wikipedia.org/wiki/A\t4\t2\n\
         1\thttps://en.wikipedia.org/wiki/B\t2\t1\n\
         2\thttps://en.wikipedia.org/wiki/C\t4\t3\n\
         3\thttps://en.wikipedia.org/wiki/%C3%85land\t1\t1\n"
    );
    let t = read_impact_table(&f, &pages).unwrap();
    assert_eq!(t.columns, ["visits", "clicks"]);
    assert_eq!(t.values, [on.visits.clone(), on.clicks.clone()]);
}

#[test]
fn wikispeedia_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let e = |r: anyhow::Result<WikispeediaImport>| format!("{:#}", r.unwrap_err());
    let out = d.path().join("g");
    assert!(e(import_wikispeedia(d.path(), &out)).contains("no articles.tsv"));
    write(d.path(), "articles.tsv", "A\nB\nA\n");
    assert!(e(import_wikispeedia(d.path(), &out))
        .contains("articles.tsv:3: article 'A' was already listed on line 1"));
    write(d.path(), "articles.tsv", "A\nB\n");
    write(d.path(), "links.tsv", "A\tB\nA\tQ\n");
    assert!(e(import_wikispeedia(d.path(), &out)).contains("links.tsv:2: 'Q' is not an article"));
    write(d.path(), "links.tsv", "A\tB\tC\n");
    assert!(e(import_wikispeedia(d.path(), &out)).contains("links.tsv:1: 3 fields"));
    assert!(!out.with_extension("graph").exists());
    let r = |d: &Path| format!("{:#}", replay_paths(d).unwrap_err());
    assert!(r(d.path()).contains("no navigation paths"));
    write(d.path(), "paths_unfinished.tsv", "h\t1\t2\n");
    assert!(r(d.path()).contains("paths_unfinished.tsv:1: 3 fields: no path in column 4"));
    write(d.path(), "paths_unfinished.tsv", "h\t1\t2\tA;;B\n");
    assert!(r(d.path()).contains("paths_unfinished.tsv:1: an empty step"));
}

fn shared(relative: &str) -> Option<PathBuf> {
    crawlrank_graph::testdata::shared_data_or_skip(relative).map(|d| d.join(relative))
}

#[test]
fn real_wikispeedia_replay_matches_its_provenance() {
    let Some(dir) = shared("wikispeedia/links.tsv.gz") else {
        return;
    };
    let dir = dir.parent().unwrap().to_path_buf();
    // Only the unfinished paths, whose totals PROVENANCE.md gives.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.join("paths_unfinished.tsv.gz"),
        tmp.path().join("paths_unfinished.tsv.gz"),
    )
    .unwrap();
    let r = replay_paths(tmp.path()).unwrap().report;
    assert_eq!(r.paths, 24_875);
    assert_eq!(r.visits, 116_388);
    assert_eq!(r.forward_clicks, 91_513);
    assert_eq!(r.distinct_click_arcs, 31_493);
    assert_eq!(r.back_clicks, 12_907);
}

#[test]
fn real_clickstream_sample_reads() {
    let Some(p) = shared("clickstream-sample/clickstream-enwiki-2024-10_sample.csv.gz") else {
        return;
    };
    let cs = read_clickstream(&p).unwrap();
    assert_eq!(cs.report.rows, 9_936);
    assert_eq!(cs.report.search_rows, 1_174);
    assert_eq!(cs.report.link_rows, 6_856);
}

#[test]
fn real_wikispeedia_imports_with_every_article() {
    let Some(links) = shared("wikispeedia/links.tsv.gz") else {
        return;
    };
    let dir = links.parent().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("wikispeedia");
    let imp = import_wikispeedia(dir, &out).unwrap();
    assert_eq!((imp.nodes, imp.arcs), (4_604, 119_882));
    assert_eq!((imp.duplicate_arcs_dropped, imp.self_loops), (0, 110));
    let cache = crawlrank_graph::Cache::new(tmp.path().join("cache"));
    let g = crawlrank_graph::BvWebGraph::open(&out, &cache).unwrap();
    assert_eq!((g.num_nodes(), g.num_arcs()), (4_604, 119_882));
    let pages = Pages::from_graph(&g).unwrap();
    assert_eq!(pages.by_article("%C3%85land"), Some(1));
    assert_eq!(pages.by_article("Åland"), Some(1));
    // Every article of the unfinished paths' replay is found, or reported.
    let only = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.join("paths_unfinished.tsv.gz"),
        only.path().join("paths_unfinished.tsv.gz"),
    )
    .unwrap();
    let on = replay_paths(only.path()).unwrap().on_pages(&pages).unwrap();
    assert_eq!(on.pages_visited, 4_061);
    assert_eq!(
        on.visits.iter().sum::<f64>() + on.unknown_steps as f64,
        116_388.0
    );
}
