//! The worker's integration tests, one binary: workers crawling the local test web through
//! crawlrank's frontier service, on loopback.

mod common;

mod concurrency;

mod through_service;
