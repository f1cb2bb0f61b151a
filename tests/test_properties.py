"""Property tests (hypothesis) of the kernels and of CRFTagger on random small CRFs.

Brute force over all label paths checks short sequences (T <= 6, L <= 4);
longer ones (up to a few hundred tokens) check the identities that need no
enumeration: marginals sum to one, edge and node marginals agree, the Viterbi
score is the score of the Viterbi path and at most log Z, shifting scores
shifts log Z and nothing else, and batching, chunking and the scaled / log-space
schemes do not change results.

Scores and transitions stay within ±50 for the short sequences and have a
standard deviation of at most 5 for the long ones: beyond that the scaled
scheme can lose a path to underflow (short sequences with weights of 300-1000,
or a path whose log-weight ratio wanders past -708 and back on long ones), the
bug that ``test_reliability.py`` pins (partial underflow, now handled by the
spread bound of ``forward_scaled``).
"""

import contextlib
import copy
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sklearn_crf import CRFTagger, _engine
from sklearn_crf._engine.threads import MIN_TOKENS_PER_THREAD

import _naive
from conftest import random_corpus

UNIT = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)
SCALES = [0.1, 1.0, 10.0, 50.0]  # short sequences: values uniform in ±scale
LONG_SCALES = [0.1, 1.0, 5.0]  # long sequences: normal with this standard deviation


@contextlib.contextmanager
def _one_thread():
    """Many tiny kernel calls: waking worker threads for each would dominate (the chunks
    still run, one after another; CRFTagger does the same for small inputs)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _forbid(trans, forbidden):
    """-inf where forbidden, except on the diagonal, so that every length has a path."""
    forbidden = forbidden.copy()
    np.fill_diagonal(forbidden, False)
    trans = trans.copy()
    trans[forbidden] = -np.inf
    return trans


@st.composite
def small_crfs(draw, max_len=6, max_labels=4):
    """Up to 4 sequences (some possibly empty) sharing one transition matrix."""
    L = draw(st.integers(1, max_labels))
    scale = draw(st.sampled_from(SCALES))
    trans = draw(hnp.arrays(np.float64, (L, L), elements=UNIT)) * scale
    trans = _forbid(trans, draw(hnp.arrays(np.bool_, (L, L))))
    lengths = draw(st.lists(st.integers(0, max_len), min_size=1, max_size=4))
    seqs = [draw(hnp.arrays(np.float64, (n, L), elements=UNIT)) * scale for n in lengths]
    return seqs, trans, scale


@st.composite
def long_crfs(draw, max_len=400, max_labels=6):
    """Longer sequences from a seeded generator (values are not worth shrinking)."""
    L = draw(st.integers(1, max_labels))
    scale = draw(st.sampled_from(LONG_SCALES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lengths = draw(st.lists(st.integers(0, max_len), min_size=1, max_size=3))
    trans = rng.normal(scale=scale, size=(L, L))
    if draw(st.booleans()):
        trans = _forbid(trans, rng.random((L, L)) < 0.3)
    seqs = [rng.normal(scale=scale, size=(n, L)) for n in lengths]
    return seqs, trans, scale


def _path_score(scores, trans, path):
    return math.fsum(scores[np.arange(len(path)), path]) + math.fsum(trans[path[:-1], path[1:]])


def _check_marginal_identities(node, edge, trans, atol):
    """Rows sum to 1; edges sum to the nodes on either side; forbidden edges are 0."""
    assert np.isfinite(node).all() and np.isfinite(edge).all()
    assert (node >= 0).all() and (edge >= 0).all()
    np.testing.assert_allclose(node.sum(axis=1), 1.0, rtol=0, atol=atol)
    if len(node) > 1:
        np.testing.assert_allclose(edge[1:].sum(axis=1), node[1:], rtol=0, atol=atol)
        np.testing.assert_allclose(edge[1:].sum(axis=2), node[:-1], rtol=0, atol=atol)
        assert (edge[1:][:, np.isneginf(trans)] == 0).all()


@settings(max_examples=300, deadline=None)
@given(crf=small_crfs(), n_chunks=st.integers(1, 3))
def test_marginals_and_log_z_equal_brute_force(crf, n_chunks):
    seqs, trans, scale = crf
    scores, seq_ptr = _naive.batch(seqs, trans.shape[0])
    with _one_thread():
        log_z, node, edge = _engine.forward_backward_batch(
            scores, trans, seq_ptr, True, n_chunks
        )
    tol = 1e-12 * max(1.0, scale) * 10
    for s, seq in enumerate(seqs):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            assert log_z[s] == 0.0
            continue
        _check_marginal_identities(node[a:b], edge[a:b], trans, atol=tol)
        assert log_z[s] == pytest.approx(_naive.log_partition(seq, trans), rel=1e-12, abs=tol)
        node_ref, edge_ref = _naive.marginals(seq, trans)
        np.testing.assert_allclose(node[a:b], node_ref, rtol=0, atol=tol)
        np.testing.assert_allclose(edge[a + 1 : b], edge_ref[1:], rtol=0, atol=tol)


@settings(max_examples=300, deadline=None)
@given(crf=small_crfs(), n_chunks=st.integers(1, 3))
def test_viterbi_score_is_the_brute_force_maximum(crf, n_chunks):
    seqs, trans, scale = crf
    scores, seq_ptr = _naive.batch(seqs, trans.shape[0])
    with _one_thread():
        labels, best = _engine.viterbi_batch(scores, trans, seq_ptr, n_chunks)
        log_z, _, _ = _engine.forward_backward_batch(scores, trans, seq_ptr, False, n_chunks)
    for s, seq in enumerate(seqs):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            continue
        tol = 1e-12 * max(1.0, scale) * len(seq)
        path = labels[a:b]
        assert np.isfinite(trans[path[:-1], path[1:]]).all()  # no forbidden transition
        _, brute_best = _naive.best_path(seq, trans)
        assert best[s] == pytest.approx(brute_best, rel=1e-12, abs=tol)
        assert _path_score(seq, trans, path) == pytest.approx(brute_best, rel=1e-12, abs=tol)
        # log Z = log Σ exp(path scores) is at least the best one, at most that + n log L
        assert best[s] - tol <= log_z[s] <= best[s] + len(seq) * math.log(trans.shape[0]) + tol


@settings(max_examples=150, deadline=None)
@given(crf=long_crfs(), n_chunks=st.integers(1, 3))
def test_long_sequences_identities(crf, n_chunks):
    seqs, trans, scale = crf
    L = trans.shape[0]
    scores, seq_ptr = _naive.batch(seqs, L)
    log_z, node, edge = _engine.forward_backward_batch(scores, trans, seq_ptr, True, n_chunks)
    labels, best = _engine.viterbi_batch(scores, trans, seq_ptr, n_chunks)
    for s, seq in enumerate(seqs):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        n = b - a
        if n == 0:
            continue
        tol = 1e-12 * max(1.0, scale) * n
        _check_marginal_identities(node[a:b], edge[a:b], trans, atol=1e-11 * max(1.0, scale))
        path = labels[a:b]
        assert np.isfinite(trans[path[:-1], path[1:]]).all()
        assert _path_score(seq, trans, path) == pytest.approx(best[s], rel=1e-12, abs=tol)
        assert best[s] - tol <= log_z[s] <= best[s] + n * math.log(L) + tol


@settings(max_examples=100, deadline=None)
@given(crf=long_crfs())
def test_scaled_and_log_space_schemes_agree(crf):
    seqs, trans, _ = crf
    L = trans.shape[0]
    tt = _engine.transition_terms(trans)
    for seq in seqs:
        n = len(seq)
        if n == 0:
            continue
        node_s, edge_s = np.zeros((n, L)), np.zeros((n, L, L))
        log_z_s = _engine.marginals_scaled(
            seq, tt, n, _engine.scaled_workspace(n, L), node_s, edge_s
        )
        node_l, edge_l = np.zeros((n, L)), np.zeros((n, L, L))
        log_z_l = _engine.marginals_log(seq, trans, n, node_l, edge_l)
        if np.isnan(log_z_s):  # scaling may decline (e.g. a state decays geometrically
            continue  # behind forbidden transitions); callers then use log space
        assert log_z_s == pytest.approx(log_z_l, rel=1e-12, abs=1e-12 * n)
        np.testing.assert_allclose(node_s, node_l, rtol=0, atol=1e-9)
        np.testing.assert_allclose(edge_s, edge_l, rtol=0, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(crf=long_crfs(max_len=60), data=st.data())
def test_shifting_scores_shifts_log_z_and_nothing_else(crf, data):
    """Adding c[t] to every label's score at t adds Σ c to log Z and to the best score."""
    seqs, trans, scale = crf
    L = trans.shape[0]
    scores, seq_ptr = _naive.batch(seqs, L)
    shift = data.draw(hnp.arrays(np.float64, (len(scores),), elements=UNIT)) * 10 * scale
    t_shift = data.draw(UNIT) * scale
    shifted = scores + shift[:, None]
    log_z, node, edge = _engine.forward_backward_batch(scores, trans, seq_ptr, True, 1)
    log_z2, node2, edge2 = _engine.forward_backward_batch(
        shifted, trans + t_shift, seq_ptr, True, 1
    )
    _, best = _engine.viterbi_batch(scores, trans, seq_ptr, 1)
    labels2, best2 = _engine.viterbi_batch(shifted, trans + t_shift, seq_ptr, 1)
    for s in range(len(seqs)):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            continue
        total = math.fsum(shift[a:b]) + (b - a - 1) * t_shift
        tol = 1e-11 * (max(1.0, scale) * (b - a) + abs(total))
        assert log_z2[s] == pytest.approx(log_z[s] + total, rel=1e-12, abs=tol)
        assert best2[s] == pytest.approx(best[s] + total, rel=1e-12, abs=tol)
        assert _path_score(scores[a:b], trans, labels2[a:b]) == pytest.approx(best[s], abs=tol)
    np.testing.assert_allclose(node2, node, rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge2, edge, rtol=0, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(crf=long_crfs(max_len=50), n_chunks=st.integers(1, 4), data=st.data())
def test_kernels_do_not_depend_on_batching(crf, n_chunks, data):
    """Each sequence alone, or in any order, gives bitwise the same results."""
    seqs, trans, _ = crf
    L = trans.shape[0]
    order = data.draw(st.permutations(range(len(seqs))))
    scores, seq_ptr = _naive.batch([seqs[i] for i in order], L)
    log_z, node, edge = _engine.forward_backward_batch(scores, trans, seq_ptr, True, n_chunks)
    labels, best = _engine.viterbi_batch(scores, trans, seq_ptr, n_chunks)
    for k, i in enumerate(order):
        a, b = seq_ptr[k], seq_ptr[k + 1]
        one, one_ptr = _naive.batch([seqs[i]], L)
        lz1, node1, edge1 = _engine.forward_backward_batch(one, trans, one_ptr, True, 1)
        labels1, best1 = _engine.viterbi_batch(one, trans, one_ptr, 1)
        assert lz1[0] == log_z[k] and best1[0] == best[k]
        assert np.array_equal(node1, node[a:b]) and np.array_equal(edge1, edge[a:b])
        assert np.array_equal(labels1, labels[a:b])


# --------------------------------------------------------------------------
# CRFTagger: predictions do not depend on the order or grouping of sequences
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def taggers():
    """Models that differ only in n_jobs, and a test set large enough for 2 threads."""
    X, y = random_corpus(21, n_seq=40, max_len=7, n_labels=4)
    base = CRFTagger(c1=0.05, c2=0.05, all_possible_transitions=True, n_jobs=1).fit(X, y)
    X_test, _ = random_corpus(22, n_seq=3000, max_len=9, n_labels=4, n_words=9)  # unseen words
    X_test[3] = []
    X_test[7] = [{"never": "seen"}, {}]
    assert sum(map(len, X_test)) >= 2 * MIN_TOKENS_PER_THREAD
    models = {}
    for n_jobs in (1, 2, None):
        crf = copy.deepcopy(base).set_params(n_jobs=n_jobs)
        models[n_jobs] = (crf, crf.predict(X_test), crf.predict_marginals(X_test))
    return models, X_test


@settings(max_examples=30, deadline=None)
@given(
    n_jobs=st.sampled_from([1, 2, None]),
    seed=st.integers(0, 2**32 - 1),
    cuts=st.lists(st.integers(0, 3000), max_size=6),
)
def test_tagger_predictions_do_not_depend_on_order_or_grouping(taggers, n_jobs, seed, cuts):
    models, X = taggers
    crf, pred, marg = models[n_jobs]
    order = np.random.default_rng(seed).permutation(len(X)).tolist()
    shuffled = [X[i] for i in order]
    bounds = [0, *sorted(cuts), len(X)]
    parts = [shuffled[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    pred_parts = [p for part in parts for p in crf.predict(part)]
    marg_parts = [m for part in parts for m in crf.predict_marginals(part)]
    assert pred_parts == [pred[i] for i in order]
    assert marg_parts == [marg[i] for i in order]  # bitwise: the same floats
    assert models[1][1] == pred and models[1][2] == marg  # whatever the thread count
