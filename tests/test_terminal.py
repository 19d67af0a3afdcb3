"""Text for a terminal: wrapping, tables within a width, and status lines only on a terminal."""

from __future__ import annotations

import io

import pandas as pd

from automodel.terminal import Status, fit_lines, interactive, shorten, status, table, wrap


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_wrap_breaks_between_terms_only():
    formula = "T = " + " + ".join(f"{k}.5e-9*n^{k}*log2(p)" for k in range(1, 8))
    lines = wrap(formula, 40, "", "    ")
    assert all(len(line) <= 40 for line in lines) and " ".join(" ".join(lines).split()) == formula
    assert wrap(formula, None) == [formula]
    assert wrap("x" * 50, 40) == ["x" * 50]  # a word longer than the line stays whole


def test_wrap_keeps_a_call_of_a_formula_whole_and_breaks_long_remarks():
    formula = "T = 1.606e-7*n/p + 3.423e-5*log2(n)*log2(p) + 0.001234*min(1, p - 1) + 0.0001384"
    for width in range(30, 80):  # the demo's chosen model broke as "min(1, p -" / "1)" at 80 columns
        lines = wrap(formula, width, "", "    ")
        assert any("min(1, p - 1)" in line for line in lines), (width, lines)
        assert " ".join(" ".join(lines).split()) == formula
    remark = "why: (" + " ".join(["a remark in prose"] * 8) + ")"
    assert all(len(line) <= 40 for line in wrap(remark, 40))  # a long group is still broken at its spaces
    assert wrap("a (b \ue000 c) d", 6) == ["a (b \ue000", "  c) d"]  # its own private-use character: plain wrap


def test_fit_lines_keeps_each_lines_indent():
    lines = fit_lines(["head", "  new leader: T = " + " + ".join(["1.5*n"] * 12)], 40)
    assert lines[0] == "head" and lines[1].startswith("  new leader") and lines[2].startswith("      + ")
    assert all(len(line) <= 40 for line in lines)


def test_shorten_cuts_the_middle():
    assert shorten("abcdefghij", 7) == "ab...ij" and shorten("abc", 7) == "abc" and shorten("abcdefghij", None)


def test_table_puts_long_text_under_its_row_and_blocks_wide_columns():
    frame = pd.DataFrame({"rank": [1, 2], "score": [0.01, 0.02], "formula": ["a*n + " * 20, "b*p"]})
    lines = table(frame, 60, below=["formula"]).splitlines()
    assert lines[0].split() == ["rank", "score"] and lines[2].startswith("      a*n +") and lines[-1].strip() == "b*p"
    assert max(map(len, lines)) <= 60
    wide = pd.DataFrame({f"column_{i}": [1.0, 2.0] for i in range(12)})
    assert max(map(len, table(wide, 80).splitlines())) <= 80
    assert max(map(len, table(wide, None).splitlines())) > 80


def test_status_writes_only_to_a_terminal():
    assert not interactive(io.StringIO()) and interactive(Tty())
    tty, pipe = Tty(), io.StringIO()
    line = Status(True, tty)
    line("reading runs.csv")
    line("searching " + "x" * 200)
    line.clear()
    text = tty.getvalue()
    assert text.startswith("\rreading runs.csv\x1b[K\rsearching") and text.endswith("\r\x1b[K")
    assert max(len(part) for part in text.split("\r")) < 90  # cut to the width
    Status(False, pipe)("reading runs.csv")
    assert pipe.getvalue() == ""


def test_status_is_off_when_standard_error_is_redirected(capsys):
    with status("fitting") as say:  # pytest's capture is not a terminal
        say("still fitting")
    assert capsys.readouterr().err == ""
