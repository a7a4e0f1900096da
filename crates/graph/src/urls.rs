//! (being written) URLs.
