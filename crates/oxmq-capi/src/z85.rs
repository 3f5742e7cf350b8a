//! Z85 (ZeroMQ RFC 32): 4 bytes ↔ 5 printable characters, big-endian base 85.

use crate::boundary::{EFAULT, EINVAL};
use std::ffi::{c_char, CStr};

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

/// Encode `data` (a multiple of 4 bytes) into `out` (5/4 of its size).
pub(crate) fn encode_into(data: &[u8], out: &mut [u8]) -> Option<()> {
    if data.len() % 4 != 0 || out.len() < data.len() / 4 * 5 {
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

/// Decode `text` (a multiple of 5 characters) into `out` (4/5 of its size).
pub(crate) fn decode_into(text: &[u8], out: &mut [u8]) -> Option<()> {
    if text.len() % 5 != 0 || out.len() < text.len() / 5 * 4 {
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

/// Encode `size` bytes (a multiple of 4) into `dest`, which holds
/// `size * 5 / 4 + 1` bytes; returns `dest`, or NULL with EINVAL.
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_encode(dest: *mut c_char, data: *const u8, size: usize) -> *mut c_char {
    ffi_ptr!({
        if size % 4 != 0 {
            return Err(EINVAL);
        }
        if dest.is_null() || (data.is_null() && size != 0) {
            return Err(EFAULT);
        }
        let chars = size / 4 * 5;
        // SAFETY: zmq.h: `data` holds `size` readable bytes (NULL only when 0).
        let input = unsafe { crate::handle::bytes(data.cast(), size) }?;
        // SAFETY: zmq.h: `dest` holds `size * 5 / 4 + 1` writable bytes.
        let out = unsafe { crate::handle::bytes_mut(dest.cast(), chars + 1) }?;
        encode_into(input, &mut out[..chars]).ok_or(EINVAL)?;
        out[chars] = 0;
        Ok(dest)
    })
}

/// Decode the NUL-terminated `string` (length a multiple of 5) into `dest`,
/// which holds `strlen * 4 / 5` bytes; returns `dest`, or NULL with EINVAL.
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_decode(dest: *mut u8, string: *const c_char) -> *mut u8 {
    ffi_ptr!({
        if dest.is_null() || string.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL and NUL-terminated (zmq.h contract).
        let text = unsafe { CStr::from_ptr(string) }.to_bytes();
        if text.len() % 5 != 0 {
            return Err(EINVAL);
        }
        // SAFETY: zmq.h: `dest` holds `strlen * 4 / 5` writable bytes.
        let out = unsafe { crate::handle::bytes_mut(dest.cast(), text.len() / 5 * 4) }?;
        decode_into(text, out).ok_or(EINVAL)?;
        Ok(dest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn can_round_trip_the_rfc_32_test_vector() {
        let data = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        let mut text = [0u8; 10];
        encode_into(&data, &mut text).unwrap();
        assert_eq!(&text, b"HelloWorld");
        let mut back = [0u8; 8];
        decode_into(&text, &mut back).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn rejects_bad_lengths_characters_and_overflow() {
        let mut out = [0u8; 16];
        assert!(encode_into(&[1, 2, 3], &mut out).is_none());
        assert!(decode_into(b"Hell", &mut out).is_none());
        assert!(decode_into(b"Hell~", &mut out).is_none());
        // "%%%%%" is 84*(85^4+...+1) > u32::MAX.
        assert!(decode_into(b"%%%%%", &mut out).is_none());
    }
}
