//! Which IP addresses a crawl may connect to: none of the machine's own or of its local
//! networks, unless the user named the host.
//!
//! Why: a crawler runs inside a network, and the web it reads is written by others. A page
//! (or a redirect, or a public name whose DNS answer says `10.0.0.5`) can point it at
//! `http://127.0.0.1:8080/admin`, a router's page or a cloud's metadata service at
//! `169.254.169.254`, and the crawl would fetch them, follow their links and archive them —
//! server-side request forgery done by a crawler. So by default the connector
//! (`crate::http`) refuses every resolved address that [`non_public`] names, unless the URL's
//! host is one of the seeds' own hosts (the user named it) or `--allow-private-networks` is
//! given ([`AddressGuard`]). The check is on the address connected to, after name resolution,
//! so it covers links, redirects and names alike.
//!
//! This module is pure (no I/O) so that the classification is tested range by range.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of a non-public address: why a crawl does not connect to it by default. `None`
/// for a public address.
///
/// The table is the IANA special-purpose address registries (IPv4 and IPv6), every range
/// that is not globally reachable, plus multicast, broadcast and the reserved space. IPv6
/// forms that carry an IPv4 address a connection ends up at are classified as that IPv4
/// address: IPv4-mapped (`::ffff:a.b.c.d`, which a dual-stack socket reaches), NAT64
/// (`64:ff9b::a.b.c.d`, which a NAT64 gateway forwards, so `64:ff9b::a9fe:a9fe` is
/// 169.254.169.254) and 6to4 (`2002:AABB:CCDD::/48`, which a 6to4 relay forwards to
/// `A.B.C.D`). Public IPv4 sites stay reachable through NAT64 (an IPv6-only network with DNS64
/// answers every IPv4-only name so). IPv6 outside the global unicast block `2000::/3` is not
/// public whatever it is (`::/8`, `100::/64`, `5f00::/16`, `fc00::/7`, `fec0::/10`…).
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => non_public_v4(v4),
            None => non_public_v6(v6),
        },
    }
}

/// The IPv4 address an IPv6 address leads to, for the forms that lead to one: IPv4-mapped
/// `::ffff:0:0/96`, NAT64 `64:ff9b::/96` (RFC 6052) and 6to4 `2002::/16` (RFC 3056).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match () {
        // 0.0.0.0/8, "this network": connecting to 0.0.0.0 reaches the machine itself.
        _ if a == 0 => "unspecified",
        _ if ip.is_loopback() => "loopback",
        _ if ip.is_private() => "private",
        // 100.64.0.0/10 (RFC 6598): carrier-grade NAT, a provider's internal network.
        _ if a == 100 && (64..128).contains(&b) => "shared",
        _ if ip.is_link_local() => "link-local",
        // 192.0.0.0/24 (RFC 6890): IETF protocol assignments, among them DS-Lite's and
        // NAT64's own addresses (192.0.0.0/29, 192.0.0.170/31).
        _ if (a, b, c) == (192, 0, 0) => "protocol-assignment",
        // 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 (RFC 5737).
        _ if matches!((a, b, c), (192, 0, 2) | (198, 51, 100) | (203, 0, 113)) => "documentation",
        // 192.88.99.0/24 (RFC 7526): the deprecated 6to4 relays' anycast.
        _ if (a, b, c) == (192, 88, 99) => "6to4-relay",
        // 198.18.0.0/15 (RFC 2544): benchmarking networks, often a lab's inside.
        _ if a == 198 && (b == 18 || b == 19) => "benchmarking",
        _ if ip.is_multicast() => "multicast",
        _ if ip.is_broadcast() => "broadcast",
        // 240.0.0.0/4 (RFC 1112): reserved, never routed on the Internet.
        _ if a >= 240 => "reserved",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let first = s[0];
    Some(match () {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_loopback() => "loopback",
        // ::/96 (RFC 4291 §2.5.5.1): IPv4-compatible, deprecated; some stacks still reach
        // the IPv4 address through it.
        _ if s[..6] == [0; 6] => "ipv4-compatible",
        // 64:ff9b:1::/48 (RFC 8215): local-use IPv4/IPv6 translation, a network's own.
        _ if s[..3] == [0x64, 0xff9b, 1] => "translation",
        // 100::/64 (RFC 6666): discard-only.
        _ if s[..4] == [0x100, 0, 0, 0] => "discard",
        // fe80::/10
        _ if first & 0xffc0 == 0xfe80 => "link-local",
        // fec0::/10 (RFC 3879): site-local, deprecated but still routed inside some sites.
        _ if first & 0xffc0 == 0xfec0 => "site-local",
        // fc00::/7 (RFC 4193)
        _ if first & 0xfe00 == 0xfc00 => "unique-local",
        _ if ip.is_multicast() => "multicast",
        // Outside 2000::/3, the global unicast block, nothing is assigned for the Internet.
        _ if first & 0xe000 != 0x2000 => "reserved",
        // 2001:db8::/32 (RFC 3849), 3fff::/20 (RFC 9637).
        _ if s[..2] == [0x2001, 0xdb8] || first == 0x3fff && s[1] < 0x1000 => "documentation",
        // 2001::/23 (RFC 2928): IETF protocol assignments, Teredo (2001::/32) and ORCHID
        // among them; not globally reachable but for the ones the registry says are
        // (2001:1::1/128, 2001:1::2/128, 2001:3::/32, 2001:4:112::/48, 2001:20::/28).
        _ if first == 0x2001 && s[1] < 0x200 => {
            let global = matches!(s, [_, 1, 0, 0, 0, 0, 0, 1 | 2])
                || s[1] == 3
                || s[1..3] == [4, 0x112]
                || (0x20..0x30).contains(&s[1]);
            if global {
                return None;
            }
            "protocol-assignment"
        }
        _ => return None,
    })
}

/// The rule the connector applies: which hosts may have non-public addresses.
#[derive(Debug, Clone, Default)]
pub struct AddressGuard {
    /// Connect to any address (`--allow-private-networks`).
    pub allow_private: bool,
    /// The host names and IP literals of the seeds, as [`url::Url::host_str`] writes them
    /// (lower case, IPv6 in brackets): the user named them, so their addresses are allowed
    /// whatever they are.
    pub named_hosts: HashSet<String>,
}

impl AddressGuard {
    /// Whether `host`'s addresses are taken as they are, without the check.
    pub fn trusts(&self, host: &str) -> bool {
        self.allow_private || self.named_hosts.contains(host)
    }

    /// Why `ip`, an address of `host`, must not be connected to; `None` when it may.
    pub fn refuses(&self, host: &str, ip: IpAddr) -> Option<&'static str> {
        if self.trusts(host) {
            return None;
        }
        non_public(ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<&'static str> {
        non_public(s.parse().unwrap())
    }

    #[test]
    fn every_non_public_ipv4_range_is_named() {
        for (ip, want) in [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("127.0.0.1", "loopback"),
            ("127.0.0.2", "loopback"),
            ("127.255.255.254", "loopback"),
            ("10.0.0.1", "private"),
            ("10.255.255.255", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.254", "private"),
            ("192.168.0.1", "private"),
            ("192.168.255.255", "private"),
            ("100.64.0.1", "shared"),
            ("100.127.255.254", "shared"),
            ("169.254.169.254", "link-local"),
            ("169.254.0.1", "link-local"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("192.0.0.0", "protocol-assignment"),
            ("192.0.0.170", "protocol-assignment"),
            ("192.0.0.255", "protocol-assignment"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.255", "documentation"),
            ("192.88.99.1", "6to4-relay"),
            ("198.18.0.0", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("240.0.0.0", "reserved"),
            ("250.1.2.3", "reserved"),
            ("255.255.255.254", "reserved"),
        ] {
            assert_eq!(kind(ip), Some(want), "{ip}");
        }
        // Their neighbours are public.
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.1",
            "126.255.255.255",
            "128.0.0.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.167.255.255",
            "192.169.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.255.255",
            "169.255.0.1",
            "223.255.255.255",
            "93.184.215.14",
            "191.255.255.255",
            "192.0.1.0",
            "192.0.3.0",
            "192.88.98.255",
            "192.88.100.0",
            "198.17.255.255",
            "198.20.0.0",
            "198.51.99.255",
            "198.51.101.0",
            "203.0.112.255",
            "203.0.114.0",
            // Globally reachable parts of the registry.
            "192.31.196.1",
            "192.52.193.1",
            "192.175.48.1",
        ] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }

    #[test]
    fn every_non_public_ipv6_range_is_named() {
        for (ip, want) in [
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::2", "ipv4-compatible"),
            ("::a9fe:a9fe", "ipv4-compatible"),
            ("::8.8.8.8", "ipv4-compatible"),
            ("::ffff", "ipv4-compatible"),
            ("64:ff9b:1::1", "translation"),
            ("64:ff9b:1:ffff::1", "translation"),
            ("100::", "discard"),
            ("100::ffff:ffff:ffff:ffff", "discard"),
            ("fe80::1", "link-local"),
            ("febf:ffff::1", "link-local"),
            ("fec0::1", "site-local"),
            ("feff:ffff::1", "site-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456:789a::1", "unique-local"),
            ("ff02::1", "multicast"),
            ("ff0e::fb", "multicast"),
            ("fbff:ffff::1", "reserved"),
            ("fe7f::1", "reserved"),
            ("5f00::1", "reserved"),
            ("1fff:ffff::1", "reserved"),
            ("4000::1", "reserved"),
            ("100:0:0:1::1", "reserved"),
            ("2001:db8::1", "documentation"),
            ("2001:db8:ffff::1", "documentation"),
            ("3fff::1", "documentation"),
            ("3fff:fff::1", "documentation"),
            ("2001::1", "protocol-assignment"),
            ("2001:0:4136:e378::1", "protocol-assignment"),
            ("2001:2::1", "protocol-assignment"),
            ("2001:10::1", "protocol-assignment"),
            ("2001:1::3", "protocol-assignment"),
            ("2001:1ff:ffff::1", "protocol-assignment"),
        ] {
            assert_eq!(kind(ip), Some(want), "{ip}");
        }
        for ip in [
            "2001:4860:4860::8888",
            "2606:4700:4700::1111",
            "2000::1",
            "3ffe:ffff::1",
            "3fff:1000::1",
            "2001:200::1",
            "2001:db7:ffff::1",
            "2001:db9::1",
            // The registry's globally reachable parts of 2001::/23.
            "2001:1::1",
            "2001:1::2",
            "2001:3::1",
            "2001:4:112::1",
            "2001:20::1",
            "2001:2f:ffff::1",
            // NAT64 and 6to4 of a public IPv4 address.
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
        ] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }

    #[test]
    fn nat64_and_6to4_addresses_are_the_ipv4_address_they_lead_to() {
        for (ip, want) in [
            ("64:ff9b::169.254.169.254", Some("link-local")),
            ("64:ff9b::a9fe:a9fe", Some("link-local")),
            ("64:ff9b::127.0.0.1", Some("loopback")),
            ("64:ff9b::10.0.0.1", Some("private")),
            ("64:ff9b::192.0.0.171", Some("protocol-assignment")),
            ("64:ff9b::1.1.1.1", None),
            // 2002:AABB:CCDD::/48 leads to A.B.C.D, whatever the rest.
            ("2002:a9fe:a9fe::1", Some("link-local")),
            ("2002:7f00:1::", Some("loopback")),
            ("2002:c0a8:101:5::1", Some("private")),
            ("2002:f000::1", Some("reserved")),
            ("2002::1", Some("unspecified")),
            ("2002:101:101::1", None),
        ] {
            assert_eq!(kind(ip), want, "{ip}");
        }
    }

    #[test]
    fn ipv4_mapped_ipv6_addresses_are_their_ipv4_address() {
        for (ip, want) in [
            ("::ffff:0.0.0.0", Some("unspecified")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:10.1.2.3", Some("private")),
            ("::ffff:172.16.5.4", Some("private")),
            ("::ffff:192.168.1.1", Some("private")),
            ("::ffff:100.64.1.1", Some("shared")),
            ("::ffff:169.254.169.254", Some("link-local")),
            ("::ffff:224.0.0.251", Some("multicast")),
            ("::ffff:255.255.255.255", Some("broadcast")),
            ("::ffff:198.18.0.1", Some("benchmarking")),
            ("::ffff:240.0.0.1", Some("reserved")),
            ("::ffff:8.8.8.8", None),
        ] {
            assert_eq!(kind(ip), want, "{ip}");
        }
    }

    #[test]
    fn named_hosts_and_the_allow_flag_lift_the_check() {
        let guard = AddressGuard {
            allow_private: false,
            named_hosts: ["127.0.0.1", "intranet.example", "[::1]"]
                .map(String::from)
                .into(),
        };
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(guard.refuses("127.0.0.1", lo), None);
        assert_eq!(guard.refuses("intranet.example", lo), None);
        assert_eq!(guard.refuses("[::1]", "::1".parse().unwrap()), None);
        assert_eq!(guard.refuses("localhost", lo), Some("loopback"));
        assert_eq!(
            guard.refuses("public.example", "8.8.8.8".parse().unwrap()),
            None
        );
        let open = AddressGuard {
            allow_private: true,
            ..AddressGuard::default()
        };
        assert_eq!(open.refuses("localhost", lo), None);
    }
}
