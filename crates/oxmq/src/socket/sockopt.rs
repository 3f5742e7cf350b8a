//! Setting and reading a socket's options: which ones its type takes, what
//! the pattern handles itself, and what follows a change (pipe HWMs, LINGER).

use super::core::Core;
use super::options_codec::{decode_int, get_generic, set_generic, OptionValue};
use crate::error::{Error, Result};
use crate::option_table::{GetSize, Kind};
use crate::options::opt;
use crate::transport::inproc;
use oxmq_proto::SocketType;
use std::sync::atomic::Ordering;

impl Core {
    /// libzmq applies a changed SNDHWM/RCVHWM to the pipes that already
    /// exist. On inproc it adds the RCVHWMs both sides had when the pipe was
    /// made: to SNDHWM the peer's, and (through the peer's end) to RCVHWM
    /// our own, so both directions follow libzmq's numbers.
    pub(super) fn update_pipe_hwms(&mut self) {
        let (snd, rcv) = (self.options.sndhwm_limit(), self.options.rcvhwm_limit());
        for id in self.pipes.ids() {
            let p = self.pipes.get_mut(id);
            let (out, inn) = match p.hwm_boost {
                Some((peer_rcv, own_rcv)) => (inproc::combined_hwm(snd, peer_rcv), inproc::combined_hwm(rcv, own_rcv)),
                None => (snd, rcv),
            };
            p.out.set_hwm(out);
            p.inn.set_hwm(inn);
        }
    }

    pub(super) fn set_option(&mut self, option: i32, value: &[u8], null_ok: bool) -> Result<()> {
        self.check_term()?;
        // The table decides which options this socket type takes at all.
        let spec = crate::option_table::lookup_for(option, self.kind)
            .filter(|s| s.set)
            .ok_or(Error::Invalid("unknown or read-only option for this socket type"))?;
        if null_ok && value.is_empty() {
            // libzmq: a NULL value clears the accept filters.
            let o = &mut self.options;
            match option {
                opt::TCP_ACCEPT_FILTER => o.tcp_accept_filters.clear(),
                opt::IPC_FILTER_PID => o.ipc_filter_pids.clear(),
                opt::IPC_FILTER_UID => o.ipc_filter_uids.clear(),
                opt::IPC_FILTER_GID => o.ipc_filter_gids.clear(),
                _ => {}
            }
            if matches!(
                option,
                opt::TCP_ACCEPT_FILTER | opt::IPC_FILTER_PID | opt::IPC_FILTER_UID | opt::IPC_FILTER_GID
            ) {
                return Ok(());
            }
        }
        // libzmq: a NULL value clears these strings (PLAIN's switch back to
        // the NULL mechanism); ZAP_DOMAIN refuses it like any empty value.
        let null_clears = null_ok
            && matches!(
                option,
                opt::PLAIN_USERNAME
                    | opt::PLAIN_PASSWORD
                    | opt::SOCKS_PROXY
                    | opt::SOCKS_USERNAME
                    | opt::SOCKS_PASSWORD
                    | opt::BINDTODEVICE
            );
        if matches!(spec.kind, Kind::Bytes | Kind::Str) && value.is_empty() && !spec.empty_ok && !null_clears {
            return Err(Error::Invalid("this option needs a non-empty value"));
        }
        // libzmq's router_t takes it (REP is one); other types only read it.
        if option == opt::ROUTER_NOTIFY && !matches!(self.kind, SocketType::Router | SocketType::Rep) {
            return Err(Error::Invalid("ROUTER_NOTIFY is a ROUTER option"));
        }
        if option == opt::ROUTER_RAW && matches!(self.kind, SocketType::Router | SocketType::Rep) && !self.router_raw {
            // libzmq: turning it on makes later connections raw; off is a no-op.
            if crate::patterns::bool_value(value)? {
                self.router_raw = true;
                self.pattern = if self.kind == SocketType::Rep {
                    crate::patterns::new_raw_rep()
                } else {
                    crate::patterns::new_raw_router()
                };
            }
            return Ok(());
        }
        if self.pattern.set_option(option, value, &mut self.pipes)? {
            if option == opt::STREAM_NOTIFY {
                self.options.raw_notify = crate::patterns::bool_value(value)?;
            }
            self.reap();
            return Ok(());
        }
        if set_generic(&mut self.options, option, value)? {
            if option == opt::LINGER {
                self.linger_ms.store(decode_int(option, value)?, Ordering::Relaxed);
            }
            if option == opt::SNDHWM || option == opt::RCVHWM {
                self.update_pipe_hwms();
            }
            return Ok(());
        }
        Err(Error::Invalid("unknown or read-only option"))
    }

    pub(super) fn get_option(&mut self, option: i32) -> Result<OptionValue> {
        self.check_term()?;
        crate::option_table::lookup_for(option, self.kind)
            .filter(|s| s.get != GetSize::None)
            .ok_or(Error::Invalid("unknown or write-only option for this socket type"))?;
        match option {
            opt::TYPE => return Ok(OptionValue::Int(self.kind.as_raw() as i64)),
            opt::RCVMORE => return Ok(OptionValue::Int(self.rcvmore as i64)),
            opt::EVENTS => return Ok(OptionValue::Int(self.events() as i64)),
            opt::FD if self.kind.is_thread_safe() => return Err(Error::Invalid("thread-safe sockets have no FD")),
            opt::FD => return Ok(OptionValue::Int(self.mailbox.signaler().raw_fd() as i64)),
            opt::THREAD_SAFE => return Ok(OptionValue::Int(self.kind.is_thread_safe() as i64)),
            opt::LAST_ENDPOINT => return Ok(OptionValue::Bytes(self.last_endpoint.as_bytes().to_vec())),
            o if crate::option_table::OXMQ_ONLY.contains(&o) => {
                self.process_commands()?;
                let v = self.stats().by_option(o).ok_or(Error::Invalid("unknown statistics option"))?;
                return Ok(OptionValue::Int(v.min(i64::MAX as u64) as i64));
            }
            _ => {}
        }
        if let Some(v) = self.pattern.get_option_int(option) {
            return Ok(OptionValue::Int(v));
        }
        get_generic(&self.options, option).ok_or(Error::Invalid("unknown or write-only option"))
    }
}
