"""Decoding: n-best, constraints, forced labels, probabilities, entities.

Every kernel result is checked against brute force over all the allowed label
paths of small random CRFs (``tests/_naive.py``).
"""

import itertools

import numpy as np
import pytest

from sklearn_crf import _decoding, _kernels
from sklearn_crf._constraints import SCHEMES, TransitionConstraints, build_constraints

import _naive

TOL = 1e-10


def random_problem(seed, n, L, constrained=True):
    """Random continuous scores of one sequence and random constraints."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(scale=2.0, size=(n, L))
    trans = rng.normal(scale=2.0, size=(L, L))
    if not constrained:
        return scores, trans, None, None
    allowed = rng.random((L, L)) < 0.7
    start = rng.random(L) < 0.8
    end = rng.random(L) < 0.8
    mask = rng.random((n, L)) < 0.8
    return scores, trans, TransitionConstraints(allowed, start, end, None), mask


def cases():
    for seed in range(24):
        n = 1 + seed % 5
        L = 2 + seed % 3
        yield seed, n, L


def prepared(seed, n, L, constrained=True):
    scores, trans, cons, mask = random_problem(seed, n, L, constrained)
    seq_ptr = np.array([0, n])
    problem = _decoding.apply_constraints(scores, trans, seq_ptr, cons, mask)
    kw = {}
    if cons is not None:
        kw = dict(allowed_trans=cons.transitions, start=cons.start, end=cons.end,
                  token_mask=mask)
    paths, total = _naive.allowed_paths(scores, trans, **kw)
    return problem, paths, total


# --------------------------------------------------------------------------
# kernels against brute force
# --------------------------------------------------------------------------


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_nbest_matches_brute_force(seed, n, L, constrained):
    problem, paths, total = prepared(seed, n, L, constrained)
    if len(paths) == 0:
        return
    K = 7
    result = _decoding.nbest(problem, K, 1)
    want_paths, want_scores = _naive.ranked_paths(paths, total)
    count = int(result.counts[0])
    assert count == min(K, len(paths))
    got = result.paths[: count * n].reshape(count, n)
    np.testing.assert_array_equal(got, want_paths[:count])
    np.testing.assert_allclose(result.scores[0, :count], want_scores[:count], atol=TOL)
    assert len({tuple(p) for p in got.tolist()}) == count


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_nbest_one_is_viterbi(seed, n, L):
    problem, paths, _ = prepared(seed, n, L)
    if len(paths) == 0:
        return
    codes, best = _kernels.viterbi_batch(problem.scores, problem.trans, problem.seq_ptr, 1)
    result = _decoding.nbest(problem, 1, 1)
    np.testing.assert_array_equal(result.paths, codes)
    assert result.scores[0, 0] == best[0]


def test_nbest_ties_broken_by_labels_from_the_end():
    # all scores equal: every path ties; the order is that of the reversed paths
    scores = np.zeros((3, 2))
    trans = np.zeros((2, 2))
    problem = _decoding.apply_constraints(scores, trans, np.array([0, 3]))
    result = _decoding.nbest(problem, 8, 1)
    got = [tuple(p) for p in result.paths.reshape(8, 3).tolist()]
    assert got == sorted(got, key=lambda p: p[::-1])
    assert len(set(got)) == 8


def test_nbest_fewer_paths_than_asked():
    scores = np.zeros((2, 2))
    problem = _decoding.apply_constraints(
        scores, np.zeros((2, 2)), np.array([0, 2]), token_mask=np.array([[1, 0], [1, 1]], bool)
    )
    result = _decoding.nbest(problem, 5, 1)
    assert result.counts[0] == 2
    assert np.isneginf(result.scores[0, 2:]).all()


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_log_forward_backward_matches_brute_force(seed, n, L, constrained):
    problem, paths, total = prepared(seed, n, L, constrained)
    if len(paths) == 0:
        return
    fb = _decoding.forward_backward_log(problem, 1)
    log_z, node, p = _naive.path_marginals(paths, total, L)
    assert abs(fb.log_z[0] - log_z) < TOL
    np.testing.assert_allclose(np.exp(fb.log_alpha + fb.log_beta), node, atol=TOL)
    # the same marginals from the package kernel with -inf scores (log-space fallback)
    z2, node2, _ = _kernels.forward_backward_batch(
        problem.scores, problem.trans, problem.seq_ptr, False, 1
    )
    assert abs(z2[0] - log_z) < TOL
    np.testing.assert_allclose(node2, node, atol=TOL)
    # log p(y|x) of every allowed path, and -inf for a forbidden one
    lp = _decoding.span_log_probs(
        problem, fb, np.zeros(len(paths)), np.full(len(paths), n),
        np.arange(len(paths)) * n, paths.ravel(),
    )
    np.testing.assert_allclose(np.exp(lp), p, atol=TOL)
    np.testing.assert_allclose(lp, total - log_z, atol=TOL)


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_span_probabilities_match_brute_force(seed, n, L):
    problem, paths, total = prepared(seed, n, L)
    if len(paths) == 0:
        return
    fb = _decoding.forward_backward_log(problem, 1)
    rng = np.random.default_rng(seed)
    for _ in range(10):
        a = int(rng.integers(n))
        m = int(rng.integers(1, n - a + 1))
        labels = rng.integers(L, size=m)
        got = _decoding.span_log_probs(problem, fb, [a], [m], [0], labels)[0]
        want = _naive.span_probability(paths, total, a, labels)
        assert abs(np.exp(got) - want) < TOL


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_posterior_decoding_matches_brute_force(seed, n, L):
    problem, paths, total = prepared(seed, n, L)
    if len(paths) == 0:
        return
    fb = _decoding.forward_backward_log(problem, 1)
    post = _decoding.posterior_problem(problem, np.exp(fb.log_alpha + fb.log_beta))
    codes, _ = _kernels.viterbi_batch(post.scores, post.trans, post.seq_ptr, 1)
    np.testing.assert_array_equal(codes, _naive.posterior_path(paths, total, L))


def test_posterior_without_transition_constraints_is_tokenwise_argmax():
    scores, trans, _, mask = random_problem(3, 6, 4)
    problem = _decoding.apply_constraints(scores, trans, np.array([0, 6]), None, mask)
    fb = _decoding.forward_backward_log(problem, 1)
    node = np.exp(fb.log_alpha + fb.log_beta)
    post = _decoding.posterior_problem(problem, node)
    codes, _ = _kernels.viterbi_batch(post.scores, post.trans, post.seq_ptr, 1)
    np.testing.assert_array_equal(codes, node.argmax(axis=1))


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_constrained_viterbi_matches_brute_force(seed, n, L):
    problem, paths, total = prepared(seed, n, L)
    dead = _decoding.first_dead_tokens(problem.scores, problem.trans, problem.seq_ptr)
    assert (dead[0] < 0) == (len(paths) > 0)
    if len(paths) == 0:
        return
    codes, best = _kernels.viterbi_batch(problem.scores, problem.trans, problem.seq_ptr, 1)
    k = int(np.argmax(total))
    np.testing.assert_array_equal(codes, paths[k])
    assert abs(best[0] - total[k]) < TOL


def test_batches_of_sequences_match_one_at_a_time():
    rng = np.random.default_rng(5)
    lengths = [3, 0, 1, 4, 2]
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)])
    L = 3
    scores = rng.normal(size=(seq_ptr[-1], L))
    trans = rng.normal(size=(L, L))
    problem = _decoding.apply_constraints(scores, trans, seq_ptr)
    for n_chunks in (1, 2):
        fb = _decoding.forward_backward_log(problem, n_chunks)
        nb = _decoding.nbest(problem, 3, n_chunks)
        for s, (a, b) in enumerate(zip(seq_ptr[:-1], seq_ptr[1:])):
            if a == b:
                assert fb.log_z[s] == 0.0 and nb.counts[s] == 1
                continue
            assert abs(fb.log_z[s] - _naive.log_partition(scores[a:b], trans)) < TOL
            paths, total = _naive.ranked_paths(*_naive.path_scores(scores[a:b], trans))
            got = nb.paths[a * 3:b * 3].reshape(3, b - a)
            np.testing.assert_array_equal(got, paths[:3])


def test_long_sequence_with_large_weights_stays_finite():
    rng = np.random.default_rng(0)
    n, L = 100_000, 5
    scores = rng.normal(scale=1e4, size=(n, L))
    trans = rng.normal(scale=1e4, size=(L, L))
    cons = build_constraints([(i, j) for i in range(L) for j in range(L) if i != j], range(L))
    problem = _decoding.apply_constraints(scores, trans, np.array([0, n]), cons)
    fb = _decoding.forward_backward_log(problem, 1)
    assert np.isfinite(fb.log_z).all()
    node = np.exp(fb.log_alpha + fb.log_beta)
    np.testing.assert_allclose(node.sum(axis=1), 1.0, atol=1e-9)
    nb = _decoding.nbest(problem, 2, 1)
    lp = _decoding.span_log_probs(problem, fb, [0, 0], [n, n], [0, n], nb.paths)
    assert np.isfinite(lp).all() and lp[0] <= 0 and lp[1] <= lp[0]


# --------------------------------------------------------------------------
# scheme rules against seqeval's strict mode
# --------------------------------------------------------------------------


def _strict_covers_every_entity_label(labels, scheme):
    """seqeval strict mode reads every non-O label as part of an entity."""
    from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2, Entities

    classes = {"IOB1": IOB1, "IOB2": IOB2, "IOE1": IOE1, "IOE2": IOE2,
               "IOBES": IOBES, "BILOU": BILOU, "BMES": IOBES}
    if scheme == "BMES":
        labels = [label.replace("M-", "I-", 1) for label in labels]
    covered = set()
    for entity in Entities([labels], classes[scheme]).entities[0]:
        covered.update(range(entity.start, entity.end))
    return covered == {i for i, label in enumerate(labels) if label != "O"}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_scheme_rules_are_seqeval_strict_validity(scheme):
    labels = ["O"] + [f"{t}-{x}" for t in SCHEMES[scheme] if t for x in "AB"]
    cons = build_constraints(scheme, labels)
    for n in range(1, 5):
        for seq in itertools.product(range(len(labels)), repeat=n):
            ours = (cons.start[seq[0]] and cons.end[seq[-1]]
                    and all(cons.transitions[a, b] for a, b in zip(seq, seq[1:])))
            assert ours == _strict_covers_every_entity_label([labels[i] for i in seq], scheme)
