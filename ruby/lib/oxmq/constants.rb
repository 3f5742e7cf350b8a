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

  # Socket monitor events (Socket#monitor), libzmq's numbers.
  EVENT_CONNECTED = 0x0001
  EVENT_CONNECT_DELAYED = 0x0002
  EVENT_CONNECT_RETRIED = 0x0004
  EVENT_LISTENING = 0x0008
  EVENT_BIND_FAILED = 0x0010
  EVENT_ACCEPTED = 0x0020
  EVENT_ACCEPT_FAILED = 0x0040
  EVENT_CLOSED = 0x0080
  EVENT_CLOSE_FAILED = 0x0100
  EVENT_DISCONNECTED = 0x0200
  EVENT_MONITOR_STOPPED = 0x0400
  EVENT_HANDSHAKE_FAILED_NO_DETAIL = 0x0800
  EVENT_HANDSHAKE_SUCCEEDED = 0x1000
  EVENT_HANDSHAKE_FAILED_PROTOCOL = 0x2000
  EVENT_HANDSHAKE_FAILED_AUTH = 0x4000
  EVENT_ALL = 0xFFFF
  EVENT_ALL_V1 = EVENT_ALL
  EVENT_ALL_V2 = EVENT_ALL_V1 | 0x10000
  # oxmq only, version 2: a message dropped (value: a DROP_* reason), a
  # pipe reaching its HWM (value: the HWM) and a connect's name lookup that
  # found no address (value: getaddrinfo's EAI_* code, signed 64-bit); not
  # in EVENT_ALL_V2.
  EVENT_MSG_DROPPED = 1 << 32
  EVENT_HWM_REACHED = 1 << 33
  EVENT_RESOLVE_FAILED = 1 << 34
  EVENT_ALL_OXMQ = EVENT_ALL_V2 | EVENT_MSG_DROPPED | EVENT_HWM_REACHED | EVENT_RESOLVE_FAILED
  DROP_HWM = 1
  DROP_NO_ROUTE = 2
  DROP_CONFLATE = 3
  DROP_OVERSIZE = 4
  # oxmq-only, read-only (getsockopt): the counters of Socket#stats.
  STATS_MSGS_IN = 20000
  STATS_BYTES_IN = 20001
  STATS_MSGS_OUT = 20002
  STATS_BYTES_OUT = 20003
  STATS_DROPS_HWM = 20004
  STATS_DROPS_NO_ROUTE = 20005
  STATS_DROPS_CONFLATE = 20006
  STATS_DROPS_OVERSIZE = 20007
  STATS_RECONNECTS = 20008
  STATS_HANDSHAKE_FAILED_PROTOCOL = 20009
  STATS_HANDSHAKE_FAILED_AUTH = 20010
  STATS_HANDSHAKE_FAILED_TIMEOUT = 20011
  STATS_HANDSHAKE_FAILED_OTHER = 20012
  STATS_QUEUED_IN = 20013
  STATS_QUEUED_OUT = 20014
  STATS_PEERS = 20015
end
