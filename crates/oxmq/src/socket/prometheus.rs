//! Prometheus text exposition of [`SocketStats`] (cargo feature
//! `prometheus`), built on the `prometheus-client` crate: a process names
//! its sockets and writes the text to a file, or serves it, as it likes.

use crate::stats::{DropReason, SocketStats};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

fn counters(registry: &mut Registry, name: &str, help: &str) -> Family<Labels, Counter> {
    let f = Family::<Labels, Counter>::default();
    registry.register(name, help, f.clone());
    f
}

fn gauges(registry: &mut Registry, name: &str, help: &str) -> Family<Labels, Gauge> {
    let f = Family::<Labels, Gauge>::default();
    registry.register(name, help, f.clone());
    f
}

fn with(base: &Labels, more: &[(&'static str, &str)]) -> Labels {
    let mut l = base.clone();
    l.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
    l
}

fn gauge_value(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The statistics of `sockets`, each under the `socket` label its name
/// gives, in Prometheus' text format (counters end in `_total`).
pub fn prometheus_text(sockets: &[(&str, &SocketStats)]) -> String {
    let mut r = Registry::default();
    let msgs = counters(&mut r, "oxmq_messages", "Messages that crossed between the socket and its peers: out, and in");
    let bytes = counters(&mut r, "oxmq_bytes", "Body bytes of those messages' frames");
    let drops = counters(&mut r, "oxmq_dropped_messages", "Messages dropped, by reason");
    let reconnects = counters(&mut r, "oxmq_reconnects", "Reconnects scheduled");
    let handshakes = counters(&mut r, "oxmq_handshake_failures", "Handshakes that failed, by cause");
    let queued = gauges(&mut r, "oxmq_queued_messages", "Messages queued between the socket and its connections");
    let peers = gauges(&mut r, "oxmq_peers", "Connections the socket has");
    let peer_msgs = counters(&mut r, "oxmq_peer_messages", "Messages per connection");
    let peer_bytes = counters(&mut r, "oxmq_peer_bytes", "Body bytes per connection");
    let peer_drops = counters(&mut r, "oxmq_peer_dropped_messages", "Messages dropped per connection, by reason");
    let peer_queued = gauges(&mut r, "oxmq_peer_queued_messages", "Messages queued per connection");
    for (name, s) in sockets {
        let base: Labels = vec![("socket", name.to_string())];
        for (dir, m, b, q) in
            [("in", s.msgs_in, s.bytes_in, s.queued_in), ("out", s.msgs_out, s.bytes_out, s.queued_out)]
        {
            msgs.get_or_create(&with(&base, &[("direction", dir)])).inc_by(m);
            bytes.get_or_create(&with(&base, &[("direction", dir)])).inc_by(b);
            queued.get_or_create(&with(&base, &[("direction", dir)])).set(gauge_value(q));
        }
        for reason in DropReason::ALL {
            drops.get_or_create(&with(&base, &[("reason", reason.name())])).inc_by(s.drops.get(reason));
        }
        reconnects.get_or_create(&base).inc_by(s.reconnects);
        let h = &s.handshake_failures;
        for (cause, v) in [("protocol", h.protocol), ("auth", h.auth), ("timeout", h.timeout), ("other", h.other)] {
            handshakes.get_or_create(&with(&base, &[("cause", cause)])).inc_by(v);
        }
        peers.get_or_create(&base).set(gauge_value(s.peers.len() as u64));
        for p in &s.peers {
            let id = match (&p.routing_id, &p.remote_address) {
                (Some(rid), _) => rid.iter().map(|b| format!("{b:02x}")).collect(),
                (None, Some(addr)) => addr.clone(),
                (None, None) => String::new(),
            };
            let peer = with(&base, &[("endpoint", &p.endpoint), ("peer", &id)]);
            for (dir, m, b, q) in
                [("in", p.msgs_in, p.bytes_in, p.queued_in), ("out", p.msgs_out, p.bytes_out, p.queued_out)]
            {
                peer_msgs.get_or_create(&with(&peer, &[("direction", dir)])).inc_by(m);
                peer_bytes.get_or_create(&with(&peer, &[("direction", dir)])).inc_by(b);
                peer_queued.get_or_create(&with(&peer, &[("direction", dir)])).set(gauge_value(q));
            }
            for reason in DropReason::ALL {
                peer_drops.get_or_create(&with(&peer, &[("reason", reason.name())])).inc_by(p.drops.get(reason));
            }
        }
    }
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = encode(&mut out, &r);
    out
}
