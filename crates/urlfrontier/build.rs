//! Generates the URLFrontier messages, server and client from `proto/urlfrontier.proto`, and
//! crawlrank's extension service from `proto/crawlrank_frontier.proto`.
//!
//! protox is a protobuf compiler written in Rust, so building needs no `protoc` installed:
//! it parses the `.proto` into descriptors, and tonic-prost-build writes the Rust code into
//! `OUT_DIR` (included by `src/lib.rs`). The extension imports the API's messages; both are
//! compiled together, and `src/lib.rs` nests the generated modules by package so that the
//! extension's code finds the API's types where prost refers to them.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let api = "proto/urlfrontier.proto";
    let extension = "proto/crawlrank_frontier.proto";
    let cluster = "proto/crawlrank_cluster.proto";
    println!("cargo:rerun-if-changed={api}");
    println!("cargo:rerun-if-changed={extension}");
    println!("cargo:rerun-if-changed={cluster}");
    let descriptors = protox::compile([api, extension, cluster], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
