//! One module per subcommand: argument definitions and the glue that runs them.

pub mod convert;
pub mod crawl;
pub mod crawl_args;
pub mod crawl_stop;
pub mod crawl_worker;
pub mod dashboard;
pub mod demo;
pub mod export;
pub mod frontier;
pub mod frontier_rank;
pub mod generate;
pub mod held;
pub mod impacts;
pub mod import;
pub mod info;
pub mod rank;
pub mod score_order;
pub mod seeds;
pub mod seeds_eval;
pub mod serve;
pub mod simulate;
pub mod status;
