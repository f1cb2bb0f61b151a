"""The notice of a process whose first call compiles the kernels.

A first fit in a process with an empty numba cache compiles for several
seconds (a minute on a loaded machine). The notice goes to the
``sklearn_crf`` logger; when logging is not configured at all (no handler on
that logger or its ancestors), the same one line goes to stderr instead, so
that a user of plain Python sees why the first call waits. Nothing else in
the library writes to stderr.
"""

import logging
import sys

from .driver import needs_compiling

logger = logging.getLogger("sklearn_crf")

NOTICE = (
    "compiling the numba kernels on first use (numba's cache holds none for them): "
    "this takes a while once; later calls, and later processes through the cache, "
    "reuse them"
)


def note_compilation():
    """Tell, once per process, that this call compiles the kernels."""
    if not needs_compiling():
        return
    if logger.hasHandlers():
        logger.info(NOTICE)
    else:
        sys.stderr.write(f"sklearn_crf: {NOTICE}\n")
