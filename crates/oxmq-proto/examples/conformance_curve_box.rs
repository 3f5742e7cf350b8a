//! The NaCl box for the conformance suite's scripted CURVE peer
//! (conformance/run.py): the suite writes CURVE's commands byte by byte in
//! Python, and only the box itself (X25519 + XSalsa20-Poly1305, RustCrypto's
//! `crypto_box`, the crate oxmq-proto already takes its keys from) comes from
//! here, so no primitive is written by hand. One command per line, hex in and
//! out:
//!
//! ```text
//! PUBLIC <secret key>                          -> OK <public key>
//! BOX <their public> <our secret> <nonce> <plaintext|->  -> OK <mac + ciphertext>
//! OPEN <their public> <our secret> <nonce> <mac + ciphertext> -> OK <plaintext|-> | ERR
//! ```

use std::io::{self, BufRead, Write};

use crypto_box::aead::generic_array::GenericArray;
use crypto_box::aead::Aead;
use crypto_box::{PublicKey, SalsaBox, SecretKey};

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text == "-" {
        return Some(Vec::new());
    }
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".to_string();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn key(bytes: &[u8]) -> Option<[u8; 32]> {
    bytes.try_into().ok()
}

fn salsa_box(public: &[u8], secret: &[u8]) -> Option<SalsaBox> {
    Some(SalsaBox::new(&PublicKey::from(key(public)?), &SecretKey::from(key(secret)?)))
}

fn run(line: &str) -> Option<String> {
    let mut words = line.split(' ');
    let cmd = words.next()?;
    let args: Vec<Vec<u8>> = words.map(unhex).collect::<Option<_>>()?;
    match (cmd, args.as_slice()) {
        ("PUBLIC", [secret]) => Some(format!("OK {}", hex(SecretKey::from(key(secret)?).public_key().as_bytes()))),
        ("BOX", [public, secret, nonce, plain]) if nonce.len() == 24 => {
            let sealed = salsa_box(public, secret)?.encrypt(GenericArray::from_slice(nonce), plain.as_slice()).ok()?;
            Some(format!("OK {}", hex(&sealed)))
        }
        ("OPEN", [public, secret, nonce, sealed]) if nonce.len() == 24 => {
            match salsa_box(public, secret)?.decrypt(GenericArray::from_slice(nonce), sealed.as_slice()) {
                Ok(plain) => Some(format!("OK {}", hex(&plain))),
                Err(_) => Some("ERR open".into()),
            }
        }
        _ => None,
    }
}

fn main() {
    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let reply = run(line.trim_end()).unwrap_or_else(|| "ERR bad-args".into());
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
