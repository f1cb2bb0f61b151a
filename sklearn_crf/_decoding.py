"""Decoders beyond the single best path: n-best, constrained, posterior; path
and span probabilities.

Constraints of every kind are applied as -inf scores (:func:`apply_constraints`):
a forbidden transition is -inf in the transition matrix, a label a token may
not take is a -inf state score, and the first and last label rules are -inf
state scores of the first and last tokens. Max-plus Viterbi and log-space
forward-backward are exact with -inf scores (``-inf + x = -inf`` and
``exp(-inf) = 0``); the kernels here work in log space throughout, so a
forbidden path has probability exactly 0 and the others are renormalized over
the allowed paths.

Ragged data is CSR-style as in :mod:`sklearn_crf._kernels`: dense state scores
(n_tokens, L) and sequence offsets ``seq_ptr`` (n_sequences + 1).
"""

from typing import NamedTuple, Optional

import numpy as np
from numba import njit, prange

#: numba options, as in :mod:`sklearn_crf._kernels` (kept here so that this
#: module depends on no private name of the kernels): cached on disk, no GIL,
#: only FMA contraction as fast-math, numpy's error model
_NJIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")


class DecodingProblem(NamedTuple):
    """Scores to decode, with every constraint already applied as -inf.

    Attributes
    ----------
    scores : ndarray of shape (n_tokens, n_labels)
        State scores; -inf where a token may not take a label.
    trans : ndarray of shape (n_labels, n_labels)
        Transition weights; -inf where a transition is forbidden.
    seq_ptr : ndarray of shape (n_sequences + 1,)
        Sequence offsets into the tokens.
    allowed_trans : ndarray of bool, shape (n_labels, n_labels), or None
        The allowed transitions when transitions are constrained (the posterior
        decoder needs them), else None.
    constrained : bool
        Whether any -inf was applied (the fast unconstrained kernels then do
        not apply).
    """

    scores: np.ndarray
    trans: np.ndarray
    seq_ptr: np.ndarray
    allowed_trans: Optional[np.ndarray]
    constrained: bool


class NBest(NamedTuple):
    """The n best label paths of every sequence.

    Attributes
    ----------
    paths : ndarray of int32, shape (n_tokens * n,)
        Label codes; path ``r`` of sequence ``s`` (length ``T_s``) is
        ``paths[seq_ptr[s] * n + r * T_s : seq_ptr[s] * n + (r + 1) * T_s]``.
    scores : ndarray of shape (n_sequences, n)
        The path scores (-inf past ``counts[s]``).
    counts : ndarray of int64, shape (n_sequences,)
        Number of paths found (at most ``n``; fewer when fewer paths have a
        finite score).
    """

    paths: np.ndarray
    scores: np.ndarray
    counts: np.ndarray


class LogForwardBackward(NamedTuple):
    """Normalized log-space forward-backward quantities of every sequence.

    With ``c_t`` the per-position normalizers, ``log_alpha[t] = log α_t -
    Σ_{k<=t} log c_k`` and ``log_beta[t] = log β_t - Σ_{k>t} log c_k``, so
    that ``exp(log_alpha + log_beta)`` are the node marginals and both stay
    O(1) however long the sequence and large the weights.

    Attributes
    ----------
    log_z : ndarray of shape (n_sequences,)
        log Z of each sequence (-inf when no path has a finite score).
    log_alpha, log_beta : ndarray of shape (n_tokens, n_labels)
    log_c : ndarray of shape (n_tokens,)
        ``log c_t``; ``log_z[s]`` is their sum over the tokens of ``s``.
    """

    log_z: np.ndarray
    log_alpha: np.ndarray
    log_beta: np.ndarray
    log_c: np.ndarray


@njit(**_NJIT)
def _max_len(seq_ptr):
    m = 0
    for s in range(seq_ptr.shape[0] - 1):
        m = max(m, seq_ptr[s + 1] - seq_ptr[s])
    return m


@njit(**_NJIT)
def _chunk_bounds(seq_ptr, n_chunks):
    """Split the sequences into ``n_chunks`` contiguous chunks of about equal
    token counts (one per thread)."""
    n_seq = seq_ptr.shape[0] - 1
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    bounds[0] = 0
    total = seq_ptr[n_seq] - seq_ptr[0]
    s = 0
    for c in range(1, n_chunks):
        target = seq_ptr[0] + (total * c) // n_chunks
        while s < n_seq and seq_ptr[s] < target:
            s += 1
        bounds[c] = s
    bounds[n_chunks] = n_seq
    return bounds


# --------------------------------------------------------------------------
# constraints as -inf
# --------------------------------------------------------------------------


def apply_constraints(scores, trans, seq_ptr, constraints=None, token_mask=None):
    """A :class:`DecodingProblem` with the constraints applied as -inf.

    ``constraints`` is a :class:`~sklearn_crf._constraints.TransitionConstraints`
    or None; ``token_mask`` a boolean (n_tokens, L) mask of allowed labels or
    None. The input arrays are not modified.
    """
    seq_ptr = np.asarray(seq_ptr, dtype=np.int64)
    if constraints is None and token_mask is None:
        return DecodingProblem(scores, trans, seq_ptr, None, False)
    scores = np.array(scores, dtype=np.float64)
    trans = np.array(trans, dtype=np.float64)
    allowed_trans = None
    if token_mask is not None:
        scores[~token_mask] = -np.inf
    if constraints is not None:
        allowed_trans = constraints.transitions
        trans[~allowed_trans] = -np.inf
        lengths = np.diff(seq_ptr)
        first = seq_ptr[:-1][lengths > 0]
        last = seq_ptr[1:][lengths > 0] - 1
        scores[np.ix_(first, ~constraints.start)] = -np.inf
        scores[np.ix_(last, ~constraints.end)] = -np.inf
    return DecodingProblem(scores, trans, seq_ptr, allowed_trans, True)


@njit(**_NJIT)
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


def check_feasible(problem, what="the constraints"):
    """Raise a ValueError naming the first sequence (and token) without any path
    of finite score."""
    dead = first_dead_tokens(problem.scores, problem.trans, problem.seq_ptr)
    bad = np.flatnonzero(dead >= 0)
    if len(bad):
        s = int(bad[0])
        raise ValueError(
            f"sequence {s} has no label path allowed by {what}: no label is "
            f"possible at token {int(dead[s])} given the labels allowed there and "
            "at the tokens before it"
        )


# --------------------------------------------------------------------------
# n-best (list Viterbi)
# --------------------------------------------------------------------------


@njit(**_NJIT)
def nbest_viterbi_sequence(scores, trans, n, K, delta, back_label, back_rank, count,
                           heads, paths, path_scores):
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

    Fills ``paths[r * n : (r + 1) * n]`` and ``path_scores[r]`` for each rank
    ``r`` found; returns the number of paths found.
    """
    L = scores.shape[1]
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


@njit(parallel=True, **_NJIT)
def nbest_viterbi_batch(scores, trans, seq_ptr, K, n_chunks):
    """The ``K`` best paths of every sequence: ``(paths, path_scores, counts)``
    laid out as described in :class:`NBest`."""
    L = scores.shape[1]
    n_seq = seq_ptr.shape[0] - 1
    paths = np.zeros(scores.shape[0] * K, dtype=np.int32)
    path_scores = np.full((n_seq, K), -np.inf)
    counts = np.zeros(n_seq, dtype=np.int64)
    max_len = max(_max_len(seq_ptr), 1)
    bounds = _chunk_bounds(seq_ptr, n_chunks)
    for c in prange(n_chunks):
        delta = np.empty((max_len, L, K))
        back_label = np.empty((max_len, L, K), dtype=np.int32)
        back_rank = np.empty((max_len, L, K), dtype=np.int32)
        count = np.empty((max_len, L), dtype=np.int32)
        heads = np.empty(L, dtype=np.int32)
        for s in range(bounds[c], bounds[c + 1]):
            a = seq_ptr[s]
            b = seq_ptr[s + 1]
            counts[s] = nbest_viterbi_sequence(
                scores[a:b], trans, b - a, K, delta, back_label, back_rank, count,
                heads, paths[a * K:b * K], path_scores[s],
            )
    return paths, path_scores, counts


def nbest(problem, K, n_chunks):
    """:class:`NBest` of a :class:`DecodingProblem`."""
    return NBest(*nbest_viterbi_batch(
        problem.scores, problem.trans, problem.seq_ptr, K, n_chunks
    ))


# --------------------------------------------------------------------------
# log-space forward-backward, path and span probabilities
# --------------------------------------------------------------------------


@njit(**_NJIT)
def _logsumexp(x):
    m = -np.inf
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    if m == -np.inf:
        return -np.inf
    acc = 0.0
    for i in range(x.shape[0]):
        acc += np.exp(x[i] - m)
    return m + np.log(acc)


@njit(**_NJIT)
def forward_backward_log_sequence(scores, trans, n, la, lb, log_c):
    """Normalized log-space forward-backward of one sequence (see
    :class:`LogForwardBackward`); fills ``la``, ``lb``, ``log_c`` (>= n rows)
    and returns log Z (-inf when no path has a finite score; the buffers are
    then -inf too)."""
    L = scores.shape[1]
    if n == 0:
        return 0.0
    tmp = np.empty(L)
    for j in range(L):
        la[0, j] = scores[0, j]
    log_c[0] = _logsumexp(la[0])
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
            la[t, j] = scores[t, j] + _logsumexp(tmp)
        log_c[t] = _logsumexp(la[t])
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
            lb[t, i] = _logsumexp(tmp) - log_c[t + 1]
    return log_z


@njit(parallel=True, **_NJIT)
def forward_backward_log_batch(scores, trans, seq_ptr, n_chunks):
    """``(log_z, log_alpha, log_beta, log_c)`` of every sequence, as described
    in :class:`LogForwardBackward`."""
    L = scores.shape[1]
    n_seq = seq_ptr.shape[0] - 1
    n_tok = scores.shape[0]
    log_z = np.zeros(n_seq)
    la = np.empty((n_tok, L))
    lb = np.empty((n_tok, L))
    log_c = np.empty(n_tok)
    bounds = _chunk_bounds(seq_ptr, n_chunks)
    for c in prange(n_chunks):
        for s in range(bounds[c], bounds[c + 1]):
            a = seq_ptr[s]
            b = seq_ptr[s + 1]
            log_z[s] = forward_backward_log_sequence(
                scores[a:b], trans, b - a, la[a:b], lb[a:b], log_c[a:b]
            )
    return log_z, la, lb, log_c


def forward_backward_log(problem, n_chunks):
    """:class:`LogForwardBackward` of a :class:`DecodingProblem`."""
    return LogForwardBackward(*forward_backward_log_batch(
        problem.scores, problem.trans, problem.seq_ptr, n_chunks
    ))


@njit(parallel=True, **_NJIT)
def span_log_probabilities(scores, trans, log_alpha, log_beta, log_c, first, length,
                           code_ptr, codes):
    """log p(y[a .. a+m-1] = the given labels | x) of each span.

    Span ``k`` covers the tokens ``first[k] .. first[k] + length[k] - 1``
    (global token indices, within one sequence) with the labels
    ``codes[code_ptr[k] : code_ptr[k] + length[k]]``. With the normalized
    quantities of :class:`LogForwardBackward`, the probability is
    ``alpha[a, y_a] · Π_{t=a+1}^{b} exp(trans[y_{t-1}, y_t] + scores[t, y_t]) /
    c_t · beta[b, y_b]``: a sum of O(1) terms in log space, so it keeps its
    precision on long sequences with large weights (unlike ``score(y) - log
    Z``). A whole sequence as one span gives log p(y | x). -inf when the
    labels are not allowed; clipped at 0 against rounding.
    """
    n_spans = first.shape[0]
    out = np.empty(n_spans)
    for k in prange(n_spans):
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
    return out


def span_log_probs(problem, fb, first, length, code_ptr, codes):
    """:func:`span_log_probabilities` of spans of a :class:`DecodingProblem`."""
    return span_log_probabilities(
        problem.scores, problem.trans, fb.log_alpha, fb.log_beta, fb.log_c,
        np.asarray(first, dtype=np.int64), np.asarray(length, dtype=np.int64),
        np.asarray(code_ptr, dtype=np.int64), np.asarray(codes, dtype=np.int32),
    )


def nbest_log_probabilities(problem, fb, best):
    """log p(path | x) of every path of an :class:`NBest`, sequence by
    sequence and best first (``best.counts[s]`` values for sequence ``s``)."""
    seq_ptr = problem.seq_ptr
    K = best.scores.shape[1]
    lengths = np.diff(seq_ptr)
    seq = np.repeat(np.arange(len(lengths)), best.counts)
    rank = np.arange(len(seq)) - np.repeat(np.cumsum(best.counts) - best.counts, best.counts)
    return span_log_probs(
        problem, fb, seq_ptr[seq], lengths[seq],
        seq_ptr[seq] * K + rank * lengths[seq], best.paths,
    )


def posterior_problem(problem, node):
    """The problem whose best path is the posterior decoding: state scores the
    node marginals ``node`` (-inf where a label is not allowed), transitions 0
    where allowed and -inf where forbidden. Its best path maximizes the
    expected number of correct labels among the allowed paths; without
    transition constraints that is the most probable label of each token."""
    scores = np.array(node, dtype=np.float64)
    scores[np.isneginf(problem.scores)] = -np.inf
    L = scores.shape[1]
    trans = np.zeros((L, L))
    if problem.allowed_trans is not None:
        trans[~problem.allowed_trans] = -np.inf
    return DecodingProblem(scores, trans, problem.seq_ptr, problem.allowed_trans, True)


# --------------------------------------------------------------------------
# constrained training: sparse state scores, expected counts under the
# constraints, and their scatter onto the parameter vector
# --------------------------------------------------------------------------


class AttributeOccurrences(NamedTuple):
    """The token-attribute matrix of a corpus by attribute (CSC): where each
    attribute occurs, so that per-parameter sums need no atomic scatter.

    Attributes
    ----------
    occ_ptr : ndarray of int64, shape (n_attributes + 1,)
        Offsets: the occurrences of attribute ``a`` are
        ``occ_ptr[a] : occ_ptr[a + 1]``.
    occ_tok : ndarray of int64, shape (n_nonzeros,)
        Token index of each occurrence, increasing within an attribute.
    occ_val : ndarray of float64, shape (n_nonzeros,)
        The attribute's value at that token.
    """

    occ_ptr: np.ndarray
    occ_tok: np.ndarray
    occ_val: np.ndarray


def attribute_occurrences(tok_ptr, tok_attr, tok_val, n_attributes):
    """:class:`AttributeOccurrences` of a CSR token-attribute matrix."""
    tok_ptr = np.asarray(tok_ptr, dtype=np.int64)
    order = np.argsort(tok_attr, kind="stable")
    tokens = np.repeat(np.arange(len(tok_ptr) - 1, dtype=np.int64), np.diff(tok_ptr))
    occ_ptr = np.zeros(n_attributes + 1, dtype=np.int64)
    np.cumsum(np.bincount(tok_attr, minlength=n_attributes), out=occ_ptr[1:])
    return AttributeOccurrences(
        occ_ptr, tokens[order], np.ascontiguousarray(tok_val[order], dtype=np.float64)
    )


@njit(parallel=True, **_NJIT)
def sparse_state_scores(w, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, n_labels):
    """State scores (n_tokens, n_labels) straight from the parameter vector
    ``w`` (state weights first, CSR ``attr_ptr`` / ``attr_label``): each token
    attribute adds its value times the weight of each (attribute, label)
    parameter it has; labels without a parameter get nothing."""
    n_tok = tok_ptr.shape[0] - 1
    out = np.zeros((n_tok, n_labels))
    for t in prange(n_tok):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = tok_val[k]
            for p in range(attr_ptr[a], attr_ptr[a + 1]):
                out[t, attr_label[p]] += v * w[p]
    return out


@njit(parallel=True, **_NJIT)
def masked_expected_counts(scores, trans, seq_ptr, seq_weight, n_chunks):
    """log Z and the weighted node and edge marginals under -inf constraints.

    ``scores`` and ``trans`` carry the constraints as -inf (see
    :func:`apply_constraints`), so the normalized log-space forward-backward
    (:func:`forward_backward_log_sequence`) sums over the allowed paths only.
    Returns ``(log_z, node, edge)``: ``log_z`` (n_sequences,) as in
    :class:`LogForwardBackward`; ``node[t, j] = v_s p(y_t = j | x, allowed)``
    (n_tokens, L); ``edge[i, j] = Σ_s v_s Σ_t p(y_{t-1} = i, y_t = j | x,
    allowed)`` (L, L), where ``v_s = seq_weight[s]``. Each edge probability
    is ``exp(log_alpha[t-1, i] + trans[i, j] + scores[t, j] + log_beta[t, j] -
    log_c[t])``, a sum of O(1) terms. A sequence without an allowed path has
    log Z -inf and zero marginals. The sequences are split into ``n_chunks``
    chunks summed in chunk order: the result depends on ``n_chunks``, not on
    thread scheduling.
    """
    L = scores.shape[1]
    n_seq = seq_ptr.shape[0] - 1
    log_z = np.zeros(n_seq)
    node = np.zeros((scores.shape[0], L))
    edge_chunks = np.zeros((n_chunks, L, L))
    max_len = max(_max_len(seq_ptr), 1)
    bounds = _chunk_bounds(seq_ptr, n_chunks)
    for c in prange(n_chunks):
        la = np.empty((max_len, L))
        lb = np.empty((max_len, L))
        log_c = np.empty(max_len)
        right = np.empty(L)
        edge = edge_chunks[c]
        for s in range(bounds[c], bounds[c + 1]):
            a = seq_ptr[s]
            b = seq_ptr[s + 1]
            n = b - a
            if n == 0:
                continue
            lz = forward_backward_log_sequence(scores[a:b], trans, n, la, lb, log_c)
            log_z[s] = lz
            if lz == -np.inf:
                continue
            v = seq_weight[s]
            for t in range(n):
                for j in range(L):
                    node[a + t, j] = v * np.exp(la[t, j] + lb[t, j])
            for t in range(1, n):
                for j in range(L):
                    right[j] = scores[a + t, j] + lb[t, j] - log_c[t]
                for i in range(L):
                    left = la[t - 1, i]
                    if left == -np.inf:
                        continue
                    for j in range(L):
                        x = left + trans[i, j] + right[j]
                        if x > -np.inf:
                            edge[i, j] += v * np.exp(x)
    total = np.zeros((L, L))
    for c in range(n_chunks):
        total += edge_chunks[c]
    return log_z, node, total


@njit(parallel=True, **_NJIT)
def scatter_state_counts(node, attr_ptr, attr_label, occ_ptr, occ_tok, occ_val):
    """Per state parameter ``p`` of attribute ``a`` and label ``y``:
    ``Σ_{occurrences (t, v) of a} v · node[t, y]`` (n_state,). With ``node``
    the (weighted) marginals these are the expected feature counts; with a
    weighted one-hot of the gold labels, the observed counts. Parallel over
    attributes (see :class:`AttributeOccurrences`), each parameter written by
    one thread in a fixed order."""
    n_attr = attr_ptr.shape[0] - 1
    out = np.zeros(attr_ptr[n_attr])
    for a in prange(n_attr):
        p0 = attr_ptr[a]
        p1 = attr_ptr[a + 1]
        if p0 == p1:
            continue
        for k in range(occ_ptr[a], occ_ptr[a + 1]):
            t = occ_tok[k]
            v = occ_val[k]
            for p in range(p0, p1):
                out[p] += v * node[t, attr_label[p]]
    return out
