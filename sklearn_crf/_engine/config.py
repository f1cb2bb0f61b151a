"""The numba options of every kernel of the package: the one table.

``OPTS`` is the default: cached on disk, the GIL released (the batch driver
runs kernels on plain Python threads), numpy's error model, and of the
fast-math flags only "contract", which lets LLVM fuse ``a * b + c`` into one
FMA instruction (one rounding instead of two); no other flag, so sums are never
reassociated and results do not depend on vector widths.

``OPTS_EXACT`` drops the FMA contraction: CRFsuite's binaries round ``a * b``
and then ``+ c``, and its online algorithms follow discrete decisions (Viterbi
paths) where one rounding can flip a tie. A kernel both kinds of callers need
is written once and compiled twice (:func:`exact_twin`).

No kernel is compiled with ``parallel=True``: parallel kernels take several
times longer to compile, and :mod:`sklearn_crf._engine.driver` runs the
kernels over fixed blocks on threads instead.
"""

import types

from numba import njit

OPTS = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")
OPTS_EXACT = dict(cache=True, nogil=True, error_model="numpy")


def kernel(func=None, **extra):
    """``njit`` with :data:`OPTS` (and ``extra`` options, e.g. ``inline``)."""
    if func is None:
        return lambda f: njit(**OPTS, **extra)(f)
    return njit(**OPTS, **extra)(func)


def exact_kernel(func):
    """``njit`` with :data:`OPTS_EXACT`."""
    return njit(**OPTS_EXACT)(func)


def exact_twin(dispatcher):
    """The same Python source as the kernel ``dispatcher``, compiled with
    :data:`OPTS_EXACT`, under a name of its own (``<name>_exact``) so that the
    two never share an on-disk cache entry. Meant for leaf kernels (which call
    no other kernel): a callee keeps its own options."""
    f = dispatcher.py_func
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + "_exact",
                           f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + "_exact"
    g.__module__ = f.__module__
    g.__doc__ = f"{f.__name__} compiled without FMA contraction (OPTS_EXACT)."
    return njit(**OPTS_EXACT)(g)
