"""sklearn-crf: linear-chain conditional random fields as scikit-learn estimators."""

from . import datasets, metrics
from ._featurizer import SequenceFeaturizer
from ._objective import ParameterLayout
from ._tagger import CRFTagger
from ._vectorizer import SequenceVectorizer
from ._version import __version__

__all__ = [
    "CRFTagger",
    "ParameterLayout",
    "SequenceFeaturizer",
    "SequenceVectorizer",
    "__version__",
    "datasets",
    "metrics",
]
