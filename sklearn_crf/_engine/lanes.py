"""The scaled forward-backward of the fit over lanes of sentences.

The one-sequence kernels of :mod:`.forward_backward` run the (L, L) products
of a position over the labels of one sentence: nine labels fill a vector
register badly, and every label count wants its own schedule. Here
:data:`LANES` sentences of a block run side by side, the sentence index
innermost in every buffer (``(position, label, lane)``, C-contiguous): each
term of a product is one multiply-add over the lanes (a vector instruction,
the weight broadcast), with no horizontal sums and the same code for any
number of labels. The products keep eight sums a pass where the target has
32 vector registers (AVX-512; four otherwise,
:data:`~sklearn_crf._engine.simd.EIGHT_SUMS`): eight independent chains of
FMAs, one load of the shared operand for all of them.

Per sentence, a lane does the arithmetic of :func:`.forward_backward.forward_scaled`
and :func:`.forward_backward.backward_scaled`, the same terms in the same
order, whatever lane it lands in: every operation is one instruction on
the eight lanes of :data:`~sklearn_crf._engine.simd.f64x8` (numba runs LLVM
without its SLP vectorizer, which would be needed to pack eight scalar sums
into one register). Shorter sentences of a group are padded (their last
row of state scores again, an empty lane the first lane's first row) and
masked: a padded position adds nothing to log Z, resets the betas to 1 at
each lane's last position and weighs 0 in the edge sums, so a sentence's
results do not depend on its neighbours. The state scores come into lane order, and the
node marginals go back to token order, eight labels of eight lanes at a time
(:func:`~sklearn_crf._engine.simd.vtranspose_load` and
:func:`~sklearn_crf._engine.simd.vtranspose_store`). Sentences are sorted by
length within their block (which depends on the data only), so the lanes,
and with them every bit of the gradient, do not depend on the thread count;
the groups take them eight at a time in that order, a partial group (the
block's count not a multiple of eight) first, so that its empty lanes run
along the shortest sentences.

The edge sums (``Σ_t α[t-1, i] / c_t · exp_score[t, j] β[t, j]``, to be
multiplied by ``exp_trans``) are kept per lane, summed over the block's
groups and positions in order, and folded into the block's four slots at the
end (lane ``w`` into slot ``w % 4``, lanes in order).

A sentence longer than :func:`longest_in_lanes` (an outlier, whose group
would make every thread's buffers eight times its length) runs alone on
buffers of its own size, with the same arithmetic (:func:`solo_sentence`);
its edge terms go to the block's slots by position.

A sentence where scaling declines (the checks of
:func:`.forward_backward.forward_scaled` and the betas' finiteness) gets a
NaN log Z, its rows keep their state scores and it adds nothing to the edge
sums: the caller completes it in log space.
"""

import bisect
import threading
from collections import namedtuple

import numpy as np

from .config import kernel
from .forward_backward import (
    MAX_SCALED_SPREAD,
    backward_scaled,
    edge_outer_sum_scaled,
    exp_nonpositive,
    forward_backward_blocks_log,
    forward_scaled,
    scaled_workspace,
    transition_terms,
)
from .scores import scatter_state_counts, state_scores_dense_range
from .simd import (
    EIGHT_SUMS,
    WIDTH,
    element,
    vtranspose_load,
    vtranspose_store,
    vadd,
    vdiv,
    vfma,
    vlane,
    vload,
    vmul,
    vselect_ge,
    vselect_gt,
    vselect_lt,
    vsplat,
    vstore,
    vsub,
)

#: sentences per lane group: the lanes of :data:`~sklearn_crf._engine.simd.f64x8`
LANES = WIDTH

#: the most bytes of a workspace's three (positions, L, LANES) buffers: a
#: sentence longer than :func:`longest_in_lanes` runs alone
#: (:func:`solo_sentence`), so that one outlier does not size every
#: thread's buffers at eight times its own
LANE_BUFFER_BYTES = 4 << 20


@kernel(inline="always")
def longest_in_lanes(L):
    """The longest sentence the lanes take at ``L`` labels: the positions of
    :data:`LANE_BUFFER_BYTES`. It depends on ``L`` alone, so which sentences
    run alone, and with them every bit of the gradient, depends on the data
    only."""
    return max(1, LANE_BUFFER_BYTES // (3 * 8 * L * LANES))


def lane_lengths(lengths, L):
    """The sentence ``lengths`` as the lanes hold them at ``L`` labels: 0 for
    those longer than :func:`longest_in_lanes` (they run alone), so that
    workspaces are sized by the sentences they hold.

    Examples
    --------
    >>> lane_lengths(np.array([3, 600, 12]), 42).tolist()
    [3, 0, 12]
    """
    lengths = np.asarray(lengths)
    return np.where(lengths <= longest_in_lanes(L), lengths, 0)

LaneWorkspace = namedtuple(
    "LaneWorkspace",
    ["exp_scores", "alpha", "beta", "scale", "tmp", "seq", "start", "length", "span",
     "weight", "log_z", "ok", "outer", "rows", "ids", "lengths", "order", "offsets"],
)
LaneWorkspace.__doc__ = """Buffers of :func:`lanes_block` for blocks of up to
``max_seqs`` sentences of up to ``max_len`` tokens (:func:`lane_workspace`):
``exp_scores``, ``alpha``, ``beta`` (max_len, L, LANES); ``scale`` (max_len,
LANES) the normalizing constants; ``tmp`` (L, LANES) a scratch row; per lane
``seq`` (its sentence), ``start`` (its first token; an empty lane, lane 0's),
``length`` (0 for an empty lane) and ``span`` (the same as a float),
``weight``, ``log_z`` and ``ok`` (int64, 0 where scaling declined); ``outer``
(L, L, LANES) the block's edge sums per lane; ``rows`` (LANES,) int64 scratch
(the flat offsets of a position's rows, one per lane); ``ids``, ``lengths``,
``order`` (max_seqs,) int64 the block's sentences, their lengths and their
order by length; ``offsets`` (max_len + 2,) int64 the counting sort's offsets.
A group of shorter sentences uses the first rows of the (max_len, ...)
arrays; ``max_len`` is at most :func:`longest_in_lanes`. Allocated
uninitialized: every field is written before it is read."""


def lane_workspace(max_len, max_seqs, L):
    """A :class:`LaneWorkspace` for blocks of up to ``max_seqs`` sentences of
    up to ``max_len`` tokens, ``L`` labels (its lanes hold
    :func:`longest_in_lanes` tokens at most: longer sentences run alone)."""
    W = LANES
    ints = np.int64
    max_len = min(int(max_len), longest_in_lanes(L))
    return LaneWorkspace(
        np.empty((max_len, L, W)), np.empty((max_len, L, W)), np.empty((max_len, L, W)),
        np.empty((max_len, W)), np.empty((L, W)), np.empty(W, dtype=ints),
        np.empty(W, dtype=ints), np.empty(W, dtype=ints), np.empty(W), np.empty(W),
        np.empty(W), np.empty(W, dtype=ints), np.empty((L, L, W)),
        np.empty(W, dtype=ints), np.empty(max_seqs, dtype=ints),
        np.empty(max_seqs, dtype=ints), np.empty(max_seqs, dtype=ints),
        np.empty(max_len + 2, dtype=ints),
    )


def lane_capacity(lw):
    """``(max_len, max_seqs)`` of the :class:`LaneWorkspace` ``lw``."""
    return lw.exp_scores.shape[0], lw.ids.shape[0]


class LaneWorkspaces:
    """The :class:`LaneWorkspace` of each call of
    :func:`gradient_blocks_scaled` under way at one time, allocated once and
    reused by every later call, so that the calls (on helper threads too)
    allocate nothing (but the buffers of a sentence too long for the lanes,
    :func:`solo_sentence`): one allocation of each size for a whole fit,
    where a workspace a call would leave holes of every size in each
    thread's heap.

    ``sizes`` are the longest sentences the workspaces hold (one workspace
    each, allocated here, on the calling thread), ``max_seqs`` the most
    sentences of a block, ``L`` the labels. A call takes the smallest free
    workspace that holds its longest sentence (:meth:`take`) and gives it back
    when it ends (:meth:`give`); no two calls ever hold the same one. Sized by
    the longest sentences of the ``n`` longest blocks, ``n`` workspaces serve
    ``n`` calls at a time over any blocks (each holds the longest sentence of
    its blocks) in most orders; when none is free that holds a call's
    sentences, one more is allocated and kept.

    Examples
    --------
    >>> pool = LaneWorkspaces([5, 12], max_seqs=4, L=3)
    >>> lw = pool.take(6)
    >>> lane_capacity(lw)
    (12, 4)
    >>> pool.give(lw)
    """

    def __init__(self, sizes, *, max_seqs, L):
        self.max_seqs = int(max_seqs)
        self.L = int(L)
        self._free = [lane_workspace(int(n), self.max_seqs, self.L) for n in sorted(sizes)]
        self._lock = threading.Lock()

    def take(self, max_len):
        """A workspace of at least ``max_len`` tokens (or
        :func:`longest_in_lanes`) no other call holds."""
        max_len = min(int(max_len), longest_in_lanes(self.L))
        with self._lock:
            for k, lw in enumerate(self._free):  # in increasing size
                if _max_len(lw) >= max_len:
                    return self._free.pop(k)
        return lane_workspace(max_len, self.max_seqs, self.L)

    def give(self, lw):
        """Give back a workspace of :meth:`take`."""
        with self._lock:
            bisect.insort_right(self._free, lw, key=_max_len)

    def __getstate__(self):
        # a pickle (a shard objective moved between Dask workers) holds the
        # sizes, not the buffers or the lock: the copy allocates its own
        return {"sizes": list(map(_max_len, self._free)),
                "max_seqs": self.max_seqs, "L": self.L}

    def __setstate__(self, state):
        self.__init__(state["sizes"], max_seqs=state["max_seqs"], L=state["L"])


def _max_len(lw):
    """The longest sentence the :class:`LaneWorkspace` ``lw`` holds."""
    return lane_capacity(lw)[0]


@kernel(inline="always")
def vec_mat_lanes(src, s, mat, dst, k):
    """The lanes' vector-matrix product ``dst[j] = Σ_i src[i] · mat[i, j]``:
    ``src`` the (L, LANES) rows at flat offset ``s`` of its array, ``mat``
    (L, L), ``dst`` the (L, LANES) rows at flat offset ``k`` of its array
    (may be the array of ``src``, at rows that do not overlap). Each sum
    adds its terms in the order of ``i``, one FMA each, from 0.

    Eight sums ``j`` a pass (with
    :data:`~sklearn_crf._engine.simd.EIGHT_SUMS`), then four, then one: one
    load of ``src[i]`` for all the pass's FMAs, as many independent chains."""
    L = mat.shape[0]
    W = LANES
    zero = vsplat(0.0)
    j = 0
    while EIGHT_SUMS and j + 8 <= L:
        d0 = d1 = d2 = d3 = d4 = d5 = d6 = d7 = zero
        q = j
        for i in range(L):
            p = vload(src, s + i * W)
            d0 = vfma(p, vsplat(element(mat, q)), d0)
            d1 = vfma(p, vsplat(element(mat, q + 1)), d1)
            d2 = vfma(p, vsplat(element(mat, q + 2)), d2)
            d3 = vfma(p, vsplat(element(mat, q + 3)), d3)
            d4 = vfma(p, vsplat(element(mat, q + 4)), d4)
            d5 = vfma(p, vsplat(element(mat, q + 5)), d5)
            d6 = vfma(p, vsplat(element(mat, q + 6)), d6)
            d7 = vfma(p, vsplat(element(mat, q + 7)), d7)
            q += L
        o = k + j * W
        vstore(dst, o, d0)
        vstore(dst, o + W, d1)
        vstore(dst, o + 2 * W, d2)
        vstore(dst, o + 3 * W, d3)
        vstore(dst, o + 4 * W, d4)
        vstore(dst, o + 5 * W, d5)
        vstore(dst, o + 6 * W, d6)
        vstore(dst, o + 7 * W, d7)
        j += 8
    while j + 4 <= L:
        d0 = d1 = d2 = d3 = zero
        q = j
        for i in range(L):
            p = vload(src, s + i * W)
            d0 = vfma(p, vsplat(element(mat, q)), d0)
            d1 = vfma(p, vsplat(element(mat, q + 1)), d1)
            d2 = vfma(p, vsplat(element(mat, q + 2)), d2)
            d3 = vfma(p, vsplat(element(mat, q + 3)), d3)
            q += L
        o = k + j * W
        vstore(dst, o, d0)
        vstore(dst, o + W, d1)
        vstore(dst, o + 2 * W, d2)
        vstore(dst, o + 3 * W, d3)
        j += 4
    while j < L:
        d = zero
        q = j
        for i in range(L):
            d = vfma(vload(src, s + i * W), vsplat(element(mat, q)), d)
            q += L
        vstore(dst, k + j * W, d)
        j += 1


@kernel
def lanes_forward(scores, tt, T, lw):
    """Scaled forward pass of the group in ``lw`` (``T`` its longest length)
    over the state scores ``scores`` (n_tokens, L): fills ``lw.exp_scores``,
    ``lw.alpha``, ``lw.scale`` for positions ``0..T-1`` and ``lw.log_z``;
    clears ``lw.ok`` of lanes where scaling declines (their values are then
    undefined). Per lane, the arithmetic of
    :func:`~sklearn_crf._engine.forward_backward.forward_scaled`."""
    L = scores.shape[1]
    W = LANES
    LW = L * W
    es, alpha, scale = lw.exp_scores, lw.alpha, lw.scale
    length, ok, lz = lw.length, lw.ok, lw.log_z
    # gather: the rows of a lane's tokens into its column, its last row again
    # past its end (an empty lane: the row at its start), eight labels of eight lanes at a
    # time (a transpose in registers) from eight labels on
    rows = lw.rows
    last = L - W
    for w in range(W):
        ok[w] = length[w] > 0
    for t in range(T):
        for w in range(W):
            n = length[w]
            rows[w] = lw.start[w] + (t if t < n else n - 1) if n > 0 else lw.start[w]
        if L >= W:
            for w in range(W):
                rows[w] *= L
            for c in range(0, last, W):
                vtranspose_load(scores, rows, c, es, t * LW + c * W)
            vtranspose_load(scores, rows, last, es, t * LW + last * W)
        else:
            for w in range(W):
                for j in range(L):
                    es[t, j, w] = scores[rows[w], j]
    zero = vsplat(0.0)
    one = vsplat(1.0)
    spread = vsplat(tt.spread)
    limit = vsplat(MAX_SCALED_SPREAD)
    span = vload(lw.span, 0)
    z = zero
    failed = zero
    for t in range(T):
        row = t * LW
        m = vload(es, row)
        lo = m
        for j in range(1, L):
            v = vload(es, row + j * W)
            m = vselect_gt(v, m, v, m)
            lo = vselect_lt(v, lo, v, lo)
        z = vadd(z, vselect_lt(vsplat(float(t)), span, m, zero))  # past the end: nothing
        for j in range(L):
            vstore(es, row + j * W, vsub(vload(es, row + j * W), m))
        # declines where not (m - lo + spread <= limit), also when not finite
        failed = vselect_ge(limit, vadd(vsub(m, lo), spread), failed, one)
    for w in range(W):
        lz[w] = vlane(z, w)
        if vlane(failed, w) != 0.0:
            ok[w] = False
    flat = es.reshape(es.shape[0] * LW)
    for k in range(T * LW):
        flat[k] = exp_nonpositive(flat[k])
    for w in range(W):
        if length[w] > 1:
            if np.isfinite(tt.trans_max):
                lz[w] += (length[w] - 1) * tt.trans_max
            else:
                ok[w] = False
    exp_trans = tt.exp_trans
    for t in range(T):
        row = t * LW
        prev = row - LW
        # the sums Σ_i alpha[t-1, i] exp_trans[i, j] into alpha[t]; 1 at position 0
        if t == 0:
            for j in range(L):
                vstore(alpha, j * W, one)
        else:
            vec_mat_lanes(alpha, prev, exp_trans, alpha, row)
        # times the exp-scores, their sum c_t in label order
        c = zero
        for j in range(L):
            k = row + j * W
            a = vmul(vload(alpha, k), vload(es, k))
            vstore(alpha, k, a)
            c = vadd(c, a)
        inv = vdiv(one, c)
        for j in range(L):
            vstore(alpha, row + j * W, vmul(vload(alpha, row + j * W), inv))
        vstore(scale, t * W, c)
    # log Z: the logs of each lane's constants, in position order
    for w in range(W):
        acc = lz[w]
        for t in range(length[w]):
            cw = scale[t, w]
            if cw > 0.0 and np.isfinite(cw):
                acc += np.log(cw)
            else:
                ok[w] = False
        lz[w] = acc
        if not np.isfinite(acc):
            ok[w] = False


@kernel
def lanes_backward(tt, T, lw):
    """Scaled backward pass of the group after :func:`lanes_forward`: fills
    ``lw.beta`` (1 from each lane's last position on); clears ``lw.ok`` of
    lanes with a beta that is not finite. Per lane, the arithmetic of
    :func:`~sklearn_crf._engine.forward_backward.backward_scaled`."""
    es, beta, scale, tmp = lw.exp_scores, lw.beta, lw.scale, lw.tmp
    L = beta.shape[1]
    W = LANES
    LW = L * W
    exp_trans_t = tt.exp_trans_t
    zero = vsplat(0.0)
    one = vsplat(1.0)
    last = vsub(vload(lw.span, 0), one)
    for j in range(L):
        vstore(beta, (T - 1) * LW + j * W, one)
    check = zero  # + beta * 0: NaN once a beta is not finite
    for t in range(T - 2, -1, -1):
        row = t * LW
        inv = vdiv(one, vload(scale, (t + 1) * W))
        for j in range(L):
            k = row + LW + j * W
            vstore(tmp, j * W, vmul(vmul(vload(es, k), vload(beta, k)), inv))
        # the sums Σ_j exp_trans[i, j] tmp[j] = Σ_j tmp[j] exp_trans_t[j, i] into beta[t]
        vec_mat_lanes(tmp, 0, exp_trans_t, beta, row)
        # 1 from a lane's last position on; + beta * 0: NaN once one is not finite
        position = vsplat(float(t))
        for i in range(L):
            k = row + i * W
            d = vselect_ge(position, last, one, vload(beta, k))
            check = vfma(d, zero, check)
            vstore(beta, k, d)
    for w in range(W):
        if not np.isfinite(vlane(check, w)):
            lw.ok[w] = False


@kernel
def lanes_counts(node, T, lw):
    """After :func:`lanes_backward`: the weighted node marginals of each good
    lane into its sentence's rows of ``node`` (n_tokens, L), and its edge
    terms added to ``lw.outer``; lanes where scaling declined write nothing
    and add nothing.

    Overwrites the passes' buffers: ``beta`` by the weighted node marginals,
    ``exp_scores`` by ``exp_scores · beta`` and ``alpha[t]`` by ``alpha[t] /
    c_{t+1} · weight`` (0 past the lane's end), whose products are the edge
    terms, each sum adding its positions in order (as
    :func:`~sklearn_crf._engine.forward_backward.edge_outer_sum_scaled` does)."""
    es, alpha, beta, scale = lw.exp_scores, lw.alpha, lw.beta, lw.scale
    L = beta.shape[1]
    W = LANES
    LW = L * W
    zero = vsplat(0.0)
    one = vsplat(1.0)
    g = vload(lw.weight, 0)
    span = vload(lw.span, 0)
    for t in range(T):
        row = t * LW
        if t + 1 < T:  # alpha[t] / c_{t+1} · weight, 0 past the lane's end
            inv = vmul(vdiv(one, vload(scale, (t + 1) * W)), g)
            inv = vselect_lt(vsplat(float(t + 1)), span, inv, zero)
        else:
            inv = zero
        for j in range(L):
            k = row + j * W
            a = vload(alpha, k)
            b = vload(beta, k)
            e = vmul(vload(es, k), b)
            p = vmul(a, b)
            vstore(beta, k, vmul(p, g))
            vstore(es, k, e)
            vstore(alpha, k, vmul(a, inv))
    rows = lw.rows
    for w in range(W):
        if lw.length[w] == 0 or lw.ok[w] == 0:  # padding or declined: its terms 0 (its
            # values may not be finite, and 0 · inf would make the sums NaN)
            for t in range(T):
                for j in range(L):
                    alpha[t, j, w] = 0.0
                    es[t, j, w] = 0.0
    # the node marginals of the good lanes into their rows, eight labels of
    # eight lanes at a time (a transpose in registers) from eight labels on
    last = L - W
    for t in range(T):
        for w in range(W):
            good = lw.ok[w] != 0 and t < lw.length[w]
            rows[w] = (lw.start[w] + t) * L if good else -1
        if L >= W:
            for c in range(0, last, W):
                vtranspose_store(beta, t * LW + c * W, node, rows, c)
            vtranspose_store(beta, t * LW + last * W, node, rows, last)
        else:
            for w in range(W):
                if rows[w] >= 0:
                    i = rows[w] // L
                    for j in range(L):
                        node[i, j] = beta[t, j, w]
    # the edge sums, eight (with EIGHT_SUMS), four, then one labels j a pass:
    # for each i, over the positions, one load of alpha for the pass's FMAs;
    # the passes over i inside, so that exp_scores[:, j..] stay in cache
    outer = lw.outer
    j = 0
    while EIGHT_SUMS and j + 8 <= L:
        i = 0
        while i < L:
            # two rows i, i + 1 of eight sums (sixteen chains, ten loads
            # for sixteen FMAs), the last row alone at odd L
            two = i + 1 < L
            k = (i * L + j) * W
            k1 = k + L * W if two else k
            d0 = vload(outer, k)
            d1 = vload(outer, k + W)
            d2 = vload(outer, k + 2 * W)
            d3 = vload(outer, k + 3 * W)
            d4 = vload(outer, k + 4 * W)
            d5 = vload(outer, k + 5 * W)
            d6 = vload(outer, k + 6 * W)
            d7 = vload(outer, k + 7 * W)
            f0 = vload(outer, k1)
            f1 = vload(outer, k1 + W)
            f2 = vload(outer, k1 + 2 * W)
            f3 = vload(outer, k1 + 3 * W)
            f4 = vload(outer, k1 + 4 * W)
            f5 = vload(outer, k1 + 5 * W)
            f6 = vload(outer, k1 + 6 * W)
            f7 = vload(outer, k1 + 7 * W)
            a = i * W
            a1 = a + W if two else a
            e = LW + j * W
            for t in range(1, T):
                p = vload(alpha, a)
                q = vload(alpha, a1)
                x = vload(es, e)
                d0 = vfma(p, x, d0)
                f0 = vfma(q, x, f0)
                x = vload(es, e + W)
                d1 = vfma(p, x, d1)
                f1 = vfma(q, x, f1)
                x = vload(es, e + 2 * W)
                d2 = vfma(p, x, d2)
                f2 = vfma(q, x, f2)
                x = vload(es, e + 3 * W)
                d3 = vfma(p, x, d3)
                f3 = vfma(q, x, f3)
                x = vload(es, e + 4 * W)
                d4 = vfma(p, x, d4)
                f4 = vfma(q, x, f4)
                x = vload(es, e + 5 * W)
                d5 = vfma(p, x, d5)
                f5 = vfma(q, x, f5)
                x = vload(es, e + 6 * W)
                d6 = vfma(p, x, d6)
                f6 = vfma(q, x, f6)
                x = vload(es, e + 7 * W)
                d7 = vfma(p, x, d7)
                f7 = vfma(q, x, f7)
                a += LW
                a1 += LW
                e += LW
            vstore(outer, k1, f0)  # at odd L the same sums as d: stored first
            vstore(outer, k1 + W, f1)
            vstore(outer, k1 + 2 * W, f2)
            vstore(outer, k1 + 3 * W, f3)
            vstore(outer, k1 + 4 * W, f4)
            vstore(outer, k1 + 5 * W, f5)
            vstore(outer, k1 + 6 * W, f6)
            vstore(outer, k1 + 7 * W, f7)
            vstore(outer, k, d0)
            vstore(outer, k + W, d1)
            vstore(outer, k + 2 * W, d2)
            vstore(outer, k + 3 * W, d3)
            vstore(outer, k + 4 * W, d4)
            vstore(outer, k + 5 * W, d5)
            vstore(outer, k + 6 * W, d6)
            vstore(outer, k + 7 * W, d7)
            i += 2
        j += 8
    while j + 4 <= L:
        for i in range(L):
            k = (i * L + j) * W
            d0 = vload(outer, k)
            d1 = vload(outer, k + W)
            d2 = vload(outer, k + 2 * W)
            d3 = vload(outer, k + 3 * W)
            a = i * W
            e = LW + j * W
            for t in range(1, T):
                p = vload(alpha, a)
                d0 = vfma(p, vload(es, e), d0)
                d1 = vfma(p, vload(es, e + W), d1)
                d2 = vfma(p, vload(es, e + 2 * W), d2)
                d3 = vfma(p, vload(es, e + 3 * W), d3)
                a += LW
                e += LW
            vstore(outer, k, d0)
            vstore(outer, k + W, d1)
            vstore(outer, k + 2 * W, d2)
            vstore(outer, k + 3 * W, d3)
        j += 4
    while j < L:
        for i in range(L):
            k = (i * L + j) * W
            d = vload(outer, k)
            a = i * W
            e = LW + j * W
            for t in range(1, T):
                d = vfma(vload(alpha, a), vload(es, e), d)
                a += LW
                e += LW
            vstore(outer, k, d)
        j += 1


@kernel
def solo_sentence(scores_node, tt, a, n, weight, outer):
    """The scaled passes of one sentence too long for the lanes (rows
    ``a..a+n-1`` of ``scores_node``, ``n > longest_in_lanes(L)``), on
    buffers of its own size: :func:`~.forward_backward.forward_scaled` and
    :func:`~.forward_backward.backward_scaled`, the arithmetic a lane does,
    so its log Z (returned) and node marginals are the same numbers. Its rows
    get ``weight`` times its node marginals, its weighted edge terms are added
    to ``outer`` (4, L, L), position t into slot t % 4
    (:func:`~.forward_backward.edge_outer_sum_scaled`). Where scaling
    declines, returns NaN, its rows untouched and nothing added."""
    L = scores_node.shape[1]
    ws = scaled_workspace(n, L)
    rows = scores_node[a:a + n]
    log_z = forward_scaled(rows, tt, n, ws)
    if np.isnan(log_z):
        return np.nan
    backward_scaled(tt, n, ws)
    for t in range(n):
        for j in range(L):
            if not np.isfinite(ws.alpha[t, j] * ws.beta[t, j]):
                return np.nan
    for t in range(n):
        for j in range(L):
            rows[t, j] = ws.alpha[t, j] * ws.beta[t, j] * weight
    edge_outer_sum_scaled(n, ws, weight, outer)
    return log_z


@kernel
def lanes_block(scores_node, tt, lw, seq_ptr, seq_weight, s0, s1, seq_log_z, outer_out,
                edge_out):
    """The scaled passes of sentences ``s0..s1-1`` (one block of the
    gradient) over lanes; returns ``(declined, acc)``.

    For each sentence ``s`` (weight ``v_s``): its rows of ``scores_node``
    (state scores on entry) replaced by ``v_s`` times its node marginals
    (zeros when ``v_s`` is 0), ``seq_log_z[s]`` its log Z (0 when ``v_s`` is
    0 or it is empty); ``outer_out`` (4, L, L) the block's edge sums (to be
    multiplied by ``exp_trans``), ``edge_out`` (L, L) zeroed. ``acc`` is
    Σ v_s log Z_s in sentence order; ``declined`` the number of sentences
    where scaling declined (their log Z NaN, their rows untouched). ``lw``
    holds the block's sentences (:func:`lane_capacity`); those longer than
    :func:`longest_in_lanes` run alone first (:func:`solo_sentence`)."""
    L = scores_node.shape[1]
    outer = lw.outer
    for i in range(L):
        for j in range(L):
            edge_out[i, j] = 0.0
            for r in range(4):
                outer_out[r, i, j] = 0.0
            for w in range(LANES):
                outer[i, j, w] = 0.0
    ids = lw.ids
    lengths = lw.lengths
    solo = longest_in_lanes(L)
    k = 0
    for s in range(s0, s1):
        a = seq_ptr[s]
        n = seq_ptr[s + 1] - a
        seq_log_z[s] = 0.0
        if n == 0:
            continue
        if seq_weight[s] == 0.0:
            for t in range(a, a + n):
                for j in range(L):
                    scores_node[t, j] = 0.0
            continue
        if n > solo:
            seq_log_z[s] = solo_sentence(scores_node, tt, a, n, seq_weight[s], outer_out)
            continue
        ids[k] = s
        lengths[k] = n
        k += 1
    # the sentences by length, in sentence order within a length (a counting
    # sort: linear, and no sorting helpers to compile at the first fit)
    longest = 0
    for q in range(k):
        if lengths[q] > longest:
            longest = lengths[q]
    start = lw.offsets
    for v in range(longest + 2):
        start[v] = 0
    for q in range(k):
        start[lengths[q] + 1] += 1
    for v in range(1, longest + 2):
        start[v] += start[v - 1]
    order = lw.order
    for q in range(k):
        v = lengths[q]
        order[start[v]] = q
        start[v] += 1
    # groups of LANES sentences in that order, the one partial group (if any)
    # first: its empty lanes then pad the shortest sentences, not the longest
    g = 0
    while g < k:
        end = g + (k % LANES if g == 0 and k % LANES else LANES)
        T = lengths[order[end - 1]]  # the group's longest
        for w in range(LANES):
            if g + w < end:
                s = ids[order[g + w]]
                lw.seq[w] = s
                lw.start[w] = seq_ptr[s]
                lw.length[w] = lengths[order[g + w]]
                lw.span[w] = lw.length[w]
                lw.weight[w] = seq_weight[s]
            else:
                lw.seq[w] = 0
                lw.start[w] = lw.start[0]  # a row of the group (lane 0 is never empty)
                lw.length[w] = 0
                lw.span[w] = 0.0
                lw.weight[w] = 0.0
        lanes_forward(scores_node, tt, T, lw)
        lanes_backward(tt, T, lw)
        lanes_counts(scores_node, T, lw)
        for w in range(LANES):
            if lw.length[w] > 0:
                seq_log_z[lw.seq[w]] = lw.log_z[w] if lw.ok[w] != 0 else np.nan
        g = end
    for w in range(LANES):
        r = w % 4
        for i in range(L):
            for j in range(L):
                outer_out[r, i, j] += outer[i, j, w]
    declined = 0
    acc = 0.0
    for s in range(s0, s1):
        if seq_ptr[s + 1] == seq_ptr[s] or seq_weight[s] == 0.0:
            continue
        if np.isnan(seq_log_z[s]):
            declined += 1
        acc += seq_weight[s] * seq_log_z[s]
    return declined, acc


@kernel
def gradient_blocks_scaled(
    w_attr, tok_ptr, tok_attr, tok_val, with_scores, forbidden_start, forbidden_end,
    trans, seq_ptr, seq_weight, block_ptr, first, stop, lw, wnode, seq_log_z,
    block_log_z, block_outer, block_edge, scatter, ent_tok, ent_code, ent_val, tok0,
    attr_label, g_rows, g_state, exp_trans_out,
):
    """The gradient's pass over blocks ``first..stop-1``, one block at a time
    while its rows of ``wnode`` (n_tokens, L) are in cache: the state scores
    of its tokens (:func:`~sklearn_crf._engine.scores.state_scores_dense_range`
    from the dense (n_attributes, L) weights ``w_attr``, unless
    ``with_scores`` is False: ``wnode`` holds them already), the labels
    ``forbidden_start`` / ``forbidden_end`` set to -inf on the first / last
    token of each sequence (constraints; empty arrays when none), the scaled
    forward-backward over lanes of :func:`lanes_block` in the workspace
    ``lw`` (a :class:`LaneWorkspace` that holds every block's sentences;
    weighted node marginals in place of the scores), and, when ``scatter``, the block's
    expected state counts added to ``g_rows`` and ``g_state`` where the
    entries' codes put them (:class:`~sklearn_crf._engine.scores.CountRows`,
    ``attr_label`` the layout's) by
    :func:`~sklearn_crf._engine.scores.scatter_state_counts` over the entries
    ``tok_ptr[a]:tok_ptr[e]`` of an entry index in the corpus's own order
    (``ent_tok``, ``ent_code``, ``ent_val``; ``[a, e)`` the block's tokens).
    ``seq_ptr``, ``tok_ptr`` and ``wnode`` may start at the first token of a
    group of blocks (``seq_ptr`` less it, ``tok_ptr`` a view from it), so
    that ``wnode`` holds that group's rows alone: the entries' tokens, less
    ``tok0``, are its rows (``tok0`` 0 for the whole corpus).
    The call with ``first`` 0 also writes the ``exp_trans`` of its
    :class:`TransitionTerms` to ``exp_trans_out`` (L, L), for
    :func:`transition_gradient`.

    Returns ``stop``, or the first block where scaling declined for a
    sequence, before its counts are added: the caller completes that block
    in log space (:func:`forward_backward_blocks_log`), adds its counts and
    calls again from the next block.
    """
    L = trans.shape[0]
    tt = transition_terms(trans)
    if first == 0:
        for i in range(L):
            for j in range(L):
                exp_trans_out[i, j] = tt.exp_trans[i, j]
    n_forbidden = forbidden_start.shape[0] + forbidden_end.shape[0]
    for b in range(first, stop):
        s0 = block_ptr[b]
        s1 = block_ptr[b + 1]
        a = seq_ptr[s0]
        e = seq_ptr[s1]
        if with_scores:
            state_scores_dense_range(w_attr, tok_ptr, tok_attr, tok_val, a, e, wnode[a:e])
        if n_forbidden:
            for s in range(s0, s1):
                if seq_ptr[s + 1] > seq_ptr[s]:
                    row = wnode[seq_ptr[s]]
                    for j in forbidden_start:
                        row[j] = -np.inf
                    row = wnode[seq_ptr[s + 1] - 1]
                    for j in forbidden_end:
                        row[j] = -np.inf
        declined, acc = lanes_block(wnode, tt, lw, seq_ptr, seq_weight, s0, s1, seq_log_z,
                                    block_outer[b], block_edge[b])
        block_log_z[b] = acc
        if declined:
            return b
        if scatter:
            scatter_state_counts(wnode, ent_tok, ent_code, ent_val, tok_ptr[a], tok_ptr[e],
                                 tok0, attr_label, g_rows, g_state)
    return stop


def forward_backward_blocks(
    scores_node, trans, seq_ptr, seq_weight, block_ptr, first, stop, max_len,
    seq_log_z, block_log_z, block_outer, block_edge,
):
    """Phase 1 of the gradient for blocks ``first..stop-1``, in place.

    ``scores_node`` (n_tokens, L) holds the state scores on entry. Block ``b``
    holds sequences ``block_ptr[b]..block_ptr[b + 1]-1``. For each of its
    sequences ``s`` (weight ``v_s``): the rows of its tokens in
    ``scores_node`` are replaced by ``v_s`` times the node marginals (zeros
    when ``v_s`` is 0), ``seq_log_z[s]`` gets log Z_s (0 when ``v_s`` is 0);
    ``block_log_z[b]`` gets Σ v_s log Z_s; ``block_outer[b]`` (4, L, L) and
    ``block_edge[b]`` (L, L) the weighted edge sums (:func:`lanes_block`;
    ``block_edge`` those of the sequences completed in log space). ``max_len`` is at least
    the longest sequence. Also what :func:`forward_backward_batch` runs for
    the node marginals alone (weights 1), so that one compiled kernel serves
    both.

    Two kernels: the scaled passes (:func:`gradient_blocks_scaled`, the
    fit's kernel, without its state scores and counts: one compiled kernel
    for both, so that a first ``predict_marginals`` after a fit compiles
    nothing new), and only for the blocks where they decline, the log-space
    ones (:func:`forward_backward_blocks_log`), so that a fit whose sequences
    all scale never compiles the log-space kernels. Releases the GIL apart
    from the calls themselves.
    """
    L = trans.shape[0]
    no_ints = np.zeros(0, dtype=np.int64)
    no_ids = np.zeros(0, dtype=np.int32)
    no_values = np.zeros(0)
    no_rows = np.zeros((0, L))
    exp_trans = np.empty((L, L))
    lw = lane_workspace(max_len, int(np.max(np.diff(block_ptr[first:stop + 1]), initial=0)),
                        L)
    while first < stop:
        b = gradient_blocks_scaled(
            no_rows, no_ints, no_ids, no_values, False, no_ints, no_ints, trans, seq_ptr,
            seq_weight, block_ptr, first, stop, lw, scores_node, seq_log_z,
            block_log_z, block_outer, block_edge, False, no_ids, no_ids, no_values, 0,
            no_ids, no_rows, no_values, exp_trans,
        )
        if b == stop:
            return
        forward_backward_blocks_log(
            scores_node, trans, seq_ptr, seq_weight, block_ptr, b, b + 1, max_len,
            seq_log_z, block_log_z, block_edge,
        )
        first = b + 1
