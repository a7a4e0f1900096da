//! One bipartite core from HITS scores (docs/algorithms.md §5; the paper's Figs. 1 and 2).
//!
//! A core is a set of hubs `H` and a disjoint set of authorities `A` grown from the best
//! authority: hubs are taken among the pages linking into `A`, authorities among the pages
//! linked from `H`, always the best remaining candidate by score (ties: smaller id). Two rules
//! say when to stop ([`CoreRule`]):
//!
//! - **cover density** (Fig. 2): `A = {best authority}`, `H = {best hub linking to it}`; each
//!   iteration tries the best hub candidate and keeps it only if
//!   `CD = 100·|E(H,A)| / (|H|·|A|)` stays at or above the bound, then the same for the best
//!   authority candidate; it stops when an iteration keeps neither, or `|H|` reaches the cap.
//!   A candidate that was tried and refused is not tried again in this core (*choice*: with the
//!   default bound of 100, a hub that misses one authority of `A` misses it for good, since `A`
//!   only grows).
//! - **fixed size** (Fig. 1): `A = {best authority}`, `H = ∅`; while `|H| + |A| < size`, add the
//!   `new_members` best hub candidates, then the `new_members` best authority candidates; stop
//!   early when an iteration adds nothing. As in the paper's loop, the last iteration may
//!   overshoot `size` by up to `2·new_members − 1`.
//!
//! Candidates live in two max-heaps filled as members join (the in-neighbours of a new authority
//! become hub candidates, the out-neighbours of a new hub authority candidates), so a core costs
//! the degrees of its members, not a pass over the graph. Arcs from or to removed pages do not
//! count: the caller's `removed` mask is the graph after the earlier rounds.

use crate::work_graph::WorkGraph;
use crawlrank_graph::Csr;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// How a core grows and when it stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CoreRule {
    /// Fig. 2: grow while the cover density stays at or above `min_density` (in (0, 100]), with
    /// at most `max_hubs` hubs.
    CoverDensity {
        /// The lowest cover density a core may have, in percent.
        min_density: f64,
        /// The most hubs a core may have (the paper capped UK-2002's at 999).
        max_hubs: usize,
    },
    /// Fig. 1: grow `new_members` hubs and authorities at a time until the core has at least
    /// `size` pages.
    FixedSize {
        /// `BipartiteCoreSize`: the size `|H| + |A|` to reach.
        size: usize,
        /// `NewMemberCount`: hubs (and then authorities) added per iteration.
        new_members: usize,
    },
}

/// One extracted core and its seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Core {
    /// The hubs, in the order they joined.
    pub hubs: Vec<u32>,
    /// The authorities, in the order they joined (the first is the best authority).
    pub authorities: Vec<u32>,
    /// `|E(H, A)|`: the arcs from the hubs to the authorities (of the graph the core was found
    /// in, so after pruning and without removed pages).
    pub arcs: u64,
    /// The seed: the core's best hub by hub score (ties: smaller id), if it has a hub.
    pub seed: Option<u32>,
}

impl Core {
    /// `100·|E(H,A)| / (|H|·|A|)`, or 0 for a core without hubs.
    pub fn cover_density(&self) -> f64 {
        cover_density(self.arcs, self.hubs.len(), self.authorities.len())
    }

    /// Every page of the core, hubs first.
    pub fn pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.hubs.iter().chain(&self.authorities).copied()
    }
}

/// `100·arcs / (hubs·authorities)`: the share of hub–authority pairs joined by an arc, in percent;
/// 0 when either side is empty.
pub fn cover_density(arcs: u64, hubs: usize, authorities: usize) -> f64 {
    let pairs = hubs as f64 * authorities as f64;
    if pairs == 0.0 {
        0.0
    } else {
        100.0 * arcs as f64 / pairs
    }
}

/// A candidate in a heap: best score first, then smaller original id (`key`).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    score: f64,
    key: u32,
    page: u32,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.key.cmp(&self.key))
    }
}

crawlrank_rank::comparisons_from_ord!(Candidate);

// Per-page flags of the core being built.
const HUB: u8 = 1;
const AUTH: u8 = 2;
const HUB_CANDIDATE: u8 = 4;
const AUTH_CANDIDATE: u8 = 8;

/// Builds cores of one working graph ([`WorkGraph`]), reusing its per-page marks: starting a core
/// costs the pages the last one touched, not the graph's size.
#[derive(Debug)]
pub struct CoreBuilder {
    flags: Vec<u8>,
    touched: Vec<u32>,
    hub_heap: BinaryHeap<Candidate>,
    auth_heap: BinaryHeap<Candidate>,
}

/// The state of the core being grown.
struct Growing<'a> {
    graph: &'a Csr,
    transpose: &'a Csr,
    global: &'a [u32],
    removed: &'a [bool],
    hubs: &'a [f64],
    authorities: &'a [f64],
    b: &'a mut CoreBuilder,
    core: Core,
}

impl CoreBuilder {
    /// A builder for graphs of `nodes` pages.
    pub fn new(nodes: usize) -> Self {
        Self {
            flags: vec![0; nodes],
            touched: Vec::new(),
            hub_heap: BinaryHeap::new(),
            auth_heap: BinaryHeap::new(),
        }
    }

    /// The core grown from `best_authority` under `rule`, with hub scores `hubs` and authority
    /// scores `authorities`, in `work` without the `removed` pages. Pages are `work`'s ids; ties
    /// go to the smaller original id.
    pub fn extract(
        &mut self,
        work: &WorkGraph,
        removed: &[bool],
        hubs: &[f64],
        authorities: &[f64],
        best_authority: u32,
        rule: CoreRule,
    ) -> Core {
        for p in self.touched.drain(..) {
            self.flags[p as usize] = 0;
        }
        self.hub_heap.clear();
        self.auth_heap.clear();
        let mut g = Growing {
            graph: &work.graph,
            transpose: &work.transpose,
            global: &work.global,
            removed,
            hubs,
            authorities,
            b: self,
            core: Core {
                hubs: Vec::new(),
                authorities: Vec::new(),
                arcs: 0,
                seed: None,
            },
        };
        g.add(best_authority, AUTH);
        match rule {
            CoreRule::CoverDensity {
                min_density,
                max_hubs,
            } => g.grow_by_density(min_density, max_hubs),
            CoreRule::FixedSize { size, new_members } => g.grow_to_size(size, new_members),
        }
        let mut core = g.core;
        core.seed = core
            .hubs
            .iter()
            .copied()
            .map(|page| Candidate {
                score: hubs[page as usize],
                key: work.global[page as usize],
                page,
            })
            .max()
            .map(|c| c.page);
        core
    }
}

impl<'a> Growing<'a> {
    fn grow_by_density(&mut self, min_density: f64, max_hubs: usize) {
        if max_hubs == 0 {
            return;
        }
        match self.next_hub() {
            Some(h) => self.add(h, HUB),
            None => return,
        }
        while self.core.hubs.len() < max_hubs {
            let mut kept = false;
            if let Some(h) = self.next_hub() {
                let gained = self.arcs_to_core(h, HUB);
                if self.density_holds(gained, 1, 0, min_density) {
                    self.add(h, HUB);
                    kept = true;
                }
            }
            if let Some(a) = self.next_authority() {
                let gained = self.arcs_to_core(a, AUTH);
                if self.density_holds(gained, 0, 1, min_density) {
                    self.add(a, AUTH);
                    kept = true;
                }
            }
            if !kept {
                break;
            }
        }
    }

    fn grow_to_size(&mut self, size: usize, new_members: usize) {
        while self.core.hubs.len() + self.core.authorities.len() < size {
            let mut added = false;
            for _ in 0..new_members {
                let Some(h) = self.next_hub() else {
                    break;
                };
                self.add(h, HUB);
                added = true;
            }
            for _ in 0..new_members {
                let Some(a) = self.next_authority() else {
                    break;
                };
                self.add(a, AUTH);
                added = true;
            }
            if !added {
                break;
            }
        }
    }

    /// Whether `CD ≥ min_density` with `gained` more arcs, `more_hubs` more hubs and
    /// `more_auths` more authorities. Compared in integers scaled by 100 where the bound allows
    /// (`min_density` is usually a whole number), so 100 means exactly "complete".
    fn density_holds(&self, gained: u64, more_hubs: usize, more_auths: usize, min: f64) -> bool {
        let arcs = (self.core.arcs + gained) as f64;
        let pairs = ((self.core.hubs.len() + more_hubs)
            * (self.core.authorities.len() + more_auths)) as f64;
        100.0 * arcs >= min * pairs
    }

    fn touch(&mut self, page: u32, flag: u8) {
        let f = &mut self.b.flags[page as usize];
        if *f == 0 {
            self.b.touched.push(page);
        }
        *f |= flag;
    }

    fn flag(&self, page: u32) -> u8 {
        self.b.flags[page as usize]
    }

    /// The links of a hub (`HUB`: its successors) or of an authority (`AUTH`: its
    /// predecessors), the role of the pages at their other ends, and the flag of those pages'
    /// candidates.
    fn links(&self, role: u8) -> (&'a Csr, u8, u8) {
        if role == HUB {
            (self.graph, AUTH, AUTH_CANDIDATE)
        } else {
            (self.transpose, HUB, HUB_CANDIDATE)
        }
    }

    /// The arcs `page` would bring into the core as a hub (`HUB`: arcs into its authorities)
    /// or as an authority (`AUTH`: arcs from its hubs).
    fn arcs_to_core(&self, page: u32, role: u8) -> u64 {
        let (links, other, _) = self.links(role);
        links
            .successors(page as usize)
            .iter()
            .filter(|&&q| self.flag(q) & other != 0)
            .count() as u64
    }

    /// Adds `page` to the core as a hub (`HUB`) or an authority (`AUTH`), and offers the pages
    /// at the other ends of its links as candidates of the other side.
    fn add(&mut self, page: u32, role: u8) {
        self.core.arcs += self.arcs_to_core(page, role);
        if role == HUB {
            self.core.hubs.push(page);
        } else {
            self.core.authorities.push(page);
        }
        self.touch(page, role);
        let (links, _, candidate) = self.links(role);
        for &q in links.successors(page as usize) {
            self.offer(q, candidate);
        }
    }

    /// The heap of the hub candidates (`HUB_CANDIDATE`) or of the authority candidates
    /// (`AUTH_CANDIDATE`), and the scores they are ranked by.
    fn side(&mut self, candidate: u8) -> (&mut BinaryHeap<Candidate>, &'a [f64]) {
        if candidate == HUB_CANDIDATE {
            (&mut self.b.hub_heap, self.hubs)
        } else {
            (&mut self.b.auth_heap, self.authorities)
        }
    }

    /// Makes `page` a candidate of the side `candidate` (`HUB_CANDIDATE` or
    /// `AUTH_CANDIDATE`) unless it is removed, in the core, or that side's candidate already.
    fn offer(&mut self, page: u32, candidate: u8) {
        let p = page as usize;
        if self.removed[p] || self.flag(page) & (HUB | AUTH | candidate) != 0 {
            return;
        }
        self.touch(page, candidate);
        let key = self.global[p];
        let (heap, scores) = self.side(candidate);
        heap.push(Candidate {
            score: scores[p],
            key,
            page,
        });
    }

    /// The best candidate of the side `candidate` not yet in the core (each is handed out
    /// once).
    fn next(&mut self, candidate: u8) -> Option<u32> {
        loop {
            let (heap, _) = self.side(candidate);
            let page = heap.pop()?.page;
            if self.flag(page) & (HUB | AUTH) == 0 {
                return Some(page);
            }
        }
    }

    /// The best hub candidate not yet in the core.
    fn next_hub(&mut self) -> Option<u32> {
        self.next(HUB_CANDIDATE)
    }

    /// The best authority candidate not yet in the core.
    fn next_authority(&mut self) -> Option<u32> {
        self.next(AUTH_CANDIDATE)
    }
}
