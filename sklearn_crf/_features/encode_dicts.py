"""The encode loop: sequences of feature dicts to attribute entries.

:func:`encode_entries` reads any X (batches of dict tokens looked up in the
vocabulary's (key, value) memo at once, token by token otherwise);
:func:`encode_sentence` is the same for one sentence of a fitted vocabulary
in fewer NumPy calls (serving), and :func:`scoring_entries` gives the
entries a prediction reads, of one sentence or many, without taking any
out. They send the items that miss the memo through one rule,
:func:`_miss_entries` (CRFsuite's rules of :mod:`.attributes`, item by
item, or all at once for new words), and give
an :class:`~sklearn_crf.EncodedCorpus` (:func:`entries_corpus`).
"""

import math
from array import array
from collections.abc import Mapping
from itertools import accumulate, chain, repeat
from operator import getitem, itemgetter
from typing import NamedTuple

import numpy as np

from .attributes import flatten_feature, list_token, raise_bad_value, str_attribute
from .corpus import EncodedCorpus
from .memo import add_item, add_items, item_entries, token_entries
from .vocabulary import ABSENT, NameVocabulary, derived_lookup, open_keys

#: most sequences encoded in one batch; with a memo that grows, batches start
#: at one sequence and double, so that repeats within a batch rarely miss
_BATCH = 256
#: fewer tokens than this in a batch: token by token (NumPy's cost per call
#: would outweigh the batch's lookups; e.g. one sentence at a time)
_SMALL = 64
#: fewer entries than this: zero entries split off by binary searches (fewer
#: NumPy calls), otherwise by a running count of the non-zero entries
_SMALL_SPLIT = 4096
#: no entries whose value is not 1 (read only: shared by every call)
NO_POS = np.zeros(0, dtype=np.int64)
NO_POS.flags.writeable = False
NO_VAL = np.zeros(0, dtype=np.float64)
NO_VAL.flags.writeable = False
#: the values of entries that are all 1, as the state scores read them: empty
#: (writeable, as numba compiles a read-only array's kernel again)
UNIT_VALUES = np.zeros(0, dtype=np.float64)


def entries_corpus(vectorizer, n_attributes, tok_ptr, entries, slow_pos, slow_val, seq_ptr,
                   dense=None):
    """The :class:`~sklearn_crf.EncodedCorpus` of ``n_attributes`` ids under
    ``vectorizer`` of entries ``entries`` (attribute ``a`` of a token's item,
    or ``~a`` for a value of 0; int32 or int64) of tokens ``tok_ptr``, whose
    values are 1 but ``slow_val`` at ``slow_pos``, of sequences ``seq_ptr``,
    with the dense block ``dense``: the zero entries split off."""
    tok_ptr, tok_attr, tok_val, zero_tok, zero_attr = _split_zero_entries(
        tok_ptr, entries, slow_pos, slow_val)
    return EncodedCorpus(
        tok_ptr=tok_ptr,
        tok_attr=tok_attr,
        tok_val=tok_val,
        seq_ptr=seq_ptr,
        n_attributes=n_attributes,
        zero_tok=zero_tok,
        zero_attr=zero_attr,
        dense=dense,
        vectorizer=vectorizer,
    )


def encode_entries(X, vocab, vectorizer, dense=None):
    """The encode loop: the :class:`~sklearn_crf.EncodedCorpus` of X under the
    vocabulary ``vocab`` of ``vectorizer`` (the corpus' vectorizer; when it
    fits, ``vocab`` is the one it will hold), with the dense block ``dense``.

    Sequences go in batches. When every token of a batch is a dict, all their
    ``(key, value)`` items are looked up in the memo at once (``map`` over
    ``dict.items``, into a NumPy array: no Python code per item); only the
    items that miss go through :func:`_miss_entries`, in order, and their
    entries are spliced in place. A batch with another token form (a list of
    names, a Mapping) or an unhashable value (a list, a nested dict), or with
    few tokens (one sentence), goes token by token (:func:`_encode_tokens`).
    Either way entries keep the token's order, attributes join the vocabulary
    in order of first appearance, and misses are handled in the order of X (so
    the first bad value is the one reported).
    """
    n_seq = len(X)
    seq_ptr = np.frombuffer(array("q", accumulate(map(len, X), initial=0)), dtype=np.int64)
    entry_parts, count_parts, slow_pos, slow_val = [], [], [], []
    n_entries = 0  # entries of the batches done
    n_tok = 0  # tokens of the batches done
    step = 1 if vocab.fill_memo else _BATCH
    start = 0
    while start < n_seq:
        stop = min(start + step, n_seq)
        step = min(2 * step, _BATCH)
        batch = X[start:stop]
        tokens = list(chain.from_iterable(batch))
        start = stop
        ids = None
        if len(tokens) >= _SMALL and not set(map(type, tokens)) - {dict}:
            counts = np.fromiter(map(len, tokens), np.int64, len(tokens))
            try:
                ids = item_entries(vocab.pairs, tokens, int(counts.sum()))
            except TypeError:  # an unhashable value: token by token
                pass
        slow = ()
        if ids is not None:
            miss = np.flatnonzero(ids == ABSENT)
            if len(miss) and vocab.derive is not None:
                again = derived_lookup(vocab, tokens, len(ids))
                if again is not None:
                    ids = again
                    miss = np.flatnonzero(ids == ABSENT)
            if len(miss):
                ids, counts, slow = _resolve_misses(X, vocab, vectorizer, tokens, counts,
                                                    ids, miss, n_tok, seq_ptr)
        else:
            ids, counts, slow = _encode_tokens(X, vocab, start - len(batch), start)
        for pos, x in slow:
            slow_pos.append(n_entries + pos)
            slow_val.append(x)
        entry_parts.append(ids)
        count_parts.append(counts)
        n_entries += len(ids)
        n_tok += len(tokens)
    if len(count_parts) == 1 and not isinstance(count_parts[0], np.ndarray):
        # one small batch (one sentence): no NumPy call per step
        tok_ptr = np.frombuffer(array("q", accumulate(count_parts[0], initial=0)),
                                dtype=np.int64)
        entries = _as_int64(entry_parts[0])
    else:
        tok_ptr = np.zeros(n_tok + 1, dtype=np.int64)
        if count_parts:
            np.cumsum(np.concatenate(list(map(_as_int64, count_parts))), out=tok_ptr[1:])
        # int32 entries (ids and ~ids of int32 attribute ids), 4 bytes an entry
        entries = (np.concatenate(list(map(_as_int64, entry_parts)), dtype=np.int32,
                                  casting="same_kind") if entry_parts
                   else np.zeros(0, np.int32))
    # the parts (as many bytes as the entries) are not needed past here
    del entry_parts, count_parts
    return entries_corpus(vectorizer, len(vocab.ids), tok_ptr, entries,
                          np.array(slow_pos, dtype=np.int64),
                          np.array(slow_val, dtype=np.float64), seq_ptr, dense)


class ScoringEntries(NamedTuple):
    """Sentences of dict tokens as a prediction reads them
    (:func:`scoring_entries`, or a featurizer's tokens): an entry per
    ``(key, value)`` item, as it is, none taken out: the attribute id of a
    value of 1, ``~id`` for a value of 0, :data:`ABSENT` for an unknown
    attribute. One sentence's best path reads them so
    (:func:`~sklearn_crf._engine.viterbi.best_path_of_entries`); the batch
    kernels read them :meth:`sunk`.

    Attributes
    ----------
    tok_ptr : ndarray of shape (n_tokens + 1,), dtype int64
        Start of each token's entries.
    tok_attr : ndarray of shape (n_items,), dtype int32
        The entry of each item.
    tok_val : ndarray of shape (0,), dtype float64
        Empty: every value is 1, as the state scores read it (sentences
        with other values take the general loop).
    seq_ptr : ndarray of shape (n_sequences + 1,), dtype int64
        Start of each sequence's tokens.
    """

    tok_ptr: np.ndarray
    tok_attr: np.ndarray
    tok_val: np.ndarray
    seq_ptr: np.ndarray

    def sunk(self, sink):
        """These entries with every one that is no id (``~id``, ABSENT)
        pointed at the attribute ``sink`` (at least the number of
        attributes), in place: with ``sink``'s weights empty, the scores of
        :func:`encode_entries`' corpus, bitwise, without taking entries out
        or splitting the zeros off. Returns them."""
        # one comparison: ~id (a zero) and ABSENT are beyond every id as uint32
        as_unsigned = self.tok_attr.view(np.uint32)
        np.minimum(as_unsigned, sink, out=as_unsigned)
        return self


def encode_sentence(X, vocab, vectorizer, dense=None):
    """:func:`encode_entries` of an X of one sentence of dict tokens, with a
    vocabulary that does not grow: the same corpus with a few NumPy calls (one
    sentence at a time, serving), or None when the general loop must do it
    (see :func:`_token_ids`)."""
    seq_ptr = np.array((0, len(X[0])), dtype=np.int64)
    found = _token_ids(X, seq_ptr, X[0], vocab, vectorizer)
    if found is None:
        return None
    ids, item_ptr = found
    known = ids != ABSENT
    tok_ptr, ids = _kept_entries(ids, item_ptr, known)
    return entries_corpus(vectorizer, len(vocab.ids), tok_ptr, ids, NO_POS, NO_VAL, seq_ptr,
                          dense)


def scoring_entries(X, vocab, vectorizer):
    """The :class:`ScoringEntries` of X, a list of sequences of dict tokens,
    under a fitted vocabulary by name that does not grow. None when the
    general loop must encode X (see :func:`_token_ids`)."""
    if len(X) == 1:  # one sentence (serving): fewer steps
        tokens = X[0]
        if type(tokens) is not list:
            return None
        seq_ptr = np.array((0, len(tokens)), dtype=np.int64)
    else:
        if set(map(type, X)) - {list}:
            return None
        seq_ptr = np.frombuffer(array("q", accumulate(map(len, X), initial=0)),
                                dtype=np.int64)
        tokens = list(chain.from_iterable(X))
    found = _token_ids(X, seq_ptr, tokens, vocab, vectorizer)
    if found is None:
        return None
    tok_attr, tok_ptr = found
    return ScoringEntries(tok_ptr, tok_attr, UNIT_VALUES, seq_ptr)


def _token_ids(X, seq_ptr, tokens, vocab, vectorizer):
    """``(ids, item_ptr)`` of ``tokens``, the dict tokens of X (of sequences
    ``seq_ptr``), under a vocabulary by name that does not grow: the int32
    entry of each ``(key, value)`` item (an id, ``~id`` for a value of 0,
    :data:`ABSENT` for an unknown attribute) and the start of each token's
    items (int64); None when the general loop must do it (another token
    form, an unhashable value, a miss that gives several entries or a value
    other than 0 and 1).

    Every item is looked up in the memo at once; the misses go through
    :func:`_miss_entries`, the open keys computed at the first (a fitted
    model that predicts once predicts again).
    """
    # a hashing vocabulary's memo is the call's own (empty): the general loop
    if vocab.grow or type(vocab) is not NameVocabulary or set(map(type, tokens)) - {dict}:
        return None
    if len(tokens) < _SMALL:  # one sentence: no NumPy call per step
        counts = list(map(len, tokens))
        n_items = sum(counts)
        item_ptr = np.fromiter(accumulate(counts, initial=0), np.int64, len(counts) + 1)
    else:
        item_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, tokens), np.int64, len(tokens)), out=item_ptr[1:])
        n_items = int(item_ptr[-1])
    try:
        ids = item_entries(vocab.pairs, tokens, n_items)
    except TypeError:  # an unhashable value: a list, a dict
        return None
    miss = (ids == ABSENT).nonzero()[0]
    if not len(miss):
        return ids, item_ptr
    if vocab.derive is not None:
        again = derived_lookup(vocab, tokens, len(ids))
        if again is not None:
            ids = again
            miss = (ids == ABSENT).nonzero()[0]
            if not len(miss):
                return ids, item_ptr
    items, miss_tok = _missed_items(tokens, item_ptr, miss)
    out, n_out, slow = _miss_entries(
        X, vocab, vectorizer, items,
        lambda: _where(seq_ptr, miss_tok), compute_open=True)
    if slow or (n_out is not None and max(n_out) > 1):
        return None
    if n_out is not None:  # one entry or none (an unknown attribute) each
        entry = iter(out)
        out = [next(entry) if n else ABSENT for n in n_out]
    ids[miss] = out
    return ids, item_ptr


def _missed_items(tokens, item_ptr, miss):
    """``(items, miss_tok)``: the ``(key, value)`` items at positions ``miss``
    (increasing) among the items of the dict ``tokens``, whose items start at
    ``item_ptr``, in order, and the token of each. C loops (``map``), no
    Python code per item, reading only the tokens with a miss."""
    miss_tok = item_ptr.searchsorted(miss, side="right") - 1
    dicts = list(map(tokens.__getitem__, miss_tok.tolist()))
    keys = list(map(getitem, map(list, dicts), (miss - item_ptr[miss_tok]).tolist()))
    return list(zip(keys, map(getitem, dicts, keys))), miss_tok


def _kept_entries(ids, item_ptr, keep):
    """``(tok_ptr, ids[keep])``: the entries ``keep`` (a bool mask over
    ``ids``) of tokens whose items start at ``item_ptr``."""
    kept = np.empty(len(ids) + 1, dtype=np.int64)  # kept entries before each item
    kept[0] = 0
    keep.cumsum(out=kept[1:])
    return kept[item_ptr], ids[keep]


def _miss_entries(X, vocab, vectorizer, items, where, compute_open=False):
    """The entries of the ``(key, value)`` items that missed the memo, in order:
    the one rule of a miss, for the batches and for one sentence.

    When every miss is a str key with a str value (the common miss: a word
    not seen yet) and the vocabulary is by name, their names
    (:data:`~sklearn_crf._features.attributes.str_attribute`) are looked up
    all at once, which is what :func:`_encode_item` does for each in turn
    (and none of them can fail): growing, a new name gets the next id in
    order of first appearance and the memo gets the pairs in that order;
    otherwise a name is known (its id) or not (:data:`ABSENT`), and, once the
    fitted ``vectorizer``'s :func:`~sklearn_crf._features.vocabulary.open_keys`
    are known (or computed now, with ``compute_open``), none is when no key
    is one of them, without building the names (:func:`_unnamed_misses`).
    Other misses
    run :func:`_encode_item` one by one, in order; ``where()`` gives the
    sequence and the token within it of each (for its errors).

    Returns ``(out, n_out, slow)``: the entries one after another; None when
    each item has one entry of ``out`` (:data:`ABSENT`: an unknown name of the
    fast path), else the number of entries of each item; ``(index into out,
    value)`` of the entries whose value is not 1 (or 0).
    """
    if type(vocab) is NameVocabulary and set(map(type, chain.from_iterable(items))) == {str}:
        if not vocab.grow:
            if _unnamed_misses(vectorizer, vocab, map(itemgetter(0), items),
                               compute_open):
                return [ABSENT] * len(items), None, []
            return list(map(vocab.ids.get, map(str_attribute, items), repeat(ABSENT))), None, []
        names = map(str_attribute, items)
        out = vocab.add(names)
        add_items(vocab.pairs, items, out)
        return out, None, []
    out, slow, n_out = [], [], []
    for (key, value), s, t in zip(items, *where()):
        before = len(out)
        _encode_item(X, vocab, key, value, s, t, out, slow)
        n_out.append(len(out) - before)
    if n_out.count(1) == len(n_out):
        return out, None, slow
    return out, n_out, slow


def _unnamed_misses(vectorizer, vocab, keys, compute=True):
    """True when str items of these keys that missed the memo of a fitted
    vocabulary by name (``vocab``, of ``vectorizer``) can name no attribute:
    no key is one of :func:`~sklearn_crf._features.vocabulary.open_keys`.
    Without ``compute``, False while those keys are not known yet: the
    encode of a batch looks its misses up by name rather than pay the pass
    over every name (a prediction pays it once, at its first miss)."""
    if vectorizer is None:
        return False
    keys_open = open_keys(vectorizer, vocab.pairs, compute)
    return keys_open is not None and keys_open.isdisjoint(keys)


def _resolve_misses(X, vocab, vectorizer, tokens, counts, ids, miss, first_token, seq_ptr):
    """A batch of dict tokens whose items ``miss`` are not in the memo: each miss
    replaced by its entries of :func:`_miss_entries` (none, one or several).
    Returns the batch's entries, entries per token and (position, value) of
    its entries whose value is not 1. The missed items are gathered in C
    loops (:func:`_missed_items`)."""
    item_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(counts, out=item_ptr[1:])
    items, miss_tok = _missed_items(tokens, item_ptr, miss)
    out, n_out, slow = _miss_entries(
        X, vocab, vectorizer, items,
        lambda: _where(seq_ptr, miss_tok + first_token))
    if n_out is None:
        ids[miss] = out
        if ABSENT in out:  # unknown attributes: dropped
            unknown = ids[miss] == ABSENT
            ids = ids[ids != ABSENT]
            counts = counts - np.bincount(miss_tok[unknown], minlength=len(counts))
        return ids, counts, [(int(miss[i]), x) for i, x in slow]
    n_out = np.array(n_out, dtype=np.int64)
    sizes = np.ones(len(ids), dtype=np.int64)
    sizes[miss] = n_out
    ends = np.cumsum(sizes)
    starts = ends - sizes  # where each item's entries go
    merged = np.empty(int(ends[-1]), dtype=ids.dtype)
    hit = np.ones(len(ids), dtype=bool)
    hit[miss] = False
    merged[starts[hit]] = ids[hit]
    out_first = np.cumsum(n_out) - n_out  # index into out of each miss's first entry
    out_pos = (np.repeat(starts[miss] - out_first, n_out)
               + np.arange(len(out), dtype=np.int64))  # where each entry of out goes
    merged[out_pos] = out
    bounds = np.concatenate(([0], ends))[item_ptr]
    return merged, np.diff(bounds), [(int(out_pos[i]), x) for i, x in slow]


def _as_int64(part):
    """An ndarray as it is, or an ``array("q")`` as an int64 ndarray, without a copy."""
    if isinstance(part, np.ndarray):
        return part
    return np.frombuffer(part, dtype=np.int64) if len(part) else np.zeros(0, np.int64)


def _where(seq_ptr, tokens):
    """Lists of (sequence, token within it) of token indices ``tokens`` (an
    array) of X, of sequences ``seq_ptr``."""
    s = np.searchsorted(seq_ptr, tokens, side="right") - 1
    return s.tolist(), (tokens - seq_ptr[s]).tolist()


def _encode_tokens(X, vocab, first_seq, stop_seq):
    """Sequences ``first_seq:stop_seq`` of X token by token (any token form):
    their entries (a list), entries per token and (position, value) of the
    entries whose value is not 1."""
    memo = vocab.pairs
    lookup = vocab.lookup
    out = array("q")  # the int64 entries, without a Python int object each
    extend = out.extend
    slow = []
    counts = array("q")
    for s in range(first_seq, stop_seq):
        for t, token in enumerate(X[s]):
            before = len(out)
            if type(token) is dict or isinstance(token, Mapping):
                try:
                    ids = token_entries(memo, token)
                except TypeError:  # an unhashable value: a list, a dict
                    ids = None
                if ids is not None and None not in ids:
                    extend(ids)
                else:
                    for (key, value), idx in zip(token.items(), ids or repeat(None)):
                        if idx is None:
                            _encode_item(X, vocab, key, value, s, t, out, slow)
                        else:
                            out.append(idx)
            else:
                for name, _ in list_token(token, s, t):
                    idx = lookup(name)
                    if idx is not None:
                        out.append(idx)
            counts.append(len(out) - before)
    return out, counts, slow


def _encode_item(X, vocab, key, value, s, t, out, slow):
    """CRFsuite's rules for one ``(key, value)`` item of token ``X[s][t]``: its
    entries appended to ``out`` (``~id`` for a zero), ``(index, value)`` to
    ``slow`` for a value other than 1; unknown attributes dropped. A str key
    with a str, bool, int or float value joins the memo (when it fills)."""
    tv = type(value)
    if type(key) is str and tv is str:
        idx = vocab.lookup(str_attribute((key, value)))
        if idx is not None:
            out.append(idx)
            if vocab.fill_memo:
                add_item(vocab.pairs, key, value, idx)
        return
    if type(key) is str and (tv is float or tv is int or tv is bool):
        x = float(value)  # OverflowError: an int beyond float64, see the vectorizer's _encode
        idx = _append_valued(X, vocab, key, x, out, slow)
        if idx is None:
            return
        if vocab.fill_memo and (x == 1.0 or x == 0.0):
            add_item(vocab.pairs, key, bool(x), idx if x else ~idx)
        return
    for name, x in flatten_feature(key, value, s, t):
        _append_valued(X, vocab, name, x, out, slow)


def _append_valued(X, vocab, name, x, out, slow):
    """The entry of attribute ``name`` with value ``x`` appended to ``out``
    (``~id`` for a zero; ``(index, x)`` to ``slow`` for a value other than 1);
    returns its id, or None for an unknown attribute (dropped). A value that
    is not finite is an error (:func:`~sklearn_crf._features.attributes.raise_bad_value`)."""
    if not math.isfinite(x):
        raise_bad_value(X)
    idx = vocab.lookup(name)
    if idx is None:
        return None
    if x == 0.0:
        out.append(~idx)
    else:
        if x != 1.0:
            slow.append((len(out), x))
        out.append(idx)
    return idx


def _split_zero_entries(tok_ptr, entries, slow_pos, slow_val):
    """The arrays of an :class:`~sklearn_crf.EncodedCorpus` from entries (int32
    or int64): ``tok_ptr``, ``tok_attr``, ``tok_val`` of the non-zero entries
    (value 1 but ``slow_val`` at ``slow_pos``) and ``zero_tok``, ``zero_attr``
    of the zero entries (``~a`` for attribute ``a``)."""
    keep = entries >= 0
    if np.count_nonzero(keep) == len(entries):  # (cheaper than keep.all() on a sentence)
        tok_val = np.empty(len(entries), dtype=np.float64)
        tok_val.fill(1.0)
        if len(slow_pos):
            tok_val[slow_pos] = slow_val
        return (tok_ptr, entries.astype(np.int32, copy=False), tok_val,
                np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))
    if len(entries) < _SMALL_SPLIT:  # one sentence: fewer NumPy calls
        zero = (~keep).nonzero()[0]
        zero_tok = tok_ptr.searchsorted(zero, side="right") - 1
        nz_ptr = tok_ptr - zero.searchsorted(tok_ptr)
        zero_attr = (~entries[zero]).astype(np.int32, copy=False)
        if len(slow_pos):
            slow_pos = slow_pos - zero.searchsorted(slow_pos)
        tok_attr = entries[keep].astype(np.int32, copy=False)
    else:  # no binary search per entry
        # non-zero entries before each entry (int32 when they fit: the largest
        # array here, freed before the corpus's arrays are made)
        kept = np.empty(len(entries) + 1,
                        dtype=np.int32 if len(entries) < 2**31 else np.int64)
        kept[0] = 0
        np.cumsum(keep, dtype=kept.dtype, out=kept[1:])
        nz_ptr = kept[tok_ptr].astype(np.int64, copy=False)
        if len(slow_pos):
            slow_pos = kept[slow_pos]
        del kept
        zero_ptr = tok_ptr - nz_ptr  # zero entries before each token
        zero_tok = np.arange(len(tok_ptr) - 1, dtype=np.int64).repeat(
            zero_ptr[1:] - zero_ptr[:-1])
        del zero_ptr
        tok_attr = entries[keep].astype(np.int32, copy=False)
        zero_attr = entries[np.logical_not(keep, out=keep)]  # keep is not needed after
        del keep
        zero_attr = np.invert(zero_attr, out=zero_attr).astype(np.int32, copy=False)
    tok_val = np.empty(len(tok_attr), dtype=np.float64)
    tok_val.fill(1.0)
    if len(slow_pos):
        # a slow entry (a value neither 1 nor 0) moved back by the zero entries before it
        tok_val[slow_pos] = slow_val
    return (nz_ptr, tok_attr, tok_val, zero_tok, zero_attr)
