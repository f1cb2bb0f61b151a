"""The thread policy of the numba kernels."""

import numba

from sklearn_crf._threads import MIN_TOKENS_PER_THREAD, n_threads


def test_small_inputs_run_on_one_thread():
    with n_threads(None, 10) as n:
        assert n == 1
    with n_threads(2, 10 * MIN_TOKENS_PER_THREAD) as n:
        assert n == min(2, numba.config.NUMBA_NUM_THREADS)


def test_negative_n_jobs_counts_from_all_cores_and_the_count_is_restored():
    available = numba.config.NUMBA_NUM_THREADS
    before = numba.get_num_threads()
    with n_threads(-1, 100 * MIN_TOKENS_PER_THREAD) as n:
        assert n == available == numba.get_num_threads()
    with n_threads(-available - 5, 100 * MIN_TOKENS_PER_THREAD) as n:
        assert n == 1
    assert numba.get_num_threads() == before
