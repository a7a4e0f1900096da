//! Link extraction at its limits: a page far over the link cap is parsed holding the cap's
//! worth of URLs.

use crawlrank_fetch::links::{extract_links, UrlRules};
use crawlrank_testkit::thread_heap;

/// A 10 MiB page of short anchors (about 520,000 distinct links) is parsed holding the link
/// cap's worth of URLs, not the page's: collection stops at the cap, the rest are counted.
#[test]
fn a_page_of_short_anchors_is_cut_at_the_link_cap_while_parsed() {
    let mut body = String::with_capacity(10 << 20);
    let mut anchors = 0u32;
    while body.len() < (10 << 20) - 32 {
        body.push_str(&format!("<a href=/{anchors:x}>.</a>"));
        anchors += 1;
    }
    let page = url::Url::parse("http://farm.test/").unwrap();
    let rules = UrlRules::default();
    let (found, peak) = thread_heap::peak_during(|| extract_links(&page, body.as_bytes(), &rules));
    assert!(!found.parse_error);
    assert_eq!(found.links.len(), rules.max_links_per_page);
    assert_eq!(found.links[0], "http://farm.test/0");
    assert_eq!(
        u64::from(found.over_cap),
        u64::from(anchors) - rules.max_links_per_page as u64
    );
    // The cap's 6,000 URLs take well under a MiB; every anchor's string, then every
    // resolved URL, took tens of MiB.
    assert!(
        peak < 4 << 20,
        "{anchors} anchors parsed with a peak of {} KiB",
        peak >> 10
    );
}
