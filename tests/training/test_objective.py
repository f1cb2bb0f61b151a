"""The objective (NLL + L2) and its gradient: brute force and finite differences."""

import numpy as np
import pytest

from sklearn_crf._engine import block_bounds
from sklearn_crf._training.objective import CRFObjective

import _naive
from conftest import corpus_arrays, random_corpus


@pytest.mark.parametrize("c2", [0.0, 0.3])
@pytest.mark.parametrize("all_states", [False, True])
def test_loss_matches_brute_force(c2, all_states):
    X, y = random_corpus(1, n_seq=7)
    corpus, layout, labels = corpus_arrays(
        X, y, all_possible_states=all_states, all_possible_transitions=all_states
    )
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=3)
    w = rng.normal(size=layout.n_params)
    f, _ = obj(w)
    ref = _naive.objective(w, layout, corpus, labels, weights, 0.0, c2)
    assert f == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("c2", [0.0, 0.5])
def test_gradient_matches_finite_differences(c2):
    X, y = random_corpus(2, n_seq=6)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(1)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=2)
    w = rng.normal(size=layout.n_params)
    _, g = obj(w)
    eps = 1e-6
    directions = list(np.eye(len(w))[: min(len(w), 12)]) + [
        d / np.linalg.norm(d) for d in rng.normal(size=(4, len(w)))
    ]
    for d in directions:
        num = (obj(w + eps * d)[0] - obj(w - eps * d)[0]) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


def test_observed_counts_give_zero_gradient_at_data_optimum():
    """At w = 0 with one label, expected counts equal observed counts."""
    X = [[{"a": 1.0}, {"b": 2.0}], [{"a": 1.0}]]
    y = [["x", "x"], ["x"]]
    corpus, layout, labels = corpus_arrays(X, y)
    obj = CRFObjective(corpus, layout, labels, np.ones(2), c2=0.0, n_chunks=1)
    f, g = obj(np.zeros(layout.n_params))
    assert f == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(g, 0.0, atol=1e-12)


@pytest.mark.parametrize("block_tokens", [1, 3, 4096])
def test_gradient_matches_brute_force_with_weights_and_blocks(block_tokens):
    """Both phases (blocks of forward-backward, the by-attribute gather) against
    enumeration of every path, with zero, one and other sequence weights."""
    X, y = random_corpus(5, n_seq=9)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(5)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    weights[::3] = 1.0
    weights[1] = 0.0
    w = rng.normal(size=layout.n_params)
    for n_chunks in (1, 3):
        obj = CRFObjective(corpus, layout, labels, weights, c2=0.2, n_chunks=n_chunks,
                           block_tokens=block_tokens)
        f, g = obj(w)
        assert f == pytest.approx(
            _naive.objective(w, layout, corpus, labels, weights, 0.0, 0.2), rel=1e-10
        )
        np.testing.assert_allclose(
            g, _naive.gradient(w, layout, corpus, labels, weights, 0.2), rtol=1e-9, atol=1e-10
        )


@pytest.mark.parametrize("block_tokens", [2, 7, 4096])
def test_objective_is_bitwise_identical_for_any_thread_count(block_tokens):
    """The blocks depend on the data only: 1, 2, 3 or 8 threads give the same bits."""
    X, y = random_corpus(6, n_seq=40, max_len=8, n_labels=4)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(6)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    results = []
    for n_chunks in (1, 2, 3, 8):
        obj = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=n_chunks,
                           block_tokens=block_tokens)
        results.append(obj(w))
    for f, g in results[1:]:
        assert f == results[0][0]
        np.testing.assert_array_equal(g, results[0][1])


@pytest.mark.parametrize("group_tokens", [1, 9, 40])
@pytest.mark.parametrize("L", [4, 9])
def test_groups_of_blocks_give_the_bits_of_one_group(group_tokens, L, monkeypatch):
    """Without a dense part the node marginals are held one group of blocks at
    a time: any group size, at any thread count, gives the bits of the whole
    corpus in one group (its counts still added in token order), with a
    buffer of one group's rows."""
    from sklearn_crf._training import objective

    X, y = random_corpus(7 + L, n_seq=60, max_len=9, n_labels=L)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(L)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    whole = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=1,
                         block_tokens=5)(w)
    monkeypatch.setattr(objective, "group_tokens", lambda *args, **kwargs: group_tokens)
    for n_chunks in (1, 2, 3):
        obj = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=n_chunks,
                           block_tokens=5)
        assert len(obj._group_ptr) > 2  # several groups
        assert len(obj._wnode) < corpus.n_tokens
        assert obj._group_seq_ptr.shape == corpus.seq_ptr.shape  # one buffer for all
        f, g = obj(w)
        assert f == whole[0]
        np.testing.assert_array_equal(g, whole[1])


@pytest.mark.parametrize("L", [2, 9, 42, 300])
@pytest.mark.parametrize("n_chunks", [1, 2, 8])
def test_group_size_is_a_byte_budget_with_blocks_for_every_thread(L, n_chunks):
    """A group holds GROUP_BYTES of node marginals, fewer tokens the more
    labels, but at least GROUP_BLOCKS_PER_THREAD blocks a thread."""
    from sklearn_crf._training.objective import (GROUP_BLOCKS_PER_THREAD, GROUP_BYTES,
                                                 group_tokens)

    n = group_tokens(L, n_chunks, 4096)
    floor = GROUP_BLOCKS_PER_THREAD * n_chunks * 4096
    assert n >= floor
    assert n == floor or n * 8 * L <= GROUP_BYTES < (n + 1) * 8 * L
    assert group_tokens(L, n_chunks, 4096) >= group_tokens(2 * L, n_chunks, 4096)


def test_node_buffer_holds_one_group_of_the_byte_budget(monkeypatch):
    """The (tokens × labels) buffer is one group's rows: about GROUP_BYTES,
    not the corpus's, and the same bits as one group."""
    from sklearn_crf._training import objective

    X, y = random_corpus(12, n_seq=50, max_len=7, n_labels=5)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    L = layout.n_labels
    rng = np.random.default_rng(12)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    one_group = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=1,
                             block_tokens=4)
    assert len(one_group._group_ptr) == 2
    whole = one_group(w)
    monkeypatch.setattr(objective, "GROUP_BYTES", 8 * L * 30)
    for n_chunks in (1, 2):
        obj = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=n_chunks,
                           block_tokens=4)
        # a group ends at the first block past the budget: 30 tokens and a block
        assert obj._wnode.shape[0] <= 30 + 4 + 7
        assert obj._wnode.shape[0] < corpus.n_tokens // 2
        f, g = obj(w)
        assert f == whole[0]
        np.testing.assert_array_equal(g, whole[1])


@pytest.mark.parametrize("n_chunks", [1, 2, 3])
def test_scratch_sized_by_the_blocks_of_a_call_fits_a_long_sequence(n_chunks):
    """The forward-backward scratch is sized by the longest sequences of the
    longest blocks: one sequence far longer than the others, alone in its
    block or not, still gets brute force's gradient."""
    X, y = random_corpus(13, n_seq=12, max_len=3, n_labels=2)
    X_more, y_more = random_corpus(14, n_seq=12, max_len=4, n_labels=2)
    X.insert(5, [token for seq in X_more for token in seq][:12])
    y.insert(5, [label for seq in y_more for label in seq][:12])
    assert len(y[5]) == 12
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(13)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    for block_tokens in (2, 5, 4096):
        obj = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=n_chunks,
                           block_tokens=block_tokens)
        assert obj._block_max_len.max() == 12
        f, g = obj(w)
        assert f == pytest.approx(
            _naive.objective(w, layout, corpus, labels, weights, 0.0, 0.1), rel=1e-10)
        np.testing.assert_allclose(
            g, _naive.gradient(w, layout, corpus, labels, weights, 0.1), rtol=1e-9,
            atol=1e-10)


@pytest.mark.parametrize("n_chunks", [1, 2, 3])
def test_lane_workspaces_are_allocated_once_and_reused(n_chunks):
    """The objective allocates one lane workspace per thread, sized by the
    longest sentences of the n_chunks longest blocks, and its evaluations
    allocate none: the same workspaces after two evaluations, which give the
    same bits."""
    X, y = random_corpus(15, n_seq=30, max_len=9, n_labels=3)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(15)
    w = rng.normal(size=layout.n_params)
    obj = CRFObjective(corpus, layout, labels, np.ones(len(X)), c2=0.1, n_chunks=n_chunks,
                       block_tokens=7)
    pool = obj._lanes._free
    before = list(map(id, pool))
    sizes = sorted(lw.exp_scores.shape[0] for lw in pool)
    assert sizes == sorted(np.sort(obj._block_max_len)[::-1][:n_chunks].tolist())
    f1, g1 = obj(w)
    f2, g2 = obj(w)
    assert sorted(map(id, pool)) == sorted(before)
    assert f1 == f2 and g1.tobytes() == g2.tobytes()


def test_block_bounds_depend_on_the_offsets_only():
    seq_ptr = np.array([0, 5, 5, 9, 30, 31, 40], dtype=np.int64)
    np.testing.assert_array_equal(block_bounds(seq_ptr, 10), [0, 4, 6])
    np.testing.assert_array_equal(block_bounds(seq_ptr, 1000), [0, 6])
    np.testing.assert_array_equal(block_bounds(seq_ptr, 1), [0, 1, 3, 4, 5, 6])
    np.testing.assert_array_equal(block_bounds(np.zeros(1, np.int64), 10), [0, 0])


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("block_tokens, group_tokens", [(3, 1 << 16), (4096, 1 << 16),
                                                        (3, 10)])
def test_fused_and_two_pass_gradients_agree_bitwise_where_scaling_declines(
        constrained, block_tokens, group_tokens, monkeypatch):
    """One thread adds each block's counts right after its forward-backward
    (the log-space completion of a block included), several threads after all
    blocks: the same bits, and brute force, with weights large enough that
    scaling declines on some sequences, and under constraints (log space);
    in one group of blocks or in several."""
    from sklearn_crf._model.constraints import TransitionConstraints
    from sklearn_crf._training import objective
    from sklearn_crf._training.objective import ConstrainedCRFObjective

    monkeypatch.setattr(objective, "group_tokens", lambda *args, **kwargs: group_tokens)

    X, y = random_corpus(8, n_seq=30, max_len=6, n_labels=3)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(8)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    w[: layout.n_state : 5] *= 400.0  # a spread beyond MAX_SCALED_SPREAD somewhere
    L = layout.n_labels
    results = []
    for n_chunks in (1, 2, 3):
        if constrained:
            masks = TransitionConstraints(np.ones((L, L), bool), np.ones(L, bool),
                                          np.ones(L, bool), None)
            obj = ConstrainedCRFObjective(corpus, layout, labels, weights, c2=0.1,
                                          masks=masks, n_chunks=n_chunks,
                                          block_tokens=block_tokens)
        else:
            obj = CRFObjective(corpus, layout, labels, weights, c2=0.1,
                               n_chunks=n_chunks, block_tokens=block_tokens)
        results.append(obj(w))
    for f, g in results[1:]:
        assert f == results[0][0]
        np.testing.assert_array_equal(g, results[0][1])
    np.testing.assert_allclose(
        results[0][1], _naive.gradient(w, layout, corpus, labels, weights, 0.1),
        rtol=1e-7, atol=1e-7,
    )


@pytest.mark.parametrize("n_chunks", [1, 3])
def test_an_empty_tok_val_gives_the_bits_of_all_ones(n_chunks):
    """The batch solvers' corpus of values all 1 has an empty tok_val
    (without_unit_values): the same loss and gradient bits as the ones."""
    import dataclasses

    X, y = random_corpus(8, n_seq=20, max_len=7, n_labels=4)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    ones = dataclasses.replace(corpus, tok_val=np.ones(len(corpus.tok_attr)))
    empty = dataclasses.replace(corpus, tok_val=np.zeros(0))
    rng = np.random.default_rng(8)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    results = [CRFObjective(c, layout, labels, weights, c2=0.1, n_chunks=n_chunks,
                            block_tokens=8)(w) for c in (ones, empty)]
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
