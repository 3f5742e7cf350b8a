//! Socket options: which are byte strings, which are integers.

use oxmq::opt;

/// Options whose value is a byte string (everything else is an integer).
pub(crate) fn is_bytes_option(o: i32) -> bool {
    matches!(
        o,
        opt::ROUTING_ID
            | opt::SUBSCRIBE
            | opt::UNSUBSCRIBE
            | opt::LAST_ENDPOINT
            | 38 // TCP_ACCEPT_FILTER
            | opt::PLAIN_USERNAME
            | opt::PLAIN_PASSWORD
            | opt::CURVE_PUBLICKEY
            | opt::CURVE_SECRETKEY
            | opt::CURVE_SERVERKEY
            | opt::ZAP_DOMAIN
            | opt::CONNECT_ROUTING_ID
            | opt::GSSAPI_PRINCIPAL
            | opt::GSSAPI_SERVICE_PRINCIPAL
            | opt::SOCKS_PROXY
            | opt::XPUB_WELCOME_MSG
            | opt::BINDTODEVICE
            | 95 // METADATA
            | 99 // SOCKS_USERNAME
            | 100 // SOCKS_PASSWORD
            | 103
            ..=106 // WSS_*
            | 110 // HELLO_MSG
            | 111 // DISCONNECT_MSG
            | 114 // HICCUP_MSG
    )
}

/// CURVE key options, which pyzmq reads back as Z85 text.
pub(crate) fn is_curve_key_option(o: i32) -> bool {
    matches!(o, opt::CURVE_PUBLICKEY | opt::CURVE_SECRETKEY | opt::CURVE_SERVERKEY)
}
