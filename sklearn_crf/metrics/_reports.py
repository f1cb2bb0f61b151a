"""Evaluation reports: classification reports, conlleval's and CRFsuite's.

One home for the text and dict reports of the package, all written over the
entity matches of :mod:`._entity` and the flattened tokens and token counts
of :mod:`._flat`:
token-level and entity-level classification reports (scikit-learn's and
seqeval's layout), conlleval's report (the CoNLL shared tasks' evaluation
script, what ``sklearn-crf eval`` prints) and CRFsuite's holdout report (what
``crfsuite learn -e`` prints for a development set, and
``CRF.training_log_`` holds).
"""

from fractions import Fraction
from typing import NamedTuple, Optional

import numpy as np
from sklearn import metrics as _skm

from ._entity import check_entity_options, entity_doc, entity_matches, entity_scores
from ._flat import flat_docstring, flatten, token_counts

#: the scores a report warns about when zero division makes them ill-defined
_WARN_FOR = ("precision", "recall", "f-score")


def flat_classification_report(
    y_true, y_pred, labels=None, *, sample_weight=None, **kwargs
):
    # docstring: flat_docstring below
    flat_true, flat_pred, weights = flatten(y_true, y_pred, sample_weight)
    return _skm.classification_report(
        flat_true, flat_pred, labels=labels, sample_weight=weights, **kwargs
    )


flat_classification_report.__doc__ = flat_docstring(
    "flat_classification_report",
    _skm.classification_report,
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


@entity_doc
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
    zero_division = check_entity_options(None, 1.0, zero_division)
    matches = entity_matches(y_true, y_pred, mode, scheme, suffix, sample_weight)
    types = matches.types
    scores = entity_scores(matches, None, 1.0, zero_division, _WARN_FOR)
    rows = [
        (type_, p.item(), r.item(), f.item(), s.item())
        for type_, p, r, f, s in zip(types, *scores)
    ]
    averages = [
        (
            f"{average} avg",
            *entity_scores(matches, average, 1.0, zero_division, _WARN_FOR),
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


def conlleval_report(y_true, y_pred, *, output_dict=False):
    """The report of conlleval, the CoNLL shared tasks' evaluation script.

    Entities are read with conlleval's rules (:func:`get_entities`' default
    mode); the scores are those of :func:`flat_accuracy_score` and of
    :func:`entity_precision_recall_fscore_support` with
    ``zero_division=0``.

    Parameters
    ----------
    y_true : list of list of str
        Gold label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    output_dict : bool, default=False
        If True, return the counts and scores as a dict instead of the text.

    Returns
    -------
    report : str or dict
        conlleval's text: its two summary lines and one line per entity type
        (precision, recall, FB1 and the number of predicted entities); or a
        dict with ``tokens``, ``phrases`` (gold entities), ``found``
        (predicted entities), ``correct``, ``accuracy`` (token accuracy),
        ``precision``, ``recall``, ``f1`` (micro-averaged over entities, as
        fractions), and ``types``: for each entity type its ``precision``,
        ``recall``, ``f1``, ``found`` and ``support`` (gold entities).

    Examples
    --------
    >>> from sklearn_crf.metrics import conlleval_report
    >>> y_true = [["B-PER", "I-PER", "O", "B-LOC"]]
    >>> y_pred = [["B-PER", "I-PER", "O", "O"]]
    >>> print(conlleval_report(y_true, y_pred), end="")
    processed 4 tokens with 2 phrases; found: 1 phrases; correct: 1.
    accuracy:  75.00%; precision: 100.00%; recall:  50.00%; FB1:  66.67
                  LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0
                  PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1
    >>> report = conlleval_report([["B-PER", "I-PER", "O"]], [["B-PER", "O", "O"]],
    ...                           output_dict=True)
    >>> report["phrases"], report["found"], report["correct"], report["accuracy"]
    (1, 1, 0, 0.6666666666666666)
    """
    tokens = token_counts(y_true, y_pred)
    matches = entity_matches(y_true, y_pred)
    n_types = len(matches.types)
    is_true = matches.true_class < n_types
    n_tokens = int(tokens.ref.sum())
    precision, recall, f1, _ = entity_scores(matches, "micro", 1.0, 0.0, _WARN_FOR)
    report = {
        "tokens": n_tokens,
        "phrases": int(is_true.sum()),
        "found": int((matches.pred_class < n_types).sum()),
        "correct": int((is_true & (matches.true_class == matches.pred_class)).sum()),
        "accuracy": int(tokens.match.sum()) / n_tokens if n_tokens else 0.0,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "types": {},
    }
    if n_types:
        per_type = entity_scores(matches, None, 1.0, 0.0, _WARN_FOR)
        found = np.bincount(matches.pred_class, minlength=n_types + 1)
        for k, type_ in enumerate(matches.types):
            report["types"][type_] = {
                "precision": float(per_type[0][k]),
                "recall": float(per_type[1][k]),
                "f1": float(per_type[2][k]),
                "found": int(found[k]),
                "support": int(per_type[3][k]),
            }
    return report if output_dict else _conlleval_text(report)


def _conlleval_text(report):
    """conlleval's text of the dict of :func:`conlleval_report`."""
    lines = [
        f"processed {report['tokens']} tokens with {report['phrases']} phrases; "
        f"found: {report['found']} phrases; correct: {report['correct']}."
    ]
    if report["tokens"]:
        lines.append(
            f"accuracy: {100 * report['accuracy']:6.2f}%; "
            f"precision: {100 * report['precision']:6.2f}%; "
            f"recall: {100 * report['recall']:6.2f}%; "
            f"FB1: {100 * report['f1']:6.2f}"
        )
    for type_, scores in report["types"].items():
        lines.append(
            f"{type_:>17}: precision: {100 * scores['precision']:6.2f}%; "
            f"recall: {100 * scores['recall']:6.2f}%; "
            f"FB1: {100 * scores['f1']:6.2f}  {scores['found']}"
        )
    return "\n".join(lines) + "\n"


class LabelScore(NamedTuple):
    """CRFsuite's evaluation of one label on a development set.

    The same fields as python-crfsuite's ``LabelScore``: ``match`` tokens
    predicted with the label that have it, ``model`` tokens predicted with it,
    ``ref`` tokens that have it; ``precision``, ``recall`` and ``f1`` are None
    when no token of the development set has the label (CRFsuite prints
    ``******`` for them).

    Examples
    --------
    >>> from sklearn_crf.metrics import LabelScore, crfsuite_holdout_report
    >>> report = crfsuite_holdout_report([["a", "b"]], [["a", "a"]], output_dict=True)
    >>> report["scores"]["a"]  # doctest: +NORMALIZE_WHITESPACE
    LabelScore(match=1, model=2, ref=1, precision=0.5, recall=1.0,
               f1=0.6666666666666666)
    """

    match: int
    model: int
    ref: int
    precision: Optional[float]
    recall: Optional[float]
    f1: Optional[float]


def crfsuite_holdout_report(y_true, y_pred, labels=None, *, output_dict=False):
    """CRFsuite's evaluation of predicted label sequences (its holdout report).

    What CRFsuite reports for a development set (``crfsuite learn -e``,
    sklearn-crfsuite's ``fit(X, y, X_dev, y_dev)``), with its definitions
    (``crfsuite_evaluation_finalize``): per label, token precision, recall
    and F1; their macro averages over all labels, a label absent from
    ``y_true`` counting 0; the fractions of tokens (item accuracy) and of
    sequences (instance accuracy) predicted correctly.

    Parameters
    ----------
    y_true : list of list of str
        Reference label sequences.

    y_pred : list of list of str
        Predicted label sequences, with the same lengths as ``y_true``.

    labels : list of str, default=None
        The model's labels, in CRFsuite's order. Labels of ``y_true``, then of
        ``y_pred``, that are not among them are added after them in order of
        first appearance, as CRFsuite adds the labels of its holdout data to
        its label set.

    output_dict : bool, default=False
        If True, return the scores as a dict instead of CRFsuite's text.

    Returns
    -------
    report : str or dict
        CRFsuite's text, or a dict: ``"scores"`` (label ->
        :class:`LabelScore`), ``"avg_precision"``, ``"avg_recall"``,
        ``"avg_f1"``, ``"item_accuracy"``, ``"item_accuracy_float"``,
        ``"instance_accuracy"``, ``"instance_accuracy_float"`` (the
        accuracies as :class:`~fractions.Fraction` and as float).

    Examples
    --------
    >>> from sklearn_crf.metrics import crfsuite_holdout_report
    >>> y_true = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    >>> y_pred = [["B-PER", "O", "O"], ["O", "B-LOC"]]
    >>> print(crfsuite_holdout_report(y_true, y_pred, ["B-PER", "I-PER", "O", "B-LOC",
    ...                                                "I-LOC"]), end="")
    Performance by label (#match, #model, #ref) (precision, recall, F1):
        B-PER: (1, 1, 1) (1.0000, 1.0000, 1.0000)
        I-PER: (0, 0, 1) (0.0000, 0.0000, 0.0000)
        O: (2, 3, 2) (0.6667, 1.0000, 0.8000)
        B-LOC: (1, 1, 1) (1.0000, 1.0000, 1.0000)
        I-LOC: (0, 0, 0) (******, ******, ******)
    Macro-average precision, recall, F1: (0.533333, 0.600000, 0.560000)
    Item accuracy: 4 / 5 (0.8000)
    Instance accuracy: 1 / 2 (0.5000)
    """
    tokens = token_counts(y_true, y_pred, () if labels is None else labels)
    scores = {}
    sums = np.zeros(3)
    for label, match, model, ref in zip(*tokens[:4]):
        if ref == 0:
            scores[label] = LabelScore(0, int(model), 0, None, None, None)
            continue
        precision = match / model if model > 0 else 0.0
        recall = match / ref
        total = precision + recall
        f1 = 2 * precision * recall / total if total > 0 else 0.0
        scores[label] = LabelScore(
            int(match), int(model), int(ref), float(precision), float(recall), float(f1)
        )
        sums += (precision, recall, f1)
    avg = sums / len(tokens.labels)
    n_items = int(tokens.ref.sum())
    item = Fraction(int(tokens.match.sum()), n_items) if n_items else Fraction(0)
    n = tokens.n_sequences
    instance = Fraction(tokens.n_correct_sequences, n) if n else Fraction(0)
    report = {
        "scores": scores,
        "avg_precision": float(avg[0]),
        "avg_recall": float(avg[1]),
        "avg_f1": float(avg[2]),
        "item_accuracy": item,
        "item_accuracy_float": float(item),
        "instance_accuracy": instance,
        "instance_accuracy_float": float(instance),
    }
    return report if output_dict else _crfsuite_text(report, tokens)


def _crfsuite_text(report, tokens):
    """CRFsuite's text (``crfsuite_evaluation_output``) of the dict of
    :func:`crfsuite_holdout_report` and its :class:`TokenCounts` ``tokens``."""
    lines = ["Performance by label (#match, #model, #ref) (precision, recall, F1):"]
    for label, s in report["scores"].items():
        counts = f"    {label}: ({s.match}, {s.model}, {s.ref})"
        if s.precision is None:
            lines.append(f"{counts} (******, ******, ******)")
        else:
            lines.append(f"{counts} ({s.precision:1.4f}, {s.recall:1.4f}, {s.f1:1.4f})")
    lines += [
        "Macro-average precision, recall, F1: ("
        + ", ".join(f"{report[f'avg_{name}']:f}" for name in ("precision", "recall", "f1"))
        + ")",
        f"Item accuracy: {tokens.match.sum()} / {tokens.ref.sum()} "
        f"({report['item_accuracy_float']:1.4f})",
        f"Instance accuracy: {tokens.n_correct_sequences} / {tokens.n_sequences} "
        f"({report['instance_accuracy_float']:1.4f})",
    ]
    return "\n".join(lines) + "\n"
