"""Units and number formatting, shared by the runner's log and the report."""

UNITS = {
    "ns_per_call": ("ns", 1), "msgs_per_s": ("msg/s", 1), "mb_per_s": ("MB/s", 1),
    "send_calls_per_s": ("calls/s", 1), "mean_us": ("µs", 1), "p50_us": ("µs", 1), "p99_us": ("µs", 1),
    "seconds": ("s", 1), "pub_rate": ("msg/s", 1), "client_seconds": ("s", 1), "lines_per_s": ("lines/s", 1),
    "cpu_s_per_mline": ("CPU s/M lines", 1), "us_per_call": ("µs", 1), "us_per_round_trip": ("µs", 1),
    "msgs_per_cpu_s": ("msg/CPU-s", 1),
    "recv_msgs_per_cpu_s": ("msg/CPU-s", 1), "send_msgs_per_cpu_s": ("msg/CPU-s", 1), "rss_mib": ("MiB", 1),
    "bytes_per_msg": ("B/msg", 1), "connect_seconds": ("s", 1), "router_kib_per_conn": ("KiB/conn", 1),
    "client_kib_per_conn": ("KiB/conn", 1), "delivered_per_s": ("msg/s", 1), "lag_ms": ("ms", 1),
    "publish_seconds": ("s", 1), "cpu_us_per_ping": ("CPU µs", 1),
    "cpu_us_per_rt": ("CPU µs", 1),
}


def num(v):
    a = abs(v)
    if a >= 1e9:
        return "%.2fG" % (v / 1e9)
    if a >= 1e6:
        return "%.2fM" % (v / 1e6)
    if a >= 1e4:
        return "%.1fk" % (v / 1e3)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3f" % v


def fmt_stat(d, metric=None):
    unit = UNITS.get(metric, ("", 1))[0]
    return "%s (%s–%s)%s" % (num(d["median"]), num(d["min"]), num(d["max"]), (" " + unit) if unit else "")


def size_label(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n
