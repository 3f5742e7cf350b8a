//! wss://: a rustls session driven over a non-blocking tcp socket, and the
//! configurations built from the WSS_* socket options.
//!
//! libzmq (4.3.5, GnuTLS) semantics kept: a wss listener serves the PEM
//! certificate chain and key of ZMQ_WSS_CERT_PEM / ZMQ_WSS_KEY_PEM; a wss
//! connecter trusts the PEM certificates of ZMQ_WSS_TRUST_PEM and, with
//! ZMQ_WSS_TRUST_SYSTEM, the system's roots, and checks the server's name
//! against ZMQ_WSS_HOSTNAME (or the endpoint's host when unset).

use super::NoSigpipe;
use crate::error::Error;
use crate::options::Options;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{self, Read, Write};
use std::sync::Arc;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The listener's TLS configuration (EINVAL without a usable cert and key).
pub(crate) fn server_config(opts: &Options) -> Result<Arc<rustls::ServerConfig>, Error> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&opts.wss.cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|_| Error::Invalid("ZMQ_WSS_CERT_PEM is not a PEM certificate chain"))?;
    if certs.is_empty() {
        return Err(Error::Invalid("wss:// bind needs ZMQ_WSS_CERT_PEM"));
    }
    let key = PrivateKeyDer::from_pem_slice(&opts.wss.key_pem)
        .map_err(|_| Error::Invalid("wss:// bind needs a PEM private key in ZMQ_WSS_KEY_PEM"))?;
    let cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|_| Error::Invalid("TLS provider has no protocol versions"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|_| Error::Invalid("ZMQ_WSS_CERT_PEM and ZMQ_WSS_KEY_PEM do not make a usable pair"))?;
    Ok(Arc::new(cfg))
}

/// The connecter's TLS configuration and the name the server must prove.
pub(crate) fn client_config(
    opts: &Options,
    host: &str,
) -> Result<(Arc<rustls::ClientConfig>, ServerName<'static>), Error> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&opts.wss.trust_pem) {
        let cert = cert.map_err(|_| Error::Invalid("ZMQ_WSS_TRUST_PEM is not PEM"))?;
        roots.add(cert).map_err(|_| Error::Invalid("ZMQ_WSS_TRUST_PEM holds an unusable certificate"))?;
    }
    if opts.wss.trust_system {
        for cert in rustls_native_certs::load_native_certs().certs {
            // Unparsable system certificates are skipped, as OpenSSL does.
            let _ = roots.add(cert);
        }
    }
    let name = if opts.wss.hostname.is_empty() { host.as_bytes() } else { &opts.wss.hostname[..] };
    let name = std::str::from_utf8(name).map_err(|_| Error::Invalid("ZMQ_WSS_HOSTNAME is not text"))?;
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(name.to_string()).map_err(|_| Error::Invalid("bad wss host name"))?;
    let cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|_| Error::Invalid("TLS provider has no protocol versions"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok((Arc::new(cfg), name))
}

/// One TLS session.
pub(crate) struct Tls {
    conn: rustls::Connection,
}

impl Tls {
    pub(crate) fn server(cfg: &Arc<rustls::ServerConfig>) -> io::Result<Tls> {
        let conn = rustls::ServerConnection::new(cfg.clone()).map_err(io::Error::other)?;
        Ok(Tls { conn: conn.into() })
    }

    pub(crate) fn client(cfg: &Arc<rustls::ClientConfig>, name: ServerName<'static>) -> io::Result<Tls> {
        let conn = rustls::ClientConnection::new(cfg.clone(), name).map_err(io::Error::other)?;
        Ok(Tls { conn: conn.into() })
    }

    pub(crate) fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Hands plaintext to the session (it is sent once the handshake is
    /// done); returns how much it took.
    pub(crate) fn write_plain(&mut self, data: &[u8]) -> io::Result<usize> {
        self.conn.writer().write(data)
    }

    /// Sends queued TLS records. `Ok(true)`: none left.
    pub(crate) fn flush(&mut self, tcp: &mut mio::net::TcpStream) -> io::Result<bool> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut NoSigpipe(tcp)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Reads plaintext; `Ok(0)` is the end of the stream.
    pub(crate) fn read_plain(&mut self, tcp: &mut mio::net::TcpStream, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed tcp without close_notify: an end all the same.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(tcp) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    if let Err(e) = self.conn.process_new_packets() {
                        // Tell the peer why (an alert), then give up.
                        let _ = self.flush(tcp);
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
