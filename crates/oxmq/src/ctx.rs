//! The context: owns the I/O thread, the inproc name registry, and the set of
//! live sockets that termination waits for.
//!
//! Fork: a child process gets a copy of the context's memory but none of its
//! threads, while its eventfds and epoll set are shared with the parent. As
//! libzmq does, the context remembers the process that made it; in any other
//! process (a fork child) closing its sockets and terminating it touch none
//! of that: nothing is signalled, waited for or freed (the child leaks the
//! copy, as libzmq's does), and the child makes a new context of its own.
//! No `pthread_atfork` handler is needed, so runtimes that fork without
//! calling any (Python's `os.fork()` included) are covered too.

use crate::channel::mailbox::Mailbox;
use crate::error::{Error, Result};
use crate::io::{IoThread, ThreadTuning, ZapRoute, THREAD_DFLT};
use crate::options::Options;
use crate::pipe::{PipeReader, PipeWriter, Wake};
use crate::socket::Socket;
use crate::transport::inproc::{self, InprocRegistry};
use oxmq_proto::SocketType;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};

/// libzmq context option numbers (`zmq_ctx_set`).
pub mod ctxopt {
    /// How many I/O threads the context starts (default 1); set before the first socket.
    pub const IO_THREADS: i32 = 1;
    /// How many sockets the context may hold at once (default 1023); more fail with EMFILE.
    pub const MAX_SOCKETS: i32 = 2;
    /// Read-only: the largest value [`MAX_SOCKETS`] takes.
    pub const SOCKET_LIMIT: i32 = 3;
    /// The scheduling priority of the I/O threads, applied when they start (-1: unchanged).
    pub const THREAD_PRIORITY: i32 = 3;
    /// The scheduling policy (`SCHED_*`) of the I/O threads, applied when they start (-1: unchanged).
    pub const THREAD_SCHED_POLICY: i32 = 4;
    /// The largest message the context's sockets handle (default `i32::MAX`).
    pub const MAX_MSGSZ: i32 = 5;
    /// Read-only: the size of a C `zmq_msg_t`, for bindings that allocate one.
    pub const MSG_T_SIZE: i32 = 6;
    /// Adds a CPU to the set the I/O threads may run on.
    pub const THREAD_AFFINITY_CPU_ADD: i32 = 7;
    /// Removes a CPU from the set the I/O threads may run on.
    pub const THREAD_AFFINITY_CPU_REMOVE: i32 = 8;
    /// A prefix for the I/O threads' names (`<prefix>/ZMQbg/IO/0`), to tell contexts apart.
    pub const THREAD_NAME_PREFIX: i32 = 9;
    /// A draft-API option libzmq's release builds answer (default 1).
    pub const ZERO_COPY_RECV: i32 = 10;
    /// The default of the IPV6 socket option for the context's new sockets.
    pub const IPV6: i32 = 42;
    /// Whether terminating the context waits for each socket's LINGER (1, the default) or closes at once, as if LINGER were 0.
    pub const BLOCKY: i32 = 70;
}

/// A ZeroMQ context. Cheap to clone; shared between threads.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<CtxInner>,
}

pub(crate) struct CtxState {
    sockets: HashMap<u64, Arc<Mailbox>>,
    io_threads: i32,
    max_sockets: i32,
    ipv6: bool,
    blocky: bool,
    // THREAD_*: read when the I/O thread starts (io::ThreadTuning), as libzmq's.
    thread_sched_policy: i32,
    thread_priority: i32,
    thread_name_prefix: Option<i32>,
    thread_affinity: std::collections::BTreeSet<i32>,
    max_msgsz: i32,
    zero_copy_recv: bool,
}

pub(crate) struct CtxInner {
    /// The process that made the context (see the module's note on fork).
    pid: u32,
    state: Mutex<CtxState>,
    sockets_gone: Condvar,
    terminated: AtomicBool,
    io: OnceLock<IoThread>,
    next_socket_id: AtomicU64,
    pub(crate) inproc: InprocRegistry,
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

impl Context {
    /// A new context. Its I/O thread starts with the first tcp/ipc endpoint.
    pub fn new() -> Context {
        Context {
            inner: Arc::new(CtxInner {
                pid: std::process::id(),
                state: Mutex::new(CtxState {
                    sockets: HashMap::new(),
                    io_threads: 1,
                    max_sockets: 1023,
                    ipv6: false,
                    blocky: true,
                    thread_sched_policy: THREAD_DFLT,
                    thread_priority: THREAD_DFLT,
                    thread_name_prefix: None,
                    thread_affinity: Default::default(),
                    max_msgsz: i32::MAX,
                    zero_copy_recv: true,
                }),
                sockets_gone: Condvar::new(),
                terminated: AtomicBool::new(false),
                io: OnceLock::new(),
                next_socket_id: AtomicU64::new(1),
                inproc: InprocRegistry::default(),
            }),
        }
    }

    /// Create a socket.
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        let mut st = self.inner.lock();
        if self.inner.is_terminated() {
            return Err(Error::Terminated);
        }
        if st.sockets.len() >= st.max_sockets.max(0) as usize {
            return Err(Error::Io(std::io::Error::from_raw_os_error(libc::EMFILE)));
        }
        let id = self.inner.next_socket_id.fetch_add(1, Ordering::Relaxed);
        let mailbox = Mailbox::new()?;
        st.sockets.insert(id, mailbox.clone());
        let mut options = Options::for_type(kind);
        options.ipv6 = st.ipv6;
        if !st.blocky {
            options.linger = Some(std::time::Duration::ZERO);
        }
        drop(st);
        Ok(Socket::new(self, kind, id, mailbox, options))
    }

    /// Terminate: blocking calls in other threads fail with ETERM; then wait
    /// until every socket is closed and every lingering message is sent or
    /// its linger has expired (libzmq `zmq_ctx_term`).
    ///
    /// In a fork child (see [`Context::is_forked_copy`]) it only marks the
    /// context terminated, and returns at once: the threads it would wait
    /// for live in the parent.
    pub fn term(&self) {
        if self.inner.is_forked_copy() {
            self.inner.terminated.store(true, Ordering::SeqCst);
            return;
        }
        self.shutdown();
        let mut st = self.inner.lock();
        while !st.sockets.is_empty() {
            st = self.inner.sockets_gone.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        drop(st);
        if let Some(io) = self.inner.io.get() {
            io.wait_idle();
            io.shutdown();
        }
    }

    /// Make every blocking and later call on this context's sockets fail with
    /// ETERM, without waiting (libzmq `zmq_ctx_shutdown`).
    pub fn shutdown(&self) {
        self.inner.terminated.store(true, Ordering::SeqCst);
        if self.inner.is_forked_copy() {
            // The sockets' eventfds are the parent's too: wake nobody there.
            return;
        }
        let st = self.inner.lock();
        for mb in st.sockets.values() {
            mb.poke();
        }
    }

    /// Set a context option (`zmq_ctx_set`), with libzmq 4.3.5's checks.
    pub fn set(&self, option: i32, value: i32) -> Result<()> {
        let mut st = self.inner.lock();
        let bad = Error::Invalid("unknown context option or bad value");
        match option {
            // Any value: libzmq keeps it as the thread name prefix.
            ctxopt::THREAD_NAME_PREFIX => st.thread_name_prefix = Some(value),
            _ if value < 0 => return Err(bad),
            ctxopt::IO_THREADS => st.io_threads = value,
            ctxopt::MAX_SOCKETS if value >= 1 => st.max_sockets = value,
            ctxopt::IPV6 => st.ipv6 = value != 0,
            ctxopt::BLOCKY => st.blocky = value != 0,
            ctxopt::ZERO_COPY_RECV => st.zero_copy_recv = value != 0,
            ctxopt::THREAD_PRIORITY => st.thread_priority = value,
            ctxopt::THREAD_SCHED_POLICY => st.thread_sched_policy = value,
            ctxopt::MAX_MSGSZ => st.max_msgsz = value,
            ctxopt::THREAD_AFFINITY_CPU_ADD => {
                st.thread_affinity.insert(value);
            }
            // Removing a CPU that was never added is an error in libzmq.
            ctxopt::THREAD_AFFINITY_CPU_REMOVE if st.thread_affinity.remove(&value) => {}
            _ => return Err(bad),
        }
        Ok(())
    }

    /// Read a context option (`zmq_ctx_get`).
    pub fn get(&self, option: i32) -> Result<i32> {
        let st = self.inner.lock();
        Ok(match option {
            ctxopt::IO_THREADS => st.io_threads,
            ctxopt::MAX_SOCKETS => st.max_sockets,
            // Same number as THREAD_PRIORITY, which is write-only.
            ctxopt::SOCKET_LIMIT => 65535,
            ctxopt::IPV6 => st.ipv6 as i32,
            ctxopt::BLOCKY => st.blocky as i32,
            ctxopt::THREAD_SCHED_POLICY => st.thread_sched_policy,
            ctxopt::THREAD_NAME_PREFIX => st.thread_name_prefix.unwrap_or(0),
            ctxopt::MAX_MSGSZ => st.max_msgsz,
            ctxopt::MSG_T_SIZE => 64,
            ctxopt::ZERO_COPY_RECV => st.zero_copy_recv as i32,
            _ => return Err(Error::Invalid("unknown context option")),
        })
    }

    /// Whether `term` or `shutdown` has been called.
    pub fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }

    /// Whether this is a fork child's copy of a context made by its parent
    /// (libzmq compares the pid the same way). Costs a `getpid` call.
    pub fn is_forked_copy(&self) -> bool {
        self.inner.is_forked_copy()
    }
}

impl CtxInner {
    pub(crate) fn lock(&self) -> MutexGuard<'_, CtxState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline]
    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Relaxed)
    }

    /// See [`Context::is_forked_copy`]. Only on close and termination paths.
    pub(crate) fn is_forked_copy(&self) -> bool {
        std::process::id() != self.pid
    }

    /// The I/O thread, started on first use.
    pub(crate) fn io(&self) -> Result<&IoThread> {
        if let Some(io) = self.io.get() {
            return Ok(io);
        }
        // Serialise the first start so that two racing sockets share one thread.
        let st = self.lock();
        if let Some(io) = self.io.get() {
            return Ok(io);
        }
        let tuning = ThreadTuning {
            name_prefix: st.thread_name_prefix,
            priority: st.thread_priority,
            sched_policy: st.thread_sched_policy,
            affinity: st.thread_affinity.iter().copied().collect(),
        };
        let started = IoThread::start(0, tuning)?;
        let _ = self.io.set(started);
        Ok(self.io.get().expect("io thread just set"))
    }

    /// What this context's engines ask for ZAP; it does not keep the context alive.
    pub(crate) fn zap_route(self: &Arc<Self>) -> Weak<dyn ZapRoute> {
        let weak: Weak<CtxInner> = Arc::downgrade(self);
        weak
    }

    pub(crate) fn io_if_started(&self) -> Option<&IoThread> {
        self.io.get()
    }

    pub(crate) fn socket_closed(&self, id: u64) {
        let mut st = self.lock();
        st.sockets.remove(&id);
        if st.sockets.is_empty() {
            self.sockets_gone.notify_all();
        }
    }
}

impl ZapRoute for CtxInner {
    fn connect(&self, wake: Arc<dyn Wake>) -> Option<(PipeWriter, PipeReader)> {
        inproc::connect_zap(&self.inproc, oxmq_proto::ZAP_ENDPOINT, wake)
    }
}

impl Drop for CtxInner {
    fn drop(&mut self) {
        if self.is_forked_copy() {
            // The I/O thread is the parent's: stopping it would signal the
            // parent's copy and join a thread this process does not have.
            // What the sockets and inproc names hold may signal the
            // parent's eventfds when dropped: left as they are too.
            std::mem::forget(self.io.take());
            let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
            std::mem::forget(std::mem::take(&mut st.sockets));
            std::mem::forget(std::mem::take(&mut self.inproc));
            return;
        }
        // Every socket holds the context, so none is left: only lingering
        // connections may remain.
        if let Some(io) = self.io.get() {
            io.wait_idle();
            io.shutdown();
        }
    }
}
