"""The line protocol spoken by interop peers (crates/oxmq/examples/interop_peer.rs
and its pyzmq stand-in, pyzmq_peer.py).

One command per line, fields separated by single spaces (a field may be empty,
but never contains a space); one reply line per command:

    ok                      success, nothing to return
    ok <payload>            success with a value
    err <errno> <message>   failure, errno as libzmq reports it

Commands:

    socket <id> <TYPE>              PAIR PUB SUB REQ REP DEALER ROUTER PULL PUSH XPUB XSUB
    setopt <id> <name> <value>      int options in decimal, bytes options hex-encoded
    getopt <id> <name>              -> ok <decimal> | ok <hex> | ok <string> (last_endpoint)
    bind <id> <endpoint>            -> ok <last_endpoint>
    connect|unbind|disconnect <id> <endpoint>
    send <id> <frames> [flags]      frames: hex, ','-separated (an empty frame is an
                                    empty string between commas); flags: ','-separated
                                    words out of dontwait, sndmore
    recv <id> [flags]               -> ok <frames>; flags: dontwait
    close <id>
    zap <policy>|off                start (or stop) a ZAP handler in the peer's context; policy is one of
                                    allow:<user-id>, deny:<status>,
                                    plain:<user>:<password>:<user-id>, curve:<key>:<user-id>
                                    (fields hex-encoded; 400 when credentials differ)
    prop <id> <name>                -> ok <hex>: a property of the last received message
    monitor <id>                    start collecting the socket's monitor events
    event <id> <ms>                 -> ok <event> <value>: the next one, waiting up to ms
    ping                            -> ok pong
    quit                            closes all sockets, terminates the context, exits

A message has at least one frame, so "ok" (or "ok ") after recv is one empty frame.
"""

# name -> (libzmq option number, kind); kind is "int", "bytes" or "str".
OPTIONS = {
    "routing_id": (5, "bytes"),
    "subscribe": (6, "bytes"),
    "unsubscribe": (7, "bytes"),
    "sndbuf": (11, "int"),
    "rcvbuf": (12, "int"),
    "rcvmore": (13, "int"),
    "events": (15, "int"),
    "type": (16, "int"),
    "linger": (17, "int"),
    "reconnect_ivl": (18, "int"),
    "backlog": (19, "int"),
    "reconnect_ivl_max": (21, "int"),
    "maxmsgsize": (22, "int"),
    "sndhwm": (23, "int"),
    "rcvhwm": (24, "int"),
    "rcvtimeo": (27, "int"),
    "sndtimeo": (28, "int"),
    "last_endpoint": (32, "str"),
    "router_mandatory": (33, "int"),
    "tcp_keepalive": (34, "int"),
    "immediate": (39, "int"),
    "xpub_verbose": (40, "int"),
    "ipv6": (42, "int"),
    "probe_router": (51, "int"),
    "req_correlate": (52, "int"),
    "req_relaxed": (53, "int"),
    "conflate": (54, "int"),
    "router_handover": (56, "int"),
    "connect_routing_id": (61, "bytes"),
    "handshake_ivl": (66, "int"),
    "xpub_nodrop": (69, "int"),
    "invert_matching": (74, "int"),
    "heartbeat_ivl": (75, "int"),
    "heartbeat_ttl": (76, "int"),
    "heartbeat_timeout": (77, "int"),
    "xpub_verboser": (78, "int"),
    "connect_timeout": (79, "int"),
    "mechanism": (43, "int"),
    "plain_server": (44, "int"),
    "plain_username": (45, "bytes"),
    "plain_password": (46, "bytes"),
    "curve_server": (47, "int"),
    "curve_publickey": (48, "bytes"),
    "curve_secretkey": (49, "bytes"),
    "curve_serverkey": (50, "bytes"),
    "zap_domain": (55, "bytes"),
    "zap_enforce_domain": (93, "int"),
}

# libzmq socket type numbers.
SOCKET_TYPES = {
    "PAIR": 0,
    "PUB": 1,
    "SUB": 2,
    "REQ": 3,
    "REP": 4,
    "DEALER": 5,
    "ROUTER": 6,
    "PULL": 7,
    "PUSH": 8,
    "XPUB": 9,
    "XSUB": 10,
}

EAGAIN = 11
EHOSTUNREACH = 113


def encode_frames(frames):
    return ",".join(bytes(f).hex() for f in frames)


def decode_frames(text):
    return [bytes.fromhex(part) for part in text.split(",")]
