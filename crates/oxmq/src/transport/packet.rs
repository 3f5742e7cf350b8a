//! The engines of the packet transports (udp:// for RADIO/DISH and DGRAM,
//! pgm://, epgm:// and norm://): no connection and no ZMTP stream, so the
//! I/O thread does not run them as stream engines. Each owns its
//! descriptors and its end of the socket's pipe; the I/O thread registers
//! the descriptors with its poll loop and runs the engine on their edges,
//! on its pipe's wake-ups and on the timers it asks for.

use crate::channel::pipes::EnginePipe;
use crate::pipe::Wake;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Duration;

/// What an engine wants after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Finished: the socket let go of the pipe and, when sending, all was
    /// handed to the kernel or the library. The I/O thread drops the engine.
    Done,
    /// More can be done at once: a run's budget ran out.
    Again,
    /// Run again on an edge of a descriptor, a wake-up from the pipe, or
    /// after this long at the latest (a library's timers); `None`: no timer.
    Wait(Option<Duration>),
    /// As `Wait(None)`, and the kernel had no room for a datagram: run
    /// again when the descriptors are writable too. Watching for that only
    /// then spares a run per datagram sent (a UDP socket signals writable
    /// each time the kernel frees a datagram's buffer).
    WaitWritable,
}

/// An endpoint's engine, run by an I/O thread. Its descriptors are open
/// (errors are the caller's, at bind/connect); dropping the engine closes
/// them, after the I/O thread has deregistered them.
pub(crate) trait PacketEngine: Send {
    /// The descriptors to watch for reading, each with whether to watch it
    /// for writing too, always (otherwise only after `Step::WaitWritable`).
    /// Edge-triggered: `step` drains them.
    fn fds(&self) -> Vec<(RawFd, bool)>;
    /// The engine's end of the socket's pipe.
    fn pipe(&mut self) -> &mut EnginePipe;
    /// The waker the pipe fires when the socket writes, reads or lets go.
    /// Both ends wake it: a send-only engine never writes the inbound end,
    /// which then wakes it only when the socket lets go (one more run,
    /// beside the outbound end's wake-up for the same close).
    fn set_waker(&mut self, w: Arc<dyn Wake>) {
        let pipe = self.pipe();
        pipe.out.reader_wake().set(w.clone());
        pipe.inn.writer_wake().set(w);
    }
    /// Does everything that can be done without blocking.
    fn step(&mut self) -> Step;
}
