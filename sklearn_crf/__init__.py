"""sklearn-crf: linear-chain conditional random fields as scikit-learn estimators.

``import sklearn_crf`` imports only what fitting a :class:`CRFTagger` needs.
The submodules :mod:`sklearn_crf.datasets`, :mod:`sklearn_crf.metrics` and
:mod:`sklearn_crf.model_selection`, :class:`SequenceFeaturizer` and the model
file functions (``save_model``, ``load_crfsuite``, ...) are imported on first
access (PEP 562): they cost nothing until used
(``sklearn_crf.metrics`` imports :mod:`sklearn.metrics`), and
``sklearn_crf.metrics``, ``from sklearn_crf import SequenceFeaturizer`` and
``import sklearn_crf.datasets`` work as for any attribute or submodule.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING

from ._compat import CRF
from ._model.layout import ParameterLayout
from ._tagger import CRFTagger, InconsistentVersionWarning
from ._cv import CRFTaggerCV
from ._features.vectorizer import EncodedCorpus, SequenceVectorizer
from ._version import __version__
from ._moved import install as _install_moved_modules

_install_moved_modules()  # old module names of pickles and skops files

if TYPE_CHECKING:  # pragma: no cover - for static analysis; imported lazily below
    from . import datasets, metrics, model_selection, scorers
    from ._io.conll import ConllChunk, iter_conll, read_conll, write_conll
    from ._io.crfsuite import load_crfsuite, save_crfsuite
    from ._io.persistence import load_model, save_model
    from ._io.corpus_store import LabelCodes, load_corpus, save_corpus
    from ._features.streaming import encode_stream
    from ._training.distributed import ShardedCorpus, ShardLostError
    from ._features.word_vectors import WordVectors
    from ._features.featurizer import SequenceFeaturizer
    from ._features.templates import TemplateFeaturizer

__all__ = [
    "CRF",
    "CRFTagger",
    "CRFTaggerCV",
    "ConllChunk",
    "EncodedCorpus",
    "InconsistentVersionWarning",
    "LabelCodes",
    "ParameterLayout",
    "SequenceFeaturizer",
    "SequenceVectorizer",
    "ShardLostError",
    "ShardedCorpus",
    "TemplateFeaturizer",
    "WordVectors",
    "__version__",
    "datasets",
    "encode_stream",
    "iter_conll",
    "load_corpus",
    "load_crfsuite",
    "load_model",
    "metrics",
    "model_selection",
    "read_conll",
    "save_corpus",
    "save_crfsuite",
    "save_model",
    "scorers",
    "write_conll",
]

#: public names imported on first access: name -> (submodule, attribute of it;
#: None for the submodule itself)
_LAZY = {
    "load_model": ("._io.persistence", "load_model"),
    "save_model": ("._io.persistence", "save_model"),
    "load_crfsuite": ("._io.crfsuite", "load_crfsuite"),
    "save_crfsuite": ("._io.crfsuite", "save_crfsuite"),
    "SequenceFeaturizer": ("._features.featurizer", "SequenceFeaturizer"),
    "TemplateFeaturizer": ("._features.templates", "TemplateFeaturizer"),
    "read_conll": ("._io.conll", "read_conll"),
    "iter_conll": ("._io.conll", "iter_conll"),
    "encode_stream": ("._features.streaming", "encode_stream"),
    "load_corpus": ("._io.corpus_store", "load_corpus"),
    "save_corpus": ("._io.corpus_store", "save_corpus"),
    "ShardedCorpus": ("._training.distributed", "ShardedCorpus"),
    "ShardLostError": ("._training.distributed", "ShardLostError"),
    "LabelCodes": ("._io.corpus_store", "LabelCodes"),
    "ConllChunk": ("._io.conll", "ConllChunk"),
    "WordVectors": ("._features.word_vectors", "WordVectors"),
    "write_conll": ("._io.conll", "write_conll"),
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
