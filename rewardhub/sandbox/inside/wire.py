"""The wire between the trusted parent and the fork server inside the sandbox.

Two things travel on it, and both sides import this one module so they cannot drift apart:

- **Control messages**: length-prefixed JSON on a Unix stream socket, optionally carrying file
  descriptors (``SCM_RIGHTS``), so the parent can hand a test its own stdin/stdout/stderr pipes and
  read them directly while they stream. Between the fork server and its own children (both this
  trusted code) a run travels in :mod:`marshal` instead (:func:`send_run`, :func:`recv_run`).
- **Values** returned by untrusted code, encoded with *strict types*: only the exact built-in types
  (``type(v) is int``, never a subclass) and numpy scalars and arrays (converted to plain values)
  pass. An object that overrides ``__eq__`` cannot be encoded at all, so a result that "equals
  everything" fails instead of passing. The comparison itself happens in the parent, on the
  decoded plain values.

Standard library only: this file runs inside the sandbox, where rewardhub is not installed.
"""

from __future__ import annotations

import array
import base64
import json
import marshal
import socket
import struct
import sys
from typing import Any

try:
    from . import pristine
except ImportError:  # run as a plain script inside the sandbox
    import pristine  # type: ignore[no-redef]

pristine.seal(globals())  # the program process of a whole check uses the wire after the program ran

__all__ = [
    "MARSHAL_VERSION",
    "MAX_DEPTH",
    "MAX_MESSAGE",
    "NotPlain",
    "decode_value",
    "dumps",
    "encode_value",
    "recv_message",
    "recv_run",
    "send_message",
    "send_run",
]

MAX_MESSAGE = 64 * 1024 * 1024
"""Largest control message either side accepts."""

MAX_DEPTH = 64
"""Deepest nesting of containers a value may have (a self-referencing list has infinite depth)."""

MARSHAL_VERSION = 4
"""What :func:`send_run` and the payload pipe write: read by every Python since 3.4, so a container's
interpreter reads what the service's wrote."""

_HEADER = struct.Struct("!I")  # 4-byte big-endian length
_MAX_FDS = 8


class NotPlain(TypeError):
    """A value that is not made of plain built-in types (so it cannot be compared honestly)."""


# A freshly forked process pays a page fault for every page it writes first, and running Python
# code writes many (reference counts, the interpreter's caches): ``json.loads`` and ``json.dumps``
# run several Python frames each, ~60 faults in a new child. The C scanner and encoder behind them
# are called directly where they exist, and a run reaches the child in marshal, one C call.
_scan_once = json.decoder.JSONDecoder().scan_once
_c_encode = getattr(json.encoder, "c_make_encoder", None)
_encode_chunks = (
    _c_encode(None, None, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    if _c_encode is not None
    else None
)


def dumps(message: dict[str, Any]) -> bytes:
    """``message`` as compact JSON bytes (what a control message and a test's record carry)."""
    if _encode_chunks is None:
        return json.dumps(message, separators=(",", ":")).encode()
    return "".join(_encode_chunks(message, 0)).encode()


def _loads(body: bytes | bytearray) -> Any:
    text = body.decode()
    try:
        value, end = _scan_once(text, 0)
    except (StopIteration, ValueError):
        end = -1
    return value if end == len(text) else json.loads(text)  # the latter raises the error, if any


def send_message(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] | list[int] = ()) -> None:
    """Send one JSON message; ``fds`` ride along with its first byte."""
    _send_frame(sock, dumps(message), fds)


def recv_message(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """Receive one message and the descriptors sent with it. Raises EOFError when the peer is gone."""
    body, fds = _recv_frame(sock)
    return _loads(body), fds


def send_run(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] | list[int] = ()) -> None:
    """Hand a run to a child of the fork server, in marshal: only ever between the server and its
    own children, never from anything a program can write (marshal is not safe against that)."""
    _send_frame(sock, marshal.dumps(message, MARSHAL_VERSION), fds)


def recv_run(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The child's side of :func:`send_run`."""
    body, fds = _recv_frame(sock)
    return marshal.loads(body), fds


def _send_frame(sock: socket.socket, body: bytes, fds: tuple[int, ...] | list[int]) -> None:
    data = _HEADER.pack(len(body)) + body
    if fds:
        sent = sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        data = data[sent:]
    if data:
        sock.sendall(data)


def _recv_frame(sock: socket.socket) -> tuple[bytes | bytearray, list[int]]:
    fds: list[int] = []
    header = b""
    while len(header) < _HEADER.size:
        chunk, ancillary, _flags, _addr = sock.recvmsg(_HEADER.size - len(header), socket.CMSG_SPACE(_MAX_FDS * 4))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                received = array.array("i")
                received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
                fds.extend(received)
        if not chunk:
            _close_all(fds)
            raise EOFError("control socket closed")
        header += chunk
    (size,) = _HEADER.unpack(header)
    if size > MAX_MESSAGE:
        _close_all(fds)
        raise ValueError(f"control message of {size} bytes is over the limit")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            _close_all(fds)
            raise EOFError("control socket closed mid-message")
        body += chunk
    return body, fds


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            pristine.close(fd)
        except OSError:
            pass


# --- strict values ---------------------------------------------------------------------------
# Scalars travel as themselves (None, bool, int, float, str); everything else as a one-key object
# naming its exact type, so a tuple stays a tuple and a set stays a set.


def encode_value(value: Any, depth: int = 0) -> Any:
    """A JSON-able, type-tagged copy of ``value``; raises :class:`NotPlain` for anything else."""
    if depth > MAX_DEPTH:
        raise NotPlain(f"value nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -(2**63) <= value < 2**63 else {"int": str(value)}
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"float": repr(value)}
    if kind is list or kind is tuple:
        return {kind.__name__: [encode_value(item, depth + 1) for item in value]}
    if kind is set or kind is frozenset:
        return {kind.__name__: [encode_value(item, depth + 1) for item in value]}
    if kind is dict:
        return {"dict": [[encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        return {"bytes": base64.b64encode(value).decode()}
    if kind is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    plain = _from_numpy(value)
    if plain is not _NOT_NUMPY:
        return encode_value(plain, depth + 1)
    raise NotPlain(f"cannot compare a value of type {kind.__module__}.{kind.__qualname__}")


_NOT_NUMPY = object()


def _from_numpy(value: Any) -> Any:
    """numpy scalars and arrays as plain Python values (their own conversion, re-checked by the caller)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return _NOT_NUMPY
    if type(value) is numpy.ndarray:
        return value.tolist()
    if isinstance(value, numpy.generic) and type(value).__module__ == "numpy":
        return value.item()
    return _NOT_NUMPY


def decode_value(data: Any, depth: int = 0) -> Any:
    """The inverse of :func:`encode_value`, run in the parent on untrusted input: plain types only."""
    if depth > MAX_DEPTH + 2:
        raise ValueError("value nested too deeply")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if not (isinstance(data, dict) and len(data) == 1):
        raise ValueError(f"malformed value {str(data)[:80]!r}")
    ((tag, body),) = data.items()
    if tag in ("list", "tuple", "set", "frozenset") and isinstance(body, list):
        items = [decode_value(item, depth + 1) for item in body]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(body, list):
        return {decode_value(k, depth + 1): decode_value(v, depth + 1) for k, v in body}
    if tag == "int" and isinstance(body, str):
        return int(body)
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "bytes" and isinstance(body, str):
        return base64.b64decode(body)
    if tag == "complex" and isinstance(body, list) and len(body) == 2:
        return complex(float(body[0]), float(body[1]))
    raise ValueError(f"malformed value tagged {tag!r}")
