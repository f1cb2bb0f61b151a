"""Sphinx configuration of the sklearn-crf documentation.

Build (warnings are errors; the gallery runs the examples on the data subset
that SKLEARN_CRF_MAX_SENTENCES sets, 300 sentences unless it is set already;
``SKLEARN_CRF_MAX_SENTENCES=`` (empty) runs them on all of the data)::

    python -m pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's sklearn_crf, not an installed one
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("SKLEARN_CRF_MAX_SENTENCES", "300")
os.environ.setdefault("MPLBACKEND", "Agg")

import sklearn_crf  # noqa: E402

project = "sklearn-crf"
author = "the sklearn-crf developers"
copyright = "the sklearn-crf developers"
release = sklearn_crf.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "crf_docs",
]

exclude_patterns = ["_build", "**/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]
root_doc = "index"
default_role = "literal"

# API reference: one page per public object, from its numpydoc docstring
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

intersphinx_mapping = {}  # no network while building: no cross-project links

sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/.*\.py$",  # run every example, not only plot_*.py
    "ignore_pattern": r"__init__\.py",
    "reset_argv": "crf_docs.reset_argv",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "plot_gallery": "True",
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "capture_repr": (),
    "min_reported_time": 10**9,  # no timing tables: they change on every build
    "write_computation_times": False,
}

try:
    import pydata_sphinx_theme  # noqa: F401
except ImportError:  # pragma: no cover - the docs extra installs it
    html_theme = "alabaster"
else:
    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
        "secondary_sidebar_items": ["page-toc"],
        "footer_start": ["copyright"],
        "footer_end": [],
    }
html_title = f"sklearn-crf {release}"
html_static_path = []
html_show_sourcelink = False
