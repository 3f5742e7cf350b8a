//! Z85 and CURVE keys (`zmq.z85`, `zmq.curve_keypair`, `zmq.curve_public`)
//! and `zmq.has`: thin wrappers over `oxmq::security`, so Python and the C ABI
//! share one implementation.

use crate::errors::zmq_error;
use oxmq::errno;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// Bytes of a str (ASCII) or any bytes-like object.
fn as_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    let buf = pyo3::buffer::PyBuffer::<u8>::get(obj)
        .map_err(|_| PyTypeError::new_err("expected bytes, str or a buffer of bytes"))?;
    buf.to_vec(obj.py())
}

/// Z85-encode bytes (length a multiple of 4).
#[pyfunction]
pub(crate) fn z85_encode<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let raw = as_bytes(data)?;
    let text = oxmq::security::z85_encode(&raw)
        .ok_or_else(|| PyValueError::new_err("Z85 encoding needs a length that is a multiple of 4"))?;
    Ok(PyBytes::new(py, text.as_bytes()))
}

/// Decode Z85 text (str or bytes, length a multiple of 5).
#[pyfunction]
pub(crate) fn z85_decode<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let raw = as_bytes(text)?;
    let data = oxmq::security::z85_decode(&raw).ok_or_else(|| {
        PyValueError::new_err("not valid Z85: length must be a multiple of 5, characters from its alphabet")
    })?;
    Ok(PyBytes::new(py, &data))
}

/// A new CURVE key pair, `(public, secret)`, each 40 Z85 characters as bytes.
#[pyfunction]
pub(crate) fn curve_keypair(py: Python<'_>) -> PyResult<(Py<PyBytes>, Py<PyBytes>)> {
    let (public, secret) = oxmq::security::curve_keypair().map_err(|e| zmq_error(py, e.errno()))?;
    let z = |k: &[u8]| oxmq::security::z85_encode(k).map(|s| PyBytes::new(py, s.as_bytes()).unbind());
    match (z(&public), z(&secret[..])) {
        (Some(p), Some(s)) => Ok((p, s)),
        _ => Err(zmq_error(py, errno::EFAULT)),
    }
}

/// The public key (Z85) of a CURVE secret key (Z85 text, or 32 raw bytes).
#[pyfunction]
pub(crate) fn curve_public<'py>(py: Python<'py>, secret_key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let raw = as_bytes(secret_key)?;
    let secret: [u8; 32] = match raw.len() {
        32 => raw.as_slice().try_into().map_err(|_| zmq_error(py, errno::EINVAL))?,
        40 => oxmq::security::z85_decode(&raw)
            .and_then(|v| <[u8; 32]>::try_from(v.as_slice()).ok())
            .ok_or_else(|| zmq_error(py, errno::EINVAL))?,
        _ => return Err(zmq_error(py, errno::EINVAL)),
    };
    let public = oxmq::security::curve_public(&secret);
    let text = oxmq::security::z85_encode(&public).ok_or_else(|| zmq_error(py, errno::EFAULT))?;
    Ok(PyBytes::new(py, text.as_bytes()))
}

/// Whether a libzmq capability is built in (`zmq_has`).
#[pyfunction]
pub(crate) fn has(capability: &str) -> bool {
    oxmq::security::has(capability)
}
