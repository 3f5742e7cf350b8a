"""zmq.get_includes() and zmq.get_library_dirs() lead to oxmq's own C ABI
(its zmq.h and its drop-in libzmq.so), not to pyzmq's or the system's."""

import ctypes
import os

import oxmq


def test_includes_hold_oxmqs_header():
    inc = oxmq.get_includes()
    assert os.path.basename(inc[1]) == "utils"
    headers = [os.path.join(d, "zmq.h") for d in inc if os.path.exists(os.path.join(d, "zmq.h"))]
    assert len(headers) == 1, inc
    text = open(headers[0]).read()
    assert "#define ZMQ_VERSION_MAJOR 4" in text
    assert "zmq_msg_send" in text


def test_library_dir_holds_oxmqs_libzmq():
    (libdir,) = oxmq.get_library_dirs()
    assert os.path.basename(libdir) == "zmq"
    lib = ctypes.CDLL(os.path.join(libdir, "libzmq.so"))
    major, minor, patch = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    lib.zmq_version(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
    assert (major.value, minor.value) == (4, 3)
