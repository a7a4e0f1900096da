//! The evaluation of a seed set (docs/algorithms.md §5, the paper's §3.5). To be written.
