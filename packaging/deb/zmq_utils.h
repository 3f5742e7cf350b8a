/* libzmq's deprecated utility header. The functions it declared in libzmq
   4.x (zmq_stopwatch_*, zmq_sleep, zmq_threadstart/close) are declared by
   oxmq's zmq.h; programs that still include this header get them from it. */
#ifndef OXMQ_ZMQ_UTILS_H_INCLUDED
#define OXMQ_ZMQ_UTILS_H_INCLUDED
#include <zmq.h>
#endif
