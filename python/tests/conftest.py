"""Fixtures for the oxmq Python package tests.

Every test gets a fresh oxmq context whose sockets are closed (linger 0) and
which is terminated afterwards; sockets get a receive timeout so that a broken
test fails instead of hanging.
"""

import os
import tempfile

import pytest

import oxmq

RCVTIMEO = 5000


@pytest.fixture
def ctx():
    c = oxmq.Context()
    yield c
    c.destroy(linger=0)


@pytest.fixture
def make(ctx):
    """make(type) -> socket with RCVTIMEO/SNDTIMEO set, closed at teardown."""

    def _make(kind, **opts):
        s = ctx.socket(kind)
        s.rcvtimeo = RCVTIMEO
        s.sndtimeo = RCVTIMEO
        for k, v in opts.items():
            setattr(s, k, v)
        return s

    return _make


@pytest.fixture
def pair(make):
    """A connected inproc PAIR pair (a, b)."""
    a = make(oxmq.PAIR)
    b = make(oxmq.PAIR)
    name = "inproc://pair-%d" % id(a)
    a.bind(name)
    b.connect(name)
    return a, b


@pytest.fixture
def ipc_dir():
    with tempfile.TemporaryDirectory(prefix="oxmq-py-") as d:
        yield d


def ipc_endpoint(d, name):
    return "ipc://" + os.path.join(d, name)
