"""The text of a coefficient as every formula prints it, without sympy (:mod:`automodel.text.printing`)."""

from __future__ import annotations

__all__ = ["number"]


def number(value: float, digits: int = 4) -> str:
    """``value`` as the text printer prints a coefficient of ``digits`` significant digits: ``0.0032``,
    ``1.235e-6``, ``2.0``.

    The text of :meth:`TextPrinter._print_Float` of ``sympy.Float(value)``, made by the function sympy's
    own float printing calls (``mpmath.libmp.to_str``) without building two sympy numbers per
    coefficient (a third of the time of ``automodel kernels`` on 1000 kernels); the tests check that
    both give the same text.
    """
    from mpmath.libmp import dps_to_prec, from_float, round_nearest, to_str

    text = to_str(from_float(float(value), dps_to_prec(digits), round_nearest), digits, strip_zeros=True)
    if text.startswith("-.0"):
        text = "-0." + text[3:]
    elif text.startswith(".0"):
        text = "0." + text[2:]
    return text.removeprefix("+")
