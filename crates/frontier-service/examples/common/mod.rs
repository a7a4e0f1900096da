//! Helpers shared by the service's examples: the runtimes they run the service and its clients
//! on, a service served on loopback, and the items they put.

#![allow(dead_code)]

use anyhow::Result;
use crawlrank_frontier_service::{spawn, FrontierService, RunningServer};
use crawlrank_urlfrontier::proto::{url_item, DiscoveredUrlItem, UrlInfo, UrlItem};
use tokio::runtime::Runtime;

/// A runtime of 2 threads: the service on one and its clients on another share the machine's
/// cores as a service and its crawlers on one machine would.
pub fn runtime() -> Result<Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Serves `service` on 127.0.0.1 (a free port) on `rt`.
pub fn serve(rt: &Runtime, service: FrontierService) -> Result<RunningServer> {
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        spawn(service, listener)
    })
}

/// The metadata-free information of `url`.
pub fn info(url: String) -> UrlInfo {
    UrlInfo {
        url,
        ..Default::default()
    }
}

/// `url` discovered with no parent (a seed).
pub fn discovered(url: String) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(info(url)),
        })),
        ..Default::default()
    }
}
