"""The corpus types: what X becomes on its way to the engine.

:class:`EncodedCorpus` is a corpus as arrays (CSR-style entries per token,
zero-valued entries apart, an optional dense block): what training, inference
and the corpus store read, whatever route encoded it. :class:`FeatureDicts` is
what the featurizers' ``transform`` returns: the sentences' feature dicts,
built only if read, so that a tagger can encode the tokens without them.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
import scipy.sparse as sp


class FeatureDicts(Sequence):
    """The feature dicts of sentences, built when first read.

    What the featurizers' ``transform`` returns (without word vectors): a
    read-only sequence of the sentences' lists of feature dicts, equal to
    that list (``==``, ``repr``, ``list(X)``, ``X + [...]``; pickled or
    copied, it is that list). The dicts are built the first time X is read;
    a :class:`~sklearn_crf.SequenceVectorizer` (so a :class:`~sklearn_crf.CRFTagger`,
    e.g. the next step of a Pipeline) that gets X before that encodes the
    sentences' tokens straight to its attribute ids, never building the
    dicts, and one that is fitted on X learns its vocabulary from the tokens
    the same way: the same corpus and vocabulary, in less time.

    Parameters
    ----------
    n_sequences : int
        The number of sentences.
    sentences : object
        The featurizer's sentences, with ``dicts()``: the list of their lists
        of feature dicts; ``encode(vectorizer)``: an :class:`EncodedCorpus` of
        those dicts under a fitted vectorizer's vocabulary (unknown
        attributes dropped), or None (then the vectorizer encodes the dicts);
        ``fit_encode(vectorizer)``: the corpus of those dicts with
        ``vectorizer`` (not fitted) fitted on them, as its ``fit_encode`` of
        the dicts fits it; ``entries(vectorizer)``: the
        :class:`~sklearn_crf._features.encode_dicts.ScoringEntries` of those
        dicts under a fitted vectorizer, or None. None of them builds a dict.

    Examples
    --------
    >>> from sklearn_crf import SequenceFeaturizer
    >>> X = SequenceFeaturizer().transform([["Hi", "there"]])
    >>> len(X), sorted(X[0][0])[:3]
    (1, ['+1:word.istitle()', '+1:word.isupper()', '+1:word.lower()'])
    >>> X == [X[0]], type(list(X))
    (True, <class 'list'>)
    """

    __slots__ = ("_n", "_sentences", "_list")

    def __init__(self, n_sequences, sentences):
        self._n = n_sequences
        self._sentences = sentences
        self._list = None

    def _dicts(self):
        """The list of the sentences' dicts (built once)."""
        if self._list is None:
            self._list = self._sentences.dicts()
            self._sentences = None
        return self._list

    def _fit_encoded(self, vectorizer):
        """The corpus of the tokens with ``vectorizer`` fitted on them (None
        once the dicts exist: they may have been changed in place)."""
        if self._list is not None:
            return None
        return self._sentences.fit_encode(vectorizer)

    def _encoded(self, vectorizer):
        """The corpus of the tokens under ``vectorizer`` (None once the dicts
        exist: they may have been changed in place)."""
        if self._list is not None:
            return None
        return self._sentences.encode(vectorizer)

    def _entries(self, vectorizer):
        """The scoring entries of the tokens under ``vectorizer`` (None once
        the dicts exist, or when the featurizer gives none)."""
        if self._list is not None:
            return None
        return self._sentences.entries(vectorizer)

    def __len__(self):
        return self._n

    def __getitem__(self, index):
        return self._dicts()[index]

    def __iter__(self):
        return iter(self._dicts())

    def __reversed__(self):
        return reversed(self._dicts())

    def __contains__(self, value):
        return value in self._dicts()

    def __eq__(self, other):
        if isinstance(other, FeatureDicts):
            other = other._dicts()
        return self._dicts() == other

    __hash__ = None

    def __add__(self, other):
        if isinstance(other, FeatureDicts):
            other = other._dicts()
        return self._dicts() + other

    def __radd__(self, other):
        return other + self._dicts()

    def __repr__(self):
        return repr(self._dicts())

    def __reduce__(self):
        return list, (self._dicts(),)


def _empty(dtype):
    return field(default_factory=lambda: np.zeros(0, dtype=dtype))


@dataclass(frozen=True, eq=False)
class EncodedCorpus:
    """Sequences of feature dicts as arrays: what every consumer of X reads.

    Produced by :meth:`~sklearn_crf.SequenceVectorizer.fit_encode` and
    :meth:`~sklearn_crf.SequenceVectorizer.encode`. Tokens → attributes is CSR-style: the
    attributes of token ``t`` are ``tok_attr[tok_ptr[t]:tok_ptr[t + 1]]`` with
    values ``tok_val[...]`` (in the order of the token's dict; a repeated
    attribute is repeated, so its values add up, as in CRFsuite). The tokens of
    sequence ``s`` are ``seq_ptr[s]:seq_ptr[s + 1]``.

    Entries whose value is 0 are not stored in ``tok_attr``/``tok_val`` (they
    add nothing to a score) but listed in ``zero_tok``/``zero_attr``: CRFsuite
    gives an (attribute, label) pair a weight even when the attribute was only
    seen with value 0 for that label.

    Attributes
    ----------
    tok_ptr : ndarray of shape (n_tokens + 1,), dtype int64
        Start of each token's entries.
    tok_attr : ndarray of shape (n_entries,), dtype int32
        Attribute id of each non-zero entry.
    tok_val : ndarray of shape (n_entries,), dtype float64
        Value of each non-zero entry (finite, not 0).
    seq_ptr : ndarray of shape (n_sequences + 1,), dtype int64
        Start of each sequence's tokens.
    n_attributes : int
        Number of attribute ids (ids are in ``range(n_attributes)``).
    zero_tok : ndarray of shape (n_zeros,), dtype int64
        Token index of each entry with value 0.
    zero_attr : ndarray of shape (n_zeros,), dtype int32
        Attribute id of each entry with value 0.
    dense : ndarray of shape (n_tokens, n_dense), dtype float32 or float64, or None
        The dense part (C-contiguous), one row per token: the arrays given
        per sequence to :class:`~sklearn_crf.SequenceVectorizer`, one after another. None
        when there is none.
    vectorizer : SequenceVectorizer or None
        The fitted vectorizer whose vocabulary the attribute ids refer to (set
        by :meth:`~sklearn_crf.SequenceVectorizer.fit_encode` and
        :meth:`~sklearn_crf.SequenceVectorizer.encode`), or None.

    A corpus is a collection of sequences, as X is to scikit-learn:
    ``len(corpus)`` and ``corpus.shape[0]`` are its number of sequences, and
    ``corpus[indices]`` (an array or list of sequence indices, in any order
    and with repeats, a boolean mask over the sequences, or a slice) is the
    corpus of those sequences in that order, with the same ``vectorizer``; so
    a pre-encoded corpus is X for cross-validation and searches
    (:func:`sklearn.utils._safe_indexing`). A slice of step 1 gives views of
    this corpus' arrays (memory-mapped arrays stay on disk). An int is not an
    index (``corpus[[i]]`` is sequence ``i``).

    Examples
    --------
    >>> from sklearn_crf import SequenceVectorizer
    >>> corpus = SequenceVectorizer().fit_encode([[{"w": "a", "n": 0}, {"w": "b"}]])
    >>> corpus.n_sequences, corpus.n_tokens, corpus.n_attributes
    (1, 2, 3)
    >>> corpus.tok_attr, corpus.zero_tok, corpus.zero_attr
    (array([0, 2], dtype=int32), array([0]), array([1], dtype=int32))

    Selecting sequences:

    >>> corpus = SequenceVectorizer().fit_encode([[{"w": "a"}], [{"w": "b"}, {"w": "c"}]])
    >>> len(corpus), corpus.shape
    (2, (2,))
    >>> sub = corpus[[1, 1]]
    >>> sub.seq_ptr, sub.tok_attr
    (array([0, 2, 4]), array([1, 2, 1, 2], dtype=int32))
    """

    tok_ptr: np.ndarray
    tok_attr: np.ndarray
    tok_val: np.ndarray
    seq_ptr: np.ndarray
    n_attributes: int
    zero_tok: np.ndarray = _empty(np.int64)
    zero_attr: np.ndarray = _empty(np.int32)
    dense: np.ndarray | None = None
    vectorizer: object = None

    def __post_init__(self):
        dense = self.dense
        if dense is None:
            return
        if not isinstance(dense, np.ndarray) or dense.ndim != 2:
            raise ValueError(
                "EncodedCorpus.dense must be a 2-D ndarray (n_tokens, n_dense) or None, "
                f"got {type(dense).__name__} of {getattr(dense, 'ndim', '?')} dimensions"
            )
        if dense.dtype not in (np.float32, np.float64) or not dense.flags.c_contiguous:
            raise ValueError(
                "EncodedCorpus.dense must be a C-contiguous float32 or float64 array, "
                f"got a {'' if dense.flags.c_contiguous else 'non-contiguous '}{dense.dtype} one"
            )
        if dense.shape[0] != self.n_tokens:
            raise ValueError(
                f"EncodedCorpus.dense has {dense.shape[0]} rows for {self.n_tokens} tokens"
            )

    def __len__(self):
        return self.seq_ptr.shape[0] - 1

    @property
    def shape(self):
        """``(n_sequences,)``: a corpus is a 1-D collection of sequences."""
        return (self.seq_ptr.shape[0] - 1,)

    def __getitem__(self, key):
        if type(key) is tuple and len(key) == 2 and key[1] is Ellipsis:
            key = key[0]  # scikit-learn's _safe_indexing asks for X[key, ...]
        n_seq = self.n_sequences
        if isinstance(key, slice):
            start, stop, step = key.indices(n_seq)
            if step == 1:
                return _sequence_range(self, start, max(start, stop))
            return _select_sequences(self, np.arange(start, stop, step, dtype=np.int64))
        if isinstance(key, (Integral, np.integer)) or not isinstance(
                key, (Sequence, np.ndarray)) or isinstance(key, (str, bytes)):
            raise TypeError(
                f"an EncodedCorpus is indexed by an array of sequence indices, a "
                f"boolean mask or a slice, not a {type(key).__name__} "
                "(corpus[[i]] is the corpus of sequence i)"
            )
        key = np.asarray(key)
        if key.ndim != 1:
            raise IndexError(f"the index of an EncodedCorpus must be 1-D, got shape {key.shape}")
        if key.dtype == bool:
            if key.shape[0] != n_seq:
                raise IndexError(
                    f"a boolean mask of {key.shape[0]} entries for a corpus of "
                    f"{n_seq} sequences"
                )
            key = np.flatnonzero(key)
        elif key.size == 0:
            key = np.zeros(0, dtype=np.int64)
        elif key.dtype.kind not in "iu":
            raise IndexError(
                f"sequence indices must be integers or booleans, got dtype {key.dtype}"
            )
        key = key.astype(np.int64)
        bad = np.flatnonzero((key < -n_seq) | (key >= n_seq))
        if len(bad):
            raise IndexError(
                f"sequence index {key[bad[0]]} is out of range for a corpus of "
                f"{n_seq} sequences"
            )
        return _select_sequences(self, np.where(key < 0, key + n_seq, key))

    @classmethod
    def concatenate(cls, corpora):
        """The corpus of the sequences of ``corpora``, one corpus after another.

        The attribute ids must share one vocabulary (e.g. the chunks of
        :meth:`~sklearn_crf.SequenceVectorizer.partial_fit_encode`, whose vocabulary only
        grows): ``n_attributes`` and ``vectorizer`` are those of the last
        corpus, which must have the most attributes; the dense parts must
        agree in their number of columns (float32 when all are float32).

        Parameters
        ----------
        corpora : sequence of EncodedCorpus
            At least one.

        Returns
        -------
        corpus : EncodedCorpus
            Their sequences, in order.

        Examples
        --------
        >>> from sklearn_crf import SequenceVectorizer
        >>> from sklearn_crf import EncodedCorpus
        >>> vec = SequenceVectorizer()
        >>> parts = [vec.partial_fit_encode([[{"w": "a"}]]),
        ...          vec.partial_fit_encode([[{"w": "b"}]])]
        >>> EncodedCorpus.concatenate(parts).tok_attr
        array([0, 1], dtype=int32)
        """
        corpora = list(corpora)
        if not corpora:
            raise ValueError("no corpus to concatenate")
        last = corpora[-1]
        if any(c.n_attributes > last.n_attributes for c in corpora):
            raise ValueError("the last corpus must have the most attributes")
        if len({c.n_dense for c in corpora}) > 1 or len(
                {c.dense is None for c in corpora}) > 1:
            raise ValueError("the corpora have different numbers of dense columns")
        tok_starts = np.cumsum([0] + [c.n_tokens for c in corpora])
        entry_starts = np.cumsum([0] + [len(c.tok_attr) for c in corpora])

        def pointers(name, starts):
            parts = [getattr(c, name)[:-1] + starts[i] for i, c in enumerate(corpora)]
            return np.concatenate(parts + [np.array([starts[-1]], dtype=np.int64)])

        dense = None
        if last.dense is not None:
            dtype = (np.float32 if all(c.dense.dtype == np.float32 for c in corpora)
                     else np.float64)
            dense = np.concatenate([c.dense for c in corpora], dtype=dtype)
        return cls(
            tok_ptr=pointers("tok_ptr", entry_starts),
            tok_attr=np.concatenate([c.tok_attr for c in corpora]),
            tok_val=np.concatenate([c.tok_val for c in corpora]),
            seq_ptr=pointers("seq_ptr", tok_starts),
            n_attributes=last.n_attributes,
            zero_tok=np.concatenate([c.zero_tok + tok_starts[i]
                                     for i, c in enumerate(corpora)]),
            zero_attr=np.concatenate([c.zero_attr for c in corpora]),
            dense=dense,
            vectorizer=last.vectorizer,
        )

    @property
    def n_dense(self):
        """Number of dense columns (0 when ``dense`` is None)."""
        return 0 if self.dense is None else self.dense.shape[1]

    @property
    def n_tokens(self):
        """Number of tokens."""
        return self.tok_ptr.shape[0] - 1

    @property
    def n_sequences(self):
        """Number of sequences."""
        return self.seq_ptr.shape[0] - 1

    @property
    def nbytes(self):
        """Bytes held by the arrays."""
        return sum(
            a.nbytes for a in (self.tok_ptr, self.tok_attr, self.tok_val, self.seq_ptr,
                               self.zero_tok, self.zero_attr)
        ) + (0 if self.dense is None else self.dense.nbytes)

    def to_csr(self):
        """The token-by-attribute matrix, one row per token (zeros not stored).

        The attributes only: the dense part, if any, is ``dense``
        (:meth:`~sklearn_crf.SequenceVectorizer.transform` appends it as columns).

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_tokens, n_attributes)
            Repeated attributes of a token are summed.
        """
        return sp.csr_matrix(
            (self.tok_val, self.tok_attr, self.tok_ptr),
            shape=(self.n_tokens, self.n_attributes),
        )


def _spans(starts, lengths):
    """The indices ``starts[i]:starts[i] + lengths[i]``, one span after another."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)


def _select_sequences(corpus, seqs):
    """The :class:`EncodedCorpus` of sequences ``seqs`` (int64 indices in range,
    any order, repeats allowed) of ``corpus``, in that order."""
    seq_ptr, tok_ptr = corpus.seq_ptr, corpus.tok_ptr
    starts = seq_ptr[seqs]
    lengths = seq_ptr[seqs + 1] - starts
    toks = _spans(starts, lengths)
    entry_starts = tok_ptr[toks]
    entry_counts = tok_ptr[toks + 1] - entry_starts
    entries = _spans(entry_starts, entry_counts)
    new_tok_ptr = np.zeros(len(toks) + 1, dtype=np.int64)
    np.cumsum(entry_counts, out=new_tok_ptr[1:])
    new_seq_ptr = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_seq_ptr[1:])
    zero_tok, zero_attr = corpus.zero_tok[:0].copy(), corpus.zero_attr[:0].copy()
    if len(corpus.zero_tok):
        zero_ptr = np.searchsorted(corpus.zero_tok, np.arange(corpus.n_tokens + 1))
        zero_starts = zero_ptr[toks]
        zero_counts = zero_ptr[toks + 1] - zero_starts
        zero_tok = np.repeat(np.arange(len(toks), dtype=np.int64), zero_counts)
        zero_attr = corpus.zero_attr[_spans(zero_starts, zero_counts)]
    return EncodedCorpus(
        tok_ptr=new_tok_ptr,
        tok_attr=corpus.tok_attr[entries],
        tok_val=corpus.tok_val[entries],
        seq_ptr=new_seq_ptr,
        n_attributes=corpus.n_attributes,
        zero_tok=zero_tok,
        zero_attr=zero_attr,
        dense=None if corpus.dense is None else np.ascontiguousarray(corpus.dense[toks]),
        vectorizer=corpus.vectorizer,
    )


def _sequence_range(corpus, start, stop):
    """Sequences ``start:stop`` of ``corpus``: views of its arrays (new pointers)."""
    t0, t1 = int(corpus.seq_ptr[start]), int(corpus.seq_ptr[stop])
    e0, e1 = int(corpus.tok_ptr[t0]), int(corpus.tok_ptr[t1])
    z0, z1 = (int(z) for z in np.searchsorted(corpus.zero_tok, [t0, t1]))
    return EncodedCorpus(
        tok_ptr=np.subtract(corpus.tok_ptr[t0:t1 + 1], e0),
        tok_attr=corpus.tok_attr[e0:e1],
        tok_val=corpus.tok_val[e0:e1],
        seq_ptr=np.subtract(corpus.seq_ptr[start:stop + 1], t0),
        n_attributes=corpus.n_attributes,
        zero_tok=np.subtract(corpus.zero_tok[z0:z1], t0),
        zero_attr=corpus.zero_attr[z0:z1],
        dense=None if corpus.dense is None else corpus.dense[t0:t1],
        vectorizer=corpus.vectorizer,
    )
