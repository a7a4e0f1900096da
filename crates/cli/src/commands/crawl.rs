//! `crawlrank crawl`: a real, polite HTTP crawl in the order of a policy, resumable.

use super::crawl_args::{read_seeds, Args};
use super::crawl_stop::stop_on_signals;
use anyhow::{ensure, Context, Result};
use crawlrank_crawler::{
    CrawlConfig, CrawlLimits, CrawlReport, HopLimits, PolicySettings, Politeness, Progress,
    Resources, ScopeKind, SearchLog, StopReason, UrlLimits,
};
use crawlrank_frontier::PolicyKind;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `--progress-log` file: one line of counters per interval, the last seen always
/// written at the end. A failed write is reported once and ends the log, not the crawl.
struct ProgressLog {
    out: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    start: Instant,
    last_written: Option<Instant>,
    /// The latest progress not yet written.
    pending: Option<Progress>,
    failed: bool,
}

/// Time between two lines of the progress log.
const PROGRESS_LOG_INTERVAL: Duration = Duration::from_secs(1);

/// The progress log's columns, in order.
const PROGRESS_LOG_HEADER: &str = "elapsed_s\tpages_this_run\tpages_total\tpages_per_sec\tfrontier\twaiting\tin_flight\tidle_connections\tfetch_limit\thosts\tdiscovered\terrors\tfd_shortages\thosts_active";

impl ProgressLog {
    fn create(path: &Path) -> Result<Self> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot create the progress log {}", path.display()))?;
        let mut log = Self {
            out: std::io::BufWriter::new(file),
            path: path.to_path_buf(),
            start: Instant::now(),
            last_written: None,
            pending: None,
            failed: false,
        };
        log.write_line(PROGRESS_LOG_HEADER)
            .with_context(|| format!("cannot write the progress log {}", path.display()))?;
        Ok(log)
    }

    /// Writes one whole line and flushes it, so a reader never sees half a line for long.
    fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// Takes a progress report; writes it when the interval has passed since the last line.
    fn record(&mut self, p: &Progress) {
        let due = self
            .last_written
            .is_none_or(|t| t.elapsed() >= PROGRESS_LOG_INTERVAL);
        self.pending = Some(p.clone());
        if due {
            self.flush_pending();
        }
    }

    /// Writes the latest progress report if it was not written yet.
    fn flush_pending(&mut self) {
        let Some(p) = self.pending.take() else {
            return;
        };
        if self.failed {
            return;
        }
        self.last_written = Some(Instant::now());
        let line = format!(
            "{:.3}\t{}\t{}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.start.elapsed().as_secs_f64(),
            p.pages_this_run,
            p.pages_total,
            p.pages_per_sec,
            p.frontier,
            p.waiting,
            p.in_flight,
            p.idle_connections,
            p.fetch_limit,
            p.hosts,
            p.discovered,
            p.errors,
            p.fd_shortages,
            p.hosts_active
        );
        if let Err(e) = self.write_line(&line) {
            self.failed = true;
            eprintln!(
                "crawlrank: warning: cannot write the progress log {} ({e}); the crawl goes on without it",
                self.path.display()
            );
        }
    }
}

/// Serves the ended crawl's dashboard `for_how_long` more (a stop request ends the wait),
/// then stops it.
fn linger(server: crawlrank_dashboard::DashboardHandle, for_how_long: Duration, stop: &AtomicBool) {
    // A crawl stopped by Ctrl-C does not linger.
    if !for_how_long.is_zero() && !stop.load(Ordering::SeqCst) {
        eprintln!(
            "dashboard: serving the ended crawl for {} s more at {}",
            for_how_long.as_secs(),
            server.url()
        );
        let until = Instant::now() + for_how_long;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    if let Err(e) = server.shutdown() {
        eprintln!("crawlrank: warning: {e:#}");
    }
}

/// Runs `crawl`: `given` is the command's matches, which say which options were given on
/// the command line (a worker refuses some of them).
pub fn run(args: Args, given: &clap::ArgMatches) -> Result<()> {
    if args.worker.frontier.is_some() {
        return super::crawl_worker::run(args, given);
    }
    let c = crawl_config(&args)?;
    // Bound before the state is opened: a port in use ends the command before the crawl
    // touches anything.
    let dashboard = start_dashboard(&args)?;
    let mut log = args
        .report
        .progress_log
        .as_deref()
        .map(ProgressLog::create)
        .transpose()?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(stop.clone())?;
    let pb = crate::progress::bar(None, "pages");
    pb.set_prefix("crawl");
    let result = crawlrank_crawler::crawl(&c, &stop, &mut |p| {
        if let Some(log) = log.as_mut() {
            log.record(p);
        }
        if let Some((dash, _)) = &dashboard {
            dash.record(&p.dashboard_numbers());
        }
        pb.set_position(p.pages_this_run);
        pb.set_message(String::new());
        pb.set_prefix(progress_prefix(p));
    });
    // The last counters are logged even when the crawl failed: they show where it stood.
    if let Some(log) = log.as_mut() {
        log.flush_pending();
    }
    if let Some((dash, server)) = dashboard {
        dash.set_running(false);
        // A failed crawl does not linger: its error comes first.
        let linger_for = match &result {
            Ok(_) => Duration::from_secs(args.report.dashboard_linger),
            Err(_) => Duration::ZERO,
        };
        linger(server, linger_for, &stop);
    }
    let report = result?;
    pb.finish_and_clear();
    print_report(&report);
    ensure_some_page_answered(&report)?;
    if report.stop != StopReason::Exhausted {
        println!(
            "resume with: crawlrank crawl --state {} --policy {}{}{}",
            args.state.display(),
            args.ordering.policy,
            resume_options(&args),
            if report.pending > 0 {
                format!(
                    "  ({} pages in flight will be fetched first)",
                    report.pending
                )
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// The crawl's configuration from the options: the policy and its search log checked and
/// read, the seeds read, the dashboard's tables asked for when there is a dashboard.
fn crawl_config(args: &Args) -> Result<CrawlConfig> {
    let policy = PolicyKind::parse(&args.ordering.policy)?;
    ensure!(
        args.ordering.gamma.is_finite() && args.ordering.gamma >= 0.0,
        "--gamma must be a finite number ≥ 0, not {}",
        args.ordering.gamma
    );
    // Checked before the state is opened, so that a forgotten option leaves nothing behind
    // (the engine checks again, and checks a resumed crawl's log against its digest).
    ensure!(
        !policy.needs_impact() || args.ordering.impact.is_some(),
        "the policy {policy} orders the crawl by the impact of pages: give a search log, \
         --impact FILE (docs/impact-input.md)"
    );
    ensure!(
        policy.needs_impact() || args.ordering.impact.is_none(),
        "--impact is read by the policies rw, rw-eg and learned only, not by {policy}"
    );
    let impacts = match &args.ordering.impact {
        Some(path) => {
            let log = SearchLog::read(path, args.ordering.impact_column.as_deref())?;
            eprintln!("{}", log.summary);
            Some(Arc::new(log))
        }
        None => None,
    };
    let mut c = CrawlConfig {
        state_dir: args.state.clone(),
        seeds: match &args.seeds {
            Some(p) => read_seeds(p)?,
            None => Vec::new(),
        },
        max_pages: args.max_pages,
        policy: PolicySettings {
            kind: policy,
            expected_pages: args.ordering.expected_pages,
            batch: args.ordering.batch,
            rng_seed: args.ordering.rng_seed,
            impacts,
            omega: args.ordering.omega,
            gamma: args.ordering.gamma,
            ..PolicySettings::default()
        },
        politeness: Politeness {
            delay: Duration::from_millis(args.politeness.delay),
            max_retries: args.politeness.max_retries,
            max_retry_after: Duration::from_secs(args.politeness.max_retry_after),
            ..Politeness::default()
        },
        limits: CrawlLimits {
            urls: UrlLimits {
                max_urls: args.limits.max_urls,
                max_per_host: args.limits.max_pages_per_host,
                max_hosts_per_domain: args.limits.max_hosts_per_domain,
                max_per_domain: args.limits.max_urls_per_domain,
            },
            hops: HopLimits {
                max_hops: args.limits.max_hops,
                max_redirects: args.limits.max_redirects,
            },
        },
        resources: Resources {
            concurrency: args.resources.concurrency,
            max_idle_connections: args.resources.max_idle_connections,
            seen_cache: args.resources.seen_cache,
            frontier_hot: args.resources.frontier_hot,
            ..Resources::default()
        },
        scope: args.urls.scope_config(),
        ..CrawlConfig::default()
    };
    c.fetch = args.requests.fetch_config();
    // The dashboard's tables: the crawl computes them only when someone looks.
    c.report_top = if args.report.dashboard.is_some() {
        super::dashboard::TOP_URLS
    } else {
        0
    };
    Ok(c)
}

/// The live dashboard of `--dashboard ADDR`, its server listening, or `None` without it.
fn start_dashboard(
    args: &Args,
) -> Result<
    Option<(
        crawlrank_dashboard::DashboardState,
        crawlrank_dashboard::DashboardHandle,
    )>,
> {
    let Some(addr) = &args.report.dashboard else {
        return Ok(None);
    };
    let dash =
        crawlrank_dashboard::DashboardState::new(format!("live crawl of {}", args.state.display()));
    let server = super::dashboard::start(addr, args.report.dashboard_public, dash.clone())?;
    Ok(Some((dash, server)))
}

/// The progress bar's prefix: the crawl's rate and counters.
fn progress_prefix(p: &Progress) -> String {
    let short = if p.fd_shortages > 0 {
        format!(
            ", out of file descriptors {} times (in flight at most {} now)",
            p.fd_shortages, p.fetch_limit
        )
    } else {
        String::new()
    };
    format!(
        "crawl {:.0} pages/s, frontier {}, waiting {}, in flight {}, idle connections {}, hosts {} ({} active), errors {}{short} |",
        p.pages_per_sec, p.frontier, p.waiting, p.in_flight, p.idle_connections, p.hosts, p.hosts_active, p.errors
    )
}

/// What the crawl did: why it stopped, its pages, the WARC's repairs, the seen set, the
/// frontier's spill, and its counters.
fn print_report(report: &CrawlReport) {
    let why = match report.stop {
        StopReason::Exhausted => "the frontier is empty",
        StopReason::MaxPages => "--max-pages reached",
        StopReason::Interrupted => "interrupted",
    };
    println!(
        "crawl stopped: {why}; {} pages finished this run in {:.1} s ({:.0} pages/s); {} URLs discovered on {} hosts, {} in the frontier",
        report.pages_this_run,
        report.elapsed.as_secs_f64(),
        report.pages_this_run as f64 / report.elapsed.as_secs_f64().max(1e-9),
        report.discovered,
        report.hosts,
        report.frontier
    );
    if let Some(d) = &report.warc_recovery.damage {
        println!(
            "WARC damaged: {} held {} bytes where the state committed {}; cut back to its last whole record \
             ({} bytes), {} crawled pages whose records were lost fetched again for the archive",
            d.path.display(),
            d.found,
            d.committed,
            d.kept,
            d.lost_pages
        );
    }
    if !report.warc_recovery.removed.is_empty() {
        println!(
            "WARC: removed {} file(s) started after the last commit",
            report.warc_recovery.removed.len()
        );
    }
    let seen = report.seen;
    println!(
        "seen-set lookups this run: {} answered new by the filter, {} from memory, {} read from the state",
        seen.filtered, seen.in_memory, seen.disk_reads
    );
    if let Some(sp) = report
        .spill
        .as_ref()
        .filter(|sp| sp.runs > 0 || sp.write_failures > 0)
    {
        println!(
            "frontier: {} entries in memory, {} spilled to {} sorted runs",
            sp.hot, sp.cold, sp.runs
        );
        if sp.write_failures > 0 {
            println!(
                "frontier: {} spill writes failed and kept {} entries in memory instead; last: {}",
                sp.write_failures,
                sp.memory_records,
                sp.last_write_error.as_deref().unwrap_or("?")
            );
        }
    }
    let r = report.reorders;
    if r.background > 0 {
        println!(
            "reorders on the frontier's thread: {} taking {:.1} s, the crawl waited {:.1} s for them and took in {} pages meanwhile",
            r.background,
            r.busy.as_secs_f64(),
            r.waited.as_secs_f64(),
            r.crawled_during
        );
    }
    print!("{}", report.stats.pages_summary());
    println!("counters (all runs):");
    print!("{}", report.stats);
}

/// An error when the crawl ran out of URLs without a single page answered, with the likely
/// cause.
fn ensure_some_page_answered(report: &CrawlReport) -> Result<()> {
    if report.stop == StopReason::Exhausted && report.stats.pages_answered() == 0 {
        let st = &report.stats;
        let hint = if st.private_address_refused > 0 {
            "; private addresses refused: only the seeds' own hosts may be at loopback or \
             private addresses, unless --allow-private-networks"
        } else if st.tls_errors > 0 {
            "; TLS failures: is the server's certificate trusted (--ca-cert FILE)?"
        } else if st.dns_errors > 0 {
            "; DNS failures: do the seeds' host names exist?"
        } else {
            "; check the seeds and the network"
        };
        anyhow::bail!(
            "no page could be fetched: the seeds' hosts did not answer ({} fetch errors: {} DNS, {} TLS, \
             {} private address; {} timeouts) or their robots.txt could not be read or disallows them \
             ({} pages){hint}",
            st.fetch_errors,
            st.dns_errors,
            st.tls_errors,
            st.private_address_refused,
            st.timeouts,
            st.robots_disallowed
        );
    }
    Ok(())
}

/// The options a resumed crawl must repeat besides `--state` and `--policy`: the search log,
/// and the scope and private-network rules (not stored in the state).
fn resume_options(args: &Args) -> String {
    let mut more = match (&args.ordering.impact, &args.ordering.impact_column) {
        (Some(p), Some(k)) => format!(" --impact {} --impact-column {k}", p.display()),
        (Some(p), None) => format!(" --impact {}", p.display()),
        _ => String::new(),
    };
    // The scope is not stored: the hint repeats it.
    match args.urls.scope {
        ScopeKind::Any => {}
        ScopeKind::Domain => more.push_str(" --scope domain"),
        ScopeKind::Host => more.push_str(" --scope host"),
    }
    for r in &args.urls.include {
        more.push_str(&format!(" --include '{r}'"));
    }
    for r in &args.urls.exclude {
        more.push_str(&format!(" --exclude '{r}'"));
    }
    if args.requests.allow_private_networks {
        more.push_str(" --allow-private-networks");
    }
    more
}
