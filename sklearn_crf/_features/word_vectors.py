"""A read-only word -> vector table, and the dense blocks it gives to sentences."""

from collections.abc import Mapping
from numbers import Integral

import numpy as np

__all__ = ["WordVectors"]

#: the lookups of :meth:`WordVectors.sentence_vectors`
LOOKUPS = ("exact", "lower", "exact_then_lower")

_CHECK_ROWS = 65536  # rows checked for finiteness at a time (bounded temporary)


def _describe(obj):
    text = repr(obj)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(obj).__name__} {text}"


def _table_dtype(dtype):
    """float32 stays float32; every other numeric type becomes float64."""
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def _first_non_finite_row(matrix):
    for start in range(0, matrix.shape[0], _CHECK_ROWS):
        bad = ~np.isfinite(matrix[start : start + _CHECK_ROWS]).all(axis=1)
        if bad.any():
            return start + int(np.flatnonzero(bad)[0])
    return None


def _is_keyed_vectors(obj):
    """Duck-typed gensim ``KeyedVectors`` (``key_to_index`` + ``vectors``)."""
    return isinstance(getattr(obj, "key_to_index", None), Mapping) and hasattr(
        obj, "vectors"
    )


class WordVectors:
    """A read-only word -> vector table for :class:`SequenceFeaturizer`.

    Wraps a mapping from words to 1-D vectors (a dict, or gensim's
    ``KeyedVectors`` such as ``Word2Vec(...).wv``), validates it once, and is
    *shared, not copied*, by :func:`sklearn.base.clone` and
    :func:`copy.deepcopy`: a grid search or a cross-validation over a
    pipeline whose featurizer has ``vectors=WordVectors(...)`` keeps a single
    table in memory however many candidates it fits.  Pickling (pickle,
    joblib, skops.io) stores the table by value; :func:`sklearn_crf.save_model`
    does not store it: it refuses a Pipeline whose featurizer holds word
    vectors (save that Pipeline with pickle, joblib or skops.io, or save the
    tagger alone with ``save_model`` and build the featurizer again with its
    table when loading).

    Parameters
    ----------
    vectors : dict of str -> array-like of shape (vector_size,), or KeyedVectors
        The table.  All vectors must have the same length (at least 1), and
        hold finite numbers.  A dict is stacked into one matrix (a copy); a
        ``KeyedVectors`` is used in place (a read-only view of its
        ``vectors`` matrix, not a copy), so it must not be modified
        afterwards.

    Attributes
    ----------
    vectors : ndarray of shape (n_words, vector_size)
        The vectors, read-only, one row per word; float32 when the input is
        float32, else float64.
    words : list of str
        The words, in the order of the rows of ``vectors``:
        ``WordVectors(dict(zip(table.words, table.vectors)))`` is a copy.
    vector_size : int
        The length of the vectors.
    dtype : numpy.dtype
        ``vectors.dtype``.

    See Also
    --------
    SequenceFeaturizer : Its ``vectors`` parameter takes a ``WordVectors``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_crf._features.word_vectors import WordVectors
    >>> table = WordVectors({"madrid": np.array([1.0, 0.5]), "de": [0.0, -1.0]})
    >>> len(table), table.vector_size, "madrid" in table
    (2, 2, True)
    >>> table.sentence_vectors([["Madrid", "de", "Ayer"]], lookup="lower")[0]
    array([[ 1. ,  0.5],
           [ 0. , -1. ],
           [ 0. ,  0. ]])
    >>> import copy
    >>> copy.deepcopy(table) is table  # shared, never copied
    True
    """

    def __init__(self, vectors):
        if isinstance(vectors, WordVectors):  # already validated: share it
            self._index, self.vectors = vectors._index, vectors.vectors
            return
        if _is_keyed_vectors(vectors):
            index, matrix = self._from_keyed_vectors(vectors)
        elif isinstance(vectors, Mapping):
            index, matrix = self._from_mapping(vectors)
        else:
            raise TypeError(
                "WordVectors expects a dict of str -> 1-D vector or a gensim "
                f"KeyedVectors, got {_describe(vectors)}."
            )
        row = _first_non_finite_row(matrix)
        if row is not None:
            word = next(w for w, i in index.items() if i == row)
            raise ValueError(
                f"the vector of the word {word!r} has a non-finite value (NaN or "
                "infinity); word vectors must be finite."
            )
        matrix = matrix.view()
        matrix.flags.writeable = False
        self._index = index
        self.vectors = matrix

    @staticmethod
    def _from_keyed_vectors(kv):
        matrix = np.asarray(kv.vectors)
        index = kv.key_to_index
        if matrix.ndim != 2 or matrix.shape[1] < 1 or not np.issubdtype(
            matrix.dtype, np.number
        ):
            raise ValueError(
                "the KeyedVectors' vectors must be a 2-D numeric array with at "
                f"least one column, got shape {matrix.shape} of {matrix.dtype}."
            )
        if len(index) != matrix.shape[0]:
            raise ValueError(
                f"the KeyedVectors has {len(index)} keys but {matrix.shape[0]} "
                "vectors."
            )
        if not len(index):
            raise ValueError("the KeyedVectors is empty: it has no word vectors.")
        dtype = _table_dtype(matrix.dtype)
        if matrix.dtype != dtype or not matrix.flags.c_contiguous:
            matrix = np.ascontiguousarray(matrix, dtype=dtype)
        return index, matrix

    @staticmethod
    def _from_mapping(mapping):
        if not len(mapping):
            raise ValueError("the word vectors mapping is empty: it has no vectors.")
        index, rows, size, dtypes = {}, [], None, set()
        for word, vector in mapping.items():
            if not isinstance(word, str):
                raise TypeError(
                    f"word vectors: every key must be a str (a word), got "
                    f"{_describe(word)}."
                )
            array = np.asarray(vector)
            if array.ndim != 1 or array.shape[0] < 1:
                raise ValueError(
                    f"the vector of the word {word!r} must be 1-D and non-empty, "
                    f"got shape {array.shape}."
                )
            if not (
                np.issubdtype(array.dtype, np.number)
                and not np.issubdtype(array.dtype, np.complexfloating)
            ):
                raise TypeError(
                    f"the vector of the word {word!r} must hold real numbers, got "
                    f"dtype {array.dtype}."
                )
            if size is None:
                size = array.shape[0]
            elif array.shape[0] != size:
                raise ValueError(
                    f"the vector of the word {word!r} has {array.shape[0]} values, "
                    f"but the first vector has {size}: all vectors must have the "
                    "same length."
                )
            index[word] = len(rows)
            rows.append(array)
            dtypes.add(array.dtype)
        dtype = _table_dtype(dtypes.pop() if len(dtypes) == 1 else np.float64)
        return index, np.array(rows, dtype=dtype)

    # Shared, never copied: the table is read-only.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __sklearn_clone__(self):
        return self

    @property
    def words(self):
        """The words, in the order of the rows of :attr:`vectors` (a new list)."""
        words = [""] * len(self._index)
        for word, row in self._index.items():
            words[row] = word
        return words

    @property
    def vector_size(self):
        return int(self.vectors.shape[1])

    @property
    def dtype(self):
        return self.vectors.dtype

    def __len__(self):
        return len(self._index)

    def __contains__(self, word):
        return word in self._index

    def __getitem__(self, word):
        return self.vectors[self._index[word]]

    def __repr__(self):
        return (
            f"WordVectors(<{len(self)} words x {self.vector_size} {self.dtype.name}>)"
        )

    def __getstate__(self):
        return {"index": dict(self._index), "vectors": np.asarray(self.vectors)}

    def __setstate__(self, state):
        index, matrix = state["index"], np.asarray(state["vectors"])
        if not isinstance(index, dict) or matrix.ndim != 2 or len(index) != len(matrix):
            raise ValueError("corrupt WordVectors state: index and vectors disagree.")
        matrix = matrix.view()
        matrix.flags.writeable = False
        self._index, self.vectors = index, matrix

    def word_indices(self, words, *, lookup="exact"):
        """Row of each word in :attr:`vectors`, -1 for a word without a vector.

        Parameters
        ----------
        words : iterable of str
            The words.
        lookup : {"exact", "lower", "exact_then_lower"}, default="exact"
            How a word is looked up: as it is, lower-cased, or as it is and,
            when absent, lower-cased.

        Returns
        -------
        rows : ndarray of shape (n_words,), dtype int64
        """
        if lookup not in LOOKUPS:
            raise ValueError(f"lookup must be one of {LOOKUPS}, got {lookup!r}.")
        words = list(words)
        get = self._index.get
        if lookup == "exact":
            found = [get(w, -1) for w in words]
        elif lookup == "lower":
            found = [get(w.lower(), -1) for w in words]
        else:
            found = [get(w, None) for w in words]
            found = [
                get(w.lower(), -1) if i is None else i
                for w, i in zip(words, found)
            ]
        return np.array(found, dtype=np.int64)

    def sentence_vectors(self, sentences, *, lookup="exact", window=0):
        """The dense block of each sentence: its words' vectors side by side.

        Parameters
        ----------
        sentences : list of list of str
            The words of each sentence.
        lookup : {"exact", "lower", "exact_then_lower"}, default="exact"
            See :meth:`word_indices`.
        window : int, default=0
            Also put the vectors of the ``window`` words on each side of a word
            in its row: columns ``[v(t - window), ..., v(t), ..., v(t + window)]``.
            Words without a vector, and positions outside the sentence, give
            zeros.

        Returns
        -------
        blocks : list of ndarray of shape (n_tokens, (2 * window + 1) * vector_size)
            One C-contiguous block per sentence, of :attr:`dtype`.
        """
        lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64)
        out = self.corpus_vectors(sentences, lookup=lookup, window=window)
        bounds = np.cumsum(lengths)[:-1]
        return np.split(out, bounds) if len(lengths) else []

    def corpus_vectors(self, sentences, *, lookup="exact", window=0):
        """The dense blocks of :meth:`sentence_vectors`, one after another.

        Parameters
        ----------
        sentences : list of list of str
            The words of each sentence.
        lookup : {"exact", "lower", "exact_then_lower"}, default="exact"
            See :meth:`word_indices`.
        window : int, default=0
            See :meth:`sentence_vectors`.

        Returns
        -------
        dense : ndarray of shape (n_tokens, (2 * window + 1) * vector_size)
            One row per token of the sentences, C-contiguous, of :attr:`dtype`
            (the ``dense`` block of an :class:`~sklearn_crf.EncodedCorpus`).

        Examples
        --------
        >>> from sklearn_crf import WordVectors
        >>> table = WordVectors({"a": [1.0, 2.0]})
        >>> table.corpus_vectors([["a", "b"], ["a"]])
        array([[1., 2.],
               [0., 0.],
               [1., 2.]])
        """
        if isinstance(window, bool) or not isinstance(window, Integral) or window < 0:
            raise ValueError(f"window must be an int >= 0, got {window!r}.")
        window = int(window)
        lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64)
        rows = self.word_indices([w for s in sentences for w in s], lookup=lookup)
        n, d = rows.shape[0], self.vector_size
        width = (2 * window + 1) * d
        out = np.zeros((n, width), dtype=self.dtype)
        if n:
            starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
            position = np.arange(n) - starts
            length = np.repeat(lengths, lengths)
            for k, offset in enumerate(range(-window, window + 1)):
                inside = (position + offset >= 0) & (position + offset < length)
                source = np.flatnonzero(inside)
                found = rows[source + offset]
                hit = found >= 0
                out[source[hit], k * d : (k + 1) * d] = self.vectors[found[hit]]
        return out

