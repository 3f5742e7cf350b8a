//! The socket layer's side of monitors (`zmq_socket_monitor`): the internal
//! PAIR bound at the caller's `inproc://` endpoint, installed as the sink of
//! the socket's [`Monitor`] slot, which the I/O threads emit events to.

use crate::ctx::{Context, CtxInner};
use crate::error::{Error, Result};
use crate::monitor::{encode_event, EventSink, Monitor};
use crate::options::opt;
use crate::socket::{Socket, DONTWAIT, SNDMORE};
use crate::transport::endpoint::{parse_endpoint, Endpoint};
use oxmq_proto::SocketType;
use std::sync::Arc;

/// The monitor's PAIR: each event is two frames, sent without blocking.
struct PairSink(Socket);

impl EventSink for PairSink {
    fn send(&self, event: u16, value: u32, endpoint: &str) {
        let head = encode_event(event, value);
        // PAIR accepts the rest of a message once its first frame went in.
        if self.0.send(&head[..], DONTWAIT | SNDMORE).is_ok() {
            let _ = self.0.send(endpoint, DONTWAIT);
        }
    }
}

/// `zmq_socket_monitor`: `None` stops monitoring; otherwise any current
/// monitor is stopped and a new PAIR is bound at the inproc `endpoint`.
pub(crate) fn start(monitor: &Monitor, ctx: &Arc<CtxInner>, endpoint: Option<&str>, events: u32) -> Result<()> {
    if ctx.is_terminated() {
        return Err(Error::Terminated);
    }
    if events >> 16 != 0 {
        return Err(Error::Invalid("monitor events beyond 16 bits need event version 2"));
    }
    let Some(endpoint) = endpoint else {
        monitor.stop();
        return Ok(());
    };
    if !matches!(parse_endpoint(endpoint)?, Endpoint::Inproc(_)) {
        return Err(Error::ProtocolNotSupported);
    }
    monitor.stop();
    let socket = Context { inner: ctx.clone() }.socket(SocketType::Pair)?;
    // Never hold up context termination for unread events.
    socket.set_option_int(opt::LINGER, 0)?;
    socket.bind(endpoint)?;
    monitor.install(Box::new(PairSink(socket)), events);
    Ok(())
}
