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
  :func:`~sklearn_crf._training.optimize.minimize_crf`).

The products are NumPy's (BLAS); NumPy releases the GIL inside them, so
:func:`~sklearn_crf._engine.driver.run_ranges` runs them on threads.

Word vectors repeat: every token of a word has the word's vector, so esp.train's
264,715 tokens have 12,575 distinct rows of 100-d Word2Vec vectors. When a
corpus's rows are mostly repeats (:func:`distinct_rows`), the gradient works on
its distinct rows ``U`` (a float64 copy of them, small) and the token → row map
``row_id``: the scores are ``(U @ W)[row_id]`` (one product of the distinct
rows, then a gather: :func:`add_distinct_scores`) and the counts
``Uᵀ S`` with ``S[u] = Σ_{t: row_id[t] = u} M[t]`` (a scatter in token order:
:func:`add_distinct_counts`), the same numbers as ``X @ W`` and ``Xᵀ M`` up to
rounding, at the cost of products over the distinct rows only. The numba
kernels here (row hashing, gather, scatter) are leaf kernels of
:mod:`~sklearn_crf._engine.config`'s options.
"""

from typing import NamedTuple

import numpy as np

from .config import kernel

#: rows of X per product when the caller has no blocks of its own (inference)
CHUNK_ROWS = 8192


class BlockBuffers(NamedTuple):
    """Work buffers of one thread for blocks of at most ``n_rows`` rows
    (:func:`block_buffers`): ``rows`` (n_rows, n_dense) float64 for the
    converted rows of a float32 corpus (None for a float64 one), ``scores``
    (n_rows, L) for a product. Reused block after block: a new array a block
    would cost fresh memory (page faults) every time its size is over the
    allocator's threshold for returning memory to the system."""

    rows: np.ndarray
    scores: np.ndarray


def block_buffers(dense, n_rows, n_labels):
    """:class:`BlockBuffers` for blocks of ``dense`` of at most ``n_rows`` rows."""
    rows = (None if dense.dtype == np.float64
            else np.empty((n_rows, dense.shape[1])))
    return BlockBuffers(rows, np.empty((n_rows, n_labels)))


def dense_rows(dense, a, b, buffers):
    """``dense[a:b]`` as float64: a float32 part converted into
    ``buffers.rows`` (a copy of these rows only), a float64 one as it is (a
    view)."""
    if dense.dtype == np.float64:
        return dense[a:b]
    rows = buffers.rows[: b - a]
    np.copyto(rows, dense[a:b])
    return rows


def add_dense_scores(rows, w_dense, out, buffers):
    """``out += rows @ w_dense``: the dense state scores of a block's tokens
    (``rows`` from :func:`dense_rows`) added to their (n, L) scores, the
    product in ``buffers.scores``."""
    product = buffers.scores[: rows.shape[0]]
    np.matmul(rows, w_dense, out=product)
    out += product


def dense_counts(rows, node, out):
    """``out = rowsᵀ @ node``: a block's (n_dense, L) counts from its
    ``rows`` (:func:`dense_rows`) and its (n, L) ``node`` matrix."""
    np.matmul(rows.T, node, out=out)


def add_dense_scores_blocks(dense, w_dense, token_bounds, first, stop, out):
    """``out[a:b] += dense[a:b] @ w_dense`` for each block ``[a, b)`` =
    ``token_bounds[k], token_bounds[k + 1]``, ``first <= k < stop``.

    ``out`` is (n_tokens, L) float64, ``w_dense`` (n_dense, L) float64.
    """
    if stop <= first:
        return
    sizes = np.diff(token_bounds[first:stop + 1])
    buffers = block_buffers(dense, int(sizes.max()), w_dense.shape[1])
    for k in range(first, stop):
        a, b = int(token_bounds[k]), int(token_bounds[k + 1])
        if b > a:
            add_dense_scores(dense_rows(dense, a, b, buffers), w_dense, out[a:b],
                             buffers)


def sum_blocks(block_counts):
    """Σ_k block_counts[k], added in block order: (n_dense, L)."""
    total = np.zeros(block_counts.shape[1:])
    for k in range(block_counts.shape[0]):
        total += block_counts[k]
    return total


def _weighted_onehot(labels, token_weight, a, b, out):
    """``out`` (b - a, L) set to the one-hot labels of tokens ``a:b``, each row
    times its token's weight."""
    out.fill(0.0)
    out[np.arange(b - a), labels[a:b]] = token_weight[a:b]
    return out


def observed_dense_counts(dense, labels, token_weight, token_bounds, n_labels):
    """Σ_t v_t · dense[t]ᵀ onehot(labels[t]): the weighted observed counts of
    the dense weights, (n_dense, n_labels), by blocks of ``token_bounds``
    summed in block order (``v_t`` the weight of token ``t``'s sequence)."""
    n_blocks = len(token_bounds) - 1
    blocks = np.zeros((n_blocks, dense.shape[1], n_labels))
    if n_blocks == 0:
        return sum_blocks(blocks)
    buffers = block_buffers(dense, int(np.diff(token_bounds).max()), n_labels)
    for k in range(n_blocks):
        a, b = int(token_bounds[k]), int(token_bounds[k + 1])
        if b > a:
            onehot = _weighted_onehot(labels, token_weight, a, b, buffers.scores[: b - a])
            np.matmul(dense_rows(dense, a, b, buffers).T, onehot, out=blocks[k])
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


# --------------------------------------------------------------------------- distinct rows

#: the gradient works on the distinct rows when their float64 copy takes at
#: most this share of the corpus's bytes: at most 1/8 of the tokens' rows for
#: a float32 corpus, 1/4 for a float64 one (the products then cost at most
#: that share of those over every row)
DISTINCT_BYTES = 0.25


@kernel
def distinct_rows_hashed(bits, max_distinct):
    """The distinct rows of the (n, m) uint32 matrix ``bits`` (a float array's
    bit patterns, :meth:`numpy.ndarray.view`), by an open-addressing hash
    table (linear probing) of the rows: a row's hash is ``Σ_j bits[t, j] K_j``
    modulo 2⁶⁴ (``K_j`` odd constants from splitmix64), mixed; rows of equal
    hash slots are compared word by word.

    Returns ``row_id`` (n,) int32, the index of each row's distinct row
    (numbered in order of first occurrence), and ``first`` (n_distinct,)
    int64, the first row of each distinct row; or two empty arrays as soon as
    there are more than ``max_distinct`` distinct rows.
    """
    n, m = bits.shape
    keys = np.empty(m, dtype=np.uint64)
    x = np.uint64(0x9E3779B97F4A7C15)
    for j in range(m):  # splitmix64
        x += np.uint64(0x9E3779B97F4A7C15)
        z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        keys[j] = (z ^ (z >> np.uint64(31))) | np.uint64(1)
    cap = min(max_distinct, n)
    size = 2
    while size < 2 * cap + 2:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)
    row_id = np.empty(n, dtype=np.int32)
    first = np.empty(cap, dtype=np.int64)
    count = 0
    for t in range(n):
        row = bits[t]
        h = np.uint64(0)
        for j in range(m):
            h += np.uint64(row[j]) * keys[j]
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(33)
        slot = h & mask
        while True:
            u = table[slot]
            if u < 0:
                if count == max_distinct:
                    return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int64)
                table[slot] = count
                first[count] = t
                row_id[t] = count
                count += 1
                break
            other = bits[first[u]]
            diff = np.uint32(0)
            for j in range(m):
                diff |= row[j] ^ other[j]
            if diff == 0:
                row_id[t] = u
                break
            slot = (slot + np.uint64(1)) & mask
    return row_id, first[:count]


@kernel
def add_distinct_scores(distinct_scores, row_id, start, stop, out):
    """``out[t] += distinct_scores[row_id[t]]`` for ``start <= t < stop``:
    the dense state scores of tokens from those of their distinct rows."""
    L = out.shape[1]
    for t in range(start, stop):
        src = distinct_scores[row_id[t]]
        row = out[t]
        for k in range(L):
            row[k] += src[k]


@kernel
def add_distinct_counts(node, row_id, start, stop, out):
    """``out[row_id[t]] += node[t]`` for ``t = start, ..., stop - 1`` in this
    order: the (n_distinct, L) sums of a (n_tokens, L) matrix over the tokens
    of each distinct row."""
    L = node.shape[1]
    for t in range(start, stop):
        src = node[t]
        row = out[row_id[t]]
        for k in range(L):
            row[k] += src[k]


class DistinctRows(NamedTuple):
    """A dense corpus's distinct rows (:func:`distinct_rows`).

    Attributes
    ----------
    row_id : ndarray of int32, shape (n_tokens,)
        The distinct row of each token.
    rows : ndarray of float64, shape (n_distinct, n_dense)
        The distinct rows, in order of first occurrence.
    """

    row_id: np.ndarray
    rows: np.ndarray


def distinct_rows(dense, max_bytes=DISTINCT_BYTES):
    """The :class:`DistinctRows` of ``dense`` (n_tokens, n_dense) when their
    float64 copy takes at most ``max_bytes`` times the bytes of ``dense``
    (rows are equal when their bits are), else None. Costs one pass over
    ``dense`` (stopped as soon as there are too many distinct rows)."""
    n_tokens = dense.shape[0]
    max_distinct = int(max_bytes * n_tokens * dense.itemsize / 8)
    if max_distinct < 1 or dense.shape[1] == 0:
        return None
    bits = np.ascontiguousarray(dense).view(np.uint32)
    bits.flags.writeable = False  # one specialization, whether dense is read-only or not
    row_id, first = distinct_rows_hashed(bits, max_distinct)
    if row_id.shape[0] != n_tokens:
        return None
    return DistinctRows(row_id, np.asarray(dense[first], dtype=np.float64))


def observed_distinct_counts(distinct, labels, token_weight, n_labels):
    """:func:`observed_dense_counts` over the distinct rows: ``Uᵀ S``, ``S[u]``
    the weighted one-hot labels summed over the tokens of distinct row ``u``
    (in token order)."""
    n = distinct.row_id.shape[0]
    sums = np.zeros((distinct.rows.shape[0], n_labels))
    chunk = np.empty((min(n, CHUNK_ROWS), n_labels))
    for a in range(0, n, CHUNK_ROWS):  # a chunk of one-hot rows at a time
        b = min(a + CHUNK_ROWS, n)
        onehot = _weighted_onehot(labels, token_weight, a, b, chunk[: b - a])
        add_distinct_counts(onehot, distinct.row_id[a:b], 0, b - a, sums)
    return distinct.rows.T @ sums
