//! Security helpers shared by every binding: Z85 (RFC 32), CURVE key
//! generation, and capability queries (`zmq_has`). The mechanisms
//! themselves live in `oxmq-proto`; the ZAP plumbing in `io::zap`.

use zeroize::Zeroizing;

use crate::error::{Error, Result};

const ALPHABET: &[u8; 85] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Character → value, 0xff for characters outside the alphabet.
const DECODE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 85 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Z85-encodes `data` (a multiple of 4 octets) into `out` (5/4 of its size).
pub fn z85_encode_into(data: &[u8], out: &mut [u8]) -> Option<()> {
    if !data.len().is_multiple_of(4) || out.len() < data.len() / 4 * 5 {
        return None;
    }
    for (chunk, dst) in data.chunks_exact(4).zip(out.chunks_exact_mut(5)) {
        let mut v = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        for d in dst.iter_mut().rev() {
            *d = ALPHABET[(v % 85) as usize];
            v /= 85;
        }
    }
    Some(())
}

/// Decodes Z85 `text` (a multiple of 5 characters) into `out` (4/5 of its size).
pub fn z85_decode_into(text: &[u8], out: &mut [u8]) -> Option<()> {
    if !text.len().is_multiple_of(5) || out.len() < text.len() / 5 * 4 {
        return None;
    }
    for (chunk, dst) in text.chunks_exact(5).zip(out.chunks_exact_mut(4)) {
        let mut v: u64 = 0;
        for &c in chunk {
            let d = DECODE[c as usize];
            if d == 0xff {
                return None;
            }
            v = v * 85 + d as u64;
        }
        let v = u32::try_from(v).ok()?;
        dst.copy_from_slice(&v.to_be_bytes());
    }
    Some(())
}

/// Z85 text of `data`; `None` unless its length is a multiple of 4.
pub fn z85_encode(data: &[u8]) -> Option<String> {
    let mut out = vec![0; data.len() / 4 * 5];
    z85_encode_into(data, &mut out)?;
    String::from_utf8(out).ok()
}

/// Octets of Z85 `text`; `None` if it is not valid Z85.
pub fn z85_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = vec![0; text.len() / 5 * 4];
    z85_decode_into(text, &mut out)?;
    Some(out)
}

/// A CURVE key from an option value: 32 octets, or 40 Z85 characters
/// (41 with a trailing NUL), exactly the forms libzmq accepts.
pub(crate) fn curve_key_from_option(value: &[u8]) -> Option<[u8; 32]> {
    let text = match value.len() {
        32 => return value.try_into().ok(),
        41 if value[40] == 0 => &value[..40],
        40 => value,
        _ => return None,
    };
    let mut key = [0; 32];
    z85_decode_into(text, &mut key)?;
    Some(key)
}

/// A new CURVE key pair `(public, secret)` from the OS's CSPRNG.
pub fn curve_keypair() -> Result<([u8; 32], Zeroizing<[u8; 32]>)> {
    let mut seed = Zeroizing::new([0u8; 32]);
    getrandom::getrandom(&mut *seed)
        .map_err(|e| Error::Io(std::io::Error::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EIO))))?;
    Ok(oxmq_proto::keypair_from_entropy(*seed))
}

/// The public key of a CURVE secret key.
pub fn curve_public(secret: &[u8; 32]) -> [u8; 32] {
    oxmq_proto::public_key_of(secret)
}

/// 32 fresh octets from the OS's CSPRNG, for a handshake.
pub(crate) fn fresh_entropy() -> [u8; 32] {
    let mut seed = [0u8; 32];
    // The OS refusing randomness is not recoverable; a handshake without it
    // would be unsafe, so fail loudly rather than run with zeros.
    getrandom::getrandom(&mut seed).expect("the OS CSPRNG must be available");
    seed
}

/// Whether a libzmq capability is built in (`zmq_has`): ipc and curve,
/// ws/wss (ZWS 2.0), and pgm/norm when the system library loads.
pub fn has(capability: &str) -> bool {
    // "draft": the C ABI exports libzmq's draft API (behind ZMQ_BUILD_DRAFT_API
    // in zmq.h) and Python has pyzmq's draft names, as a libzmq built with
    // --enable-drafts answers.
    matches!(capability, "ipc" | "curve" | "ws" | "wss" | "draft")
        // OpenPGM and NORM, as Debian's libzmq5 has them (transport::multicast),
        // when their libraries load in this process.
        || crate::transport::multicast::available(capability)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z85_round_trips_the_rfc32_example() {
        let data = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(z85_encode(&data).as_deref(), Some("HelloWorld"));
        assert_eq!(z85_decode(b"HelloWorld").as_deref(), Some(&data[..]));
        assert_eq!(z85_decode(b"Hello\x01orld"), None);
    }

    #[test]
    fn curve_keys_accept_binary_and_z85_forms() {
        let (public, _) = curve_keypair().unwrap();
        let text = z85_encode(&public).unwrap();
        assert_eq!(curve_key_from_option(&public), Some(public));
        assert_eq!(curve_key_from_option(text.as_bytes()), Some(public));
        let mut with_nul = text.clone().into_bytes();
        with_nul.push(0);
        assert_eq!(curve_key_from_option(&with_nul), Some(public));
        assert_eq!(curve_key_from_option(&public[..31]), None);
    }

    #[test]
    fn rfc26_client_key_pair() {
        let secret = z85_decode(b"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs").unwrap();
        let public = curve_public(&secret.try_into().unwrap());
        assert_eq!(z85_encode(&public).as_deref(), Some("Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"));
    }
}
