"""Brute-force twins of the kernels: enumerate every label path of small CRFs.

Also the small helpers the kernel tests share: random CRFs and batching.
"""

import itertools
from fractions import Fraction

import numpy as np
from scipy.special import logsumexp


def fma(a, b, c):
    """``a * b + c`` rounded once, as a fused multiply-add does (finite values):
    the exact rational result rounded to the nearest float."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def vec_mat(x, m, fused=True):
    """Twin of the kernel ``vec_mat``: ``out[j] = Σ_i x[i] m[i, j]``, the terms
    added one at a time in ``i`` order from 0.0, each with one rounding
    (``fused``, an FMA) or two (a product, then a sum)."""
    L = m.shape[1]
    out = np.zeros(L)
    for j in range(L):
        d = 0.0
        for i in range(len(x)):
            d = fma(x[i], m[i, j], d) if fused else d + x[i] * m[i, j]
        out[j] = d
    return out


def edge_outer_sum(alpha, beta, exp_scores, scale, n, weight, outer, fused=True):
    """Twin of the kernel ``edge_outer_sum_scaled``, one position at a time in
    order: ``outer[t % 4, i, j] += (alpha[t-1, i] · (1 / c_t · weight)) ·
    (exp_scores[t, j] · beta[t, j])``, each addition one rounding (``fused``)
    or two."""
    L = outer.shape[1]
    for t in range(1, n):
        inv = (1.0 / scale[t]) * weight
        right = exp_scores[t] * beta[t]
        for i in range(L):
            a = alpha[t - 1, i] * inv
            for j in range(L):
                d = outer[t % 4, i, j]
                outer[t % 4, i, j] = fma(a, right[j], d) if fused else d + a * right[j]
    return outer


def path_scores(scores, trans):
    """All label paths of one sequence and their scores."""
    n, L = scores.shape
    paths = np.array(list(itertools.product(range(L), repeat=n)), dtype=np.int64)
    total = scores[np.arange(n), paths].sum(axis=1)
    if n > 1:
        total += trans[paths[:, :-1], paths[:, 1:]].sum(axis=1)
    return paths, total


def log_partition(scores, trans):
    if scores.shape[0] == 0:
        return 0.0
    _, total = path_scores(scores, trans)
    return logsumexp(total)


def marginals(scores, trans):
    """Node (n, L) and edge (n, L, L) marginals; edge[t] is p(y[t-1], y[t])."""
    n, L = scores.shape
    paths, total = path_scores(scores, trans)
    p = np.exp(total - logsumexp(total))
    node = np.zeros((n, L))
    edge = np.zeros((n, L, L))
    for t in range(n):
        np.add.at(node[t], paths[:, t], p)
        if t > 0:
            np.add.at(edge[t], (paths[:, t - 1], paths[:, t]), p)
    return node, edge


def log_alpha(scores, trans):
    """Log forward variables (n, L): ``log_alpha[t, j]`` is the log of the sum of
    exp(score) over the label prefixes y[0..t] with y[t] = j."""
    n, L = scores.shape
    out = np.empty((n, L))
    for t in range(n):
        paths, total = path_scores(scores[: t + 1], trans)
        for j in range(L):
            out[t, j] = logsumexp(total[paths[:, t] == j])
    return out


def log_beta(scores, trans):
    """Log backward variables (n, L): ``log_beta[t, i]`` is the log of the sum of
    exp(score of y[t+1..n-1] plus the transitions from y[t] = i onwards)."""
    n, L = scores.shape
    out = np.zeros((n, L))
    for t in range(n - 1):
        paths, total = path_scores(scores[t:], trans)
        total = total - scores[t, paths[:, 0]]
        for i in range(L):
            out[t, i] = logsumexp(total[paths[:, 0] == i])
    return out


def best_path(scores, trans):
    paths, total = path_scores(scores, trans)
    k = int(np.argmax(total))
    return paths[k], total[k]


def dense_state_scores(w_state, tok_ptr, tok_attr, tok_val, attr_ptr, attr_label, L):
    """State scores through a dense (attribute × label) weight matrix."""
    n_attr = len(attr_ptr) - 1
    W = np.zeros((n_attr, L))
    for a in range(n_attr):
        for p in range(attr_ptr[a], attr_ptr[a + 1]):
            W[a, attr_label[p]] = w_state[p]
    n_tok = len(tok_ptr) - 1
    out = np.zeros((n_tok, L))
    for t in range(n_tok):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            out[t] += tok_val[k] * W[tok_attr[k]]
    return out


def state_scores_in_order(w_attr, tok_ptr, tok_attr, tok_val, fused=True):
    """Twin of the kernel ``state_scores_dense_range``: ``out[t, j] = Σ_k v_k ·
    w_attr[attr_k, j]`` over the token's entries in order from 0.0, each term
    with one rounding (``fused``, an FMA) or two; ``tok_val`` empty: every
    value is 1."""
    n_tok, L = len(tok_ptr) - 1, w_attr.shape[1]
    out = np.zeros((n_tok, L))
    for t in range(n_tok):
        for j in range(L):
            d = 0.0
            for k in range(tok_ptr[t], tok_ptr[t + 1]):
                v = float(tok_val[k]) if len(tok_val) else 1.0
                w = float(w_attr[tok_attr[k], j])
                d = fma(v, w, d) if fused else d + v * w
            out[t, j] = d
    return out


def state_counts(node, tok_ptr, tok_attr, tok_val, n_attributes):
    """Σ over entries of val · node[token], per attribute: (n_attributes, L)
    (twin of scores.scatter_state_counts)."""
    out = np.zeros((n_attributes, node.shape[1]))
    for t in range(len(tok_ptr) - 1):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            out[tok_attr[k]] += tok_val[k] * node[t]
    return out


def state_counts_in_order(node, ent_tok, ent_attr, ent_val, n_attributes, fused=True):
    """Twin of the kernel ``scatter_state_counts`` over all the entries of an
    entry index: ``out[attr_k, j] += val_k · node[tok_k, j]`` one entry at a
    time in order, from 0.0, each term with one rounding (``fused``, an FMA)
    or two; ``ent_val`` empty: every value is 1 (``out + node``)."""
    L = node.shape[1]
    out = np.zeros((n_attributes, L))
    for k in range(len(ent_tok)):
        row, a = node[ent_tok[k]], ent_attr[k]
        for j in range(L):
            if not len(ent_val):
                out[a, j] = out[a, j] + row[j]
            elif fused:
                out[a, j] = fma(float(ent_val[k]), float(row[j]), float(out[a, j]))
            else:
                out[a, j] = out[a, j] + ent_val[k] * row[j]
    return out


def all_state_scores(w, layout, corpus):
    """State scores (n_tokens, L) of the sparse attributes plus, when the layout
    has a dense part, ``corpus.dense @ W_dense`` (one token at a time)."""
    L = layout.n_labels
    scores = dense_state_scores(
        w[: layout.n_state], corpus.tok_ptr, corpus.tok_attr, corpus.tok_val,
        layout.attr_ptr, layout.attr_label, L,
    )
    if layout.n_dense:
        W = np.asarray(w[layout.n_state + len(layout.trans_from):]).reshape(layout.n_dense, L)
        dense = np.asarray(corpus.dense, dtype=np.float64)
        for t in range(scores.shape[0]):
            for j in range(layout.n_dense):
                scores[t] += dense[t, j] * W[j]
    return scores


def objective(w, layout, corpus, labels, seq_weight, c1, c2):
    """The regularized weighted NLL by brute force, in the CRF weights w."""
    seq_ptr = corpus.seq_ptr
    scores = all_state_scores(w, layout, corpus)
    trans = layout.transition_matrix(w)
    loss = 0.0
    for s in range(len(seq_ptr) - 1):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if b == a:
            continue
        y = labels[a:b]
        gold = scores[np.arange(a, b), y].sum() + trans[y[:-1], y[1:]].sum()
        loss += seq_weight[s] * (log_partition(scores[a:b], trans) - gold)
    return loss + c1 * np.abs(w).sum() + c2 * (w @ w)


def gradient(w, layout, corpus, labels, seq_weight, c2):
    """Gradient of the smooth objective (NLL + L2) by enumerating all paths."""
    tok_ptr, tok_attr, tok_val = corpus.tok_ptr, corpus.tok_attr, corpus.tok_val
    seq_ptr = corpus.seq_ptr
    L = layout.n_labels
    scores = all_state_scores(w, layout, corpus)
    trans = layout.transition_matrix(w)
    d_scores = np.zeros_like(scores)  # d NLL / d state score
    d_trans = np.zeros((L, L))
    for s in range(len(seq_ptr) - 1):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            continue
        node, edge = marginals(scores[a:b], trans)
        gold = labels[a:b]
        node[np.arange(b - a), gold] -= 1.0
        d_scores[a:b] = seq_weight[s] * node
        d_trans += seq_weight[s] * edge[1:].sum(axis=0)
        np.add.at(d_trans, (gold[:-1], gold[1:]), -seq_weight[s])
    n_attr = len(layout.attr_ptr) - 1
    d_attr = np.zeros((n_attr, L))
    rows = np.repeat(np.arange(len(tok_ptr) - 1), np.diff(tok_ptr))
    np.add.at(d_attr, tok_attr, tok_val[:, None] * d_scores[rows])
    parts = [
        d_attr[layout.state_pairs(), layout.attr_label], d_trans[layout.trans_from, layout.trans_to]
    ]
    if layout.n_dense:
        d_dense = np.zeros((layout.n_dense, L))
        dense = np.asarray(corpus.dense, dtype=np.float64)
        for t in range(scores.shape[0]):
            d_dense += np.outer(dense[t], d_scores[t])
        parts.append(d_dense.ravel())
    return np.concatenate(parts) + 2 * c2 * w


# --------------------------------------------------------------------------
# shared helpers of the kernel tests
# --------------------------------------------------------------------------


def random_crf(rng, n, L, scale=1.0):
    """Normal state scores (n, L) and transitions (L, L) of standard deviation scale."""
    return rng.normal(scale=scale, size=(n, L)), rng.normal(scale=scale, size=(L, L))


def batch(seqs, L=1):
    """Score matrices of sequences → the batch kernels' (scores, seq_ptr)."""
    scores = np.concatenate(seqs) if seqs else np.zeros((0, L))
    seq_ptr = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=seq_ptr[1:])
    return np.ascontiguousarray(scores, dtype=np.float64), seq_ptr


def seeded_crf(seed, n, scale):
    """Uniform scores and transitions in [-scale, scale] with L in 1..5 drawn from
    the seed, some transitions forbidden (-inf) for odd seeds: the generator
    under which the partial-underflow cases of test_reliability were found."""
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 6))
    scores = rng.uniform(-scale, scale, (n, L))
    trans = rng.uniform(-scale, scale, (L, L))
    if seed % 2:
        mask = rng.random((L, L)) < 0.3
        np.fill_diagonal(mask, False)
        trans[mask] = -np.inf
    return scores, trans


# --------------------------------------------------------------------------
# CRFsuite's online algorithms (sklearn_crf._training.online), with dense feature vectors
# --------------------------------------------------------------------------


def feature_vector(layout, corpus, s, path):
    """Φ(x_s, path): the dense count of every parameter on a label path of sequence s."""
    tok_ptr, tok_attr, tok_val = corpus.tok_ptr, corpus.tok_attr, corpus.tok_val
    seq_ptr = corpus.seq_ptr
    phi = np.zeros(layout.n_params)
    start = seq_ptr[s]
    for t, j in enumerate(path):
        tok = start + t
        for k in range(tok_ptr[tok], tok_ptr[tok + 1]):
            a = tok_attr[k]
            for p in range(layout.attr_ptr[a], layout.attr_ptr[a + 1]):
                if layout.attr_label[p] == j:
                    phi[p] += tok_val[k]
        if t > 0:
            hit = np.flatnonzero((layout.trans_from == path[t - 1]) & (layout.trans_to == j))
            if len(hit):
                phi[layout.n_state + hit[0]] += 1.0
    return phi


def sequence_scores(w, layout, corpus, s):
    """(state scores, transition matrix) of sequence s under weights w."""
    tok_ptr, tok_attr, tok_val = corpus.tok_ptr, corpus.tok_attr, corpus.tok_val
    seq_ptr = corpus.seq_ptr
    scores = dense_state_scores(
        w[: layout.n_state], tok_ptr, tok_attr, tok_val, layout.attr_ptr,
        layout.attr_label, layout.n_labels,
    )
    return scores[seq_ptr[s] : seq_ptr[s + 1]], layout.transition_matrix(w)


def expected_features(w, layout, corpus, s):
    """E[Φ(x_s, Y)] under weights w, by enumerating every label path."""
    scores, trans = sequence_scores(w, layout, corpus, s)
    paths, total = path_scores(scores, trans)
    p = np.exp(total - logsumexp(total))
    return sum(pk * feature_vector(layout, corpus, s, path) for pk, path in zip(p, paths))


def _mistake(w, layout, corpus, labels, s):
    """(gold path, best path, its score, the gold score, number of wrong labels)."""
    seq_ptr = corpus.seq_ptr
    gold = labels[seq_ptr[s] : seq_ptr[s + 1]]
    scores, trans = sequence_scores(w, layout, corpus, s)
    best, best_score = best_path(scores, trans)
    gold_score = scores[np.arange(len(gold)), gold].sum() + trans[gold[:-1], gold[1:]].sum()
    return gold, best, best_score, gold_score, int((best != gold).sum())


def perceptron_epoch(w, ws, c, order, layout, corpus, labels, seq_weight):
    """Averaged perceptron epoch; returns (w, ws, c, loss)."""
    loss = 0.0
    for s in order:
        gold, best, _, _, d = _mistake(w, layout, corpus, labels, s)
        if d > 0:
            delta = feature_vector(layout, corpus, s, gold) - feature_vector(layout, corpus, s, best)
            w = w + seq_weight[s] * delta
            ws = ws + c * seq_weight[s] * delta
            loss += d / len(gold) * seq_weight[s]
        c += 1
    return w, ws, c, loss


def passive_aggressive_epoch(w, ws, u, order, layout, corpus, labels, seq_weight, pa_type, c, error_sensitive):
    """Passive-aggressive epoch; returns (w, ws, u, loss)."""
    loss = 0.0
    for s in order:
        gold, best, sv, sc, d = _mistake(w, layout, corpus, labels, s)
        if d > 0:
            cost = sv - sc + (np.sqrt(d) if error_sensitive else 1.0)
            delta = feature_vector(layout, corpus, s, gold) - feature_vector(layout, corpus, s, best)
            norm2 = delta @ delta
            tau = {0: cost / norm2, 1: min(c, cost / norm2), 2: cost / (norm2 + 0.5 / c)}[pa_type]
            w = w + tau * seq_weight[s] * delta
            ws = ws + tau * seq_weight[s] * u * delta
            loss += cost * seq_weight[s]
        u += 1
    return w, ws, u, loss


def arow_epoch(mean, cov, order, layout, corpus, labels, seq_weight, gamma):
    """AROW epoch; returns (mean, cov, loss)."""
    loss = 0.0
    for s in order:
        gold, best, sv, sc, d = _mistake(mean, layout, corpus, labels, s)
        if d > 0:
            cost = sv - sc + d
            delta = seq_weight[s] * (
                feature_vector(layout, corpus, s, gold) - feature_vector(layout, corpus, s, best)
            )
            alpha = cost / (gamma + (delta**2 * cov).sum())
            mean = mean + alpha * cov * delta
            cov = 1.0 / (1.0 / cov + delta**2 / gamma)
            loss += cost * seq_weight[s]
    return mean, cov, loss


def sgd_epoch(w, order, t, t0, lam, layout, corpus, labels, seq_weight):
    """SGD epoch with explicit L2 decay; returns (w, t, summed loss without L2)."""
    seq_ptr = corpus.seq_ptr
    loss = 0.0
    for s in order:
        eta = 1.0 / (lam * (t0 + t))
        w = (1.0 - eta * lam) * w
        if seq_ptr[s + 1] > seq_ptr[s]:
            gold = labels[seq_ptr[s] : seq_ptr[s + 1]]
            scores, trans = sequence_scores(w, layout, corpus, s)
            gold_score = scores[np.arange(len(gold)), gold].sum() + trans[gold[:-1], gold[1:]].sum()
            loss += seq_weight[s] * (log_partition(scores, trans) - gold_score)
            grad = feature_vector(layout, corpus, s, gold) - expected_features(w, layout, corpus, s)
            w = w + eta * seq_weight[s] * grad
        t += 1
    return w, t, loss
# decoding under constraints: brute force over the allowed paths only
# --------------------------------------------------------------------------


def allowed_paths(scores, trans, allowed_trans=None, start=None, end=None, token_mask=None):
    """The label paths that satisfy the constraints (boolean masks, None = free)
    and their scores under the finite weights ``scores`` and ``trans``."""
    paths, total = path_scores(scores, trans)
    keep = np.ones(len(paths), dtype=bool)
    n = scores.shape[0]
    if n and token_mask is not None:
        keep &= token_mask[np.arange(n), paths].all(axis=1)
    if n and start is not None:
        keep &= start[paths[:, 0]]
    if n and end is not None:
        keep &= end[paths[:, -1]]
    if n > 1 and allowed_trans is not None:
        keep &= allowed_trans[paths[:, :-1], paths[:, 1:]].all(axis=1)
    return paths[keep], total[keep]


def ranked_paths(paths, total):
    """Paths by decreasing score; ties by the labels read from the end."""
    keys = [(-s, tuple(p[::-1])) for p, s in zip(paths.tolist(), total.tolist())]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return paths[order], total[order]


def path_marginals(paths, total, L):
    """log Z, node marginals (n, L) and path probabilities over the given paths."""
    log_z = logsumexp(total)
    p = np.exp(total - log_z)
    n = paths.shape[1]
    node = np.zeros((n, L))
    for t in range(n):
        np.add.at(node[t], paths[:, t], p)
    return log_z, node, p


def span_probability(paths, total, start, labels):
    """p(y[start : start + len(labels)] = labels) over the given paths."""
    p = np.exp(total - logsumexp(total))
    hit = (paths[:, start:start + len(labels)] == np.asarray(labels)).all(axis=1)
    return p[hit].sum()


def posterior_path(paths, total, L):
    """The given path with the largest sum of node marginals (random continuous
    weights: no ties)."""
    _, node, _ = path_marginals(paths, total, L)
    gain = node[np.arange(paths.shape[1]), paths].sum(axis=1)
    return paths[int(np.argmax(gain))]


# --------------------------------------------------------------------------
# training on partial labels: brute force over the paths they allow
# --------------------------------------------------------------------------


def path_expectations(paths, total, L):
    """log Z, node marginals (n, L) and summed edge marginals (L, L) over the
    given paths."""
    log_z, node, p = path_marginals(paths, total, L)
    edge = np.zeros((L, L))
    for t in range(1, paths.shape[1]):
        np.add.at(edge, (paths[:, t - 1], paths[:, t]), p)
    return log_z, node, edge


def partial_objective(w, layout, corpus, allowed, seq_weight, c2, constraints=None):
    """The regularized weighted NLL of partial labels by brute force, and its
    gradient: Σ_s v_s (log Z_s − log Z_s(allowed)) + c2‖w‖², the paths of both
    partition functions restricted by the transition ``constraints`` (a
    TransitionConstraints or None), the second also by ``allowed`` (n_tokens,
    L) bool, the labels each token may take."""
    seq_ptr = corpus.seq_ptr
    L = layout.n_labels
    scores = all_state_scores(w, layout, corpus)
    trans = layout.transition_matrix(w)
    masks = {} if constraints is None else dict(
        allowed_trans=constraints.transitions, start=constraints.start, end=constraints.end)
    loss = 0.0
    d_scores = np.zeros_like(scores)
    d_trans = np.zeros((L, L))
    for s in range(len(seq_ptr) - 1):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            continue
        v = seq_weight[s]
        log_z, node, edge = path_expectations(*allowed_paths(scores[a:b], trans, **masks), L)
        log_zc, node_c, edge_c = path_expectations(
            *allowed_paths(scores[a:b], trans, token_mask=allowed[a:b], **masks), L)
        loss += v * (log_z - log_zc)
        d_scores[a:b] = v * (node - node_c)
        d_trans += v * (edge - edge_c)
    grad = parameter_gradient(d_scores, d_trans, layout, corpus)
    return loss + c2 * (w @ w), grad + 2 * c2 * w


def parameter_gradient(d_scores, d_trans, layout, corpus):
    """The gradient in the weights from the derivatives in the state scores
    (n_tokens, L) and the transition weights (L, L)."""
    tok_ptr, tok_attr, tok_val = corpus.tok_ptr, corpus.tok_attr, corpus.tok_val
    n_attr = len(layout.attr_ptr) - 1
    d_attr = np.zeros((n_attr, layout.n_labels))
    rows = np.repeat(np.arange(len(tok_ptr) - 1), np.diff(tok_ptr))
    np.add.at(d_attr, tok_attr, tok_val[:, None] * d_scores[rows])
    parts = [d_attr[layout.state_pairs(), layout.attr_label],
             d_trans[layout.trans_from, layout.trans_to]]
    if layout.n_dense:
        dense = np.asarray(corpus.dense, dtype=np.float64)
        parts.append((dense.T @ d_scores).ravel())
    return np.concatenate(parts)
