//! How a thread of the core waits: `poll(2)`'s millisecond timeouts (for
//! every wait in the crate and for the bindings), the hook through which a
//! language runtime takes part in a wait, and the wait on a few descriptors
//! that blocking calls use. Below the socket layer: `poll` and the blocking
//! calls above it, and the signaler under it, share it.

use crate::error::{Error, Result};
use std::os::fd::RawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::{Duration, Instant};

/// A duration in whole milliseconds, rounded up so a wait never ends early
/// (and a short one never becomes a busy poll).
pub fn ceil_millis(d: Duration) -> u128 {
    d.as_nanos().div_ceil(1_000_000)
}

/// [`ceil_millis`] in poll's milliseconds: capped at `i32::MAX`.
pub fn ceil_ms(d: Duration) -> i64 {
    ceil_millis(d).min(i32::MAX as u128) as i64
}

/// `poll(2)`'s timeout for waiting until `deadline`: -1 for none, 0 once it
/// has passed, else [`ceil_ms`] of what is left.
pub fn timeout_ms_until(deadline: Option<Instant>) -> i64 {
    deadline.map_or(-1, |d| ceil_ms(d.saturating_duration_since(Instant::now())))
}

/// How a caller's runtime waits: the core does the waiting (in [`crate::poll_with`]
/// and [`crate::block_with`]), and the hook says what the runtime must do
/// around it. A language runtime that runs other threads while one blocks
/// (Python's GIL, Ruby's GVL) releases its lock in [`WaitHook::park`], and
/// runs its signal handlers or interrupts in [`WaitHook::check`]; each is a
/// few lines. [`CoreWait`] is libzmq's behaviour.
pub trait WaitHook {
    /// The longest a wait may last before [`WaitHook::check`] runs (`None`:
    /// only when a signal interrupts it or [`WaitHook::wake_fd`] fires).
    fn slice(&self) -> Option<Duration> {
        None
    }

    /// A descriptor the runtime makes readable when it wants this thread
    /// back (Ruby's unblocking function writes one): every wait includes it,
    /// and its firing ends the wait with a [`WaitHook::check`].
    fn wake_fd(&self) -> Option<RawFd> {
        None
    }

    /// Run `wait`, the core's blocking part, on this thread with whatever
    /// the runtime releases while a thread blocks. `wait` touches no runtime
    /// object (it is not `Send` only because a socket is not `Sync`; it
    /// never leaves this thread). Not running it (the runtime had an
    /// interrupt pending) is allowed: the core then calls
    /// [`WaitHook::check`] and waits again.
    fn park(&mut self, wait: &mut dyn FnMut()) {
        wait()
    }

    /// A wait was interrupted by a signal, by [`WaitHook::wake_fd`], or its
    /// slice ended; runs with the runtime's lock held. `Ok` waits again (to
    /// the caller's own deadline); an error ends the wait with it.
    fn check(&mut self) -> Result<()>;

    /// Whether the runtime waits on descriptors itself, because its thread
    /// must not block in the kernel (gevent: every greenlet runs on the
    /// hub's thread). Then the core never parks: between its attempts it
    /// calls [`WaitHook::wait_fds`], and everything runs with the runtime's
    /// lock held.
    fn cooperative(&self) -> bool {
        false
    }

    /// A cooperative runtime's wait: until one of `fds` is ready for its
    /// events ([`crate::POLLIN`], [`crate::POLLOUT`]), `until` passes, or the runtime
    /// wants its caller back (a spurious return is fine: the core checks
    /// and waits again). An error ends the call with it.
    fn wait_fds(&mut self, fds: &[(RawFd, i16)], until: Option<Instant>) -> Result<()> {
        let _ = (fds, until);
        Ok(())
    }
}

/// The earlier of a caller's deadline and the end of a runtime's slice.
pub(crate) fn slice_until(deadline: Option<Instant>, slice: Option<Duration>) -> Option<Instant> {
    match (deadline, slice.map(|s| Instant::now() + s)) {
        (Some(d), Some(s)) => Some(d.min(s)),
        (d, s) => d.or(s),
    }
}

/// libzmq's wait: a signal ends it with [`Error::Interrupted`] (EINTR).
pub struct CoreWait;

impl WaitHook for CoreWait {
    fn check(&mut self) -> Result<()> {
        Err(Error::Interrupted)
    }
}

/// Wait until one of `fds` is readable or `deadline` passes. `false` when a
/// signal interrupted the wait or `wake` fired.
pub(crate) fn wait_readable(fds: &[RawFd], wake: Option<RawFd>, deadline: Option<Instant>) -> bool {
    let mut pfds = [libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 }; 4];
    let all = fds.iter().chain(wake.as_ref());
    let mut n = 0;
    for (p, &fd) in pfds.iter_mut().zip(all) {
        p.fd = fd;
        n += 1;
    }
    let ms = timeout_ms_until(deadline) as libc::c_int;
    // SAFETY: `pfds` holds `n` initialised pollfd structs and lives across the call.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), n as libc::nfds_t, ms) };
    if rc < 0 {
        return std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted;
    }
    !(wake.is_some() && pfds[n - 1].revents != 0)
}

/// The environment variable that sets the busy-poll cap in microseconds
/// (read once per process; `0` never spins, as libzmq never does).
pub const BUSY_POLL_ENV: &str = "OXMQ_BUSY_POLL_US";

/// The cap when [`BUSY_POLL_ENV`] is unset: about two vCPU wake-ups on a
/// KVM guest whose idle vCPUs halt (~25 us each), so a spin that succeeds
/// never costs more CPU than the wake-up it saves.
const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(50);

/// Beyond this a spin would delay signal handling (Python's Ctrl-C) and
/// burn more than any wake-up costs.
const MAX_BUSY_POLL: Duration = Duration::from_millis(1);

/// The longest consecutive failed spins push the next spin back:
/// 2^MAX_BACKOFF - 1 waits sleep at once before one spins again.
const MAX_BACKOFF: u32 = 6;

/// How long nothing in the process spins after a spin found its CPU
/// taken by another thread (other processes' load, or a stream whose
/// threads share a CPU): the next spin is a probe, once per pause.
const CONTENDED_PAUSE: Duration = Duration::from_millis(100);

/// Until when (nanoseconds after [`epoch`]) nothing spins.
static CONTENDED_UNTIL: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn since_epoch(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_nanos().min(u64::MAX as u128) as u64
}

/// This process's CPU time so far, all threads (`CLOCK_PROCESS_CPUTIME_ID`).
fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into a live local.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// How many `spin_loop` hints between two looks at the clock (and a yield):
/// about a microsecond.
pub(crate) const SPINS_PER_CHECK: u32 = 32;

/// The process's busy-poll cap: [`BUSY_POLL_ENV`] or the default, and zero
/// on a machine with one CPU online, where spinning only delays the thread
/// it waits for. The machine's count, not this process's affinity
/// (`available_parallelism`): a process pinned to one CPU waits for a peer
/// on another, and its spin yields to its own other thread.
pub(crate) fn busy_poll_cap() -> Duration {
    static CAP: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        // SAFETY: sysconf reads a system value; no pointers involved.
        if unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } <= 1 {
            return Duration::ZERO;
        }
        match std::env::var(BUSY_POLL_ENV) {
            Ok(v) => v.trim().parse::<u64>().map_or(DEFAULT_BUSY_POLL, Duration::from_micros).min(MAX_BUSY_POLL),
            Err(_) => DEFAULT_BUSY_POLL,
        }
    })
}

/// A waiter's adaptive busy-poll: before a thread sleeps it may re-check
/// readiness without syscalls for a while, so that a hand-off that arrives
/// within microseconds does not pay a wake-up (on a virtual machine a halted
/// vCPU costs tens of microseconds to wake). It spins only where that paid
/// recently: the last gap between going to wait and being woken was short
/// (under twice the cap: a blocked gap includes the wake-up itself), and
/// each failed spin doubles the number of waits that sleep at once before
/// the next one spins. An idle waiter's gap is long, so it never spins.
///
/// Kept by one waiting thread at a time (the atomics are relaxed: the state
/// is a hint, and a stale value costs one spin or one sleep).
pub(crate) struct BusyPoll {
    /// The last gap in nanoseconds (`u64::MAX`: none seen, or not woken).
    gap_ns: AtomicU64,
    /// Failed spins in a row.
    misses: AtomicU32,
    /// Waits left that sleep at once.
    skip: AtomicU32,
}

/// How a spin ended ([`Spin::run`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Spun {
    /// Not ready: the caller sleeps.
    No,
    /// Ready within the budget: the spin saved a sleep and a wake-up.
    Paid,
    /// A yield let another thread of this process run for longer than the
    /// whole spin (a stream whose threads share a CPU, or the work this
    /// wait was waiting for; `ready`: the wait is over all the same). The
    /// CPU was busy anyway, so spinning saves nothing here: this waiter
    /// backs off fully, and only it: its own flow, not the machine, decides.
    Late { ready: bool },
    /// A yield gave the CPU to other processes for longer than the spin
    /// (`ready`: the wait is over all the same). The machine is loaded,
    /// where a spinner only loses the wake-up preemption a sleeper gets
    /// (its turn comes a time slice later): it stops every spin in the
    /// process for [`CONTENDED_PAUSE`].
    Contended { ready: bool },
}

impl Spun {
    /// Whether the wait is over (no sleep needed).
    pub(crate) fn ready(self) -> bool {
        matches!(self, Spun::Paid | Spun::Late { ready: true } | Spun::Contended { ready: true })
    }
}

/// One wait's spin, between [`BusyPoll::begin`] and [`BusyPoll::end`].
pub(crate) struct Spin {
    start: Instant,
    budget: Duration,
}

impl Spin {
    /// Whether this wait may spin at all.
    pub(crate) fn allowed(&self) -> bool {
        !self.budget.is_zero()
    }

    /// Re-check `ready` (which must not block) until it holds or the budget
    /// is spent, yielding the CPU about every microsecond so that a thread
    /// this one waits for, on the same CPU, can run. [`Spun::Paid`]: ready
    /// within the budget. A yield that outlasted the whole budget ends the
    /// spin: [`Spun::Late`] when this process's own threads had the CPU
    /// meanwhile, [`Spun::Contended`] when other processes did.
    pub(crate) fn run(&self, mut ready: impl FnMut() -> bool) -> Spun {
        if self.budget.is_zero() {
            return Spun::No;
        }
        // When the first yield began and the process's CPU time then: taken
        // only once a spin yields, so a wait that ends within its first
        // microsecond makes no syscall for it.
        let mut since: Option<(Instant, Duration)> = None;
        loop {
            for _ in 0..SPINS_PER_CHECK {
                if ready() {
                    return Spun::Paid;
                }
                std::hint::spin_loop();
            }
            if self.start.elapsed() >= self.budget {
                return if ready() { Spun::Paid } else { Spun::No };
            }
            let (t0, cpu0) = *since.get_or_insert_with(|| (Instant::now(), process_cpu_time()));
            let before = Instant::now();
            std::thread::yield_now();
            let away = before.elapsed();
            if away >= self.budget {
                // Another thread had this CPU for longer than the whole spin.
                // Wall time in which no thread of this process ran went to
                // other processes (exact when the process has one CPU, as a
                // pinned one does; an underestimate when its threads run
                // elsewhere meanwhile, which only makes a pause rarer).
                let ours = process_cpu_time().saturating_sub(cpu0);
                let others = t0.elapsed().saturating_sub(ours);
                return after_long_yield(away, others, ready());
            }
            if self.start.elapsed() >= self.budget {
                return if ready() { Spun::Paid } else { Spun::No };
            }
        }
    }

    /// When the spin began.
    pub(crate) fn start(&self) -> Instant {
        self.start
    }
}

/// How a spin ends after a yield that kept the CPU away for `away` (longer
/// than the spin's budget), `others` of the spin's wall time having gone to
/// other processes: [`Spun::Contended`] when they had most of that yield,
/// else [`Spun::Late`] (this process's own threads had the CPU).
fn after_long_yield(away: Duration, others: Duration, ready: bool) -> Spun {
    if others >= away / 2 {
        Spun::Contended { ready }
    } else {
        Spun::Late { ready }
    }
}

impl Default for BusyPoll {
    fn default() -> BusyPoll {
        BusyPoll { gap_ns: AtomicU64::new(u64::MAX), misses: AtomicU32::new(0), skip: AtomicU32::new(0) }
    }
}

impl BusyPoll {
    /// Start a wait that ends by `deadline` at the latest: how long it may spin.
    pub(crate) fn begin(&self, deadline: Option<Instant>) -> Option<Spin> {
        let spin = self.begin_capped(busy_poll_cap(), deadline)?;
        if spin.allowed() && since_epoch(spin.start) < CONTENDED_UNTIL.load(Relaxed) {
            return Some(Spin { start: spin.start, budget: Duration::ZERO });
        }
        Some(spin)
    }

    fn begin_capped(&self, cap: Duration, deadline: Option<Instant>) -> Option<Spin> {
        if cap.is_zero() {
            return None;
        }
        let start = Instant::now();
        let mut budget = cap;
        let skip = self.skip.load(Relaxed);
        if skip > 0 {
            self.skip.store(skip - 1, Relaxed);
            budget = Duration::ZERO;
        } else if self.gap_ns.load(Relaxed) > 2 * cap.as_nanos() as u64 {
            budget = Duration::ZERO;
        }
        if let Some(d) = deadline {
            budget = budget.min(d.saturating_duration_since(start));
        }
        Some(Spin { start, budget })
    }

    /// The wait ended: `spun` is how its spin did, `woken` whether it ended
    /// on readiness at all (not a timeout or a signal).
    pub(crate) fn end(&self, spin: Spin, spun: Spun, woken: bool) {
        self.end_in(spin, spun, woken, &CONTENDED_UNTIL)
    }

    /// [`BusyPoll::end`] with the process's pause in `paused_until`.
    fn end_in(&self, spin: Spin, spun: Spun, woken: bool, paused_until: &AtomicU64) {
        let gap = if woken { spin.start.elapsed().as_nanos().min(u64::MAX as u128) as u64 } else { u64::MAX };
        self.gap_ns.store(gap, Relaxed);
        if matches!(spun, Spun::Contended { .. }) {
            paused_until.store(since_epoch(Instant::now() + CONTENDED_PAUSE), Relaxed);
        }
        if spun == Spun::Paid {
            self.misses.store(0, Relaxed);
        } else if matches!(spun, Spun::Late { .. }) {
            self.misses.store(MAX_BACKOFF, Relaxed);
            self.skip.store((1 << MAX_BACKOFF) - 1, Relaxed);
        } else if spin.allowed() {
            let misses = (self.misses.load(Relaxed) + 1).min(MAX_BACKOFF);
            self.misses.store(misses, Relaxed);
            self.skip.store((1 << misses) - 1, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Duration = Duration::from_micros(50);

    fn budget(b: &BusyPoll, deadline: Option<Instant>) -> Duration {
        b.begin_capped(CAP, deadline).map_or(Duration::ZERO, |s| s.budget)
    }

    /// A wait that slept and was woken at once (a short gap).
    fn woken_soon(b: &BusyPoll) {
        let spin = b.begin_capped(CAP, None).unwrap();
        b.end(spin, Spun::No, true);
    }

    #[test]
    fn a_fresh_or_idle_waiter_never_spins() {
        let b = BusyPoll::default();
        assert_eq!(budget(&b, None), Duration::ZERO, "no gap seen yet");
        // A wait that timed out (or was interrupted) is no short gap.
        let spin = b.begin_capped(CAP, None).unwrap();
        b.end(spin, Spun::No, false);
        assert_eq!(budget(&b, None), Duration::ZERO);
        assert!(b.begin_capped(Duration::ZERO, None).is_none(), "a zero cap is libzmq's: never");
    }

    #[test]
    fn a_short_gap_spins_up_to_the_cap_and_the_deadline() {
        let b = BusyPoll::default();
        woken_soon(&b);
        assert_eq!(budget(&b, None), CAP);
        assert_eq!(budget(&b, Some(Instant::now())), Duration::ZERO, "never past the deadline");
        assert!(budget(&b, Some(Instant::now() + Duration::from_micros(10))) <= Duration::from_micros(10));
    }

    #[test]
    fn misses_back_off_exponentially_and_a_paid_spin_resets() {
        let b = BusyPoll::default();
        woken_soon(&b);
        for misses in 1..=MAX_BACKOFF + 2 {
            let spin = b.begin_capped(CAP, None).unwrap();
            assert!(spin.allowed());
            b.end(spin, Spun::No, true); // spun, found nothing, then woken soon
            let skipped = (1u32 << misses.min(MAX_BACKOFF)) - 1;
            for _ in 0..skipped {
                assert_eq!(budget(&b, None), Duration::ZERO, "miss {misses}: sleeps at once");
            }
        }
        let spin = b.begin_capped(CAP, None).unwrap();
        assert!(spin.allowed());
        b.end(spin, Spun::Paid, true);
        let spin = b.begin_capped(CAP, None).unwrap();
        assert!(spin.allowed(), "a paid spin clears the back-off");
        b.end(spin, Spun::No, true);
        assert_eq!(budget(&b, None), Duration::ZERO, "a miss after a paid spin backs off again");
    }

    #[test]
    fn a_spin_ends_when_ready_or_when_its_budget_is_spent() {
        let b = BusyPoll::default();
        woken_soon(&b);
        let spin = b.begin_capped(CAP, None).unwrap();
        let mut looks = 0;
        assert_eq!(
            spin.run(|| {
                looks += 1;
                looks == 3
            }),
            Spun::Paid
        );
        let spin = b.begin_capped(CAP, None).unwrap();
        // No, or on a loaded machine a yield that outlasted the budget.
        assert!(!spin.run(|| false).ready());
        assert!(spin.start().elapsed() >= CAP);
        let never = Spin { start: Instant::now(), budget: Duration::ZERO };
        assert_eq!(never.run(|| true), Spun::No, "no budget: no look at all");
    }

    #[test]
    fn a_long_yield_is_contention_only_when_other_processes_had_the_cpu() {
        let away = Duration::from_micros(400);
        let most = Duration::from_micros(300);
        let little = Duration::from_micros(20);
        assert_eq!(after_long_yield(away, most, true), Spun::Contended { ready: true });
        assert_eq!(after_long_yield(away, most, false), Spun::Contended { ready: false });
        assert_eq!(after_long_yield(away, little, true), Spun::Late { ready: true });
        assert_eq!(after_long_yield(away, little, false), Spun::Late { ready: false });
        assert!(Spun::Late { ready: true }.ready() && Spun::Contended { ready: true }.ready());
        assert!(!Spun::Late { ready: false }.ready() && !Spun::Contended { ready: false }.ready());
    }

    #[test]
    fn a_late_spin_backs_off_its_waiter_and_only_contention_pauses_the_process() {
        let paused = AtomicU64::new(0);
        let b = BusyPoll::default();
        woken_soon(&b);
        let spin = b.begin_capped(CAP, None).unwrap();
        b.end_in(spin, Spun::Late { ready: true }, true, &paused);
        assert_eq!(paused.load(Relaxed), 0, "the process's own threads had the CPU: no pause");
        for _ in 0..(1u32 << MAX_BACKOFF) - 1 {
            assert_eq!(budget(&b, None), Duration::ZERO, "a late spin backs its waiter off fully");
        }
        let spin = b.begin_capped(CAP, None).unwrap();
        assert!(spin.allowed());
        b.end_in(spin, Spun::Contended { ready: false }, true, &paused);
        assert!(paused.load(Relaxed) > since_epoch(Instant::now()), "other processes had it: pause");
    }

    #[test]
    fn process_cpu_time_counts_this_processes_work() {
        let t0 = process_cpu_time();
        let wall = Instant::now();
        let mut x = 0u64;
        while process_cpu_time().saturating_sub(t0) < Duration::from_millis(2) {
            assert!(wall.elapsed() < Duration::from_secs(30), "no CPU time counted");
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(process_cpu_time() >= t0);
    }
}
