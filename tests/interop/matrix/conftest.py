"""Harness of the interop suite: oxmq (driven through the interop_peer example
over a line protocol, see peerproto.py) against real libzmq (pyzmq).

Both sides are wrapped in objects with the same interface (OxSock, ZSock), so a
test is written once for "socket a" and "socket b" whatever implementation
each one is.

Environment:
    OXPEER=python      use pyzmq_peer.py (libzmq) as the "oxmq" side: harness self-check
    OXPEER=/path/bin   use that interop peer binary
    OXPEER_TRACE=1     echo the peer conversation to stderr
"""

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import zmq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerproto import OPTIONS, SOCKET_TYPES, decode_frames, encode_frames  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent
PEER_BINARY = REPO / "target" / "release" / "examples" / "interop_peer"
MATRIX_FILE = REPO / "target" / "interop-matrix.txt"

# Every blocking call on either side gives up after this long.
IO_TIMEOUT_MS = 5000
# How long the harness waits for a peer reply beyond the socket timeouts.
REPLY_SLACK_S = 10.0

TRACE = os.environ.get("OXPEER_TRACE") == "1"


# --------------------------------------------------------------------------- errors


class PeerError(Exception):
    """A ZeroMQ call failed on either side (errno as libzmq numbers it)."""

    def __init__(self, errno, message, side=""):
        super().__init__(f"{side + ': ' if side else ''}errno {errno}: {message}")
        self.errno = errno
        self.message = message


class PeerDied(AssertionError):
    """The oxmq peer hung or exited; carries the tail of its stderr."""


# --------------------------------------------------------------------------- oxmq peer


def peer_command():
    choice = os.environ.get("OXPEER", "")
    if choice == "python":
        return [sys.executable, str(HERE / "pyzmq_peer.py")], "pyzmq stand-in (libzmq vs libzmq self-check)"
    binary = Path(choice) if choice else PEER_BINARY
    if not binary.exists():
        pytest.exit(
            f"interop peer {binary} not found: run `cargo build --release --example interop_peer -p oxmq` "
            "(or `make test`), or OXPEER=python for the harness self-check",
            returncode=2,
        )
    return [str(binary)], "oxmq"


class OxPeer:
    """One interop peer process, driven command by command."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.stderr_file = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            bufsize=0,
            env={**os.environ, "RUST_BACKTRACE": "1"},
        )
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.buf = b""
        self.broken = False
        self.next_id = 0
        self.open_ids = set()
        self.request("ping", timeout=10)

    # -- plumbing

    def stderr_tail(self, limit=4000):
        try:
            self.stderr_file.seek(0)
            data = self.stderr_file.read()
        except (OSError, ValueError):
            return ""
        return data[-limit:].decode(errors="replace")

    def _die(self, why):
        self.broken = True
        self.kill()
        tail = self.stderr_tail()
        raise PeerDied(f"oxmq peer {why}" + (f"\n--- peer stderr ---\n{tail}" if tail else ""))

    def _write_all(self, data, deadline):
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                self._die("did not read its input in time")
            _, writable, _ = select.select([], [fd], [], left)
            if not writable:
                continue
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                continue
            except BrokenPipeError:
                self._die(f"exited (status {self.proc.poll()})")
            view = view[n:]

    def _read_line(self, deadline, what):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self._die(f"gave no reply to `{what}` in time (hung?)")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self._die(f"exited (status {self.proc.wait()}) during `{what}`")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def request(self, line, timeout=None):
        """Send one command line; return the payload of `ok`, raise PeerError on `err`."""
        if self.broken:
            raise PeerDied("oxmq peer is gone (an earlier command failed)")
        if timeout is None:
            timeout = IO_TIMEOUT_MS / 1000 + REPLY_SLACK_S
        deadline = time.monotonic() + timeout
        what = line if len(line) < 120 else line[:117] + "..."
        if TRACE:
            print(f">> {what}", file=sys.stderr)
        self._write_all(line.encode() + b"\n", deadline)
        reply = self._read_line(deadline, what)
        if TRACE:
            print(f"<< {reply[:200]}", file=sys.stderr)
        if reply == "ok":
            return ""
        if reply.startswith("ok "):
            return reply[3:]
        if reply.startswith("err "):
            _, errno, *msg = reply.split(" ", 2)
            raise PeerError(int(errno), msg[0] if msg else "", side="oxmq")
        self._die(f"sent a malformed reply {reply[:200]!r} to `{what}`")

    # -- API

    def socket(self, kind, defaults=True):
        self.next_id += 1
        sid = f"s{self.next_id}"
        self.request(f"socket {sid} {kind}")
        self.open_ids.add(sid)
        s = OxSock(self, sid, kind)
        if defaults:
            s.setopt("linger", 0)
            s.setopt("rcvtimeo", IO_TIMEOUT_MS)
            s.setopt("sndtimeo", IO_TIMEOUT_MS)
        return s

    def zap(self, policy, *fields):
        """Start a ZAP handler in the peer's context (see peerproto.py)."""
        self.request("zap " + ":".join([policy] + [bytes(f).hex() for f in fields]))

    def close_all(self):
        for sid in sorted(self.open_ids):
            self.request(f"close {sid}")
        self.open_ids.clear()
        self.request("zap off")

    def quit(self):
        if self.broken or self.proc.poll() is not None:
            return
        try:
            self.request("quit", timeout=10)
            self.proc.wait(timeout=10)
        except (PeerDied, PeerError, subprocess.TimeoutExpired):
            self.kill()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


class OxSock:
    impl = "oxmq"

    def __init__(self, peer, sid, kind):
        self.peer = peer
        self.sid = sid
        self.kind = kind

    def __repr__(self):
        return f"oxmq:{self.kind}"

    def setopt(self, name, value):
        _, kind = OPTIONS[name]
        text = bytes(value).hex() if kind == "bytes" else str(int(value))
        self.peer.request(f"setopt {self.sid} {name} {text}")

    def getopt(self, name):
        _, kind = OPTIONS[name]
        text = self.peer.request(f"getopt {self.sid} {name}")
        if kind == "bytes":
            return bytes.fromhex(text)
        if kind == "str":
            return text
        return int(text)

    def bind(self, endpoint):
        return self.peer.request(f"bind {self.sid} {endpoint}")

    def connect(self, endpoint):
        self.peer.request(f"connect {self.sid} {endpoint}")

    def unbind(self, endpoint):
        self.peer.request(f"unbind {self.sid} {endpoint}")

    def disconnect(self, endpoint):
        self.peer.request(f"disconnect {self.sid} {endpoint}")

    def send(self, frames, dontwait=False):
        size = sum(len(f) for f in frames)
        timeout = IO_TIMEOUT_MS / 1000 + REPLY_SLACK_S + size / 2e6
        flags = " dontwait" if dontwait else ""
        self.peer.request(f"send {self.sid} {encode_frames(frames)}{flags}", timeout=timeout)

    def recv(self, dontwait=False, timeout=None):
        flags = " dontwait" if dontwait else ""
        return decode_frames(self.peer.request(f"recv {self.sid}{flags}", timeout=timeout))

    def prop(self, name):
        return bytes.fromhex(self.peer.request(f"prop {self.sid} {name}"))

    def monitor(self):
        self.peer.request(f"monitor {self.sid}")

    def event(self, timeout_ms=IO_TIMEOUT_MS):
        """The next monitor event as (event, value)."""
        ev, value = self.peer.request(f"event {self.sid} {timeout_ms}", timeout=timeout_ms / 1000 + REPLY_SLACK_S).split()
        return int(ev), int(value)

    def close(self):
        if self.sid in self.peer.open_ids:
            self.peer.open_ids.discard(self.sid)
            self.peer.request(f"close {self.sid}")


# --------------------------------------------------------------------------- libzmq side


class ZSock:
    """A pyzmq socket behind the same interface as OxSock."""

    impl = "libzmq"

    def __init__(self, ctx, kind, defaults=True):
        self.kind = kind
        self.sock = ctx.socket(SOCKET_TYPES[kind])
        self.sock.linger = 0
        if defaults:
            self.sock.rcvtimeo = IO_TIMEOUT_MS
            self.sock.sndtimeo = IO_TIMEOUT_MS

    def __repr__(self):
        return f"libzmq:{self.kind}"

    def _call(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except zmq.ZMQError as e:
            raise PeerError(e.errno, e.strerror, side="libzmq") from None

    def setopt(self, name, value):
        num, kind = OPTIONS[name]
        self._call(self.sock.setsockopt, num, bytes(value) if kind == "bytes" else int(value))

    def getopt(self, name):
        num, kind = OPTIONS[name]
        value = self._call(self.sock.getsockopt, num)
        if kind == "str" and isinstance(value, bytes):
            return value.decode()
        return value

    def bind(self, endpoint):
        self._call(self.sock.bind, endpoint)
        return self.sock.getsockopt(zmq.LAST_ENDPOINT).decode()

    def connect(self, endpoint):
        self._call(self.sock.connect, endpoint)

    def unbind(self, endpoint):
        self._call(self.sock.unbind, endpoint)

    def disconnect(self, endpoint):
        self._call(self.sock.disconnect, endpoint)

    def send(self, frames, dontwait=False):
        self._call(self.sock.send_multipart, list(frames), flags=zmq.DONTWAIT if dontwait else 0)

    def recv(self, dontwait=False, timeout=None):
        return self._call(self.sock.recv_multipart, flags=zmq.DONTWAIT if dontwait else 0)

    def close(self):
        if not self.sock.closed:
            self.sock.close(linger=0)


# --------------------------------------------------------------------------- fixtures


class PeerManager:
    """Keeps one peer process per module, restarting it if a test broke it."""

    def __init__(self):
        self.cmd, self.label = peer_command()
        self.peer = None

    def get(self):
        if self.peer is None or self.peer.broken or self.peer.proc.poll() is not None:
            if self.peer is not None:
                self.peer.kill()
            self.peer = OxPeer(self.cmd)
        return self.peer

    def shutdown(self):
        if self.peer is not None:
            self.peer.quit()
            self.peer = None


@pytest.fixture(scope="module")
def ox_manager():
    mgr = PeerManager()
    yield mgr
    mgr.shutdown()


@pytest.fixture
def ox(ox_manager):
    """The oxmq peer; every socket a test creates is closed after it."""
    peer = ox_manager.get()
    yield peer
    if not peer.broken:
        try:
            peer.close_all()
        except (PeerError, PeerDied):
            peer.broken = True
    if peer.proc.poll() is not None and not peer.broken:
        peer.broken = True


@pytest.fixture(scope="session")
def zctx():
    ctx = zmq.Context()
    yield ctx
    ctx.term()


@pytest.fixture
def lz(zctx):
    """Factory of libzmq sockets (closed after the test): lz("PULL")."""
    made = []

    def make(kind, defaults=True):
        s = ZSock(zctx, kind, defaults)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture(scope="session")
def ipc_dir():
    d = tempfile.mkdtemp(prefix="oxmq-ipc-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


_endpoint_counter = [0]


@pytest.fixture
def endpoint(ipc_dir):
    """endpoint("tcp") / endpoint("ipc"): a bindable endpoint, unique per call."""

    def make(transport):
        if transport == "tcp":
            return "tcp://127.0.0.1:*"
        if transport == "ipc":
            _endpoint_counter[0] += 1
            return f"ipc://{ipc_dir}/e{os.getpid()}-{_endpoint_counter[0]}.ipc"
        raise ValueError(transport)

    return make


# --------------------------------------------------------------------------- the matrix

MATRIX_PAIRS = [
    "PAIR/PAIR",
    "PUB/SUB",
    "SUB/PUB",
    "PUB/XSUB",
    "XSUB/PUB",
    "XPUB/SUB",
    "SUB/XPUB",
    "XPUB/XSUB",
    "XSUB/XPUB",
    "PUSH/PULL",
    "PULL/PUSH",
    "REQ/REP",
    "REP/REQ",
    "REQ/ROUTER",
    "ROUTER/REQ",
    "DEALER/REP",
    "REP/DEALER",
    "DEALER/DEALER",
    "DEALER/ROUTER",
    "ROUTER/DEALER",
    "ROUTER/ROUTER",
]
MATRIX_COLUMNS = [
    ("tcp", "oxmq"),
    ("tcp", "libzmq"),
    ("ipc", "oxmq"),
    ("ipc", "libzmq"),
]

# (pair, transport, binder) -> ("PASS" | "FAIL" | "SKIP", short reason)
_matrix_results = {}


# (mechanism, pair, transport, server) -> ("PASS" | "FAIL" | "SKIP", short reason)
_security_results = {}
SECURITY_PAIRS = ["REQ/REP", "PUSH/PULL", "DEALER/ROUTER"]
SECURITY_MECHS = ["PLAIN", "CURVE"]
SECURITY_COLUMNS = [(t, s) for t in ("tcp", "ipc") for s in ("oxmq", "libzmq")]


def pytest_configure(config):
    config.addinivalue_line("markers", "interop_matrix: a cell of the interop matrix")
    config.addinivalue_line("markers", "security_matrix: a cell of the security interop matrix")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not hasattr(item, "callspec"):
        return
    params = item.callspec.params
    if item.get_closest_marker("security_matrix") is not None:
        key = (params["mech"], params["pair"], params["transport"], params["server"])
        _record(_security_results, key, report, call)
        return
    if item.get_closest_marker("interop_matrix") is None:
        return
    key = (params["pair"], params["transport"], params["binder"])
    _record(_matrix_results, key, report, call)


def _record(results, key, report, call):
    if report.when == "call" or report.failed or report.skipped:
        if report.passed and report.when != "call":
            return
        if report.failed:
            reason = ""
            if call.excinfo is not None:
                reason = f"{call.excinfo.typename}: {call.excinfo.value}".splitlines()[0][:160]
            status = "FAIL"
        elif report.skipped:
            status, reason = "SKIP", ""
        else:
            status, reason = "PASS", ""
        # A teardown failure after a passing call still fails the cell.
        if key in results and results[key][0] == "FAIL":
            return
        results[key] = (status, reason)


def _render_matrix(label):
    cols = [f"{t}/{b}-binds" for t, b in MATRIX_COLUMNS]
    width0 = max(len("oxmq/libzmq"), max(len(p) for p in MATRIX_PAIRS))
    widths = [max(len(c), 4) for c in cols]
    lines = [f"interop matrix: oxmq side = {label}; libzmq {zmq.zmq_version()} (pyzmq {zmq.__version__})"]
    header = "oxmq/libzmq".ljust(width0) + " | " + " | ".join(c.ljust(w) for c, w in zip(cols, widths))
    lines.append(header)
    lines.append("-" * len(header))
    passed = total = 0
    failures = []
    for pair in MATRIX_PAIRS:
        cells = []
        for (transport, binder), w in zip(MATRIX_COLUMNS, widths):
            status, reason = _matrix_results.get((pair, transport, binder), ("-", ""))
            if status != "-":
                total += 1
                passed += status == "PASS"
            if status == "FAIL":
                failures.append(f"  {pair} {transport}/{binder}-binds: {reason}")
            cells.append(status.ljust(w))
        lines.append(pair.ljust(width0) + " | " + " | ".join(cells))
    lines.append("-" * len(header))
    if failures:
        lines.append("failed cells:")
        lines.extend(failures)
    lines.append(f"interop matrix: {passed}/{total} cells passed")
    return lines


def _render_security():
    cols = [f"{t}/{s}-serves" for t, s in SECURITY_COLUMNS]
    rows = [(m, p) for m in SECURITY_MECHS for p in SECURITY_PAIRS]
    width0 = max(len("mechanism pair (client/server)"), max(len(f"{m} {p}") for m, p in rows))
    widths = [max(len(c), 4) for c in cols]
    lines = [f"security interop matrix: oxmq vs libzmq {zmq.zmq_version()} (ZAP handler on the serving side)"]
    header = "mechanism pair (client/server)".ljust(width0) + " | " + " | ".join(c.ljust(w) for c, w in zip(cols, widths))
    lines += [header, "-" * len(header)]
    passed = total = 0
    failures = []
    for m, p in rows:
        cells = []
        for (t, srv), w in zip(SECURITY_COLUMNS, widths):
            status, reason = _security_results.get((m, p, t, srv), ("-", ""))
            if status != "-":
                total += 1
                passed += status == "PASS"
            if status == "FAIL":
                failures.append(f"  {m} {p} {t}/{srv}-serves: {reason}")
            cells.append(status.ljust(w))
        lines.append(f"{m} {p}".ljust(width0) + " | " + " | ".join(cells))
    lines.append("-" * len(header))
    if failures:
        lines.append("failed cells:")
        lines.extend(failures)
    lines.append(f"security interop matrix: {passed}/{total} cells passed")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _security_results:
        terminalreporter.section("security interop matrix")
        for line in _render_security():
            terminalreporter.write_line(line)
    if not _matrix_results:
        return
    try:
        label = peer_command()[1]
    except BaseException:  # pytest.exit in peer_command: nothing useful to add
        label = "?"
    lines = _render_matrix(label)
    terminalreporter.section("interop matrix")
    for line in lines:
        terminalreporter.write_line(line)
    try:
        MATRIX_FILE.parent.mkdir(parents=True, exist_ok=True)
        MATRIX_FILE.write_text("\n".join(lines) + "\n")
    except OSError:
        pass
