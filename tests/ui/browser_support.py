"""Headless Chromium for the page tests: Debian's chromium and chromium-driver (installed by
scripts/install_system_deps.sh), driven by selenium. A test asks for the ``browser`` fixture
(tests/ui/conftest.py, one browser per module: :func:`open_browser`) and its module sets
``pytestmark = needs_chromium``.

Read the page with one script call per read (:func:`texts`, :func:`attr`): the page re-renders its
tables on every poll, so an element found by one WebDriver call may be stale by the next.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as DriverService

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(
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
"""How long a test waits for the page to show what it expects (it polls about once a second)."""


@contextmanager
def open_browser() -> Iterator[webdriver.Chrome]:
    """A headless browser with a profile of its own that is gone afterwards."""
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


def texts(driver: webdriver.Chrome, css: str) -> list[str]:
    """The visible text of every element matching css, read in one script call."""
    script = "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim());"
    return driver.execute_script(script, css)


def text(driver: webdriver.Chrome, css: str) -> str:
    found = texts(driver, css)
    return found[0] if found else ""


def attr(driver: webdriver.Chrome, css: str, name: str) -> str | None:
    """One attribute of the first element matching css, read in one script call."""
    script = "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;"
    return driver.execute_script(script, css, name)
