//! The ZMTP conformance suite's adapter for zmq.rs's Rust API (the `zeromq`
//! crate): the line protocol of conformance/adapters/libzmq_abi.c (see
//! conformance/README.md), on the multi-threaded tokio runtime.
//!
//! zeromq takes its options (only the routing id, of those the clauses set)
//! when a socket is made, so the socket is made at the first BIND or CONNECT.
//! What the crate has no counterpart for (PAIR, heartbeats, PLAIN, CURVE, ZAP,
//! subscriptions that are not UTF-8) answers `ERR unsupported-option`, which
//! the suite reports as n/a for that clause.

mod conformance_line;

use std::time::Duration;

use conformance_line::*;
use zeromq::{Socket as _, SocketOptions, SocketRecv as _, SocketSend as _, ZmqMessage};

enum Sock {
    Pub(zeromq::PubSocket),
    Sub(zeromq::SubSocket),
    XPub(zeromq::XPubSocket),
    XSub(zeromq::XSubSocket),
    Req(zeromq::ReqSocket),
    Rep(zeromq::RepSocket),
    Dealer(zeromq::DealerSocket),
    Router(zeromq::RouterSocket),
    Push(zeromq::PushSocket),
    Pull(zeromq::PullSocket),
}

macro_rules! each {
    ($s:expr, $v:ident => $e:expr) => {
        match $s {
            Sock::Pub($v) => $e,
            Sock::Sub($v) => $e,
            Sock::XPub($v) => $e,
            Sock::XSub($v) => $e,
            Sock::Req($v) => $e,
            Sock::Rep($v) => $e,
            Sock::Dealer($v) => $e,
            Sock::Router($v) => $e,
            Sock::Push($v) => $e,
            Sock::Pull($v) => $e,
        }
    };
}

fn make(kind: &str, options: SocketOptions) -> Option<Sock> {
    Some(match kind {
        "PUB" => Sock::Pub(zeromq::PubSocket::with_options(options)),
        "SUB" => Sock::Sub(zeromq::SubSocket::with_options(options)),
        "XPUB" => Sock::XPub(zeromq::XPubSocket::with_options(options)),
        "XSUB" => Sock::XSub(zeromq::XSubSocket::with_options(options)),
        "REQ" => Sock::Req(zeromq::ReqSocket::with_options(options)),
        "REP" => Sock::Rep(zeromq::RepSocket::with_options(options)),
        "DEALER" => Sock::Dealer(zeromq::DealerSocket::with_options(options)),
        "ROUTER" => Sock::Router(zeromq::RouterSocket::with_options(options)),
        "PUSH" => Sock::Push(zeromq::PushSocket::with_options(options)),
        "PULL" => Sock::Pull(zeromq::PullSocket::with_options(options)),
        _ => return None,
    })
}

#[derive(Default)]
struct Adapter {
    kind: Option<String>,
    options: SocketOptions,
    subscriptions: Vec<(bool, String)>,
    socket: Option<Sock>,
}

fn err(e: zeromq::ZmqError) -> String {
    format!("ERR {e}")
}

async fn subscribe(s: &mut Sock, on: bool, topic: &str) -> Result<(), String> {
    match (s, on) {
        (Sock::Sub(s), true) => s.subscribe(topic).await.map_err(err),
        (Sock::Sub(s), false) => s.unsubscribe(topic).await.map_err(err),
        (Sock::XSub(s), true) => s.subscribe(topic).await.map_err(err),
        (Sock::XSub(s), false) => s.unsubscribe(topic).await.map_err(err),
        _ => Err("ERR not-a-subscriber".into()),
    }
}

impl Adapter {
    async fn socket(&mut self) -> Result<&mut Sock, String> {
        if self.socket.is_none() {
            let kind = self.kind.as_deref().ok_or("ERR no-socket")?;
            let mut socket = make(kind, std::mem::take(&mut self.options)).ok_or(UNSUPPORTED)?;
            for (on, topic) in std::mem::take(&mut self.subscriptions) {
                subscribe(&mut socket, on, &topic).await?;
            }
            self.socket = Some(socket);
        }
        Ok(self.socket.as_mut().expect("made above"))
    }

    async fn option(&mut self, option: i32, value: Vec<u8>) -> Result<String, String> {
        match option {
            SUBSCRIBE | UNSUBSCRIBE => {
                let topic = String::from_utf8(value).map_err(|_| format!("{UNSUPPORTED} (topics are &str)"))?;
                match &mut self.socket {
                    Some(s) => subscribe(s, option == SUBSCRIBE, &topic).await?,
                    None => self.subscriptions.push((option == SUBSCRIBE, topic)),
                }
            }
            // zeromq closes without lingering; nothing to set.
            LINGER if int_value(&value) == Some(0) => {}
            ROUTING_ID if self.socket.is_none() => {
                let id = value.try_into().map_err(|e| format!("ERR {e}"))?;
                self.options.peer_identity(id);
            }
            HEARTBEAT_IVL | HEARTBEAT_TTL => return Err(format!("{UNSUPPORTED} (no ZMTP heartbeats in zeromq)")),
            _ => return Err(UNSUPPORTED.into()),
        }
        Ok("OK".into())
    }

    async fn run(&mut self, cmd: &str, arg: &str) -> Result<String, String> {
        match cmd {
            "ALIVE" => Ok("ALIVE zeromq 0.7".into()),
            "SOCKET" => {
                if arg == "PAIR" {
                    return Err(UNSUPPORTED.into());
                }
                self.kind = Some(arg.to_string());
                Ok("OK".into())
            }
            "ZAP" => Err(format!("{UNSUPPORTED} (no security mechanisms in zeromq)")),
            "ZAPLOG" => Ok("NONE".into()),
            "OPTI" | "OPTB" => {
                let (o, v) = option_args(cmd, arg).ok_or("ERR bad-args")?;
                self.option(o, v).await
            }
            "BIND" => {
                let s = self.socket().await?;
                let ep = each!(s, s => s.bind(&arg.replace(":*", ":0")).await).map_err(err)?;
                Ok(format!("OK {ep}"))
            }
            "CONNECT" => {
                // zeromq's connect completes with the handshake, which the
                // suite's peer plays only after this answer: answer first,
                // and let a failure show in what follows.
                let endpoint: zeromq::Endpoint = arg.parse().map_err(|e| format!("ERR {e}"))?;
                let s = self.socket().await?;
                reply_now("OK").map_err(|e| format!("ERR {e}"))?;
                if let Err(e) = each!(s, s => s.connect(&endpoint.to_string()).await) {
                    eprintln!("conformance_zmqrs: connect {arg}: {e}");
                }
                Ok(String::new())
            }
            "SEND" => {
                let msg = ZmqMessage::try_from(frames(arg).ok_or("ERR bad-hex")?).map_err(|e| format!("ERR {e}"))?;
                let sent = match self.socket().await? {
                    Sock::Pub(s) => s.send(msg).await,
                    Sock::XPub(s) => s.send(msg).await,
                    Sock::XSub(s) => s.send(msg).await,
                    Sock::Req(s) => s.send(msg).await,
                    Sock::Rep(s) => s.send(msg).await,
                    Sock::Dealer(s) => s.send(msg).await,
                    Sock::Router(s) => s.send(msg).await,
                    Sock::Push(s) => s.send(msg).await,
                    Sock::Sub(_) | Sock::Pull(_) => return Err("ERR not-supported".into()),
                };
                sent.map_err(err)?;
                Ok("OK".into())
            }
            "RECV" => {
                let ms: u64 = arg.parse().map_err(|_| "ERR bad-args")?;
                let s = self.socket().await?;
                let recv = async {
                    match s {
                        Sock::Sub(s) => s.recv().await,
                        Sock::XPub(s) => s.recv().await,
                        Sock::XSub(s) => s.recv().await,
                        Sock::Req(s) => s.recv().await,
                        Sock::Rep(s) => s.recv().await,
                        Sock::Dealer(s) => s.recv().await,
                        Sock::Router(s) => s.recv().await,
                        Sock::Pull(s) => s.recv().await,
                        Sock::Pub(_) | Sock::Push(_) => Err(zeromq::ZmqError::Other("not-supported")),
                    }
                };
                match tokio::time::timeout(Duration::from_millis(ms), recv).await {
                    Err(_) => Ok("TIMEOUT".into()),
                    Ok(Err(e)) => Err(err(e)),
                    Ok(Ok(msg)) => Ok(msg_line(msg.iter().map(|p| &p[..]))),
                }
            }
            _ => Err("ERR unknown-command".into()),
        }
    }
}

#[tokio::main]
async fn main() {
    let adapter = serve(Adapter::default(), async |a: &mut Adapter, cmd: &str, arg: &str| a.run(cmd, arg).await).await;
    if let Some(s) = adapter.socket {
        let _ = tokio::time::timeout(Duration::from_secs(1), each!(s, s => s.close())).await;
    }
}
