"""Dense input: sequences given as 2-D arrays or ``(tokens, array)`` pairs.

The checks of the dense forms (one row per token, real, finite, the same
number of columns everywhere) and the join of the arrays into the corpus'
one dense block, without a copy when they already lie one after another in
memory; apart from the encode loop, which reads the tokens only.
"""

from collections.abc import Mapping, Sequence

import numpy as np

from .forms import is_dense_part, is_pair
from .validation import check_sequences


def _check_dense_array(array, s):
    """The array of dense features of sequence ``s``, checked (2-D, real)."""
    if array.ndim != 2:
        raise ValueError(
            f"X[{s}] is an array of {array.ndim} dimensions with shape {array.shape}; "
            "dense features are a 2-D array (n_tokens, n_dense) per sequence"
        )
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"X[{s}] is an array of dtype {array.dtype}; dense features must be "
            "float32 or float64 (bool and integers are cast to float64)"
        )
    return array


def split_dense(X, fitting):
    """X's token sequences and its dense block (None when no sequence has an
    array), after the checks of :func:`check_sequences` and of the dense forms:
    a 2-D array, or a tuple (tokens, array) with one row per token."""
    if (isinstance(X, (str, bytes, Mapping)) or not isinstance(X, (Sequence, np.ndarray))
            or not any(map(is_dense_part, X))):
        check_sequences(X, "X", allow_empty=not fitting)
        return X, None
    tokens, arrays, where = [], [], []  # where: sequences with an array
    for s, seq in enumerate(X):
        if isinstance(seq, np.ndarray) and is_dense_part(seq):
            array = _check_dense_array(seq, s)
            tokens.append([{}] * array.shape[0])
        elif is_pair(seq):
            toks, array = seq
            if not isinstance(toks, (list, tuple)) and not (
                    isinstance(toks, np.ndarray) and toks.ndim == 1 and toks.dtype.kind == "O"):
                raise TypeError(
                    f"X[{s}] is a (tokens, array) tuple whose tokens are a "
                    f"{type(toks).__name__}; they must be a list (or tuple) of tokens"
                )
            array = _check_dense_array(array, s)
            if len(toks) != array.shape[0]:
                raise ValueError(
                    f"X[{s}] has {len(toks)} tokens but an array of {array.shape[0]} "
                    "rows; the array needs one row per token"
                )
            tokens.append(toks)
        else:
            if not isinstance(seq, (list, tuple)) and not (
                    isinstance(seq, np.ndarray) and seq.ndim == 1):
                raise TypeError(
                    f"X[{s}] is a {type(seq).__name__}; each sequence must be a list "
                    "(or tuple) of tokens, a 2-D array or a (tokens, array) tuple"
                )
            if len(seq):
                first = where[0] if where else next(i for i in range(s, len(X))
                                                    if is_dense_part(X[i]))
                raise ValueError(
                    f"X[{s}] is a list of tokens without dense features, but X[{first}] "
                    "has an array: give every sequence an array (a 2-D array or a "
                    "(tokens, array) tuple), or none"
                )
            tokens.append(seq)
            continue
        if arrays and array.shape[1] != arrays[0].shape[1]:
            raise ValueError(
                f"X[{s}] has {array.shape[1]} dense columns but X[{where[0]}] has "
                f"{arrays[0].shape[1]}; every sequence needs the same number"
            )
        arrays.append(array)
        where.append(s)
    dense = _adjacent_rows(arrays)
    if dense is None:
        dtype = (np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64)
        dense = np.concatenate(arrays, axis=0, dtype=dtype)
    row = _first_non_finite_row(dense)
    if row >= 0:
        col = int(np.flatnonzero(~np.isfinite(dense[row]))[0])
        seq_ptr = np.cumsum([0] + [len(t) for t in tokens])
        s = int(np.searchsorted(seq_ptr, row, side="right") - 1)
        raise ValueError(
            f"X[{s}] has {dense[row, col]} at token {row - seq_ptr[s]}, dense column "
            f"{col}; dense features must be finite"
        )
    return tokens, dense


def _adjacent_rows(arrays):
    """The rows of ``arrays`` as one read-only (n_tokens, n_dense) view, without a
    copy, when they already lie one after the other in memory (e.g. the slices
    of one matrix, ``[V[a:b] for a, b in ...]``): each C-contiguous, float32 or
    float64, of one dtype, the non-empty ones adjacent. None otherwise."""
    nonempty = [a for a in arrays if a.shape[0]]
    if not nonempty:
        return None
    head = nonempty[0]
    dtype = head.dtype
    if dtype not in (np.float32, np.float64):
        return None
    n_rows = 0
    address = head.__array_interface__["data"][0]
    for a in nonempty:
        if (a.dtype != dtype or not a.flags.c_contiguous
                or a.__array_interface__["data"][0] != address):
            return None
        address += a.nbytes
        n_rows += a.shape[0]
    # every byte of the view belongs to one of the arrays: safe to stride over
    # (a one-row or one-column array is C-contiguous whatever its other stride)
    return np.lib.stride_tricks.as_strided(
        head, shape=(n_rows, head.shape[1]),
        strides=(head.shape[1] * dtype.itemsize, dtype.itemsize), writeable=False)


#: rows per chunk of the finiteness check (no temporary the size of the corpus)
_FINITE_ROWS = 4096


def _first_non_finite_row(dense):
    """The first row of ``dense`` with a NaN or an infinity, or -1; checked a
    chunk of rows at a time into one small buffer."""
    n = dense.shape[0]
    buf = np.empty((min(n, _FINITE_ROWS), dense.shape[1]), dtype=bool)
    for a in range(0, n, _FINITE_ROWS):
        b = min(a + _FINITE_ROWS, n)
        finite = np.isfinite(dense[a:b], out=buf[: b - a])
        if not finite.all():
            return a + int(np.flatnonzero(~finite.all(axis=1))[0])
    return -1


def fitted_dense_block(X, dense, want):
    """X's dense block (None: none) as a fitted vectorizer takes it: checked
    against its ``want`` columns per token (an X of empty sequences only gets
    an empty one)."""
    got = 0 if dense is None else dense.shape[1]
    if got == want:
        return dense
    if dense is None and not any(map(len, X)):  # no tokens
        return np.zeros((0, want), dtype=np.float64)
    if dense is None:
        raise ValueError(
            f"X has no dense features, but the vectorizer was fitted with "
            f"{want} dense columns per token: give each sequence as an array "
            "or a (tokens, array) tuple"
        )
    raise ValueError(
        f"X has {got} dense columns per token, but the vectorizer was fitted "
        f"with {want}"
    )
