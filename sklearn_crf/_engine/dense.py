"""Dense token features: their state scores and counts, one BLAS product per block.

A corpus's dense part is an (n_tokens, n_dense) float32 or float64 matrix
``X``; its weights are an (n_dense, n_labels) float64 matrix ``W``. The state
scores it adds are ``X @ W`` and the counts its gradient needs are ``Xᵀ M``
for a (n_tokens, n_labels) matrix ``M`` (the gold labels one-hot, or the node
marginals). Both are computed over fixed blocks of tokens, one ``numpy``
matrix product (BLAS) a block (the gradient reads a block's rows once for
both: :func:`dense_rows`, :func:`add_dense_scores`, :func:`dense_counts`), so
that

* a float32 ``X`` is converted to float64 one block at a time (never the whole
  corpus at once), and
* every block's product has the same operands whatever range of blocks a
  thread is given, so results are bitwise the same for any thread count
  (BLAS runs on one thread inside the solver; see
  :func:`~sklearn_crf._optimize.minimize_crf`).

These are NumPy functions, not numba kernels: the products are BLAS's.
NumPy releases the GIL inside them, so :func:`~sklearn_crf._engine.driver.run_ranges`
runs them on threads.
"""

import numpy as np

#: rows of X per product when the caller has no blocks of its own (inference)
CHUNK_ROWS = 8192


def dense_rows(dense, a, b):
    """``dense[a:b]`` as float64: a float32 part converted (a copy of these
    rows only), a float64 one as it is (a view)."""
    return np.asarray(dense[a:b], dtype=np.float64)


def add_dense_scores(rows, w_dense, out):
    """``out += rows @ w_dense``: the dense state scores of a block's tokens
    (``rows`` from :func:`dense_rows`) added to their (n, L) scores."""
    out += rows @ w_dense


def dense_counts(rows, node, out):
    """``out = rowsᵀ @ node``: a block's (n_dense, L) counts from its
    ``rows`` (:func:`dense_rows`) and its (n, L) ``node`` matrix."""
    np.matmul(rows.T, node, out=out)


def add_dense_scores_blocks(dense, w_dense, token_bounds, first, stop, out):
    """``out[a:b] += dense[a:b] @ w_dense`` for each block ``[a, b)`` =
    ``token_bounds[k], token_bounds[k + 1]``, ``first <= k < stop``.

    ``out`` is (n_tokens, L) float64, ``w_dense`` (n_dense, L) float64.
    """
    for k in range(first, stop):
        a, b = int(token_bounds[k]), int(token_bounds[k + 1])
        if b > a:
            add_dense_scores(dense_rows(dense, a, b), w_dense, out[a:b])


def sum_blocks(block_counts):
    """Σ_k block_counts[k], added in block order: (n_dense, L)."""
    total = np.zeros(block_counts.shape[1:])
    for k in range(block_counts.shape[0]):
        total += block_counts[k]
    return total


def observed_dense_counts(dense, labels, token_weight, token_bounds, n_labels):
    """Σ_t v_t · dense[t]ᵀ onehot(labels[t]): the weighted observed counts of
    the dense weights, (n_dense, n_labels), by blocks of ``token_bounds``
    summed in block order (``v_t`` the weight of token ``t``'s sequence)."""
    n_blocks = len(token_bounds) - 1
    blocks = np.zeros((n_blocks, dense.shape[1], n_labels))
    for k in range(n_blocks):
        a, b = int(token_bounds[k]), int(token_bounds[k + 1])
        if b > a:
            onehot = np.zeros((b - a, n_labels))
            onehot[np.arange(b - a), labels[a:b]] = token_weight[a:b]
            np.matmul(np.asarray(dense[a:b], dtype=np.float64).T, onehot, out=blocks[k])
    return sum_blocks(blocks)


def dense_scores(dense, w_dense):
    """``dense @ w_dense``, (n_tokens, L) float64, in chunks of
    :data:`CHUNK_ROWS` rows (a float32 ``dense`` is converted a chunk at a
    time)."""
    n_tokens = dense.shape[0]
    out = np.zeros((n_tokens, w_dense.shape[1]))
    bounds = np.append(np.arange(0, n_tokens, CHUNK_ROWS), n_tokens)
    add_dense_scores_blocks(dense, w_dense, bounds, 0, len(bounds) - 1, out)
    return out
