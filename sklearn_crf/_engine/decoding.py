"""Decoding problems: constraints applied as -inf, and the decoders over them
(n-best, log-space forward-backward, path and span probabilities, posterior).

Constraints of every kind are applied as -inf scores (:func:`apply_constraints`):
a forbidden transition is -inf in the transition matrix, a label a token may
not take is a -inf state score, and the first and last label rules are -inf
state scores of the first and last tokens. Max-plus Viterbi and log-space
forward-backward are exact with -inf scores (``-inf + x = -inf`` and
``exp(-inf) = 0``), so a forbidden path has probability exactly 0 and the
others are renormalized over the allowed paths: the constrained decoders are
the unconstrained kernels, run on other scores.

One sentence (serving) goes through the same driver functions as a batch:
the driver makes one block of a small input and the caller passes one
thread (:func:`~sklearn_crf._engine.threads.n_threads`), so that one sentence costs
the sentence and a few small arrays, nothing more. Without any constraint,
the best paths come from :func:`unconstrained_best_paths`: the state scores
and the Viterbi in one kernel call per range of sequences (one range for a
small input).
"""

from typing import NamedTuple, Optional

import numpy as np

from .driver import (
    forward_backward_batch,
    log_forward_backward_batch,
    nbest_batch,
    run_ranges,
    span_log_probabilities_batch,
    viterbi_batch,
)
from .viterbi import best_paths_dense, best_paths_sparse, first_dead_tokens

class DecodingProblem(NamedTuple):
    """Scores to decode, with every constraint already applied as -inf.

    Attributes
    ----------
    scores : ndarray of shape (n_tokens, n_labels)
        State scores; -inf where a token may not take a label.
    trans : ndarray of shape (n_labels, n_labels)
        Transition weights; -inf where a transition is forbidden.
    seq_ptr : ndarray of shape (n_sequences + 1,)
        Sequence offsets into the tokens.
    allowed_trans : ndarray of bool, shape (n_labels, n_labels), or None
        The allowed transitions when transitions are constrained (the posterior
        decoder needs them), else None.
    constrained : bool
        Whether any -inf was applied (the fast unconstrained kernels then do
        not apply).
    """

    scores: np.ndarray
    trans: np.ndarray
    seq_ptr: np.ndarray
    allowed_trans: Optional[np.ndarray]
    constrained: bool


class NBest(NamedTuple):
    """The n best label paths of every sequence.

    Attributes
    ----------
    paths : ndarray of int32, shape (n_tokens * n,)
        Label codes; path ``r`` of sequence ``s`` (length ``T_s``) is
        ``paths[seq_ptr[s] * n + r * T_s : seq_ptr[s] * n + (r + 1) * T_s]``.
    scores : ndarray of shape (n_sequences, n)
        The path scores (-inf past ``counts[s]``).
    counts : ndarray of int64, shape (n_sequences,)
        Number of paths found (at most ``n``; fewer when fewer paths have a
        finite score).
    """

    paths: np.ndarray
    scores: np.ndarray
    counts: np.ndarray


class LogForwardBackward(NamedTuple):
    """Normalized log-space forward-backward quantities of every sequence.

    With ``c_t`` the per-position normalizers, ``log_alpha[t] = log α_t -
    Σ_{k<=t} log c_k`` and ``log_beta[t] = log β_t - Σ_{k>t} log c_k``, so
    that ``exp(log_alpha + log_beta)`` are the node marginals and both stay
    O(1) however long the sequence and large the weights.

    Attributes
    ----------
    log_z : ndarray of shape (n_sequences,)
        log Z of each sequence (-inf when no path has a finite score).
    log_alpha, log_beta : ndarray of shape (n_tokens, n_labels)
    log_c : ndarray of shape (n_tokens,)
        ``log c_t``; ``log_z[s]`` is their sum over the tokens of ``s``.
    """

    log_z: np.ndarray
    log_alpha: np.ndarray
    log_beta: np.ndarray
    log_c: np.ndarray


def apply_constraints(scores, trans, seq_ptr, constraints=None, token_mask=None):
    """A :class:`DecodingProblem` with the constraints applied as -inf.

    ``constraints`` is a :class:`~sklearn_crf._model.constraints.TransitionConstraints`
    or None; ``token_mask`` a boolean (n_tokens, L) mask of allowed labels or
    None. The input arrays are not modified.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    trans = np.ascontiguousarray(trans, dtype=np.float64)
    seq_ptr = np.ascontiguousarray(seq_ptr, dtype=np.int64)
    if constraints is None and token_mask is None:
        return DecodingProblem(scores, trans, seq_ptr, None, False)
    scores = np.array(scores, dtype=np.float64)
    trans = np.array(trans, dtype=np.float64)
    allowed_trans = None
    if token_mask is not None:
        scores[~token_mask] = -np.inf
    if constraints is not None:
        allowed_trans = constraints.transitions
        trans[~allowed_trans] = -np.inf
        lengths = np.diff(seq_ptr)
        first = seq_ptr[:-1][lengths > 0]
        last = seq_ptr[1:][lengths > 0] - 1
        scores[np.ix_(first, ~constraints.start)] = -np.inf
        scores[np.ix_(last, ~constraints.end)] = -np.inf
    return DecodingProblem(scores, trans, seq_ptr, allowed_trans, True)


def check_feasible(problem, what="the constraints"):
    """Raise a ValueError naming the first sequence (and token) without any path
    of finite score."""
    dead = first_dead_tokens(problem.scores, problem.trans, problem.seq_ptr)
    bad = np.flatnonzero(dead >= 0)
    if len(bad):
        s = int(bad[0])
        raise ValueError(
            f"sequence {s} has no label path allowed by {what}: no label is "
            f"possible at token {int(dead[s])} given the labels allowed there and "
            "at the tokens before it"
        )


def best_path_labels(problem, n_threads):
    """Label codes (n_tokens,) int32 of the best path of every sequence of a
    :class:`DecodingProblem` (Viterbi: the list Viterbi at K = 1)."""
    return viterbi_batch(problem.scores, problem.trans, problem.seq_ptr, n_threads).labels


def unconstrained_best_paths(w, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, trans,
                             seq_ptr, n_threads=1):
    """Label codes (n_tokens,) int32 of the best path of every sequence of an
    encoded corpus without constraints, straight from the parameter vector
    ``w`` (the state weights through ``attr_ptr``, ``attr_label``) and the
    (L, L) ``trans``: :func:`best_path_labels` of its problem, one kernel
    call (:func:`~sklearn_crf._engine.viterbi.best_paths_sparse`) per range
    of sequences: on the calling thread with ``n_threads=1``, else on
    ``n_threads`` (:func:`~sklearn_crf._engine.driver.run_ranges`), the same
    codes."""
    return _best_paths_in_ranges(
        best_paths_sparse, (w, attr_ptr, attr_label, tok_ptr, tok_attr, tok_val, trans,
                            seq_ptr), len(tok_ptr) - 1, trans.shape[0], n_threads)


def unconstrained_best_paths_dense(w_attr, tok_ptr, tok_attr, tok_val, trans, seq_ptr,
                                   n_threads=1):
    """:func:`unconstrained_best_paths` from the dense (n_attributes, L) state
    weights ``w_attr`` (:func:`~sklearn_crf._engine.viterbi.best_paths_dense`):
    the same codes."""
    return _best_paths_in_ranges(
        best_paths_dense, (w_attr, tok_ptr, tok_attr, tok_val, trans, seq_ptr),
        len(tok_ptr) - 1, trans.shape[0], n_threads)


def _best_paths_in_ranges(kernel, args, n_tok, L, n_threads):
    """The codes of a best-paths kernel (``kernel(*args, first, stop, scores,
    paths, path_scores)``) run over ranges of the sequences (the last of
    ``args``) on ``n_threads``."""
    seq_ptr = args[-1]
    scores = np.empty((n_tok, L))
    paths = np.empty(n_tok, dtype=np.int32)
    path_scores = np.empty(len(seq_ptr) - 1)
    run_ranges(n_threads, len(seq_ptr) - 1, lambda first, stop: kernel(
        *args, first, stop, scores, paths, path_scores))
    return paths


def node_marginals(problem, n_threads):
    """Node marginals (n_tokens, n_labels) of every sequence of a
    :class:`DecodingProblem` (the forward-backward without edges)."""
    return forward_backward_batch(problem.scores, problem.trans, problem.seq_ptr, False,
                                  n_threads).node


def nbest(problem, K, n_threads):
    """:class:`NBest` of a :class:`DecodingProblem`."""
    return NBest(*nbest_batch(problem.scores, problem.trans, problem.seq_ptr, K, n_threads))


def log_forward_backward(problem, n_threads):
    """:class:`LogForwardBackward` of a :class:`DecodingProblem`."""
    return LogForwardBackward(*log_forward_backward_batch(
        problem.scores, problem.trans, problem.seq_ptr, n_threads
    ))


def span_log_probs(problem, fb, first, length, code_ptr, codes, n_threads):
    """log p(labels of each span | x) of spans of a :class:`DecodingProblem`
    (see :func:`~sklearn_crf._engine.forward_backward.span_log_probabilities`)."""
    return span_log_probabilities_batch(
        problem.scores, problem.trans, fb.log_alpha, fb.log_beta, fb.log_c,
        first, length, code_ptr, codes, n_threads,
    )


def nbest_log_probabilities(problem, fb, best, n_threads):
    """log p(path | x) of every path of an :class:`NBest`, sequence by
    sequence and best first (``best.counts[s]`` values for sequence ``s``)."""
    seq_ptr = problem.seq_ptr
    K = best.scores.shape[1]
    lengths = np.diff(seq_ptr)
    seq = np.repeat(np.arange(len(lengths)), best.counts)
    rank = np.arange(len(seq)) - np.repeat(np.cumsum(best.counts) - best.counts, best.counts)
    return span_log_probs(
        problem, fb, seq_ptr[seq], lengths[seq],
        seq_ptr[seq] * K + rank * lengths[seq], best.paths, n_threads,
    )


def posterior_problem(problem, node):
    """The problem whose best path is the posterior decoding: state scores the
    node marginals ``node`` (-inf where a label is not allowed), transitions 0
    where allowed and -inf where forbidden. Its best path maximizes the
    expected number of correct labels among the allowed paths; without
    transition constraints that is the most probable label of each token."""
    scores = np.array(node, dtype=np.float64)
    scores[np.isneginf(problem.scores)] = -np.inf
    L = scores.shape[1]
    trans = np.zeros((L, L))
    if problem.allowed_trans is not None:
        trans[~problem.allowed_trans] = -np.inf
    return DecodingProblem(scores, trans, problem.seq_ptr, problem.allowed_trans, True)
