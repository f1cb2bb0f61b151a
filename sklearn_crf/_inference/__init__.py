"""Inference beyond the tagger's decoding methods, from arrays and named types
(a fitted model, an encoded corpus, its decoding problem), never the estimator.

* :mod:`.explain` — explanations: a path's score term by term, label comparisons;
* :mod:`.entities` — the entities of label paths and their probabilities;
* :mod:`.inspection` — weights as tables (state and transition features).
"""
