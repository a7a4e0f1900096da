// temporary calibration helper
use crawlrank_gen::{GenConfig, SyntheticWeb};
use crawlrank_graph::stats::GraphStats;
use crawlrank_graph::{BvWebGraph, Cache, Csr};
fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let t = std::time::Instant::now();
    if args[1] == "cnr" {
        let cache = Cache::new("/tmp/gen-cache");
        let g = BvWebGraph::open("/work/shared/data/cnr-2000/cnr-2000".as_ref(), &cache)?;
        let csr = g.to_csr()?;
        let s = GraphStats::compute(g.bv(), None)?.with_reachability(&csr, 100, 0).with_scc(&csr);
        println!("{s}");
    } else {
        let pages: u64 = args[1].parse()?;
        let web = SyntheticWeb::new(&GenConfig::new(pages))?;
        let csr = Csr::from_sequential(&web)?;
        eprintln!("gen {:?}", t.elapsed());
        let host_of = web.host_of();
        let s = GraphStats::compute_csr(&csr, Some(&host_of))?.with_reachability(&csr, 100, 0).with_scc(&csr);
        println!("{s}");
    }
    eprintln!("{:?}", t.elapsed());
    Ok(())
}
