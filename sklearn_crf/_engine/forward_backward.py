"""Forward-backward for linear-chain CRFs: scaled and log space, marginals,
expected counts, span probabilities.

Dense state scores (n_tokens, L) and sequence offsets ``seq_ptr`` (see
:mod:`sklearn_crf._engine.scores`). Two numeric schemes, each written once:

* scaled (:func:`forward_scaled`, :func:`backward_scaled`): per-position
  scaling (Rabiner's scheme, as in CRFsuite and Wapiti), one ``exp`` per state
  score instead of one per label pair; used where it is provably exact
  (see :func:`forward_scaled`);
* normalized log space (:func:`forward_backward_log`): exact for any weights,
  -inf (forbidden) transitions and state scores included; L² exps per
  position. Constraints of every kind are -inf scores, so the constrained
  variants are these same kernels.

The fit runs the scaled passes over lanes of sentences instead
(:mod:`sklearn_crf._engine.lanes`, the same arithmetic per sentence); the
one-sequence kernels here serve inference, the edge marginals and the
log-space fallback.

:func:`forward_backward_scaled_crfsuite` is CRFsuite's own arithmetic
(``crf1dc_marginals``), for the l2sgd solver, whose weights follow CRFsuite's
to the last bits a sequential algorithm can keep.

Every kernel has a brute-force twin in ``tests/_naive.py``.
"""

import math
from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import intrinsic

from .config import exact_kernel, kernel
from .scores import logsumexp_row, max_length

#: largest spread (max - min) of state plus transition weights at a position for
#: which the scaled forward-backward is used; beyond it, log space
MAX_SCALED_SPREAD = 600.0


# --------------------------------------------------------------------------
# exp for the scaled forward-backward
# --------------------------------------------------------------------------


@intrinsic
def _int64_bits_as_float64(typingctx, x):
    """Reinterpret the bits of an int64 as a float64 (LLVM bitcast)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return sig, codegen


_LOG2E = 1.4426950408889634
#: ln 2 split in a high part with trailing zero bits and a low part (Cody-Waite)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


@kernel(inline="always")
def exp_nonpositive(x):
    """``exp(x)`` for ``-708 <= x <= 0`` to within about 1 ulp; 0 below -708.

    Cody-Waite range reduction ``x = k ln 2 + r`` with ``|r| <= ln 2 / 2``, the
    degree-13 Taylor polynomial of ``exp(r)`` (truncation error below 1e-17
    relative), and ``2**k`` built from its exponent bits. Branch-free apart
    from the final select, so that LLVM vectorizes a loop over it, which it
    cannot do with a call to libm's ``exp``: about 2x faster here. Used where
    the arguments are known to lie in [-MAX_SCALED_SPREAD, 0].
    """
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    if x >= -708.0:
        return p * _int64_bits_as_float64((np.int64(k) + 1023) << 52)
    return 0.0


# --------------------------------------------------------------------------
# forward-backward with per-position scaling (the fast path)
# --------------------------------------------------------------------------
#
# The state scores are shifted by their maximum at each position and
# exponentiated once (``exp_scores``); the transitions by their maximum
# (``exp_trans = exp(trans - trans_max)``, see :func:`transition_terms`). The
# alphas are normalized at each position (``scale[t]`` the constant), the betas
# divided by the same constants, so both stay O(1). The (L, L) products of the
# passes (:func:`vec_mat`) add the terms of each sum in index order (the
# transposed matrix for the backward pass), one FMA per term, in registers or
# side by side in vector lanes: no sum is reassociated, so results do not
# depend on the schedule or on vector widths.
#
# The kernels index their 2-d buffers by (row, column) rather than taking row
# views (``alpha[t]``) inside their loops: a view is an array object whose
# reference count numba raises and lowers, two atomic operations per view, and
# in a loop with an early exit (the checks of :func:`forward_scaled`) numba
# keeps them: more than the arithmetic itself.


TransitionTerms = namedtuple(
    "TransitionTerms", ["trans", "exp_trans", "exp_trans_t", "trans_max", "spread"]
)
TransitionTerms.__doc__ = """What the scaled passes need of the (L, L) transition weights.

``exp_trans = exp(trans - trans_max)``, ``exp_trans_t`` its transpose
(C-contiguous), ``trans_max`` the largest weight and ``spread`` the largest
minus the smallest (inf when one is -inf or any is not finite)."""

ScaledWorkspace = namedtuple(
    "ScaledWorkspace", ["exp_scores", "alpha", "beta", "scale", "tmp"]
)
ScaledWorkspace.__doc__ = """Buffers of the scaled passes for sequences of up to
``max_len`` tokens: ``exp_scores``, ``alpha``, ``beta`` (max_len, L),
``scale`` (max_len,) and a scratch row ``tmp`` (1, L); see
:func:`scaled_workspace`."""


@kernel(inline="always")
def transition_terms(trans):
    """The :class:`TransitionTerms` of the (L, L) transition weights.

    Inlined in numba's IR: a few loops that every caller runs once per call,
    so that a first use does not compile them as one more specialization of
    their own."""
    L = trans.shape[0]
    trans_max = -np.inf
    trans_min = np.inf
    for i in range(L):
        for j in range(L):
            v = trans[i, j]
            if v > trans_max:
                trans_max = v
            if v < trans_min:
                trans_min = v
    exp_trans = np.empty((L, L))
    exp_trans_t = np.empty((L, L))
    finite = np.isfinite(trans_max)
    for i in range(L):
        for j in range(L):
            e = np.exp(trans[i, j] - trans_max) if finite else 0.0
            exp_trans[i, j] = e
            exp_trans_t[j, i] = e
    spread = trans_max - trans_min
    if not np.isfinite(spread):
        spread = np.inf
    return TransitionTerms(
        trans, exp_trans, exp_trans_t, trans_max, spread
    )


@kernel(inline="always")
def scaled_workspace(max_len, L):
    """A :class:`ScaledWorkspace` for sequences of up to ``max_len`` tokens."""
    return ScaledWorkspace(
        np.empty((max_len, L)), np.empty((max_len, L)), np.empty((max_len, L)),
        np.empty(max_len), np.empty((1, L)),
    )


#: from this many labels on, :func:`vec_mat` runs its sums in vector lanes
VEC_MAT_LANES_FROM = 12


@kernel(inline="always")
def vec_mat(x, s, m, out, t):
    """``out[t, j] = Σ_i x[s, i] · m[i, j]`` for an (L, L) ``m``, the terms of
    each sum added in ``i`` order from 0, one rounding (FMA) per term, so each
    ``out[t, j]`` is the same number whatever ``L``, the schedule below and
    the vector width. Rows of 2-d arrays (see the note above: no views);
    ``x`` may be ``out`` (another row).

    Two schedules of the same sums, by ``L`` alone: below
    :data:`VEC_MAT_LANES_FROM` labels, eight (then four, then one) sums in
    registers (:func:`_vec_mat_registers`); from it on, all sums side by side
    in vector lanes (:func:`_vec_mat_lanes`), whichever was faster per
    position at that size (benchmarks/README.md)."""
    if out.shape[1] < VEC_MAT_LANES_FROM:
        _vec_mat_registers(x, s, m, out, t)
    else:
        _vec_mat_lanes(x, s, m, out, t)


@kernel(inline="always")
def _vec_mat_registers(x, s, m, out, t):
    """:func:`vec_mat` with eight sums at a time in registers (independent
    chains, one load of ``x[s, i]`` for eight products), then four, then the
    last ``L mod 4`` one at a time. Numba leaves these loops scalar: fast
    while ``L`` is small, one instruction per product beyond."""
    L = out.shape[1]
    j0 = 0
    while j0 + 8 <= L:
        d0 = 0.0
        d1 = 0.0
        d2 = 0.0
        d3 = 0.0
        d4 = 0.0
        d5 = 0.0
        d6 = 0.0
        d7 = 0.0
        for i in range(L):
            p = x[s, i]
            d0 += p * m[i, j0]
            d1 += p * m[i, j0 + 1]
            d2 += p * m[i, j0 + 2]
            d3 += p * m[i, j0 + 3]
            d4 += p * m[i, j0 + 4]
            d5 += p * m[i, j0 + 5]
            d6 += p * m[i, j0 + 6]
            d7 += p * m[i, j0 + 7]
        out[t, j0] = d0
        out[t, j0 + 1] = d1
        out[t, j0 + 2] = d2
        out[t, j0 + 3] = d3
        out[t, j0 + 4] = d4
        out[t, j0 + 5] = d5
        out[t, j0 + 6] = d6
        out[t, j0 + 7] = d7
        j0 += 8
    if j0 + 4 <= L:
        d0 = 0.0
        d1 = 0.0
        d2 = 0.0
        d3 = 0.0
        for i in range(L):
            p = x[s, i]
            d0 += p * m[i, j0]
            d1 += p * m[i, j0 + 1]
            d2 += p * m[i, j0 + 2]
            d3 += p * m[i, j0 + 3]
        out[t, j0] = d0
        out[t, j0 + 1] = d1
        out[t, j0 + 2] = d2
        out[t, j0 + 3] = d3
        j0 += 4
    for j in range(j0, L):
        d = 0.0
        for i in range(L):
            d += x[s, i] * m[i, j]
        out[t, j] = d


@kernel(inline="always")
def _vec_mat_lanes(x, s, m, out, t):
    """:func:`vec_mat` with the sums side by side over ``j``, four terms
    (``i`` to ``i + 3``) per pass over the row ``out[t]``: the loop over ``j``
    has no dependence between its iterations, so LLVM vectorizes it (eight
    sums per instruction with AVX-512), and each partial sum is loaded and
    stored once per four terms."""
    L = out.shape[1]
    for j in range(L):
        out[t, j] = 0.0
    i = 0
    while i + 4 <= L:
        p0 = x[s, i]
        p1 = x[s, i + 1]
        p2 = x[s, i + 2]
        p3 = x[s, i + 3]
        for j in range(L):
            d = out[t, j]
            d += p0 * m[i, j]
            d += p1 * m[i + 1, j]
            d += p2 * m[i + 2, j]
            d += p3 * m[i + 3, j]
            out[t, j] = d
        i += 4
    while i < L:
        p = x[s, i]
        for j in range(L):
            out[t, j] += p * m[i, j]
        i += 1


@kernel
def forward_scaled(scores, tt, n, ws):
    """Scaled forward pass over the state scores ``scores[:n]`` (left as they are).

    Fills ``ws.exp_scores[:n]`` (the scores shifted by their row maximum and
    exponentiated), ``ws.alpha[:n]`` (normalized: each row sums to 1) and
    ``ws.scale[:n]`` (the normalizing constants); returns log Z, or NaN when
    scaling cannot be trusted (the caller then uses log space).

    Scaling is exact up to rounding when, at every position, the spread of the
    state scores plus ``tt.spread`` is at most ``MAX_SCALED_SPREAD``: every
    normalized alpha is then at least ``exp(-MAX_SCALED_SPREAD) / L²`` and
    every beta at least ``exp(-MAX_SCALED_SPREAD) / L``, far from underflow,
    and a product that does underflow is negligible beside the largest term of
    its sum. (With a forbidden, -inf, transition there is no such bound: a
    label reachable only from unlikely labels can decay to 0 and be lost for
    good.)
    """
    L = scores.shape[1]
    exp_scores, alpha, scale = ws.exp_scores, ws.alpha, ws.scale
    exp_trans = tt.exp_trans
    log_z = 0.0
    for t in range(n):
        m = scores[t, 0]
        lo = m
        for j in range(1, L):
            v = scores[t, j]
            if v > m:
                m = v
            if v < lo:
                lo = v
        if not (m - lo + tt.spread <= MAX_SCALED_SPREAD):
            return np.nan  # also when m or lo is not finite
        log_z += m
        for j in range(L):
            exp_scores[t, j] = scores[t, j] - m
    # the exps over the n·L shifted scores as one flat loop, which LLVM
    # vectorizes whatever L (a loop over the L labels of a row is too short)
    flat = exp_scores.reshape(exp_scores.shape[0] * L)
    for k in range(n * L):
        flat[k] = exp_nonpositive(flat[k])
    if n > 1:
        if not np.isfinite(tt.trans_max):
            return np.nan
        log_z += (n - 1) * tt.trans_max
    c = 0.0
    for j in range(L):
        alpha[0, j] = exp_scores[0, j]
        c += exp_scores[0, j]
    if not (c > 0.0 and np.isfinite(c)):
        return np.nan
    inv = 1.0 / c
    for j in range(L):
        alpha[0, j] *= inv
    log_z += np.log(c)
    scale[0] = c
    for t in range(1, n):
        vec_mat(alpha, t - 1, exp_trans, alpha, t)
        c = 0.0
        for j in range(L):
            a = alpha[t, j] * exp_scores[t, j]
            alpha[t, j] = a
            c += a
        if not (c > 0.0 and np.isfinite(c)):
            return np.nan
        inv = 1.0 / c
        for j in range(L):
            alpha[t, j] *= inv
        log_z += np.log(c)
        scale[t] = c
    if not np.isfinite(log_z):
        return np.nan
    return log_z


@kernel
def backward_scaled(tt, n, ws):
    """Scaled backward pass after :func:`forward_scaled`: fills ``ws.beta[:n]``
    (divided by the forward pass's constants, so ``alpha * beta`` are the node
    marginals)."""
    L = ws.beta.shape[1]
    beta, exp_scores, scale, tmp = ws.beta, ws.exp_scores, ws.scale, ws.tmp
    exp_trans_t = tt.exp_trans_t
    for j in range(L):
        beta[n - 1, j] = 1.0
    for t in range(n - 2, -1, -1):
        inv = 1.0 / scale[t + 1]
        for j in range(L):
            tmp[0, j] = exp_scores[t + 1, j] * beta[t + 1, j] * inv
        vec_mat(tmp, 0, exp_trans_t, beta, t)  # beta[t, i] = Σ_j exp_trans[i, j] tmp[j]


@kernel
def node_marginals_scaled(n, ws, node):
    """``node[:n] = alpha * beta``; False when a product is not finite."""
    L = node.shape[1]
    alpha, beta = ws.alpha, ws.beta
    ok = True
    for t in range(n):
        for j in range(L):
            p = alpha[t, j] * beta[t, j]
            node[t, j] = p
            if not np.isfinite(p):
                ok = False
    return ok


@kernel
def edge_marginals_scaled(tt, n, ws, edge):
    """``edge[t, i, j] = p(y[t-1] = i, y[t] = j)`` for t in 1..n-1 from the
    scaled passes."""
    L = edge.shape[1]
    exp_trans = tt.exp_trans
    tmp = np.empty(L)  # exp_scores[t] * beta[t], shared by every row i
    for t in range(1, n):
        inv = 1.0 / ws.scale[t]
        row = ws.exp_scores[t]
        b = ws.beta[t]
        for j in range(L):
            tmp[j] = row[j] * b[j]
        prev = ws.alpha[t - 1]
        dest = edge[t]
        for i in range(L):
            a = prev[i] * inv
            e = exp_trans[i]
            d = dest[i]
            for j in range(L):
                d[j] = a * e[j] * tmp[j]


@kernel
def edge_outer_sum_scaled(n, ws, weight, outer):
    """Add ``weight`` times ``alpha[t-1, i] / c_t · exp_scores[t, j] beta[t, j]``
    summed over t in 1..n-1 to ``outer`` (4, L, L), position t into
    ``outer[t % 4]`` (four independent accumulators instead of one long chain
    of dependent additions).

    The edge marginals summed over the positions are ``exp_trans *
    outer.sum(0)``, a product the caller does once for all sequences.
    """
    L = outer.shape[1]
    alpha, beta, exp_scores, scale, tmp = ws.alpha, ws.beta, ws.exp_scores, ws.scale, ws.tmp
    for t in range(1, n):
        inv = 1.0 / scale[t]
        inv *= weight
        for j in range(L):
            tmp[0, j] = exp_scores[t, j] * beta[t, j]
        r = t & 3
        for i in range(L):
            a = alpha[t - 1, i] * inv
            for j in range(L):
                outer[r, i, j] += a * tmp[0, j]



# --------------------------------------------------------------------------
# forward-backward in normalized log space (exact for any weights)
# --------------------------------------------------------------------------
#
# The log alphas are normalized at each position (``log_c[t]``, the log of the
# scaling constant, is subtracted) and the log betas shifted by the same
# constants, the log-space twin of the scaled scheme: both stay O(1) however
# long the sequence and large the weights, so ``exp(la + lb)`` keeps full
# precision. Exact for any weights, including -inf transitions and state
# scores (constraints); L² exps per position.


@kernel
def forward_backward_log(scores, trans, n, log_alpha, log_beta, log_c):
    """Normalized log-space forward-backward of one sequence: fills
    ``log_alpha[:n]`` (each row's exps sum to 1), ``log_beta[:n]`` (shifted by
    the same constants) and ``log_c[:n]``, and returns log Z = Σ log_c (-inf
    when no path has a finite score; the buffers are then -inf too)."""
    L = scores.shape[1]
    if n == 0:
        return 0.0
    la, lb = log_alpha, log_beta
    tmp = np.empty(L)
    for j in range(L):
        la[0, j] = scores[0, j]
    log_c[0] = logsumexp_row(la[0], L)
    dead = log_c[0] == -np.inf
    if not dead:
        for j in range(L):
            la[0, j] -= log_c[0]
    for t in range(1, n):
        if dead:
            break
        for j in range(L):
            for i in range(L):
                tmp[i] = la[t - 1, i] + trans[i, j]
            la[t, j] = scores[t, j] + logsumexp_row(tmp, L)
        log_c[t] = logsumexp_row(la[t], L)
        dead = log_c[t] == -np.inf
        for j in range(L):
            la[t, j] -= log_c[t]
    if dead:
        for t in range(n):
            log_c[t] = -np.inf
            for j in range(L):
                la[t, j] = -np.inf
                lb[t, j] = -np.inf
        return -np.inf
    log_z = 0.0
    for t in range(n):
        log_z += log_c[t]
    for j in range(L):
        lb[n - 1, j] = 0.0
    for t in range(n - 2, -1, -1):
        for i in range(L):
            for j in range(L):
                tmp[j] = trans[i, j] + scores[t + 1, j] + lb[t + 1, j]
            lb[t, i] = logsumexp_row(tmp, L) - log_c[t + 1]
    return log_z


@kernel
def node_marginals_log(n, log_alpha, log_beta, node):
    """``node[:n] = exp(log_alpha + log_beta)``."""
    L = node.shape[1]
    for t in range(n):
        for j in range(L):
            node[t, j] = np.exp(log_alpha[t, j] + log_beta[t, j])


@kernel
def edge_marginals_log(scores, trans, n, log_alpha, log_beta, log_c, edge):
    """``edge[t, i, j] = p(y[t-1] = i, y[t] = j)`` for t in 1..n-1 from the
    log-space passes."""
    L = scores.shape[1]
    la, lb = log_alpha, log_beta
    for t in range(1, n):
        for i in range(L):
            for j in range(L):
                edge[t, i, j] = np.exp(
                    la[t - 1, i] + trans[i, j] + scores[t, j] + lb[t, j] - log_c[t]
                )


@kernel
def edge_sum_log(scores, trans, n, log_alpha, log_beta, log_c, weight, edge_sum):
    """Add ``weight`` times the edge marginals summed over t in 1..n-1 to
    ``edge_sum`` (L, L), from the log-space passes."""
    L = scores.shape[1]
    la, lb = log_alpha, log_beta
    for t in range(1, n):
        for i in range(L):
            for j in range(L):
                p = np.exp(
                    la[t - 1, i] + trans[i, j] + scores[t, j] + lb[t, j] - log_c[t]
                )
                edge_sum[i, j] += weight * p


# --------------------------------------------------------------------------
# one sequence: the passes put together
# --------------------------------------------------------------------------


@kernel
def marginals_scaled(scores, tt, n, ws, node, edge):
    """log Z and node marginals (``node[:n]``) of one sequence by the scaled
    passes, and the edge marginals (``edge[1:n]``) unless ``edge`` has zero
    length; NaN when scaling cannot be trusted (outputs then undefined)."""
    if n == 0:
        return 0.0
    log_z = forward_scaled(scores, tt, n, ws)
    if np.isnan(log_z):
        return log_z
    backward_scaled(tt, n, ws)
    if not node_marginals_scaled(n, ws, node):
        return np.nan
    if edge.shape[0] > 0:
        edge_marginals_scaled(tt, n, ws, edge)
    return log_z


@kernel
def marginals_log(scores, trans, n, node, edge):
    """:func:`marginals_scaled` in log space: exact for any weights."""
    L = scores.shape[1]
    log_alpha = np.empty((n, L))
    log_beta = np.empty((n, L))
    log_c = np.empty(n)
    log_z = forward_backward_log(scores, trans, n, log_alpha, log_beta, log_c)
    node_marginals_log(n, log_alpha, log_beta, node)
    if edge.shape[0] > 0:
        edge_marginals_log(scores, trans, n, log_alpha, log_beta, log_c, edge)
    return log_z


@kernel
def marginals_sequence(scores, tt, n, ws, node, edge):
    """:func:`marginals_scaled`, or :func:`marginals_log` where scaling declines."""
    log_z = marginals_scaled(scores, tt, n, ws, node, edge)
    if np.isnan(log_z):
        log_z = marginals_log(scores, tt.trans, n, node, edge)
    return log_z


@kernel
def expected_counts_sequence(scores, tt, n, ws, weight, node, edge_sum, outer):
    """What the gradient needs of one sequence: log Z (returned), the node
    marginals (``node[:n]``) and, times ``weight``, the edge marginals summed
    over positions.

    The scaled passes add outer products to ``outer`` (4, L, L), to be
    multiplied by ``exp_trans`` (see :func:`edge_outer_sum_scaled`); where
    scaling declines, the log-space passes add the summed edge marginals to
    ``edge_sum`` (L, L) instead. Outer products are only added once the
    sequence is known good.
    """
    if n == 0:
        return 0.0
    log_z = forward_scaled(scores, tt, n, ws)
    if not np.isnan(log_z):
        backward_scaled(tt, n, ws)
        if node_marginals_scaled(n, ws, node):
            edge_outer_sum_scaled(n, ws, weight, outer)
            return log_z
    L = scores.shape[1]
    log_alpha = np.empty((n, L))
    log_beta = np.empty((n, L))
    log_c = np.empty(n)
    log_z = forward_backward_log(scores, tt.trans, n, log_alpha, log_beta, log_c)
    node_marginals_log(n, log_alpha, log_beta, node)
    edge_sum_log(scores, tt.trans, n, log_alpha, log_beta, log_c, weight, edge_sum)
    return log_z




# --------------------------------------------------------------------------
# over ranges of sequences and blocks (run by the driver)
# --------------------------------------------------------------------------


@kernel
def marginals_sequences(scores, trans, seq_ptr, first, stop, log_z, node, edge):
    """log Z (``log_z[s]``), node marginals and, unless ``edge`` has zero
    length, edge marginals of sequences ``first..stop-1`` (rows of ``node``
    and ``edge`` as in :func:`forward_backward_batch`)."""
    L = scores.shape[1]
    tt = transition_terms(trans)
    ws = scaled_workspace(max_length(seq_ptr[first:stop + 1]), L)
    with_edges = edge.shape[0] > 0
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        if b == a:
            continue
        log_z[s] = marginals_sequence(
            scores[a:b], tt, b - a, ws, node[a:b], edge[a:b] if with_edges else edge
        )




@kernel
def forward_backward_blocks_log(
    scores_node, trans, seq_ptr, seq_weight, block_ptr, first, stop, max_len,
    seq_log_z, block_log_z, block_edge,
):
    """The log-space half of
    :func:`~sklearn_crf._engine.lanes.forward_backward_blocks`, after
    :func:`~sklearn_crf._engine.lanes.gradient_blocks_scaled`: the sequences
    whose ``seq_log_z`` is NaN, by the log-space passes (their edge sums added
    to ``block_edge`` in sequence order), and ``block_log_z`` of their blocks
    summed again in sequence order. Compiled only when a call needs it.
    """
    L = trans.shape[0]
    raw = np.empty((max_len, L))
    log_alpha = np.empty((max_len, L))
    log_beta = np.empty((max_len, L))
    log_c = np.empty(max_len)
    for b in range(first, stop):
        s0 = block_ptr[b]
        s1 = block_ptr[b + 1]
        redo = False
        for s in range(s0, s1):
            if np.isnan(seq_log_z[s]):
                redo = True
        if not redo:
            continue
        edge = block_edge[b]
        for s in range(s0, s1):
            if not np.isnan(seq_log_z[s]):
                continue
            a = seq_ptr[s]
            n = seq_ptr[s + 1] - a
            weight = seq_weight[s]
            node = scores_node[a:a + n]
            for t in range(n):
                for j in range(L):
                    raw[t, j] = node[t, j]
            log_z = forward_backward_log(raw, trans, n, log_alpha, log_beta, log_c)
            node_marginals_log(n, log_alpha, log_beta, node)
            edge_sum_log(raw, trans, n, log_alpha, log_beta, log_c, weight, edge)
            seq_log_z[s] = log_z
            if weight != 1.0:
                for t in range(n):
                    for j in range(L):
                        node[t, j] *= weight
        acc = 0.0
        for s in range(s0, s1):
            if seq_ptr[s + 1] == seq_ptr[s] or seq_weight[s] == 0.0:
                continue
            acc += seq_weight[s] * seq_log_z[s]
        block_log_z[b] = acc


def transition_gradient(exp_trans, block_outer, block_edge):
    """Expected transition counts (L, L) from the blocks' edge sums of
    :func:`~sklearn_crf._engine.lanes.forward_backward_blocks` (``block_outer``
    (n_blocks, 4, L, L), ``block_edge`` (n_blocks, L, L)), added in block
    order, and ``exp_trans`` (L, L), the ``exp(trans - max)`` the passes used:
    ``edge + ((o0 + o1) + (o2 + o3)) · exp_trans``.

    NumPy, once per evaluation (no compile at the first fit): the reductions
    over the first axis add the blocks one after the other, from the first.
    The last product and sum round twice where ``edge`` is not 0 (sequences
    completed in log space), where the kernel this replaces rounded once.
    """
    outer = block_outer.sum(axis=0)
    out = (outer[0] + outer[1]) + (outer[2] + outer[3])
    out *= exp_trans
    if block_edge.any():
        out += block_edge.sum(axis=0)
    return out


@kernel
def log_forward_backward_sequences(scores, trans, seq_ptr, first, stop, log_z, la, lb, log_c):
    """:func:`forward_backward_log` of sequences ``first..stop-1``: ``log_z[s]``
    and the rows of their tokens in ``la``, ``lb``, ``log_c``."""
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        log_z[s] = forward_backward_log(
            scores[a:b], trans, b - a, la[a:b], lb[a:b], log_c[a:b]
        )


@kernel
def span_log_probabilities(scores, trans, log_alpha, log_beta, log_c, first, length,
                           code_ptr, codes, start, stop, out):
    """log p(y[a .. a+m-1] = the given labels | x) of spans ``start..stop-1``
    into ``out``.

    Span ``k`` covers the tokens ``first[k] .. first[k] + length[k] - 1``
    (global token indices, within one sequence) with the labels
    ``codes[code_ptr[k] : code_ptr[k] + length[k]]``. With the normalized
    quantities of :func:`forward_backward_log`, the probability is
    ``alpha[a, y_a] · Π_{t=a+1}^{b} exp(trans[y_{t-1}, y_t] + scores[t, y_t]) /
    c_t · beta[b, y_b]``: a sum of O(1) terms in log space, so it keeps its
    precision on long sequences with large weights (unlike ``score(y) - log
    Z``). A whole sequence as one span gives log p(y | x). -inf when the
    labels are not allowed; clipped at 0 against rounding.
    """
    for k in range(start, stop):
        a = first[k]
        m = length[k]
        base = code_ptr[k]
        if m == 0:
            out[k] = 0.0
            continue
        y = codes[base]
        v = log_alpha[a, y]
        for t in range(1, m):
            prev = y
            y = codes[base + t]
            v += trans[prev, y] + scores[a + t, y] - log_c[a + t]
        v += log_beta[a + m - 1, y]
        if np.isnan(v):
            v = -np.inf
        elif v > 0.0:  # rounding (about 1e-16 times the weights): a probability is <= 1
            v = 0.0
        out[k] = v


# --------------------------------------------------------------------------
# CRFsuite's arithmetic (the l2sgd solver)
# --------------------------------------------------------------------------


@exact_kernel
def forward_backward_scaled_crfsuite(
    scores, trans, n, exp_state, exp_trans, alpha, beta, scale, node, edge_sum
):
    """CRFsuite's scaled forward-backward for one sequence; returns log Z.

    Fills the node marginals ``node[:n]`` and the edge marginals summed over
    positions ``edge_sum`` (L, L), as ``crf1dc_marginals`` does. Unlike
    CRFsuite, the state scores of each position and the transition scores are
    shifted by their maximum before ``exp`` (the same results, no overflow).
    """
    L = scores.shape[1]
    for i in range(L):
        for j in range(L):
            edge_sum[i, j] = 0.0
    if n == 0:
        return 0.0
    shift = 0.0
    mt = trans[0, 0]
    for i in range(L):
        for j in range(L):
            if trans[i, j] > mt:
                mt = trans[i, j]
    for i in range(L):
        for j in range(L):
            exp_trans[i, j] = math.exp(trans[i, j] - mt)
    shift += (n - 1) * mt
    for t in range(n):
        m = scores[t, 0]
        for j in range(1, L):
            if scores[t, j] > m:
                m = scores[t, j]
        for j in range(L):
            exp_state[t, j] = math.exp(scores[t, j] - m)
        shift += m
    # forward
    s = 0.0
    for j in range(L):
        alpha[0, j] = exp_state[0, j]
        s += alpha[0, j]
    scale[0] = 1.0 / s if s != 0.0 else 1.0
    for j in range(L):
        alpha[0, j] *= scale[0]
    for t in range(1, n):
        for j in range(L):
            alpha[t, j] = 0.0
        for i in range(L):
            a = alpha[t - 1, i]
            for j in range(L):
                alpha[t, j] += a * exp_trans[i, j]
        s = 0.0
        for j in range(L):
            alpha[t, j] *= exp_state[t, j]
            s += alpha[t, j]
        scale[t] = 1.0 / s if s != 0.0 else 1.0
        for j in range(L):
            alpha[t, j] *= scale[t]
    log_z = 0.0
    for t in range(n):
        log_z -= math.log(scale[t])
    # backward
    for j in range(L):
        beta[n - 1, j] = scale[n - 1]
    row = np.empty(L)
    for t in range(n - 2, -1, -1):
        for j in range(L):
            row[j] = beta[t + 1, j] * exp_state[t + 1, j]
        for i in range(L):
            d = 0.0
            for j in range(L):
                d += exp_trans[i, j] * row[j]
            beta[t, i] = d * scale[t]
    # marginals
    for t in range(n):
        inv = 1.0 / scale[t]
        for j in range(L):
            node[t, j] = alpha[t, j] * beta[t, j] * inv
    for t in range(n - 1):
        for j in range(L):
            row[j] = beta[t + 1, j] * exp_state[t + 1, j]
        for i in range(L):
            a = alpha[t, i]
            for j in range(L):
                edge_sum[i, j] += a * exp_trans[i, j] * row[j]
    return log_z + shift
