"""Running a nogil kernel over ranges of items on Python threads.

The kernels of :mod:`sklearn_crf._kernels` are compiled without numba's
``parallel=True``: parallel kernels take several times longer to compile, and
compiling is most of the first fit's time on an empty numba cache. They
release the GIL instead (``nogil=True``), and :func:`run_ranges` runs one over
ranges of items on a few threads. Each item's outputs are written by whichever
thread runs it and by no other, so results never depend on the thread count
or on scheduling.
"""

import threading


def run_ranges(n_threads, n_items, func):
    """Call ``func(lo, hi)`` over consecutive ranges covering ``range(n_items)``.

    With one thread (or at most one item), a single call ``func(0, n_items)``
    on the calling thread. Otherwise ``n_threads`` threads (the caller's one of
    them) take ranges of about ``n_items / (4 n_threads)`` items in turn, so
    that a thread that loses its core takes fewer. ``func`` must release the
    GIL (a ``nogil`` numba kernel) to run in parallel, and write only the
    outputs of its own items. The first exception raised in a thread is raised
    here, after every thread has stopped.
    """
    if n_threads <= 1 or n_items <= 1:
        func(0, n_items)
        return
    step = max(1, n_items // (4 * n_threads))
    starts = iter(range(0, n_items, step))
    lock = threading.Lock()
    errors = []

    def work():
        try:
            while not errors:
                with lock:
                    lo = next(starts, None)
                if lo is None:
                    return
                func(lo, min(lo + step, n_items))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, daemon=True)
               for _ in range(min(n_threads, n_items) - 1)]
    for thread in threads:
        thread.start()
    work()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
