"""Sphinx configuration: the docs/*.md pages (MyST) and an API reference from the numpy-style
docstrings (autodoc with napoleon). Built in CI with warnings as errors:
``python -m sphinx -W -b html docs out/docs``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's automodel, also where an installed one differs

project = "automodel"
author = "the automodel authors"
release = version = "0.1.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # links such as reference.md#scikit-learn

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_param = False  # types as text: "name" or "DataFrame" are words, not cross-references
napoleon_use_ivar = True  # a dataclass's Attributes section, not a second description of its fields
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the docstrings say the types; the signatures stay readable
autodoc_default_options = {"members": True, "undoc-members": False}

html_theme = "alabaster"
html_static_path: list[str] = []
