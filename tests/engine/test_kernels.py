"""The numba kernels against brute force over all label paths."""

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_crf import _engine
from sklearn_crf._engine.scores import ALL_ROWS_BYTES

import _naive


@pytest.mark.parametrize("n_chunks", [1, 3])
@pytest.mark.parametrize("L", [1, 2, 4])
def test_forward_backward_matches_brute_force(L, n_chunks):
    rng = np.random.default_rng(L)
    lengths = [0, 1, 2, 3, 5, 6, 4]
    seqs = [rng.normal(size=(n, L)) * 2 for n in lengths]
    trans = rng.normal(size=(L, L)) * 2
    scores, seq_ptr = _naive.batch(seqs)
    log_z, node, edge = _engine.forward_backward_batch(
        scores, trans, seq_ptr, True, n_chunks
    )
    for s, seq in enumerate(seqs):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        assert log_z[s] == pytest.approx(_naive.log_partition(seq, trans), rel=1e-10, abs=1e-12)
        if len(seq) == 0:
            continue
        node_ref, edge_ref = _naive.marginals(seq, trans)
        np.testing.assert_allclose(node[a:b], node_ref, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(edge[a + 1 : b], edge_ref[1:], rtol=1e-10, atol=1e-13)


def _scaled_passes(scores, trans):
    n, L = scores.shape
    tt = _engine.transition_terms(trans)
    ws = _engine.scaled_workspace(n, L)
    raw = scores.copy()
    log_z = _engine.forward_scaled(raw, tt, n, ws)
    np.testing.assert_array_equal(raw, scores)  # the raw scores are left alone
    _engine.backward_scaled(tt, n, ws)
    return log_z, tt, ws


def _log_passes(scores, trans):
    n, L = scores.shape
    la, lb, log_c = np.empty((n, L)), np.empty((n, L)), np.empty(n)
    log_z = _engine.forward_backward_log(scores, trans, n, la, lb, log_c)
    return log_z, la, lb, log_c


def _normalized(log_rows):
    return np.exp(log_rows - logsumexp(log_rows, axis=1, keepdims=True))


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("L", [1, 3])
def test_forward_and_backward_passes_match_brute_force(n, L):
    """Each pass against the brute-force alphas and betas, up to its normalization."""
    rng = np.random.default_rng(10 * n + L)
    scores, trans = _naive.random_crf(rng, n, L, scale=2.0)
    ref_alpha, ref_beta = _naive.log_alpha(scores, trans), _naive.log_beta(scores, trans)
    ref_log_z = _naive.log_partition(scores, trans)

    log_z, tt, ws = _scaled_passes(scores, trans)
    assert log_z == pytest.approx(ref_log_z, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(ws.alpha[:n], _normalized(ref_alpha), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(ws.alpha[:n].sum(axis=1), 1.0, rtol=1e-13)
    np.testing.assert_allclose(
        ws.exp_scores[:n], np.exp(scores - scores.max(axis=1, keepdims=True)), rtol=1e-14
    )
    np.testing.assert_allclose(
        _normalized(np.log(ws.beta[:n])), _normalized(ref_beta), rtol=1e-10, atol=1e-15
    )
    # the scale constants: log Z is the sum of their logs plus the shifts
    shifts = scores.max(axis=1).sum() + (n - 1) * trans.max()
    assert np.log(ws.scale[:n]).sum() + shifts == pytest.approx(ref_log_z, rel=1e-12)

    log_z, la, lb, log_c = _log_passes(scores, trans)
    assert log_z == pytest.approx(ref_log_z, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(np.exp(la), _normalized(ref_alpha), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(np.cumsum(log_c), logsumexp(ref_alpha, axis=1), rtol=1e-12)
    np.testing.assert_allclose(_normalized(lb), _normalized(ref_beta), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("n", [1, 2, 6])
def test_marginal_kernels_match_brute_force(n):
    """Node, edge and summed edge marginals of the scaled and the log-space passes."""
    rng = np.random.default_rng(n)
    L, weight = 3, 0.7
    scores, trans = _naive.random_crf(rng, n, L, scale=2.0)
    node_ref, edge_ref = _naive.marginals(scores, trans)
    summed_ref = weight * edge_ref[1:].sum(axis=0)

    _, tt, ws = _scaled_passes(scores, trans)
    node, edge, outer = np.empty((n, L)), np.zeros((n, L, L)), np.zeros((4, L, L))
    assert _engine.node_marginals_scaled(n, ws, node)
    _engine.edge_marginals_scaled(tt, n, ws, edge)
    _engine.edge_outer_sum_scaled(n, ws, weight, outer)
    np.testing.assert_allclose(node, node_ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(edge[1:], edge_ref[1:], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(tt.exp_trans * outer.sum(axis=0), summed_ref, atol=1e-12)

    _, la, lb, log_c = _log_passes(scores, trans)
    node, edge, summed = np.empty((n, L)), np.zeros((n, L, L)), np.zeros((L, L))
    _engine.node_marginals_log(n, la, lb, node)
    _engine.edge_marginals_log(scores, trans, n, la, lb, log_c, edge)
    _engine.edge_sum_log(scores, trans, n, la, lb, log_c, weight, summed)
    np.testing.assert_allclose(node, node_ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(edge[1:], edge_ref[1:], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(summed, summed_ref, atol=1e-12)


def test_scaled_and_log_space_agree():
    rng = np.random.default_rng(1)
    L = 4
    for n in [1, 2, 7, 50]:
        scores, trans = _naive.random_crf(rng, n, L, scale=3.0)
        node_s, edge_s = np.zeros((n, L)), np.zeros((n, L, L))
        node_l, edge_l = np.zeros((n, L)), np.zeros((n, L, L))
        log_z_s = _engine.marginals_scaled(
            scores, _engine.transition_terms(trans), n, _engine.scaled_workspace(n, L),
            node_s, edge_s,
        )
        log_z_l = _engine.marginals_log(scores, trans, n, node_l, edge_l)
        assert log_z_s == pytest.approx(log_z_l, rel=1e-12)
        np.testing.assert_allclose(node_s, node_l, rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(edge_s, edge_l, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("scale", [1.0, 1e3])  # 1e3: the log-space fallback
def test_expected_counts_sequence_matches_brute_force(scale):
    """The gradient's pass: weighted edge marginals summed over positions; the
    scaled pass leaves outer products for the caller to multiply by exp_trans."""
    rng = np.random.default_rng(7)
    L, weight = 3, 0.7
    for n in [1, 2, 6]:
        scores, trans = _naive.random_crf(rng, n, L, scale=scale)
        tt = _engine.transition_terms(trans)
        edge_sum, outer = np.zeros((L, L)), np.zeros((4, L, L))
        node = np.empty((n, L))
        log_z = _engine.expected_counts_sequence(
            scores, tt, n, _engine.scaled_workspace(n, L), weight, node, edge_sum, outer
        )
        node_ref, edge_ref = _naive.marginals(scores, trans)
        summed = edge_sum + tt.exp_trans * outer.sum(axis=0)
        assert log_z == pytest.approx(_naive.log_partition(scores, trans), rel=1e-10)
        np.testing.assert_allclose(node, node_ref, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(summed, weight * edge_ref[1:].sum(axis=0), atol=1e-12)
        if scale > 100 and n > 1:
            assert not outer.any()  # the scaled pass declined, log space did it


def test_forward_backward_blocks_is_expected_counts_sequence_per_sequence():
    """The gradient's phase 1 (scaled kernel over lanes, then log space only
    where scaling declines) gives bitwise what expected_counts_sequence gives
    each sequence (log Z, weighted node marginals; the log-space edge sums in
    sequence order within each block), weights 0 and not 1 included; the
    scaled edge sums, added per lane, to rounding."""
    rng = np.random.default_rng(11)
    L = 3
    lengths = [3, 0, 4, 1, 5, 2, 6, 3]
    scales = [1.0, 1.0, 1e3, 1.0, 1.0, 1e3, 1.0, 1.0]  # 1e3: scaling declines
    weights = np.array([1.0, 1.0, 0.7, 0.0, 2.5, 1.0, 1.0, 0.3])
    seqs = [_naive.random_crf(rng, n, L, scale=sc)[0] for n, sc in zip(lengths, scales)]
    trans = rng.normal(size=(L, L))
    scores, seq_ptr = _naive.batch(seqs, L)
    block_ptr = np.array([0, 3, 6, 8], dtype=np.int64)
    n_blocks = len(block_ptr) - 1
    node = scores.copy()
    seq_log_z = np.empty(len(seqs))
    block_log_z = np.empty(n_blocks)
    block_outer = np.full((n_blocks, 4, L, L), np.nan)
    block_edge = np.full((n_blocks, L, L), np.nan)
    _engine.forward_backward_blocks(node, trans, seq_ptr, weights, block_ptr, 0, n_blocks,
                                    max(lengths), seq_log_z, block_log_z, block_outer,
                                    block_edge)
    tt = _engine.transition_terms(trans)
    for b in range(n_blocks):
        outer, edge, acc = np.zeros((4, L, L)), np.zeros((L, L)), 0.0
        for s in range(block_ptr[b], block_ptr[b + 1]):
            lo, hi = seq_ptr[s], seq_ptr[s + 1]
            n = hi - lo
            if n == 0 or weights[s] == 0.0:
                assert seq_log_z[s] == 0.0 and not node[lo:hi].any()
                continue
            ref = np.empty((n, L))
            log_z = _engine.expected_counts_sequence(
                scores[lo:hi], tt, n, _engine.scaled_workspace(n, L), weights[s], ref,
                edge, outer)
            assert seq_log_z[s] == log_z
            if weights[s] != 1.0:
                ref *= weights[s]
            np.testing.assert_array_equal(node[lo:hi], ref)
            acc += weights[s] * log_z
        np.testing.assert_allclose(block_outer[b].sum(axis=0), outer.sum(axis=0),
                                   rtol=1e-13, atol=1e-15)
        np.testing.assert_array_equal(block_edge[b], edge)
        assert block_log_z[b] == pytest.approx(acc, rel=1e-15)
    assert block_edge[0].any() and block_edge[1].any()  # the log-space fallback ran


@pytest.mark.parametrize("L", [1, 3, 4, 5, 8, 9, 11, 12, 13, 17, 40])
def test_vec_mat_adds_its_terms_in_index_order_in_either_schedule(L):
    """Both schedules of vec_mat (registers below VEC_MAT_LANES_FROM labels,
    vector lanes from it on) give every sum bitwise as its twin does: the
    terms in index order, one rounding each (FMA; two where the CPU has no
    FMA), so the schedule never changes a bit."""
    from sklearn_crf._engine import forward_backward as fb

    rng = np.random.default_rng(L)
    x = rng.random((2, L))
    m = np.exp(rng.normal(size=(L, L)))
    fused = _naive.vec_mat(x[1], m)
    unfused = _naive.vec_mat(x[1], m, fused=False)
    for kernel in (fb.vec_mat, fb._vec_mat_registers, fb._vec_mat_lanes):
        out = np.full((3, L), np.nan)
        kernel(x, 1, m, out, 2)
        assert np.isnan(out[:2]).all()
        assert np.array_equal(out[2], fused) or np.array_equal(out[2], unfused)
    out = x.copy()  # the output row may be a row of the input
    fb.vec_mat(out, 1, m, out, 0)
    assert np.array_equal(out[0], fused) or np.array_equal(out[0], unfused)


@pytest.mark.parametrize("L", [3, 9, 13])
def test_edge_outer_sum_adds_positions_in_order(L):
    """edge_outer_sum_scaled gives the bits of its twin, which adds one
    position at a time in order, each term with one rounding (two where the
    CPU has no FMA): a rescheduling of its loops must keep them."""
    rng = np.random.default_rng(L)
    for n in (1, 2, 5, 13, 14, 17, 18, 30):
        scores, trans = _naive.random_crf(rng, n, L, scale=2.0)
        _, tt, ws = _scaled_passes(scores, trans)
        start = rng.random((4, L, L))
        outer = start.copy()
        _engine.edge_outer_sum_scaled(n, ws, 0.7, outer)
        args = (ws.alpha, ws.beta, ws.exp_scores, ws.scale, n, 0.7)
        fused = _naive.edge_outer_sum(*args, start.copy())
        unfused = _naive.edge_outer_sum(*args, start.copy(), fused=False)
        assert np.array_equal(outer, fused) or np.array_equal(outer, unfused)


def test_exp_nonpositive_is_within_an_ulp():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        -rng.exponential(scale=s, size=20_000) for s in (0.01, 1.0, 30.0, 300.0)
    ] + [[0.0, -0.0, -1e-300, -0.5 * np.log(2), -1.0, -600.0, -707.99, -708.0]])
    x = x[x >= -708.0]
    got = np.array([_engine.exp_nonpositive(v) for v in x])
    want = np.exp(x)
    assert got[-8] == 1.0 and got[-7] == 1.0
    np.testing.assert_array_less(np.abs(got - want), 2.0 * np.spacing(want))
    assert _engine.exp_nonpositive(-708.5) == 0.0
    assert _engine.exp_nonpositive(-1e6) == 0.0


def test_extreme_weights_fall_back_to_log_space():
    """Scaling underflows with weights of 1e4; the log-space fallback keeps it exact."""
    rng = np.random.default_rng(2)
    L = 3
    for trial in range(20):
        scores, trans = _naive.random_crf(rng, 5, L, scale=1e4)
        if trial % 2:
            trans[rng.integers(L), rng.integers(L)] = -np.inf  # a forbidden transition
        scores_b, seq_ptr = _naive.batch([scores])
        log_z, node, edge = _engine.forward_backward_batch(scores_b, trans, seq_ptr, True, 1)
        assert np.isfinite(log_z).all() and np.isfinite(node).all()
        assert log_z[0] == pytest.approx(_naive.log_partition(scores, trans), rel=1e-12)
        node_ref, edge_ref = _naive.marginals(scores, trans)
        np.testing.assert_allclose(node, node_ref, atol=1e-9)
        np.testing.assert_allclose(edge[1:], edge_ref[1:], atol=1e-9)
        # scores of 1e5 carry absolute rounding errors of ~1e-11 into exp()
        np.testing.assert_allclose(node.sum(axis=1), 1.0, rtol=1e-9)


def test_long_sequence_is_stable():
    rng = np.random.default_rng(3)
    n, L = 200_000, 5
    scores, trans = _naive.random_crf(rng, n, L, scale=5.0)
    seq_ptr = np.array([0, n], dtype=np.int64)
    log_z, node, _ = _engine.forward_backward_batch(scores, trans, seq_ptr, False, 1)
    assert np.isfinite(log_z[0])
    np.testing.assert_allclose(node.sum(axis=1), 1.0, rtol=1e-10)
    labels, best = _engine.viterbi_batch(scores, trans, seq_ptr, 1)
    assert np.isfinite(best[0]) and best[0] <= log_z[0]
    path_score = scores[np.arange(n), labels].sum() + trans[labels[:-1], labels[1:]].sum()
    assert best[0] == pytest.approx(path_score, rel=1e-10)  # 2e5 terms summed


@pytest.mark.parametrize("L", [1, 2, 3, 4])
def test_viterbi_matches_brute_force(L):
    rng = np.random.default_rng(10 + L)
    seqs = [rng.normal(size=(n, L)) for n in [0, 1, 2, 4, 6, 3]]
    trans = rng.normal(size=(L, L))
    if L > 1:
        trans[0, 1] = -np.inf
    scores, seq_ptr = _naive.batch(seqs)
    labels, best = _engine.viterbi_batch(scores, trans, seq_ptr, 2)
    for s, seq in enumerate(seqs):
        if len(seq) == 0:
            continue
        path, score = _naive.best_path(seq, trans)
        np.testing.assert_array_equal(labels[seq_ptr[s] : seq_ptr[s + 1]], path)
        assert best[s] == pytest.approx(score, rel=1e-12)


def test_state_scores_match_dense(corpus):
    encoded, layout, _ = corpus
    rng = np.random.default_rng(0)
    w = rng.normal(size=layout.n_state)
    tok_ptr, tok_attr, tok_val = encoded.tok_ptr, encoded.tok_attr, encoded.tok_val
    got = _engine.state_scores_dense(layout.attribute_matrix(w), tok_ptr, tok_attr, tok_val)
    ref = _naive.dense_state_scores(
        w, tok_ptr, tok_attr, tok_val, layout.attr_ptr, layout.attr_label, layout.n_labels
    )
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    sparse = _engine.state_scores_sparse(
        w, layout.attr_ptr, layout.attr_label, tok_ptr, tok_attr, tok_val, layout.n_labels
    )
    np.testing.assert_array_equal(sparse, got)  # the same sums in the same order


def test_sparse_state_scores_read_empty_values_as_ones(corpus):
    """An empty tok_val means every value is 1: the bits of explicit ones, at
    scale 1 and at another scale."""
    encoded, layout, _ = corpus
    w = np.random.default_rng(1).normal(size=layout.n_state)
    tok_ptr, tok_attr = encoded.tok_ptr, encoded.tok_attr
    ones = np.ones(len(tok_attr))
    for scale in (1.0, 0.37):
        got = np.empty((len(tok_ptr) - 1, layout.n_labels))
        ref = np.empty_like(got)
        for tok_val, out in ((np.zeros(0), got), (ones, ref)):
            _engine.state_scores_sparse_range(w, scale, layout.attr_ptr, layout.attr_label,
                                              tok_ptr, tok_attr, tok_val, 0,
                                              len(tok_ptr) - 1, out)
        np.testing.assert_array_equal(got, ref)
        assert scale != 1.0 or np.array_equal(got, _engine.state_scores_sparse(
            w, layout.attr_ptr, layout.attr_label, tok_ptr, tok_attr, ones, layout.n_labels))


@pytest.mark.parametrize("L", [1, 3, 4, 5, 8, 9, 12, 13, 16, 17, 23, 24, 40, 42])
def test_state_scores_add_entries_in_order_in_either_schedule(L):
    """Both schedules of state_scores_dense_range (sums in registers below
    eight labels, eight labels per vector instruction from eight on, the
    last chunk overlapping) give the bits of the twin: each token's entries in order, one rounding per term (FMA;
    two where the CPU has none), values or all ones (the values not read)."""
    rng = np.random.default_rng(L)
    n_attr, n_tok = 11, 9
    counts = rng.integers(0, 7, size=n_tok)
    counts[3] = 0  # a token without entries
    tok_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    tok_attr = rng.integers(0, n_attr, size=tok_ptr[-1]).astype(np.int32)
    w_attr = rng.normal(size=(n_attr, L))
    for tok_val in (rng.normal(size=tok_ptr[-1]), np.zeros(0)):
        fused = _naive.state_scores_in_order(w_attr, tok_ptr, tok_attr, tok_val)
        unfused = _naive.state_scores_in_order(w_attr, tok_ptr, tok_attr, tok_val, False)
        out = np.full((n_tok + 2, L), np.nan)
        _engine.state_scores_dense_range(w_attr, tok_ptr, tok_attr, tok_val, 1, n_tok,
                                         out[1:])
        assert np.isnan(out[0]).all() and np.isnan(out[-2:]).all()
        got = out[1:n_tok]
        assert np.array_equal(got, fused[1:]) or np.array_equal(got, unfused[1:])


@pytest.mark.parametrize("attr_bounds", [None, (0, 3), (0, 1, 4, 9)])
def test_entry_index_is_a_stable_sort_by_attribute_range(corpus, attr_bounds):
    encoded = corpus[0]
    tok_ptr, tok_attr = encoded.tok_ptr, encoded.tok_attr
    n_attr = encoded.n_attributes
    bounds = np.unique(np.clip([0, *(attr_bounds or ()), n_attr], 0, n_attr))
    range_of = np.searchsorted(bounds, tok_attr, side="right") - 1
    ref = np.argsort(range_of, kind="stable")
    token_of_entry = np.repeat(np.arange(encoded.n_tokens), np.diff(tok_ptr))
    for values in (encoded.tok_val, np.ones(len(tok_attr))):
        ptr, tok, attr, val = _engine.entry_index(tok_ptr, tok_attr, values, bounds)
        np.testing.assert_array_equal(
            ptr, np.r_[0, np.cumsum(np.bincount(range_of, minlength=len(bounds) - 1))]
        )
        np.testing.assert_array_equal(tok, token_of_entry[ref])
        np.testing.assert_array_equal(attr, tok_attr[ref])
        if np.all(values == 1.0):
            assert val.shape == (0,)  # all ones: not stored
        else:
            np.testing.assert_array_equal(val, values[ref])
        # with codes: each entry's attribute replaced by its code, the rest the same
        codes = (np.arange(n_attr, dtype=np.int32) * 7 - 11)
        coded = _engine.entry_index(tok_ptr, tok_attr, values, bounds, attr_code=codes)
        np.testing.assert_array_equal(coded.attr, codes[tok_attr[ref]])
        np.testing.assert_array_equal(coded.tok, tok)
        np.testing.assert_array_equal(coded.ptr, ptr)


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 18])
def test_entry_index_and_pair_frequencies_by_runs_of_tokens(monkeypatch, chunk):
    """Through the tokens by runs of about ``ENTRY_CHUNK`` entries (a token's
    entries in one run, tokens without entries, a token longer than a run):
    the bits of one pass, the stable sort and np.bincount."""
    from sklearn_crf._engine import scores

    monkeypatch.setattr(scores, "ENTRY_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    counts = rng.integers(0, 5, size=30)
    counts[[0, 4, 29]] = 0
    counts[10] = 12
    tok_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    n_attr, L = 13, 4
    tok_attr = rng.integers(0, n_attr, size=tok_ptr[-1]).astype(np.int32)
    labels = rng.integers(0, L, size=len(counts)).astype(np.int32)
    runs = scores._token_runs(tok_ptr)
    assert runs[0][0] == 0 and runs[-1][1] == len(counts)
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:]))
    token_of_entry = np.repeat(np.arange(len(counts)), counts)
    key = tok_attr.astype(np.int64) * L + labels[token_of_entry]
    bounds = np.array([0, 3, 4, 9, n_attr])
    ref = np.argsort(np.searchsorted(bounds, tok_attr, side="right") - 1, kind="stable")
    for values in (rng.normal(size=tok_ptr[-1]), np.ones(tok_ptr[-1])):
        index = _engine.entry_index(tok_ptr, tok_attr, values, bounds)
        np.testing.assert_array_equal(index.tok, token_of_entry[ref])
        np.testing.assert_array_equal(index.attr, tok_attr[ref])
        if index.val.shape[0]:
            np.testing.assert_array_equal(index.val, values[ref])
        freq, seen = _engine.pair_frequencies(tok_ptr, tok_attr, values, labels, n_attr, L)
        ref_freq = np.bincount(key, weights=values, minlength=n_attr * L)
        np.testing.assert_array_equal(freq.ravel(), ref_freq)  # in entry order
        np.testing.assert_array_equal(seen.ravel(), np.bincount(key, minlength=n_attr * L) > 0)


def _mixed_layout(rng, n_attr, L, several=(2, 3)):
    """attr_ptr / attr_label of attributes with no state parameter, one, or
    ``several`` (a choice of counts, at most L), labels increasing."""
    counts = rng.choice([0, 1, 1, *several], size=n_attr)
    counts = np.minimum(counts, L)
    counts[:3] = [0, 1, min(2, L)]  # each kind at least once
    attr_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    attr_label = np.concatenate(
        [np.sort(rng.choice(L, size=k, replace=False)) for k in counts]).astype(np.int32)
    return attr_ptr, attr_label


def _scatter(node, ent_tok, ent_attr, ent_val, calls, attr_ptr, attr_label,
             all_rows_bytes=0):
    """scatter_state_counts over ``calls`` ((k0, k1, tok0, node rows) each)
    into the CountRows of the layout (by default rows only for attributes
    with several parameters); the sums as a dense (n_attributes, L) matrix
    (0 where a pair has no parameter)."""
    L = node.shape[1]
    rows = _engine.count_rows(attr_ptr, attr_label, L, _dense_index(attr_ptr, attr_label, L),
                              all_rows_bytes=all_rows_bytes)
    g_rows = np.zeros((rows.n_rows, L))
    g_state = np.zeros(len(attr_label))
    codes = _codes(rows, ent_attr)
    for k0, k1, tok0, node_rows in calls:
        _engine.scatter_state_counts(node_rows, ent_tok, codes, ent_val, k0, k1, tok0,
                                     attr_label, g_rows, g_state)
    rows.gather(g_rows, g_state)
    return _on_params(g_state, attr_ptr, attr_label, L)


def _dense_index(attr_ptr, attr_label, L):
    """The flat index of each parameter in an (n_attributes, L) matrix."""
    return np.repeat(np.arange(len(attr_ptr) - 1), np.diff(attr_ptr)) * L + attr_label


def _codes(rows, ent_attr):
    """The CountRows codes of the entries' attributes (the attributes
    themselves when each is its own row)."""
    return rows.attr_code[ent_attr] if len(rows.attr_code) else ent_attr


def _on_params(values, attr_ptr, attr_label, L):
    """The per-parameter ``values`` as a dense (n_attributes, L) matrix."""
    out = np.zeros((len(attr_ptr) - 1, L))
    out[np.repeat(np.arange(len(attr_ptr) - 1), np.diff(attr_ptr)), attr_label] = values
    return out


def _params_of(dense, attr_ptr, attr_label):
    """A dense (n_attributes, L) matrix kept on the layout's parameters, 0 elsewhere."""
    L = dense.shape[1]
    pairs = np.repeat(np.arange(len(attr_ptr) - 1), np.diff(attr_ptr))
    return _on_params(dense[pairs, attr_label], attr_ptr, attr_label, L)


def test_count_rows_put_each_attribute_by_its_parameters():
    """A row for an attribute of several parameters (in attribute order), the
    parameter itself for one of one, nothing for one of none (past
    all_rows_bytes; below, every attribute its own row); the rows'
    parameters and their flat index."""
    attr_ptr = np.array([0, 0, 1, 4, 6, 7], dtype=np.int64)
    attr_label = np.array([2, 0, 1, 3, 1, 2, 0], dtype=np.int32)
    dense_index = _dense_index(attr_ptr, attr_label, 4)
    rows = _engine.count_rows(attr_ptr, attr_label, 4, dense_index, all_rows_bytes=0)
    assert rows.attr_code.tolist() == [_engine.scores.NO_ROW, -1, 0, 1, -7]
    assert rows.n_rows == 2
    assert [rows.row_range(a, a + 1) for a in range(5)] == [(0, 0), (0, 0), (0, 1), (1, 2),
                                                            (2, 2)]
    assert rows.row_index.tolist() == [0, 1, 3, 5, 6]
    g_state = np.full(7, -1.0)
    rows.gather(np.arange(8.0).reshape(2, 4), g_state)  # parameters 1 to 5 in rows
    assert g_state.tolist() == [-1.0, 0.0, 1.0, 3.0, 5.0, 6.0, -1.0]
    # a small matrix: every attribute its own row (attr_code empty)
    rows = _engine.count_rows(attr_ptr, attr_label, 4, dense_index)
    assert rows.attr_code.shape == (0,) and rows.n_rows == 5
    assert rows.row_range(1, 4) == (1, 4)
    assert rows.row_index is dense_index
    g_rows = np.arange(20.0).reshape(5, 4)
    rows.gather(g_rows, g_state)
    assert g_state.tolist() == g_rows.ravel()[dense_index].tolist()


@pytest.mark.parametrize("all_rows_bytes", [0, ALL_ROWS_BYTES])
@pytest.mark.parametrize("ones", [False, True])
def test_scatter_state_counts_matches_brute_force_for_any_ranges(corpus, ones,
                                                                 all_rows_bytes):
    """The expected state counts by entries: the same bits for any attribute
    ranges and any split of a range's entries, and the brute-force sums on
    every parameter (rows, single parameters, nothing for an attribute
    without; or every attribute its own row)."""
    encoded = corpus[0]
    tok_ptr, tok_attr = encoded.tok_ptr, encoded.tok_attr
    values = np.ones(len(tok_attr)) if ones else encoded.tok_val
    n_attr, L = encoded.n_attributes, 3
    rng = np.random.default_rng(3)
    node = rng.uniform(size=(encoded.n_tokens, L))
    attr_ptr, attr_label = _mixed_layout(rng, n_attr, L)
    ref = _params_of(_naive.state_counts(node, tok_ptr, tok_attr, values, n_attr),
                     attr_ptr, attr_label)
    results = []
    for bounds in ([0, n_attr], [0, 2, n_attr], [0, 1, 3, 5, n_attr]):
        index = _engine.entry_index(tok_ptr, tok_attr, values, np.array(bounds))
        calls = []
        for r in range(len(bounds) - 1):
            k0, k1 = index.ptr[r], index.ptr[r + 1]
            mid = (k0 + k1) // 2  # two calls for one range: the same sums
            calls += [(k0, mid, 0, node), (mid, k1, 0, node)]
        results.append(_scatter(node, index.tok, index.attr, index.val, calls, attr_ptr,
                                attr_label, all_rows_bytes))
    np.testing.assert_allclose(results[0], ref, rtol=1e-12, atol=1e-14)
    for g in results[1:]:
        np.testing.assert_array_equal(g, results[0])


@pytest.mark.parametrize("L", [3, 7, 8, 9, 15, 16, 17, 42])
def test_scatter_state_counts_adds_entries_in_order_in_either_schedule(L):
    """Below eight labels one sum at a time, from eight on eight labels per
    vector instruction with an overlapping last chunk (rows) and one sum (a
    single parameter): the bits of the twin either way (each entry's term
    added in order, one rounding per term with values; all ones: plain
    sums), attributes repeated across tokens; the rows and parameters of no
    entry untouched."""
    rng = np.random.default_rng(L)
    n_attr, n_tok, n_ent = 9, 12, 60
    node = rng.uniform(size=(n_tok, L))
    ent_tok = np.sort(rng.integers(0, n_tok, size=n_ent)).astype(np.int32)
    ent_attr = rng.integers(0, n_attr - 1, size=n_ent).astype(np.int32)  # the last: none
    attr_ptr, attr_label = _mixed_layout(rng, n_attr, L, several=(2, L))
    rows = _engine.count_rows(attr_ptr, attr_label, L, _dense_index(attr_ptr, attr_label, L),
                              all_rows_bytes=0)
    for ent_val in (rng.normal(size=n_ent), np.zeros(0)):
        twins = [_params_of(_naive.state_counts_in_order(node, ent_tok, ent_attr, ent_val,
                                                         n_attr, fused), attr_ptr, attr_label)
                 for fused in (True, False)]
        got = _scatter(node, ent_tok, ent_attr, ent_val, [(0, 25, 0, node), (25, n_ent, 0, node)],
                       attr_ptr, attr_label)
        assert any(np.array_equal(got, twin) for twin in twins)
        # padding beside the rows and the parameters stays as it was
        g_rows = np.full((rows.n_rows + 2, L), np.nan)
        g_rows[1:-1] = 0.0
        g_state = np.full(len(attr_label) + 2, np.nan)
        g_state[1:-1] = 0.0
        _engine.scatter_state_counts(node, ent_tok, _codes(rows, ent_attr), ent_val, 0, n_ent,
                                     0, attr_label, g_rows[1:-1], g_state[1:-1])
        assert np.isnan(g_rows[[0, -1]]).all() and np.isnan(g_state[[0, -1]]).all()
        # the same entries by groups of tokens, the node rows of each group alone
        # (its first token tok0 is row 0): the same bits
        calls = []
        for t0, t1 in ((0, 5), (5, 6), (6, n_tok)):
            k0, k1 = np.searchsorted(ent_tok, [t0, t1])
            calls.append((k0, k1, t0, node[t0:t1].copy()))
        grouped = _scatter(node, ent_tok, ent_attr, ent_val, calls, attr_ptr, attr_label)
        np.testing.assert_array_equal(grouped, got)


def test_state_scores_and_counts_of_a_large_matrix_keep_their_bits():
    """Past PREFETCH_BYTES the kernels prefetch the rows of the entries ahead
    (runs of tokens, runs of entries, the last run short; single parameters
    beside rows): the same bits as the twins."""
    from sklearn_crf._engine.scores import PREFETCH_BYTES

    L = 9
    n_attr = PREFETCH_BYTES // (8 * L) + 1000
    rng = np.random.default_rng(1)
    n_tok = 41
    tok_ptr = np.r_[0, np.cumsum(rng.integers(0, 9, size=n_tok))].astype(np.int64)
    tok_attr = rng.integers(0, n_attr, size=tok_ptr[-1]).astype(np.int32)
    tok_attr[::3] = 5  # a row shared by many tokens
    w_attr = rng.normal(size=(n_attr, L))
    node = rng.uniform(size=(n_tok, L))
    ent_tok = np.repeat(np.arange(n_tok, dtype=np.int32), np.diff(tok_ptr))
    # rows for all attributes but a few of one parameter or none
    counts = np.full(n_attr, L)
    counts[rng.choice(n_attr, size=n_attr // 50, replace=False)] = 1
    counts[:2] = [0, 1]
    attr_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    attr_label = np.concatenate([np.arange(k) if k == L else rng.integers(L, size=k)
                                 for k in counts]).astype(np.int32)
    rows = _engine.count_rows(attr_ptr, attr_label, L, _dense_index(attr_ptr, attr_label, L),
                              all_rows_bytes=0)
    assert rows.n_rows * L * 8 > PREFETCH_BYTES
    for tok_val in (rng.normal(size=tok_ptr[-1]), np.zeros(0)):
        out = np.empty((n_tok, L))
        _engine.state_scores_dense_range(w_attr, tok_ptr, tok_attr, tok_val, 0, n_tok, out)
        twins = [_naive.state_scores_in_order(w_attr, tok_ptr, tok_attr, tok_val, fused)
                 for fused in (True, False)]
        assert any(np.array_equal(out, twin) for twin in twins)
        g = _scatter(node, ent_tok, tok_attr, tok_val, [(0, tok_ptr[-1], 0, node)], attr_ptr,
                     attr_label)
        twins = [_params_of(_naive.state_counts_in_order(node, ent_tok, tok_attr, tok_val,
                                                         n_attr, fused), attr_ptr, attr_label)
                 for fused in (True, False)]
        assert any(np.array_equal(g, twin) for twin in twins)


@pytest.fixture
def corpus():
    from conftest import corpus_arrays, random_corpus

    return corpus_arrays(*random_corpus(0, n_seq=8))


def test_pair_frequencies_and_observed_counts_match_python_loops(corpus):
    from conftest import corpus_arrays, random_corpus

    X, y = random_corpus(4, n_seq=10)
    encoded, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    tok_ptr, tok_attr, tok_val = encoded.tok_ptr, encoded.tok_attr, encoded.tok_val
    seq_ptr = encoded.seq_ptr
    n_attr, L = len(layout.attr_ptr) - 1, layout.n_labels
    freq, seen = _engine.pair_frequencies(tok_ptr, tok_attr, tok_val, labels, n_attr, L)
    ref_freq = np.zeros((n_attr, L))
    ref_seen = np.zeros((n_attr, L), dtype=bool)
    for t in range(len(tok_ptr) - 1):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            ref_freq[tok_attr[k], labels[t]] += tok_val[k]
            ref_seen[tok_attr[k], labels[t]] = True
    np.testing.assert_allclose(freq, ref_freq)
    np.testing.assert_array_equal(seen, ref_seen)
    # the layout's state features are exactly the seen pairs (zero values included)
    # whose values do not sum to a negative number (CRFsuite's rule), attribute-major
    ref_seen[encoded.zero_attr, labels[encoded.zero_tok]] = True
    assert len(encoded.zero_tok) and (ref_freq < 0).any()  # both rules are exercised
    pairs = list(zip(layout.state_pairs(), layout.attr_label))
    assert pairs == [tuple(p) for p in np.argwhere(ref_seen & (ref_freq >= 0))]

    weights = np.linspace(0.5, 2.0, len(seq_ptr) - 1)
    observed = _engine.observed_counts(
        tok_ptr, tok_attr, tok_val, layout.attr_ptr, layout.attr_label,
        layout.transition_index(), labels, seq_ptr, weights, layout.n_params,
    )
    dense = np.zeros((n_attr, L))
    ref_trans = np.zeros((L, L))
    for s in range(len(seq_ptr) - 1):
        for t in range(seq_ptr[s], seq_ptr[s + 1]):
            for k in range(tok_ptr[t], tok_ptr[t + 1]):
                dense[tok_attr[k], labels[t]] += weights[s] * tok_val[k]
            if t > seq_ptr[s]:
                ref_trans[labels[t - 1], labels[t]] += weights[s]
    np.testing.assert_allclose(observed[: layout.n_state], dense.ravel()[layout.dense_index()])
    np.testing.assert_allclose(
        observed[layout.n_state :], ref_trans[layout.trans_from, layout.trans_to]
    )


def test_path_features_read_an_empty_tok_val_as_ones():
    """add_path_features (and observed_counts by it) with an empty tok_val:
    the bits and active indices of all ones, which the twin
    (_naive.feature_vector) counts."""
    import dataclasses

    from conftest import corpus_arrays, random_corpus

    X, y = random_corpus(5, n_seq=10)
    encoded, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    ones = dataclasses.replace(encoded, tok_val=np.ones(len(encoded.tok_attr)))
    seq_ptr, trans = encoded.seq_ptr, layout.transition_index()
    weights = np.linspace(0.5, 2.0, len(seq_ptr) - 1)
    counts = [
        _engine.observed_counts(encoded.tok_ptr, encoded.tok_attr, tok_val,
                                layout.attr_ptr, layout.attr_label, trans, labels,
                                seq_ptr, weights, layout.n_params)
        for tok_val in (ones.tok_val, np.zeros(0))
    ]
    np.testing.assert_array_equal(counts[1], counts[0])
    rng = np.random.default_rng(5)
    for s in range(len(seq_ptr) - 1):
        start, n = seq_ptr[s], seq_ptr[s + 1] - seq_ptr[s]
        path = rng.integers(layout.n_labels, size=n).astype(np.int32)
        got = []
        for kernel in (_engine.add_path_features, _engine.add_path_features_exact):
            for tok_val in (ones.tok_val, np.zeros(0)):
                vec = np.zeros(layout.n_params)
                actives = np.zeros(200, dtype=np.int64)
                m = kernel(vec, 0.7, path, start, n, encoded.tok_ptr, encoded.tok_attr,
                           tok_val, layout.attr_ptr, layout.attr_label, trans, actives, 0)
                got.append((vec, actives[:m]))
        for vec, actives in got[1:]:
            np.testing.assert_array_equal(vec, got[0][0])
            np.testing.assert_array_equal(actives, got[0][1])
        np.testing.assert_allclose(got[0][0], 0.7 * _naive.feature_vector(layout, ones, s, path))


def test_transition_gradient_adds_blocks_in_order():
    """transition_gradient: the blocks' sums added one after the other from the
    first (the bits of a loop), times exp_trans; then the log-space edge sums."""
    rng = np.random.default_rng(5)
    L, n_blocks = 5, 37
    outer = rng.random((n_blocks, 4, L, L))
    exp_trans = rng.random((L, L))
    sums = np.zeros((4, L, L))
    for b in range(n_blocks):
        sums += outer[b]
    want = ((sums[0] + sums[1]) + (sums[2] + sums[3])) * exp_trans
    got = _engine.transition_gradient(exp_trans, outer, np.zeros((n_blocks, L, L)))
    assert np.array_equal(got, want)
    edge = rng.random((n_blocks, L, L))
    edge_sum = np.zeros((L, L))
    for b in range(n_blocks):
        edge_sum += edge[b]
    got = _engine.transition_gradient(exp_trans, outer, edge)
    assert np.array_equal(got, want + edge_sum)


@pytest.mark.parametrize("chunk", [1, 5, 1 << 18])
def test_attribute_counts_are_bincount_by_chunks(monkeypatch, chunk):
    from sklearn_crf._engine import scores
    from sklearn_crf._engine.scores import attribute_counts

    monkeypatch.setattr(scores, "ENTRY_CHUNK", chunk)
    tok_attr = np.random.default_rng(chunk).integers(0, 9, size=23).astype(np.int32)
    counts = attribute_counts(tok_attr, 11)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, np.bincount(tok_attr, minlength=11))
    np.testing.assert_array_equal(attribute_counts(tok_attr[:0], 11), np.zeros(11))
