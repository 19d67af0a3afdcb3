"""Both HTML reports in a real headless browser (Debian's chromium, driven by Selenium).

Each page is opened from ``file://``: it must log no console error and ask for nothing but itself (the
performance log's requests); the leaderboard must sort on a click, a kernel's plot must open on a
click, a kernel named ``</script><script>alert(1)</script>`` must show as text and run nothing. A
screenshot of each page is saved in the test's temporary folder. Skipped only where selenium,
chromium or chromedriver is missing (.ci/run installs them).
"""

from __future__ import annotations

import pytest

from benchmarks.browser import available, browser, console_errors, open_page, requests

pytest.importorskip("selenium")
pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))

EVIL = "</script><script>alert(1)</script>"
READY = "return document.body.getAttribute('data-ready') === '1'"


@pytest.fixture(scope="module")
def driver():
    with browser(1400, 1000) as d:
        yield d


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The report of the demo's fit and of a small profile with a call tree and a hostile kernel name."""
    import pandas as pd

    import automodel
    from automodel.cli.demo import DEMO_DATA
    from automodel.kernels.fit_many import fit_many
    from automodel.output.report.profile import profile_page
    from benchmarks.report_page import synthetic_profile

    folder = tmp_path_factory.mktemp("reports")
    automodel.fit(str(DEMO_DATA), progress=False).report(folder / "fit.html")
    frame = synthetic_profile(30, seed=1)
    evil = frame[frame["callpath"] == "main"].assign(kernel=EVIL + " [time]", callpath=EVIL)
    frame = pd.concat([frame, evil], ignore_index=True)
    (folder / "profile.html").write_text(profile_page(fit_many(frame), frame, {"p": 4096.0}, source=EVIL),
                                         encoding="utf-8")
    return folder


def _offline(driver, loaded: bool = True) -> None:  # noqa: ANN001
    """No console error, no request but for the page itself (``loaded``: it was loaded since the last
    call; else not even that)."""
    assert console_errors(driver) == []
    urls = requests(driver)
    assert len(urls) == loaded and all(u.startswith("file:") for u in urls), urls


def test_fit_report_renders_offline_and_its_leaderboard_sorts(driver, pages):
    from selenium.webdriver.common.by import By

    open_page(driver, pages / "fit.html")
    _offline(driver)
    assert driver.find_element(By.CSS_SELECTOR, "#model math").size["width"] > 100  # the formula typeset
    assert driver.find_element(By.CSS_SELECTOR, "#plot svg").size["height"] > 200
    heads = driver.find_elements(By.CSS_SELECTOR, "#leaderboard thead th")
    column = [h.text for h in heads].index("n_terms")

    def values() -> list[float]:
        cells = driver.find_elements(By.CSS_SELECTOR, f"#leaderboard tbody td:nth-child({column + 1})")
        return [float(c.get_attribute("data-v")) for c in cells]

    before = values()
    heads[column].click()
    assert values() == sorted(before) and "asc" in heads[column].get_attribute("class")
    heads[column].click()
    assert values() == sorted(before, reverse=True)
    assert driver.find_elements(By.CSS_SELECTOR, "#leaderboard tr.chosen")
    driver.save_screenshot(str(pages / "fit.png"))
    assert (pages / "fit.png").stat().st_size > 10_000


def test_profile_report_opens_a_plot_and_runs_no_injected_script(driver, pages):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    open_page(driver, pages / "profile.html", READY)
    _offline(driver)
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018  (the injected alert never ran)
    names = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#kernels td.name")]
    assert EVIL in names and any(n.endswith("main") for n in names)
    assert driver.find_elements(By.CSS_SELECTOR, "#kernels tr[data-node] .toggle")  # a tree of call paths
    at = driver.find_element(By.CSS_SELECTOR, '#kernels th[data-sort="at"]')
    assert "desc" in at.get_attribute("class")
    rows = driver.find_elements(By.CSS_SELECTOR, "#kernels tbody tr[data-i]")
    rows[2].click()
    plot = driver.find_element(By.CSS_SELECTOR, "#kplot svg")
    assert plot.find_elements(By.CSS_SELECTOR, "polyline.curve") and plot.find_elements(By.CSS_SELECTOR, "circle.point")
    assert plot.find_elements(By.CSS_SELECTOR, "polygon.band")
    driver.find_element(By.CSS_SELECTOR, '#kernels th[data-sort="growth0"]').click()  # by growth in p
    driver.find_element(By.ID, "view").send_keys("flat")
    shown = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#kernels td.name")]
    assert len(shown) == 31
    _offline(driver, loaded=False)
    driver.save_screenshot(str(pages / "profile.png"))
    assert (pages / "profile.png").stat().st_size > 10_000
