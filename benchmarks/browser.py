"""A real headless browser for the HTML reports: Debian's ``chromium`` driven by Selenium.

:func:`browser` starts ``chromium --headless`` through ``chromedriver`` with its console and network
(performance) logs on; :func:`open_page` loads a page from ``file://`` and says how long it took until
the page's scripts had run; :func:`console_errors` and :func:`requests` read what the page logged and
every URL it asked for (a report must ask for nothing but itself). Used by ``tests/test_output_report_browser.py``
and :mod:`benchmarks.report_page`.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["browser", "open_page", "console_errors", "requests", "available", "CHROMIUM", "DRIVER"]

#: the Debian packages' executables (apt-get install chromium chromium-driver)
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = "chromedriver"


def available() -> str | None:
    """Why no browser can run here (None when one can): selenium, chromium or chromedriver missing."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install -e .[test])"
    if not any(shutil.which(name) for name in CHROMIUM):
        return "chromium is not installed (apt-get install chromium chromium-driver)"
    if not shutil.which(DRIVER):
        return "chromedriver is not installed (apt-get install chromium-driver)"
    return None


@contextmanager
def browser(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A headless chromium (a Selenium ``WebDriver``) with its browser and performance logs on, a
    ``width`` x ``height`` window and no proxy; quit on exit."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = next(shutil.which(n) for n in CHROMIUM if shutil.which(n))
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--no-proxy-server", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=shutil.which(DRIVER)),
                              options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, path: str | Path, ready: str = "return document.readyState === 'complete'",
              timeout: float = 30.0) -> float:
    """Load ``path`` from ``file://`` and wait until the script ``ready`` returns true; the seconds from
    the request to then (the time to open the page: parse, scripts, first layout)."""
    url = Path(path).resolve().as_uri()
    start = time.perf_counter()
    driver.get(url)
    while not driver.execute_script(ready):
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"{url}: not ready after {timeout:g} s")
        time.sleep(0.01)
    driver.execute_script("return document.body.getBoundingClientRect().height")  # a layout, forced
    return time.perf_counter() - start


def console_errors(driver: Any) -> list[str]:
    """The messages of level SEVERE (errors, failed loads, refused by the page's policy) the console has
    logged since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def requests(driver: Any) -> list[str]:
    """Every URL the browser asked for since the last call (``Network.requestWillBeSent`` of the
    performance log), the page itself included."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls
