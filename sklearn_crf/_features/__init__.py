"""Features: from tokens and feature dicts to the arrays the engine reads.

* :mod:`.featurizer` — :class:`SequenceFeaturizer` (sklearn-crfsuite's tutorial features);
* :mod:`.templates` — :class:`TemplateFeaturizer` (CRF++/Wapiti-style templates);
* :mod:`.base` — what both featurizers share (fit, transform dispatch, the encoded route);
* :mod:`.word_vectors` — :class:`WordVectors`, dense columns looked up by word;
* :mod:`.vectorizer` — :class:`SequenceVectorizer`: its methods' one pass over X;
* :mod:`.corpus` — :class:`EncodedCorpus` and :class:`FeatureDicts`, the corpus types;
* :mod:`.attributes` — CRFsuite's rules from a feature dict's items to attribute names;
* :mod:`.vocabulary` — names or hash slots to ids, the memo, the fitted state's one writer;
* :mod:`.encode_dicts` — the encode loop over feature dicts (one rule for misses);
* :mod:`.interned` — the featurizers' encoded route, from interned ids, no dicts;
* :mod:`.dense` — dense input (arrays, ``(tokens, array)`` pairs) checked and joined;
* :mod:`.streaming` — encoding from files and iterables in chunks;
* :mod:`.forms` — the forms of one sequence of X (tokens, dense array, pair);
* :mod:`.validation` — checks of X, y and sample weights; label codes.
"""
