//! HTTPS for the test web: a certificate authority made at start-up, and a certificate for
//! every host name a client asks for.
//!
//! The test web serves thousands of host names on one port, so no fixed certificate can
//! cover them (a wildcard covers one label under one domain, and a graph with URLs has hosts
//! anywhere). Instead the server is its own CA: at start it makes a self-signed CA
//! certificate (exported as PEM for the client to trust, see [`TestCa::ca_pem`]) and, during
//! each handshake, signs a certificate for the name the client sent in SNI, cached so each
//! host costs one signature per server run. Leaf certificates share one key pair: their
//! number is the number of hosts, and key generation would otherwise dominate.
//!
//! Only the test web uses this; nothing here is meant to protect anything.

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::crypto::ring as provider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::{CertifiedKey, SigningKey};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The test web's certificate authority and its per-host certificates.
pub(crate) struct TestCa {
    ca_cert: Certificate,
    ca_key: KeyPair,
    ca_pem: String,
    leaf_key: KeyPair,
    leaf_signing: Arc<dyn SigningKey>,
    issued: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

impl TestCa {
    /// A fresh CA (new keys every run: nothing to leak, nothing to expire).
    pub fn new() -> Result<TestCa> {
        let mut params = CertificateParams::new(Vec::<String>::new())
            .context("cannot make the test CA's parameters")?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "crawlrank test web CA");
        dn.push(DnType::OrganizationName, "crawlrank");
        params.distinguished_name = dn;
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_key = KeyPair::generate().context("cannot make the test CA's key")?;
        let ca_cert = params
            .self_signed(&ca_key)
            .context("cannot sign the test CA's certificate")?;
        let ca_pem = ca_cert.pem();
        let leaf_key = KeyPair::generate().context("cannot make the test web's host key")?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let leaf_signing = provider::sign::any_supported_type(&der)
            .context("rustls cannot use the test web's host key")?;
        Ok(TestCa {
            ca_cert,
            ca_key,
            ca_pem,
            leaf_key,
            leaf_signing,
            issued: Mutex::new(HashMap::new()),
        })
    }

    /// The CA certificate in PEM: what a client must trust to accept the test web.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The certificate chain and key for `host`, signed on first use.
    fn certified(&self, host: &str) -> Option<Arc<CertifiedKey>> {
        let host = host.to_ascii_lowercase();
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = issued.get(&host) {
            return Some(c.clone());
        }
        let mut params = CertificateParams::new(vec![host.clone()]).ok()?;
        params
            .distinguished_name
            .push(DnType::CommonName, host.clone());
        let cert = params
            .signed_by(&self.leaf_key, &self.ca_cert, &self.ca_key)
            .ok()?;
        let chain = vec![
            CertificateDer::from(cert.der().to_vec()),
            CertificateDer::from(self.ca_cert.der().to_vec()),
        ];
        let ck = Arc::new(CertifiedKey::new(chain, self.leaf_signing.clone()));
        issued.insert(host, ck.clone());
        Some(ck)
    }

    /// A rustls server configuration (HTTP/1.1 only) answering with [`Self`]'s certificates.
    pub fn server_config(self: &Arc<Self>) -> Result<Arc<rustls::ServerConfig>> {
        let mut cfg =
            rustls::ServerConfig::builder_with_provider(Arc::new(provider::default_provider()))
                .with_safe_default_protocol_versions()
                .context("rustls refuses its default protocol versions")?
                .with_no_client_auth()
                .with_cert_resolver(Arc::new(ByServerName(self.clone())));
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(cfg))
    }
}

/// Chooses the certificate by the SNI name; a client that sends none gets no handshake.
#[derive(Debug)]
struct ByServerName(Arc<TestCa>);

impl ResolvesServerCert for ByServerName {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.certified(hello.server_name()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_one_cached_certificate_per_host() {
        let ca = TestCa::new().unwrap();
        assert!(ca.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let a = ca.certified("H1.crawlrank.test").unwrap();
        let b = ca.certified("h1.crawlrank.test").unwrap();
        assert!(Arc::ptr_eq(&a, &b), "case-insensitive cache");
        let c = ca.certified("h2.crawlrank.test").unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(a.cert.len(), 2, "leaf then CA");
    }
}
