"""Metrics and scorers for sequence labeling.

All functions take ``y_true`` and ``y_pred`` as lists of label sequences, one
list of labels per sequence (sequences may have different lengths), e.g. what
a sequence tagger's ``predict`` returns.

Three families of metrics are provided:

- token-level metrics (``flat_*``), which flatten the sequences and delegate
  to the corresponding :mod:`sklearn.metrics` function;
- :func:`sequence_accuracy_score`, the fraction of sequences predicted
  without any error;
- entity-level metrics (``entity_*``), which extract labeled spans (chunks)
  from IOB-style tags and compare them exactly. With the default
  ``mode=None`` they give the same numbers as ``seqeval`` and the CoNLL
  ``conlleval`` script; ``mode="strict"`` with a ``scheme`` gives the same
  numbers as ``seqeval``'s strict mode.

Scorers usable as ``scoring`` in :func:`~sklearn.model_selection.cross_validate`
and :class:`~sklearn.model_selection.GridSearchCV` are available as module
attributes and through :func:`get_scorer`: ``entity_f1_scorer``,
``entity_precision_scorer``, ``entity_recall_scorer`` (micro averages),
``flat_f1_scorer`` (token F1 over all labels but ``"O"``, weighted by support),
``flat_accuracy_scorer`` and ``sequence_accuracy_scorer``. Scikit-learn's own
scorer names such as ``"f1"`` or ``"accuracy"`` cannot handle lists of label
sequences.

``sample_weight``, wherever accepted, holds one weight per sequence.
"""

import copy
import numbers
import warnings

from numbers import Number

import numpy as np
from sklearn import metrics as _skm
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import make_scorer

__all__ = [
    "entity_classification_report",
    "entity_f1_score",
    "entity_f1_scorer",
    "entity_fbeta_score",
    "entity_precision_recall_fscore_support",
    "entity_precision_score",
    "entity_precision_scorer",
    "entity_recall_score",
    "entity_recall_scorer",
    "flat_accuracy_score",
    "flat_accuracy_scorer",
    "flat_classification_report",
    "flat_f1_score",
    "flat_f1_scorer",
    "flat_fbeta_score",
    "flat_precision_score",
    "flat_recall_score",
    "get_entities",
    "get_scorer",
    "get_scorer_names",
    "sequence_accuracy_score",
    "sequence_accuracy_scorer",
]


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------


def _check_label_sequences(y, name):
    """Return ``y`` as a list of lists, checking it is a list of sequences."""
    if isinstance(y, (str, bytes)) or not hasattr(y, "__iter__"):
        raise TypeError(
            f"{name} must be a list of label sequences (one list of labels per "
            f"sequence), got {type(y).__name__}."
        )
    sequences = []
    for index, seq in enumerate(y):
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__iter__"):
            raise TypeError(
                f"{name} must be a list of label sequences (one list of labels per "
                f"sequence), but {name}[{index}] is {seq!r} of type "
                f"{type(seq).__name__}. Wrap a single sequence in a list, e.g. "
                "[['B-PER', 'O']]."
            )
        sequences.append(list(seq))
    return sequences


def _check_sequences(y_true, y_pred):
    """Check that ``y_true`` and ``y_pred`` are aligned lists of sequences."""
    y_true = _check_label_sequences(y_true, "y_true")
    y_pred = _check_label_sequences(y_pred, "y_pred")
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"y_true and y_pred must contain the same number of sequences, got "
            f"{len(y_true)} sequences in y_true and {len(y_pred)} in y_pred."
        )
    for index, (seq_true, seq_pred) in enumerate(zip(y_true, y_pred)):
        if len(seq_true) != len(seq_pred):
            raise ValueError(
                f"Sequence {index} has {len(seq_true)} labels in y_true but "
                f"{len(seq_pred)} labels in y_pred; each predicted sequence must "
                "have the same length as the true one."
            )
    return y_true, y_pred


def _check_sequence_weight(sample_weight, n_sequences):
    """Validate per-sequence weights; return None or a float array."""
    if sample_weight is None:
        return None
    sample_weight = np.asarray(sample_weight, dtype=np.float64)
    if sample_weight.shape != (n_sequences,):
        raise ValueError(
            "sample_weight must contain one weight per sequence, i.e. have shape "
            f"({n_sequences},), got shape {sample_weight.shape}."
        )
    if not np.all(np.isfinite(sample_weight)):
        raise ValueError("sample_weight must contain only finite values.")
    return sample_weight


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


def _flatten(y_true, y_pred, sample_weight):
    """Flatten aligned sequences; repeat each sequence weight for its tokens."""
    y_true, y_pred = _check_sequences(y_true, y_pred)
    sample_weight = _check_sequence_weight(sample_weight, len(y_true))
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


def flat_accuracy_score(y_true, y_pred, *, sample_weight=None, **kwargs):
    """Token-level accuracy: the fraction of tokens labeled correctly.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.accuracy_score`.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of :func:`sklearn.metrics.accuracy_score`,
        e.g. ``normalize``.

    Returns
    -------
    score : float
        Token accuracy (or the number of correct tokens if
        ``normalize=False``).

    Examples
    --------
    >>> from sklearn_crf.metrics import flat_accuracy_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> flat_accuracy_score(y_true, y_pred)
    0.8
    """
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
    return _skm.accuracy_score(
        flat_true, flat_pred, sample_weight=sample_weight, **kwargs
    )


def flat_precision_score(y_true, y_pred, *, sample_weight=None, **kwargs):
    """Token-level precision.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.precision_score` with all keyword arguments. As in
    scikit-learn, ``average`` defaults to ``"binary"``, so pass e.g.
    ``average="weighted"`` (and usually ``labels`` without ``"O"``) for
    multiclass tags.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of :func:`sklearn.metrics.precision_score`
        (``labels``, ``average``, ``zero_division``, ...).

    Returns
    -------
    precision : float or ndarray of shape (n_labels,)
        Token precision, per label if ``average=None``.

    Examples
    --------
    >>> from sklearn_crf.metrics import flat_precision_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> flat_precision_score(y_true, y_pred, average="micro",
    ...                      labels=["B-PER", "I-PER", "B-LOC"])
    1.0
    """
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
    return _skm.precision_score(
        flat_true, flat_pred, sample_weight=sample_weight, **kwargs
    )


def flat_recall_score(y_true, y_pred, *, sample_weight=None, **kwargs):
    """Token-level recall.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.recall_score` with all keyword arguments. As in
    scikit-learn, ``average`` defaults to ``"binary"``, so pass e.g.
    ``average="weighted"`` (and usually ``labels`` without ``"O"``) for
    multiclass tags.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of :func:`sklearn.metrics.recall_score`
        (``labels``, ``average``, ``zero_division``, ...).

    Returns
    -------
    recall : float or ndarray of shape (n_labels,)
        Token recall, per label if ``average=None``.

    Examples
    --------
    >>> from sklearn_crf.metrics import flat_recall_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> round(flat_recall_score(y_true, y_pred, average="micro",
    ...                         labels=["B-PER", "I-PER", "B-LOC"]), 3)
    0.667
    """
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
    return _skm.recall_score(
        flat_true, flat_pred, sample_weight=sample_weight, **kwargs
    )


def flat_f1_score(y_true, y_pred, *, sample_weight=None, **kwargs):
    """Token-level F1 score.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.f1_score` with all keyword arguments. As in
    scikit-learn, ``average`` defaults to ``"binary"``, so pass e.g.
    ``average="weighted"`` (and usually ``labels`` without ``"O"``) for
    multiclass tags.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of :func:`sklearn.metrics.f1_score`
        (``labels``, ``average``, ``zero_division``, ...).

    Returns
    -------
    f1 : float or ndarray of shape (n_labels,)
        Token F1 score, per label if ``average=None``.

    Examples
    --------
    >>> from sklearn_crf.metrics import flat_f1_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> flat_f1_score(y_true, y_pred, average="micro",
    ...               labels=["B-PER", "I-PER", "B-LOC"])
    0.8
    """
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
    return _skm.f1_score(flat_true, flat_pred, sample_weight=sample_weight, **kwargs)


def flat_fbeta_score(y_true, y_pred, *, beta, sample_weight=None, **kwargs):
    """Token-level F-beta score.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.fbeta_score` with all keyword arguments. As in
    scikit-learn, ``average`` defaults to ``"binary"``, so pass e.g.
    ``average="weighted"`` (and usually ``labels`` without ``"O"``) for
    multiclass tags.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    beta : float
        Weight of recall relative to precision.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of :func:`sklearn.metrics.fbeta_score`
        (``labels``, ``average``, ``zero_division``, ...).

    Returns
    -------
    fbeta : float or ndarray of shape (n_labels,)
        Token F-beta score, per label if ``average=None``.

    Examples
    --------
    >>> from sklearn_crf.metrics import flat_fbeta_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> round(flat_fbeta_score(y_true, y_pred, beta=2, average="micro",
    ...                        labels=["B-PER", "I-PER", "B-LOC"]), 3)
    0.714
    """
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
    return _skm.fbeta_score(
        flat_true, flat_pred, beta=beta, sample_weight=sample_weight, **kwargs
    )


def flat_classification_report(y_true, y_pred, *, sample_weight=None, **kwargs):
    """Token-level classification report.

    The sequences are concatenated and passed to
    :func:`sklearn.metrics.classification_report` with all keyword arguments.

    Parameters
    ----------
    y_true : list of list of labels
        True label sequences.

    y_pred : list of list of labels
        Predicted label sequences, with the same lengths as ``y_true``.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence, applied to each token of the sequence.

    **kwargs : dict
        Other keyword arguments of
        :func:`sklearn.metrics.classification_report` (``labels``, ``digits``,
        ``output_dict``, ``zero_division``, ...).

    Returns
    -------
    report : str or dict
        Text summary of the precision, recall and F1 score of each label, or
        a dict if ``output_dict=True``.

    Examples
    --------
    >>> from sklearn_crf.metrics import flat_classification_report
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> report = flat_classification_report(y_true, y_pred, output_dict=True,
    ...                                     zero_division=0)
    >>> report["I-PER"]["recall"]
    0.0
    """
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
    return _skm.classification_report(
        flat_true, flat_pred, sample_weight=sample_weight, **kwargs
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
        The (weighted) fraction of exactly matched sequences.

    Examples
    --------
    >>> from sklearn_crf.metrics import sequence_accuracy_score
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> sequence_accuracy_score(y_true, y_pred)
    0.5
    """
    y_true, y_pred = _check_sequences(y_true, y_pred)
    if not y_true:
        raise ValueError("sequence_accuracy_score needs at least one sequence, got 0.")
    sample_weight = _check_sequence_weight(sample_weight, len(y_true))
    correct = np.array([t == p for t, p in zip(y_true, y_pred)], dtype=np.float64)
    return float(np.average(correct, weights=sample_weight))


# ---------------------------------------------------------------------------
# Entity extraction
# ---------------------------------------------------------------------------

# Strict-mode chunking rules, transcribed from seqeval.scheme. A pattern
# (previous prefixes, current prefixes, condition) matches two consecutive
# tokens when their prefixes are among the given ones and their entity types
# satisfy the condition: "any", "same" or "diff" (different). Expanded into
# {(previous prefix, current prefix): condition}.
_ANY_PREFIX = "BIOESLU"


def _patterns(*specs):
    table = {}
    for previous, current, condition in specs:
        for p in previous:
            for c in current:
                old = table.get((p, c))
                table[p, c] = condition if old in (None, condition) else "any"
    return table


# scheme: (allowed prefixes, start patterns, inside patterns, end patterns)
_SCHEMES = {
    "IOB1": (
        "IOB",
        _patterns(("OB", "I", "any"), ("I", "I", "diff"), ("IB", "B", "same")),
        _patterns(("BI", "I", "same")),
        _patterns(
            ("BI", "O", "any"),
            ("I", "B", "any"),
            ("BI", "I", "diff"),
            ("B", "B", "same"),
        ),
    ),
    "IOE1": (
        "IOE",
        _patterns(("OE", "I", "any"), ("I", "I", "diff"), ("E", "E", "same")),
        _patterns(("I", "IE", "same")),
        _patterns(("I", "IE", "diff"), ("I", "O", "any"), ("E", "IE", "same")),
    ),
    "IOB2": (
        "IOB",
        _patterns((_ANY_PREFIX, "B", "any")),
        _patterns(("BI", "I", "same")),
        _patterns(("BI", "OB", "any"), ("BI", "I", "diff")),
    ),
    "IOE2": (
        "IOE",
        _patterns(("OE", "IE", "any"), ("I", "IE", "diff")),
        _patterns(("I", "IE", "same")),
        _patterns(("E", _ANY_PREFIX, "any")),
    ),
    "IOBES": (
        "IOBES",
        _patterns((_ANY_PREFIX, "BS", "any")),
        _patterns(("BI", "IE", "same")),
        _patterns(("SE", _ANY_PREFIX, "any")),
    ),
    "BILOU": (
        "BILOU",
        _patterns((_ANY_PREFIX, "BU", "any")),
        _patterns(("BI", "IL", "same")),
        _patterns(("UL", _ANY_PREFIX, "any")),
    ),
}


def _check_label(label, seq_index, token_index):
    if not isinstance(label, str) or not label:
        error = ValueError if isinstance(label, str) else TypeError
        raise error(
            "Entity-level metrics need non-empty string labels such as 'B-PER' or "
            f"'O', got {label!r} at sequence {seq_index}, token {token_index}."
        )


def _lenient_entities(seq, suffix, seq_index=0):
    """Chunks of one sequence with the conlleval (seqeval default) rules."""
    entities = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, label in enumerate(seq + ["O"]):
        _check_label(label, seq_index, i)
        if suffix:
            tag, type_ = label[-1], label[:-1].rsplit("-", 1)[0] or "_"
        else:
            tag, type_ = label[0], label[1:].split("-", 1)[-1] or "_"
        # A chunk ends after an E or S tag, before B, S or O, or on a change of
        # type; it starts at B or S, at I or E not continuing a chunk, or on a
        # change of type. Tags "O" and "." never carry a chunk.
        if (
            prev_tag in "ES"
            or (prev_tag in "BI" and tag in "BSO")
            or (prev_tag not in "O." and prev_type != type_)
        ):
            entities.append((prev_type, begin, i))
        if (
            tag in "BS"
            or (prev_tag in "ESO" and tag in "EI")
            or (tag not in "O." and prev_type != type_)
        ):
            begin = i
        prev_tag, prev_type = tag, type_
    return entities


def _matches(patterns, prev, token):
    condition = patterns.get((prev[0], token[0]))
    return condition is not None and (
        condition == "any" or (condition == "same") == (prev[1] == token[1])
    )


def _strict_entities(seq, scheme, suffix, seq_index=0):
    """Chunks of one sequence that are well formed in ``scheme`` (seqeval strict)."""
    allowed, start, inside, end = _SCHEMES[scheme]
    tokens = []
    for i, label in enumerate(seq):
        _check_label(label, seq_index, i)
        prefix, type_ = (label[-1], label[:-1]) if suffix else (label[0], label[1:])
        if prefix not in allowed:
            raise ValueError(
                f"Invalid label {label!r} for scheme {scheme!r} at sequence "
                f"{seq_index}, token {i}: the {'suffix' if suffix else 'prefix'} "
                f"must be one of {', '.join(allowed)}."
            )
        tokens.append((prefix, type_.strip("-") or "_"))
    tokens.append(("O", "_"))

    entities = []
    i, prev = 0, ("O", "_")
    while i < len(tokens):
        token = tokens[i]
        if _matches(start, prev, token):
            # Extend the chunk over inside tokens; keep it only if it is
            # properly closed. The final "O" sentinel is never inside.
            j = i + 1
            while _matches(inside, tokens[j - 1], tokens[j]):
                j += 1
            if _matches(end, tokens[j - 1], tokens[j]):
                entities.append((token[1], i, j))
            i = j
        else:
            i += 1
        prev = tokens[i - 1]
    return entities


def _check_mode_scheme(mode, scheme):
    """Validate ``mode`` and ``scheme``; return the canonical scheme name."""
    if mode not in (None, "strict"):
        raise ValueError(f"mode must be None or 'strict', got {mode!r}.")
    valid = sorted(_SCHEMES)
    if mode is None:
        if scheme is not None:
            raise ValueError(
                f"scheme={scheme!r} is only used with mode='strict'; pass "
                "mode='strict' for strict entity matching, or scheme=None for the "
                "default (conlleval-compatible) matching."
            )
        return None
    if scheme is None:
        raise ValueError(f"mode='strict' requires a scheme, one of {valid}.")
    if not isinstance(scheme, str) or scheme.upper() not in _SCHEMES:
        raise ValueError(f"scheme must be one of {valid}, got {scheme!r}.")
    return scheme.upper()


def _extractor(mode, scheme, suffix):
    scheme = _check_mode_scheme(mode, scheme)
    if scheme is None:
        return lambda seq, index: _lenient_entities(seq, suffix, index)
    return lambda seq, index: _strict_entities(seq, scheme, suffix, index)


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

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
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
    ``mode="strict", scheme="BILOU"`` for BILOU tags.

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
        raise TypeError(f"seq must be a sequence of labels, got {type(seq).__name__}.")
    return _extractor(mode, scheme, suffix)(list(seq), 0)


# ---------------------------------------------------------------------------
# Entity-level metrics
# ---------------------------------------------------------------------------


def _entity_counts(y_true, y_pred, mode, scheme, suffix, sample_weight):
    """Per-type counts of correct, predicted and true entities.

    Returns
    -------
    types : list of str
        Sorted entity types found in ``y_true`` or ``y_pred``.
    tp_sum, pred_sum, true_sum : ndarray of shape (n_types,)
        Numbers (or sums of sequence weights) of correctly predicted,
        predicted and true entities of each type.
    """
    extract = _extractor(mode, scheme, suffix)
    y_true, y_pred = _check_sequences(y_true, y_pred)
    sample_weight = _check_sequence_weight(sample_weight, len(y_true))

    true_entities, pred_entities = set(), set()
    for index, (seq_true, seq_pred) in enumerate(zip(y_true, y_pred)):
        true_entities.update((index, *e) for e in extract(seq_true, index))
        pred_entities.update((index, *e) for e in extract(seq_pred, index))

    types = sorted({e[1] for e in true_entities} | {e[1] for e in pred_entities})
    position = {type_: k for k, type_ in enumerate(types)}

    def count(entities):
        entities = list(entities)
        indices = np.array([position[e[1]] for e in entities], dtype=np.intp)
        if sample_weight is None:
            return np.bincount(indices, minlength=len(types))
        weights = sample_weight[[e[0] for e in entities]]
        return np.bincount(indices, weights=weights, minlength=len(types))

    tp_sum = count(true_entities & pred_entities)
    return types, tp_sum, count(pred_entities), count(true_entities)


def _check_zero_division(zero_division):
    if isinstance(zero_division, str) and zero_division == "warn":
        return 0.0
    if (
        isinstance(zero_division, numbers.Real)
        and not isinstance(zero_division, bool)
        and (zero_division in (0, 1) or np.isnan(zero_division))
    ):
        return float(zero_division)
    raise ValueError(
        f"zero_division must be 'warn', 0, 1 or np.nan, got {zero_division!r}."
    )


def _warn_undefined(metric, reason, n_results):
    where = "due to" if n_results == 1 else "in entity types with"
    warnings.warn(
        f"{metric} ill-defined and being set to 0.0 {where} no {reason} entities. "
        "Use `zero_division` parameter to control this behavior.",
        UndefinedMetricWarning,
        stacklevel=4,
    )


def _divide(numerator, denominator, zero_value, warning=None):
    """Element-wise division that replaces x / 0 with ``zero_value``.

    ``warning`` is None or a ``(metric, reason)`` pair for the warning to emit
    when a denominator is zero.
    """
    mask = denominator == 0
    result = numerator / np.where(mask, 1, denominator)
    if np.any(mask):
        result[mask] = zero_value
        if warning is not None:
            _warn_undefined(*warning, n_results=len(result))
    return result


def _average(values, weights):
    """Average ignoring NaN (as scikit-learn does with ``zero_division=np.nan``)."""
    mask = ~np.isnan(values)
    if not np.any(mask):
        return np.nan
    if weights is None or weights[mask].sum() == 0:
        return float(np.mean(values[mask]))
    return float(np.average(values[mask], weights=weights[mask]))


def _scores_from_counts(
    tp_sum, pred_sum, true_sum, average, beta, zero_division, warn_for
):
    """Precision, recall, F-beta and support from per-type entity counts."""
    zero_value = _check_zero_division(zero_division)
    warn = zero_division == "warn"

    if average == "micro":
        tp_sum, pred_sum, true_sum = (
            np.array([x.sum()]) for x in (tp_sum, pred_sum, true_sum)
        )

    def warning(metric, reason):
        return (
            (f"{metric[0].upper()}{metric[1:]} is", reason)
            if warn and metric in warn_for
            else None
        )

    precision = _divide(tp_sum, pred_sum, zero_value, warning("precision", "predicted"))
    recall = _divide(tp_sum, true_sum, zero_value, warning("recall", "true"))
    # F = (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp), the same value as the
    # harmonic mean of precision and recall but defined when one is undefined.
    beta2 = beta**2
    f_score = _divide(
        (1 + beta2) * tp_sum,
        beta2 * true_sum + pred_sum,
        zero_value,
        warning("f-score", "true nor predicted"),
    )

    if average is None:
        return precision, recall, f_score, true_sum
    support = true_sum.sum().item()
    if average == "micro":
        return precision.item(), recall.item(), f_score.item(), support
    if len(true_sum) == 0:
        if warn:
            _warn_undefined("Scores are", "true nor predicted", 1)
        return zero_value, zero_value, zero_value, support
    if average == "weighted":
        if true_sum.sum() == 0:
            undefined = zero_value if pred_sum.sum() == 0 else 0.0
            return undefined, zero_value, undefined, support
        weights = true_sum
    else:
        weights = None
    return (
        _average(precision, weights),
        _average(recall, weights),
        _average(f_score, weights),
        support,
    )


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
    order.

    With the default ``mode=None`` the results equal those of
    :func:`seqeval.metrics.precision_recall_fscore_support` (the conlleval
    convention); with ``mode="strict"`` and a ``scheme`` they equal those of
    seqeval's strict mode with the same scheme (see :func:`get_entities`).

    Parameters
    ----------
    y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    beta : float, default=1.0
        Weight of recall relative to precision in the F-score.

    average : {None, "micro", "macro", "weighted"}, default=None
        If None, the scores of each entity type are returned. Otherwise:

        - ``"micro"``: scores over the total numbers of correct, predicted
          and true entities;
        - ``"macro"``: unweighted mean of the per-type scores;
        - ``"weighted"``: mean of the per-type scores weighted by support.

    mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence: each entity counts with the weight of its
        sequence.

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value of a score whose denominator is zero (precision without
        predicted entities, recall without true entities, F-score without
        either). ``"warn"`` acts as 0 and emits an
        :class:`~sklearn.exceptions.UndefinedMetricWarning`.

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
    ``zero_division`` values (seqeval returns NaN). With
    ``average="weighted"`` and no true entity, the precision and F-score are 0
    if some entity is predicted, as in seqeval.

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
    if average not in (None, "micro", "macro", "weighted"):
        raise ValueError(
            "average must be one of None, 'micro', 'macro' or 'weighted', got "
            f"{average!r}."
        )
    if (
        not isinstance(beta, numbers.Real)
        or isinstance(beta, bool)
        or not np.isfinite(beta)
        or beta < 0
    ):
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}.")
    counts = _entity_counts(y_true, y_pred, mode, scheme, suffix, sample_weight)[1:]
    return _scores_from_counts(*counts, average, beta, zero_division, warn_for)


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
    :func:`entity_precision_recall_fscore_support` for the parameters.

    Parameters
    ----------
    y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    average : {"micro", "macro", "weighted", None}, default="micro"
        Averaging over entity types; None returns one score per type.

    mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence.

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
    p, _, _, _ = entity_precision_recall_fscore_support(
        y_true,
        y_pred,
        average=average,
        mode=mode,
        scheme=scheme,
        suffix=suffix,
        sample_weight=sample_weight,
        zero_division=zero_division,
        warn_for=("precision",),
    )
    return p


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
    :func:`entity_precision_recall_fscore_support` for the parameters.

    Parameters
    ----------
    y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    average : {"micro", "macro", "weighted", None}, default="micro"
        Averaging over entity types; None returns one score per type.

    mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence.

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
    _, r, _, _ = entity_precision_recall_fscore_support(
        y_true,
        y_pred,
        average=average,
        mode=mode,
        scheme=scheme,
        suffix=suffix,
        sample_weight=sample_weight,
        zero_division=zero_division,
        warn_for=("recall",),
    )
    return r


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

    See :func:`entity_precision_recall_fscore_support` for the parameters.

    Parameters
    ----------
    y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    beta : float
        Weight of recall relative to precision.

    average : {"micro", "macro", "weighted", None}, default="micro"
        Averaging over entity types; None returns one score per type.

    mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence.

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
    _, _, f, _ = entity_precision_recall_fscore_support(
        y_true,
        y_pred,
        beta=beta,
        average=average,
        mode=mode,
        scheme=scheme,
        suffix=suffix,
        sample_weight=sample_weight,
        zero_division=zero_division,
        warn_for=("f-score",),
    )
    return f


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
    :func:`entity_precision_recall_fscore_support` for the parameters.

    Parameters
    ----------
    y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    average : {"micro", "macro", "weighted", None}, default="micro"
        Averaging over entity types; None returns one score per type.

    mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence.

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
    return entity_fbeta_score(
        y_true,
        y_pred,
        beta=1.0,
        average=average,
        mode=mode,
        scheme=scheme,
        suffix=suffix,
        sample_weight=sample_weight,
        zero_division=zero_division,
    )


def entity_classification_report(
    y_true,
    y_pred,
    *,
    digits=2,
    output_dict=False,
    mode=None,
    scheme=None,
    suffix=False,
    sample_weight=None,
    zero_division="warn",
):
    """Entity-level precision, recall, F1 score and support per entity type.

    The text report has the same layout as seqeval's
    :func:`~seqeval.metrics.classification_report`: one row per entity type,
    then the micro, macro and weighted averages.

    Parameters
    ----------
    y_true : list of list of str
        True label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    digits : int, default=2
        Number of digits of the scores in the text report.

    output_dict : bool, default=False
        If True, return a dict ``{row: {"precision": ..., "recall": ...,
        "f1-score": ..., "support": ...}}`` with rows the entity types,
        ``"micro avg"``, ``"macro avg"`` and ``"weighted avg"``.

    mode : {None, "strict"}, default=None
        Entity extraction mode, see :func:`get_entities`.

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.

    sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence.

    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        Value of ill-defined scores, see
        :func:`entity_precision_recall_fscore_support`.

    Returns
    -------
    report : str or dict
        The text report, or a dict if ``output_dict`` is True.

    Examples
    --------
    >>> from sklearn_crf.metrics import entity_classification_report
    >>> y_true = [["O", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> print(entity_classification_report(y_true, y_pred))
                  precision    recall  f1-score   support
    <BLANKLINE>
            MISC       0.00      0.00      0.00         1
             PER       1.00      1.00      1.00         1
    <BLANKLINE>
       micro avg       0.50      0.50      0.50         2
       macro avg       0.50      0.50      0.50         2
    weighted avg       0.50      0.50      0.50         2
    <BLANKLINE>
    >>> entity_classification_report(y_true, y_pred, output_dict=True)["PER"]
    {'precision': 1.0, 'recall': 1.0, 'f1-score': 1.0, 'support': 1}
    """
    types, *counts = _entity_counts(y_true, y_pred, mode, scheme, suffix, sample_weight)
    warn_for = ("precision", "recall", "f-score")
    scores = _scores_from_counts(*counts, None, 1.0, zero_division, warn_for)
    rows = [
        (type_, p.item(), r.item(), f.item(), s.item())
        for type_, p, r, f, s in zip(types, *scores)
    ]
    averages = [
        (
            f"{average} avg",
            *_scores_from_counts(*counts, average, 1.0, zero_division, warn_for),
        )
        for average in ("micro", "macro", "weighted")
    ]

    if output_dict:
        keys = ("precision", "recall", "f1-score", "support")
        return {row[0]: dict(zip(keys, row[1:])) for row in rows + averages}

    width = max([len(row[0]) for row in rows + averages] + [digits])
    header = f"{'':>{width}s} " + "".join(
        f" {name:>9}" for name in ("precision", "recall", "f1-score", "support")
    )

    def line(name, precision, recall, f_score, support):
        scores = "".join(f" {v:>9.{digits}f}" for v in (precision, recall, f_score))
        return f"{name:>{width}s} {scores} {support:>9}"

    lines = (
        [line(*row) for row in rows] + [""] + [line(*row) for row in averages] + [""]
    )
    return header + "\n\n" + "\n".join(lines)


# ---------------------------------------------------------------------------
# Scorers
# ---------------------------------------------------------------------------


def _flat_f1_without_outside(y_true, y_pred, *, sample_weight=None):
    """Token F1 averaged over all labels but "O", weighted by support."""
    flat_true, flat_pred, sample_weight = _flatten(y_true, y_pred, sample_weight)
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
            f"are {get_scorer_names()}."
        )
    raise TypeError(
        f"scoring must be a scorer name or a callable, got {type(scoring).__name__}."
    )
