"""Tables without pandas (automodel.data.rows): read, checked and printed as the pandas path does."""

from __future__ import annotations

import numpy as np
import pytest

from automodel.data.cells import numeric, read_csv
from automodel.data.readers import detect
from automodel.data.rows import Rows, read_rows, table_rows
from automodel.errors import DataError
from automodel.terminal import plain_table, table

#: files that read, and files refused, each with a column to check as a process count
FILES = {
    "plain": "n,p\n400000,16\n800000,32\n",
    "blank lines": "n,p\n\n400000,16\n\n800000,32\n",
    "trailing separators": "n,p\n400000,16,\n800000,32,\n",
    "spaces": "n, p\n 400000 , 16\n800000, 32.5 \n",
    "text column": "kernel,n,p\nsolve,1,2\n,3,4\n",
    "quoted": 'n,p\n"400000","16"\n800000,32\n',
    "floats": "n,p\n4e5,1e-7\n8.25,1e7\n",
    "bool": "n,p\nTrue,1\nFalse,2\n",
    "short row": "n,p\n400000\n800000,32\n",
    "empty": "",
    "header only": "n,p\n",
    "semicolons": "n;p\n1;2\n",
    "twice": "n,p,n\n1,2,3\n",
    "wide row": "n,p\n1,2,3\n",
    "text cell": "n,p\n1,abc\n",
    "empty cell": "n,p\n1,\n2,3\n",
    "negative": "n,p\n1,-4\n",
    "nan": "n,p\n1,nan\n",
    "inf": "n,p\n1,inf\n",
    "beyond floats": "n,p\n1,1e999\n",
    "huge integer": "n,p\n1," + "9" * 30 + "\n",
    "tiny": "n,p\n1,1e-200\n",
    "underscore": "n,p\n1,1_000\n",
    "hex": "n,p\n1,0x10\n",
    # float() reads these where pandas does not: predict (read_rows) took '١٠٠' as 100, fit refused it
    "arabic-indic digits": "n,p\n1,\u0661\u0660\u0660\n",
    "full-width digits": "n,p\n1,\uff16\uff14\n",
    "full-width float": "n,p\n1,\uff16.5\n",
    # a quote never closed: read_rows took the rows before it and made the rest of the file one cell
    "unclosed quote": 'n,p,note\n1,2,ok\n3,4,"oops\n5,6,ok\n7,8,ok\n',
    "quoted line break": 'n,p,note\n1,2,"two\nlines"\n3,4,"ends with one\n"\n',
    # a cell beyond the csv module's limit (131,072 characters): the message named no row
    "long cell": "n,p,note\n1,2,ok\n3,4," + "x" * 200_000 + "\n",
}


def _outcome(read, path):
    """What a reader makes of ``path``: its message, or its table and the check of column ``p``."""
    try:
        frame = read(path)
    except DataError as exc:
        return "refused", str(exc)
    try:
        checked = numeric(frame, "p", "p", str(path), 2).tolist()
    except DataError as exc:
        checked = str(exc)
    return table(frame, None), table(frame, 12), checked


@pytest.mark.parametrize("name", list(FILES))
def test_read_rows_reads_and_refuses_as_read_csv_does(tmp_path, name):
    path = tmp_path / "runs.csv"
    path.write_text(FILES[name])
    plain, pandas = _outcome(read_rows, path), _outcome(read_csv, path)
    assert plain == pandas
    assert (plain[0] == "refused") == (name in ("empty", "header only", "semicolons", "twice", "wide row",
                                                "unclosed quote", "long cell"))
    if name == "long cell":
        assert plain[1].endswith("runs.csv, row 3: not a readable CSV file (field larger than field limit (131072))")
    if name == "unclosed quote":
        assert plain[1].endswith("runs.csv, row 3: a quote opened in this row is never closed, so every line "
                                 "after it would be one cell; expected a quoted cell to end with a quote")


def test_a_message_names_the_line_of_a_row_after_blank_lines(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("n,p\n1,2\n\n\n3,x\n")
    with pytest.raises(DataError, match=r"runs.csv, line 5, column 'p'") as plain:
        numeric(read_rows(path), "p", "p", str(path), np.asarray(read_rows(path).attrs["lines"]))
    assert str(plain.value).endswith("got 'x'")


def test_the_plain_table_prints_what_pandas_prints():
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 4))
        data = {"n": rng.integers(1, 10 ** int(rng.integers(1, 12)), n),
                "t": rng.standard_normal(n) * 10.0 ** rng.integers(-9, 9, n),
                "ok": rng.random(n) < 0.5, "kernel": ["a", np.nan, "long name"][:n]}
        data["t"][rng.random(n) < 0.2] = np.nan
        rows = Rows(data, n)
        for width in (None, 16, 80):
            assert plain_table(rows, width) == table(rows.to_frame(), width)


def test_json_rows_become_columns_and_a_missing_cell_is_named():
    rows = table_rows([{"n": 1000, "p": 8}, {"n": 2000}])
    assert rows.columns == ["n", "p"] and rows["n"].dtype == float and len(rows) == 2
    with pytest.raises(DataError, match=r"rows, row 3, column 'p': expected a positive process count, got an empty"):
        numeric(rows, "p", "p", "rows", 2)


def test_only_plain_tables_are_read_without_pandas(tmp_path):
    (tmp_path / "a.csv").write_text("n,p\n1,2\n")
    (tmp_path / "b.tsv").write_text("n\tp\n1\t2\n")
    (tmp_path / "c.csv").write_text('{"parameters": ["p"]}\n')
    (tmp_path / "d.csv").write_text("PARAMETER p\nPOINTS 1 2\n")
    (tmp_path / "e.parquet").write_bytes(b"PAR1")
    assert [detect(tmp_path / f) for f in ("a.csv", "b.tsv", "c.csv", "d.csv", "e.parquet")] == [
        "csv", "tsv", "json", "text", "parquet"]
    with pytest.raises(DataError, match="none.csv"):
        detect(tmp_path / "none.csv")
