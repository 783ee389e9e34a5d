"""The operator page in a real browser: headless Chromium (Debian's chromium and chromium-driver,
installed by scripts/install_system_deps.sh) driven by selenium against a real service.

It renders, shows the right counts after traffic, updates without a reload, searches, shows sample
text as text (never as markup), and works behind API keys.
"""

from __future__ import annotations

import base64
import shutil
import tempfile
from collections.abc import Iterator

import httpx
import pytest

selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service as DriverService  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from rewardhub.server import EmbeddedServer  # noqa: E402

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER), reason="chromium and chromium-driver: run scripts/install_system_deps.sh"
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
WAIT_S = 30


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="rewardhub-chromium-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(options=options, service=DriverService(executable_path=CHROMEDRIVER))
        try:
            yield driver
        finally:
            driver.quit()


def _texts(driver: webdriver.Chrome, css: str) -> list[str]:
    """The visible text of every element matching css, read in one script call: the page re-renders its
    tables on every poll, so an element found in one call may be gone (stale) by the next."""
    script = "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim());"
    return driver.execute_script(script, css)


def _text(driver: webdriver.Chrome, css: str) -> str:
    found = _texts(driver, css)
    return found[0] if found else ""


def _attr(driver: webdriver.Chrome, css: str, name: str) -> str | None:
    """One attribute of the first element matching css, read in one script call (see _texts)."""
    script = "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;"
    return driver.execute_script(script, css, name)


def _wait_text(driver: webdriver.Chrome, css: str, expected: str) -> None:
    try:
        WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(lambda d: _text(d, css) == expected)
    except Exception:
        pytest.fail(f"{css} shows {_text(driver, css)!r}, expected {expected!r}; page: {driver.page_source[:3000]}")


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
        assert _text(browser, '#verifiers tr[data-name="math"] td.ok') == "2"
        assert _text(browser, '#verifiers tr[data-name="math"] td.error') == "0"
        assert _text(browser, '#runs tr[data-name="run-1"] td.samples') == "2"
        assert _attr(browser, '#verifiers tr[data-name="math"] svg.hist', "data-total") == "2"
        _wait_text(browser, "#samples-count", "2 shown of 2 kept")
        answers = _texts(browser, "#samples td.answer")
        assert sorted(answers) == ["4", "5"]
        link = browser.execute_script('return document.querySelector("#samples a.json").href;')
        assert link.startswith(f"{url}/ui/api/samples/") and client.get(link).json()["result"]["status"] == "ok"

        _score(client, [RIGHT, RIGHT, RIGHT], "run-2")
        _wait_text(browser, '#verifiers tr[data-name="math"] td.samples', "5")
        _wait_text(browser, '#runs tr[data-name="run-2"] td.samples', "3")
        assert browser.execute_script("return window.__loadedOnce") == "yes"
        assert int(_attr(browser, "#updated", "data-polls")) > 1

        search = browser.find_element(By.ID, "search")
        search.send_keys("boxed{5")
        _wait_text(browser, "#samples-count", "1 shown of 5 kept")
        assert _text(browser, "#samples td.answer") == "5"


def test_sample_text_is_shown_as_text_never_as_markup(browser: webdriver.Chrome):
    hostile = '<img src="x" onerror="window.__pwned = 1"><b id="injected">bold</b>'
    with EmbeddedServer(workers=1) as url, httpx.Client(base_url=url, timeout=60) as client:
        answer = client.post(
            "/v1/score", json={"verifier": "exact", "samples": [{"id": hostile, "response": hostile, "reference": "a"}]}
        )
        assert answer.status_code == 200
        browser.get(f"{url}/ui")
        _wait_text(browser, "#samples-count", "1 shown of 1 kept")
        assert hostile in _text(browser, "#samples tbody")
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
