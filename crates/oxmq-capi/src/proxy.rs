//! `zmq_proxy`, `zmq_proxy_steerable` and the legacy `zmq_device`.
//!
//! The proxy polls both sides (and the control socket) with `oxmq::poll`
//! and forwards whole multipart messages, a burst at a time, copying each
//! frame to the capture socket if there is one. A multipart message counts
//! once in the statistics, with the sum of its frame sizes.

use crate::boundary::{CResult, EFAULT};
use crate::handle::{optional_socket, SocketHandle};
use oxmq::{Error, Msg, PollItem, Socket, SocketType, DONTWAIT, POLLIN, SNDMORE};
use std::ffi::{c_int, c_void};

/// Messages forwarded per readiness before looking at the other side again.
const BURST: usize = 1000;

#[derive(Default, Clone, Copy)]
struct SideStats {
    msg_in: u64,
    bytes_in: u64,
    msg_out: u64,
    bytes_out: u64,
}

#[derive(PartialEq)]
enum State {
    Running,
    Paused,
    Terminated,
}

/// Forward up to [`BURST`] whole messages from `from` to `to`.
fn forward(
    from: &Socket,
    to: &Socket,
    capture: Option<&Socket>,
    from_stats: &mut SideStats,
    to_stats: &mut SideStats,
) -> oxmq::Result<()> {
    for _ in 0..BURST {
        let mut size = 0u64;
        let mut flags = DONTWAIT;
        loop {
            let frame = match from.recv(flags) {
                Ok(m) => m,
                // Nothing (more) waiting: only possible before a message's first frame.
                Err(Error::Again) if flags == DONTWAIT => return Ok(()),
                Err(e) => return Err(e),
            };
            // The rest of a message is already queued: it arrives whole.
            flags = 0;
            size += frame.len() as u64;
            let more = frame.more();
            let send_flags = if more { SNDMORE } else { 0 };
            if let Some(c) = capture {
                c.send(frame.clone(), send_flags)?;
            }
            to.send(frame, send_flags)?;
            if !more {
                break;
            }
        }
        from_stats.msg_in += 1;
        from_stats.bytes_in += size;
        to_stats.msg_out += 1;
        to_stats.bytes_out += size;
    }
    Ok(())
}

/// Act on one control command.
fn control_command(control: &Socket, state: &mut State, stats: &[SideStats; 2]) -> oxmq::Result<()> {
    let cmd = match control.recv(DONTWAIT) {
        Ok(m) => m,
        Err(Error::Again) => return Ok(()),
        Err(e) => return Err(e),
    };
    // Drop any further frames of the command.
    let mut more = cmd.more();
    while more {
        more = control.recv(0)?.more();
    }
    let reply_empty = control.socket_type() == SocketType::Rep;
    match cmd.as_slice() {
        b"PAUSE" => *state = State::Paused,
        b"RESUME" => *state = State::Running,
        b"TERMINATE" => *state = State::Terminated,
        b"STATISTICS" => {
            let values = stats.iter().flat_map(|s| [s.msg_in, s.bytes_in, s.msg_out, s.bytes_out]);
            let frames: Vec<Msg> = values.map(|v| Msg::from_slice(&v.to_ne_bytes())).collect();
            return control.send_multipart(frames, 0);
        }
        _ => {}
    }
    if reply_empty {
        // A REP control socket must answer before its next request.
        control.send(Msg::new(), 0)?;
    }
    Ok(())
}

fn run(front: &Socket, back: &Socket, capture: Option<&Socket>, control: Option<&Socket>) -> oxmq::Result<()> {
    let mut state = State::Running;
    let mut stats = [SideStats::default(); 2];
    loop {
        let running = state == State::Running;
        let mut items = Vec::with_capacity(3);
        if running {
            items.push(PollItem::from_socket(front, POLLIN));
            items.push(PollItem::from_socket(back, POLLIN));
        }
        if let Some(c) = control {
            items.push(PollItem::from_socket(c, POLLIN));
        }
        oxmq::poll(&mut items, -1)?;
        let ready: Vec<bool> = items.iter().map(|i| i.is_readable()).collect();
        drop(items);
        if running {
            let [front_stats, back_stats] = &mut stats;
            if ready[0] {
                forward(front, back, capture, front_stats, back_stats)?;
            }
            // One socket on both sides: already served.
            if ready[1] && !std::ptr::eq(front, back) {
                forward(back, front, capture, back_stats, front_stats)?;
            }
        }
        if let (Some(c), Some(true)) = (control, ready.last().copied()) {
            control_command(c, &mut state, &stats)?;
            if state == State::Terminated {
                return Ok(());
            }
        }
    }
}

/// # Safety
/// Each pointer is NULL (capture, control) or a socket handle.
unsafe fn proxy(f: *mut c_void, b: *mut c_void, cap: *mut c_void, ctl: *mut c_void) -> CResult<c_int> {
    if f.is_null() || b.is_null() {
        return Err(EFAULT); // as libzmq
    }
    // SAFETY: forwarded caller contract.
    let front = unsafe { SocketHandle::from_raw(f) }?;
    // SAFETY: forwarded caller contract.
    let back = unsafe { SocketHandle::from_raw(b) }?;
    // SAFETY: forwarded caller contract.
    let capture = unsafe { optional_socket(cap) }?;
    // SAFETY: forwarded caller contract.
    let control = unsafe { optional_socket(ctl) }?;
    run(front, back, capture, control)?;
    Ok(0)
}

/// Forward between `frontend` and `backend` until the context terminates
/// (then -1 with ETERM, as libzmq).
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy(frontend: *mut c_void, backend: *mut c_void, capture: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for socket handles.
        unsafe { proxy(frontend, backend, capture, std::ptr::null_mut()) }
    })
}

/// As `zmq_proxy`, steered by PAUSE / RESUME / TERMINATE / STATISTICS on
/// `control`; returns 0 after TERMINATE.
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy_steerable(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for socket handles.
        unsafe { proxy(frontend, backend, capture, control) }
    })
}

/// Legacy devices (STREAMER, FORWARDER, QUEUE) are all a proxy; like libzmq,
/// the type is not looked at.
#[no_mangle]
pub unsafe extern "C" fn zmq_device(kind: c_int, frontend: *mut c_void, backend: *mut c_void) -> c_int {
    ffi_int!({
        let _ = kind;
        // SAFETY: zmq.h contract for socket handles.
        unsafe { proxy(frontend, backend, std::ptr::null_mut(), std::ptr::null_mut()) }
    })
}
