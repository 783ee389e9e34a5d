"""The operator page in a real browser: headless Chromium (Debian's chromium and chromium-driver,
installed by scripts/install_system_deps.sh) driven by selenium against a real service.

It renders, shows the right counts after traffic, updates without a reload, searches, shows sample
text as text (never as markup), and works behind API keys.
"""

from __future__ import annotations

import base64

import httpx
import pytest

selenium = pytest.importorskip("selenium")
from browser_support import WAIT_S, attr, needs_chromium, text, texts  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from rewardhub.server import EmbeddedServer  # noqa: E402

pytestmark = needs_chromium


def _wait_text(driver: webdriver.Chrome, css: str, expected: str) -> None:
    try:
        WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(lambda d: text(d, css) == expected)
    except Exception:
        pytest.fail(f"{css} shows {text(driver, css)!r}, expected {expected!r}; page: {driver.page_source[:3000]}")


def _score(client: httpx.Client, samples: list[dict], run: str) -> None:
    answer = client.post("/v1/score", json={"verifier": "math", "samples": samples}, headers={"X-Rewardhub-Run": run})
    assert answer.status_code == 200


RIGHT = {"id": "r", "response": "so \\boxed{4}", "reference": "4"}
WRONG = {"id": "w", "response": "so \\boxed{5}", "reference": "4"}


def test_the_page_renders_counts_traffic_and_updates_without_a_reload(browser: webdriver.Chrome):
    with EmbeddedServer(workers=1) as url, httpx.Client(base_url=url, timeout=60) as client:
        browser.get(f"{url}/ui")
        assert browser.title == "rewardhub"
        _wait_text(browser, "#verifiers tbody td", "nothing scored yet")
        browser.execute_script("window.__loadedOnce = 'yes';")  # a reload would wipe it

        _score(client, [RIGHT, WRONG], "run-1")
        _wait_text(browser, '#verifiers tr[data-name="math"] td.samples', "2")
        assert text(browser, '#verifiers tr[data-name="math"] td.ok') == "2"
        assert text(browser, '#verifiers tr[data-name="math"] td.error') == "0"
        assert text(browser, '#runs tr[data-name="run-1"] td.samples') == "2"
        assert attr(browser, '#verifiers tr[data-name="math"] svg.hist', "data-total") == "2"
        _wait_text(browser, "#samples-count", "2 shown of 2 kept")
        answers = texts(browser, "#samples td.answer")
        assert sorted(answers) == ["4", "5"]
        link = browser.execute_script('return document.querySelector("#samples a.json").href;')
        assert link.startswith(f"{url}/ui/api/samples/") and client.get(link).json()["result"]["status"] == "ok"

        _score(client, [RIGHT, RIGHT, RIGHT], "run-2")
        _wait_text(browser, '#verifiers tr[data-name="math"] td.samples', "5")
        _wait_text(browser, '#runs tr[data-name="run-2"] td.samples', "3")
        assert browser.execute_script("return window.__loadedOnce") == "yes"
        assert int(attr(browser, "#updated", "data-polls")) > 1

        search = browser.find_element(By.ID, "search")
        search.send_keys("boxed{5")
        _wait_text(browser, "#samples-count", "1 shown of 5 kept")
        assert text(browser, "#samples td.answer") == "5"


def test_sample_text_is_shown_as_text_never_as_markup(browser: webdriver.Chrome):
    hostile = '<img src="x" onerror="window.__pwned = 1"><b id="injected">bold</b>'
    with EmbeddedServer(workers=1) as url, httpx.Client(base_url=url, timeout=60) as client:
        answer = client.post(
            "/v1/score", json={"verifier": "exact", "samples": [{"id": hostile, "response": hostile, "reference": "a"}]}
        )
        assert answer.status_code == 200
        browser.get(f"{url}/ui")
        _wait_text(browser, "#samples-count", "1 shown of 1 kept")
        assert hostile in text(browser, "#samples tbody")
        assert browser.find_elements(By.ID, "injected") == []
        assert browser.execute_script("return window.__pwned") is None


def test_behind_api_keys_the_browser_needs_the_key(browser: webdriver.Chrome):
    with EmbeddedServer(workers=1, api_keys=["key-for-ui"]) as url, httpx.Client(base_url=url, timeout=60) as client:
        _score_with_key = client.post(
            "/v1/score",
            json={"verifier": "math", "samples": [RIGHT]},
            headers={"Authorization": "Bearer key-for-ui"},
        )
        assert _score_with_key.status_code == 200
        browser.get(f"{url}/ui")  # the browser is asked for credentials (Basic) and shows nothing of the page
        assert browser.find_elements(By.ID, "verifiers") == [] and "boxed" not in browser.page_source

        basic = "Basic " + base64.b64encode(b"operator:key-for-ui").decode()
        browser.execute_cdp_cmd("Network.enable", {})
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": basic}})
        try:
            browser.get(f"{url}/ui")
            _wait_text(browser, '#verifiers tr[data-name="math"] td.samples', "1")
        finally:
            browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
