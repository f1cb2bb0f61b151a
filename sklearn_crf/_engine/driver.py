"""The batch driver: the one place that decides blocks and threads.

No kernel is compiled with numba's ``parallel=True``. The kernels release the
GIL (``nogil=True``), and :func:`run_ranges` runs one over ranges of items
(sequences, blocks of sequences, attributes, spans) on a few plain Python
threads. Each item's outputs are written by whichever thread runs it and by no
other; where items are summed (the gradient), they are fixed blocks of
sequences that depend on the data only (:func:`block_bounds`), each block
writes its own partial sums, and the sums are added in block order. So every
result is bitwise the same for any thread count.

The batch functions here (forward-backward, Viterbi, n-best, log-space
forward-backward, span probabilities) take dense state scores (n_tokens, L),
transitions (L, L) and sequence offsets, with any constraint already applied
as -inf (see :mod:`sklearn_crf._engine.decoding`).
"""

import threading
from typing import NamedTuple

import numpy as np

from .forward_backward import (
    log_forward_backward_sequences,
    marginals_sequences,
    span_log_probabilities,
)
from .lanes import forward_backward_blocks, gradient_blocks_scaled
from .threads import start_helpers
from .viterbi import list_viterbi_sequences

#: the kernels :func:`needs_compiling` looks at: what every fit runs
_FIRST_USE_KERNELS = (gradient_blocks_scaled, list_viterbi_sequences)
_first_use = {"checked": False}


def needs_compiling():
    """True once per process: at the first call, when the engine's main
    kernels have not been compiled in this process and numba's on-disk cache
    holds nothing usable for them (an empty or stale ``NUMBA_CACHE_DIR``), so
    that this first use compiles them, which takes a while. False at every
    later call, and when the cache cannot be read."""
    if _first_use["checked"]:
        return False
    _first_use["checked"] = True
    try:
        for dispatcher in _FIRST_USE_KERNELS:
            if dispatcher.signatures:
                return False
            if dispatcher._cache._cache_file._load_index():  # numba's index of the cache
                return False
    except Exception:  # noqa: BLE001 - another numba version: no notice
        return False
    return True


#: tokens per block of the gradient's forward-backward phase: a constant, so
#: that the blocks, and with them every bit of the result, depend on the data
#: only, never on the thread count
BLOCK_TOKENS = 4096


def run_ranges(n_threads, n_items, func):
    """Call ``func(lo, hi)`` over consecutive ranges covering ``range(n_items)``.

    With one thread (or at most one item), a single call ``func(0, n_items)``
    on the calling thread. Otherwise the caller and ``n_threads - 1`` helper
    threads (:func:`~sklearn_crf._engine.threads.start_helpers`) take ranges
    of about ``n_items / (4 n_threads)`` items in turn, so that a thread that
    loses its core takes fewer. The caller takes ranges until none is left and
    then waits only for the helpers that took one: a helper still busy with
    another call's work when this call ends finds nothing to do, so calls
    nested on several threads never wait for each other. ``func`` must
    release the GIL (a ``nogil`` numba kernel) to run in parallel, and write
    only the outputs of its own items. The first exception raised in a
    thread is raised here, after every range taken has ended.
    """
    if n_threads <= 1 or n_items <= 1:
        func(0, n_items)
        return
    step = max(1, n_items // (4 * n_threads))
    starts = iter(range(0, n_items, step))
    done = threading.Condition()
    errors = []
    state = {"working": 0, "closed": False}

    def take_ranges():
        try:
            while not errors:
                with done:
                    lo = next(starts, None)
                if lo is None:
                    return
                func(lo, min(lo + step, n_items))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    def helper():
        with done:
            if state["closed"]:  # the call has ended without this helper
                return
            state["working"] += 1
        try:
            take_ranges()
        finally:
            with done:
                state["working"] -= 1
                done.notify_all()

    start_helpers(helper, min(n_threads, n_items) - 1)
    take_ranges()
    with done:
        state["closed"] = True
        while state["working"]:
            done.wait()
    if errors:
        raise errors[0]


def block_bounds(seq_ptr, block_tokens=None):
    """Sequences → blocks of about ``block_tokens`` tokens (default
    :data:`BLOCK_TOKENS`): block ``b`` holds the sequences ``bounds[b]`` to
    ``bounds[b + 1] - 1``, those whose first token lies in ``[b·B, (b+1)·B)``
    (empty blocks dropped). Depends on the sequence offsets alone."""
    if block_tokens is None:
        block_tokens = BLOCK_TOKENS
    n_seq = len(seq_ptr) - 1
    if n_seq == 0:
        return np.zeros(2, dtype=np.int64)
    if seq_ptr[n_seq - 1] < block_tokens:  # one block (one sentence, a few)
        return np.array([0, n_seq], dtype=np.int64)
    ids = seq_ptr[:-1] // block_tokens
    change = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    return np.concatenate([[0], change, [n_seq]]).astype(np.int64)


def attribute_ranges(index_ptr, n_threads):
    """Attribute bounds of about equal numbers of entries (``index_ptr``: the
    entries of attribute ``a`` are ``index_ptr[a]:index_ptr[a + 1]``), one
    range per thread. Each range's expected counts are added in token order
    by one call (:func:`~sklearn_crf._engine.scores.scatter_state_counts`
    over an :func:`~sklearn_crf._engine.scores.entry_index`) whatever the
    ranges, so they change no bit of the result; as few ranges as threads,
    because each reads the node marginals of its tokens once."""
    n_attributes = len(index_ptr) - 1
    n_ranges = n_threads
    targets = np.linspace(0, index_ptr[-1], n_ranges + 1)
    bounds = np.searchsorted(index_ptr, targets, side="left")
    bounds[0], bounds[-1] = 0, n_attributes
    return np.unique(bounds).astype(np.int64)


class Marginals(NamedTuple):
    """What :func:`forward_backward_batch` computes.

    Attributes
    ----------
    log_z : ndarray of shape (n_sequences,)
    node : ndarray of shape (n_tokens, n_labels)
        ``node[t, j] = p(y[t] = j | x)``.
    edge : ndarray of shape (n_tokens, n_labels, n_labels)
        ``edge[t, i, j] = p(y[t-1] = i, y[t] = j | x)`` for every token that
        is not first in its sequence (zeros otherwise); zero length when
        edges were not asked for.
    """

    log_z: np.ndarray
    node: np.ndarray
    edge: np.ndarray


class BestPaths(NamedTuple):
    """What :func:`viterbi_batch` computes.

    Attributes
    ----------
    labels : ndarray of int32, shape (n_tokens,)
        The label codes of the best path of each sequence.
    scores : ndarray of shape (n_sequences,)
        Their scores.
    """

    labels: np.ndarray
    scores: np.ndarray


def _contiguous(a, dtype):
    """``a`` as a C-contiguous array of ``dtype``: itself when it is one (the
    usual case: no NumPy call, which one sentence at a time would notice)."""
    if type(a) is np.ndarray and a.dtype == dtype and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=dtype)


def _arrays(scores, trans, seq_ptr):
    return (_contiguous(scores, np.float64), _contiguous(trans, np.float64),
            _contiguous(seq_ptr, np.int64))


def forward_backward_batch(scores, trans, seq_ptr, with_edges, n_threads):
    """The :class:`Marginals` of every sequence from dense state scores (the
    edge marginals only when ``with_edges``). Without edges the work is done
    by :func:`~sklearn_crf._engine.lanes.forward_backward_blocks`
    (weights 1), the gradient's kernel, so that a first ``predict_marginals``
    after a fit compiles nothing new.
    """
    scores, trans, seq_ptr = _arrays(scores, trans, seq_ptr)
    n_tokens, L = scores.shape
    n_seq = seq_ptr.shape[0] - 1
    log_z = np.zeros(n_seq)
    if with_edges:
        node = np.zeros((n_tokens, L))
        edge = np.zeros((n_tokens, L, L))
        run_ranges(n_threads, n_seq, lambda first, stop: marginals_sequences(
            scores, trans, seq_ptr, first, stop, log_z, node, edge))
        return Marginals(log_z, node, edge)
    node = scores.copy()
    block_ptr = block_bounds(seq_ptr)
    n_blocks = len(block_ptr) - 1
    max_len = n_tokens if n_seq == 1 else int(np.max(np.diff(seq_ptr), initial=0))
    block_sums = np.zeros(n_blocks)
    block_outer = np.zeros((n_blocks, 4, L, L))
    block_edge = np.zeros((n_blocks, L, L))
    ones = np.ones(n_seq)
    run_ranges(n_threads, n_blocks, lambda first, stop: forward_backward_blocks(
        node, trans, seq_ptr, ones, block_ptr, first, stop, max_len,
        log_z, block_sums, block_outer, block_edge))
    return Marginals(log_z, node, np.zeros((0, L, L)))


def nbest_batch(scores, trans, seq_ptr, K, n_threads):
    """The ``K`` best paths of every sequence (the list Viterbi):
    ``paths`` (n_tokens * K,) int32, ``path_scores`` (n_sequences, K) and
    ``counts`` (n_sequences,) int64, laid out as in
    :class:`~sklearn_crf._engine.decoding.NBest`."""
    scores, trans, seq_ptr = _arrays(scores, trans, seq_ptr)
    n_seq = seq_ptr.shape[0] - 1
    paths = np.zeros(scores.shape[0] * K, dtype=np.int32)
    path_scores = np.empty((n_seq, K))
    path_scores.fill(-np.inf)
    counts = np.zeros(n_seq, dtype=np.int64)
    run_ranges(n_threads, n_seq, lambda first, stop: list_viterbi_sequences(
        scores, trans, seq_ptr, K, first, stop, paths, path_scores, counts))
    return paths, path_scores, counts


def viterbi_batch(scores, trans, seq_ptr, n_threads):
    """The :class:`BestPaths` of every sequence (:func:`nbest_batch` with K = 1)."""
    paths, path_scores, _ = nbest_batch(scores, trans, seq_ptr, 1, n_threads)
    return BestPaths(paths, path_scores[:, 0])


def log_forward_backward_batch(scores, trans, seq_ptr, n_threads):
    """``(log_z, log_alpha, log_beta, log_c)`` of every sequence by the
    normalized log-space forward-backward."""
    scores, trans, seq_ptr = _arrays(scores, trans, seq_ptr)
    n_tok, L = scores.shape
    n_seq = seq_ptr.shape[0] - 1
    log_z = np.zeros(n_seq)
    la = np.empty((n_tok, L))
    lb = np.empty((n_tok, L))
    log_c = np.empty(n_tok)
    run_ranges(n_threads, n_seq, lambda first, stop: log_forward_backward_sequences(
        scores, trans, seq_ptr, first, stop, log_z, la, lb, log_c))
    return log_z, la, lb, log_c


def span_log_probabilities_batch(scores, trans, log_alpha, log_beta, log_c, first,
                                 length, code_ptr, codes, n_threads):
    """log p(span labels | x) of each span (see
    :func:`~sklearn_crf._engine.forward_backward.span_log_probabilities`)."""
    first = np.ascontiguousarray(first, dtype=np.int64)
    length = np.ascontiguousarray(length, dtype=np.int64)
    code_ptr = np.ascontiguousarray(code_ptr, dtype=np.int64)
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    out = np.empty(first.shape[0])
    run_ranges(n_threads, first.shape[0], lambda start, stop: span_log_probabilities(
        scores, trans, log_alpha, log_beta, log_c, first, length, code_ptr, codes,
        start, stop, out))
    return out
