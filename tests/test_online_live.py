"""Online re-ranking: refits from pool statistics against the batched solver, the anomaly rule, and a
replayed stream in which the network gets slower halfway."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from automodel import store as S
from automodel.errors import DataError
from automodel.options import weights as run_weights
from automodel.solve.design import design
from automodel.solve.lstsq import solve
from automodel.online import live as online
from automodel.online.anomaly import anomalous
from automodel.online.live import LivePool, OnlineOptions, PoolStats, refit
from automodel.space.terms import TermPlan, term_values
from automodel.space.parse import parse_term

TERMS = ["1", "n", "n^2", "n^3/p", "n^2*log2(p)", "n^2*log2(p)/bw", "n^3/p/cpu", "log2(p)", "p", "sqrt(n)/p"]


def _runs(rng, m, bw=(0.4, 1.0), comm=3e-9, noise=0.02):
    n = rng.choice(np.linspace(1000, 8000, 8), m)
    p = rng.choice([1.0, 2.0, 4.0, 8.0], m)
    cpu, b = rng.uniform(0.5, 1.0, m), rng.uniform(*bw, m)
    t = 2e-10 * n ** 3 / (p * cpu) + comm * n ** 2 * np.log2(p) / b + 0.5
    return pd.DataFrame(dict(n=n, p=p, cpu=cpu, bw=b, time=t * (1 + noise * rng.standard_normal(m))))


def _pool(rng, m=40, n_cand=300):
    terms = [parse_term(t) for t in TERMS]
    runs = _runs(rng, m)
    values = term_values(terms, {q: runs[q].to_numpy(float) for q in ("n", "p", "cpu", "bw")}, m)
    combos = sorted({tuple(sorted(rng.choice(len(terms), int(rng.integers(1, 6)), replace=False)))
                     for _ in range(n_cand)})
    index = np.full((len(combos), 5), -1, dtype=np.intp)
    for i, c in enumerate(combos):
        index[i, :len(c)] = c
    width = np.array([len(c) for c in combos])
    return terms, values, runs["time"].to_numpy(float), index, width


@pytest.mark.parametrize("nonnegative", [True, False])
def test_refit_from_statistics_matches_batched_solver(nonnegative):
    rng = np.random.default_rng(3)
    _, values, y, index, width = _pool(rng)
    w = run_weights(y, "relative")
    fit = refit(PoolStats.from_runs(values, y, w), index, width, nonnegative)
    des = design(values, y, w)
    for k in np.unique(width):
        rows = np.flatnonzero(width == k)
        ref = solve(des, index[rows, :k], nonnegative=nonnegative)
        np.testing.assert_allclose(fit.rss[rows], ref.rss, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(fit.coef[rows, :k], ref.coefficients(des), rtol=1e-5, atol=1e-14)
        dof = len(y) - k
        np.testing.assert_allclose(fit.score[rows], np.sqrt(ref.rss / dof), rtol=1e-6)
    if nonnegative:
        assert (np.nan_to_num(fit.coef) >= 0).all()


def test_rank_one_updates_equal_a_rebuild_and_warm_start_equals_cold():
    rng = np.random.default_rng(4)
    terms, values, y, index, width = _pool(rng)
    w = run_weights(y, "relative")
    stats = PoolStats.from_runs(values[:30], y[:30], w[:30])
    pool = LivePool(terms, index, width, np.ones(len(index), bool), stats, values[:30], y[:30])
    pool.refit()
    for i in range(30, len(y)):  # one run at a time, warm-started from the previous support
        pool.admit(values[i:i + 1], y[i:i + 1])
        pool.refit()
    full = PoolStats.from_runs(values, y, w)
    np.testing.assert_allclose(pool.stats.gram, full.gram, rtol=1e-12)
    np.testing.assert_allclose(pool.stats.moment, full.moment, rtol=1e-12)
    cold = refit(full, index, width, True)
    np.testing.assert_allclose(pool.score, cold.score, rtol=1e-6)


def test_formulas_of_many_candidates_are_each_its_formula():
    """The batched text (one sympy call for the order of every set of terms) of candidates with zero,
    non-negative and never-fitted coefficients is what :meth:`LivePool.formula` prints for each."""
    rng = np.random.default_rng(4)
    terms, values, y, index, width = _pool(rng, n_cand=120)
    pool = LivePool(terms, index, width, np.ones(len(index), bool),
                    PoolStats.from_runs(values, y, run_weights(y, "relative")), values, y)
    pool.refit()
    pool.coef[5, 0] = np.nan
    rows = np.r_[pool.ranking(), 5]
    assert (pool.coef[rows] == 0).any()  # non-negative fits with a term set to zero
    assert pool.formulas(rows) == [pool.formula(i) for i in rows]


def test_anomaly_rule_flags_only_what_no_leader_explains():
    rng = np.random.default_rng(5)
    m = 60
    values = np.column_stack([np.ones(m), rng.uniform(1, 10, m)])
    y = (1 + 2 * values[:, 1]) * (1 + 0.01 * rng.standard_normal(m))
    y[[10, 20]] *= [1.5, 1.04]  # a 50 % outlier and a 4 % one (below the 5 % floor)
    index, width = np.array([[0, 1], [0, 1]]), np.array([2, 2])
    coef = np.array([[1.0, 2.0], [1.0, 2.0]])
    test = np.zeros(m, bool)
    test[[10, 20, 30]] = True
    got, severity = anomalous(values, y, test, index, width, coef, mad=5.0, floor=0.05)
    assert np.flatnonzero(got).tolist() == [10]
    assert severity[10] > 5.0 and severity[30] == 0.0
    coef_b = np.array([[1.0, 2.0], [y[10] - 2 * values[10, 1], 2.0]])  # the second leader explains run 10
    assert not anomalous(values, y, test, index, width, coef_b, 5.0, 0.05)[0][10]


def _strength(store, app):
    """Leader's extra time at bw = 0.1 over bw = 1 (n = 8000, p = 8, cpu = 1): its communication term."""
    m = S.leader_model(store, app)
    ref = dict(n=[8000.0], p=[8.0], cpu=[1.0])
    return float(m.predict({**ref, "bw": [0.1]})[0] - m.predict({**ref, "bw": [1.0]})[0])


def _stream(path, outliers: bool):
    rng = np.random.default_rng(11)
    first = _runs(rng, 32, bw=(0.97, 1.0))
    reports = [S.observe(path, "app", first)]
    strength = {}
    for phase, bw in (("fast", (0.97, 1.0)), ("slow", (0.05, 0.25))):
        for i in range(10):
            batch = _runs(rng, 2, bw=bw)
            if outliers and i in (3, 7):  # an extra run, three times too slow, at an interior n
                bad = batch.iloc[[0]].assign(n=4000.0)
                bad["time"] = 3 * (2e-10 * 4000.0 ** 3 / (bad.p * bad.cpu) + 3e-9 * 4000.0 ** 2 * np.log2(bad.p)
                                   / bad.bw + 0.5)
                batch = pd.concat([batch, bad], ignore_index=True)
            reports.append(S.observe(path, "app", batch))
        strength[phase] = _strength(path, "app")
    return reports, strength


def test_replayed_stream_network_slows_leader_changes_pruning_outliers(tmp_path):
    reports, strength = _stream(tmp_path / "dirty.db", outliers=True)
    truth = 9 * 3e-9 * 8000.0 ** 2 * 3
    # the slower network makes the communication term visible: the leader changes to a stronger one
    assert strength["slow"] > 2 * max(strength["fast"], 0.0)
    assert strength["slow"] == pytest.approx(truth, rel=0.25)
    leaders = [r.leader_id_after for r in reports]
    assert leaders[-1] != leaders[10]
    # pruning shrinks the candidate set on every update, down to the floor
    live = [r.n_live for r in reports]
    assert live[-1] < live[0] / 3 and live[-1] >= OnlineOptions().min_survivors
    assert all(b <= a for a, b in zip(live, live[1:]))
    # the four injected outliers are flagged, kept in the store, and nothing else is
    flagged = S.runs(tmp_path / "dirty.db", "app", ("flagged",))
    assert len(flagged) == 4 and (flagged["n"] == 4000.0).all()
    assert len(S.runs(tmp_path / "dirty.db", "app")) == 32 + 40 + 4
    # ... and do not move the leader: the same stream without them ends with the same ranking
    clean, _ = _stream(tmp_path / "clean.db", outliers=False)
    assert [r.leader_after for r in reports] == [r.leader_after for r in clean]
    assert reports[-1].leader_score == pytest.approx(clean[-1].leader_score, rel=1e-9)
    hist = S.history(tmp_path / "dirty.db", "app")
    assert hist["flagged"].sum() == 4 and (hist["pruned"] > 0).any()
    pruned = S.ranking(tmp_path / "dirty.db", "app", top=None, pruned=True)
    assert len(pruned) == live[0] + reports[0].n_pruned - live[-1] and pruned["reason"].str.contains("percentile").all()
    assert S.verify(tmp_path / "dirty.db", "app")["fitted"] == 32 + 40


def test_readmit_and_exclude_move_runs_in_and_out_of_the_fit(tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "s.db"
    S.observe(path, "a", _runs(rng, 24))
    bad = _runs(rng, 1).assign(n=4000.0)
    bad["time"] *= 5
    rep = S.observe(path, "a", pd.concat([_runs(rng, 2), bad], ignore_index=True))
    assert len(rep.flagged) == 1
    rid = rep.flagged[0][0]
    back = S.readmit(path, "a", [rid])
    assert back.n_admitted == rep.n_admitted + 1
    assert S.runs(path, "a").set_index("id").loc[rid, "status"] == "readmitted"
    S.verify(path, "a")
    out = S.exclude(path, "a", [rid])
    assert out.n_admitted == rep.n_admitted and out.leader_score == pytest.approx(rep.leader_score, rel=1e-9)
    with pytest.raises(DataError, match="not a run"):
        S.readmit(path, "a", [10 ** 6])
    S.verify(path, "a")


def test_leader_is_the_simplest_equivalent_candidate_unless_asked_for_the_best():
    rng = np.random.default_rng(6)
    terms, values, y, index, width = _pool(rng, m=40)
    y = y * np.exp(0.2 * rng.standard_normal(len(y)))  # noisy enough that rank 1 is an overfit
    stats = PoolStats.from_runs(values, y, run_weights(y, "relative"))
    pools = {rule: LivePool(terms, index, width, np.ones(len(index), bool), stats, values, y,
                            OnlineOptions.from_dict({"selection": rule})) for rule in ("best", "simplest")}
    for pool in pools.values():
        pool.refit()
    best, simplest = pools["best"], pools["simplest"]
    assert best.leader == int(np.argmin(best.score))
    n_terms = np.count_nonzero(np.nan_to_num(simplest.coef) != 0, axis=1)
    lead = simplest.leader
    # within one standard error of the best score (40 runs), and no equivalent candidate is simpler
    threshold = simplest.score.min() * (1 + 1 / np.sqrt(2 * (len(y) - n_terms[best.leader])))
    assert simplest.score[lead] <= threshold
    assert n_terms[lead] == n_terms[simplest.score <= threshold].min()
    assert n_terms[lead] < n_terms[best.leader]
    # the one chooser of fit decides (automodel.search.choice.choose), on the live scores
    from automodel.search.choice import choose
    live = np.where(simplest.alive, simplest.score, np.inf)
    assert lead == choose(live, np.maximum(n_terms, 1), simplest.stats.n_runs, simplest.options.metric).index


def test_refit_exact_on_ill_conditioned_power_terms():
    """The online refit certifies non-negative supports with the residual-relative KKT tolerance of the
    batched solver: on power-law terms (condition ~1e7) fitted to ~1e-12 of y'y a |y|-relative one did not."""
    from itertools import combinations

    from scipy.optimize import nnls

    rng = np.random.default_rng(0)
    x = np.linspace(1, 100, 30)
    A = np.column_stack([x ** rng.uniform(0, 3) * np.log2(x + 1) ** rng.integers(0, 3) for _ in range(10)])
    y = A @ rng.standard_normal(10) + rng.standard_normal(30)
    index = np.array(list(combinations(range(10), 6)), dtype=np.intp)
    fit = refit(PoolStats.from_runs(A, y, np.ones_like(y)), index, np.full(len(index), 6), nonnegative=True)
    ref = np.array([nnls(A[:, c], y, maxiter=1000)[1] ** 2 for c in index])
    # RSS from pooled statistics (y'y - b'x) keeps ~1e-3 of an RSS that is 1e-12 of y'y; a wrong
    # support costs far more (up to 3x the least RSS)
    np.testing.assert_allclose(fit.rss, ref, rtol=1e-2)


def test_options_share_the_fit_record_and_old_flat_dicts_load():
    opts = OnlineOptions()
    assert (opts.prune_percentile, opts.min_survivors, opts.weighting, opts.metric) == (90.0, 32, "relative", "rel_s")
    old = {"weighting": "none", "nonnegative": False, "prune_percentile": 80.0, "min_survivors": 16,
           "anomaly_mad": 4.0, "anomaly_floor": 0.1, "n_leaders": 3, "selection": "best", "retired": 1}
    back = OnlineOptions.from_dict(old)
    assert back.fit.weighting == "none" and back.nonnegative is False and back.metric == "s"
    assert back.to_dict() == {k: v for k, v in old.items() if k != "retired"}
    assert OnlineOptions.from_dict(opts.to_dict()) == opts


def test_cause1_pooled_statistics_that_overflow_make_the_term_unusable():
    """Issue 17, cause 1, in the online stage: ``a'a`` of a term near 1e300 overflowed into the pooled
    Gram matrix, which then reached a factorisation; the term is now unusable and its row zero."""
    from automodel.online.live import PoolStats
    values = np.array([[1.0, 1e200], [2.0, 3e200], [3.0, 1e201]])
    stats = PoolStats.from_runs(values, np.array([1.0, 2.0, 3.0]), np.ones(3))
    assert stats.usable.tolist() == [True, False]
    assert np.isfinite(stats.gram).all() and stats.gram[1].tolist() == [0.0, 0.0]
    assert stats.gram[0, 0] == 14.0 and stats.moment[0] == 14.0


def _line_pool(rng, noise_old: float, noise_recent: float, m: int = 40) -> LivePool:
    """A pool over the terms 1 and n with runs of 1 + 2n (the older half with ``noise_old``, the recent
    half with ``noise_recent`` relative noise), its best candidate the one leader of the anomaly rule."""
    terms = [parse_term("1"), parse_term("n")]
    x = rng.uniform(1, 10, m)
    noise = np.where(np.arange(m) < m // 2, noise_old, noise_recent)
    y = (1 + 2 * x) * (1 + noise * rng.standard_normal(m))
    values = np.column_stack([np.ones(m), x])
    index, width = np.array([[0, 1], [0, -1], [1, -1]]), np.array([2, 1, 1])
    pool = LivePool(terms, index, width, np.ones(3, bool), PoolStats.empty(2), np.empty((0, 2)), np.empty(0),
                    OnlineOptions.from_dict({"prune_percentile": 100.0, "n_leaders": 1}))
    pool.admit(values, y)
    pool.refit()
    return pool


def test_the_anomaly_rule_reference_is_a_sliding_window(monkeypatch):
    """The reference runs are the new ones and the ANOMALY_WINDOW admitted last: a run 10 % off is
    ordinary among noisy old runs but anomalous among the last 20, which are exact to 0.5 %."""
    new_values, new_y = np.array([[1.0, 5.0]]), np.array([11.0 * 1.1])
    whole = _line_pool(np.random.default_rng(1), 0.2, 0.005)
    monkeypatch.setattr(online, "ANOMALY_WINDOW", 20)
    recent = _line_pool(np.random.default_rng(1), 0.2, 0.005)
    assert len(whole.y) == 40 and len(recent.y) == 20
    np.testing.assert_array_equal(recent.y, whole.y[-20:])  # the last 20 admitted
    np.testing.assert_array_equal(recent.stats.gram, whole.stats.gram)  # the fit is over every run
    np.testing.assert_array_equal(recent.score, whole.score)
    assert whole.update(new_values, new_y).flagged.tolist() == []
    assert recent.update(new_values, new_y).flagged.tolist() == [0]
    assert recent.stats.n_runs == 40 and len(recent.y) == 20


def test_statistics_after_a_flagged_run_equal_a_rebuild_from_the_admitted_runs():
    """A run flagged inside an update leaves the statistics of the runs admitted before plus the new
    runs kept (no full rebuild; issue 18)."""
    rng = np.random.default_rng(7)
    terms, values, y, index, width = _pool(rng, m=60)
    y = y.copy()
    y[57] *= 4  # one new run four times too slow
    w = run_weights(y, "relative")
    pool = LivePool(terms, index, width, np.ones(len(index), bool), PoolStats.from_runs(values[:55], y[:55], w[:55]),
                    values[:55], y[:55])
    pool.refit()
    upd = pool.update(values[55:], y[55:], do_prune=False)
    assert upd.flagged.tolist() == [2]
    kept = np.r_[0:57, 58:60]
    rebuilt = PoolStats.from_runs(values[kept], y[kept], w[kept])
    assert pool.stats.n_runs == len(kept) and pool.stats.target_ss == pytest.approx(rebuilt.target_ss, rel=1e-12)
    np.testing.assert_allclose(pool.stats.gram, rebuilt.gram, rtol=1e-12)
    np.testing.assert_allclose(pool.stats.moment, rebuilt.moment, rtol=1e-12)
    np.testing.assert_array_equal(pool.y, y[kept])  # the flagged run is not a reference run either
    np.testing.assert_allclose(pool.score, refit(rebuilt, index, width, True).score, rtol=1e-6)


def test_term_plan_and_lazy_values_equal_term_values():
    """TermPlan (and term_values, a one-off plan) evaluates each term as Term.evaluate does, bit for bit
    (non-finite values NaN), all terms or
    some; LazyValues computes a column when it is first read and slides like the dense window."""
    rng = np.random.default_rng(11)
    terms = [parse_term(t) for t in TERMS + ["n^2*log2(n)/p", "1/cpu", "log2(p)/p", "n^(3/2)*sqrt(p)/bw"]]
    m = 60
    cols = {q: rng.uniform(0.5, 8000, m) for q in ("n", "p", "cpu", "bw")}
    cols["p"][:3] = 0.0  # log2(0), 1/0: not finite
    with np.errstate(all="ignore"):  # each term alone, as Term.evaluate computes it
        ref = np.column_stack([t.evaluate(cols, m) for t in terms])
    ref[~np.isfinite(ref)] = np.nan
    np.testing.assert_array_equal(term_values(terms, cols, m), ref)
    plan = TermPlan(terms)
    np.testing.assert_array_equal(plan.values(cols, m), ref)
    some = np.array([12, 0, 5])
    np.testing.assert_array_equal(plan.values(cols, m, some), ref[:, some])
    asked = []
    lazy = online.LazyValues(lambda c: asked.append(c.tolist()) or plan.values(cols, m, c), m, len(terms))
    np.testing.assert_array_equal(lazy[:, np.array([3, 7])], ref[:, [3, 7]])
    np.testing.assert_array_equal(lazy[:, np.array([7, 2])], ref[:, [7, 2]])
    assert asked == [[3, 7], [2]]
    slid = lazy.appended(ref[:4], 50)
    np.testing.assert_array_equal(np.asarray(slid), np.concatenate([ref, ref[:4]])[-50:])


def test_a_term_that_overflows_is_set_aside_without_a_warning():
    """A run at n = p = 1e99 taking 1e-100 s (each within the range automodel fits) overflowed the
    weighted term values outside the statistics' errstate: two lines of RuntimeWarning on stderr."""
    import warnings

    stats = PoolStats.empty(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats.add(np.array([[1e200, 1.0]]), np.array([1e-100]), np.array([1e300]))
    assert stats.usable.tolist() == [False, True] and stats.n_runs == 1
