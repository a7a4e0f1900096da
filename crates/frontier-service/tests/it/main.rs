//! The frontier service's tests: the URLFrontier API over gRPC on loopback (conformance,
//! crawlrank's extension, limits), a Python client generated from the .proto, and the cluster
//! of nodes on NATS JetStream.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 4).

mod common;

mod cluster;
mod conformance;
mod extension;
mod grpc;
mod python_client;
