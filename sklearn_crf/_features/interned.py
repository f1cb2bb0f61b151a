"""The featurizers' encoded path: interned (key, value) ids to a corpus.

:class:`~sklearn_crf.SequenceFeaturizer` and
:class:`~sklearn_crf.TemplateFeaturizer` with ``output="encoded"`` never
build feature dicts: they give each distinct (key, value) pair of a call an
id, each token a row of those ids, and :func:`encode_interned` turns the
rows into an :class:`~sklearn_crf.EncodedCorpus` with NumPy's work per entry,
giving the attributes the ids, and the vectorizer the state, that a
:class:`~sklearn_crf.SequenceVectorizer` gives their feature dicts.
"""


import numpy as np

from .corpus import EncodedCorpus
from .dense import fitted_dense_block
from .memo import memo_of_items
from .vectorizer import SequenceVectorizer
from .vocabulary import (ABSENT, MAX_ATTRIBUTES, fitted_vocabulary, new_vocabulary,
                         set_fitted_vocabulary)

#: entries mapped per NumPy call when ids replace pids in place
_MAP_SLICE = 1 << 20


#: fewer tokens than this in a call of a fitted encoded featurizer: through
#: the dicts and the vectorizer's memo (one sentence at a time), which costs
#: less than the NumPy calls of the bulk path and gives the same corpus
FEW_TOKENS = 64


def first_seen_ids(values):
    """(distinct values in order of first appearance, index of each value)."""
    uniques = list(dict.fromkeys(values))
    index = dict(zip(uniques, range(len(uniques))))
    return uniques, np.fromiter(map(index.__getitem__, values), dtype=np.int64,
                                count=len(values))


def encode_interned(matrix_chunks, seq_ptr, interned, *, vectorizer=None,
                    n_features=None, dense=None, max_entries=0, fit_into=None):
    """An :class:`EncodedCorpus` from entries given as interned ids: the encoded
    path of the featurizers, which never build feature dicts.

    The featurizers give each distinct (feature key, value) pair of a call an
    id of their own, a "pid" (a flag's True and False are two pids of one
    attribute), and each token a row of pids in the order of its feature
    dict, :data:`ABSENT` where the token has no such feature. Fitting
    (``vectorizer`` None), the attributes get ids in order of first appearance
    over the entries, token after token, as :meth:`SequenceVectorizer.fit_encode`
    gives them on the feature dicts (pids of one attribute name, or hash slot,
    share its id), and the new vectorizer's memo maps each pair to its id;
    otherwise the pids are mapped to ``vectorizer``'s ids by name (or slot),
    unknown ones dropped, as :meth:`SequenceVectorizer.encode` does. Names are
    built once per distinct pid, never per token; the work per entry is
    NumPy's, chunk by chunk, into the corpus' arrays (grown, then trimmed in
    place), so that the memory beyond the corpus stays that of a chunk.

    Parameters
    ----------
    matrix_chunks : iterable of ndarray of shape (n, k), dtype int32
        The rows of the tokens, in order (any number of chunks; ``k`` may
        change between chunks). Consumed once, after ``interned`` is complete.
    seq_ptr : ndarray of shape (n_sequences + 1,), dtype int64
    interned : object
        ``interned.n_pids``: pids are in ``range(n_pids)``, fewer than
        :data:`ABSENT`; ``interned.zero_pids()``: a bool array, whether each
        pid's value is 0 (a False flag); ``interned.info(pids)`` (an increasing
        int64 array) -> ``(names, pairs, zero)``: the attribute name of each
        pid, its memo key (``(key, str value)`` for an attribute ``key:value``,
        ``(key, bool)`` for a valued attribute ``key``) and its zero flag.
    vectorizer : SequenceVectorizer or None
        A fitted vectorizer to encode with; None fits a new one.
    n_features : int or None
        The new vectorizer's ``n_features`` (when fitting; ``fit_into``'s
        own when it is given).
    dense : ndarray of shape (n_tokens, n_dense) or None
        The dense block.
    max_entries : int, default=0
        A bound on the number of entries, if known (the rows' total size):
        the arrays start at that capacity, of which only the part filled is
        ever touched (so resident), then trimmed.
    fit_into : SequenceVectorizer or None
        When fitting, the vectorizer that becomes the fitted one, with its
        ``n_features``; None: a new one.

    Returns
    -------
    corpus : EncodedCorpus
        Its ``vectorizer`` is the new or the given one.
    """
    n_tok = int(seq_ptr[-1])
    n_pids = interned.n_pids
    if n_pids >= ABSENT:
        raise ValueError("more than 2**31 - 2 distinct (feature, value) pairs")
    zero_pid = interned.zero_pids()
    fitting = vectorizer is None
    if fitting:
        first = np.full(n_pids, np.iinfo(np.int64).max, dtype=np.int64)
        table = None
    else:
        dense = fitted_dense_block([[None]] if n_tok else [], dense,
                                   vectorizer.__dict__.get("n_dense_features_", 0))
        table = _interned_table(vectorizer, interned, np.arange(n_pids, dtype=np.int64))
    arrays = _GrowingArrays(max_entries)
    nz_counts = np.zeros(n_tok, dtype=np.int64)
    n_seen = n_done = 0  # entries seen (fitting: their positions), tokens done
    for matrix in matrix_chunks:
        n = matrix.shape[0]
        present = matrix != ABSENT
        counts = present.sum(axis=1)
        pids = matrix[present]
        del matrix, present
        if fitting:
            np.minimum.at(first, pids,
                          np.arange(n_seen, n_seen + len(pids), dtype=np.int64))
            n_seen += len(pids)
        zero = zero_pid[pids]
        if not fitting:
            pids = table[pids]  # the vectorizer's ids
            known = pids != ABSENT
            if not known.all():
                tok = np.repeat(np.arange(n, dtype=np.int64), counts)
                counts = counts - np.bincount(tok[~known], minlength=n)
                pids, zero = pids[known], zero[known]
        if zero.any():
            tok = np.repeat(np.arange(n, dtype=np.int64), counts)
            zero_tok = tok[zero]
            counts = counts - np.bincount(zero_tok, minlength=n)
            arrays.add_zero(zero_tok + n_done, pids[zero])
            pids = pids[~zero]
        arrays.add_entries(pids)
        nz_counts[n_done:n_done + n] = counts
        n_done += n
    if n_done != n_tok:
        raise ValueError(f"the token rows cover {n_done} tokens, seq_ptr {n_tok}")
    tok_attr, zero_tok, zero_attr = arrays.trimmed()
    if fitting:
        used = np.flatnonzero(first < np.iinfo(np.int64).max)
        names, pairs, zero = interned.info(used)
        order = np.argsort(first[used], kind="stable").tolist()  # first appearance
        del first
        if fit_into is not None:
            n_features = fit_into.n_features
        vocab = new_vocabulary(n_features)
        new = np.empty(len(order), dtype=np.int64)
        new[order] = vocab.add([names[i] for i in order])
        if len(vocab.ids) > MAX_ATTRIBUTES:
            raise ValueError("more than 2**31 - 1 distinct attributes")
        table = np.full(n_pids, ABSENT, dtype=np.int32)
        table[used] = new
        for part in (tok_attr, zero_attr):
            for start in range(0, len(part), _MAP_SLICE):
                chunk = part[start:start + _MAP_SLICE]
                chunk[...] = table[chunk]
        if n_features is None:
            vocab.pairs = memo_of_items(pairs, np.where(zero, ~new, new).tolist())
        vectorizer = SequenceVectorizer(n_features=n_features) if fit_into is None else fit_into
        set_fitted_vocabulary(vectorizer, vocab, 0 if dense is None else dense.shape[1])
    tok_ptr = np.zeros(n_tok + 1, dtype=np.int64)
    np.cumsum(nz_counts, out=tok_ptr[1:])
    del nz_counts
    tok_val = np.empty(len(tok_attr), dtype=np.float64)
    tok_val.fill(1.0)
    return EncodedCorpus(
        tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=tok_val, seq_ptr=seq_ptr,
        n_attributes=vectorizer.n_attributes_, zero_tok=zero_tok, zero_attr=zero_attr,
        dense=dense, vectorizer=vectorizer,
    )


def _interned_table(vectorizer, interned, pids):
    """pid -> the fitted ``vectorizer``'s attribute id (int32; ABSENT: unknown)."""
    names, _, _ = interned.info(pids)
    table = np.full(interned.n_pids, ABSENT, dtype=np.int32)
    table[pids] = np.fromiter(fitted_vocabulary(vectorizer).find(names, ABSENT),
                              dtype=np.int64, count=len(names))
    return table


class _GrowingArrays:
    """The entry arrays of :func:`encode_interned`, filled chunk after chunk
    from a capacity (a bound on the entries, so never grown when it is one;
    otherwise doubled) and trimmed at the end by ``ndarray.resize`` (a
    realloc: the part filled stays where it is)."""

    def __init__(self, capacity=0):
        # a bound, but not a reservation beyond what a strict overcommit allows
        capacity = min(max(int(capacity), 1 << 12), 1 << 26)
        self.attr = np.empty(capacity, dtype=np.int32)  # untouched pages: not resident
        self.zero_tok = np.empty(capacity, dtype=np.int64)
        self.zero_attr = np.empty(capacity, dtype=np.int32)
        self.n = self.n_zero = 0

    @staticmethod
    def _fit(array, size):
        if size > len(array):
            array.resize((max(size, 2 * len(array)),), refcheck=False)
        return array

    def add_entries(self, attr):
        n = self.n + len(attr)
        self._fit(self.attr, n)[self.n:n] = attr
        self.n = n

    def add_zero(self, tok, attr):
        n = self.n_zero + len(tok)
        self._fit(self.zero_tok, n)[self.n_zero:n] = tok
        self._fit(self.zero_attr, n)[self.n_zero:n] = attr
        self.n_zero = n

    def trimmed(self):
        self.attr.resize((self.n,), refcheck=False)
        self.zero_tok.resize((self.n_zero,), refcheck=False)
        self.zero_attr.resize((self.n_zero,), refcheck=False)
        return self.attr, self.zero_tok, self.zero_attr
