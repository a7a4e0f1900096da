//! `crawlrank-rng`: the project's few fixed-algorithm pseudo-random generators, in one place.
//!
//! # Why the project carries its own generators
//! Everything random in crawlrank must come out **the same on every run, on every platform,
//! with any number of threads and with any version of any dependency**: a generated web is
//! defined by its seed (its files are compared byte for byte across runs and threads), a
//! `random` crawl is replayed from `--rng-seed`, graph statistics and test cases sample start
//! nodes that must reproduce, and the benchmarks time the same synthetic graphs as the
//! numbers in `docs/performance.md`. `rand`'s `StdRng` and `SmallRng` promise none of this
//! (their algorithms may change between releases, and `SmallRng` differs between 32- and
//! 64-bit platforms), so this crate holds small, published algorithms written out in full,
//! with no dependencies, and unit tests that pin their first outputs: changing any line here
//! changes every generated graph, which those tests are there to catch.
//!
//! # Which generator for what
//! - [`mix64`], [`splitmix64`], [`SplitMix64`] (Steele, Lea and Flood, 2014): a 64-bit mixing
//!   function, the hash of one value, and the tiny generator built from them — for seeding
//!   the others, hashing keys (the test web's injected errors), and drawing a few numbers
//!   (graph statistics' BFS start nodes).
//! - [`Xoshiro256PlusPlus`] (Blackman and Vigna, 2019) with [`stream_key`] and [`Zipf`]: the
//!   synthetic-web generator's streams, one per `(seed, purpose, index)`, and the draws its
//!   model needs (uniform floats, Pareto and Zipf variates).
//! - [`Xoshiro256StarStar`] (Blackman and Vigna, 2019): the `random` crawl policy and the
//!   simulator's seed drawing.
//! - [`XorShift64`] (Marsaglia, 2003): the cheapest and weakest; only for the synthetic
//!   graphs of benchmarks and tests, which are defined by its output.

#![warn(missing_docs)]

mod splitmix;
mod xorshift;
mod xoshiro;
mod zipf;

pub use splitmix::{mix64, splitmix64, SplitMix64};
pub use xorshift::XorShift64;
pub use xoshiro::{stream_key, Xoshiro256PlusPlus, Xoshiro256StarStar};
pub use zipf::Zipf;
