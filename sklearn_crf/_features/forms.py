"""The forms of one sequence of X, written once: a list of tokens (feature
dicts or attribute lists), a 2-D array (n_tokens, n_dense) of dense features,
or a ``(tokens, array)`` pair of both."""

import numpy as np


def is_pair(seq):
    """Whether ``seq`` is a ``(tokens, ndarray)`` pair."""
    return type(seq) is tuple and len(seq) == 2 and isinstance(seq[1], np.ndarray)


def is_dense_part(seq):
    """Whether ``seq`` is (or holds) an array of dense features: an ndarray that
    is not a 1-D array of tokens, or a ``(tokens, ndarray)`` pair."""
    if isinstance(seq, np.ndarray):
        return seq.ndim != 1 or seq.dtype.kind in "biufc"
    return is_pair(seq)


def dense_array(seq):
    """The array of dense features of ``seq``; None for a list of tokens."""
    if is_pair(seq):
        return seq[1]
    if isinstance(seq, np.ndarray) and seq.ndim == 2:
        return seq
    return None


def sequence_length(seq):
    """Number of tokens of ``seq``, in any of its forms."""
    if isinstance(seq, np.ndarray) and seq.ndim == 2:
        return seq.shape[0]
    if is_pair(seq):
        return len(seq[0])
    return len(seq)
