"""The reward cache on ``GET /ui/api/stats`` of a real service: hit rate, entries and evictions after
traffic, the figures ``/metrics`` gives for the same traffic, and a malformed request refused while
the page keeps serving."""

from __future__ import annotations

import re

import httpx
import pytest
from conftest import stats, wait_for

from rewardhub.server import EmbeddedServer
from rewardhub.ui.recorder import public_url

SAMPLES = [{"id": name, "response": name, "reference": name} for name in ("a", "b", "c")]


@pytest.fixture(scope="module")
def service():
    """A memory cache of two entries: the third distinct verdict pushes the first out."""
    with EmbeddedServer(workers=1, cache_backend="memory", cache_max_entries=2, cache_ttl_s=3600) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client


@pytest.fixture(scope="module")
def traffic(service: httpx.Client) -> dict:
    """Three distinct samples (three misses, a size eviction), then the two still cached (two hits)."""
    first = service.post("/v1/score", json={"verifier": "exact", "cache": True, "samples": SAMPLES})
    assert [r["cached"] for r in first.json()["results"]] == [False, False, False]
    again = service.post("/v1/score", json={"verifier": "exact", "cache": True, "samples": SAMPLES[1:]})
    assert [r["cached"] for r in again.json()["results"]] == [True, True]
    return wait_for(lambda: stats(service), lambda s: s["cache"]["lookups"] == 5)


def test_the_stats_give_hit_rate_entries_and_evictions(traffic: dict):
    cache = traffic["cache"]
    assert (cache["lookups"], cache["hits"], cache["misses"], cache["corrupt"]) == (5, 2, 3, 0)
    assert cache["hit_rate"] == pytest.approx(0.4)
    assert (cache["entries"], cache["max_entries"], cache["ttl_s"]) == (2, 2, 3600)
    assert cache["evictions"] == {"size": 1, "ttl": 0} and cache["stores"] == 3
    assert cache["backends"] == ["memory"]


def test_the_stats_agree_with_metrics(service: httpx.Client, traffic: dict):
    text = service.get("/metrics").text

    def value(pattern: str) -> float:
        found = re.search(rf"^{pattern} (\S+)$", text, re.MULTILINE)
        assert found, pattern
        return float(found.group(1))

    assert value(r'rewardhub_cache_lookups_total\{outcome="hit"\}') == traffic["cache"]["hits"]
    assert value(r'rewardhub_cache_evictions_total\{reason="size"\}') == traffic["cache"]["evictions"]["size"]
    assert value("rewardhub_cache_entries") == traffic["cache"]["entries"]
    assert value("rewardhub_cache_hit_ratio") == pytest.approx(traffic["cache"]["hit_rate"])


def test_a_malformed_cache_flag_is_a_4xx_and_the_figures_stay(service: httpx.Client, traffic: dict):
    refused = service.post("/v1/score", json={"verifier": "exact", "cache": "sometimes", "samples": SAMPLES})
    assert refused.status_code in (400, 422) and refused.json()["error"]["type"]
    after = stats(service)["cache"]
    assert (after["lookups"], after["hits"]) == (traffic["cache"]["lookups"], traffic["cache"]["hits"])


def test_a_backend_url_is_shown_without_its_password():
    assert public_url("redis://:s3cret@cache.internal:6380/1") == "redis://cache.internal:6380/1"
    assert public_url("redis://user:pw@cache") == "redis://cache"
    assert public_url("sqlite:////var/run/rewardhub/cache.sqlite3") == "sqlite:////var/run/rewardhub/cache.sqlite3"
    assert public_url("memory") == "memory"
