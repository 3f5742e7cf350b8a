"""libzmq constants, with pyzmq's names and libzmq 4.3.5's values.

Every constant is available as a plain module attribute (``zmq.PUSH``) and as a
member of an IntEnum/IntFlag (``zmq.SocketType.PUSH``), as in pyzmq >= 23.
"""

from __future__ import annotations

import errno as _errno
from enum import IntEnum, IntFlag

__all__ = [
    "SocketType",
    "SocketOption",
    "ContextOption",
    "MessageOption",
    "Flag",
    "PollEvent",
    "Event",
    "Errno",
    "SecurityMechanism",
    "DeviceType",
    "RouterNotify",
    "ReconnectStop",
    "NormMode",
]

_HAUSNUMERO = 156384712


class Errno(IntEnum):
    """libzmq error numbers (POSIX values come from the platform)."""

    EAGAIN = _errno.EAGAIN
    EFAULT = _errno.EFAULT
    EINVAL = _errno.EINVAL
    EINTR = _errno.EINTR
    ENOENT = _errno.ENOENT
    ENOMEM = _errno.ENOMEM
    ENODEV = _errno.ENODEV
    EMFILE = _errno.EMFILE
    ENOTSUP = getattr(_errno, "ENOTSUP", _HAUSNUMERO + 1)
    EPROTONOSUPPORT = _errno.EPROTONOSUPPORT
    ENOBUFS = _errno.ENOBUFS
    ENETDOWN = _errno.ENETDOWN
    EADDRINUSE = _errno.EADDRINUSE
    EADDRNOTAVAIL = _errno.EADDRNOTAVAIL
    ECONNREFUSED = _errno.ECONNREFUSED
    EINPROGRESS = _errno.EINPROGRESS
    ENOTSOCK = _errno.ENOTSOCK
    EMSGSIZE = _errno.EMSGSIZE
    EAFNOSUPPORT = _errno.EAFNOSUPPORT
    ENETUNREACH = _errno.ENETUNREACH
    ECONNABORTED = _errno.ECONNABORTED
    ECONNRESET = _errno.ECONNRESET
    ENOTCONN = _errno.ENOTCONN
    ETIMEDOUT = _errno.ETIMEDOUT
    EHOSTUNREACH = _errno.EHOSTUNREACH
    ENETRESET = _errno.ENETRESET
    HAUSNUMERO = _HAUSNUMERO
    EFSM = _HAUSNUMERO + 51
    ENOCOMPATPROTO = _HAUSNUMERO + 52
    ETERM = _HAUSNUMERO + 53
    EMTHREAD = _HAUSNUMERO + 54


class ContextOption(IntEnum):
    """Options for ``zmq_ctx_set``/``zmq_ctx_get``."""

    IO_THREADS = 1
    MAX_SOCKETS = 2
    SOCKET_LIMIT = 3
    THREAD_PRIORITY = 3
    THREAD_SCHED_POLICY = 4
    MAX_MSGSZ = 5
    MSG_T_SIZE = 6
    THREAD_AFFINITY_CPU_ADD = 7
    THREAD_AFFINITY_CPU_REMOVE = 8
    THREAD_NAME_PREFIX = 9
    ZERO_COPY_RECV = 10
    IPV6 = 42
    BLOCKY = 70


class SocketType(IntEnum):
    """Socket types."""

    PAIR = 0
    PUB = 1
    SUB = 2
    REQ = 3
    REP = 4
    DEALER = 5
    ROUTER = 6
    PULL = 7
    PUSH = 8
    XPUB = 9
    XSUB = 10
    STREAM = 11
    # deprecated aliases
    XREQ = 5
    XREP = 6
    UPSTREAM = 7
    DOWNSTREAM = 8
    # draft
    SERVER = 12
    CLIENT = 13
    RADIO = 14
    DISH = 15
    GATHER = 16
    SCATTER = 17
    DGRAM = 18
    PEER = 19
    CHANNEL = 20


class _OptType:
    int = "int"
    int64 = "int64"
    bytes = "bytes"
    fd = "fd"


class SocketOption(IntEnum):
    """Socket options (``setsockopt``/``getsockopt``)."""

    _opt_type: str

    def __new__(cls, value: int, opt_type: str = _OptType.int):
        obj = int.__new__(cls, value)
        obj._value_ = value
        obj._opt_type = opt_type
        return obj

    HWM = 1
    AFFINITY = 4, _OptType.int64
    ROUTING_ID = 5, _OptType.bytes
    SUBSCRIBE = 6, _OptType.bytes
    UNSUBSCRIBE = 7, _OptType.bytes
    RATE = 8
    RECOVERY_IVL = 9
    SNDBUF = 11
    RCVBUF = 12
    RCVMORE = 13
    FD = 14, _OptType.fd
    EVENTS = 15
    TYPE = 16
    LINGER = 17
    RECONNECT_IVL = 18
    BACKLOG = 19
    RECONNECT_IVL_MAX = 21
    MAXMSGSIZE = 22, _OptType.int64
    SNDHWM = 23
    RCVHWM = 24
    MULTICAST_HOPS = 25
    RCVTIMEO = 27
    SNDTIMEO = 28
    LAST_ENDPOINT = 32, _OptType.bytes
    ROUTER_MANDATORY = 33
    TCP_KEEPALIVE = 34
    TCP_KEEPALIVE_CNT = 35
    TCP_KEEPALIVE_IDLE = 36
    TCP_KEEPALIVE_INTVL = 37
    IMMEDIATE = 39
    XPUB_VERBOSE = 40
    ROUTER_RAW = 41
    IPV6 = 42
    MECHANISM = 43
    PLAIN_SERVER = 44
    PLAIN_USERNAME = 45, _OptType.bytes
    PLAIN_PASSWORD = 46, _OptType.bytes
    CURVE_SERVER = 47
    CURVE_PUBLICKEY = 48, _OptType.bytes
    CURVE_SECRETKEY = 49, _OptType.bytes
    CURVE_SERVERKEY = 50, _OptType.bytes
    PROBE_ROUTER = 51
    REQ_CORRELATE = 52
    REQ_RELAXED = 53
    CONFLATE = 54
    ZAP_DOMAIN = 55, _OptType.bytes
    ROUTER_HANDOVER = 56
    TOS = 57
    CONNECT_ROUTING_ID = 61, _OptType.bytes
    GSSAPI_SERVER = 62
    GSSAPI_PRINCIPAL = 63, _OptType.bytes
    GSSAPI_SERVICE_PRINCIPAL = 64, _OptType.bytes
    GSSAPI_PLAINTEXT = 65
    HANDSHAKE_IVL = 66
    SOCKS_PROXY = 68, _OptType.bytes
    XPUB_NODROP = 69
    BLOCKY = 70
    XPUB_MANUAL = 71
    XPUB_WELCOME_MSG = 72, _OptType.bytes
    STREAM_NOTIFY = 73
    INVERT_MATCHING = 74
    HEARTBEAT_IVL = 75
    HEARTBEAT_TTL = 76
    HEARTBEAT_TIMEOUT = 77
    XPUB_VERBOSER = 78
    CONNECT_TIMEOUT = 79
    TCP_MAXRT = 80
    THREAD_SAFE = 81
    MULTICAST_MAXTPDU = 84
    VMCI_BUFFER_SIZE = 85, _OptType.int64
    VMCI_BUFFER_MIN_SIZE = 86, _OptType.int64
    VMCI_BUFFER_MAX_SIZE = 87, _OptType.int64
    VMCI_CONNECT_TIMEOUT = 88
    USE_FD = 89
    GSSAPI_PRINCIPAL_NAMETYPE = 90
    GSSAPI_SERVICE_PRINCIPAL_NAMETYPE = 91
    BINDTODEVICE = 92, _OptType.bytes
    # deprecated aliases
    IDENTITY = 5, _OptType.bytes
    CONNECT_RID = 61, _OptType.bytes
    TCP_ACCEPT_FILTER = 38, _OptType.bytes
    IPC_FILTER_PID = 58
    IPC_FILTER_UID = 59
    IPC_FILTER_GID = 60
    IPV4ONLY = 31
    DELAY_ATTACH_ON_CONNECT = 39
    FAIL_UNROUTABLE = 33
    ROUTER_BEHAVIOR = 33
    # draft
    ZAP_ENFORCE_DOMAIN = 93
    LOOPBACK_FASTPATH = 94
    METADATA = 95, _OptType.bytes
    MULTICAST_LOOP = 96
    ROUTER_NOTIFY = 97
    XPUB_MANUAL_LAST_VALUE = 98
    SOCKS_USERNAME = 99, _OptType.bytes
    SOCKS_PASSWORD = 100, _OptType.bytes
    IN_BATCH_SIZE = 101
    OUT_BATCH_SIZE = 102
    WSS_KEY_PEM = 103, _OptType.bytes
    WSS_CERT_PEM = 104, _OptType.bytes
    WSS_TRUST_PEM = 105, _OptType.bytes
    WSS_HOSTNAME = 106, _OptType.bytes
    WSS_TRUST_SYSTEM = 107
    ONLY_FIRST_SUBSCRIBE = 108
    RECONNECT_STOP = 109
    HELLO_MSG = 110, _OptType.bytes
    DISCONNECT_MSG = 111, _OptType.bytes
    PRIORITY = 112
    BUSY_POLL = 113
    HICCUP_MSG = 114, _OptType.bytes
    XSUB_VERBOSE_UNSUBSCRIBE = 115
    TOPICS_COUNT = 116
    NORM_MODE = 117
    NORM_UNICAST_NACK = 118
    NORM_BUFFER_SIZE = 119
    NORM_SEGMENT_SIZE = 120
    NORM_BLOCK_SIZE = 121
    NORM_NUM_PARITY = 122
    NORM_NUM_AUTOPARITY = 123
    NORM_PUSH = 124
    # oxmq-only, read-only: the counters of Socket.stats() (libzmq has none).
    STATS_MSGS_IN = 20000, _OptType.int64
    STATS_BYTES_IN = 20001, _OptType.int64
    STATS_MSGS_OUT = 20002, _OptType.int64
    STATS_BYTES_OUT = 20003, _OptType.int64
    STATS_DROPS_HWM = 20004, _OptType.int64
    STATS_DROPS_NO_ROUTE = 20005, _OptType.int64
    STATS_DROPS_CONFLATE = 20006, _OptType.int64
    STATS_DROPS_OVERSIZE = 20007, _OptType.int64
    STATS_RECONNECTS = 20008, _OptType.int64
    STATS_HANDSHAKE_FAILED_PROTOCOL = 20009, _OptType.int64
    STATS_HANDSHAKE_FAILED_AUTH = 20010, _OptType.int64
    STATS_HANDSHAKE_FAILED_TIMEOUT = 20011, _OptType.int64
    STATS_HANDSHAKE_FAILED_OTHER = 20012, _OptType.int64
    STATS_QUEUED_IN = 20013, _OptType.int64
    STATS_QUEUED_OUT = 20014, _OptType.int64
    STATS_PEERS = 20015, _OptType.int64


class MessageOption(IntEnum):
    """Frame properties (``Frame.get``)."""

    MORE = 1
    SRCFD = 2
    SHARED = 3


class Flag(IntFlag):
    """Send/receive flags."""

    DONTWAIT = 1
    NOBLOCK = 1
    SNDMORE = 2


class RouterNotify(IntEnum):
    """Values of ROUTER_NOTIFY (draft)."""

    CONNECT = 1
    DISCONNECT = 2


class NormMode(IntEnum):
    """Values of NORM_MODE (draft)."""

    FIXED = 0
    CC = 1
    CCL = 2
    CCE = 3
    CCE_ECNONLY = 4


class SecurityMechanism(IntEnum):
    """Values of MECHANISM."""

    NULL = 0
    PLAIN = 1
    CURVE = 2
    GSSAPI = 3


class ReconnectStop(IntEnum):
    """Values of RECONNECT_STOP (draft)."""

    CONN_REFUSED = 0x1
    HANDSHAKE_FAILED = 0x2
    AFTER_DISCONNECT = 0x4


class Event(IntFlag):
    """Socket monitor events."""

    PROTOCOL_ERROR_WS_UNSPECIFIED = 0x30000000
    PROTOCOL_ERROR_ZMTP_UNSPECIFIED = 0x10000000
    PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND = 0x10000001
    PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE = 0x10000002
    PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE = 0x10000003
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED = 0x10000011
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE = 0x10000012
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO = 0x10000013
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE = 0x10000014
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR = 0x10000015
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY = 0x10000016
    PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME = 0x10000017
    PROTOCOL_ERROR_ZMTP_INVALID_METADATA = 0x10000018
    PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC = 0x11000001
    PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH = 0x11000002
    PROTOCOL_ERROR_ZAP_UNSPECIFIED = 0x20000000
    PROTOCOL_ERROR_ZAP_MALFORMED_REPLY = 0x20000001
    PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID = 0x20000002
    PROTOCOL_ERROR_ZAP_BAD_VERSION = 0x20000003
    PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE = 0x20000004
    PROTOCOL_ERROR_ZAP_INVALID_METADATA = 0x20000005
    CONNECTED = 0x0001
    CONNECT_DELAYED = 0x0002
    CONNECT_RETRIED = 0x0004
    LISTENING = 0x0008
    BIND_FAILED = 0x0010
    ACCEPTED = 0x0020
    ACCEPT_FAILED = 0x0040
    CLOSED = 0x0080
    CLOSE_FAILED = 0x0100
    DISCONNECTED = 0x0200
    MONITOR_STOPPED = 0x0400
    HANDSHAKE_FAILED_NO_DETAIL = 0x0800
    HANDSHAKE_SUCCEEDED = 0x1000
    HANDSHAKE_FAILED_PROTOCOL = 0x2000
    HANDSHAKE_FAILED_AUTH = 0x4000
    ALL_V1 = 0xFFFF
    ALL = 0xFFFF
    PIPES_STATS = 0x10000
    ALL_V2 = ALL_V1 | PIPES_STATS


class PollEvent(IntFlag):
    """Poll events."""

    POLLIN = 1
    POLLOUT = 2
    POLLERR = 4
    POLLPRI = 8


class DeviceType(IntEnum):
    """Legacy device types for ``zmq.device``."""

    STREAMER = 1
    FORWARDER = 2
    QUEUE = 3


# Plain module-level names for every enum member (zmq.PUSH, zmq.LINGER, ...).
_ENUMS = [
    Errno,
    ContextOption,
    SocketType,
    SocketOption,
    MessageOption,
    Flag,
    RouterNotify,
    NormMode,
    SecurityMechanism,
    ReconnectStop,
    Event,
    PollEvent,
    DeviceType,
]

for _enum in _ENUMS:
    for _name, _member in _enum.__members__.items():
        if _enum is RouterNotify:
            _name = "NOTIFY_" + _name
        elif _enum is NormMode:
            _name = "NORM_" + _name
        elif _enum is Event and not _name.startswith("PROTOCOL_ERROR"):
            _name = "EVENT_" + _name
        elif _enum is ReconnectStop:
            _name = "RECONNECT_STOP_" + _name
        globals()[_name] = _member
        __all__.append(_name)

# Plain ints that are not enum members in pyzmq.
VERSION_MAJOR = 4
VERSION_MINOR = 3
VERSION_PATCH = 5
VERSION = VERSION_MAJOR * 10000 + VERSION_MINOR * 100 + VERSION_PATCH
IO_THREADS_DFLT = 1
MAX_SOCKETS_DFLT = 1023
THREAD_PRIORITY_DFLT = -1
THREAD_SCHED_POLICY_DFLT = -1
DRAFT_API = True  # the draft sockets and options are built in (zmq.has("draft"))
# oxmq only, event version 2 (socket.monitor(addr, events, event_version=2)):
# a message dropped (value: a DROP_* reason), a pipe reaching its HWM
# (value: the HWM) and a connect's name lookup that found no address (value:
# getaddrinfo's EAI_* code as a signed 64-bit number), on bits libzmq does
# not use (not in EVENT_ALL_V2).
EVENT_MSG_DROPPED = 1 << 32
EVENT_HWM_REACHED = 1 << 33
EVENT_RESOLVE_FAILED = 1 << 34
EVENT_ALL_OXMQ = Event.ALL_V2 | EVENT_MSG_DROPPED | EVENT_HWM_REACHED | EVENT_RESOLVE_FAILED
DROP_HWM = 1
DROP_NO_ROUTE = 2
DROP_CONFLATE = 3
DROP_OVERSIZE = 4
__all__ += [
    "EVENT_MSG_DROPPED",
    "EVENT_HWM_REACHED",
    "EVENT_RESOLVE_FAILED",
    "EVENT_ALL_OXMQ",
    "DROP_HWM",
    "DROP_NO_ROUTE",
    "DROP_CONFLATE",
    "DROP_OVERSIZE",
]
__all__ += [
    "VERSION_MAJOR",
    "VERSION_MINOR",
    "VERSION_PATCH",
    "VERSION",
    "IO_THREADS_DFLT",
    "MAX_SOCKETS_DFLT",
    "THREAD_PRIORITY_DFLT",
    "THREAD_SCHED_POLICY_DFLT",
    "DRAFT_API",
]

del _enum, _name, _member
