# frozen_string_literal: true

module ZMQ
  # Socket types (libzmq numbers).
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
  # ZMQ 2 names rbczmq accepted.
  XREQ = DEALER
  XREP = ROUTER

  SOCKET_TYPES = {
    PAIR: PAIR, PUB: PUB, SUB: SUB, REQ: REQ, REP: REP, DEALER: DEALER,
    ROUTER: ROUTER, PULL: PULL, PUSH: PUSH, XPUB: XPUB, XSUB: XSUB,
    XREQ: DEALER, XREP: ROUTER
  }.freeze
  SOCKET_TYPE_NAMES = %w[PAIR PUB SUB REQ REP DEALER ROUTER PULL PUSH XPUB XSUB].freeze

  POLLIN = 1
  POLLOUT = 2
  POLLERR = 4

  # Send/receive flags (libzmq).
  DONTWAIT = 1
  NOBLOCK = DONTWAIT
  SNDMORE = 2

  # Context options (zmq_ctx_set).
  IO_THREADS = 1
  MAX_SOCKETS = 2

  # Socket options by name: [libzmq number, kind]. Kinds: :int, :bool,
  # :bytes (String), :bytes_w (write-only String).
  SOCKET_OPTIONS = {
    affinity: [4, :int], identity: [5, :bytes], routing_id: [5, :bytes],
    rate: [8, :int], recovery_ivl: [9, :int], sndbuf: [11, :int], rcvbuf: [12, :int],
    linger: [17, :int], reconnect_ivl: [18, :int], backlog: [19, :int],
    reconnect_ivl_max: [21, :int], maxmsgsize: [22, :int], sndhwm: [23, :int],
    rcvhwm: [24, :int], multicast_hops: [25, :int], rcvtimeo: [27, :int],
    sndtimeo: [28, :int], last_endpoint: [32, :bytes_r], router_mandatory: [33, :bool_w],
    tcp_keepalive: [34, :int], tcp_keepalive_cnt: [35, :int], tcp_keepalive_idle: [36, :int],
    tcp_keepalive_intvl: [37, :int], immediate: [39, :bool], xpub_verbose: [40, :bool_w],
    ipv6: [42, :bool], probe_router: [51, :bool_w], req_correlate: [52, :bool_w],
    req_relaxed: [53, :bool_w], conflate: [54, :bool], router_handover: [56, :bool_w],
    tos: [57, :int], connect_routing_id: [61, :bytes_w], handshake_ivl: [66, :int],
    xpub_nodrop: [69, :bool_w], heartbeat_ivl: [75, :int], heartbeat_ttl: [76, :int],
    heartbeat_timeout: [77, :int], xpub_verboser: [78, :bool_w]
  }.freeze

  SUBSCRIBE = 6
  UNSUBSCRIBE = 7
  RCVMORE = 13
  FD = 14
  EVENTS = 15
  TYPE = 16
end
