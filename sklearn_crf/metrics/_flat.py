"""Token-level (``flat_*``) and sequence-level metrics, and the checks and
token counts that the other metrics modules share."""

import inspect
from numbers import Number
from typing import NamedTuple

import numpy as np
from sklearn import metrics as _skm

from .._features.validation import check_sequence_weight, check_sequences


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------


def check_aligned_sequences(y_true, y_pred):
    """``y_true`` and ``y_pred`` as lists of lists, checked to be lists of
    sequences (the rule of ``CRFTagger.fit``'s X and y,
    :func:`~sklearn_crf._features.validation.check_sequences`; no sequence at
    all is allowed) of equal lengths."""
    check_sequences(y_true, "y_true", allow_empty=True)
    check_sequences(y_pred, "y_pred", allow_empty=True)
    y_true, y_pred = [list(seq) for seq in y_true], [list(seq) for seq in y_pred]
    if len(y_true) != len(y_pred):
        raise ValueError(
            "y_true and y_pred have different numbers of sequences: "
            f"{len(y_true)} and {len(y_pred)}"
        )
    for index, (seq_true, seq_pred) in enumerate(zip(y_true, y_pred)):
        if len(seq_true) != len(seq_pred):
            raise ValueError(
                f"sequence {index} has {len(seq_true)} labels in y_true but "
                f"{len(seq_pred)} in y_pred"
            )
    return y_true, y_pred


def _has_partial_gold(y_true):
    """Whether a gold label of ``y_true`` is None or a set (C loops)."""
    kinds = set(map(type, (label for seq in y_true for label in seq)))
    return bool(kinds & {type(None), set, frozenset})


def is_unknown(label):
    """Whether a gold label is unknown: None, or a set of several labels (the
    partial labels of training data). A set of one label is that label."""
    return label is None or (isinstance(label, (set, frozenset)) and len(label) != 1)


def known_label(label):
    """A known gold label: the label, or the member of a set of one label."""
    return next(iter(label)) if isinstance(label, (set, frozenset)) else label


def known_gold(y_true, y_pred):
    """Aligned ``y_true`` and ``y_pred`` without the tokens whose gold label is
    unknown (:func:`is_unknown`), sets of one label replaced by that label:
    what the token-level metrics score. The lists themselves when no gold
    label is None or a set."""
    if not _has_partial_gold(y_true):
        return y_true, y_pred
    true_out, pred_out = [], []
    for seq_true, seq_pred in zip(y_true, y_pred):
        keep = [t for t, label in enumerate(seq_true) if not is_unknown(label)]
        true_out.append([known_label(seq_true[t]) for t in keep])
        pred_out.append([seq_pred[t] for t in keep])
    return true_out, pred_out


def _is_scalar_label(label):
    return isinstance(label, (str, bytes, Number, np.generic))


def _flat_labels(flat_true, flat_pred):
    """Labels as scikit-learn metrics read them. Non-scalar labels such as tuples
    would read as a 2-D target: they are replaced by int codes (one code per
    distinct label, shared by y_true and y_pred)."""
    if all(map(_is_scalar_label, flat_true)) and all(map(_is_scalar_label, flat_pred)):
        return flat_true, flat_pred
    codes = {}
    encode = [codes.setdefault(label, len(codes)) for label in flat_true + flat_pred]
    return encode[: len(flat_true)], encode[len(flat_true) :]


def flatten(y_true, y_pred, sample_weight):
    """Flatten aligned sequences; repeat each sequence weight for its tokens.
    Tokens whose gold label is unknown are left out (:func:`known_gold`)."""
    y_true, y_pred = known_gold(*check_aligned_sequences(y_true, y_pred))
    sample_weight = check_sequence_weight(sample_weight, len(y_true))
    flat_true, flat_pred = _flat_labels(
        [label for seq in y_true for label in seq],
        [label for seq in y_pred for label in seq],
    )
    if sample_weight is not None:
        sample_weight = np.repeat(sample_weight, [len(seq) for seq in y_true])
    return flat_true, flat_pred, sample_weight


# ---------------------------------------------------------------------------
# Token-level metrics
# ---------------------------------------------------------------------------

_FLAT_DOC = """Token-level {what}.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.{sk_name}`{note}

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.
{params}
    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of :func:`sklearn.metrics.{sk_name}`{kwargs}.

    Returns
    -------
    {returns}

    Examples
    --------
    >>> from sklearn_crf.metrics import {name}
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    {example}
    """

_AVERAGE_NOTE = """ with all keyword arguments. As in
    scikit-learn, ``average`` defaults to ``"binary"``, so pass e.g.
    ``average="weighted"`` (and usually ``labels`` without ``"O"``) for
    multiclass tags."""

_PRF_KWARGS = "\n        (``labels``, ``average``, ``zero_division``, ...)"

_NO_O = 'labels=["B-PER", "I-PER", "B-LOC"]'


def flat_docstring(name, sk_metric, **doc):
    """The docstring of the token-level function ``name`` over ``sk_metric``:
    ``doc`` fills the parts of the template (``what``, ``returns``,
    ``example``; ``note``, ``params`` and ``kwargs`` optional)."""
    return _FLAT_DOC.format(
        name=name, sk_name=sk_metric.__name__, **{"note": ".", "params": "", **doc}
    )


def _flat_metric(sk_metric, name, *, positional=(), **doc):
    """A token-level metric: ``sk_metric`` applied to the concatenated sequences.

    ``positional`` lists ``(name, default)`` for the keyword arguments of
    ``sk_metric`` that sklearn-crfsuite also accepts by position (``beta``,
    ``labels``); ``inspect.Parameter.empty`` marks a required one.
    """
    P = inspect.Parameter
    signature = inspect.Signature(
        [
            P("y_true", P.POSITIONAL_OR_KEYWORD),
            P("y_pred", P.POSITIONAL_OR_KEYWORD),
            *(P(arg, P.POSITIONAL_OR_KEYWORD, default=d) for arg, d in positional),
            P("sample_weight", P.KEYWORD_ONLY, default=None),
            P("kwargs", P.VAR_KEYWORD),
        ]
    )

    def metric(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        options = arguments.pop("kwargs", {})
        flat_true, flat_pred, weights = flatten(
            arguments.pop("y_true"),
            arguments.pop("y_pred"),
            arguments.pop("sample_weight", None),
        )
        return sk_metric(
            flat_true, flat_pred, sample_weight=weights, **arguments, **options
        )

    metric.__name__ = metric.__qualname__ = name
    metric.__signature__ = signature
    metric.__doc__ = flat_docstring(name, sk_metric, **doc)
    return metric


flat_accuracy_score = _flat_metric(
    _skm.accuracy_score,
    "flat_accuracy_score",
    what="accuracy: the fraction of tokens labeled correctly",
    kwargs=",\n        e.g. ``normalize``",
    returns="""score : float
        Token accuracy (or the number of correct tokens if
        ``normalize=False``).""",
    example=""">>> flat_accuracy_score(y_true, y_pred)
    0.8""",
)

flat_precision_score = _flat_metric(
    _skm.precision_score,
    "flat_precision_score",
    what="precision",
    note=_AVERAGE_NOTE,
    kwargs=_PRF_KWARGS,
    returns="""precision : float or ndarray of shape (n_labels,)
        Token precision, per label if ``average=None``.""",
    example=f""">>> flat_precision_score(y_true, y_pred, average="micro",
    ...                      {_NO_O})
    1.0""",
)

flat_recall_score = _flat_metric(
    _skm.recall_score,
    "flat_recall_score",
    what="recall",
    note=_AVERAGE_NOTE,
    kwargs=_PRF_KWARGS,
    returns="""recall : float or ndarray of shape (n_labels,)
        Token recall, per label if ``average=None``.""",
    example=f""">>> round(flat_recall_score(y_true, y_pred, average="micro",
    ...                         {_NO_O}), 3)
    0.667""",
)

flat_f1_score = _flat_metric(
    _skm.f1_score,
    "flat_f1_score",
    what="F1 score",
    note=_AVERAGE_NOTE,
    kwargs=_PRF_KWARGS,
    returns="""f1 : float or ndarray of shape (n_labels,)
        Token F1 score, per label if ``average=None``.""",
    example=f""">>> flat_f1_score(y_true, y_pred, average="micro",
    ...               {_NO_O})
    0.8""",
)

flat_fbeta_score = _flat_metric(
    _skm.fbeta_score,
    "flat_fbeta_score",
    positional=[("beta", inspect.Parameter.empty)],
    what="F-beta score",
    note=_AVERAGE_NOTE,
    params="""
    beta : float
        Weight of recall relative to precision.
""",
    kwargs=_PRF_KWARGS,
    returns="""fbeta : float or ndarray of shape (n_labels,)
        Token F-beta score, per label if ``average=None``.""",
    example=f""">>> round(flat_fbeta_score(y_true, y_pred, beta=2, average="micro",
    ...                        {_NO_O}), 3)
    0.714""",
)


# ---------------------------------------------------------------------------
# Sequence-level metric
# ---------------------------------------------------------------------------


def sequence_accuracy_score(y_true, y_pred, *, sample_weight=None):
    """Fraction of sequences whose labels are all predicted correctly.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    sample_weight : array-like of shape (n_sequences,), default=None
        Sequence weights.

    Returns
    -------
    score : float
        The (weighted) fraction of exactly matched sequences; 0.0 when there
        is no sequence (as in sklearn-crfsuite) or the weights sum to 0.

    Examples
    --------
    >>> from sklearn_crf.metrics import sequence_accuracy_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> sequence_accuracy_score(y_true, y_pred)
    0.5
    >>> sequence_accuracy_score([], [])
    0.0
    """
    y_true, y_pred = known_gold(*check_aligned_sequences(y_true, y_pred))
    weights = check_sequence_weight(sample_weight, len(y_true))
    total = len(y_true) if weights is None else weights.sum()
    if total == 0:
        return 0.0
    correct = np.array([t == p for t, p in zip(y_true, y_pred)], dtype=np.float64)
    return float(np.average(correct, weights=weights))


# ---------------------------------------------------------------------------
# Token counts
# ---------------------------------------------------------------------------


class TokenCounts(NamedTuple):
    """Per-label token counts of aligned label sequences.

    Attributes
    ----------
    labels : list
        The labels counted; label ``k`` has the counts at index ``k``.
    match : ndarray of int64, shape (n_labels,)
        Tokens that have the label in ``y_true`` and in ``y_pred``.
    model : ndarray of int64, shape (n_labels,)
        Tokens that have the label in ``y_pred``.
    ref : ndarray of int64, shape (n_labels,)
        Tokens that have the label in ``y_true``.
    n_sequences : int
        Number of sequences.
    n_correct_sequences : int
        Sequences whose labels are all predicted correctly.
    """

    labels: list
    match: np.ndarray
    model: np.ndarray
    ref: np.ndarray
    n_sequences: int
    n_correct_sequences: int


def token_counts(y_true, y_pred, labels=()):
    """:class:`TokenCounts` of ``y_true`` and ``y_pred`` (checked to be aligned).

    The labels are ``labels`` in order, then those of ``y_true`` and then of
    ``y_pred`` that are not among them, in order of first appearance.
    Tokens whose gold label is unknown are left out (:func:`known_gold`).
    """
    y_true, y_pred = known_gold(*check_aligned_sequences(y_true, y_pred))
    labels = list(labels)
    index = {label: i for i, label in enumerate(labels)}
    codes = []
    for y in (y_true, y_pred):
        flat = [label for seq in y for label in seq]
        for label in flat:
            if label not in index:
                index[label] = len(labels)
                labels.append(label)
        codes.append(np.array([index[label] for label in flat], dtype=np.int64))
    true_codes, pred_codes = codes
    right = true_codes == pred_codes
    n = len(labels)
    return TokenCounts(
        labels,
        np.bincount(true_codes[right], minlength=n).astype(np.int64),
        np.bincount(pred_codes, minlength=n).astype(np.int64),
        np.bincount(true_codes, minlength=n).astype(np.int64),
        len(y_true),
        sum(seq_true == seq_pred for seq_true, seq_pred in zip(y_true, y_pred)),
    )
