//! Generates the URLFrontier messages, server and client from `proto/urlfrontier.proto`.
//!
//! protox is a protobuf compiler written in Rust, so building needs no `protoc` installed:
//! it parses the `.proto` into descriptors, and tonic-prost-build writes the Rust code into
//! `OUT_DIR` (included by `src/proto.rs`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/urlfrontier.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
