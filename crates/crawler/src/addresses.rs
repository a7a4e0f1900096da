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
/// for a public address. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) are classified as the
/// IPv4 address they carry, since a dual-stack socket reaches that address.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => non_public_v4(v4),
            None => non_public_v6(v6),
        },
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(match () {
        // 0.0.0.0/8, "this network": connecting to 0.0.0.0 reaches the machine itself.
        _ if a == 0 => "unspecified",
        _ if ip.is_loopback() => "loopback",
        _ if ip.is_private() => "private",
        // 100.64.0.0/10 (RFC 6598): carrier-grade NAT, a provider's internal network.
        _ if a == 100 && (64..128).contains(&b) => "shared",
        _ if ip.is_link_local() => "link-local",
        _ if ip.is_multicast() => "multicast",
        _ if ip.is_broadcast() => "broadcast",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    Some(match () {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_loopback() => "loopback",
        // fe80::/10
        _ if first & 0xffc0 == 0xfe80 => "link-local",
        // fc00::/7 (RFC 4193)
        _ if first & 0xfe00 == 0xfc00 => "unique-local",
        _ if ip.is_multicast() => "multicast",
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
        ] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }

    #[test]
    fn every_non_public_ipv6_range_is_named() {
        for (ip, want) in [
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fe80::1", "link-local"),
            ("febf:ffff::1", "link-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456:789a::1", "unique-local"),
            ("ff02::1", "multicast"),
            ("ff0e::fb", "multicast"),
        ] {
            assert_eq!(kind(ip), Some(want), "{ip}");
        }
        for ip in [
            "2001:4860:4860::8888",
            "2606:4700:4700::1111",
            "fec0::1",
            "fbff:ffff::1",
            "fe7f::1",
            // IPv4-compatible (deprecated, ::a.b.c.d) is not mapped: a socket does not reach
            // the IPv4 address through it.
            "::2",
        ] {
            assert_eq!(kind(ip), None, "{ip}");
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
