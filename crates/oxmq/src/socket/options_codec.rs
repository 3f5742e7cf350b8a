//! Generic get/set of socket options by libzmq number, as the C ABI and Python
//! see them: integer options are 4-byte native ints, except the 8-byte ones.

use crate::error::{Error, Result};
use crate::options::{mechanism, ms_to_opt, ms_to_opt_zero_off, opt, opt_to_ms, Options};
use crate::security::curve_key_from_option;
use zeroize::Zeroizing;

use crate::option_table::{is_int64, takes_bytes};

/// Encode an integer the way `zmq_setsockopt` expects it for `o`.
pub(crate) fn encode_int(o: i32, v: i64) -> Result<Vec<u8>> {
    if is_int64(o) {
        Ok(v.to_ne_bytes().to_vec())
    } else {
        let v: i32 = v.try_into().map_err(|_| Error::Invalid("option value out of range"))?;
        Ok(v.to_ne_bytes().to_vec())
    }
}

/// Decode an integer option value (4 or 8 bytes).
pub(crate) fn decode_int(o: i32, value: &[u8]) -> Result<i64> {
    if is_int64(o) {
        let b: [u8; 8] = value.try_into().map_err(|_| Error::Invalid("option needs an 8-byte integer"))?;
        Ok(i64::from_ne_bytes(b))
    } else {
        let b: [u8; 4] = value.try_into().map_err(|_| Error::Invalid("option needs a 4-byte integer"))?;
        Ok(i32::from_ne_bytes(b) as i64)
    }
}

fn bool_of(v: i64) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::Invalid("option value must be 0 or 1")),
    }
}

fn nonneg(v: i64) -> Result<i32> {
    if (0..=i32::MAX as i64).contains(&v) {
        Ok(v as i32)
    } else {
        Err(Error::Invalid("option value must be >= 0"))
    }
}

fn positive(v: i64) -> Result<i32> {
    if (1..=i32::MAX as i64).contains(&v) {
        Ok(v as i32)
    } else {
        Err(Error::Invalid("option value must be > 0"))
    }
}

fn ms_or_minus1(v: i64) -> Result<i64> {
    if v < -1 {
        Err(Error::Invalid("option value must be >= -1"))
    } else {
        Ok(v)
    }
}

/// Apply a generic option to `o`. `Ok(false)` when the option is not generic.
pub(crate) fn set_generic(o: &mut Options, option: i32, value: &[u8]) -> Result<bool> {
    if takes_bytes(option) {
        match option {
            opt::ROUTING_ID => {
                if value.is_empty() || value.len() > 255 {
                    return Err(Error::Invalid("ROUTING_ID must be 1 to 255 bytes"));
                }
                o.routing_id = value.to_vec();
            }
            opt::CONNECT_ROUTING_ID => {
                if value.is_empty() || value.len() > 255 {
                    return Err(Error::Invalid("CONNECT_ROUTING_ID must be 1 to 255 bytes"));
                }
                o.connect_routing_id = Some(value.to_vec());
            }
            opt::ZAP_DOMAIN => {
                if value.len() > 255 {
                    return Err(Error::Invalid("ZAP_DOMAIN is at most 255 bytes"));
                }
                o.zap_domain = value.to_vec()
            }
            // libzmq: a username or password switches to a PLAIN client; an
            // empty one (a NULL value in C) goes back to NULL.
            opt::PLAIN_USERNAME | opt::PLAIN_PASSWORD => {
                if value.len() > 255 {
                    return Err(Error::Invalid("PLAIN credentials are at most 255 bytes"));
                }
                let sec = &mut o.security;
                if value.is_empty() {
                    // libzmq keeps the credential itself: it still reads back.
                    sec.mechanism = mechanism::NULL;
                    return Ok(true);
                }
                sec.as_server = false;
                sec.mechanism = mechanism::PLAIN;
                if option == opt::PLAIN_USERNAME {
                    sec.plain.username = value.to_vec();
                } else {
                    sec.plain.password = Zeroizing::new(value.to_vec());
                }
            }
            opt::CURVE_PUBLICKEY | opt::CURVE_SECRETKEY | opt::CURVE_SERVERKEY => {
                let key = Zeroizing::new(
                    curve_key_from_option(value)
                        .ok_or(Error::Invalid("CURVE keys are 32 bytes or 40 Z85 characters"))?,
                );
                let sec = &mut o.security;
                match option {
                    opt::CURVE_PUBLICKEY => sec.curve.public_key = *key,
                    opt::CURVE_SECRETKEY => sec.curve.secret_key = key,
                    _ => {
                        sec.curve.server_key = *key;
                        sec.as_server = false;
                    }
                }
                sec.mechanism = mechanism::CURVE;
            }
            opt::BINDTODEVICE => {
                // libzmq: at most BINDDEVSIZ (16) bytes, the kernel's IFNAMSIZ.
                if value.len() > 16 {
                    return Err(Error::Invalid("BINDTODEVICE is at most 16 bytes"));
                }
                o.bindtodevice = value.to_vec()
            }
            opt::SOCKS_PROXY => o.socks_proxy = value.to_vec(),
            // RFC 1929 carries each in one length byte.
            opt::SOCKS_USERNAME | opt::SOCKS_PASSWORD if value.len() > 255 => {
                return Err(Error::Invalid("SOCKS credentials are at most 255 bytes"))
            }
            opt::SOCKS_USERNAME => o.socks_username = value.to_vec(),
            opt::SOCKS_PASSWORD => o.socks_password = value.to_vec(),
            opt::TCP_ACCEPT_FILTER => o.tcp_accept_filters.push(
                crate::transport::filter::parse_tcp_filter(value, o.ipv6)
                    .ok_or(Error::Invalid("TCP_ACCEPT_FILTER takes a numeric address[/bits]"))?,
            ),
            // Draft options (s3-draftopts). An empty value clears the message.
            opt::HELLO_MSG => o.hello_msg = value.to_vec(),
            opt::DISCONNECT_MSG => o.disconnect_msg = value.to_vec(),
            opt::HICCUP_MSG => o.hiccup_msg = value.to_vec(),
            opt::METADATA => {
                let (name, val) = parse_metadata(value)?;
                if !o.app_metadata.iter().any(|(n, _)| *n == name) {
                    o.app_metadata.push((name, val));
                }
            }
            // ws:// and wss://: stored as given, checked at bind/connect (as libzmq).
            opt::WSS_KEY_PEM => o.wss.key_pem = Zeroizing::new(value.to_vec()),
            opt::WSS_CERT_PEM => o.wss.cert_pem = value.to_vec(),
            opt::WSS_TRUST_PEM => o.wss.trust_pem = value.to_vec(),
            opt::WSS_HOSTNAME => o.wss.hostname = value.to_vec(),
            _ => return Ok(false),
        }
        return Ok(true);
    }
    let v = decode_int(option, value)?;
    match option {
        opt::SNDHWM => o.sndhwm = nonneg(v)?,
        opt::RCVHWM => o.rcvhwm = nonneg(v)?,
        opt::LINGER => o.linger = ms_to_opt(ms_or_minus1(v)?),
        opt::SNDTIMEO => o.sndtimeo = ms_to_opt(ms_or_minus1(v)?),
        opt::RCVTIMEO => o.rcvtimeo = ms_to_opt(ms_or_minus1(v)?),
        opt::IMMEDIATE => o.immediate = bool_of(v)?,
        opt::RECONNECT_IVL => o.reconnect_ivl = ms_to_opt(ms_or_minus1(v)?),
        opt::RECONNECT_IVL_MAX => o.reconnect_ivl_max = ms_to_opt_zero_off(nonneg(v)? as i64),
        opt::CONNECT_TIMEOUT => o.connect_timeout = ms_to_opt_zero_off(nonneg(v)? as i64),
        opt::HANDSHAKE_IVL => o.handshake_ivl = ms_to_opt_zero_off(nonneg(v)? as i64),
        opt::HEARTBEAT_IVL => o.heartbeat_ivl = ms_to_opt_zero_off(nonneg(v)? as i64),
        opt::HEARTBEAT_TTL => {
            // libzmq keeps deciseconds in 16 bits, truncating (so -99..=6553599 ms).
            let ds = v / 100;
            if !(0..=u16::MAX as i64).contains(&ds) {
                return Err(Error::Invalid("HEARTBEAT_TTL must be 0 to 6553599 ms"));
            }
            o.heartbeat_ttl = ms_to_opt_zero_off(ds * 100)
        }
        // Some(0) reads back as 0; the engine treats it like unset (-1).
        opt::HEARTBEAT_TIMEOUT => o.heartbeat_timeout = ms_to_opt(nonneg(v)? as i64),
        opt::MAXMSGSIZE => o.maxmsgsize = if v < 0 { None } else { Some(v as u64) },
        opt::TCP_KEEPALIVE => {
            if !(-1..=1).contains(&v) {
                return Err(Error::Invalid("TCP_KEEPALIVE must be -1, 0 or 1"));
            }
            o.tcp_keepalive = v as i32
        }
        opt::TCP_KEEPALIVE_CNT => o.tcp_keepalive_cnt = ms_or_minus1(v)? as i32,
        opt::TCP_KEEPALIVE_IDLE => o.tcp_keepalive_idle = ms_or_minus1(v)? as i32,
        opt::TCP_KEEPALIVE_INTVL => o.tcp_keepalive_intvl = ms_or_minus1(v)? as i32,
        opt::SNDBUF => o.sndbuf = ms_or_minus1(v)? as i32,
        opt::RCVBUF => o.rcvbuf = ms_or_minus1(v)? as i32,
        opt::BACKLOG => o.backlog = nonneg(v)?,
        opt::WSS_TRUST_SYSTEM => o.wss.trust_system = bool_of(v)?,
        opt::IPV6 => o.ipv6 = bool_of(v)?,
        opt::IPV4ONLY => o.ipv6 = !bool_of(v)?,
        opt::TOS => o.tos = nonneg(v)?,
        opt::CONFLATE => o.conflate = bool_of(v)?,
        opt::AFFINITY => o.affinity = v as u64,
        opt::RATE => o.rate = positive(v)?,
        opt::RECOVERY_IVL => o.recovery_ivl = nonneg(v)?,
        opt::MULTICAST_HOPS => o.multicast_hops = positive(v)?,
        opt::MULTICAST_MAXTPDU => o.multicast_maxtpdu = positive(v)?,
        opt::TCP_MAXRT => o.tcp_maxrt = nonneg(v)?,
        opt::USE_FD => o.use_fd = ms_or_minus1(v)? as i32,
        // libzmq takes any int for these and keeps "non-zero".
        opt::INVERT_MATCHING => o.invert_matching = v != 0,
        opt::MULTICAST_LOOP => o.multicast_loop = v != 0,
        opt::LOOPBACK_FASTPATH => o.loopback_fastpath = v != 0,
        opt::RECONNECT_STOP => o.reconnect_stop = v as i32,
        opt::ROUTER_NOTIFY => {
            if !(0..=3).contains(&v) {
                return Err(Error::Invalid("ROUTER_NOTIFY takes NOTIFY_CONNECT | NOTIFY_DISCONNECT bits"));
            }
            o.router_notify = v as i32
        }
        opt::IPC_FILTER_PID => o.ipc_filter_pids.push(v as i32),
        opt::IPC_FILTER_UID => o.ipc_filter_uids.push(v as i32),
        opt::IPC_FILTER_GID => o.ipc_filter_gids.push(v as i32),
        // libzmq takes any int here and keeps "non-zero".
        opt::ZAP_ENFORCE_DOMAIN => o.zap_enforce_domain = v != 0,
        opt::PLAIN_SERVER | opt::CURVE_SERVER => {
            let on = bool_of(v)?;
            o.security.as_server = on;
            o.security.mechanism = match (on, option) {
                (false, _) => mechanism::NULL,
                (true, opt::PLAIN_SERVER) => mechanism::PLAIN,
                (true, _) => mechanism::CURVE,
            };
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Read a generic option. `None` when the option is not generic.
pub(crate) fn get_generic(o: &Options, option: i32) -> Option<OptionValue> {
    use OptionValue::{Bytes, Int};
    Some(match option {
        opt::SNDHWM => Int(o.sndhwm as i64),
        opt::RCVHWM => Int(o.rcvhwm as i64),
        opt::LINGER => Int(opt_to_ms(o.linger)),
        opt::SNDTIMEO => Int(opt_to_ms(o.sndtimeo)),
        opt::RCVTIMEO => Int(opt_to_ms(o.rcvtimeo)),
        opt::IMMEDIATE => Int(o.immediate as i64),
        opt::RECONNECT_IVL => Int(opt_to_ms(o.reconnect_ivl)),
        opt::RECONNECT_IVL_MAX => Int(o.reconnect_ivl_max.map(|d| d.as_millis() as i64).unwrap_or(0)),
        opt::CONNECT_TIMEOUT => Int(o.connect_timeout.map(|d| d.as_millis() as i64).unwrap_or(0)),
        opt::HANDSHAKE_IVL => Int(o.handshake_ivl.map(|d| d.as_millis() as i64).unwrap_or(0)),
        opt::HEARTBEAT_IVL => Int(o.heartbeat_ivl.map(|d| d.as_millis() as i64).unwrap_or(0)),
        opt::HEARTBEAT_TTL => Int(o.heartbeat_ttl.map(|d| d.as_millis() as i64 / 100 * 100).unwrap_or(0)),
        opt::HEARTBEAT_TIMEOUT => Int(o.heartbeat_timeout.map(|d| d.as_millis() as i64).unwrap_or(-1)),
        opt::MAXMSGSIZE => Int(o.maxmsgsize.map(|v| v as i64).unwrap_or(-1)),
        opt::TCP_KEEPALIVE => Int(o.tcp_keepalive as i64),
        opt::TCP_KEEPALIVE_CNT => Int(o.tcp_keepalive_cnt as i64),
        opt::TCP_KEEPALIVE_IDLE => Int(o.tcp_keepalive_idle as i64),
        opt::TCP_KEEPALIVE_INTVL => Int(o.tcp_keepalive_intvl as i64),
        opt::SNDBUF => Int(o.sndbuf as i64),
        opt::RCVBUF => Int(o.rcvbuf as i64),
        opt::BACKLOG => Int(o.backlog as i64),
        opt::IPV6 => Int(o.ipv6 as i64),
        opt::TOS => Int(o.tos as i64),
        opt::CONFLATE => Int(o.conflate as i64),
        opt::AFFINITY => Int(o.affinity as i64),
        opt::RATE => Int(o.rate as i64),
        opt::RECOVERY_IVL => Int(o.recovery_ivl as i64),
        opt::MULTICAST_HOPS => Int(o.multicast_hops as i64),
        opt::TCP_MAXRT => Int(o.tcp_maxrt as i64),
        opt::IPV4ONLY => Int(!o.ipv6 as i64),
        opt::MULTICAST_MAXTPDU => Int(o.multicast_maxtpdu as i64),
        opt::USE_FD => Int(o.use_fd as i64),
        opt::INVERT_MATCHING => Int(o.invert_matching as i64),
        opt::MULTICAST_LOOP => Int(o.multicast_loop as i64),
        opt::LOOPBACK_FASTPATH => Int(o.loopback_fastpath as i64),
        opt::RECONNECT_STOP => Int(o.reconnect_stop as i64),
        opt::ROUTER_NOTIFY => Int(o.router_notify as i64),
        opt::SOCKS_PROXY => Bytes(o.socks_proxy.clone()),
        opt::SOCKS_USERNAME => Bytes(o.socks_username.clone()),
        opt::SOCKS_PASSWORD => Bytes(o.socks_password.clone()),
        opt::MECHANISM => Int(i64::from(o.security.mechanism)),
        opt::THREAD_SAFE => Int(0),
        opt::PLAIN_SERVER => Int(i64::from(o.security.as_server && o.security.mechanism == mechanism::PLAIN)),
        opt::CURVE_SERVER => Int(i64::from(o.security.as_server && o.security.mechanism == mechanism::CURVE)),
        opt::GSSAPI_SERVER => Int(0),
        opt::ZAP_ENFORCE_DOMAIN => Int(i64::from(o.zap_enforce_domain)),
        opt::PLAIN_USERNAME => Bytes(o.security.plain.username.clone()),
        opt::PLAIN_PASSWORD => Bytes(o.security.plain.password.to_vec()),
        // Raw 32 octets; the C ABI and Python give Z85 when asked (41-byte buffer).
        opt::CURVE_PUBLICKEY => Bytes(o.security.curve.public_key.to_vec()),
        opt::CURVE_SECRETKEY => Bytes(o.security.curve.secret_key.to_vec()),
        opt::CURVE_SERVERKEY => Bytes(o.security.curve.server_key.to_vec()),
        opt::ROUTING_ID => Bytes(o.routing_id.clone()),
        opt::ZAP_DOMAIN => Bytes(o.zap_domain.clone()),
        opt::BINDTODEVICE => Bytes(o.bindtodevice.clone()),
        _ => return None,
    })
}

/// ZMQ_METADATA's `X-Name:value`, checked as libzmq checks it: a name that
/// starts with `X-` and fits a property name (255 bytes), a non-empty value,
/// and not a 4-byte value (libzmq takes that for an int and refuses it).
fn parse_metadata(value: &[u8]) -> Result<(String, Vec<u8>)> {
    let bad = Error::Invalid("METADATA takes \"X-Name:value\"");
    if value.is_empty() || value.len() == 4 {
        return Err(bad);
    }
    let pos = value.iter().position(|&b| b == b':').ok_or(Error::Invalid("METADATA takes \"X-Name:value\""))?;
    if pos == 0 || pos == value.len() - 1 {
        return Err(bad);
    }
    let name = std::str::from_utf8(&value[..pos]).map_err(|_| Error::Invalid("METADATA name must be text"))?;
    if !name.starts_with("X-") || name.len() > 255 {
        return Err(bad);
    }
    Ok((name.to_string(), value[pos + 1..].to_vec()))
}

/// An option's value as read back.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// Integer options.
    Int(i64),
    /// Byte-string options.
    Bytes(Vec<u8>),
}
