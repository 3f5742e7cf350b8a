//! Transports, one folder each: endpoint syntax, tcp, ipc and ws (stream
//! engines in I/O threads), udp, DGRAM and multicast (packet engines in I/O
//! threads) and inproc (no I/O thread).

pub(crate) mod endpoint;
pub(crate) mod inproc;
pub(crate) mod ipc;
pub(crate) mod tcp;
// TCP_ACCEPT_FILTER and IPC_FILTER_*: who a listener accepts.
pub(crate) mod filter;
// SOCKS_PROXY: a SOCKS5 client for tcp connects.
pub(crate) mod socks;
// ws:// and wss:// (ZWS 2.0), with wss's TLS.
pub(crate) mod ws;
// Draft RADIO/DISH over udp://.
pub(crate) mod udp;
// Draft DGRAM: raw datagrams over udp://.
pub(crate) mod dgram;
// pgm://, epgm:// (OpenPGM) and norm:// (NORM): PUB/SUB over multicast.
pub(crate) mod multicast;
// What the I/O thread runs for udp, DGRAM and the multicast transports.
pub(crate) mod packet;
