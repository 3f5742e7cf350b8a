//! Lock-free single-producer/single-consumer message pipes.
//!
//! # Algorithm
//!
//! This is the *ypipe* protocol of libzmq (`ypipe.hpp` / `yqueue.hpp`, with the
//! HWM/LWM flow control of `pipe.cpp`), re-derived and re-written for Rust:
//!
//! * **Storage.** An unbounded singly linked list of fixed-size chunks of
//!   `CHUNK` message slots. Every frame has a global, ever-increasing index
//!   `i`; it lives in slot `i % CHUNK` of the `i / CHUNK`-th chunk. The writer
//!   links a fresh chunk as soon as it fills the last slot of the current one
//!   (so the chunk holding "the next index" always exists), and the reader
//!   gives a chunk back as soon as it has consumed its last slot. One retired
//!   chunk is parked in a `spare` slot and reused by the writer, so a pipe in
//!   steady state allocates nothing.
//! * **Publication.** `write` fills slots privately; `flush` publishes all of
//!   them at once by advancing the shared `committed` index with a single
//!   release CAS. The reader never looks past `committed`, so a multipart
//!   message flushed after its last frame appears atomically, and `rollback`
//!   can take back unflushed frames without the reader ever noticing.
//! * **Sleeping reader.** When the reader runs dry it sets an `ASLEEP` bit in
//!   `committed` with a CAS that only succeeds if the writer has published
//!   nothing new since the reader last looked. The writer's flush CAS (which
//!   expects the index *without* the bit) then fails once, learns the reader
//!   sleeps, installs the new index (clearing the bit) and wakes the reader.
//!   Because both sides go through read-modify-writes on the same atomic,
//!   exactly one of "the reader sees the new data" and "the writer sees the
//!   sleep mark" happens: no lost wake-up, and no wake-up (no syscall) while
//!   the reader is awake. This is ypipe's "CAS the last-flushed pointer
//!   against NULL" trick, with a flag bit instead of a NULL pointer.
//! * **Flow control.** The writer counts whole messages written; the reader
//!   counts messages read and publishes its count every `lwm` messages and
//!   whenever it runs dry (libzmq's `activate_write` cadence, plus the dry
//!   one; the I/O thread's ends keep libzmq's exactly, at multiples of
//!   `lwm` only: `PipeReader::set_acks_at_lwm`). The writer
//!   caches the published count and reloads it only when its cached view says
//!   the pipe is full; it then marks itself waiting and re-checks (a Dekker /
//!   store-buffer handshake with `SeqCst` fences on both sides), and the
//!   reader wakes it at its next publication point.
//! * **Termination.** Each end announces its departure, wakes the other end
//!   unconditionally, and disposes of the frames it owns. The index ranges
//!   owned by each side are disjoint (see `ypipe::Core`), and the chunk memory that
//!   both ends may still hold is released by the last `Arc<Core>` owner.
//!
//! Files: `wake` (the late-bound waker of either end), `ypipe` (chunks and
//! the two ends), `conflate` (CONFLATE's one-frame slot, a variant of the
//! ends), `tests`.

mod wake;
mod ypipe;
#[cfg(test)]
pub(crate) use wake::WakeCount;
pub(crate) use wake::{Wake, WakeSlot};
pub(crate) use ypipe::{pipe, pipe_conflate, PipeReader, PipeWriter};

// Plain-thread tests; under `--cfg loom` the atomics only work inside a model.
#[cfg(all(test, not(loom)))]
mod tests;
