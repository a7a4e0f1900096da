//! `crawlrank crawl --frontier URL`: the crawl's fetching as a worker of a frontier service
//! (crawlrank_worker), with the `crawl` command's fetch, scope and politeness options.
//!
//! Every `crawl` option is either honoured by the worker or refused when given
//! ([`WORKER_OPTIONS`]): an option that orders or bounds the crawl itself belongs to the
//! service, and a worker that took it and did nothing would crawl otherwise than asked.

use super::crawl_args::{read_seeds, Args};
use super::crawl_stop::stop_on_signals;
use anyhow::{bail, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use crawlrank_worker::{WorkerConfig, WorkerStop};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// What a `crawl` option does in a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InWorker {
    /// The worker does what the option says (how, where it differs from `crawl`: the
    /// comment beside it and docs/frontier-service.md, Workers).
    Honoured,
    /// Refused when given on the command line, with where its setting lives instead (or
    /// why there is none); left at its default it is no error.
    Refused(&'static str),
}

use InWorker::{Honoured, Refused};

/// Why the search-log options are refused.
const SEARCH_LOG: &str = "the search-log policies (rw, rw-eg, learned) read it, and they run \
     only without --frontier (the frontier service cannot be given a search log)";

/// Every option of `crawl`, by clap id, and what it does with `--frontier`: the one list,
/// mirrored by the table in docs/frontier-service.md (Workers). A test checks that every
/// option is here, so that a new one cannot be added without deciding.
const WORKER_OPTIONS: &[(&str, InWorker)] = &[
    // Put into the service's crawl at start (URLs it knows are ignored).
    ("seeds", Honoured),
    (
        "policy",
        Refused(
            "the service's policy orders the crawl; give it to `crawlrank frontier serve --policy`",
        ),
    ),
    ("impact", Refused(SEARCH_LOG)),
    ("impact_column", Refused(SEARCH_LOG)),
    ("omega", Refused(SEARCH_LOG)),
    ("gamma", Refused(SEARCH_LOG)),
    // The WARC files go to STATE/warc/worker-…, kept robots.txt answers and back-offs beside them.
    ("state", Honoured),
    // Pages fetched by this worker in this run, not over all runs.
    ("max_pages", Honoured),
    ("concurrency", Honoured),
    (
        "max_idle_connections",
        Refused(
            "a worker keeps no idle connections (a leased URL's connection is closed after its \
             fetch), so there is nothing to cap",
        ),
    ),
    // The crawl's queue delay in the service (SetDelay), in whole seconds rounded up.
    ("delay", Honoured),
    ("user_agent", Honoured),
    (
        "expected_pages",
        Refused(
            "the service's policy reads it; give it to `crawlrank frontier serve --expected-pages`",
        ),
    ),
    (
        "batch",
        Refused("the service's policy reads it; give it to `crawlrank frontier serve --batch`"),
    ),
    (
        "rng_seed",
        Refused("the service's policy reads it; give it to `crawlrank frontier serve --rng-seed`"),
    ),
    ("proxy", Honoured),
    ("ca_cert", Honoured),
    ("timeout", Honoured),
    ("max_body", Honoured),
    ("max_links_per_page", Honoured),
    // Retries (a page's through the frontier, after its back-off), and refusals (429, 503)
    // before a URL is given up.
    ("max_retries", Honoured),
    (
        "max_pages_per_host",
        Refused(
            "the service admits the crawl's URLs within this cap; give it to \
             `crawlrank frontier serve --max-pages-per-host`",
        ),
    ),
    (
        "max_hosts_per_domain",
        Refused(
            "the service admits the crawl's URLs within this cap; give it to \
             `crawlrank frontier serve --max-hosts-per-domain`",
        ),
    ),
    (
        "max_urls_per_domain",
        Refused(
            "the service admits the crawl's URLs within this cap; give it to \
             `crawlrank frontier serve --max-urls-per-domain`",
        ),
    ),
    (
        "max_urls",
        Refused(
            "the service admits the crawl's URLs within this cap; give it to \
             `crawlrank frontier serve --max-urls`",
        ),
    ),
    (
        "seen_cache",
        Refused(
            "the crawl's URLs are the service's (`crawlrank frontier serve`, which keeps their \
             index in memory), so a worker has no seen-set to size",
        ),
    ),
    (
        "frontier_hot",
        Refused(
            "the frontier is the service's: give it to `crawlrank frontier serve \
             --frontier-hot`",
        ),
    ),
    (
        "max_hops",
        Refused(
            "the service counts each URL's hops from the seeds and admits out-links within the \
             limit; give it to `crawlrank frontier serve --max-hops`",
        ),
    ),
    (
        "max_redirects",
        Refused(
            "the service counts redirect chains from the worker's reports and admits targets \
             within the limit; give it to `crawlrank frontier serve --max-redirects`",
        ),
    ),
    // A too long Retry-After gives the URL up and holds its host's queue in the service.
    ("max_retry_after", Honoured),
    ("no_warc", Honoured),
    ("archive", Honoured),
    // A worker reads its seed hosts' sitemaps as `crawl` does, unless told not to.
    ("no_sitemaps", Honoured),
    // Out-links are filtered before they are reported.
    ("scope", Honoured),
    ("include", Honoured),
    ("exclude", Honoured),
    ("allow_private_networks", Honoured),
    ("dns_server", Honoured),
    ("dns_timeout", Honoured),
    (
        "dashboard",
        Refused(
            "the crawl's dashboard is the service's; serve it with \
             `crawlrank dashboard --frontier URL` (every worker and node counted)",
        ),
    ),
    (
        "dashboard_public",
        Refused(
            "the crawl's dashboard is the service's; serve it with \
             `crawlrank dashboard --frontier URL --public`",
        ),
    ),
    (
        "dashboard_linger",
        Refused(
            "the crawl's dashboard is the service's; `crawlrank dashboard --frontier URL` \
             serves it for as long as it runs",
        ),
    ),
    (
        "progress_log",
        Refused(
            "the crawl's counters are the service's; see them with `crawlrank status \
             --frontier URL` or `crawlrank dashboard --frontier URL` (/api/status, /metrics), and \
             a worker prints its own when it stops",
        ),
    ),
    // The worker's own options.
    ("frontier", Honoured),
    ("crawl_id", Honoured),
    ("lease", Honoured),
    ("idle_exit", Honoured),
    ("plain_urlfrontier", Honoured),
    ("frontier_retry", Honoured),
];

/// An error naming every option of [`WORKER_OPTIONS`] that a worker refuses and `given`
/// (the `crawl` command's matches) has from the command line, with where each belongs.
fn refuse_options_of_the_service(given: &ArgMatches) -> Result<()> {
    let refused: Vec<(String, &str)> = WORKER_OPTIONS
        .iter()
        .filter_map(|&(id, what)| match what {
            Refused(why) if given.value_source(id) == Some(ValueSource::CommandLine) => {
                Some((format!("--{}", id.replace('_', "-")), why))
            }
            _ => None,
        })
        .collect();
    match refused.as_slice() {
        [] => Ok(()),
        [(flag, why)] => bail!("{flag} does nothing in a crawl worker (--frontier): {why}"),
        many => bail!(
            "these options do nothing in a crawl worker (--frontier):{}",
            many.iter()
                .map(|(flag, why)| format!("\n  {flag}: {why}"))
                .collect::<String>()
        ),
    }
}

/// Runs `crawl --frontier`: `given` is the `crawl` command's matches, which say which
/// options were given on the command line.
pub fn run(args: Args, given: &ArgMatches) -> Result<()> {
    refuse_options_of_the_service(given)?;
    let frontier = args.worker.frontier.clone().unwrap_or_default();
    let c = WorkerConfig {
        frontier,
        crawl_id: args.worker.crawl_id.clone(),
        seeds: match &args.seeds {
            Some(p) => read_seeds(p)?,
            None => Vec::new(),
        },
        concurrency: args.resources.concurrency,
        // The service counts whole seconds between two answers of a queue.
        delay_secs: Some(u32::try_from(args.politeness.delay.div_ceil(1000)).unwrap_or(u32::MAX)),
        lease_secs: args.worker.lease,
        max_pages: args.max_pages,
        max_retries: args.politeness.max_retries,
        max_retry_after: Duration::from_secs(args.politeness.max_retry_after),
        idle_exit: Duration::from_secs(args.worker.idle_exit),
        state_dir: Some(args.state.clone()),
        plain_api: args.worker.plain_urlfrontier,
        frontier_retry: Duration::from_secs(args.worker.frontier_retry),
        scope: args.urls.scope_config(),
        fetch: args.requests.fetch_config(),
        ..WorkerConfig::default()
    };

    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(stop.clone())?;
    let pb = crate::progress::bar(None, "pages");
    pb.set_prefix("worker");
    let report = crawlrank_worker::run(&c, &stop, &mut |p| {
        pb.set_position(p.fetched);
        pb.set_prefix(format!(
            "worker: in flight {}, given up {}, links {} ({} new) |",
            p.in_flight, p.given_up, p.links, p.discovered
        ));
    })?;
    pb.finish_and_clear();
    let why = match report.stop {
        WorkerStop::Exhausted => "every URL of the crawl is done",
        WorkerStop::Idle => "nothing to fetch for --idle-exit while nothing was leased",
        WorkerStop::MaxPages => "--max-pages reached",
        WorkerStop::Stopped => "interrupted",
    };
    let k = &report.counts;
    let st = &k.stats;
    println!(
        "worker stopped: {why}; {} pages fetched in {:.1} s ({:.0} pages/s), {} given up ({} disallowed by robots.txt), {} robots.txt requests, {} retries, {} rate limited ({} given back until the hold's end, {} retry after too long)",
        k.fetched,
        report.elapsed,
        k.fetched as f64 / report.elapsed.max(1e-9),
        k.given_up,
        st.robots_disallowed,
        st.robots_fetched,
        st.retries,
        st.rate_limited,
        k.deferred,
        st.retry_after_too_long
    );
    println!(
        "reported {} out-links ({} new to the crawl, {} out of scope) to {}{}",
        k.links,
        k.discovered,
        st.out_of_scope_links,
        args.worker.frontier.as_deref().unwrap_or(""),
        if report.plain_api {
            " with plain PutURLs (the frontier has no ReportPage)"
        } else {
            ""
        }
    );
    if st.sitemaps_fetched > 0 {
        println!(
            "{} sitemap requests, {} sitemap entries put into the crawl",
            st.sitemaps_fetched, st.sitemap_links
        );
    }
    if st.noindex_pages + st.canonical_pages > 0 {
        println!(
            "{} noindex pages, {} canonical pages (reported with {} and {})",
            st.noindex_pages,
            st.canonical_pages,
            crawlrank_worker::NOINDEX_KEY,
            crawlrank_worker::CANONICAL_KEY
        );
    }
    if let Some(dir) = &report.warc_dir {
        println!("WARC files in {}", dir.display());
    }
    // The run as `crawl` counts a crawl: the same counters, the same summary.
    print!("{}", st.pages_summary());
    println!(
        "counters (this run, as `crawl` counts them; the caps and hop limits are the service's: `crawlrank status --frontier`):"
    );
    print!("{st}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Args as _;
    use std::collections::HashSet;

    /// The `crawl` command as clap defines it.
    fn crawl_command() -> clap::Command {
        Args::augment_args(clap::Command::new("crawl"))
    }

    #[test]
    fn every_crawl_option_is_classified_once() {
        let table: Vec<&str> = WORKER_OPTIONS.iter().map(|&(id, _)| id).collect();
        let unique: HashSet<&str> = table.iter().copied().collect();
        assert_eq!(unique.len(), table.len(), "an option listed twice");
        let cmd = crawl_command();
        let mut ids = HashSet::new();
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                unique.contains(id),
                "`crawl --{}` is not in WORKER_OPTIONS: decide whether a worker honours it or \
                 refuses it (and add it to the table in docs/frontier-service.md, Workers)",
                arg.get_long().unwrap_or(id)
            );
            // The error names an option by its id, dashed.
            assert_eq!(arg.get_long(), Some(id.replace('_', "-").as_str()));
            ids.insert(id.to_string());
        }
        for id in &table {
            assert!(
                ids.contains(*id),
                "WORKER_OPTIONS names '{id}', no option of crawl"
            );
        }
    }

    /// The long names of `frontier serve`'s options.
    fn serve_options() -> HashSet<String> {
        let serve = super::super::frontier::ServeArgs::augment_args(clap::Command::new("serve"));
        serve
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect()
    }

    /// The `frontier serve` options a refusal sends the user to, by long name.
    fn service_options_named(why: &str) -> Vec<&str> {
        why.split("`crawlrank frontier serve --")
            .skip(1)
            .map(|part| part.split(['`', ' ']).next().unwrap())
            .collect()
    }

    /// A refusal that sends the user to `frontier serve --X` names an option it has.
    #[test]
    fn every_service_option_a_refusal_names_exists() {
        let longs = serve_options();
        let mut named = 0;
        for &(id, what) in WORKER_OPTIONS {
            let Refused(why) = what else { continue };
            for long in service_options_named(why) {
                assert!(
                    longs.contains(long),
                    "--{id}'s refusal names `frontier serve --{long}`, which does not exist"
                );
                named += 1;
            }
        }
        assert!(named >= 10, "only {named} service options named");
    }

    /// A refused option that `frontier serve` has too (a cap, a hop limit, a policy's
    /// parameter) is refused with that option named: the user moves it there as it is.
    #[test]
    fn a_refused_option_the_service_has_names_it() {
        let longs = serve_options();
        let mut checked = 0;
        for &(id, what) in WORKER_OPTIONS {
            let Refused(why) = what else { continue };
            let long = id.replace('_', "-");
            if longs.contains(&long) {
                assert_eq!(
                    service_options_named(why),
                    [long.as_str()],
                    "--{long} is an option of `frontier serve` too; its refusal should say \
                     `crawlrank frontier serve --{long}`: {why}"
                );
                checked += 1;
            }
        }
        // policy, expected-pages, batch, rng-seed, the four caps, max-hops and max-redirects.
        assert!(
            checked >= 10,
            "only {checked} options of crawl found in frontier serve"
        );
    }

    #[test]
    fn the_docs_table_says_what_each_option_does_in_a_worker() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/frontier-service.md");
        let docs = std::fs::read_to_string(&path).unwrap();
        for &(id, what) in WORKER_OPTIONS {
            let start = format!("| `--{}", id.replace('_', "-"));
            let rows: Vec<&str> = docs
                .lines()
                .filter(|l| {
                    l.strip_prefix(start.as_str())
                        .is_some_and(|rest| rest.starts_with('`') || rest.starts_with(' '))
                })
                .collect();
            let [row] = rows[..] else {
                panic!(
                    "{}: one row for --{id} expected, found {rows:?}",
                    path.display()
                )
            };
            assert_eq!(
                row.contains("refused"),
                matches!(what, Refused(_)),
                "{}: the row of --{id} disagrees with WORKER_OPTIONS: {row}",
                path.display()
            );
            // The docs send the reader where the error sends the user.
            if let Refused(why) = what {
                for long in service_options_named(why) {
                    assert!(
                        row.contains(&format!("`crawlrank frontier serve --{long}`")),
                        "{}: the row of --{id} does not name `crawlrank frontier serve --{long}`, \
                         as its refusal does: {row}",
                        path.display()
                    );
                }
            }
        }
    }

    /// What `crawl ARGS` comes to before the worker starts.
    fn check(args: &[&str]) -> Result<()> {
        let matches = crawl_command()
            .try_get_matches_from(
                ["crawl", "--frontier", "http://127.0.0.1:1", "--state", "s"]
                    .iter()
                    .chain(args),
            )
            .unwrap();
        refuse_options_of_the_service(&matches)
    }

    #[test]
    fn an_option_of_the_service_is_refused_only_when_given() {
        check(&[]).unwrap();
        check(&["--concurrency", "4", "--delay", "0", "--no-sitemaps"]).unwrap();
        // Given at its default value it is still given: the worker would still ignore it.
        let e = check(&["--policy", "fica"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--policy does nothing in a crawl worker (--frontier)")
                && e.contains("`crawlrank frontier serve --policy`"),
            "{e}"
        );
        let e = check(&["--seen-cache", "100", "--rng-seed", "3", "--max-hops", "2"])
            .unwrap_err()
            .to_string();
        for needle in [
            "\n  --rng-seed: ",
            "`crawlrank frontier serve --rng-seed`",
            "\n  --seen-cache: ",
            "\n  --max-hops: ",
            "`crawlrank frontier serve --max-hops`",
        ] {
            assert!(e.contains(needle), "{needle} not in: {e}");
        }
    }
}
