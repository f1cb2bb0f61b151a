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
attributes; ``val`` (n_entries,) float64 their values, empty when every value
is 1. With one range, the corpus's own entry order."""


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


def entry_index(tok_ptr, tok_attr, tok_val, attr_bounds):
    """The :class:`EntryIndex` of a corpus for the attribute ranges
    ``attr_bounds`` (range ``r`` holds attributes ``attr_bounds[r]`` to
    ``attr_bounds[r + 1] - 1``): a stable sort of the entries by range.

    NumPy, run once per fit (no compile at the first fit): one range is the
    corpus's own order (its ``tok_attr`` and ``tok_val`` themselves, not
    copies); several, a stable (radix) sort of their small range numbers,
    one run of tokens at a time (:data:`ENTRY_CHUNK`; a run's entries of a
    range after those of the runs before), so that nothing but the index
    takes memory in proportion to the entries."""
    attr_bounds = np.asarray(attr_bounds, dtype=np.int64)
    n_ranges = attr_bounds.shape[0] - 1
    val = np.empty(0) if bool(np.all(tok_val == 1.0)) else tok_val
    n_entries = tok_attr.shape[0]
    if n_ranges == 1:  # the corpus's own arrays (read only)
        tok = _run_tokens(tok_ptr, 0, tok_ptr.shape[0] - 1, np.int32)
        ptr = np.array([0, n_entries], dtype=np.int64)
        return EntryIndex(ptr, tok, tok_attr, val)
    range_dtype = np.int16 if n_ranges <= np.iinfo(np.int16).max else np.int32
    range_of_attr = np.repeat(np.arange(n_ranges, dtype=range_dtype), np.diff(attr_bounds))
    runs = _token_runs(tok_ptr)
    ptr = np.zeros(n_ranges + 1, dtype=np.int64)
    for first, stop in runs:
        entries = tok_attr[tok_ptr[first]:tok_ptr[stop]]
        ptr[1:] += np.bincount(range_of_attr[entries], minlength=n_ranges)
    np.cumsum(ptr, out=ptr)
    tok = np.empty(n_entries, dtype=np.int32)
    attr = np.empty(n_entries, dtype=tok_attr.dtype)
    out_val = np.empty(n_entries) if val.shape[0] else val
    fill = ptr[:-1].copy()  # where each range's next entries go
    for first, stop in runs:
        e0, e1 = tok_ptr[first], tok_ptr[stop]
        range_of = range_of_attr[tok_attr[e0:e1]]
        order = np.argsort(range_of, kind="stable")
        run_tok = _run_tokens(tok_ptr, first, stop, np.int32)[order]
        run_attr = tok_attr[e0:e1][order]
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


@kernel(inline="always")
def _add_row(node, ent_tok, ent_attr, ent_val, k, tok0, g_attr, ones, short):
    """``g_attr[attr_k] += val_k · node[tok_k - tok0]`` for one entry, ``L >= 8``
    labels in chunks of eight (``short``: fewer than 16, the first chunk and
    the last), the last chunk (at ``L - 8``) loaded and added before the
    others are stored: where it overlaps the one before, it stores the same
    sums."""
    L = node.shape[1]
    last = L - WIDTH
    r = (np.int64(element(ent_tok, k)) - tok0) * L
    q = np.int64(element(ent_attr, k)) * L
    if ones:
        tail = vadd(vload(g_attr, q + last), vload(node, r + last))
    else:
        v = vsplat(element(ent_val, k))
        tail = vfma(v, vload(node, r + last), vload(g_attr, q + last))
    if short:
        if ones:
            head = vadd(vload(g_attr, q), vload(node, r))
        else:
            head = vfma(v, vload(node, r), vload(g_attr, q))
        vstore(g_attr, q, head)
    else:
        for c in range(0, last, WIDTH):
            if ones:
                d = vadd(vload(g_attr, q + c), vload(node, r + c))
            else:
                d = vfma(v, vload(node, r + c), vload(g_attr, q + c))
            vstore(g_attr, q + c, d)
    vstore(g_attr, q + last, tail)


@kernel
def scatter_state_counts(node, ent_tok, ent_attr, ent_val, k0, k1, tok0, g_attr):
    """``g_attr[attr_k] += val_k · node[tok_k - tok0]`` for the entries
    ``k0..k1-1`` of an :class:`EntryIndex`, in their order (``ent_val``
    empty: every value is 1): the expected counts of the state features, as
    a dense (n_attributes, L) matrix, from the weighted node marginals
    ``node`` of the tokens from ``tok0`` on (the entries' tokens, less
    ``tok0``, are its rows).

    Every (attribute, label) sum gets its terms in token order whatever the
    ranges and blocks the entries are taken in, so the result does not depend
    on them, nor on the thread count. From
    :data:`~sklearn_crf._engine.simd.WIDTH` labels on, eight labels per
    vector instruction (:func:`_add_row`), the rows of the next run of
    :data:`RUN` entries prefetched when the matrix is large.
    """
    L = node.shape[1]
    ones = ent_val.shape[0] == 0
    if L >= WIDTH:
        n_ent = ent_attr.shape[0]
        far = g_attr.shape[0] * L * 8 > PREFETCH_BYTES
        k = k0
        while k < k1:  # runs of RUN entries, each loop specialized
            stop = k + RUN if k + RUN < k1 else k1
            if far:  # the rows of the next run on their way
                for e in range(stop, stop + RUN if stop + RUN < n_ent else n_ent):
                    a = np.int64(element(ent_attr, e)) * L
                    prefetch_write(g_attr, a)  # the row's lines: its first, ...
                    for c in range(WIDTH, L - 1, WIDTH):
                        prefetch_write(g_attr, a + c)
                    prefetch_write(g_attr, a + L - 1)  # ... and its last
            if L < 2 * WIDTH:
                if ones:
                    for e in range(k, stop):
                        _add_row(node, ent_tok, ent_attr, ent_val, e, tok0, g_attr, True, True)
                else:
                    for e in range(k, stop):
                        _add_row(node, ent_tok, ent_attr, ent_val, e, tok0, g_attr, False, True)
            elif ones:
                for e in range(k, stop):
                    _add_row(node, ent_tok, ent_attr, ent_val, e, tok0, g_attr, True, False)
            else:
                for e in range(k, stop):
                    _add_row(node, ent_tok, ent_attr, ent_val, e, tok0, g_attr, False, False)
            k = stop
        return
    if ones:
        for k in range(k0, k1):
            row = node[ent_tok[k] - tok0]
            g = g_attr[ent_attr[k]]
            for j in range(L):
                g[j] += row[j]
    else:
        for k in range(k0, k1):
            row = node[ent_tok[k] - tok0]
            g = g_attr[ent_attr[k]]
            v = ent_val[k]
            for j in range(L):
                g[j] += v * row[j]


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
