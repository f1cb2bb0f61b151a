"""Inference beyond the tagger's decoding methods, from arrays and named types.

* :mod:`.explain` — explanations: a path's score term by term, label comparisons, entity spans;
* :mod:`.inspection` — weights as tables (state and transition features).
"""
