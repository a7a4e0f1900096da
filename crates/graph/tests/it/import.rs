//! `crawlrank import`: arc lists, URL pairs, id→URL tables and GML to BVGraphs, round trips,
//! the real datasets, and every way an input can be wrong.

use crate::env::{shared_input, Env};
use crawlrank_graph::bv::with_ext;
use crawlrank_graph::hosts::{is_plausible_host, registrable_domain, Hosts, INVALID_HOST};
use crawlrank_graph::import::{
    detect_format, import, import_with_progress, read_ids, ImportFormat, ImportOptions, ImportPhase,
};
use crawlrank_graph::urls::{normalize_url, read_urls, urls_path};
use crawlrank_graph::Csr;
use std::collections::BTreeSet;
use std::path::Path;

fn opts(format: ImportFormat) -> ImportOptions {
    ImportOptions::with_format(format)
}

fn arc_set(g: &Csr) -> BTreeSet<(u32, u32)> {
    g.arcs().collect()
}

/// The arcs of `g` in original ids, through `BASENAME.ids` when present.
fn original_arcs(g: &Csr, base: &Path) -> BTreeSet<(u64, u64)> {
    let ids_file = with_ext(base, "ids");
    let ids: Vec<u64> = if ids_file.exists() {
        read_ids(&ids_file).unwrap()
    } else {
        (0..g.num_nodes() as u64).collect()
    };
    assert_eq!(ids.len(), g.num_nodes());
    g.arcs()
        .map(|(s, d)| (ids[s as usize], ids[d as usize]))
        .collect()
}

/// Checks the `.ef` written beside the graph is what `webgraph` itself loads.
fn check_ef(base: &Path, g: &Csr) {
    use webgraph::prelude::*;
    assert!(with_ext(base, "ef").is_file());
    let bv = webgraph::graphs::bvgraph::BvGraph::with_basename(base)
        .endianness::<dsi_bitstream::prelude::BE>()
        .load()
        .unwrap();
    assert_eq!(bv.num_nodes(), g.num_nodes());
    for v in (0..g.num_nodes()).step_by(1 + g.num_nodes() / 50) {
        let s: Vec<u32> = bv.successors(v).map(|x| x as u32).collect();
        assert_eq!(s, g.successors(v), "node {v}");
    }
}

#[test]
fn arc_list_round_trip_dense_ids_map_to_themselves() {
    let env = Env::new();
    let input = env.input(
        "g.txt",
        "# a comment\n% another\n\nsrc\tdst\n0 1\n1\t2\n  2   0  \n0 1\n2 2\r\n\n# trailing\n3 0",
    );
    let base = env.out("g");
    let r = import(&input, &base, &ImportOptions::default()).unwrap();
    assert_eq!(r.format, ImportFormat::Arcs);
    assert_eq!((r.nodes, r.arcs, r.input_arcs), (4, 5, 6));
    assert_eq!((r.duplicate_arcs_dropped, r.self_loops), (1, 1));
    assert!(r.header_skipped && !r.ids_written && !r.urls_written);
    assert_eq!(r.lines, 12);
    assert_eq!(
        env.out_entries(),
        ["g.ef", "g.graph", "g.offsets", "g.properties"]
    );
    let g = env.open(&base);
    assert_eq!(
        arc_set(&g),
        BTreeSet::from([(0, 1), (1, 2), (2, 0), (2, 2), (3, 0)])
    );
    check_ef(&base, &g);
}

#[test]
fn sparse_and_one_based_ids_are_renumbered_in_id_order_with_an_ids_file() {
    let env = Env::new();
    let big = 1u64 << 40;
    let arcs = [
        (10u64, 1_000_000u64),
        (5, 10),
        (big, 5),
        (1_000_000, big),
        (5, 10),
        (7, 7),
    ];
    let text: String = arcs.iter().map(|(s, d)| format!("{s} {d}\n")).collect();
    let base = env.out("sparse");
    let r = import(
        &env.input("sparse.txt", &text),
        &base,
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(
        (r.nodes, r.arcs, r.duplicate_arcs_dropped, r.self_loops),
        (5, 5, 1, 1)
    );
    assert!(r.ids_written);
    assert_eq!(
        read_ids(&with_ext(&base, "ids")).unwrap(),
        [5, 7, 10, 1_000_000, big]
    );
    let g = env.open(&base);
    assert_eq!(original_arcs(&g, &base), arcs.iter().copied().collect());

    // 1-based, as in hollins: node i is id i + 1.
    let base = env.out("one");
    let r = import(
        &env.input("one.txt", "start end\n1 2\n2 3\n3 1\n"),
        &base,
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(r.ids_written && r.header_skipped);
    assert_eq!(read_ids(&with_ext(&base, "ids")).unwrap(), [1, 2, 3]);
    assert_eq!(
        arc_set(&env.open(&base)),
        BTreeSet::from([(0, 1), (1, 2), (2, 0)])
    );

    // keep_ids: original ids are node ids, gaps are isolated nodes.
    let base = env.out("kept");
    let o = ImportOptions {
        keep_ids: true,
        ..ImportOptions::default()
    };
    let r = import(&env.input("kept.txt", "1 4\n4 1\n"), &base, &o).unwrap();
    assert_eq!((r.nodes, r.arcs, r.ids_written), (5, 2, false));
    let g = env.open(&base);
    assert_eq!(arc_set(&g), BTreeSet::from([(1, 4), (4, 1)]));
    assert!(!with_ext(&base, "ids").exists());
}

#[test]
fn extra_columns_are_rejected_unless_allowed() {
    let env = Env::new();
    let input = env.input("w.txt", "# src dst weight\n0 1 0.5\n1 0 2\n");
    let e = import(&input, &env.out("w"), &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("line 2: expected two integer ids, found '0 1 0.5'"),
        "{e}"
    );
    let o = ImportOptions {
        allow_extra_columns: true,
        ..ImportOptions::default()
    };
    let r = import(&input, &env.out("w"), &o).unwrap();
    assert_eq!((r.nodes, r.arcs), (2, 2));
}

#[test]
fn url_pairs_keep_every_url_in_lexicographic_order() {
    let env = Env::new();
    let pairs = [
        (
            "HTTP://Example.COM:80/a/./b/../c#top",
            "https://example.com",
        ),
        ("http://b.org/x?q=1", "http://example.com/a/c"),
        ("https://example.com:443/", "http://b.org/x?q=1#frag"),
        ("http://b.org/x?q=1", "http://b.org/x?q=1"),
        ("http://münchen.de/", "http://a.example.co.uk/"),
        ("http://example.com/a/c", "https://EXAMPLE.com/"),
    ];
    let text: String = std::iter::once("source target\n".to_string())
        .chain(pairs.iter().map(|(a, b)| format!("{a}\t{b}\n")))
        .collect();
    let input = env.input("pairs.txt", &text);
    assert_eq!(detect_format(&input).unwrap(), ImportFormat::UrlPairs);
    let base = env.out("web");
    let r = import(&input, &base, &ImportOptions::default()).unwrap();
    assert_eq!(r.format, ImportFormat::UrlPairs);
    assert!(r.urls_written && !r.ids_written && r.header_skipped);
    let norm: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| (normalize_url(a).unwrap(), normalize_url(b).unwrap()))
        .collect();
    let expected_urls: BTreeSet<String> = norm
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let urls = read_urls(&urls_path(&base)).unwrap();
    assert_eq!(
        urls,
        expected_urls.iter().cloned().collect::<Vec<_>>(),
        "sorted, one per node"
    );
    assert_eq!(
        urls,
        [
            "http://a.example.co.uk/",
            "http://b.org/x?q=1",
            "http://example.com/a/c",
            "http://xn--mnchen-3ya.de/",
            "https://example.com/",
        ]
    );
    let g = env.open(&base);
    assert_eq!(r.nodes as usize, urls.len());
    assert_eq!((r.arcs, r.self_loops, r.duplicate_arcs_dropped), (5, 1, 1));
    let back: BTreeSet<(String, String)> = g
        .arcs()
        .map(|(s, d)| (urls[s as usize].clone(), urls[d as usize].clone()))
        .collect();
    assert_eq!(back, norm.into_iter().collect());
    check_ef(&base, &g);
}

#[test]
fn id_url_table_beside_an_arc_list() {
    let env = Env::new();
    let arcs = env.input("e.dat", "start end\n1 2\n2 3\n3 1\n1 2\n");
    let table = env.input(
        "u.dat",
        "link url\r\n1 http://WWW.A.edu/ \r\n3 not a url at all\r\n2 http://www.a.edu/x#y \r\n4 b.edu\r\n",
    );
    let base = env.out("t");
    let r = import(
        &arcs,
        &base,
        &opts(ImportFormat::IdUrls {
            urls: table.clone(),
        }),
    )
    .unwrap();
    assert_eq!((r.nodes, r.arcs, r.duplicate_arcs_dropped), (4, 3, 1));
    assert_eq!((r.invalid_urls, r.lines, r.url_lines), (1, 5, 5));
    assert!(r.urls_written && r.ids_written && r.header_skipped);
    assert_eq!(
        read_urls(&urls_path(&base)).unwrap(),
        [
            "http://www.a.edu/",
            "http://www.a.edu/x",
            "not a url at all",
            "http://b.edu/"
        ]
    );
    assert_eq!(read_ids(&with_ext(&base, "ids")).unwrap(), [1, 2, 3, 4]);
    assert_eq!(
        arc_set(&env.open(&base)),
        BTreeSet::from([(0, 1), (1, 2), (2, 0)])
    );

    // An arc naming an id without a URL is an error with its line.
    let bad = env.input("bad.dat", "1 2\n2 9\n");
    let e = import(
        &bad,
        &env.out("u"),
        &opts(ImportFormat::IdUrls { urls: table }),
    )
    .unwrap_err();
    assert!(e.to_string().contains("line 2: id 9 has no URL in"), "{e}");
    assert!(
        env.out_entries().iter().all(|f| f.starts_with("t.")),
        "the failed import left {:?}",
        env.out_entries()
    );
}

#[test]
fn gml_directed_and_undirected() {
    let env = Env::new();
    let text = "Creator \"test\"\ngraph [\n  directed 1\n  node [ id 10 label \"Foo.com\" value 1 source \"Blogarama\" ]\n  \
                node [ id 20 label \"bar.org/blog\" ]\n  node [ id 30 label \"Not A Host\" ]\n  \
                edge [ source 10 target 20 ]\n  edge [ source 20 target 10 ]\n  edge [ source 10 target 20 ]\n  edge [ source 30 target 30 ]\n]\n";
    let input = env.input("g.gml", text);
    assert_eq!(detect_format(&input).unwrap(), ImportFormat::Gml);
    let base = env.out("g");
    let r = import(&input, &base, &ImportOptions::default()).unwrap();
    assert_eq!(
        (r.nodes, r.arcs, r.duplicate_arcs_dropped, r.self_loops),
        (3, 3, 1, 1)
    );
    assert!(!r.symmetrized && r.ids_written && r.urls_written);
    assert_eq!(r.invalid_urls, 1);
    assert_eq!(
        read_urls(&urls_path(&base)).unwrap(),
        ["http://foo.com/", "http://bar.org/blog", "Not A Host"]
    );
    assert_eq!(read_ids(&with_ext(&base, "ids")).unwrap(), [10, 20, 30]);
    assert_eq!(
        arc_set(&env.open(&base)),
        BTreeSet::from([(0, 1), (1, 0), (2, 2)])
    );

    // Undirected (no `directed` key): symmetrised; ids 0..n kept; no labels, no .urls.
    let input = env.input("u.txt", "graph [ node [ id 0 ] node [ id 1 ] node [ id 2 ]\n edge [ source 0 target 1 ] edge [ source 2 target 2 ] ]");
    let base = env.out("u");
    let r = import(&input, &base, &ImportOptions::default()).unwrap();
    assert_eq!(r.format, ImportFormat::Gml, "detected from content");
    assert!(r.symmetrized && !r.ids_written && !r.urls_written);
    assert_eq!(
        arc_set(&env.open(&base)),
        BTreeSet::from([(0, 1), (1, 0), (2, 2)])
    );
}

#[test]
fn hollins() {
    let Some((edges, env)) = shared_input("hollins/hollins-edges.dat") else {
        return;
    };
    let table = edges.with_file_name("hollins-urls.dat");
    let base = env.out("hollins");
    let r = import(&edges, &base, &opts(ImportFormat::IdUrls { urls: table })).unwrap();
    assert_eq!((r.nodes, r.arcs), (6_012, 23_875));
    assert_eq!(
        (r.duplicate_arcs_dropped, r.self_loops, r.invalid_urls),
        (0, 0, 0)
    );
    // PROVENANCE's "2 malformed" hosts: http://www1.hollins/edu/… and http://www1/hollins.edu/….
    assert_eq!(r.implausible_hosts, 2);
    assert!(r.ids_written && r.urls_written && r.header_skipped);
    let ids = read_ids(&with_ext(&base, "ids")).unwrap();
    assert_eq!(ids, (1..=6_012).collect::<Vec<u64>>());
    let urls = read_urls(&urls_path(&base)).unwrap();
    assert_eq!(urls.len(), 6_012);
    assert_eq!(urls[0], "http://www1.hollins.edu/");
    assert_eq!(urls[1], "http://www.hollins.edu/");
    let g = env.open(&base);
    assert_eq!(g.num_arcs(), 23_875);
    // The arcs are the input's, 1-based.
    let text = std::fs::read_to_string(&edges).unwrap();
    let input: BTreeSet<(u64, u64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    assert_eq!(original_arcs(&g, &base), input);
    check_ef(&base, &g);

    // Hosts: www.hollins.edu, www1.hollins.edu and the two malformed ones.
    let hosts = Hosts::from_urls_file(&urls_path(&base)).unwrap();
    let mut names: Vec<&str> = hosts.names().iter().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "www.hollins.edu",
            "www1",
            "www1.hollins",
            "www1.hollins.edu"
        ]
    );
    assert_eq!(hosts.num_invalid_pages(), 0);
    let domains = hosts.by_domain();
    let www = hosts.host(1);
    assert_eq!(hosts.name(www), "www.hollins.edu");
    assert_eq!(domains.name(domains.host(0)), "hollins.edu");
    assert_eq!(domains.host(0), domains.host(1));
    assert_eq!(domains.pages(domains.host(0)), 6_010);
}

#[test]
fn polblogs() {
    let Some((input, env)) = shared_input("polblogs/polblogs.gml") else {
        return;
    };
    let base = env.out("polblogs");
    let r = import(&input, &base, &ImportOptions::default()).unwrap();
    eprintln!("polblogs: {r:?}");
    assert_eq!(r.format, ImportFormat::Gml);
    assert!(!r.symmetrized);
    assert_eq!(r.nodes, 1_490);
    // This copy has no repeated edge (Newman's original listed some twice): 19,015 edge
    // blocks, all distinct, 3 of them self-loops. One blog is listed twice: nodes 55
    // (`atrios.blogspot.com`) and 56 (`atrios.blogspot.com/ `) normalise to the same URL; they
    // stay two nodes (GML ids define nodes) and are counted in `duplicate_urls`.
    // `celluloid-wisdom.com/pw` and `…/pw/` differ by the trailing slash, which is kept.
    assert_eq!(
        (r.input_arcs, r.arcs, r.duplicate_arcs_dropped),
        (19_015, 19_015, 0)
    );
    assert_eq!(r.self_loops, 3);
    assert_eq!(
        (r.invalid_urls, r.missing_urls, r.duplicate_urls),
        (0, 0, 1)
    );
    assert_eq!(r.implausible_hosts, 0);
    assert_eq!(r.lines, 85_004);
    let urls = read_urls(&urls_path(&base)).unwrap();
    assert_eq!(urls.len(), 1_490);
    assert_eq!(urls[0], "http://100monkeystyping.com/");
    assert_eq!(urls[1], "http://12thharmonic.com/wordpress");
    assert_eq!(urls[54], "http://atrios.blogspot.com/");
    assert_eq!(urls[55], "http://atrios.blogspot.com/");
    assert_eq!(
        read_ids(&with_ext(&base, "ids")).unwrap(),
        (1..=1_490).collect::<Vec<u64>>()
    );
    let g = env.open(&base);
    assert_eq!(g.num_arcs(), 19_015);
    check_ef(&base, &g);
}

#[test]
fn bad_inputs_name_the_line_and_leave_no_output() {
    let env = Env::new();
    let cases: Vec<(&str, ImportFormat, &str)> = vec![
        (
            "0 1\n3 x\n",
            ImportFormat::Auto,
            "line 2: expected two integer ids, found '3 x'",
        ),
        (
            "0 1\na b c\n",
            ImportFormat::Arcs,
            "line 2: expected two integer ids, found 'a b c'",
        ),
        (
            "0 1\n1\n",
            ImportFormat::Arcs,
            "line 2: expected two integer ids, found '1'",
        ),
        ("0 1\n1 -3\n", ImportFormat::Arcs, "line 2: negative id -3"),
        (
            "0 99999999999999999999\n",
            ImportFormat::Arcs,
            "line 1: id 99999999999999999999 is out of range",
        ),
        (
            "0 9223372036854775808\n",
            ImportFormat::Arcs,
            "line 1: id 9223372036854775808 is out of range",
        ),
        (
            "start end\n0 1\nfoo bar\n",
            ImportFormat::Arcs,
            "line 3: expected two integer ids, found 'foo bar'",
        ),
        (
            "0 1\n1 2.5\n",
            ImportFormat::Arcs,
            "line 2: expected two integer ids, found '1 2.5'",
        ),
        ("", ImportFormat::Auto, "empty graph"),
        ("# nothing\n\n", ImportFormat::Auto, "empty graph"),
        ("# nothing\n\n", ImportFormat::Arcs, "empty graph"),
        ("src dst\n", ImportFormat::Arcs, "empty graph"),
        (
            "http://a.com/ http://b.com/\nhttp://a.com/ b.com\n",
            ImportFormat::UrlPairs,
            "line 2: 'b.com' is not a valid absolute URL",
        ),
        (
            "http://a.com/ http://b.com/\nhttp://a.com/\n",
            ImportFormat::UrlPairs,
            "line 2: expected two URLs",
        ),
        (
            "http://a.com/ mailto:x@y.z\n",
            ImportFormat::UrlPairs,
            "line 1: 'mailto:x@y.z' has no host",
        ),
        (
            "http://a.com/ http://b.com/\n0 1\n",
            ImportFormat::UrlPairs,
            "line 2: '0' is not a valid absolute URL",
        ),
        (
            "hello world\nfoo bar\n",
            ImportFormat::Auto,
            "line 2: cannot tell the input format",
        ),
        (
            "1 http://a.com/\n",
            ImportFormat::Auto,
            "line 1: this looks like an id→URL table",
        ),
        (
            "graph [ directed 1 node [ id 1 ] node [ id 2 ]\n edge [ source 1 target 3 ] ]",
            ImportFormat::Gml,
            "line 2: edge target 3 is not a declared node",
        ),
        (
            "graph [ node [ id 1 ]\nnode [ id 1 ] ]",
            ImportFormat::Gml,
            "line 2: node id 1 is already declared (line 1)",
        ),
        (
            "graph [ node [ id -1 ] ]",
            ImportFormat::Gml,
            "line 1: negative node id -1",
        ),
        ("graph [ ]", ImportFormat::Gml, "empty graph"),
        (
            "graph [ node [ id 1 ]\n",
            ImportFormat::Gml,
            "line 2: unexpected end of file: the list opened on line 1",
        ),
        (
            "1 2\n",
            ImportFormat::IdUrls {
                urls: env.input(
                    "table.txt",
                    "1 http://a.com/\n2 http://b.com/\n2 http://c.com/\n",
                ),
            },
            "line 3: id 2 already has a URL (line 2)",
        ),
    ];
    for (i, (text, format, msg)) in cases.into_iter().enumerate() {
        let input = env.input(&format!("bad{i}.txt"), text);
        let base = env.out("x");
        let e = import(&input, &base, &opts(format.clone())).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains(msg),
            "case {i} ({format}): {e:?} does not contain {msg:?}"
        );
        if !matches!(format, ImportFormat::IdUrls { .. }) {
            assert!(
                e.contains(&format!("bad{i}.txt")),
                "case {i}: {e} names no file"
            );
        }
        assert!(
            env.out_entries().is_empty(),
            "case {i} left {:?}",
            env.out_entries()
        );
    }
    // Missing files.
    let e = import(
        &env.path("nope.txt"),
        &env.out("x"),
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("nope.txt: no such file"), "{e}");
    let input = env.input("ok.txt", "1 2\n");
    let e = import(
        &input,
        &env.out("x"),
        &opts(ImportFormat::IdUrls {
            urls: env.path("none.txt"),
        }),
    )
    .unwrap_err();
    assert!(e.to_string().contains("none.txt does not exist"), "{e}");
    assert!(env.out_entries().is_empty());

    // A failed import does not disturb an earlier result with the same basename.
    let base = env.out("x");
    import(&input, &base, &ImportOptions::default()).unwrap();
    let before = env.out_entries();
    let bad = env.input("bad.txt", "1 2\n3 x\n");
    assert!(import(&bad, &base, &ImportOptions::default()).is_err());
    assert_eq!(env.out_entries(), before);
    assert_eq!(arc_set(&env.open(&base)), BTreeSet::from([(0, 1)]));
}

#[test]
fn companion_files_of_an_earlier_import_are_removed() {
    let env = Env::new();
    let base = env.out("g");
    import(
        &env.input("p.txt", "http://a.com/ http://b.com/\n"),
        &base,
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(urls_path(&base).exists());
    let r = import(
        &env.input("a.txt", "5 6\n"),
        &base,
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(r.ids_written);
    assert_eq!(
        env.out_entries(),
        ["g.ef", "g.graph", "g.ids", "g.offsets", "g.properties"]
    );
    import(
        &env.input("b.txt", "0 1\n"),
        &base,
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(
        env.out_entries(),
        ["g.ef", "g.graph", "g.offsets", "g.properties"]
    );
}

#[test]
fn gzip_input_and_progress() {
    use std::io::Write;
    let env = Env::new();
    let path = env.path("arcs.txt.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    for i in 0..100_000u32 {
        writeln!(gz, "{} {}", i, (i * 7 + 1) % 100_000).unwrap();
    }
    gz.finish().unwrap();
    let mut phases = Vec::new();
    let mut last_lines = 0;
    let r = import_with_progress(&path, &env.out("z"), &ImportOptions::default(), &mut |p| {
        if phases.last() != Some(&p.phase) {
            phases.push(p.phase);
        }
        last_lines = last_lines.max(p.lines);
        assert_eq!(p.total_bytes, None, "compressed input: size unknown");
    })
    .unwrap();
    assert_eq!((r.nodes, r.arcs), (100_000, 100_000));
    assert_eq!(
        phases,
        [
            ImportPhase::Scan,
            ImportPhase::Sort,
            ImportPhase::Compress,
            ImportPhase::Finish
        ]
    );
    assert_eq!(last_lines, 65_536);
}

/// A deterministic pseudo-random arc list with duplicates, big enough that a 1 MiB sort budget
/// spills many batches.
#[test]
fn two_million_arcs_through_many_sort_batches() {
    let env = Env::new();
    let n = 50_000u64;
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut arcs = Vec::with_capacity(2_000_000);
    let mut text = String::with_capacity(30_000_000);
    for _ in 0..2_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let s = (x % n) * 3 + 1; // sparse ids: 1, 4, 7, …
        let d = ((x >> 20) % 2_000) * 3 + 1 + 3 * (s % 10);
        arcs.push((s, d));
        text.push_str(&format!("{s} {d}\n"));
    }
    let input = env.input("big.txt", &text);
    drop(text);
    let o = ImportOptions {
        sort_memory: 1 << 20,
        ..ImportOptions::default()
    };
    let base = env.out("big");
    let r = import(&input, &base, &o).unwrap();
    let expected: BTreeSet<(u64, u64)> = arcs.iter().copied().collect();
    assert_eq!(r.arcs as usize, expected.len());
    assert_eq!(r.input_arcs, 2_000_000);
    assert_eq!(
        r.duplicate_arcs_dropped as usize,
        2_000_000 - expected.len()
    );
    let g = env.open(&base);
    assert_eq!(original_arcs(&g, &base), expected);
    check_ef(&base, &g);
}

#[test]
fn format_detection() {
    let env = Env::new();
    let d = |name: &str, text: &str| detect_format(&env.input(name, text));
    assert_eq!(d("a", "# c\n1 2\n").unwrap(), ImportFormat::Arcs);
    assert_eq!(d("b", "from to\n1\t2\n").unwrap(), ImportFormat::Arcs);
    assert_eq!(
        d("c", "http://a/ http://b/\n").unwrap(),
        ImportFormat::UrlPairs
    );
    assert_eq!(d("d.gml", "whatever").unwrap(), ImportFormat::Gml);
    assert_eq!(d("e", "graph [\n]").unwrap(), ImportFormat::Gml);
    assert_eq!(
        d("f", "Creator \"x\"\ngraph [ ]").unwrap(),
        ImportFormat::Gml
    );
    assert!(d("g", "1 http://a/\n").is_err());
    assert!(d("h", "").unwrap_err().to_string().contains("empty graph"));
}

#[test]
fn hosts_and_registrable_domains() {
    // Each URL with its host and that host's registrable domain.
    let cases = [
        (
            "http://a.example.co.uk/x",
            "a.example.co.uk",
            "example.co.uk",
        ),
        (
            "https://b.example.co.uk:8443/",
            "b.example.co.uk",
            "example.co.uk",
        ),
        (
            "http://a.example.co.uk/y",
            "a.example.co.uk",
            "example.co.uk",
        ),
        ("not a url", INVALID_HOST, INVALID_HOST),
        ("http://192.168.1.1/admin", "192.168.1.1", "192.168.1.1"),
        ("http://localhost:8080/", "localhost", "localhost"),
        (
            "http://foo.blogspot.com/",
            "foo.blogspot.com",
            "foo.blogspot.com",
        ),
        (
            "http://bar.blogspot.com/",
            "bar.blogspot.com",
            "bar.blogspot.com",
        ),
        ("", INVALID_HOST, INVALID_HOST),
        (
            "HTTP://User@WWW.Example.COM:80/",
            "www.example.com",
            "example.com",
        ),
        ("http://[::1]/", "[::1]", "[::1]"),
        ("mailto:someone@example.com", INVALID_HOST, INVALID_HOST),
    ];
    let h = Hosts::from_urls(cases.iter().map(|(url, _, _)| url));
    let d = h.by_domain();
    assert_eq!(h.num_nodes(), 12);
    for (page, (url, host, domain)) in cases.into_iter().enumerate() {
        assert_eq!(h.name(h.host_of()[page]), host, "the host of {url:?}");
        assert_eq!(d.name(d.host_of()[page]), domain, "the domain of {url:?}");
    }
    assert_eq!(h.host_of()[..4], [0, 1, 0, 2], "ids by first appearance");
    assert_eq!(h.num_hosts(), 9);
    assert_eq!(h.invalid_host(), Some(2));
    assert_eq!(h.num_invalid_pages(), 3);
    assert_eq!(h.pages(0), 2);
    assert_eq!(h.pages_per_host().iter().sum::<u64>(), 12);

    assert_eq!(d.num_hosts(), 8);
    assert_eq!(d.pages(d.host(0)), 3);
    assert_eq!(d.num_invalid_pages(), 3);
    for (host, plausible) in [
        ("www.hollins.edu", true),
        ("blogspot.com", true),
        ("x.blogspot.com", true),
        ("xn--mnchen-3ya.de", true),
        ("10.0.0.1", true),
        ("[::1]", true),
        ("localhost", true),
        ("www1", false),
        ("www1.hollins", false),
        ("foo.notatld", false),
    ] {
        assert_eq!(is_plausible_host(host), plausible, "{host}");
    }
    assert_eq!(registrable_domain("www.bbc.co.uk"), "bbc.co.uk");
    assert_eq!(registrable_domain("co.uk"), "co.uk");
    assert_eq!(registrable_domain("10.0.0.1"), "10.0.0.1");
}
