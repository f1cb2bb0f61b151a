"""How many threads a call of the engine uses, and the helper threads it runs on.

The engine's batch driver (:mod:`sklearn_crf._engine.driver`) runs its kernels
on plain Python threads; numba's own thread pool (``parallel=True``) is never
used, so no threading layer is involved and calls from several Python threads
at once need no lock. The threads are kept between calls
(:func:`start_helpers`): a fit makes a few calls per iteration, and starting
a thread costs more than a small call's work.
"""

import contextlib
import os
import queue
import sys
import threading

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


class _HelperThreads:
    """Daemon threads that run the functions given to :meth:`start`, kept
    between calls: a function waits for a free thread, and a thread is added
    when none is free, up to :data:`MAX_HELPERS`."""

    def __init__(self):
        self._tasks = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    def start(self, func, count):
        with self._lock:
            reused = min(count, self._idle)
            self._idle -= reused
            added = min(count - reused, MAX_HELPERS - self._threads)
            self._threads += added
        for _ in range(count):
            self._tasks.put(func)
        for _ in range(added):
            threading.Thread(target=self._serve, daemon=True,
                             name="sklearn_crf-engine").start()

    def _serve(self):
        while True:
            func = self._tasks.get()
            try:
                func()
            except BaseException:  # noqa: BLE001, S110 - func reports its own errors
                pass
            del func
            with self._lock:
                self._idle += 1


#: the most helper threads kept (a function given when all are busy waits for one)
MAX_HELPERS = max(4, 2 * (os.cpu_count() or 1))

_HELPERS = [_HelperThreads()]


def _new_helpers_after_fork():
    """A forked child has none of its parent's threads: it starts its own."""
    _HELPERS[0] = _HelperThreads()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_helpers_after_fork)


def start_helpers(func, count):
    """Run ``func()`` on ``count`` helper threads, kept between calls, and
    return at once. ``func`` must catch its own exceptions and must not rely
    on starting soon: a helper may be busy with another call's work, so the
    caller must be able to finish without it (see
    :func:`~sklearn_crf._engine.driver.run_ranges`)."""
    _HELPERS[0].start(func, count)
