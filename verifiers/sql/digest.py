"""Rows as 16-byte digests, so a large result is compared without being held as Python tuples.

A value's digest is a keyed BLAKE2b of a canonical encoding that is equal exactly when Python's
``==`` says the values are equal, for what SQLite returns (``None``, ``int``, ``float``, ``str``,
``bytes``): ``1``, ``1.0`` and ``True`` encode alike, ``'1'`` and ``b'1'`` do not. A row's digest is
the digest of its values' digests in column order, so a row read under a column permutation is
digested from the same value digests without reading the row again.

Bags of rows are compared by their additive hash (Clarke et al., "Incremental multiset hash
functions", 2003): the sum of the members' digests modulo 2**128. Sequences are compared by a
polynomial hash, ``sum(d_i * R**(n-i)) mod P`` for the prime ``P = 2**127 - 1`` and a secret ``R``:
two different sequences of n digests collide with probability at most n/P. The key and ``R`` are
drawn once per process, so nobody can search offline for two different results with the same
hash; two equal results always hash alike. Sets, where duplicates must collapse, keep their
digests in a Python set (about 100 bytes per distinct row).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from hashlib import blake2b
from typing import Any

__all__ = ["DIGEST_BYTES", "RowDigester", "bag_add", "row_digest", "sequence_add", "unordered_digest", "value_digest"]

DIGEST_BYTES = 16
_MASK = (1 << (8 * DIGEST_BYTES)) - 1
_PRIME = (1 << 127) - 1
_KEY = os.urandom(32)
_POINT = int.from_bytes(os.urandom(16), "little") % _PRIME


_KEYED = blake2b(digest_size=DIGEST_BYTES, key=_KEY)  # copied per digest: cheaper than keying anew


def _digest(data: bytes) -> bytes:
    hasher = _KEYED.copy()
    hasher.update(data)
    return hasher.digest()


def _encoding(value: Any) -> bytes:
    """A byte string equal for two values exactly when ``==`` holds between them."""
    if value is None:
        return b"n"
    if isinstance(value, float):
        if not value.is_integer():
            return b"f" + value.hex().encode()
        value = int(value)  # 2.0 == 2 in Python, and in both benchmarks' comparisons
    if isinstance(value, int):  # bool too: True == 1
        return b"i%d" % value
    if isinstance(value, str):
        return b"s" + value.encode("utf-8", "surrogatepass")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return b"b" + bytes(value)
    return b"r" + repr(value).encode("utf-8", "surrogatepass")  # a gold_result's list or object: equal to no SQL value


def value_digest(value: Any) -> bytes:
    """16 bytes that are equal exactly when the values are: a short encoding itself (zero-padded,
    its length in the last byte), a longer one's keyed digest. Row digests, which every verdict
    rests on, are keyed either way."""
    encoding = _encoding(value)
    if len(encoding) < DIGEST_BYTES:
        return encoding + bytes(DIGEST_BYTES - 1 - len(encoding)) + bytes((len(encoding),))
    return _digest(encoding)


def row_digest(value_digests: Iterable[bytes]) -> bytes:
    """The digest of a row, from its values' digests in column order (the width is in the length)."""
    return _digest(b"".join(value_digests))


def unordered_digest(row: Sequence[Any]) -> bytes:
    """The digest of a row's values sorted as Spider's test suite sorts them (``unorder_row``).

    The key is ``str(x) + str(type(x))``, so ``1`` and ``1.0`` may land in different places and
    two rows equal under a column permutation can still differ here, as they do in the test suite.
    """
    return RowDigester().digest(row)[2]


def _second(part: tuple[bytes, str]) -> str:
    return part[1]


def _sort_key(value: Any) -> str:
    return str(value) + str(type(value))


class RowDigester:
    """Digests rows of one result, remembering the digests of recent values (results repeat them)."""

    _REMEMBERED = 4096

    def __init__(self) -> None:
        self._known: dict[tuple[type, Any], tuple[bytes, str]] = {}

    def digest(self, row: Sequence[Any], whole: bool = True) -> tuple[list[bytes], bytes, bytes]:
        """The row's value digests, its digest (``b""`` unless ``whole``), and the digest of its
        values in Spider's sorted order."""
        parts = [self._value(value) for value in row]
        digests = [digest for digest, _ in parts]
        parts.sort(key=_second)  # ties are equal values: equal digests
        return digests, row_digest(digests) if whole else b"", row_digest([digest for digest, _ in parts])

    def key(self, row: Sequence[Any]) -> bytes:
        """The row's digest alone."""
        return row_digest([self._value(value)[0] for value in row])

    def _value(self, value: Any) -> tuple[bytes, str]:
        if isinstance(value, float) and value == 0.0:
            return value_digest(value), _sort_key(value)  # -0.0 and 0.0: one dict key, two sort keys
        try:
            key = (type(value), value)
            known = self._known.get(key)
        except TypeError:  # a gold_result's list: not hashable, not remembered
            return value_digest(value), _sort_key(value)
        if known is None:
            if len(self._known) >= self._REMEMBERED:
                self._known.clear()
            known = self._known[key] = (value_digest(value), _sort_key(value))
        return known


def bag_add(total: int, digest: bytes) -> int:
    """``total`` with one more member of a bag (a multiset): order does not count."""
    return (total + int.from_bytes(digest, "little")) & _MASK


def sequence_add(total: int, digest: bytes) -> int:
    """``total`` (the hash of a sequence) with ``digest`` appended: order counts."""
    return (total * _POINT + int.from_bytes(digest, "little")) % _PRIME
