//! The ZMTP conformance suite's adapter for the `oxmq` crate itself: the
//! line protocol of conformance/adapters/libzmq_abi.c (see
//! conformance/README.md), so the suite's clauses run on the Rust API without
//! the C ABI in between.
//!
//! ```text
//! SOCKET <TYPE> | OPTI <option> <int> | OPTB <option> <hex|-> | BIND <endpoint>
//! CONNECT <endpoint> | SEND <hex|-> ... | RECV <timeout ms> | ALIVE | QUIT
//! ```

use std::io::{self, BufRead, Write};

use oxmq::{opt, Context, Msg, Socket, SocketType};

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

fn err(e: oxmq::Error) -> String {
    format!("ERR {}", e.errno())
}

fn run(ctx: &Context, sock: &mut Option<Socket>, cmd: &str, arg: &str) -> String {
    if cmd == "ALIVE" {
        let (ma, mi, pa) = oxmq::ZMQ_VERSION;
        return format!("ALIVE {ma}.{mi}.{pa}");
    }
    if cmd == "SOCKET" {
        let Some(kind) = SocketType::from_wire_name(arg.as_bytes()) else {
            return "ERR unknown-type".into();
        };
        return match ctx.socket(kind).and_then(|s| s.set_option_int(opt::LINGER, 0).map(|_| s)) {
            Ok(s) => {
                *sock = Some(s);
                "OK".into()
            }
            Err(e) => err(e),
        };
    }
    let Some(s) = sock.as_ref() else {
        return "ERR no-socket".into();
    };
    let (first, rest) = arg.split_once(' ').unwrap_or((arg, ""));
    let outcome = match cmd {
        "OPTI" => match (first.parse(), rest.parse()) {
            (Ok(o), Ok(v)) => s.set_option_int(o, v).map(|_| "OK".into()),
            _ => return "ERR bad-args".into(),
        },
        "OPTB" => match (first.parse(), unhex(rest)) {
            (Ok(o), Some(v)) => s.set_option_bytes(o, &v).map(|_| "OK".into()),
            _ => return "ERR bad-args".into(),
        },
        "BIND" => s.bind(arg).and_then(|_| s.last_endpoint()).map(|ep| format!("OK {ep}")),
        "CONNECT" => s.connect(arg).map(|_| "OK".into()),
        "SEND" => {
            let Some(frames) = arg.split(' ').map(unhex).collect::<Option<Vec<_>>>() else {
                return "ERR bad-hex".into();
            };
            s.send_multipart(frames.into_iter().map(Msg::from_vec), 0).map(|_| "OK".into())
        }
        "RECV" => {
            let Ok(ms) = arg.parse::<i64>() else {
                return "ERR bad-args".into();
            };
            s.set_option_int(opt::RCVTIMEO, ms)
                .and_then(|_| s.recv_multipart(0))
                .map(|frames| {
                    let parts: Vec<String> = frames.iter().map(|m| hex(m.as_slice())).collect();
                    format!("MSG {}", parts.join(" "))
                })
                .or_else(|e| match e {
                    oxmq::Error::Again => Ok("TIMEOUT".into()),
                    e => Err(e),
                })
        }
        _ => return "ERR unknown-command".into(),
    };
    outcome.unwrap_or_else(err)
}

fn main() {
    let ctx = Context::new();
    let mut sock = None;
    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (cmd, arg) = line.trim_end().split_once(' ').unwrap_or((line.trim_end(), ""));
        if cmd == "QUIT" {
            break;
        }
        let reply = run(&ctx, &mut sock, cmd, arg);
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
