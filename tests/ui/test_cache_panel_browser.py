"""The operator page's reward cache panel in a real browser: headless Chromium driven by selenium
against a real service, as tests/ui/test_browser.py drives the rest of the page.

The panel shows the service's hit rate, entries against the bound and evictions, and follows
traffic without a reload. (With the cache off, /ui/api/stats gives ``cache: null`` and the panel
stays hidden: tests/ui/test_stats.py covers the null; one service per module keeps this file cheap.)
"""

from __future__ import annotations

import httpx
import pytest

selenium = pytest.importorskip("selenium")
from browser_support import WAIT_S, needs_chromium  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from rewardhub.server import EmbeddedServer  # noqa: E402

pytestmark = needs_chromium
SAMPLES = [{"id": name, "response": name, "reference": name} for name in ("a", "b", "c")]


def _cells(driver: webdriver.Chrome) -> dict[str, str] | None:
    """Every cache cell's text by id, and whether the panel shows, read in one script call: the page
    redraws on every poll, so elements found in one call may be replaced by the next."""
    script = """
        const section = document.getElementById("cache-section");
        if (!section) return null;
        const cells = {hidden: String(section.hidden)};
        for (const e of section.querySelectorAll("[id^=cache-]")) cells[e.id] = e.textContent.trim();
        return cells;
    """
    return driver.execute_script(script)


def _wait_cells(driver: webdriver.Chrome, expected: dict[str, str]) -> dict[str, str]:
    def shown(d: webdriver.Chrome) -> bool:
        cells = _cells(d) or {}
        return all(cells.get(key) == value for key, value in expected.items())

    try:
        WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(shown)
    except Exception:
        pytest.fail(f"the cache panel shows {_cells(driver)}, expected {expected}")
    return _cells(driver) or {}


def test_the_panel_shows_hit_rate_entries_and_evictions_and_follows_traffic(browser: webdriver.Chrome):
    with EmbeddedServer(workers=1, cache_backend="memory", cache_max_entries=2) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            browser.get(f"{url}/ui")
            _wait_cells(browser, {"hidden": "false", "cache-hit-rate": "–", "cache-entries": "0 / 2"})
            browser.execute_script("window.__loadedOnce = 'yes';")  # a reload would wipe it

            first = client.post("/v1/score", json={"verifier": "exact", "cache": True, "samples": SAMPLES})
            assert first.status_code == 200
            _wait_cells(browser, {"cache-lookups": "3", "cache-misses": "3", "cache-hit-rate": "0.0%"})

            again = client.post("/v1/score", json={"verifier": "exact", "cache": True, "samples": SAMPLES[1:]})
            assert [r["cached"] for r in again.json()["results"]] == [True, True]
            cells = _wait_cells(browser, {"cache-hits": "2", "cache-hit-rate": "40.0%"})
            assert cells["cache-entries"] == "2 / 2"  # the third distinct verdict pushed the first out
            assert (cells["cache-evicted-size"], cells["cache-evicted-ttl"]) == ("1", "0")
            assert cells["cache-stores"] == "3" and cells["cache-corrupt"] == "0"
            assert "memory" in cells["cache-backends"]
            assert browser.execute_script("return window.__loadedOnce") == "yes"
