"""One numba option table: every kernel of the package is compiled with
``OPTS`` or ``OPTS_EXACT`` (nothing parallel), and only the table's module
calls ``njit``."""

import importlib
import pathlib
import pkgutil
import re

from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import sklearn_crf
from sklearn_crf._engine.config import OPTS, OPTS_EXACT

PACKAGE = pathlib.Path(sklearn_crf.__file__).parent


def _dispatchers():
    for info in pkgutil.walk_packages([str(PACKAGE)], "sklearn_crf."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == info.name:
                yield f"{info.name}.{name}", obj


def _options(dispatcher):
    """The options of the table that a dispatcher was made with (numba keeps
    ``cache`` apart from the target options, and adds defaults of its own)."""
    options = {k: v for k, v in dispatcher.targetoptions.items()
               if k in OPTS or k in OPTS_EXACT or k == "parallel"}
    options["cache"] = not isinstance(dispatcher._cache, NullCache)
    return options


def test_every_kernel_uses_the_option_table():
    found = dict(_dispatchers())
    assert len(found) > 40
    for name, dispatcher in found.items():
        assert _options(dispatcher) in (OPTS, OPTS_EXACT), name


def test_only_the_table_compiles_and_nothing_uses_prange():
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bprange\(|parallel=True[,)]", text), path
        if path.name != "config.py":
            assert not re.search(r"\bnjit\b", text), path


def test_the_exact_twin_is_the_same_source_without_contraction():
    from sklearn_crf._engine import scores

    twin = scores.state_scores_sparse_range_exact
    assert twin.py_func.__code__ is scores.state_scores_sparse_range.py_func.__code__
    assert _options(twin) == OPTS_EXACT
    # a cache entry of its own: the on-disk index keys ignore the options
    assert twin.py_func.__qualname__ != scores.state_scores_sparse_range.py_func.__qualname__
