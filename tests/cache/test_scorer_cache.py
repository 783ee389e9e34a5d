"""The reward cache on the one score path: what is served again, what is judged again, what is never served.

The scorer runs on an in-process executor that counts the samples it judges, so "served from the
cache" is "judged fewer samples", not a timing.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from cache_support import Counting, GroupCount, Length, Match, MatchV2

from rewardhub.cache import MemoryBackend, RewardCache, cache_key, encode_entry
from rewardhub.registry import Registry
from rewardhub.scoring import Scorer
from rewardhub.settings import Settings
from rewardhub.types import Result, Sample, VerifierRef


def scorer(*classes: type, cache: RewardCache | None = None, **settings: object) -> Scorer:
    registry = Registry(classes or (Match, Length, GroupCount))
    return Scorer(registry, Counting(registry), Settings(**settings), cache=cache)


def score(s: Scorer, samples: list[Sample], spec: object = "cache_match", cache: bool | None = True) -> list[Result]:
    return asyncio.run(s.score(samples, spec, cache=cache))  # type: ignore[arg-type]


def judged(s: Scorer) -> int:
    return s.executor.samples  # type: ignore[attr-defined]


def sample(response: str = "42", reference: str | None = "42", **fields: object) -> Sample:
    return Sample(response=response, reference=reference, **fields)  # type: ignore[arg-type]


def test_every_result_carries_its_verdict_key() -> None:
    [result] = score(scorer(), [sample()], cache=False)
    assert result.details["verdict_key"] == Match.verdict_key(Match.Config())
    assert result.details["verdict_key"]["version"] == "1" and result.cached is False


def test_a_hit_is_the_stored_result_byte_for_byte_but_for_cached_and_time() -> None:
    s = scorer()
    [first] = score(s, [sample(id="a")])
    [again] = score(s, [sample(id="a")])
    assert judged(s) == 1
    assert again.cached is True and first.cached is False
    strip = {"cached", "elapsed_ms"}
    assert again.model_dump_json(exclude=strip) == first.model_dump_json(exclude=strip)


def test_samples_that_differ_only_in_unread_fields_share_an_entry() -> None:
    s = scorer()
    score(s, [sample(id="a", prompt="p1", group="g1", metadata={"step": 1})])
    [other] = score(s, [sample(id="b", prompt="p2", group="g2", metadata={"step": 9})])
    assert judged(s) == 1 and other.cached and other.id == "b"
    score(s, [sample(response="41")])  # a read field differs: judged
    assert judged(s) == 2


def test_a_verifier_that_reads_everything_keys_on_everything() -> None:
    s = scorer()
    score(s, [sample(prompt="p1")], "cache_length")
    score(s, [sample(prompt="p2")], "cache_length")
    assert judged(s) == 2


def test_a_changed_config_misses() -> None:
    s = scorer()
    score(s, [sample(response=" 42 ")])
    [strict] = score(s, [sample(response=" 42 ")], VerifierRef(name="cache_match", config={"strip": False}))
    assert judged(s) == 2 and not strict.cached and strict.score == 0.0
    [explicit_default] = score(s, [sample(response=" 42 ")], VerifierRef(name="cache_match", config={"strip": True}))
    assert explicit_default.cached and judged(s) == 2  # the canonical config: defaults spelled out hash alike


def test_a_changed_version_misses() -> None:
    shared = RewardCache(MemoryBackend(100, 3600))
    old, new = scorer(Match, cache=shared), scorer(MatchV2, cache=shared)
    score(old, [sample()])
    [result] = score(new, [sample()])
    assert judged(new) == 1 and not result.cached
    assert result.details["verdict_key"]["version"] == "2"


def test_identical_samples_of_one_request_are_judged_once() -> None:
    s = scorer()
    results = score(s, [sample(id=str(i)) for i in range(16)] + [sample(id="x", response="7")])
    assert judged(s) == 2
    assert [r.id for r in results] == [*map(str, range(16)), "x"]
    assert [r.cached for r in results] == [False] + [True] * 15 + [False]


def test_only_ok_results_are_cached_unless_a_setting_says_otherwise() -> None:
    s = scorer()
    score(s, [sample(reference=None)])
    [again] = score(s, [sample(reference=None)])
    assert again.status == "error" and not again.cached and judged(s) == 2
    keeps_errors = scorer(cache_statuses=["ok", "error"])
    score(keeps_errors, [sample(reference=None)])
    [served] = score(keeps_errors, [sample(reference=None)])
    assert served.status == "error" and served.cached and judged(keeps_errors) == 1


def test_group_verifiers_are_never_cached() -> None:
    s = scorer()
    group = [sample(group="g"), sample(group="g")]
    score(s, group, "cache_group_count")
    results = score(s, group, "cache_group_count")
    assert judged(s) == 4 and not any(r.cached for r in results)
    assert not GroupCount.is_cacheable() and Match.is_cacheable()


def test_the_request_opts_in_or_out_and_the_setting_names_verifiers_cached_by_default() -> None:
    by_setting = scorer(cache_verifiers=["cache_match"])
    score(by_setting, [sample()], cache=None)
    [hit] = score(by_setting, [sample()], cache=None)
    assert hit.cached and judged(by_setting) == 1
    [opted_out] = score(by_setting, [sample()], cache=False)
    assert not opted_out.cached and judged(by_setting) == 2
    plain = scorer()
    score(plain, [sample()], cache=None)
    score(plain, [sample()], cache=None)
    assert judged(plain) == 2


def test_the_cache_can_be_off() -> None:
    s = scorer(cache_backend="off")
    score(s, [sample()])
    [again] = score(s, [sample()])
    assert s.cache is None and not again.cached and judged(s) == 2


def _address(s: Scorer, one: Sample) -> str:
    return cache_key(Match.verdict_key(Match.Config()), one, Match.reads)


@pytest.mark.parametrize(
    "poison",
    ["flipped byte", "truncated", "another sample's entry", "forged verdict", "not json"],
)
def test_a_corrupt_or_poisoned_entry_is_ignored_with_a_warning(poison: str, caplog: pytest.LogCaptureFixture) -> None:
    backend = MemoryBackend(100, 3600)
    s = scorer(cache=RewardCache(backend))
    wrong, right = sample(response="41"), sample(response="42")
    score(s, [wrong, right])
    target = _address(s, wrong)
    [stored] = backend.get_many([target])
    assert stored is not None
    if poison == "flipped byte":
        data = stored.replace(b'"score\\":0.0', b'"score\\":1.0')
        assert data != stored
    elif poison == "truncated":
        data = stored[: len(stored) // 2]
    elif poison == "another sample's entry":
        [data] = backend.get_many([_address(s, right)])  # a valid entry, copied to the wrong address
    elif poison == "forged verdict":  # a well-formed entry whose MAC is right, claiming a reward of 1
        [verdict] = score(scorer(), [right], cache=False)
        data = encode_entry(target, verdict.model_copy(update={"details": {}}))
    else:
        data = b"\x00\xffnot json"
    backend.put_many([(target, data)])  # type: ignore[list-item]
    with caplog.at_level(logging.WARNING, logger="rewardhub.cache"):
        [result] = score(s, [wrong])
    assert result.score == 0.0 and not result.cached
    assert any("ignored the entry" in r.getMessage() for r in caplog.records)
    assert s.cache is not None and s.cache.stats().corrupt == 1
    [next_time] = score(s, [wrong])  # the bad entry was replaced by the fresh verdict
    assert next_time.cached and next_time.score == 0.0


def test_an_entry_written_without_the_services_secret_is_not_served(caplog: pytest.LogCaptureFixture) -> None:
    backend = MemoryBackend(100, 3600)
    score(scorer(cache=RewardCache(backend)), [sample()])  # written by a service without the secret
    guarded = scorer(cache=RewardCache(backend, secret="s3cret"))
    with caplog.at_level(logging.WARNING, logger="rewardhub.cache"):
        [result] = score(guarded, [sample()])
    assert not result.cached and judged(guarded) == 1
    assert "MAC mismatch" in caplog.text


def test_stats_count_hits_misses_and_entries() -> None:
    s = scorer()
    score(s, [sample(), sample(response="1")])
    score(s, [sample(), sample(response="2")])
    assert s.cache is not None
    stats = s.cache.stats()
    assert (stats.hits, stats.misses, stats.stores, stats.entries) == (1, 3, 3, 3)
    assert stats.hit_rate == pytest.approx(0.25)


def test_a_composite_carries_a_key_over_its_leaves() -> None:
    s = scorer()
    spec = {"sum": [{"verifier": "cache_match", "weight": 1.0}, {"verifier": "cache_length", "weight": 0.0}]}
    [result] = score(s, [sample()], spec, cache=False)
    key = result.details["verdict_key"]
    assert key["verifier"] == "sum" and len(key["config_hash"]) == 16
    components = result.details["components"]
    assert components["cache_match"]["details"]["verdict_key"]["verifier"] == "cache_match"
    assert json.dumps(key) == json.dumps(score(scorer(), [sample()], spec, cache=False)[0].details["verdict_key"])


class Elsewhere(Counting):
    """An engine whose results were not made by run_call here: a timeout, or a worker of another release."""

    def __init__(self, registry: Registry, version: str | None) -> None:
        super().__init__(registry)
        self.version = version

    async def run(self, calls, on_progress=None):  # type: ignore[no-untyped-def, override]
        self.samples += sum(len(call.samples) for call in calls)
        if self.version is None:
            return [[Result.failed("timed out", status="timeout")] for _ in calls]
        key = {**Match.verdict_key(Match.Config()), "version": self.version}
        return [[Result(score=1.0, details={"verdict_key": key})] for _ in calls]


def test_a_result_made_outside_run_call_is_signed_by_the_scorer() -> None:
    registry = Registry([Match])
    s = Scorer(registry, Elsewhere(registry, None), Settings())
    [result] = score(s, [sample()])
    assert result.status == "timeout" and result.details["verdict_key"] == Match.verdict_key(Match.Config())


def test_a_verdict_signed_by_another_release_is_not_stored() -> None:
    registry = Registry([Match])
    s = Scorer(registry, Elsewhere(registry, "0"), Settings())
    score(s, [sample()])
    [again] = score(s, [sample()])
    assert not again.cached and judged(s) == 2
    assert again.details["verdict_key"]["version"] == "0"  # the worker's own key is reported, not replaced
