//! Hand-written declarations of the parts of OpenPGM 5.3 (`libpgm-dev`) and
//! NORM 1.5 (`libnorm-dev`) that the multicast transports call. Constants and
//! layouts were read from the installed headers (`pgm/socket.h`,
//! `normApi.h`) and checked by printing them from C on this machine
//! (Debian 12, x86_64); `layouts_match_the_headers` keeps the sizes honest.
//! The functions are not linked: each library is loaded by soname on first
//! use (`library!`), so that nothing built on oxmq needs it to load.
// The C names are kept, so the calls read as in the headers.
#![allow(non_camel_case_types, non_snake_case, dead_code)]

use crate::error::Error;
use libc::{c_char, c_int, c_uint, c_void, size_t, sockaddr_storage, socklen_t};
use std::sync::OnceLock;

/// Declares a C library loaded at run time, on first use, instead of linked:
/// a struct of typed function pointers resolved once (`$get`, which also
/// answers whether the library loads), and for each function an `unsafe fn`
/// of the same name and prototype that calls through it.
///
/// The prototypes are the C ones exactly (from the installed headers): each
/// pointer is read from the symbol table as that type, which nothing checks.
///
/// The per-function wrappers may only run after `$get` returned `Ok` in this
/// process (the `multicast` entry points, `check` and `engine`, call it
/// first); the result is kept for the life of the process, so from then on
/// it is always `Ok`.
macro_rules! library {
    (
        $(#[$doc:meta])*
        $api:ident, $cell:ident, $get:ident, $transport:literal, $soname:literal;
        $(pub(crate) fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*
    ) => {
        $(#[$doc])*
        pub(crate) struct $api {
            $($name: unsafe extern "C" fn($($ty),*) $(-> $ret)?,)*
            // Never unloaded: the pointers above point into it.
            _lib: libloading::Library,
        }

        static $cell: OnceLock<Result<$api, String>> = OnceLock::new();

        impl $api {
            fn load() -> Result<$api, String> {
                // SAFETY: loading runs the library's initialisers; OpenPGM's
                // and NORM's only set up their own state (no process-wide
                // signal handlers or environment changes), and the library
                // stays loaded for the rest of the process.
                let lib = unsafe { libloading::Library::new($soname) }.map_err(|e| e.to_string())?;
                Ok($api {
                    $($name: {
                        // SAFETY: the symbol is the C function of that name,
                        // whose prototype (in the library's header) is the
                        // type given here; the pointer is copied out and used
                        // only while `lib`, kept alongside, is loaded.
                        let sym = unsafe {
                            lib.get::<unsafe extern "C" fn($($ty),*) $(-> $ret)?>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                        };
                        *sym.map_err(|e| e.to_string())?
                    },)*
                    _lib: lib,
                })
            }
        }

        /// The library, loaded on the first call. When it cannot be loaded,
        /// the transport is unavailable, as in a libzmq built without it.
        pub(crate) fn $get() -> Result<&'static $api, Error> {
            match $cell.get_or_init($api::load) {
                Ok(api) => Ok(api),
                Err(reason) => Err(Error::TransportUnavailable {
                    transport: $transport,
                    library: $soname,
                    reason: reason.clone(),
                }),
            }
        }

        $(
            /// Calls the C function through the loaded library; only after
            /// the library's loader returned `Ok` (see `library!`).
            // The C prototype's arguments, one for one.
            #[allow(clippy::too_many_arguments)]
            pub(crate) unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                let Some(Ok(api)) = $cell.get() else {
                    unreachable!(concat!($soname, " is used before it was loaded"));
                };
                // SAFETY: the caller keeps the C function's contract; the
                // pointer has the C prototype and its library is loaded.
                unsafe { (api.$name)($($arg),*) }
            }
        )*
    };
}

// ---- OpenPGM ----

pub(crate) const IPPROTO_PGM: c_int = 113;
pub(crate) const PGM_SEND_SOCK: c_int = 8192;
pub(crate) const PGM_RECV_SOCK: c_int = 8193;
pub(crate) const PGM_REPAIR_SOCK: c_int = 8194;
pub(crate) const PGM_PENDING_SOCK: c_int = 8195;
pub(crate) const PGM_TIME_REMAIN: c_int = 8197;
pub(crate) const PGM_RATE_REMAIN: c_int = 8198;
pub(crate) const PGM_MTU: c_int = 8200;
pub(crate) const PGM_MSS: c_int = 8202;
pub(crate) const PGM_MULTICAST_LOOP: c_int = 8204;
pub(crate) const PGM_MULTICAST_HOPS: c_int = 8205;
pub(crate) const PGM_TOS: c_int = 8206;
pub(crate) const PGM_AMBIENT_SPM: c_int = 8207;
pub(crate) const PGM_HEARTBEAT_SPM: c_int = 8208;
pub(crate) const PGM_TXW_SQNS: c_int = 8210;
pub(crate) const PGM_PEER_EXPIRY: c_int = 8213;
pub(crate) const PGM_SPMR_EXPIRY: c_int = 8214;
pub(crate) const PGM_RXW_SQNS: c_int = 8216;
pub(crate) const PGM_NAK_BO_IVL: c_int = 8219;
pub(crate) const PGM_NAK_RPT_IVL: c_int = 8220;
pub(crate) const PGM_NAK_RDATA_IVL: c_int = 8221;
pub(crate) const PGM_NAK_DATA_RETRIES: c_int = 8222;
pub(crate) const PGM_NAK_NCF_RETRIES: c_int = 8223;
pub(crate) const PGM_SEND_ONLY: c_int = 8227;
pub(crate) const PGM_RECV_ONLY: c_int = 8228;
pub(crate) const PGM_NOBLOCK: c_int = 8231;
pub(crate) const PGM_SEND_GROUP: c_int = 8232;
pub(crate) const PGM_JOIN_GROUP: c_int = 8233;
pub(crate) const PGM_UDP_ENCAP_UCAST_PORT: c_int = 8240;
pub(crate) const PGM_UDP_ENCAP_MCAST_PORT: c_int = 8241;
pub(crate) const PGM_ODATA_MAX_RTE: c_int = 8244;

pub(crate) const PGM_IO_STATUS_ERROR: c_int = 0;
pub(crate) const PGM_IO_STATUS_NORMAL: c_int = 1;
pub(crate) const PGM_IO_STATUS_RESET: c_int = 2;
pub(crate) const PGM_IO_STATUS_FIN: c_int = 3;
pub(crate) const PGM_IO_STATUS_EOF: c_int = 4;
pub(crate) const PGM_IO_STATUS_WOULD_BLOCK: c_int = 5;
pub(crate) const PGM_IO_STATUS_RATE_LIMITED: c_int = 6;
pub(crate) const PGM_IO_STATUS_TIMER_PENDING: c_int = 7;
pub(crate) const PGM_IO_STATUS_CONGESTION: c_int = 8;

pub(crate) const PGM_ERROR_DOMAIN_IF: c_int = 0;
pub(crate) const PGM_ERROR_DOMAIN_SOCKET: c_int = 4;
pub(crate) const PGM_ERROR_NODEV: c_int = 17;
pub(crate) const PGM_ERROR_PERM: c_int = 26;

#[repr(C)]
pub(crate) struct pgm_sock_t {
    _opaque: [u8; 0],
}

#[repr(C)]
pub(crate) struct pgm_error_t {
    pub(crate) domain: c_int,
    pub(crate) code: c_int,
    pub(crate) message: *mut c_char,
}

/// Linux's `struct group_source_req`.
#[repr(C)]
pub(crate) struct group_source_req {
    pub(crate) gsr_interface: u32,
    pub(crate) gsr_group: sockaddr_storage,
    pub(crate) gsr_source: sockaddr_storage,
}

/// Linux's `struct group_req`: the head of a `group_source_req`.
pub(crate) const GROUP_REQ_LEN: socklen_t = 136;

#[repr(C)]
pub(crate) struct pgm_addrinfo_t {
    pub(crate) ai_family: libc::sa_family_t,
    pub(crate) ai_recv_addrs_len: u32,
    pub(crate) ai_recv_addrs: *mut group_source_req,
    pub(crate) ai_send_addrs_len: u32,
    pub(crate) ai_send_addrs: *mut group_source_req,
}

#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub(crate) struct pgm_tsi_t {
    pub(crate) gsi: [u8; 6],
    pub(crate) sport: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct pgm_sockaddr_t {
    pub(crate) sa_port: u16,
    pub(crate) sa_addr: pgm_tsi_t,
}

#[repr(C)]
pub(crate) struct pgm_interface_req_t {
    pub(crate) ir_interface: u32,
    pub(crate) ir_scope_id: u32,
    pub(crate) ir_address: sockaddr_storage,
}

library! {
    /// OpenPGM 5.3, as Debian 12 ships it (`libpgm-5.3-0`).
    PgmApi, PGM, pgm_api, "pgm", "libpgm-5.3.so.0";

    pub(crate) fn pgm_init(err: *mut *mut pgm_error_t) -> bool;
    pub(crate) fn pgm_error_free(err: *mut pgm_error_t);
    pub(crate) fn pgm_getaddrinfo(
        network: *const c_char,
        hints: *const pgm_addrinfo_t,
        res: *mut *mut pgm_addrinfo_t,
        err: *mut *mut pgm_error_t,
    ) -> bool;
    pub(crate) fn pgm_freeaddrinfo(res: *mut pgm_addrinfo_t);
    pub(crate) fn pgm_socket(
        sock: *mut *mut pgm_sock_t,
        family: libc::sa_family_t,
        kind: c_int,
        protocol: c_int,
        err: *mut *mut pgm_error_t,
    ) -> bool;
    pub(crate) fn pgm_setsockopt(
        sock: *mut pgm_sock_t,
        level: c_int,
        opt: c_int,
        val: *const c_void,
        len: socklen_t,
    ) -> bool;
    pub(crate) fn pgm_getsockopt(
        sock: *mut pgm_sock_t,
        level: c_int,
        opt: c_int,
        val: *mut c_void,
        len: *mut socklen_t,
    ) -> bool;
    pub(crate) fn pgm_gsi_create_from_data(gsi: *mut [u8; 6], data: *const u8, len: size_t) -> bool;
    pub(crate) fn pgm_bind3(
        sock: *mut pgm_sock_t,
        addr: *const pgm_sockaddr_t,
        addrlen: socklen_t,
        send_req: *const pgm_interface_req_t,
        send_req_len: socklen_t,
        recv_req: *const pgm_interface_req_t,
        recv_req_len: socklen_t,
        err: *mut *mut pgm_error_t,
    ) -> bool;
    pub(crate) fn pgm_connect(sock: *mut pgm_sock_t, err: *mut *mut pgm_error_t) -> bool;
    pub(crate) fn pgm_close(sock: *mut pgm_sock_t, flush: bool) -> bool;
    pub(crate) fn pgm_send(sock: *mut pgm_sock_t, data: *const c_void, len: size_t, written: *mut size_t) -> c_int;
    pub(crate) fn pgm_recvfrom(
        sock: *mut pgm_sock_t,
        buf: *mut c_void,
        len: size_t,
        flags: c_int,
        read: *mut size_t,
        from: *mut pgm_sockaddr_t,
        fromlen: *mut socklen_t,
        err: *mut *mut pgm_error_t,
    ) -> c_int;
}

// ---- NORM ----

pub(crate) type NormHandle = *const c_void;
pub(crate) const NORM_INVALID: NormHandle = std::ptr::null();
pub(crate) const NORM_NODE_ANY: u32 = u32::MAX;
pub(crate) const NORM_TX_QUEUE_VACANCY: c_int = 1;
pub(crate) const NORM_TX_QUEUE_EMPTY: c_int = 2;
pub(crate) const NORM_REMOTE_SENDER_INACTIVE: c_int = 14;
pub(crate) const NORM_RX_OBJECT_NEW: c_int = 17;
pub(crate) const NORM_RX_OBJECT_UPDATED: c_int = 19;
pub(crate) const NORM_RX_OBJECT_ABORTED: c_int = 21;
pub(crate) const NORM_SYNC_STREAM: c_int = 1;
pub(crate) const NORM_FLUSH_ACTIVE: c_int = 2;

#[repr(C)]
pub(crate) struct NormEvent {
    pub(crate) kind: c_int,
    pub(crate) session: NormHandle,
    pub(crate) sender: NormHandle,
    pub(crate) object: NormHandle,
}

library! {
    /// NRL NORM 1.5, as Debian 12 ships it (`libnorm1`).
    NormApi, NORM, norm_api, "norm", "libnorm.so.1";

    pub(crate) fn NormCreateInstance(priority_boost: bool) -> NormHandle;
    pub(crate) fn NormStopInstance(instance: NormHandle);
    pub(crate) fn NormDestroyInstance(instance: NormHandle);
    pub(crate) fn NormGetDescriptor(instance: NormHandle) -> c_int;
    pub(crate) fn NormGetNextEvent(instance: NormHandle, event: *mut NormEvent, wait: bool) -> bool;
    pub(crate) fn NormCreateSession(instance: NormHandle, addr: *const c_char, port: u16, local_id: u32) -> NormHandle;
    pub(crate) fn NormDestroySession(session: NormHandle);
    pub(crate) fn NormIsUnicastAddress(addr: *const c_char) -> bool;
    pub(crate) fn NormSetDefaultUnicastNack(session: NormHandle, on: bool);
    pub(crate) fn NormSetTTL(session: NormHandle, ttl: u8) -> bool;
    pub(crate) fn NormSetRxPortReuse(
        session: NormHandle,
        on: bool,
        rx_bind_addr: *const c_char,
        sender_addr: *const c_char,
        sender_port: u16,
    );
    pub(crate) fn NormSetLoopback(session: NormHandle, on: bool) -> bool;
    pub(crate) fn NormSetMulticastInterface(session: NormHandle, iface: *const c_char) -> bool;
    pub(crate) fn NormSetDefaultSyncPolicy(session: NormHandle, policy: c_int);
    pub(crate) fn NormStartReceiver(session: NormHandle, buffer: u32) -> bool;
    pub(crate) fn NormStopReceiver(session: NormHandle);
    pub(crate) fn NormGetRandomSessionId() -> u16;
    pub(crate) fn NormStartSender(
        session: NormHandle,
        instance_id: u16,
        buffer: u32,
        segment: u16,
        num_data: u16,
        num_parity: u16,
        fec_id: u8,
    ) -> bool;
    pub(crate) fn NormStopSender(session: NormHandle);
    pub(crate) fn NormSetCongestionControl(session: NormHandle, on: bool, adjust_rate: bool);
    pub(crate) fn NormStreamOpen(session: NormHandle, buffer: u32, info: *const c_char, info_len: c_uint)
        -> NormHandle;
    pub(crate) fn NormStreamWrite(stream: NormHandle, buf: *const c_char, len: c_uint) -> c_uint;
    pub(crate) fn NormStreamFlush(stream: NormHandle, eom: bool, mode: c_int);
    pub(crate) fn NormStreamSeekMsgStart(stream: NormHandle) -> bool;
    pub(crate) fn NormStreamRead(stream: NormHandle, buf: *mut c_char, len: *mut c_uint) -> bool;
    pub(crate) fn NormNodeDelete(node: NormHandle);
}

#[cfg(test)]
mod tests {
    use super::*;

    // The loader itself, on a library that is not there and on one that
    // lacks a symbol: both make the transport unavailable, and say why.
    library! {
        MissingApi, MISSING, missing_api, "pgm", "liboxmq-test-no-such-library.so.0";
        pub(crate) fn pgm_init(err: *mut *mut pgm_error_t) -> bool;
    }
    library! {
        NoSymbolApi, NO_SYMBOL, no_symbol_api, "norm", "libnorm.so.1";
        pub(crate) fn oxmq_test_no_such_symbol() -> c_int;
    }

    #[test]
    fn a_library_that_does_not_load_is_eprotonosupport_naming_it() {
        let e = missing_api().err().expect("no such library");
        assert_eq!(e.errno(), libc::EPROTONOSUPPORT);
        let text = e.to_string();
        assert!(text.contains("pgm needs liboxmq-test-no-such-library.so.0"), "{text}");
        // Asked again: the same answer, from the loader's first result.
        assert!(missing_api().is_err());
        let e = no_symbol_api().err().expect("no such symbol");
        assert_eq!(e.errno(), libc::EPROTONOSUPPORT);
        assert!(e.to_string().contains("oxmq_test_no_such_symbol"), "{e}");
    }

    #[test]
    fn debians_libraries_load() {
        // mk/interop/multicast.mk installs libpgm-dev and libnorm-dev (so their
        // runtime libraries), as Debian's libzmq5 needs them.
        assert!(pgm_api().is_ok(), "{:?}", pgm_api().err());
        assert!(norm_api().is_ok(), "{:?}", norm_api().err());
        assert!(crate::security::has("pgm") && crate::security::has("norm"));
    }

    #[test]
    fn layouts_match_the_headers() {
        assert_eq!(std::mem::size_of::<pgm_addrinfo_t>(), 32);
        assert_eq!(std::mem::size_of::<group_source_req>(), 264);
        assert_eq!(std::mem::size_of::<pgm_sockaddr_t>(), 10);
        assert_eq!(std::mem::size_of::<pgm_tsi_t>(), 8);
        assert_eq!(std::mem::size_of::<pgm_interface_req_t>(), 136);
        assert_eq!(std::mem::size_of::<pgm_error_t>(), 16);
        assert_eq!(std::mem::size_of::<NormEvent>(), 32);
    }
}
