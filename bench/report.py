"""Rendering for bench/run.py: REPORT.md, PNG plots (matplotlib, Agg) and the
summary table printed at the end of a run. Works from results.json alone, so
`run.py --report-only` can re-render a report without re-running anything."""

import os
from pathlib import Path

import conformance_report
from harness.fmt import UNITS, fmt_stat, num, size_label
from harness.stats import lend_note, side_speed, side_speed_range

LOWER_BETTER = {"ns_per_call", "mean_us", "p50_us", "p99_us", "seconds", "client_seconds", "cpu_s_per_mline",
                "us_per_call", "rss_mib", "bytes_per_msg", "connect_seconds", "router_kib_per_conn",
                "client_kib_per_conn", "lag_ms", "publish_seconds", "cpu_us_per_ping",
                "cpu_us_per_rt"}

ABOUT = {
    "13": "How cost grows with the number of peers (issue 24), the same C program (`bench/c/scale.c`) on every "
          "library. **ROUTER + N DEALERs**: a ROUTER bound on tcp (backlog N, so that the kernel's SYN retransmission "
          "timer is not what is measured), N DEALERs in client processes of at most 2,500 each, each process on its "
          "own loopback address 127.0.0.x (or its own veth host); all start connecting at the same instant, each "
          "DEALER sends a hello, and **connect** is the time from that instant until every DEALER has the ROUTER's "
          "reply. **Memory per connection**: resident set (VmRSS) growth of the ROUTER process from after its bind "
          "to when all N hellos have arrived, and of the client processes from before their sockets were made to "
          "when all replies have arrived (so the client side includes the DEALER sockets themselves), each ÷ N. "
          "**Round trips** (p50/p99/mean): 1 s after every DEALER is connected, one process pings the ROUTER from "
          "up to 100 of its DEALERs in turn (10,000 timed round trips after one untimed round); the other "
          "connections stay open and idle. **cpu_us_per_ping**: CPU time (user+system) of the pinging process "
          "during the round trips plus the ROUTER's from its last hello to the end, per round trip: the cost of a "
          "round trip with N connections open, less at the mercy of a loaded machine than p99. **PUB -> SUBs**: one PUB, high-water marks above all a run sends (nothing may be dropped), "
          "publishes 64-byte messages to SUBs spread over 4 processes, once every SUB hears it; **delivered** is "
          "all deliveries ÷ (last delivery - first send), **lag** is how long after the last message was sent the "
          "slowest SUB had it. Each SUB checks it gets every message in order. The **veth** cells run the server "
          "in a network namespace of its own and each client process in another, joined by a veth pair each, so "
          "the traffic crosses interfaces and each \"host\" has its own TCP stack. Goals (issue 24): memory per "
          "connection no more than libzmq's, connect time and delivered fan-out rate at least libzmq's, and p99 at "
          "the largest N within 2× p99 at 10 connections. Three repetitions per side.",
    "11": "The rbczmq study's shapes on Ruby: 5-byte REQ/REP round trips over tcp between two processes (mean "
          "µs per round trip), and a `::Logger` writing debug lines into a PUSH, relayed by a thread PULL -> PUB to "
          "a SUB thread in the same process (lines/s end to end; every line must arrive). Sides: ffi-rzmq on "
          "Debian's libzmq, ffi-rzmq on oxmq's C ABI, and the native oxmq gem (`ruby/`, rbczmq's API: its "
          "`ZMQ::Logger`; ffi-rzmq gets a `::Logger` whose device sends each line). Scripts: `bench/ruby/rtt.rb`, "
          "`bench/ruby/logger.rb`.",
    "8": "Raw loopback TCP and Unix stream socket bandwidth (one process writes 1 MiB chunks, another reads them, "
         "pinned to different cores), and memcpy bandwidth for 1 MiB (cache-resident) and 64 MiB (memory) blocks, "
         "measured in the same run. These are the ceilings the large-message rows of the throughput study are "
         "compared against.",
    "10": "Receiving through an event loop, as asyncio and Jupyter programs do: 100-byte messages over tcp from a "
         "plain PUSH sender in another process, received by `zmq.asyncio` (`await sock.recv()` in a loop) or by a "
         "`zmq.eventloop.zmqstream.ZMQStream` `on_recv` callback on tornado's IOLoop. Delivered messages/s, timed "
         "from the first message to the last, pyzmq beside oxmq's Python package.",
    "12": "Memory: an inproc PUSH sends 1,000,000 messages of 100 bytes to a PULL that never receives, both "
          "high-water marks 0 (unlimited), so every message is queued; resident memory (VmRSS) of the process "
          "after the sends, and the growth per queued message. The program then receives them all back to prove "
          "they were queued. The same C program on libzmq, oxmq's C ABI and omq-libzmq; lower is better.",
    "1": "A tight loop of non-blocking 5-byte sends on a PUB socket bound to ipc with no subscriber: the message "
         "is dropped at once, so this is the cost of crossing the API (and, for bindings, the language boundary). "
         "ns per call, lower is better. The gap between a binding's row and the C row is the binding's own share.",
    "2": "PUSH/PULL throughput from 16 B to 4 MiB. tcp and ipc run sender and receiver in separate processes, "
         "unpinned, as a user's program would (a receiving loop in one process, the sender in another); the cells "
         "marked *(pinned)* are the same with the receiver on core 0 and the sender on core 1. inproc runs them as "
         "two threads of one process. The cells marked *(one process, two threads)* are a common C layout over "
         "tcp: one context, PULL bound in the main thread, PUSH connected from a second thread, so one I/O thread "
         "serves both ends (C programs only: libzmq, oxmq's C ABI, omq-libzmq). Peers: C on libzmq and on omq.rs's C ABI (omq-libzmq, the same C programs "
         "under LD_LIBRARY_PATH), Rust crates omq.rs (omq-tokio), zmq.rs (zeromq), rzmq and monocoque on the "
         "multi-threaded tokio runtime a user gets from `#[tokio::main]` (these added peers run 3 repetitions of "
         "half-length runs), and Python pyzmq and pyomq. **msg/CPU-s** is delivered messages per CPU-second "
         "(user+system from getrusage, whole process, setup included) for the receiver and the sender separately, "
         "and for both together (inproc: the one process). *copy* hands the library a "
         "buffer to copy (C `zmq_send`, Rust `send(&[u8])`, Python `send(copy=True)`); *zc* is zero-copy (C "
         "`zmq_msg_init_data`, Rust `send(Bytes)`, Python `send(copy=False)`, and `recv(copy=False)` on the "
         "receiving side). Delivered messages/s are timed on the receiver from the first message to the last; "
         "send-side calls/s on the sender (they differ while the pipe buffers). pyzmq copies anything below "
         "`zmq.COPY_THRESHOLD` (64 KiB) even with copy=False, so its zc rows only differ from copy above that. "
         "inproc zero-copy hands over a reference, so its MB/s can exceed memory bandwidth.",
    "3": "REQ/REP round trips, client and server in separate processes pinned to different cores (tcp, ipc), "
         "or two threads (inproc). Each round trip is timed separately after 100 warm-up trips; mean, median "
         "(p50) and 99th percentile in µs, lower is better. **CPU µs per round trip**: the user+system time of "
         "both processes (inproc: the one process), every thread, as the kernel accounts it when the harness reaps "
         "them (wait4; setup and the warm-up included), over every round trip they made. A side that busy-polls "
         "while it waits uses about its whole round trip per side, so a CPU figure near twice the mean round trip "
         "means both sides spin; its ratio against each peer (lower is better) is in \"Where oxmq trails\" "
         "where oxmq uses more. **The floor** (tcp, ipc) is a plain-socket ping-pong of the same size "
         "(`bench/c/physical.c`) run four ways in every repetition: each side blocking in read() or polling "
         "(non-blocking reads retried for up to 200 µs before it sleeps in poll(2), as libraries that spin do), "
         "pinned to two cores or unpinned; each figure is the best of the four. On a virtual machine whose idle "
         "vCPU halts at once (the bench machine of 2026-11-26: KVM, cpuidle haltpoll, guest_halt_poll_ns 0), "
         "waking a blocked peer on the other core costs tens of µs that a side still polling never pays.",
    "4": "The classic inproc hand-off: 1,048,576 four-byte messages over an inproc PAIR from one thread to "
         "another, timed from before the receiving thread starts until it has them all. Baselines without "
         "ZeroMQ: a bounded (1000-slot) ring queue with a mutex and two condition variables in C, and "
         "`queue.Queue(maxsize=1000)` in Python.",
    "5": "The zguide weather station: a PUB server publishes random \"%05d %d %d\" zip/temperature/humidity "
         "updates over tcp as fast as it can, and a SUB client filters on \"10001 \" and averages 100 updates. "
         "Zip codes are drawn from a range of 10,000 codes around 10001 (the zguide uses 100,000; the smaller "
         "range keeps each run near a second), so about a million updates are published per run. Client wall "
         "time (lower is better, includes connecting) and the publisher's rate while it ran.",
    "6": "Three writer processes PUSH log lines (~80 bytes, one in ten an ERROR) to a collector's PULL, which "
         "republishes every line on PUB to two SUB readers, one taking everything and one filtering on \"ERROR\"; "
         "all over tcp loopback, six processes on two cores (no pinning). End-to-end lines/s (first write to the "
         "last reader's end) and CPU seconds (user+system, all six processes) per million lines. Python only.",
    "7": "A function call carried over REQ/REP on ipc to a server process, in three shapes: add two ints; sort "
         "an array of 10 floats shipped both ways; and a call during which the server calls back into the caller "
         "9 times (10 round trips). µs per call, lower is better, against `multiprocessing.Pipe` carrying the "
         "same bytes. For context only, not measured here: published figures for a ctypes-over-IPC bridge are "
         "130-200 µs for a minimal call and 2-2.5 ms for the callback shape.",
    "9": "The cost of CURVE (RFC 26) security. Each library runs the throughput study's PUSH/PULL programs (copy "
         "mode) and the latency study's REQ/REP programs over tcp loopback, sender and receiver in separate "
         "processes pinned to different cores, twice: with the NULL mechanism and with CURVE (`BENCH_CURVE=1`: "
         "the bound socket is a CURVE server, the connecting one a client, fixed test keys; the throughput ack "
         "socket stays NULL). All ten sides of a cell are interleaved in one run. Every result line reports the "
         "socket's `ZMQ_MECHANISM`, and a run that did not use the mechanism it was meant to is counted as "
         "failed. Throughput is timed from the first delivered message, so the handshake is not in it; latency "
         "skips 100 warm-up round trips. **CURVE/NULL** is CURVE speed ÷ NULL speed for the same library in the "
         "same cell (1.00 = CURVE is free; smaller = CURVE costs more). **oxmq/peer at CURVE** is oxmq's CURVE "
         "speed ÷ its peer's CURVE speed (Rust and the C ABI against C on libzmq, oxmq's Python package against "
         "pyzmq). Goals (issue 8): CURVE throughput ≥ 1.0× libzmq's at every size, and oxmq's CURVE/NULL cost "
         "ratio no worse than libzmq's (a CURVE/NULL speed ratio at least libzmq's).",
}

COLORS = {
    "c_libzmq": "#1f77b4", "c_oxmq": "#d62728", "rust_oxmq": "#ff7f0e", "pyzmq": "#2ca02c", "pyomq": "#9467bd",
    "oxmq_py": "#e377c2", "c_mutex": "#7f7f7f", "py_queue": "#8c564b", "py_pipe": "#17becf",
    "pydeb_libzmq": "#bcbd22", "pydeb_oxmq": "#ff9896", "perl_libzmq": "#aec7e8", "perl_oxmq": "#ffbb78",
    "ruby_libzmq": "#98df8a", "ruby_oxmq": "#c5b0d5", "c_omq": "#393b79", "rust_omq": "#637939",
    "rust_zeromq": "#8c6d31", "rust_rzmq": "#843c39", "rust_monocoque": "#7b4173", "c_libzmq435": "#6baed6",
}


SHORT = {"c_libzmq": "C libzmq", "c_oxmq": "C oxmq-ABI", "rust_oxmq": "Rust oxmq", "pyzmq": "pyzmq",
         "pyomq": "pyomq", "oxmq_py": "py-oxmq", "c_mutex": "C mutex", "py_queue": "queue.Queue",
         "py_pipe": "mp.Pipe", "c_omq": "C omq-ABI", "rust_omq": "Rust omq.rs", "rust_zeromq": "Rust zmq.rs",
         "rust_rzmq": "Rust rzmq", "rust_monocoque": "Rust monocoque", "c_libzmq435": "C libzmq 4.3.5"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def unavailable(st):
    """{side: (label, why)}; where a side ran in some cells only, say in how many it could not."""
    seen, count = {}, {}
    cells = st.get("cells", [])
    for cell in cells:
        for key, e in cell["sides"].items():
            if "unavailable" in e:
                count[key] = count.get(key, 0) + 1
                seen.setdefault(key, (e["label"], e["unavailable"], cell["label"]))
    out = {}
    for key, (label, why, where) in seen.items():
        if count[key] < len(cells):
            why = "in %d of %d cells (first: %s: %s)" % (count[key], len(cells), where, why)
        out[key] = (label, why)
    return out


def failures(st):
    out = []
    for cell in st.get("cells", []):
        for key, e in cell["sides"].items():
            if e.get("errors") and "unavailable" not in e:
                out.append("%s, %s: %d of the runs failed (%s)" % (cell["label"], e["label"], len(e["errors"]),
                                                                     e["errors"][-1][:160]))
    return out


def fmt_ratio(r):
    """A ratio with its range over the repetitions; "≈" where the two sides'
    ranges overlap, "[lend≠copy]" where the sides do different work."""
    txt = "%.2f×" % r["ratio"]
    if "lo" in r:
        txt += " (%.2f–%.2f%s)" % (r["lo"], r["hi"], " ≈" if r.get("overlap") else "")
    if r.get("unlike"):
        txt += " [lend≠copy]"
    return txt


def claimable(cell, r):
    """A ratio a headline may quote: like-for-like work, and a pinned cell or
    sides whose ranges do not overlap."""
    return not r.get("unlike") and (cell.get("key", {}).get("pinned") or not r.get("overlap", True))


def ratio_text(cell, metric, key, headline=False):
    rs = [r for r in cell.get("ratios", {}).get(metric, []) if r["oxmq"] == key]
    if headline:
        out = []
        for r in rs:
            peer = cell["sides"][r["peer"]]["label"]
            if r.get("unlike"):
                out.append("vs %s: lend≠copy, no ratio" % peer)
            elif not claimable(cell, r):
                out.append("%.2f× vs %s (ranges overlap: no claim)" % (r["ratio"], peer))
            else:
                out.append("%s vs %s" % (fmt_ratio(r), peer))
        return ", ".join(out)
    return ", ".join("%s vs %s" % (fmt_ratio(r), cell["sides"][r["peer"]]["label"]) for r in rs)


def behind(st, metric, threshold=0.95):
    """The comparisons a section's headline names as behind: like-for-like only."""
    out = []
    for cell in st.get("cells", []):
        for r in cell.get("ratios", {}).get(metric, []):
            if r["ratio"] < threshold and not r.get("unlike"):
                out.append((r["ratio"], cell, r))
    out.sort(key=lambda t: t[0])
    return out


def cell_table(cell, metrics, ratio_metric):
    head = ["side"] + ["%s (%s)" % (m, UNITS.get(m, ("", 1))[0]) for m in metrics] + ["speed ratio oxmq/peer"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, e in cell["sides"].items():
        if "unavailable" in e:
            lines.append("| %s | not available: %s |%s" % (e["label"], e["unavailable"].replace("|", "/"),
                                                            " |" * (len(head) - 2)))
            continue
        vals = [fmt_stat(e["metrics"][m], None) if m in e["metrics"] else "–" for m in metrics]
        lines.append("| %s | %s | %s |" % (e["label"], " | ".join(vals), ratio_text(cell, ratio_metric, key)))
    return "\n".join(lines)


def bar_plot(cell, metric, path, title, xlabel, log=False):
    plt = _plt()
    rows = [(k, e) for k, e in cell["sides"].items() if metric in e.get("metrics", {})]
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    labels = [e["label"] for _, e in rows]
    med = [e["metrics"][metric]["median"] for _, e in rows]
    lo = [m - e["metrics"][metric]["min"] for m, (_, e) in zip(med, rows)]
    hi = [e["metrics"][metric]["max"] - m for m, (_, e) in zip(med, rows)]
    ax.barh(range(len(rows)), med, xerr=[lo, hi], color=[COLORS.get(k, "#888") for k, _ in rows], capsize=3)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    for i, m in enumerate(med):
        ax.text(m, i, " " + num(m), va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def grouped_bars(cells, metric, path, title, ylabel, cell_name):
    plt = _plt()
    keys = []
    for c in cells:
        for k, e in c["sides"].items():
            if metric in e.get("metrics", {}) and k not in keys:
                keys.append(k)
    if not keys:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    w = 0.8 / len(keys)
    for j, k in enumerate(keys):
        xs, ys, err = [], [], [[], []]
        for i, c in enumerate(cells):
            e = c["sides"].get(k, {})
            d = e.get("metrics", {}).get(metric)
            if d:
                xs.append(i + j * w)
                ys.append(d["median"])
                err[0].append(d["median"] - d["min"])
                err[1].append(d["max"] - d["median"])
        label = next(c["sides"][k]["label"] for c in cells if k in c["sides"])
        ax.bar(xs, ys, w, yerr=err, label=label, color=COLORS.get(k, "#888"), capsize=2)
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(cells))])
    ax.set_xticklabels([cell_name(c) for c in cells])
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# --- per-study sections ------------------------------------------------------


def physical_limits(data):
    st = data["studies"].get("8")
    out = {}
    if not st or not st.get("cells"):
        return out
    for key, e in st["cells"][0]["sides"].items():
        d = e.get("metrics", {}).get("mb_per_s")
        if d:
            out[key] = d["median"]
    return out


RAW_LIMIT = {"tcp": "tcp_1048576", "ipc": "unix_1048576", "inproc": "memcpy_1048576"}


def raw_departures(data, tolerance=0.2):
    """Throughput cells whose in-cell raw probe departs from study 8's figure
    for the same probe by more than tolerance: (cell label, in-cell, study 8)."""
    limits = physical_limits(data)
    out = []
    for c in data.get("studies", {}).get("2", {}).get("cells", []):
        raw = c["sides"].get("raw", {}).get("metrics", {}).get("mb_per_s")
        lim = limits.get(RAW_LIMIT.get(c["key"].get("transport"), ""))
        if raw and lim and abs(raw["median"] / lim - 1) > tolerance:
            out.append((c["label"], raw["median"], lim))
    return out


def floor_beaten(data):
    """Latency cells in which a library's p50 beats the plain-socket floor:
    (cell label, side label, its p50, the floor's p50, its CPU µs per round
    trip or None, the floor's or None)."""
    out = []
    for c in data.get("studies", {}).get("3", {}).get("cells", []):
        ping = c["sides"].get("ping", {}).get("metrics", {})
        if not ping.get("p50_us"):
            continue
        pcpu = ping.get("cpu_us_per_rt", {}).get("median")
        for k, e in c["sides"].items():
            m = e.get("metrics", {})
            d = m.get("p50_us")
            if k != "ping" and d and d["median"] < ping["p50_us"]["median"]:
                out.append((c["label"], e["label"], d["median"], ping["p50_us"]["median"],
                            m.get("cpu_us_per_rt", {}).get("median"), pcpu))
    return out


# What the in-cell raw side of each transport measures (bench/c/physical.c).
RAW_PROBE_NAMES = {"tcp": "loopback TCP", "ipc": "Unix sockets with oxmq's 1 MiB ipc buffers", "inproc": "memcpy"}


def sec_warnings(data):
    """Measurements that contradict each other: each is an error to explain
    before any figure of that cell is quoted."""
    md = ["## Measurement warnings\n"]
    raw, floor = raw_departures(data), floor_beaten(data)
    if not raw and not floor:
        md.append("None: every in-cell raw probe is within 20% of study 8's, and no library beats the plain-socket "
                  "ping-pong floor.\n")
        return md
    for label, mine, lim in raw:
        probe = RAW_PROBE_NAMES.get(label.split()[0], "the raw probe")
        md.append("- **Raw probe departs from study 8** in throughput cell %s: %s MB/s in the cell, %s MB/s in "
                  "study 8 (%+.0f%%). The two run the same probe (%s) and "
                  "should agree within 20%%: the machine's load changed between them, or the message size's writes "
                  "differ from study 8's 1 MiB ones, so this cell's fractions of the raw limit are not to be quoted." % (label, num(mine), num(lim), 100 * (mine / lim - 1), probe))
    for label, side, p50, ping, cpu, pcpu in floor:
        spent = ""
        if cpu is not None and pcpu is not None:
            spent = " It used %.1f CPU µs per round trip (both processes), the floor %.1f." % (cpu, pcpu)
        md.append("- **%s beats the ping-pong floor** in latency cell %s: p50 %.1f µs against the floor's %.1f µs "
                  "(the best of blocking and polling plain-socket ping-pongs, pinned and unpinned). No library can "
                  "round-trip faster than two plain writes and reads: a measurement error to explain (a different "
                  "wake-up path, or load during the probe) before quoting this cell.%s" % (side, label, p50, ping,
                                                                                           spent))
    md.append("")
    return md


def sec_simple(n, st, plots, metrics, ratio_metric, plot_metric, xlabel, log=False):
    md = []
    for i, cell in enumerate(st.get("cells", [])):
        if len(st["cells"]) > 1:
            md.append("**%s**\n" % cell["label"])
        md.append(cell_table(cell, metrics, ratio_metric))
        fn = "study%s_%d.png" % (n, i)
        if bar_plot(cell, plot_metric, plots / fn, "%s: %s" % (st["title"][:60], cell["label"]), xlabel, log):
            md.append("\n![%s](plots/%s)\n" % (cell["label"], fn))
    return md


def mode_label(c):
    mode = c["key"]["mode"]
    if mode == "bytearray":
        return "forced copy (Python sends a bytearray)"
    if mode == "copy" and any(e.get("work") == "lend" for e in c["sides"].values()):
        return "copy (py-oxmq lends bytes)"
    return mode


def variant(c):
    """The label suffix of a study-2 cell measured in another layout than the usual two processes."""
    k = c["key"]
    if k.get("layout") == "threads":
        return " (one process, two threads)"
    return " (pinned)" if k.get("pinned") else ""


def sec_throughput(st, plots, data):
    plt = _plt()
    md = []
    cells = st.get("cells", [])
    keys = []
    for c in cells:
        for k, e in c["sides"].items():
            if e.get("metrics") and k not in keys:
                keys.append(k)
    transports = [t for t in ("tcp", "ipc", "inproc") if any(c["key"]["transport"] == t for c in cells)]
    if not cells:
        return md
    # Pivot: delivered msgs/s per size and mode, one column per implementation.
    labels = {k: next(c["sides"][k]["label"] for c in cells if k in c["sides"]) for k in keys}
    for t in transports:
        md.append("**%s** — delivered messages/s, median (min–max); ratio = oxmq/peer\n" % t)
        head = ["size", "mode"] + [labels[k] for k in keys] + ["speed ratio oxmq/peer"]
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "---|" * len(head))
        for c in cells:
            if c["key"]["transport"] != t:
                continue
            row = [size_label(c["key"]["size"]), mode_label(c) + variant(c)]
            for k in keys:
                d = c["sides"].get(k, {}).get("metrics", {}).get("msgs_per_s")
                row.append(fmt_stat(d) if d else "–")
            rs = c.get("ratios", {}).get("msgs_per_s", [])
            row.append(", ".join("%s / %s %s" % (SHORT.get(r["oxmq"], r["oxmq"]), SHORT.get(r["peer"], r["peer"]),
                                                  fmt_ratio(r)) for r in rs))
            md.append("| " + " | ".join(row) + " |")
        md.append("")
    md.extend(_cpu_table(cells, keys, labels))
    # Plots: msgs/s vs size (log-log), zero-copy normalised to copy, MB/s vs limits (unpinned cells).
    limits = physical_limits(data)
    cells = [c for c in cells if not variant(c)]
    fig1, ax1 = plt.subplots(1, len(transports), figsize=(5 * len(transports), 4.5), squeeze=False)
    fig2, ax2 = plt.subplots(1, len(transports), figsize=(5 * len(transports), 4), squeeze=False)
    fig3, ax3 = plt.subplots(1, len(transports), figsize=(5 * len(transports), 4.5), squeeze=False)
    for j, t in enumerate(transports):
        for k in keys:
            series = {}
            for mode in ("copy", "zc"):
                pts = sorted((c["key"]["size"], c["sides"][k]["metrics"]["msgs_per_s"]["median"],
                              c["sides"][k]["metrics"].get("mb_per_s", {}).get("median"))
                             for c in cells if c["key"]["transport"] == t and c["key"]["mode"] == mode
                             and "msgs_per_s" in c["sides"].get(k, {}).get("metrics", {}))
                series[mode] = pts
                if pts:
                    style = "-" if mode == "copy" else "--"
                    ax1[0][j].plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=3,
                                   color=COLORS.get(k, "#888"), label="%s %s" % (labels[k], mode))
                    ax3[0][j].plot([p[0] for p in pts], [p[2] for p in pts], style, marker="o", ms=3,
                                   color=COLORS.get(k, "#888"), label="%s %s" % (labels[k], mode))
            copy = {p[0]: p[1] for p in series.get("copy", [])}
            norm = [(s, v / copy[s]) for s, v, _ in series.get("zc", []) if s in copy]
            if norm:
                ax2[0][j].plot([p[0] for p in norm], [p[1] for p in norm], marker="o", ms=3,
                               color=COLORS.get(k, "#888"), label=labels[k])
        limit_key = {"tcp": "tcp_1048576", "ipc": "unix_1048576", "inproc": "memcpy_1048576"}[t]
        if limit_key in limits:
            ax3[0][j].axhline(limits[limit_key], color="k", lw=0.8, ls=":",
                              label="machine: %s" % limit_key.replace("_1048576", " 1 MiB"))
        for ax, title, ylabel in ((ax1[0][j], "%s: messages/s" % t, "messages/s (log)"),
                                  (ax2[0][j], "%s: zero-copy / copy" % t, "zc msgs/s ÷ copy msgs/s"),
                                  (ax3[0][j], "%s: MB/s delivered" % t, "MB/s (log)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_title(title)
            ax.set_ylabel(ylabel)
            if ax is not ax2[0][j]:
                ax.set_yscale("log")
            else:
                ax.axhline(1.0, color="k", lw=0.8)
        ax1[0][j].legend(fontsize=6)
        ax2[0][j].legend(fontsize=6)
        ax3[0][j].legend(fontsize=6)
    for fig, fn in ((fig1, "thr_msgs.png"), (fig2, "thr_zc_over_copy.png"), (fig3, "thr_mbps.png")):
        fig.tight_layout()
        fig.savefig(plots / fn, dpi=110)
        plt.close(fig)
    md.append("![messages/s vs size](plots/thr_msgs.png)\n")
    md.append("Zero-copy normalised to copy (above 1: zero-copy wins), the crossover plot of pyzmq's own study:\n")
    md.append("![zero-copy / copy](plots/thr_zc_over_copy.png)\n")
    md.append("MB/s delivered against the machine's limits from study 8 (dotted):\n")
    md.append("![MB/s vs size](plots/thr_mbps.png)\n")
    # Large messages as a fraction of the machine.
    if limits or any("raw" in c["sides"] for c in cells):
        md.append("Large messages as a fraction of the machine: delivered MB/s ÷ raw loopback TCP (tcp), Unix "
                  "socket (ipc) or memcpy (inproc) bandwidth with writes of the message size, probed as an extra "
                  "side interleaved with the copy cell of each size (the *machine* column above); zero-copy over "
                  "inproc hands over a reference and is not bounded by memcpy.\n")
        head = ["transport", "size", "mode"] + [labels[k] for k in keys if k != "raw"]
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "---|" * len(head))
        stale = []
        for c in cells:
            if c["key"]["size"] < (1 << 20):
                continue
            t = c["key"]["transport"]
            raw = None
            for cc in cells:  # the raw probe interleaved in this size's copy cell, if any
                if cc["key"]["transport"] == t and cc["key"]["size"] == c["key"]["size"]:
                    raw = cc["sides"].get("raw", {}).get("metrics", {}).get("mb_per_s") or raw
            lim = raw["median"] if raw else limits.get(
                {"tcp": "tcp_1048576", "ipc": "unix_1048576", "inproc": "memcpy_1048576"}[t])
            if not lim:
                continue
            if not raw:
                stale.append("%s %s" % (t, size_label(c["key"]["size"])))
            row = [t, size_label(c["key"]["size"]), c["key"]["mode"]]
            for k in keys:
                if k == "raw":
                    continue
                d = c["sides"].get(k, {}).get("metrics", {}).get("mb_per_s")
                row.append("%.0f%% (%s MB/s)" % (100 * d["median"] / lim, num(d["median"])) if d else "–")
            md.append("| " + " | ".join(row) + " |")
        md.append("")
        if stale:
            md.append("These cells (%s) had no raw probe interleaved with them (results from a run before the "
                      "probe was added), so they are divided by study 8's figure, measured once at the start of "
                      "the run: if other jobs loaded the machine then and not later, the ceiling is too low and "
                      "fractions can exceed 100%%. Read them as an upper bound.\n" % ", ".join(sorted(set(stale))))
    # Send-side calls/s, compact.
    md.append("<details><summary>Send-side calls/s (all cells)</summary>\n")
    head = ["transport", "size", "mode"] + [labels[k] for k in keys]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for c in cells:
        row = [c["key"]["transport"], size_label(c["key"]["size"]), c["key"]["mode"] + variant(c)]
        for k in keys:
            d = c["sides"].get(k, {}).get("metrics", {}).get("send_calls_per_s")
            row.append(fmt_stat(d) if d else "–")
        md.append("| " + " | ".join(row) + " |")
    md.append("\n</details>\n")
    return md


def _cpu_table(cells, keys, labels):
    """Messages per CPU-second, receiver / sender (two processes) or the one process (inproc)."""
    md = ["<details><summary>CPU: delivered messages per CPU-second, receiver / sender (inproc: the process); "
          "median</summary>\n"]
    head = ["transport", "size", "mode"] + [labels[k] for k in keys if k != "raw"] + ["oxmq/peer (both sides)"]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for c in cells:
        row = [c["key"]["transport"], size_label(c["key"]["size"]), c["key"]["mode"] + variant(c)]
        for k in keys:
            if k == "raw":
                continue
            m = c["sides"].get(k, {}).get("metrics", {})
            if "recv_msgs_per_cpu_s" in m and "send_msgs_per_cpu_s" in m:
                row.append("%s / %s" % (num(m["recv_msgs_per_cpu_s"]["median"]), num(m["send_msgs_per_cpu_s"]["median"])))
            elif "msgs_per_cpu_s" in m:
                row.append(num(m["msgs_per_cpu_s"]["median"]))
            else:
                row.append("–")
        rs = c.get("ratios", {}).get("msgs_per_cpu_s", [])
        row.append(", ".join("%s / %s %s" % (SHORT.get(r["oxmq"], r["oxmq"]), SHORT.get(r["peer"], r["peer"]),
                                              fmt_ratio(r)) for r in rs))
        md.append("| " + " | ".join(row) + " |")
    md.append("\n</details>\n")
    return md


def trailing(data, threshold=1.0):
    """Every comparison in which oxmq is slower (or costs more) than a peer:
    (study, cell label, metric, oxmq side, peer side, ratio, ratio text, facts), worst first. facts is what
    WHY_RULES match on: the cell's key, the metric, the two side keys (the peer is "raw" or "ping" for the
    rows held against the machine) and whether the two sides' ranges overlap."""
    out = []

    def facts(n, c, metric, mine, peer, overlap):
        return dict(c.get("key", {}), study=n, metric=metric, oxmq=mine, peer=peer, overlap=bool(overlap))

    for n, st in data.get("studies", {}).items():
        for c in st.get("cells", []):
            for metric, rs in c.get("ratios", {}).items():
                for r in rs:
                    if r["ratio"] < threshold:
                        out.append((n, c["label"], metric, c["sides"][r["oxmq"]]["label"],
                                    c["sides"][r["peer"]]["label"], r["ratio"], fmt_ratio(r),
                                    facts(n, c, metric, r["oxmq"], r["peer"], r.get("overlap"))))
            # Large messages against the machine: the goal is 0.9x raw socket bandwidth.
            raw = c["sides"].get("raw", {}).get("metrics", {}).get("mb_per_s")
            if raw and c["key"].get("transport") in ("tcp", "ipc"):
                for k, e in c["sides"].items():
                    d = e.get("metrics", {}).get("mb_per_s")
                    if e.get("oxmq") and d and d["median"] < 0.9 * raw["median"]:
                        q = d["median"] / (0.9 * raw["median"])
                        out.append((n, c["label"], "mb_per_s ÷ 0.9×raw", e["label"], "raw socket", q, "%.2f×" % q,
                                    facts(n, c, "mb_per_s", k, "raw", False)))
            # Latency: a REQ/REP round trip within 1.3x (issue 21's goal) the plain-socket ping-pong of the same cell.
            ping = c["sides"].get("ping", {}).get("metrics", {}).get("p50_us")
            if ping:
                for k, e in c["sides"].items():
                    d = e.get("metrics", {}).get("p50_us")
                    if e.get("oxmq") and d and d["median"] > 1.3 * ping["median"]:
                        q = 1.3 * ping["median"] / d["median"]
                        out.append((n, c["label"], "p50_us ÷ 1.3×ping-pong", e["label"], "plain socket ping-pong", q,
                                    "%.2f×" % q, facts(n, c, "p50_us", k, "ping", False)))
    out.sort(key=lambda t: t[5])
    return out


# The sections of TRAILING.md a row of "Where oxmq trails" can point to: key -> (link text, anchor, branch).
# An anchor is a heading's GitHub slug or an explicit <a id="..."> in TRAILING.md; test_harness.py checks that
# each exists, except those with a branch: sections being written there, whose anchors the lead reconciles
# when that branch merges.
TRAILING_SECTIONS = {
    "pipe": ("§1", "1-small-messages-when-the-reader-keeps-up-with-the-writer", None),
    "lent": ("§2", "2-c-abi-zero-copy-on-inproc-one-allocation-per-zmq_msg_init_data", None),
    # The Rust inproc zero-copy rows: section 2 names their two levels but has no profile of them yet.
    "lent-rust": ("§2", "2-c-abi-zero-copy-on-inproc-one-allocation-per-zmq_msg_init_data", None),
    "tcp-large": ("§3", "3-large-messages-over-tcp-in-copy-mode", None),
    "py-tcp-large": ("§4", "4-python-large-messages-over-tcp", None),
    "rtt": ("§5", "5-round-trips-latency-at-256-kib-and-the-rpc-shapes", None),
    "spread": ("§6", "6-cells-within-the-run-to-run-spread", None),
    "threads": ("§7", "7-one-process-two-threads-over-tcp-issue-21-item-4", None),
    "scale": ("§8", "8-study-13-connect-time-of-10000-dealers-to-one-router-issue-24", None),
    "curve": ("§9", "9-curve-throughput-at-64-kib-and-1-mib-issue-21-branch-curve", None),
    "ipc-large": ("§10", "10-large-messages-over-ipc-against-the-raw-unix-socket", None),
    "null-large": ("§11", "11-study-9-null-at-1-mib-against-libzmq", None),
    "py-rtt": ("§12", "12-python-round-trips-against-pyomq", None),
    "streams-vs-monocoque": ("§14", "streams-vs-monocoque", None),
    "python-inproc-large": ("§13", "python-inproc-large", None),
    "inproc-large-copy": ("§15", "15-c-abi-and-rust-inproc-large-copies-against-libzmq", None),
}

C, RUST, PY = {"c_oxmq"}, {"rust_oxmq"}, {"oxmq_py"}
BIG = (1 << 20, 1 << 30)  # 1 MiB and up: where the goal is 0.9x the raw socket
SMALL = (0, 1024)
NULL9 = {"c_oxmq_null", "rust_oxmq_null", "oxmq_py_null"}
CURVE9 = {"c_oxmq_curve", "rust_oxmq_curve", "oxmq_py_curve"}

# Which section explains a trailing row. First match wins; a field left out matches anything; "size" is an
# inclusive (low, high) range in bytes, the other fields a set of allowed values. A row no rule takes is
# counted under the table as having no profile yet (never guessed into a section). Each rule says why.
WHY_RULES = [
    # The one-process, two-thread layout has its own profile and fix, whatever the size or peer.
    ("threads", {"study": {"2"}, "layout": {True}}, "one I/O thread serves both ends: its own profile"),
    # Rust streams against monocoque (no I/O thread, a coalescing sender): one family at every size and
    # transport, being profiled on branch streams.
    ("streams-vs-monocoque", {"study": {"2"}, "oxmq": C | RUST, "peer": {"rust_monocoque"},
                              "transport": {"tcp", "ipc"}}, "monocoque's design differs at every size"),
    # Python's large inproc messages (copy, lend, bytearray) against pyzmq and pyomq: branch pyinproc's section.
    ("python-inproc-large", {"study": {"2"}, "oxmq": PY, "transport": {"inproc"}, "size": (4096, 1 << 30)},
     "one process, so the binding's own copy and allocation are the whole cost"),
    # Large tcp frames, copy or zero-copy, against the raw socket or a C/Rust peer: the write pattern and the
    # copy into a fresh body that the raw socket does not make.
    ("tcp-large", {"study": {"2"}, "transport": {"tcp"}, "size": BIG, "oxmq": C | RUST},
     "the application's copy, page faults and TCP work in the sender's context"),
    ("py-tcp-large", {"study": {"2"}, "transport": {"tcp"}, "size": (65536, 1 << 30), "oxmq": PY},
     "Python's receive copies each body into a fresh bytes"),
    # Large ipc frames against the Unix socket or libzmq: the same copies without TCP's work.
    ("ipc-large", {"study": {"2"}, "transport": {"ipc"}, "size": BIG}, "copy and page faults over AF_UNIX"),
    # Large copies between two threads (C ABI, Rust): both sides copy 4 MiB per message, so where the bodies
    # sit in the cache decides it.
    ("inproc-large-copy", {"study": {"2"}, "transport": {"inproc"}, "mode": {"copy"}, "size": BIG, "oxmq": C | RUST},
     "two 4 MiB memcpys per message: which buffer the sender reuses"),
    # C ABI zero-copy over inproc against libzmq: the lent buffer's owner and the receive path.
    ("lent", {"study": {"2"}, "transport": {"inproc"}, "mode": {"zc"}, "oxmq": C}, "one allocation per lent buffer"),
    # Rust inproc zero-copy: the same cells, bimodal between runs (section 2 has both runs' figures).
    ("lent-rust", {"study": {"2"}, "transport": {"inproc"}, "mode": {"zc"}, "oxmq": RUST},
     "inproc zero-copy cells flip between two levels from run to run"),
    # Small messages between threads or processes against libzmq or omq.rs: the pipe's hand-off per message.
    ("pipe", {"study": {"2"}, "size": SMALL, "oxmq": C | RUST, "peer": {"c_libzmq", "c_libzmq435", "c_omq", "rust_omq"}},
     "the hand-off between threads per message while the reader keeps up"),
    ("pipe", {"study": {"4"}}, "inproc PAIR: the same pipe"),
    # Python's small messages against the 3x-pyzmq goal: section 1 names that goal with the pipe's cost.
    ("pipe", {"study": {"2"}, "size": (0, 256), "oxmq": PY, "peer": {"pyzmq", "pyomq"}},
     "the binding's call plus the same pipe per message"),
    # Round trips: against the plain-socket floor and the C/Rust peers, the thread hand-offs a REQ/REP makes.
    ("rtt", {"study": {"3"}, "peer": {"ping"}}, "six thread hand-offs per round trip against the floor's two"),
    ("py-rtt", {"study": {"3"}, "oxmq": PY, "peer": {"pyomq"}}, "Python against pyomq's round trip"),
    ("rtt", {"study": {"3"}, "oxmq": C | RUST}, "the same hand-offs against peers that spin or have fewer"),
    ("py-rtt", {"study": {"7"}, "peer": {"pyomq"}}, "the rpc shapes are Python round trips too"),
    ("rtt", {"study": {"7"}, "peer": {"py_pipe"}}, "the rpc shapes against multiprocessing.Pipe"),
    # CURVE: the boxes and the copies around them; NULL at 1 MiB is the large tcp frame path without CURVE.
    ("curve", {"study": {"9"}, "oxmq": CURVE9}, "CURVE's copies per message"),
    ("null-large", {"study": {"9"}, "oxmq": NULL9, "size": BIG}, "the large tcp frame path in study 9's set-up"),
    # Study 13: connect storms and round trips with many connections open (section 8 profiles both and
    # shows how far one repetition's p99 moves).
    ("scale", {"study": {"13"}, "metric": {"connect_seconds", "p99_us", "p50_us"}},
     "connect time and round trips with many connections"),
    # Memory per connection with few connections open: section 8 splits the run's figures into a fixed part and
    # the cost of each further connection.
    ("scale", {"study": {"13"}, "metric": {"router_kib_per_conn", "client_kib_per_conn"}},
     "a fixed cost spread over few connections; each further connection costs less than libzmq's"),
    # Anything else whose two sides' ranges overlap is not shown to differ.
    ("spread", {"overlap": {True}}, "the ranges overlap: not shown to trail"),
]


def rule_matches(rule, facts):
    """Whether facts satisfy a WHY_RULES or GOALS filter: a field left out matches anything; "size" is an
    inclusive (low, high) range, "layout" and "pinned" a set of truth values, the other fields sets."""
    for field, want in rule.items():
        have = facts.get(field)
        if field == "size":
            ok = have is not None and want[0] <= have <= want[1]
        elif field in ("layout", "pinned"):
            ok = bool(have) in want
        else:
            ok = have in want
        if not ok:
            return False
    return True


def why_section(facts):
    """The TRAILING_SECTIONS key that explains a row (its facts, from trailing()), or None."""
    for section, rule, _ in WHY_RULES:
        if rule_matches(rule, facts):
            return section
    return None


def why_link(section):
    text, anchor, branch = TRAILING_SECTIONS[section]
    link = "[%s](TRAILING.md#%s)" % (text, anchor)
    return link + (" (branch %s)" % branch if branch else "")


# Sections that exist but say the family is "not profiled yet": their rows count as having no profile.
# test_harness.py checks that each of these sections says so.
UNPROFILED = set()


def row_family(row):
    """How a row without a section is named under the table: what a section for it would cover."""
    n, _, metric, mine, peer, _, _, f = row
    where = " ".join(str(x) for x in (f.get("transport"), f.get("kind"), f.get("shape")) if x)
    return "study %s%s %s: %s vs %s" % (n, " " + where if where else "", metric, mine, peer)


def sec_trailing(data):
    rows = trailing(data)
    md = ["## Where oxmq trails\n"]
    if not rows:
        md.append("oxmq is at or ahead of every peer in every comparison of this run.\n")
        return md
    md.append("Every comparison of this run in which oxmq is behind a peer (speed ratio oxmq/peer below 1.00; for "
              "times, costs and memory it is peer ÷ oxmq), worst first; large tcp/ipc messages are also held "
              "against 0.9× the raw socket's bandwidth measured in the same cell, and REQ/REP round trips (p50) against 1.3× a plain-socket ping-pong of the same size. %d comparisons.\n" % len(rows))
    md.append("Why each family of these cells trails, from profiles, and what closing the gap would take: "
              "[TRAILING.md](TRAILING.md) (written by hand; it names the commit and runs it comes from). The "
              "\"why\" column links each row to its section, chosen by the rules `WHY_RULES` in `bench/report.py` "
              "(study, transport, size, measure, oxmq side, peer; a row whose ranges overlap and that no other rule "
              "takes goes to the section on the run-to-run spread); a section with a branch is being written there.\n")
    md.append("Ratios carry their range over the repetitions (slowest ÷ fastest .. fastest ÷ slowest); ≈ marks "
              "sides whose ranges overlap (a difference within the noise), [lend≠copy] a Python cell where oxmq "
              "lends the `bytes` and the peer copies it.\n")
    md.append("| study | cell | measure | oxmq side | peer | ratio (range) | why |")
    md.append("|---|---|---|---|---|---|---|")
    orphans = {}
    for row in rows:
        n, cell, metric, mine, peer, ratio, text, f = row
        section = why_section(f)
        if section is None:
            orphans.setdefault(row_family(row), []).append(cell)
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (n, cell, metric, mine, peer, text,
                                                          why_link(section) if section else "–"))
    md.append("")
    linked = {}
    for row in rows:
        section = why_section(row[7])
        if section and (section in UNPROFILED or TRAILING_SECTIONS[section][2]):
            linked[section] = linked.get(section, 0) + 1
    bare = sum(len(v) for v in orphans.values())
    count = bare + sum(linked.values())
    parts = ["%d with no section" % bare]
    for sec, k in sorted(linked.items(), key=lambda t: -t[1]):
        why = ("which says not profiled yet" if sec in UNPROFILED
               else "being written on branch %s" % TRAILING_SECTIONS[sec][2])
        parts.append("%d linked to %s, %s" % (k, TRAILING_SECTIONS[sec][0], why))
    md.append("%d %s no profile in TRAILING.md yet (%s)%s\n" % (
        count, "comparison has" if count == 1 else "comparisons have", "; ".join(parts), ":" if orphans else "."))
    for fam, cells in sorted(orphans.items()):
        md.append("- %s (%s)" % (fam, ", ".join(dict.fromkeys(cells))))
    if orphans:
        md.append("")
    return md


# --- issue 21's goals, cell by cell ------------------------------------------

MET, MISSED, UNSHOWN, UNMEASURED = "met", "not met", "not shown", "not measured"
VERDICTS = (MET, MISSED, UNSHOWN, UNMEASURED)

# Both C libzmqs the studies run (Debian's and pyzmq's wheel's 4.3.5): a goal that says only "libzmq" is held
# against each.
C_LIBZMQS = ("c_libzmq", "c_libzmq435")
# The peers each oxmq side is held against in issue 21's first goal ("the best peer of its language").
LANGUAGE_PEERS = {"c_oxmq": C_LIBZMQS + ("c_omq",),
                  "rust_oxmq": ("rust_omq", "rust_zeromq", "rust_rzmq", "rust_monocoque"),
                  "oxmq_py": ("pyzmq", "pyomq")}
TWO_PROCESSES = {"layout": {False}}
# Transports a peer library does not have, so it is no peer in those cells (the run's own failures say so: zmq.rs
# "bind: Endpoint(UnknownTransport("inproc"))", monocoque "has no cross-process inproc transport"). Any other peer
# without a figure is a measurement missing from the run.
NO_TRANSPORT = {"rust_zeromq": {"inproc"}, "rust_monocoque": {"inproc"}}

# Issue 21's goals, each quoted as the issue words it, and the cells of the committed run each covers. A part
# holds the oxmq sides of the study's cells that match "where" (a WHY_RULES-style filter) against "vs": peer
# keys, "best" (the fastest of LANGUAGE_PEERS in that cell), "raw" (the raw socket probed in the copy cell of the
# same transport and size), "floor" (the plain-socket ping-pong of the same cell) or "cpu" (messages per
# CPU-second against every peer over which the cell shows a lead). "target" is the speed ratio oxmq/peer the goal
# asks for (the floor's is 1/1.3: p50 at most 1.3x the floor's); "lead" says the goal claims oxmq is ahead, so a
# range that straddles the target is "not shown", never met. A goal with no parts is not judged by results.json.
GOALS = [
    {"quote": "Every study 2 and study 3 cell at least 1.0× the best peer of its language: libzmq 4.3.5 and "
              "omq's C ABI in C; omq.rs, zmq.rs, rzmq and monocoque (newest, tuned as its author recommends) in "
              "Rust; pyzmq and pyomq in Python (1.2× there).",
     "parts": [
         # Study 3 by p50, the measure the issue's own table of peers quotes.
         {"study": "2", "where": {}, "sides": C | RUST, "vs": "best", "metric": "msgs_per_s", "target": 1.0},
         {"study": "2", "where": {}, "sides": PY, "vs": "best", "metric": "msgs_per_s", "target": 1.2},
         {"study": "3", "where": {}, "sides": C | RUST, "vs": "best", "metric": "p50_us", "target": 1.0},
         {"study": "3", "where": {}, "sides": PY, "vs": "best", "metric": "p50_us", "target": 1.2}]},
    {"quote": "tcp 16 B and 64 B between two processes at least 2.5× libzmq, pinned and unpinned, and ahead of "
              "monocoque and omq.rs in the same run.",
     "parts": [
         {"study": "2", "where": dict(TWO_PROCESSES, transport={"tcp"}, size=(16, 64)), "sides": C | RUST,
          "vs": C_LIBZMQS, "metric": "msgs_per_s", "target": 2.5,
          "expect": ["tcp 16 B copy", "tcp 64 B copy", "tcp 16 B copy (pinned)", "tcp 64 B copy (pinned)"]},
         {"study": "2", "where": dict(TWO_PROCESSES, transport={"tcp"}, size=(16, 64)), "sides": C | RUST,
          "vs": ("rust_monocoque", "rust_omq"), "metric": "msgs_per_s", "target": 1.0,
          "expect": ["tcp 16 B copy", "tcp 64 B copy", "tcp 16 B copy (pinned)", "tcp 64 B copy (pinned)"]}]},
    {"quote": "REQ/REP p50 over tcp and ipc at every size no more than 1.3× a plain-socket ping-pong of the same "
              "size (with a floor that really is a floor), and ahead of omq's C ABI.",
     "parts": [
         {"study": "3", "where": {"transport": {"tcp", "ipc"}}, "sides": C | RUST | PY, "vs": "floor",
          "metric": "p50_us", "target": 1 / 1.3, "lead": False, "inverse": True},
         {"study": "3", "where": {"transport": {"tcp", "ipc"}}, "sides": C | RUST, "vs": ("c_omq",),
          "metric": "p50_us", "target": 1.0}]},
    {"quote": "tcp and ipc 1 MiB and 4 MiB, copy and zero-copy, at least 0.9× the raw socket measured like for "
              "like.",
     "explain": "Python's copy cells send an exact `bytes`, which oxmq's binding lends by reference (it is "
                "immutable, so no copy is needed): its only copy is the kernel's, as the raw socket's. The C ABI's "
                "and Rust's copy mode copy the caller's buffer, which the caller may reuse. Python's rows with a "
                "real copy (`bytearray`) are in study 2's table, not here.",
     "parts": [
         {"study": "2", "where": dict(TWO_PROCESSES, transport={"tcp", "ipc"}, size=BIG, mode={"copy", "zc"}),
          "sides": C | RUST | PY, "vs": "raw", "metric": "mb_per_s", "target": 0.9, "lead": False,
          "expect": ["%s %s %s" % (t, s, m) for t in ("tcp", "ipc") for s in ("1 MiB", "4 MiB")
                     for m in ("copy", "zc")]}]},
    {"quote": "C ABI inproc zero-copy at every size at least 1.0× libzmq.",
     "parts": [{"study": "2", "where": {"transport": {"inproc"}, "mode": {"zc"}}, "sides": C, "vs": C_LIBZMQS,
                "metric": "msgs_per_s", "target": 1.0}]},
    {"quote": "The one-context, two-thread tcp layout of item 4, as a study 2 cell, at every size at least 1.0× "
              "libzmq (1 MiB is 0.30× today).",
     "parts": [{"study": "2", "where": {"layout": {True}}, "sides": C, "vs": C_LIBZMQS,
                "metric": "msgs_per_s", "target": 1.0, "expect": ["tcp 1 MiB copy (one process, two threads)"]}]},
    {"quote": "CURVE throughput at every size at least 1.0× libzmq 4.3.5 on a current libsodium (1 MiB is "
              "0.91–0.95× today).",
     # The C ABI and Rust against the C library the goal names; Python against pyzmq is study 9's own table.
     "parts": [{"study": "9", "where": {"kind": {"thr"}}, "sides": {"c_oxmq_curve", "rust_oxmq_curve"},
                "vs": ("c_libzmq435_curve",), "metric": "msgs_per_s", "target": 1.0}]},
    {"quote": "Python: tcp and ipc 16–256 B at least 3× pyzmq and 2× pyomq; large messages with a real copy at "
              "least 1.2× pyzmq and pyomq.",
     "parts": [
         {"study": "2", "where": dict(TWO_PROCESSES, transport={"tcp", "ipc"}, size=(16, 256)), "sides": PY,
          "vs": ("pyzmq",), "metric": "msgs_per_s", "target": 3.0},
         {"study": "2", "where": dict(TWO_PROCESSES, transport={"tcp", "ipc"}, size=(16, 256)), "sides": PY,
          "vs": ("pyomq",), "metric": "msgs_per_s", "target": 2.0},
         # "A real copy": the bytearray rows, which every library copies; "large" from 64 KiB, pyzmq's
         # COPY_THRESHOLD, where its zero-copy path starts.
         {"study": "2", "where": {"mode": {"bytearray"}, "size": (65536, 1 << 30)}, "sides": PY,
          "vs": ("pyzmq", "pyomq"), "metric": "msgs_per_s", "target": 1.2}]},
    {"quote": "CPU per message reported for each side, and no lead bought by a spinning core: messages per "
              "CPU-second at least the peer's in every cell that oxmq claims.",
     "parts": [
         {"study": "2", "where": {}, "sides": C | RUST | PY, "vs": "cpu", "metric": "msgs_per_s",
          "cpu": "msgs_per_cpu_s", "target": 1.0},
         {"study": "3", "where": {}, "sides": C | RUST | PY, "vs": "cpu", "metric": "p50_us",
          "cpu": "cpu_us_per_rt", "target": 1.0}]},
    {"quote": "No regression elsewhere: soak, interop matrix, security matrix, pyzmq suite and libzmq's own "
              "behaviour stay as they are.",
     "parts": [],
     "outside": "not a benchmark figure: `make test`'s soak, interop, security-matrix, pyzmq-suite and "
                "libzmq-suite steps judge it, not results.json"},
]


def speed_span(mine, theirs, metric):
    """(ratio, lo, hi): mine's speed ÷ theirs's with its range over the repetitions (slowest ÷ fastest ..
    fastest ÷ slowest), or None where either side has no figure."""
    lower = metric in LOWER_BETTER
    m, t = side_speed(mine or {}, metric, lower), side_speed(theirs or {}, metric, lower)
    if m is None or t is None:
        return None
    mr, tr = side_speed_range(mine, metric, lower), side_speed_range(theirs, metric, lower)
    if not (mr and tr):
        return (m / t, m / t, m / t)
    return (m / t, mr[0] / tr[1], mr[1] / tr[0])


def goal_verdict(span, target, lead=True, doubt=None):
    """A goal cell's verdict. A claimed lead is met only when the whole range is at or above the target, missed
    when it is all below, and not shown when the range straddles it; a bound (a fraction of the raw socket or the
    floor) is decided by the median. doubt (a reason the figure cannot be taken as it is) makes it not shown."""
    if span is None:
        return UNMEASURED
    if doubt:
        return UNSHOWN
    ratio, lo, hi = span
    if not lead:
        return MET if ratio >= target else MISSED
    if lo >= target:
        return MET
    return MISSED if hi < target else UNSHOWN


def _goal_against(part, cell, side, raws, beaten):
    """[(peer key, against label, peer entry or None, doubt)] for one oxmq side of one cell."""
    vs, sides = part["vs"], cell["sides"]
    metric = part["metric"]
    if vs == "raw":
        k = cell["key"]
        raw = cell["sides"].get("raw") or raws.get((k.get("transport"), k.get("size"), variant(cell)))
        return [("raw", "raw socket", raw, None)]
    if vs == "floor":
        doubt = "a library beats this floor" if cell["label"] in beaten else None
        return [("ping", "plain-socket ping-pong", sides.get("ping"), doubt)]
    if vs == "best":
        have = [(side_speed(sides[p], metric, metric in LOWER_BETTER), p) for p in LANGUAGE_PEERS[side]
                if p in sides and side_speed(sides[p], metric, metric in LOWER_BETTER) is not None]
        if not have:
            return [(None, "best of %s" % ", ".join(SHORT.get(p, p) for p in LANGUAGE_PEERS[side]), None, None)]
        best = max(have)[1]
        # A peer with no figure here might have been the best: the cell cannot show oxmq at least its equal.
        absent = [SHORT.get(p, p) for p in LANGUAGE_PEERS[side] if p not in dict((k, v) for v, k in have)
                  and cell["key"].get("transport") not in NO_TRANSPORT.get(p, ())]
        return [(best, "best: %s" % sides[best]["label"], sides[best],
                 ("%s not measured here" % ", ".join(absent)) if absent else None)]
    return [(p, sides[p]["label"] if p in sides else SHORT.get(p, p), sides.get(p), None) for p in vs]


def goal_cells(data):
    """Every cell of every goal: a list, per GOALS entry, of dicts with the cell's label, the oxmq side, what it is
    held against, the span (ratio, lo, hi) or None, the target, the verdict, why it cannot be taken as it is (or
    None), and the TRAILING_SECTIONS key that explains a cell not met (or None)."""
    studies = data.get("studies", {})
    beaten = {row[0] for row in floor_beaten(data)}
    raws = {}
    for c in studies.get("2", {}).get("cells", []):
        if "raw" in c["sides"]:  # probed in the copy cell of each size, for its zero-copy cell too
            raws[(c["key"].get("transport"), c["key"].get("size"), variant(c))] = c["sides"]["raw"]
    out = []
    for goal in GOALS:
        rows = []
        for part in goal["parts"]:
            n, metric = part["study"], part["metric"]
            lead = part.get("lead", True)
            cells = [c for c in studies.get(n, {}).get("cells", []) if rule_matches(part["where"], c["key"])]
            for c in cells:
                for side in sorted(part["sides"]):
                    mine = c["sides"].get(side)
                    if mine is None:
                        continue
                    rows.extend(_goal_rows(n, part, c, side, mine, metric, lead, raws, beaten))
            labels = {c["label"] for c in studies.get(n, {}).get("cells", [])}
            for label in part.get("expect", []):
                if label not in labels:
                    for side in sorted(part["sides"]):
                        against = part["vs"] if isinstance(part["vs"], tuple) else (part["vs"],)
                        for p in against:
                            rows.append(dict(study=n, cell=label, side=SHORT.get(side, side),
                                             against=SHORT.get(p, p), span=None, target=part["target"], lead=lead,
                                             verdict=UNMEASURED, doubt="no such cell in this run", why=None,
                                             metric=metric, inverse=part.get("inverse", False)))
        out.append(rows)
    return out


def _goal_rows(n, part, c, side, mine, metric, lead, raws, beaten):
    rows = []
    if part["vs"] == "cpu":
        # The cell's declared comparisons (its speed ratios), those that show oxmq ahead beyond the spread.
        peers = [r["peer"] for r in c.get("ratios", {}).get(RATIO_METRIC.get(n, metric), []) if r["oxmq"] == side]
        for p in peers:
            theirs = c["sides"].get(p)
            speed = speed_span(mine, theirs, metric)
            if speed is None or speed[1] <= 1.0 or lend_note(c, side) and not theirs.get("oxmq"):
                continue
            span = speed_span(mine, theirs, part["cpu"])
            rows.append(_goal_row(n, c, side, p, theirs["label"], span, part, part["cpu"], lead,
                                  None if span else "no CPU figure", "speed %.2f× (%.2f–%.2f)" % speed))
        return rows
    for p, label, theirs, doubt in _goal_against(part, c, side, raws, beaten):
        absent = doubt if doubt and doubt.endswith("not measured here") else None
        if absent:
            doubt = None
        if lend_note(c, side) and p in ("pyzmq", "pyomq"):
            doubt = "lend≠copy: the bytearray row is the like-for-like one"
        span = speed_span(mine, theirs, metric) if theirs is not None else None
        row = _goal_row(n, c, side, p, label, span, part, metric, lead, doubt)
        if absent and row["verdict"] != MISSED:
            row.update(verdict=UNMEASURED, doubt=absent, why=None)
        rows.append(row)
    return rows


def _goal_row(n, c, side, peer, label, span, part, metric, lead, doubt, note=None):
    verdict = goal_verdict(span, part["target"], lead, doubt)
    row = dict(study=n, cell=c["label"], side=c["sides"][side]["label"], against=label, span=span,
               target=part["target"], lead=lead, verdict=verdict, doubt=doubt, note=note, why=None, metric=metric,
               inverse=part.get("inverse", False))
    if verdict in (MISSED, UNSHOWN):
        row["why"] = why_section(dict(c.get("key", {}), study=n, metric=metric, oxmq=side, peer=peer,
                                      overlap=verdict == UNSHOWN))
    return row


def lead_by_spinning(data):
    """Comparisons where oxmq's median speed is at least the peer's but it delivers fewer messages per CPU-second
    (study 2) or spends more CPU per round trip (study 3): (study, cell, oxmq side, peer, speed ratio, CPU ratio)."""
    out = []
    for n, speed, cpu in (("2", "msgs_per_s", "msgs_per_cpu_s"), ("3", "mean_us", "cpu_us_per_rt")):
        for c in data.get("studies", {}).get(n, {}).get("cells", []):
            costs = {(r["oxmq"], r["peer"]): r for r in c.get("ratios", {}).get(cpu, [])}
            for r in c.get("ratios", {}).get(speed, []):
                k = costs.get((r["oxmq"], r["peer"]))
                if k and r["ratio"] >= 1.0 and k["ratio"] < 1.0:
                    out.append((n, c["label"], c["sides"][r["oxmq"]]["label"], c["sides"][r["peer"]]["label"],
                                fmt_ratio(r), fmt_ratio(k)))
    return out


def goals_summary(cells):
    """The counts line: every goal cell results.json judges, and how many of each verdict."""
    rows = [r for rs in cells for r in rs]
    n = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    return "%d of %d goal cells met (%d not met, %d not shown, %d not measured)." % (
        n[MET], len(rows), n[MISSED], n[UNSHOWN], n[UNMEASURED])


def goals_profiled(cells):
    """How many goal cells not met or not shown have a profile in TRAILING.md (issue 21's "Done when")."""
    rows = [r for rs in cells for r in rs if r["verdict"] in (MISSED, UNSHOWN)]
    pending = sum(1 for r in rows if r["why"] and (r["why"] in UNPROFILED or TRAILING_SECTIONS[r["why"]][2]))
    bare = sum(1 for r in rows if not r["why"])
    spread = sum(1 for r in rows if r["why"] == "spread")
    return ("Of the %d goal cells not met or not shown, %d link a TRAILING.md section with a profile, %d the "
            "section on the run-to-run spread (%s), %d a section that says not profiled yet or is still being "
            "written on its branch, and %d no section." % (
                len(rows), len(rows) - pending - bare - spread, spread, TRAILING_SECTIONS["spread"][0], pending,
                bare))


def _goal_figure(r):
    """The figure and the target as the goal words them: a speed ratio, or for the floor oxmq's p50 ÷ the
    floor's (so lower is better there)."""
    target = "%s %.2f×%s" % ("≤" if r["inverse"] else "≥", 1 / r["target"] if r["inverse"] else r["target"],
                             "" if r["lead"] else " (bound)")
    if r["span"] is None:
        return "–", target
    ratio, lo, hi = r["span"]
    if r["inverse"]:
        return "%.2f× (%.2f–%.2f)" % (1 / ratio, 1 / hi, 1 / lo), target
    return "%.2f× (%.2f–%.2f)" % r["span"], target


def sec_goals(data):
    cells = goal_cells(data)
    v = data.get("machine", {}).get("versions", {})
    md = ["## Issue 21's goals, cell by cell\n"]
    md.append("Each goal of issue 21, quoted, held against this run's results.json by the rules `GOALS` in "
              "`bench/report.py`. A goal cell is one oxmq side in one cell against what the goal names; its figure "
              "is the speed ratio oxmq/peer (for times, peer ÷ oxmq) with its range over the repetitions (slowest "
              "÷ fastest – fastest ÷ slowest). Where the goal claims a lead, a cell is **met** only when its whole "
              "range is at or above the target and **not shown** when the range straddles it (the issue asks for "
              "\"ranges that do not overlap for any claimed lead\"); the bounds (0.9× the raw socket, 1.3× the "
              "plain-socket floor) are decided by the median. **not measured**: a side, peer or cell missing from "
              "the run. Cells not met or not shown link the TRAILING.md section that explains them (by "
              "`WHY_RULES`, as in \"Where oxmq trails\").\n")
    caveats = ["%d repetitions" % data.get("reps", 0)]
    if data.get("notes"):
        caveats.append("results.json joins the runs its %d notes name (the issue asks for one `make bench`)"
                       % len(data["notes"]))
    debian = v.get("Debian libzmq (pkg-config)", "?")
    c_cells = [c for st in ("2", "3") for c in data.get("studies", {}).get(st, {}).get("cells", [])
               if "c_libzmq" in c.get("sides", {})]
    has_435 = bool(c_cells) and all("c_libzmq435" in c["sides"] for c in c_cells)
    if debian != "4.3.5" and not has_435:
        caveats.append("the C libzmq of studies 2 and 3 is Debian's %s, not the 4.3.5 the first goal names "
                       "(4.3.5 runs in study 9)" % debian)
    elif debian != "4.3.5":
        caveats.append("studies 2 and 3 run two C libzmqs, Debian's %s and pyzmq's wheel's 4.3.5 (the one the first "
                       "goal names); the goals that say only \"libzmq\" are held against both" % debian)
    caveats.append("Rust peers: %s" % v.get("Rust peers", "?"))
    md.append("The run's caveats: %s.\n" % "; ".join(caveats))
    md.append("**%s**\n" % goals_summary(cells))
    md.append(goals_profiled(cells) + "\n")
    for i, (goal, rows) in enumerate(zip(GOALS, cells), 1):
        md.append("**Goal %d.** \"%s\"\n" % (i, goal["quote"]))
        if not goal["parts"]:
            md.append("Not counted here: %s.\n" % goal["outside"])
            continue
        md.append(goals_summary([rows]) + "\n")
        if goal.get("explain"):
            md.append(goal["explain"] + "\n")
        table = ["| study | cell | oxmq side | against | measure | oxmq/peer (range) | target | verdict | why |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in sorted(rows, key=lambda r: VERDICTS.index(r["verdict"]) if r["verdict"] != MET else 9):
            verdict = r["verdict"] if r["verdict"] == MET else "**%s**" % r["verdict"]
            if r["doubt"]:
                verdict += " (%s)" % r["doubt"]
            if r.get("note"):
                verdict += "; %s" % r["note"]
            figure, target = _goal_figure(r)
            measure = "p50 ÷ the floor's" if r["inverse"] else r["metric"]
            table.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["study"], r["cell"], r["side"], r["against"], measure, figure, target, verdict,
                why_link(r["why"]) if r["why"] else "–"))
        if len(rows) > 12:
            md.append("<details><summary>The %d cells, those not met first</summary>\n" % len(rows))
            md.extend(table)
            md.append("\n</details>\n")
        else:
            md.extend(table)
            md.append("")
    spin = lead_by_spinning(data)
    md.append("**Leads bought by spinning**: comparisons where oxmq's median speed is at least the peer's but its "
              "messages per CPU-second are fewer (study 2) or its CPU per round trip is more (study 3): %d.\n"
              % len(spin))
    if spin:
        md.append("| study | cell | oxmq side | peer | speed oxmq/peer | CPU oxmq/peer (above 1: oxmq cheaper) |")
        md.append("|---|---|---|---|---|---|")
        for row in spin:
            md.append("| %s | %s | %s | %s | %s | %s |" % row)
        md.append("")
    return md


def latency_cpu_table(cells, keys, labels):
    """CPU µs per round trip of each side (both processes), and the share of
    the round trip each side's process was on a CPU: near 1 (or above, with
    several threads) on both sides is a library that spins while it waits."""
    keys = [k for k in keys if any("cpu_us_per_rt" in c["sides"].get(k, {}).get("metrics", {}) for c in cells)]
    if not keys:
        return []
    md = ["CPU µs per round trip, both processes (client + server; inproc: the one process), and in brackets the "
          "busy share client / server = each process's CPU time ÷ the mean round trip (medians over the "
          "repetitions; 1.0 is a process on a CPU for the whole round trip)\n",
          "| " + " | ".join(["transport", "size"] + [labels[k] for k in keys] + ["CPU ratio oxmq/peer"]) + " |",
          "|" + "---|" * (len(keys) + 3)]
    for c in cells:
        row = [c["key"]["transport"], size_label(c["key"]["size"])]
        for k in keys:
            m = c["sides"].get(k, {}).get("metrics", {})
            if "cpu_us_per_rt" not in m:
                row.append("–")
                continue
            cell = num(m["cpu_us_per_rt"]["median"])
            mean = m.get("mean_us", {}).get("median")
            if mean and "client_cpu_us_per_rt" in m and "server_cpu_us_per_rt" in m:
                cell += " (%.2f / %.2f)" % (m["client_cpu_us_per_rt"]["median"] / mean,
                                             m["server_cpu_us_per_rt"]["median"] / mean)
            row.append(cell)
        row.append(", ".join("%s / %s %s" % (SHORT.get(r["oxmq"], r["oxmq"]), SHORT.get(r["peer"], r["peer"]),
                                              fmt_ratio(r)) for r in c.get("ratios", {}).get("cpu_us_per_rt", [])))
        md.append("| " + " | ".join(row) + " |")
    md.append("")
    return md


def floor_table(cells):
    """The floor's four ways (p50 µs and CPU µs per round trip), so that which
    way set it, and what it cost, shows."""
    ways = [("block", "pinned"), ("block", "unpinned"), ("poll", "pinned"), ("poll", "unpinned")]
    rows = [c for c in cells if "p50_us" in c["sides"].get("ping", {}).get("metrics", {})]
    if not rows:
        return []
    md = ["The plain-socket floor, each way it ran: p50 µs / CPU µs per round trip (medians); the floor is the "
          "best p50 of the four\n",
          "| transport | size | " + " | ".join("%s, %s" % w for w in ways) + " | floor p50 |",
          "|" + "---|" * (len(ways) + 3)]
    for c in rows:
        m = c["sides"]["ping"]["metrics"]
        row = [c["key"]["transport"], size_label(c["key"]["size"])]
        for w in ways:
            p50, cpu = m.get("p50_us_%s_%s" % w), m.get("cpu_us_per_rt_%s_%s" % w)
            row.append("%s / %s" % (num(p50["median"]), num(cpu["median"])) if p50 and cpu else "–")
        row.append(num(m["p50_us"]["median"]))
        md.append("| " + " | ".join(row) + " |")
    md.append("")
    return md


def sec_latency(st, plots):
    plt = _plt()
    md = []
    cells = st.get("cells", [])
    keys = []
    for c in cells:
        for k, e in c["sides"].items():
            if e.get("metrics") and k not in keys:
                keys.append(k)
    labels = {k: next(c["sides"][k]["label"] for c in cells if k in c["sides"]) for k in keys}
    head = ["transport", "size"] + [labels[k] for k in keys] + ["speed ratio oxmq/peer (mean)"]
    md.append("mean / p50 / p99 round trip in µs (medians over the repetitions)\n")
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for c in cells:
        row = [c["key"]["transport"], size_label(c["key"]["size"])]
        for k in keys:
            m = c["sides"].get(k, {}).get("metrics", {})
            row.append(" / ".join(num(m[x]["median"]) for x in ("mean_us", "p50_us", "p99_us")) if "mean_us" in m
                       else "–")
        row.append(", ".join("%s / %s %s" % (SHORT.get(r["oxmq"], r["oxmq"]), SHORT.get(r["peer"], r["peer"]),
                                              fmt_ratio(r)) for r in c.get("ratios", {}).get("mean_us", [])))
        md.append("| " + " | ".join(row) + " |")
    md.append("")
    md.extend(latency_cpu_table(cells, keys, labels))
    md.extend(floor_table(cells))
    transports = [t for t in ("tcp", "ipc", "inproc") if any(c["key"]["transport"] == t for c in cells)]
    if transports and keys:
        fig, axs = plt.subplots(1, len(transports), figsize=(5 * len(transports), 4.5), squeeze=False)
        for j, t in enumerate(transports):
            ax = axs[0][j]
            for k in keys:
                pts = sorted((c["key"]["size"], c["sides"][k]["metrics"]["p50_us"]["median"],
                              c["sides"][k]["metrics"]["p99_us"]["median"]) for c in cells
                             if c["key"]["transport"] == t and "p50_us" in c["sides"].get(k, {}).get("metrics", {}))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", ms=3, color=COLORS.get(k, "#888"),
                            label="%s p50" % labels[k])
                    ax.plot([p[0] for p in pts], [p[2] for p in pts], ":", marker="^", ms=3,
                            color=COLORS.get(k, "#888"), label="%s p99" % labels[k])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("round trip (µs, log)")
            ax.set_title("%s: REQ/REP round trip" % t)
            ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(plots / "latency.png", dpi=110)
        plt.close(fig)
        md.append("![latency](plots/latency.png)\n")
    return md


def sec_ruby(st, plots):
    """One table and bar plot per shape, each with its own metric."""
    md = []
    for i, cell in enumerate(st.get("cells", [])):
        metric = "us_per_round_trip" if cell["key"].get("shape") == "rtt" else "lines_per_s"
        md.append("**%s**\n" % cell["label"])
        md.append(cell_table(cell, [metric], metric))
        fn = "study11_%d.png" % i
        xlabel = "µs per round trip (lower is better)" if metric == "us_per_round_trip" else "lines/s end to end"
        if bar_plot(cell, metric, plots / fn, "Ruby: %s" % cell["label"], xlabel):
            md.append("\n![%s](plots/%s)\n" % (cell["label"], fn))
    return md


SECTIONS = {
    "8": lambda st, plots, data: sec_simple("8", st, plots, ["mb_per_s"], "mb_per_s", "mb_per_s", "MB/s"),
    "10": lambda st, plots, data: sec_simple("10", st, plots, ["msgs_per_s"], "msgs_per_s", "msgs_per_s",
                                             "messages/s received"),
    "1": lambda st, plots, data: sec_simple("1", st, plots, ["ns_per_call"], "ns_per_call", "ns_per_call",
                                            "ns per call (log)", log=True),
    "2": lambda st, plots, data: sec_throughput(st, plots, data),
    "3": lambda st, plots, data: sec_latency(st, plots),
    "4": lambda st, plots, data: sec_simple("4", st, plots, ["seconds", "msgs_per_s"], "seconds", "seconds",
                                            "seconds for the hand-off (lower is better)"),
    "5": lambda st, plots, data: sec_simple("5", st, plots, ["client_seconds", "pub_rate"], "client_seconds",
                                            "client_seconds", "client wall time, s (lower is better)"),
    "6": lambda st, plots, data: sec_simple("6", st, plots, ["lines_per_s", "cpu_s_per_mline"], "lines_per_s",
                                            "lines_per_s", "lines/s end to end"),
    "7": lambda st, plots, data: sec_rpc(st, plots),
    "12": lambda st, plots, data: sec_simple("12", st, plots, ["rss_mib", "bytes_per_msg", "seconds"], "rss_mib",
                                             "rss_mib", "resident MiB with the messages queued (lower is better)"),
    "9": lambda st, plots, data: sec_curve(st, plots),
    "11": lambda st, plots, data: sec_ruby(st, plots),
    "13": lambda st, plots, data: sec_scale(st, plots),
}

RATIO_METRIC = {"1": "ns_per_call", "2": "msgs_per_s", "3": "mean_us", "4": "seconds", "5": "client_seconds",
                "6": "lines_per_s", "7": "us_per_call", "9": "msgs_per_s",
                "10": "msgs_per_s", "11": "speed", "12": "rss_mib", "13": "connect_seconds"}



def scale_goals(st, oxmq="c_oxmq", peer="c_libzmq"):
    """Issue 24's goals for one oxmq side against one peer: [(goal, met or None, detail)]."""
    out = []
    cells = st.get("cells", [])

    def ratio_of(c, m):
        return next((r for r in c.get("ratios", {}).get(m, []) if r["oxmq"] == oxmq and r["peer"] == peer), None)

    for m, what in (("router_kib_per_conn", "ROUTER memory per connection ≤ libzmq's"),
                    ("client_kib_per_conn", "client memory per connection ≤ libzmq's"),
                    ("connect_seconds", "connect time ≤ libzmq's"), ("delivered_per_s", "fan-out rate ≥ libzmq's")):
        # 10 connections are the p99 goal's baseline, not a scale point.
        rows = [(c["label"], ratio_of(c, m)) for c in cells if ratio_of(c, m) and c["key"].get("connections") != 10]
        if rows:
            met = all(r["ratio"] >= 1 for _, r in rows)
            noisy = sum(1 for _, r in rows if r.get("overlap"))
            if met and noisy:
                met = "met on the medians; the two sides' ranges overlap in %d of %d cells" % (noisy, len(rows))
            out.append((what, met, "; ".join("%s: %s" % (label, fmt_ratio(r)) for label, r in rows)))
    for hosts in sorted({c["key"].get("hosts") for c in cells}):
        ds = sorted((c for c in cells if c["key"].get("shape") == "dealers" and c["key"].get("hosts") == hosts),
                    key=lambda c: c["key"]["connections"])
        base = next((c for c in cells if c["key"].get("shape") == "dealers" and c["key"]["connections"] == 10), None)
        if not ds or not base or ds[-1] is base:
            continue
        top = ds[-1]
        for key in (oxmq, peer):
            a = top["sides"].get(key, {}).get("metrics", {}).get("p99_us")
            b = base["sides"].get(key, {}).get("metrics", {}).get("p99_us")
            if a and b:
                q = a["median"] / b["median"]
                # A p99 that moves more than 2× between repetitions is the machine's
                # scheduling, not the library: the medians decide only when steady.
                # The extremes still decide when even the worst pairing (slowest
                # at scale against the fastest at 10, or the reverse) agrees.
                steady = a["max"] <= 2 * a["min"] and b["max"] <= 2 * b["min"]
                if a["max"] <= 2 * b["min"]:
                    verdict = True
                elif a["min"] > 2 * b["max"]:
                    verdict = False
                else:
                    verdict = q <= 2 if steady else "undecided"
                out.append(("%s: p99 at %d connections (%s) ≤ 2× p99 at 10" % (
                    top["sides"][key]["label"], top["key"]["connections"], hosts),
                    verdict if key == oxmq else None,
                    "%s µs ÷ %s µs = %.2f×; over the repetitions p99 ranged %s–%s µs at %d and %s–%s µs at 10%s" % (
                        num(a["median"]), num(b["median"]), q, num(a["min"]), num(a["max"]),
                        top["key"]["connections"], num(b["min"]), num(b["max"]),
                        "" if steady or verdict != "undecided" else ": a range wider than 2×, so no verdict from this run")))
    return out


def sec_scale(st, plots):
    md = []
    veth = st.get("veth")
    if veth:
        md.append("Veth cells: %s.\n" % (veth if veth.endswith("hosts") else "skipped: " + veth))
    for cell in st.get("cells", []):
        md.append("**%s**\n" % cell["label"])
        if cell["key"].get("shape") == "fanout":
            md.append(cell_table(cell, ["delivered_per_s", "lag_ms", "publish_seconds"], "delivered_per_s"))
            extra = ["lag_ms"]
        else:
            md.append(cell_table(cell, ["connect_seconds", "router_kib_per_conn", "client_kib_per_conn", "p50_us",
                                        "p99_us", "cpu_us_per_ping"], "connect_seconds"))
            extra = ["router_kib_per_conn", "client_kib_per_conn", "p50_us", "p99_us"]
        md.append("")
        for m in extra:
            for key, e in cell["sides"].items():
                t = ratio_text(cell, m, key)
                if t:
                    md.append("- %s, %s: %s" % (e["label"], m, t))
        md.append("")
    goals = scale_goals(st)
    if goals:
        md.append("**Goals (issue 24), oxmq's C ABI against Debian's libzmq:**\n")
        for what, met, detail in goals:
            mark = {True: "met", False: "**missed**", None: "libzmq, for comparison"}.get(met, met)
            md.append("- %s: %s (%s)" % (what, mark, detail))
        md.append("")
    return md


def sec_rpc(st, plots):
    md = []
    for cell in st.get("cells", []):
        md.append("**%s**\n" % cell["label"])
        md.append(cell_table(cell, ["us_per_call"], "us_per_call"))
        md.append("")
    if grouped_bars(st.get("cells", []), "us_per_call", plots / "rpc.png", "cross-process calls over ipc",
                    "µs per call (lower is better)", lambda c: c["key"]["shape"]):
        md.append("![rpc](plots/rpc.png)\n")
    return md


CURVE_SIDES = ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "oxmq_py"]
CURVE_PEER = {"c_oxmq": "c_libzmq", "rust_oxmq": "c_libzmq", "oxmq_py": "pyzmq"}


def _curve_metric(cell):
    return "msgs_per_s" if cell["key"].get("kind") == "thr" else "mean_us"


def _curve_label(cell):
    return "%s %s" % ("throughput" if cell["key"].get("kind") == "thr" else "latency", size_label(cell["key"]["size"]))


def curve_goals(st):
    """[(cell, oxmq key, peer key, CURVE speed ratio, oxmq CURVE/NULL, peer CURVE/NULL)] for every pair measured."""
    out = []
    for cell in st.get("cells", []):
        m = _curve_metric(cell)
        cost = cell.get("curve_cost", {}).get(m, {})
        for r in cell.get("ratios", {}).get(m, []):
            if not r["oxmq"].endswith("_curve"):
                continue
            k, p = r["oxmq"][:-6], r["peer"][:-6]
            out.append((cell, k, p, r["ratio"], cost.get(k), cost.get(p)))
    return out


def sec_curve(st, plots=None):
    md = []
    cells = st.get("cells", [])
    if not cells:
        return md
    labels = {}
    for c in cells:
        for key, e in c["sides"].items():
            base = key.rsplit("_", 1)[0]
            labels.setdefault(base, e["label"].rsplit(", ", 1)[0])
    md.append("Median (min–max) over the repetitions: delivered messages/s for throughput (higher is better), "
              "mean round trip in µs for latency (lower is better).\n")
    head = ["cell", "side", "NULL", "CURVE", "CURVE/NULL speed", "oxmq/peer at CURVE", "oxmq/peer at NULL"]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for c in cells:
        m = _curve_metric(c)
        cost = c.get("curve_cost", {}).get(m, {})
        for k in CURVE_SIDES:
            row = [_curve_label(c), labels.get(k, k)]
            for mk in ("null", "curve"):
                e = c["sides"].get("%s_%s" % (k, mk), {})
                d = e.get("metrics", {}).get(m)
                row.append(fmt_stat(d, m) if d else ("not available: %s" % e["unavailable"].replace("|", "/")[:120]
                                                     if "unavailable" in e else "–"))
            row.append("%.2f" % cost[k] if k in cost else "–")
            for mk in ("curve", "null"):
                rs = [r for r in c.get("ratios", {}).get(m, []) if r["oxmq"] == "%s_%s" % (k, mk)]
                row.append(", ".join("%s vs %s" % (fmt_ratio(r), SHORT.get(r["peer"][:-len(mk) - 1], r["peer"]))
                                     for r in rs) or "")
            md.append("| " + " | ".join(row) + " |")
    md.append("")
    goals = curve_goals(st)
    if goals:
        md.append("**Goals, cell by cell** (throughput: CURVE speed ≥ 1.0× the peer's; cost: oxmq's CURVE/NULL "
                  "speed ratio ≥ the peer's, i.e. CURVE costs oxmq no more of its own NULL speed):\n")
        head = ["cell", "oxmq side", "vs", "oxmq/peer at CURVE", "speed goal", "CURVE/NULL oxmq", "CURVE/NULL peer",
                "cost goal"]
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "---|" * len(head))
        for c, k, p, ratio, co, cp in goals:
            speed_ok = "met" if ratio >= 1.0 else "**not met**"
            cost_ok = "–" if co is None or cp is None else ("met" if co >= cp else "**not met**")
            md.append("| %s | %s | %s | %.2f× | %s | %s | %s | %s |" % (
                _curve_label(c), SHORT.get(k, k), SHORT.get(p, p), ratio, speed_ok,
                "%.2f" % co if co is not None else "–", "%.2f" % cp if cp is not None else "–", cost_ok))
        md.append("")
        md.extend(curve_verdict(st, goals))
    load = st.get("loadavg")
    if load:
        cores = load[2] if len(load) > 2 else 0
        busy = cores and max(load[0][0], load[1][0]) > cores
        md.append("Load average (1/5/15 min) when the study started: %s; when it ended: %s, on %s cores.%s\n" % (
            " / ".join("%.1f" % x for x in load[0]), " / ".join("%.1f" % x for x in load[1]), cores or "?",
            " The load was above the core count: other jobs shared the machine during the run, so absolute "
            "figures are noisy and only the ratios between sides interleaved in this run are worth reading."
            if busy else ""))
    if plots is not None and grouped_bars_cost(cells, plots / "curve_cost.png"):
        md.append("![CURVE/NULL speed ratio per library](plots/curve_cost.png)\n")
    return md


def curve_verdict(st, goals):
    """The honest paragraph: where the two goals are met and where not, from the figures."""
    thr = [g for g in goals if g[0]["key"].get("kind") == "thr"]
    lat = [g for g in goals if g[0]["key"].get("kind") != "thr"]
    out = []
    for name, gs in (("Throughput", thr), ("Latency (64 B round trip)", lat)):
        if not gs:
            continue
        fast = [g for g in gs if g[3] >= 1.0]
        slow = [g for g in gs if g[3] < 1.0]
        cheap = [g for g in gs if g[4] is not None and g[5] is not None and g[4] >= g[5]]
        dear = [g for g in gs if g[4] is not None and g[5] is not None and g[4] < g[5]]

        def where(lst):
            return "; ".join("%s %s %.2f×" % (SHORT.get(g[1], g[1]), _curve_label(g[0]).split(" ", 1)[1], g[3])
                             for g in lst)

        def where_cost(lst):
            return "; ".join("%s %s %.2f vs %.2f" % (SHORT.get(g[1], g[1]), _curve_label(g[0]).split(" ", 1)[1],
                                                    g[4], g[5]) for g in lst)

        txt = "%s: the CURVE speed goal (≥ 1.0× the peer) is met in %d of %d comparisons" % (name, len(fast), len(gs))
        txt += (" (%s)" % where(fast)) if fast else ""
        txt += ("; not met in %s" % where(slow)) if slow else ""
        txt += ". The cost goal (oxmq's CURVE/NULL ≥ the peer's) is met in %d of %d" % (len(cheap), len(cheap) + len(dear))
        txt += ("; not met in %s" % where_cost(dear)) if dear else ""
        out.append("- " + txt + ".")
    out.append("")
    return out


def grouped_bars_cost(cells, path):
    plt = _plt()
    cells = [c for c in cells if c.get("curve_cost")]
    if not cells:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    w = 0.8 / len(CURVE_SIDES)
    drawn = False
    for j, k in enumerate(CURVE_SIDES):
        xs, ys = [], []
        for i, c in enumerate(cells):
            v = c["curve_cost"].get(_curve_metric(c), {}).get(k)
            if v is not None:
                xs.append(i + j * w)
                ys.append(v)
        if xs:
            label = next((c["sides"][k + "_curve"]["label"].rsplit(", ", 1)[0] for c in cells
                          if k + "_curve" in c["sides"]), k)
            ax.bar(xs, ys, w, label=label, color=COLORS.get(k, "#888"))
            drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(cells))])
    ax.set_xticklabels([_curve_label(c) for c in cells], fontsize=8)
    ax.set_ylabel("CURVE speed ÷ NULL speed (1 = free)")
    ax.set_title("What CURVE costs each library (tcp)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_curve(data, out):
    """CURVE.md: study 9 on its own (tables only), so a run of just this study
    can be kept beside the full report without rewriting it."""
    st = data["studies"].get("9")
    if st is None:
        return False
    mach = data["machine"]
    md = ["# oxmq CURVE study (benchmark study 9)", ""]
    md.append("Generated by `bench/run.py`%s on %s: %d repetitions per side after an uncounted warm-up, sides "
              "interleaved, median (min–max). The full benchmark report is [REPORT.md](REPORT.md); raw figures of "
              "this run: `curve.json`." % (" in QUICK mode (tiny counts; not for quoting)" if data.get("quick") else "",
                                             mach["date"], data["reps"]))
    md.append("")
    md.append("Machine: %s, %d cores, %s RAM, kernel %s. Versions: %s." % (
        mach["cpu"], mach["cores"], mach["memory"], mach["kernel"],
        "; ".join("%s %s" % (k, v) for k, v in mach["versions"].items()
                  if k in ("Debian libzmq (pkg-config)", "pyzmq", "oxmq (Python)", "rustc", "oxmq (crate)", "git"))))
    md.append("")
    md.append("## %s\n" % st["title"])
    md.append(ABOUT["9"])
    md.append("")
    md.extend(sec_curve(st))
    md.extend(honest_lines("9", st))
    (Path(out) / "CURVE.md").write_text("\n".join(md) + "\n")
    return True


README_CURVE_BEGIN = ("<!-- CURVE figures: generated from bench/curve.json by `python bench/run.py --report-only` "
                      "(bench-check fails if they differ); do not edit -->")
README_CURVE_END = "<!-- end of generated CURVE figures -->"


def with_range(cell, r, metric):
    """r with its range over the repetitions (results from before ratios carried one)."""
    if "unlike" not in r and lend_note(cell, r["oxmq"]) and not cell["sides"][r["peer"]].get("oxmq"):
        r = dict(r, unlike=lend_note(cell, r["oxmq"]))
    if "lo" in r:
        return r
    lower = metric not in ("msgs_per_s", "mb_per_s", "lines_per_s", "pub_rate")
    mr = side_speed_range(cell["sides"][r["oxmq"]], metric, lower)
    tr = side_speed_range(cell["sides"][r["peer"]], metric, lower)
    if not (mr and tr):
        return r
    lo, hi = mr[0] / tr[1], mr[1] / tr[0]
    return dict(r, lo=lo, hi=hi, overlap=lo <= 1.0 <= hi)


def readme_curve_block(data):
    """The README's CURVE speed figures, from a CURVE run (curve.json): every
    CURVE ratio oxmq ÷ peer with its range, and the run it came from."""
    st = data["studies"]["9"]
    m = data["machine"]
    v = m.get("versions", {})
    names = {"c_libzmq": "Debian libzmq %s" % v.get("Debian libzmq (pkg-config)", "?"),
             "c_libzmq435": "libzmq 4.3.5 (pyzmq's wheel)", "pyzmq": "pyzmq %s" % v.get("pyzmq", "?").split()[0],
             "c_oxmq": "C ABI", "rust_oxmq": "Rust", "oxmq_py": "Python"}
    cols, rows = [], []
    for c in st.get("cells", []):
        metric = _curve_metric(c)
        for r in c.get("ratios", {}).get(metric, []):
            if r["oxmq"].endswith("_curve") and (r["oxmq"], r["peer"]) not in cols:
                cols.append((r["oxmq"], r["peer"]))
    for c in st.get("cells", []):
        metric = _curve_metric(c)
        got = {(r["oxmq"], r["peer"]): with_range(c, r, metric) for r in c.get("ratios", {}).get(metric, [])}
        rows.append("| %s | %s |" % (_curve_label(c), " | ".join(fmt_ratio(got[k]) if k in got else "–" for k in cols)))
    load = st.get("loadavg")
    md = [README_CURVE_BEGIN, ""]
    md.append("CURVE speed, oxmq ÷ peer under CURVE (above 1: oxmq faster; throughput in messages/s, latency in mean "
              "round-trip time), tcp between two processes, median with its range over %d repetitions (≈: the "
              "ranges overlap). Run: %s%s, git %s%s; full tables in `bench/CURVE.md`." % (
                  data["reps"], m.get("date", "?"), " (QUICK mode)" if data.get("quick") else "",
                  v.get("git", "?"), ", load average %.1f–%.1f on %d cores (a shared, loaded machine)" % (
                      load[0][0], load[1][0], load[2]) if load else ""))
    md.append("")
    md.append("| cell | " + " | ".join("%s vs %s" % (names.get(a[:-6], a), names.get(b[:-6], b)) for a, b in cols) + " |")
    md.append("|---|" + "---|" * len(cols))
    md.extend(rows)
    md.extend(["", README_CURVE_END])
    return "\n".join(md)


def update_readme(data, readme):
    """Replace the README's generated CURVE block; False if it has none."""
    text = Path(readme).read_text()
    i, j = text.find(README_CURVE_BEGIN), text.find(README_CURVE_END)
    if i < 0 or j < i:
        return False
    Path(readme).write_text(text[:i] + readme_curve_block(data) + text[j + len(README_CURVE_END):])
    return True


def honest_lines(n, st):
    md = []
    un = unavailable(st)
    for key, (label, why) in un.items():
        md.append("- **%s could not run:** %s" % (label, why))
    m = RATIO_METRIC.get(n)
    if m:
        b = behind(st, m)
        total = sum(len(c.get("ratios", {}).get(m, [])) for c in st.get("cells", []))
        if b:
            worst = "; ".join("%s vs %s at %s: %.2f×" % (c["sides"][r["oxmq"]]["label"], c["sides"][r["peer"]]["label"],
                                                       c["label"], ratio) for ratio, c, r in b[:6])
            md.append("- **oxmq is behind** in %d of %d comparisons (speed ratio < 0.95). Worst: %s." % (
                len(b), total, worst))
        elif total:
            md.append("- oxmq is at or ahead of its peers in all %d comparisons here (speed ratio ≥ 0.95)." % total)
        else:
            md.append("- No oxmq side ran in this study yet, so there is no ratio to report.")
    for f in failures(st):
        md.append("- Failed runs: " + f)
    if st.get("error"):
        md.append("- The study crashed: `%s`" % st["error"])
    return md


def write_all(data, out):
    out = Path(out)
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    for old in plots.glob("*.png"):
        old.unlink()
    mach = data["machine"]
    md = ["# oxmq benchmark report", ""]
    md.append("Generated by `make bench` (`bench/run.py`)%s on %s. Every comparison interleaves its sides "
              "(A B A B ...) over %d repetitions after an uncounted warm-up run; counts are sized so a timed run "
              "lasts about %.1f s (0.6× that in the throughput study, which has many cells). Figures are the "
              "median with min–max across repetitions. **Speed ratio oxmq/peer**: above 1 means oxmq is faster "
              "(for times and costs it is peer time ÷ oxmq time). Each ratio carries its range over the repetitions "
              "(slowest oxmq ÷ fastest peer – fastest oxmq ÷ slowest peer); ≈ marks a ratio whose two sides' ranges "
              "overlap. **Headline claims** (the \"At a glance\" table and each study's \"oxmq is behind\" line) "
              "come only from pinned cells or from cells whose ranges do not overlap, and never from a cell whose "
              "sides do different work: from 4 KiB oxmq's Python package lends an exact `bytes` by reference where "
              "pyzmq and pyomq copy it, so those Python copy cells are marked [lend≠copy], and the *bytearray* rows "
              "(a buffer every library must copy) are the like-for-like Python copy comparison. The machine is "
              "shared and noisy; only ratios measured side by side in one run are worth comparing. Raw figures: "
              "`results.json`." % (
                  " in QUICK mode (tiny counts; not for quoting)" if data.get("quick") else "", mach["date"],
                  data["reps"], data["target_s"]))
    md.append("")
    for note in data.get("notes", []):  # how this run differs from one plain `make bench`
        md.append("**Note:** %s" % note)
        md.append("")
    md.append("## Machine\n")
    md.append("- CPU: %s, %d cores, %s RAM; kernel %s; pinning with taskset: %s" % (
        mach["cpu"], mach["cores"], mach["memory"], mach["kernel"], "yes" if mach["taskset"] else "no"))
    for k, v in mach["versions"].items():
        md.append("- %s: %s" % (k, v))
    md.append("")
    md.extend(sec_trailing(data))
    md.extend(sec_goals(data))
    md.extend(sec_warnings(data))
    md.append("## At a glance\n")
    md.append("```")
    md.extend(summary_lines(data))
    md.append("```")
    md.append("")
    for n in ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13"):
        st = data["studies"].get(n)
        if st is None:
            if n == "9" and (out / "CURVE.md").is_file():
                md.append("## 9. CURVE security\n")
                md.append("Not in this run; the last run of the CURVE study alone is in [CURVE.md](CURVE.md).\n")
            continue
        md.append("## %s. %s\n" % (n, st["title"]))
        md.append(ABOUT.get(n, ""))
        md.append("")
        try:
            md.extend(SECTIONS[n](st, plots, data))
        except Exception as e:  # noqa: BLE001 - one broken section must not lose the report
            md.append("(rendering this section failed: `%r`)" % e)
        md.append("")
        md.extend(honest_lines(n, st))
        md.append("")
    md.extend(conformance_report.section())
    (out / "REPORT.md").write_text("\n".join(md) + "\n")


# --- summary -----------------------------------------------------------------

HEADLINE = {
    "1": (lambda c: True, ["ns_per_call"]),
    "2": (lambda c: (c["key"]["transport"], c["key"]["size"], c["key"]["mode"]) in {
        ("tcp", 16, "copy"), ("tcp", 65536, "copy"), ("tcp", 1 << 20, "copy"), ("tcp", 1 << 20, "zc"),
        ("ipc", 16, "copy"), ("inproc", 16, "copy")}, ["msgs_per_s"]),
    "3": (lambda c: c["key"]["size"] == 64, ["mean_us", "p99_us"]),
    "4": (lambda c: True, ["seconds"]),
    "5": (lambda c: True, ["client_seconds", "pub_rate"]),
    "6": (lambda c: True, ["lines_per_s", "cpu_s_per_mline"]),
    "7": (lambda c: True, ["us_per_call"]),
    "8": (lambda c: True, ["mb_per_s"]),
    "9": (lambda c: c["key"].get("size") in (64, 1 << 20), ["msgs_per_s", "mean_us"]),
    "10": (lambda c: True, ["msgs_per_s"]),
    "11": (lambda c: True, ["us_per_round_trip", "lines_per_s"]),
    "12": (lambda c: True, ["rss_mib"]),
    "13": (lambda c: c["key"].get("hosts") == "loopback" and c["key"].get("connections") != 10,
           ["connect_seconds", "router_kib_per_conn", "p99_us", "delivered_per_s"]),
}


def summary_lines(data):
    rows = []
    for n in ("8", "1", "2", "3", "4", "5", "6", "7", "9", "10", "11", "12", "13"):
        st = data["studies"].get(n)
        if not st:
            continue
        pick, metrics = HEADLINE[n]
        for c in st.get("cells", []):
            if not pick(c):
                continue
            for key, e in c["sides"].items():
                if "unavailable" in e:
                    rows.append((n, c["label"], e["label"], "not available", ""))
                    continue
                for m in metrics:
                    d = e["metrics"].get(m)
                    if not d:
                        continue
                    rows.append((n, c["label"], e["label"], "%s: %s" % (m, fmt_stat(d, m)),
                                 ratio_text(c, m, key, headline=True)))
    w = [max([len(r[i]) for r in rows] + [5]) for i in range(4)]
    head = ("#", "case", "side", "median (min–max)", "speed ratio oxmq/peer")
    lines = ["%-*s  %-*s  %-*s  %-*s  %s" % (w[0], head[0], w[1], head[1], w[2], head[2], w[3], head[3], head[4])]
    for r in rows:
        reason = ""
        lines.append("%-*s  %-*s  %-*s  %-*s  %s" % (w[0], r[0], w[1], r[1], w[2], r[2], w[3], r[3], r[4] or reason))
    return lines


def print_summary(data):
    print("\n".join(summary_lines(data)))
    un = []
    for n, st in sorted(data["studies"].items()):
        for key, (label, why) in unavailable(st).items():
            un.append((n, label, why))
    if un:
        print("\nnot available (study, side, why):")
        for n, label, why in un:
            print("  %s  %-34s %s" % (n, label, why[:150]))
    print("(%s)" % os.environ.get("BENCH_SUMMARY_NOTE", "details: REPORT.md, results.json"))
