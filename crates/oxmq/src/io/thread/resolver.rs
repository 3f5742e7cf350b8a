//! Host name lookups for connects, off the I/O thread.
//!
//! `getaddrinfo` blocks for as long as the DNS server takes. libzmq calls it
//! on its I/O thread, so one slow name stalls every connection of the
//! context. Here a small pool of worker threads does the lookups and hands
//! each answer back through the session's token waker, the I/O thread's
//! ordinary wake-up path. The pool is shared by every context of the process
//! (lookups carry nothing context-specific) and its threads exit when idle.

use super::shared::lock;
use crate::pipe::Wake;
use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
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

struct Job {
    host: String,
    port: u16,
    lookup: Arc<Lookup>,
    wake: Arc<dyn Wake>,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    idle: usize,
    workers: usize,
    /// The process the counts describe: a child of `fork` inherits them but
    /// none of the threads, so it starts over.
    pid: u32,
}

#[derive(Default)]
struct Pool {
    queue: Mutex<Queue>,
    more: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// Starts resolving `host`; `wake` runs once the answer is in the returned
/// lookup. Dropping the lookup abandons it (the answer is discarded).
pub(super) fn resolve(host: &str, port: u16, wake: Arc<dyn Wake>) -> Arc<Lookup> {
    let lookup = Arc::new(Lookup::default());
    let job = Job { host: host.to_owned(), port, lookup: lookup.clone(), wake };
    let p = pool();
    let mut q = lock(&p.queue);
    if q.pid != std::process::id() {
        *q = Queue { pid: std::process::id(), ..Queue::default() };
    }
    q.jobs.push_back(job);
    // Idle workers not yet woken still count as idle while the jobs they
    // will take are queued: only queued jobs beyond them need a new worker.
    if q.jobs.len() > q.idle && q.workers < MAX_WORKERS {
        let spawned = std::thread::Builder::new().name("oxmq-resolver".into()).spawn(|| worker(pool()));
        if spawned.is_ok() {
            q.workers += 1;
        } else if q.workers == 0 {
            // No thread to do it: fail the lookup (the session retries at
            // RECONNECT_IVL) rather than leave it waiting for ever.
            if let Some(job) = q.jobs.pop_back() {
                drop(q);
                finish(job, Err(io::Error::from_raw_os_error(libc::EAGAIN)));
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
        let answer = (job.host.as_str(), job.port).to_socket_addrs().map(|it| it.collect());
        finish(job, answer);
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
}
