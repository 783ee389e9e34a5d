"""The wire: strict values (only plain built-in data survives) and messages that carry descriptors."""

from __future__ import annotations

import json
import os
import re
import socket
import threading

import numpy as np
import pytest

from rewardhub.sandbox.inside.wire import (
    NotPlain,
    _loads,
    decode_value,
    dumps,
    encode_value,
    recv_message,
    recv_run,
    send_message,
    send_run,
)


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, -7, 2**100, 1.5, float("inf"), "text", b"\x00\xff", 1 + 2j,
     [1, [2, 3]], (1, (2,)), {1, 2}, frozenset({"a"}), {"k": [1, 2], (1, 2): None}, []],
)  # fmt: skip
def test_plain_values_survive_the_round_trip_with_their_exact_types(value):
    decoded = decode_value(encode_value(value))
    assert decoded == value
    assert type(decoded) is type(value)


def test_nan_survives_as_nan():
    assert decode_value(encode_value(float("nan"))) != decode_value(encode_value(float("nan")))


def test_an_object_that_equals_everything_cannot_be_encoded():
    class Cheat:
        def __eq__(self, other):
            return True

    with pytest.raises(NotPlain):
        encode_value(Cheat())


def test_a_subclass_of_a_plain_type_cannot_be_encoded():
    class Sneaky(int):
        def __eq__(self, other):
            return True

    with pytest.raises(NotPlain):
        encode_value([1, Sneaky(2)])


def test_numpy_values_become_plain_values():
    assert decode_value(encode_value(np.int64(3))) == 3
    assert type(decode_value(encode_value(np.float32(0.5)))) is float
    assert decode_value(encode_value(np.arange(3))) == [0, 1, 2]


def test_a_self_referencing_list_cannot_be_encoded():
    loop: list = []
    loop.append(loop)
    with pytest.raises(NotPlain):
        encode_value(loop)


@pytest.mark.parametrize("data", [{"list": 1}, {"object": []}, {"a": 1, "b": 2}, [1, 2], {"float": "1e400x"}])
def test_malformed_values_are_rejected_when_decoding(data):
    with pytest.raises(ValueError):
        decode_value(data)


def test_messages_carry_file_descriptors():
    left, right = socket.socketpair()
    read_end, write_end = os.pipe()
    try:
        # bigger than a socket buffer: the sender must finish what sendmsg did not take
        sender = threading.Thread(target=send_message, args=(left, {"op": "exec", "data": "x" * 300_000}, [write_end]))
        sender.start()
        message, fds = recv_message(right)
        sender.join()
        os.write(fds[0], b"through the passed pipe")
        os.close(fds[0])
        assert message == {"op": "exec", "data": "x" * 300_000}
        assert os.read(read_end, 100) == b"through the passed pipe"
    finally:
        for sock in (left, right):
            sock.close()
        os.close(read_end)
        os.close(write_end)


def test_a_closed_peer_is_end_of_file():
    left, right = socket.socketpair()
    left.close()
    with pytest.raises(EOFError):
        recv_message(right)
    right.close()


MESSAGES = [
    {"op": "exited", "status": 0, "cpu_s": 0.0021, "oom_kills": None, "reset": {"dirty": False, "problems": []}},
    {"op": "exec", "argv": ["./main", "é ü ✓"], "env": {"A": "1"}, "limits": {"cpu_s": 11, "nan": float("inf")}},
    {"text": 'quotes " and \\ and \n newlines and \x00', "big": 2**80, "nested": [[[]], {}]},
]


@pytest.mark.parametrize("message", MESSAGES)
def test_control_messages_read_as_json_reads_them(message):
    """The C scanner and encoder are called directly: the bytes and the values are json's own."""
    left, right = socket.socketpair()
    try:
        send_message(left, message)
        assert recv_message(right)[0] == message
        assert dumps(message) == json.dumps(message, separators=(",", ":")).encode()
    finally:
        left.close()
        right.close()


@pytest.mark.parametrize("body", [b"", b"{", b'{"a": 1} trailing', b"[1, 2,]", b"\xff"])
def test_a_malformed_control_message_is_an_error_not_a_partial_value(body):
    with pytest.raises(ValueError):
        _loads(body)


def test_a_run_reaches_the_servers_child_in_marshal_with_its_descriptors():
    left, right = socket.socketpair()
    read_end, write_end = os.pipe()
    run = {"op": "exec", "fds": ["stdout"], "limits": {"cpu_s": 3, "address_space": None}, "argv": ("a", "b")}
    try:
        send_run(left, run, [write_end])
        received, fds = recv_run(right)
        os.write(fds[0], b"ok")
        os.close(fds[0])
        assert (received, os.read(read_end, 10)) == (run, b"ok")
    finally:
        for fd in (read_end, write_end):
            os.close(fd)
        left.close()
        right.close()


def _inside_copy(file: str, name: str, wanted: set[str]):
    """A function that code inside the sandbox carries a copy of (the session kernel and its judge
    run alone in a session's sandbox, without this module), lifted out of its source with the
    names it needs: the copy must read and write values as the wire does."""
    import ast
    import base64
    from pathlib import Path

    from rewardhub.sandbox import inside

    tree = ast.parse((Path(inside.__file__).parent / file).read_text())
    kept = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in wanted)
        or (isinstance(node, ast.Assign) and any(getattr(t, "id", None) in wanted for t in node.targets))
    ]
    namespace: dict = {"sys": __import__("sys"), "base64": base64}
    exec(compile(ast.Module(body=kept, type_ignores=[]), file, "exec"), namespace)
    return namespace[name]


def _session_kernel_encoder():
    """The session kernel's own copy of ``encode_value``: it must tag values as the wire does."""
    return _inside_copy("session_kernel.py", "encode_value", {"MAX_DEPTH", "NotPlain", "encode_value"})


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -7, 2**100, 1.5, float("inf"), "text", b"\x00\xff", 1 + 2j, [1, [2, 3]], (1, (2,)),
     {1, 2}, frozenset({"a"}), {"k": [1, 2], (1, 2): None}, np.int64(3), np.array([[1, 2]])],
)  # fmt: skip
def test_the_session_kernel_tags_values_as_the_wire_does(value):
    assert _session_kernel_encoder()(value) == encode_value(value)


@pytest.mark.parametrize(
    "data",
    [None, 3, {"int": "12345678901234567890"}, {"float": "nan"}, {"bytes": "AP8="}, {"complex": [1.0, 2.0]},
     {"tuple": [1, {"list": [2]}]}, {"set": [1, 2]}, {"dict": [["k", {"frozenset": ["a"]}]]},
     {"float": "-inf"}, {"str": "x"}, {"int": 5}, {"a": 1, "b": 2}, [1, 2], {"float": "1e400"}],
)  # fmt: skip
def test_the_session_judge_reads_values_as_the_wire_does(data):
    """The judge's copy of ``decode_value`` (what a session's program process answers) accepts and
    refuses exactly what the wire's does."""
    judge_decode = _inside_copy("session_judge.py", "decode_value", {"MAX_DEPTH", "decode_value"})
    try:
        expected = decode_value(data)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            judge_decode(data)
        return
    got = judge_decode(data)
    assert got == expected or (got != got and expected != expected)
    assert type(got) is type(expected)
