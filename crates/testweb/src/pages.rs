//! The hand-made HTML pages of the trap and sitemap hosts: [`page`] (a titled page around a
//! body) and [`link`] (one paragraph with one link).
//!
//! Their own module because three producers of pages share them — the trap catalogue
//! ([`traps`](crate::traps)), the trap hosts ([`trap_hosts`](crate::trap_hosts)) and the sitemap
//! hosts ([`sitemap_hosts`](crate::sitemap_hosts)) — and the trap index in `traps` links the
//! trap hosts: with the helpers in `traps`, `traps` and `trap_hosts` imported each other.

use crate::reply::Reply;
use crate::site::write_href;

/// A 200 HTML page titled `title` (also its `<h1>`), with `body` as is after the heading.
pub(crate) fn page(title: &str, body: &str) -> Reply {
    Reply::html(format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n{body}\n</body>\n</html>\n"
    ))
}

/// `<p><a href=…>link</a></p>` to `href`, the href written as the graph pages write theirs.
pub(crate) fn link(href: &str) -> String {
    let mut s = String::from("<p><a ");
    write_href(&mut s, "", href, 0);
    s.push_str(">link</a></p>\n");
    s
}
