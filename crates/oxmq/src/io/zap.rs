//! The engine's side of ZAP (RFC 27): a pipe pair to the handler bound at
//! `inproc://zeromq.zap.01` in the same context, made per handshake that
//! needs it (as libzmq's session does), and dropped once answered.
//!
//! The handler is an ordinary REP or ROUTER socket; it sees us as one more
//! inproc peer with an empty routing id. Its replies wake the engine through
//! the engine's own waker, like any pipe activity.

use std::sync::{Arc, Weak};

use bytes::Bytes;
use oxmq_proto::{HandshakeError, ZapReply, ZapRequest};

use crate::msg::{Msg, FLAGS_UNCOUNTED};
use crate::pipe::{PipeReader, PipeWriter, Wake};

/// Frames past this many cannot be a well-formed reply (7 are expected).
const MAX_REPLY_FRAMES: usize = 16;

/// How an engine reaches its context's ZAP handler: all the I/O layer may
/// know of the context. The context answers with a pipe pair to the socket
/// bound at `inproc://zeromq.zap.01`, if that is a REP or ROUTER.
pub(crate) trait ZapRoute: Send + Sync {
    /// Pipes to the handler and back; replies wake `wake`. `None`: no handler.
    fn connect(&self, wake: Arc<dyn Wake>) -> Option<(PipeWriter, PipeReader)>;
}

/// An outstanding ZAP request.
pub(crate) struct ZapClient {
    out: PipeWriter,
    inn: PipeReader,
    frames: Vec<(bool, Bytes)>,
}

impl ZapClient {
    /// Sends `req` to the handler, if one is bound (REP or ROUTER). `None`
    /// means no handler: the mechanism decides what that means.
    pub(crate) fn ask(
        route: &Weak<dyn ZapRoute>,
        req: &ZapRequest,
        peer_address: &[u8],
        wake: Arc<dyn Wake>,
    ) -> Option<ZapClient> {
        let (mut out, inn) = route.upgrade()?.connect(wake)?;
        let frames = req.frames(peer_address);
        let last = frames.len() - 1;
        for (i, f) in frames.into_iter().enumerate() {
            let mut m = Msg::from_bytes(f);
            m.set_more(i < last);
            out.write(m);
        }
        out.flush();
        Some(ZapClient { out, inn, frames: Vec::new() })
    }

    /// The reply, once all of it has arrived.
    pub(crate) fn poll_reply(&mut self) -> Option<Result<ZapReply, HandshakeError>> {
        while let Some(msg) = self.inn.read() {
            if msg.flags() & FLAGS_UNCOUNTED != 0 {
                continue;
            }
            let more = msg.more();
            self.frames.push((more, msg.into_bytes()));
            if !more || self.frames.len() > MAX_REPLY_FRAMES {
                return Some(ZapReply::parse(&self.frames));
            }
        }
        None
    }
}

impl Drop for ZapClient {
    fn drop(&mut self) {
        // Nothing more will be written; let the handler's socket reap the pipe.
        self.out.flush();
    }
}
