"""No silent pooling: rows of one configuration that differ in an undeclared column are refused, the
same way by ``fit``, ``kernels`` and ``observe`` (:func:`automodel.data.dataset.check_pooling`).

The real cases of issue 32 are read in place from the shared datasets: ``relearn.csv`` (five values
of ``theta`` and of ``n_per_rank`` under each ``p``, pooled before into ``T = 7.058*log2(p)`` with a
repetition noise of 929 %) and ``extrap_mpi_collectives.csv`` (14 collectives under each ``P``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.data.dataset import check_pooling
from automodel.errors import DataError

DATASETS = Path(os.environ.get("AUTOMODEL_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets")
needs_data = pytest.mark.skipif(not DATASETS.is_dir(), reason=f"no shared datasets at {DATASETS}")


def _runs() -> pd.DataFrame:
    p = np.tile([1.0, 2, 4, 8], 4)
    theta = np.repeat([0.1, 0.1, 0.5, 0.5], 4)
    return pd.DataFrame({"p": p, "theta": theta, "rep": np.repeat([1, 2, 1, 2], 4), "time": theta * 10 / p,
                         "time_min": np.arange(16) + 0.5, "jobid": np.arange(16)})


def test_a_factor_hidden_in_the_repetitions_is_an_error_naming_it_and_the_options():
    with pytest.raises(DataError) as info:
        automodel.fit(_runs(), progress=False)
    text = str(info.value)
    assert "\n" not in text and "rows with the same p differ in undeclared column(s) 'theta' (2 values)" in text
    assert "--param COL" in text and "--where EXPR" in text and text.endswith("--ignore theta")
    # per-run values (time_min, jobid: as many values as rows) and repetition indices are not factors
    assert "time_min" not in text and "jobid" not in text and "'rep'" not in text


def test_an_undeclared_column_named_like_a_role_is_offered_as_that_role():
    runs = _runs().rename(columns={"p": "MPI ranks"})
    with pytest.raises(DataError) as info:
        automodel.fit(runs, p=None, params=["theta"], progress=False)
    assert "'MPI ranks' (4 values)" in str(info.value) and "or a role (--p 'MPI ranks')" in str(info.value)
    with pytest.raises(DataError) as info:
        automodel.fit(_runs(), progress=False)
    assert "or a role" not in str(info.value)  # theta is no role's name
    model = automodel.fit(runs, p="MPI ranks", params=["theta"], templates="none", progress=False).best
    assert "p" in model.params


def test_declared_ignored_or_constant_columns_are_not_refused():
    runs = _runs()
    assert "theta" in automodel.fit(runs, params=["theta"], templates="none", progress=False).best.params
    pooled = automodel.fit(runs, ignore=["theta"], templates="none", progress=False)
    assert pooled.dataset.n_points == 4  # knowingly: 4 repetitions per p
    check_pooling(runs[runs["theta"] == 0.1], ["p"], [], "x")  # one value of theta: nothing hidden
    check_pooling(runs.drop_duplicates("p"), ["p"], [], "x")  # no repetitions at all


def test_an_ignored_name_that_is_no_column_is_an_error_not_a_silent_no_op(tmp_path, capsys):
    """``--ignore date,hostname`` (one name with a comma) and a misspelt name were passed over without a
    word: the refusal they were meant to lift stood, and named --ignore as the way out."""
    runs = _runs().assign(host=np.repeat(["a", "b", "a", "b"], 4))
    with pytest.raises(DataError) as info:
        automodel.fit(runs, ignore=["theta,host"], progress=False)
    text = str(info.value)
    assert "column 'theta,host': no such column to pool over" in text
    assert text.endswith("name each column apart: --ignore theta host")
    with pytest.raises(DataError, match="column 'thta': no such column to pool over"):
        automodel.fit(runs, ignore=["thta", "host"], progress=False)
    # the refusal names the --ignore that pools every column it found
    with pytest.raises(DataError, match="pool knowingly with --ignore theta host$"):
        automodel.fit(runs, progress=False)
    csv = tmp_path / "runs.csv"
    runs.assign(kernel="k").to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--ignore", "theta,host"]) == 2
    assert "name each column apart: --ignore theta host" in capsys.readouterr().err


def test_one_name_as_a_string_is_one_column_not_its_letters():
    runs = _runs()
    pooled = automodel.fit(runs, ignore="theta", templates="none", progress=False)
    assert pooled.dataset.n_points == 4
    assert "theta" in automodel.fit(runs, params="theta", templates="none", progress=False).best.params


def test_a_factor_of_text_declared_a_parameter_is_shown_the_selection_instead():
    """``--param hostname``, the first way out the pooling error offers, on a column of host names: the
    error said only "expected a finite number, got 'b'"."""
    runs = _runs().assign(host=np.repeat(["a", "b", "a", "b"], 4))
    with pytest.raises(DataError, match=r"column 'host': expected a finite number, got 'a'; a parameter is a "
                                        r"number: model one value with --where \"host == 'a'\"$"):
        automodel.fit(runs, params=["theta", "host"], progress=False)


def test_the_estimator_makes_every_column_of_X_a_parameter():
    from automodel import AutomodelRegressor

    runs = _runs()
    est = AutomodelRegressor(templates="none").fit(runs[["p", "theta"]], runs["time"])
    assert set(est.model_.params) <= {"p", "theta"} and "theta" in est.model_.params


@needs_data
@pytest.mark.parametrize("args, named", [
    (["relearn.csv"], ["'n_per_rank' (5 values)", "'theta' (5 values)"]),
    (["extrap_mpi_collectives.csv", "--p", "P"], ["'mpi' (2 values)", "'collective' (7 values)"]),
])
def test_the_issues_datasets_are_refused_in_one_line(args, named, capsys):
    assert main(["fit", str(DATASETS / args[0]), *args[1:], "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and all(name in err for name in named)


@needs_data
def test_where_selects_one_collective_of_the_issues_dataset(capsys):
    expr = "mpi == 'IntelMPI' and collective == 'MPI_Bcast'"
    assert main(["fit", str(DATASETS / "extrap_mpi_collectives.csv"), "--p", "P", "--where", expr,
                 "--templates", "none", "--quiet", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["runs"] == 5
    assert main(["fit", str(DATASETS / "relearn.csv"), "--where", "theta >"]) == 2
    assert capsys.readouterr().err.startswith(f"automodel: error: {DATASETS / 'relearn.csv'}: --where 'theta >'")


def test_kernels_and_observe_refuse_as_fit_does(tmp_path, capsys):
    runs = _runs()
    csv = tmp_path / "runs.csv"
    runs.assign(kernel="k").to_csv(csv, index=False)
    assert main(["kernels", str(csv)]) == 2
    assert "'theta' (2 values)" in capsys.readouterr().err
    assert main(["kernels", str(csv), "--param", "p", "theta"]) == 0
    capsys.readouterr()
    runs.to_csv(csv, index=False)
    assert main(["observe", "--store", str(tmp_path / "s.db"), "--app", "a", str(csv)]) == 2
    assert "'theta' (2 values)" in capsys.readouterr().err


def test_a_frame_naming_two_columns_alike_is_checked_without_a_traceback():
    """The property suite's example: two undeclared columns named ``k`` (a frame may have them)."""
    frame = pd.DataFrame([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], columns=["time", "k", "k"])
    assert automodel.load(frame).frame["count"].tolist() == [2]
    frame.iloc[1, 2] = 5.0  # the second k varies within the one configuration, the first does not
    with pytest.raises(automodel.DataError, match="undeclared column"):
        automodel.load(pd.concat([frame] * 3, ignore_index=True))
