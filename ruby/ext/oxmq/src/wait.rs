//! Blocking without the GVL, interruptibly.
//!
//! A call that cannot complete at once releases the GVL (`rb_nogvl`) and sleeps in `poll(2)` on the socket's
//! readiness descriptor plus this thread's *wake* eventfd. Ruby's unblocking
//! function for the thread (called for Ctrl-C, `Thread#raise`, `Thread#kill`,
//! `Timeout`) writes that eventfd, so the sleep ends at once; back under the
//! GVL we run the pending interrupts through `rb_protect`, which turns a
//! raise into an ordinary `Err` that unwinds our frames normally (a
//! `longjmp` over Rust frames would skip their destructors, e.g. a slot
//! guard). Two flags matter: INTR_FAIL (do not check interrupts after the
//! region, which could `longjmp` out of it) and UBF_ASYNC_SAFE (our
//! unblocking function only writes an eventfd, so Ruby may call it straight
//! from its signal handler: without that, a SIGINT to a process whose only
//! thread sleeps here would never wake it).

use magnus::Error;
use std::cell::Cell;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::raw::c_void;

/// A non-blocking eventfd used as a level-triggered wake-up flag.
pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    pub(crate) fn new() -> std::io::Result<EventFd> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub(crate) fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

fn notify_raw(fd: RawFd) {
    let one = 1u64;
    // SAFETY: writes 8 bytes from a local u64 to an eventfd; a full counter
    // (EAGAIN) still leaves it readable, which is all we need.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

thread_local! {
    /// This thread's wake flag; -1 until first needed.
    static THREAD_WAKE: Cell<RawFd> = const { Cell::new(-1) };
    static THREAD_WAKE_OWNER: std::cell::OnceCell<EventFd> = const { std::cell::OnceCell::new() };
}

/// This thread's wake eventfd (created on first use, closed when the thread ends).
pub(crate) fn thread_wake() -> Result<RawFd, i32> {
    let fd = THREAD_WAKE.with(Cell::get);
    if fd >= 0 {
        return Ok(fd);
    }
    let ev = EventFd::new().map_err(|e| e.raw_os_error().unwrap_or(libc::EMFILE))?;
    let fd = ev.raw();
    THREAD_WAKE_OWNER.with(|o| {
        let _ = o.set(ev);
    });
    THREAD_WAKE.with(|c| c.set(fd));
    Ok(fd)
}

/// Clear an eventfd (a no-op when it is not set).
pub(crate) fn drain_raw(fd: RawFd) {
    let mut v = 0u64;
    // SAFETY: reads 8 bytes into a local u64; EAGAIN (nothing pending) is fine.
    unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
}

/// Run `f` with the GVL released. `None` if Ruby had an interrupt pending
/// and did not run it, or if `f` panicked. `f` must not touch Ruby objects.
pub(crate) fn without_gvl<R, F: FnOnce() -> R>(wake: RawFd, f: F) -> Option<R> {
    struct Call<F, R> {
        f: Option<F>,
        out: Option<R>,
    }
    extern "C" fn trampoline<F: FnOnce() -> R, R>(p: *mut c_void) -> *mut c_void {
        // SAFETY: `p` is the `Call` below, alive and exclusively ours for the call.
        let call = unsafe { &mut *(p as *mut Call<F, R>) };
        if let Some(f) = call.f.take() {
            // Panic boundary: a panic must not cross into the VM.
            call.out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
        }
        std::ptr::null_mut()
    }
    extern "C" fn unblock(p: *mut c_void) {
        notify_raw(p as usize as RawFd);
    }
    let mut call = Call { f: Some(f), out: None };
    // SAFETY: `trampoline` matches `call`'s type; `call` outlives the call;
    // `unblock` only writes an eventfd (async-signal-safe, no Ruby API), as
    // UBF_ASYNC_SAFE promises.
    unsafe {
        rb_sys::rb_nogvl(
            Some(trampoline::<F, R>),
            (&mut call as *mut Call<F, R>).cast(),
            Some(unblock),
            wake as usize as *mut c_void,
            (rb_sys::RB_NOGVL_INTR_FAIL | rb_sys::RB_NOGVL_UBF_ASYNC_SAFE) as i32,
        );
    }
    call.out
}

/// Run Ruby's pending interrupts (signal handlers, `Thread#raise`, ...);
/// an exception they raise comes back as `Err`.
pub(crate) fn check_interrupts() -> Result<(), Error> {
    magnus::rb_sys::protect(|| {
        // SAFETY: called with the GVL held; a raise is caught by `protect`.
        unsafe { rb_sys::rb_thread_check_ints() };
        rb_sys::Qnil as rb_sys::VALUE
    })
    .map(|_| ())
}

/// Ruby's way of blocking, for the core's waits ([`oxmq::WaitHook`]): the
/// GVL released while parked, this thread's wake eventfd in every wait (so
/// Ctrl-C, `Thread#raise`, `Thread#kill` and `Timeout` end it at once), and
/// Ruby's pending interrupts run when it fires.
pub(crate) struct GvlWait {
    wake: RawFd,
    raised: Option<Error>,
}

impl GvlWait {
    pub(crate) fn new() -> Result<GvlWait, Error> {
        let wake = thread_wake().map_err(|e| crate::errors::zmq_error(e, None))?;
        Ok(GvlWait { wake, raised: None })
    }

    /// The Ruby exception for a call that ended with `e`: the one an
    /// interrupt raised, if that is what ended it.
    pub(crate) fn error(&mut self, e: oxmq::Error) -> Error {
        self.raised.take().unwrap_or_else(|| crate::errors::core_error(e))
    }
}

impl oxmq::WaitHook for GvlWait {
    fn wake_fd(&self) -> Option<RawFd> {
        Some(self.wake)
    }

    fn park(&mut self, wait: &mut dyn FnMut()) {
        // Not run: Ruby had an interrupt pending; the core checks next.
        let _ = without_gvl(self.wake, wait);
    }

    fn check(&mut self) -> oxmq::Result<()> {
        drain_raw(self.wake);
        check_interrupts().map_err(|e| {
            self.raised = Some(e);
            oxmq::Error::Interrupted
        })
    }
}
