"""``PUBHandler`` publishes log records on a PUB socket; ``TopicLogger`` adds
a topic to each record (pyzmq's ``zmq.log.handlers``).

A record goes out as two frames: the topic, ``root_topic.LEVEL[.subtopic]``
(utf-8), then the formatted message. A subtopic is given by starting the
message with ``"subtopic::"``.
"""

from __future__ import annotations

import logging
from copy import copy
from typing import Any, Dict, Optional, Union

import oxmq as zmq

TOPIC_DELIM = "::"


class PUBHandler(logging.Handler):
    """A logging handler that publishes records on a PUB socket.

    ``interface_or_socket`` is an address to bind a new PUB socket to (made
    from ``context``, or a new Context), or a PUB socket to use as is.
    """

    ctx: zmq.Context
    socket: zmq.Socket

    def __init__(
        self,
        interface_or_socket: Union[str, zmq.Socket],
        context: Optional[zmq.Context] = None,
        root_topic: str = "",
    ) -> None:
        logging.Handler.__init__(self)
        self.root_topic = root_topic
        self.formatters: Dict[int, logging.Formatter] = {
            logging.DEBUG: logging.Formatter("%(levelname)s %(filename)s:%(lineno)d - %(message)s\n"),
            logging.INFO: logging.Formatter("%(message)s\n"),
            logging.WARN: logging.Formatter("%(levelname)s %(filename)s:%(lineno)d - %(message)s\n"),
            logging.ERROR: logging.Formatter("%(levelname)s %(filename)s:%(lineno)d - %(message)s - %(exc_info)s\n"),
            logging.CRITICAL: logging.Formatter("%(levelname)s %(filename)s:%(lineno)d - %(message)s\n"),
        }
        if isinstance(interface_or_socket, zmq.Socket):
            self.socket = interface_or_socket
            self.ctx = self.socket.context
        else:
            self.ctx = context or zmq.Context()
            self.socket = self.ctx.socket(zmq.PUB)
            self.socket.bind(interface_or_socket)

    @property
    def root_topic(self) -> str:
        """The first part of every topic (str; bytes are decoded)."""
        return self._root_topic

    @root_topic.setter
    def root_topic(self, value: Union[str, bytes]) -> None:
        self.setRootTopic(value)

    def setRootTopic(self, root_topic: Union[str, bytes]) -> None:  # noqa: N802 - pyzmq's name
        """Set the first part of every topic; ``""`` publishes bare level names."""
        if isinstance(root_topic, bytes):
            root_topic = root_topic.decode("utf8")
        self._root_topic = root_topic

    def setFormatter(self, fmt: Optional[logging.Formatter], level: int = logging.NOTSET) -> None:  # noqa: N802
        """Set the formatter for one level, or for every level (NOTSET)."""
        if level == logging.NOTSET:
            for fmt_level in self.formatters:
                self.formatters[fmt_level] = fmt  # type: ignore[assignment]
        else:
            self.formatters[level] = fmt  # type: ignore[assignment]

    def format(self, record: logging.LogRecord) -> str:
        """Format with the formatter of the record's level."""
        return self.formatters[record.levelno].format(record)

    def emit(self, record: logging.LogRecord) -> None:
        """Publish ``[topic, message]``."""
        try:
            topic, msg = str(record.msg).split(TOPIC_DELIM, 1)
        except ValueError:
            topic = ""
        else:
            # format a copy, so other handlers see the record unchanged
            record = copy(record)
            record.msg = msg
        try:
            bmsg = self.format(record).encode("utf8")
        except Exception:
            self.handleError(record)
            return
        topic_list = []
        if self.root_topic:
            topic_list.append(self.root_topic)
        topic_list.append(record.levelname)
        if topic:
            topic_list.append(topic)
        btopic = ".".join(topic_list).encode("utf8", "replace")
        try:
            self.socket.send_multipart([btopic, bmsg])
        except zmq.ZMQError:
            # logging's rule: a handler reports its failure, it never raises
            # into the code that logged (pyzmq's PUBHandler raises here)
            self.handleError(record)


class TopicLogger(logging.Logger):
    """A Logger whose methods take a topic before the message: ``log.info(topic, msg)``."""

    def log(self, level: int, topic: str, msg: Any, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Log ``msg % args`` at ``level`` under ``topic``."""
        logging.Logger.log(self, level, f"{topic}{TOPIC_DELIM}{msg}", *args, **kwargs)


def _level_method(level: int) -> Any:
    def method(self: TopicLogger, topic: str, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.isEnabledFor(level):
            self.log(level, topic, msg, *args, **kwargs)

    method.__doc__ = f"Log ``msg % args`` at {logging.getLevelName(level)} under ``topic``."
    return method


# TopicLogger.debug(topic, msg), .info(topic, msg), ...
for _name, _level in (("debug", logging.DEBUG), ("info", logging.INFO), ("warn", logging.WARNING),
                      ("warning", logging.WARNING), ("error", logging.ERROR), ("critical", logging.CRITICAL),
                      ("fatal", logging.CRITICAL)):
    setattr(TopicLogger, _name, _level_method(_level))

__all__ = ["PUBHandler", "TopicLogger", "TOPIC_DELIM"]
