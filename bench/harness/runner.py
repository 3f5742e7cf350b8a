"""Running programs: start a run's processes in order, pass endpoints along, collect one JSON line each.

Each result also gets "proc_cpu_s": the process's user+system CPU seconds as
the kernel accounts them when it is reaped (wait4: every thread, setup
included), measured the same way for every language, so that a library that
spins shows as CPU time whether or not its program reports any."""

import json
import os
import subprocess
import tempfile
import threading
import time

from harness.config import CAPI_DIR, HAVE_TASKSET, NCPU
from harness.discover import base_env


class RunError(Exception):
    pass


class Proc:
    """One process of a run. ready=True: wait for its "READY ep..." line and make
    the tokens available to later processes as {ep0}, {ep1}. stop=True: the
    orchestrator ends it with SIGTERM once the others are done."""

    def __init__(self, role, impl, prog, args, cpu=None, ready=False, stop=False):
        self.role, self.impl, self.prog, self.args = role, impl, prog, list(args)
        self.cpu, self.ready, self.stop = cpu, ready, stop


class Delay(Proc):
    """A pause between starting two processes (lets subscriptions settle)."""

    def __init__(self, secs):
        super().__init__("delay", None, None, [])
        self.secs = secs


def _drain(stream, lines, ready_evt):
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        lines.append(line)
        if line.startswith("READY"):
            ready_evt.set()
    ready_evt.set()


def _reap(popen, timeout):
    """Wait up to timeout for popen to end, as Popen.wait does, but reap it with
    wait4 to keep its rusage; returns its CPU seconds (user + system)."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        pid, status, ru = os.wait4(popen.pid, os.WNOHANG)
        if pid == popen.pid:
            popen.returncode = os.waitstatus_to_exitcode(status)
            return ru.ru_utime + ru.ru_stime
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(popen.args, timeout)
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.05)


def run_procs(procs, timeout):
    """Start procs in order, wait, and return {role: parsed JSON line}."""
    started = []
    tokens = {}
    cpu = {}
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            if isinstance(p, Delay):
                time.sleep(p.secs)
                continue
            try:
                args = [a.format(**tokens) if isinstance(a, str) else a for a in p.args]
            except KeyError as e:
                raise RunError("%s: the peer's READY line lacks %s" % (p.role, e)) from None
            argv = p.impl.argv(p.prog, *args)
            if p.cpu is not None and HAVE_TASKSET:
                argv = ["taskset", "-c", str(p.cpu % NCPU)] + argv
            env = base_env()
            env.update(p.impl.env)
            err = tempfile.TemporaryFile()
            popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, env=env)
            lines, evt = [], threading.Event()
            th = threading.Thread(target=_drain, args=(popen.stdout, lines, evt), daemon=True)
            th.start()
            started.append((p, popen, lines, th, err))
            if p.ready:
                if not evt.wait(max(0.1, deadline - time.monotonic())):
                    raise RunError("%s: no READY line within the time limit" % p.role)
                ready_lines = [l for l in lines if l.startswith("READY")]
                if not ready_lines:
                    raise RunError("%s exited before READY%s" % (p.role, _stderr_tail(err)))
                for i, tok in enumerate(ready_lines[0].split()[1:]):
                    tokens["ep%d" % i] = tok
        # Wait for the processes that end on their own, then stop the others.
        for p, popen, lines, th, err in started:
            if p.stop:
                continue
            try:
                cpu[p.role] = _reap(popen, max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise RunError("%s timed out after %.0f s" % (p.role, timeout)) from None
        for p, popen, lines, th, err in started:
            if p.stop and popen.poll() is None:
                popen.terminate()
                try:
                    cpu[p.role] = _reap(popen, 10)
                except subprocess.TimeoutExpired:
                    raise RunError("%s did not stop on SIGTERM" % p.role) from None
        out = {}
        for p, popen, lines, th, err in started:
            th.join(5)
            if popen.returncode != 0:
                raise RunError("%s exited with %s%s" % (p.role, popen.returncode, _stderr_tail(err)))
            js = [l for l in lines if l.startswith("{")]
            if not js:
                raise RunError("%s printed no JSON result%s" % (p.role, _stderr_tail(err)))
            res = json.loads(js[-1])
            if p.role in cpu:
                res["proc_cpu_s"] = cpu[p.role]
            if p.impl.expect_capi and "lib" in res and str(CAPI_DIR) not in res["lib"]:
                raise RunError("%s ran on %s, not on oxmq's library" % (p.role, res["lib"]))
            if p.impl.expect_lib and "lib" in res and str(p.impl.expect_lib) not in res["lib"]:
                raise RunError("%s ran on %s, not on %s" % (p.role, res["lib"], p.impl.expect_lib))
            out[p.role] = res
        return out
    finally:
        for p, popen, lines, th, err in started:
            if popen.poll() is None:
                popen.kill()
                popen.wait()
            err.close()
        # Remove the ipc socket files a run bound (and the throughput ack's).
        for p in procs:
            for a in p.args:
                if isinstance(a, str) and a.startswith("ipc:///tmp/oxmq-bench-"):
                    for path in (a[6:], a[6:] + "-ack"):
                        try:
                            os.unlink(path)
                        except OSError:
                            pass


def _stderr_tail(err):
    try:
        err.seek(0)
        text = err.read().decode(errors="replace").strip()
    except (OSError, ValueError):
        return ""
    return (": " + " | ".join(text.splitlines()[-3:])[-300:]) if text else ""
