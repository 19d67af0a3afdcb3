"""The error tree: one base class, each error also a built-in; locations as a person reads the file."""

import pytest

from automodel.errors import AutomodelError, DataError, ModelFileError, OptionError, SpaceError, StoreError, where


@pytest.mark.parametrize("error, builtin", [(DataError, ValueError), (SpaceError, ValueError),
                                            (OptionError, SpaceError), (ModelFileError, ValueError),
                                            (StoreError, RuntimeError)])
def test_every_error_is_an_automodel_error_and_a_builtin(error, builtin):
    with pytest.raises(AutomodelError):
        raise error("x")
    with pytest.raises(builtin):
        raise error("x")


def test_where_names_file_row_and_column():
    assert where("runs.csv", 7, "time") == "runs.csv, row 7, column 'time'"
    assert where("runs.csv", column="n") == "runs.csv, column 'n'"
    assert where() == ""
