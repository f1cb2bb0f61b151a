"""Scorers of sequence labeling for cross-validation and searches, by name."""

import copy

from sklearn import metrics as _skm
from sklearn.metrics import make_scorer

from ._entity import entity_f1_score, entity_precision_score, entity_recall_score
from ._flat import flat_accuracy_score, flatten, sequence_accuracy_score


def _flat_f1_without_outside(y_true, y_pred, *, sample_weight=None):
    """Token F1 averaged over all labels but "O", weighted by support."""
    flat_true, flat_pred, sample_weight = flatten(y_true, y_pred, sample_weight)
    labels = sorted((set(flat_true) | set(flat_pred)) - {"O"})
    if not labels:
        return 0.0
    return _skm.f1_score(
        flat_true,
        flat_pred,
        labels=labels,
        average="weighted",
        sample_weight=sample_weight,
        zero_division=0,
    )


entity_f1_scorer = make_scorer(entity_f1_score, zero_division=0)
entity_precision_scorer = make_scorer(entity_precision_score, zero_division=0)
entity_recall_scorer = make_scorer(entity_recall_score, zero_division=0)
flat_f1_scorer = make_scorer(_flat_f1_without_outside)
flat_accuracy_scorer = make_scorer(flat_accuracy_score)
sequence_accuracy_scorer = make_scorer(sequence_accuracy_score)

_SCORERS = {
    "entity_f1": entity_f1_scorer,
    "entity_precision": entity_precision_scorer,
    "entity_recall": entity_recall_scorer,
    "flat_accuracy": flat_accuracy_scorer,
    "flat_f1": flat_f1_scorer,
    "sequence_accuracy": sequence_accuracy_scorer,
}


def get_scorer_names():
    """Names of the sequence-labeling scorers known to :func:`get_scorer`.

    Returns
    -------
    names : list of str
        Sorted scorer names.

    Examples
    --------
    >>> from sklearn_crf.metrics import get_scorer_names
    >>> get_scorer_names()  # doctest: +NORMALIZE_WHITESPACE
    ['entity_f1', 'entity_precision', 'entity_recall', 'flat_accuracy',
     'flat_f1', 'sequence_accuracy']
    """
    return sorted(_SCORERS)


def get_scorer(scoring):
    """Get a sequence-labeling scorer from its name.

    The scorers are called as ``scorer(estimator, X, y)``, where
    ``estimator.predict(X)`` and ``y`` are lists of label sequences (ragged),
    and can be passed as ``scoring`` to
    :func:`~sklearn.model_selection.cross_validate`,
    :class:`~sklearn.model_selection.GridSearchCV`, etc. Scikit-learn's own
    scorer names (``"f1"``, ``"accuracy"``, ...) do not work with lists of
    label sequences; use these scorers instead, e.g.
    ``scoring=get_scorer("entity_f1")`` or
    ``scoring={"f1": entity_f1_scorer, "acc": flat_accuracy_scorer}``.

    ============================  =============================================
    name                          score
    ============================  =============================================
    ``"entity_f1"``               micro-averaged entity F1 (:func:`entity_f1_score`)
    ``"entity_precision"``        micro-averaged entity precision
    ``"entity_recall"``           micro-averaged entity recall
    ``"flat_f1"``                 token F1 over all labels but ``"O"``, weighted
                                  by support
    ``"flat_accuracy"``           token accuracy (:func:`flat_accuracy_score`)
    ``"sequence_accuracy"``       fraction of exactly predicted sequences
    ============================  =============================================

    Ill-defined scores (e.g. precision with no predicted entity) are 0,
    without warning.

    Parameters
    ----------
    scoring : str or callable
        Name of the scorer; a callable is returned unchanged.

    Returns
    -------
    scorer : callable
        A fresh copy of the scorer, called as ``scorer(estimator, X, y)``.

    Examples
    --------
    >>> from sklearn.base import BaseEstimator
    >>> from sklearn_crf.metrics import get_scorer
    >>> class Echo(BaseEstimator):
    ...     def fit(self, X, y):
    ...         return self
    ...     def predict(self, X):
    ...         return [["B-PER" if token.istitle() else "O" for token in x] for x in X]
    >>> X = [["Ana", "runs"], ["Hi", "Bob", "and", "Eve"]]
    >>> y = [["B-PER", "O"], ["O", "B-PER", "O", "B-PER"]]
    >>> scorer = get_scorer("entity_f1")
    >>> round(scorer(Echo().fit(X, y), X, y), 4)
    0.8571
    """
    if callable(scoring):
        return scoring
    if isinstance(scoring, str):
        if scoring in _SCORERS:
            return copy.deepcopy(_SCORERS[scoring])
        raise ValueError(
            f"{scoring!r} is not a valid sequence-labeling scorer name; valid names "
            f"are {get_scorer_names()}"
        )
    raise TypeError(
        f"scoring must be a scorer name or a callable, got a {type(scoring).__name__}"
    )
