"""Checks of ragged sequence input; every message says which sequence and token."""

from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from typing import NamedTuple, Optional

import numpy as np


def check_sequences(X, name, *, allow_empty=False):
    """Check that X is a list of sequences (lists or tuples) of tokens."""
    if isinstance(X, (str, bytes, Mapping)) or not isinstance(X, (Sequence, np.ndarray)):
        raise TypeError(
            f"{name} must be a list of sequences, got a {type(X).__name__}"
        )
    if len(X) == 0:
        if allow_empty:
            return
        raise ValueError(f"{name} is empty: it must hold at least one sequence")
    first = X[0]
    if isinstance(first, Mapping) or (name == "y" and _is_label(first)):
        what = "feature dicts" if isinstance(first, Mapping) else "labels"
        raise ValueError(
            f"{name} looks like a single sequence of {what}, not a list of "
            f"sequences: pass [{name}] to use it as one sequence"
        )
    for s, seq in enumerate(X):
        if not isinstance(seq, (list, tuple)):
            if isinstance(seq, np.ndarray) and seq.ndim == 1:
                continue
            raise TypeError(
                f"{name}[{s}] is a {type(seq).__name__}; each sequence must be a "
                "list (or tuple) of tokens"
            )


def _is_label(obj):
    return isinstance(obj, (str, bytes, int, float, np.generic))


def encode_labels(y, seq_ptr):
    """Check y against the sequence offsets of X and encode its labels.

    Returns ``classes`` (ndarray, sorted) and ``codes`` (int32, one per token).
    Labels may be any hashable of a single type; they come back as that type
    through ``classes.tolist()`` or indexing an object array.
    """
    check_sequences(y, "y")
    n_seq = len(seq_ptr) - 1
    stop = _first_bad_length(y, seq_ptr)  # the sequences before the first error
    # each label's code in order of first appearance, in C loops (no Python per token)
    index = {}
    try:
        codes = np.fromiter(
            map(index.setdefault, chain.from_iterable(y[:stop]), map(len, repeat(index))),
            np.int32, int(seq_ptr[stop]))
    except TypeError:  # an unhashable label
        codes = None
    if codes is None or any(map(_not_a_label, index)):
        _raise_bad_label(y[:stop])
    if stop < n_seq:
        _raise_bad_length(y, seq_ptr, stop)
    labels = list(index)
    if not labels:
        raise ValueError(
            f"y holds no labels: all {n_seq} sequences are empty; fitting needs "
            "at least one labelled token"
        )
    classes, order = _sorted_classes(labels)
    remap = np.empty(len(labels), dtype=np.int32)
    remap[order] = np.arange(len(labels), dtype=np.int32)
    return classes, remap[codes]


def _sorted_classes(labels):
    """The distinct ``labels`` (a list) as a sorted label array, and the order
    that sorts them; a TypeError when they are of several types."""
    types = {_label_kind(label) for label in labels}
    if len(types) > 1:
        kinds = sorted(types)
        examples = [next(lab for lab in labels if _label_kind(lab) == k) for k in kinds]
        raise TypeError(
            "y mixes labels of different types: "
            + ", ".join(f"{k} (e.g. {e!r})" for k, e in zip(kinds, examples))
        )
    try:
        order = sorted(range(len(labels)), key=labels.__getitem__)
    except TypeError:
        order = list(range(len(labels)))
    return label_array([labels[i] for i in order]), order


def _not_a_label(label):
    """Whether a label is None or NaN (which equals nothing, itself included),
    or a set of labels (a partial label)."""
    return (label is None or (isinstance(label, float) and label != label)
            or _is_label_set(label))


def _raise_bad_label(y):
    """Raise the error of the first label of y that is unhashable, None, NaN or
    a set (a partial label, which only :func:`encode_partial_labels` reads)."""
    for s, seq in enumerate(y):
        for t, label in enumerate(seq):
            if label is None or _is_label_set(label):
                raise ValueError(
                    f"y[{s}][{t}] is {label!r}, not a label: partial labels "
                    "(None for unknown, a set of labels) are read only by "
                    "CRFTagger.fit with a batch solver on data in memory"
                )
            _check_label(label, s, t)
    raise AssertionError("no bad label found")  # pragma: no cover


def _check_label(label, s, t):
    """Raise the error of ``y[s][t]`` when it is unhashable, None, NaN or a set."""
    try:
        hash(label)
    except TypeError:
        raise TypeError(
            f"y[{s}][{t}] is a {type(label).__name__}, which is not "
            "hashable; labels must be str, int or another hashable"
        ) from None
    if _not_a_label(label):
        raise ValueError(f"y[{s}][{t}] is {label!r}, not a label")


def _label_kind(label):
    if isinstance(label, (str, np.str_)):
        return "str"
    if isinstance(label, (bool, np.bool_)):
        return "bool"
    if isinstance(label, (int, np.integer)):
        return "int"
    return type(label).__name__


def label_array(labels):
    kind = _label_kind(labels[0])
    if kind == "str":
        return np.array(labels, dtype=str)
    if kind == "int":
        try:
            return np.array(labels, dtype=np.int64)
        except OverflowError:  # beyond int64: keep the Python ints as they are
            pass
    arr = np.empty(len(labels), dtype=object)
    arr[:] = labels
    return arr


class EncodedLabels(NamedTuple):
    """The labels of y as codes, for training on partial labels.

    Attributes
    ----------
    classes : ndarray of shape (n_labels,)
        The labels, sorted (as :func:`encode_labels` sorts them): those of
        y, the members of its sets included.
    codes : ndarray of int32, shape (n_tokens,)
        Each labelled token's label code; for a token that may take several
        labels, the first of them.
    allowed : ndarray of bool, shape (n_tokens, n_labels), or None
        The labels each token may take; None when every token has one label
        (y is fully labelled).
    """

    classes: np.ndarray
    codes: np.ndarray
    allowed: Optional[np.ndarray]


def _is_label_set(entry):
    return isinstance(entry, (set, frozenset))


def _has_partial_entry(y):
    """Whether a token of y is None or a set of labels (C loops over the tokens;
    other bad labels are left to :func:`encode_labels`)."""
    try:
        distinct = set(chain.from_iterable(y))
    except TypeError:  # a set (unhashable) or another unhashable entry
        return any(_is_label_set(entry) for seq in y for entry in seq)
    return any(entry is None or _is_label_set(entry) for entry in distinct)


def _first_bad_length(y, seq_ptr):
    """The first sequence of y whose entries are not one per token of X's
    (the number of sequences when there is none); a ValueError when y has not
    X's number of sequences."""
    n_seq = len(seq_ptr) - 1
    if len(y) != n_seq:
        raise ValueError(
            f"X and y have different numbers of sequences: {n_seq} and {len(y)}"
        )
    lengths = np.fromiter(map(len, y), np.int64, n_seq)
    wrong = np.flatnonzero(lengths != np.diff(seq_ptr))
    return int(wrong[0]) if len(wrong) else n_seq


def _raise_bad_length(y, seq_ptr, s):
    """The ValueError of sequence ``s``, whose entries are not one per token."""
    raise ValueError(
        f"sequence {s} has {seq_ptr[s + 1] - seq_ptr[s]} tokens in X but "
        f"{len(y[s])} labels in y"
    )


def _check_lengths(y, seq_ptr):
    """ValueError when y has not one entry per token of each sequence of X."""
    s = _first_bad_length(y, seq_ptr)
    if s < len(seq_ptr) - 1:
        _raise_bad_length(y, seq_ptr, s)


def encode_partial_labels(y, seq_ptr):
    """Check y against the sequence offsets of X and encode its labels, which
    may be partial: a token's entry is a label, None (unknown: any label) or
    a set or frozenset of labels (one of them).

    Returns an :class:`EncodedLabels`. Fully labelled y is encoded by
    :func:`encode_labels` (the same classes and codes, ``allowed`` None);
    the labels are the labels of y and the members of its sets. A set of
    one label is that label.
    """
    check_sequences(y, "y")
    if not _has_partial_entry(y):
        return EncodedLabels(*encode_labels(y, seq_ptr), None)
    _check_lengths(y, seq_ptr)
    labels = {}
    for s, seq in enumerate(y):
        for t, entry in enumerate(seq):
            if entry is None:
                continue
            members = entry if _is_label_set(entry) else (entry,)
            if not members:
                raise ValueError(
                    f"y[{s}][{t}] is an empty set: a token must allow at least one label"
                )
            for label in members:
                _check_label(label, s, t)
                labels.setdefault(label, None)
    if not labels:
        raise ValueError(
            "y holds no labels: every token is unknown (None); fitting needs at "
            "least one label"
        )
    classes, _ = _sorted_classes(list(labels))
    index = {label: i for i, label in enumerate(classes.tolist())}
    n_tok = int(seq_ptr[-1])
    allowed = np.zeros((n_tok, len(classes)), dtype=bool)
    t0 = 0
    for seq in y:
        for entry in seq:
            if entry is None:
                allowed[t0] = True
            elif _is_label_set(entry):
                allowed[t0, [index[label] for label in entry]] = True
            else:
                allowed[t0, index[entry]] = True
            t0 += 1
    codes = np.argmax(allowed, axis=1).astype(np.int32)
    if np.all(np.count_nonzero(allowed, axis=1) == 1):
        allowed = None
    return EncodedLabels(classes, codes, allowed)


def check_sequence_weight(sample_weight, n_sequences):
    """Check one weight per sequence; return None or a float64 array.

    The weights must be finite and non-negative, of shape ``(n_sequences,)``;
    the error names the first bad index. None stays None (no weighting).
    """
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.shape != (n_sequences,):
        raise ValueError(
            f"sample_weight has shape {weights.shape}, expected ({n_sequences},): "
            "one weight per sequence"
        )
    bad = np.flatnonzero(~np.isfinite(weights) | (weights < 0))
    if len(bad):
        raise ValueError(
            f"sample_weight[{bad[0]}] is {weights[bad[0]]}; weights must be finite "
            "and non-negative"
        )
    return weights


def check_n_dense(n_dense, fitted, name="X"):
    """ValueError when X's number of dense features is not the fit's."""
    if n_dense != fitted:
        raise ValueError(
            f"{name} has {n_dense} dense features per token, but this CRFTagger "
            f"was fitted with {fitted}"
        )
