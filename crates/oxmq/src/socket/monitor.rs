//! The socket layer's side of monitors (`zmq_socket_monitor` and the draft
//! `zmq_socket_monitor_versioned`): the internal socket bound at the
//! caller's `inproc://` endpoint, installed as the sink of the socket's
//! [`Monitor`] slot, which the I/O threads emit events to. The frame layouts
//! of both event versions are in `crate::monitor`'s docs.

use crate::ctx::{Context, CtxInner};
use crate::error::{Error, Result};
use crate::monitor::{encode_event, EventSink, Monitor, Source};
use crate::options::opt;
use crate::socket::{Socket, DONTWAIT, SNDMORE};
use crate::transport::endpoint::{parse_endpoint, Endpoint};
use oxmq_proto::SocketType;
use std::sync::Arc;

/// The monitor's socket (PAIR, or PUB/PUSH with version 2); every frame is
/// sent without blocking.
struct SocketSink {
    socket: Socket,
    /// 1 or 2; 0 for a version libzmq accepts but sends nothing for.
    version: u8,
}

impl EventSink for SocketSink {
    fn send(&self, event: u64, values: &[u64], src: &Source<'_>) {
        // The sink accepts the rest of a message once its first frame went in.
        const MORE: i32 = DONTWAIT | SNDMORE;
        match self.version {
            1 => {
                let head = encode_event(event as u16, values.first().copied().unwrap_or(0) as u32);
                if self.socket.send(&head[..], MORE).is_ok() {
                    let _ = self.socket.send(src.endpoint, DONTWAIT);
                }
            }
            2 => {
                if self.socket.send(&event.to_ne_bytes()[..], MORE).is_err() {
                    return;
                }
                let _ = self.socket.send(&(values.len() as u64).to_ne_bytes()[..], MORE);
                for v in values {
                    let _ = self.socket.send(&v.to_ne_bytes()[..], MORE);
                }
                let _ = self.socket.send(src.local, MORE);
                let _ = self.socket.send(src.remote, DONTWAIT);
            }
            _ => {}
        }
    }
}

/// `zmq_socket_monitor_versioned`: `None` stops monitoring; otherwise any
/// current monitor is stopped and a new socket of `sink_type` (PAIR, PUB or
/// PUSH, as libzmq allows) is bound at the inproc `endpoint`.
pub(crate) fn start(
    monitor: &Monitor,
    ctx: &Arc<CtxInner>,
    endpoint: Option<&str>,
    events: u64,
    version: i32,
    sink_type: SocketType,
) -> Result<()> {
    if ctx.is_terminated() {
        return Err(Error::Terminated);
    }
    if version == 1 && events >> 16 != 0 {
        return Err(Error::Invalid("monitor events beyond 16 bits need event version 2"));
    }
    // libzmq takes any other version and then sends nothing: kept as 0.
    let version = u8::try_from(version).ok().filter(|v| matches!(v, 1 | 2)).unwrap_or(0);
    let Some(endpoint) = endpoint else {
        monitor.stop();
        return Ok(());
    };
    if !matches!(parse_endpoint(endpoint)?, Endpoint::Inproc(_)) {
        return Err(Error::ProtocolNotSupported);
    }
    monitor.stop();
    // Checked after the old monitor stopped, in libzmq's order.
    if !matches!(sink_type, SocketType::Pair | SocketType::Pub | SocketType::Push) {
        return Err(Error::Invalid("a monitor socket is PAIR, PUB or PUSH"));
    }
    let socket = Context { inner: ctx.clone() }.socket(sink_type)?;
    // Never hold up context termination for unread events.
    socket.set_option_int(opt::LINGER, 0)?;
    socket.bind(endpoint)?;
    monitor.install(Box::new(SocketSink { socket, version }), events);
    Ok(())
}

impl Socket {
    /// Publish this socket's events (libzmq's draft
    /// `zmq_socket_monitor_versioned`) on a socket of `sink_type` (PAIR, PUB
    /// or PUSH; anything else fails with EINVAL) bound at the `inproc://`
    /// `endpoint`. `version` 1 is [`Socket::monitor`]'s layout; version 2
    /// sends the multi-frame layout of the [`crate::monitor_event`] docs
    /// and `monitor.rs`, with the peer's routing id and the oxmq-only events
    /// `MSG_DROPPED` and `HWM_REACHED` when `events` asks for them.
    pub fn monitor_versioned(
        &self,
        endpoint: Option<&str>,
        events: u64,
        version: i32,
        sink_type: SocketType,
    ) -> Result<()> {
        let core = self.core()?;
        let (ctx, monitor) = (core.ctx.clone(), core.monitor.clone());
        // Not borrowed while the monitor socket is created and bound.
        drop(core);
        super::monitor::start(&monitor, &ctx, endpoint, events, version, sink_type)
    }
}
