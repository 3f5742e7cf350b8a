//! The GSS-API calls behind the GSSAPI mechanism, on MIT krb5's
//! `libgssapi_krb5` through the `libgssapi` crate (as Debian's libzmq5 is
//! linked with it). The mechanism's bytes are laid out in `oxmq-proto`;
//! this module only makes and drives the security contexts.
//!
//! As libzmq: credentials are acquired for `GSSAPI_PRINCIPAL` when it is set
//! (else the library's default ones: the credential cache, or
//! `KRB5_CLIENT_KTNAME` / `KRB5_KTNAME`), the client asks for mutual
//! authentication and replay detection from `GSSAPI_SERVICE_PRINCIPAL`, and
//! both run in the connection's I/O thread (the KDC round trip included).

use std::sync::Arc;

use libgssapi::context::{ClientCtx, CtxFlags, SecurityContext, ServerCtx};
use libgssapi::credential::{Cred, CredUsage};
use libgssapi::name::Name;
use libgssapi::oid::{Oid, GSS_NT_HOSTBASED_SERVICE, GSS_NT_KRB5_PRINCIPAL, GSS_NT_USER_NAME};
use oxmq_proto::{GssContext, GssFailure, GssStep, GssapiConfig};
use zeroize::Zeroizing;

/// `ZMQ_GSSAPI_NT_*`: how a principal option is read.
pub mod name_type {
    /// `service@host`, as GSS-API's host-based service names (the default).
    pub const HOSTBASED: i32 = 0;
    /// A local user name.
    pub const USER_NAME: i32 = 1;
    /// A Kerberos principal name, `name/instance@REALM`.
    pub const KRB5_PRINCIPAL: i32 = 2;
}

/// The `ZMQ_GSSAPI_*` options, as libzmq keeps them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GssOptions {
    pub(crate) principal: Vec<u8>,
    pub(crate) service_principal: Vec<u8>,
    pub(crate) plaintext: bool,
    pub(crate) principal_nt: i32,
    pub(crate) service_principal_nt: i32,
}

impl GssOptions {
    /// The mechanism config a new connection's handshake runs with.
    pub(crate) fn config(&self) -> GssapiConfig {
        let opts = self.clone();
        GssapiConfig { plaintext: self.plaintext, new_context: Arc::new(move |acceptor| new_context(&opts, acceptor)) }
    }
}

/// A principal option as libzmq reads it: a C string, so up to its first NUL
/// (C callers often pass `strlen + 1` octets, libzmq's own tests among them).
fn c_string(value: &[u8]) -> &[u8] {
    value.split(|&b| b == 0).next().unwrap_or_default()
}

/// A GSS name from a principal option and its `ZMQ_GSSAPI_NT_*` type.
fn import_name(value: &[u8], nt: i32) -> Result<Name, GssFailure> {
    Name::new(c_string(value), Some(name_oid(nt))).map_err(failure)
}

fn name_oid(nt: i32) -> Oid<'static> {
    match nt {
        name_type::USER_NAME => GSS_NT_USER_NAME,
        name_type::KRB5_PRINCIPAL => GSS_NT_KRB5_PRINCIPAL,
        _ => GSS_NT_HOSTBASED_SERVICE,
    }
}

fn failure(e: libgssapi::error::Error) -> GssFailure {
    GssFailure { major: e.major.bits(), minor: e.minor }
}

/// Credentials for `principal`, or the defaults when it is empty.
fn credentials(principal: &[u8], nt: i32) -> Result<Option<Cred>, GssFailure> {
    if principal.is_empty() {
        return Ok(None);
    }
    let name = import_name(principal, nt)?;
    Cred::acquire(Some(&name), None, CredUsage::Both, None).map(Some).map_err(failure)
}

fn new_context(opts: &GssOptions, acceptor: bool) -> Result<Box<dyn GssContext>, GssFailure> {
    let cred = credentials(&opts.principal, opts.principal_nt)?;
    let ctx = if acceptor {
        Krb::Server(ServerCtx::new(cred))
    } else {
        let target = import_name(&opts.service_principal, opts.service_principal_nt)?;
        let flags = CtxFlags::GSS_C_MUTUAL_FLAG | CtxFlags::GSS_C_REPLAY_FLAG;
        Krb::Client(ClientCtx::new(cred, target, flags, None))
    };
    Ok(Box::new(ctx))
}

/// One krb5 security context, either side.
enum Krb {
    Client(ClientCtx),
    Server(ServerCtx),
}

impl Krb {
    fn sec(&mut self) -> &mut dyn SecurityContext {
        match self {
            Krb::Client(c) => c,
            Krb::Server(s) => s,
        }
    }
}

impl GssContext for Krb {
    fn step(&mut self, token: Option<&[u8]>) -> Result<GssStep, GssFailure> {
        let (out, complete) = match self {
            Krb::Client(c) => (c.step(token, None).map_err(failure)?, c.is_complete()),
            Krb::Server(s) => (s.step(token.unwrap_or_default(), None).map_err(failure)?, s.is_complete()),
        };
        Ok(GssStep { token: out.map(|b| b.to_vec()).unwrap_or_default(), complete })
    }

    fn wrap(&mut self, plaintext: &[u8]) -> Result<Vec<u8>, GssFailure> {
        self.sec().wrap(true, plaintext).map(|b| b.to_vec()).map_err(failure)
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Zeroizing<Vec<u8>>, GssFailure> {
        if !confidential(token) {
            return Err(GssFailure { major: GSS_S_BAD_QOP, minor: 0 });
        }
        self.sec().unwrap(token).map(|b| Zeroizing::new(b.to_vec())).map_err(failure)
    }

    fn peer_principal(&self) -> Result<Vec<u8>, GssFailure> {
        match self {
            Krb::Server(s) => s.source_name().and_then(|n| n.display_name()).map(|b| b.to_vec()).map_err(failure),
            // Only the acceptor asks ZAP.
            Krb::Client(_) => Err(GssFailure { major: libgssapi_no_context(), minor: 0 }),
        }
    }
}

/// `GSS_S_NO_CONTEXT`, the major status for a question the context cannot answer.
const fn libgssapi_no_context() -> u32 {
    8 << 16
}

/// `GSS_S_BAD_QOP`: a wrap token without confidentiality.
const GSS_S_BAD_QOP: u32 = 14 << 16;

/// Whether a krb5 wrap token was sealed (encrypted). libzmq requires it
/// (it asserts `conf_state`), and the `libgssapi` crate does not report
/// `conf_state`, so the token says it: RFC 4121's wrap tokens (`05 04`, every
/// enctype MIT krb5 uses by default) carry a Sealed flag (0x02) in their
/// third octet. Other token formats are left to `gss_unwrap`.
fn confidential(token: &[u8]) -> bool {
    match token {
        [0x05, 0x04, flags, ..] => flags & 0x02 != 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{c_string, confidential};

    #[test]
    fn principal_options_are_c_strings() {
        assert_eq!(c_string(b"zmqtest2\0"), b"zmqtest2");
        assert_eq!(c_string(b"a@B"), b"a@B");
        assert_eq!(c_string(b"a\0junk"), b"a");
    }

    #[test]
    fn rfc4121_wrap_tokens_must_be_sealed() {
        // TOK_ID 05 04, Flags (SentByAcceptor 01, Sealed 02, AcceptorSubkey 04), Filler FF.
        assert!(confidential(&[0x05, 0x04, 0x02, 0xFF, 0, 0]));
        assert!(confidential(&[0x05, 0x04, 0x07, 0xFF, 0, 0]));
        assert!(!confidential(&[0x05, 0x04, 0x00, 0xFF, 0, 0]));
        assert!(!confidential(&[0x05, 0x04, 0x05, 0xFF, 0, 0]));
        // Not an RFC 4121 wrap token: gss_unwrap decides.
        assert!(confidential(&[0x60, 0x30]));
        assert!(confidential(&[]));
    }
}
