"""The page's figures: exact counts, percentiles and histograms computed by hand, and several
processes' snapshots adding up to what one process that saw everything would show."""

from __future__ import annotations

import json

import pytest

from rewardhub.ui.stats import MAX_ERROR_MESSAGES, MAX_RUNS, ProcessStats, histogram, merge, percentile, summarise

NOW = 1_000_000.0


def test_percentiles_interpolate_between_ranks():
    assert percentile([], 50) is None
    assert percentile([7.0], 99) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5  # rank 1.5
    assert percentile(list(map(float, range(101))), 99) == 99.0
    assert percentile([10.0, 0.0], 100) == 10.0


def test_rewards_in_unit_interval_are_binned_over_zero_to_one():
    hist = histogram([0.0, 0.0, 0.5, 1.0], bins=4)
    assert (hist["lo"], hist["hi"]) == (0.0, 1.0)
    assert hist["counts"] == [2, 0, 1, 1]  # 1.0 falls in the last bin, not past it


def test_rewards_outside_unit_interval_use_their_range_and_a_constant_gets_a_bin():
    assert histogram([-1.0, 3.0], bins=4) == {"lo": -1.0, "hi": 3.0, "counts": [1, 0, 0, 1]}
    assert histogram([2.0, 2.0], bins=2)["counts"] == [0, 2]


def _process(events):
    stats = ProcessStats()
    for verifier, run, status, score, ms, error, t in events:
        stats.add(verifier, run, status, score, ms, error, now=t)
    return stats


def test_one_scope_counts_statuses_errors_latency_rate_and_rewards_of_ok_samples_only():
    stats = _process(
        [
            ("math", "r1", "ok", 1.0, 10.0, None, NOW - 1),
            ("math", "r1", "ok", 0.0, 20.0, None, NOW - 2),
            ("math", None, "timeout", 0.0, 30.0, "timed out after 5s", NOW - 3),
            ("math", None, "error", -1.0, 40.0, "verifier bug", NOW - 30),  # outside the 10 s rate window
            ("code", "r1", "error", 0.0, 5.0, "verifier bug", NOW - 1),
        ]
    )
    page = summarise(merge([stats.snapshot(now=NOW)]), now=NOW)
    math = page["verifiers"]["math"]
    assert math["samples"] == 4
    assert math["status"] == {"ok": 2, "timeout": 1, "error": 1}
    assert math["samples_per_s"] == pytest.approx(3 / 10)
    assert math["latency_ms"]["p50"] == 25.0
    assert math["reward_mean"] == 0.5  # the timeout's and the error's failure scores are not rewards
    assert sum(math["reward_histogram"]["counts"]) == 2
    assert [e["message"] for e in math["top_errors"]] == ["timed out after 5s", "verifier bug"]
    assert page["runs"]["r1"]["samples"] == 3
    assert page["runs"]["r1"]["status"] == {"ok": 2, "timeout": 0, "error": 1}
    assert page["total"] == 5


def test_two_processes_add_up_to_one_that_saw_everything():
    events = [("math", f"run{i % 2}", "ok" if i % 3 else "error", i / 10, float(i), "bad" if i % 3 == 0 else None,
               NOW - i % 5) for i in range(10)]  # fmt: skip
    alone = summarise(merge([_process(events).snapshot(now=NOW)]), now=NOW)
    split = summarise(merge([_process(events[:4]).snapshot(now=NOW), _process(events[4:]).snapshot(now=NOW)]), now=NOW)
    assert split["processes"] == 2
    for key in ("verifiers", "runs", "total"):
        assert split[key] == alone[key]


def test_the_snapshot_is_json_and_survives_a_round_trip():
    stats = _process([("math", "r", "ok", 1.0, 3.0, None, NOW)])
    snapshot = stats.snapshot(now=NOW)
    assert merge([json.loads(json.dumps(snapshot))]) == merge([snapshot])


def test_distinct_error_messages_are_capped_and_the_rest_counted_together():
    stats = _process([("v", None, "error", 0.0, 1.0, f"message {i}", NOW) for i in range(MAX_ERROR_MESSAGES + 7)])
    errors = stats.verifiers["v"].errors
    assert len(errors) == MAX_ERROR_MESSAGES + 1
    assert errors["(other messages)"] == 7
    assert sum(errors.values()) == MAX_ERROR_MESSAGES + 7


def test_merged_recent_samples_are_newest_first_and_cut_to_the_limit():
    a, b = ProcessStats(), ProcessStats()
    for i in range(3):
        a.remember({"key": f"a{i}", "ts": NOW + 2 * i, "seq": i})
        b.remember({"key": f"b{i}", "ts": NOW + 2 * i + 1, "seq": i})
    merged = merge([a.snapshot(), b.snapshot()], recent_limit=4)
    assert [e["key"] for e in merged["recent"]] == ["b2", "a2", "b1", "a1"]


def test_a_process_keeps_only_its_last_samples():
    stats = ProcessStats(recent_limit=2)
    for i in range(5):
        stats.remember({"key": str(i), "ts": NOW})
    assert [e["key"] for e in stats.recent] == ["3", "4"]


def test_runs_are_capped_and_the_least_recently_scored_one_goes_first():
    stats = ProcessStats()
    for i in range(MAX_RUNS):
        stats.add("math", f"run{i}", "ok", 1.0, 1.0, None, now=NOW + i)
    stats.add("math", "run0", "ok", 1.0, 1.0, None, now=NOW + 100)  # run0 is active again; run1 is now the oldest
    stats.add("math", "new", "ok", 1.0, 1.0, None, now=NOW + 101)
    assert len(stats.runs) == MAX_RUNS
    assert "run1" not in stats.runs and {"run0", "new"} <= set(stats.runs)
    assert stats.verifiers["math"].counts["ok"] == MAX_RUNS + 2  # the verifier's figures lose nothing


def _cache(backend="memory", entries=0, hits=0, misses=0, corrupt=0, stores=0, evictions=None):
    return {"backend": backend, "hits": hits, "misses": misses, "corrupt": corrupt, "stores": stores, "errors": 0,
            "entries": entries, "evictions": evictions or {}}  # fmt: skip


def _with_cache(cache):
    stats = ProcessStats()
    stats.cache = cache
    return stats.snapshot(now=NOW)


def test_the_cache_hit_rate_counts_a_corrupt_entry_as_a_lookup_that_missed():
    page = summarise(merge([_with_cache(_cache(entries=3, hits=3, misses=4, corrupt=1, stores=4))]), now=NOW)
    cache = page["cache"]
    assert (cache["lookups"], cache["hits"], cache["hit_rate"]) == (8, 3, 3 / 8)
    assert cache["entries"] == 3 and cache["stores"] == 4
    assert cache["evictions"] == {"size": 0, "ttl": 0} and cache["evicted"] == 0


def test_processes_with_their_own_memory_add_entries_up_and_a_shared_store_counts_once():
    memory = [_cache(entries=5, hits=1, misses=2, evictions={"size": 2}), _cache(entries=7, hits=3, misses=2)]
    alone = summarise(merge([_with_cache(c) for c in memory]), now=NOW)["cache"]
    assert (alone["entries"], alone["hits"], alone["hit_rate"]) == (12, 4, 0.5)
    assert alone["evictions"] == {"size": 2, "ttl": 0}
    shared = [_cache("redis://cache:6379/0", entries=40, evictions={"ttl": 1}),
              _cache("redis://cache:6379/0", entries=41, evictions={"ttl": 2})]  # fmt: skip
    together = summarise(merge([_with_cache(c) for c in shared]), now=NOW)["cache"]
    assert together["entries"] == 41  # the store's count, as the latest process read it, not 81
    assert together["evictions"]["ttl"] == 3 and together["backends"] == ["redis://cache:6379/0"]
    assert together["hit_rate"] is None  # no lookup yet


def test_a_cache_backend_that_did_not_answer_leaves_entries_unknown_and_no_cache_is_none():
    down = summarise(merge([_with_cache(_cache(entries=4)), _with_cache(_cache("sqlite:///x", entries=-1))]), now=NOW)
    assert down["cache"]["entries"] is None
    assert summarise(merge([ProcessStats().snapshot(now=NOW)]), now=NOW)["cache"] is None
