//! Context THREAD_* options reach the I/O thread as in libzmq 4.3.5: its name
//! ("ZMQbg/IO/0", after "<prefix>/" when THREAD_NAME_PREFIX is set) and CPU
//! affinity, read back from /proc. pyzmq's libzmq shows the same names
//! ("ZMQbg/IO/0", "7/ZMQbg/IO/0", "-3/ZMQbg/IO/0") and affinity.

mod common;

use common::*;
use oxmq::{Context, SocketType};

/// (name, Cpus_allowed_list) of this process's threads named like libzmq's I/O threads.
fn io_threads() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let name = comm.trim().to_string();
        if !name.contains("ZMQbg/") {
            continue;
        }
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_string())
            .unwrap_or_default();
        out.push((name, cpus));
    }
    out
}

/// The I/O thread starts with the first tcp/ipc endpoint; returns its (name, cpus).
fn start_io(ctx: &Context) -> (oxmq::Socket, Vec<(String, String)>) {
    let s = sock(ctx, SocketType::Push);
    s.bind("tcp://127.0.0.1:*").unwrap();
    // The thread names itself as it starts.
    let mut found = Vec::new();
    eventually(std::time::Duration::from_secs(5), || {
        found = io_threads();
        !found.is_empty()
    });
    (s, found)
}

#[test]
fn io_thread_takes_the_context_thread_options() {
    let _g = guard();
    let all_cpus = {
        let ctx = Context::new();
        let (s, found) = start_io(&ctx);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "ZMQbg/IO/0");
        drop(s);
        ctx.term();
        found[0].1.clone()
    };
    assert!(io_threads().is_empty(), "the I/O thread ends with its context");

    for (prefix, want) in [(7, "7/ZMQbg/IO/0"), (-3, "-3/ZMQbg/IO/0"), (123456, "123456/ZMQbg/IO")] {
        let ctx = Context::new();
        ctx.set(oxmq::ctxopt::THREAD_NAME_PREFIX, prefix).unwrap();
        let (s, found) = start_io(&ctx);
        assert_eq!(found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), vec![want], "prefix {prefix}");
        drop(s);
        ctx.term();
    }

    // Affinity: CPU 0 only (every machine has one), then back to all.
    let ctx = Context::new();
    ctx.set(oxmq::ctxopt::THREAD_AFFINITY_CPU_ADD, 0).unwrap();
    let (s, found) = start_io(&ctx);
    assert_eq!(found, vec![("ZMQbg/IO/0".to_string(), "0".to_string())]);
    drop(s);
    ctx.term();
    let ctx = Context::new();
    ctx.set(oxmq::ctxopt::THREAD_AFFINITY_CPU_ADD, 0).unwrap();
    ctx.set(oxmq::ctxopt::THREAD_AFFINITY_CPU_REMOVE, 0).unwrap();
    let (s, found) = start_io(&ctx);
    assert_eq!(found, vec![("ZMQbg/IO/0".to_string(), all_cpus)]);
    drop(s);
    ctx.term();

    // A scheduling request the kernel may refuse (SCHED_FIFO, priority 1, granted to
    // root, or EPERM otherwise) neither fails nor stops the I/O thread.
    let ctx = Context::new();
    ctx.set(oxmq::ctxopt::THREAD_SCHED_POLICY, 1).unwrap();
    ctx.set(oxmq::ctxopt::THREAD_PRIORITY, 1).unwrap();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    let push = sock(&ctx, SocketType::Push);
    connect_to(&ep, &push);
    send(&push, b"tuned");
    assert_eq!(recv(&pull), b"tuned");
}
