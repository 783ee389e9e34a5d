"""LiveCodeBench's private tests: base64 of zlib of a pickle, read without ever running a pickle.

The data set stores ``base64(zlib(pickle.dumps(json_text)))``. ``pickle.loads`` on it would run
whatever callable the pickle names (``os.system`` is one ``GLOBAL`` opcode away), and the text
comes from wherever the caller's data came from. So the pickle is read by an unpickler that
refuses every global and every persistent id (only the built-in opcodes for strings, lists and
dicts can build anything), and the result is checked to be made of exactly those types. The
decompressed size is capped, so a zlib bomb costs nothing.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib
from typing import Any

__all__ = ["MAX_DECOMPRESSED", "decode_private_tests", "restricted_unpickle"]

MAX_DECOMPRESSED = 256 << 20
"""Largest decompressed pickle accepted (the biggest LiveCodeBench rows are tens of MB)."""
_MAX_DEPTH = 32


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"the pickle names {module}.{name}; only strings, lists and dicts are accepted")

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("the pickle uses persistent ids; only strings, lists and dicts are accepted")


def restricted_unpickle(data: bytes) -> str | list[Any] | dict[str, Any]:
    """The value in ``data`` if it is built of plain strings, lists and dicts only; ValueError otherwise."""
    try:
        value = _PlainUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ValueError(f"private tests: not a plain pickle ({exc})") from None
    _check_plain(value)
    return value


def decode_private_tests(text: str) -> list[Any]:
    """LiveCodeBench's ``private_test_cases`` field as its list of test cases; ValueError says why not."""
    try:
        compressed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("private tests: not base64") from None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(compressed, MAX_DECOMPRESSED)
    except zlib.error as exc:
        raise ValueError(f"private tests: not zlib data ({exc})") from None
    if inflater.unconsumed_tail:
        raise ValueError(f"private tests: more than {MAX_DECOMPRESSED >> 20} MiB once decompressed")
    value = restricted_unpickle(data)
    if isinstance(value, str):  # the data set pickles the JSON text
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("private tests: the pickled text is not JSON") from None
    if not isinstance(value, list):
        raise ValueError("private tests: not a list of test cases")
    return value


def _check_plain(value: Any) -> None:
    """Exactly str, list and dict (with string keys) all the way down.

    Iterative with bounded depth, and each container is visited once: a pickle can share one list
    many times over (its memo), which would otherwise make a tiny pickle a long walk.
    """
    stack = [(value, 0)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ValueError("private tests: nested too deeply")
        kind = type(item)
        if kind is str:
            continue
        if id(item) in seen:
            raise ValueError("private tests: a list or dict appears twice (plain JSON data never shares)")
        seen.add(id(item))
        if kind is list:
            stack.extend((element, depth + 1) for element in item)
        elif kind is dict:
            if not all(type(key) is str for key in item):
                raise ValueError("private tests: a dict with keys that are not strings")
            stack.extend((element, depth + 1) for element in item.values())
        else:
            raise ValueError(
                f"private tests: a value of type {kind.__name__}; only strings, lists and dicts are accepted"
            )
