//! The draft options through the C ABI (s3-draftopts): what a C program
//! built with ZMQ_BUILD_DRAFT_API sees. libzmq here has no draft API, so
//! the C tests that run against both cannot hold these.

use crate::context::{zmq_ctx_new, zmq_ctx_term, zmq_errno};
use crate::message::{zmq_msg_close, zmq_msg_gets, zmq_msg_init, zmq_msg_recv, zmq_msg_size, zmq_msg_t};
use crate::socket::{zmq_bind, zmq_close, zmq_connect, zmq_getsockopt, zmq_recv, zmq_send, zmq_setsockopt, zmq_socket};
use std::ffi::{c_void, CStr};

const ROUTER: i32 = 6;
const DEALER: i32 = 5;
const ZMQ_LINGER: i32 = 17;
const ZMQ_RCVTIMEO: i32 = 27;
const ZMQ_ROUTING_ID: i32 = 5;
const ZMQ_LAST_ENDPOINT: i32 = 32;
const ZMQ_METADATA: i32 = 95;
const ZMQ_ROUTER_NOTIFY: i32 = 97;
const ZMQ_HELLO_MSG: i32 = 110;
const ZMQ_NOTIFY_CONNECT: i32 = 1;
const ZMQ_NOTIFY_DISCONNECT: i32 = 2;

unsafe fn set_int(s: *mut c_void, o: i32, v: i32) -> i32 {
    // SAFETY: a live socket and a 4-byte value.
    unsafe { zmq_setsockopt(s, o, (&v as *const i32).cast(), 4) }
}

unsafe fn set_bytes(s: *mut c_void, o: i32, v: &[u8]) -> i32 {
    // SAFETY: a live socket and `v.len()` readable bytes.
    unsafe { zmq_setsockopt(s, o, v.as_ptr().cast(), v.len()) }
}

/// One frame into a buffer; panics on error or timeout.
unsafe fn recv(s: *mut c_void) -> Vec<u8> {
    let mut buf = [0u8; 256];
    // SAFETY: a live socket and a 256-byte buffer.
    let n = unsafe { zmq_recv(s, buf.as_mut_ptr().cast(), buf.len(), 0) };
    assert!(n >= 0, "zmq_recv: errno {}", zmq_errno());
    buf[..n as usize].to_vec()
}

#[test]
fn router_notify_hello_and_metadata_through_the_c_abi() {
    // SAFETY: every pointer below comes from the calls before it and lives
    // until closed; buffers are sized as passed.
    unsafe {
        let ctx = zmq_ctx_new();
        let router = zmq_socket(ctx, ROUTER);
        let dealer = zmq_socket(ctx, DEALER);
        for s in [router, dealer] {
            assert_eq!(set_int(s, ZMQ_LINGER, 0), 0);
            assert_eq!(set_int(s, ZMQ_RCVTIMEO, 5000), 0);
        }
        // Set on ROUTER only; read back as an exact-size int.
        assert_eq!(set_int(dealer, ZMQ_ROUTER_NOTIFY, ZMQ_NOTIFY_CONNECT), -1);
        assert_eq!(zmq_errno(), libc::EINVAL);
        assert_eq!(set_int(router, ZMQ_ROUTER_NOTIFY, ZMQ_NOTIFY_CONNECT | ZMQ_NOTIFY_DISCONNECT), 0);
        let mut v = 0i32;
        let mut len = 4usize;
        assert_eq!(zmq_getsockopt(router, ZMQ_ROUTER_NOTIFY, (&mut v as *mut i32).cast(), &mut len), 0);
        assert_eq!((v, len), (3, 4));
        assert_eq!(set_bytes(router, ZMQ_HELLO_MSG, b"welcome"), 0);
        // NULL clears, as an empty value does.
        assert_eq!(zmq_setsockopt(dealer, ZMQ_HELLO_MSG, std::ptr::null(), 0), 0);
        assert_eq!(set_bytes(dealer, ZMQ_METADATA, b"X-app:c-abi"), 0);
        assert_eq!(set_bytes(dealer, ZMQ_METADATA, b"bad"), -1);
        assert_eq!(zmq_errno(), libc::EINVAL);
        assert_eq!(set_bytes(dealer, ZMQ_ROUTING_ID, b"d"), 0);

        assert_eq!(zmq_bind(router, c"tcp://127.0.0.1:*".as_ptr()), 0);
        let mut ep = [0u8; 256];
        let mut eplen = ep.len();
        assert_eq!(zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep.as_mut_ptr().cast(), &mut eplen), 0);
        assert_eq!(zmq_connect(dealer, CStr::from_bytes_until_nul(&ep).unwrap().as_ptr()), 0);

        assert_eq!(recv(dealer), b"welcome");
        // The connect notice: [routing id][empty], carrying the peer's metadata.
        assert_eq!(recv(router), b"d");
        let mut msg = std::mem::zeroed::<zmq_msg_t>();
        assert_eq!(zmq_msg_init(&mut msg), 0);
        assert_eq!(zmq_msg_recv(&mut msg, router, 0), 0);
        assert_eq!(zmq_msg_size(&msg), 0);
        let app = zmq_msg_gets(&msg, c"X-app".as_ptr());
        assert!(!app.is_null());
        assert_eq!(CStr::from_ptr(app).to_bytes(), b"c-abi");
        assert_eq!(zmq_msg_close(&mut msg), 0);

        assert_eq!(zmq_send(dealer, b"x".as_ptr().cast(), 1, 0), 1);
        assert_eq!(recv(router), b"d");
        assert_eq!(recv(router), b"x");
        assert_eq!(zmq_close(dealer), 0);
        assert_eq!(recv(router), b"d");
        assert_eq!(recv(router), b"");
        assert_eq!(zmq_close(router), 0);
        assert_eq!(zmq_ctx_term(ctx), 0);
    }
}
