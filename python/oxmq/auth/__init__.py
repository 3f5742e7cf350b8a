"""ZAP authentication: answer the core's authentication requests in Python
(pyzmq's ``zmq.auth``). The mechanisms themselves (PLAIN, CURVE) are in the
core; this package is the policy side (``Authenticator`` and its thread,
asyncio and ioloop forms) and CURVE certificate files."""

from .base import CURVE_ALLOW_ANY, Authenticator
from .certs import create_certificates, load_certificate, load_certificates

__all__ = ["Authenticator", "CURVE_ALLOW_ANY", "create_certificates", "load_certificate", "load_certificates"]
