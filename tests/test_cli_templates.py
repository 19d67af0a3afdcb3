"""automodel templates: every registered template with its cost class, within 80 columns."""

from automodel.cli import main
from automodel.templates import TEMPLATES


def test_lists_every_template_with_its_cost(capsys):
    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    for name, template in TEMPLATES.items():
        assert f"{name} ({template.cost})" in out
    assert max(len(line) for line in out.splitlines()) <= 80
