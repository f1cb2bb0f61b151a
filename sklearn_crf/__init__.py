"""sklearn-crf: linear-chain conditional random fields as scikit-learn estimators.

``import sklearn_crf`` imports only what fitting a :class:`CRFTagger` needs.
The submodules :mod:`sklearn_crf.datasets`, :mod:`sklearn_crf.metrics` and
:mod:`sklearn_crf.model_selection` and :class:`SequenceFeaturizer` are
imported on first access (PEP 562): they cost nothing until used
(``sklearn_crf.metrics`` imports :mod:`sklearn.metrics`), and
``sklearn_crf.metrics``, ``from sklearn_crf import SequenceFeaturizer`` and
``import sklearn_crf.datasets`` work as for any attribute or submodule.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING

from ._compat import CRF
from ._crfsuite import load_crfsuite, save_crfsuite
from ._objective import ParameterLayout
from ._persistence import load_model, save_model
from ._tagger import CRFTagger, InconsistentVersionWarning
from ._vectorizer import SequenceVectorizer
from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover - for static analysis; imported lazily below
    from . import datasets, metrics, model_selection, scorers
    from ._conll import read_conll, write_conll
    from ._featurizer import SequenceFeaturizer
    from ._templates import TemplateFeaturizer

__all__ = [
    "CRF",
    "CRFTagger",
    "InconsistentVersionWarning",
    "ParameterLayout",
    "SequenceFeaturizer",
    "SequenceVectorizer",
    "TemplateFeaturizer",
    "__version__",
    "datasets",
    "load_crfsuite",
    "load_model",
    "metrics",
    "model_selection",
    "read_conll",
    "save_crfsuite",
    "save_model",
    "scorers",
    "write_conll",
]

#: public names imported on first access: name -> (submodule, attribute of it;
#: None for the submodule itself)
_LAZY = {
    "SequenceFeaturizer": ("._featurizer", "SequenceFeaturizer"),
    "TemplateFeaturizer": ("._templates", "TemplateFeaturizer"),
    "read_conll": ("._conll", "read_conll"),
    "write_conll": ("._conll", "write_conll"),
    "datasets": (".datasets", None),
    "metrics": (".metrics", None),
    "model_selection": (".model_selection", None),
    "scorers": (".scorers", None),
}


def __getattr__(name):
    """Import a lazily loaded public name on first access (PEP 562).

    Parameters
    ----------
    name : str
        The attribute looked up on the package.

    Returns
    -------
    value : module or class
        The submodule or class; it is then stored in the package namespace,
        so later accesses do not come here.

    Raises
    ------
    AttributeError
        When ``name`` is not a public name of the package.
    """
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = _import_module(module_name, __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__():
    """The package's names, including those not imported yet.

    Returns
    -------
    names : list of str
        Sorted names of the package namespace and of ``__all__``.
    """
    return sorted(set(globals()) | set(__all__))
