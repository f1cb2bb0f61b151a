"""State scores and the per-attribute sums of the gradient.

Ragged data is CSR-style, with one dtype per array everywhere (so that each
kernel compiles once):

* tokens → attributes: ``tok_ptr`` (n_tokens + 1, int64), ``tok_attr`` (int32
  attribute ids), ``tok_val`` (float64 attribute values);
* sequences → tokens: ``seq_ptr`` (n_sequences + 1, int64);
* attributes → state parameters: ``attr_ptr`` (n_attributes + 1, int64) and
  ``attr_label`` (int32 label of each state parameter). The state parameter of
  the ``j``-th label of attribute ``a`` has index ``attr_ptr[a] + j``.

Training gathers the state weights from a dense (n_attributes, L) matrix
``w_attr`` (zero where a pair has no parameter): a whole contiguous row per
attribute vectorizes and has no data-dependent branches
(:func:`state_scores_dense_range`). Prediction and the online solvers walk the
sparse label lists of the parameter vector instead
(:func:`state_scores_sparse_range`), so that a call costs the same whatever
the size of the model.
"""

from collections import namedtuple

import numpy as np

from .config import exact_twin, kernel
from .simd import (
    WIDTH,
    element,
    prefetch,
    prefetch_write,
    vadd,
    vfma,
    vload,
    vsplat,
    vstore,
)

#: the state scores go by runs of AHEAD tokens (about eight entries a token),
#: the counts by runs of RUN entries; at the start of each run, the rows of
#: the next run's entries are prefetched ...
AHEAD = 4
RUN = 32
#: ... when the (attributes × labels) weights or counts take more than this
#: many bytes: beyond a core's L2 cache, each row read waits for L3 or
#: memory; below, prefetches only cost instructions
PREFETCH_BYTES = 1 << 20

EntryIndex = namedtuple("EntryIndex", ["ptr", "tok", "attr", "val"])
EntryIndex.__doc__ = """The entries of a corpus grouped by ranges of attributes,
in token order within each range (:func:`entry_index`), so that each range's
expected counts are added by one thread with no scatter from several: ``ptr``
(n_ranges + 1,) int64, the entries of range ``r`` being ``ptr[r]:ptr[r + 1]``;
``tok`` (n_entries,) int32 their tokens; ``attr`` (n_entries,) int32 their
attributes (or their :class:`CountRows` codes); ``val`` (n_entries,) float64
their values, empty when every value is 1. With one range, the corpus's own
entry order."""


@kernel(inline="always")
def max_length(seq_ptr):
    """The length of the longest sequence (0 when there is none)."""
    m = 0
    for s in range(seq_ptr.shape[0] - 1):
        d = seq_ptr[s + 1] - seq_ptr[s]
        if d > m:
            m = d
    return m


@kernel(inline="always")
def logsumexp_row(x, n):
    """``log Σ exp(x[:n])``, -inf when every entry is -inf."""
    m = -np.inf
    for i in range(n):
        if x[i] > m:
            m = x[i]
    if m == -np.inf:
        return -np.inf
    s = 0.0
    for i in range(n):
        s += np.exp(x[i] - m)
    return m + np.log(s)


@kernel(inline="always")
def _token_scores(w_attr, tok_ptr, tok_attr, tok_val, t, out, i, ones):
    """``out[i]``: the state scores of token ``t``, ``L >= 8`` labels, two
    chunks of eight a pass over its entries (chunks at 0, 8, 16, ... and the
    last at ``L - 8``, which overlaps the one before when ``L`` is not a
    multiple of eight and computes the same sums again)."""
    L = out.shape[1]
    last = L - WIDTH
    zero = vsplat(0.0)
    o = i * L
    k0 = element(tok_ptr, t)
    k1 = element(tok_ptr, t + 1)
    c = 0
    while True:
        c1 = c + WIDTH if c + WIDTH < last else last  # the pass's second chunk
        d0 = zero
        d1 = zero
        if ones:
            for k in range(k0, k1):
                a = np.int64(element(tok_attr, k)) * L
                d0 = vadd(d0, vload(w_attr, a + c))
                d1 = vadd(d1, vload(w_attr, a + c1))
        else:
            for k in range(k0, k1):
                a = np.int64(element(tok_attr, k)) * L
                v = vsplat(element(tok_val, k))
                d0 = vfma(v, vload(w_attr, a + c), d0)
                d1 = vfma(v, vload(w_attr, a + c1), d1)
        vstore(out, o + c, d0)
        vstore(out, o + c1, d1)  # the same sums where it overlaps d0
        if c1 == last:
            break
        c = c1 + WIDTH if c1 + WIDTH < last else last


@kernel
def state_scores_dense_range(w_attr, tok_ptr, tok_attr, tok_val, start, stop, out):
    """Fill ``out[: stop - start]`` with the state scores of tokens
    ``start..stop-1`` from the dense (n_attributes, L) state weights.

    Each score adds the products ``v · w`` of the token's entries in their
    order, from 0.0, one FMA each (an empty ``tok_val`` means every value is
    1: the values are not read, and ``1 · w + d`` rounds as ``d + w``).

    From :data:`~sklearn_crf._engine.simd.WIDTH` labels on, a token's sums
    run eight labels per vector instruction (:func:`_token_scores`), the rows
    of the next :data:`AHEAD` tokens prefetched when the matrix is large;
    below, four and then one sum at a time in registers. Either way each sum
    is the same number.
    """
    L = out.shape[1]
    ones = tok_val.shape[0] == 0
    if L >= WIDTH:
        n_tok = tok_ptr.shape[0] - 1
        far = w_attr.shape[0] * L * 8 > PREFETCH_BYTES
        t = start
        while t < stop:  # runs of AHEAD tokens
            t1 = t + AHEAD if t + AHEAD < stop else stop
            if far:  # the rows of the next run's entries on their way
                e1 = element(tok_ptr, t1 + AHEAD if t1 + AHEAD < n_tok else n_tok)
                for k in range(element(tok_ptr, t1), e1):
                    a = np.int64(element(tok_attr, k)) * L
                    prefetch(w_attr, a)  # the row's lines: its first, ...
                    for c in range(WIDTH, L - 1, WIDTH):
                        prefetch(w_attr, a + c)
                    prefetch(w_attr, a + L - 1)  # ... and its last
            if ones:
                for u in range(t, t1):
                    _token_scores(w_attr, tok_ptr, tok_attr, tok_val, u, out, u - start, True)
            else:
                for u in range(t, t1):
                    _token_scores(w_attr, tok_ptr, tok_attr, tok_val, u, out, u - start, False)
            t = t1
        return
    for t in range(start, stop):
        i = t - start
        k0 = tok_ptr[t]
        k1 = tok_ptr[t + 1]
        j = 0
        if L >= 4:
            d0 = d1 = d2 = d3 = 0.0
            for k in range(k0, k1):
                a = tok_attr[k]
                v = 1.0 if ones else tok_val[k]
                d0 += v * w_attr[a, 0]
                d1 += v * w_attr[a, 1]
                d2 += v * w_attr[a, 2]
                d3 += v * w_attr[a, 3]
            out[i, 0] = d0
            out[i, 1] = d1
            out[i, 2] = d2
            out[i, 3] = d3
            j = 4
        while j < L:
            d0 = 0.0
            for k in range(k0, k1):
                d0 += (1.0 if ones else tok_val[k]) * w_attr[tok_attr[k], j]
            out[i, j] = d0
            j += 1


@kernel
def state_scores_sparse_range(
    w, scale, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, start, stop, out
):
    """Fill ``out[: stop - start]`` with the state scores of tokens
    ``start..stop-1`` under the weights ``scale * w`` (the first
    ``attr_ptr[-1]`` entries of ``w`` are the state weights), through the
    attribute → parameter lists: the cost is proportional to the tokens'
    entries and their parameters, not to the size of the model.

    For each label the products are added in the order of the token's
    entries, as in :func:`state_scores_dense_range` (which also adds the zeros
    of pairs without a parameter), so both give the same numbers. An empty
    ``tok_val`` means every value is 1 (``v · w`` is ``scale · w``). Compiled
    twice: here, and without FMA contraction for the online solvers
    (:data:`state_scores_sparse_range_exact`, CRFsuite's arithmetic).
    """
    L = out.shape[1]
    ones = tok_val.shape[0] == 0
    for t in range(stop - start):
        for j in range(L):
            out[t, j] = 0.0
        tok = start + t
        for k in range(tok_ptr[tok], tok_ptr[tok + 1]):
            a = tok_attr[k]
            if ones:
                v = scale
            else:
                v = tok_val[k] * scale if scale != 1.0 else tok_val[k]
            for p in range(attr_ptr[a], attr_ptr[a + 1]):
                out[t, attr_label[p]] += w[p] * v


state_scores_sparse_range_exact = exact_twin(state_scores_sparse_range)


def state_scores_dense(w_attr, tok_ptr, tok_attr, tok_val):
    """State scores of every token, shape (n_tokens, L), from the dense
    (n_attributes, L) state weights."""
    n_tokens = tok_ptr.shape[0] - 1
    out = np.empty((n_tokens, w_attr.shape[1]))
    state_scores_dense_range(w_attr, tok_ptr, tok_attr, tok_val, 0, n_tokens, out)
    return out


def state_scores_sparse(w, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, n_labels):
    """State scores of every token, shape (n_tokens, n_labels), from the
    parameter vector (:func:`state_scores_sparse_range`)."""
    n_tokens = tok_ptr.shape[0] - 1
    out = np.empty((n_tokens, n_labels))
    state_scores_sparse_range(
        w, 1.0, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, 0, n_tokens, out
    )
    return out


# --------------------------------------------------------------------------
# per-attribute sums: the observed and expected counts of the state features
# --------------------------------------------------------------------------


#: :func:`entry_index` and :func:`pair_frequencies` go through the tokens
#: by runs of about this many entries: their temporaries stay a few MB
#: whatever the corpus
ENTRY_CHUNK = 1 << 18


def _token_runs(tok_ptr):
    """``(first, stop)`` token bounds of consecutive runs of tokens, each of
    about :data:`ENTRY_CHUNK` entries (a token's entries in one run)."""
    n_tokens = tok_ptr.shape[0] - 1
    targets = np.arange(ENTRY_CHUNK, tok_ptr[-1], ENTRY_CHUNK)
    cuts = np.searchsorted(tok_ptr[:-1], targets, side="left")
    bounds = np.unique(np.concatenate([[0], cuts, [n_tokens]])).tolist()
    return list(zip(bounds[:-1], bounds[1:]))


def _run_tokens(tok_ptr, first, stop, dtype):
    """The token of each entry of tokens ``first..stop-1``."""
    return np.repeat(np.arange(first, stop, dtype=dtype), np.diff(tok_ptr[first:stop + 1]))


def attribute_counts(tok_attr, n_attributes):
    """The number of entries of each attribute, (n_attributes,) int64:
    ``np.bincount`` of :data:`ENTRY_CHUNK` entries at a time, which copies no
    more than those to int64."""
    counts = np.zeros(n_attributes, dtype=np.int64)
    chunk = ENTRY_CHUNK
    for start in range(0, len(tok_attr), chunk):
        counts += np.bincount(tok_attr[start:start + chunk], minlength=n_attributes)
    return counts


def entry_index(tok_ptr, tok_attr, tok_val, attr_bounds, attr_code=None):
    """The :class:`EntryIndex` of a corpus for the attribute ranges
    ``attr_bounds`` (range ``r`` holds attributes ``attr_bounds[r]`` to
    ``attr_bounds[r + 1] - 1``): a stable sort of the entries by range,
    each entry's attribute replaced by its ``attr_code`` when one is given
    (not empty: :class:`CountRows`).

    NumPy, run once per fit (no compile at the first fit): one range is the
    corpus's own order (its ``tok_attr`` and ``tok_val`` themselves, not
    copies, unless codes replace the attributes); several, a stable (radix)
    sort of their small range numbers, one run of tokens at a time
    (:data:`ENTRY_CHUNK`; a run's entries of a range after those of the runs
    before), so that nothing but the index takes memory in proportion to the
    entries."""
    attr_bounds = np.asarray(attr_bounds, dtype=np.int64)
    n_ranges = attr_bounds.shape[0] - 1
    val = np.empty(0) if bool(np.all(tok_val == 1.0)) else tok_val
    n_entries = tok_attr.shape[0]
    coded = attr_code is not None and attr_code.shape[0] > 0
    if n_ranges == 1:  # the corpus's own arrays (read only)
        tok = _run_tokens(tok_ptr, 0, tok_ptr.shape[0] - 1, np.int32)
        ptr = np.array([0, n_entries], dtype=np.int64)
        codes = tok_attr
        if coded:  # by runs: np.take's int64 copy of the indices stays a few MB
            codes = np.empty(n_entries, dtype=attr_code.dtype)
            for first, stop in _token_runs(tok_ptr):
                e0, e1 = tok_ptr[first], tok_ptr[stop]
                np.take(attr_code, tok_attr[e0:e1], out=codes[e0:e1])
        return EntryIndex(ptr, tok, codes, val)
    range_dtype = np.int16 if n_ranges <= np.iinfo(np.int16).max else np.int32
    range_of_attr = np.repeat(np.arange(n_ranges, dtype=range_dtype), np.diff(attr_bounds))
    runs = _token_runs(tok_ptr)
    ptr = np.zeros(n_ranges + 1, dtype=np.int64)
    for first, stop in runs:
        entries = tok_attr[tok_ptr[first]:tok_ptr[stop]]
        ptr[1:] += np.bincount(range_of_attr[entries], minlength=n_ranges)
    np.cumsum(ptr, out=ptr)
    tok = np.empty(n_entries, dtype=np.int32)
    attr = np.empty(n_entries, dtype=attr_code.dtype if coded else tok_attr.dtype)
    out_val = np.empty(n_entries) if val.shape[0] else val
    fill = ptr[:-1].copy()  # where each range's next entries go
    for first, stop in runs:
        e0, e1 = tok_ptr[first], tok_ptr[stop]
        range_of = range_of_attr[tok_attr[e0:e1]]
        order = np.argsort(range_of, kind="stable")
        run_tok = _run_tokens(tok_ptr, first, stop, np.int32)[order]
        run_attr = tok_attr[e0:e1][order]
        if coded:
            run_attr = attr_code[run_attr]
        run_val = val[e0:e1][order] if val.shape[0] else val
        k = 0
        for r, m in enumerate(np.bincount(range_of, minlength=n_ranges).tolist()):
            a = fill[r]
            tok[a:a + m] = run_tok[k:k + m]
            attr[a:a + m] = run_attr[k:k + m]
            if val.shape[0]:
                out_val[a:a + m] = run_val[k:k + m]
            fill[r] = a + m
            k += m
    return EntryIndex(ptr, tok, attr, out_val)


#: :class:`CountRows`: the code of an attribute without state parameters
NO_ROW = np.iinfo(np.int32).min
#: :func:`count_rows` gives every attribute its row while an (attributes ×
#: labels) matrix takes at most this many bytes (each entry then goes to a
#: row: no branch mispredicted), beyond only the attributes with several
#: parameters
ALL_ROWS_BYTES = 8 << 20


class CountRows:
    """Where :func:`scatter_state_counts` adds the expected counts of each
    attribute (:func:`count_rows`). While an (attributes × labels) matrix
    takes at most :data:`ALL_ROWS_BYTES`, every attribute has its row of L
    sums (eight labels per vector instruction), the attribute id itself.
    Beyond, only the attributes with several parameters have rows; one with
    a single parameter adds its one sum straight into the state part of the
    gradient, one without parameters nothing: most attributes (rare words)
    have one, so the rows take a fraction of the matrix.

    Attributes
    ----------
    attr_code : ndarray of shape (n_attributes,) or (0,), int32
        The row ``r >= 0``, ``-1 - p`` for the single parameter ``p``, or
        :data:`NO_ROW`; empty when every attribute is its own row. An
        :class:`EntryIndex` built with it holds each entry's code in place
        of its attribute (:func:`entry_index`), so the kernel looks nothing
        up.
    n_rows : int
        The rows.
    row_index : ndarray of shape (n_row_params,), int64
        The flat index in the (n_rows, L) matrix of each parameter in a row
        (with own rows, of every parameter: the layout's dense index).
    """

    def __init__(self, attr_code, n_rows, row_index, row_ptr=None, row_params=None):
        self.attr_code = attr_code
        self.n_rows = int(n_rows)
        self.row_index = row_index
        self._row_ptr = row_ptr  # None: own rows
        self._row_params = row_params

    def row_range(self, a0, a1):
        """The rows ``(r0, r1)`` of attributes ``a0..a1-1``."""
        if self._row_ptr is None:
            return a0, a1
        return int(self._row_ptr[a0]), int(self._row_ptr[a1])

    def gather(self, g_rows, g_state):
        """The sums of the parameters in rows, from ``g_rows`` (n_rows, L)
        into ``g_state`` (n_state,), which holds those of the others."""
        if self._row_params is None:
            np.take(g_rows.ravel(), self.row_index, out=g_state)
        else:
            g_state[self._row_params] = np.take(g_rows.ravel(), self.row_index)


def count_rows(attr_ptr, attr_label, L, dense_index, all_rows_bytes=ALL_ROWS_BYTES):
    """The :class:`CountRows` of a layout's ``attr_ptr`` / ``attr_label``
    at ``L`` labels (rows in attribute order; ``dense_index`` the flat index
    of each parameter in an (n_attributes, L) matrix): every attribute its
    row while such a matrix takes at most ``all_rows_bytes`` (or when a
    parameter's code would not fit int32), else a row for those with several
    parameters.

    Examples
    --------
    >>> attr_ptr, attr_label = np.array([0, 2, 3, 3, 5]), np.array([0, 1, 1, 0, 2])
    >>> dense_index = np.array([0, 1, 4, 9, 11])
    >>> rows = count_rows(attr_ptr, attr_label, 3, dense_index)
    >>> rows.attr_code.shape, rows.n_rows, rows.row_index is dense_index
    ((0,), 4, True)
    >>> rows = count_rows(attr_ptr, attr_label, 3, dense_index, all_rows_bytes=0)
    >>> rows.attr_code.tolist(), rows.n_rows, rows.row_range(1, 4)
    ([0, -3, -2147483648, 1], 2, (1, 2))
    >>> rows.row_index.tolist()
    [0, 1, 3, 5]
    """
    n_params = np.diff(attr_ptr)
    n_attr = len(n_params)
    if n_attr * L * 8 <= all_rows_bytes or len(attr_label) >= np.iinfo(np.int32).max:
        return CountRows(np.zeros(0, dtype=np.int32), n_attr, dense_index)
    multi = n_params >= 2
    row_ptr = np.zeros(n_attr + 1, dtype=np.int64)
    np.cumsum(multi, out=row_ptr[1:])
    attr_code = np.where(multi, row_ptr[:-1],
                         np.where(n_params == 1, -1 - attr_ptr[:-1], NO_ROW)).astype(np.int32)
    param_attr = np.repeat(np.arange(n_attr), n_params)
    row_params = np.flatnonzero(multi[param_attr]).astype(np.int64)
    row_index = row_ptr[param_attr[row_params]] * L + attr_label[row_params]
    return CountRows(attr_code, row_ptr[-1], row_index, row_ptr, row_params)


@kernel
def scatter_state_counts(node, ent_tok, ent_code, ent_val, k0, k1, tok0, attr_label,
                         g_rows, g_state):
    """``val_k · node[tok_k - tok0]`` added where each entry's code (a
    :class:`CountRows` code, or its attribute, its own row) puts it: its row
    of ``g_rows`` (n_rows, L), its single parameter's label into ``g_state``
    (n_state,), or nowhere; for the entries ``k0..k1-1`` of an
    :class:`EntryIndex`, in their order (``ent_val`` empty: every value is
    1). These are the
    expected counts of the state features, from the weighted node marginals
    ``node`` of the tokens from ``tok0`` on (the entries' tokens, less
    ``tok0``, are its rows).

    Every (attribute, label) sum gets its terms in token order whatever the
    ranges and blocks the entries are taken in, so the result does not depend
    on them, nor on the thread count, and each is the number a dense
    (n_attributes, L) matrix of sums would hold. From
    :data:`~sklearn_crf._engine.simd.WIDTH` labels on, a row takes eight
    labels per vector instruction, in chunks (below 16 labels the first and
    the last; the last chunk, at ``L - 8``, loaded and added before the
    others are stored: where it overlaps the one before, it stores the same
    sums), the rows of the next run of :data:`RUN` entries prefetched when
    the rows are large. The body is one loop, no inlined helper: numba
    counts references to the arrays an inlined body gets, in the loop.
    """
    L = node.shape[1]
    ones = ent_val.shape[0] == 0
    if L >= WIDTH:
        n_ent = ent_code.shape[0]
        far = g_rows.shape[0] * L * 8 > PREFETCH_BYTES
        short = L < 2 * WIDTH
        last = L - WIDTH
        k = k0
        while k < k1:  # runs of RUN entries
            stop = k + RUN if k + RUN < k1 else k1
            if far:  # the rows of the next run on their way
                for e in range(stop, stop + RUN if stop + RUN < n_ent else n_ent):
                    row = np.int64(element(ent_code, e))
                    if row < 0:
                        continue
                    a = row * L
                    prefetch_write(g_rows, a)  # the row's lines: its first, ...
                    for c in range(WIDTH, L - 1, WIDTH):
                        prefetch_write(g_rows, a + c)
                    prefetch_write(g_rows, a + L - 1)  # ... and its last
            for e in range(k, stop):
                r = (np.int64(element(ent_tok, e)) - tok0) * L
                row = np.int64(element(ent_code, e))
                if row >= 0:
                    q = row * L
                    if ones:
                        tail = vadd(vload(g_rows, q + last), vload(node, r + last))
                    else:
                        v = vsplat(element(ent_val, e))
                        tail = vfma(v, vload(node, r + last), vload(g_rows, q + last))
                    if short:
                        if ones:
                            head = vadd(vload(g_rows, q), vload(node, r))
                        else:
                            head = vfma(v, vload(node, r), vload(g_rows, q))
                        vstore(g_rows, q, head)
                    else:
                        for c in range(0, last, WIDTH):
                            if ones:
                                d = vadd(vload(g_rows, q + c), vload(node, r + c))
                            else:
                                d = vfma(v, vload(node, r + c), vload(g_rows, q + c))
                            vstore(g_rows, q + c, d)
                    vstore(g_rows, q + last, tail)
                elif row != NO_ROW:
                    p = -1 - row
                    x = element(node, r + element(attr_label, p))
                    if ones:
                        g_state[p] += x
                    else:
                        g_state[p] += element(ent_val, e) * x
            k = stop
        return
    for k in range(k0, k1):
        t = ent_tok[k] - tok0
        row = np.int64(ent_code[k])
        v = 1.0 if ones else ent_val[k]
        if row >= 0:
            g = g_rows[row]
            if ones:
                for j in range(L):
                    g[j] += node[t, j]
            else:
                for j in range(L):
                    g[j] += v * node[t, j]
        elif row != NO_ROW:
            p = -1 - row
            if ones:
                g_state[p] += node[t, attr_label[p]]
            else:
                g_state[p] += v * node[t, attr_label[p]]


@kernel
def add_path_features(
    vec, coef, path, start, n, tok_ptr, tok_attr, tok_val, attr_ptr, attr_label, trans_index,
    actives, n_active,
):
    """``vec[k] += coef * f_k(x, path)`` for every feature on a label path.

    CRFsuite's ``features_on_path`` order: each token's state features in the
    order of its attributes, then the transition into it. An empty
    ``tok_val`` means every value is 1 (``coef`` is added as it is: the bits
    of ``coef * 1.0``). When ``actives`` is not empty, each touched index is
    appended to it from ``n_active`` on (duplicates included); returns the
    new count. Compiled twice: here (the observed counts of the objective)
    and without FMA contraction for the online solvers
    (:data:`add_path_features_exact`).
    """
    record = actives.shape[0] > 0
    ones = tok_val.shape[0] == 0
    prev = -1
    for t in range(n):
        tok = start + t
        j = path[t]
        for k in range(tok_ptr[tok], tok_ptr[tok + 1]):
            a = tok_attr[k]
            for p in range(attr_ptr[a], attr_ptr[a + 1]):
                if attr_label[p] == j:
                    vec[p] += coef if ones else coef * tok_val[k]
                    if record:
                        actives[n_active] = p
                        n_active += 1
        if prev >= 0:
            q = trans_index[prev, j]
            if q >= 0:
                vec[q] += coef
                if record:
                    actives[n_active] = q
                    n_active += 1
        prev = j
    return n_active


add_path_features_exact = exact_twin(add_path_features)


@kernel
def observed_counts(
    tok_ptr, tok_attr, tok_val, attr_ptr, attr_label, trans_index, labels, seq_ptr,
    seq_weight, n_params,
):
    """Weighted observed feature counts on the gold paths (n_params,): Σ_s v_s
    F(x_s, y_s) by :func:`add_path_features`, sequences in order (an
    empty ``tok_val``: every value is 1).

    A token attribute whose (attribute, gold label) pair has no parameter (pruned
    by ``min_freq``) contributes nothing; nor does a transition without one
    (``trans_index`` -1).
    """
    out = np.empty(n_params)
    for p in range(n_params):
        out[p] = 0.0
    no_actives = np.empty(0, dtype=np.int64)
    for s in range(seq_ptr.shape[0] - 1):
        a = seq_ptr[s]
        n = seq_ptr[s + 1] - a
        add_path_features(
            out, seq_weight[s], labels[a:a + n], a, n, tok_ptr, tok_attr, tok_val,
            attr_ptr, attr_label, trans_index, no_actives, 0,
        )
    return out


def pair_frequencies(tok_ptr, tok_attr, tok_val, labels, n_attributes, n_labels):
    """Sum of values and occurrence flags of every (attribute, label) pair.

    Returns ``freq`` (n_attributes, L) float64 and ``seen`` (n_attributes, L)
    bool over the tokens' gold labels; each sum adds its values in entry order
    (``np.add.at``; values all 1: the counts, exact). NumPy, run once per fit
    (no compile at the first fit), one run of tokens at a time
    (:data:`ENTRY_CHUNK`), so that no temporary grows with the entries.
    """
    size = n_attributes * n_labels
    ones = bool(np.all(tok_val == 1.0))
    freq = np.zeros(size)
    seen = None if ones else np.zeros(size, dtype=np.bool_)
    for first, stop in _token_runs(tok_ptr):
        e0, e1 = tok_ptr[first], tok_ptr[stop]
        key = tok_attr[e0:e1].astype(np.int64)
        key *= n_labels
        key += np.repeat(labels[first:stop], np.diff(tok_ptr[first:stop + 1]))
        if ones:  # sums of ones: counts, exact in float64 (no (size,) temporary)
            np.add.at(freq, key, 1.0)
        else:
            np.add.at(freq, key, tok_val[e0:e1])
            seen[key] = True
    if ones:
        seen = freq > 0.0
    return freq.reshape(n_attributes, n_labels), seen.reshape(n_attributes, n_labels)
