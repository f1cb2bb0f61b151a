"""The vocabulary: attribute names, or hash slots, to ids; and a fitted
:class:`~sklearn_crf.SequenceVectorizer`'s state, written in one place.

Two strategies with one interface, so that the encode loops never ask which:
:class:`NameVocabulary` (the names, and the memo of (key, value) items that
lets a token be looked up without building names) and :class:`HashingSlots`
(MurmurHash3 slots). :func:`set_fitted_vocabulary` writes a vectorizer's
fitted attributes for every path that makes one (fit, partial fit, the
featurizers' encoded fit, a :class:`VocabularyState`, unpickling), and
:func:`fitted_vocabulary` reads them back.
"""

from functools import partial
from itertools import chain, compress, islice, repeat
from numbers import Integral
from operator import contains
from typing import NamedTuple

import numpy as np
from sklearn.utils import murmurhash3_32

from .._derived import DerivedValues
from .attributes import str_attribute, str_splits
from .memo import ABSENT  # noqa: F401 - the encoders and featurizers import it from here
from .memo import (
    add_item,
    copy_memo,
    cut_back,
    has_item,
    item_entries,
    memo_items,
    memo_of_per_key,
    n_items,
)

#: attribute ids are int32
MAX_ATTRIBUTES = 2**31 - 1


class _Vocabulary:
    """What both strategies share: ``ids``, each key (an attribute name, or a
    hash slot) to its id, in order of first appearance; ``grow``: a new key
    gets the next id. ``pairs``: the memo of (key, value) items
    (:mod:`~sklearn_crf._features.memo`)."""

    #: ``derive()``: a memo derived from the names (see :func:`_derive_memo`), or None
    derive = None

    def lookup(self, key):
        """The id of a key (None: unknown, when not growing)."""
        idx = self.ids.get(key)
        if idx is None and self.grow:
            idx = self.ids[key] = len(self.ids)
        return idx

    def add(self, keys):
        """The ids of ``keys`` (a list), new ones given the next ids in order."""
        ids = self.ids
        return list(map(ids.setdefault, keys, map(len, repeat(ids))))

    def find(self, keys, default):
        """The ids of ``keys`` (an iterator), ``default`` for an unknown one."""
        return map(self.ids.get, keys, repeat(default))

    def truncate(self, n_ids, memo_sizes):
        """Back to the first ``n_ids`` ids and the memo to ``memo_sizes`` (a
        :func:`~sklearn_crf._features.memo.mark`; dicts keep insertion order):
        a failed call of a growing vocabulary undone."""
        for _ in range(len(self.ids) - n_ids):
            self.ids.popitem()
        cut_back(self.pairs, memo_sizes)


class NameVocabulary(_Vocabulary):
    """Vocabulary strategy by name: attribute name → id, and the (key, value) memo.

    ``ids`` maps attribute names to ids (``vocabulary_``). ``pairs`` is the memo
    that lets a token's items be looked up without building names
    (:mod:`~sklearn_crf._features.memo`): ``pairs[key][str value]`` → id, and
    for a number key seen with the value 1 or 0 ``pairs[key][True]`` → id,
    ``pairs[key][False]`` → ``~id`` (a zero entry). ``grow`` (fitting): a name
    not yet known gets the next id and the memo is filled; otherwise both are
    only read.
    """

    #: the fitted attributes of the other strategy
    other_state = ("hash_slots_", "_slot_ids", "_n_slots", "_str_ids", "_num_ids")

    def __init__(self, ids, pairs, grow):
        self.ids = ids
        self.pairs = pairs
        self.grow = self.fill_memo = grow

    def fitted_state(self):
        """The vectorizer's fitted attributes of this vocabulary."""
        return {"n_attributes_": len(self.ids), "vocabulary_": self.ids,
                "feature_names_": list(self.ids), "_pair_ids": self.pairs}


class HashingSlots(_Vocabulary):
    """Vocabulary strategy by hash slot: an attribute name's key is its hash
    slot (:meth:`lookup`), and ``ids`` maps the slots seen in fit to ids. The
    pair memo (as :class:`NameVocabulary`'s) is the call's own, so the fitted
    state grows with the slots, not the names."""

    other_state = ("vocabulary_", "feature_names_", "_str_ids", "_num_ids", "_pair_ids")

    def __init__(self, n_slots, ids, grow):
        self.n_slots = n_slots
        self.ids = ids
        self.pairs = {}
        self.grow = grow
        self.fill_memo = True

    def lookup(self, name):
        """The id of an attribute name's hash slot (None: a slot unseen in fit).

        The slot is MurmurHash3 of the name (the same in every process) modulo
        ``n_slots``: computed here only (:meth:`add` and :meth:`find` call this).
        The id as :meth:`_Vocabulary.lookup` gives it, inlined: this runs once
        per item of a hashed sentence."""
        slot = murmurhash3_32(name, positive=True) % self.n_slots
        idx = self.ids.get(slot)
        if idx is None and self.grow:
            idx = self.ids[slot] = len(self.ids)
        return idx

    def add(self, names):
        """The ids of the slots of ``names`` (a list), new slots given the next ids."""
        return list(map(self.lookup, names))

    def find(self, names, default):
        """The ids of the slots of ``names`` (an iterator), ``default`` for an
        unseen one (a vocabulary that does not grow)."""
        return (default if idx is None else idx for idx in map(self.lookup, names))

    def fitted_state(self):
        """The vectorizer's fitted attributes of this vocabulary."""
        ids = self.ids
        return {"n_attributes_": len(ids),
                "hash_slots_": np.fromiter(ids, dtype=np.int64, count=len(ids)),
                "_slot_ids": ids, "_n_slots": self.n_slots}


def new_vocabulary(n_features):
    """The empty, growing vocabulary of a fit: by name (``n_features`` None) or
    into ``n_features`` hash slots."""
    if n_features is not None:
        return HashingSlots(n_features, {}, grow=True)
    return NameVocabulary({}, {}, grow=True)


def set_fitted_vocabulary(vectorizer, vocab, n_dense=None, *, n_known=None):
    """Set ``vectorizer``'s fitted attributes to those of ``vocab``: the one
    place they are written.

    ``n_dense``: its ``n_dense_features_``. ``n_known``: ``vocab`` is the
    vectorizer's own, grown in place from ``n_known`` ids (a partial fit): the
    names (or slots) of the new ids are appended, the rest stays.
    """
    state = vectorizer.__dict__
    if n_known is not None:
        ids = vocab.ids
        new = list(islice(reversed(ids), len(ids) - n_known))[::-1]
        if type(vocab) is HashingSlots:
            state["hash_slots_"] = np.concatenate([state["hash_slots_"],
                                                   np.array(new, dtype=np.int64)])
        else:
            state["feature_names_"].extend(new)
            state.setdefault("_pair_ids", vocab.pairs)
        state["n_attributes_"] = len(ids)
        return
    for name in vocab.other_state:
        state.pop(name, None)
    state.update(vocab.fitted_state())
    state["n_dense_features_"] = n_dense


def fitted_ids(vectorizer):
    """A fitted vectorizer's own dict of attribute names, or hash slots, to ids
    (in id order)."""
    state = vectorizer.__dict__
    return state["_slot_ids"] if "_n_slots" in state else state["vocabulary_"]


def fitted_vocabulary(vectorizer, grow=False):
    """The vocabulary of a fitted vectorizer's state (its own dicts; ``grow``:
    a partial fit adds to them)."""
    state = vectorizer.__dict__
    if "_n_slots" in state:
        return HashingSlots(state["_n_slots"], state["_slot_ids"], grow=grow)
    pairs = state.get("_pair_ids", {})
    if grow:
        return NameVocabulary(state["vocabulary_"], pairs, grow=True)
    memo = _DERIVED_MEMOS.get(vectorizer, (pairs,), (len(state["vocabulary_"]),))
    if memo is not None:
        return NameVocabulary(state["vocabulary_"], memo, grow=False)
    vocab = NameVocabulary(state["vocabulary_"], pairs, grow=False)
    vocab.derive = partial(_derive_memo, vectorizer, pairs)
    return vocab


def fitted_lookup(vectorizer):
    """``(ids, lookup)``: a fitted vectorizer's own dict (attribute names, or
    hash slots, to ids; another object after a fit, longer after a partial
    fit) and ``lookup(name)``, the id of an attribute name or None (unknown):
    how a feature dict's item is found, for encoders that build the names."""
    vocab = fitted_vocabulary(vectorizer)
    if type(vocab) is NameVocabulary:
        return vocab.ids, vocab.ids.get  # (it does not grow)
    return vocab.ids, vocab.lookup


class VocabularyState(NamedTuple):
    """A fitted :class:`~sklearn_crf.SequenceVectorizer`'s vocabulary as plain
    data (str, int, dicts, an int64 array): what the corpus store writes, and
    what :func:`~sklearn_crf._features.vectorizer.vectorizer_from_state`
    rebuilds the vectorizer from.

    Attributes
    ----------
    n_features : int or None
        The vectorizer's ``n_features`` (None: a vocabulary by name).
    n_dense : int
        ``n_dense_features_``.
    attributes : list of str or None
        Attribute names by id (None when hashing).
    hash_slots : ndarray of shape (n_attributes,), dtype int64, or None
        The hash slot of each id (None when not hashing).
    str_pairs : dict of str to dict of str to int
        The memo of (key, str value) items: ``str_pairs[key][value]`` is the id
        of ``key + ":" + value`` (empty when hashing).
    num_keys : dict of str to int
        The memo of number-valued keys: the id of attribute ``key`` (empty
        when hashing).
    """

    n_features: int | None
    n_dense: int
    attributes: list | None
    hash_slots: np.ndarray | None
    str_pairs: dict
    num_keys: dict


def checked_vocabulary(state, where):
    """The vocabulary of a :class:`VocabularyState`, checked (``n_dense``,
    names unique, slots unique and in range, the memo agrees with the names):
    a ValueError that starts with ``where`` otherwise."""
    if not isinstance(state.n_dense, Integral) or state.n_dense < 0:
        raise ValueError(f"{where}: n_dense is {state.n_dense!r}, not an int >= 0")
    if state.n_features is None:
        names = state.attributes
        if not isinstance(names, list) or not all(type(n) is str for n in names):
            raise ValueError(f"{where}: the attribute names must be a list of str")
        ids = {name: i for i, name in enumerate(names)}
        if len(ids) != len(names):
            dup = next(n for i, n in enumerate(names) if ids[n] != i)
            raise ValueError(f"{where}: the attribute {dup!r} is listed twice")
        str_pairs, num_keys = state.str_pairs, state.num_keys
        if not isinstance(str_pairs, dict) or not isinstance(num_keys, dict):
            raise ValueError(f"{where}: the memo must be dicts")
        for key, values in str_pairs.items():
            if type(key) is not str or not isinstance(values, dict):
                raise ValueError(f"{where}: the memo of key {key!r} is not a dict")
            for value, idx in values.items():
                if type(value) is not str or ids.get(str_attribute((key, value))) != idx:
                    raise ValueError(
                        f"{where}: the memo gives ({key!r}, {value!r}) the id {idx!r}, "
                        f"not that of the attribute {str_attribute((key, str(value)))!r}")
        for key, idx in num_keys.items():
            if type(key) is not str or ids.get(key) != idx:
                raise ValueError(
                    f"{where}: the memo gives the key {key!r} the id {idx!r}, not "
                    "that of its attribute")
        return NameVocabulary(ids, memo_of_per_key(str_pairs, num_keys), grow=False)
    if not isinstance(state.n_features, Integral) or not 1 <= state.n_features < 2**31:
        raise ValueError(f"{where}: n_features is {state.n_features!r}")
    slots = state.hash_slots
    if (not isinstance(slots, np.ndarray) or slots.ndim != 1
            or slots.dtype != np.int64):
        raise ValueError(f"{where}: the hash slots must be a 1-D int64 array")
    slot_list = slots.tolist()
    slot_ids = {slot: i for i, slot in enumerate(slot_list)}
    if len(slot_ids) != len(slot_list):
        raise ValueError(f"{where}: a hash slot is listed twice")
    if len(slots) and (slots.min() < 0 or slots.max() >= state.n_features):
        raise ValueError(
            f"{where}: a hash slot is out of range for n_features={state.n_features}")
    return HashingSlots(int(state.n_features), slot_ids, grow=False)


#: per vectorizer: the memo encode reads, derived from its ``_pair_ids``: a
#: vocabulary fitted on names alone (numeric features: a model read from a
#: file through :meth:`CRFTagger.from_weights`) gets, at its first miss, a
#: memo derived from the names (:func:`_derive_memo`); kept outside the
#: vectorizer, whose state it does not change, while its memo is the same and
#: its names as many (a derived memo holds every item the names give, so
#: items added to the memo alone change no entry); checked at the cost of a
#: len, whatever the memo's size
_DERIVED_MEMOS = DerivedValues()


def _derive_memo(vectorizer, pairs):
    """The memo derived from the names when ``pairs`` (the fitted memo) has no
    str-valued item, else None (the fitted memo stays); remembered.

    ``(name, True)`` -> id, ``(name, False)`` -> ``~id`` and, at every ``":"``
    of a name, ``(before, after)`` -> id: the entries the rules give each of
    these items (a str value names :data:`str_attribute`), so a loaded model
    looks a token's items up as fast as a fitted one, with the same entries."""
    memo = pairs
    if not any(type(value) is str for (_, value), _ in memo_items(pairs)):
        memo = copy_memo(pairs)
        for name, idx in vectorizer.vocabulary_.items():
            add_item(memo, name, True, idx)
            add_item(memo, name, False, ~idx)
            for key, value in str_splits(name):
                add_item(memo, key, value, idx)
    _DERIVED_MEMOS.put(vectorizer, memo, (pairs,), (len(vectorizer.vocabulary_),))
    return None if memo is pairs else memo


def derived_lookup(vocab, tokens, count):
    """After a miss: switch ``vocab`` to its derived memo, if it gets one, and
    return the ``count`` items of the dict ``tokens`` looked up in it (an
    int32 array), else None (the items are read only then)."""
    derive, vocab.derive = vocab.derive, None
    memo = derive()
    if memo is None:
        return None
    vocab.pairs = memo
    return item_entries(memo, tokens, count)


#: per fitted vectorizer: the open keys of its memo and names (:func:`open_keys`)
_OPEN_KEYS = DerivedValues()


def open_keys(vectorizer, memo, compute=True):
    """The keys ``k`` for which an item ``(k, v)`` of str ``v`` that misses
    ``memo`` (the memo a fitted vectorizer's encode reads) may still name one
    of its attributes: the part before a ``":"`` of an attribute name whose
    split there is not in the memo (a key that holds ``":"``, a value with a
    ``":"``, a number-valued name with a ``":"``). A str item of any other key
    that misses names no attribute, so it is dropped without building its
    name. Computed at the first call with ``compute`` (:func:`_open_keys`: C
    loops over the memo's items, Python code for the few that need it), kept
    while the memo is the same and the names as many (a partial fit adds to
    both in place: new names may open keys; items added to the memo alone
    only close keys, so the kept ones still hold every open key); without
    ``compute``, None unless kept. The check costs the same whatever the
    memo's size."""
    names = vectorizer.vocabulary_
    sizes = (len(names),)
    if not compute:
        return _OPEN_KEYS.get(vectorizer, (memo,), sizes)
    return _OPEN_KEYS.kept(vectorizer, lambda: _open_keys(names, memo), (memo,), sizes)


def _open_keys(names, memo):
    """The open keys of the attribute ``names`` (name -> id) under ``memo``
    (see :func:`open_keys`), by the memo's items rather than by every name.

    An item ``(k, v)`` of the memo has the name ``k:v`` (a str ``v``) or ``k``
    (a bool ``v``: a number-valued name), whose split at its own ``":"`` is
    the item itself; its other splits are at the ``":"`` within ``k`` and
    within ``v``. A split whose key is no key of the memo is not in it: such
    a key is open at once, for every item of ``k``. The names no item gives
    (a nested value's) have their every split looked up. The values are
    sorted out in C loops (``map``, ``compress``) key by key; Python code runs
    only for keys with a ``":"`` and the few items that need a look-up."""
    found = set()
    within_key = {}  # key -> its splits whose part before the ":" is a memo key
    for k in memo:
        if type(k) is str and ":" in k:
            splits = []
            for before, after in str_splits(k):
                if before in memo:
                    splits.append((before, after))
                else:
                    found.add(before)
            if splits:
                within_key[k] = splits
    for k, splits in within_key.items():
        for v in memo[k]:
            for before, after in splits:
                if not has_item(memo, before, f"{after}:{v}" if type(v) is str else after):
                    found.add(before)
    for k, values in memo.items():
        str_values = list(compress(values, map(isinstance, values, repeat(str))))
        for v in compress(str_values, map(contains, str_values, repeat(":"))):
            for before, after in str_splits(v):
                key = f"{k}:{before}"
                if not has_item(memo, key, after):
                    found.add(key)
    ids = np.fromiter(chain.from_iterable(map(dict.values, memo.values())), np.int64,
                      n_items(memo))
    np.invert(ids, out=ids, where=ids < 0)  # a zero's entry is ~id
    name_ids = np.fromiter(names.values(), np.int64, len(names))
    others = np.flatnonzero(~np.isin(name_ids, ids))
    if len(others):
        name_list = list(names)
        for i in others.tolist():
            name = name_list[i]
            found.update(k for k, value in str_splits(name) if not has_item(memo, k, value))
    return frozenset(found)
