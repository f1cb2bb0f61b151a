"""The fit's forward-backward over lanes of sentences (sklearn_crf._engine.lanes)."""

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_crf import _engine
from sklearn_crf._engine import lanes

import _naive

#: lengths 1 to 7 and a few more: two groups of lanes in one block, the last
#: one padded (shorter sentences beside longer ones, empty lanes)
LENGTHS = [3, 1, 7, 5, 0, 2, 6, 4, 4, 7, 1, 2, 5]
#: the same for eight labels and more (L**3 paths at most)
SHORT = [3, 1, 3, 2, 0, 2, 3, 1, 3, 3, 1, 2, 2]


def _blocks(scores, trans, seq_ptr, weights, block_ptr):
    """forward_backward_blocks: (node, seq_log_z, block_log_z, edge sums)."""
    n_blocks = len(block_ptr) - 1
    L = trans.shape[0]
    node = scores.copy()
    seq_log_z = np.full(len(seq_ptr) - 1, np.nan)
    block_log_z = np.full(n_blocks, np.nan)
    block_outer = np.full((n_blocks, 4, L, L), np.nan)
    block_edge = np.full((n_blocks, L, L), np.nan)
    max_len = int(np.max(np.diff(seq_ptr), initial=1))
    _engine.forward_backward_blocks(node, trans, seq_ptr, weights, block_ptr, 0, n_blocks,
                                    max_len, seq_log_z, block_log_z, block_outer, block_edge)
    edges = _engine.transition_gradient(_engine.transition_terms(trans).exp_trans,
                                        block_outer, block_edge)
    return node, seq_log_z, block_log_z, edges


def _case(seed, L, lengths=LENGTHS, scale=1.0):
    rng = np.random.default_rng(seed)
    seqs = [_naive.random_crf(rng, n, L, scale=scale)[0] for n in lengths]
    trans = rng.normal(scale=scale, size=(L, L))
    scores, seq_ptr = _naive.batch(seqs, L)
    weights = rng.uniform(0.5, 2.0, size=len(lengths))
    weights[::4] = 1.0
    weights[5] = 0.0
    return scores, trans, seq_ptr, weights


@pytest.mark.parametrize("L", [1, 2, 3, 4, 8, 9, 13, 17])
@pytest.mark.parametrize("blocks", [1, 3])
def test_lanes_match_brute_force(L, blocks):
    """log Z, weighted node marginals, Σ v log Z and the weighted edge sums of
    sentences of 1 to 7 tokens (1 to 3 from eight labels on: the sums eight
    and four a pass, the edge sums two rows at a time) in padded groups of
    lanes, against enumeration."""
    lengths = LENGTHS if L < 8 else SHORT
    scores, trans, seq_ptr, weights = _case(L, L, lengths)
    n_seq = len(lengths)
    block_ptr = np.linspace(0, n_seq, blocks + 1).astype(np.int64)
    node, seq_log_z, block_log_z, edges = _blocks(scores, trans, seq_ptr, weights, block_ptr)
    edge_ref = np.zeros((L, L))
    acc = np.zeros(blocks)
    for s in range(n_seq):
        a, e = seq_ptr[s], seq_ptr[s + 1]
        b = np.searchsorted(block_ptr, s, side="right") - 1
        if e == a or weights[s] == 0.0:
            assert seq_log_z[s] == 0.0 and not node[a:e].any()
            continue
        log_z = _naive.log_partition(scores[a:e], trans)
        node_ref, edge_s = _naive.marginals(scores[a:e], trans)
        assert seq_log_z[s] == pytest.approx(log_z, rel=1e-12)
        np.testing.assert_allclose(node[a:e], weights[s] * node_ref, rtol=1e-10, atol=1e-14)
        edge_ref += weights[s] * edge_s[1:].sum(axis=0)
        acc[b] += weights[s] * log_z
    np.testing.assert_allclose(block_log_z, acc, rtol=1e-12)
    np.testing.assert_allclose(edges, edge_ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("L", [1, 3, 9, 13])
def test_a_sentence_gets_the_same_bits_in_any_lane(L):
    """Whatever its lane, group and neighbours, a sentence's log Z and node
    marginals are bitwise those of the one-sequence kernel on it alone."""
    rng = np.random.default_rng(L)
    lengths = rng.integers(1, 12, size=21)
    seqs = [_naive.random_crf(rng, n, L, scale=2.0)[0] for n in lengths]
    trans = rng.normal(scale=2.0, size=(L, L))
    tt = _engine.transition_terms(trans)
    for order in (np.arange(len(seqs)), rng.permutation(len(seqs)), [4], [4, 0]):
        scores, seq_ptr = _naive.batch([seqs[k] for k in order], L)
        weights = np.ones(len(order))
        block_ptr = np.array([0, len(order)], dtype=np.int64)
        node, seq_log_z, _, _ = _blocks(scores, trans, seq_ptr, weights, block_ptr)
        for s, k in enumerate(order):
            n = lengths[k]
            ref = np.empty((n, L))
            log_z = _engine.expected_counts_sequence(
                seqs[k], tt, n, _engine.scaled_workspace(n, L), 1.0, ref, np.zeros((L, L)),
                np.zeros((4, L, L)))
            assert seq_log_z[s] == log_z
            np.testing.assert_array_equal(node[seq_ptr[s]:seq_ptr[s + 1]], ref)


@pytest.mark.parametrize("L", [2, 4])
def test_lanes_gradient_matches_finite_differences(L):
    """Σ v log Z (block_log_z) differentiated by finite differences: its
    derivative in a state score is the weighted node marginal, in a transition
    the weighted edge sum; sentences of 1 to 7 tokens, padded lanes, weights."""
    scores, trans, seq_ptr, weights = _case(10 + L, L)
    block_ptr = np.array([0, len(LENGTHS)], dtype=np.int64)
    node, _, _, edges = _blocks(scores, trans, seq_ptr, weights, block_ptr)

    def total(sc, tr):
        return _blocks(sc, tr, seq_ptr, weights, block_ptr)[2].sum()

    eps = 1e-6
    rng = np.random.default_rng(L)
    for t in rng.choice(scores.shape[0], size=8, replace=False):
        j = rng.integers(L)
        d = np.zeros_like(scores)
        d[t, j] = eps
        num = (total(scores + d, trans) - total(scores - d, trans)) / (2 * eps)
        assert num == pytest.approx(node[t, j], rel=1e-6, abs=1e-8)
    for i in range(L):
        for j in range(L):
            d = np.zeros_like(trans)
            d[i, j] = eps
            num = (total(scores, trans + d) - total(scores, trans - d)) / (2 * eps)
            assert num == pytest.approx(edges[i, j], rel=1e-6, abs=1e-8)


def test_declining_lanes_fall_back_to_log_space_exactly():
    """Sentences whose spread is beyond MAX_SCALED_SPREAD, in groups with ones
    that scale: the first get the log-space kernels' bits, the others the
    one-sequence scaled kernel's, the edge sums brute force's."""
    L = 3
    scores, trans, seq_ptr, weights = _case(3, L)
    big = [2, 6, 9]
    for s in big:
        scores[seq_ptr[s]:seq_ptr[s + 1]] *= 400.0
    block_ptr = np.array([0, len(LENGTHS)], dtype=np.int64)
    node, seq_log_z, block_log_z, edges = _blocks(scores, trans, seq_ptr, weights, block_ptr)
    tt = _engine.transition_terms(trans)
    edge_ref = np.zeros((L, L))
    for s, n in enumerate(LENGTHS):
        a, e = seq_ptr[s], seq_ptr[s + 1]
        if n == 0 or weights[s] == 0.0:
            continue
        ref = np.empty((n, L))
        if s in big:
            la, lb, lc = np.empty((n, L)), np.empty((n, L)), np.empty(n)
            log_z = _engine.forward_backward_log(scores[a:e], trans, n, la, lb, lc)
            _engine.node_marginals_log(n, la, lb, ref)
        else:
            log_z = _engine.expected_counts_sequence(
                scores[a:e], tt, n, _engine.scaled_workspace(n, L), 1.0, ref,
                np.zeros((L, L)), np.zeros((4, L, L)))
            assert np.isfinite(_engine.forward_scaled(scores[a:e], tt, n,
                                                      _engine.scaled_workspace(n, L)))
        assert seq_log_z[s] == log_z
        if weights[s] != 1.0:
            ref *= weights[s]
        np.testing.assert_array_equal(node[a:e], ref)
        edge_ref += weights[s] * _naive.marginals(scores[a:e], trans)[1][1:].sum(axis=0)
    assert block_log_z[0] == pytest.approx((weights * seq_log_z).sum(), rel=1e-14)
    np.testing.assert_allclose(edges, edge_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("decline", [False, True])
def test_a_sentence_too_long_for_the_lanes_runs_alone_with_the_same_numbers(decline):
    """Sentences longer than longest_in_lanes(L), in a block with short
    ones: each long one gets the bits of the one-sequence kernels (scaled, or
    log space where its spread declines scaling), its neighbours theirs as
    in lanes, the edge sums those of the one-sequence kernels; the lane
    buffers hold longest_in_lanes(L) positions, not the longest sentence."""
    L = 64
    cap = lanes.longest_in_lanes(L)
    assert cap == lanes.LANE_BUFFER_BYTES // (3 * 8 * L * lanes.LANES)
    lengths = [3, cap + 40, 5, 0, 2, cap + 1, 7, cap, 1]
    rng = np.random.default_rng(7)
    seqs = [_naive.random_crf(rng, n, L)[0] for n in lengths]
    if decline:
        seqs[5][3, 0] = 800.0  # a spread beyond MAX_SCALED_SPREAD
    trans = rng.normal(size=(L, L))
    scores, seq_ptr = _naive.batch(seqs, L)
    weights = rng.uniform(0.5, 2.0, size=len(lengths))
    weights[1] = 1.0
    block_ptr = np.array([0, len(lengths)], dtype=np.int64)
    node, seq_log_z, block_log_z, edges = _blocks(scores, trans, seq_ptr, weights, block_ptr)
    tt = _engine.transition_terms(trans)
    outer, edge_sum = np.zeros((4, L, L)), np.zeros((L, L))
    for s, n in enumerate(lengths):
        if n == 0:
            continue
        ref = np.empty((n, L))
        log_z = _engine.expected_counts_sequence(
            seqs[s], tt, n, _engine.scaled_workspace(n, L), weights[s], ref, edge_sum, outer)
        assert seq_log_z[s] == log_z
        np.testing.assert_array_equal(node[seq_ptr[s]:seq_ptr[s + 1]], ref * weights[s])
    edge_ref = _engine.transition_gradient(tt.exp_trans, outer[None], edge_sum[None])
    np.testing.assert_allclose(edges, edge_ref, rtol=1e-10, atol=1e-12)
    assert block_log_z[0] == pytest.approx((weights * seq_log_z).sum(), rel=1e-14)
    lw = lanes.lane_workspace(cap + 40, len(lengths), L)
    assert lanes.lane_capacity(lw) == (cap, len(lengths))
    assert lw.exp_scores.nbytes * 3 <= lanes.LANE_BUFFER_BYTES


def test_forbidden_first_and_last_labels_go_to_log_space():
    """gradient_blocks_scaled with labels forbidden on the first and last
    tokens (-inf state scores there: scaling declines) and the log-space
    completion give the constrained distribution of brute force."""
    L = 3
    scores, trans, seq_ptr, weights = _case(4, L)
    n_seq = len(LENGTHS)
    block_ptr = np.array([0, 6, n_seq], dtype=np.int64)
    start = np.array([True, False, True])
    end = np.array([False, True, True])
    node = scores.copy()
    seq_log_z = np.zeros(n_seq)
    block_log_z = np.zeros(2)
    block_outer = np.zeros((2, 4, L, L))
    block_edge = np.zeros((2, L, L))
    exp_trans = np.zeros((L, L))
    max_len = max(LENGTHS)
    no_ints, no_ids, no_rows = np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros((0, L))
    lw = _engine.lane_workspace(max_len, int(np.max(np.diff(block_ptr))), L)
    first = 0
    while first < 2:
        b = _engine.gradient_blocks_scaled(
            no_rows, no_ints, no_ids, np.zeros(0), False, np.flatnonzero(~start),
            np.flatnonzero(~end), trans, seq_ptr, weights, block_ptr, first, 2, lw, node,
            seq_log_z, block_log_z, block_outer, block_edge, False, no_ids, no_ids,
            np.zeros(0), 0, no_ids, no_rows, np.zeros(0), exp_trans)
        if b == 2:
            break
        _engine.forward_backward_blocks_log(node, trans, seq_ptr, weights, block_ptr, b,
                                            b + 1, max_len, seq_log_z, block_log_z, block_edge)
        first = b + 1
    edges = _engine.transition_gradient(exp_trans, block_outer, block_edge)
    edge_ref = np.zeros((L, L))
    for s, n in enumerate(LENGTHS):
        a, e = seq_ptr[s], seq_ptr[s + 1]
        if n == 0 or weights[s] == 0.0:
            continue
        paths, total = _naive.allowed_paths(scores[a:e], trans, start=start, end=end)
        assert seq_log_z[s] == pytest.approx(logsumexp(total), rel=1e-12)
        p = weights[s] * np.exp(total - logsumexp(total))
        ref = np.zeros((n, L))
        for t in range(n):
            np.add.at(ref[t], paths[:, t], p)
            if t:
                np.add.at(edge_ref, (paths[:, t - 1], paths[:, t]), p)
        np.testing.assert_allclose(node[a:e], ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(edges, edge_ref, rtol=1e-10, atol=1e-13)


def test_lane_groups_hold_eight_sentences():
    """The lane width is the vector type's: a group of LANES sentences fills
    one f64x8."""
    from sklearn_crf._engine.simd import WIDTH

    assert lanes.LANES == WIDTH == 8


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("dense", [False, True])
def test_fits_are_bitwise_identical_at_one_two_and_three_threads(monkeypatch, dense):
    """CRFTagger fits over several blocks of lanes (small blocks), with sample
    weights and dense features (whose state scores reach the lanes already
    summed: the with_scores=False route): the same coef_ at 1, 2 and 3
    threads."""
    from sklearn_crf import CRFTagger
    from sklearn_crf._engine import driver

    from conftest import random_corpus

    monkeypatch.setattr(driver, "BLOCK_TOKENS", 40)
    X, y = random_corpus(12, n_seq=120, max_len=9, n_labels=4)
    X, y = [x for x in X if x], [t for t in y if t]  # dense rows: no empty sentence
    rng = np.random.default_rng(12)
    sample_weight = rng.uniform(0.5, 2.0, size=len(X))
    if dense:  # (feature dicts, dense rows) per sentence
        X = [(seq, rng.normal(size=(len(seq), 3))) for seq in X]
    coefs = []
    for n_jobs in (1, 2, 3):
        model = CRFTagger(max_iter=15, c1=0.0, c2=0.1, n_jobs=n_jobs)
        model.fit(X, y, sample_weight=sample_weight)
        coefs.append(model.coef_.copy())
    if dense:
        assert model.n_dense_features_ == 3
    for coef in coefs[1:]:
        np.testing.assert_array_equal(coef, coefs[0])


def test_transposes_move_eight_rows_of_eight_and_skip_negative_rows():
    """vtranspose_load gathers eight rows (any flat offsets) into columns;
    vtranspose_store writes columns back as rows, skipping lanes whose row
    offset is negative; element reads without the negative-index wrap."""
    from numba import njit

    from sklearn_crf._engine.simd import element, vtranspose_load, vtranspose_store

    @njit
    def load(src, rows, c, dst, d):
        vtranspose_load(src, rows, c, dst, d)

    @njit
    def store(src, s, dst, rows, c):
        vtranspose_store(src, s, dst, rows, c)

    @njit
    def at(a, k):
        return element(a, k)

    rng = np.random.default_rng(0)
    L = 11
    src = rng.normal(size=(20, L))
    rows = (rng.integers(0, 20, size=8) * L).astype(np.int64)
    dst = np.zeros((3, 8, 8))
    load(src, rows, 2, dst, 64)
    cols = np.stack([src.ravel()[r + 2:r + 10] for r in rows], axis=1)  # (k, w)
    np.testing.assert_array_equal(dst[1], cols)
    assert not dst[0].any() and not dst[2].any()
    out = np.full((20, L), np.nan)
    back = np.arange(8, dtype=np.int64) * 2 * L
    back[3] = -1
    store(dst, 64, out, back, 1)
    for w in range(8):
        written = out.ravel()[w * 2 * L + 1:w * 2 * L + 9]
        if w == 3:
            assert np.isnan(written).all()
        else:
            np.testing.assert_array_equal(written, cols[:, w])
    assert np.isnan(out[1::2]).all()  # the rows between: untouched
    assert at(rows, 5) == rows[5] and at(src.ravel(), 7) == src.ravel()[7]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("n_labels", [9, 17])
def test_fits_with_eight_labels_or_more_are_bitwise_identical_at_one_two_and_three_threads(
        monkeypatch, n_labels):
    """From eight labels on the state scores, the counts and the lane copies
    run eight labels per vector instruction (chunks overlapping at the end):
    the same coef_ at 1, 2 and 3 threads, with values other than 1."""
    from sklearn_crf import CRFTagger
    from sklearn_crf._engine import driver

    from conftest import random_corpus

    monkeypatch.setattr(driver, "BLOCK_TOKENS", 60)
    X, y = random_corpus(n_labels, n_seq=150, max_len=11, n_labels=n_labels, n_words=30)
    coefs = []
    for n_jobs in (1, 2, 3):
        model = CRFTagger(max_iter=10, c1=0.0, c2=0.1, n_jobs=n_jobs)
        model.fit(X, y)
        coefs.append(model.coef_.copy())
    assert len(model.classes_) == n_labels
    for coef in coefs[1:]:
        np.testing.assert_array_equal(coef, coefs[0])
