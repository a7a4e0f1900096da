//! Hosts with bad or unusual sitemaps, for the crawler's tests of sitemaps as side requests.
//!
//! Served when [`crate::TestWebConfig::sitemap_hosts`] is on, on hosts
//! `NAME.sitemaps.crawlrank.test`. Every path that is not a sitemap file or robots.txt is a
//! leaf HTML page without links, so a crawl seeded with `http://NAME.sitemaps.crawlrank.test/`
//! finds its other pages only through the host's sitemaps:
//!
//! | host | sitemaps | a correct crawler |
//! |---|---|---|
//! | `missing` | `/sitemap.xml` is a 404 | fetches the seed only; counts one sitemap not found |
//! | `html` | `/sitemap.xml` is a 200 `text/html` page linking `/hidden` | adds no page (not a sitemap); counts it |
//! | `huge` | `/sitemap.xml` lists [`HUGE_ENTRIES`] URLs `/e0` … of the host | keeps the first 50,000 (the protocol's limit), drops and counts the rest |
//! | `foreign` | `/sitemap.xml` lists `/f1`, `/f2` and three URLs of other hosts; robots.txt names `Sitemap: http://elsewhere.sitemaps.crawlrank.test/s.xml` | keeps `/f1` and `/f2`; drops and counts the three entries and the other host's sitemap file |
//! | `index` | `/sitemap.xml` is an index naming `/s1.xml`, `/s2.xml` and itself; `/s1.xml` lists `/u1`, `/u2`; `/s2.xml` is a 301 to `/s3.xml`, which lists `/u3`; robots.txt disallows `/private/` and names `Sitemap: /private/s.xml` | reads four files, fetches `/u1` `/u2` `/u3`, never the disallowed sitemap |
//! | `broken` | `/sitemap.xml` lists `/b1`, `/b2`, then its XML breaks | keeps `/b1`, `/b2`; counts a sitemap error |
//! | `unavailable` | `/sitemap.xml` is always a 503 | tries it again after its back-off, as often as a page, then counts it not found |
//! | `linked` | no `/sitemap.xml`; the seed page links `/list.xml`, a sitemap listing `/l1`, `/l2` | fetches `/list.xml` as a page that is a sitemap: no out-links, its two entries crawled as found without a link |

use crate::pages::page;
use crate::reply::Reply;

/// The suffix of these hosts' names.
pub const SITEMAP_HOST_SUFFIX: &str = ".sitemaps.crawlrank.test";

/// Entries of the `huge` host's sitemap: twice the protocol's 50,000.
pub const HUGE_ENTRIES: usize = 100_000;

fn urlset(host: &str, paths: &[String]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for p in paths {
        let loc = if p.starts_with("http") {
            p.clone()
        } else {
            format!("http://{host}{p}")
        };
        xml.push_str(&format!("<url><loc>{loc}</loc></url>\n"));
    }
    xml.push_str("</urlset>\n");
    xml
}

fn xml(body: String) -> Reply {
    Reply::with_body(200, "application/xml", body)
}

/// The reply for `path` on `host`, when `host` is one of these hosts.
pub(crate) fn reply(host: &str, path: &str) -> Option<Reply> {
    let name = host.strip_suffix(SITEMAP_HOST_SUFFIX)?;
    let paths = |list: &[&str]| list.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    let robots = |extra: &str| {
        Reply::with_body(
            200,
            "text/plain; charset=utf-8",
            format!("User-agent: *\n{extra}"),
        )
    };
    let leaf = || page(path, "<p>a leaf page</p>");
    Some(match (name, path) {
        ("foreign", "/robots.txt") => robots(&format!(
            "Allow: /\nSitemap: http://elsewhere{SITEMAP_HOST_SUFFIX}/s.xml\n"
        )),
        ("index", "/robots.txt") => robots(&format!(
            "Disallow: /private/\nSitemap: http://index{SITEMAP_HOST_SUFFIX}/private/s.xml\n"
        )),
        (_, "/robots.txt") => robots("Allow: /\n"),
        ("missing" | "linked", "/sitemap.xml") => Reply::status_page(404),
        ("linked", "/") => page("Linked", "<p><a href=\"/list.xml\">the list</a></p>"),
        ("linked", "/list.xml") => xml(urlset(host, &paths(&["/l1", "/l2"]))),
        ("unavailable", "/sitemap.xml") => Reply::status_page(503),
        ("html", "/sitemap.xml") => page("Site map", "<p><a href=\"/hidden\">hidden</a></p>"),
        ("huge", "/sitemap.xml") => {
            let all: Vec<String> = (0..HUGE_ENTRIES).map(|i| format!("/e{i}")).collect();
            xml(urlset(host, &all))
        }
        ("foreign", "/sitemap.xml") => xml(urlset(
            host,
            &paths(&[
                "/f1",
                "http://other.example/x",
                "/f2",
                "https://foreign.sitemaps.crawlrank.test.evil.test/y",
                &format!("http://elsewhere{SITEMAP_HOST_SUFFIX}/z"),
            ]),
        )),
        ("index", "/sitemap.xml") => xml(format!(
            "<?xml version=\"1.0\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
             <sitemap><loc>http://{host}/s1.xml</loc></sitemap>\n\
             <sitemap><loc>http://{host}/s2.xml</loc></sitemap>\n\
             <sitemap><loc>http://{host}/sitemap.xml</loc></sitemap>\n</sitemapindex>\n"
        )),
        ("index", "/s1.xml") => xml(urlset(host, &paths(&["/u1", "/u2"]))),
        ("index", "/s2.xml") => Reply::redirect(301, format!("http://{host}/s3.xml")),
        ("index", "/s3.xml") => xml(urlset(host, &paths(&["/u3"]))),
        ("index", "/private/s.xml") => xml(urlset(host, &paths(&["/never"]))),
        ("broken", "/sitemap.xml") => xml(format!(
            "<urlset><url><loc>http://{host}/b1</loc></url><url><loc>http://{host}/b2</loc></url>\
             <url><loc>http://{host}/b3</oops></urlset>"
        )),
        (
            "missing" | "html" | "huge" | "foreign" | "index" | "broken" | "unavailable"
            | "linked",
            _,
        ) => leaf(),
        _ => return None,
    })
}
