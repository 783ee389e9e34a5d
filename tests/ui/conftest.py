"""Fixtures of the operator page tests: real services on loopback, and polling for their figures."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

PLUGIN = str(__import__("pathlib").Path(__file__).parents[1] / "plugins" / "testing_verifiers.py")


def wait_for(fetch: Callable[[], Any], ok: Callable[[Any], bool], timeout_s: float = 30.0) -> Any:
    """Poll ``fetch`` until ``ok`` holds for its value (statistics are shared once a second)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = fetch()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def stats(client: httpx.Client) -> dict[str, Any]:
    answer = client.get("/ui/api/stats")
    answer.raise_for_status()
    return answer.json()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (tests/ui/browser_support.py); selenium is imported only
    by the tests that ask for it."""
    pytest.importorskip("selenium")
    from browser_support import open_browser

    with open_browser() as driver:
        yield driver
