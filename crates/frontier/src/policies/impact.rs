//! The search log the impact-aware policies (`rw`, `rw-eg`, `learned`; docs/algorithms.md §6)
//! read: the impact of each page, known to the crawl once the page is downloaded.
//!
//! It comes one of two ways, and the policies do not care which: the simulator hands the whole
//! vector by page id up front ([`PolicyConfig::impact`](super::PolicyConfig::impact)); the
//! crawler, whose page ids are assigned as URLs are discovered, reports each page's impact when
//! it interns the URL ([`Frontier::set_impact`](crate::Frontier::set_impact)), before the page
//! can be crawled. Only pages with a positive impact need reporting.

use super::PolicyConfig;
use crate::PageId;
use std::collections::HashMap;
use std::sync::Arc;

/// Impact by page id: the configured vector, then the reported values.
#[derive(Debug, Default)]
pub struct ImpactLog {
    by_id: Arc<Vec<f64>>,
    reported: HashMap<PageId, f64>,
}

impl ImpactLog {
    /// The log of `c`'s impact vector (empty without one).
    pub fn new(c: &PolicyConfig) -> Self {
        Self {
            by_id: c
                .impact
                .as_ref()
                .map_or_else(|| Arc::new(Vec::new()), |i| i.0.clone()),
            reported: HashMap::new(),
        }
    }

    /// Records the impact of `page` (a reported value replaces the configured one).
    pub fn report(&mut self, page: PageId, impact: f64) {
        self.reported.insert(page, impact);
    }

    /// The impact of `page` (0 when nothing says otherwise).
    pub fn of(&self, page: PageId) -> f64 {
        if let Some(&v) = self.reported.get(&page) {
            return v;
        }
        self.by_id.get(page as usize).copied().unwrap_or(0.0)
    }
}
