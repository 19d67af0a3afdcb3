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
