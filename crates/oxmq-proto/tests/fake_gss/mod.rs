//! A stand-in for Kerberos shared by the GSSAPI tests (no KDC needed), with
//! mutual authentication: the initiator sends `AP-REQ`, the acceptor answers
//! `AP-REP` and is done, the initiator checks it and is done with no token.
//! "Wrapping" XORs with 0x5A behind a `W` and is refused unless it starts
//! with `W`; a context may be made to expire after a number of wraps.

use oxmq_proto::{GssContext, GssFailure, GssStep, GssapiConfig};
use std::sync::Arc;
use zeroize::Zeroizing;

pub(crate) struct FakeGss {
    acceptor: bool,
    steps: u8,
    fail_step: bool,
    /// Wraps left before the context "expires"; `None`: never.
    wraps_left: Option<usize>,
}

pub(crate) const FAKE_FAILURE: GssFailure = GssFailure { major: 0xD_0000, minor: 7 };
/// GSS_S_CONTEXT_EXPIRED.
pub(crate) const EXPIRED: GssFailure = GssFailure { major: 0xC_0000, minor: 0 };

impl GssContext for FakeGss {
    fn step(&mut self, token: Option<&[u8]>) -> Result<GssStep, GssFailure> {
        self.steps += 1;
        if self.fail_step {
            return Err(FAKE_FAILURE);
        }
        match (self.acceptor, self.steps, token) {
            (false, 1, None) => Ok(GssStep { token: b"AP-REQ".to_vec(), complete: false }),
            (true, 1, Some(b"AP-REQ")) => Ok(GssStep { token: b"AP-REP".to_vec(), complete: true }),
            (false, 2, Some(b"AP-REP")) => Ok(GssStep { token: Vec::new(), complete: true }),
            _ => Err(GssFailure { major: 0x9_0000, minor: 0 }),
        }
    }

    fn wrap(&mut self, plaintext: &[u8]) -> Result<Vec<u8>, GssFailure> {
        match &mut self.wraps_left {
            Some(0) => return Err(EXPIRED),
            Some(n) => *n -= 1,
            None => {}
        }
        Ok(std::iter::once(b'W').chain(plaintext.iter().map(|b| b ^ 0x5A)).collect())
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Zeroizing<Vec<u8>>, GssFailure> {
        match token.split_first() {
            Some((b'W', rest)) => Ok(Zeroizing::new(rest.iter().map(|b| b ^ 0x5A).collect())),
            _ => Err(GssFailure { major: 0x6_0000, minor: 0 }),
        }
    }

    fn peer_principal(&self) -> Result<Vec<u8>, GssFailure> {
        Ok(b"client@OXMQ.TEST".to_vec())
    }
}

/// GSSAPI options whose contexts are [`FakeGss`]: `fail_step` fails every
/// step; `wraps` limits how many wraps (handshake READY included) a
/// context makes before it expires.
pub(crate) fn fake_gssapi(plaintext: bool, fail_step: bool, wraps: Option<usize>) -> GssapiConfig {
    GssapiConfig {
        plaintext,
        new_context: Arc::new(move |acceptor| {
            Ok(Box::new(FakeGss { acceptor, steps: 0, fail_step, wraps_left: wraps }) as Box<dyn GssContext>)
        }),
    }
}
