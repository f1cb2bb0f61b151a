"""Entity-level metrics: entity extraction, precision, recall and F-scores."""

import functools
import inspect
import numbers
import warnings
from typing import NamedTuple, Optional

import numpy as np
from sklearn import metrics as _skm
from sklearn.exceptions import UndefinedMetricWarning

from .._model.schemes import SCHEMES, read_entities
from .._features.validation import check_sequence_weight
from ._flat import check_aligned_sequences, is_unknown, known_label

# ---------------------------------------------------------------------------
# Entity extraction
# ---------------------------------------------------------------------------


def _check_mode_scheme(mode, scheme):
    """Validate ``mode`` and ``scheme``; return the canonical scheme name."""
    if mode not in (None, "strict"):
        raise ValueError(f"mode must be None or 'strict', got {mode!r}")
    valid = sorted(SCHEMES)
    if mode is None:
        if scheme is not None:
            raise ValueError(
                f"scheme={scheme!r} is only used with mode='strict'; pass "
                "mode='strict' for strict entity matching, or scheme=None for the "
                "default (conlleval-compatible) matching"
            )
        return None
    if scheme is None:
        raise ValueError(f"mode='strict' requires a scheme, one of {valid}")
    if not isinstance(scheme, str) or scheme.upper() not in SCHEMES:
        raise ValueError(f"scheme must be one of {valid}, got {scheme!r}")
    return scheme.upper()


def _extractor(mode, scheme, suffix):
    """``read(seq, where)``: the entities of one sequence in ``mode`` and ``scheme``."""
    scheme = _check_mode_scheme(mode, scheme)
    return lambda seq, where: read_entities(seq, scheme, suffix=suffix, where=where)


def get_entities(seq, *, mode=None, scheme=None, suffix=False):
    """Extract the entities (labeled chunks) of one label sequence.

    Parameters
    ----------
    seq : list of str
        The labels of one sequence, e.g. ``["B-PER", "I-PER", "O"]``.

    mode : {None, "strict"}, default=None
        With ``None``, chunks are extracted with the rules of the CoNLL
        ``conlleval`` script, as ``seqeval`` does by default: prefixes ``B``,
        ``I``, ``E``, ``S`` and ``O`` are understood and ill-formed chunks are
        repaired (e.g. an ``I-PER`` after ``O`` starts a chunk). With
        ``"strict"``, only chunks well formed in ``scheme`` are returned, as in
        ``seqeval``'s strict mode.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU", "BMES"}, default=None
        Tagging scheme, required with ``mode="strict"`` and not allowed
        otherwise. Labels whose prefix is not part of the scheme raise a
        ValueError.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix
        (``"B-PER"``).

    Returns
    -------
    entities : list of tuple (type, start, end)
        The entities in order, with ``seq[start:end]`` the labels of the
        entity (``end`` is exclusive).

    Notes
    -----
    Labels are split into a one-character chunk tag and an entity type at the
    first ``"-"`` (``"B-PER"`` has tag ``"B"`` and type ``"PER"``); a label
    without a type, such as ``"B"``, gets type ``"_"``. In the default mode,
    labels with another one-character tag (e.g. ``L-`` or ``U-`` of BILOU)
    only delimit chunks through changes of type, as in ``conlleval``; use
    ``mode="strict", scheme="BILOU"`` for BILOU tags (and ``scheme="BMES"``
    for the ``M-`` tags of BMES).

    Entities never span two sequences. The only difference with seqeval's
    default mode follows from this: seqeval concatenates all sequences, and
    a label with an unknown chunk tag and no type (e.g. a bare ``"U"``) near
    the start of a sequence can make it report a chunk starting in an earlier
    sequence.

    Examples
    --------
    >>> from sklearn_crf.metrics import get_entities
    >>> get_entities(["B-PER", "I-PER", "O", "B-LOC"])
    [('PER', 0, 2), ('LOC', 3, 4)]
    >>> get_entities(["O", "I-PER", "I-PER", "B-LOC"])
    [('PER', 1, 3), ('LOC', 3, 4)]
    >>> get_entities(["O", "I-PER", "I-PER", "B-LOC"], mode="strict", scheme="IOB2")
    [('LOC', 3, 4)]
    """
    if isinstance(seq, (str, bytes)) or not hasattr(seq, "__iter__"):
        raise TypeError(
            f"seq must be a sequence of labels, got a {type(seq).__name__}"
        )
    return _extractor(mode, scheme, suffix)(list(seq), "seq")


# ---------------------------------------------------------------------------
# Entity-level metrics
# ---------------------------------------------------------------------------

#: parameter descriptions shared by the entity-level metrics' docstrings
_ENTITY_DOC = {
    "y": """y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.""",
    "average": """average : {"micro", "macro", "weighted", None}, default="micro"
        Averaging over entity types; None returns one score per type.""",
    "extraction": """mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU", "BMES"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.""",
    "sample_weight": """sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence: each entity counts with the weight of its
        sequence.""",
}


def entity_doc(function):
    """Fill the ``%(...)s`` parts of ``function``'s docstring from ``_ENTITY_DOC``."""
    if function.__doc__:  # None under python -OO
        function.__doc__ = function.__doc__ % _ENTITY_DOC
    return function


class EntityMatches(NamedTuple):
    """The entities of ``y_true`` and ``y_pred`` as a multiclass target.

    Every entity found in ``y_true`` or ``y_pred`` is one sample. Its true class
    is the code of its type if it is a true entity, and ``len(types)`` ("no
    entity") otherwise; its predicted class likewise. Per type, scikit-learn's
    true positives, predicted and true counts are then the numbers of correct,
    predicted and true entities.

    Attributes
    ----------
    types : list of str
        Sorted entity types found in ``y_true`` or ``y_pred``; type ``k`` has
        code ``k``.
    true_class, pred_class : ndarray of shape (n_entities,)
        The true and predicted class of each entity.
    weights : ndarray of shape (n_entities,) or None
        The weight of each entity's sequence.
    """

    types: list
    true_class: np.ndarray
    pred_class: np.ndarray
    weights: Optional[np.ndarray]


def entity_matches(
    y_true, y_pred, mode=None, scheme=None, suffix=False, sample_weight=None
):
    """:class:`EntityMatches` of ``y_true`` and ``y_pred``, extracted as
    :func:`get_entities` does with ``mode``, ``scheme`` and ``suffix``."""
    extract = _extractor(mode, scheme, suffix)
    y_true, y_pred = check_aligned_sequences(y_true, y_pred)
    sample_weight = check_sequence_weight(sample_weight, len(y_true))

    true_entities, pred_entities = set(), set()
    for index, (seq_true, seq_pred) in enumerate(zip(y_true, y_pred)):
        unknown = [t for t, label in enumerate(seq_true) if is_unknown(label)]
        found_true = extract(_gold_without_unknown(seq_true, unknown), f"y_true[{index}]")
        found_pred = extract(seq_pred, f"y_pred[{index}]")
        if unknown:
            found_true = _away_from(found_true, unknown, len(seq_true))
            found_pred = _away_from(found_pred, unknown, len(seq_true))
        true_entities.update((index, *e) for e in found_true)
        pred_entities.update((index, *e) for e in found_pred)

    entities = sorted(true_entities | pred_entities)
    types = sorted({e[1] for e in entities})
    code = {type_: k for k, type_ in enumerate(types)}

    def classes(found):
        return np.array(
            [code[e[1]] if e in found else len(types) for e in entities], dtype=np.intp
        )

    weights = None if sample_weight is None else sample_weight[[e[0] for e in entities]]
    return EntityMatches(types, classes(true_entities), classes(pred_entities), weights)


def _gold_without_unknown(seq, unknown):
    """The gold labels of one sequence, ``"O"`` at its unknown tokens (sets
    of one label replaced by that label)."""
    if not unknown and not any(isinstance(label, (set, frozenset)) for label in seq):
        return seq
    return ["O" if is_unknown(label) else known_label(label) for label in seq]


def _away_from(entities, unknown, n):
    """The entities (type, start, end) that neither cover an unknown gold
    token nor touch one: only there is the gold entity known."""
    near = np.zeros(n + 2, dtype=bool)
    near[np.asarray(unknown) + 1] = True
    before = np.concatenate([[0], np.cumsum(near)])  # near tokens in near[:k]
    # tokens start - 1 .. end (exclusive end): near[start : end + 2]
    return [e for e in entities if before[e[2] + 2] == before[e[1]]]


def check_entity_options(average, beta, zero_division):
    """Validate the scoring options; return ``zero_division`` as sklearn takes it."""
    if average not in (None, "micro", "macro", "weighted"):
        raise ValueError(
            "average must be one of None, 'micro', 'macro' or 'weighted', got "
            f"{average!r}"
        )
    if not isinstance(beta, numbers.Real) or isinstance(beta, bool) or not beta >= 0:
        raise ValueError(f"beta must be a number >= 0, got {beta!r}")
    if isinstance(zero_division, str) and zero_division == "warn":
        return zero_division
    if isinstance(zero_division, numbers.Real) and not isinstance(zero_division, bool):
        if np.isnan(zero_division):
            return np.nan
        if zero_division in (0, 1):
            return float(zero_division)
    raise ValueError(
        f"zero_division must be 'warn', 0, 1 or np.nan, got {zero_division!r}"
    )


def entity_scores(matches, average, beta, zero_division, warn_for):
    """Precision, recall, F-beta and support of :class:`EntityMatches` ``matches``.

    scikit-learn's :func:`~sklearn.metrics.precision_recall_fscore_support`
    computes the scores; the support is returned for averages too.
    """
    types, true_class, pred_class, weights = matches
    if not types:  # no entity at all: every score is 0 / 0
        if zero_division == "warn":
            for metric in warn_for:
                warnings.warn(
                    f"{metric.capitalize()} is ill-defined and being set to 0.0 "
                    "due to no true nor predicted entities. Use `zero_division` "
                    "parameter to control this behavior.",
                    UndefinedMetricWarning,
                    stacklevel=4,
                )
        if average is None:
            return np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64)
        value = 0.0 if zero_division == "warn" else zero_division
        return value, value, value, 0

    # One more sample, "no entity" on both sides, counts for no type: it keeps
    # scikit-learn from refusing weights that are all zero.
    none = [len(types)]
    precision, recall, f_score, support = _skm.precision_recall_fscore_support(
        np.concatenate([true_class, none]),
        np.concatenate([pred_class, none]),
        labels=np.arange(len(types)),
        average=average,
        beta=beta,
        sample_weight=None if weights is None else np.concatenate([weights, [1.0]]),
        zero_division=zero_division,
        warn_for=warn_for,
    )
    if average is None:
        return precision, recall, f_score, support
    is_true = true_class < len(types)
    support = is_true.sum() if weights is None else weights[is_true].sum()
    return float(precision), float(recall), float(f_score), support.item()


@entity_doc
def entity_precision_recall_fscore_support(
    y_true,
    y_pred,
    *,
    beta=1.0,
    average=None,
    mode=None,
    scheme=None,
    suffix=False,
    sample_weight=None,
    zero_division="warn",
    warn_for=("precision", "recall", "f-score"),
):
    """Entity-level precision, recall, F-beta score and support per entity type.

    An entity (chunk) is a maximal span of tokens with one type, e.g.
    ``B-PER I-PER``. A predicted entity is correct only if an entity with the
    same type, start and end exists in the same true sequence. Entity types
    are the labels without their chunk tag (``PER``, ``LOC``, ...), in sorted
    order. The scores are those of
    :func:`sklearn.metrics.precision_recall_fscore_support` with one sample
    per entity and the entity types as classes.

    With the default ``mode=None`` the results equal those of
    :func:`seqeval.metrics.precision_recall_fscore_support` (the conlleval
    convention); with ``mode="strict"`` and a ``scheme`` they equal those of
    seqeval's strict mode with the same scheme (see :func:`get_entities`).

    Parameters
    ----------
    %(y)s

    beta : float, default=1.0
        Weight of recall relative to precision in the F-score.

    average : {None, "micro", "macro", "weighted"}, default=None
        If None, the scores of each entity type are returned. Otherwise:

        - ``"micro"``: scores over the total numbers of correct, predicted
          and true entities;
        - ``"macro"``: unweighted mean of the per-type scores;
        - ``"weighted"``: mean of the per-type scores weighted by support.

    %(extraction)s

    %(sample_weight)s

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value of a score whose denominator is zero (precision without
        predicted entities, recall without true entities, F-score without
        either). ``"warn"`` acts as 0 and emits an
        :class:`~sklearn.exceptions.UndefinedMetricWarning`. NaN scores are
        left out of the averages.

    warn_for : tuple of str, default=("precision", "recall", "f-score")
        Scores for which to warn about zero division; used by the
        single-score functions.

    Returns
    -------
    precision : float or ndarray of shape (n_types,)
        Precision, per type if ``average`` is None.

    recall : float or ndarray of shape (n_types,)
        Recall, per type if ``average`` is None.

    fbeta_score : float or ndarray of shape (n_types,)
        F-beta score, per type if ``average`` is None.

    support : int, float or ndarray of shape (n_types,)
        Number of true entities (of each type if ``average`` is None);
        sums of weights if ``sample_weight`` is given.

    See Also
    --------
    entity_classification_report : Text report of these scores.
    get_entities : Entity extraction.

    Notes
    -----
    When there is no entity at all, ``average="macro"`` gives
    ``zero_division`` values (seqeval returns NaN).

    Examples
    --------
    >>> from sklearn_crf.metrics import entity_precision_recall_fscore_support
    >>> y_true = [["O", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> p, r, f, s = entity_precision_recall_fscore_support(y_true, y_pred)
    >>> p, r, f, s
    (array([0., 1.]), array([0., 1.]), array([0., 1.]), array([1, 1]))
    >>> entity_precision_recall_fscore_support(y_true, y_pred, average="micro")
    (0.5, 0.5, 0.5, 2)
    """
    zero_division = check_entity_options(average, beta, zero_division)
    matches = entity_matches(y_true, y_pred, mode, scheme, suffix, sample_weight)
    return entity_scores(matches, average, beta, zero_division, warn_for)


def _score_of_prfs(index, warn_for, **fixed):
    """Decorator: the def it decorates, a signature and a docstring, becomes
    score ``index`` (0: precision, 1: recall, 2: F-beta) of
    :func:`entity_precision_recall_fscore_support` called with the def's
    arguments and ``fixed``, warning for ``warn_for``."""

    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(entity_doc(function))
        def score(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return entity_precision_recall_fscore_support(
                **bound.arguments, **fixed, warn_for=warn_for
            )[index]

        return score

    return decorate


@_score_of_prfs(0, ("precision",))
def entity_precision_score(
    y_true,
    y_pred,
    *,
    average="micro",
    mode=None,
    scheme=None,
    suffix=False,
    sample_weight=None,
    zero_division="warn",
):
    """Entity-level precision: the fraction of predicted entities that are correct.

    Equals :func:`seqeval.metrics.precision_score`; see
    :func:`entity_precision_recall_fscore_support`.

    Parameters
    ----------
    %(y)s

    %(average)s

    %(extraction)s

    %(sample_weight)s

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value returned when there is no predicted entity.

    Returns
    -------
    precision : float or ndarray of shape (n_types,)
        Entity precision.

    Examples
    --------
    >>> from sklearn_crf.metrics import entity_precision_score
    >>> y_true = [["O", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "O", "O"]]
    >>> entity_precision_score(y_true, y_pred)
    0.0
    """


@_score_of_prfs(1, ("recall",))
def entity_recall_score(
    y_true,
    y_pred,
    *,
    average="micro",
    mode=None,
    scheme=None,
    suffix=False,
    sample_weight=None,
    zero_division="warn",
):
    """Entity-level recall: the fraction of true entities that are found.

    Equals :func:`seqeval.metrics.recall_score`; see
    :func:`entity_precision_recall_fscore_support`.

    Parameters
    ----------
    %(y)s

    %(average)s

    %(extraction)s

    %(sample_weight)s

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value returned when there is no true entity.

    Returns
    -------
    recall : float or ndarray of shape (n_types,)
        Entity recall.

    Examples
    --------
    >>> from sklearn_crf.metrics import entity_recall_score
    >>> y_true = [["O", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["O", "B-MISC", "I-MISC", "O"], ["B-PER", "O", "O"]]
    >>> entity_recall_score(y_true, y_pred)
    0.5
    """


@_score_of_prfs(2, ("f-score",))
def entity_fbeta_score(
    y_true,
    y_pred,
    *,
    beta,
    average="micro",
    mode=None,
    scheme=None,
    suffix=False,
    sample_weight=None,
    zero_division="warn",
):
    """Entity-level F-beta score.

    See :func:`entity_precision_recall_fscore_support`.

    Parameters
    ----------
    %(y)s

    beta : float
        Weight of recall relative to precision.

    %(average)s

    %(extraction)s

    %(sample_weight)s

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value returned when there is neither a true nor a predicted entity.

    Returns
    -------
    fbeta : float or ndarray of shape (n_types,)
        Entity F-beta score.

    Examples
    --------
    >>> from sklearn_crf.metrics import entity_fbeta_score
    >>> y_true = [["O", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["O", "B-MISC", "I-MISC", "O"], ["O", "O", "O"]]
    >>> round(entity_fbeta_score(y_true, y_pred, beta=2), 4)
    0.5556
    """


@_score_of_prfs(2, ("f-score",), beta=1.0)
def entity_f1_score(
    y_true,
    y_pred,
    *,
    average="micro",
    mode=None,
    scheme=None,
    suffix=False,
    sample_weight=None,
    zero_division="warn",
):
    """Entity-level F1 score, the standard score for named-entity recognition.

    With the defaults this is the CoNLL ``conlleval`` F1 and equals
    :func:`seqeval.metrics.f1_score`; see
    :func:`entity_precision_recall_fscore_support`.

    Parameters
    ----------
    %(y)s

    %(average)s

    %(extraction)s

    %(sample_weight)s

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value returned when there is neither a true nor a predicted entity.

    Returns
    -------
    f1 : float or ndarray of shape (n_types,)
        Entity F1 score.

    Examples
    --------
    >>> from sklearn_crf.metrics import entity_f1_score
    >>> y_true = [["O", "B-MISC", "I-MISC", "B-MISC"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["O", "B-MISC", "I-MISC", "I-MISC"], ["B-PER", "I-PER", "O"]]
    >>> round(entity_f1_score(y_true, y_pred), 4)
    0.4
    >>> entity_f1_score(y_true, y_pred, average=None)
    array([0., 1.])
    """
