//! The working copy of a graph that Extract-Seeds' rounds and the core builder run on: only the
//! pages with an arc, renumbered by decreasing degree so that the pages most arcs touch share a
//! few megabytes of the score vectors (see `extract`), with ascending successor lists, its
//! transpose, and the map back to original ids.

use anyhow::Result;
use crawlrank_graph::Csr;
use rayon::prelude::*;

/// The graph the rounds run on: the pages with at least one arc, numbered by decreasing degree
/// (in + out; ties by original id), with ascending successor lists, and its transpose.
#[derive(Debug)]
pub struct WorkGraph {
    /// The renumbered graph.
    pub graph: Csr,
    /// Its transpose.
    pub transpose: Csr,
    /// The original id of each working page.
    pub global: Vec<u32>,
}

impl WorkGraph {
    /// The working copy of `graph`.
    pub fn new(graph: &Csr) -> Result<Self> {
        let n = graph.num_nodes();
        let mut degree = vec![0u32; n];
        for (u, v) in graph.arcs() {
            degree[u as usize] += 1;
            degree[v as usize] += 1;
        }
        let mut global: Vec<u32> = (0..n as u32).filter(|&v| degree[v as usize] > 0).collect();
        global.par_sort_unstable_by(|&a, &b| {
            degree[b as usize].cmp(&degree[a as usize]).then(a.cmp(&b))
        });
        drop(degree);
        let mut local = vec![u32::MAX; n];
        for (i, &g) in global.iter().enumerate() {
            local[g as usize] = i as u32;
        }
        let mut offsets = Vec::with_capacity(global.len() + 1);
        offsets.push(0u64);
        let mut succ = Vec::with_capacity(graph.num_arcs() as usize);
        for &g in &global {
            let from = succ.len();
            succ.extend(
                graph
                    .successors(g as usize)
                    .iter()
                    .map(|&v| local[v as usize]),
            );
            succ[from..].sort_unstable();
            offsets.push(succ.len() as u64);
        }
        let graph = Csr::from_parts(offsets, succ)?;
        let transpose = graph.transpose();
        Ok(Self {
            graph,
            transpose,
            global,
        })
    }
}
