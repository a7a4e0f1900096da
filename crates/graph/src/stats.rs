//! (being written) Statistics.
