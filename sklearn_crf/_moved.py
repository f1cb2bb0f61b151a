"""The modules that moved into packages, importable under their old names.

Pickles and skops files name the module of each class they hold; files
written before the layout of packages name modules such as
``sklearn_crf._vectorizer``. A finder on ``sys.meta_path`` answers an import
of an old name with a module whose attributes are those of the module that
now holds its code (the same objects, so classes keep one identity); a
class that moved out of a module that kept its name (:data:`MOVED_NAMES`) is
found through that module's ``__getattr__`` (:func:`moved_attribute`). New
code never uses the old names.
"""

import importlib
import importlib.abc
import importlib.util
import sys

#: old module name (under ``sklearn_crf.``) -> the module that holds its code now
MOVED = {
    "_featurizer": "_features.featurizer",
    "_featurizer_base": "_features.base",
    "_templates": "_features.templates",
    "_vectorizer": "_features.vectorizer",
    "_word_vectors": "_features.word_vectors",
    "_streaming": "_features.streaming",
    "_validation": "_features.validation",
    "_constraints": "_model.constraints",
    "_schemes": "_model.schemes",
    "_objective": "_training.objective",
    "_optimize": "_training.optimize",
    "_online": "_training.online",
    "_explain": "_inference.explain",
    "_inspection": "_inference.inspection",
    "_conll": "_io.conll",
    "_crfsuite": "_io.crfsuite",
    "_persistence": "_io.persistence",
    "_corpus_store": "_io.corpus_store",
    "_safe_io": "_io.safe_io",
    "_threads": "_engine.threads",
}

#: module (under ``sklearn_crf.``, old name or not) -> {name that moved out of
#: it: the module that holds it now}
MOVED_NAMES = {
    "_objective": {"ParameterLayout": "_model.layout"},
    "_tagger": {"TaggerWeights": "_model.weights"},
    "_training.distributed": {"PairStatistics": "_model.layout"},
}

_PACKAGE = __name__.rpartition(".")[0]


def moved_attribute(module_name, name):
    """The object ``name`` that moved out of the module ``module_name`` (for
    that module's ``__getattr__``); AttributeError when it did not move."""
    short = module_name[len(_PACKAGE) + 1:]
    home = MOVED_NAMES.get(short, {}).get(name)
    if home is None:
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{_PACKAGE}.{home}"), name)


class _Alias(importlib.abc.Loader):
    """Loads an old name as a module that reads its attributes from the
    module that holds its code now (then from :data:`MOVED_NAMES`)."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None  # a plain module

    def exec_module(self, module):
        target = importlib.import_module(self.target)
        old_name = module.__name__

        def __getattr__(name):
            try:
                return getattr(target, name)
            except AttributeError:
                return moved_attribute(old_name, name)

        module.__getattr__ = __getattr__
        module.__doc__ = f"The old name of :mod:`{self.target}`."


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds ``sklearn_crf.<old name>`` of :data:`MOVED`; other names are not
    its business."""

    def find_spec(self, fullname, path, target=None):
        package, _, name = fullname.rpartition(".")
        if package != _PACKAGE or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(
            fullname, _Alias(f"{_PACKAGE}.{MOVED[name]}"))


def install():
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
