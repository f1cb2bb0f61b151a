"""Sphinx helpers of the sklearn-crf docs: the table of CRFTagger's defaults,
and the command-line flags the gallery gives each example.

The table is made from the code at build time (``.. crftagger-defaults::``),
so it cannot disagree with ``CRFTagger().get_params()``: one row per parameter
in the order of the signature, its default, and the first sentence of its
description in CRFTagger's docstring.
"""

import inspect
import re

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

#: per example: the flags the gallery runs it with, on top of the data subset
#: (SKLEARN_CRF_MAX_SENTENCES, set in conf.py), to keep the build short
GALLERY_ARGV = {
    "model_selection_conll2002.py": ["--n-iter", "2", "--n-jobs", "1"],
    "cross_validation_conll2002.py": ["--top", "5"],
    "plots_conll2002.py": ["--grid-size", "2", "--cv", "2"],
    "dense_vectors_conll2002.py": ["--epochs", "2"],
}


def reset_argv(gallery_conf, script_vars):
    """``sys.argv[1:]`` of an example run by sphinx-gallery (see GALLERY_ARGV)."""
    name = script_vars["src_file"].replace("\\", "/").rsplit("/", 1)[-1]
    argv = list(GALLERY_ARGV.get(name, []))
    if name == "plots_conll2002.py":
        argv += ["--out", str(gallery_conf["src_dir"]) + "/_build/gallery_plots"]
    return argv


def defaults_rows():
    """``[(name, default)]`` of CRFTagger, in the order of its signature."""
    from sklearn_crf import CRFTagger

    params = CRFTagger().get_params()
    return [(name, params[name]) for name in inspect.signature(CRFTagger).parameters]


def _first_sentence(lines):
    text = " ".join(line.strip() for line in lines).strip()
    match = re.match(r"(.+?\.)(\s|$)", text)
    return match.group(1) if match else text


class CRFTaggerDefaults(Directive):
    """``.. crftagger-defaults::``: a table of every CRFTagger parameter."""

    has_content = False

    def run(self):
        from numpydoc.docscrape import NumpyDocString

        from sklearn_crf import CRFTagger

        described = {p.name: p.desc for p in NumpyDocString(CRFTagger.__doc__)["Parameters"]}
        lines = [
            ".. list-table:: Every parameter of ``CRFTagger``, in the order of its signature",
            "   :header-rows: 1",
            "   :widths: 20 15 65",
            "",
            "   * - parameter",
            "     - default",
            "     - what it sets (see :class:`~sklearn_crf.CRFTagger`)",
        ]
        for name, default in defaults_rows():
            lines += [f"   * - ``{name}``", f"     - ``{default!r}``",
                      f"     - {_first_sentence(described.get(name, []))}"]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="crftagger-defaults"), 0, container)
        return container.children


_FIELD = re.compile(r"^(\s*\w+ : )(.*)$")


def escape_underscores_in_types(app, what, name, obj, options, lines):
    """In the type of a numpydoc field (``coef_ : ndarray of shape (n_iter_,)``),
    write a name ending in ``_`` so that reStructuredText does not read it as a
    link (``n_iter_`` would be a reference to a target named n_iter)."""
    for i, line in enumerate(lines):
        match = _FIELD.match(line)
        if match:
            lines[i] = match.group(1) + re.sub(r"(\w)_(?=[,)\s]|$)", r"\1\\_", match.group(2))


def setup(app):
    app.add_directive("crftagger-defaults", CRFTaggerDefaults)
    # before numpydoc (priority 500) turns the fields into reStructuredText
    app.connect("autodoc-process-docstring", escape_underscores_in_types, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
