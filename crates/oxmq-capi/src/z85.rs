//! Z85 (ZeroMQ RFC 32): 4 bytes ↔ 5 printable characters, big-endian base 85.

use crate::boundary::{EFAULT, EINVAL};
use std::ffi::{c_char, CStr};

pub(crate) use oxmq::security::{z85_decode_into as decode_into, z85_encode_into as encode_into};

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

/// Decode the NUL-terminated `string` (length a non-zero multiple of 5, as
/// libzmq requires) into `dest`, which holds `strlen * 4 / 5` bytes; returns
/// `dest`, or NULL with EINVAL.
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_decode(dest: *mut u8, string: *const c_char) -> *mut u8 {
    ffi_ptr!({
        if dest.is_null() || string.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL and NUL-terminated (zmq.h contract).
        let text = unsafe { CStr::from_ptr(string) }.to_bytes();
        if text.is_empty() || text.len() % 5 != 0 {
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
