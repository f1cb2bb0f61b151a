"""The entities of label paths and their probabilities, from a decoding problem.

What :meth:`~sklearn_crf.CRFTagger.predict_entities` returns and explanations
list: the entities read from each path's labels
(:func:`~sklearn_crf._model.schemes.read_entities`), each with the
probability that its tokens carry its labels, whatever the labels outside it
(the engine's span probabilities under the problem's constraints).
"""

from typing import NamedTuple

import numpy as np

from .._engine.decoding import span_log_probs
from .._model.schemes import read_entities


class EntitySpan(NamedTuple):
    """One entity of a path: tokens ``start`` to ``end - 1`` of sequence ``sequence``."""

    sequence: int
    type: str
    start: int
    end: int


def read_spans(sequences, schemes):
    """The :class:`EntitySpan` of label sequences, in order; sequence ``s`` is
    read with the rules of ``schemes[s]`` (a scheme name, or None for
    conlleval's)."""
    return [EntitySpan(s, *entity)
            for s, (labels, scheme) in enumerate(zip(sequences, schemes))
            for entity in read_entities(labels, scheme)]


def span_probabilities(problem, fb, spans, codes, n_threads):
    """``p(y[start:end] = codes[start:end] | x)`` of each span (an ndarray):
    the engine's span log-probabilities under ``problem`` (a
    :class:`~sklearn_crf._engine.decoding.DecodingProblem`, ``fb`` its
    :class:`~sklearn_crf._engine.decoding.LogForwardBackward`), ``codes`` the
    label codes of every token."""
    seq_ptr = problem.seq_ptr
    first = np.array([seq_ptr[s] + a for s, _, a, _ in spans], dtype=np.int64)
    length = np.array([b - a for _, _, a, b in spans], dtype=np.int64)
    return np.exp(span_log_probs(problem, fb, first, length, first, codes, n_threads))


def by_sequence(n_sequences, spans, probabilities):
    """``[(type, start, end, probability), ...]`` per sequence."""
    out = [[] for _ in range(n_sequences)]
    for (s, type_, a, b), p in zip(spans, probabilities.tolist()):
        out[s].append((type_, a, b, p))
    return out
