//! The frontier service's tests: the URLFrontier API over gRPC on loopback (conformance,
//! crawlrank's extension, limits), and a Python client generated from the .proto.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 4).

mod common;

mod conformance;
mod extension;
mod grpc;
mod python_client;
