/* oxmq: libzmq installs this header for programs written against libzmq 3.x,
   whose utility functions (zmq_stopwatch_*, zmq_sleep, Z85, CURVE keys) all
   moved into zmq.h in 4.x. Such programs still `#include <zmq_utils.h>`, so it
   is installed beside zmq.h and gives them zmq.h. */
#ifndef OXMQ_ZMQ_UTILS_H_INCLUDED
#define OXMQ_ZMQ_UTILS_H_INCLUDED
#include "zmq.h"
#endif
