//! The 64-octet ZMTP 3.x greeting.

use crate::error::{ProtocolError, UsageError};

/// Octets of a full ZMTP 3.x greeting (signature, version, mechanism, as-server, filler).
pub const GREETING_LEN: usize = 64;

/// Octets that arrive before the version octet: signature + padding.
pub(crate) const SIGNATURE_LEN: usize = 10;
pub(crate) const MECHANISM_OFFSET: usize = 12;
pub(crate) const MECHANISM_LEN: usize = 20;
const AS_SERVER_OFFSET: usize = 32;

/// A parsed or to-be-sent greeting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Greeting {
    /// The ZMTP major version (3; lower for older peers, which get other framing).
    pub major: u8,
    /// The ZMTP minor version (0 or 1).
    pub minor: u8,
    /// ASCII name, NUL-padded to 20 octets.
    pub mechanism: [u8; 20],
    /// The as-server octet: whether this side is the mechanism's server (always false for NULL).
    pub as_server: bool,
}

impl Greeting {
    /// A ZMTP 3.1 greeting for the named mechanism.
    pub fn new(mechanism: &str, as_server: bool) -> Result<Greeting, UsageError> {
        let name = mechanism.as_bytes();
        if name.is_empty() || name.len() > MECHANISM_LEN {
            return Err(UsageError::BadMechanismNameLength { len: name.len() });
        }
        let mut field = [0u8; 20];
        field[..name.len()].copy_from_slice(name);
        Ok(Greeting { major: 3, minor: 1, mechanism: field, as_server })
    }

    /// The 64 octets to send.
    pub fn encode(&self) -> [u8; GREETING_LEN] {
        let mut g = [0u8; GREETING_LEN];
        g[0] = 0xFF;
        // libzmq puts a big-endian `routing_id_size + 1` in the padding for
        // ZMTP/1.0 detection; 1 is what an empty routing id gives. The value
        // is irrelevant to versioned peers, which MUST NOT validate it.
        g[1..9].copy_from_slice(&1u64.to_be_bytes());
        g[9] = 0x7F;
        g[10] = self.major;
        g[11] = self.minor;
        g[MECHANISM_OFFSET..MECHANISM_OFFSET + MECHANISM_LEN].copy_from_slice(&self.mechanism);
        g[AS_SERVER_OFFSET] = u8::from(self.as_server);
        g
    }

    /// Parses a complete greeting. Like libzmq, only octet 0 and bit 0 of
    /// octet 9 are checked for the signature; the padding is ignored.
    pub fn decode(buf: &[u8; GREETING_LEN]) -> Result<Greeting, ProtocolError> {
        check_prefix(buf)?;
        let mut mechanism = [0u8; 20];
        mechanism.copy_from_slice(&buf[MECHANISM_OFFSET..MECHANISM_OFFSET + MECHANISM_LEN]);
        Ok(Greeting {
            major: buf[10],
            minor: buf[11],
            mechanism,
            // Anything but 0 counts as set: the field is a boolean and the
            // RFC gives no other meaning to other values.
            as_server: buf[AS_SERVER_OFFSET] != 0,
        })
    }

    /// The mechanism name up to the first NUL.
    pub fn mechanism_name(&self) -> &[u8] {
        let end = self.mechanism.iter().position(|&b| b == 0).unwrap_or(self.mechanism.len());
        &self.mechanism[..end]
    }

    /// The version both sides speak: ZMTP 3.0 if the peer says 3.0,
    /// otherwise 3.1 (a peer MUST accept higher versions, so 3.2 or 4.x
    /// talk 3.1 to us).
    pub fn negotiated_version(&self) -> (u8, u8) {
        if self.major == 3 && self.minor == 0 {
            (3, 0)
        } else {
            (3, 1)
        }
    }
}

/// Whether the octets received so far show an unversioned ZMTP/1.0 peer
/// (RFC 13: no greeting, its identity frame first). As libzmq decides: octet
/// 0 is not 0xFF (a short size), or it is and bit 0 of octet 9 is clear
/// (a long size followed by flags without MORE). A versioned signature has
/// 0x7F there.
pub(crate) fn is_unversioned(prefix: &[u8]) -> bool {
    prefix.first().is_some_and(|&b| b != 0xFF) || prefix.get(SIGNATURE_LEN - 1).is_some_and(|&b| b & 1 == 0)
}

/// Validates whatever part of a greeting has arrived, so that a ZMTP/1.0 or
/// 2.0 peer is refused as soon as it shows itself instead of after a wait
/// for 64 octets it will never send.
pub(crate) fn check_prefix(prefix: &[u8]) -> Result<(), ProtocolError> {
    // A ZMTP/1.0 peer starts with its identity frame, whose first octet (a
    // length) is never 0xFF; libzmq classifies on octet 0 and octet 9.
    if prefix.first().is_some_and(|&b| b != 0xFF) {
        return Err(ProtocolError::BadSignature);
    }
    if prefix.get(SIGNATURE_LEN - 1).is_some_and(|&b| b & 1 == 0) {
        return Err(ProtocolError::BadSignature);
    }
    if let Some(&v) = prefix.get(SIGNATURE_LEN) {
        if v < 3 {
            // libzmq: revision 0 is ZMTP/1.0, 1 is ZMTP/2.0.
            return Err(ProtocolError::UnsupportedVersion { major: if v == 0 { 1 } else { 2 } });
        }
    }
    Ok(())
}
