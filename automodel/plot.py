"""A picture of a model: measured runs, the fit over the training range and its extrapolation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from automodel.files import write_atomic

__all__ = ["plot_model", "BAND_LEVEL"]

#: level of the prediction band drawn around each curve
BAND_LEVEL = 0.9


def plot_model(model, train: pd.DataFrame, path: str | Path, test: pd.DataFrame | None = None,
               title: str = "") -> Path:
    """Save a PNG: time vs n per process count (left) and time vs p at the largest n (right).

    ``train`` and ``test`` use the canonical column names (``time``, ``n``, ``p``, ...). The fit is
    drawn solid inside the training range and dashed beyond it, inside its :data:`BAND_LEVEL` band.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    has_n, has_p = "n" in model.params, "p" in model.params
    panels = [x for x, ok in (("n", has_n), ("p", has_p)) if ok] or [model.params[0]]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    everything = pd.concat([train, test]) if test is not None else train
    fixed = {q: float(train[q].median()) for q in model.params if q in ("cpu", "bw")}
    fixed.update({q: float(train[q].max()) for q in model.params if q not in ("n", "p", "cpu", "bw")})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, x in zip(axes[0], panels):
        other = "p" if x == "n" else "n"
        groups = sorted(everything[other].unique()) if other in model.params else [None]
        if len(groups) > 6:  # keep the picture readable: a few levels spread over the range
            groups = [groups[i] for i in np.unique(np.linspace(0, len(groups) - 1, 6).round().astype(int))]
        lo, hi_train = train[x].min(), train[x].max()
        hi = max(everything[x].max(), hi_train * (2 if x == "n" else 4))
        for color, g in zip(colors * 3, groups):
            sel_tr = train if g is None else train[train[other] == g]
            label = f"{other} = {g:g}" if g is not None else "runs"
            ax.scatter(sel_tr[x], sel_tr["time"], color=color, s=18,
                       label=f"{label} (train)" if len(sel_tr) else None)
            if test is not None:
                sel_te = test if g is None else test[test[other] == g]
                ax.scatter(sel_te[x], sel_te["time"], color=color, marker="^", s=30, facecolors="none",
                           label=f"{label} (held out)" if len(sel_te) else None)
            grid = np.geomspace(lo, hi, 200) if x == "p" or hi / lo > 20 else np.linspace(lo, hi, 200)
            cols = {q: np.full_like(grid, fixed.get(q, 1.0)) for q in model.params}
            cols[x] = grid
            if g is not None:
                cols[other] = np.full_like(grid, g)
            pred = model.core.predict(pd.DataFrame(cols))
            band = model.predict_interval(cols, BAND_LEVEL)
            if band is not None:
                ax.fill_between(grid, band[0], band[1], color=color, alpha=0.12, lw=0)
            inside = grid <= hi_train
            ax.plot(grid[inside], pred[inside], color=color, lw=1.5)
            ax.plot(grid[~inside], pred[~inside], color=color, lw=1.5, ls="--")
        ax.set_xlabel(model.roles.get(x, x))
        ax.set_ylabel("time [s]")
        if x == "p" or everything[x].max() / max(everything[x].min(), 1e-300) > 20:
            ax.set_xscale("log")
        if everything["time"].max() / everything["time"].min() > 50:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    shaded = f"; shaded: {BAND_LEVEL:.0%} band of one run" if model.interval is not None else ""
    fig.suptitle((title or f"T = {model.formula}") + f"\n(dashed: beyond the training range{shaded})", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix.lstrip(".") or "png"))
    plt.close(fig)
    return path
