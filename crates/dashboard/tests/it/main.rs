//! The dashboard's tests: its HTTP API and Prometheus metrics, and the page loaded in headless
//! Chromium.
//!
//! One test binary for the crate, a module per area (each was a binary of its own: one link
//! instead of 2).

mod common;

mod api;
mod browser;
