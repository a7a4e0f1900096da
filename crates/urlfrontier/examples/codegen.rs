//! Regenerates `src/generated/` from `proto/`: the URLFrontier messages, server and client
//! from `proto/urlfrontier.proto`, crawlrank's extension service from
//! `proto/crawlrank_frontier.proto`, and the cluster's JetStream messages from
//! `proto/crawlrank_cluster.proto`. Run it after editing a `.proto`:
//!
//! ```sh
//! cargo run -p crawlrank-urlfrontier --features codegen --example codegen
//! ```
//!
//! Why the generated code is committed rather than written by a build script: compiling a
//! protobuf compiler (protox and its parser, prost-build, tonic-build) into every build cost
//! about a minute of each clean build and of each `cargo clippy`, for files that change a few
//! times a year. protox is a protobuf compiler written in Rust, so regenerating needs no
//! `protoc` installed. The extension imports the API's messages; all are compiled together,
//! and `src/lib.rs` nests the generated modules by package so that the extension's code finds
//! the API's types where prost refers to them.
//!
//! It also writes `src/generated/protos.hash`, a digest of the `.proto` files it read: a unit
//! test (`generated_code_matches_the_protos`) fails when a `.proto` changed without this run.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(root)?;
    let out = root.join("src/generated");
    std::fs::create_dir_all(&out)?;
    let descriptors = protox::compile(crawlrank_urlfrontier::PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .out_dir(&out)
        .compile_fds(descriptors)?;
    let hash = crawlrank_urlfrontier::protos_digest(root)?;
    std::fs::write(out.join("protos.hash"), format!("{hash:016x}\n"))?;
    println!("wrote {} (protos digest {hash:016x})", out.display());
    Ok(())
}
