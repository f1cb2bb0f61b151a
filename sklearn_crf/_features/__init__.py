"""Features: from tokens and feature dicts to the arrays the engine reads.

* :mod:`.featurizer` — :class:`SequenceFeaturizer` (sklearn-crfsuite's tutorial features);
* :mod:`.templates` — :class:`TemplateFeaturizer` (CRF++/Wapiti-style templates);
* :mod:`.base` — what both featurizers share (fit, transform dispatch, the encoded route);
* :mod:`.word_vectors` — :class:`WordVectors`, dense columns looked up by word;
* :mod:`.vectorizer` — :class:`SequenceVectorizer` and :class:`EncodedCorpus`, the encode loops;
* :mod:`.streaming` — encoding from files and iterables in chunks;
* :mod:`.forms` — the forms of one sequence of X (tokens, dense array, pair);
* :mod:`.validation` — checks of X, y and sample weights; label codes.
"""
