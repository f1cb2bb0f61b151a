"""The smallest numba program: one cached kernel (the start-up floor of bench_vs_crfsuite).

Any library whose kernels are numba's pays, in a fresh process, numba's import
and, at its first kernel call, numba's set-up of its typing and target
contexts, even when every kernel comes from the on-disk cache. This module is
that cost alone: ``_workloads.py floor`` imports ``sklearn.base`` (as both
libraries' estimators do) and numba, and calls :func:`sum_kernel` once.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def sum_kernel(x):
    """The sum of a 1-d float64 array, by a loop."""
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
    return total


def first_call():
    """Call the kernel once (compiled, or loaded from the cache)."""
    return sum_kernel(np.ones(4))
