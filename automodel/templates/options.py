"""The options of every template, read from its ``fit`` signature and docstring, and their values.

A template's options are the keyword parameters of its ``fit`` (after the frame; not ``progress`` or
``**options``), with their defaults, their annotations (``int``, ``float | None``, ``Sequence[float] |
str | None``, ...) and the line of the ``Parameters`` section that documents them. A value comes as
text (``automodel fit --template-option kohashi.n_terms=6``) or as a TOML value (``[fit.template_options.
kohashi]`` of a search space) and is converted to the first member of the annotation that takes it:
``none``, a boolean (``true``/``false``), an integer, a number, a comma-separated list, or text.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from automodel.data.cells import finite_number, shown
from automodel.errors import OptionError, SpaceError
from automodel.names import split_pairs
from automodel.space.config import SearchSpace, load_space
from automodel.templates.base import Template

__all__ = ["TemplateOption", "template_options", "convert", "check_options", "check_names", "checked_space", "parse_assignments"]

_SKIPPED = {"self", "frame", "progress"}
#: the type half of a numpy-style ``name : type`` line (``int``, ``sequence of str, optional``, ``{"a", "b"}``)
_TYPE = re.compile(r"^(\{[^}]*\}|(int|float|bool|str|sequence|array|list|tuple|dict|callable)\b[^.()]*)$", re.I)


@dataclass(frozen=True)
class TemplateOption:
    """One option of a template's ``fit``: its name, default, annotation (as written) and help line."""

    name: str
    default: Any
    annotation: str
    help: str = ""

    def line(self) -> str:
        """``n_terms (int, default 3): 3, 4, 5 or 6 ...``"""
        default = "none" if self.default is None else ",".join(map(str, self.default)) if isinstance(
            self.default, (tuple, list)) else str(self.default).lower() if isinstance(self.default, bool) else self.default
        return f"{self.name} ({self.annotation}, default {default}){': ' + self.help if self.help else ''}"


def _plain(text: str) -> str:
    """reStructuredText markup as plain text: ``x`` -> x, :data:`~a.b.C` -> C, :func:`a.f` -> a.f."""
    text = re.sub(r":\w+:`~?([^`]*\.)?([^`.]+)`", lambda m: (m.group(1) or "") * (not m.group(0).count("~")) + m.group(2), text)
    return text.replace("``", "")


def _helps(doc: str) -> dict[str, str]:
    """Option name -> the first sentence of its description, from a numpy-style ``Parameters`` section
    (the ``name : text`` line and the more indented lines after it)."""
    out: dict[str, str] = {}
    section = doc.split("Parameters", 1)[1] if "Parameters" in doc else ""
    lines = section.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^(\s*)([A-Za-z_][\w, ]*?) : (.+)$", line)
        if not match:
            continue
        indent, text = len(match.group(1)), [match.group(3).strip()]
        for more in lines[i + 1:]:
            if not more.strip() or len(more) - len(more.lstrip()) <= indent:
                break
            text.append(more.strip())
        if len(text) > 1 and _TYPE.match(text[0]):  # "name : type" then the description below it
            text = ([text[0].rstrip(":") + ":"] if text[0].startswith("{") else []) + text[1:]
        paragraph = _plain(" ".join(text))
        sentence = re.split(r"(?<=[.)])\s+(?=[A-Z])", paragraph, maxsplit=1)[0]
        for name in match.group(2).split(","):
            out.setdefault(name.strip(), sentence)
    return out


def template_options(template: Template) -> dict[str, TemplateOption]:
    """The options of ``template`` (see the module docstring), in signature order."""
    signature = inspect.signature(template.fit)
    helps: dict[str, str] = {}
    for documented in (template.fit, *getattr(template, "option_docs", ())):  # the fit's own first
        helps = {**_helps(inspect.getdoc(documented) or ""), **helps}
    out = {}
    for name, param in signature.parameters.items():
        if name in _SKIPPED or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        annotation = param.annotation if isinstance(param.annotation, str) else getattr(
            param.annotation, "__name__", str(param.annotation))
        out[name] = TemplateOption(name, param.default, annotation, helps.get(name, ""))
    return out


def _members(annotation: str) -> list[str]:
    return [m.strip() for m in annotation.split("|")]


def _one(member: str, value: Any) -> tuple[bool, Any]:
    """``(True, converted)`` when ``value`` (text or a TOML value) fits the annotation ``member``."""
    text = value.strip() if isinstance(value, str) else None
    if member == "None":
        return (value is None or (text is not None and text.lower() in ("none", "null"))), None
    if member == "bool":
        if isinstance(value, bool):
            return True, value
        if text is not None and text.lower() in ("true", "false", "yes", "no", "1", "0"):
            return True, text.lower() in ("true", "yes", "1")
        return False, None
    if member in ("int", "float"):
        if isinstance(value, bool):
            return False, None
        try:
            number = (int(text) if member == "int" else float(text)) if text is not None else (
                int(value) if member == "int" and float(value) == int(value) else float(value))
        except (TypeError, ValueError, OverflowError):
            return False, None
        return (True, number) if finite_number(number) else (False, None)  # a 400-digit int: no float
    sequence = re.fullmatch(r"(?:Sequence|tuple|list)\[(\w+)(?:, \.\.\.)?\]", member)
    if sequence:
        items = [v for v in text.split(",")] if text is not None else value if isinstance(value, list) else None
        if not items:
            return False, None
        converted = [_one(sequence.group(1), item) for item in items]
        return (True, tuple(v for _, v in converted)) if all(ok for ok, _ in converted) else (False, None)
    if member == "str":
        return (True, text) if text is not None else (False, None)
    return False, None


def convert(template: Template, key: str, value: Any, where: str = "") -> Any:
    """``value`` as the option ``key`` of ``template`` takes it; a one-line :class:`SpaceError` naming
    the template, the option, what it takes and what was given otherwise."""
    prefix = f"{where}: " if where else ""
    known = template_options(template)
    if key not in known:
        raise SpaceError(f"{prefix}template {template.name} has no option {key!r}; its options: "
                         f"{', '.join(known) or 'none'} ('automodel templates' describes them)")
    option = known[key]
    for member in _members(option.annotation):
        ok, converted = _one(member, value)
        if ok:
            return converted
    raise SpaceError(f"{prefix}{template.name}.{key} takes {option.annotation}, got {shown(value)}")


def check_options(templates: Mapping[str, Template], options: Mapping[str, Mapping[str, Any]], where: str = ""
                  ) -> dict[str, dict[str, Any]]:
    """Every template's options converted (:func:`convert`) and their values checked by the template
    (:meth:`Template.check_options`, on them over its defaults); an unknown template is a SpaceError, a
    value the template does not take a one-line OptionError starting with ``where``."""
    prefix = f"{where}: " if where else ""
    out: dict[str, dict[str, Any]] = {}
    for name, values in options.items():
        if name not in templates:
            raise SpaceError(f"{prefix}options for unknown template {name!r}; known: {', '.join(sorted(templates))}")
        template = templates[name]
        out[name] = {key: convert(template, key, value, where) for key, value in values.items()}
        defaults = {key: option.default for key, option in template_options(template).items()}
        try:
            template.check_options({**defaults, **out[name]})
        except OptionError as exc:
            raise OptionError(f"{prefix}{exc}") from None
    return out


def check_names(names: Sequence[str], where: str) -> None:
    """A one-line SpaceError when a name of ``names`` is no template (by the registry's table of names:
    no template module is imported).

    >>> check_names(["amdahl", "kohashi"], "space.toml")
    >>> check_names(["amdhal"], "space.toml")
    Traceback (most recent call last):
    ...
    automodel.errors.SpaceError: space.toml: unknown template(s) ['amdhal']; known: amdahl, fim_cal, fim_com, hockney, hockney_collective, kohashi, multivariate_type1, multivariate_type2, prophesy, rational, rbasp
    """
    from automodel.templates import MODULE_OF

    unknown = [t for t in names if t not in MODULE_OF]
    if unknown:
        raise SpaceError(f"{where}: unknown template(s) {unknown}; known: {', '.join(sorted(MODULE_OF))}")


def checked_space(space: str | Path | SearchSpace) -> SearchSpace:
    """The search space (a name, file or SearchSpace: :func:`~automodel.space.config.load_space`) with its
    template names (:func:`check_names`) and ``[fit.template_options]`` (:func:`check_options`) checked:
    what every command and function that takes a space loads it with, before it stores or runs anything,
    so a space file is refused whole, with a one-line SpaceError naming it. The names are checked against
    the registry's table; template modules are imported only when the space has template options."""
    sp = space if isinstance(space, SearchSpace) else load_space(space)
    check_names(sp.fit.templates, sp.source or sp.name)
    if sp.fit.template_options:
        from automodel.templates import TEMPLATES

        check_options(TEMPLATES, sp.fit.template_options, sp.source or sp.name)
    return sp


def parse_assignments(items: list[str]) -> dict[str, dict[str, str]]:
    """``["kohashi.n_terms=6", "hockney.breakpoints=8192,131072"]`` -> ``{"kohashi": {"n_terms": "6"}, ...}``.

    Examples
    --------
    >>> parse_assignments(["kohashi.n_terms=6", "kohashi.bayesian=true"])
    {'kohashi': {'n_terms': '6', 'bayesian': 'true'}}
    """
    expected = "TEMPLATE.OPTION=VALUE, e.g. kohashi.n_terms=6"
    out: dict[str, dict[str, str]] = {}
    for option, value in split_pairs(items, "--template-option", SpaceError, expected).items():
        name, dot, key = option.partition(".")
        if not (dot and name.strip() and key.strip()):
            raise SpaceError(f"--template-option {option + '=' + value!r}: expected {expected}")
        out.setdefault(name.strip(), {})[key.strip()] = value
    return out
