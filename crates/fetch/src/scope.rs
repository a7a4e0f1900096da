//! The crawl's scope: which discovered URLs may enter the frontier at all.
//!
//! A crawl of one site should not wander to every host the site links to. `--scope host` keeps
//! the URLs on the seeds' host names, `--scope domain` on their registrable domains (eTLD+1,
//! `crawlrank_util::hosts::registrable_domain`: `docs.example.co.uk` and `www.example.co.uk`
//! are one domain), `--scope any` (the default) keeps everything. Then URL filters in the manner
//! of Nutch's regex-urlfilter and Heritrix's decide rules: with any `--include REGEX`, a URL must
//! match one of them; it must match no `--exclude REGEX`. Seeds are always in scope (the user
//! named them), and their hosts define it.
//!
//! The check runs where a link is interned, before the URL gets an id: a URL out of scope is
//! never stored, queued or requested — its robots.txt included — and is only counted
//! (the crawler's `Stats::out_of_scope_links` and `Stats::filtered_links`). Redirect targets and sitemap
//! entries are links like any other, so they pass the same check. The scope is not part of the
//! stored crawl: a resumed crawl may narrow or widen it for the URLs it discovers from then on;
//! the seeds' hosts come from the crawl's seed events, so a resume without `--seeds` keeps them.

use anyhow::{bail, Context, Result};
use regex::RegexSet;
use std::collections::HashSet;

/// Which hosts a crawl stays on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScopeKind {
    /// Any host.
    #[default]
    Any,
    /// The seeds' registrable domains.
    Domain,
    /// The seeds' host names.
    Host,
}

impl ScopeKind {
    /// Parses `any`, `domain` or `host`.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s.trim() {
            "any" => Self::Any,
            "domain" => Self::Domain,
            "host" => Self::Host,
            other => bail!("unknown scope '{other}' (expected any, domain or host)"),
        })
    }
}

/// What a crawl is told about its scope.
#[derive(Debug, Clone, Default)]
pub struct ScopeConfig {
    /// Which hosts.
    pub kind: ScopeKind,
    /// URLs must match one of these, when any is given.
    pub include: Vec<String>,
    /// URLs must match none of these.
    pub exclude: Vec<String>,
}

/// Why a URL was kept out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfScope {
    /// Its host is not one of the seeds' hosts or domains.
    Host,
    /// It matched no `--include` or an `--exclude`.
    Filtered,
}

/// The scope of a running crawl (see the [module documentation](self)).
#[derive(Debug)]
pub struct Scope {
    kind: ScopeKind,
    /// The seeds' host names (`Host`) or registrable domains (`Domain`).
    allowed: HashSet<String>,
    include: Option<RegexSet>,
    exclude: Option<RegexSet>,
}

/// A regex set of `patterns`, the error naming the option and the pattern that does not compile.
fn regex_set(option: &str, patterns: &[String]) -> Result<Option<RegexSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for p in patterns {
        regex::Regex::new(p).with_context(|| format!("{option} '{p}' is not a valid regex"))?;
    }
    RegexSet::new(patterns)
        .map(Some)
        .with_context(|| format!("the {option} patterns do not compile together"))
}

impl Scope {
    /// The scope `config` describes, before any seed; a malformed regex is an error naming it.
    pub fn new(config: &ScopeConfig) -> Result<Self> {
        Ok(Self {
            kind: config.kind,
            allowed: HashSet::new(),
            include: regex_set("--include", &config.include)?,
            exclude: regex_set("--exclude", &config.exclude)?,
        })
    }

    /// Whether the scope keeps everything (no check to make).
    pub fn is_any(&self) -> bool {
        self.kind == ScopeKind::Any && self.include.is_none() && self.exclude.is_none()
    }

    /// Adds a seed URL: its host (or domain) is in scope from now on.
    pub fn add_seed(&mut self, url: &str) {
        if let Some(key) = host_name(url).map(|h| self.key(h)) {
            self.allowed.insert(key);
        }
    }

    fn key(&self, host: &str) -> String {
        match self.kind {
            ScopeKind::Domain => crawlrank_util::hosts::registrable_domain(host),
            _ => host.to_owned(),
        }
    }

    /// Whether a normalised URL may enter the frontier; one that may not is counted in
    /// `stats` as `crawl` counts it (`out_of_scope_links` or `filtered_links`).
    pub fn admits(&self, url: &str, stats: &mut crate::stats::Stats) -> bool {
        match self.check(url) {
            Ok(()) => true,
            Err(OutOfScope::Host) => {
                stats.out_of_scope_links += 1;
                false
            }
            Err(OutOfScope::Filtered) => {
                stats.filtered_links += 1;
                false
            }
        }
    }

    /// Whether a normalised URL may enter the frontier, and why not.
    pub fn check(&self, url: &str) -> Result<(), OutOfScope> {
        if self.is_any() {
            return Ok(());
        }
        if self.kind != ScopeKind::Any {
            let Some(host) = host_name(url) else {
                return Err(OutOfScope::Host);
            };
            let inside = match self.kind {
                ScopeKind::Host => self.allowed.contains(host),
                _ => self.allowed.contains(&self.key(host)),
            };
            if !inside {
                return Err(OutOfScope::Host);
            }
        }
        if self.include.as_ref().is_some_and(|s| !s.is_match(url))
            || self.exclude.as_ref().is_some_and(|s| s.is_match(url))
        {
            return Err(OutOfScope::Filtered);
        }
        Ok(())
    }
}

/// The host name of a normalised absolute URL (`scheme://[user@]host[:port]/…`), without the
/// port; IPv6 literals keep their brackets. No full parse: this runs for every link.
pub fn host_name(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = match authority.rfind('@') {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    let host = if host_port.starts_with('[') {
        &host_port[..host_port.find(']')? + 1]
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(kind: &str, include: &[&str], exclude: &[&str]) -> Scope {
        let mut s = Scope::new(&ScopeConfig {
            kind: ScopeKind::parse(kind).unwrap(),
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
        })
        .unwrap();
        s.add_seed("https://docs.example.co.uk/start");
        s
    }

    #[test]
    fn hosts_are_taken_from_urls_without_a_parse() {
        for (url, host) in [
            ("http://a.test/", "a.test"),
            ("https://A.test:8443/x?y", "A.test"),
            ("http://u:p@b.test:81/", "b.test"),
            ("http://[::1]:8080/p", "[::1]"),
            ("http://c.test?q", "c.test"),
        ] {
            assert_eq!(host_name(url), Some(host), "{url}");
        }
        assert_eq!(host_name("no scheme"), None);
        assert_eq!(host_name("http:///path"), None);
    }

    #[test]
    fn host_domain_and_any() {
        let (same, sibling, other) = (
            "https://docs.example.co.uk/a",
            "http://www.example.co.uk/b",
            "https://elsewhere.test/",
        );
        let host = scope("host", &[], &[]);
        assert_eq!(host.check(same), Ok(()));
        assert_eq!(host.check("http://docs.example.co.uk:8080/"), Ok(()));
        assert_eq!(host.check(sibling), Err(OutOfScope::Host));
        let domain = scope("domain", &[], &[]);
        assert_eq!(domain.check(sibling), Ok(()));
        assert_eq!(domain.check(other), Err(OutOfScope::Host));
        let any = scope("any", &[], &[]);
        assert!(any.is_any());
        assert_eq!(any.check(other), Ok(()));
        assert!(ScopeKind::parse("site")
            .unwrap_err()
            .to_string()
            .contains("any, domain or host"));
    }

    #[test]
    fn include_and_exclude_filters() {
        let s = scope("any", &[r"/docs/", r"\.html$"], &[r"\?", r"/private/"]);
        assert_eq!(s.check("http://a.test/docs/x"), Ok(()));
        assert_eq!(s.check("http://a.test/page.html"), Ok(()));
        assert_eq!(s.check("http://a.test/img.png"), Err(OutOfScope::Filtered));
        assert_eq!(
            s.check("http://a.test/docs/x?y=1"),
            Err(OutOfScope::Filtered)
        );
        assert_eq!(
            s.check("http://a.test/private/a.html"),
            Err(OutOfScope::Filtered)
        );
        // Host scope first, then the filters.
        let s = scope("host", &[], &["/old/"]);
        assert_eq!(
            s.check("https://docs.example.co.uk/old/1"),
            Err(OutOfScope::Filtered)
        );
        assert_eq!(s.check("https://x.test/new/1"), Err(OutOfScope::Host));
        let bad = Scope::new(&ScopeConfig {
            exclude: vec!["ok".into(), "(unclosed".into()],
            ..ScopeConfig::default()
        })
        .unwrap_err();
        assert!(
            format!("{bad:#}").contains("--exclude '(unclosed'"),
            "{bad:#}"
        );
    }
}
