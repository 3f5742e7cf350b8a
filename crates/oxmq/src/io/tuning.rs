//! The context's THREAD_* options applied to an I/O thread as libzmq 4.3.5
//! applies them to its background threads: the scheduling policy and
//! priority, then the CPU affinity, then the name ("ZMQbg/IO/0", after
//! THREAD_NAME_PREFIX and a slash if one was set). The name comes last, as in
//! libzmq's thread routine, so a thread that shows its name already runs with
//! its affinity (a program that finds its I/O thread by name in /proc reads
//! the affinity it asked for). libzmq asserts when the kernel refuses one of
//! these; oxmq ignores the refusal and runs untuned.

/// libzmq's ZMQ_THREAD_PRIORITY_DFLT and ZMQ_THREAD_SCHED_POLICY_DFLT.
pub(crate) const DFLT: i32 = -1;

/// How to start an I/O thread, read from the context when it starts.
#[derive(Clone, Debug)]
pub(crate) struct ThreadTuning {
    pub(crate) name_prefix: Option<i32>,
    pub(crate) priority: i32,
    pub(crate) sched_policy: i32,
    pub(crate) affinity: Vec<i32>,
}

impl Default for ThreadTuning {
    fn default() -> Self {
        ThreadTuning { name_prefix: None, priority: DFLT, sched_policy: DFLT, affinity: Vec::new() }
    }
}

impl ThreadTuning {
    /// The thread's name, cut as Linux cuts it (15 bytes).
    pub(crate) fn name(&self, what: &str) -> String {
        let mut name = match self.name_prefix {
            Some(p) => format!("{p}/ZMQbg/{what}"),
            None => format!("ZMQbg/{what}"),
        };
        name.truncate(15); // ASCII only: no char boundary to respect
        name
    }

    /// Applied by the I/O thread to itself, before its loop starts; `name`
    /// from [`ThreadTuning::name`].
    pub(crate) fn apply_to_current_thread(&self, name: &str) {
        self.apply_sched();
        self.apply_affinity();
        name_current_thread(name);
    }

    fn apply_sched(&self) {
        if self.priority == DFLT && self.sched_policy == DFLT {
            return; // libzmq re-applies the inherited values: a no-op
        }
        let mut policy: libc::c_int = 0;
        // SAFETY: an all-zero sched_param is valid (one int field).
        let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
        // SAFETY: pthread_self() is the calling thread; both out-pointers
        // point at live locals of the right types.
        if unsafe { libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param) } != 0 {
            return;
        }
        if self.sched_policy != DFLT {
            policy = self.sched_policy;
        }
        // Linux takes a static priority (1..99) for the real-time policies
        // only; the others take 0, and libzmq then lowers the nice value.
        let realtime = policy == libc::SCHED_FIFO || policy == libc::SCHED_RR;
        if !realtime {
            param.sched_priority = 0;
        } else if self.priority != DFLT {
            param.sched_priority = self.priority;
        }
        // SAFETY: as above; `param` is initialised. A refusal is reported
        // through the return value only.
        let _ = unsafe { libc::pthread_setschedparam(libc::pthread_self(), policy, &param) };
        if !realtime && self.priority > 0 {
            // libzmq's nice(-20) (per thread on Linux); EPERM without CAP_SYS_NICE.
            // SAFETY: nice() only changes this thread's nice value.
            let _ = unsafe { libc::nice(-20) };
        }
    }

    fn apply_affinity(&self) {
        if self.affinity.is_empty() {
            return;
        }
        // SAFETY: an all-zero cpu_set_t is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let mut any = false;
        for &cpu in &self.affinity {
            // A CPU outside the set's range cannot be named (libzmq's CPU_SET
            // would write out of bounds); it is left out.
            if (0..libc::CPU_SETSIZE).contains(&cpu) {
                // SAFETY: `cpu` is within the set's bounds (checked above).
                unsafe { libc::CPU_SET(cpu as usize, &mut set) };
                any = true;
            }
        }
        if any {
            // SAFETY: pid 0 is the calling thread; `set` is a live cpu_set_t
            // of the size given.
            let _ = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        }
    }
}

/// Names the calling thread as the kernel shows it (/proc's `comm`, `top -H`).
fn name_current_thread(name: &str) {
    let Ok(name) = std::ffi::CString::new(name) else { return };
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of which the kernel
    // keeps the first 15 bytes; `name` is one and outlives the call.
    let _ = unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
}
