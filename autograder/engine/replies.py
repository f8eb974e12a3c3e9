"""Check every reply a worker sends before the grader uses any of it.

A worker runs student code, and student code can patch the worker, so a
reply is untrusted bytes.  Each one is read in linear time with a size cap,
parsed, and checked against a fixed schema: the fields of its kind with
their types, and a value made only of what runtime.to_plain produces, within
depth and size limits.  Anything else raises BadReply, which costs the case
being run (never the grader), and whatever passes can be shown and scored
without raising.
"""

import json
import math
import os
import select
import time
from types import MappingProxyType

from .. import runtime


class BadReply(Exception):
    """A reply broke the protocol; the message says how, for the hand-in's result."""


class ReplyTooLong(BadReply):
    pass


class ChannelClosed(Exception):
    """The worker's end of the reply pipe is gone: it ended."""


# A plain value nests at most runtime.MAX_DEPTH deep, and each level can take
# three JSON levels ({"__dict__": [[key, value]]}); the rest is the envelope.
MAX_JSON_DEPTH = 3 * runtime.MAX_DEPTH + 8
MAX_NODES = 2 * runtime.MAX_ITEMS + 16  # a dict entry is a pair: one more list per item
MAX_MESSAGE = 2000
MAX_TRACEBACK = 4000
MAX_TYPE_NAME = 1000
FLOAT_WORDS = ("nan", "inf", "-inf")

# Fields of each kind of reply: name -> (accepted types, required).
_NUMBER = (int, float)
SCHEMAS = MappingProxyType({
    "cell": MappingProxyType({"id": ((int,), True), "ok": ((bool,), True), "error": ((str, type(None)), True),
                              "interrupted": ((bool,), True), "seconds": (_NUMBER, True)}),
    "runner": MappingProxyType({"id": ((int,), True), "pid": ((int,), True)}),
    "call": MappingProxyType({"id": ((int,), True), "ok": ((bool,), True), "seconds": (_NUMBER, True),
                              "value": (None, False), "error": ((str,), False), "traceback": ((str,), False),
                              "interrupted": ((bool,), False), "cpu": (_NUMBER, False)}),
    "event": MappingProxyType({"event": ((str,), True), "status": ((int, type(None)), True)}),
})


class Lines:
    """Lines from a pipe, each found by scanning its bytes once (linear time), capped in size."""

    def __init__(self, fd, max_bytes):
        self.fd, self.max_bytes = fd, max_bytes
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no newline
        self._skipping = False  # dropping the rest of a line that was too long

    def next(self, timeout):
        """The next line (without its newline), or None when `timeout` seconds pass first."""
        deadline = time.monotonic() + timeout
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end]) if end <= self.max_bytes else b""
                del self._buffer[:end + 1]  # a bytearray drops its front without copying the rest
                self._scanned = 0
                if self._skipping:
                    self._skipping = False
                    continue
                if end > self.max_bytes:
                    raise ReplyTooLong(f"it sent a reply longer than {self.max_bytes} bytes")
                return line
            self._scanned = len(self._buffer)
            if self._scanned > self.max_bytes or (self._skipping and self._buffer):
                self._buffer.clear()
                self._scanned = 0
                if not self._skipping:
                    self._skipping = True
                    raise ReplyTooLong(f"it sent a reply longer than {self.max_bytes} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                raise ChannelClosed()
            self._buffer += chunk


def parse(line):
    """A line as a JSON object; BadReply for anything else (deep nesting included)."""
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except RecursionError:
        raise BadReply("its reply was nested too deeply to read") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise BadReply(f"its reply was not valid JSON ({str(error)[:100]})") from None
    if type(message) is not dict:
        raise BadReply("its reply was not a JSON object")
    return message


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def check(kind, message):
    """The reply `message` checked against the schema of `kind`; returns a cleaned copy."""
    schema = SCHEMAS[kind]
    unknown = sorted(set(message) - set(schema))
    if unknown:
        raise BadReply(f"its {kind} reply had unknown fields: {', '.join(map(repr, unknown))[:200]}")
    clean = {}
    for name, (types, required) in schema.items():
        if name not in message:
            if required:
                raise BadReply(f"its {kind} reply had no {name!r}")
            continue
        value = message[name]
        if types is not None and type(value) not in types:
            raise BadReply(f"its {kind} reply had {name!r} of type {type(value).__name__}")
        clean[name] = value
    for name in ("seconds", "cpu"):
        if name in clean:
            seconds = float(clean[name])
            clean[name] = seconds if math.isfinite(seconds) and seconds >= 0 else 0.0
    for name, limit in (("error", MAX_MESSAGE), ("traceback", MAX_TRACEBACK)):
        if type(clean.get(name)) is str:
            clean[name] = _text(clean[name])[:limit]
    if kind == "call":
        if clean["ok"] and "value" not in clean:
            raise BadReply("its reply said ok but held no value")
        if clean["ok"]:
            check_plain(clean["value"])
        else:
            clean.pop("value", None)
            clean.setdefault("error", "")
    return clean


def check_plain(value):
    """Raise BadReply unless `value` is made only of what runtime.to_plain produces.

    Iterative, so nesting costs no recursion; bounded in nodes, depth and
    string sizes, so rendering and comparing it later cannot blow up.
    """
    stack = [(value, 0)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise BadReply("its value had more items than a plain value may have")
        if depth > MAX_JSON_DEPTH:
            raise BadReply("its value was nested more deeply than a plain value may be")
        kind = type(item)
        if item is None or kind is bool or kind is int:
            continue
        if kind is float:
            if not math.isfinite(item):
                raise BadReply("its value held a bare infinity or NaN")
            continue
        if kind is str:
            if len(item) > runtime.MAX_STR:
                raise BadReply("its value held a string longer than a plain value may")
            if not item.isascii() and not _encodable(item):
                raise BadReply("its value held a string that is not valid text (a lone surrogate)")
            continue
        if kind is list:
            stack.extend((child, depth + 1) for child in item)
            continue
        if kind is not dict:
            raise BadReply(f"its value held a {kind.__name__}")
        if len(item) != 1:
            raise BadReply("its value held an object that is not one of the plain-value tags")
        (tag, content), = item.items()
        if tag == runtime.OPAQUE:
            if type(content) is not str or len(content) > MAX_TYPE_NAME or not _encodable(content):
                raise BadReply("its value held a malformed opaque marker")
        elif tag == runtime.TOO_BIG:
            if content is not True:
                raise BadReply("its value held a malformed too-big marker")
        elif tag == runtime.FLOAT:
            if content not in FLOAT_WORDS:
                raise BadReply("its value held a malformed special float")
        elif tag == runtime.DICT:
            if type(content) is not list or any(type(p) is not list or len(p) != 2 for p in content):
                raise BadReply("its value held a malformed dict")
            stack.extend((pair, depth + 1) for pair in content)
        elif tag == runtime.SET:
            if type(content) is not list:
                raise BadReply("its value held a malformed set")
            stack.append((content, depth + 1))
        else:
            raise BadReply(f"its value held an unknown tag {str(tag)[:40]!r}")


def _encodable(text):
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _text(text):
    """Messages are stored and shown: lone surrogates become escapes."""
    return text if text.isascii() or _encodable(text) else text.encode("utf-8", "backslashreplace").decode()
