"""Decoding constraints: tagging schemes, allowed transitions, allowed labels per token.

A constraint set is turned into boolean masks over the label codes of a fitted
tagger (:class:`TransitionConstraints`: allowed transitions, allowed first and
last labels) and, for ``allowed=`` arguments, a boolean (n_tokens, n_labels)
mask of the labels each token may take. :mod:`sklearn_crf._engine.decoding` applies
them as -inf scores.

A scheme's masks are the transitions of :func:`sklearn_crf._model.schemes.may_follow`
(a label is read as entity metrics read it:
:func:`~sklearn_crf._model.schemes.read_label`): those
under which every label belongs to an entity that seqeval's strict mode reads
for the scheme, as :mod:`sklearn_crf._model.schemes` lists.
"""

import functools
from collections.abc import Set
from typing import NamedTuple, Optional

import numpy as np

from .schemes import SCHEMES, may_follow, read_label

__all__ = [
    "SCHEMES",
    "TransitionConstraints",
    "build_constraints",
    "cached_constraints",
    "check_allowed_labels",
    "check_scheme_labels",
    "token_mask",
]


class TransitionConstraints(NamedTuple):
    """Allowed label transitions and first and last labels, over label codes.

    Attributes
    ----------
    transitions : ndarray of bool, shape (n_labels, n_labels)
        ``transitions[i, j]``: label ``j`` may follow label ``i``.
    start : ndarray of bool, shape (n_labels,)
        Labels a sequence may start with.
    end : ndarray of bool, shape (n_labels,)
        Labels a sequence may end with.
    scheme : str or None
        The scheme name, or None for constraints given as label pairs.
    """

    transitions: np.ndarray
    start: np.ndarray
    end: np.ndarray
    scheme: Optional[str]


def split_label(label, scheme):
    """The :class:`~sklearn_crf._model.schemes.Token` of a label in ``scheme``
    (:func:`~sklearn_crf._model.schemes.read_label`, the reading of entity
    metrics and ``predict_entities``).

    Raises a ValueError naming the label and the scheme's tags when the label
    does not follow the scheme's naming.
    """
    token = read_label(label, scheme) if isinstance(label, str) and label else None
    if token is not None:
        return token
    expected = ", ".join(f"'{t}-<type>'" for t in SCHEMES[scheme] if t is not None)
    raise ValueError(
        f"label {label!r} does not follow the {scheme} scheme of "
        f"transition_constraints: labels must be 'O' or one of {expected}"
    )


def check_scheme_labels(spec, labels):
    """Raise a ValueError when a label breaks the naming of the scheme ``spec``,
    or when a pair of ``spec`` names a label not in ``labels``."""
    build_constraints(spec, list(labels))


def build_constraints(spec, classes):
    """:class:`TransitionConstraints` of ``spec`` over ``classes``, or None.

    ``spec`` is None, a scheme name of :data:`SCHEMES`, or a collection of
    allowed ``(from_label, to_label)`` pairs (first and last labels then free).
    """
    if spec is None:
        return None
    classes = list(classes)
    L = len(classes)
    if isinstance(spec, str):
        if spec not in SCHEMES:
            raise ValueError(
                f"transition_constraints={spec!r} is not a scheme name; use one of "
                f"{sorted(SCHEMES)}, a collection of (from_label, to_label) pairs, "
                "or None"
            )
        split = [split_label(label, spec) for label in classes]
        trans = np.array(
            [[may_follow(spec, a, b) for b in split] for a in split], dtype=bool
        ).reshape(L, L)
        start = np.array([may_follow(spec, None, b) for b in split], dtype=bool)
        end = np.array([may_follow(spec, a, None) for a in split], dtype=bool)
        return TransitionConstraints(trans, start, end, spec)
    index = {label: i for i, label in enumerate(classes)}
    trans = np.zeros((L, L), dtype=bool)
    try:
        pairs = list(spec)
    except TypeError:
        raise TypeError(
            "transition_constraints must be None, a scheme name or a collection "
            f"of (from_label, to_label) pairs, got {type(spec).__name__}"
        ) from None
    for k, pair in enumerate(pairs):
        if isinstance(pair, str) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(
                f"transition_constraints[{k}] is {pair!r}, not a (from_label, "
                "to_label) pair"
            )
        codes = []
        for label in pair:
            try:
                codes.append(index[label])
            except (KeyError, TypeError):
                raise ValueError(
                    f"transition_constraints[{k}] = {tuple(pair)!r} names the label "
                    f"{label!r}, which is not among the training labels {classes}"
                ) from None
        trans[codes[0], codes[1]] = True
    ones = np.ones(L, dtype=bool)
    return TransitionConstraints(trans, ones, ones.copy(), None)


def cached_constraints(spec, classes):
    """:func:`build_constraints` of ``spec`` over ``classes``, remembered.

    The decoders call this on every prediction: a scheme's masks cost O(L²)
    Python calls to build, more than tagging one sentence. The masks depend
    on the values of ``spec`` and ``classes`` only, so they are kept (for the
    last 32 distinct pairs) by value, never by identity: a pair list changed
    in place gives new masks. The arrays returned are read-only, since every
    caller shares them.
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        key = spec
    else:
        try:
            pairs = list(spec)
            key = tuple(tuple(pair) for pair in pairs)
            hash(key)
        except TypeError:  # a malformed spec: build_constraints says what is wrong
            return build_constraints(spec, classes)
        if any(isinstance(pair, str) or not hasattr(pair, "__len__") or len(pair) != 2
               for pair in pairs):
            return build_constraints(pairs, classes)
    try:
        labels = tuple(classes)
        hash(labels)
    except TypeError:
        return build_constraints(key, classes)
    return _remembered_constraints(key, labels)


@functools.lru_cache(maxsize=32)
def _remembered_constraints(key, labels):
    constraints = build_constraints(key, labels)
    for mask in constraints[:3]:
        mask.flags.writeable = False
    return constraints


def _is_label_set(entry):
    return isinstance(entry, (Set, list, tuple))


def token_mask(allowed, classes, seq_ptr):
    """Boolean (n_tokens, n_labels) mask of the labels each token may take.

    ``allowed`` is None (no restriction: returns None) or one entry per
    sequence: None (free) or one entry per token: None (free), a label
    (forced), or a set, frozenset, list or tuple of labels (partial). Raises a
    ValueError or TypeError naming the sequence and token of a bad entry.
    """
    if allowed is None:
        return None
    n_seq = len(seq_ptr) - 1
    if isinstance(allowed, (str, bytes)) or not hasattr(allowed, "__len__"):
        raise TypeError(
            "allowed must be None or a list with one entry per sequence, got "
            f"{type(allowed).__name__}"
        )
    if len(allowed) != n_seq:
        raise ValueError(
            f"allowed has {len(allowed)} entries but X has {n_seq} sequences"
        )
    classes = list(classes)
    index = {label: i for i, label in enumerate(classes)}
    mask = np.ones((int(seq_ptr[-1]), len(classes)), dtype=bool)

    def code(label, s, t):
        try:
            return index[label]
        except (KeyError, TypeError):
            raise ValueError(
                f"allowed[{s}][{t}] names the label {label!r}, which is not one of "
                f"the labels {classes}"
            ) from None

    for s, entries in enumerate(allowed):
        if entries is None:
            continue
        n = int(seq_ptr[s + 1] - seq_ptr[s])
        if isinstance(entries, (str, bytes)) or not hasattr(entries, "__len__"):
            raise TypeError(
                f"allowed[{s}] must be None or a list with one entry per token, got "
                f"{type(entries).__name__}"
            )
        if len(entries) != n:
            raise ValueError(
                f"allowed[{s}] has {len(entries)} entries but sequence {s} has "
                f"{n} tokens"
            )
        for t, entry in enumerate(entries):
            if entry is None:
                continue
            row = mask[seq_ptr[s] + t]
            row[:] = False
            if _is_label_set(entry):
                for label in entry:
                    row[code(label, s, t)] = True
            else:
                row[code(entry, s, t)] = True
    return mask


def check_allowed_labels(constraints, labels, seq_ptr, classes=None):
    """Raise a ValueError naming the first sequence and token where the label
    codes ``labels`` (n_tokens,) break the :class:`TransitionConstraints`:
    a first label not allowed to start, a transition not allowed, a last
    label not allowed to end. ``classes`` names the codes in the message."""
    labels = np.asarray(labels, dtype=np.int64)
    seq_ptr = np.asarray(seq_ptr, dtype=np.int64)
    n_tok = len(labels)
    if n_tok == 0:
        return
    lengths = np.diff(seq_ptr)
    first = np.zeros(n_tok, dtype=bool)
    last = np.zeros(n_tok, dtype=bool)
    first[seq_ptr[:-1][lengths > 0]] = True
    last[seq_ptr[1:][lengths > 0] - 1] = True
    bad_start = first & ~constraints.start[labels]
    bad_end = last & ~constraints.end[labels]
    bad_trans = np.zeros(n_tok, dtype=bool)
    inner = np.flatnonzero(~first)
    bad_trans[inner] = ~constraints.transitions[labels[inner - 1], labels[inner]]
    bad = np.flatnonzero(bad_start | bad_end | bad_trans)
    if not len(bad):
        return
    k = int(bad[0])
    s = int(np.searchsorted(seq_ptr, k, side="right") - 1)
    t = k - int(seq_ptr[s])

    def name(code):
        return repr(classes[code]) if classes is not None else f"label code {code}"

    if bad_start[k]:
        why = f"a sequence may not start with {name(labels[k])}"
    elif bad_trans[k]:
        why = f"{name(labels[k])} may not follow {name(labels[k - 1])}"
    else:
        why = f"a sequence may not end with {name(labels[k])}"
    raise ValueError(
        f"y[{s}][{t}]: the training labels break transition_constraints ({why}); "
        "constrain_training=True needs training label sequences that the "
        "constraints allow"
    )
