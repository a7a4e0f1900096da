//! The synthetic-web model: hosts, their page layout, and each page's links.
//!
//! See `docs/generator.md` for the model with its formulas; the names used there are the
//! fields of [`ModelParams`]. Everything here is a pure function of the configuration and the
//! seed: the host table is drawn once from one stream, each host's layout from the stream
//! `(seed, LAYOUT, host)` and each host's links from the stream `(seed, LINKS, host)`, so
//! hosts can be generated in any order, on any number of threads, with identical results.

use crate::names;
use crate::GenConfig;
use anyhow::{ensure, Result};
use crawlrank_rng::{stream_key, Xoshiro256PlusPlus, Zipf};

const HOSTS: u64 = 1;
const LAYOUT: u64 = 2;
const LINKS: u64 = 3;
const SCATTER: u64 = 4;

/// The parameters of the model (see `docs/generator.md`). The defaults are calibrated on
/// LAW's cnr-2000 crawl; [`GenConfig`] holds the ones that set the size.
///
/// `#[non_exhaustive]`: start from `ModelParams::default()` and change fields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelParams {
    /// Tail index β of the host-size law (`P(size > x) ~ x^-β`).
    pub host_size_tail: f64,
    /// No host gets more than this fraction of the pages (a crawler's per-host budget).
    pub max_host_fraction: f64,
    /// Probability that a new host starts a new registrable domain (else it joins the domain
    /// of a uniformly chosen earlier host, so domain sizes are heavy-tailed too).
    pub new_domain: f64,
    /// Pages directly under `/` besides the home page (`/pageM.html`).
    pub root_pages: u64,
    /// Directory sizes: `min(⌊scale · Pareto(tail)⌋, max)` pages, index page included; this
    /// is the scale.
    pub dir_size_scale: f64,
    /// Tail index of the directory sizes' Pareto law.
    pub dir_size_tail: f64,
    /// Largest directory, in pages (index page included).
    pub dir_size_max: u64,
    /// The directories form a complete `dir_fanout`-ary tree under the home page.
    pub dir_fanout: u64,
    /// Probability that a directory is *closed*: its pages use no site template and link
    /// only inside the directory (archives, generated documentation, …).
    pub closed_dir: f64,
    /// Size of a host's menu (the site template's links): `min(⌊scale · Pareto(tail)⌋, max)`;
    /// this is the scale.
    pub menu_scale: f64,
    /// Tail index of the menu sizes' Pareto law.
    pub menu_tail: f64,
    /// Largest menu, in links.
    pub menu_max: u64,
    /// Probability that a page outside closed directories carries the site template.
    pub template: f64,
    /// Target fraction of dangling pages.
    pub dangling: f64,
    /// Probability that the only page of a one-page host is dangling (a discovered but
    /// uncrawled host).
    pub single_page_dangling: f64,
    /// Tail index of the content-outdegree law.
    pub outdegree_tail: f64,
    /// Largest content outdegree (a page's links besides the crawl tree, discovery and menu
    /// links).
    pub outdegree_max: u64,
    /// Probability of copying each content link of the previous page of the same directory,
    /// and of keeping its content outdegree (pages sharing a template look alike).
    pub copy: f64,
    /// Probability that a fresh content link (outside closed directories) leaves the host.
    pub external: f64,
    /// Share of the external links that go to another host of the same registrable domain.
    pub sibling: f64,
    /// Share of the other external links that point to the target host's home page.
    pub external_home: f64,
    /// Tail index of host fame, the Pareto factor of a host's attractiveness
    /// (`size^φ · Pareto(fame_tail)`).
    pub fame_tail: f64,
    /// Exponent `φ` of host size in a host's attractiveness.
    pub fame_size_exponent: f64,
    /// Share of the fresh intra-host links that are navigation links (home page, own
    /// directory index, a popular section); with [`local`](Self::local), the rest follow
    /// page popularity.
    pub navigation: f64,
    /// Share of the fresh intra-host links that are local links (nearby pages of the same
    /// directory).
    pub local: f64,
    /// Zipf exponent `s` of page popularity (in-degree exponent `γ ≈ 1 + 1/s`).
    pub popularity_zipf: f64,
    /// Share of the popularity-driven intra-host links that follow the popularity of the
    /// page's own directory rather than the host's (links stay close: web sites are
    /// organised by topic, and BVGraph codes short gaps in few bits).
    pub group_popularity: f64,
    /// Tail index of the distance of local links.
    pub local_distance_tail: f64,
    /// Probability that a non-dangling page links to itself (no other link is a self-loop).
    pub self_loop: f64,
    /// Pages per chunk of parallel compression (chunks are runs of whole hosts). Not part of
    /// the model: it changes how the `.graph` bitstream is cut (references never cross a
    /// chunk boundary), not the graph; it is fixed so that the files do not depend on the
    /// number of threads.
    pub chunk_pages: u64,
}

impl Default for ModelParams {
    fn default() -> Self {
        Self {
            host_size_tail: 1.1,
            max_host_fraction: 0.05,
            new_domain: 0.7,
            root_pages: 8,
            dir_size_scale: 6.0,
            dir_size_tail: 1.3,
            dir_size_max: 2000,
            dir_fanout: 16,
            closed_dir: 0.5,
            menu_scale: 5.0,
            menu_tail: 1.2,
            menu_max: 60,
            template: 0.9,
            dangling: 0.22,
            single_page_dangling: 0.5,
            outdegree_tail: 1.8,
            outdegree_max: 2000,
            copy: 0.85,
            external: 0.2,
            sibling: 0.15,
            external_home: 0.4,
            fame_tail: 1.5,
            fame_size_exponent: 0.5,
            navigation: 0.2,
            local: 0.1,
            popularity_zipf: 1.5,
            group_popularity: 0.7,
            local_distance_tail: 1.2,
            self_loop: 0.03,
            chunk_pages: 1 << 20,
        }
    }
}

impl ModelParams {
    /// Checks that probabilities are probabilities and tails are positive.
    pub fn validate(&self) -> Result<()> {
        let probs = [
            ("max_host_fraction", self.max_host_fraction),
            ("new_domain", self.new_domain),
            ("closed_dir", self.closed_dir),
            ("template", self.template),
            ("dangling", self.dangling),
            ("single_page_dangling", self.single_page_dangling),
            ("copy", self.copy),
            ("external", self.external),
            ("sibling", self.sibling),
            ("external_home", self.external_home),
            ("navigation", self.navigation),
            ("local", self.local),
            ("group_popularity", self.group_popularity),
            ("self_loop", self.self_loop),
        ];
        for (name, p) in probs {
            ensure!(
                (0.0..=1.0).contains(&p),
                "model parameter {name} = {p} is not in [0, 1]"
            );
        }
        ensure!(
            self.navigation + self.local <= 1.0,
            "navigation + local = {} exceeds 1",
            self.navigation + self.local
        );
        ensure!(
            self.max_host_fraction > 0.0,
            "max_host_fraction must be positive"
        );
        ensure!(self.dangling < 1.0, "dangling must be below 1");
        let positive = [
            ("host_size_tail", self.host_size_tail),
            ("dir_size_scale", self.dir_size_scale),
            ("dir_size_tail", self.dir_size_tail),
            ("menu_scale", self.menu_scale),
            ("menu_tail", self.menu_tail),
            ("outdegree_tail", self.outdegree_tail),
            ("fame_tail", self.fame_tail),
            ("popularity_zipf", self.popularity_zipf),
            ("local_distance_tail", self.local_distance_tail),
        ];
        for (name, x) in positive {
            ensure!(
                x.is_finite() && x > 0.0,
                "model parameter {name} = {x} must be positive"
            );
        }
        ensure!(
            self.fame_size_exponent.is_finite(),
            "fame_size_exponent must be finite"
        );
        for (name, x) in [
            ("dir_size_max", self.dir_size_max),
            ("outdegree_max", self.outdegree_max),
            ("dir_fanout", self.dir_fanout),
            ("chunk_pages", self.chunk_pages),
        ] {
            ensure!(x >= 1, "model parameter {name} must be at least 1");
        }
        Ok(())
    }
}

/// How a host's pages are laid out (local indices, in URL order): the home page `/` is 0,
/// directory `j` (in URL order) holds `[dir_off[j], dir_off[j+1])` — its index page first —
/// and the `root` root pages are last. `menu` (sorted local indices) is the site template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub k: u64,
    pub dir_off: Vec<u64>,
    pub closed: Vec<bool>,
    pub root: u64,
    pub menu: Vec<u64>,
}

impl Layout {
    pub fn dirs(&self) -> usize {
        self.dir_off.len().saturating_sub(1)
    }

    pub fn dir_sizes(&self) -> Vec<u64> {
        self.dir_off.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Pages with crawl-tree out-links: the home page (when the host has other pages) and
    /// every directory index page. They are never dangling.
    pub fn parents(&self) -> u64 {
        if self.k > 1 {
            1 + self.dirs() as u64
        } else {
            0
        }
    }

    /// Pages outside closed directories, and how many of them are parents.
    pub fn open_pages(&self) -> (u64, u64) {
        let mut pages = self.k;
        let mut parents = self.parents();
        for (j, &c) in self.closed.iter().enumerate() {
            if c {
                pages -= self.dir_off[j + 1] - self.dir_off[j];
                parents -= 1;
            }
        }
        (pages, parents)
    }
}

/// An affine bijection of `0..m` keyed by `key` (a prime multiplier above any `m` is coprime
/// with it): scatters popularity ranks over a host or a directory.
#[inline]
fn scatter(key: u64, m: u64, r: u64) -> u64 {
    const PRIMES: [u64; 4] = [
        2_305_843_009_213_693_951, // 2^61 − 1
        4_611_686_018_427_387_847,
        1_152_921_504_606_846_883,
        9_223_372_036_854_775_783,
    ];
    let a = PRIMES[(key & 3) as usize] as u128;
    ((a * r as u128 + (key >> 2) as u128) % m as u128) as u64
}

/// The synthetic web: every table the page generator needs, O(hosts) memory. It is also a
/// `webgraph` [`SequentialGraph`](webgraph::prelude::SequentialGraph) generating its arcs on
/// the fly.
#[derive(Debug, Clone)]
pub struct SyntheticWeb {
    pub(crate) params: ModelParams,
    pub(crate) seed: u64,
    pub(crate) n: u64,
    /// `host_start[h]..host_start[h+1]` are the nodes of host `h` (hosts in URL order).
    pub(crate) host_start: Vec<u64>,
    /// Host names, in URL order.
    pub(crate) host_names: Vec<String>,
    /// Registrable domain of each host, and the hosts of each domain (CSR).
    pub(crate) host_domain: Vec<u32>,
    pub(crate) domain_off: Vec<u32>,
    pub(crate) domain_hosts: Vec<u32>,
    /// Hosts drawn in proportion to their attractiveness for external links (fame).
    pub(crate) fame: Alias,
    /// Hosts whose home page is linked from host `h`'s home page (how the crawler found
    /// them): `discovered[discovered_off[h]..discovered_off[h+1]]`.
    pub(crate) discovered_off: Vec<u32>,
    pub(crate) discovered: Vec<u32>,
    /// Probability that a leaf page (neither home nor directory index) is dangling.
    pub(crate) leaf_dangling: f64,
    /// Content outdegree: `base + min(⌊λ(Pareto(a) − 1)⌋, max − base)`.
    pub(crate) deg_base: u64,
    pub(crate) deg_lambda: f64,
    /// Probability of keeping each scaffold link (crawl tree, discovery, menu): 1 unless the
    /// mean outdegree asked for is below what the scaffold alone needs.
    pub(crate) scaffold_keep: f64,
    /// Self-loop probability (`self_loop`, lowered if the mean outdegree is tiny).
    pub(crate) self_loop: f64,
    /// The hosts where the chunks compressed in parallel start (fixed by the configuration,
    /// so the output does not depend on the number of threads).
    pub(crate) chunk_hosts: Vec<usize>,
}

impl SyntheticWeb {
    /// Builds the model of `cfg` with the default parameters.
    pub fn new(cfg: &GenConfig) -> Result<Self> {
        Self::with_params(cfg, &ModelParams::default())
    }

    /// Builds the model of `cfg` with the given parameters.
    pub fn with_params(cfg: &GenConfig, params: &ModelParams) -> Result<Self> {
        cfg.validate()?;
        params.validate()?;
        let n = cfg.pages;
        let num_hosts = cfg.num_hosts();
        ensure!(num_hosts < u32::MAX as u64, "too many hosts");
        let p = params.clone();
        let mut rng = Xoshiro256PlusPlus::stream(cfg.seed, HOSTS, 0);

        // Host names and domains, in creation order, then sorted into URL order.
        let mut created: Vec<(String, u32)> = Vec::with_capacity(num_hosts as usize);
        let mut domain_of_created: Vec<u32> = Vec::with_capacity(num_hosts as usize);
        let mut domain_count: Vec<u32> = Vec::new();
        let mut domain_tld: Vec<u8> = Vec::new();
        let mut domain_bare: Vec<bool> = Vec::new();
        for j in 0..num_hosts {
            let d = if j == 0 || rng.chance(p.new_domain) {
                let u = rng.f64();
                let mut acc = 0.0;
                let mut tld = names::TLDS.len() - 1;
                for (t, (_, w)) in names::TLDS.iter().enumerate() {
                    acc += w;
                    if u < acc {
                        tld = t;
                        break;
                    }
                }
                domain_tld.push(tld as u8);
                domain_bare.push(rng.chance(0.2));
                domain_count.push(0);
                domain_count.len() as u32 - 1
            } else {
                domain_of_created[rng.below(j) as usize]
            };
            let m = domain_count[d as usize];
            domain_count[d as usize] += 1;
            let label = names::host_label(m as u64, domain_bare[d as usize]);
            let tld = names::TLDS[domain_tld[d as usize] as usize].0;
            created.push((names::host_name(&label, d as u64, tld), d));
            domain_of_created.push(d);
        }
        drop(domain_of_created);
        // URL order: by `name + "/"` (see `names`). Names are distinct by construction.
        created.sort_unstable_by(|a, b| {
            a.0.as_bytes()
                .iter()
                .chain(b"/")
                .cmp(b.0.as_bytes().iter().chain(b"/"))
        });
        let num_domains = domain_count.len();
        let mut host_names = Vec::with_capacity(created.len());
        let mut host_domain = Vec::with_capacity(created.len());
        for (name, d) in created {
            host_names.push(name);
            host_domain.push(d);
        }
        let (domain_off, domain_hosts) = invert(num_domains, &host_domain);

        // Host sizes: 1 + ⌊λ(T − 1)⌋ with T ~ Pareto(β), capped, λ fitted so they sum to n.
        let t: Vec<f64> = (0..num_hosts)
            .map(|_| rng.pareto(p.host_size_tail) - 1.0)
            .collect();
        let cap = ((n as f64 * p.max_host_fraction).ceil() as u64)
            .max(n.div_ceil(num_hosts))
            .min(n);
        let size = |x: f64, lambda: f64| (1 + (x * lambda).min(cap as f64) as u64).min(cap);
        let total = |lambda: f64| -> u64 { t.iter().map(|&x| size(x, lambda)).sum() };
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while total(hi) < n && hi < 1e18 {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if total(mid) <= n {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut sizes: Vec<u64> = t.iter().map(|&x| size(x, lo)).collect();
        let mut deficit = n - sizes.iter().sum::<u64>();
        while deficit > 0 {
            for s in sizes.iter_mut() {
                if deficit == 0 {
                    break;
                }
                if *s < cap {
                    *s += 1;
                    deficit -= 1;
                }
            }
        }
        drop(t);
        let mut host_start = Vec::with_capacity(sizes.len() + 1);
        host_start.push(0u64);
        for &s in &sizes {
            host_start.push(host_start.last().unwrap() + s);
        }

        // Fame: size^φ · Pareto(fame_tail).
        let fame: Vec<f64> = sizes
            .iter()
            .map(|&s| (s as f64).powf(p.fame_size_exponent) * rng.pareto(p.fame_tail))
            .collect();
        let fame = Alias::new(&fame);

        // Discovery: every host is linked from the home page of a uniformly chosen other host
        // with more than one page (whose home page is never dangling).
        let multi: Vec<u32> = (0..sizes.len() as u32)
            .filter(|&h| sizes[h as usize] > 1)
            .collect();
        let mut parent = vec![u32::MAX; sizes.len()];
        for (h, ph) in parent.iter_mut().enumerate() {
            if multi.len() > 1 || (multi.len() == 1 && multi[0] as usize != h) {
                loop {
                    let g = multi[rng.below(multi.len() as u64) as usize];
                    if g as usize != h {
                        *ph = g;
                        break;
                    }
                }
            }
        }
        let mut by_parent: Vec<(u32, u32)> = parent
            .iter()
            .enumerate()
            .filter(|(_, &g)| g != u32::MAX)
            .map(|(h, &g)| (g, h as u32))
            .collect();
        by_parent.sort_unstable();
        let mut discovered_off = vec![0u32; sizes.len() + 1];
        for &(g, _) in &by_parent {
            discovered_off[g as usize + 1] += 1;
        }
        for i in 0..sizes.len() {
            discovered_off[i + 1] += discovered_off[i];
        }
        let discovered: Vec<u32> = by_parent.into_iter().map(|(_, h)| h).collect();
        drop(parent);

        // Parallel chunks: whole hosts, about `chunk_pages` nodes each.
        let mut chunk_hosts = vec![0usize];
        let mut since = 0u64;
        for (h, &s) in sizes.iter().enumerate() {
            if since >= p.chunk_pages {
                chunk_hosts.push(h);
                since = 0;
            }
            since += s;
        }
        chunk_hosts.push(sizes.len());

        let mut web = Self {
            params: p,
            seed: cfg.seed,
            n,
            host_start,
            host_names,
            host_domain,
            domain_off,
            domain_hosts,
            fame,
            discovered_off,
            discovered,
            leaf_dangling: 0.0,
            deg_base: 0,
            deg_lambda: 0.0,
            scaffold_keep: 1.0,
            self_loop: 0.0,
            chunk_hosts,
        };
        web.calibrate(cfg.outdegree);
        Ok(web)
    }

    /// Fits the leaf dangling probability and the content-outdegree law to the targets, from
    /// the exact layouts (recomputed rather than stored: two cheap passes, O(1) memory).
    ///
    /// Parents are never dangling, so the leaf dangling probability makes the expected
    /// number of dangling pages `dangling · n`. The mean outdegree `d̄` is split into scaffold
    /// links (crawl tree, discovery, menus: counted exactly, in expectation), self-loops, and
    /// content links: the content law's scale λ is then solved (bisection) so that
    /// `Σ_pages E[min(d, cap_page)] = d̄·n − scaffold − self-loops`, where `cap_page` is what a
    /// page can reach (in a closed directory, the other pages of the directory; elsewhere,
    /// unlimited since external links are always available).
    fn calibrate(&mut self, mean_outdegree: f64) {
        let p = self.params.clone();
        let max = p.outdegree_max as usize;
        let (mut parents, mut singles) = (0u64, 0u64);
        for h in 0..self.num_hosts() {
            let l = self.layout(h);
            parents += l.parents();
            singles += u64::from(l.k == 1);
        }
        let n = self.n as f64;
        let leaves = self.n - parents - singles;
        self.leaf_dangling = if leaves == 0 {
            0.0
        } else {
            ((p.dangling * n - p.single_page_dangling * singles as f64) / leaves as f64)
                .clamp(0.0, 0.99)
        };
        let live = 1.0 - self.leaf_dangling;
        let single_host = self.num_hosts() == 1;
        // `weight[c]`: expected non-dangling pages whose content outdegree is capped at `c`.
        let mut weight = vec![0f64; max + 1];
        let mut scaffold = self.discovered.len() as f64;
        for h in 0..self.num_hosts() {
            let l = self.layout(h);
            scaffold += (l.k - 1) as f64;
            let (open, open_parents) = l.open_pages();
            let users = open_parents as f64 + (open - open_parents) as f64 * live;
            // Every template page links to the whole menu, except to itself.
            let m = l.menu.len() as f64;
            scaffold += p.template * (users * m - m).max(0.0);
            let open_cap = if single_host {
                (l.k as usize).saturating_sub(1).min(max)
            } else {
                max
            };
            if l.k == 1 {
                weight[open_cap] += 1.0 - p.single_page_dangling;
                continue;
            }
            weight[open_cap] += 1.0 + l.root as f64 * live;
            for (j, &closed) in l.closed.iter().enumerate() {
                let s = l.dir_off[j + 1] - l.dir_off[j];
                if closed {
                    // The index page already links to every page of its directory.
                    weight[0] += 1.0;
                    weight[((s - 1) as usize).min(max)] += (s - 1) as f64 * live;
                } else {
                    weight[open_cap] += 1.0 + (s - 1) as f64 * live;
                }
            }
        }
        let non_dangling: f64 = weight.iter().sum();
        let budget = mean_outdegree * n;
        self.scaffold_keep = if scaffold > budget && scaffold > 0.0 {
            budget / scaffold
        } else {
            1.0
        };
        let left = (budget - scaffold * self.scaffold_keep).max(0.0);
        self.self_loop = if non_dangling * p.self_loop > left {
            left / non_dangling
        } else {
            p.self_loop
        };
        let content = (left - non_dangling * self.self_loop).max(0.0);
        let mu = if non_dangling > 0.0 {
            content / non_dangling
        } else {
            0.0
        };
        self.deg_base = u64::from(mu >= 1.0);
        let base = self.deg_base as usize;
        let a = p.outdegree_tail;
        // Σ_c weight[c] · E[min(d, c)], with E[min(d, c)] = Σ_{j=1}^{c} P(d ≥ j) and
        // P(d ≥ j) = 1 for j ≤ base, (1 + (j − base)/λ)^(−a) above; increasing in λ.
        let expected = |lambda: f64| -> f64 {
            let mut total = 0.0;
            let mut e_min = 0.0; // E[min(d, c)] for the current c
            for (c, &w) in weight.iter().enumerate() {
                if c > 0 {
                    e_min += if c <= base {
                        1.0
                    } else if lambda > 0.0 {
                        (1.0 + (c - base) as f64 / lambda).powf(-a)
                    } else {
                        0.0
                    };
                }
                total += w * e_min;
            }
            total
        };
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while expected(hi) < content && hi < 1e12 {
            hi *= 2.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if expected(mid) < content {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        self.deg_lambda = 0.5 * (lo + hi);
    }

    /// Number of pages.
    pub fn num_pages(&self) -> u64 {
        self.n
    }

    /// Number of hosts.
    pub fn num_hosts(&self) -> usize {
        self.host_names.len()
    }

    /// Number of registrable domains.
    pub fn num_domains(&self) -> usize {
        self.domain_off.len() - 1
    }

    /// The name of host `h` (hosts are numbered in URL order).
    pub fn host_name(&self, h: usize) -> &str {
        &self.host_names[h]
    }

    /// The nodes of host `h`.
    pub fn host_nodes(&self, h: usize) -> std::ops::Range<u64> {
        self.host_start[h]..self.host_start[h + 1]
    }

    /// The host of every node (`host_of[v]`), e.g. for `crawlrank_graph::stats`.
    pub fn host_of(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.n as usize);
        for h in 0..self.num_hosts() {
            let r = self.host_nodes(h);
            v.extend(std::iter::repeat_n(h as u32, (r.end - r.start) as usize));
        }
        v
    }

    /// The host containing node `v`.
    pub fn host_of_node(&self, v: u64) -> usize {
        self.host_start.partition_point(|&s| s <= v) - 1
    }

    /// Writes the URL of every node, one per line, in node order.
    pub fn write_urls(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        for h in 0..self.num_hosts() {
            let l = self.layout(h);
            names::write_host_urls(w, &self.host_names[h], &l.dir_sizes(), l.root)?;
        }
        Ok(())
    }

    /// The layout of host `h`: directories, which are closed, and the menu.
    pub(crate) fn layout(&self, h: usize) -> Layout {
        let k = self.host_start[h + 1] - self.host_start[h];
        let p = &self.params;
        let mut rng = Xoshiro256PlusPlus::stream(self.seed, LAYOUT, h as u64);
        let mut dir_off = Vec::new();
        let mut closed = Vec::new();
        let root = if k <= 1 + p.root_pages {
            k - 1
        } else {
            dir_off.push(1u64);
            let mut left = k - 1 - p.root_pages;
            while left > 0 {
                let s = ((p.dir_size_scale * rng.pareto(p.dir_size_tail)) as u64)
                    .clamp(1, p.dir_size_max)
                    .min(left);
                left -= s;
                dir_off.push(dir_off.last().unwrap() + s);
                closed.push(rng.chance(p.closed_dir));
            }
            p.root_pages
        };
        // The menu: the home page, the first top-level sections, then popular pages.
        let mut menu = Vec::new();
        if k > 1 {
            let m = ((p.menu_scale * rng.pareto(p.menu_tail)) as u64)
                .clamp(1, p.menu_max)
                .min(k);
            menu.push(0);
            let sections = (m.saturating_sub(1) / 2).min(p.dir_fanout) as usize;
            for &off in dir_off.iter().take(sections.min(closed.len())) {
                menu.push(off);
            }
            let mut r = 1;
            while (menu.len() as u64) < m && r < k {
                menu.push(self.ranked_page(h, k, r));
                r += 1;
            }
            menu.sort_unstable();
            menu.dedup();
        }
        Layout {
            k,
            dir_off,
            closed,
            root,
            menu,
        }
    }

    /// Content-outdegree law: a shifted, truncated discrete Pareto.
    #[inline]
    fn content_degree(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        let base = self.deg_base;
        if self.deg_lambda <= 0.0 {
            return base;
        }
        let room = self.params.outdegree_max.saturating_sub(base);
        let x = self.deg_lambda * (rng.pareto(self.params.outdegree_tail) - 1.0);
        base + (x.min(room as f64) as u64).min(room)
    }

    /// A uniform random host of `h`'s domain other than `h`, if there is one.
    #[inline]
    fn sibling(&self, h: usize, rng: &mut Xoshiro256PlusPlus) -> Option<usize> {
        let d = self.host_domain[h] as usize;
        let (a, b) = (self.domain_off[d] as u64, self.domain_off[d + 1] as u64);
        if b - a < 2 {
            return None;
        }
        let mut i = a + rng.below(b - a - 1);
        if self.domain_hosts[i as usize] as usize == h {
            i = b - 1;
        }
        Some(self.domain_hosts[i as usize] as usize)
    }

    /// A host drawn in proportion to fame.
    #[inline]
    fn famous_host(&self, rng: &mut Xoshiro256PlusPlus) -> usize {
        self.fame.sample(rng)
    }

    /// The local index of the page of popularity rank `r` in host `h` of `k` pages: rank 0
    /// is the home page, the others are scattered over the host.
    #[inline]
    fn ranked_page(&self, h: usize, k: u64, r: u64) -> u64 {
        if r == 0 || k <= 2 {
            return r;
        }
        1 + scatter(stream_key(self.seed, SCATTER, h as u64), k - 1, r - 1)
    }
}

/// Walker's alias method (Vose's construction): draws `i` with probability `w_i / Σ w` in
/// O(1) with two memory accesses (a binary search over a million hosts' cumulative weights
/// would miss the cache at every step).
#[derive(Debug, Clone)]
pub(crate) struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    /// `weights` must be non-empty, finite and non-negative with a positive sum.
    pub fn new(weights: &[f64]) -> Self {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut p: Vec<f64> = weights.iter().map(|&w| w * n as f64 / total).collect();
        let mut prob = vec![1.0; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let mut small: Vec<u32> = (0..n as u32).filter(|&i| p[i as usize] < 1.0).collect();
        let mut large: Vec<u32> = (0..n as u32).filter(|&i| p[i as usize] >= 1.0).collect();
        while let (Some(&l), Some(sm)) = (large.last(), small.pop()) {
            prob[sm as usize] = p[sm as usize];
            alias[sm as usize] = l;
            p[l as usize] += p[sm as usize] - 1.0;
            if p[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        Self { prob, alias }
    }

    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> usize {
        let i = rng.below(self.prob.len() as u64) as usize;
        if rng.f64() < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }
}

/// `(offsets, members)` of the groups `0..groups` given the group of each member.
fn invert(groups: usize, group_of: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; groups + 1];
    for &g in group_of {
        off[g as usize + 1] += 1;
    }
    for i in 0..groups {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut members = vec![0u32; group_of.len()];
    for (x, &g) in group_of.iter().enumerate() {
        members[fill[g as usize] as usize] = x as u32;
        fill[g as usize] += 1;
    }
    (off, members)
}

/// What a page is in its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Home,
    Index(usize),
    DirPage(usize),
    Root,
}

/// Generates the pages of one host in order.
pub(crate) struct HostGen<'a> {
    web: &'a SyntheticWeb,
    h: usize,
    base: u64,
    layout: Layout,
    rng: Xoshiro256PlusPlus,
    /// Next local index and the directory it is in (or past).
    i: u64,
    dir: usize,
    /// Content links (global ids) of the latest non-dangling page of the current group.
    proto: Vec<u64>,
    proto_group: Option<Role>,
    /// The content outdegree drawn for that page.
    proto_d: Option<u64>,
    content: Vec<u64>,
    /// Popularity laws over the host's pages, its directories and the current group.
    host_zipf: Zipf,
    dirs_zipf: Option<Zipf>,
    group_zipf: Option<Zipf>,
}

impl<'a> HostGen<'a> {
    pub fn new(web: &'a SyntheticWeb, h: usize) -> Self {
        let layout = web.layout(h);
        let s = web.params.popularity_zipf;
        Self {
            web,
            h,
            base: web.host_start[h],
            host_zipf: Zipf::new(layout.k.max(1), s),
            dirs_zipf: (layout.dirs() > 0).then(|| Zipf::new(layout.dirs() as u64, 1.0)),
            group_zipf: None,
            layout,
            rng: Xoshiro256PlusPlus::stream(web.seed, LINKS, h as u64),
            i: 0,
            dir: 0,
            proto: Vec::new(),
            proto_group: None,
            proto_d: None,
            content: Vec::new(),
        }
    }

    /// Whether every page has been generated.
    pub fn done(&self) -> bool {
        self.i >= self.layout.k
    }

    /// The next node's id.
    pub fn next_node(&self) -> u64 {
        self.base + self.i
    }

    fn role(&mut self) -> Role {
        let i = self.i;
        let l = &self.layout;
        if i == 0 {
            return Role::Home;
        }
        if i >= l.k - l.root {
            return Role::Root;
        }
        while l.dir_off[self.dir + 1] <= i {
            self.dir += 1;
        }
        if l.dir_off[self.dir] == i {
            Role::Index(self.dir)
        } else {
            Role::DirPage(self.dir)
        }
    }

    /// The local range of the group of a page (for local links and copying).
    fn group(&self, r: Role) -> (u64, u64) {
        let l = &self.layout;
        match r {
            Role::Home => (0, l.k),
            Role::Index(j) | Role::DirPage(j) => (l.dir_off[j], l.dir_off[j + 1]),
            Role::Root => (l.k - l.root, l.k),
        }
    }

    fn closed(&self, r: Role) -> bool {
        match r {
            Role::Index(j) | Role::DirPage(j) => self.layout.closed[j],
            _ => false,
        }
    }

    /// Generates the next page's successors (sorted, distinct) into `out`.
    pub fn next_page(&mut self, out: &mut Vec<usize>) {
        out.clear();
        let web = self.web;
        let p = &web.params;
        let role = self.role();
        let i = self.i;
        let v = self.base + i;
        let k = self.layout.k;
        self.i += 1;

        let group_key = match role {
            Role::Index(j) | Role::DirPage(j) => Role::DirPage(j),
            r => r,
        };
        if self.proto_group != Some(group_key) {
            self.proto.clear();
            self.proto_d = None;
            let (ga, gb) = self.group(role);
            self.group_zipf = Some(Zipf::new((gb - ga).max(1), p.popularity_zipf));
            self.proto_group = Some(group_key);
        }

        let dangling = match role {
            Role::Home if k == 1 => self.rng.chance(p.single_page_dangling),
            Role::Home | Role::Index(_) => false,
            _ => self.rng.chance(web.leaf_dangling),
        };
        if dangling {
            return;
        }
        let closed = self.closed(role);

        // Scaffold first: the site template, the crawl tree, hosts discovered from here.
        if !closed && self.rng.chance(p.template) {
            out.extend(self.layout.menu.iter().map(|&m| (self.base + m) as usize));
        }
        self.crawl_tree(role, out);
        if role == Role::Home {
            let (a, b) = (
                web.discovered_off[self.h] as usize,
                web.discovered_off[self.h + 1] as usize,
            );
            out.extend(
                web.discovered[a..b]
                    .iter()
                    .map(|&g| web.host_start[g as usize] as usize),
            );
        }
        let keep = web.scaffold_keep;
        let mut w = 0;
        for r in 0..out.len() {
            let t = out[r];
            if t != v as usize && (keep >= 1.0 || self.rng.chance(keep)) {
                out[w] = t;
                w += 1;
            }
        }
        out.truncate(w);
        out.sort_unstable();
        out.dedup();
        let scaffold_len = out.len();

        // Content links, distinct from the scaffold and from this page: copied from the
        // previous page of the group, then fresh ones until there are `d`.
        // Pages sharing a template have similar link counts: keep the previous page's content
        // outdegree with probability `copy` (the marginal law is unchanged).
        let d = match self.proto_d {
            Some(d) if self.rng.chance(p.copy) => d,
            _ => web.content_degree(&mut self.rng),
        };
        self.proto_d = Some(d);
        let mut content = std::mem::take(&mut self.content);
        content.clear();
        let taken = |t: u64, out: &[usize]| t == v || out.binary_search(&(t as usize)).is_ok();
        if !self.proto.is_empty() && d > 0 {
            let q = p.copy.min(d as f64 / self.proto.len() as f64);
            for &u in &self.proto {
                if self.rng.chance(q) && !taken(u, out) {
                    content.push(u);
                }
            }
            content.truncate(d as usize);
        }
        let (ga, gb) = self.group(role);
        let limit = 8 * d + 32;
        let mut tries = 0;
        loop {
            content.sort_unstable();
            content.dedup();
            if content.len() as u64 >= d || tries >= limit {
                break;
            }
            let missing = d - content.len() as u64;
            for _ in 0..missing {
                let t = self.fresh(role, closed, i, ga, gb);
                if !taken(t, out) {
                    content.push(t);
                }
            }
            tries += missing;
        }
        // Small webs can run out of distinct popular targets: outside closed directories,
        // complete with uniform pages of the host, then of the web (rare at scale).
        if (content.len() as u64) < d && !closed {
            for round in 0..4 {
                let missing = d.saturating_sub(content.len() as u64);
                for _ in 0..missing {
                    let t = if round < 2 {
                        self.base + self.rng.below(k)
                    } else {
                        self.rng.below(web.n)
                    };
                    if !taken(t, out) {
                        content.push(t);
                    }
                }
                content.sort_unstable();
                content.dedup();
            }
        }
        // This page is the template of the next one of its group.
        self.proto.clear();
        self.proto.extend_from_slice(&content);
        out.extend(content.iter().map(|&u| u as usize));
        self.content = content;
        if self.rng.chance(web.self_loop) {
            out.push(v as usize);
        }
        if out.len() > scaffold_len {
            out.sort_unstable();
        }
    }

    /// The crawl tree: the home page links to the root pages and the first `fanout`
    /// directory indices; index `j` links to its directory's pages and to the indices of
    /// directories `(j+1)·fanout … (j+1)·fanout + fanout − 1`.
    fn crawl_tree(&self, role: Role, out: &mut Vec<usize>) {
        let l = &self.layout;
        let f = self.web.params.dir_fanout as usize;
        let base = self.base as usize;
        let first_child_dir = match role {
            Role::Home => {
                out.extend((l.k - l.root..l.k).map(|x| base + x as usize));
                0
            }
            Role::Index(j) => {
                out.extend((l.dir_off[j] + 1..l.dir_off[j + 1]).map(|x| base + x as usize));
                (j + 1).saturating_mul(f)
            }
            _ => return,
        };
        for c in first_child_dir..first_child_dir.saturating_add(f).min(l.dirs()) {
            out.push(base + l.dir_off[c] as usize);
        }
    }

    /// One fresh content-link target (a global node id) for local page `i`.
    fn fresh(&mut self, role: Role, closed: bool, i: u64, ga: u64, gb: u64) -> u64 {
        let web = self.web;
        let p = &web.params;
        let k = self.layout.k;
        let single_host = web.num_hosts() == 1;
        if !closed && !single_host && (k == 1 || self.rng.chance(p.external)) {
            return self.external();
        }
        let rng = &mut self.rng;
        let u = rng.f64();
        let local = if u < p.navigation {
            // Own directory index; outside closed directories also the home page or a
            // popular section.
            match (closed, rng.below(3), role, &self.dirs_zipf) {
                (true, ..) | (_, 1, Role::Index(_) | Role::DirPage(_), _) => ga,
                (_, 0, ..) => 0,
                (_, _, _, Some(z)) => self.layout.dir_off[z.sample(rng) as usize],
                _ => 0,
            }
        } else if u < p.navigation + p.local && gb - ga > 1 {
            let dist = (rng.pareto(p.local_distance_tail) as u64).clamp(1, gb - ga - 1);
            let fwd = rng.chance(0.5);
            let (up, down) = (i + dist, i.checked_sub(dist));
            match (fwd, down) {
                (true, _) if up < gb => up,
                (_, Some(t)) if t >= ga => t,
                _ if up < gb => up,
                _ => ga + rng.below(gb - ga),
            }
        } else if closed || (gb - ga > 1 && rng.chance(p.group_popularity)) {
            // Popularity inside the directory: rank 0 is its index page.
            let m = gb - ga;
            let r = match &self.group_zipf {
                Some(z) => z.sample(rng),
                None => rng.zipf_rank(m, p.popularity_zipf),
            };
            if r == 0 || m <= 2 {
                ga + r
            } else {
                let key = stream_key(web.seed ^ ga, SCATTER, self.h as u64);
                ga + 1 + scatter(key, m - 1, r - 1)
            }
        } else {
            web.ranked_page(self.h, k, self.host_zipf.sample(rng))
        };
        self.base + local
    }

    /// A link to another host: a sibling's home page, or a famous host's home page or
    /// popular page.
    fn external(&mut self) -> u64 {
        let web = self.web;
        let p = &web.params;
        let rng = &mut self.rng;
        if rng.chance(p.sibling) {
            if let Some(g) = web.sibling(self.h, rng) {
                return web.host_start[g];
            }
        }
        let mut g = web.famous_host(rng);
        for _ in 0..3 {
            if g != self.h {
                break;
            }
            g = web.famous_host(rng);
        }
        let kg = web.host_start[g + 1] - web.host_start[g];
        let local = if rng.chance(p.external_home) {
            0
        } else {
            web.ranked_page(g, kg, rng.zipf_rank(kg, p.popularity_zipf))
        };
        web.host_start[g] + local
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_draws_in_proportion() {
        let w = [1.0, 0.0, 3.0, 6.0];
        let a = Alias::new(&w);
        let mut rng = Xoshiro256PlusPlus::new(9);
        let mut counts = [0u32; 4];
        for _ in 0..100_000 {
            counts[a.sample(&mut rng)] += 1;
        }
        assert_eq!(counts[1], 0);
        for (c, w) in counts.iter().zip(w) {
            assert!((*c as f64 / 1e5 - w / 10.0).abs() < 0.01, "{counts:?}");
        }
        let one = Alias::new(&[5.0]);
        assert_eq!(one.sample(&mut rng), 0);
    }

    #[test]
    fn scatter_is_a_bijection() {
        for m in [1u64, 2, 3, 10, 97, 1000] {
            let mut seen: Vec<u64> = (0..m).map(|r| scatter(12345, m, r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..m).collect::<Vec<_>>());
        }
    }
}
