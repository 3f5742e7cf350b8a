//! The ZMTP conformance suite's adapter for the `oxmq` crate itself: the
//! line protocol of conformance/adapters/libzmq_abi.c (see
//! conformance/README.md), so the suite's clauses run on the Rust API without
//! the C ABI in between.
//!
//! ```text
//! SOCKET <TYPE> | OPTI <option> <int> | OPTB <option> <hex|-> | BIND <endpoint>
//! CONNECT <endpoint> | SEND <hex|-> ... | RECV <timeout ms> | ALIVE | QUIT
//! ZAP <status code> | ZAPLOG
//! ```

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

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

/// RFC 27's handler on `inproc://zeromq.zap.01` in the adapter's context: it
/// answers every request with the status code the suite chose and keeps the
/// first request for ZAPLOG.
struct ZapHandler {
    stop: Arc<AtomicBool>,
    first: Arc<Mutex<Option<Vec<Vec<u8>>>>>,
    thread: JoinHandle<()>,
}

impl ZapHandler {
    fn start(ctx: &Context, status: &str) -> Result<ZapHandler, oxmq::Error> {
        let rep = ctx.socket(SocketType::Rep)?;
        rep.set_option_int(opt::LINGER, 0)?;
        rep.set_option_int(opt::RCVTIMEO, 100)?;
        rep.bind("inproc://zeromq.zap.01")?;
        let stop = Arc::new(AtomicBool::new(false));
        let first = Arc::new(Mutex::new(None));
        let status = status.as_bytes().to_vec();
        let (stop2, first2) = (stop.clone(), first.clone());
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                let Ok(request) = rep.recv_multipart(0) else { continue };
                let frames: Vec<Vec<u8>> = request.iter().map(|m| m.as_slice().to_vec()).collect();
                let request_id = frames.get(1).cloned().unwrap_or_default();
                first2.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(frames);
                let reply =
                    [b"1.0".to_vec(), request_id, status.clone(), b"conformance".to_vec(), b"user".to_vec(), vec![]];
                let _ = rep.send_multipart(reply.into_iter().map(Msg::from_vec), 0);
            }
        });
        Ok(ZapHandler { stop, first, thread })
    }

    fn log(&self) -> String {
        match &*self.first.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(frames) => format!("MSG {}", frames.iter().map(|f| hex(f)).collect::<Vec<_>>().join(" ")),
            None => "NONE".into(),
        }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

fn run(ctx: &Context, sock: &mut Option<Socket>, zap: &mut Option<ZapHandler>, cmd: &str, arg: &str) -> String {
    if cmd == "ZAP" {
        if zap.is_some() {
            return "ERR bad-args".into();
        }
        return match ZapHandler::start(ctx, arg) {
            Ok(handler) => {
                *zap = Some(handler);
                "OK".into()
            }
            Err(e) => err(e),
        };
    }
    if cmd == "ZAPLOG" {
        return zap.as_ref().map_or_else(|| "NONE".into(), ZapHandler::log);
    }
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
    let mut zap = None;
    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (cmd, arg) = line.trim_end().split_once(' ').unwrap_or((line.trim_end(), ""));
        if cmd == "QUIT" {
            break;
        }
        let reply = run(&ctx, &mut sock, &mut zap, cmd, arg);
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    drop(sock);
    if let Some(handler) = zap {
        handler.stop();
    }
}
