//! How far each URL is from the seeds: its link hops (links followed from a seed, Heritrix's
//! hop count) and its redirect hops (redirects followed in a row to reach it), and the limits
//! on both (`--max-hops`, `--max-redirects`).
//!
//! Why: some traps no URL rule can see — a calendar whose every page links to the next
//! month, a redirect chain that hops across a thousand hosts — are bounded only by how far
//! they lead from the seeds. A link past a limit is dropped before its URL gets an id, and
//! counted; a URL already known is never dropped (it costs no request, and the link is still
//! part of the graph the policy ranks).
//!
//! The rule, for a page `p` reporting its links (a redirect reports its target as its one
//! link): a redirect's target gets `p`'s link hops and `p`'s redirect hops plus one; an
//! ordinary link gets `p`'s link hops plus one and no redirect hop. A URL reached again by a
//! shorter way keeps the shorter counts. Seeds and sitemap entries (URLs found without a
//! link, crawlrank_fetch::sitemap) have none.
//!
//! The crawler stores nothing for this: the counts follow from its event log, so a resumed
//! crawl recomputes them by replaying its events through [`Hops::seed`] and [`Hops::reach`],
//! the same code the live crawl runs. The frontier service applies the same rule to the pages
//! its clients report (a page whose outcome is `redirect` reports its target as its one link)
//! and keeps the counts in its checkpoints ([`Hops::to_packed`]).

use crawlrank_frontier::PageId;

/// Marks a page whose counts are not known yet.
const UNSET: u16 = u16::MAX;

/// The limits a crawl enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopLimits {
    /// Most link hops from a seed (`--max-hops`); `None`: no limit.
    pub max_hops: Option<u32>,
    /// Most redirects followed in a row (`--max-redirects`).
    pub max_redirects: u32,
}

impl Default for HopLimits {
    fn default() -> Self {
        Self {
            max_hops: None,
            max_redirects: DEFAULT_MAX_REDIRECTS,
        }
    }
}

/// Browsers' limit on a redirect chain (Chromium and Firefox follow 20).
pub const DEFAULT_MAX_REDIRECTS: u32 = 20;

/// Why a new URL was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeyondLimit {
    /// More link hops from a seed than `--max-hops`.
    Hops,
    /// More redirects in a row than `--max-redirects`.
    Redirects,
}

/// The counts of a page's links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distance {
    /// Link hops from a seed.
    pub hops: u32,
    /// Redirects in a row.
    pub redirects: u32,
}

impl HopLimits {
    /// Which limit a new URL at `d` would pass, if any.
    pub fn exceeded(&self, d: Distance) -> Option<BeyondLimit> {
        if d.redirects > self.max_redirects {
            Some(BeyondLimit::Redirects)
        } else if self.max_hops.is_some_and(|m| d.hops > m) {
            Some(BeyondLimit::Hops)
        } else {
            None
        }
    }
}

/// Each page's link hops and redirect hops, by page id (3 bytes a URL; counts past the
/// types' range saturate, far beyond any limit a crawl sets).
#[derive(Debug, Default, Clone)]
pub struct Hops {
    hops: Vec<u16>,
    redirects: Vec<u8>,
}

impl Hops {
    /// The counts of page `id` (a page never reported: a seed's).
    pub fn of(&self, id: PageId) -> Distance {
        match self.hops.get(id as usize) {
            Some(&h) if h != UNSET => Distance {
                hops: u32::from(h),
                redirects: u32::from(self.redirects[id as usize]),
            },
            _ => Distance {
                hops: 0,
                redirects: 0,
            },
        }
    }

    /// The counts the links of page `id` get; `redirect`: `id` answered with a redirect, and
    /// its one link is the target.
    pub fn of_links(&self, id: PageId, redirect: bool) -> Distance {
        let d = self.of(id);
        if redirect {
            Distance {
                hops: d.hops,
                redirects: d.redirects + 1,
            }
        } else {
            Distance {
                hops: d.hops + 1,
                redirects: 0,
            }
        }
    }

    /// Page `id` is reached at `d`: it gets these counts, unless it has shorter ones.
    /// Returns whether its counts changed.
    pub fn reach(&mut self, id: PageId, d: Distance) -> bool {
        let i = id as usize;
        if i >= self.hops.len() {
            self.hops.resize(i + 1, UNSET);
            self.redirects.resize(i + 1, 0);
        }
        let hops = d.hops.min(u32::from(UNSET - 1)) as u16;
        let redirects = d.redirects.min(u32::from(u8::MAX)) as u8;
        if self.hops[i] == UNSET || (hops, redirects) < (self.hops[i], self.redirects[i]) {
            self.hops[i] = hops;
            self.redirects[i] = redirects;
            return true;
        }
        false
    }

    /// Page `id` is a seed: no hops.
    pub fn seed(&mut self, id: PageId) {
        self.reach(
            id,
            Distance {
                hops: 0,
                redirects: 0,
            },
        );
    }

    /// The counts as one number a page (link hops in the high bits, redirect hops in the
    /// low 8; `u32::MAX`: not known yet), for a checkpoint.
    pub fn to_packed(&self) -> Vec<u32> {
        self.hops
            .iter()
            .zip(&self.redirects)
            .map(|(&h, &r)| {
                if h == UNSET {
                    u32::MAX
                } else {
                    (u32::from(h) << 8) | u32::from(r)
                }
            })
            .collect()
    }

    /// The counts [`to_packed`](Self::to_packed) wrote.
    pub fn from_packed(packed: &[u32]) -> Self {
        let mut h = Self::default();
        for (i, &v) in packed.iter().enumerate() {
            if v != u32::MAX {
                h.reach(
                    i as PageId,
                    Distance {
                        hops: v >> 8,
                        redirects: v & 0xff,
                    },
                );
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crawled page reports its links (a redirect its target).
    fn crawled(h: &mut Hops, id: PageId, redirect: bool, links: &[PageId]) {
        let d = h.of_links(id, redirect);
        for &l in links {
            h.reach(l, d);
        }
    }

    #[test]
    fn links_add_a_hop_and_redirects_add_a_redirect() {
        let mut h = Hops::default();
        h.seed(0);
        crawled(&mut h, 0, false, &[1, 2]);
        crawled(&mut h, 1, true, &[3]);
        crawled(&mut h, 3, true, &[4]);
        crawled(&mut h, 4, false, &[5]);
        let d = |hops, redirects| Distance { hops, redirects };
        assert_eq!(h.of(0), d(0, 0));
        assert_eq!(h.of(1), d(1, 0));
        assert_eq!(h.of(3), d(1, 1));
        assert_eq!(h.of(4), d(1, 2));
        assert_eq!(
            h.of(5),
            d(2, 0),
            "a link after a redirect chain starts a new one"
        );
        // Reached again from the seed: the shorter counts win.
        crawled(&mut h, 0, false, &[5]);
        assert_eq!(h.of(5), d(1, 0));
        // An unknown page counts as a seed.
        assert_eq!(h.of(99), d(0, 0));
        // A checkpoint's packed counts give the same counts back.
        let back = Hops::from_packed(&h.to_packed());
        for id in 0..7 {
            assert_eq!(back.of(id), h.of(id));
        }
        assert_eq!(back.to_packed(), h.to_packed());
    }

    #[test]
    fn limits() {
        let l = HopLimits {
            max_hops: Some(2),
            max_redirects: 1,
        };
        let d = |hops, redirects| Distance { hops, redirects };
        assert_eq!(l.exceeded(d(2, 1)), None);
        assert_eq!(l.exceeded(d(3, 0)), Some(BeyondLimit::Hops));
        assert_eq!(l.exceeded(d(0, 2)), Some(BeyondLimit::Redirects));
        assert_eq!(HopLimits::default().exceeded(d(1_000_000, 20)), None);
        assert_eq!(
            HopLimits::default().exceeded(d(0, 21)),
            Some(BeyondLimit::Redirects)
        );
    }
}
