//! Host name lookups for connects, off the I/O thread.
//!
//! `getaddrinfo` blocks for as long as the DNS server takes. libzmq calls it
//! on its I/O thread, so one slow name stalls every connection of the
//! context. Here a small pool of worker threads does the lookups and hands
//! each answer back through the session's token waker, the I/O thread's
//! ordinary wake-up path. The pool is shared by every context of the process
//! (lookups carry nothing context-specific) and its threads exit when idle.
//!
//! Fork: a child inherits the pool's memory but none of its workers, and
//! its queue's lock as it was, possibly held by a worker or by the parent's
//! I/O thread, which it then stays for good. So each process has a pool of
//! its own, found by pid before any lock is taken: a child's first lookup
//! makes a new one and leaves the parent's copy alone (leaked, as the
//! child leaks its copy of the parent's context), with no `pthread_atfork`
//! handler, as the rest of the core.
//!
//! A lookup asks for one address family or both (getaddrinfo's `ai_family`
//! hint), so a connect can ask for AAAA and A records separately, in
//! parallel, and start on whichever answers first (RFC 8305 section 3;
//! glibc's own AF_UNSPEC lookup waits for both).

use super::shared::lock;
use crate::pipe::Wake;
use std::collections::VecDeque;
use std::ffi::CString;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Lookups that may block at once; more wait their turn in the queue.
const MAX_WORKERS: usize = 8;
/// An idle worker exits after this long without work.
const IDLE_EXIT: Duration = Duration::from_secs(30);

/// One lookup in flight; the session polls it when its waker fires.
#[derive(Default)]
pub(super) struct Lookup {
    answer: Mutex<Option<io::Result<Vec<SocketAddr>>>>,
}

impl Lookup {
    /// The answer once the lookup finished (taken: later calls see `None`).
    pub(super) fn take(&self) -> Option<io::Result<Vec<SocketAddr>>> {
        lock(&self.answer).take()
    }
}

/// The addresses a lookup asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Family {
    /// Both (AF_UNSPEC: one getaddrinfo call that waits for both answers).
    Any,
    /// A records only (AF_INET).
    V4,
    /// AAAA records only (AF_INET6, no IPv4-mapped answers).
    V6,
}

/// A failed lookup: getaddrinfo's `EAI_*` code, carried inside the
/// `io::Error` the lookup answers with (see [`failure_code`]).
#[derive(Debug)]
struct LookupFailed(i32);

impl fmt::Display for LookupFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "name lookup failed (getaddrinfo error {})", self.0)
    }
}

impl std::error::Error for LookupFailed {}

fn failed(code: i32) -> io::Error {
    io::Error::other(LookupFailed(code))
}

/// getaddrinfo's `EAI_*` code for an error a lookup answered with
/// (`EAI_SYSTEM` for one that did not come from getaddrinfo).
pub(super) fn failure_code(e: &io::Error) -> i32 {
    e.get_ref().and_then(|inner| inner.downcast_ref::<LookupFailed>()).map_or(libc::EAI_SYSTEM, |f| f.0)
}

struct Job {
    host: String,
    port: u16,
    family: Family,
    lookup: Arc<Lookup>,
    wake: Arc<dyn Wake>,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    idle: usize,
    workers: usize,
}

struct Pool {
    /// The process whose pool this is (see the module's doc on fork).
    pid: u32,
    queue: Mutex<Queue>,
    more: Condvar,
}

/// This process's pool. Pools are never freed, so the reference is good
/// for ever; the one in place is replaced only by a fork child's.
fn pool() -> &'static Pool {
    static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());
    let pid = std::process::id();
    let mut current = POOL.load(Ordering::Acquire);
    loop {
        // SAFETY: a non-null pointer in POOL came from `Box::into_raw` below
        // and is never freed, and Acquire makes its contents visible.
        if let Some(p) = unsafe { current.as_ref() }.filter(|p| p.pid == pid) {
            return p;
        }
        let fresh = Box::into_raw(Box::new(Pool { pid, queue: Mutex::default(), more: Condvar::new() }));
        match POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // The pool replaced, if any, is the parent's copy: leaked.
            Ok(_) => current = fresh,
            Err(other) => {
                // SAFETY: `fresh` was never shared; this is its only free.
                drop(unsafe { Box::from_raw(fresh) });
                current = other;
            }
        }
    }
}

/// Starts resolving `host` (both families); `wake` runs once the answer is
/// in the returned lookup. Dropping the lookup abandons it (the answer is
/// discarded).
pub(super) fn resolve(host: &str, port: u16, wake: Arc<dyn Wake>) -> Arc<Lookup> {
    resolve_family(host, port, Family::Any, wake)
}

/// [`resolve`] for the addresses of one family only.
pub(super) fn resolve_family(host: &str, port: u16, family: Family, wake: Arc<dyn Wake>) -> Arc<Lookup> {
    let lookup = Arc::new(Lookup::default());
    let job = Job { host: host.to_owned(), port, family, lookup: lookup.clone(), wake };
    let p = pool();
    let mut q = lock(&p.queue);
    q.jobs.push_back(job);
    // Idle workers not yet woken still count as idle while the jobs they
    // will take are queued: only queued jobs beyond them need a new worker.
    if q.jobs.len() > q.idle && q.workers < MAX_WORKERS {
        let spawned = std::thread::Builder::new().name("oxmq-resolver".into()).spawn(move || worker(p));
        if spawned.is_ok() {
            q.workers += 1;
        } else if q.workers == 0 {
            // No thread to do it: fail the lookup (the session retries at
            // RECONNECT_IVL) rather than leave it waiting for ever.
            if let Some(job) = q.jobs.pop_back() {
                drop(q);
                finish(job, Err(failed(libc::EAI_AGAIN)));
            }
            return lookup;
        }
    }
    drop(q);
    p.more.notify_one();
    lookup
}

fn finish(job: Job, answer: io::Result<Vec<SocketAddr>>) {
    *lock(&job.lookup.answer) = Some(answer);
    job.wake.wake();
}

fn worker(p: &'static Pool) {
    loop {
        let mut q = lock(&p.queue);
        let job = loop {
            if let Some(job) = q.jobs.pop_front() {
                break job;
            }
            q.idle += 1;
            let (guard, timeout) = p.more.wait_timeout(q, IDLE_EXIT).unwrap_or_else(|e| e.into_inner());
            q = guard;
            q.idle -= 1;
            if timeout.timed_out() && q.jobs.is_empty() {
                q.workers -= 1;
                return;
            }
        };
        drop(q);
        if Arc::strong_count(&job.lookup) == 1 {
            continue; // the session went away before its turn
        }
        let answer = getaddrinfo(&job.host, job.port, job.family);
        finish(job, answer);
    }
}

/// A blocking getaddrinfo for stream sockets, in the resolver's order.
fn getaddrinfo(host: &str, port: u16, family: Family) -> io::Result<Vec<SocketAddr>> {
    let Ok(c_host) = CString::new(host) else {
        return Err(failed(libc::EAI_NONAME));
    };
    // SAFETY: addrinfo is plain C data; all zeros is "no hints" for every field.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = match family {
        Family::Any => libc::AF_UNSPEC,
        Family::V4 => libc::AF_INET,
        Family::V6 => libc::AF_INET6,
    };
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut list: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: the strings and hints outlive the call; on success `list` is
    // freed below, once, after the last read.
    let rc = unsafe { libc::getaddrinfo(c_host.as_ptr(), std::ptr::null(), &hints, &mut list) };
    if rc != 0 {
        return Err(failed(rc));
    }
    let mut out = Vec::new();
    let mut cur = list;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getaddrinfo returned, not yet freed.
        let ai = unsafe { &*cur };
        if let Some(sa) = socket_addr(ai, port) {
            out.push(sa);
        }
        cur = ai.ai_next;
    }
    // SAFETY: `list` came from a successful getaddrinfo and is freed once.
    unsafe { libc::freeaddrinfo(list) };
    Ok(out)
}

fn socket_addr(ai: &libc::addrinfo, port: u16) -> Option<SocketAddr> {
    let len = ai.ai_addrlen as usize;
    if ai.ai_addr.is_null() {
        return None;
    }
    match ai.ai_family {
        libc::AF_INET if len >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: getaddrinfo says this is a sockaddr_in of `len` bytes;
            // read unaligned as the C struct may sit anywhere.
            let sin = unsafe { std::ptr::read_unaligned(ai.ai_addr.cast::<libc::sockaddr_in>()) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(ip, port)))
        }
        libc::AF_INET6 if len >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, a sockaddr_in6 of `len` bytes.
            let sin6 = unsafe { std::ptr::read_unaligned(ai.ai_addr.cast::<libc::sockaddr_in6>()) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(ip, port, sin6.sin6_flowinfo, sin6.sin6_scope_id)))
        }
        _ => None,
    }
}

/// The order to try addresses in (RFC 8305 section 4): the resolver's
/// order, duplicates removed, IPv4 only unless `ipv6` (ZMQ_IPV6, as libzmq
/// asks getaddrinfo for AF_INET only without it), and for dual-stack
/// answers the families interleaved starting with the resolver's first.
pub(super) fn attempt_order(addrs: Vec<SocketAddr>, ipv6: bool) -> VecDeque<SocketAddr> {
    let mut seen = Vec::with_capacity(addrs.len());
    for a in addrs {
        if (ipv6 || a.is_ipv4()) && !seen.contains(&a) {
            seen.push(a);
        }
    }
    let Some(first) = seen.first() else {
        return VecDeque::new();
    };
    let first_v6 = first.is_ipv6();
    let (mut lead, mut other): (VecDeque<_>, VecDeque<_>) = seen.into_iter().partition(|a| a.is_ipv6() == first_v6);
    let mut out = VecDeque::with_capacity(lead.len() + other.len());
    loop {
        match (lead.pop_front(), other.pop_front()) {
            (None, None) => return out,
            (a, b) => out.extend(a.into_iter().chain(b)),
        }
    }
}

/// RFC 8305 section 4: addresses of a family that answered late join the
/// addresses not tried yet, the late ones first (the attempts so far were of
/// the other family), interleaved as [`attempt_order`] does.
pub(super) fn add_late(rest: VecDeque<SocketAddr>, late: Vec<SocketAddr>, ipv6: bool) -> VecDeque<SocketAddr> {
    let mut all = late;
    all.extend(rest);
    attempt_order(all, ipv6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn interleaves_families_from_the_first() {
        let got = attempt_order(
            vec![sa("[::1]:1"), sa("[::2]:1"), sa("[::3]:1"), sa("10.0.0.1:1"), sa("10.0.0.2:1"), sa("[::1]:1")],
            true,
        );
        let want = [sa("[::1]:1"), sa("10.0.0.1:1"), sa("[::2]:1"), sa("10.0.0.2:1"), sa("[::3]:1")];
        assert_eq!(Vec::from(got), want);
        let got = attempt_order(vec![sa("10.0.0.1:1"), sa("10.0.0.2:1"), sa("[::1]:1")], true);
        assert_eq!(Vec::from(got), [sa("10.0.0.1:1"), sa("[::1]:1"), sa("10.0.0.2:1")]);
    }

    #[test]
    fn ipv4_only_without_zmq_ipv6() {
        let got = attempt_order(vec![sa("[::1]:1"), sa("10.0.0.2:1"), sa("10.0.0.1:1")], false);
        assert_eq!(Vec::from(got), [sa("10.0.0.2:1"), sa("10.0.0.1:1")]);
        assert!(attempt_order(vec![sa("[::1]:1")], false).is_empty());
    }

    #[test]
    fn late_addresses_come_next_interleaved() {
        let rest = VecDeque::from([sa("10.0.0.2:1"), sa("10.0.0.3:1")]);
        let got = add_late(rest, vec![sa("[::1]:1"), sa("[::2]:1"), sa("10.0.0.2:1")], true);
        assert_eq!(Vec::from(got), [sa("[::1]:1"), sa("10.0.0.2:1"), sa("[::2]:1"), sa("10.0.0.3:1")]);
        let rest = VecDeque::from([sa("10.0.0.2:1")]);
        assert_eq!(Vec::from(add_late(rest, vec![sa("[::1]:1")], false)), [sa("10.0.0.2:1")]);
    }

    #[test]
    fn one_family_when_asked() {
        let v4 = getaddrinfo("localhost", 7, Family::V4).unwrap();
        assert!(!v4.is_empty() && v4.iter().all(|a| a.is_ipv4() && a.port() == 7), "{v4:?}");
        // Whether localhost has an IPv6 address depends on /etc/hosts.
        if let Ok(v6) = getaddrinfo("localhost", 7, Family::V6) {
            assert!(v6.iter().all(|a| a.is_ipv6()), "{v6:?}");
        }
        let e = getaddrinfo("no-such-host.invalid", 7, Family::Any).unwrap_err();
        assert_ne!(failure_code(&e), libc::EAI_SYSTEM, "{e}");
        assert_eq!(failure_code(&io::Error::from_raw_os_error(libc::EINVAL)), libc::EAI_SYSTEM);
    }

    struct Count(AtomicUsize, Mutex<()>, Condvar);
    impl Wake for Count {
        fn wake(&self) {
            let _g = lock(&self.1);
            self.0.fetch_add(1, Ordering::SeqCst);
            self.2.notify_all();
        }
    }

    #[test]
    fn answers_through_the_waker() {
        let w = Arc::new(Count(AtomicUsize::new(0), Mutex::new(()), Condvar::new()));
        let lookups: Vec<_> =
            ["localhost", "no-such-host.invalid"].iter().map(|h| resolve(h, 5555, w.clone())).collect();
        let mut g = lock(&w.1);
        while w.0.load(Ordering::SeqCst) < 2 {
            g = w.2.wait(g).unwrap();
        }
        drop(g);
        let local = lookups[0].take().unwrap().unwrap();
        assert!(local.iter().all(|a| a.ip().is_loopback() && a.port() == 5555), "{local:?}");
        assert!(lookups[1].take().unwrap().is_err());
        assert!(lookups[0].take().is_none());
    }

    /// Waits (up to `limit`) for `lookup`'s answer, announced through `w`.
    fn answer(w: &Count, lookup: &Lookup, limit: Duration) -> Option<io::Result<Vec<SocketAddr>>> {
        let deadline = std::time::Instant::now() + limit;
        let mut g = lock(&w.1);
        while w.0.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            g = w.2.wait_timeout(g, Duration::from_millis(50)).unwrap_or_else(|e| e.into_inner()).0;
        }
        drop(g);
        lookup.take()
    }

    /// A fork child whose parent had the queue locked at the fork (as a
    /// worker or the I/O thread has it, briefly, around every lookup) still
    /// resolves: the lock stays held in the child for good, so the child
    /// must not need it.
    #[test]
    fn a_fork_child_resolves_though_the_queue_was_locked_at_the_fork() {
        use std::sync::mpsc::channel;
        // glibc loads its name-service modules at the first lookup: done
        // here, the child has them and needs no loader lock for them.
        assert!(getaddrinfo("localhost", 7, Family::Any).is_ok());
        let (locked_tx, locked) = channel();
        let (release, release_rx) = channel::<()>();
        let holder = std::thread::spawn(move || {
            let q = lock(&pool().queue);
            locked_tx.send(()).unwrap();
            let _ = release_rx.recv();
            drop(q);
        });
        locked.recv().unwrap();
        // SAFETY: the child only resolves, waits for the answer with threads
        // and locks of its own, and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let w = Arc::new(Count(AtomicUsize::new(0), Mutex::new(()), Condvar::new()));
            let lookup = resolve("localhost", 7, w.clone());
            let ok = matches!(answer(&w, &lookup, Duration::from_secs(10)), Some(Ok(a)) if !a.is_empty());
            // SAFETY: leaves the child at once, running no destructors.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        release.send(()).unwrap();
        holder.join().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut status = 0;
        let exited = loop {
            // SAFETY: `status` is a valid out-pointer; `pid` is our child.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                break true;
            }
            if std::time::Instant::now() >= deadline {
                // SAFETY: `pid` is our child, reaped just after.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                break false;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(exited, "the child hung on the queue's lock");
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child's lookup failed: {status}");
        // The parent's pool still serves the parent.
        let w = Arc::new(Count(AtomicUsize::new(0), Mutex::new(()), Condvar::new()));
        let lookup = resolve("localhost", 7, w.clone());
        assert!(matches!(answer(&w, &lookup, Duration::from_secs(20)), Some(Ok(_))));
    }
}
