// libzmq 4.3.5's own tests/test_monitor.cpp, unmodified, compiled with the
// draft API so its zmq_socket_monitor_versioned cases (event version 2) are
// in, against libzmq's own zmq.h, its pipes-stats cases
// (ZMQ_EVENT_PIPES_STATS) included. Built and run by
// tests/compat/libzmq_suite/monitor_drafts.sh.
#include "testutil.hpp"
#include "test_monitor.cpp"
