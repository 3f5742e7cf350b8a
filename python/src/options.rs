//! Socket options: the core's table says which take byte strings.

/// Options whose value is a byte string (everything else is an integer),
/// libzmq's options oxmq does not build included, so their values convert as
/// pyzmq converts them and the core answers EINVAL.
pub(crate) fn is_bytes_option(o: i32) -> bool {
    oxmq::option_table::takes_bytes(o)
}

/// CURVE key options, which pyzmq reads back as Z85 text.
pub(crate) fn is_curve_key_option(o: i32) -> bool {
    oxmq::option_table::is_security_option(o)
}
