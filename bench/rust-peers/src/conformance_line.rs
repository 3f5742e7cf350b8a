//! What the conformance suite's adapters for the Rust crates share: the line
//! protocol of conformance/adapters/libzmq_abi.c (one command per line on
//! stdin, one reply per line on stdout, frames as hex, "-" for an empty one;
//! see conformance/README.md) and libzmq's numbers for the options the
//! suite's clauses set.

use std::io::{self, BufRead, Write};

pub const ROUTING_ID: i32 = 5;
pub const SUBSCRIBE: i32 = 6;
pub const UNSUBSCRIBE: i32 = 7;
pub const LINGER: i32 = 17;
pub const HEARTBEAT_IVL: i32 = 75;
pub const HEARTBEAT_TTL: i32 = 76;

/// What an adapter answers when the crate's API has no counterpart for a
/// command; the suite reports the clause n/a, not a difference.
pub const UNSUPPORTED: &str = "ERR unsupported-option";

pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text == "-" {
        return Some(Vec::new());
    }
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

pub fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".to_string();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// "OPTI <option> <int>" / "OPTB <option> <hex>" -> (option, value octets;
/// an int as 4 little-endian octets, as libzmq's setsockopt takes it).
pub fn option_args(cmd: &str, arg: &str) -> Option<(i32, Vec<u8>)> {
    let (first, rest) = arg.split_once(' ')?;
    let option = first.parse().ok()?;
    match cmd {
        "OPTI" => Some((option, rest.parse::<i32>().ok()?.to_le_bytes().to_vec())),
        _ => Some((option, unhex(rest)?)),
    }
}

pub fn int_value(value: &[u8]) -> Option<i32> {
    Some(i32::from_le_bytes(value.get(..4)?.try_into().ok()?))
}

pub fn frames(arg: &str) -> Option<Vec<bytes::Bytes>> {
    arg.split(' ').map(|f| unhex(f).map(bytes::Bytes::from)).collect()
}

pub fn msg_line<'a>(parts: impl Iterator<Item = &'a [u8]>) -> String {
    format!("MSG {}", parts.map(hex).collect::<Vec<_>>().join(" "))
}

/// Writes one reply line at once: for a command whose future only completes
/// once the suite's peer has played its part (zeromq's connect awaits the
/// handshake), the adapter answers before awaiting it and returns "".
pub fn reply_now(reply: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{reply}").and_then(|_| out.flush())
}

/// Reads stdin on a thread of its own (it blocks) and hands each command to
/// `run` on the caller's runtime until QUIT or the end of input.
pub async fn serve<A>(mut adapter: A, mut run: impl AsyncFnMut(&mut A, &str, &str) -> Result<String, String>) -> A {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    while let Some(line) = rx.recv().await {
        let line = line.trim_end();
        let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
        if cmd == "QUIT" {
            break;
        }
        let reply = run(&mut adapter, cmd, arg).await.unwrap_or_else(|e| e.replace('\n', " "));
        // An adapter that answered early (see `reply_now`) returns "".
        if !reply.is_empty() && reply_now(&reply).is_err() {
            break;
        }
    }
    adapter
}
