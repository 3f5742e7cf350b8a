//! CURVE key generation (`zmq_curve_keypair`, `zmq_curve_public`): X25519
//! keys from the core (`oxmq::security`), Z85-encoded as 40 characters plus NUL.

use crate::boundary::{CResult, Errno, EFAULT, EINVAL};
use crate::z85::{decode_into, encode_into};
use std::ffi::{c_char, c_int, CStr};

/// Write a 32-byte key as 40 Z85 characters and a NUL.
///
/// # Safety
/// `dest` is NULL or holds 41 writable bytes.
unsafe fn write_key(dest: *mut c_char, key: &[u8; 32]) -> CResult<()> {
    // SAFETY: forwarded caller contract.
    let out = unsafe { crate::handle::bytes_mut(dest.cast(), 41) }?;
    encode_into(key, &mut out[..40]).ok_or(EINVAL)?;
    out[40] = 0;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn zmq_curve_keypair(z85_public_key: *mut c_char, z85_secret_key: *mut c_char) -> c_int {
    ffi_int!({
        if z85_public_key.is_null() || z85_secret_key.is_null() {
            return Err(EFAULT);
        }
        let (public, secret) = oxmq::security::curve_keypair().map_err(|_| Errno(libc::EIO))?;
        // SAFETY: zmq.h: both buffers hold 41 writable bytes.
        unsafe {
            write_key(z85_public_key, &public)?;
            write_key(z85_secret_key, &secret)?;
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_curve_public(z85_public_key: *mut c_char, z85_secret_key: *const c_char) -> c_int {
    ffi_int!({
        if z85_public_key.is_null() || z85_secret_key.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL and NUL-terminated (zmq.h contract: 40 characters).
        let text = unsafe { CStr::from_ptr(z85_secret_key) }.to_bytes();
        if text.len() != 40 {
            return Err(EINVAL);
        }
        let mut raw = [0u8; 32];
        decode_into(text, &mut raw).ok_or(EINVAL)?;
        let public = oxmq::security::curve_public(&raw);
        // SAFETY: zmq.h: the public key buffer holds 41 writable bytes.
        unsafe { write_key(z85_public_key, &public) }?;
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_key_matches_the_keypair() {
        let mut public = [0 as c_char; 41];
        let mut secret = [0 as c_char; 41];
        let mut derived = [0 as c_char; 41];
        // SAFETY: 41-byte buffers, NUL-terminated output.
        unsafe {
            assert_eq!(zmq_curve_keypair(public.as_mut_ptr(), secret.as_mut_ptr()), 0);
            assert_eq!(zmq_curve_public(derived.as_mut_ptr(), secret.as_ptr()), 0);
        }
        assert_eq!(public, derived);
        assert_eq!(public[40], 0);
    }

    #[test]
    fn rfc_26_test_keys() {
        // The client key pair from ZeroMQ RFC 26 (CurveZMQ) examples.
        let secret = c"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";
        let mut public = [0 as c_char; 41];
        // SAFETY: 41-byte output buffer; NUL-terminated input.
        assert_eq!(unsafe { zmq_curve_public(public.as_mut_ptr(), secret.as_ptr()) }, 0);
        // SAFETY: NUL-terminated by zmq_curve_public.
        let public = unsafe { CStr::from_ptr(public.as_ptr()) };
        assert_eq!(public.to_bytes(), b"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID");
    }
}
