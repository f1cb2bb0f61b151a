"""numba kernels for linear-chain CRFs.

Every function here takes arrays and scalars and returns arrays. Ragged data is
passed CSR-style:

* tokens → attributes: ``tok_ptr`` (n_tokens + 1), ``tok_attr`` (int32 attribute
  ids), ``tok_val`` (float64 attribute values);
* sequences → tokens: ``seq_ptr`` (n_sequences + 1);
* attributes → state parameters: ``attr_ptr`` (n_attributes + 1) and
  ``attr_label`` (int32 label of each state parameter). The state parameter of the
  ``j``-th label of attribute ``a`` has index ``attr_ptr[a] + j``.

Training takes the state weights as a dense (n_attributes, L) matrix
``w_attr`` (zero where a pair has no parameter): gathering a whole contiguous
row per attribute vectorizes and has no data-dependent branches. Prediction
walks the sparse label lists from the parameter vector instead
(:func:`state_scores_sparse`), so that a call costs the same whatever the size
of the model.

No kernel is compiled with ``parallel=True`` (parallel kernels take several
times longer to compile); they release the GIL, and the batch functions run
them over ranges of sequences or blocks on Python threads
(:func:`~sklearn_crf._parallel.run_ranges`), each range writing only its own
outputs, so results do not depend on the thread count.

The forward-backward pass uses per-position scaling (Rabiner's scheme, as in
CRFsuite and Wapiti): one ``exp`` per state score instead of one per label pair.
Whenever scaling under- or overflows (extreme weights, forbidden transitions) the
sequence is recomputed in log space, so the results stay finite and exact.

The kernels, by job (each has a brute-force twin in ``tests/_naive.py``):

* state scores: :func:`state_scores` (all tokens, dense weights),
  :func:`state_scores_sequence`, :func:`state_scores_sparse` (from the
  parameter vector);
* one sequence, scaled: :func:`forward_scaled`, :func:`backward_scaled`,
  :func:`node_marginals_scaled`, :func:`edge_marginals_scaled` (per position),
  :func:`edge_outer_sum_scaled` (summed over positions, for the gradient),
  with their inputs in :class:`TransitionTerms` and buffers in
  :class:`ScaledWorkspace`;
* one sequence, log space: :func:`forward_log`, :func:`backward_log`,
  :func:`node_marginals_log`, :func:`edge_marginals_log`, :func:`edge_sum_log`;
* one sequence, put together (scaled, log space where scaling declines):
  :func:`marginals_sequence`, :func:`expected_counts_sequence`;
  :func:`viterbi_sequence`;
* batches, on threads over ranges of sequences: :func:`forward_backward_batch`
  (:func:`marginals_sequences`), :func:`viterbi_batch`
  (:func:`viterbi_sequences`);
* the gradient, in two phases over fixed blocks of sequences (see
  :func:`forward_backward_blocks`): :func:`forward_backward_blocks`,
  :func:`attribute_index` and :func:`gather_state_gradient`,
  :func:`transition_gradient`; and the counts of the training data,
  :func:`observed_counts`, :func:`pair_frequencies`.

The solvers' vector kernels (OWL-QN) live with the solvers in ``_optimize.py``.
"""

from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from ._parallel import run_ranges

#: "contract" lets LLVM fuse a * b + c into one FMA instruction (one rounding
#: instead of two); no other fast-math flag, so sums are never reassociated and
#: results do not depend on vector widths.
_NJIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")

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


@njit(inline="always", **_NJIT)
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
# building blocks (one sequence at a time)
# --------------------------------------------------------------------------


@njit(**_NJIT)
def state_scores_sequence(w_attr, tok_ptr, tok_attr, tok_val, start, stop, out):
    """Fill ``out[: stop - start]`` with the state scores of tokens start..stop-1."""
    L = out.shape[1]
    for t in range(start, stop):
        row = out[t - start]
        for j in range(L):
            row[j] = 0.0
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            w = w_attr[tok_attr[k]]
            v = tok_val[k]
            for j in range(L):
                row[j] += v * w[j]


@njit(**_NJIT)
def state_scores(w_attr, tok_ptr, tok_attr, tok_val):
    """State scores of every token, shape (n_tokens, L), from the dense
    (n_attributes, L) state weights (see :func:`state_scores_sparse`, which
    does not need them)."""
    n_tokens = tok_ptr.shape[0] - 1
    out = np.empty((n_tokens, w_attr.shape[1]))
    state_scores_sequence(w_attr, tok_ptr, tok_attr, tok_val, 0, n_tokens, out)
    return out


@njit(**_NJIT)
def _logsumexp_row(x, n):
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


# --------------------------------------------------------------------------
# forward-backward with per-position scaling (the fast path)
# --------------------------------------------------------------------------
#
# The state scores are shifted by their maximum at each position and
# exponentiated once (``exp_scores``); the transitions by their maximum
# (``exp_trans = exp(trans - trans_max)``, see :func:`transition_terms`). The
# alphas are normalized at each position (``scale[t]`` the constant), the betas
# divided by the same constants, so both stay O(1). Loops run over the last
# (contiguous) axis innermost so that LLVM can vectorize them without
# reassociating sums (hence the transposed matrix for the backward pass).


TransitionTerms = namedtuple(
    "TransitionTerms", ["trans", "exp_trans", "exp_trans_t", "trans_max", "spread"]
)
TransitionTerms.__doc__ = """What the scaled passes need of the (L, L) transition weights.

``exp_trans = exp(trans - trans_max)``, ``exp_trans_t`` its transpose
(C-contiguous), ``trans_max`` the largest weight and ``spread`` the largest
minus the smallest (inf when one is -inf or any is not finite)."""

ScaledWorkspace = namedtuple("ScaledWorkspace", ["exp_scores", "alpha", "beta", "scale"])
ScaledWorkspace.__doc__ = """Buffers of the scaled passes for sequences of up to
``max_len`` tokens: ``exp_scores``, ``alpha``, ``beta`` (max_len, L) and
``scale`` (max_len,); see :func:`scaled_workspace`."""


@njit(**_NJIT)
def transition_terms(trans):
    """The :class:`TransitionTerms` of the (L, L) transition weights."""
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
    exp_trans = np.zeros((L, L))
    if np.isfinite(trans_max):
        for i in range(L):
            for j in range(L):
                exp_trans[i, j] = np.exp(trans[i, j] - trans_max)
    spread = trans_max - trans_min
    if not np.isfinite(spread):
        spread = np.inf
    return TransitionTerms(
        trans, exp_trans, np.ascontiguousarray(exp_trans.T), trans_max, spread
    )


@njit(**_NJIT)
def scaled_workspace(max_len, L):
    """A :class:`ScaledWorkspace` for sequences of up to ``max_len`` tokens."""
    return ScaledWorkspace(
        np.empty((max_len, L)), np.empty((max_len, L)), np.empty((max_len, L)),
        np.empty(max_len),
    )


@njit(**_NJIT)
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
        src = scores[t]
        row = exp_scores[t]
        m = src[0]
        lo = src[0]
        for j in range(1, L):
            if src[j] > m:
                m = src[j]
            if src[j] < lo:
                lo = src[j]
        if not (m - lo + tt.spread <= MAX_SCALED_SPREAD):
            return np.nan  # also when m or lo is not finite
        log_z += m
        for j in range(L):
            row[j] = exp_nonpositive(src[j] - m)
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
        cur = alpha[t]
        prev = alpha[t - 1]
        for j in range(L):
            cur[j] = 0.0
        for i in range(L):
            a = prev[i]
            e = exp_trans[i]
            for j in range(L):
                cur[j] += a * e[j]
        row = exp_scores[t]
        c = 0.0
        for j in range(L):
            cur[j] *= row[j]
            c += cur[j]
        if not (c > 0.0 and np.isfinite(c)):
            return np.nan
        inv = 1.0 / c
        for j in range(L):
            cur[j] *= inv
        log_z += np.log(c)
        scale[t] = c
    if not np.isfinite(log_z):
        return np.nan
    return log_z


@njit(**_NJIT)
def backward_scaled(tt, n, ws):
    """Scaled backward pass after :func:`forward_scaled`: fills ``ws.beta[:n]``
    (divided by the forward pass's constants, so ``alpha * beta`` are the node
    marginals)."""
    L = ws.beta.shape[1]
    beta, exp_scores, scale = ws.beta, ws.exp_scores, ws.scale
    exp_trans_t = tt.exp_trans_t
    for j in range(L):
        beta[n - 1, j] = 1.0
    for t in range(n - 2, -1, -1):
        inv = 1.0 / scale[t + 1]
        nxt = beta[t + 1]
        row = exp_scores[t + 1]
        cur = beta[t]
        for i in range(L):
            cur[i] = 0.0
        for j in range(L):
            v = row[j] * nxt[j] * inv
            e = exp_trans_t[j]
            for i in range(L):
                cur[i] += e[i] * v


@njit(**_NJIT)
def node_marginals_scaled(n, ws, node):
    """``node[:n] = alpha * beta``; False when a product is not finite."""
    L = node.shape[1]
    ok = True
    for t in range(n):
        a = ws.alpha[t]
        b = ws.beta[t]
        out = node[t]
        for j in range(L):
            out[j] = a[j] * b[j]
            if not np.isfinite(out[j]):
                ok = False
    return ok


@njit(**_NJIT)
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


@njit(**_NJIT)
def edge_outer_sum_scaled(n, ws, weight, outer):
    """Add ``weight`` times ``alpha[t-1, i] / c_t · exp_scores[t, j] beta[t, j]``
    summed over t in 1..n-1 to ``outer`` (4, L, L), position t into
    ``outer[t % 4]`` (four independent accumulators instead of one long chain
    of dependent additions).

    The edge marginals summed over the positions are ``exp_trans *
    outer.sum(0)``, a product the caller does once for all sequences.
    """
    L = outer.shape[1]
    tmp = np.empty(L)
    for t in range(1, n):
        inv = 1.0 / ws.scale[t]
        inv *= weight
        row = ws.exp_scores[t]
        b = ws.beta[t]
        for j in range(L):
            tmp[j] = row[j] * b[j]
        prev = ws.alpha[t - 1]
        dest = outer[t & 3]
        for i in range(L):
            a = prev[i] * inv
            d = dest[i]
            for j in range(L):
                d[j] += a * tmp[j]


# --------------------------------------------------------------------------
# forward-backward in normalized log space (the fallback)
# --------------------------------------------------------------------------
#
# The log alphas are normalized at each position (``log_c[t]``, the log of the
# scaling constant, is subtracted) and the log betas shifted by the same
# constants, the log-space twin of the scaled scheme: both stay O(1) however
# long the sequence and large the weights, so ``exp(la + lb)`` keeps full
# precision. Exact for any weights, including -inf transitions; L² exps per
# position.


@njit(**_NJIT)
def forward_log(scores, trans, n, log_alpha, log_c):
    """Log-space forward pass: fills ``log_alpha[:n]`` (normalized: each row's
    exps sum to 1) and ``log_c[:n]``; returns log Z = Σ log_c."""
    L = scores.shape[1]
    la = log_alpha
    tmp = np.empty(L)
    for j in range(L):
        la[0, j] = scores[0, j]
    log_c[0] = _logsumexp_row(la[0], L)
    for t in range(1, n):
        for j in range(L):
            for i in range(L):
                tmp[i] = la[t - 1, i] - log_c[t - 1] + trans[i, j]
            la[t, j] = scores[t, j] + _logsumexp_row(tmp, L)
        log_c[t] = _logsumexp_row(la[t], L)
    log_z = 0.0
    for t in range(n):
        log_z += log_c[t]
        for j in range(L):
            la[t, j] -= log_c[t]
    return log_z


@njit(**_NJIT)
def backward_log(scores, trans, n, log_c, log_beta):
    """Log-space backward pass after :func:`forward_log`: fills
    ``log_beta[:n]`` (shifted by the forward constants)."""
    L = scores.shape[1]
    lb = log_beta
    tmp = np.empty(L)
    for j in range(L):
        lb[n - 1, j] = 0.0
    for t in range(n - 2, -1, -1):
        for i in range(L):
            for j in range(L):
                tmp[j] = trans[i, j] + scores[t + 1, j] + lb[t + 1, j]
            lb[t, i] = _logsumexp_row(tmp, L) - log_c[t + 1]


@njit(**_NJIT)
def node_marginals_log(n, log_alpha, log_beta, node):
    """``node[:n] = exp(log_alpha + log_beta)``."""
    L = node.shape[1]
    for t in range(n):
        for j in range(L):
            node[t, j] = np.exp(log_alpha[t, j] + log_beta[t, j])


@njit(**_NJIT)
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


@njit(**_NJIT)
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


@njit(**_NJIT)
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


@njit(**_NJIT)
def marginals_log(scores, trans, n, node, edge):
    """:func:`marginals_scaled` in log space: exact for any weights."""
    L = scores.shape[1]
    log_alpha = np.empty((n, L))
    log_beta = np.empty((n, L))
    log_c = np.empty(n)
    log_z = forward_log(scores, trans, n, log_alpha, log_c)
    backward_log(scores, trans, n, log_c, log_beta)
    node_marginals_log(n, log_alpha, log_beta, node)
    if edge.shape[0] > 0:
        edge_marginals_log(scores, trans, n, log_alpha, log_beta, log_c, edge)
    return log_z


@njit(**_NJIT)
def marginals_sequence(scores, tt, n, ws, node, edge):
    """:func:`marginals_scaled`, or :func:`marginals_log` where scaling declines."""
    log_z = marginals_scaled(scores, tt, n, ws, node, edge)
    if np.isnan(log_z):
        log_z = marginals_log(scores, tt.trans, n, node, edge)
    return log_z


@njit(**_NJIT)
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
    log_z = forward_log(scores, tt.trans, n, log_alpha, log_c)
    backward_log(scores, tt.trans, n, log_c, log_beta)
    node_marginals_log(n, log_alpha, log_beta, node)
    edge_sum_log(scores, tt.trans, n, log_alpha, log_beta, log_c, weight, edge_sum)
    return log_z


@njit(**_NJIT)
def viterbi_sequence(scores, trans, n, back, path):
    """Max-plus Viterbi for one sequence; fills ``path[:n]``, returns the best score."""
    L = scores.shape[1]
    if n == 0:
        return 0.0
    delta = np.empty(L)
    new = np.empty(L)
    for j in range(L):
        delta[j] = scores[0, j]
    for t in range(1, n):
        for j in range(L):
            best = -np.inf
            arg = 0
            for i in range(L):
                v = delta[i] + trans[i, j]
                if v > best:
                    best = v
                    arg = i
            new[j] = best + scores[t, j]
            back[t, j] = arg
        for j in range(L):
            delta[j] = new[j]
    best = -np.inf
    arg = 0
    for j in range(L):
        if delta[j] > best:
            best = delta[j]
            arg = j
    path[n - 1] = arg
    for t in range(n - 1, 0, -1):
        arg = back[t, arg]
        path[t - 1] = arg
    return best


# --------------------------------------------------------------------------
# batched kernels
# --------------------------------------------------------------------------


@njit(**_NJIT)
def _max_len(seq_ptr):
    m = 0
    for s in range(seq_ptr.shape[0] - 1):
        d = seq_ptr[s + 1] - seq_ptr[s]
        if d > m:
            m = d
    return m


@njit(**_NJIT)
def marginals_sequences(scores, trans, seq_ptr, first, stop, log_z, node, edge):
    """log Z (``log_z[s]``), node marginals and, unless ``edge`` has zero
    length, edge marginals of sequences ``first..stop-1`` (rows of ``node``
    and ``edge`` as in :func:`forward_backward_batch`)."""
    L = scores.shape[1]
    tt = transition_terms(trans)
    ws = scaled_workspace(_max_len(seq_ptr[first:stop + 1]), L)
    with_edges = edge.shape[0] > 0
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        if b == a:
            continue
        log_z[s] = marginals_sequence(
            scores[a:b], tt, b - a, ws, node[a:b], edge[a:b] if with_edges else edge
        )


def forward_backward_batch(scores, trans, seq_ptr, with_edges, n_chunks):
    """log Z, node and edge marginals of every sequence from dense state scores,
    on ``n_chunks`` threads (:func:`~sklearn_crf._parallel.run_ranges`).

    Returns ``log_z`` (n_sequences,), ``node`` (n_tokens, L) and ``edge``
    (n_tokens, L, L) where ``edge[t, i, j] = p(y[t-1]=i, y[t]=j)`` for every
    token that is not first in its sequence (zeros otherwise); ``edge`` has
    zero length when ``with_edges`` is false. Without edges the work is done
    by :func:`forward_backward_blocks` (weights 1), the gradient's kernel,
    so that a first ``predict_marginals`` after a fit compiles nothing new.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    trans = np.ascontiguousarray(trans, dtype=np.float64)
    seq_ptr = np.ascontiguousarray(seq_ptr, dtype=np.int64)
    n_tokens, L = scores.shape
    n_seq = seq_ptr.shape[0] - 1
    log_z = np.zeros(n_seq)
    if with_edges:
        node = np.zeros((n_tokens, L))
        edge = np.zeros((n_tokens, L, L))
        run_ranges(n_chunks, n_seq, lambda first, stop: marginals_sequences(
            scores, trans, seq_ptr, first, stop, log_z, node, edge))
        return log_z, node, edge
    # node marginals only: the gradient's kernel, one block per sequence range
    node = scores.copy()
    n_blocks = min(n_seq, 4 * max(n_chunks, 1))
    block_ptr = np.linspace(0, n_seq, n_blocks + 1).astype(np.int64)
    max_len = int(np.max(np.diff(seq_ptr), initial=0))
    block_sums = np.zeros(n_blocks)
    block_outer = np.zeros((n_blocks, 4, L, L))
    block_edge = np.zeros((n_blocks, L, L))
    run_ranges(n_chunks, n_blocks, lambda first, stop: forward_backward_blocks(
        node, trans, seq_ptr, np.ones(n_seq), block_ptr, first, stop, max_len,
        log_z, block_sums, block_outer, block_edge))
    return log_z, node, np.zeros((0, L, L))


@njit(**_NJIT)
def viterbi_sequences(scores, trans, seq_ptr, first, stop, labels, best):
    """Best label paths (``labels``, int32 per token) and their scores
    (``best[s]``) of sequences ``first..stop-1``."""
    L = scores.shape[1]
    back = np.empty((_max_len(seq_ptr[first:stop + 1]), L), dtype=np.int32)
    for s in range(first, stop):
        a = seq_ptr[s]
        b = seq_ptr[s + 1]
        best[s] = viterbi_sequence(scores[a:b], trans, b - a, back, labels[a:b])


def viterbi_batch(scores, trans, seq_ptr, n_chunks):
    """Best label path of every sequence: int32 labels (n_tokens,) and path
    scores, on ``n_chunks`` threads."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    trans = np.ascontiguousarray(trans, dtype=np.float64)
    seq_ptr = np.ascontiguousarray(seq_ptr, dtype=np.int64)
    labels = np.zeros(scores.shape[0], dtype=np.int32)
    best = np.zeros(seq_ptr.shape[0] - 1)
    run_ranges(n_chunks, len(best), lambda first, stop: viterbi_sequences(
        scores, trans, seq_ptr, first, stop, labels, best))
    return labels, best


# --------------------------------------------------------------------------
# sparse state scores: straight from the parameter vector
# --------------------------------------------------------------------------


@njit(**_NJIT)
def state_scores_sparse(w, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, n_labels):
    """State scores of every token, (n_tokens, n_labels), from the parameter
    vector ``w`` (its first ``attr_ptr[-1]`` entries are the state weights)
    through the attribute → parameter lists: the cost is proportional to the
    tokens' entries and their parameters, not to the size of the model.

    For each label the products are added in the order of the token's entries,
    as in :func:`state_scores` (which also adds the zeros of pairs without a
    parameter), so both give the same numbers.
    """
    n_tokens = tok_ptr.shape[0] - 1
    out = np.zeros((n_tokens, n_labels))
    for t in range(n_tokens):
        row = out[t]
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = tok_val[k]
            for p in range(attr_ptr[a], attr_ptr[a + 1]):
                row[attr_label[p]] += v * w[p]
    return out


# --------------------------------------------------------------------------
# the gradient in two phases over fixed blocks (any thread count, same bits)
# --------------------------------------------------------------------------
#
# Phase 1 (:func:`forward_backward_blocks`) runs forward-backward over blocks
# of sequences; blocks depend only on the data, and each block writes only its
# own tokens' rows and its own slots. Phase 2 (:func:`gather_state_gradient`)
# sums the expected state counts of each attribute over its entries in token
# order through a by-attribute (CSC) index: each attribute is written by one
# call. :func:`transition_gradient` adds the blocks' (L, L) sums in block
# order. So the result does not depend on how blocks and attributes are shared
# among threads, and no thread holds an (attributes × labels) buffer of its own.


@njit(**_NJIT)
def attribute_index(tok_ptr, tok_attr, tok_val, n_attributes):
    """The entries by attribute (a counting sort, stable): ``ptr``
    (n_attributes + 1,) int64, ``tok`` (n_entries,) int32 and ``val``
    (n_entries,) float64, the entries of attribute ``a`` being
    ``ptr[a]:ptr[a + 1]`` in token order, ``tok`` their tokens and ``val``
    their values; ``val`` is empty when every value is 1."""
    n_entries = tok_attr.shape[0]
    ptr = np.zeros(n_attributes + 1, dtype=np.int64)
    all_ones = True
    for k in range(n_entries):
        ptr[tok_attr[k] + 1] += 1
        if tok_val[k] != 1.0:
            all_ones = False
    for a in range(n_attributes):
        ptr[a + 1] += ptr[a]
    fill = ptr[:-1].copy()
    tok = np.empty(n_entries, dtype=np.int32)
    val = np.empty(0 if all_ones else n_entries)
    for t in range(tok_ptr.shape[0] - 1):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            i = fill[a]
            tok[i] = t
            if not all_ones:
                val[i] = tok_val[k]
            fill[a] = i + 1
    return ptr, tok, val


@njit(**_NJIT)
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
    ``block_edge[b]`` (L, L) the weighted edge sums of
    :func:`expected_counts_sequence` (zeroed first). ``max_len`` is at least
    the longest sequence. Also what :func:`forward_backward_batch` runs for
    the node marginals alone (weights 1), so that one compiled kernel serves
    both.
    """
    L = trans.shape[0]
    tt = transition_terms(trans)
    raw = np.empty((max_len, L))
    ws = scaled_workspace(max_len, L)
    for b in range(first, stop):
        outer = block_outer[b]
        edge = block_edge[b]
        for i in range(L):
            for j in range(L):
                edge[i, j] = 0.0
                for r in range(4):
                    outer[r, i, j] = 0.0
        acc = 0.0
        for s in range(block_ptr[b], block_ptr[b + 1]):
            a = seq_ptr[s]
            e = seq_ptr[s + 1]
            n = e - a
            weight = seq_weight[s]
            seq_log_z[s] = 0.0
            if n == 0:
                continue
            node = scores_node[a:e]
            if weight == 0.0:
                for t in range(n):
                    for j in range(L):
                        node[t, j] = 0.0
                continue
            for t in range(n):
                for j in range(L):
                    raw[t, j] = node[t, j]
            log_z = expected_counts_sequence(raw, tt, n, ws, weight, node, edge, outer)
            seq_log_z[s] = log_z
            acc += weight * log_z
            if weight != 1.0:
                for t in range(n):
                    for j in range(L):
                        node[t, j] *= weight
        block_log_z[b] = acc


@njit(**_NJIT)
def gather_state_gradient(
    wnode, index_ptr, index_tok, index_val, attr_ptr, attr_label, first, stop, g_state,
):
    """Phase 2 of the gradient for attributes ``first..stop-1``: the expected
    count of each of their state parameters, ``g_state[p] = Σ_k val_k ·
    wnode[tok_k, label_p]`` over the attribute's entries ``k`` in token order
    (``index_ptr``/``index_tok`` from :func:`attribute_index`; ``index_val``
    their values, or empty when every value is 1)."""
    L = wnode.shape[1]
    acc = np.empty(L)
    ones = index_val.shape[0] == 0
    for a in range(first, stop):
        p0 = attr_ptr[a]
        p1 = attr_ptr[a + 1]
        if p1 == p0:
            continue
        k0 = index_ptr[a]
        k1 = index_ptr[a + 1]
        if 2 * (p1 - p0) >= L:  # most labels: whole rows, vectorized
            for j in range(L):
                acc[j] = 0.0
            for k in range(k0, k1):
                row = wnode[index_tok[k]]
                if ones:
                    for j in range(L):
                        acc[j] += row[j]
                else:
                    v = index_val[k]
                    for j in range(L):
                        acc[j] += v * row[j]
            for p in range(p0, p1):
                g_state[p] = acc[attr_label[p]]
        else:  # a few labels: only theirs
            for p in range(p0, p1):
                acc[p - p0] = 0.0
            for k in range(k0, k1):
                row = wnode[index_tok[k]]
                if ones:
                    for p in range(p0, p1):
                        acc[p - p0] += row[attr_label[p]]
                else:
                    v = index_val[k]
                    for p in range(p0, p1):
                        acc[p - p0] += v * row[attr_label[p]]
            for p in range(p0, p1):
                g_state[p] = acc[p - p0]


@njit(**_NJIT)
def transition_gradient(trans, block_outer, block_edge):
    """Expected transition counts (L, L) from the blocks' edge sums of
    :func:`forward_backward_blocks`, added in block order."""
    L = trans.shape[0]
    exp_trans = transition_terms(trans).exp_trans
    out = np.empty((L, L))
    for i in range(L):
        for j in range(L):
            o0 = 0.0
            o1 = 0.0
            o2 = 0.0
            o3 = 0.0
            edge = 0.0
            for b in range(block_outer.shape[0]):
                o0 += block_outer[b, 0, i, j]
                o1 += block_outer[b, 1, i, j]
                o2 += block_outer[b, 2, i, j]
                o3 += block_outer[b, 3, i, j]
                edge += block_edge[b, i, j]
            out[i, j] = edge + ((o0 + o1) + (o2 + o3)) * exp_trans[i, j]
    return out


@njit(**_NJIT)
def split_zero_entries(tok_ptr, entries, slow_pos, slow_val):
    """The arrays of an :class:`~sklearn_crf._vectorizer.EncodedCorpus` from
    entries where a zero-valued entry of attribute ``a`` is ``~a`` (negative)
    and every value is 1 except ``slow_val`` at the increasing positions
    ``slow_pos``: returns ``tok_ptr``, ``tok_attr``, ``tok_val`` of the
    non-zero entries and ``zero_tok``, ``zero_attr`` of the others (without
    zero entries, ``tok_ptr`` and ``tok_attr`` are the arrays given)."""
    n_tokens = tok_ptr.shape[0] - 1
    n = entries.shape[0]
    n_zero = 0
    for k in range(n):
        if entries[k] < 0:
            n_zero += 1
    tok_val = np.empty(n - n_zero)
    zero_tok = np.empty(n_zero, dtype=np.int64)
    zero_attr = np.empty(n_zero, dtype=np.int32)
    if n_zero == 0:
        for k in range(n):
            tok_val[k] = 1.0
        for i in range(slow_pos.shape[0]):
            tok_val[slow_pos[i]] = slow_val[i]
        return tok_ptr, entries, tok_val, zero_tok, zero_attr
    new_ptr = np.empty(n_tokens + 1, dtype=np.int64)
    tok_attr = np.empty(n - n_zero, dtype=np.int32)
    i = 0
    z = 0
    slow = 0
    new_ptr[0] = 0
    for t in range(n_tokens):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = entries[k]
            if a < 0:
                zero_tok[z] = t
                zero_attr[z] = ~a
                z += 1
                continue
            tok_attr[i] = a
            if slow < slow_pos.shape[0] and slow_pos[slow] == k:
                tok_val[i] = slow_val[slow]
                slow += 1
            else:
                tok_val[i] = 1.0
            i += 1
        new_ptr[t + 1] = i
    return new_ptr, tok_attr, tok_val, zero_tok, zero_attr


@njit(**_NJIT)
def observed_counts(
    tok_ptr, tok_attr, tok_val, attr_ptr, attr_label, labels, seq_ptr, seq_weight,
    n_state, n_labels,
):
    """Weighted observed counts of state and transition features on the gold paths.

    A token attribute whose (attribute, gold label) pair has no parameter (pruned
    by ``min_freq``) contributes nothing.
    """
    obs_state = np.zeros(n_state)
    obs_trans = np.zeros((n_labels, n_labels))
    n_seq = seq_ptr.shape[0] - 1
    for s in range(n_seq):
        weight = seq_weight[s]
        for tok in range(seq_ptr[s], seq_ptr[s + 1]):
            y = labels[tok]
            for k in range(tok_ptr[tok], tok_ptr[tok + 1]):
                at = tok_attr[k]
                for p in range(attr_ptr[at], attr_ptr[at + 1]):
                    if attr_label[p] == y:
                        obs_state[p] += weight * tok_val[k]
                        break
            if tok > seq_ptr[s]:
                obs_trans[labels[tok - 1], y] += weight
    return obs_state, obs_trans


@njit(**_NJIT)
def pair_frequencies(tok_ptr, tok_attr, tok_val, labels, n_attributes, n_labels):
    """Sum of values and occurrence flags of every (attribute, label) pair.

    Returns ``freq`` (n_attributes, L) float64 and ``seen`` (n_attributes, L) bool
    over the tokens' gold labels.
    """
    freq = np.zeros((n_attributes, n_labels))
    seen = np.zeros((n_attributes, n_labels), dtype=np.bool_)
    for tok in range(tok_ptr.shape[0] - 1):
        y = labels[tok]
        for k in range(tok_ptr[tok], tok_ptr[tok + 1]):
            a = tok_attr[k]
            freq[a, y] += tok_val[k]
            seen[a, y] = True
    return freq, seen
