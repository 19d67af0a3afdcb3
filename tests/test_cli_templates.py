"""automodel templates: every registered template with its cost class, within 80 columns."""

from automodel.cli import main
from automodel.templates import TEMPLATES


def test_lists_every_template_with_its_cost(capsys):
    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    for name, template in TEMPLATES.items():
        assert f"{name} ({template.cost})" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_sources_are_papers_a_reader_can_find_not_files_of_notes(capsys):
    """``source: bayesian-kohashi-2022.txt, sec. 2.1``: a file of the project's notes no installation has."""
    from automodel.cli import main
    from automodel.templates import PAPERS

    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    assert ".txt" not in out and "source: Kohashi et al. 2022, Performance prediction of massively" in out
    assert all(paper.split(",")[0] in out for paper in PAPERS.values())
