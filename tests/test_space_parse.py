"""The term language: what parse_term rejects."""

import pytest

from automodel.errors import SpaceError
from automodel.space.parse import parse_term


@pytest.mark.parametrize("bad", ["", "n^", "exp(n)", "n+p", "__import__('os')", "1/log2(n)"])
def test_parse_rejects(bad):
    with pytest.raises(SpaceError):
        parse_term(bad)
