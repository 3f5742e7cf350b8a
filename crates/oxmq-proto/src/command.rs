//! ZMTP commands (`name-len name data` in a COMMAND frame) and metadata.

use bytes::Bytes;

use crate::error::{ProtocolError, UsageError};
use crate::frame::encode_frame_header;

/// Longest PING context a PONG echoes (ZMTP 3.1).
pub const MAX_PING_CONTEXT: usize = 16;

/// A parsed command. Data fields share the frame's buffer where possible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// READY: the NULL and PLAIN handshakes' last step, carrying the sender's
    /// metadata (`Socket-Type`, `Identity`, application properties).
    Ready(Metadata),
    /// ERROR: the peer refuses the handshake; the connection ends.
    Error {
        /// Why, as text (at most 255 octets).
        reason: Vec<u8>,
    },
    /// SUBSCRIBE (ZMTP 3.1): the peer subscribes to a topic prefix.
    Subscribe(Bytes),
    /// CANCEL (ZMTP 3.1): the peer drops one subscription to a topic prefix.
    Cancel(Bytes),
    /// PING (ZMTP 3.1 heartbeats): asks for a PONG, and tells the receiver
    /// how long it may go without traffic from the sender.
    Ping {
        /// How long the receiver may wait for traffic from the sender before
        /// it closes the connection, in tenths of a second (0: no limit).
        ttl_deciseconds: u16,
        /// Up to 16 octets the PONG must echo.
        context: Bytes,
    },
    /// PONG: the answer to a PING.
    Pong {
        /// The PING's context, echoed.
        context: Bytes,
    },
    /// Any other name. libzmq ignores unknown commands after the
    /// handshake, so this is not an error.
    Unknown {
        /// The command's name.
        name: Vec<u8>,
        /// Its data, after the name.
        data: Bytes,
    },
}

impl Command {
    /// Parses a COMMAND frame body. Names are compared case-sensitively,
    /// as libzmq does.
    pub fn parse(body: &Bytes) -> Result<Command, ProtocolError> {
        let malformed = |name: &[u8]| ProtocolError::MalformedCommand { name: name.to_vec() };
        let name_len = usize::from(*body.first().ok_or_else(|| malformed(b""))?);
        let name = body.get(1..1 + name_len).ok_or_else(|| malformed(b""))?;
        let data = body.slice(1 + name_len..);
        Ok(match name {
            b"READY" => Command::Ready(Metadata::decode(&data)?),
            b"ERROR" => {
                let reason_len = usize::from(*data.first().ok_or_else(|| malformed(name))?);
                // libzmq ignores octets after the reason; so do we.
                let reason = data.get(1..1 + reason_len).ok_or_else(|| malformed(name))?;
                Command::Error { reason: reason.to_vec() }
            }
            b"SUBSCRIBE" => Command::Subscribe(data),
            b"CANCEL" => Command::Cancel(data),
            b"PING" => {
                let ttl: [u8; 2] = data.get(..2).and_then(|s| s.try_into().ok()).ok_or_else(|| malformed(name))?;
                // Contexts over 16 octets are kept; pong_for truncates, as
                // libzmq does, rather than dropping the connection.
                Command::Ping { ttl_deciseconds: u16::from_be_bytes(ttl), context: data.slice(2..) }
            }
            b"PONG" => Command::Pong { context: data },
            _ => Command::Unknown { name: name.to_vec(), data },
        })
    }

    /// The command name as sent on the wire.
    pub fn name(&self) -> &[u8] {
        match self {
            Command::Ready(_) => b"READY",
            Command::Error { .. } => b"ERROR",
            Command::Subscribe(_) => b"SUBSCRIBE",
            Command::Cancel(_) => b"CANCEL",
            Command::Ping { .. } => b"PING",
            Command::Pong { .. } => b"PONG",
            Command::Unknown { name, .. } => name,
        }
    }

    /// Appends the command body (`name-len name data`), without a frame
    /// header.
    ///
    /// # Panics
    /// If an `Unknown` command's name is longer than 255 octets: that is a
    /// local bug, not something the wire can carry.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        let name = self.name();
        let name_len = u8::try_from(name.len()).expect("command name longer than 255 octets");
        out.push(name_len);
        out.extend_from_slice(name);
        match self {
            Command::Ready(m) => m.encode(out),
            Command::Error { reason } => {
                // The reason is human-readable text; truncation beats failure.
                let reason = &reason[..reason.len().min(255)];
                out.push(reason.len() as u8);
                out.extend_from_slice(reason);
            }
            Command::Subscribe(d) | Command::Cancel(d) => out.extend_from_slice(d),
            Command::Ping { ttl_deciseconds, context } => {
                out.extend_from_slice(&ttl_deciseconds.to_be_bytes());
                out.extend_from_slice(context);
            }
            Command::Pong { context } => out.extend_from_slice(context),
            Command::Unknown { data, .. } => out.extend_from_slice(data),
        }
    }

    /// Length of [`encode_body`](Self::encode_body)'s output.
    pub fn body_len(&self) -> usize {
        1 + self.name().len()
            + match self {
                Command::Ready(m) => m.encoded_len(),
                Command::Error { reason } => 1 + reason.len().min(255),
                Command::Subscribe(d) | Command::Cancel(d) => d.len(),
                Command::Ping { context, .. } => 2 + context.len(),
                Command::Pong { context } => context.len(),
                Command::Unknown { data, .. } => data.len(),
            }
    }

    /// Appends a whole command frame (header + body).
    ///
    /// # Panics
    /// As [`encode_body`](Self::encode_body).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_frame_header(out, false, true, self.body_len());
        self.encode_body(out);
    }

    /// The PONG answering a PING with `ping_context`: the context echoed
    /// back, truncated to 16 octets as libzmq does.
    pub fn pong_for(ping_context: &Bytes) -> Command {
        Command::Pong { context: ping_context.slice(..ping_context.len().min(MAX_PING_CONTEXT)) }
    }
}

/// Metadata properties as carried by READY (and later INITIATE):
/// `name-len(1) name value-len(4, BE) value`, repeated. Insertion order is
/// kept, and so are duplicates (the wire allows them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    props: Vec<(String, Vec<u8>)>,
}

const MAX_VALUE_LEN: usize = i32::MAX as usize;

impl Metadata {
    /// No properties yet.
    pub fn new() -> Self {
        Metadata::default()
    }

    /// Appends a property.
    ///
    /// # Panics
    /// If the name is empty or over 255 octets, or the value is over 2^31-1
    /// octets. Use [`try_insert`](Self::try_insert) for untrusted input.
    pub fn insert(&mut self, name: &str, value: &[u8]) {
        if let Err(e) = self.try_insert(name, value) {
            panic!("Metadata::insert: {e}");
        }
    }

    /// Appends a property, refusing what the wire format cannot carry.
    pub fn try_insert(&mut self, name: &str, value: &[u8]) -> Result<(), UsageError> {
        if name.is_empty() || name.len() > 255 {
            return Err(UsageError::BadPropertyNameLength { len: name.len() });
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(UsageError::PropertyValueTooLong { len: value.len() });
        }
        self.props.push((name.to_owned(), value.to_vec()));
        Ok(())
    }

    /// First property whose name matches, ignoring ASCII case (RFC 23 says
    /// names are case-insensitive).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.props.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
    }

    /// First property whose name matches exactly. libzmq recognises
    /// `Socket-Type` and `Identity` only in their canonical spelling; use
    /// this to behave the same.
    pub fn get_exact(&self, name: &str) -> Option<&[u8]> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }

    /// Every property in wire order, duplicates included.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.props.iter().map(|(n, v)| (n.as_str(), v.as_slice()))
    }

    /// How many properties, duplicates included.
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// Whether there are no properties at all.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// Octets [`encode`](Self::encode) appends.
    pub fn encoded_len(&self) -> usize {
        self.props.iter().map(|(n, v)| 1 + n.len() + 4 + v.len()).sum()
    }

    /// Appends the properties in wire format (name-len, name, value-len, value).
    pub fn encode(&self, out: &mut Vec<u8>) {
        for (name, value) in &self.props {
            // Lengths were checked on insertion.
            out.push(name.len() as u8);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(value.len() as u32).to_be_bytes());
            out.extend_from_slice(value);
        }
    }

    /// Parses a property list that must fill `buf` exactly.
    ///
    /// Deliberately as lenient as libzmq where the spec is stricter: a
    /// zero-length name is accepted, and value lengths are not capped at
    /// 2^31-1. Names must be UTF-8 (the spec only allows ASCII).
    pub fn decode(buf: &[u8]) -> Result<Metadata, ProtocolError> {
        let mut props = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            let err = ProtocolError::MalformedMetadata { offset: pos };
            let name_len = usize::from(buf[pos]);
            let name = buf.get(pos + 1..pos + 1 + name_len).ok_or(err.clone())?;
            let name = std::str::from_utf8(name).map_err(|_| err.clone())?;
            let vpos = pos + 1 + name_len;
            let vlen: [u8; 4] = buf
                .get(vpos..vpos + 4)
                .and_then(|s| s.try_into().ok())
                .ok_or(ProtocolError::MalformedMetadata { offset: vpos })?;
            let vlen = u32::from_be_bytes(vlen) as usize;
            let value = buf
                .get(vpos + 4..)
                .and_then(|rest| rest.get(..vlen))
                .ok_or(ProtocolError::MalformedMetadata { offset: vpos })?;
            props.push((name.to_owned(), value.to_vec()));
            pos = vpos + 4 + vlen;
        }
        Ok(Metadata { props })
    }
}
