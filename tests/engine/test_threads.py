"""The thread policy of the engine."""

import numba

from sklearn_crf._engine.threads import MIN_TOKENS_PER_THREAD, n_threads


def test_small_inputs_run_on_one_thread():
    with n_threads(None, 10) as n:
        assert n == 1
    with n_threads(2, 10 * MIN_TOKENS_PER_THREAD) as n:
        assert n == min(2, numba.config.NUMBA_NUM_THREADS)


def test_negative_n_jobs_counts_from_all_cores():
    available = numba.config.NUMBA_NUM_THREADS
    with n_threads(-1, 100 * MIN_TOKENS_PER_THREAD) as n:
        assert n == available
    with n_threads(-available - 5, 100 * MIN_TOKENS_PER_THREAD) as n:
        assert n == 1


def test_numba_thread_count_is_left_alone():
    before = numba.get_num_threads()
    with n_threads(1, 100 * MIN_TOKENS_PER_THREAD):
        assert numba.get_num_threads() == before
    assert numba.get_num_threads() == before
