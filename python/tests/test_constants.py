"""Constants, enums, versions: names and values as pyzmq has them."""

import pytest

import oxmq

zmq = pytest.importorskip("zmq")


def test_every_pyzmq_constant_has_the_same_value():
    missing, different = [], []
    for name in dir(zmq.constants):
        if name.startswith("_") or not name.isupper() or name == "TYPE_CHECKING":
            continue
        ref = getattr(zmq.constants, name)
        if not isinstance(ref, int):
            continue
        if not hasattr(oxmq, name):
            missing.append(name)
        elif int(getattr(oxmq, name)) != int(ref):
            different.append((name, int(ref), int(getattr(oxmq, name))))
    assert not missing
    assert not different


@pytest.mark.parametrize(
    "enum",
    ["SocketType", "SocketOption", "Flag", "Errno", "PollEvent", "Event", "ContextOption", "MessageOption", "SecurityMechanism", "DeviceType"],
)
def test_enums_match_pyzmq(enum):
    ours, theirs = getattr(oxmq, enum), getattr(zmq, enum)
    for name, member in theirs.__members__.items():
        assert name in ours.__members__, name
        assert int(ours[name]) == int(member), name


def test_common_values():
    assert oxmq.PUSH == 8 and oxmq.PULL == 7 and oxmq.PAIR == 0
    assert oxmq.NOBLOCK == oxmq.DONTWAIT == 1
    assert oxmq.SNDMORE == 2 and oxmq.RCVMORE == 13
    assert oxmq.POLLIN == 1 and oxmq.POLLOUT == 2 and oxmq.POLLERR == 4
    assert oxmq.EAGAIN == 11
    assert oxmq.EFSM == 156384712 + 51 and oxmq.ETERM == 156384712 + 53
    assert oxmq.IDENTITY == oxmq.ROUTING_ID == 5
    assert oxmq.SocketType.PUSH is oxmq.PUSH
    assert isinstance(oxmq.EVENT_CONNECTED, oxmq.Event)


def test_versions():
    assert oxmq.zmq_version() == "4.3.5"
    assert oxmq.zmq_version_info() == (4, 3, 5)
    assert oxmq.pyzmq_version_info() >= (23,)
    assert isinstance(oxmq.pyzmq_version(), str)
    assert oxmq.has("ipc") is True
    assert oxmq.has("curve") is True  # PLAIN/CURVE/ZAP are in the core
    assert oxmq.has("no-such-thing") is False
    assert oxmq.COPY_THRESHOLD == 65536


def test_strerror_is_libzmqs():
    assert oxmq.strerror(oxmq.ETERM) == "Context was terminated"
    assert oxmq.strerror(oxmq.EFSM) == "Operation cannot be accomplished in current state"
    assert oxmq.strerror(oxmq.EAGAIN) == zmq.strerror(zmq.EAGAIN)
    assert oxmq.strerror(oxmq.ENOTSOCK) == zmq.strerror(zmq.ENOTSOCK)


def test_error_classes():
    assert issubclass(oxmq.ZMQError, oxmq.ZMQBaseError)
    assert issubclass(oxmq.Again, oxmq.ZMQError)
    assert issubclass(oxmq.ContextTerminated, oxmq.ZMQError)
    assert issubclass(oxmq.InterruptedSystemCall, oxmq.ZMQError)
    assert issubclass(oxmq.InterruptedSystemCall, InterruptedError)
    assert issubclass(oxmq.ZMQBindError, oxmq.ZMQBaseError)
    assert issubclass(oxmq.NotDone, oxmq.ZMQBaseError)
    assert issubclass(oxmq.ZMQVersionError, NotImplementedError)
    e = oxmq.ZMQError(oxmq.EINVAL)
    assert e.errno == oxmq.EINVAL and e.strerror == "Invalid argument" and str(e) == "Invalid argument"
    assert oxmq.Again().errno == oxmq.EAGAIN
    assert oxmq.ContextTerminated().errno == oxmq.ETERM
    assert str(oxmq.ZMQError(oxmq.EINVAL, "custom")) == "custom"
    assert "4.3.5" in str(oxmq.ZMQVersionError("5.0", "Feature X"))


def test_module_namespace_like_pyzmq():
    for name in ["Context", "Socket", "Frame", "Message", "MessageTracker", "Poller", "select", "proxy", "device", "zmq_poll", "_FINISHED_TRACKER", "constants", "error"]:
        assert hasattr(oxmq, name), name
    assert oxmq.Message is oxmq.Frame
