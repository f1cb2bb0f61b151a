"""Best label paths: the list Viterbi (n-best; the best path is n-best at n=1),
its K = 1 case without the lists for finite scores (:func:`viterbi_finite`,
predict's one-call route), path scores, and the reachability test of
constrained problems.

Constraints are -inf scores (a forbidden transition, a label a token may not
take): max-plus is exact with them, and a path of score -inf is never listed.
"""

from collections import namedtuple

import numpy as np

from .config import kernel
from .scores import max_length, state_scores_dense_range, state_scores_sparse_range
from .simd import WIDTH, element, prefetch, vadd, vload, vselect_gt, vsplat, vstore

ViterbiWorkspace = namedtuple(
    "ViterbiWorkspace", ["delta", "back_label", "back_rank", "count", "heads"]
)
ViterbiWorkspace.__doc__ = """Buffers of :func:`list_viterbi` for sequences of up
to ``max_len`` tokens and ``K`` paths: ``delta`` (max_len, L, K) float64,
``back_label`` and ``back_rank`` (max_len, L, K) int32, ``count`` (max_len, L)
int32, ``heads`` (L,) int32; see :func:`viterbi_workspace`."""


@kernel(inline="always")
def viterbi_workspace(max_len, L, K):
    """A :class:`ViterbiWorkspace` for sequences of up to ``max_len`` tokens."""
    max_len = max(max_len, 1)
    return ViterbiWorkspace(
        np.empty((max_len, L, K)), np.empty((max_len, L, K), dtype=np.int32),
        np.empty((max_len, L, K), dtype=np.int32), np.empty((max_len, L), dtype=np.int32),
        np.empty(L, dtype=np.int32),
    )


@kernel
def list_viterbi(scores, trans, n, K, ws, paths, path_scores):
    """List Viterbi: the ``K`` best paths of one sequence of length ``n``.

    ``delta[t, j, k]`` is the score of the k-th best path prefix ending with
    label j at position t, ``back_label``/``back_rank`` where it came from and
    ``count[t, j]`` how many prefixes have a finite score (all buffers >= n
    rows). Each list is the merge of the sorted lists of position t-1 shifted
    by the transition weights: O(n L² K). Paths of score -inf are never
    listed, so no path is listed twice.

    Ties are broken by the labels read from the end: of two paths of equal
    score, the one whose last label has the smaller code comes first, then the
    one whose label before it is smaller, and so on (the first label found in
    each merge wins, and labels are scanned in increasing order).

    With ``K = 1`` it is the Viterbi algorithm (max-plus, the first maximum
    in label order on ties: CRFsuite's rule too); :func:`viterbi_finite` is
    that case without the lists, for scores with no -inf (the same sums and
    ties, tested against this). ``ws`` is a :class:`ViterbiWorkspace`.

    Fills ``paths[r * n : (r + 1) * n]`` and ``path_scores[r]`` for each rank
    ``r`` found; returns the number of paths found.
    """
    L = scores.shape[1]
    delta, back_label, back_rank = ws.delta, ws.back_label, ws.back_rank
    count, heads = ws.count, ws.heads
    if n == 0:
        path_scores[0] = 0.0
        return 1
    for j in range(L):
        v = scores[0, j]
        if v > -np.inf:
            delta[0, j, 0] = v
            count[0, j] = 1
        else:
            count[0, j] = 0
    for t in range(1, n):
        for j in range(L):
            s = scores[t, j]
            m = 0
            if s > -np.inf:
                for i in range(L):
                    heads[i] = 0
                while m < K:
                    best = -np.inf
                    arg = -1
                    for i in range(L):
                        h = heads[i]
                        if h < count[t - 1, i]:
                            v = delta[t - 1, i, h] + trans[i, j]
                            if v > best:
                                best = v
                                arg = i
                    if arg < 0:
                        break
                    delta[t, j, m] = best + s
                    back_label[t, j, m] = arg
                    back_rank[t, j, m] = heads[arg]
                    heads[arg] += 1
                    m += 1
            count[t, j] = m
    # merge the lists of the last position
    for i in range(L):
        heads[i] = 0
    found = 0
    while found < K:
        best = -np.inf
        arg = -1
        for i in range(L):
            h = heads[i]
            if h < count[n - 1, i]:
                v = delta[n - 1, i, h]
                if v > best:
                    best = v
                    arg = i
        if arg < 0:
            break
        path_scores[found] = best
        j = arg
        k = heads[arg]
        heads[arg] += 1
        out = paths[found * n:(found + 1) * n]
        out[n - 1] = j
        for t in range(n - 1, 0, -1):
            i = back_label[t, j, k]
            k = back_rank[t, j, k]
            j = i
            out[t - 1] = j
        found += 1
    return found


@kernel
def list_viterbi_sequences(scores, trans, seq_ptr, K, first, stop, paths, path_scores, counts):
    """:func:`list_viterbi` of sequences ``first..stop-1``: the paths of
    sequence ``s`` (length ``T_s``) in ``paths[seq_ptr[s] * K :]``, path ``r``
    at ``r * T_s``; ``path_scores[s, r]`` and ``counts[s]`` the number found."""
    L = scores.shape[1]
    ws = viterbi_workspace(max_length(seq_ptr[first:stop + 1]), L, K)
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        counts[s] = list_viterbi(
            scores[a:b], trans, b - a, K, ws, paths[a * K:b * K], path_scores[s]
        )


@kernel(inline="always")
def backtrack(delta, back, n, path):
    """The end of a Viterbi over ``n >= 1`` tokens: the best last label (the
    first maximum of ``delta[n - 1]``) and the path back from it through
    ``back`` (labels, int32 or float64) into ``path``; returns its score."""
    best = -np.inf
    arg = 0
    for i in range(delta.shape[1]):
        if delta[n - 1, i] > best:
            best = delta[n - 1, i]
            arg = i
    path[n - 1] = arg
    for t in range(n - 1, 0, -1):
        arg = np.int64(back[t, arg])
        path[t - 1] = arg
    return best


@kernel(inline="always")
def viterbi_finite(scores, trans, n, delta, back, path):
    """The Viterbi algorithm on finite scores: the best path of one sequence
    of length ``n`` into ``path``, returning its score.

    :func:`list_viterbi` at K = 1 without its lists: the same sums in the
    same order (``delta[t - 1, i] + trans[i, j]``, then ``+ scores[t, j]``)
    and the same ties (the first maximum in label order), so the same path
    and score wherever no score is -inf (no constraint). ``delta`` (>= n, L)
    float64 and ``back`` (>= n, L) int32 are work buffers.
    """
    if n == 0:
        return 0.0
    L = scores.shape[1]
    for j in range(L):
        delta[0, j] = scores[0, j]
    for t in range(1, n):
        for j in range(L):
            best = -np.inf
            arg = 0
            for i in range(L):
                v = delta[t - 1, i] + trans[i, j]
                if v > best:
                    best = v
                    arg = i
            delta[t, j] = best + scores[t, j]
            back[t, j] = arg
    return backtrack(delta, back, n, path)


@kernel(inline="always")
def viterbi_finite_lanes(scores, first, trans, n, delta, back, path):
    """:func:`viterbi_finite` of the ``n`` rows of ``scores`` from ``first``
    on, ``L >= WIDTH`` labels, eight labels per vector instruction: per
    chunk of eight labels ``j`` (chunks at 0, 8, 16, ... and the last at
    ``L - 8``, which overlaps the one before and computes the same numbers
    again), the sums ``delta[t - 1, i] + trans[i, j]`` over ``i`` in label
    order, each lane keeping its first maximum (a strict ``>``), then ``+
    scores[t, j]``: per label the numbers and the ties of the scalar loop,
    so the same path and score. ``delta`` (>= n, L) float64 and ``back``
    (>= n, L) float64 (the argmax, exact as a float) are work buffers;
    ``trans`` is C-contiguous.
    """
    if n == 0:
        return 0.0
    L = scores.shape[1]
    last = L - WIDTH
    s0 = first * L
    for j in range(L):
        delta[0, j] = scores[first, j]
    for t in range(1, n):
        p = (t - 1) * L
        o = t * L
        c = 0
        while True:
            best = vsplat(-np.inf)
            arg = vsplat(0.0)
            for i in range(L):
                v = vadd(vsplat(element(delta, p + i)), vload(trans, i * L + c))
                arg = vselect_gt(v, best, vsplat(float(i)), arg)
                best = vselect_gt(v, best, v, best)
            vstore(delta, o + c, vadd(best, vload(scores, s0 + o + c)))
            vstore(back, o + c, arg)
            if c == last:
                break
            c = c + WIDTH if c + WIDTH < last else last
    return backtrack(delta, back, n, path)


@kernel(inline="always")
def viterbi_finite_range(scores, trans, seq_ptr, first, stop, paths, path_scores):
    """:func:`viterbi_finite` of sequences ``first..stop-1`` of the state
    scores ``scores`` (n_tokens, L) (:func:`viterbi_finite_lanes` from eight
    labels on): their labels into ``paths`` and scores into ``path_scores``."""
    L = scores.shape[1]
    max_len = max(max_length(seq_ptr[first:stop + 1]), 1)
    delta = np.empty((max_len, L))
    if L >= WIDTH:  # eight labels per vector instruction
        back_lanes = np.empty((max_len, L))
        for s in range(first, stop):
            a = seq_ptr[s]
            b = seq_ptr[s + 1]
            path_scores[s] = viterbi_finite_lanes(scores, a, trans, b - a, delta,
                                                  back_lanes, paths[a:b])
        return
    back = np.empty((max_len, L), dtype=np.int32)
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        path_scores[s] = viterbi_finite(scores[a:b], trans, b - a, delta, back, paths[a:b])


@kernel
def best_paths_sparse(w, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, trans, seq_ptr,
                      first, stop, scores, paths, path_scores):
    """The best paths of sequences ``first..stop-1`` straight from the
    parameter vector, in one call: their tokens' state scores
    (:func:`~sklearn_crf._engine.scores.state_scores_sparse_range`, into their
    rows of ``scores``, (n_tokens, L); a sequence at a time, the cache lines of
    its parameter lists asked for first, all at once, rather than met one
    miss after another) then :func:`viterbi_finite_range`: the
    labels (their entries of ``paths``, (n_tokens,) int32) and scores (of
    ``path_scores``, (n_sequences,)) of :func:`list_viterbi` at K = 1,
    without constraints. One call per range of sequences, so that the
    GIL is taken once; ranges on several threads write disjoint rows."""
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        k0 = tok_ptr[a]
        k1 = tok_ptr[b]
        for k in range(k0, k1):  # the sequence's parameter offsets on their way at once
            prefetch(attr_ptr, np.int64(element(tok_attr, k)))
        for k in range(k0, k1):  # then their labels and weights
            p = element(attr_ptr, np.int64(element(tok_attr, k)))
            prefetch(attr_label, p)
            prefetch(w, p)
        state_scores_sparse_range(w, 1.0, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val,
                                  a, b, scores[a:b])
    viterbi_finite_range(scores, trans, seq_ptr, first, stop, paths, path_scores)


@kernel
def best_path_of_entries(w, attr_ptr, attr_label, item_ptr, entries, trans):
    """The best path of one sentence straight from its items' entries, in one
    call with nothing to prepare (serving a sentence): ``entries`` (int32) an
    attribute id for an item of value 1, anything else (a negative ``~id``
    for a value of 0, an unknown attribute's entry at or above the number of
    attributes) adds nothing; the tokens' items start at ``item_ptr``. The
    state scores of :func:`best_paths_sparse` (each label's products added
    in the order of the entries; the parameter lists' cache lines asked for
    first) and its Viterbi, so the same labels. Returns the labels, int32
    (n_tokens,)."""
    n = item_ptr.shape[0] - 1
    L = trans.shape[0]
    n_attr = attr_ptr.shape[0] - 1
    k0 = item_ptr[0]
    k1 = item_ptr[n]
    for k in range(k0, k1):  # the parameter offsets on their way at once
        a = np.int64(entries[k])
        if 0 <= a < n_attr:
            prefetch(attr_ptr, a)
    for k in range(k0, k1):  # then their labels and weights
        a = np.int64(entries[k])
        if 0 <= a < n_attr:
            p = element(attr_ptr, a)
            prefetch(attr_label, p)
            prefetch(w, p)
    scores = np.zeros((n, L))
    for t in range(n):
        for k in range(item_ptr[t], item_ptr[t + 1]):
            a = entries[k]
            if 0 <= a < n_attr:
                for p in range(attr_ptr[a], attr_ptr[a + 1]):
                    scores[t, attr_label[p]] += w[p]
    seq_ptr = np.empty(2, dtype=np.int64)
    seq_ptr[0] = 0
    seq_ptr[1] = n
    paths = np.empty(n, dtype=np.int32)
    path_scores = np.empty(1)
    viterbi_finite_range(scores, trans, seq_ptr, 0, 1, paths, path_scores)
    return paths


@kernel
def best_paths_dense(w_attr, tok_ptr, tok_attr, tok_val, trans, seq_ptr, first, stop, scores,
                     paths, path_scores):
    """:func:`best_paths_sparse` from the dense (n_attributes, L) state
    weights ``w_attr`` (:func:`~sklearn_crf._engine.scores.state_scores_dense_range`:
    a row per entry, eight labels per vector instruction): the same scores,
    labels and path scores."""
    a0 = seq_ptr[first]
    b0 = seq_ptr[stop]
    state_scores_dense_range(w_attr, tok_ptr, tok_attr, tok_val, a0, b0, scores[a0:b0])
    viterbi_finite_range(scores, trans, seq_ptr, first, stop, paths, path_scores)


@kernel
def path_score(scores, trans, path, n):
    """Score of a label path (``crf1dc_score``): state scores plus transitions."""
    if n == 0:
        return 0.0
    i = path[0]
    ret = scores[0, i]
    for t in range(1, n):
        j = path[t]
        ret += trans[i, j]
        ret += scores[t, j]
        i = j
    return ret


@kernel
def first_dead_tokens(scores, trans, seq_ptr):
    """Per sequence, the first token at which no label is reachable by a path of
    finite score from the start (forward reachability), or -1 when the sequence
    has such a path."""
    L = scores.shape[1]
    n_seq = seq_ptr.shape[0] - 1
    out = np.full(n_seq, -1, dtype=np.int64)
    reach = np.empty(L, dtype=np.bool_)
    new = np.empty(L, dtype=np.bool_)
    for s in range(n_seq):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        for t in range(a, b):
            any_ = False
            for j in range(L):
                ok = scores[t, j] > -np.inf
                if ok and t > a:
                    ok = False
                    for i in range(L):
                        if reach[i] and trans[i, j] > -np.inf:
                            ok = True
                            break
                new[j] = ok
                any_ = any_ or ok
            for j in range(L):
                reach[j] = new[j]
            if not any_:
                out[s] = t - a
                break
    return out
