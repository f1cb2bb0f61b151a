"""CRFsuite's online training algorithms: l2sgd, averaged perceptron, passive-aggressive, AROW.

Each algorithm follows CRFsuite's source (``lib/crf/src/train_l2sgd.c``,
``train_averaged_perceptron.c``, ``train_passive_aggressive.c``,
``train_arow.c`` and the encoder ``crf1d_encode.c``): the same updates, the
same defaults, the same stopping tests, the same averaging and the same
instance order. CRFsuite shuffles the instances at each epoch with the C
library's ``rand()``, which it never seeds; :func:`shuffle_crfsuite` replays
glibc's ``rand()`` from its initial seed 1, so a fit visits the sequences in
the order CRFsuite does in a fresh process on Linux. Ties in Viterbi go to the
first label in CRFsuite's order (the order of first appearance in the training
labels), so the drivers renumber the labels that way internally.

The algorithms are sequential: each instance is decoded with the weights left
by the previous one, so an epoch runs on one thread (as in CRFsuite). The
kernels work on one sequence at a time over the parameter vector in
:class:`~sklearn_crf._model.layout.ParameterLayout` order and touch only the
parameters of that sequence's attributes (sparse updates; l2sgd keeps the L2
decay as one lazy scale factor, as CRFsuite does).

Dense token features (a corpus with ``n_dense > 0``) are given to these
algorithms as valued attributes: dimension ``j`` is one more attribute of
every token, with the token's value, carrying a weight for every label (what
the same values as ``{"v<j>": value}`` dicts would be), so every update is
CRFsuite's; :class:`_Problem` builds those entries (12 bytes per token and
dimension) and puts the weights back in the layout's order at the end.

Ragged data is CSR-style as in :mod:`sklearn_crf._engine.scores`: ``tok_ptr``,
``tok_attr``, ``tok_val`` (tokens → attributes), ``seq_ptr`` (sequences →
tokens), ``attr_ptr`` / ``attr_label`` (attributes → state parameters), and
``trans_index`` (L, L): the parameter index of each transition, -1 where it
has none.
"""

import logging
import math
import time
import warnings

from typing import NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._engine import (
    ViterbiWorkspace,
    add_path_features_exact,
    forward_backward_scaled_crfsuite,
    list_viterbi,
    path_score,
    state_scores_sparse_range_exact,
    viterbi_workspace,
)
from .._engine.config import exact_kernel
from .optimize import SolverResult, caller_stacklevel

logger = logging.getLogger("sklearn_crf")

# --------------------------------------------------------------------------
# glibc rand(): CRFsuite's instance order
# --------------------------------------------------------------------------


@exact_kernel
def glibc_rand_state(seed):
    """State of glibc's ``rand()`` after ``srand(seed)`` (TYPE_3 additive generator).

    Entries 0..30 are the table, 31 and 32 the front and rear positions.
    """
    state = np.zeros(33, dtype=np.int64)
    if seed == 0:
        seed = 1
    state[0] = seed
    for i in range(1, 31):
        word = state[i - 1]
        hi = word // 127773
        lo = word % 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        state[i] = word
    state[31] = 3
    state[32] = 0
    for _ in range(310):
        glibc_rand(state)
    return state


@exact_kernel
def glibc_rand(state):
    """Next ``rand()`` of glibc from ``state`` (updated in place), in [0, 2**31)."""
    f = state[31]
    r = state[32]
    state[f] = (state[f] + state[r]) & 0xFFFFFFFF
    out = state[f] >> 1
    state[31] = (f + 1) % 31
    state[32] = (r + 1) % 31
    return out


@exact_kernel
def shuffle_crfsuite(perm, rng):
    """CRFsuite's ``dataset_shuffle``: swap each position with ``rand() % n``."""
    n = perm.shape[0]
    for i in range(n):
        j = glibc_rand(rng) % n
        tmp = perm[j]
        perm[j] = perm[i]
        perm[i] = tmp


# --------------------------------------------------------------------------
# per-sequence kernels
# --------------------------------------------------------------------------


@exact_kernel
def transition_scores(w, scale, trans_index, out):
    """Dense (L, L) transition scores ``scale * w`` (0 where there is no parameter):
    :meth:`~sklearn_crf._model.layout.ParameterLayout.transition_matrix` through
    ``trans_index``, in a kernel for the loops over instances."""
    L = out.shape[0]
    for i in range(L):
        for j in range(L):
            q = trans_index[i, j]
            if q < 0:
                out[i, j] = 0.0
            elif scale != 1.0:
                out[i, j] = w[q] * scale
            else:
                out[i, j] = w[q]


class OnlineArrays(NamedTuple):
    """The corpus and layout of one online fit, in CRFsuite's label order.

    Attributes
    ----------
    labels : ndarray of int32, shape (n_tokens,)
        Gold label of each token (internal numbering).
    seq_weight : ndarray of float64, shape (n_sequences,)
    tok_ptr, tok_attr, tok_val, seq_ptr : ndarray
        The corpus, CSR-style (see :mod:`sklearn_crf._engine.scores`).
    attr_ptr : ndarray of int64, shape (n_attributes + 1,)
    attr_label : ndarray of int32, shape (n_state,)
        The state parameters of each attribute (internal label numbering).
    trans_index : ndarray of int64, shape (L, L)
        The parameter index of each transition, -1 where it has none.
    """

    labels: np.ndarray
    seq_weight: np.ndarray
    tok_ptr: np.ndarray
    tok_attr: np.ndarray
    tok_val: np.ndarray
    seq_ptr: np.ndarray
    attr_ptr: np.ndarray
    attr_label: np.ndarray
    trans_index: np.ndarray


class DecodeBuffers(NamedTuple):
    """Scratch of the score-and-decode step of the perceptron-style epochs.

    Attributes
    ----------
    trans : ndarray of shape (L, L)
        Transition scores under the current weights.
    scores : ndarray of shape (max_len, L)
        State scores of the current sequence.
    viterbi : ViterbiWorkspace
        Buffers of :func:`~sklearn_crf._engine.viterbi.list_viterbi` (K = 1).
    path : ndarray of int32, shape (max_len,)
        The best path of the current sequence.
    path_score : ndarray of shape (1,)
        Its score.
    """

    trans: np.ndarray
    scores: np.ndarray
    viterbi: ViterbiWorkspace
    path: np.ndarray
    path_score: np.ndarray


class MarginBuffers(NamedTuple):
    """Scratch of passive-aggressive and AROW: the sparse difference vector.

    Attributes
    ----------
    delta : ndarray of shape (n_params,)
        ``F(x, y) - F(x, ŷ)`` (times a coefficient), zero outside ``actives``.
    actives : ndarray of int64
        Indices touched by the two paths.
    used : ndarray of bool, shape (n_params,)
        Scratch of :func:`unique_actives` (all False between calls).
    """

    delta: np.ndarray
    actives: np.ndarray
    used: np.ndarray


class SGDBuffers(NamedTuple):
    """Scratch of the l2sgd epoch: transition and state scores and the buffers
    of :func:`~sklearn_crf._engine.forward_backward.forward_backward_scaled_crfsuite`
    (``exp_state``, ``alpha``, ``beta``, ``node`` (max_len, L), ``exp_trans``,
    ``edge_sum`` (L, L), ``scale`` (max_len,))."""

    trans: np.ndarray
    scores: np.ndarray
    exp_state: np.ndarray
    exp_trans: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    scale: np.ndarray
    node: np.ndarray
    edge_sum: np.ndarray


@exact_kernel
def add_path(vec, coef, path, start, n, arrays, actives, n_active):
    """:func:`~sklearn_crf._engine.scores.add_path_features` (CRFsuite's
    arithmetic) with the :class:`OnlineArrays` ``arrays``."""
    return add_path_features_exact(
        vec, coef, path, start, n, arrays.tok_ptr, arrays.tok_attr, arrays.tok_val,
        arrays.attr_ptr, arrays.attr_label, arrays.trans_index, actives, n_active,
    )


@exact_kernel
def unique_actives(actives, n_active, used):
    """Drop repeated indices from ``actives[:n_active]``, keeping first
    occurrences; returns the count."""
    m = 0
    for i in range(n_active):
        k = actives[i]
        if not used[k]:
            actives[m] = k
            m += 1
            used[k] = True
    for i in range(m):
        used[actives[i]] = False
    return m


@exact_kernel
def n_mismatches(labels, start, path, n):
    d = 0
    for t in range(n):
        if labels[start + t] != path[t]:
            d += 1
    return d


# --------------------------------------------------------------------------
# epochs
# --------------------------------------------------------------------------


@exact_kernel
def viterbi_under_weights(w, start, n, arrays, buffers):
    """Score sequence tokens ``start .. start + n`` under the weights ``w`` and
    decode it (the first maximum on ties, CRFsuite's rule) into
    ``buffers.path``; returns the best path's score. The first step of every
    perceptron-style epoch; ``buffers`` is a :class:`DecodeBuffers`."""
    transition_scores(w, 1.0, arrays.trans_index, buffers.trans)
    state_scores_sparse_range_exact(
        w, 1.0, arrays.attr_ptr, arrays.attr_label, arrays.tok_ptr, arrays.tok_attr,
        arrays.tok_val, start, start + n, buffers.scores,
    )
    list_viterbi(buffers.scores, buffers.trans, n, 1, buffers.viterbi, buffers.path,
                 buffers.path_score)
    return buffers.path_score[0]


@exact_kernel
def perceptron_epoch(w, ws, c, order, arrays, buffers):
    """One epoch of CRFsuite's averaged perceptron over ``order``; returns (loss, c).

    On a mistake: ``w += weight·(F(x, y) - F(x, ŷ))`` and ``ws += c·weight·(...)``
    where ``c`` counts the instances seen (from 1); the averaged weights are
    ``w - ws / c``. ``arrays`` is an :class:`OnlineArrays`, ``buffers`` a
    :class:`DecodeBuffers`.
    """
    labels, seq_weight, seq_ptr = arrays.labels, arrays.seq_weight, arrays.seq_ptr
    path = buffers.path
    empty = np.empty(0, dtype=np.int64)
    loss = 0.0
    for s in order:
        start = seq_ptr[s]
        n = seq_ptr[s + 1] - start
        if n > 0:
            viterbi_under_weights(w, start, n, arrays, buffers)
            d = n_mismatches(labels, start, path, n)
            if d > 0:
                wt = seq_weight[s]
                gold = labels[start : start + n]
                add_path(w, wt, gold, start, n, arrays, empty, 0)
                add_path(ws, c * wt, gold, start, n, arrays, empty, 0)
                add_path(w, -wt, path, start, n, arrays, empty, 0)
                add_path(ws, -c * wt, path, start, n, arrays, empty, 0)
                loss += d / n * wt
        c += 1
    return loss, c


@exact_kernel
def margin_delta(arrays, start, n, path, coef, margin):
    """Sparse ``delta = coef·(F(x, y) - F(x, ŷ))`` in the :class:`MarginBuffers`
    ``margin``: returns the number of distinct indices in ``margin.actives``."""
    gold = arrays.labels[start : start + n]
    m = add_path(margin.delta, coef, gold, start, n, arrays, margin.actives, 0)
    m = add_path(margin.delta, -coef, path, start, n, arrays, margin.actives, m)
    return unique_actives(margin.actives, m, margin.used)


@exact_kernel
def passive_aggressive_epoch(w, ws, u, order, pa_type, c, error_sensitive, arrays, buffers, margin):
    """One epoch of CRFsuite's passive-aggressive training; returns (summed cost, u).

    On a mistake with ``d`` wrong labels: cost = score(ŷ) - score(y) + (√d if
    ``error_sensitive`` else 1); ``tau`` = cost/‖Δ‖² (type 0), min(c,
    cost/‖Δ‖²) (type 1), cost/(‖Δ‖² + 1/(2c)) (type 2); ``w += tau·weight·Δ``,
    ``ws += tau·weight·u·Δ``. ``margin`` is a :class:`MarginBuffers`.
    """
    labels, seq_weight, seq_ptr = arrays.labels, arrays.seq_weight, arrays.seq_ptr
    path = buffers.path
    delta, actives = margin.delta, margin.actives
    loss = 0.0
    for s in order:
        start = seq_ptr[s]
        n = seq_ptr[s + 1] - start
        if n > 0:
            sv = viterbi_under_weights(w, start, n, arrays, buffers)
            d = n_mismatches(labels, start, path, n)
            if d > 0:
                sc = path_score(buffers.scores, buffers.trans, labels[start : start + n], n)
                if error_sensitive:
                    cost = sv - sc + math.sqrt(d)
                else:
                    cost = sv - sc + 1.0
                m = margin_delta(arrays, start, n, path, 1.0, margin)
                norm2 = 0.0
                for i in range(m):
                    norm2 += delta[actives[i]] * delta[actives[i]]
                if pa_type == 1:
                    tau = min(c, cost / norm2) if norm2 > 0 else c
                elif pa_type == 2:
                    tau = cost / (norm2 + 0.5 / c)
                else:
                    tau = cost / norm2 if norm2 > 0 else 0.0
                tau *= seq_weight[s]
                tauu = tau * u
                for i in range(m):
                    k = actives[i]
                    w[k] += tau * delta[k]
                    ws[k] += tauu * delta[k]
                    delta[k] = 0.0
                loss += cost * seq_weight[s]
        u += 1
    return loss, u


@exact_kernel
def arow_epoch(mean, cov, order, gamma, arrays, buffers, margin):
    """One epoch of CRFsuite's AROW; returns the summed cost.

    On a mistake with ``d`` wrong labels: Δ = weight·(F(x, y) - F(x, ŷ)), cost =
    score(ŷ) - score(y) + d, α = cost / (gamma + Σ Δ_k² cov_k),
    ``mean_k += α·cov_k·Δ_k``, ``cov_k = 1 / (1/cov_k + Δ_k²/gamma)``.
    """
    labels, seq_weight, seq_ptr = arrays.labels, arrays.seq_weight, arrays.seq_ptr
    path = buffers.path
    delta, actives = margin.delta, margin.actives
    loss = 0.0
    for s in order:
        start = seq_ptr[s]
        n = seq_ptr[s + 1] - start
        if n > 0:
            sv = viterbi_under_weights(mean, start, n, arrays, buffers)
            d = n_mismatches(labels, start, path, n)
            if d > 0:
                sc = path_score(buffers.scores, buffers.trans, labels[start : start + n], n)
                cost = sv - sc + d
                wt = seq_weight[s]
                m = margin_delta(arrays, start, n, path, wt, margin)
                frac = gamma
                for i in range(m):
                    k = actives[i]
                    frac += delta[k] * delta[k] * cov[k]
                alpha = cost / frac
                for i in range(m):
                    k = actives[i]
                    prod = delta[k] * delta[k]
                    mean[k] += alpha * cov[k] * delta[k]
                    cov[k] = 1.0 / ((1.0 / cov[k]) + prod / gamma)
                    delta[k] = 0.0
                loss += cost * wt
    return loss


@exact_kernel
def l2sgd_epoch(w, order, t, t0, lam, arrays, buffers):
    """One epoch of CRFsuite's SGD over ``order``; returns (summed loss, last loss, t, eta).

    Before instance number ``t`` (counted over all epochs): ``eta = 1 / (lam·(t0 +
    t))``, the L2 decay ``decay *= 1 - eta·lam`` and the gradient step
    ``w += (eta / decay)·weight·(F(x, y) - E[F])`` on the stored weights, whose
    true value is ``decay·w``; at the end ``w`` is multiplied by ``decay``. The
    losses are the weighted negative log-likelihoods before each step, without
    the L2 term. ``buffers`` is an :class:`SGDBuffers`.
    """
    labels, seq_weight, seq_ptr = arrays.labels, arrays.seq_weight, arrays.seq_ptr
    tok_ptr, tok_attr, tok_val = arrays.tok_ptr, arrays.tok_attr, arrays.tok_val
    attr_ptr, attr_label, trans_index = arrays.attr_ptr, arrays.attr_label, arrays.trans_index
    b = buffers
    scores, node, edge_sum = b.scores, b.node, b.edge_sum
    decay = 1.0
    sum_loss = 0.0
    loss = 0.0
    eta = 0.0
    L = trans_index.shape[0]
    no_actives = np.empty(0, dtype=np.int64)
    for s in order:
        start = seq_ptr[s]
        n = seq_ptr[s + 1] - start
        eta = 1.0 / (lam * (t0 + t))
        decay *= 1.0 - eta * lam
        gain = eta / decay
        if n > 0:
            transition_scores(w, decay, trans_index, b.trans)
            state_scores_sparse_range_exact(
                w, decay, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, start, start + n,
                scores,
            )
            log_z = forward_backward_scaled_crfsuite(
                scores, b.trans, n, b.exp_state, b.exp_trans, b.alpha, b.beta, b.scale, node,
                edge_sum,
            )
            gold = labels[start : start + n]
            wt = seq_weight[s]
            g = gain * wt
            add_path(w, g, gold, start, n, arrays, no_actives, 0)
            for tt in range(n):
                tok = start + tt
                for k in range(tok_ptr[tok], tok_ptr[tok + 1]):
                    a = tok_attr[k]
                    v = tok_val[k]
                    for p in range(attr_ptr[a], attr_ptr[a + 1]):
                        w[p] += node[tt, attr_label[p]] * v * -g
            for i in range(L):
                for j in range(L):
                    q = trans_index[i, j]
                    if q >= 0:
                        w[q] += edge_sum[i, j] * -g
            loss = (-path_score(scores, b.trans, gold, n) + log_z) * wt
        else:
            loss = 0.0
        sum_loss += loss
        t += 1.0
    for k in range(w.shape[0]):
        w[k] *= decay
    return sum_loss, loss, t, eta


# --------------------------------------------------------------------------
# drivers
# --------------------------------------------------------------------------


class _Problem:
    """The corpus in CRFsuite's label order and the scratch buffers of one fit."""

    def __init__(self, corpus, layout, labels, seq_weight):
        seq_ptr = np.ascontiguousarray(corpus.seq_ptr, dtype=np.int64)
        L = layout.n_labels
        # CRFsuite numbers labels in order of first appearance; Viterbi ties go
        # to the lowest number, so work in that numbering
        labels = np.asarray(labels)
        seen, first = np.unique(labels, return_index=True)
        rank = np.arange(L, dtype=np.int32)  # labels never seen keep the last numbers
        order = seen[np.argsort(first, kind="stable")]
        unseen = np.setdiff1d(np.arange(L), order)
        rank[np.concatenate([order, unseen]).astype(np.int64)] = np.arange(L, dtype=np.int32)
        self.rank = rank  # internal number of each label
        self.layout = layout
        tok_ptr, tok_attr, tok_val, attr_ptr, attr_label = _with_dense_attributes(
            corpus, layout
        )
        # internal order: state weights, the dense ones (as state weights), transitions:
        # the layout's transition index past the dense weights, in the internal numbers
        n_state = len(attr_label)
        index = layout.transition_index()
        trans_index = np.empty((L, L), dtype=np.int64)
        trans_index[np.ix_(rank, rank)] = np.where(index >= 0, index + (n_state - layout.n_state),
                                                   -1)
        self.arrays = OnlineArrays(
            labels=rank[labels].astype(np.int32),
            seq_weight=np.ascontiguousarray(seq_weight, dtype=np.float64),
            tok_ptr=tok_ptr,
            tok_attr=tok_attr,
            tok_val=tok_val,
            seq_ptr=seq_ptr,
            attr_ptr=attr_ptr,
            attr_label=rank[attr_label].astype(np.int32),
            trans_index=trans_index,
        )
        self.n_params = n_state + len(layout.trans_from)
        self.n_seq = len(seq_ptr) - 1
        lengths = np.diff(seq_ptr)
        self.max_len = max(int(lengths.max()) if len(lengths) else 0, 1)
        self.n_labels = L

    def layout_order(self, w):
        """The internal weights ``w`` in the layout's order (a new array):
        ``[state | transitions | dense]``."""
        layout = self.layout
        if not layout.n_dense:
            return w
        S, D = layout.n_state, layout.n_dense * layout.n_labels
        return np.concatenate([w[:S], w[S + D:], w[S:S + D]])

    def decode_buffers(self):
        """The :class:`DecodeBuffers` of the perceptron-style epochs."""
        T, L = self.max_len, self.n_labels
        return DecodeBuffers(
            trans=np.zeros((L, L)), scores=np.zeros((T, L)),
            viterbi=viterbi_workspace(T, L, 1), path=np.zeros(T, dtype=np.int32),
            path_score=np.zeros(1),
        )

    def margin_buffers(self):
        """The :class:`MarginBuffers` of passive-aggressive and AROW."""
        a = self.arrays
        per_seq = a.tok_ptr[a.seq_ptr[1:]] - a.tok_ptr[a.seq_ptr[:-1]]
        # a state feature per attribute entry (at most one label matches) and a
        # transition per token, for both paths
        cap = 2 * int((per_seq + np.diff(a.seq_ptr)).max(initial=0)) + 1
        return MarginBuffers(
            delta=np.zeros(self.n_params),
            actives=np.zeros(cap, dtype=np.int64),
            used=np.zeros(self.n_params, dtype=np.bool_),
        )

    def sgd_buffers(self):
        """The :class:`SGDBuffers` of the l2sgd epoch."""
        T, L = self.max_len, self.n_labels
        return SGDBuffers(
            trans=np.zeros((L, L)), scores=np.zeros((T, L)), exp_state=np.zeros((T, L)),
            exp_trans=np.zeros((L, L)), alpha=np.zeros((T, L)), beta=np.zeros((T, L)),
            scale=np.zeros(T), node=np.zeros((T, L)), edge_sum=np.zeros((L, L)),
        )


def _with_dense_attributes(corpus, layout):
    """``tok_ptr, tok_attr, tok_val, attr_ptr, attr_label`` of the corpus with
    each dense dimension ``j`` as attribute ``n_attributes + j`` (after the
    token's own entries, value the token's, zeros included) and a state
    weight for every (dimension, label) pair, dimension-major."""
    tok_ptr = np.ascontiguousarray(corpus.tok_ptr, dtype=np.int64)
    tok_attr = np.ascontiguousarray(corpus.tok_attr, dtype=np.int32)
    tok_val = np.ascontiguousarray(corpus.tok_val, dtype=np.float64)
    attr_ptr = np.ascontiguousarray(layout.attr_ptr, dtype=np.int64)
    attr_label = np.ascontiguousarray(layout.attr_label, dtype=np.int32)
    D = layout.n_dense
    if not D:
        return tok_ptr, tok_attr, tok_val, attr_ptr, attr_label
    n_tokens, A, L = corpus.n_tokens, len(attr_ptr) - 1, layout.n_labels
    counts = np.diff(tok_ptr) + D
    new_ptr = np.zeros(n_tokens + 1, dtype=np.int64)
    np.cumsum(counts, out=new_ptr[1:])
    own = np.ones(new_ptr[-1], dtype=bool)  # the token's own entries, then D dense ones
    dense_pos = (new_ptr[1:] - D)[:, None] + np.arange(D)
    own[dense_pos.ravel()] = False
    new_attr = np.empty(new_ptr[-1], dtype=np.int32)
    new_val = np.empty(new_ptr[-1], dtype=np.float64)
    new_attr[own], new_val[own] = tok_attr, tok_val
    new_attr[dense_pos] = A + np.arange(D, dtype=np.int32)
    new_val[dense_pos] = corpus.dense
    attr_ptr = np.concatenate([attr_ptr, attr_ptr[-1] + L * np.arange(1, D + 1)])
    attr_label = np.concatenate([attr_label, np.tile(np.arange(L, dtype=np.int32), D)])
    return new_ptr, new_attr, new_val, attr_ptr, attr_label


def _result(w, losses, loss):
    """The :class:`~sklearn_crf._training.optimize.SolverResult` of an online fit.

    ``losses`` is CRFsuite's per-epoch "Loss": l2sgd the regularized negative
    log-likelihood ``Σ_s w_s·(log Z_s - score_s) + c2·‖w‖²`` at the end of the
    epoch; ap the weighted fraction of mislabelled tokens summed over
    sequences; pa and arow the summed hinge costs of the mistakes. ``loss``:
    for l2sgd the loss of the returned (best) epoch, else the last epoch's.
    """
    return SolverResult(w=w, n_iter=len(losses), losses=np.array(losses), loss=float(loss))


def _log_epoch(verbose, name, epoch, loss, start, extra=""):
    if verbose:
        logger.info("%s epoch %4d  loss %.6e%s  %.2fs", name, epoch, loss, extra,
                    time.perf_counter() - start)


def fit_averaged_perceptron(
    corpus, layout, labels, seq_weight, *, max_iter=100, epsilon=0.0, verbose=0
):
    """CRFsuite's averaged perceptron (``ap``).

    Each epoch visits the sequences in a new shuffled order; a sequence whose
    Viterbi path has ``d`` wrong labels moves the weights towards its gold
    features and away from the predicted ones. Returns the averaged weights
    (layout order) and an :class:`~sklearn_crf._training.optimize.SolverResult`; training stops when the
    epoch's loss divided by the number of sequences is below ``epsilon``.
    """
    p = _Problem(corpus, layout, labels, seq_weight)
    buffers = p.decode_buffers()
    w = np.zeros(p.n_params)
    ws = np.zeros(p.n_params)
    perm = np.arange(p.n_seq, dtype=np.int64)
    rng = glibc_rand_state(1)
    c = 1
    losses = []
    start = time.perf_counter()
    for epoch in range(max_iter):
        shuffle_crfsuite(perm, rng)
        loss, c = perceptron_epoch(w, ws, c, perm, p.arrays, buffers)
        losses.append(loss)
        _log_epoch(verbose, "ap", epoch + 1, loss, start)
        if loss / p.n_seq < epsilon:
            break
    return _result(p.layout_order(w - ws / c), losses, losses[-1] if losses else 0.0)


def fit_passive_aggressive(
    corpus, layout, labels, seq_weight, *, max_iter=100, epsilon=0.0, pa_type=1, c=1.0,
    error_sensitive=True, averaging=True, verbose=0,
):
    """CRFsuite's passive-aggressive training (``pa``), types 0, 1 and 2.

    Returns the weights (averaged as in the perceptron when ``averaging``) in
    layout order and an :class:`~sklearn_crf._training.optimize.SolverResult`; training stops when the epoch's
    summed cost divided by the number of sequences is below ``epsilon``.
    """
    p = _Problem(corpus, layout, labels, seq_weight)
    buffers = p.decode_buffers()
    w = np.zeros(p.n_params)
    ws = np.zeros(p.n_params)
    margin = p.margin_buffers()
    perm = np.arange(p.n_seq, dtype=np.int64)
    rng = glibc_rand_state(1)
    u = 1
    losses = []
    start = time.perf_counter()
    for epoch in range(max_iter):
        shuffle_crfsuite(perm, rng)
        loss, u = passive_aggressive_epoch(
            w, ws, u, perm, int(pa_type), float(c), bool(error_sensitive),
            p.arrays, buffers, margin,
        )
        losses.append(loss)
        _log_epoch(verbose, "pa", epoch + 1, loss, start)
        if loss / p.n_seq < epsilon:
            break
    return _result(p.layout_order(w - ws / u if averaging else w.copy()), losses,
                   losses[-1] if losses else 0.0)


def fit_arow(
    corpus, layout, labels, seq_weight, *, max_iter=100, epsilon=0.0, variance=1.0, gamma=1.0,
    verbose=0,
):
    """CRFsuite's AROW (adaptive regularization of weights, ``arow``).

    Keeps a mean weight and a diagonal variance per feature (starting at
    ``variance``); ``gamma`` trades off the two. Returns the mean weights in
    layout order and an :class:`~sklearn_crf._training.optimize.SolverResult`; training stops when the
    epoch's summed cost divided by the number of sequences is at most
    ``epsilon`` (``<=``, as in CRFsuite: with the default 0 it stops after
    an epoch without mistakes).
    """
    p = _Problem(corpus, layout, labels, seq_weight)
    buffers = p.decode_buffers()
    mean = np.zeros(p.n_params)
    cov = np.full(p.n_params, float(variance))
    margin = p.margin_buffers()
    perm = np.arange(p.n_seq, dtype=np.int64)
    rng = glibc_rand_state(1)
    losses = []
    start = time.perf_counter()
    for epoch in range(max_iter):
        shuffle_crfsuite(perm, rng)
        loss = arow_epoch(
            mean, cov, perm, float(gamma), p.arrays, buffers, margin
        )
        losses.append(loss)
        _log_epoch(verbose, "arow", epoch + 1, loss, start)
        if loss / p.n_seq <= epsilon:
            break
    return _result(p.layout_order(mean), losses, losses[-1] if losses else 0.0)


def fit_l2sgd(
    corpus, layout, labels, seq_weight, *, c2=1.0, max_iter=1000, period=10, delta=1e-6,
    calibration_eta=0.1, calibration_rate=2.0, calibration_samples=1000,
    calibration_candidates=10, calibration_max_trials=20, verbose=0,
):
    """CRFsuite's stochastic gradient descent with L2 regularization (``l2sgd``).

    Minimizes ``Σ_s w_s·(-log p(y_s|x_s)) + c2·‖w‖²`` one sequence at a time
    with the learning rate ``eta_t = 1 / (lambda·(t0 + t))``, ``lambda = 2·c2 /
    n_sequences``. ``t0`` comes from CRFsuite's calibration: on the first
    ``calibration_samples`` sequences of a shuffled order, one epoch per
    candidate ``eta`` (starting at ``calibration_eta``, multiplied by
    ``calibration_rate`` while the loss decreases, then divided from
    ``calibration_eta / calibration_rate`` on), keeping the ``eta`` of the
    lowest loss; ``calibration_candidates`` successful trials each way, at
    most ``calibration_max_trials`` trials. Training stops when the loss
    improved by less than ``delta`` (relative) over the last ``period``
    epochs, and returns the weights of the epoch with the lowest loss.
    """
    p = _Problem(corpus, layout, labels, seq_weight)
    N = p.n_seq
    lam = 2.0 * c2 / N
    buffers = p.sgd_buffers()

    def run_epoch(w, order, t, t0, lam):
        return l2sgd_epoch(w, order, t, t0, lam, p.arrays, buffers)

    perm = np.arange(N, dtype=np.int64)
    rng = glibc_rand_state(1)
    start = time.perf_counter()
    w = np.zeros(p.n_params)

    # ---- calibration (l2sgd_calibration)
    S = min(N, calibration_samples)
    shuffle_crfsuite(perm, rng)
    sample = perm[:S].copy()
    # the initial loss at w = 0, log Z - score = T·log L per sequence
    # (unweighted, as in CRFsuite)
    init_loss = float(np.diff(p.arrays.seq_ptr)[sample].sum()) * math.log(layout.n_labels)
    num = calibration_candidates
    dec = False
    trials = 1
    eta = calibration_eta
    best_eta = calibration_eta
    best_loss = np.inf
    while num > 0 or not dec:
        w[:] = 0.0
        loss, last, _, _ = run_epoch(w, sample, 0.0, 1.0 / (lam * eta), lam)
        if not np.isfinite(last):
            loss = last
        else:
            loss += 0.5 * lam * float(w @ w) * S
        ok = bool(np.isfinite(loss) and loss < init_loss)
        if ok:
            num -= 1
        if verbose:
            logger.info("l2sgd calibration trial %d: eta %g, loss %.6e%s", trials, eta, loss,
                        "" if ok else " (worse)")
        if np.isfinite(loss) and loss < best_loss:
            best_loss = loss
            best_eta = eta
        if not dec:
            if ok and num > 0:
                eta *= calibration_rate
            else:
                dec = True
                num = calibration_candidates
                eta = calibration_eta / calibration_rate
        else:
            eta /= calibration_rate
        trials += 1
        if calibration_max_trials <= trials:
            break
    eta = best_eta
    t0 = 1.0 / (lam * eta)
    if verbose:
        logger.info("l2sgd calibrated eta %g", eta)

    # ---- training (l2sgd with calibration off)
    w[:] = 0.0
    best_w = w.copy()
    best_sum_loss = np.inf
    pf = np.zeros(period)
    losses = []
    t = 0.0
    converged = False
    for epoch in range(1, max_iter + 1):
        shuffle_crfsuite(perm, rng)
        sum_loss, last, t, eta_now = run_epoch(w, perm, t, t0, lam)
        if not np.isfinite(last):
            raise FloatingPointError(
                f"l2sgd: the loss overflowed in epoch {epoch} (learning rate {eta_now:g}); "
                "CRFsuite stops with an error here too"
            )
        sum_loss += 0.5 * lam * float(w @ w) * N
        losses.append(sum_loss)
        if sum_loss < best_sum_loss:
            best_sum_loss = sum_loss
            best_w[:] = w
        if period < epoch:
            improvement = (pf[(epoch - 1) % period] - sum_loss) / sum_loss
        else:
            improvement = delta
        pf[(epoch - 1) % period] = sum_loss
        _log_epoch(verbose, "l2sgd", epoch, sum_loss, start, f"  eta {eta_now:.3e}")
        if improvement < delta:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"l2sgd stopped after max_iter={max_iter} epochs before the loss improved "
            f"by less than delta={delta} over period={period} epochs",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),  # the caller of CRFTagger.fit
        )
    return _result(p.layout_order(best_w), losses, best_sum_loss)

