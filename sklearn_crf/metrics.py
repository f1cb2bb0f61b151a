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

The ``flat_*`` functions and :func:`sequence_accuracy_score` take the same
arguments as sklearn-crfsuite's and return the same values, with one
exception: when all sequences have the same length, sklearn-crfsuite's
``sequence_accuracy_score`` counts correct tokens instead of sequences.

Scorers usable as ``scoring`` in :func:`~sklearn.model_selection.cross_validate`
and :class:`~sklearn.model_selection.GridSearchCV` are available as module
attributes and through :func:`get_scorer`: ``entity_f1_scorer``,
``entity_precision_scorer``, ``entity_recall_scorer`` (micro averages),
``flat_f1_scorer`` (token F1 over all labels but ``"O"``, weighted by support),
``flat_accuracy_scorer`` and ``sequence_accuracy_scorer``. Scikit-learn's own
scorer names such as ``"f1"`` or ``"accuracy"`` cannot handle lists of label
sequences.

``sample_weight``, wherever accepted, holds one weight per sequence (finite
and non-negative, as for :meth:`CRFTagger.fit <sklearn_crf.CRFTagger.fit>`).
"""

import copy
import inspect
import numbers
import warnings
from numbers import Number

import numpy as np
from sklearn import metrics as _skm
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import make_scorer

from ._validation import check_sequence_weight

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
            f"{name} must be a list of label sequences, got a {type(y).__name__}"
        )
    sequences = []
    for index, seq in enumerate(y):
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__iter__"):
            raise TypeError(
                f"{name}[{index}] is a {type(seq).__name__} ({seq!r}); each sequence "
                "must be a list of labels: wrap a single sequence in a list, e.g. "
                "[['B-PER', 'O']]"
            )
        sequences.append(list(seq))
    return sequences


def _check_sequences(y_true, y_pred):
    """Check that ``y_true`` and ``y_pred`` are aligned lists of sequences."""
    y_true = _check_label_sequences(y_true, "y_true")
    y_pred = _check_label_sequences(y_pred, "y_pred")
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
        flat_true, flat_pred, weights = _flatten(
            arguments.pop("y_true"),
            arguments.pop("y_pred"),
            arguments.pop("sample_weight", None),
        )
        return sk_metric(
            flat_true, flat_pred, sample_weight=weights, **arguments, **options
        )

    metric.__name__ = metric.__qualname__ = name
    metric.__signature__ = signature
    metric.__doc__ = _FLAT_DOC.format(
        name=name, sk_name=sk_metric.__name__, **{"note": ".", "params": "", **doc}
    )
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

flat_classification_report = _flat_metric(
    _skm.classification_report,
    "flat_classification_report",
    positional=[("labels", None)],
    what="classification report",
    note=" with all keyword arguments.",
    params="""
    labels : array-like of shape (n_labels,), default=None
        The labels to report on (all labels seen if None).
""",
    kwargs="""
        (``digits``, ``output_dict``, ``zero_division``, ...)""",
    returns="""report : str or dict
        Text summary of the precision, recall and F1 score of each label, or
        a dict if ``output_dict=True``.""",
    example=""">>> report = flat_classification_report(y_true, y_pred, output_dict=True,
    ...                                     zero_division=0)
    >>> report["I-PER"]["recall"]
    0.0""",
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
    y_true, y_pred = _check_sequences(y_true, y_pred)
    weights = check_sequence_weight(sample_weight, len(y_true))
    total = len(y_true) if weights is None else weights.sum()
    if total == 0:
        return 0.0
    correct = np.array([t == p for t, p in zip(y_true, y_pred)], dtype=np.float64)
    return float(np.average(correct, weights=weights))


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


def _check_label(label, where):
    if not isinstance(label, str) or not label:
        error = ValueError if isinstance(label, str) else TypeError
        raise error(
            f"{where} is {label!r}; entity-level metrics need non-empty str labels "
            "such as 'B-PER' or 'O'"
        )


def _lenient_entities(seq, suffix, where="seq"):
    """Chunks of one sequence with the conlleval (seqeval default) rules.

    ``where`` names the sequence in error messages, e.g. ``"y_true[3]"``.
    """
    entities = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, label in enumerate(seq + ["O"]):
        _check_label(label, f"{where}[{i}]")
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


def _strict_entities(seq, scheme, suffix, where="seq"):
    """Chunks of one sequence that are well formed in ``scheme`` (seqeval strict)."""
    allowed, start, inside, end = _SCHEMES[scheme]
    tokens = []
    for i, label in enumerate(seq):
        _check_label(label, f"{where}[{i}]")
        prefix, type_ = (label[-1], label[:-1]) if suffix else (label[0], label[1:])
        if prefix not in allowed:
            raise ValueError(
                f"{where}[{i}] is {label!r}, not a label of scheme {scheme}: its "
                f"{'suffix' if suffix else 'prefix'} must be one of "
                f"{', '.join(allowed)}"
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
        raise ValueError(f"mode must be None or 'strict', got {mode!r}")
    valid = sorted(_SCHEMES)
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
    if not isinstance(scheme, str) or scheme.upper() not in _SCHEMES:
        raise ValueError(f"scheme must be one of {valid}, got {scheme!r}")
    return scheme.upper()


def _extractor(mode, scheme, suffix):
    scheme = _check_mode_scheme(mode, scheme)
    if scheme is None:
        return lambda seq, where: _lenient_entities(seq, suffix, where)
    return lambda seq, where: _strict_entities(seq, scheme, suffix, where)


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

    scheme : {"IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"}, default=None
        Tagging scheme for ``mode="strict"``.

    suffix : bool, default=False
        Whether the chunk tag is a suffix (``"PER-B"``) instead of a prefix.""",
    "sample_weight": """sample_weight : array-like of shape (n_sequences,), default=None
        One weight per sequence: each entity counts with the weight of its
        sequence.""",
}


def _entity_doc(function):
    """Fill the ``%(...)s`` parts of ``function``'s docstring from ``_ENTITY_DOC``."""
    if function.__doc__:  # None under python -OO
        function.__doc__ = function.__doc__ % _ENTITY_DOC
    return function


def _entity_targets(y_true, y_pred, mode, scheme, suffix, sample_weight):
    """The entities of ``y_true`` and ``y_pred`` as a multiclass target.

    Every entity found in ``y_true`` or ``y_pred`` is one sample. Its true class
    is the code of its type if it is a true entity, and ``len(types)`` ("no
    entity") otherwise; its predicted class likewise. Per type, scikit-learn's
    true positives, predicted and true counts are then the numbers of correct,
    predicted and true entities.

    Returns
    -------
    types : list of str
        Sorted entity types found in ``y_true`` or ``y_pred``; type ``k`` has
        code ``k``.
    true_class, pred_class : ndarray of shape (n_entities,)
        The true and predicted class of each entity.
    weights : ndarray of shape (n_entities,) or None
        The weight of each entity's sequence.
    """
    extract = _extractor(mode, scheme, suffix)
    y_true, y_pred = _check_sequences(y_true, y_pred)
    sample_weight = check_sequence_weight(sample_weight, len(y_true))

    true_entities, pred_entities = set(), set()
    for index, (seq_true, seq_pred) in enumerate(zip(y_true, y_pred)):
        true_entities.update((index, *e) for e in extract(seq_true, f"y_true[{index}]"))
        pred_entities.update((index, *e) for e in extract(seq_pred, f"y_pred[{index}]"))

    entities = sorted(true_entities | pred_entities)
    types = sorted({e[1] for e in entities})
    code = {type_: k for k, type_ in enumerate(types)}

    def classes(found):
        return np.array(
            [code[e[1]] if e in found else len(types) for e in entities], dtype=np.intp
        )

    weights = None if sample_weight is None else sample_weight[[e[0] for e in entities]]
    return types, classes(true_entities), classes(pred_entities), weights


def _check_entity_options(average, beta, zero_division):
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


def _entity_scores(targets, average, beta, zero_division, warn_for):
    """Precision, recall, F-beta and support from :func:`_entity_targets`.

    scikit-learn's :func:`~sklearn.metrics.precision_recall_fscore_support`
    computes the scores; the support is returned for averages too.
    """
    types, true_class, pred_class, weights = targets
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


@_entity_doc
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
    zero_division = _check_entity_options(average, beta, zero_division)
    targets = _entity_targets(y_true, y_pred, mode, scheme, suffix, sample_weight)
    return _entity_scores(targets, average, beta, zero_division, warn_for)


@_entity_doc
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
    return entity_precision_recall_fscore_support(
        y_true,
        y_pred,
        average=average,
        mode=mode,
        scheme=scheme,
        suffix=suffix,
        sample_weight=sample_weight,
        zero_division=zero_division,
        warn_for=("precision",),
    )[0]


@_entity_doc
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
    return entity_precision_recall_fscore_support(
        y_true,
        y_pred,
        average=average,
        mode=mode,
        scheme=scheme,
        suffix=suffix,
        sample_weight=sample_weight,
        zero_division=zero_division,
        warn_for=("recall",),
    )[1]


@_entity_doc
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
    return entity_precision_recall_fscore_support(
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
    )[2]


@_entity_doc
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


@_entity_doc
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
    %(y)s

    digits : int, default=2
        Number of digits of the scores in the text report.

    output_dict : bool, default=False
        If True, return a dict ``{row: {"precision": ..., "recall": ...,
        "f1-score": ..., "support": ...}}`` with rows the entity types,
        ``"micro avg"``, ``"macro avg"`` and ``"weighted avg"``.

    %(extraction)s

    %(sample_weight)s

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
    zero_division = _check_entity_options(None, 1.0, zero_division)
    targets = _entity_targets(y_true, y_pred, mode, scheme, suffix, sample_weight)
    warn_for = ("precision", "recall", "f-score")
    types = targets[0]
    scores = _entity_scores(targets, None, 1.0, zero_division, warn_for)
    rows = [
        (type_, p.item(), r.item(), f.item(), s.item())
        for type_, p, r, f, s in zip(types, *scores)
    ]
    averages = [
        (
            f"{average} avg",
            *_entity_scores(targets, average, 1.0, zero_division, warn_for),
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
            f"are {get_scorer_names()}"
        )
    raise TypeError(
        f"scoring must be a scorer name or a callable, got a {type(scoring).__name__}"
    )
