//! A tiny DNS server on loopback UDP, for the tests of a crawl that resolves names itself
//! (`FetchConfig::dns.servers`, `crawlrank crawl --dns-server`): each name answers as the test
//! says — an address, "no such name", or never — and every query is counted by name, so a
//! test can check what its resolver asked and how often (its cache, its give-up).
//!
//! Here because the crawler's tests and the command line's tests both need one, and a DNS
//! message written by hand is easy to get subtly wrong twice. It understands just enough of
//! RFC 1035: one question per query, no compression in it, no EDNS; an address is answered
//! with a TTL of [`TTL_SECS`] unless the test gives its own.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};

/// The TTL of an address answered with [`DnsAnswer::A`] (300 s).
pub const TTL_SECS: u32 = 300;

/// How the server answers the queries for a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DnsAnswer {
    /// An `A` question gets this IPv4 address (TTL [`TTL_SECS`]); any other question type
    /// (e.g. `AAAA`) an empty answer.
    A(Ipv4Addr),
    /// As [`DnsAnswer::A`], with this TTL in seconds (0: a resolver must not keep it).
    ATtl(Ipv4Addr, u32),
    /// NXDOMAIN: the name does not exist.
    NxDomain,
    /// SERVFAIL: the server failed to answer.
    ServFail,
    /// Never answered: the resolver times out.
    Silent,
}

/// A DNS server on `127.0.0.1`, answering on a thread of its own for the rest of the process.
pub struct DnsServer {
    addr: SocketAddr,
    asked: Arc<Mutex<HashMap<String, u32>>>,
}

impl DnsServer {
    /// Starts a server answering each name of `names` (lower case, without the final dot) as
    /// given, and every other name as `otherwise`.
    pub fn start(names: &[(&str, DnsAnswer)], otherwise: DnsAnswer) -> Self {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = sock.local_addr().unwrap();
        let table: HashMap<String, DnsAnswer> =
            names.iter().map(|&(n, a)| (n.to_string(), a)).collect();
        let asked: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
        let log = asked.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while let Ok((n, from)) = sock.recv_from(&mut buf) {
                let q = &buf[..n];
                let mut i = 12;
                let mut labels = Vec::new();
                while i < q.len() && q[i] != 0 {
                    let len = q[i] as usize;
                    labels.push(String::from_utf8_lossy(&q[i + 1..i + 1 + len]).to_lowercase());
                    i += 1 + len;
                }
                let qtype = u16::from_be_bytes([q[i + 1], q[i + 2]]);
                let name = labels.join(".");
                *log.lock().unwrap().entry(name.clone()).or_insert(0) += 1;
                let (rcode, address) = match table.get(&name).copied().unwrap_or(otherwise) {
                    DnsAnswer::Silent => continue,
                    DnsAnswer::NxDomain => (3, None),
                    DnsAnswer::ServFail => (2, None),
                    DnsAnswer::A(ip) => (0, Some((ip, TTL_SECS)).filter(|_| qtype == 1)),
                    DnsAnswer::ATtl(ip, ttl) => (0, Some((ip, ttl)).filter(|_| qtype == 1)),
                };
                // The id, then QR, RD and RA set, the rcode, one question, 0 or 1 answer.
                let mut r = q[..2].to_vec();
                r.extend_from_slice(&[
                    0x81,
                    0x80 | rcode,
                    0,
                    1,
                    0,
                    u8::from(address.is_some()),
                    0,
                    0,
                    0,
                    0,
                ]);
                // The question as asked: the name, its type and class.
                r.extend_from_slice(&q[12..i + 5]);
                if let Some((ip, ttl)) = address {
                    // A pointer to the question's name, type A, class IN, the TTL, 4 bytes.
                    r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
                    r.extend_from_slice(&ttl.to_be_bytes());
                    r.extend_from_slice(&[0, 4]);
                    r.extend_from_slice(&ip.octets());
                }
                let _ = sock.send_to(&r, from);
            }
        });
        Self { addr, asked }
    }

    /// The server's address, to give the resolver.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many queries each name got so far (names in lower case, without the final dot).
    pub fn asked(&self) -> HashMap<String, u32> {
        self.asked.lock().unwrap().clone()
    }
}
