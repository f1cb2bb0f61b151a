"""sklearn-crfsuite's ``scorers`` module: scorers for cross-validation and searches.

``from sklearn_crf import scorers`` replaces ``from sklearn_crfsuite import
scorers``: ``scorers.flat_accuracy`` and ``scorers.sequence_accuracy`` are
:mod:`sklearn_crf.metrics`' ``flat_accuracy_scorer`` and
``sequence_accuracy_scorer``, usable as ``scoring`` in
:func:`~sklearn.model_selection.cross_val_score` and the searches.
:func:`sklearn_crf.metrics.get_scorer` has the entity-level scorers too.

Examples
--------
>>> from sklearn.model_selection import cross_val_score
>>> from sklearn_crf import CRF, scorers
>>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]] * 3
>>> y = [["PER", "O"], ["PER", "O"]] * 3
>>> cross_val_score(CRF(c2=0.01), X, y, cv=3, scoring=scorers.sequence_accuracy).tolist()
[1.0, 1.0, 1.0]
"""

from .metrics import flat_accuracy_scorer as flat_accuracy
from .metrics import sequence_accuracy_scorer as sequence_accuracy

__all__ = ["flat_accuracy", "sequence_accuracy"]
