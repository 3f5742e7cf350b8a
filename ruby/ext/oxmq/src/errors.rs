//! libzmq errno values as Ruby exceptions.
//!
//! The exception object is built by `ZMQ::Error.for_errno` (lib/oxmq/error.rb):
//! POSIX values become `Errno::*` (marked so that `rescue ZMQ::Error` catches
//! them too), libzmq's own (ETERM, EFSM, ...) become `ZMQ::Error` subclasses
//! of the same name. Only failures take this path.

use magnus::prelude::*;
use magnus::value::Lazy;
use magnus::{Error, Exception, RClass, Ruby};

static ERROR_CLASS: Lazy<RClass> = Lazy::new(|ruby| {
    let zmq: magnus::RModule = ruby.class_object().const_get("ZMQ").expect("ZMQ module defined at init");
    zmq.const_get("Error").expect("ZMQ::Error defined at init")
});

/// The Ruby exception for a libzmq errno value; `detail` replaces the
/// standard message when the core said more.
pub(crate) fn zmq_error(errnum: i32, detail: Option<&str>) -> Error {
    let Ok(ruby) = Ruby::get() else {
        return Error::new(magnus::exception::runtime_error(), format!("oxmq: errno {errnum}"));
    };
    let msg = detail.map_or_else(|| oxmq::Error::strerror(errnum), str::to_string);
    let class = ruby.get_inner(&ERROR_CLASS);
    match class.funcall::<_, _, magnus::Value>("for_errno", (errnum, msg)) {
        Ok(v) => match Exception::from_value(v) {
            Some(e) => Error::from(e),
            None => Error::new(ruby.exception_runtime_error(), format!("oxmq: errno {errnum}")),
        },
        Err(e) => e,
    }
}

/// A core error as a Ruby exception.
pub(crate) fn core_error(e: oxmq::Error) -> Error {
    match &e {
        oxmq::Error::Invalid(why) => zmq_error(e.errno(), Some(&format!("Invalid argument: {why}"))),
        _ => zmq_error(e.errno(), None),
    }
}
