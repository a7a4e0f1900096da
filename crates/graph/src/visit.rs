//! Graph visits, once: breadth-first search (by depth, from many sources, reusable without
//! clearing) and strongly connected components.
//!
//! Statistics (`info --reachability`, `--scc`), the simulator's reachable set and the seed
//! evaluation of `crawlrank-seeds` (BFS by depth from seed sets, core-to-core distances, which
//! stop early) all visit graphs; they share this code rather than each writing a queue. As in
//! webgraph-rs's visits, the visit owns the bookkeeping and hands each node to a callback.

use crate::access::Successors;
#[cfg(doc)]
use crate::Csr;
use std::ops::ControlFlow;

/// A reusable breadth-first search over a graph of a fixed number of nodes. Marks are epoch
/// numbers, so starting a new search costs nothing however many nodes the last one reached.
#[derive(Debug, Clone)]
pub struct Bfs {
    mark: Vec<u32>,
    epoch: u32,
    queue: Vec<u32>,
}

impl Bfs {
    /// A search over graphs of `nodes` nodes.
    pub fn new(nodes: usize) -> Self {
        Self {
            mark: vec![0; nodes],
            epoch: 0,
            queue: Vec::new(),
        }
    }

    /// Visits every node reachable from `sources` (ids must be below the node count; repeats
    /// are ignored), in breadth-first order, calling `on_node(node, depth)` once per node
    /// (sources at depth 0). Returns the number of nodes reached.
    pub fn visit<G: Successors>(
        &mut self,
        graph: &G,
        sources: &[u32],
        mut on_node: impl FnMut(u32, u32),
    ) -> u64 {
        self.visit_until(graph, sources, |v, d| {
            on_node(v, d);
            ControlFlow::Continue(())
        })
    }

    /// [`visit`](Self::visit) that stops as soon as `on_node` returns `Break` (a search for
    /// the nearest of some targets need not visit the whole graph). Returns the number of
    /// nodes handed to `on_node`; after a stop, [`reached`](Self::reached) also holds for the
    /// nodes queued but not yet handed over.
    pub fn visit_until<G: Successors>(
        &mut self,
        graph: &G,
        sources: &[u32],
        mut on_node: impl FnMut(u32, u32) -> ControlFlow<()>,
    ) -> u64 {
        self.next_epoch();
        let epoch = self.epoch;
        self.queue.clear();
        for &s in sources {
            if self.mark[s as usize] != epoch {
                self.mark[s as usize] = epoch;
                self.queue.push(s);
            }
        }
        let (mut head, mut depth, mut level_end) = (0, 0u32, self.queue.len());
        let mut buf = Vec::new();
        while head < self.queue.len() {
            if head == level_end {
                depth += 1;
                level_end = self.queue.len();
            }
            let v = self.queue[head];
            head += 1;
            if on_node(v, depth).is_break() {
                break;
            }
            for &w in graph.successors_in(v as usize, &mut buf) {
                if self.mark[w as usize] != epoch {
                    self.mark[w as usize] = epoch;
                    self.queue.push(w);
                }
            }
        }
        head as u64
    }

    /// Whether the last visit reached `node`.
    pub fn reached(&self, node: u32) -> bool {
        self.epoch > 0 && self.mark[node as usize] == self.epoch
    }

    fn next_epoch(&mut self) {
        if self.epoch == u32::MAX {
            self.mark.fill(0);
            self.epoch = 0;
        }
        self.epoch += 1;
    }
}

/// Which nodes are reachable from `sources` (a BFS over out-links).
pub fn reachable_from<G: Successors>(graph: &G, sources: &[u32]) -> Vec<bool> {
    let mut seen = vec![false; graph.node_count()];
    Bfs::new(graph.node_count()).visit(graph, sources, |v, _| seen[v as usize] = true);
    seen
}

/// Strongly connected components by Tarjan's algorithm with an explicit call stack (no
/// recursion, so deep graphs cannot overflow the thread's stack); `on_component(size)` is
/// called once per component, in the order Tarjan closes them.
///
/// The successor list of every node on the call stack is held decoded (copied from a
/// [`Csr`], decoded once per call from a compressed graph).
pub fn strongly_connected_components<G: Successors>(graph: &G, mut on_component: impl FnMut(u64)) {
    const UNSEEN: u32 = u32::MAX;
    let n = graph.node_count();
    // The successor list of each frame of `calls`.
    let mut lists: Vec<Vec<u32>> = Vec::new();
    let mut scratch = Vec::new();
    let mut push_list = |lists: &mut Vec<Vec<u32>>, v: usize| {
        lists.push(graph.successors_in(v, &mut scratch).to_vec());
    };
    // Discovery index; low-link; whether on the component stack.
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // (node, position of the next successor to explore).
    let mut calls: Vec<(u32, u32)> = Vec::new();
    let mut next_index = 0u32;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // The node to enter next (a root, then each unseen successor): one place numbers a
        // node and opens its call.
        let mut enter = Some(root);
        loop {
            if let Some(w) = enter.take() {
                index[w] = next_index;
                low[w] = next_index;
                next_index += 1;
                stack.push(w as u32);
                on_stack[w] = true;
                calls.push((w as u32, 0));
                push_list(&mut lists, w);
            }
            let Some(&mut (v, ref mut pos)) = calls.last_mut() else {
                break;
            };
            let succ = lists.last().expect("one list per call");
            if (*pos as usize) < succ.len() {
                let w = succ[*pos as usize] as usize;
                *pos += 1;
                if index[w] == UNSEEN {
                    enter = Some(w);
                } else if on_stack[w] {
                    low[v as usize] = low[v as usize].min(index[w]);
                }
                continue;
            }
            calls.pop();
            lists.pop();
            let v = v as usize;
            if low[v] == index[v] {
                let mut size = 0u64;
                loop {
                    let w = stack.pop().expect("Tarjan stack underflow") as usize;
                    on_stack[w] = false;
                    size += 1;
                    if w == v {
                        break;
                    }
                }
                on_component(size);
            }
            if let Some(&(u, _)) = calls.last() {
                low[u as usize] = low[u as usize].min(low[v]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Csr;

    #[test]
    fn bfs_reports_depths_and_reuses_its_marks() {
        // 0 → 1 → 2 → 3 ; 0 → 2 ; 4 → 0
        let g = Csr::from_arcs(5, &[(0, 1), (1, 2), (2, 3), (0, 2), (4, 0)]);
        let mut bfs = Bfs::new(5);
        let mut seen = Vec::new();
        assert_eq!(bfs.visit(&g, &[0, 0], |v, d| seen.push((v, d))), 4);
        assert_eq!(seen, vec![(0, 0), (1, 1), (2, 1), (3, 2)]);
        assert!(!bfs.reached(4));
        seen.clear();
        assert_eq!(bfs.visit(&g, &[3, 4], |v, d| seen.push((v, d))), 5);
        assert_eq!(seen, vec![(3, 0), (4, 0), (0, 1), (1, 2), (2, 2)]);
        assert_eq!(
            reachable_from(&g, &[2]),
            vec![false, false, true, true, false]
        );
    }

    #[test]
    fn bfs_stops_when_told() {
        // 0 → 1 → 2 → 3 → 4
        let g = Csr::from_arcs(5, &[(0, 1), (1, 2), (2, 3), (3, 4)]);
        let mut bfs = Bfs::new(5);
        let mut seen = Vec::new();
        let visited = bfs.visit_until(&g, &[0], |v, d| {
            seen.push((v, d));
            if v == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(visited, 3);
        assert_eq!(seen, vec![(0, 0), (1, 1), (2, 2)]);
        assert!(bfs.reached(2) && !bfs.reached(3));
    }

    #[test]
    fn components_of_a_cycle_and_a_tail() {
        // 0 → 1 → 2 → 0 (one component of 3), 2 → 3 → 4 (two of 1).
        let g = Csr::from_arcs(5, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)]);
        let mut sizes = Vec::new();
        strongly_connected_components(&g, |s| sizes.push(s));
        sizes.sort_unstable();
        assert_eq!(sizes, vec![1, 1, 3]);
    }
}
