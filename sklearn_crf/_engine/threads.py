"""How many threads a call of the engine uses.

The engine's batch driver (:mod:`sklearn_crf._engine.driver`) runs its kernels
on plain Python threads; numba's own thread pool (``parallel=True``) is never
used, so no threading layer is involved and calls from several Python threads
at once need no lock.
"""

import contextlib
import sys

import numba

#: fewer tokens than this per thread and threads cost more than they bring
MIN_TOKENS_PER_THREAD = 5000


def available_threads():
    """The most threads a call may use: ``NUMBA_NUM_THREADS`` (numba's default,
    all cores; joblib's workers set it to their share of the cores), and inside
    a task of a Dask worker at most the worker's thread count."""
    available = numba.config.NUMBA_NUM_THREADS
    worker_threads = dask_worker_threads()
    if worker_threads is not None:
        available = min(available, worker_threads)
    return available


class _OneThread:
    """The thread count of a small call: 1, with nothing to set up or undo."""

    __slots__ = ()

    def __enter__(self):
        return 1

    def __exit__(self, *exc):
        return False


_ONE_THREAD = _OneThread()


def n_threads(n_jobs, n_tokens):
    """A context manager that yields the thread count of a call on ``n_tokens``
    tokens.

    The count is ``n_jobs`` (for None, numba's current count,
    :func:`numba.get_num_threads`; ``-1`` all cores, ``-2`` all but one, ...),
    at most :func:`available_threads`, and at most one thread per
    ``MIN_TOKENS_PER_THREAD`` tokens: small inputs run on one thread, and
    for them nothing is asked of numba or Dask (one sentence pays no thread
    set-up). A context manager, so that a call holds one count throughout.
    """
    if n_tokens < MIN_TOKENS_PER_THREAD:
        return _ONE_THREAD
    return _thread_count(n_jobs, n_tokens)


@contextlib.contextmanager
def _thread_count(n_jobs, n_tokens):
    available = available_threads()
    if n_jobs is None:
        n = numba.get_num_threads()
    elif n_jobs < 0:
        n = max(available + 1 + n_jobs, 1)
    else:
        n = n_jobs
    yield max(1, min(n, available, n_tokens // MIN_TOKENS_PER_THREAD))


def dask_worker_threads():
    """Thread count of the Dask worker running the calling task, else None.

    Outside a Dask worker this does not import ``distributed``: a worker
    process has always imported it.
    """
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        worker = distributed.get_worker()
    except ValueError:  # not in a task of a worker
        return None
    return max(int(worker.state.nthreads), 1)
