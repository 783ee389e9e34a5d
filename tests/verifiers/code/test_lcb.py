"""LiveCodeBench's private tests are read by a restricted unpickler: plain strings, lists and dicts only."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from rewardhub.verifiers.code.lcb import decode_private_tests, restricted_unpickle

CASES = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]


def encode(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw)).decode()


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_the_data_sets_encoding_reads_back_in_every_pickle_protocol(protocol):
    assert decode_private_tests(encode(pickle.dumps(json.dumps(CASES), protocol=protocol))) == CASES


def test_a_pickled_list_of_dicts_reads_back_too():
    assert decode_private_tests(encode(pickle.dumps(CASES))) == CASES


def test_a_pickle_that_would_call_a_function_is_refused_before_it_runs(tmp_path):
    target = tmp_path / "pwned"
    evil = f"cbuiltins\nopen\n(V{target}\nVw\ntR.".encode()
    with pytest.raises(ValueError, match="builtins.open"):
        decode_private_tests(encode(evil))
    assert not target.exists()


def test_a_reduce_to_os_system_is_refused():
    with pytest.raises(ValueError, match="os.system"):
        restricted_unpickle(b"cos\nsystem\n(S'echo pwned'\ntR.")


@pytest.mark.parametrize("value", [3, 1.5, (1, 2), {1, 2}, None, b"bytes", {"a": [1]}, {1: "a"}])
def test_anything_but_strings_lists_and_dicts_is_refused(value):
    with pytest.raises(ValueError, match="only strings, lists and dicts|not strings|not a plain pickle"):
        restricted_unpickle(pickle.dumps(value))


def test_persistent_ids_are_refused():
    with pytest.raises(ValueError, match="persistent"):
        restricted_unpickle(b"\x80\x02X\x01\x00\x00\x00xQ.")  # BINPERSID on the string "x"


def test_a_list_shared_many_times_is_refused_instead_of_walked():
    shared: list = []
    for _ in range(40):  # 2**40 paths through 40 lists
        shared = [shared, shared]
    with pytest.raises(ValueError, match="appears twice|nested too deeply"):
        restricted_unpickle(pickle.dumps(shared))


@pytest.mark.parametrize(
    ("text", "message"),
    [("not base64!", "not base64"), (base64.b64encode(b"not zlib").decode(), "not zlib"),
     (encode(b"garbage"), "not a plain pickle"), (encode(pickle.dumps("not json")), "not JSON"),
     (encode(pickle.dumps(json.dumps({"a": 1}))), "not a list")],
)  # fmt: skip
def test_broken_encodings_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        decode_private_tests(text)
