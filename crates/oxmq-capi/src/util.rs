//! libzmq's utility API: atomic counters, timers, stopwatches, sleep, threads.

use crate::boundary::{CResult, EFAULT, EINVAL};
use std::ffi::{c_int, c_long, c_ulong, c_void};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

// ------------------------------------------------------------ atomic counters

/// The counter behind a `zmq_atomic_counter_*` pointer.
///
/// # Safety
/// `p` is NULL or a pointer from `zmq_atomic_counter_new` not yet destroyed.
unsafe fn counter<'a>(p: *mut c_void) -> Option<&'a AtomicI32> {
    // SAFETY: forwarded caller contract (the pointer is a leaked Box<AtomicI32>).
    unsafe { (p as *const AtomicI32).as_ref() }
}

#[no_mangle]
pub extern "C" fn zmq_atomic_counter_new() -> *mut c_void {
    ffi_ptr!({ Ok(Box::into_raw(Box::new(AtomicI32::new(0))) as *mut c_void) })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_set(counter_: *mut c_void, value: c_int) {
    ffi_boundary!((), {
        // SAFETY: zmq.h contract for counter pointers.
        if let Some(c) = unsafe { counter(counter_) } {
            c.store(value, Ordering::SeqCst);
        }
    })
}

/// Increment; returns the value before the increment.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_inc(counter_: *mut c_void) -> c_int {
    ffi_boundary!(0, {
        // SAFETY: zmq.h contract for counter pointers.
        unsafe { counter(counter_) }.map_or(0, |c| c.fetch_add(1, Ordering::SeqCst))
    })
}

/// Decrement; returns 1 if the counter is still above zero, else 0.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_dec(counter_: *mut c_void) -> c_int {
    ffi_boundary!(0, {
        // SAFETY: zmq.h contract for counter pointers.
        unsafe { counter(counter_) }.map_or(0, |c| (c.fetch_sub(1, Ordering::SeqCst) - 1 > 0) as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_value(counter_: *mut c_void) -> c_int {
    ffi_boundary!(0, {
        // SAFETY: zmq.h contract for counter pointers.
        unsafe { counter(counter_) }.map_or(0, |c| c.load(Ordering::SeqCst))
    })
}

/// Free the counter and set `*counter_p` to NULL.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_destroy(counter_p: *mut *mut c_void) {
    ffi_boundary!((), {
        if counter_p.is_null() {
            return;
        }
        // SAFETY: non-NULL: the caller's variable holding a counter pointer.
        let p = unsafe { counter_p.replace(std::ptr::null_mut()) };
        if !p.is_null() {
            // SAFETY: `p` came from zmq_atomic_counter_new and is freed once.
            drop(unsafe { Box::from_raw(p as *mut AtomicI32) });
        }
    })
}

// ---------------------------------------------------------------------- timers

/// `void zmq_timer_fn(int timer_id, void *arg)`.
pub(crate) type zmq_timer_fn = unsafe extern "C" fn(timer_id: c_int, arg: *mut c_void);

struct Timer {
    id: c_int,
    interval: Duration,
    due: Instant,
    handler: zmq_timer_fn,
    arg: *mut c_void,
}

const TIMERS_TAG: u32 = 0x7133_e125;

/// A timer set: the lock is never held while a handler runs, so handlers
/// may add, cancel or reset timers.
#[repr(C)]
struct Timers {
    tag: AtomicU32,
    state: Mutex<TimerState>,
}

#[derive(Default)]
struct TimerState {
    next_id: c_int,
    timers: Vec<Timer>,
}

/// The timer set behind `p`, or EFAULT.
///
/// # Safety
/// `p` is NULL or a pointer from `zmq_timers_new` (or other readable memory).
unsafe fn timers<'a>(p: *mut c_void) -> CResult<&'a Timers> {
    if p.is_null() || (p as usize) % std::mem::align_of::<Timers>() != 0 {
        return Err(EFAULT);
    }
    // SAFETY: non-NULL, aligned; every Timers starts with its tag (repr(C)).
    let t = unsafe { &*(p as *const Timers) };
    if t.tag.load(Ordering::Acquire) != TIMERS_TAG {
        return Err(EFAULT);
    }
    Ok(t)
}

impl Timers {
    fn lock(&self) -> std::sync::MutexGuard<'_, TimerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TimerState {
    fn find(&mut self, id: c_int) -> CResult<&mut Timer> {
        self.timers.iter_mut().find(|t| t.id == id).ok_or(EINVAL)
    }
}

#[no_mangle]
pub extern "C" fn zmq_timers_new() -> *mut c_void {
    ffi_ptr!({
        let t = Timers { tag: AtomicU32::new(TIMERS_TAG), state: Mutex::new(TimerState::default()) };
        Ok(Box::into_raw(Box::new(t)) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_destroy(timers_p: *mut *mut c_void) -> c_int {
    ffi_int!({
        if timers_p.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL: the caller's variable holding a timers pointer.
        let p = unsafe { *timers_p };
        // SAFETY: zmq.h contract for timers pointers.
        let t = unsafe { timers(p) }?;
        t.tag.store(0, Ordering::Release);
        // SAFETY: `p` is a live Timers from zmq_timers_new; freed once (tag cleared).
        drop(unsafe { Box::from_raw(p as *mut Timers) });
        // SAFETY: as above, writable.
        unsafe { *timers_p = std::ptr::null_mut() };
        Ok(0)
    })
}

/// Add a timer; returns its id (> 0).
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_add(
    timers_: *mut c_void,
    interval: usize,
    handler: Option<zmq_timer_fn>,
    arg: *mut c_void,
) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for timers pointers.
        let t = unsafe { timers(timers_) }?;
        let handler = handler.ok_or(EFAULT)?;
        let interval = Duration::from_millis(interval as u64);
        let mut st = t.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.timers.push(Timer { id, interval, due: Instant::now() + interval, handler, arg });
        Ok(id)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_cancel(timers_: *mut c_void, timer_id: c_int) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for timers pointers.
        let t = unsafe { timers(timers_) }?;
        let mut st = t.lock();
        let pos = st.timers.iter().position(|x| x.id == timer_id).ok_or(EINVAL)?;
        st.timers.remove(pos);
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_set_interval(timers_: *mut c_void, timer_id: c_int, interval: usize) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for timers pointers.
        let t = unsafe { timers(timers_) }?;
        let mut st = t.lock();
        let timer = st.find(timer_id)?;
        timer.interval = Duration::from_millis(interval as u64);
        timer.due = Instant::now() + timer.interval;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_reset(timers_: *mut c_void, timer_id: c_int) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for timers pointers.
        let t = unsafe { timers(timers_) }?;
        let mut st = t.lock();
        let timer = st.find(timer_id)?;
        timer.due = Instant::now() + timer.interval;
        Ok(0)
    })
}

/// Milliseconds until the next timer is due (0 if one is overdue), -1 if none.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_timeout(timers_: *mut c_void) -> c_long {
    ffi_boundary!(-1, {
        // SAFETY: zmq.h contract for timers pointers.
        let t = match unsafe { timers(timers_) } {
            Ok(t) => t,
            Err(e) => {
                crate::boundary::set_errno(e);
                return -1;
            }
        };
        let st = t.lock();
        let now = Instant::now();
        match st.timers.iter().map(|x| x.due).min() {
            None => -1,
            Some(due) => {
                // Rounded up so that a caller sleeping this long finds the timer due;
                // not capped at poll's int as ceil_ms is: libzmq returns a long.
                oxmq::ceil_millis(due.saturating_duration_since(now)).min(c_long::MAX as u128) as c_long
            }
        }
    })
}

/// Run the handlers of every due timer and reschedule them.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_execute(timers_: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for timers pointers.
        let t = unsafe { timers(timers_) }?;
        let now = Instant::now();
        let mut due: Vec<(Instant, c_int)> =
            t.lock().timers.iter().filter(|x| x.due <= now).map(|x| (x.due, x.id)).collect();
        due.sort_unstable();
        for (_, id) in due {
            // Re-check under the lock: an earlier handler may have cancelled or reset it.
            let call = {
                let mut st = t.lock();
                match st.timers.iter_mut().find(|x| x.id == id && x.due <= now) {
                    Some(x) => {
                        x.due = now + x.interval;
                        Some((x.handler, x.arg))
                    }
                    None => None,
                }
            };
            if let Some((handler, arg)) = call {
                // SAFETY: the caller's timer function with its own argument.
                unsafe { handler(id, arg) };
            }
        }
        Ok(0)
    })
}

// ------------------------------------------------------------------ stopwatch

#[no_mangle]
pub extern "C" fn zmq_stopwatch_start() -> *mut c_void {
    ffi_ptr!({ Ok(Box::into_raw(Box::new(Instant::now())) as *mut c_void) })
}

fn micros_since(start: &Instant) -> c_ulong {
    start.elapsed().as_micros().min(c_ulong::MAX as u128) as c_ulong
}

/// Microseconds since `zmq_stopwatch_start`.
#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_intermediate(watch: *mut c_void) -> c_ulong {
    ffi_boundary!(0, {
        // SAFETY: `watch` is NULL or a pointer from zmq_stopwatch_start not yet stopped.
        unsafe { (watch as *const Instant).as_ref() }.map_or(0, micros_since)
    })
}

/// Microseconds since `zmq_stopwatch_start`; frees the watch.
#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_stop(watch: *mut c_void) -> c_ulong {
    ffi_boundary!(0, {
        if watch.is_null() {
            return 0;
        }
        // SAFETY: a pointer from zmq_stopwatch_start, freed here once.
        let start = unsafe { Box::from_raw(watch as *mut Instant) };
        micros_since(&start)
    })
}

#[no_mangle]
pub extern "C" fn zmq_sleep(seconds: c_int) {
    ffi_boundary!((), {
        if seconds > 0 {
            std::thread::sleep(Duration::from_secs(seconds as u64));
        }
    })
}

// -------------------------------------------------------------------- threads

/// `void zmq_thread_fn(void *)`.
pub(crate) type zmq_thread_fn = unsafe extern "C" fn(arg: *mut c_void);

/// The argument of a thread started by `zmq_threadstart`.
struct ThreadArg(*mut c_void);
// SAFETY: zmq_threadstart's contract: the argument is handed to another thread.
unsafe impl Send for ThreadArg {}

#[no_mangle]
pub unsafe extern "C" fn zmq_threadstart(func: Option<zmq_thread_fn>, arg: *mut c_void) -> *mut c_void {
    ffi_ptr!({
        let func = func.ok_or(EINVAL)?;
        let arg = ThreadArg(arg);
        let handle = std::thread::Builder::new()
            .name("zmq-thread".into())
            .spawn(move || {
                let arg = arg;
                // SAFETY: the caller's thread function with its own argument.
                unsafe { func(arg.0) }
            })
            .map_err(|e| crate::boundary::Errno(e.raw_os_error().unwrap_or(libc::EAGAIN)))?;
        Ok(Box::into_raw(Box::new(handle)) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_threadclose(thread: *mut c_void) {
    ffi_boundary!((), {
        if thread.is_null() {
            return;
        }
        // SAFETY: a pointer from zmq_threadstart, joined and freed once.
        let handle = unsafe { Box::from_raw(thread as *mut std::thread::JoinHandle<()>) };
        let _ = handle.join();
    })
}
