//! `crawlrank status`: where a crawl stands (read from its state, without changing it).

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let st = crawlrank_crawler::status(&args.state)?;
    println!("crawl state: {}", args.state.display());
    print!("{st}");
    Ok(())
}
