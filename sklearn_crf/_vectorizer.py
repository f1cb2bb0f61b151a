"""SequenceVectorizer: sequences of feature dicts → an :class:`EncodedCorpus`."""

import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numbers import Integral

from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils import murmurhash3_32
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ._validation import check_sequences

_NUMBER_TYPES = (int, float, np.integer, np.floating, np.bool_)
_CONTAINER_TYPES = (list, tuple, set, frozenset)


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

    Examples
    --------
    >>> from sklearn_crf import SequenceVectorizer
    >>> corpus = SequenceVectorizer().fit_encode([[{"w": "a", "n": 0}, {"w": "b"}]])
    >>> corpus.n_sequences, corpus.n_tokens, corpus.n_attributes
    (1, 2, 3)
    >>> corpus.tok_attr, corpus.zero_tok, corpus.zero_attr
    (array([0, 2], dtype=int32), array([0]), array([1], dtype=int32))
    """

    tok_ptr: np.ndarray
    tok_attr: np.ndarray
    tok_val: np.ndarray
    seq_ptr: np.ndarray
    n_attributes: int
    zero_tok: np.ndarray = _empty(np.int64)
    zero_attr: np.ndarray = _empty(np.int32)

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
        )

    def to_csr(self):
        """The token-by-attribute matrix, one row per token (zeros not stored).

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_tokens, n_attributes)
            Repeated attributes of a token are summed.
        """
        return sp.csr_matrix(
            (self.tok_val, self.tok_attr, self.tok_ptr),
            shape=(self.n_tokens, self.n_attributes),
        )


class SequenceVectorizer(TransformerMixin, BaseEstimator):
    """Turn sequences of feature dicts into a sparse matrix over tokens.

    The semantics are those of CRFsuite (and so of sklearn-crfsuite), so feature
    functions written for sklearn-crfsuite work unchanged. For a key ``k`` of a
    token's dict:

    * a ``str`` value ``v`` is the attribute ``"k:v"`` with value 1 (``bytes`` are
      decoded as UTF-8 first);
    * an ``int`` or ``float`` value ``x`` is the attribute ``"k"`` with value
      ``x``; a ``bool`` is 1.0 or 0.0;
    * a list, tuple or set of strings ``[v1, v2]`` gives the attributes ``"k:v1"``
      and ``"k:v2"`` with value 1 each;
    * a nested dict ``{"k2": v}`` gives the attributes of ``{"k:k2": v}``,
      recursively.

    Attributes with value 0 join the vocabulary in :meth:`fit`, as in CRFsuite,
    but are not stored in the matrix (they add nothing to a score); the
    :class:`EncodedCorpus` of :meth:`fit_encode` and :meth:`encode` lists them
    apart.
    Repeated attributes within a token are kept as separate entries, so their
    values add up, as in CRFsuite. Attributes not seen in :meth:`fit` are
    ignored by :meth:`transform`.

    Read more about the input format in :class:`~sklearn_crf.CRFTagger`.

    Parameters
    ----------
    n_features : int, default=None
        ``None`` keeps a vocabulary of every attribute seen in :meth:`fit`.
        An int switches to the hashing trick: attribute names are hashed
        (MurmurHash3, the same in every process) into that many columns, so
        memory stays bounded however many attributes there are; colliding
        attributes share a column, and there are no names to inspect.

    Attributes
    ----------
    n_attributes_ : int
        Number of columns: the vocabulary size, or ``n_features`` when hashing.
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
        X : list of sequences of dict
            Each sequence is a list of tokens; each token a dict of features.
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
        X : list of sequences of dict
            Each sequence is a list of tokens; each token a dict of features.
        y : None
            Ignored.

        Returns
        -------
        corpus : EncodedCorpus
            X's attribute ids and values, with the zero-valued entries.
        """
        return self._encode(X, fitting=True)

    def encode(self, X):
        """X as an :class:`EncodedCorpus`; attributes unseen in fit are dropped.

        Parameters
        ----------
        X : list of sequences of dict
            Each sequence is a list of tokens; each token a dict of features.

        Returns
        -------
        corpus : EncodedCorpus
            X's attribute ids and values, with the zero-valued entries.
        """
        check_is_fitted(self, "n_attributes_")
        return self._encode(X, fitting=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the token-by-attribute matrix.

        Parameters
        ----------
        X : list of sequences of dict
            Each sequence is a list of tokens; each token a dict of features.
        y : None
            Ignored.

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_tokens, n_attributes)
            One row per token, the sequences one after another.
        """
        return self.fit_encode(X).to_csr()

    def transform(self, X):
        """Return the token-by-attribute matrix of X; unseen attributes are dropped.

        Parameters
        ----------
        X : list of sequences of dict
            Each sequence is a list of tokens; each token a dict of features.

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_tokens, n_attributes)
            One row per token, the sequences one after another.
        """
        return self.encode(X).to_csr()

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
        np.cumsum([len(seq) for seq in X], out=offsets[1:])
        return offsets

    def get_feature_names_out(self, input_features=None):
        """Attribute names by column.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str objects, shape (n_attributes,)
            The attribute names.
        """
        check_is_fitted(self, "n_attributes_")
        if self.n_features is not None:
            raise AttributeError("a hashing SequenceVectorizer has no feature names")
        return np.asarray(self.feature_names_, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        return tags

    def _encode(self, X, fitting):
        """The one pass over X behind every method: an :class:`EncodedCorpus`.

        When ``fitting``, sets ``vocabulary_`` and ``feature_names_`` (only
        after the whole of X is valid).

        ``vocabulary_`` (attribute name → id) is the truth. Two caches, built in
        fit, skip building the attribute name of the common features:
        ``_str_ids[key][value]`` for str values and ``_num_ids[key]`` for numbers;
        a miss builds the name and looks it up in the vocabulary. When hashing,
        the caches live for one call only and a miss hashes the name.

        Number features equal to 0 are left out of the entries and listed in
        the zero entries instead; when fitting their attributes join the
        vocabulary (as in CRFsuite).
        """
        check_sequences(X, "X", allow_empty=not fitting)
        hashing = self.n_features if fitting else getattr(self, "_hash_slots", None)
        if fitting or hashing:
            vocab, str_ids, num_ids = {}, {}, {}
        else:
            vocab, str_ids, num_ids = self.vocabulary_, self._str_ids, self._num_ids
        attrs = array("i")
        vals = array("d")
        add_attr = attrs.append
        add_val = vals.append
        tok_ptr = array("q", [0])
        seq_ptr = array("q", [0])
        get_str = str_ids.get
        get_num = num_ids.get
        zero_tok = array("q")
        zero_attr = array("i")
        add_zero_tok = zero_tok.append
        add_zero_attr = zero_attr.append
        n_tok = 0  # tokens done, i.e. the index of the current one

        def token_index():
            """Index of the current token within its sequence (error paths)."""
            return n_tok - seq_ptr[-1]

        def lookup(name):
            if hashing:
                return murmurhash3_32(name, positive=True) % hashing
            idx = vocab.get(name)
            if idx is None and fitting:
                idx = vocab[name] = len(vocab)
            return idx

        try:
            for s, seq in enumerate(X):
                for token in seq:
                    if type(token) is not dict and not isinstance(token, Mapping):
                        t = token_index()
                        raise TypeError(
                            f"X[{s}][{t}] is a {type(token).__name__}, expected a "
                            "dict of features (feature name -> str, number or bool)"
                        )
                    for key, value in token.items():
                        tv = type(value)
                        if tv is str:
                            ids = get_str(key)
                            idx = None if ids is None else ids.get(value)
                            if idx is None:
                                if ids is None and type(key) is not str:
                                    _flatten_feature(key, value, s, token_index())
                                idx = lookup(key + ":" + value)
                                if idx is None:
                                    continue
                                if ids is None:
                                    ids = str_ids[key] = {}
                                ids[value] = idx
                            add_attr(idx)
                            add_val(1.0)
                        elif tv is float or tv is int or tv is bool:
                            idx = get_num(key)
                            if idx is None:
                                if type(key) is not str:
                                    _flatten_feature(key, value, s, token_index())
                                idx = lookup(key)
                                if idx is None:
                                    if not math.isfinite(value):
                                        _raise_bad_value(X)
                                    continue
                                num_ids[key] = idx
                            if not value:
                                add_zero_tok(n_tok)
                                add_zero_attr(idx)
                                continue
                            add_attr(idx)
                            add_val(value)
                        else:
                            t = token_index()
                            for name, x in _flatten_feature(key, value, s, t):
                                idx = lookup(name)
                                if idx is not None:
                                    add_attr(idx)
                                    add_val(x)
                                elif not math.isfinite(x):
                                    _raise_bad_value(X)
                    tok_ptr.append(len(attrs))
                    n_tok += 1
                seq_ptr.append(len(tok_ptr) - 1)
        except (OverflowError, UnicodeDecodeError):
            _raise_bad_value(X)
        tok_val = np.frombuffer(vals, dtype=np.float64) if len(vals) else np.zeros(0)
        if not np.all(np.isfinite(tok_val)):
            _raise_bad_value(X)
        if fitting and hashing:
            for name in ("vocabulary_", "feature_names_", "_str_ids", "_num_ids"):
                self.__dict__.pop(name, None)
            self.n_attributes_ = hashing
            self._hash_slots = hashing
        elif fitting:
            if len(vocab) > np.iinfo(np.int32).max:
                raise ValueError("more than 2**31 - 1 distinct attributes")
            self.__dict__.pop("_hash_slots", None)
            self.n_attributes_ = len(vocab)
            self.vocabulary_ = vocab
            self.feature_names_ = list(vocab)
            self._str_ids = str_ids
            self._num_ids = num_ids
        return EncodedCorpus(
            tok_ptr=np.frombuffer(tok_ptr, dtype=np.int64),
            tok_attr=_as_array(attrs, np.int32),
            tok_val=tok_val,
            seq_ptr=np.frombuffer(seq_ptr, dtype=np.int64),
            n_attributes=self.n_attributes_,
            zero_tok=_as_array(zero_tok, np.int64),
            zero_attr=_as_array(zero_attr, np.int32),
        )


def _as_array(buffer, dtype):
    """An ``array.array`` as an ndarray without a copy (np.frombuffer rejects
    empty buffers)."""
    return np.frombuffer(buffer, dtype=dtype) if len(buffer) else np.zeros(0, dtype)


def _decode(value, s, t, name):
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(
            f"X[{s}][{t}][{name!r}] holds bytes that are not UTF-8: {value[:20]!r}"
        ) from None


def _flatten_feature(key, value, s, t, prefix=""):
    """(name, value) pairs of one feature, CRFsuite's rules; the slow path."""
    if not isinstance(key, str):
        raise TypeError(
            f"X[{s}][{t}] has the feature key {prefix}{key!r} of type "
            f"{type(key).__name__}; feature keys must be str"
        )
    name = prefix + key
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
        return [(name, x)] if x != 0.0 else []
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


def _raise_bad_value(X):
    """Find the first feature value of X that is not a finite float (NaN, inf, an
    int beyond float64, bytes that are not UTF-8) and say where it is."""
    for s, seq in enumerate(X):
        for t, token in enumerate(seq):
            for key, value in token.items():
                for name, x in _flatten_feature(key, value, s, t):
                    if not math.isfinite(x):
                        raise ValueError(
                            f"X[{s}][{t}][{name!r}] is {x}; feature values must "
                            "be finite"
                        )
    raise ValueError("X contains a feature value that is not a finite float")  # pragma: no cover
