"""The lane workspaces of the fit (sklearn_crf._engine.lanes.LaneWorkspaces):
allocated once, reused by every call, never held by two calls at once."""

import threading

import numpy as np
import pytest

from sklearn_crf import _engine
from sklearn_crf._engine import lanes

import _naive

LENGTHS = [3, 1, 7, 5, 0, 2, 6, 4, 4, 7, 1, 2, 5, 9, 1]


def _gradient_pass(lw, scores, trans, seq_ptr, weights, block_ptr):
    """gradient_blocks_scaled over every block in the workspace ``lw``:
    (node, seq_log_z, block_log_z, block_outer, exp_trans)."""
    L = trans.shape[0]
    n_blocks = len(block_ptr) - 1
    node = scores.copy()
    seq_log_z = np.zeros(len(seq_ptr) - 1)
    block_log_z = np.zeros(n_blocks)
    block_outer = np.zeros((n_blocks, 4, L, L))
    block_edge = np.zeros((n_blocks, L, L))
    exp_trans = np.zeros((L, L))
    no_ints, no_ids, no_rows = np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros((0, L))
    stop = _engine.gradient_blocks_scaled(
        no_rows, no_ints, no_ids, np.zeros(0), False, no_ints, no_ints, trans, seq_ptr,
        weights, block_ptr, 0, n_blocks, lw, node, seq_log_z, block_log_z, block_outer,
        block_edge, False, no_ids, no_ids, np.zeros(0), 0, no_ids, no_rows,
        np.zeros(0), exp_trans)
    assert stop == n_blocks  # every sentence scales
    return node, seq_log_z, block_log_z, block_outer, exp_trans


@pytest.mark.parametrize("L", [3, 9])
def test_a_larger_reused_workspace_gives_the_same_bits(L):
    """A workspace larger than the blocks need, reused from earlier calls
    (its buffers full of other numbers, NaN here), gives bitwise the results
    of a new one of exactly their size."""
    rng = np.random.default_rng(L)
    seqs = [_naive.random_crf(rng, n, L)[0] for n in LENGTHS]
    trans = rng.normal(size=(L, L))
    scores, seq_ptr = _naive.batch(seqs, L)
    weights = rng.uniform(0.5, 2.0, size=len(LENGTHS))
    block_ptr = np.array([0, 6, 11, len(LENGTHS)], dtype=np.int64)
    max_seqs = int(np.max(np.diff(block_ptr)))
    exact = lanes.lane_workspace(max(LENGTHS), max_seqs, L)
    expected = _gradient_pass(exact, scores, trans, seq_ptr, weights, block_ptr)
    reused = lanes.lane_workspace(3 * max(LENGTHS), 2 * max_seqs, L)
    for buffer in reused:
        buffer.fill(np.nan if buffer.dtype == np.float64 else -7)
    for _ in range(2):  # a second call finds the first call's numbers
        got = _gradient_pass(reused, scores, trans, seq_ptr, weights, block_ptr)
        for a, b in zip(got, expected):
            assert a.tobytes() == b.tobytes()


def test_take_gives_the_smallest_free_workspace_that_holds_the_sentences():
    """take: the smallest free workspace of at least the asked tokens; none
    taken twice before it is given back; a new one when none is free that
    holds them, kept after give."""
    pool = lanes.LaneWorkspaces([4, 10], max_seqs=3, L=2)
    small = pool.take(3)
    assert lanes.lane_capacity(small) == (4, 3)
    large = pool.take(3)  # the small one is taken: the large one
    assert lanes.lane_capacity(large) == (10, 3)
    extra = pool.take(2)  # none free: a new one of the size asked
    assert lanes.lane_capacity(extra) == (2, 3)
    for lw in (small, large, extra):
        pool.give(lw)
    assert pool.take(5) is large
    assert pool.take(1) is extra
    assert pool.take(1) is small


def test_a_workspace_is_never_held_by_two_threads_at_once():
    """Threads taking and giving back workspaces at the same time never hold
    the same one."""
    pool = lanes.LaneWorkspaces([5, 5], max_seqs=2, L=2)
    holders = {}
    clashes = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def work(k):
        start.wait()
        for i in range(300):
            lw = pool.take(1 + (i + k) % 5)
            with lock:
                if id(lw) in holders:
                    clashes.append((k, holders[id(lw)]))
                holders[id(lw)] = k
            lw.exp_scores[0, 0, 0] = k  # a write by its holder only
            with lock:
                del holders[id(lw)]
            pool.give(lw)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not clashes


def test_a_pickled_pool_allocates_its_own_workspaces_of_the_same_sizes():
    """A shard objective moves between Dask workers by pickle: the copy has
    free workspaces of the same sizes and its own lock."""
    import pickle

    from sklearn_crf._engine.lanes import LaneWorkspaces, lane_capacity

    pool = LaneWorkspaces([5, 12], max_seqs=4, L=3)
    copy = pickle.loads(pickle.dumps(pool))
    assert [lane_capacity(lw) for lw in copy._free] == [(5, 4), (12, 4)]
    assert copy._free[0] is not pool._free[0] and copy._lock is not pool._lock
    lw = copy.take(6)
    assert lane_capacity(lw) == (12, 4)
    copy.give(lw)


def test_lane_lengths_drop_the_sentences_that_run_alone():
    """lane_lengths: a sentence longer than longest_in_lanes(L) counts as 0
    (it runs alone), the others as they are; take never gives lanes longer
    than longest_in_lanes(L)."""
    L = 42
    cap = lanes.longest_in_lanes(L)
    got = lanes.lane_lengths(np.array([0, 5, cap, cap + 1, 10 * cap]), L)
    np.testing.assert_array_equal(got, [0, 5, cap, 0, 0])
    pool = lanes.LaneWorkspaces([3], max_seqs=2, L=L)
    assert lanes.lane_capacity(pool.take(10 * cap)) == (cap, 2)
