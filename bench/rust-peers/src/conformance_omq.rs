//! The ZMTP conformance suite's adapter for omq.rs's Rust API (omq-tokio):
//! the line protocol of conformance/adapters/libzmq_abi.c (see
//! conformance/README.md), so the suite's clauses run on the crate itself, on
//! the multi-threaded tokio runtime a user gets from `#[tokio::main]`.
//!
//! omq-tokio takes its options when a socket is made, so the socket is made
//! at the first BIND or CONNECT with the options set so far. Options the crate
//! has no counterpart for here answer `ERR unsupported-option`, which the suite
//! reports as n/a for that clause; so does ZAP (omq.rs authenticates through
//! its own callbacks, not RFC 27's inproc handler).

mod conformance_line;

use std::time::Duration;

use bytes::Bytes;
use conformance_line::*;
use omq_tokio::{Message, Options, Socket, SocketType};

fn kind(name: &str) -> Option<SocketType> {
    Some(match name {
        "PAIR" => SocketType::Pair,
        "PUB" => SocketType::Pub,
        "SUB" => SocketType::Sub,
        "REQ" => SocketType::Req,
        "REP" => SocketType::Rep,
        "DEALER" => SocketType::Dealer,
        "ROUTER" => SocketType::Router,
        "PULL" => SocketType::Pull,
        "PUSH" => SocketType::Push,
        "XPUB" => SocketType::XPub,
        "XSUB" => SocketType::XSub,
        _ => return None,
    })
}

#[derive(Default)]
struct Adapter {
    kind: Option<SocketType>,
    options: Options,
    subscriptions: Vec<(bool, Bytes)>,
    socket: Option<Socket>,
}

impl Adapter {
    async fn socket(&mut self) -> Result<&Socket, String> {
        if self.socket.is_none() {
            let kind = self.kind.ok_or("ERR no-socket")?;
            let socket = Socket::try_new(kind, self.options.clone()).map_err(|e| format!("ERR {e}"))?;
            for (on, topic) in self.subscriptions.drain(..) {
                let done = if on { socket.subscribe(topic).await } else { socket.unsubscribe(topic).await };
                done.map_err(|e| format!("ERR {e}"))?;
            }
            self.socket = Some(socket);
        }
        Ok(self.socket.as_ref().expect("made above"))
    }

    async fn option(&mut self, option: i32, value: Vec<u8>) -> Result<String, String> {
        let ms = |v: Option<i32>| v.filter(|v| *v > 0).map(|v| Duration::from_millis(v as u64));
        match option {
            SUBSCRIBE | UNSUBSCRIBE => {
                let on = option == SUBSCRIBE;
                match &self.socket {
                    Some(s) => {
                        let done = if on { s.subscribe(value).await } else { s.unsubscribe(value).await };
                        done.map_err(|e| format!("ERR {e}"))?;
                    }
                    None => self.subscriptions.push((on, value.into())),
                }
            }
            _ if self.socket.is_some() => return Err(format!("{UNSUPPORTED} (omq-tokio takes options at creation)")),
            ROUTING_ID => self.options.identity = value.into(),
            LINGER => self.options.linger = Some(ms(int_value(&value)).unwrap_or(Duration::ZERO)),
            HEARTBEAT_IVL => self.options.heartbeat_interval = ms(int_value(&value)),
            HEARTBEAT_TTL => self.options.heartbeat_ttl = ms(int_value(&value)),
            _ => return Err(UNSUPPORTED.into()),
        }
        Ok("OK".into())
    }

    async fn run(&mut self, cmd: &str, arg: &str) -> Result<String, String> {
        match cmd {
            "ALIVE" => Ok("ALIVE omq-tokio 0.33".into()),
            "SOCKET" => {
                self.kind = Some(kind(arg).ok_or("ERR unknown-type")?);
                self.options.linger = Some(Duration::ZERO);
                Ok("OK".into())
            }
            "ZAP" => Err(format!("{UNSUPPORTED} (no RFC 27 inproc handler in omq-tokio's API)")),
            "ZAPLOG" => Ok("NONE".into()),
            "OPTI" | "OPTB" => {
                let (o, v) = option_args(cmd, arg).ok_or("ERR bad-args")?;
                self.option(o, v).await
            }
            "BIND" => {
                let s = self.socket().await?;
                let ep = s.bind(arg.replace(":*", ":0").as_str()).await.map_err(|e| format!("ERR {e}"))?;
                Ok(format!("OK {ep}"))
            }
            "CONNECT" => {
                self.socket().await?.connect(arg).await.map_err(|e| format!("ERR {e}"))?;
                Ok("OK".into())
            }
            "SEND" => {
                let frames = frames(arg).ok_or("ERR bad-hex")?;
                let s = self.socket().await?;
                s.send(Message::multipart(frames)).await.map_err(|e| format!("ERR {e}"))?;
                Ok("OK".into())
            }
            "RECV" => {
                let ms: u64 = arg.parse().map_err(|_| "ERR bad-args")?;
                let s = self.socket().await?;
                match tokio::time::timeout(Duration::from_millis(ms), s.recv()).await {
                    Err(_) => Ok("TIMEOUT".into()),
                    Ok(Err(e)) => Err(format!("ERR {e}")),
                    Ok(Ok(msg)) => {
                        let parts: Vec<Bytes> = msg.iter().collect();
                        Ok(msg_line(parts.iter().map(|p| &p[..])))
                    }
                }
            }
            _ => Err("ERR unknown-command".into()),
        }
    }
}

#[tokio::main]
async fn main() {
    let mut adapter =
        serve(Adapter::default(), async |a: &mut Adapter, cmd: &str, arg: &str| a.run(cmd, arg).await).await;
    if let Some(s) = adapter.socket.take() {
        let _ = tokio::time::timeout(Duration::from_secs(1), s.close()).await;
    }
}
