//! (being written) Hosts.
