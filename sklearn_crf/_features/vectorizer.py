"""SequenceVectorizer: sequences of feature dicts → an :class:`EncodedCorpus`."""

import math
import weakref
from array import array
from functools import partial
from itertools import accumulate, chain, compress, islice, repeat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numbers import Integral

from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils import murmurhash3_32
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .validation import check_sequences
from .forms import is_dense_part, is_pair, sequence_length

_NUMBER_TYPES = (int, float, np.integer, np.floating, np.bool_)
_MAX_ATTRIBUTES = 2**31 - 1  # attribute ids are int32
_CONTAINER_TYPES = (list, tuple, set, frozenset)


class FeatureDicts(Sequence):
    """The feature dicts of sentences, built when first read.

    What the featurizers' ``transform`` returns (without word vectors): a
    read-only sequence of the sentences' lists of feature dicts, equal to
    that list (``==``, ``repr``, ``list(X)``, ``X + [...]``; pickled or
    copied, it is that list). The dicts are built the first time X is read;
    a :class:`SequenceVectorizer` (so a :class:`~sklearn_crf.CRFTagger`,
    e.g. the next step of a Pipeline) that gets X before that encodes the
    sentences' tokens straight to its attribute ids, never building the
    dicts: the same corpus, in less time.

    Parameters
    ----------
    n_sequences : int
        The number of sentences.
    build : callable
        ``build()``: the list of the sentences' lists of feature dicts.
    encode : callable
        ``encode(vectorizer)``: an :class:`EncodedCorpus` of those dicts
        under a fitted vectorizer's vocabulary (unknown attributes dropped),
        without building them, or None (then the vectorizer encodes the
        dicts).

    Examples
    --------
    >>> from sklearn_crf import SequenceFeaturizer
    >>> X = SequenceFeaturizer().transform([["Hi", "there"]])
    >>> len(X), sorted(X[0][0])[:3]
    (1, ['+1:word.istitle()', '+1:word.isupper()', '+1:word.lower()'])
    >>> X == [X[0]], type(list(X))
    (True, <class 'list'>)
    """

    __slots__ = ("_n", "_build", "_encode_by", "_list")

    def __init__(self, n_sequences, build, encode):
        self._n = n_sequences
        self._build = build
        self._encode_by = encode
        self._list = None

    def _dicts(self):
        """The list of the sentences' dicts (built once)."""
        if self._list is None:
            self._list = self._build()
            self._build = self._encode_by = None
        return self._list

    def _encoded(self, vectorizer):
        """The corpus of the tokens under ``vectorizer`` (None once the dicts
        exist: they may have been changed in place)."""
        if self._list is not None:
            return None
        return self._encode_by(vectorizer)

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

    Produced by :meth:`SequenceVectorizer.fit_encode` and
    :meth:`SequenceVectorizer.encode`. Tokens → attributes is CSR-style: the
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
        per sequence to :class:`SequenceVectorizer`, one after another. None
        when there is none.
    vectorizer : SequenceVectorizer or None
        The fitted vectorizer whose vocabulary the attribute ids refer to (set
        by :meth:`SequenceVectorizer.fit_encode` and
        :meth:`SequenceVectorizer.encode`), or None.

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
        :meth:`SequenceVectorizer.partial_fit_encode`, whose vocabulary only
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
        >>> from sklearn_crf._features.vectorizer import EncodedCorpus
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
        (:meth:`SequenceVectorizer.transform` appends it as columns).

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


class SequenceVectorizer(TransformerMixin, BaseEstimator):
    """Turn sequences of feature dicts into a sparse matrix over tokens.

    The semantics are those of python-crfsuite's ``ItemSequence`` (and so of
    sklearn-crfsuite), so feature functions written for sklearn-crfsuite work
    unchanged. A token is a dict of features or a list of attribute names. For
    a key ``k`` of a token's dict:

    * a ``str`` value ``v`` is the attribute ``"k:v"`` with value 1 (``bytes`` are
      decoded as UTF-8 first);
    * a number ``x`` (``int``, ``float``, ``bool`` or a NumPy scalar) is the
      attribute ``"k"`` with value ``x``; a bool is 1.0 or 0.0, so
      ``{attribute: weight}`` dicts give each attribute its weight;
    * a list, tuple or set of strings ``[v1, v2]`` gives the attributes ``"k:v1"``
      and ``"k:v2"`` with value 1 each;
    * a nested dict ``{"k2": v}`` gives the attributes of ``{"k:k2": v}``,
      recursively.

    A token given as a list (or tuple) of strings, ``["word=madrid",
    "shape=Xx"]``, has those attributes with value 1 each. Keys, values and
    names given as ``bytes`` are decoded as UTF-8.

    Attributes with value 0 (whatever the type of the zero: ``False``, ``0``,
    ``0.0``, ``np.False_``, ``np.float64(0)``, at any depth of nested dicts)
    join the vocabulary in :meth:`fit`, as in CRFsuite, but are not stored in
    the matrix (they add nothing to a score); the :class:`EncodedCorpus` of
    :meth:`fit_encode` and :meth:`encode` lists them apart.
    Repeated attributes within a token are kept as separate entries, so their
    values add up, as in CRFsuite. Attributes not seen in :meth:`fit` are
    ignored by :meth:`transform`.

    Read more about the input format in :class:`~sklearn_crf.CRFTagger`.

    **Dense features.** A sequence may also be given as a 2-D array of shape
    ``(n_tokens, n_dense)`` (dense features only: word vectors, an encoder's
    token vectors), or as a tuple ``(tokens, array)`` of its tokens (as above)
    and an array with one row per token. Every sequence of X then needs an
    array with the same number of columns ``n_dense``, learnt by :meth:`fit`
    as ``n_dense_features_`` (a sequence given as a plain list of tokens is
    allowed only when ``n_dense`` is 0, or when it is empty). The arrays are
    concatenated into the :class:`EncodedCorpus`' ``dense`` block (arrays that
    already lie one after another in memory, such as the slices of one
    matrix, are used as they are: a read-only view, no copy): float32
    when every array is float32 (no float64 copy), float64 otherwise; bool
    and integer arrays are cast to float64 (exact up to 2**53). Values must be
    finite. Complex, object and other dtypes, arrays that are not 2-D, and a
    tuple whose array has not one row per token are errors naming the
    sequence (and for a non-finite value the token and column).
    :meth:`transform` appends the dense columns after the attribute columns.

    **Encoded input.** :meth:`encode` also accepts an :class:`EncodedCorpus`:
    it is returned as it is when it was encoded by this vectorizer, otherwise
    its attribute ids are mapped through the attribute names (or hash slots)
    of its own ``vectorizer`` to this one's, unknown ones dropped, as if its
    feature dicts had been encoded here; its dense part is kept.

    Parameters
    ----------
    n_features : int, default=None
        ``None`` keeps a vocabulary of every attribute seen in :meth:`fit`.
        An int switches to the hashing trick: attribute names are hashed
        (MurmurHash3, the same in every process) into that many slots, so
        memory stays bounded however many attributes there are; colliding
        attributes share a slot, and there are no names to inspect. Only the
        slots seen in :meth:`fit` get an attribute id (memory scales with
        them, not with ``n_features``); :meth:`transform` returns the slots
        as columns.

    Attributes
    ----------
    n_attributes_ : int
        Number of attribute ids: the vocabulary size, or when hashing the
        number of distinct slots seen in :meth:`fit`.
    n_dense_features_ : int
        Number of dense columns of each sequence seen in :meth:`fit` (0 when
        the sequences had no arrays).
    hash_slots_ : ndarray of shape (n_attributes_,), dtype int64
        When hashing, the slot of each attribute id (not set otherwise).
    slot_ids_ : mapping of int to int
        When hashing, the attribute id of each slot in ``hash_slots_`` (its
        inverse; read-only; not set otherwise).
    vocabulary_ : dict of str to int
        Attribute name → column index, in order of first appearance (not set
        when hashing).
    feature_names_ : list of str, length (n_attributes_,)
        Attribute names by column index (not set when hashing).

    See Also
    --------
    sklearn.feature_extraction.DictVectorizer : The same for flat samples.

    Examples
    --------
    >>> from sklearn_crf import SequenceVectorizer
    >>> X = [[{"w": "the", "len": 3}, {"w": "cat", "title": False}], [{"w": "sat"}]]
    >>> vec = SequenceVectorizer()
    >>> Xt = vec.fit_transform(X)
    >>> Xt.shape
    (3, 5)
    >>> vec.feature_names_
    ['w:the', 'len', 'w:cat', 'title', 'w:sat']
    >>> Xt.toarray()
    array([[1., 3., 0., 0., 0.],
           [0., 0., 1., 0., 0.],
           [0., 0., 0., 0., 1.]])
    >>> vec.sequence_offsets(X)
    array([0, 2, 3])

    Dense features, alone or next to feature dicts:

    >>> import numpy as np
    >>> X = [([{"w": "the"}, {"w": "cat"}], np.array([[0.5, 1.0], [0.0, -2.0]])),
    ...      ([{"w": "sat"}], np.array([[1.5, 0.25]]))]
    >>> corpus = SequenceVectorizer().fit_encode(X)
    >>> corpus.n_dense, corpus.dense.shape
    (2, (3, 2))
    """

    _parameter_constraints: dict = {
        "n_features": [Interval(Integral, 1, np.iinfo(np.int32).max, closed="both"), None],
    }

    def __init__(self, *, n_features=None):
        self.n_features = n_features

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the attribute vocabulary of X.

        Parameters
        ----------
        X : list of sequences
            Each sequence is a list of tokens (each token a dict of features),
            a 2-D array of dense features, or a tuple (tokens, array).
        y : None
            Ignored.

        Returns
        -------
        self : SequenceVectorizer
            The fitted vectorizer.
        """
        self._encode(X, fitting=True)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_encode(self, X, y=None):
        """Learn the vocabulary and return X as an :class:`EncodedCorpus`.

        Parameters
        ----------
        X : list of sequences
            Each sequence is a list of tokens (each token a dict of features),
            a 2-D array of dense features, or a tuple (tokens, array).
        y : None
            Ignored.

        Returns
        -------
        corpus : EncodedCorpus
            X's attribute ids and values, with the zero-valued entries.
        """
        return self._encode(X, fitting=True)

    def partial_fit_encode(self, X):
        """Grow the vocabulary with X's new attributes and return X encoded.

        For a corpus that comes in chunks (see
        :func:`~sklearn_crf.encode_stream`): the first call (on a vectorizer
        not fitted) starts a vocabulary as :meth:`fit_encode` does; each later
        call gives the attributes it has not seen the next ids, in order of
        first appearance, and encodes X with them. So chunk by chunk, the
        vocabulary and the encoded chunks, one after another, are those of
        :meth:`fit_encode` on all the chunks at once (bitwise). Every chunk
        needs the first chunk's number of dense columns. A call that fails
        leaves the vocabulary as it was.

        Parameters
        ----------
        X : list of sequences
            Each sequence is a list of tokens (each token a dict of features),
            a 2-D array of dense features, or a tuple (tokens, array).

        Returns
        -------
        corpus : EncodedCorpus
            X's attribute ids and values, with the zero-valued entries; its
            ``n_attributes`` is the vocabulary size after this chunk.

        Examples
        --------
        >>> from sklearn_crf import SequenceVectorizer
        >>> vec = SequenceVectorizer()
        >>> vec.partial_fit_encode([[{"w": "a"}]]).tok_attr
        array([0], dtype=int32)
        >>> vec.partial_fit_encode([[{"w": "b"}, {"w": "a"}]]).tok_attr
        array([1, 0], dtype=int32)
        >>> vec.feature_names_
        ['w:a', 'w:b']
        """
        self._validate_params()
        return self._encode(X, fitting="partial")

    def encode(self, X):
        """X as an :class:`EncodedCorpus`; attributes unseen in fit are dropped.

        Parameters
        ----------
        X : list of sequences, or EncodedCorpus
            Each sequence is a list of tokens (each token a dict of features),
            a 2-D array of dense features, or a tuple (tokens, array). An
            :class:`EncodedCorpus` is returned as it is if this vectorizer
            encoded it, else mapped to this vectorizer's attribute ids.

        Returns
        -------
        corpus : EncodedCorpus
            X's attribute ids and values, with the zero-valued entries.
        """
        if "n_attributes_" not in self.__dict__:
            check_is_fitted(self, "n_attributes_")
        return self._encode(X, fitting=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the token-by-attribute matrix.

        Parameters
        ----------
        X : list of sequences
            Each sequence is a list of tokens (each token a dict of features),
            a 2-D array of dense features, or a tuple (tokens, array).
        y : None
            Ignored.

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_tokens, n_attributes + n_dense)
            One row per token, the sequences one after another; the dense
            columns, if any, after the attribute columns (when hashing, the
            ``n_features`` slots then the dense columns).
        """
        return self._to_csr(self.fit_encode(X))

    def transform(self, X):
        """Return the token-by-attribute matrix of X; unseen attributes are dropped.

        Parameters
        ----------
        X : list of sequences
            Each sequence is a list of tokens (each token a dict of features),
            a 2-D array of dense features, or a tuple (tokens, array).

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_tokens, n_attributes + n_dense)
            One row per token, the sequences one after another; the dense
            columns, if any, after the attribute columns (when hashing, the
            ``n_features`` slots then the dense columns).
        """
        return self._to_csr(self.encode(X))

    @staticmethod
    def sequence_offsets(X):
        """Start of each sequence's rows in the transformed matrix.

        Parameters
        ----------
        X : list of sequences
            The input of :meth:`transform`.

        Returns
        -------
        offsets : ndarray of shape (n_sequences + 1,), dtype int64
            Rows ``offsets[i]:offsets[i + 1]`` belong to sequence ``i``.
        """
        offsets = np.zeros(len(X) + 1, dtype=np.int64)
        np.cumsum([sequence_length(seq) for seq in X], out=offsets[1:])
        return offsets

    def get_feature_names_out(self, input_features=None):
        """Attribute names by column.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str objects, shape (n_attributes + n_dense,)
            The attribute names, then ``"dense[j]"`` for dense column ``j``
            (the columns of :meth:`transform`).
        """
        check_is_fitted(self, "n_attributes_")
        if self.n_features is not None:
            raise AttributeError("a hashing SequenceVectorizer has no feature names")
        n_dense = self.__dict__.get("n_dense_features_", 0)
        return np.asarray(self.feature_names_ + [f"dense[{j}]" for j in range(n_dense)],
                          dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        return tags

    def _to_csr(self, corpus):
        """The corpus as a matrix whose columns are attribute ids, or hash slots,
        then the dense columns."""
        slots = getattr(self, "hash_slots_", None)
        if slots is None:
            Xt = corpus.to_csr()
        else:
            Xt = sp.csr_matrix(
                (corpus.tok_val, slots[corpus.tok_attr], corpus.tok_ptr),
                shape=(corpus.n_tokens, self._n_slots),
            )
        if corpus.dense is None:
            return Xt
        return sp.hstack([Xt, sp.csr_matrix(corpus.dense)], format="csr", dtype=np.float64)

    def _vocabulary(self, fitting):
        """The vocabulary strategy of one call: by name (with the pair memo) or by
        hash slot. Fitting gives a new, empty one (set on ``self`` by
        :meth:`_encode` only once the whole of X is valid)."""
        if fitting:
            if self.n_features is not None:
                return _HashingSlots(self.n_features, {}, grow=True)
            return _NameVocabulary({}, {}, grow=True)
        if "_n_slots" in self.__dict__:
            return _HashingSlots(self._n_slots, self._slot_ids, grow=False)
        pairs = self.__dict__.get("_pair_ids", {})
        entry = _DERIVED_MEMOS.get(self)
        if entry is not None and entry[0] is pairs and entry[1] == len(pairs):
            return _NameVocabulary(self.vocabulary_, entry[2], grow=False)
        vocab = _NameVocabulary(self.vocabulary_, pairs, grow=False)
        vocab.derive = partial(_derive_memo, self, pairs)
        return vocab

    def _corpus_of_entries(self, tok_ptr, entries, seq_ptr):
        """The :class:`EncodedCorpus`, under this fitted vectorizer and without
        dense features, of entries ``entries`` (int32: attribute ``a`` of value
        1, or ``~a`` of value 0) of tokens ``tok_ptr``, sequences
        ``seq_ptr``: what :meth:`encode` gives for dicts with these entries."""
        return self._corpus(tok_ptr, entries, _NO_POS, _NO_VAL, seq_ptr, None)

    def _corpus_of_ids(self, tok_ptr, tok_attr, seq_ptr, zero_tok, zero_attr):
        """The :class:`EncodedCorpus` of entries of value 1 ``tok_attr`` (int32)
        of tokens ``tok_ptr`` and of value 0 ``zero_attr`` of tokens
        ``zero_tok``, under this fitted vectorizer, without dense features."""
        tok_val = np.empty(len(tok_attr), dtype=np.float64)
        tok_val.fill(1.0)
        return EncodedCorpus(tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=tok_val,
                             seq_ptr=seq_ptr, n_attributes=self.n_attributes_,
                             zero_tok=zero_tok, zero_attr=zero_attr, vectorizer=self)

    def _lookup(self):
        """``(ids, lookup)``: the fitted vocabulary's own dict (attribute names,
        or hash slots, to ids; another object after a fit, longer after a
        :meth:`partial_fit_encode`) and ``lookup(name)``, the id of an
        attribute name or None (unknown): how a feature dict's item is found,
        for encoders that build the names themselves."""
        vocab = self._vocabulary(False)
        if type(vocab) is _NameVocabulary:
            return vocab.ids, vocab.ids.get  # (it does not grow)
        return vocab.ids, vocab.lookup

    def _encode(self, X, fitting):
        """The one pass over X behind every method: an :class:`EncodedCorpus`.

        When ``fitting``, sets the fitted attributes (only after the whole of X
        is valid); otherwise changes nothing on ``self``. One encode loop
        (:func:`_encode_entries`) over a vocabulary strategy:
        :class:`_NameVocabulary` (``vocabulary_`` and the (key, value) pair
        memo ``_pair_ids``, filled by fit only) or :class:`_HashingSlots`
        (``_slot_ids``, slot → id for the slots seen in fit, and a memo of the
        call's own, so that the fitted state grows with the slots only).
        """
        if isinstance(X, EncodedCorpus):
            if fitting:
                raise TypeError(
                    "X is an EncodedCorpus: it is encoded already (its vectorizer is "
                    "fitted); fit a SequenceVectorizer on sequences of feature dicts"
                )
            return self._map_corpus(X)
        if type(X) is FeatureDicts:
            corpus = None if fitting else X._encoded(self)
            if corpus is not None:
                return corpus
            X = X._dicts()
        dense = None
        if type(X) is not list or not all(type(seq) is list for seq in X):
            X, dense = _split_dense(X, fitting)
        elif fitting and not X:
            check_sequences(X, "X")
        n_dense = 0 if dense is None else dense.shape[1]
        if fitting == "partial" and "n_attributes_" in self.__dict__:
            return self._grow_encode(X, dense)
        if not fitting:
            dense = self._check_n_dense(X, dense)
        vocab = self._vocabulary(fitting)
        try:
            arrays = None
            if len(X) == 1 and not fitting:
                arrays = _encode_sentence(X, vocab)  # serving: one sentence
            if arrays is None:
                arrays = _encode_entries(X, vocab)
        except (OverflowError, UnicodeDecodeError):
            _raise_bad_value(X)
        tok_ptr, entries, slow_pos, slow_val, seq_ptr = arrays
        if len(vocab.ids) > _MAX_ATTRIBUTES:
            raise ValueError("more than 2**31 - 1 distinct attributes")
        if fitting:
            for name in vocab.other_state:
                self.__dict__.pop(name, None)
            for name, value in vocab.fitted_state().items():
                setattr(self, name, value)
            self.n_dense_features_ = n_dense
        return self._corpus(tok_ptr, entries, slow_pos, slow_val, seq_ptr, dense)

    def _corpus(self, tok_ptr, entries, slow_pos, slow_val, seq_ptr, dense):
        tok_ptr, tok_attr, tok_val, zero_tok, zero_attr = _split_zero_entries(
            tok_ptr, entries, slow_pos, slow_val)
        return EncodedCorpus(
            tok_ptr=tok_ptr,
            tok_attr=tok_attr,
            tok_val=tok_val,
            seq_ptr=seq_ptr,
            n_attributes=self.n_attributes_,
            zero_tok=zero_tok,
            zero_attr=zero_attr,
            dense=dense,
            vectorizer=self,
        )

    def _grow_encode(self, X, dense):
        """:meth:`partial_fit_encode` of a fitted vectorizer: the vocabulary (and
        memo) grow in place, new ids after the known ones; on an error they are
        cut back to what they were (dicts keep insertion order)."""
        hashing = "_n_slots" in self.__dict__
        if (self.n_features is None) == hashing or (
                hashing and self.n_features != self._n_slots):
            raise ValueError(
                f"n_features is {self.n_features}, but the vocabulary was built with "
                f"n_features={self.__dict__.get('_n_slots')}: partial_fit_encode "
                "continues the vocabulary of the earlier calls; call fit_encode to "
                "start a new one"
            )
        dense = self._check_n_dense(X, dense)
        if hashing:
            vocab = _HashingSlots(self._n_slots, self._slot_ids, grow=True)
        else:
            vocab = _NameVocabulary(self.vocabulary_, self.__dict__.setdefault("_pair_ids", {}),
                                    grow=True)
        n_ids, n_pairs = len(vocab.ids), len(vocab.pairs)
        try:
            try:
                tok_ptr, entries, slow_pos, slow_val, seq_ptr = _encode_entries(X, vocab)
            except (OverflowError, UnicodeDecodeError):
                _raise_bad_value(X)
            if len(vocab.ids) > _MAX_ATTRIBUTES:
                raise ValueError("more than 2**31 - 1 distinct attributes")
        except BaseException:
            for _ in range(len(vocab.ids) - n_ids):
                vocab.ids.popitem()
            if not hashing:
                for _ in range(len(vocab.pairs) - n_pairs):
                    vocab.pairs.popitem()
            raise
        new = list(islice(reversed(vocab.ids), len(vocab.ids) - n_ids))[::-1]
        if hashing:
            self.hash_slots_ = np.concatenate([self.hash_slots_,
                                               np.array(new, dtype=np.int64)])
        else:
            self.feature_names_.extend(new)
        self.n_attributes_ = len(vocab.ids)
        return self._corpus(tok_ptr, entries, slow_pos, slow_val, seq_ptr, dense)

    def _check_n_dense(self, X, dense):
        """The dense block of X for :meth:`encode`: checked against
        ``n_dense_features_`` (an X of empty sequences only gets an empty one)."""
        want = self.__dict__.get("n_dense_features_", 0)
        got = 0 if dense is None else dense.shape[1]
        if got == want:
            return dense
        if dense is None and not any(map(len, X)):  # no tokens
            return np.zeros((0, want), dtype=np.float64)
        if dense is None:
            raise ValueError(
                f"X has no dense features, but the vectorizer was fitted with "
                f"{want} dense columns per token: give each sequence as an array "
                "or a (tokens, array) tuple"
            )
        raise ValueError(
            f"X has {got} dense columns per token, but the vectorizer was fitted "
            f"with {want}"
        )

    def _map_corpus(self, corpus):
        """An :class:`EncodedCorpus` of another vectorizer with this one's
        attribute ids (by name, or by hash slot); unknown attributes dropped."""
        if corpus.vectorizer is self:
            return corpus
        source = corpus.vectorizer
        if source is None:
            raise ValueError(
                "X is an EncodedCorpus without a vectorizer: its attribute ids "
                "cannot be mapped to this vectorizer's"
            )
        dense = self._check_n_dense(
            [[None]] if corpus.n_tokens else [], corpus.dense)
        if ("_n_slots" in self.__dict__) != ("_n_slots" in source.__dict__):
            raise ValueError(
                "X is an EncodedCorpus of a "
                + ("hashing" if "_n_slots" in source.__dict__ else "non-hashing")
                + " vectorizer; its attribute ids cannot be mapped to this "
                + ("hashing" if "_n_slots" in self.__dict__ else "non-hashing")
                + " vectorizer's"
            )
        if "_n_slots" in self.__dict__:
            if source._n_slots != self._n_slots:
                raise ValueError(
                    f"X is an EncodedCorpus hashed into {source._n_slots} slots; this "
                    f"vectorizer hashes into {self._n_slots}"
                )
            get = self._slot_ids.get
            keys = source.hash_slots_.tolist()
        else:
            get = self.vocabulary_.get
            keys = source.feature_names_
        if len(keys) != corpus.n_attributes:
            raise ValueError(
                f"X is an EncodedCorpus of {corpus.n_attributes} attributes, but its "
                f"vectorizer has {len(keys)}"
            )
        new_ids = np.fromiter(map(get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        tok_attr = new_ids[corpus.tok_attr]
        zero_attr = new_ids[corpus.zero_attr]
        keep = tok_attr >= 0
        keep_zero = zero_attr >= 0
        kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])
        return EncodedCorpus(
            tok_ptr=kept_before[corpus.tok_ptr],
            tok_attr=tok_attr[keep].astype(np.int32),
            tok_val=corpus.tok_val[keep],
            seq_ptr=corpus.seq_ptr,
            n_attributes=self.n_attributes_,
            zero_tok=corpus.zero_tok[keep_zero],
            zero_attr=zero_attr[keep_zero].astype(np.int32),
            dense=dense,
            vectorizer=self,
        )

    @property
    def slot_ids_(self):
        """When hashing, the attribute id of each hash slot seen in :meth:`fit`.

        A read-only mapping, slot (int) → attribute id (int): the inverse of
        ``hash_slots_``. Not set when not hashing.

        Examples
        --------
        >>> from sklearn_crf import SequenceVectorizer
        >>> vec = SequenceVectorizer(n_features=8).fit([[{"w": "a"}]])
        >>> dict(vec.slot_ids_) == {int(vec.hash_slots_[0]): 0}
        True
        """
        try:
            return MappingProxyType(self.__dict__["_slot_ids"])
        except KeyError:
            raise AttributeError(
                "slot_ids_ is set by fit, and only when hashing (n_features is an int)"
            ) from None

    def __getstate__(self):
        # the memo's tuple keys as per-key dicts (what skops and JSON can store);
        # __setstate__ rebuilds it. A copy: object.__getstate__ returns __dict__ itself
        state = dict(super().__getstate__())
        pairs = state.pop("_pair_ids", None)
        if pairs is not None:
            str_ids, num_ids = {}, {}
            for (key, value), idx in pairs.items():
                if type(value) is str:
                    str_ids.setdefault(key, {})[value] = idx
                else:
                    num_ids[key] = idx if idx >= 0 else ~idx
            state["_str_ids"] = str_ids
            state["_num_ids"] = num_ids
        return state

    def __setstate__(self, state):
        if "_hash_slots" in state and "hash_slots_" not in state:
            # before 0.x.y a hashing vectorizer had every slot as a column
            n = state.pop("_hash_slots")
            state["hash_slots_"] = np.arange(n, dtype=np.int64)
            state["_slot_ids"] = {slot: slot for slot in range(n)}
            state["_n_slots"] = n
        if "vocabulary_" in state and "_pair_ids" not in state and "_str_ids" in state:
            # see __getstate__ (and before 0.x.y, encode read these per-key caches)
            state = dict(state)
            state["_pair_ids"] = _pair_ids(state.pop("_str_ids"), state.pop("_num_ids", {}))
        if "n_attributes_" in state and "n_dense_features_" not in state:
            state = dict(state)
            state["n_dense_features_"] = 0  # before dense features
        super().__setstate__(state)


class VocabularyState(NamedTuple):
    """A fitted :class:`SequenceVectorizer`'s vocabulary as plain data (str, int,
    dicts, an int64 array): what the corpus store writes, and what
    :func:`vectorizer_from_state` rebuilds the vectorizer from.

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


def vocabulary_state(vectorizer):
    """The :class:`VocabularyState` of a fitted :class:`SequenceVectorizer`."""
    check_is_fitted(vectorizer, "n_attributes_")
    state = vectorizer.__getstate__()  # the memo as per-key dicts
    hashing = "_n_slots" in state
    return VocabularyState(
        n_features=int(state["_n_slots"]) if hashing else None,
        n_dense=int(state.get("n_dense_features_", 0)),
        attributes=None if hashing else list(state["feature_names_"]),
        hash_slots=np.asarray(state["hash_slots_"], dtype=np.int64) if hashing else None,
        str_pairs={} if hashing else state.get("_str_ids", {}),
        num_keys={} if hashing else state.get("_num_ids", {}),
    )


def vectorizer_from_state(state, *, where="the vocabulary"):
    """A fitted :class:`SequenceVectorizer` from a :class:`VocabularyState`,
    checked (names unique, slots unique and in range, the memo agrees with the
    names): a ValueError that starts with ``where`` otherwise."""
    vec = SequenceVectorizer(n_features=state.n_features)
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
                if type(value) is not str or ids.get(key + ":" + value) != idx:
                    raise ValueError(
                        f"{where}: the memo gives ({key!r}, {value!r}) the id {idx!r}, "
                        f"not that of the attribute {key + ':' + str(value)!r}")
        for key, idx in num_keys.items():
            if type(key) is not str or ids.get(key) != idx:
                raise ValueError(
                    f"{where}: the memo gives the key {key!r} the id {idx!r}, not "
                    "that of its attribute")
        vec.__dict__.update(n_attributes_=len(names), vocabulary_=ids,
                            feature_names_=list(names),
                            _pair_ids=_pair_ids(str_pairs, num_keys))
    else:
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
        vec.__dict__.update(n_attributes_=len(slot_list), hash_slots_=np.array(slots),
                            _slot_ids=slot_ids, _n_slots=int(state.n_features))
    vec.n_dense_features_ = int(state.n_dense)
    return vec


def _pair_ids(str_ids, num_ids):
    """The pair memo of :class:`_NameVocabulary` from the per-key caches:
    ``(key, value) → id`` for str values, ``(key, True) → id`` and
    ``(key, False) → ~id`` for number keys."""
    pairs = {}
    for key, ids in str_ids.items():
        for value, idx in ids.items():
            pairs[(key, value)] = idx
    for key, idx in num_ids.items():
        pairs[(key, True)] = idx
        pairs[(key, False)] = ~idx
    return pairs


#: vectorizer -> (its ``_pair_ids``, their number, the memo encode reads): a
#: vocabulary fitted on names alone (numeric features: a model read from a
#: file through :meth:`CRFTagger.from_weights`) gets, at its first miss, a
#: memo derived from the names (:func:`_derive_memo`); kept outside the
#: vectorizer, whose state it does not change
_DERIVED_MEMOS = weakref.WeakKeyDictionary()


def _derive_memo(vectorizer, pairs):
    """The memo derived from the names when ``pairs`` (the fitted memo) has no
    str-valued pair, else None (the fitted memo stays); remembered.

    ``(name, True)`` -> id, ``(name, False)`` -> ``~id`` and, at every ``":"``
    of a name, ``(before, after)`` -> id: what :func:`_encode_item` gives each
    of these items (a str value is the name ``key + ":" + value``), so a
    loaded model looks a token's items up as fast as a fitted one, with the
    same entries."""
    memo = pairs
    if not any(type(key[1]) is str for key in pairs):
        memo = dict(pairs)
        keys = {}
        for name, idx in vectorizer.vocabulary_.items():
            memo[(name, True)] = idx
            memo[(name, False)] = ~idx
            cut = name.find(":")
            while cut >= 0:
                key = name[:cut]
                memo[(keys.setdefault(key, key), name[cut + 1:])] = idx
                cut = name.find(":", cut + 1)
    _DERIVED_MEMOS[vectorizer] = (pairs, len(pairs), memo)
    return None if memo is pairs else memo


def _derived_lookup(vocab, items):
    """After a miss: switch ``vocab`` to its derived memo, if it gets one, and
    return ``items`` looked up in it (an int32 array), else None."""
    derive, vocab.derive = vocab.derive, None
    memo = derive()
    if memo is None:
        return None
    vocab.pairs = memo
    return np.fromiter(map(memo.get, items, repeat(_UNKNOWN)), np.int32, len(items))


class _NameVocabulary:
    """Vocabulary strategy by name: attribute name → id, and the (key, value) memo.

    ``ids`` maps attribute names to ids (``vocabulary_``). ``pairs`` is the memo
    that lets a token's items be looked up without building names: ``(key, str
    value)`` → id, and for a number key seen with the value 1 or 0 ``(key,
    True)`` → id, ``(key, False)`` → ``~id`` (a zero entry). ``True`` and
    ``False`` equal 1 and 0 of every numeric type, so these hit for the values
    1 and 0 whatever their type. ``grow`` (fitting): a name not yet known gets
    the next id and the memo is filled; otherwise both are only read.
    """

    other_state = ("hash_slots_", "_slot_ids", "_n_slots", "_str_ids", "_num_ids")
    #: ``derive()``: a memo derived from the names (see :func:`_derive_memo`), or None
    derive = None

    def __init__(self, ids, pairs, grow):
        self.ids = ids
        self.pairs = pairs
        self.grow = self.fill_memo = grow

    def lookup(self, name):
        """The id of an attribute name (None: unknown, when not growing)."""
        idx = self.ids.get(name)
        if idx is None and self.grow:
            idx = self.ids[name] = len(self.ids)
        return idx

    def fitted_state(self):
        return {"n_attributes_": len(self.ids), "vocabulary_": self.ids,
                "feature_names_": list(self.ids), "_pair_ids": self.pairs}


class _HashingSlots:
    """Vocabulary strategy by hash slot: MurmurHash3 of the name modulo ``n_slots``,
    and slot → id (``ids``) for the slots seen in fit (``grow``: a new slot gets
    the next id). The pair memo (as :class:`_NameVocabulary`'s) is the call's
    own, so the fitted state grows with the slots, not with the names."""

    other_state = ("vocabulary_", "feature_names_", "_str_ids", "_num_ids", "_pair_ids")
    derive = None

    def __init__(self, n_slots, ids, grow):
        self.n_slots = n_slots
        self.ids = ids
        self.pairs = {}
        self.grow = grow
        self.fill_memo = True

    def lookup(self, name):
        """The id of an attribute name's slot (None: a slot unseen in fit)."""
        slot = murmurhash3_32(name, positive=True) % self.n_slots
        idx = self.ids.get(slot)
        if idx is None and self.grow:
            idx = self.ids[slot] = len(self.ids)
        return idx

    def fitted_state(self):
        ids = self.ids
        return {"n_attributes_": len(ids),
                "hash_slots_": np.fromiter(ids, dtype=np.int64, count=len(ids)),
                "_slot_ids": ids, "_n_slots": self.n_slots}


def _check_dense_array(array, s):
    """The array of dense features of sequence ``s``, checked (2-D, real)."""
    if array.ndim != 2:
        raise ValueError(
            f"X[{s}] is an array of {array.ndim} dimensions with shape {array.shape}; "
            "dense features are a 2-D array (n_tokens, n_dense) per sequence"
        )
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"X[{s}] is an array of dtype {array.dtype}; dense features must be "
            "float32 or float64 (bool and integers are cast to float64)"
        )
    return array


def _split_dense(X, fitting):
    """X's token sequences and its dense block (None when no sequence has an
    array), after the checks of :func:`check_sequences` and of the dense forms:
    a 2-D array, or a tuple (tokens, array) with one row per token."""
    if (isinstance(X, (str, bytes, Mapping)) or not isinstance(X, (Sequence, np.ndarray))
            or not any(map(is_dense_part, X))):
        check_sequences(X, "X", allow_empty=not fitting)
        return X, None
    tokens, arrays, where = [], [], []  # where: sequences with an array
    for s, seq in enumerate(X):
        if isinstance(seq, np.ndarray) and is_dense_part(seq):
            array = _check_dense_array(seq, s)
            tokens.append([{}] * array.shape[0])
        elif is_pair(seq):
            toks, array = seq
            if not isinstance(toks, (list, tuple)) and not (
                    isinstance(toks, np.ndarray) and toks.ndim == 1 and toks.dtype.kind == "O"):
                raise TypeError(
                    f"X[{s}] is a (tokens, array) tuple whose tokens are a "
                    f"{type(toks).__name__}; they must be a list (or tuple) of tokens"
                )
            array = _check_dense_array(array, s)
            if len(toks) != array.shape[0]:
                raise ValueError(
                    f"X[{s}] has {len(toks)} tokens but an array of {array.shape[0]} "
                    "rows; the array needs one row per token"
                )
            tokens.append(toks)
        else:
            if not isinstance(seq, (list, tuple)) and not (
                    isinstance(seq, np.ndarray) and seq.ndim == 1):
                raise TypeError(
                    f"X[{s}] is a {type(seq).__name__}; each sequence must be a list "
                    "(or tuple) of tokens, a 2-D array or a (tokens, array) tuple"
                )
            if len(seq):
                first = where[0] if where else next(i for i in range(s, len(X))
                                                    if is_dense_part(X[i]))
                raise ValueError(
                    f"X[{s}] is a list of tokens without dense features, but X[{first}] "
                    "has an array: give every sequence an array (a 2-D array or a "
                    "(tokens, array) tuple), or none"
                )
            tokens.append(seq)
            continue
        if arrays and array.shape[1] != arrays[0].shape[1]:
            raise ValueError(
                f"X[{s}] has {array.shape[1]} dense columns but X[{where[0]}] has "
                f"{arrays[0].shape[1]}; every sequence needs the same number"
            )
        arrays.append(array)
        where.append(s)
    dense = _adjacent_rows(arrays)
    if dense is None:
        dtype = (np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64)
        dense = np.concatenate(arrays, axis=0, dtype=dtype)
    row = _first_non_finite_row(dense)
    if row >= 0:
        col = int(np.flatnonzero(~np.isfinite(dense[row]))[0])
        seq_ptr = np.cumsum([0] + [len(t) for t in tokens])
        s = int(np.searchsorted(seq_ptr, row, side="right") - 1)
        raise ValueError(
            f"X[{s}] has {dense[row, col]} at token {row - seq_ptr[s]}, dense column "
            f"{col}; dense features must be finite"
        )
    return tokens, dense


def _adjacent_rows(arrays):
    """The rows of ``arrays`` as one read-only (n_tokens, n_dense) view, without a
    copy, when they already lie one after the other in memory (e.g. the slices
    of one matrix, ``[V[a:b] for a, b in ...]``): each C-contiguous, float32 or
    float64, of one dtype, the non-empty ones adjacent. None otherwise."""
    nonempty = [a for a in arrays if a.shape[0]]
    if not nonempty:
        return None
    head = nonempty[0]
    dtype = head.dtype
    if dtype not in (np.float32, np.float64):
        return None
    n_rows = 0
    address = head.__array_interface__["data"][0]
    for a in nonempty:
        if (a.dtype != dtype or not a.flags.c_contiguous
                or a.__array_interface__["data"][0] != address):
            return None
        address += a.nbytes
        n_rows += a.shape[0]
    # every byte of the view belongs to one of the arrays: safe to stride over
    # (a one-row or one-column array is C-contiguous whatever its other stride)
    return np.lib.stride_tricks.as_strided(
        head, shape=(n_rows, head.shape[1]),
        strides=(head.shape[1] * dtype.itemsize, dtype.itemsize), writeable=False)


#: rows per chunk of the finiteness check (no temporary the size of the corpus)
_FINITE_ROWS = 4096


def _first_non_finite_row(dense):
    """The first row of ``dense`` with a NaN or an infinity, or -1; checked a
    chunk of rows at a time into one small buffer."""
    n = dense.shape[0]
    buf = np.empty((min(n, _FINITE_ROWS), dense.shape[1]), dtype=bool)
    for a in range(0, n, _FINITE_ROWS):
        b = min(a + _FINITE_ROWS, n)
        finite = np.isfinite(dense[a:b], out=buf[: b - a])
        if not finite.all():
            return a + int(np.flatnonzero(~finite.all(axis=1))[0])
    return -1


#: no attribute: the memo's default, and an unknown attribute's entry until it
#: is dropped. Entries are int32: ids are below it (at most 2**31 - 2), and a
#: zero entry of attribute ``a`` is ``~a``
_UNKNOWN = np.iinfo(np.int32).max
#: most sequences encoded in one batch; with a memo that grows, batches start
#: at one sequence and double, so that repeats within a batch rarely miss
_BATCH = 256
#: fewer tokens than this in a batch: token by token (NumPy's cost per call
#: would outweigh the batch's lookups; e.g. one sentence at a time)
_SMALL = 64


def _encode_entries(X, vocab):
    """The one encode loop: X's entries under the vocabulary strategy ``vocab``.

    Returns ``tok_ptr``, ``entries`` (attribute ``a``, or ``~a`` for a zero
    entry; int32, int64 when a batch went token by token), ``slow_pos``,
    ``slow_val`` (the entries whose value is not 1: positions, values) and
    ``seq_ptr``, for :func:`_split_zero_entries`.

    Sequences go in batches. When every token of a batch is a dict, all their
    ``(key, value)`` items are looked up in the memo at once (``map`` over
    ``dict.items``, into a NumPy array: no Python code per item); only the
    items that miss run the rules of :func:`_encode_item`, in order, and their
    entries are spliced in place. A batch with another token form (a list of
    names, a Mapping) or an unhashable value (a list, a nested dict), or with
    few tokens (one sentence), goes token by token (:func:`_encode_tokens`).
    Either way entries keep the token's order, attributes join the vocabulary
    in order of first appearance, and misses are handled in the order of X (so
    the first bad value is the one reported).
    """
    n_seq = len(X)
    seq_ptr = np.frombuffer(array("q", accumulate(map(len, X), initial=0)), dtype=np.int64)
    get_pair = vocab.pairs.get
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
                ids = np.fromiter(
                    map(get_pair, chain.from_iterable(map(dict.items, tokens)),
                        repeat(_UNKNOWN)),
                    np.int32, int(counts.sum()))
            except TypeError:  # an unhashable value: token by token
                pass
        slow = ()
        if ids is not None:
            miss = np.flatnonzero(ids == _UNKNOWN)
            if len(miss) and vocab.derive is not None:
                again = _derived_lookup(
                    vocab, list(chain.from_iterable(map(dict.items, tokens))))
                if again is not None:
                    get_pair = vocab.pairs.get
                    ids = again
                    miss = np.flatnonzero(ids == _UNKNOWN)
            if len(miss):
                ids, counts, slow = _resolve_misses(X, vocab, tokens, counts, ids, miss,
                                                    n_tok, seq_ptr)
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
        entries = (np.concatenate(list(map(_as_int64, entry_parts))) if entry_parts
                   else np.zeros(0, np.int64))
    return (tok_ptr, entries, np.array(slow_pos, dtype=np.int64),
            np.array(slow_val, dtype=np.float64), seq_ptr)


def _encode_sentence(X, vocab):
    """:func:`_encode_entries` of an X of one sentence of dict tokens, with a
    vocabulary that does not grow: the same corpus with a few NumPy calls
    (one sentence at a time, serving), or None when the general loop must do
    it (another token form, an unhashable value, a miss that gives several
    entries or a value other than 0 and 1).

    Every ``(key, value)`` item is looked up in the memo at once, into int32
    entries (an id, or ``~id`` for a zero: ids are below :data:`_UNKNOWN`);
    the misses run :func:`_encode_item` (the rules, and their errors, in the
    order of the sentence), and a miss that gives no entry (an unknown
    attribute) is dropped. Token offsets are Python ints until the one array
    of ``tok_ptr``.
    """
    tokens = X[0]
    # a hashing vocabulary's memo is the call's own (empty): the general loop
    if vocab.grow or type(vocab) is not _NameVocabulary or set(map(type, tokens)) - {dict}:
        return None
    counts = list(map(len, tokens))
    try:
        ids = np.fromiter(
            map(vocab.pairs.get, chain.from_iterable(map(dict.items, tokens)),
                repeat(_UNKNOWN)),
            np.int32, sum(counts))
    except TypeError:  # an unhashable value: a list, a dict
        return None
    miss = (ids == _UNKNOWN).nonzero()[0]
    if len(miss) and vocab.derive is not None:
        again = _derived_lookup(vocab, list(chain.from_iterable(map(dict.items, tokens))))
        if again is not None:
            ids = again
            miss = (ids == _UNKNOWN).nonzero()[0]
    if len(miss):
        miss = miss.tolist()
        out = _sentence_misses(X, vocab, counts, miss)
        if out is None:
            return None
        ids[miss] = out
        if _UNKNOWN in out:
            ids = ids[ids != _UNKNOWN]
    tok_ptr = np.fromiter(accumulate(counts, initial=0), np.int64, len(counts) + 1)
    seq_ptr = np.array((0, len(tokens)), dtype=np.int64)
    return tok_ptr, ids, _NO_POS, _NO_VAL, seq_ptr


#: no entries whose value is not 1 (read only: shared by every call)
_NO_POS = np.zeros(0, dtype=np.int64)
_NO_POS.flags.writeable = False
_NO_VAL = np.zeros(0, dtype=np.float64)
_NO_VAL.flags.writeable = False


def _sentence_misses(X, vocab, counts, miss):
    """The entry of each missed item (positions ``miss`` among the items of the
    one sentence of X, increasing), :data:`_UNKNOWN` for an unknown attribute
    (then ``counts``, the items per token, counts the entries that stay);
    None when a miss gives several entries or a value other than 0 and 1.

    As in :func:`_resolve_misses`: when every miss is a str key with a str
    value (an unseen word), their names are looked up all at once; otherwise
    each runs :func:`_encode_item`, in order."""
    tokens = X[0]
    items, toks = [], []  # each miss's (key, value) and token
    t, start, stop = -1, 0, 0  # the token of a miss, its first item, past its last
    for pos in miss:
        while pos >= stop:
            t += 1
            start, stop = stop, stop + counts[t]
            token_items = None
        if token_items is None:
            token_items = list(tokens[t].items())
        items.append(token_items[pos - start])
        toks.append(t)
    if set(map(type, chain.from_iterable(items))) == {str}:
        out = list(map(vocab.ids.get, map(":".join, items), repeat(_UNKNOWN)))
    else:
        out, slow = [], []
        for (key, value), t in zip(items, toks):
            before = len(out)
            _encode_item(X, vocab, key, value, 0, t, out, slow)
            if slow or len(out) > before + 1:
                return None
            if len(out) == before:
                out.append(_UNKNOWN)
    for t, idx in zip(toks, out):
        if idx == _UNKNOWN:
            counts[t] -= 1
    return out


def _as_int64(part):
    """An ndarray as it is, or an ``array("q")`` as an int64 ndarray, without a copy."""
    if isinstance(part, np.ndarray):
        return part
    return np.frombuffer(part, dtype=np.int64) if len(part) else np.zeros(0, np.int64)


def _where(seq_ptr, tokens):
    """(sequence, token within it) of token indices of X (an int or an array)."""
    s = np.searchsorted(seq_ptr, tokens, side="right") - 1
    return s, tokens - seq_ptr[s]


def _resolve_misses(X, vocab, tokens, counts, ids, miss, first_token, seq_ptr):
    """A batch of dict tokens whose items ``miss`` are not in the memo: each miss
    replaced by the entries of :func:`_encode_item` (none, one or several).
    Returns the batch's entries, entries per token and (position, value) of
    its entries whose value is not 1.

    The missed items are gathered in C loops (:func:`_missed_items`). When
    every miss is a str key with a str value (the common miss: a word not seen
    yet) and the vocabulary is by name, their names ``key:value`` are built and
    looked up all at once, which is what :func:`_encode_item` does for each in
    turn (and none of them can fail): growing, a new name gets the next id in
    order of first appearance (``setdefault``), and the memo gets the pairs in
    that order; otherwise a name is known (one entry) or not (none). Other
    misses run the rules one by one, in order."""
    item_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(counts, out=item_ptr[1:])
    miss_tok = np.searchsorted(item_ptr, miss, side="right") - 1
    items = _missed_items(tokens, counts, item_ptr, ids == _UNKNOWN, miss_tok)
    if type(vocab) is _NameVocabulary and set(map(type, chain.from_iterable(items))) == {str}:
        names = map(":".join, items)
        if vocab.grow:
            known = vocab.ids
            out = list(map(known.setdefault, names, map(len, repeat(known))))
            vocab.pairs.update(zip(items, out))
            ids[miss] = out
            return ids, counts, []
        out = np.fromiter(map(vocab.ids.get, names, repeat(_UNKNOWN)), np.int32, len(items))
        ids[miss] = out
        unknown = out == _UNKNOWN
        if unknown.any():
            ids = ids[ids != _UNKNOWN]
            counts = counts - np.bincount(miss_tok[unknown], minlength=len(counts))
        return ids, counts, []
    miss_s, miss_t = (a.tolist() for a in _where(seq_ptr, miss_tok + first_token))
    out = []  # the entries of the misses, one after another
    slow = []  # (index into out, value)
    n_out = []  # entries of each miss
    for (key, value), s, t_in_s in zip(items, miss_s, miss_t):
        before = len(out)
        _encode_item(X, vocab, key, value, s, t_in_s, out, slow)
        n_out.append(len(out) - before)
    n_out = np.array(n_out, dtype=np.int64)
    if len(out) == len(miss) and not (n_out != 1).any():
        ids[miss] = out
        return ids, counts, [(int(miss[i]), x) for i, x in slow]
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


def _missed_items(tokens, counts, item_ptr, missed, miss_tok):
    """The ``(key, value)`` items of a batch's misses, in order: the items of the
    tokens with a miss (``miss_tok``, increasing), filtered by ``missed`` (one
    bool per item of the batch), in C loops (``compress``)."""
    first = np.ones(len(miss_tok), dtype=bool)
    np.not_equal(miss_tok[1:], miss_tok[:-1], out=first[1:])
    toks = miss_tok[first]
    lens = counts[toks]
    ends = np.cumsum(lens)
    # the batch's item index of each item of those tokens
    where = np.repeat(item_ptr[toks] - (ends - lens), lens) + np.arange(
        int(ends[-1]), dtype=np.int64)
    return list(compress(
        chain.from_iterable(map(dict.items, map(tokens.__getitem__, toks.tolist()))),
        missed[where].tolist()))


def _encode_tokens(X, vocab, first_seq, stop_seq):
    """Sequences ``first_seq:stop_seq`` of X token by token (any token form):
    their entries (a list), entries per token and (position, value) of the
    entries whose value is not 1."""
    get_pair = vocab.pairs.get
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
                    ids = list(map(get_pair, token.items()))
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
                for name, _ in _list_token(token, s, t):
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
        idx = vocab.lookup(key + ":" + value)
        if idx is not None:
            out.append(idx)
            if vocab.fill_memo:
                vocab.pairs[(key, value)] = idx
        return
    if type(key) is str and (tv is float or tv is int or tv is bool):
        x = float(value)  # OverflowError: an int beyond float64, see _encode
        idx = _append_valued(X, vocab, key, x, out, slow)
        if idx is None:
            return
        if vocab.fill_memo and (x == 1.0 or x == 0.0):
            vocab.pairs[(key, bool(x))] = idx if x else ~idx
        return
    for name, x in _flatten_feature(key, value, s, t):
        _append_valued(X, vocab, name, x, out, slow)


def _append_valued(X, vocab, name, x, out, slow):
    """The entry of attribute ``name`` with value ``x`` appended to ``out``
    (``~id`` for a zero; ``(index, x)`` to ``slow`` for a value other than 1);
    returns its id, or None for an unknown attribute (dropped). A value that
    is not finite is an error (:func:`_raise_bad_value`)."""
    if not math.isfinite(x):
        _raise_bad_value(X)
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


#: fewer entries than this: zero entries split off by binary searches (fewer
#: NumPy calls), otherwise by a running count of the non-zero entries
_SMALL_SPLIT = 4096


def _split_zero_entries(tok_ptr, entries, slow_pos, slow_val):
    """The arrays of an :class:`EncodedCorpus` from :func:`_encode_entries`'
    entries (int32 or int64): ``tok_ptr``, ``tok_attr``, ``tok_val`` of the non-zero entries
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
    else:  # no binary search per entry
        kept = np.empty(len(entries) + 1, dtype=np.int64)  # non-zero entries before each
        kept[0] = 0
        np.cumsum(keep, out=kept[1:])
        nz_ptr = kept[tok_ptr]
        zero_ptr = tok_ptr - nz_ptr  # zero entries before each token
        zero_tok = np.arange(len(tok_ptr) - 1, dtype=np.int64).repeat(
            zero_ptr[1:] - zero_ptr[:-1])
        zero_attr = (~entries[~keep]).astype(np.int32, copy=False)
        if len(slow_pos):
            slow_pos = kept[slow_pos]
    tok_attr = entries[keep].astype(np.int32, copy=False)
    tok_val = np.empty(len(tok_attr), dtype=np.float64)
    tok_val.fill(1.0)
    if len(slow_pos):
        # a slow entry (a value neither 1 nor 0) moved back by the zero entries before it
        tok_val[slow_pos] = slow_val
    return (nz_ptr, tok_attr, tok_val, zero_tok, zero_attr)


def _decode(value, s, t, name):
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(
            f"X[{s}][{t}][{name!r}] holds bytes that are not UTF-8: {value[:20]!r}"
        ) from None


def _flatten_feature(key, value, s, t, prefix=""):
    """(name, value) pairs of one feature, CRFsuite's rules; the slow path."""
    if isinstance(key, bytes):
        key = _decode(key, s, t, prefix + repr(key))
    if not isinstance(key, str):
        raise TypeError(
            f"X[{s}][{t}] has the feature key {prefix}{key!r} of type "
            f"{type(key).__name__}; feature keys must be str (or UTF-8 bytes)"
        )
    name = prefix + str(key)
    if isinstance(value, str):
        return [(name + ":" + value, 1.0)]
    if isinstance(value, bytes):
        return [(name + ":" + _decode(value, s, t, name), 1.0)]
    if isinstance(value, _NUMBER_TYPES):
        try:
            x = float(value)
        except OverflowError:
            raise ValueError(
                f"X[{s}][{t}][{name!r}] is an int too large for a float64"
            ) from None
        return [(name, x)]
    if isinstance(value, Mapping):
        out = []
        for k2, v2 in value.items():
            out.extend(_flatten_feature(k2, v2, s, t, prefix=name + ":"))
        return out
    if isinstance(value, _CONTAINER_TYPES):
        out = []
        for v2 in value:
            if isinstance(v2, bytes):
                v2 = _decode(v2, s, t, name)
            if not isinstance(v2, str):
                raise TypeError(
                    f"X[{s}][{t}][{name!r}] holds a {type(v2).__name__}; a list "
                    "or set feature value may only hold str"
                )
            out.append((name + ":" + v2, 1.0))
        return out
    raise TypeError(
        f"X[{s}][{t}][{name!r}] is a {type(value).__name__}; a feature value "
        "must be a str, a number, a bool, a list of str or a dict"
    )


def _list_token(token, s, t):
    """(name, 1.0) pairs of a token given as a list of attribute names
    (python-crfsuite's form: ``["word=madrid", "shape=Xx"]``)."""
    if not isinstance(token, (list, tuple)):
        raise TypeError(
            f"X[{s}][{t}] is a {type(token).__name__}, expected a dict of features "
            "(feature name -> str, number, bool, list of str or dict) or a list of "
            "attribute names (str)"
        )
    out = []
    for name in token:
        if isinstance(name, bytes):
            name = _decode(name, s, t, "a list token")
        if not isinstance(name, str):
            raise TypeError(
                f"X[{s}][{t}] is a list token holding a {type(name).__name__} "
                f"({name!r}); a token given as a list may only hold attribute names (str)"
            )
        out.append((str(name), 1.0))
    return out


def _raise_bad_value(X):
    """Find the first feature value of X that is not a finite float (NaN, inf, an
    int beyond float64, bytes that are not UTF-8) and say where it is."""
    for s, seq in enumerate(X):
        for t, token in enumerate(seq):
            if not isinstance(token, Mapping):
                continue  # a list of names: every value is 1
            for key, value in token.items():
                for name, x in _flatten_feature(key, value, s, t):
                    if not math.isfinite(x):
                        raise ValueError(
                            f"X[{s}][{t}][{name!r}] is {x}; feature values must "
                            "be finite"
                        )
    raise ValueError("X contains a feature value that is not a finite float")  # pragma: no cover


#: an absent entry of :func:`encode_interned`'s token rows (int32 pids), and
#: an unknown attribute of its table
ABSENT = np.iinfo(np.int32).max
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
                    n_features=None, dense=None, max_entries=0):
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
        The new vectorizer's ``n_features`` (when fitting).
    dense : ndarray of shape (n_tokens, n_dense) or None
        The dense block.
    max_entries : int, default=0
        A bound on the number of entries, if known (the rows' total size):
        the arrays start at that capacity, of which only the part filled is
        ever touched (so resident), then trimmed.

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
        dense = vectorizer._check_n_dense([[None]] if n_tok else [], dense)
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
        keys = [names[i] for i in order]
        if n_features is not None:
            keys = [murmurhash3_32(name, positive=True) % n_features for name in keys]
        ids = {}  # attribute name (or slot) -> id, in order of first appearance
        new = np.empty(len(order), dtype=np.int64)
        new[order] = np.fromiter(map(ids.setdefault, keys, map(len, repeat(ids))),
                                 dtype=np.int64, count=len(keys))
        del keys
        if len(ids) > _MAX_ATTRIBUTES:
            raise ValueError("more than 2**31 - 1 distinct attributes")
        table = np.full(n_pids, ABSENT, dtype=np.int32)
        table[used] = new
        for part in (tok_attr, zero_attr):
            for start in range(0, len(part), _MAP_SLICE):
                chunk = part[start:start + _MAP_SLICE]
                chunk[...] = table[chunk]
        vectorizer = SequenceVectorizer(n_features=n_features)
        if n_features is None:
            state = {"n_attributes_": len(ids), "vocabulary_": ids,
                     "feature_names_": list(ids),
                     "_pair_ids": dict(zip(pairs, np.where(zero, ~new, new).tolist()))}
        else:
            state = {"n_attributes_": len(ids),
                     "hash_slots_": np.fromiter(ids, dtype=np.int64, count=len(ids)),
                     "_slot_ids": ids, "_n_slots": n_features}
        vectorizer.__dict__.update(state)
        vectorizer.n_dense_features_ = 0 if dense is None else dense.shape[1]
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
    if "_n_slots" in vectorizer.__dict__:
        n_slots, get = vectorizer._n_slots, vectorizer._slot_ids.get
        names = [murmurhash3_32(name, positive=True) % n_slots for name in names]
    else:
        get = vectorizer.vocabulary_.get
    table = np.full(interned.n_pids, ABSENT, dtype=np.int32)
    table[pids] = np.fromiter(map(get, names, repeat(ABSENT)), dtype=np.int64,
                              count=len(names))
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
