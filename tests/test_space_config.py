"""Search-space files: the shipped ones load, malformed ones are one-line errors."""

import pytest

from automodel.errors import SpaceError
from automodel.space.config import load_space, space_path


def test_shipped_spaces_load():
    default = load_space("default")
    assert {"computation", "communication", "processors", "p_only"} <= set(default.stages)
    pmnf = load_space("pmnf")
    assert len(pmnf.stages["pmnf"].terms) == 42


def test_stage_defaults_are_the_default_space():
    """Every number a stage of the shipped default space sets is the default of its typed config, and
    the other stages take their defaults: a setting left out of a space file runs as in the default space."""
    from automodel.space.stages import STAGE_CONFIGS

    default = load_space("default")
    assert set(default.stages) == set(STAGE_CONFIGS)
    for name, config in default.stages.items():
        defaults = STAGE_CONFIGS[name]()
        for key, value in config.settings().items():
            if isinstance(value, int):
                assert value == getattr(defaults, key), f"[stages.{name}] {key}"


def test_stage_config_is_typed_and_frozen():
    import dataclasses

    from automodel.space.stages import PmnfConfig

    pmnf = load_space("pmnf")
    assert isinstance(pmnf.stages["pmnf"], PmnfConfig)
    assert (pmnf.stages["pmnf"].exhaustive, pmnf.stages["pmnf"].top) == (20000, 42)  # pmnf.toml's own
    assert load_space("default").stages["pmnf"].exhaustive == 2000 == PmnfConfig().exhaustive
    with pytest.raises(dataclasses.FrozenInstanceError):
        pmnf.stages["pmnf"].top = 1  # type: ignore[misc]
    assert pmnf.stage("processors") == load_space("pmnf").stage("processors")  # absent: the defaults


@pytest.mark.parametrize("text, fragment", [
    ("name = 'x'\n[stages.computation]\nbase = ['n^']\n", "cannot read term"),
    ("name = 'x'\n[fit]\nmetric = 'r2'\n[stages.p_only]\nterms=['1/p']\n", "unknown metric 'r2'; expected one of"),
    ("name = 'x'\n[stages.nope]\n", "unknown stage"),
    ("name = 'x'\n[stages.p_only]\ntop = -1\n", "expected an integer from 1 to 1,000,000, got -1"),
    ("name = [\n", "not valid TOML"),
    # tomllib's int() of 4,300+ digits is a plain ValueError: it was a traceback, exit 1
    ("top = " + "1" * 5000 + "\n", "not valid TOML (Exceeds the limit (4300 digits) for integer string conversion: "
                                   "value has 5000 digits)"),
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


def test_a_space_file_is_read_again_when_it_changes(tmp_path):
    """``load_space`` keeps a file's space while the file is unchanged (``observe`` loads it on every call)
    and reads it again once it changes; an edit that breaks it is refused, not served from before."""
    path = tmp_path / "mine.toml"
    text = space_path("default").read_text()
    path.write_text(text)
    first = load_space(path)
    assert load_space(path) is first  # unchanged: read once
    path.write_text(text + "\n# an edit\n")
    assert load_space(path) is not first and load_space(path) == first  # read again, the same space
    path.write_text(text + "\n[fit]\nbroken = 1\n")
    with pytest.raises(SpaceError):
        load_space(path)
