"""How many numba threads a call uses, and the lock the workqueue layer needs."""

import contextlib
import sys
import threading

import numba

#: fewer tokens than this per thread and threads cost more than they bring
MIN_TOKENS_PER_THREAD = 5000

#: numba's workqueue threading layer (its fallback without OpenMP or TBB) aborts
#: the process when parallel kernels are entered from two Python threads at once
_WORKQUEUE_LOCK = threading.Lock()


@contextlib.contextmanager
def n_threads(n_jobs, n_tokens):
    """Set numba's thread count for the block; yields the count in force.

    The count is ``n_jobs`` (numba's default for None; ``-1`` all cores, ``-2``
    all but one, ...), and at most one thread per ``MIN_TOKENS_PER_THREAD``
    tokens: small inputs run on one thread. Inside a task of a Dask worker,
    it is also at most the worker's thread count (``nthreads``): Dask limits
    OpenMP and BLAS threads in its workers, not numba's. Under the workqueue
    threading layer, blocks of different Python threads run one at a time.
    """
    available = numba.config.NUMBA_NUM_THREADS
    worker_threads = dask_worker_threads()
    if worker_threads is not None:
        available = min(available, worker_threads)
    if n_jobs is None:
        n = numba.get_num_threads()
    elif n_jobs < 0:
        n = max(available + 1 + n_jobs, 1)
    else:
        n = n_jobs
    n = max(1, min(n, available, n_tokens // MIN_TOKENS_PER_THREAD))
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    lock = _WORKQUEUE_LOCK if _needs_serializing() else contextlib.nullcontext()
    try:
        with lock:
            yield n
    finally:
        numba.set_num_threads(previous)


def _needs_serializing():
    try:
        return numba.threading_layer() == "workqueue"
    except ValueError:  # no parallel kernel has run yet: the layer is not chosen
        return True


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
