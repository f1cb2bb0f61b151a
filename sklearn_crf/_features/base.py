"""What the featurizers share: ``fit``, ``transform`` and the encoded path.

:class:`~sklearn_crf.SequenceFeaturizer` and
:class:`~sklearn_crf.TemplateFeaturizer` turn sentences into per-token
features, either as feature dicts (``output="dicts"``) or as an
:class:`~sklearn_crf.EncodedCorpus` built without dicts (``output="encoded"``).
Around their own feature code the steps are the same, and are written here
once: ``fit`` (check the parameters, or learn the vocabulary),
``fit_transform`` (one pass over X when encoded), ``transform``'s choice of
output, and the encoded path (a sentence at a time through the fitted
vectorizer's memo; the word vectors as the corpus's dense block;
:func:`~sklearn_crf._features.interned.encode_interned`).
"""

import weakref
from collections.abc import Mapping

from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import InvalidParameterError

from .corpus import FeatureDicts
from .interned import FEW_TOKENS, encode_interned
from .word_vectors import WordVectors


def _check_sentence_list(X):
    """A TypeError unless X can be a list of sentences."""
    if isinstance(X, (str, bytes, Mapping)) or not hasattr(X, "__iter__"):
        text = repr(X)
        text = text if len(text) <= 60 else text[:57] + "..."
        raise TypeError(
            "X must be a list of sentences (each a list of tokens), got "
            f"{type(X).__name__} {text}."
        )


#: featurizer -> (its parameters' values, its plan): the parameters checked and
#: compiled once, not at every call (kept outside the featurizer, whose state
#: transform does not change)
_PLANS = weakref.WeakKeyDictionary()


def _frozen(value):
    return tuple(map(_frozen, value)) if type(value) is list else value


class _Sentences:
    """A featurizer's checked sentences, as a
    :class:`~sklearn_crf._features.corpus.FeatureDicts` reads them: their
    dicts, or their tokens encoded under (or fitting) a vectorizer."""

    __slots__ = ("featurizer", "checked")

    def __init__(self, featurizer, checked):
        self.featurizer = featurizer
        self.checked = checked

    def dicts(self):
        return self.featurizer._dicts(self.checked)

    def encode(self, vectorizer):
        return self.featurizer._token_ids(self.checked, vectorizer)

    def fit_encode(self, vectorizer):
        return self.featurizer._fit_tokens(self.checked, vectorizer)

    def entries(self, vectorizer):
        return self.featurizer._token_entries(self.checked, vectorizer)


class _Featurizer(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """The base of the featurizers (not public).

    A subclass has the parameters ``vectors``, ``vector_lookup``,
    ``vector_window``, ``output`` and ``hashing``, defines ``transform`` (its
    docstring; the body ``return self._transform(X)``) and provides:

    ``_checked(X)``
        X after the parameters' and the sentences' checks, in the
        subclass's own form (raises TypeError or ValueError naming the
        sentence and token).
    ``_words(checked)``
        Each sentence's words (its first column): a list of sequences of str.
    ``_dicts(checked)``
        The ``output="dicts"`` result.
    ``_encoded_rows(checked)``
        ``(rows, seq_ptr, interned, max_entries)`` for
        :func:`~sklearn_crf._features.interned.encode_interned`: the features of
        the dicts, never built.
    ``_make_plan()``
        The parameters checked and compiled for ``_checked`` (read through
        :meth:`_plan`, which remembers it while the parameters keep their
        values).
    ``_token_ids(checked, vectorizer)``
        The :class:`~sklearn_crf.EncodedCorpus` of the ``output="dicts"``
        result under a fitted vectorizer, built from the tokens (no dict), or
        None; without word vectors, ``transform`` returns a
        :class:`~sklearn_crf._features.corpus.FeatureDicts` that a tagger
        encodes through it.
    ``_token_entries(checked, vectorizer)``
        The :class:`~sklearn_crf._features.encode_dicts.ScoringEntries` of
        that result under a fitted vectorizer, from the tokens, or None
        (then a tagger's predict encodes it).
    """

    def _plan(self):
        """The plan of the parameters' current values: checked
        (``_validate_params`` and the contents) at the first call and after a
        parameter changed, else the one made then."""
        key = tuple(map(self.__dict__.get, self._parameter_constraints))
        if list in map(type, key):  # (compared by value, not as the list that may change)
            key = tuple(map(_frozen, key))
        entry = _PLANS.get(self)
        if entry is not None:
            try:
                if entry[0] == key:
                    return entry[1]
            except ValueError:  # e.g. an array among the values: checked below
                pass
        self._validate_params()
        plan = self._make_plan()
        _PLANS[self] = (key, plan)
        return plan

    def _check_parameters(self):
        """The checks ``fit`` makes of the parameters with ``output="dicts"``."""
        self._plan()

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the parameters; with ``output="encoded"``, learn the vocabulary.

        Parameters
        ----------
        X : list of sentences
            The sentences, as :meth:`transform` takes them; ignored unless
            ``output="encoded"``.

        y : None
            Ignored.

        Returns
        -------
        self : object
            The transformer itself.
        """
        if self.output == "encoded":
            self._encode(X, fitting=True)
        else:
            self._check_parameters()
            self.__dict__.pop("vectorizer_", None)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit, then transform X (one pass over X with ``output="encoded"``).

        Parameters
        ----------
        X : list of sentences
            As :meth:`transform` takes them.

        y : None
            Ignored.

        Returns
        -------
        X_features : list or EncodedCorpus
            What :meth:`transform` returns.
        """
        if self.output == "encoded":
            return self._encode(X, fitting=True)
        return self.fit(X).transform(X)

    def _transform(self, X):
        """``transform``: the dicts, or the encoded corpus."""
        if self.output == "encoded":
            return self._encode(X, fitting=False)
        checked = self._checked(X)
        if self.vectors is not None:
            return self._dicts(checked)
        return FeatureDicts(len(checked[1]), _Sentences(self, checked))

    def _fit_tokens(self, checked, vectorizer):
        """The corpus of the ``output="dicts"`` result (without word vectors)
        with ``vectorizer``, a new :class:`~sklearn_crf.SequenceVectorizer`,
        fitted on it, from the tokens (the encoded route's interned ids, no
        dict built): the corpus and vocabulary of its ``fit_encode`` of the
        dicts."""
        rows, seq_ptr, interned, max_entries = self._encoded_rows(checked)
        return encode_interned(rows, seq_ptr, interned, max_entries=max_entries,
                               fit_into=vectorizer)

    def _encode(self, X, fitting):
        """The encoded path: X as an EncodedCorpus, never building feature
        dicts; ``fitting`` sets ``vectorizer_`` (a new vectorizer, never
        changed in place, so a tagger fitted on an earlier vocabulary keeps
        it)."""
        checked = self._checked(X)
        words = self._words(checked)
        if fitting and not words:
            # nothing to learn (e.g. load_model's check of the parameters):
            # no vocabulary, so transform gives corpora of their own
            self.__dict__.pop("vectorizer_", None)
            fitting = False
        vectorizer = None if fitting else self.__dict__.get("vectorizer_")
        if (vectorizer is not None and self.vectors is None
                and sum(map(len, words)) < FEW_TOKENS):
            # a sentence at a time (serving): the tokens' ids cost less than the
            # NumPy calls of the bulk path; the same corpus
            corpus = self._token_ids(checked, vectorizer)
            if corpus is not None:
                return corpus
        if vectorizer is not None and sum(map(len, words)) < FEW_TOKENS:
            return vectorizer.encode(self._dicts(checked))
        dense = None
        if self.vectors is not None:
            dense = self.vectors.corpus_vectors(
                words, lookup=self.vector_lookup, window=self.vector_window)
        rows, seq_ptr, interned, max_entries = self._encoded_rows(checked)
        del checked, words  # the sentences' own objects, before the corpus is built
        corpus = encode_interned(rows, seq_ptr, interned, vectorizer=vectorizer,
                                 n_features=self.hashing, dense=dense,
                                 max_entries=max_entries)
        if fitting:
            self.vectorizer_ = corpus.vectorizer
        return corpus

    def _validate_params(self):
        vectors = self.vectors
        if vectors is not None and not isinstance(vectors, WordVectors):
            if isinstance(vectors, Mapping) or hasattr(vectors, "key_to_index"):
                raise InvalidParameterError(
                    f"The 'vectors' parameter of {type(self).__name__} must be a "
                    f"WordVectors or None. Got {type(vectors).__name__} instead: wrap "
                    "it, vectors=WordVectors(table) (validated once, and shared rather "
                    "than copied by clone in a search)."
                )
        super()._validate_params()

    def set_output(self, *, transform=None):
        """Set the output container; only the default container is supported.

        The output is a list of lists of dicts (or an encoded corpus), which
        cannot be represented as a pandas or polars DataFrame; this method
        exists so that ``Pipeline.set_output(transform="default")`` works.

        Parameters
        ----------
        transform : {"default"} or None, default=None
            ``"default"`` and ``None`` leave the output unchanged.

        Returns
        -------
        self : object
            The transformer itself.
        """
        if transform is None or transform == "default":
            return self
        raise ValueError(
            f"{type(self).__name__} does not support set_output(transform="
            f"{transform!r}): its output is a list of lists of feature dicts, not a "
            "2-D array."
        )

    def __sklearn_is_fitted__(self):
        """Return True: ``transform`` works without fitting (see ``output``)."""
        return True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = []
        return tags
