"""Search-space files: the shipped ones load, malformed ones are one-line errors."""

import pytest

from automodel.errors import SpaceError
from automodel.space.config import load_space


def test_shipped_spaces_load():
    default = load_space("default")
    assert {"computation", "communication", "processors", "p_only"} <= set(default.stages)
    pmnf = load_space("pmnf")
    assert len(pmnf.stages["pmnf"]["terms"]) == 42


@pytest.mark.parametrize("text, fragment", [
    ("name = 'x'\n[stages.computation]\nbase = ['n^']\n", "cannot read term"),
    ("name = 'x'\n[fit]\nmetric = 'r2'\n[stages.p_only]\nterms=['1/p']\n", "unknown metric 'r2'; expected one of"),
    ("name = 'x'\n[stages.nope]\n", "unknown stage"),
    ("name = 'x'\n[stages.p_only]\ntop = -1\n", "expected an integer from 1 to 1,000,000, got -1"),
    ("name = [\n", "not valid TOML"),
    ("name = 'x'\n", "needs at least one [stages"),
])
def test_malformed_space(tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SpaceError) as err:
        load_space(path)
    assert fragment in str(err.value) and str(path) in str(err.value)


def test_unknown_space_names_the_shipped_ones():
    with pytest.raises(SpaceError, match="no search space named 'nope'; known: default, pmnf"):
        load_space("nope")
