"""pytest plugin loaded for the test files listed in run.py's VERSION_PINNED:
``zmq.zmq_version_info()`` reports the version in OXMQ_SUITE_PIN_VERSION.

pyzmq skips its steerable-proxy tests on libzmq >= 4.3.5, the version both
pyzmq's bundled libzmq and oxmq report, though both still implement libzmq
4.3's ``zmq_proxy_steerable``. Pinning the reported version to 4.3.4 for that
one file, on both sides alike, runs the tests instead of skipping them."""

import os


def pytest_configure(config):
    pinned = os.environ.get("OXMQ_SUITE_PIN_VERSION")
    if not pinned:
        return
    import zmq

    version = tuple(int(p) for p in pinned.split("."))
    zmq.zmq_version_info = lambda: version
