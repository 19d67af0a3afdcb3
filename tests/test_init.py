"""A fast command line: ``import automodel`` and building the CLI parser load no heavy library, while
every public name still resolves (PEP 562 lazy attributes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pandas", "scipy", "sympy", "sklearn", "matplotlib", "sqlalchemy", "optuna", "joblib")


def _loaded_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\nimport json\n"
             f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import automodel",
    "import automodel.cli; automodel.cli.build_parser()",
    "from automodel.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass",
])
def test_start_up_loads_no_heavy_library(code):
    assert _loaded_after(code) == []


def test_public_names_resolve_lazily():
    import automodel

    for name in automodel.__all__:
        assert getattr(automodel, name) is not None, name
    from automodel.fitting import fit
    assert automodel.fit is fit and callable(automodel.fit)
    assert set(automodel.__all__) <= set(dir(automodel))
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        automodel.nonexistent  # noqa: B018


def test_fit_is_the_function_whatever_is_imported_first():
    code = ("import automodel.solve.metrics, automodel.data.dataset, automodel\n"
            "print(callable(automodel.fit), automodel.fit.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "automodel.fitting"]


def test_version_and_help_unchanged(capsys):
    from automodel.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == "automodel 0.1.0"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("fit", "predict", "show", "best-p", "kernels", "demo", "templates", "run", "observe"):
        assert command in out


#: what ``automodel predict MODEL.json ROWS.csv`` must not import (issue 35): the expressions, the fitters
PREDICT_NEVER = ("sympy", "scipy", "sklearn", "matplotlib", "sqlalchemy", "optuna", "joblib")


def _modules_after_predict(model: str, rows: str) -> tuple[str, list[str]]:
    """What ``automodel predict model rows`` prints, and the modules it imported (a new process)."""
    probe = ("import json, runpy, sys\n"
             f"sys.argv = ['automodel', 'predict', {model!r}, {rows!r}]\n"
             "try:\n    runpy.run_module('automodel', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    *printed, modules = done.stdout.splitlines()
    return "\n".join(printed), json.loads(modules)


def test_predict_from_a_model_file_imports_no_expression_library_nor_other_templates(tmp_path):
    import numpy as np
    import pandas as pd

    from automodel.model.interval import Interval
    from automodel.model.core import Model, TermModel
    from automodel.space.terms import ONE, power
    from automodel.templates import TEMPLATES

    ranges = {"n": [1000.0, 8000.0], "p": [1.0, 8.0]}
    interval = Interval(run=0.02, misfit=0.01, dof=20, ranges={q: tuple(r) for q, r in ranges.items()},
                        growth={"n": 0.1, "p": 0.2}, covariance=np.diag([1e-18, 1e-6]),
                        alternatives=(TermModel((power("n") * power("p", -1), ONE), (1.1e-6, 0.4)),))
    core = TermModel((power("n") * power("p", -1), ONE), (1e-6, 0.5))
    Model(core, ("n", "p"), {"n": "n", "p": "p", "time": "time"}, ranges, interval=interval).save(
        tmp_path / "terms.json")
    runs = pd.DataFrame({"p": [1.0, 2.0, 4.0, 8.0], "time": [8.0, 4.2, 2.3, 1.4]})
    Model(TEMPLATES["amdahl"].fit(runs), ("p",), {"p": "p", "time": "time"}, {"p": [1.0, 8.0]}).save(
        tmp_path / "amdahl.json")
    (tmp_path / "rows.csv").write_text("n,p\n16000,16\n32000,32\n")

    printed, modules = _modules_after_predict(str(tmp_path / "terms.json"), str(tmp_path / "rows.csv"))
    assert "predicted" in printed and "lower" in printed and "upper" in printed
    assert [m for m in modules if m.split(".")[0] in PREDICT_NEVER] == []
    # a term model: the rows read with the csv module, evaluated with numpy, the table printed without pandas
    assert [m for m in modules if m.split(".")[0] == "pandas"] == []
    assert [m for m in modules if m.startswith("automodel.templates.")] == []
    printed, modules = _modules_after_predict(str(tmp_path / "amdahl.json"), str(tmp_path / "rows.csv"))
    assert "predicted" in printed
    # a template writes its sympy expression only when its formula is asked for
    assert [m for m in modules if m.split(".")[0] in PREDICT_NEVER] == []
    # the template's module and the base every template module builds on (no other template)
    assert sorted(m for m in modules if m.startswith("automodel.templates.")) == ["automodel.templates.base",
                                                                                  "automodel.templates.baselines"]
