"""What the throughput (2) and latency (3) studies share: their sides and the
shorter timed runs of the peers issue 12 added."""

THR_IMPLS = ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "pyomq", "oxmq_py"]
PY_THR_IMPLS = ["pyzmq", "pyomq", "oxmq_py"]
# Peers added by issue 12 run shorter timed runs so that the suite stays near its old length. libzmq 4.3.5
# (pyzmq's wheel's, built under bench/c by mk/bench.mk bench-c435) is the C peer issue 21's goals name;
# Debian's 4.3.4 stays as "C, libzmq", the library most programs link.
NEW_PEERS = ["c_libzmq435", "c_omq", "rust_omq", "rust_zeromq", "rust_rzmq", "rust_monocoque"]
NEW_PEER_TARGET = 0.5  # of the cell's seconds per timed run


def peer_side(side, key):
    # As many repetitions as every other side (the report prints each range).
    if key in NEW_PEERS:
        side.target_scale = NEW_PEER_TARGET
    return side
