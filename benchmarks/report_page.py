"""The HTML reports in a real browser: the size of a profile report of 10^4 kernels and its time to open.

Run ``python -m benchmarks.report_page [--quick] [--kernels N] [--out DIR] [--screenshots DIR]``.
A synthetic profile (:func:`synthetic_profile`: ``N`` kernels on a three-level call tree, each
``a + b p^e log2(p)^l`` measured at ``p = 2 ... 32`` with 2 % noise, three repetitions) is modelled by
:func:`automodel.fit_many` (one parameter: the batched path) and written as the profile report
(:mod:`automodel.output.report.profile`) compared at ``p = 4096``. The page is opened from ``file://`` in
headless chromium (:mod:`benchmarks.browser`) :data:`OPENS` times; the open time is from the request to
the page's script having drawn the first rows (``data-ready``), best and median of the runs. Then a
click on the first kernel draws its plot (timed too). The targets: under :data:`TARGET_MB` MB and
under :data:`TARGET_SECONDS` s to open. ``--quick`` uses 500 kernels and one open; :func:`collect` is
the measurement ``benchmarks.speed.collect`` runs (``python -m benchmarks``, its "Speed" section).

``--screenshots DIR`` also writes the README's two pictures: ``report-fit.png`` (the report of the
demo's fit) and ``report-profile.png`` (a profile of 60 kernels compared at ``p = 256``, one kernel's
plot open).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import report
from benchmarks.browser import available, browser, console_errors, open_page, requests

TARGET_MB = 20.0
TARGET_SECONDS = 3.0
OPENS = 5
#: the page has drawn its rows
READY = "return document.body.getAttribute('data-ready') === '1'"
PHASES = ("setup", "solve", "exchange", "io", "reduce", "halo", "update", "checkpoint")


def synthetic_profile(n_kernels: int, seed: int = 0, reps: int = 3) -> pd.DataFrame:
    """A tidy profile (``kernel, callpath, metric, p, time``) of ``n_kernels`` kernels on a call tree
    ``main->phase->kernel_i`` (and ``main``), kernel ``i`` following ``a + b p^e log2(p)^l`` (a, b in
    [0.1, 10), e in {0, 0.5, 1, 1.5, 2}, l in {0, 1}) at ``p = 2, 4, ..., 32`` with 2 % noise."""
    rng = np.random.default_rng(seed)
    p = 2.0 ** np.arange(1, 6)
    paths = ["main"] + [f"main->{PHASES[i % len(PHASES)]}->kernel_{i:05d}" for i in range(n_kernels - 1)]
    a, b = rng.uniform(0.1, 10.0, (2, n_kernels, 1, 1))
    e = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], (n_kernels, 1, 1))
    l = rng.integers(0, 2, (n_kernels, 1, 1))
    clean = a + b * p[None, :, None] ** e * np.log2(p[None, :, None]) ** l
    times = clean * (1 + 0.02 * rng.standard_normal((n_kernels, len(p), reps)))
    frame = pd.DataFrame({"callpath": np.repeat(paths, len(p) * reps), "metric": "time",
                          "p": np.tile(np.repeat(p, reps), n_kernels), "time": times.ravel()})
    frame.insert(0, "kernel", frame["callpath"] + " [time]")
    frame.attrs.update(params=["p"], source=f"synthetic profile of {n_kernels} kernels")
    return frame


def write_profile_report(n_kernels: int, path: Path, p: float = 4096.0) -> dict:
    """Model the synthetic profile of ``n_kernels`` kernels and write its report, compared at ``p``, to
    ``path``; the seconds each step took and the page's size."""
    from automodel.kernels.fit_many import fit_many
    from automodel.output.report.profile import profile_page

    frame = synthetic_profile(n_kernels)
    start = time.perf_counter()
    result = fit_many(frame, progress=False)
    fitted = time.perf_counter()
    page = profile_page(result, frame, {"p": p}, source=frame.attrs["source"])
    path.write_text(page, encoding="utf-8")
    return {"kernels": n_kernels, "fit_seconds": fitted - start, "page_seconds": time.perf_counter() - fitted,
            "megabytes": path.stat().st_size / 1e6}


def time_in_browser(path: Path, opens: int, screenshot: Path | None = None) -> dict:
    """Open ``path`` ``opens`` times in headless chromium (a new tab state each time); the open times,
    the time a click takes to draw the first kernel's plot, console errors and requests."""
    from selenium.webdriver.common.by import By

    with browser() as driver:
        seconds = []
        for _ in range(opens):
            driver.get("about:blank")
            seconds.append(open_page(driver, path, READY))
        start = time.perf_counter()
        driver.find_element(By.CSS_SELECTOR, "#kernels tbody tr[data-i]").click()
        driver.find_element(By.CSS_SELECTOR, "#kplot svg polyline")
        click = time.perf_counter() - start
        sort = _timed_click(driver, '#kernels th[data-sort="growth0"]')
        every = _timed_click(driver, "#more") if driver.find_element(By.ID, "more").is_displayed() else 0.0
        rows = driver.execute_script("return document.querySelectorAll('#kernels tbody tr').length")
        if screenshot is not None:
            driver.save_screenshot(str(screenshot))
        foreign = [u for u in requests(driver) if not u.startswith(("file:", "data:", "about:"))]
        return {"open_seconds": seconds, "best_open": min(seconds), "median_open": statistics.median(seconds),
                "plot_seconds": click, "sort_seconds": sort, "show_all_seconds": every, "rows_shown": rows,
                "console_errors": console_errors(driver), "foreign_requests": foreign}


def _timed_click(driver, selector: str) -> float:  # noqa: ANN001
    """Seconds from a click on ``selector`` to the page's redraw, layout included."""
    from selenium.webdriver.common.by import By

    driver.execute_script("document.body.removeAttribute('data-ready')")
    start = time.perf_counter()
    driver.find_element(By.CSS_SELECTOR, selector).click()
    while not driver.execute_script(READY):
        time.sleep(0.005)
    driver.execute_script("return document.body.getBoundingClientRect().height")
    return time.perf_counter() - start


def screenshots(folder: Path) -> list[Path]:
    """The README's pictures: the demo fit's report and a profile report with one kernel's plot open."""
    import automodel
    from automodel.cli.demo import DEMO_DATA
    from selenium.webdriver.common.by import By

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fit_html, profile_html = Path(tmp) / "fit.html", Path(tmp) / "profile.html"
        runs = automodel.read(DEMO_DATA)
        runs.attrs["source"] = DEMO_DATA.name  # the page names the file, not where this checkout is
        automodel.fit(runs, progress=False).report(fit_html)
        write_profile_report(60, profile_html, p=256.0)
        with browser(1400, 1180) as driver:
            open_page(driver, fit_html)
            driver.save_screenshot(str(folder / "report-fit.png"))
            open_page(driver, profile_html, READY)
            rows = driver.find_elements(By.CSS_SELECTOR, "#kernels tbody tr[data-i]")
            rows[min(3, len(rows) - 1)].click()
            driver.save_screenshot(str(folder / "report-profile.png"))
    return [folder / "report-fit.png", folder / "report-profile.png"]


def revision() -> str:
    """The git revision of the checkout (``unknown`` outside one)."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def collect(quick: bool = False, n_kernels: int | None = None, out: Path | None = None) -> dict:
    """The measurement (``benchmarks.speed.collect`` runs it): page size and the browser's times for a
    profile of ``n_kernels`` kernels (default 10^4; 500 with ``quick``, opened once); the page and a
    screenshot are kept in ``out`` when given. Raises RuntimeError when no browser can run here."""
    why = available()
    if why is not None:
        raise RuntimeError(why)
    n_kernels = n_kernels or (500 if quick else 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = out or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        page = folder / f"profile-{n_kernels}.html"
        built = write_profile_report(n_kernels, page)
        seen = time_in_browser(page, 1 if quick else OPENS, folder / f"profile-{n_kernels}.png")
    return {**built, **{k: v for k, v in seen.items() if k not in ("console_errors", "foreign_requests")},
            "console_errors": len(seen["console_errors"]), "foreign_requests": len(seen["foreign_requests"]),
            "target": f"< {TARGET_MB:g} MB and < {TARGET_SECONDS:g} s to open (median)",
            "target_met": "yes" if built["megabytes"] < TARGET_MB and seen["median_open"] < TARGET_SECONDS else "no"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 kernels, one open")
    ap.add_argument("--kernels", type=int, default=None, help="kernels in the profile (default 10000)")
    ap.add_argument("--out", type=Path, default=None, help="keep the page and a screenshot in this folder")
    ap.add_argument("--screenshots", type=Path, default=None, help="write the README's two pictures here")
    args = ap.parse_args(argv)
    try:
        r = collect(args.quick, args.kernels, args.out)
    except RuntimeError as exc:
        print(f"no browser: {exc}", file=sys.stderr)
        return 1
    cpu = report.machine()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}, git {revision()}, {cpu.get('cpu')}, {cpu['cores']} "
          f"cores, {cpu.get('memory')}, load average {cpu.get('load_average')}")
    print(f"profile report of {r['kernels']} kernels: {r['megabytes']:.2f} MB (target < {TARGET_MB:g} MB); "
          f"fit_many {r['fit_seconds']:.1f} s, page written in {r['page_seconds']:.1f} s")
    print(f"opens in headless chromium in {r['best_open']:.2f} s best, {r['median_open']:.2f} s median of "
          f"{len(r['open_seconds'])} (target < {TARGET_SECONDS:g} s); a click draws a kernel's plot in "
          f"{r['plot_seconds']:.2f} s")
    print(f"a sort by growth redraws in {r['sort_seconds']:.2f} s; 'show all' draws {r['rows_shown']} rows in "
          f"{r['show_all_seconds']:.2f} s")
    print(f"console errors: {r['console_errors']}; requests other than the file: {r['foreign_requests']}")
    if args.screenshots is not None:
        print("wrote " + ", ".join(map(str, screenshots(args.screenshots))))
    return 0 if r["target_met"] == "yes" and not r["console_errors"] and not r["foreign_requests"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
