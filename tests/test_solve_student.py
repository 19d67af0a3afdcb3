"""Student's t in numpy (automodel.solve.student) against scipy's, which it replaces in the bands; Fisher's F
against scipy's, which it replaces in the PMNF route's test of an effect."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import fdtrc, stdtr, stdtrit

from automodel.solve.band import quantile
from automodel.solve.student import LARGE_DOF, f_upper, t_quantile, t_upper

DOFS = np.concatenate([np.linspace(1.0, 10.0, 37), np.geomspace(10.0, 1e9, 60), [LARGE_DOF], [np.inf]])


@pytest.mark.parametrize("prob", [0.05, 0.25, 0.55, 0.75, 0.9, 0.95, 0.975, 0.995, 0.9995])
def test_the_quantile_is_scipys(prob):
    np.testing.assert_allclose(t_quantile(prob, DOFS), stdtrit(DOFS, prob), rtol=1e-10)


def test_the_upper_tail_is_scipys():
    t = np.linspace(0.0, 40.0, 81)
    for dof in (1.0, 2.5, 7.0, 100.0, 1500.0):
        np.testing.assert_allclose(t_upper(t, dof), stdtr(dof, -t), rtol=1e-12, atol=1e-300)


def test_closed_forms_and_the_band_multiplier():
    assert t_quantile(0.95, 1.0) == pytest.approx(np.tan(0.45 * np.pi), rel=1e-13)
    assert t_quantile(0.975, 2.0) == pytest.approx(4.302652729749464, rel=1e-13)  # (2p - 1) / sqrt(2p(1 - p)) on 2 dof
    assert float(t_quantile(0.5, 3.0)) == 0.0
    assert quantile(0.9, np.array([0.5, 3.0])).tolist() == pytest.approx([6.313751514675, 2.353363434801])
    with pytest.raises(ValueError):
        t_quantile(1.0, 3.0)


def test_many_distinct_dofs_are_solved_together_as_one_by_one():
    from automodel.solve.student import FEW

    dofs = np.linspace(1.0, 900.0, 4 * FEW)
    together = t_quantile(0.95, dofs)
    np.testing.assert_allclose(together, [float(t_quantile(0.95, d)) for d in dofs], rtol=1e-12)
    np.testing.assert_allclose(together, stdtrit(dofs, 0.95), rtol=1e-10)


def test_a_quantile_on_1e308_degrees_of_freedom_is_the_normal_one():
    """dof ** 4 overflowed (an OverflowError traceback for a model file whose band has 1e308 dof)."""
    assert float(t_quantile(0.95, 1e308)) == pytest.approx(1.6448536269514722, abs=1e-12)
    assert np.isfinite(t_quantile(0.95, np.array([1e308, 600.0]))).all()


@pytest.mark.parametrize("dfn", [1, 2, 3, 8, 25, 125, 2000])
def test_the_f_upper_tail_is_scipys(dfn):
    """The lines of a parameter's grid (``dfn``) against the runs left (``dfd``), up to 10^5 runs: within
    1e-11 of scipy's fdtrc, relative, where the p-value of :func:`automodel.solve.lines.effect_pvalue`
    is compared with its threshold (1e-3); 0 and 1 at infinity and 0."""
    f = np.r_[0.0, np.geomspace(1e-4, 1e3, 200), np.inf]
    for dfd in (1, 2, 5, 16, 59, 60, 61, 400, 7000, 100_000):
        want = fdtrc(dfn, dfd, f)
        np.testing.assert_allclose(f_upper(f, float(dfn), float(dfd)), want, rtol=1e-11, atol=1e-100)
    assert f_upper(f, float(dfn), 50.0)[[0, -1]].tolist() == [1.0, 0.0]
