//! NaCl's `crypto_box` for CURVE: a key precomputed from an X25519 key
//! exchange (`crypto_box_beforenm`), then XSalsa20-Poly1305 boxes sealed
//! and opened in place with it.
//!
//! Why libsodium rather than RustCrypto's `crypto_box`: CURVE's bulk
//! traffic is bound by the XSalsa20 stream cipher. RustCrypto's `salsa20`
//! has only a portable backend (about 0.9 GB/s on this project's machines),
//! while libsodium picks a vectorised one at run time, and libzmq itself uses
//! libsodium. Measured side by side, sealing in place: RustCrypto `SalsaBox`
//! 0.73 GB/s at 1 MiB; Debian's libsodium 1.0.18 1.7 GB/s at 64 KiB; 1.0.22,
//! which `libsodium-sys-stable` builds from its bundled source and oxmq
//! links statically, 2.8 GB/s (as fast as the one pyzmq's wheel bundles).
//!
//! Small boxes are the other way round: libsodium's vectorised code pays a
//! set-up cost per call, and RustCrypto's portable code (with the portable
//! Poly1305, see `.cargo/config.toml`) is cheaper below about 1 KiB
//! (measured side by side in one run: 64 B 0.45-0.62 µs against 0.65-0.75,
//! 256 B 0.85-1.0 against 1.55-1.6; 1 KiB even; 4 KiB 2x and 64 KiB 2-3x
//! libsodium's way). Both compute the same `crypto_box_afternm` box, that is
//! `crypto_secretbox` under the precomputed key, so each box goes to the
//! cheaper one by its length and either side can open what the other sealed
//! (tested below).
//!
//! This crate is the only place in oxmq that calls libsodium; every `unsafe`
//! block here is one FFI call on buffers whose lengths Rust checked (or the
//! `set_len` after one that filled a vector's spare capacity).

#![warn(missing_docs)]

use crypto_secretbox::aead::generic_array::GenericArray;
use crypto_secretbox::aead::{AeadInPlace, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;

use std::fmt;
use std::sync::Once;
use zeroize::Zeroizing;

/// Octets of an X25519 public or secret key, and of a precomputed box key.
pub const KEY_LEN: usize = 32;
/// Octets of an XSalsa20 nonce (CURVE builds it from a 16-octet prefix and an 8-octet counter).
pub const NONCE_LEN: usize = 24;
/// Octets of the Poly1305 tag that authenticates a box; a box is this much longer than its plaintext.
pub const TAG_LEN: usize = 16;
/// Boxes shorter than this go through RustCrypto, the rest through libsodium.
pub const SMALL_BOX: usize = 1024;

/// libsodium must be initialised once before use (it picks its
/// implementations for this CPU then); later calls are cheap no-ops.
fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // SAFETY: `sodium_init` takes no arguments, is thread-safe and may
        // be called more than once.
        let rc = unsafe { libsodium_sys::sodium_init() };
        // 0: initialised now, 1: already initialised; -1 only when the
        // system has no randomness source, which libsodium needs for nothing
        // this crate calls, but it would then not have set itself up.
        assert!(rc >= 0, "libsodium could not initialise");
    });
}

/// The shared key of a box between one party's secret key and the other's
/// public key. Wiped from memory when dropped.
pub struct BoxKey {
    key: Zeroizing<[u8; KEY_LEN]>,
    /// The same key, for small boxes (zeroes its key on drop).
    small: XSalsa20Poly1305,
}

impl fmt::Debug for BoxKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BoxKey(..)") // never the key
    }
}

impl BoxKey {
    /// `crypto_box_beforenm(their_public, our_secret)`. `None` when the
    /// public key is one of the few low-order points that would make the
    /// shared secret all zeros (libsodium refuses them).
    pub fn precompute(their_public: &[u8; KEY_LEN], our_secret: &[u8; KEY_LEN]) -> Option<BoxKey> {
        init();
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        // SAFETY: all three pointers address 32-byte arrays, as
        // crypto_box_BEFORENMBYTES / PUBLICKEYBYTES / SECRETKEYBYTES require;
        // `key` is exclusively borrowed for the call.
        let rc =
            unsafe { libsodium_sys::crypto_box_beforenm(key.as_mut_ptr(), their_public.as_ptr(), our_secret.as_ptr()) };
        if rc != 0 {
            return None;
        }
        let small = XSalsa20Poly1305::new(GenericArray::from_slice(&key[..]));
        Some(BoxKey { key, small })
    }

    /// Encrypts `buf` in place and returns its Poly1305 tag
    /// (`crypto_box_detached_afternm`).
    pub fn seal_in_place(&self, nonce: &[u8; NONCE_LEN], buf: &mut [u8]) -> [u8; TAG_LEN] {
        if buf.len() < SMALL_BOX {
            let tag = self
                .small
                .encrypt_in_place_detached(GenericArray::from_slice(nonce), b"", buf)
                .expect("secretbox seals any length without associated data");
            return tag.into();
        }
        self.seal_with_libsodium(nonce, buf)
    }

    fn seal_with_libsodium(&self, nonce: &[u8; NONCE_LEN], buf: &mut [u8]) -> [u8; TAG_LEN] {
        let mut tag = [0u8; TAG_LEN];
        let p = buf.as_mut_ptr();
        // SAFETY: `p` addresses `buf.len()` writable bytes, used as both the
        // message and the ciphertext (libsodium documents in-place use as
        // supported); `tag` has crypto_box_MACBYTES (16) bytes, the nonce
        // 24 and the key 32.
        let rc = unsafe {
            libsodium_sys::crypto_box_detached_afternm(
                p,
                tag.as_mut_ptr(),
                p,
                buf.len() as u64,
                nonce.as_ptr(),
                self.key.as_ptr(),
            )
        };
        // Sealing has no failure case for a well-formed key and buffer.
        assert_eq!(rc, 0, "crypto_box_detached_afternm failed");
        tag
    }

    /// Appends the box of `first` followed by `rest` to `out` and returns
    /// its tag: the box [`seal_in_place`](Self::seal_in_place) makes of
    /// their concatenation, sealed from where `rest` lies. A large box is
    /// written in one pass, read from `rest` and written to `out`, with no
    /// copy of the plaintext into `out` first.
    ///
    /// That pass is `crypto_secretbox`'s own construction spelt out with
    /// libsodium's primitives, because its plaintext (CURVE's flags octet,
    /// then the frame body) is in two places: the first 64-byte block of
    /// the XSalsa20 stream gives the Poly1305 key (its first 32 bytes) and
    /// encrypts the first 32 plaintext bytes, the stream from block 1 on the
    /// rest, and Poly1305 authenticates the ciphertext. The tests below
    /// check it against `crypto_box_detached_afternm` at every length
    /// around each boundary.
    pub fn seal_append(&self, nonce: &[u8; NONCE_LEN], first: u8, rest: &[u8], out: &mut Vec<u8>) -> [u8; TAG_LEN] {
        let at = out.len();
        if 1 + rest.len() < SMALL_BOX {
            out.push(first);
            out.extend_from_slice(rest);
            return self.seal_in_place(nonce, &mut out[at..]);
        }
        let len = 1 + rest.len();
        // Block 0: 32 bytes of Poly1305 key, then the first 32 plaintext bytes.
        let head = rest.len().min(31);
        let mut block0 = Zeroizing::new([0u8; 64]);
        block0[32] = first;
        block0[33..33 + head].copy_from_slice(&rest[..head]);
        let b = block0.as_mut_ptr();
        // SAFETY: `b` addresses 64 writable bytes, of which the first
        // 33 + head (<= 64) are the message and, in place, the ciphertext
        // (identical pointers are supported); the nonce is 24 bytes
        // (crypto_stream_xsalsa20_NONCEBYTES) and the key 32 (KEYBYTES).
        let rc = unsafe {
            libsodium_sys::crypto_stream_xsalsa20_xor_ic(b, b, (33 + head) as u64, nonce.as_ptr(), 0, self.key.as_ptr())
        };
        assert_eq!(rc, 0, "crypto_stream_xsalsa20_xor_ic failed");
        out.reserve(len);
        out.extend_from_slice(&block0[32..33 + head]);
        let tail = &rest[head..];
        if !tail.is_empty() {
            let dst = out.spare_capacity_mut();
            // SAFETY: `dst` has room for at least `tail.len()` bytes (reserved
            // above: `len` = 1 + head + tail.len(), 1 + head of them used),
            // which the call writes; `tail` is readable and does not overlap
            // `out`'s allocation (it is borrowed shared while `out` is
            // borrowed mutably); nonce 24 bytes, key 32. Counter 1: the
            // stream from byte 64 on, which is where plaintext byte 32 falls.
            let rc = unsafe {
                libsodium_sys::crypto_stream_xsalsa20_xor_ic(
                    dst.as_mut_ptr().cast::<u8>(),
                    tail.as_ptr(),
                    tail.len() as u64,
                    nonce.as_ptr(),
                    1,
                    self.key.as_ptr(),
                )
            };
            assert_eq!(rc, 0, "crypto_stream_xsalsa20_xor_ic failed");
            // SAFETY: the call above initialised those `tail.len()` bytes.
            unsafe { out.set_len(out.len() + tail.len()) };
        }
        let mut tag = [0u8; TAG_LEN];
        let sealed = &out[at..];
        // SAFETY: `tag` has crypto_onetimeauth_BYTES (16) bytes, `sealed`
        // is `sealed.len()` readable bytes and the key the first 32 of block 0.
        let rc = unsafe {
            libsodium_sys::crypto_onetimeauth_poly1305(
                tag.as_mut_ptr(),
                sealed.as_ptr(),
                sealed.len() as u64,
                block0.as_ptr(),
            )
        };
        assert_eq!(rc, 0, "crypto_onetimeauth_poly1305 failed");
        tag
    }

    /// Checks `tag` and decrypts `buf` in place
    /// (`crypto_box_open_detached_afternm`). On `false` the box did not
    /// open and `buf` is left as it was.
    #[must_use]
    pub fn open_in_place(&self, nonce: &[u8; NONCE_LEN], buf: &mut [u8], tag: &[u8; TAG_LEN]) -> bool {
        if buf.len() < SMALL_BOX {
            // RustCrypto also checks the tag before decrypting anything.
            return self
                .small
                .decrypt_in_place_detached(GenericArray::from_slice(nonce), b"", buf, GenericArray::from_slice(tag))
                .is_ok();
        }
        self.open_with_libsodium(nonce, buf, tag)
    }

    fn open_with_libsodium(&self, nonce: &[u8; NONCE_LEN], buf: &mut [u8], tag: &[u8; TAG_LEN]) -> bool {
        let p = buf.as_mut_ptr();
        // SAFETY: as in `seal_in_place`; libsodium verifies the tag before
        // it writes anything, so a forged box leaves `buf` untouched.
        let rc = unsafe {
            libsodium_sys::crypto_box_open_detached_afternm(
                p,
                p,
                tag.as_ptr(),
                buf.len() as u64,
                nonce.as_ptr(),
                self.key.as_ptr(),
            )
        };
        rc == 0
    }
}

/// The X25519 public key of a secret key (`crypto_scalarmult_base`).
pub fn public_key_of(secret: &[u8; KEY_LEN]) -> [u8; KEY_LEN] {
    init();
    let mut public = [0u8; KEY_LEN];
    // SAFETY: both pointers address 32-byte arrays
    // (crypto_scalarmult_BYTES / SCALARBYTES).
    let rc = unsafe { libsodium_sys::crypto_scalarmult_base(public.as_mut_ptr(), secret.as_ptr()) };
    assert_eq!(rc, 0, "crypto_scalarmult_base failed");
    public
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn arr<const N: usize>(v: &[u8]) -> [u8; N] {
        v.try_into().unwrap()
    }

    // NaCl's own test vectors (crypto_box, "box.c"/"box2.c" of the NaCl
    // distribution, as published in the crypto_box specification by
    // D. J. Bernstein): Alice's secret key, Bob's public key, the nonce,
    // and the first bytes of the message and the box.
    const ALICE_SK: &str = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
    const ALICE_PK: &str = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
    const BOB_SK: &str = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
    const BOB_PK: &str = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
    const NONCE: &str = "69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37";
    const PRECOMPUTED: &str = "1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389";

    #[test]
    fn public_keys_match_the_nacl_vectors() {
        assert_eq!(public_key_of(&arr(&hex(ALICE_SK))).to_vec(), hex(ALICE_PK));
        assert_eq!(public_key_of(&arr(&hex(BOB_SK))).to_vec(), hex(BOB_PK));
    }

    #[test]
    fn both_sides_precompute_the_nacl_key() {
        let a = BoxKey::precompute(&arr(&hex(BOB_PK)), &arr(&hex(ALICE_SK))).unwrap();
        let b = BoxKey::precompute(&arr(&hex(ALICE_PK)), &arr(&hex(BOB_SK))).unwrap();
        assert_eq!(a.key.to_vec(), hex(PRECOMPUTED));
        assert_eq!(b.key.to_vec(), hex(PRECOMPUTED));
    }

    #[test]
    fn sealed_in_place_opens_in_place() {
        let a = BoxKey::precompute(&arr(&hex(BOB_PK)), &arr(&hex(ALICE_SK))).unwrap();
        let b = BoxKey::precompute(&arr(&hex(ALICE_PK)), &arr(&hex(BOB_SK))).unwrap();
        let nonce = arr(&hex(NONCE));
        for len in [0usize, 1, 63, 64, 65, SMALL_BOX - 1, SMALL_BOX, 4096, 1 << 20] {
            let plain: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut buf = plain.clone();
            let tag = a.seal_in_place(&nonce, &mut buf);
            if len > 16 {
                assert_ne!(buf, plain, "encrypted");
            }
            assert!(b.open_in_place(&nonce, &mut buf, &tag));
            assert_eq!(buf, plain, "len {len}");
        }
    }

    /// The two implementations make the same box: each opens what the
    /// other sealed, at every length around the switch-over and beyond.
    #[test]
    fn rustcrypto_and_libsodium_boxes_are_the_same() {
        let a = BoxKey::precompute(&arr(&hex(BOB_PK)), &arr(&hex(ALICE_SK))).unwrap();
        let b = BoxKey::precompute(&arr(&hex(ALICE_PK)), &arr(&hex(BOB_SK))).unwrap();
        let nonce = arr(&hex(NONCE));
        for len in [0usize, 1, 16, 64, SMALL_BOX - 1, SMALL_BOX, SMALL_BOX + 1, 5000] {
            let plain: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let mut rc = plain.clone();
            let rc_tag: [u8; TAG_LEN] =
                a.small.encrypt_in_place_detached(GenericArray::from_slice(&nonce), b"", &mut rc).unwrap().into();
            let mut ls = plain.clone();
            let ls_tag = a.seal_with_libsodium(&nonce, &mut ls);
            assert_eq!((&rc, rc_tag), (&ls, ls_tag), "len {len}");
            assert!(b.open_with_libsodium(&nonce, &mut rc, &rc_tag));
            assert_eq!(rc, plain);
            assert!(b
                .small
                .decrypt_in_place_detached(
                    GenericArray::from_slice(&nonce),
                    b"",
                    &mut ls,
                    GenericArray::from_slice(&ls_tag)
                )
                .is_ok());
            assert_eq!(ls, plain);
        }
    }

    /// `seal_append` makes exactly the box `seal_in_place` makes of the
    /// concatenation, after whatever `out` held, around block 0's end, the
    /// small/large switch and beyond.
    #[test]
    fn seal_append_is_the_box_of_the_concatenation() {
        let a = BoxKey::precompute(&arr(&hex(BOB_PK)), &arr(&hex(ALICE_SK))).unwrap();
        let b = BoxKey::precompute(&arr(&hex(ALICE_PK)), &arr(&hex(BOB_SK))).unwrap();
        let nonce = arr(&hex(NONCE));
        let mut lens: Vec<usize> = (0..130).collect();
        lens.extend((SMALL_BOX - 34..SMALL_BOX + 70).chain([4095, 4096, 65535, 65536, 1 << 20]));
        for len in lens {
            let rest: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            let mut whole = vec![0x03];
            whole.extend_from_slice(&rest);
            let want_tag = a.seal_in_place(&nonce, &mut whole);
            let mut out = b"prefix".to_vec();
            let tag = a.seal_append(&nonce, 0x03, &rest, &mut out);
            assert_eq!(&out[..6], b"prefix");
            assert_eq!((&out[6..], tag), (&whole[..], want_tag), "len {len}");
            assert!(b.open_in_place(&nonce, &mut out[6..], &tag));
            assert_eq!(out[6], 0x03);
            assert_eq!(&out[7..], &rest[..]);
        }
    }

    /// Small and large: a flipped bit, tag or nonce does not open.
    #[test]
    fn a_forged_box_does_not_open_and_is_left_alone() {
        let a = BoxKey::precompute(&arr(&hex(BOB_PK)), &arr(&hex(ALICE_SK))).unwrap();
        let nonce = arr(&hex(NONCE));
        for big in [false, true] {
            let mut buf = b"attack at dawn".to_vec();
            if big {
                buf.resize(SMALL_BOX * 3, b'!');
            }
            let plain = buf.clone();
            let tag = a.seal_in_place(&nonce, &mut buf);
            let sealed = buf.clone();
            buf[3] ^= 1;
            let forged = buf.clone();
            assert!(!a.open_in_place(&nonce, &mut buf, &tag));
            assert_eq!(buf, forged);
            let mut bad_tag = tag;
            bad_tag[0] ^= 1;
            let mut buf = sealed.clone();
            assert!(!a.open_in_place(&nonce, &mut buf, &bad_tag));
            let mut other_nonce = nonce;
            other_nonce[23] ^= 1;
            assert!(!a.open_in_place(&other_nonce, &mut buf, &tag));
            assert!(a.open_in_place(&nonce, &mut buf, &tag));
            assert_eq!(buf, plain);
        }
    }

    #[test]
    fn low_order_public_keys_are_refused() {
        let sk = arr(&hex(ALICE_SK));
        assert!(BoxKey::precompute(&[0; KEY_LEN], &sk).is_none());
        let mut one = [0u8; KEY_LEN];
        one[0] = 1;
        assert!(BoxKey::precompute(&one, &sk).is_none());
    }

    #[test]
    fn debug_never_shows_the_key() {
        let a = BoxKey::precompute(&arr(&hex(BOB_PK)), &arr(&hex(ALICE_SK))).unwrap();
        assert_eq!(format!("{a:?}"), "BoxKey(..)");
    }
}
