"""Formula text: how terms, formulas and coefficients are written (plain text, LaTeX, Python, C).

Below the search in the layers: candidate names and model formulas are printed with it.
"""
