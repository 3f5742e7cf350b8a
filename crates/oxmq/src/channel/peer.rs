//! What a peer told us about itself: the properties of its READY command
//! (Socket-Type, Identity, application metadata) plus what the connection
//! shows (Peer-Address). libzmq hands these out per message (`zmq_msg_gets`).

use std::ffi::{CStr, CString};

/// A peer's connection properties. Values are kept NUL-terminated so the C
/// ABI can hand out pointers into them.
#[derive(Debug, Default)]
pub struct PeerProperties {
    props: Vec<(String, CString)>,
}

impl PeerProperties {
    /// Decode the ZMTP metadata encoding; `None` if it is malformed.
    pub(crate) fn decode(raw: &[u8]) -> Option<PeerProperties> {
        let meta = oxmq_proto::Metadata::decode(raw).ok()?;
        let props = meta
            .iter()
            .map(|(name, value)| {
                // A value with a NUL in it is cut there: C sees no further anyway.
                let end = value.iter().position(|&b| b == 0).unwrap_or(value.len());
                let value = CString::new(&value[..end]).expect("no NUL before `end`");
                (name.to_string(), value)
            })
            .collect();
        Some(PeerProperties { props })
    }

    /// A property's value (names compare case-insensitively, as ZMTP says).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.get_cstr(name).map(CStr::to_bytes)
    }

    /// The fd of the connection (tcp, ipc) these properties belong to, as
    /// libzmq's deprecated `ZMQ_SRCFD` reports it (its `__fd` property).
    pub fn src_fd(&self) -> Option<i32> {
        std::str::from_utf8(self.get("__fd")?).ok()?.parse().ok()
    }

    /// A property's value as a C string.
    pub fn get_cstr(&self, name: &str) -> Option<&CStr> {
        self.props.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_c_str())
    }
}
