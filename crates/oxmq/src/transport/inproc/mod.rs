//! inproc: two sockets in one context joined directly by a pipe pair. No I/O
//! thread and no copy: a message moves from one socket's thread to the other's
//! through the lock-free pipes. Bind and connect may come in either order; a
//! connect before the bind gets its pipes at once (so it can queue), and the
//! binder adopts the other ends when it binds.

use crate::channel::mailbox::{Mailbox, SocketCommand};
use crate::channel::pipes::{new_pipe_key, EndpointId, SocketPipe};
use crate::error::{Error, Result};
use crate::msg::{Msg, FLAG_ROUTING_ID};
use crate::pipe::{pipe, pipe_conflate, PipeReader, PipeWriter, Wake, WakeSlot};
use oxmq_proto::SocketType;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What one side of an inproc connection contributes.
#[derive(Clone)]
pub(crate) struct InprocPeer {
    pub(crate) socket_id: u64,
    pub(crate) socket_type: SocketType,
    pub(crate) mailbox: Arc<Mailbox>,
    pub(crate) sndhwm: usize,
    pub(crate) rcvhwm: usize,
    pub(crate) routing_id: Vec<u8>,
    pub(crate) endpoint: EndpointId,
    /// Send-side CONFLATE: as in libzmq, the connecting side's option alone
    /// decides, for the pipe it sends on.
    pub(crate) conflate_out: bool,
    /// HELLO_MSG (draft), empty unless this type sends one (ROUTER, DEALER):
    /// the peer reads it first after the routing id, as over tcp.
    pub(crate) hello: Vec<u8>,
    /// DISCONNECT_MSG (draft), empty unless this type receives one (ROUTER,
    /// SERVER, PEER): as a binder, what each connecter leaves it on leaving.
    pub(crate) disconnect_msg: Vec<u8>,
}

struct Pending {
    connector: InprocPeer,
    /// The binder's ends, waiting for a binder.
    binder_side: SocketPipe,
    /// The connector's DISCONNECT_MSG slot, filled by the binder.
    disconnect_msg: Arc<OnceLock<Vec<u8>>>,
}

/// A connecter's DISCONNECT_MSG slot (libzmq sets the binder's message on the
/// connecter's pipe, whichever came first).
fn disconnect_slot(binder: Option<&InprocPeer>) -> Arc<OnceLock<Vec<u8>>> {
    let slot = Arc::new(OnceLock::new());
    if let Some(b) = binder.filter(|b| !b.disconnect_msg.is_empty()) {
        let _ = slot.set(b.disconnect_msg.clone());
    }
    slot
}

/// Names bound in one context, and connects waiting for a name. The context
/// holds one; every inproc bind, connect and ZAP request goes through it.
#[derive(Default)]
pub(crate) struct InprocRegistry(Mutex<Names>);

#[derive(Default)]
struct Names {
    bound: HashMap<String, InprocPeer>,
    pending: HashMap<String, Vec<Pending>>,
}

impl InprocRegistry {
    fn lock(&self) -> MutexGuard<'_, Names> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// libzmq adds the two sides' HWMs for inproc; 0 on either side means unlimited.
pub(crate) fn combined_hwm(snd: usize, rcv: usize) -> usize {
    if snd == 0 || rcv == 0 {
        0
    } else {
        snd + rcv
    }
}

fn routing_id_frame(id: &[u8]) -> Msg {
    Msg::from_slice(id).with_flags(FLAG_ROUTING_ID)
}

/// What a side writes first on its pipe, as a ZMTP handshake and engine
/// would send it: its routing id, then its HELLO_MSG (draft) if it has one.
fn joining_frames(routing_id: &[u8], hello: &[u8]) -> impl Iterator<Item = Msg> {
    let hello = (!hello.is_empty()).then(|| Msg::from_slice(hello));
    std::iter::once(routing_id_frame(routing_id)).chain(hello)
}

/// Make the pipes between `a` and `b`; returns (a's side, b's side).
/// `b_hwms` (b's RCVHWM, SNDHWM) is None for a binder not known yet: as in
/// libzmq, each pipe then holds the connecter's own HWM alone until the
/// binder adds its share on binding.
fn join(
    a: &InprocPeer,
    b_hwms: Option<(usize, usize)>,
    b_routing_id: Option<&[u8]>,
    b_hello: &[u8],
    b_endpoint: EndpointId,
) -> (SocketPipe, SocketPipe) {
    let key = new_pipe_key();
    let a_reader = WakeSlot::new();
    let a_writer = WakeSlot::new();
    let b_reader = WakeSlot::new();
    let b_writer = WakeSlot::new();
    let (out_hwm, in_hwm) = match b_hwms {
        Some((b_rcvhwm, b_sndhwm)) => (combined_hwm(a.sndhwm, b_rcvhwm), combined_hwm(b_sndhwm, a.rcvhwm)),
        None => (a.sndhwm, a.rcvhwm),
    };
    let (a_to_b, b_from_a) =
        if a.conflate_out { pipe_conflate(b_reader, a_writer) } else { pipe(out_hwm, b_reader, a_writer) };
    let (b_to_a, a_from_b) = pipe(in_hwm, a_reader, b_writer);
    let mut a_side = SocketPipe::new(a_to_b, a_from_b, a.endpoint, key);
    let mut b_side = SocketPipe::new(b_to_a, b_from_a, b_endpoint, key);
    // Each side learns the other's routing id from the head of its inbound pipe,
    // as it would from a ZMTP handshake.
    a_side.out.write_joining(joining_frames(&a.routing_id, &a.hello));
    if let Some(id) = b_routing_id {
        b_side.out.write_joining(joining_frames(id, b_hello));
    }
    if let Some((b_rcvhwm, _)) = b_hwms {
        a_side.hwm_boost = Some((b_rcvhwm, a.rcvhwm));
        b_side.hwm_boost = Some((a.rcvhwm, b_rcvhwm));
    }
    (a_side, b_side)
}

/// Connect to `name`; returns the connector's side to attach now.
pub(crate) fn connect(names: &InprocRegistry, name: &str, me: InprocPeer) -> Result<SocketPipe> {
    let mut st = names.lock();
    if let Some(binder) = st.bound.get(name) {
        let (mut mine, theirs) =
            join(&me, Some((binder.rcvhwm, binder.sndhwm)), Some(&binder.routing_id), &binder.hello, binder.endpoint);
        mine.disconnect_msg = Some(disconnect_slot(Some(binder)));
        binder.mailbox.send(SocketCommand::Attach(theirs));
        return Ok(mine);
    }
    let (mut mine, theirs) = join(&me, None, None, &[], 0);
    let slot = disconnect_slot(None);
    mine.disconnect_msg = Some(slot.clone());
    st.pending.entry(name.to_string()).or_default().push(Pending {
        connector: me,
        binder_side: theirs,
        disconnect_msg: slot,
    });
    Ok(mine)
}

/// Bind `name`; returns the pipes of connects that were waiting for it.
pub(crate) fn bind(names: &InprocRegistry, name: &str, me: InprocPeer) -> Result<Vec<SocketPipe>> {
    if name.is_empty() {
        return Err(Error::Invalid("inproc endpoint needs a name"));
    }
    let mut st = names.lock();
    if st.bound.contains_key(name) {
        return Err(Error::Io(std::io::Error::from_raw_os_error(libc::EADDRINUSE)));
    }
    let waiting = st.pending.remove(name).unwrap_or_default();
    st.bound.insert(name.to_string(), me.clone());
    drop(st);
    let mut adopted = Vec::with_capacity(waiting.len());
    for Pending { connector, mut binder_side, disconnect_msg } in waiting {
        if !me.disconnect_msg.is_empty() {
            let _ = disconnect_msg.set(me.disconnect_msg.clone());
        }
        // The binder's routing id was unknown when the connector made the pipes.
        binder_side.out.write_joining(joining_frames(&me.routing_id, &me.hello));
        binder_side.endpoint = me.endpoint;
        if connector.conflate_out {
            // libzmq: the binder takes the pipe's first message for the
            // connector's routing id and drops it unless it keeps routing ids;
            // on a CONFLATE pipe that is the one message queued since the connect.
            if !matches!(me.socket_type, SocketType::Router) {
                drop(binder_side.inn.read());
            }
        }
        // The pipes were sized with the connector's HWMs alone; now the
        // binder adds its share (a CONFLATE pipe has none and ignores this).
        binder_side.out.set_hwm(combined_hwm(me.sndhwm, connector.rcvhwm));
        binder_side.inn.set_hwm(combined_hwm(connector.sndhwm, me.rcvhwm));
        binder_side.hwm_boost = Some((connector.rcvhwm, me.rcvhwm));
        adopted.push(binder_side);
    }
    Ok(adopted)
}

/// Forget a name this socket bound (existing connections stay).
pub(crate) fn unbind(names: &InprocRegistry, name: &str, socket_id: u64) {
    let mut st = names.lock();
    if st.bound.get(name).map(|b| b.socket_id) == Some(socket_id) {
        st.bound.remove(name);
    }
}

/// Pipes from an engine to the ZAP handler bound at `name`, if the socket
/// bound there can answer (REP or ROUTER, as libzmq requires). The engine
/// reads replies woken by `wake`; no HWM applies, as in libzmq.
pub(crate) fn connect_zap(names: &InprocRegistry, name: &str, wake: Arc<dyn Wake>) -> Option<(PipeWriter, PipeReader)> {
    let st = names.lock();
    let handler = st.bound.get(name)?;
    if !matches!(handler.socket_type, SocketType::Rep | SocketType::Router) {
        return None;
    }
    let key = new_pipe_key();
    let (mut to_handler, handler_in) = pipe(0, WakeSlot::new(), WakeSlot::new());
    let (handler_out, from_handler) = pipe(0, WakeSlot::with(wake), WakeSlot::new());
    // The handler learns our (empty) routing id first, as from any inproc peer.
    to_handler.write(routing_id_frame(b""));
    to_handler.flush();
    handler.mailbox.send(SocketCommand::Attach(SocketPipe::new(handler_out, handler_in, handler.endpoint, key)));
    Some((to_handler, from_handler))
}
