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

from . import _kernels
from ._validation import check_sequences

_NUMBER_TYPES = (int, float, np.integer, np.floating, np.bool_)
_MAX_ATTRIBUTES = 2**31 - 1  # attribute ids are int32
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
    hash_slots_ : ndarray of shape (n_attributes_,), dtype int64
        When hashing, the slot of each attribute id (not set otherwise).
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
        if "n_attributes_" not in self.__dict__:
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
        return self._to_csr(self.fit_encode(X))

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

    def _to_csr(self, corpus):
        """The corpus as a matrix whose columns are attribute ids, or hash slots."""
        slots = getattr(self, "hash_slots_", None)
        if slots is None:
            return corpus.to_csr()
        return sp.csr_matrix(
            (corpus.tok_val, slots[corpus.tok_attr], corpus.tok_ptr),
            shape=(corpus.n_tokens, self._n_slots),
        )

    def _encode(self, X, fitting, generic=False):
        """The one pass over X behind every method: an :class:`EncodedCorpus`.

        When ``fitting``, sets the fitted attributes (only after the whole of X
        is valid); otherwise changes nothing on ``self``. With a vocabulary
        (not hashing) the work is done by :meth:`_encode_pairs`, unless
        ``generic`` (the reference its tests compare with).

        Attribute name → id goes through ``vocabulary_`` or, when hashing, the
        hash slot of the name and ``_slot_ids`` (slot → id, the slots seen in
        fit). Two caches skip building the attribute name of the common
        features: ``_str_ids[key][value]`` for str values and ``_num_ids[key]``
        for numbers; a miss builds the name. Without hashing they are filled by
        fit only (a call that is not fitting reads them); when hashing every
        call has its own, so the fitted state grows with the slots only.

        The zero rule, the one place where it lives: an entry whose value is 0
        (a number, bool or NumPy scalar equal to 0, at any depth of nested
        dicts) is not stored with the others but listed in the zero entries;
        when fitting, its attribute joins the vocabulary (as in CRFsuite).
        """
        hashing = self.n_features if fitting else getattr(self, "_n_slots", None)
        if not (hashing or generic) and (fitting or "_pair_ids" in self.__dict__):
            return self._encode_pairs(X, fitting)
        check_sequences(X, "X", allow_empty=not fitting)
        if fitting:
            vocab, str_ids, num_ids = {}, {}, {}
        elif hashing:
            vocab, str_ids, num_ids = self._slot_ids, {}, {}
        else:
            vocab, str_ids, num_ids = self.vocabulary_, {}, {}  # see _encode_pairs
        fill_caches = fitting or bool(hashing)
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
            key = murmurhash3_32(name, positive=True) % hashing if hashing else name
            idx = vocab.get(key)
            if idx is None and fitting:
                idx = vocab[key] = len(vocab)
            return idx

        def add_entries(pairs):
            for name, x in pairs:
                idx = lookup(name)
                if idx is None:
                    if not math.isfinite(x):
                        _raise_bad_value(X)
                elif x == 0.0:
                    add_zero_tok(n_tok)
                    add_zero_attr(idx)
                else:
                    add_attr(idx)
                    add_val(x)

        try:
            for s, seq in enumerate(X):
                for token in seq:
                    if type(token) is not dict and not isinstance(token, Mapping):
                        add_entries(_list_token(token, s, token_index()))
                        tok_ptr.append(len(attrs))
                        n_tok += 1
                        continue
                    for key, value in token.items():
                        tv = type(value)
                        if tv is str:
                            ids = get_str(key)
                            idx = None if ids is None else ids.get(value)
                            if idx is None:
                                if ids is None and type(key) is not str:
                                    add_entries(_flatten_feature(key, value, s, token_index()))
                                    continue
                                idx = lookup(key + ":" + value)
                                if idx is None:
                                    continue
                                if fill_caches:
                                    if ids is None:
                                        ids = str_ids[key] = {}
                                    ids[value] = idx
                            add_attr(idx)
                            add_val(1.0)
                        elif tv is float or tv is int or tv is bool:
                            idx = get_num(key)
                            if idx is None:
                                if type(key) is not str:
                                    add_entries(_flatten_feature(key, value, s, token_index()))
                                    continue
                                idx = lookup(key)
                                if idx is None:
                                    if not math.isfinite(value):
                                        _raise_bad_value(X)
                                    continue
                                if fill_caches:
                                    num_ids[key] = idx
                            if not value:
                                add_zero_tok(n_tok)
                                add_zero_attr(idx)
                                continue
                            add_attr(idx)
                            add_val(value)
                        else:
                            add_entries(_flatten_feature(key, value, s, token_index()))
                    tok_ptr.append(len(attrs))
                    n_tok += 1
                seq_ptr.append(len(tok_ptr) - 1)
        except (OverflowError, UnicodeDecodeError):
            _raise_bad_value(X)
        tok_val = np.frombuffer(vals, dtype=np.float64) if len(vals) else np.zeros(0)
        if not np.all(np.isfinite(tok_val)):
            _raise_bad_value(X)
        if len(vocab) > np.iinfo(np.int32).max:
            raise ValueError("more than 2**31 - 1 distinct attributes")
        if fitting and hashing:
            # no name caches kept: they would grow with the attributes, not the slots
            for name in ("vocabulary_", "feature_names_", "_str_ids", "_num_ids", "_pair_ids"):
                self.__dict__.pop(name, None)
            self.n_attributes_ = len(vocab)
            self.hash_slots_ = np.fromiter(vocab, dtype=np.int64, count=len(vocab))
            self._slot_ids = vocab
            self._n_slots = hashing
        elif fitting:
            for name in ("hash_slots_", "_slot_ids", "_n_slots"):
                self.__dict__.pop(name, None)
            self.n_attributes_ = len(vocab)
            self.vocabulary_ = vocab
            self.feature_names_ = list(vocab)
            # the generic rules' reference run (generic=True): the memo of _encode_pairs
            for name in ("_str_ids", "_num_ids"):
                self.__dict__.pop(name, None)
            self._pair_ids = _pair_ids(str_ids, num_ids)
        return EncodedCorpus(
            tok_ptr=np.frombuffer(tok_ptr, dtype=np.int64),
            tok_attr=_as_array(attrs, np.int32),
            tok_val=tok_val,
            seq_ptr=np.frombuffer(seq_ptr, dtype=np.int64),
            n_attributes=self.n_attributes_,
            zero_tok=_as_array(zero_tok, np.int64),
            zero_attr=_as_array(zero_attr, np.int32),
        )

    def __getstate__(self):
        # the memo's tuple keys as per-key dicts (what skops and JSON can store);
        # __setstate__ rebuilds it
        state = super().__getstate__()
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
        super().__setstate__(state)

    def _encode_pairs(self, X, fitting):
        """:meth:`_encode` with a vocabulary: the same corpus and fitted state
        as the generic rules, faster.

        A token dict's ``(key, value)`` items are looked up all at once in
        ``_pair_ids`` (``map`` over ``dict.items()``: no Python code per
        feature), a memo of the pairs seen in fit: ``(key, str value)`` →
        attribute id, and for number keys seen with the value 1 or 0
        ``(key, True)`` → id, ``(key, False)`` → ``~id`` (a zero entry). ``True`` and ``False``
        equal 1 and 0 of every numeric type, so these hit for the values 1
        and 0 whatever their type: value 1 and a zero, as the generic rules
        say. An item that misses (a new or unseen string, another number, a
        list, a nested dict, a bad key or value) goes through the generic
        rules (:func:`_flatten_feature`) in place, so entries keep the
        token's order and attributes join the vocabulary in order of first
        appearance; when fitting, its pair joins the memo. Zero entries are
        split off at the end by one kernel.
        """
        if type(X) is not list or not all(type(seq) is list for seq in X):
            check_sequences(X, "X", allow_empty=not fitting)
        elif fitting and not X:
            check_sequences(X, "X")
        if fitting:
            vocab, pairs = {}, {}
        else:
            vocab, pairs = self.vocabulary_, self._pair_ids
        get_pair = pairs.get
        attrs = array("i")
        extend = attrs.extend
        tok_ptr = array("q", [0])
        add_ptr = tok_ptr.append
        seq_ptr = array("q", [0])
        slow_pos = []  # entries whose value is not 1, and their values
        slow_val = []

        def lookup(name):
            idx = vocab.get(name)
            if idx is None and fitting:
                idx = vocab[name] = len(vocab)
            return idx

        def add_slow(items, ids, s, t, memo=fitting):
            """The entries of a token with a miss, in the token's order."""
            append = attrs.append
            for (key, value), idx in zip(items, ids):
                if idx is not None:
                    append(idx)
                    continue
                if not fitting and type(value) is str and type(key) is str:
                    idx = vocab.get(key + ":" + value)  # mostly an unseen value
                    if idx is not None:
                        append(idx)
                    continue
                for name, x in _flatten_feature(key, value, s, t):
                    if not math.isfinite(x):
                        _raise_bad_value(X)
                    idx = lookup(name)
                    if idx is None:
                        continue
                    if x == 0.0:
                        append(~idx)
                    else:
                        if x != 1.0:
                            slow_pos.append(len(attrs))
                            slow_val.append(x)
                        append(idx)
                if memo and type(key) is str:
                    tv = type(value)
                    if tv is str:
                        pairs[(key, value)] = vocab[key + ":" + value]
                    elif (tv is bool or tv is int or tv is float) and (
                        value == 1 or value == 0
                    ):  # the values seen: (key, True) or (key, False)
                        idx = vocab[key]
                        pairs[(key, bool(value))] = idx if value else ~idx

        try:
            for s, seq in enumerate(X):
                for token in seq:
                    if type(token) is dict or isinstance(token, Mapping):
                        try:
                            ids = list(map(get_pair, token.items()))
                        except TypeError:  # an unhashable value: a list, a dict
                            ids = None
                        if ids is not None and None not in ids:
                            extend(ids)
                        else:
                            items = list(token.items())
                            add_slow(items, ids or [None] * len(items), s,
                                     len(tok_ptr) - 1 - seq_ptr[-1])
                    else:
                        names = _list_token(token, s, len(tok_ptr) - 1 - seq_ptr[-1])
                        add_slow(names, [None] * len(names), s,
                                 len(tok_ptr) - 1 - seq_ptr[-1], memo=False)
                    add_ptr(len(attrs))
                seq_ptr.append(len(tok_ptr) - 1)
        except (OverflowError, UnicodeDecodeError):
            _raise_bad_value(X)
        if len(vocab) > _MAX_ATTRIBUTES:
            raise ValueError("more than 2**31 - 1 distinct attributes")
        if fitting:
            for name in ("hash_slots_", "_slot_ids", "_n_slots", "_str_ids", "_num_ids"):
                self.__dict__.pop(name, None)
            self.n_attributes_ = len(vocab)
            self.vocabulary_ = vocab
            self.feature_names_ = list(vocab)
            self._pair_ids = pairs
        tok_ptr, tok_attr, tok_val, zero_tok, zero_attr = _kernels.split_zero_entries(
            np.frombuffer(tok_ptr, dtype=np.int64), _as_array(attrs, np.int32),
            np.array(slow_pos, dtype=np.int64), np.array(slow_val, dtype=np.float64),
        )
        return EncodedCorpus(
            tok_ptr=tok_ptr,
            tok_attr=tok_attr,
            tok_val=tok_val,
            seq_ptr=np.frombuffer(seq_ptr, dtype=np.int64),
            n_attributes=self.n_attributes_,
            zero_tok=zero_tok,
            zero_attr=zero_attr,
        )


def _pair_ids(str_ids, num_ids):
    """The memo of :meth:`SequenceVectorizer._encode_pairs` from fit's caches:
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
