//! Graphs as text arc lists (`crawlrank convert`): import → convert round trips with ids and
//! with URLs, the real cnr-2000, and the errors of inputs that cannot be converted.

use crate::env::{shared_input, Env};
use crawlrank_graph::arclist::{convert, ArcsWritten};
use crawlrank_graph::bv::with_ext;
use crawlrank_graph::import::{import, ImportFormat, ImportOptions};
use crawlrank_testkit::write_file;
use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Arcs sorted by source then destination, each once, tab-separated: what `convert` writes.
const ARCS: &str = "0\t1\n0\t4\n1\t2\n2\t0\n2\t2\n3\t0\n3\t2\n4\t3\n";

#[test]
fn an_imported_arc_list_converts_back_to_the_same_arcs() {
    let env = Env::new();
    let input = write_file(&env.out_dir(), "g.tsv", ARCS);
    let base = env.out("g");
    import(&input, &base, &ImportOptions::default()).unwrap();
    let out = env.out("back.tsv");
    let w = convert(&base, &env.cache, false, &out).unwrap();
    assert_eq!(w, ArcsWritten { nodes: 5, arcs: 8 });
    assert_eq!(read(&out), ARCS);

    // The arc list itself as --graph (imported on the fly into the cache) gives the same.
    let out2 = env.out("back2.tsv");
    convert(&input, &env.cache, false, &out2).unwrap();
    assert_eq!(read(&out2), ARCS);

    // Unsorted, duplicated, space-separated input: the graph's arcs, sorted, each once.
    let messy = write_file(
        &env.out_dir(),
        "messy.txt",
        "4 3\n0 4\n0 1\n3 2\n3 0\n2 2\n2 0\n1 2\n0 1\n",
    );
    let out3 = env.out("back3.tsv");
    assert_eq!(convert(&messy, &env.cache, false, &out3).unwrap().arcs, 8);
    assert_eq!(read(&out3), ARCS);
    // Nothing but the outputs beside the inputs.
    assert_eq!(
        env.out_entries(),
        [
            "back.tsv",
            "back2.tsv",
            "back3.tsv",
            "g.ef",
            "g.graph",
            "g.offsets",
            "g.properties",
            "g.tsv",
            "messy.txt"
        ]
    );
}

#[test]
fn imported_url_pairs_convert_back_to_the_same_url_pairs() {
    let env = Env::new();
    let pairs = "http://a.test/\thttp://b.test/x\n\
                 http://a.test/\thttp://c.test/\n\
                 http://b.test/x\thttp://a.test/\n\
                 http://c.test/\thttp://c.test/\n";
    let input = write_file(&env.out_dir(), "pairs.tsv", pairs);
    let base = env.out("web");
    let opts = ImportOptions::with_format(ImportFormat::UrlPairs);
    import(&input, &base, &opts).unwrap();
    let out = env.out("back.tsv");
    assert_eq!(convert(&base, &env.cache, true, &out).unwrap().arcs, 4);
    assert_eq!(read(&out), pairs);
    // And the URL pairs import again into the same graph.
    let again = env.out("again");
    import(&out, &again, &opts).unwrap();
    assert_eq!(
        read(&with_ext(&again, "urls")),
        read(&with_ext(&base, "urls"))
    );
    let ids = env.out("ids.tsv");
    convert(&base, &env.cache, false, &ids).unwrap();
    let ids_again = env.out("ids-again.tsv");
    convert(&again, &env.cache, false, &ids_again).unwrap();
    assert_eq!(read(&ids), "0\t1\n0\t2\n1\t0\n2\t2\n");
    assert_eq!(read(&ids), read(&ids_again));
}

#[test]
fn what_cannot_be_converted_is_a_clear_error_and_writes_nothing() {
    let env = Env::new();
    let input = write_file(&env.out_dir(), "g.tsv", ARCS);
    let out = env.out("out.tsv");
    let err = |graph: &Path, urls: bool| {
        let e = convert(graph, &env.cache, urls, &out).unwrap_err();
        assert!(!out.exists());
        format!("{e:#}")
    };
    // URLs asked of an arc list, and of a BVGraph without .urls: the graph is named.
    let e = err(&input, true);
    assert!(e.contains("g.tsv is an arc list, which has no URLs"), "{e}");
    let base = env.out("g");
    import(&input, &base, &ImportOptions::default()).unwrap();
    let e = err(&base, true);
    assert!(
        e.contains(&format!("the graph {} has no URLs", base.display())) && e.contains("g.urls"),
        "{e}"
    );
    // A .urls with an empty line for a node that has arcs.
    std::fs::write(
        with_ext(&base, "urls"),
        "http://a/\n\nhttp://c/\nhttp://d/\nhttp://e/\n",
    )
    .unwrap();
    let e = err(&base, true);
    assert!(
        e.contains("node 1 has no URL") && e.contains("g.urls"),
        "{e}"
    );
    // A .urls with the wrong number of lines.
    std::fs::write(with_ext(&base, "urls"), "http://a/\n").unwrap();
    let e = err(&base, true);
    assert!(e.contains("has 1 lines but the graph has 5 nodes"), "{e}");
    // Neither a graph nor a file; a text that is not an arc list; an unwritable output.
    let e = err(&env.out("none"), false);
    assert!(e.contains("is neither a BVGraph basename"), "{e}");
    let bad = write_file(&env.out_dir(), "bad.txt", "0 1\n1 x\n");
    let e = err(&bad, false);
    assert!(e.contains("bad.txt") && e.contains("line 2"), "{e}");
    let e = format!(
        "{:#}",
        convert(&base, &env.cache, false, &env.out("g.tsv/x")).unwrap_err()
    );
    assert!(e.contains("g.tsv/x"), "{e}");
}

#[test]
fn cnr2000_converts_arc_for_arc() {
    let Some((graph, env)) = shared_input("cnr-2000/cnr-2000.graph") else {
        return;
    };
    let base = graph.with_extension("");
    let out = env.out("cnr.tsv");
    let w = convert(&base, &env.cache, false, &out).unwrap();
    assert_eq!((w.nodes, w.arcs), (325_557, 3_216_152));
    let csr = env.open(&base);
    let mut expected = String::new();
    for (s, d) in csr.arcs() {
        expected.push_str(&format!("{s}\t{d}\n"));
    }
    assert!(read(&out) == expected, "the arcs differ from the graph's");
    // Nothing was written beside the input.
    assert!(!with_ext(&base, "ef").exists());
}
