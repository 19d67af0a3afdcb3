"""Outputs of a fitted model: exports to code (:mod:`~automodel.output.export`), plots and HTML reports."""
