"""The database: a missing folder or a file that is not a database is a one-line StoreError."""

import pytest

from automodel import store as S
from automodel.errors import StoreError


def test_open_errors(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        S.Store(tmp_path / "missing" / "s.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        S.Store(junk)
    store = S.Store(tmp_path / "new.db")
    assert (tmp_path / "new.db").exists()
    store.dispose()
