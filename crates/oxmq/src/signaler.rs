//! An eventfd that wakes a sleeping socket (Linux).
//!
//! `signal` adds 1 to the eventfd counter (making it readable), `drain` resets
//! it to 0 with one non-blocking read, and `wait` blocks in `poll(2)` until it
//! is readable. The fd can also be registered with an external poller via
//! [`Signaler::raw_fd`].

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

pub(crate) struct Signaler {
    fd: OwnedFd,
}

impl Signaler {
    pub(crate) fn new() -> io::Result<Signaler> {
        // SAFETY: plain syscall wrapper; no pointers involved.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a freshly created descriptor that nobody else owns.
        Ok(Signaler { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// Make the fd readable. Never blocks; a saturated counter (EAGAIN) is
    /// already readable, so that error is ignored.
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        loop {
            // SAFETY: writes 8 bytes from a live local `u64`.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
            if n == 8 {
                return;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return,
                _ => {
                    debug_assert!(false, "eventfd write failed: {err}");
                    return;
                }
            }
        }
    }

    /// Reset the counter to 0 (one non-blocking read; EAGAIN = already 0).
    pub(crate) fn drain(&self) {
        let mut buf: u64 = 0;
        loop {
            // SAFETY: reads at most 8 bytes into a live local `u64`.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut buf as *mut u64).cast(), 8) };
            if n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return;
            }
        }
    }

    /// Block until signalled (`Ok(true)`) or until `timeout` elapses
    /// (`Ok(false)`); `None` waits forever. Does not drain. An interrupting
    /// signal yields `Err(ErrorKind::Interrupted)`; the caller decides whether
    /// to retry (with the remaining time).
    pub(crate) fn wait(&self, timeout: Option<Duration>) -> io::Result<bool> {
        let ms: libc::c_int = match timeout {
            None => -1,
            Some(d) => {
                // Round up so a short positive timeout does not become a busy poll.
                let ms = d.as_nanos().div_ceil(1_000_000);
                ms.min(libc::c_int::MAX as u128) as libc::c_int
            }
        };
        let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: `pfd` is a live, properly initialized array of one pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl crate::pipe::Wake for Signaler {
    fn wake(&self) {
        self.signal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn signal_then_wait_is_ready() {
        let s = Signaler::new().unwrap();
        s.signal();
        assert!(s.wait(Some(Duration::from_millis(1000))).unwrap());
        // wait does not drain
        assert!(s.wait(Some(Duration::ZERO)).unwrap());
    }

    #[test]
    fn wait_times_out_when_not_signalled() {
        let s = Signaler::new().unwrap();
        let t = Instant::now();
        assert!(!s.wait(Some(Duration::from_millis(10))).unwrap());
        assert!(t.elapsed() >= Duration::from_millis(9));
    }

    #[test]
    fn drain_resets() {
        let s = Signaler::new().unwrap();
        s.signal();
        s.signal();
        s.drain();
        assert!(!s.wait(Some(Duration::ZERO)).unwrap());
        s.drain(); // draining an empty eventfd is fine
        s.signal();
        assert!(s.wait(Some(Duration::ZERO)).unwrap());
    }

    #[test]
    fn wakes_another_thread() {
        let s = Arc::new(Signaler::new().unwrap());
        let s2 = s.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            crate::pipe::Wake::wake(&*s2);
        });
        assert!(s.wait(None).unwrap());
        t.join().unwrap();
        assert!(s.raw_fd() >= 0);
    }
}
