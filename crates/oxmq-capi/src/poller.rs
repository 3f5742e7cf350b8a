//! Draft API: `zmq_poller_*`, libzmq's registration-based poller, the way
//! to poll thread-safe sockets (they have no `ZMQ_FD`). Each wait runs
//! `oxmq::poll` over the registered items, so readiness means the same as
//! in `zmq_poll`.

use crate::boundary::{CResult, Errno, EFAULT, EINVAL, ENOTSOCK};
use crate::handle::SocketHandle;
use oxmq::PollItem;
use std::ffi::{c_int, c_long, c_short, c_void};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

const POLLER_TAG: u32 = 0xCAFE_0001;
const DEAD_TAG: u32 = 0xdead_0b1e;
const EBADF: Errno = Errno(libc::EBADF);
const EAGAIN: Errno = Errno(libc::EAGAIN);
/// ZMQ_POLLIN | ZMQ_POLLOUT | ZMQ_POLLERR | ZMQ_POLLPRI.
const ALL_EVENTS: c_short = 1 | 2 | 4 | 8;

/// libzmq's `zmq_poller_event_t` (non-Windows layout).
#[repr(C)]
pub struct zmq_poller_event_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub user_data: *mut c_void,
    pub events: c_short,
}

const _: () = assert!(std::mem::size_of::<zmq_poller_event_t>() == 32);

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Socket(*mut c_void),
    Fd(RawFd),
}

struct Item {
    target: Target,
    user_data: *mut c_void,
    events: c_short,
}

#[derive(Default)]
struct Items {
    list: Vec<Item>,
    /// `zmq_poller_fd`: an epoll set over the readiness eventfds of the
    /// thread-safe sockets registered, readable when any of them is.
    epoll: Option<OwnedFd>,
}

#[repr(C)]
struct Poller {
    tag: u32,
    items: Mutex<Items>,
}

/// The poller behind `p`; EFAULT when it is not a live one (libzmq's check_poller).
///
/// # Safety
/// `p` is NULL or points to readable memory (ideally from `zmq_poller_new`).
unsafe fn poller<'a>(p: *mut c_void) -> CResult<&'a Poller> {
    if p.is_null() || (p as usize) % std::mem::align_of::<Poller>() != 0 {
        return Err(EFAULT);
    }
    // SAFETY: non-NULL and aligned; the tag is the first field (repr(C)).
    if unsafe { (p as *const u32).read() } != POLLER_TAG {
        return Err(EFAULT);
    }
    // SAFETY: the tag says this is a live Poller from `zmq_poller_new`.
    Ok(unsafe { &*(p as *const Poller) })
}

impl Poller {
    fn items(&self) -> std::sync::MutexGuard<'_, Items> {
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn check_events(events: c_short) -> CResult<()> {
    if events & !ALL_EVENTS != 0 {
        return Err(EINVAL);
    }
    Ok(())
}

/// A live socket handle, or ENOTSOCK.
///
/// # Safety
/// `s` is NULL or points to readable memory (a socket handle).
unsafe fn socket<'a>(s: *mut c_void) -> CResult<&'a oxmq::Socket> {
    // SAFETY: forwarded caller contract.
    unsafe { SocketHandle::from_raw(s) }.map_err(|_| ENOTSOCK)
}

fn epoll_ctl(epfd: RawFd, op: c_int, fd: RawFd) {
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
    // SAFETY: plain syscall on descriptors we were given; `ev` is live.
    unsafe { libc::epoll_ctl(epfd, op, fd, &mut ev) };
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_new() -> *mut c_void {
    ffi_ptr!({ Ok(Box::into_raw(Box::new(Poller { tag: POLLER_TAG, items: Mutex::default() })) as *mut c_void) })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_destroy(poller_p: *mut *mut c_void) -> c_int {
    ffi_int!({
        if poller_p.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; zmq.h: points to the caller's poller pointer.
        let p = unsafe { *poller_p };
        // SAFETY: `p` is NULL or a poller pointer (zmq.h contract).
        unsafe { poller(p) }?;
        // SAFETY: live (checked); the caller gives it up, so the Box is ours.
        let mut b = unsafe { Box::from_raw(p as *mut Poller) };
        b.tag = DEAD_TAG;
        drop(b);
        // SAFETY: as above.
        unsafe { *poller_p = std::ptr::null_mut() };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_size(p: *mut c_void) -> c_int {
    // SAFETY: zmq.h contract for `p`.
    ffi_int!({ Ok(unsafe { poller(p) }?.items().list.len() as c_int) })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add(
    p: *mut c_void,
    s: *mut c_void,
    user_data: *mut c_void,
    events: c_short,
) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p` and `s`.
        let (pl, sock) = unsafe { (poller(p)?, socket(s)?) };
        check_events(events)?;
        let mut items = pl.items();
        if items.list.iter().any(|i| i.target == Target::Socket(s)) {
            return Err(EINVAL);
        }
        if sock.get_option_int(oxmq::opt::THREAD_SAFE)? == 1 {
            if items.epoll.is_none() {
                // SAFETY: plain syscall.
                let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
                if fd < 0 {
                    return Err(Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EMFILE)));
                }
                // SAFETY: a fresh descriptor nobody else owns.
                items.epoll = Some(unsafe { OwnedFd::from_raw_fd(fd) });
            }
            let epfd = std::os::fd::AsRawFd::as_raw_fd(items.epoll.as_ref().expect("created above"));
            epoll_ctl(epfd, libc::EPOLL_CTL_ADD, sock.readiness_fd()?);
        }
        items.list.push(Item { target: Target::Socket(s), user_data, events });
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify(p: *mut c_void, s: *mut c_void, events: c_short) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p` and `s`.
        let pl = unsafe { poller(p) }?;
        // SAFETY: as above.
        unsafe { socket(s) }?;
        check_events(events)?;
        let mut items = pl.items();
        let item = items.list.iter_mut().find(|i| i.target == Target::Socket(s)).ok_or(EINVAL)?;
        item.events = events;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove(p: *mut c_void, s: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p` and `s`.
        let (pl, sock) = unsafe { (poller(p)?, socket(s)?) };
        let mut items = pl.items();
        let pos = items.list.iter().position(|i| i.target == Target::Socket(s)).ok_or(EINVAL)?;
        items.list.remove(pos);
        if let (Some(ep), Ok(fd)) = (&items.epoll, sock.readiness_fd()) {
            epoll_ctl(std::os::fd::AsRawFd::as_raw_fd(ep), libc::EPOLL_CTL_DEL, fd);
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add_fd(
    p: *mut c_void,
    fd: c_int,
    user_data: *mut c_void,
    events: c_short,
) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p`.
        let pl = unsafe { poller(p) }?;
        if fd == -1 {
            return Err(EBADF);
        }
        check_events(events)?;
        let mut items = pl.items();
        if items.list.iter().any(|i| i.target == Target::Fd(fd)) {
            return Err(EINVAL);
        }
        items.list.push(Item { target: Target::Fd(fd), user_data, events });
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify_fd(p: *mut c_void, fd: c_int, events: c_short) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p`.
        let pl = unsafe { poller(p) }?;
        if fd == -1 {
            return Err(EBADF);
        }
        check_events(events)?;
        let mut items = pl.items();
        let item = items.list.iter_mut().find(|i| i.target == Target::Fd(fd)).ok_or(EINVAL)?;
        item.events = events;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove_fd(p: *mut c_void, fd: c_int) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p`.
        let pl = unsafe { poller(p) }?;
        if fd == -1 {
            return Err(EBADF);
        }
        let mut items = pl.items();
        let pos = items.list.iter().position(|i| i.target == Target::Fd(fd)).ok_or(EINVAL)?;
        items.list.remove(pos);
        Ok(0)
    })
}

/// A descriptor that becomes readable when a registered thread-safe socket
/// may have become ready; EINVAL without one (as libzmq, whose poller has a
/// signaler only for thread-safe sockets).
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_fd(p: *mut c_void, fd: *mut c_int) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p`.
        let pl = unsafe { poller(p) }?;
        let items = pl.items();
        let ep = items.epoll.as_ref().ok_or(EINVAL)?;
        if fd.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; zmq.h: `fd` points to a writable zmq_fd_t.
        unsafe { fd.write(std::os::fd::AsRawFd::as_raw_fd(ep)) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_wait_all(
    p: *mut c_void,
    events: *mut zmq_poller_event_t,
    n_events: c_int,
    timeout: c_long,
) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `p`.
        let pl = unsafe { poller(p) }?;
        if events.is_null() {
            return Err(EFAULT);
        }
        if n_events < 0 {
            return Err(EINVAL);
        }
        // Copied out so the poller is not locked while waiting.
        let snapshot: Vec<(Target, *mut c_void, c_short)> =
            pl.items().list.iter().map(|i| (i.target, i.user_data, i.events)).collect();
        if snapshot.is_empty() {
            if timeout < 0 {
                return Err(EFAULT);
            }
            if timeout > 0 {
                std::thread::sleep(std::time::Duration::from_millis(timeout as u64));
            }
            return Err(EAGAIN);
        }
        let mut set = Vec::with_capacity(snapshot.len());
        for (target, _, ev) in &snapshot {
            set.push(match *target {
                // SAFETY: registered socket handles (zmq.h: the caller
                // removes a socket before closing it).
                Target::Socket(s) => PollItem::from_socket(unsafe { socket(s) }?, *ev),
                Target::Fd(fd) => PollItem::from_fd(fd, *ev),
            });
        }
        let n = oxmq::poll(&mut set, timeout)?;
        if n == 0 {
            return Err(EAGAIN);
        }
        // SAFETY: non-NULL; zmq.h: `events` has room for `n_events` entries.
        let out = unsafe { std::slice::from_raw_parts_mut(events, n_events as usize) };
        let mut found = 0;
        for ((target, user_data, _), item) in snapshot.iter().zip(set.iter()) {
            if found == out.len() {
                break;
            }
            if item.revents() == 0 {
                continue;
            }
            let (socket, fd) = match *target {
                Target::Socket(s) => (s, -1),
                Target::Fd(fd) => (std::ptr::null_mut(), fd),
            };
            out[found] = zmq_poller_event_t { socket, fd, user_data: *user_data, events: item.revents() };
            found += 1;
        }
        Ok(found as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_wait(p: *mut c_void, event: *mut zmq_poller_event_t, timeout: c_long) -> c_int {
    // SAFETY: forwarded zmq.h contract.
    let rc = unsafe { zmq_poller_wait_all(p, event, 1, timeout) };
    if rc < 0 && !event.is_null() {
        // SAFETY: non-NULL; zmq.h: `event` points to one writable event.
        unsafe {
            event.write(zmq_poller_event_t {
                socket: std::ptr::null_mut(),
                fd: -1,
                user_data: std::ptr::null_mut(),
                events: 0,
            })
        };
    }
    if rc >= 0 {
        0
    } else {
        rc
    }
}
