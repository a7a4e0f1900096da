//! The synthetic web as a `webgraph` sequential graph: a lender generating each node's
//! successors on the fly (sorted, distinct), so `BvComp` compresses it without any arc ever
//! being stored or sorted globally.

use crate::model::{HostGen, SyntheticWeb};
use lender::{check_covariance, Lend, Lender, Lending};
use webgraph::prelude::*;
use webgraph::traits::{SortedIterator, SortedLender};

/// Generates the pages of the hosts `next_host..end_host`, in node order.
pub struct Pages<'a> {
    web: &'a SyntheticWeb,
    next_host: usize,
    end_host: usize,
    host: Option<HostGen<'a>>,
    buf: Vec<usize>,
}

impl<'a> Pages<'a> {
    pub(crate) fn new(web: &'a SyntheticWeb, first_host: usize, end_host: usize) -> Self {
        Self {
            web,
            next_host: first_host,
            end_host,
            host: None,
            buf: Vec::new(),
        }
    }

    /// Generates the next page into `buf` and returns its node id.
    fn advance(&mut self) -> Option<u64> {
        loop {
            if let Some(h) = &mut self.host {
                if !h.done() {
                    let v = h.next_node();
                    h.next_page(&mut self.buf);
                    return Some(v);
                }
            }
            if self.next_host >= self.end_host {
                self.host = None;
                return None;
            }
            self.host = Some(HostGen::new(self.web, self.next_host));
            self.next_host += 1;
        }
    }
}

/// The successors of one node, in increasing order.
#[derive(Debug, Clone)]
pub struct Succ<'a>(std::iter::Copied<std::slice::Iter<'a, usize>>);

impl Iterator for Succ<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.0.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for Succ<'_> {}

// SAFETY: `HostGen::next_page` sorts and deduplicates every successor list.
unsafe impl SortedIterator for Succ<'_> {}
// SAFETY: nodes are yielded in increasing order.
unsafe impl SortedLender for Pages<'_> {}

impl<'lend> Lending<'lend> for Pages<'_> {
    type Lend = (usize, Succ<'lend>);
}

impl<'lend> NodeLabelsLender<'lend> for Pages<'_> {
    type Label = usize;
    type IntoIterator = Succ<'lend>;
}

impl Lender for Pages<'_> {
    check_covariance!();

    fn next(&mut self) -> Option<Lend<'_, Self>> {
        let v = self.advance()?;
        Some((v as usize, Succ(self.buf.iter().copied())))
    }
}

impl SequentialLabeling for SyntheticWeb {
    type Label = usize;
    type Lender<'node> = Pages<'node>;

    fn num_nodes(&self) -> usize {
        self.num_pages() as usize
    }

    /// Starting in the middle of a host regenerates that host from its first page (the
    /// links of a page depend on the pages before it in its host).
    fn iter_from(&self, from: usize) -> Pages<'_> {
        let hosts = self.num_hosts();
        if from as u64 >= self.num_pages() {
            return Pages::new(self, hosts, hosts);
        }
        let h = self.host_of_node(from as u64);
        let mut pages = Pages::new(self, h, hosts);
        for _ in self.host_nodes(h).start..from as u64 {
            pages.advance();
        }
        pages
    }
}

impl SequentialGraph for SyntheticWeb {}

/// Fixed chunks of whole hosts (see `SyntheticWeb::chunk_hosts`), compressed in parallel by
/// `BvCompConf::par_comp`: the chunks do not depend on the number of threads, so neither
/// does the output.
impl<'a> IntoParLenders for &'a SyntheticWeb {
    type ParLender = Pages<'a>;

    fn into_par_lenders(self) -> (Box<[Pages<'a>]>, Box<[usize]>) {
        let c = &self.chunk_hosts;
        let lenders: Vec<Pages<'a>> = c.windows(2).map(|w| Pages::new(self, w[0], w[1])).collect();
        let cuts: Vec<usize> = c.iter().map(|&h| self.host_start[h] as usize).collect();
        (lenders.into_boxed_slice(), cuts.into_boxed_slice())
    }
}
