//! The test web's integration tests, one binary: `serve` drives it over real HTTP on
//! loopback; `throughput` is a measurement, ignored by default.

mod serve;
mod throughput;
