"""SequenceVectorizer: sequences of feature dicts → an :class:`EncodedCorpus`.

The estimator: its parameters, its methods and their one pass over X
(:meth:`SequenceVectorizer._encode`), which hands the work to the modules
of each job: the corpus types (:mod:`.corpus`), the vocabulary and the
fitted state (:mod:`.vocabulary`), the encode loop (:mod:`.encode_dicts`)
and dense input (:mod:`.dense`). Also the vectorizer as plain data
(:func:`vocabulary_state`, :func:`vectorizer_from_state`).
"""

from itertools import repeat
from numbers import Integral
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .attributes import raise_bad_value
from .corpus import EncodedCorpus, FeatureDicts
from .dense import fitted_dense_block, split_dense
from .encode_dicts import (
    NO_POS,
    NO_VAL,
    encode_entries,
    encode_sentence,
    entries_corpus,
    scoring_entries,
)
from .forms import sequence_length
from .memo import mark, memo_of_per_key, per_key_of_memo
from .validation import check_sequences
from .vocabulary import (
    MAX_ATTRIBUTES,
    HashingSlots,
    NameVocabulary,
    VocabularyState,
    checked_vocabulary,
    fitted_ids,
    fitted_vocabulary,
    new_vocabulary,
    set_fitted_vocabulary,
)

__all__ = ["EncodedCorpus", "FeatureDicts", "SequenceVectorizer", "VocabularyState",
           "vectorizer_from_state", "vocabulary_state"]


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
        """The vocabulary of one call: a new, empty one when fitting, else that of
        the fitted state, read only (see :meth:`_encode`)."""
        return new_vocabulary(self.n_features) if fitting else fitted_vocabulary(self)

    def _scoring_entries(self, X, n_attributes):
        """X as a prediction reads it
        (:class:`~sklearn_crf._features.encode_dicts.ScoringEntries`: an entry
        per item, none taken out) under this fitted vectorizer, with at most
        ``n_attributes`` attributes and without dense features: a list of
        lists of dict tokens (a vocabulary by name), or a featurizer's
        :class:`FeatureDicts` (from its tokens until read, then its dicts).
        None when X takes the general route (:meth:`encode`), which also
        raises the errors of bad input."""
        state = self.__dict__
        if state.get("n_dense_features_") or state["n_attributes_"] > n_attributes:
            return None
        if type(X) is FeatureDicts:
            entries = X._entries(self)
            if entries is not None:
                return entries
            X = X._list
        if type(X) is not list or "vocabulary_" not in state:
            return None
        return scoring_entries(X, fitted_vocabulary(self), self)

    def _corpus_of_entries(self, tok_ptr, entries, seq_ptr):
        """The :class:`EncodedCorpus`, under this fitted vectorizer and without
        dense features, of entries ``entries`` (int32: attribute ``a`` of value
        1, or ``~a`` of value 0) of tokens ``tok_ptr``, sequences
        ``seq_ptr``: what :meth:`encode` gives for dicts with these entries."""
        return entries_corpus(self, self.n_attributes_, tok_ptr, entries, NO_POS, NO_VAL,
                              seq_ptr)

    def _corpus_of_ids(self, tok_ptr, tok_attr, seq_ptr, zero_tok, zero_attr):
        """The :class:`EncodedCorpus` of entries of value 1 ``tok_attr`` (int32)
        of tokens ``tok_ptr`` and of value 0 ``zero_attr`` of tokens
        ``zero_tok``, under this fitted vectorizer, without dense features."""
        tok_val = np.empty(len(tok_attr), dtype=np.float64)
        tok_val.fill(1.0)
        return EncodedCorpus(tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=tok_val,
                             seq_ptr=seq_ptr, n_attributes=self.n_attributes_,
                             zero_tok=zero_tok, zero_attr=zero_attr, vectorizer=self)

    def _encode(self, X, fitting):
        """The one pass over X behind every method: an :class:`EncodedCorpus`.

        When ``fitting``, sets the fitted attributes (only after the whole of X
        is valid; :func:`~sklearn_crf._features.vocabulary.set_fitted_vocabulary`);
        otherwise changes nothing on ``self``. ``fitting="partial"`` on a
        fitted vectorizer grows its vocabulary in place, new ids after the
        known ones, cut back to what it was on an error. One encode loop
        (:mod:`~sklearn_crf._features.encode_dicts`) over a vocabulary
        strategy (:mod:`~sklearn_crf._features.vocabulary`).
        """
        if isinstance(X, EncodedCorpus):
            if fitting:
                raise TypeError(
                    "X is an EncodedCorpus: it is encoded already (its vectorizer is "
                    "fitted); fit a SequenceVectorizer on sequences of feature dicts"
                )
            return self._map_corpus(X)
        if type(X) is FeatureDicts:
            if not fitting:
                corpus = X._encoded(self)
            elif fitting is True and len(X):  # fitting anew: the vocabulary from the tokens
                corpus = X._fit_encoded(self)
            else:  # growing, or nothing to fit on (check_sequences says so)
                corpus = None
            if corpus is not None:
                return corpus
            X = X._dicts()
        dense = None
        if type(X) is not list or not all(type(seq) is list for seq in X):
            X, dense = split_dense(X, fitting)
        elif fitting and not X:
            check_sequences(X, "X")
        growing = fitting == "partial" and "n_attributes_" in self.__dict__
        if growing:
            self._check_same_hashing()
        if growing or not fitting:
            dense = fitted_dense_block(X, dense,
                                       self.__dict__.get("n_dense_features_", 0))
        vocab = (new_vocabulary(self.n_features) if fitting and not growing
                 else fitted_vocabulary(self, grow=growing))
        n_known = memo_sizes = None  # growing: the sizes to go back to on an error
        if growing:
            n_known, memo_sizes = len(vocab.ids), mark(vocab.pairs)
        try:
            try:
                corpus = None
                if len(X) == 1 and not fitting:
                    corpus = encode_sentence(X, vocab, self, dense)  # serving: one sentence
                if corpus is None:
                    corpus = encode_entries(X, vocab, self, dense)
            except (OverflowError, UnicodeDecodeError):
                raise_bad_value(X)
            if len(vocab.ids) > MAX_ATTRIBUTES:
                raise ValueError("more than 2**31 - 1 distinct attributes")
        except BaseException:
            if growing:
                vocab.truncate(n_known, memo_sizes)
            raise
        if fitting:
            set_fitted_vocabulary(self, vocab, 0 if dense is None else dense.shape[1],
                                  n_known=n_known)
        return corpus

    def _check_same_hashing(self):
        """A ValueError unless ``n_features`` is what the vocabulary was built with
        (:meth:`partial_fit_encode` continues it)."""
        hashing = "_n_slots" in self.__dict__
        if (self.n_features is None) == hashing or (
                hashing and self.n_features != self._n_slots):
            raise ValueError(
                f"n_features is {self.n_features}, but the vocabulary was built with "
                f"n_features={self.__dict__.get('_n_slots')}: partial_fit_encode "
                "continues the vocabulary of the earlier calls; call fit_encode to "
                "start a new one"
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
        dense = fitted_dense_block([[None]] if corpus.n_tokens else [], corpus.dense,
                                   self.__dict__.get("n_dense_features_", 0))
        if ("_n_slots" in self.__dict__) != ("_n_slots" in source.__dict__):
            raise ValueError(
                "X is an EncodedCorpus of a "
                + ("hashing" if "_n_slots" in source.__dict__ else "non-hashing")
                + " vectorizer; its attribute ids cannot be mapped to this "
                + ("hashing" if "_n_slots" in self.__dict__ else "non-hashing")
                + " vectorizer's"
            )
        if "_n_slots" in self.__dict__ and source._n_slots != self._n_slots:
            raise ValueError(
                f"X is an EncodedCorpus hashed into {source._n_slots} slots; this "
                f"vectorizer hashes into {self._n_slots}"
            )
        # the attribute names (or hash slots) of the source's ids, in order
        keys = fitted_ids(source)
        if len(keys) != corpus.n_attributes:
            raise ValueError(
                f"X is an EncodedCorpus of {corpus.n_attributes} attributes, but its "
                f"vectorizer has {len(keys)}"
            )
        new_ids = np.fromiter(map(fitted_ids(self).get, keys, repeat(-1)), dtype=np.int64,
                              count=len(keys))
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
        # the memo as dicts of str values and of number keys (what skops and
        # JSON can store); __setstate__ rebuilds it. A copy:
        # object.__getstate__ returns __dict__ itself
        state = dict(super().__getstate__())
        pairs = state.pop("_pair_ids", None)
        if pairs is not None:
            state["_str_ids"], state["_num_ids"] = per_key_of_memo(pairs)
        return state

    def __setstate__(self, state):
        state = dict(state)
        if "_hash_slots" in state and "hash_slots_" not in state:
            # before 0.x.y a hashing vectorizer had every slot as a column
            n = state.pop("_hash_slots")
            state["hash_slots_"] = np.arange(n, dtype=np.int64)
            state["_slot_ids"] = {slot: slot for slot in range(n)}
            state["_n_slots"] = n
        if "n_attributes_" in state and "n_dense_features_" not in state:
            state["n_dense_features_"] = 0  # before dense features
        vocab = None
        if "_n_slots" in state:
            vocab = HashingSlots(state["_n_slots"], state["_slot_ids"], grow=False)
        elif "vocabulary_" in state:
            pairs = state.get("_pair_ids")
            if pairs is None:  # see __getstate__ (and before 0.x.y, the per-key caches)
                pairs = memo_of_per_key(state.get("_str_ids", {}), state.get("_num_ids", {}))
            vocab = NameVocabulary(state["vocabulary_"], pairs, grow=False)
        super().__setstate__(state)
        if vocab is not None:  # the fitted state as fit writes it (in the same places)
            set_fitted_vocabulary(self, vocab, self.__dict__["n_dense_features_"])


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
    set_fitted_vocabulary(vec, checked_vocabulary(state, where), int(state.n_dense))
    return vec
