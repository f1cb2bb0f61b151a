"""The regularized negative log-likelihood of a linear-chain CRF and its gradient.

The parameter vector is CRFsuite's, laid out by
:class:`~sklearn_crf._model.layout.ParameterLayout`: state weights, then
transitions, then dense weights.
"""

import dataclasses
from typing import NamedTuple

import numpy as np

from .._engine import (
    attribute_counts,
    attribute_ranges,
    block_bounds,
    count_rows,
    entry_index,
    forward_backward_blocks_log,
    gradient_blocks_scaled,
    observed_counts,
    run_ranges,
    scatter_state_counts,
    state_scores_dense_range,
    transition_gradient,
)
from .._engine.dense import (
    add_dense_scores,
    add_distinct_counts,
    add_distinct_scores,
    block_buffers,
    dense_counts,
    dense_rows,
    distinct_rows,
    observed_dense_counts,
    observed_distinct_counts,
    sum_blocks,
)
from .._engine.driver import BLOCK_TOKENS
from .._engine.lanes import LaneWorkspaces, lane_lengths
from .._features.vectorizer import EncodedCorpus
from .._model.constraints import TransitionConstraints


#: bytes of node marginals (8 a label) in a group of blocks: without a dense
#: part, the node marginals are held for one group at a time, not for the
#: whole corpus (:func:`group_tokens`)
GROUP_BYTES = 1 << 22

#: blocks a group holds at least for each thread, so that the threads, which
#: wait for each other at the end of a group, share its blocks evenly
GROUP_BLOCKS_PER_THREAD = 2


def group_tokens(n_labels, n_chunks, block_tokens=None):
    """Tokens in a group of blocks of :class:`CRFObjective` on ``n_chunks``
    threads: :data:`GROUP_BYTES` of node marginals of ``n_labels`` labels, and
    at least :data:`GROUP_BLOCKS_PER_THREAD` blocks of ``block_tokens`` tokens
    (default :data:`~sklearn_crf._engine.driver.BLOCK_TOKENS`) a thread.

    Examples
    --------
    >>> group_tokens(42, 1, 4096) < group_tokens(9, 1, 4096)
    True
    """
    if block_tokens is None:
        block_tokens = BLOCK_TOKENS
    return max(GROUP_BYTES // (8 * max(n_labels, 1)),
               GROUP_BLOCKS_PER_THREAD * max(n_chunks, 1) * block_tokens)


class CRFObjective:
    """f(w) = Σ_s v_s (log Z_s - score_s) + c2·‖w‖² and its gradient.

    The smooth part of CRFsuite's objective: the weighted negative
    log-likelihood of an :class:`~sklearn_crf._features.vectorizer.EncodedCorpus` plus
    the L2 term; the L1 term ``c1·‖w‖₁`` is the solver's business (see
    :func:`~sklearn_crf._training.optimize.minimize_crf`). ``v_s`` are per-sequence
    weights. Everything is arrays before the optimizer starts; a call does no
    per-token Python work.

    With ``constraints`` (a
    :class:`~sklearn_crf._model.constraints.TransitionConstraints`: allowed
    transitions, first and last labels), the objective of
    ``CRFTagger(constrain_training=True)``: the partition function ``Z'_s``
    sums only over the label sequences the constraints allow, so the
    likelihood is ``p(y | x, y allowed)``; the gradient is the expected
    feature counts under that distribution minus the observed counts, and
    transition weights of forbidden pairs get no expected count (they only
    feel the regularization). The constraints are -inf transitions and -inf
    state scores of the first and last tokens, run through the same kernels
    (which then work in log space); the training label sequences must be
    allowed (the caller checks them,
    :func:`~sklearn_crf._model.constraints.check_allowed_labels`).

    The gradient is computed on ``n_chunks`` threads over fixed blocks of
    sequences (``block_tokens`` tokens, default
    :data:`~sklearn_crf._engine.driver.BLOCK_TOKENS`), one block at a time
    while its rows are in cache
    (:func:`~sklearn_crf._engine.lanes.gradient_blocks_scaled`):
    the state scores of its tokens, forward-backward, which replaces them by
    the weighted node marginals, and, on one thread, the block's expected
    state counts added to rows of labels for the attributes with several
    parameters and straight into the gradient for those with one
    (:func:`~sklearn_crf._engine.scores.scatter_state_counts`,
    :class:`~sklearn_crf._engine.scores.CountRows`). On several
    threads the counts are added after all blocks, one pass per range of
    attributes (each range's entries in token order, by one thread). Every
    (attribute, label) count gets its terms in token order either way, so
    the result is bitwise the same for any ``n_chunks``, and the memory
    hardly grows with it: a dense (attributes × labels) matrix of weights,
    the rows of counts (a fraction of such a matrix: most attributes have
    one parameter), one (tokens × labels) buffer, the entries by attribute range (8
    bytes an entry, 16 when some value is not 1), and a few (L, L) sums per
    block. Without a dense part, the blocks go in groups of about
    :func:`group_tokens` tokens (:data:`GROUP_BYTES` of rows, or a few blocks
    a thread when that is more), one group after another (its blocks, then
    its counts), so the (tokens × labels) buffer holds one group's rows:
    each count still gets its terms in token order, the same bits. The
    scratch of the forward-backward (three (tokens × labels × lanes) arrays)
    is sized by the longest sequence of the blocks of a call, not the
    corpus's.

    A corpus with a dense part (``corpus.dense``, (n_tokens, n_dense)) adds
    ``dense @ W_dense`` to the state scores of each block and gets the
    gradient ``denseᵀ (expected − observed)`` of ``W_dense`` from the same
    node marginals, one BLAS product a block each
    (:mod:`sklearn_crf._engine.dense`), in the same pass over the block: its
    dense rows are read (and a float32 part converted to float64, a block at
    a time: the corpus's array is used as it is, never copied whole) once for
    both. The blocks' (n_dense, L) sums are added in block order, so the
    result stays bitwise the same for any ``n_chunks``; the dense part adds
    one (n_dense, L) sum per block to the memory.

    An empty ``corpus.tok_val`` means every value is 1 (how the batch
    solvers get a corpus whose values are all 1,
    :func:`~sklearn_crf._training.fit.without_unit_values`).

    When the dense rows mostly repeat (word vectors: every token of a word has
    the word's vector), the products are over the distinct rows instead
    (:func:`~sklearn_crf._engine.dense.distinct_rows`, found once here): the
    scores of the distinct rows, one product before the blocks, are added to
    each token's state scores in its block, and the counts are ``Uᵀ S``, ``S``
    the weighted node marginals summed by distinct row in token order (block
    after block on one thread, in one pass after all blocks on several), so
    bitwise the same for any ``n_chunks`` too. It adds the distinct rows (in
    float64), a (tokens,) int32 map and two (distinct rows, L) matrices to the
    memory, and no per-block sums.
    """

    def __init__(self, corpus, layout, labels, seq_weight, *, c2, n_chunks,
                 block_tokens=None, constraints=None, observed_weight=None):
        self.corpus = corpus
        self.layout = layout
        self.seq_weight = np.ascontiguousarray(seq_weight, dtype=np.float64)
        self.c2 = float(c2)
        self.n_chunks = int(n_chunks)
        self.constraints = constraints
        L = layout.n_labels
        # the weights of the observed counts: the sequence weights, unless
        # partial labels give some sequences none (PartialLabelObjective)
        if observed_weight is None:
            observed_weight = self.seq_weight
        observed_weight = np.ascontiguousarray(observed_weight, dtype=np.float64)
        self.observed = observed_counts(
            corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, layout.attr_ptr,
            layout.attr_label, layout.transition_index(),
            np.ascontiguousarray(labels, dtype=np.int32), corpus.seq_ptr, observed_weight,
            layout.n_params,
        )
        seq_ptr = corpus.seq_ptr
        self._block_ptr = block_bounds(seq_ptr, block_tokens)
        self._token_bounds = seq_ptr[self._block_ptr]
        n_blocks = len(self._block_ptr) - 1
        self._dense = corpus.dense if layout.n_dense else None
        self._distinct = None
        if self._dense is not None:
            if self._dense.shape != (corpus.n_tokens, layout.n_dense):
                raise ValueError(
                    f"the corpus has dense features of shape {self._dense.shape}, the "
                    f"layout expects ({corpus.n_tokens}, {layout.n_dense})"
                )
            token_weight = np.repeat(observed_weight, np.diff(seq_ptr))
            labels64 = np.ascontiguousarray(labels, dtype=np.int64)
            self._distinct = distinct_rows(self._dense)
            if self._distinct is None:
                self.observed[layout.dense_start:] = observed_dense_counts(
                    self._dense, labels64, token_weight, self._token_bounds, L,
                ).ravel()
                self._block_dense = np.zeros((n_blocks, layout.n_dense, L))
                # a pool of work buffers, one per thread at most
                max_rows = int(np.max(np.diff(self._token_bounds), initial=0))
                self._buffer_pool = [block_buffers(self._dense, max_rows, L)
                                     for _ in range(max(1, self.n_chunks))]
            else:
                self.observed[layout.dense_start:] = observed_distinct_counts(
                    self._distinct, labels64, token_weight, L,
                ).ravel()
                n_distinct = self._distinct.rows.shape[0]
                self._distinct_scores = np.zeros((n_distinct, L))
                self._distinct_counts = np.zeros((n_distinct, L))
        self.dense_index = layout.dense_index()
        # work buffers reused by every evaluation: the dense state weights (zero
        # where a pair has no parameter), the rows of expected state counts, the
        # weighted node marginals, the blocks' sums
        self._w_attr = layout.attribute_matrix(
            np.zeros(layout.n_params), self.dense_index
        )
        # the expected state counts: rows (for the attributes with several
        # parameters when a row each would be large), the others straight
        # into the gradient (CountRows; the entry index holds the codes)
        self._rows = count_rows(layout.attr_ptr, layout.attr_label, L, self.dense_index)
        self._attr_label = np.ascontiguousarray(layout.attr_label, dtype=np.int32)
        self._g_rows = np.zeros((self._rows.n_rows, L))
        # the longest sequence of each block (the scratch of its log-space
        # passes), and of those its lanes take (the rest run alone)
        lengths = np.diff(seq_ptr)

        def longest(values):
            return (np.maximum.reduceat(values, self._block_ptr[:-1])
                    if len(values) else np.zeros(n_blocks, dtype=np.int64))

        self._block_max_len = longest(lengths)
        self._block_lane_len = longest(lane_lengths(lengths, L))
        # one lane workspace for each thread, sized by the longest sentences of
        # the n_chunks longest blocks: the calls allocate nothing
        self._lanes = LaneWorkspaces(
            np.sort(self._block_lane_len)[::-1][:max(1, self.n_chunks)],
            max_seqs=int(np.max(np.diff(self._block_ptr), initial=0)), L=L)
        # groups of blocks (one group, the corpus, with a dense part: its
        # products read the node marginals of every token)
        if self._dense is None:
            self._group_ptr = block_bounds(
                self._token_bounds, group_tokens(L, self.n_chunks, block_tokens))
        else:
            self._group_ptr = np.array([0, n_blocks], dtype=np.int64)
        self._group_tok = self._token_bounds[self._group_ptr]
        # the sequence offsets less the first token of the group under way
        # (each group writes its own sequences' part)
        self._group_seq_ptr = seq_ptr.copy()
        self._wnode = np.zeros((int(np.max(np.diff(self._group_tok), initial=0)), L))
        self._seq_log_z = np.zeros(corpus.n_sequences)
        self._block_log_z = np.zeros(n_blocks)
        self._block_outer = np.zeros((n_blocks, 4, L, L))
        self._block_edge = np.zeros((n_blocks, L, L))
        self._exp_trans = np.zeros((L, L))
        # the entries by attribute range, in token order within each: one range
        # (the corpus's own order) on one thread, where each block's counts are
        # added as soon as its marginals are known; on several threads, a pass
        # per range after all blocks
        if self.n_chunks > 1:
            index_ptr = np.zeros(corpus.n_attributes + 1, dtype=np.int64)
            np.cumsum(attribute_counts(corpus.tok_attr, corpus.n_attributes),
                      out=index_ptr[1:])
            self._attr_bounds = attribute_ranges(index_ptr, self.n_chunks)
        else:
            self._attr_bounds = np.array([0, corpus.n_attributes], dtype=np.int64)
        self._entries = entry_index(
            corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, self._attr_bounds,
            attr_code=self._rows.attr_code,
        )
        # the first entry of each group in each range (the entries of a range
        # are in token order)
        ptr = self._entries.ptr
        self._group_entries = np.empty((len(self._group_tok), len(ptr) - 1), dtype=np.int64)
        for r in range(len(ptr) - 1):
            self._group_entries[:, r] = ptr[r] + np.searchsorted(
                self._entries.tok[ptr[r]:ptr[r + 1]], self._group_tok)
        # the values as the state scores read them: none when all are 1
        self._tok_val = corpus.tok_val if len(self._entries.val) else np.zeros(0)
        no_label = np.zeros(0, dtype=np.int64)
        self._forbidden_start = self._forbidden_end = no_label
        if constraints is not None:
            self._forbidden_start = np.flatnonzero(~constraints.start).astype(np.int64)
            self._forbidden_end = np.flatnonzero(~constraints.end).astype(np.int64)

    @property
    def n_params(self):
        """Length of the weight vector w."""
        return self.layout.n_params

    def nll(self, w):
        """Unregularized weighted negative log-likelihood and its gradient in w."""
        layout = self.layout
        corpus = self.corpus
        w_attr = layout.attribute_matrix(w, self.dense_index, out=self._w_attr)
        trans = layout.transition_matrix(w)
        if self.constraints is not None:
            trans[~self.constraints.transitions] = -np.inf
        block_ptr = self._block_ptr
        block_max_len = self._block_max_len
        wnode = self._wnode
        rows, attr_label, g_rows = self._rows, self._attr_label, self._g_rows
        attr_ptr = layout.attr_ptr
        grad = np.empty(layout.n_params)
        g_state = grad[: layout.n_state]  # the counts of single-parameter attributes
        token_bounds = self._token_bounds
        tok_ptr = corpus.tok_ptr
        entries = self._entries
        dense = self._dense
        if dense is not None:
            w_dense = layout.dense_matrix(w)
        # one thread: each block's counts are added right after its
        # forward-backward (its rows still in cache); several: after all blocks
        fused = self.n_chunks == 1

        # the group of blocks under way: its first token (wnode's first row),
        # the sequence offsets less it and the token offsets from it
        group = [0, corpus.seq_ptr, tok_ptr]

        def scatter_block(b):
            a, e = token_bounds[b], token_bounds[b + 1]
            scatter_state_counts(wnode, entries.tok, entries.attr, entries.val,
                                 tok_ptr[a], tok_ptr[e], group[0], attr_label, g_rows,
                                 g_state)

        def blocks(first, stop, with_scores):
            # scores, forward-backward (and counts when fused) of blocks first..stop-1;
            # a block where scaling declines is completed in log space here
            tok0, seq_ptr, group_tok_ptr = group
            lw = self._lanes.take(int(self._block_lane_len[first:stop].max()))
            try:
                while first < stop:
                    b = gradient_blocks_scaled(
                        w_attr, group_tok_ptr, corpus.tok_attr, self._tok_val, with_scores,
                        self._forbidden_start, self._forbidden_end, trans, seq_ptr,
                        self.seq_weight, block_ptr, first, stop, lw, wnode,
                        self._seq_log_z, self._block_log_z, self._block_outer,
                        self._block_edge, fused, entries.tok, entries.attr, entries.val,
                        tok0, attr_label, g_rows, g_state, self._exp_trans,
                    )
                    if b == stop:
                        return
                    forward_backward_blocks_log(
                        wnode, trans, seq_ptr, self.seq_weight, block_ptr, b, b + 1,
                        int(block_max_len[b]), self._seq_log_z, self._block_log_z,
                        self._block_edge,
                    )
                    if fused:
                        scatter_block(b)
                    first = b + 1
            finally:
                self._lanes.give(lw)

        distinct = self._distinct if dense is not None else None
        if dense is None:
            def pass_blocks(first, stop):
                blocks(first, stop, True)
        elif distinct is not None:
            # the scores of the distinct rows, one product; each token's added
            # to its state scores; the counts summed by distinct row in token
            # order (in each block when fused, else after all blocks)
            np.matmul(distinct.rows, w_dense, out=self._distinct_scores)
            counts = self._distinct_counts
            counts.fill(0.0)

            def pass_blocks(first, stop):
                for b in range(first, stop):
                    a, e = token_bounds[b], token_bounds[b + 1]
                    state_scores_dense_range(w_attr, tok_ptr, corpus.tok_attr,
                                             self._tok_val, a, e, wnode[a:e])
                    add_distinct_scores(self._distinct_scores, distinct.row_id, a, e,
                                        wnode)
                    blocks(b, b + 1, False)
                    if fused:
                        add_distinct_counts(wnode, distinct.row_id, a, e, counts)
        else:
            pool = self._buffer_pool

            def pass_blocks(first, stop):
                buffers = pool.pop()  # list.pop/append are atomic: a thread's own
                try:
                    for b in range(first, stop):
                        # one block at a time: its dense rows read (and converted
                        # to float64) once for both products, in cache in between
                        a, e = token_bounds[b], token_bounds[b + 1]
                        state_scores_dense_range(w_attr, tok_ptr, corpus.tok_attr,
                                                 self._tok_val, a, e, wnode[a:e])
                        if e == a:
                            blocks(b, b + 1, False)
                            self._block_dense[b] = 0.0
                            continue
                        rows = dense_rows(dense, a, e, buffers)
                        add_dense_scores(rows, w_dense, wnode[a:e], buffers)
                        blocks(b, b + 1, False)
                        dense_counts(rows, wnode[a:e], self._block_dense[b])
                finally:
                    pool.append(buffers)

        bounds = self._attr_bounds
        group_entries = self._group_entries

        def scatter_ranges(g, first, stop):
            # group g's counts of the attribute ranges first..stop-1
            for r in range(first, stop):
                if g == 0:
                    r0, r1 = rows.row_range(bounds[r], bounds[r + 1])
                    g_rows[r0:r1] = 0.0
                    g_state[attr_ptr[bounds[r]]:attr_ptr[bounds[r + 1]]] = 0.0
                scatter_state_counts(wnode, entries.tok, entries.attr, entries.val,
                                     group_entries[g, r], group_entries[g + 1, r],
                                     group[0], attr_label, g_rows, g_state)

        if fused:
            g_rows.fill(0.0)
            g_state.fill(0.0)
        group_ptr = self._group_ptr
        shifted = self._group_seq_ptr
        for g, tok0 in enumerate(self._group_tok[:-1].tolist()):
            b0, b1 = group_ptr[g], group_ptr[g + 1]
            s0, s1 = block_ptr[b0], block_ptr[b1]
            np.subtract(corpus.seq_ptr[s0:s1 + 1], tok0, out=shifted[s0:s1 + 1])
            group[:] = tok0, shifted, tok_ptr[tok0:]
            if fused:
                pass_blocks(b0, b1)
            else:
                run_ranges(self.n_chunks, b1 - b0,
                           lambda first, stop: pass_blocks(b0 + first, b0 + stop))
                run_ranges(self.n_chunks, len(bounds) - 1,
                           lambda first, stop: scatter_ranges(g, first, stop))
        e_trans = transition_gradient(self._exp_trans, self._block_outer, self._block_edge)
        log_z = 0.0
        for value in self._block_log_z.tolist():  # in block order
            log_z += value
        rows.gather(g_rows, g_state)
        grad[layout.n_state : layout.dense_start] = e_trans[layout.trans_from,
                                                            layout.trans_to]
        if distinct is not None:
            if not fused:
                add_distinct_counts(wnode, distinct.row_id, 0, corpus.n_tokens, counts)
            grad[layout.dense_start :] = (distinct.rows.T @ counts).ravel()
        elif dense is not None:
            grad[layout.dense_start :] = sum_blocks(self._block_dense).ravel()
        grad -= self.observed
        return log_z - w @ self.observed, grad

    def __call__(self, w):
        """The NLL plus the L2 term and its gradient in w."""
        loss, grad = self.nll(w)
        if self.c2 > 0:
            loss += self.c2 * (w @ w)
            grad += 2.0 * self.c2 * w
        return loss, grad


class ConstrainedCRFObjective(CRFObjective):
    """:class:`CRFObjective` under transition constraints ``masks`` (a
    :class:`~sklearn_crf._model.constraints.TransitionConstraints`): the objective
    of ``CRFTagger(constrain_training=True)``, ``p(y | x, y allowed)``."""

    def __init__(self, corpus, layout, labels, seq_weight, *, c2, masks, n_chunks,
                 block_tokens=None):
        super().__init__(corpus, layout, labels, seq_weight, c2=c2, n_chunks=n_chunks,
                         block_tokens=block_tokens, constraints=masks)


def partial_sequences(allowed, seq_ptr):
    """Which sequences are partially labelled, and which of those restrict
    their paths at all.

    Returns ``partial`` (n_sequences,) bool, a token of the sequence may take
    several labels, and ``restricted`` (n_sequences,) bool, a token of the
    sequence may not take some label (``allowed`` (n_tokens, L)).
    """
    n_seq = len(seq_ptr) - 1
    seq = np.repeat(np.arange(n_seq), np.diff(seq_ptr))
    several = np.count_nonzero(allowed, axis=1) > 1
    missing = ~allowed.all(axis=1)
    return (np.bincount(seq[several], minlength=n_seq) > 0,
            np.bincount(seq[missing], minlength=n_seq) > 0)


def select_tokens(corpus, tokens, seq_ptr, featureless=None):
    """The corpus of the tokens ``tokens`` of ``corpus`` (in that order), as
    sequences ``seq_ptr`` over them; the tokens where ``featureless`` (bool,
    one per selected token) is True keep no entry and a zero dense row. An
    empty ``tok_val`` (every value 1) stays empty."""
    n_own = np.diff(corpus.tok_ptr)[tokens]
    if featureless is not None:
        n_own = np.where(featureless, 0, n_own)
    tok_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(n_own, out=tok_ptr[1:])
    entries = (np.repeat(corpus.tok_ptr[:-1][tokens] - tok_ptr[:-1], n_own)
               + np.arange(tok_ptr[-1]))
    dense = None
    if corpus.dense is not None:
        dense = np.ascontiguousarray(corpus.dense[tokens])
        if featureless is not None:
            dense[featureless] = 0.0
    tok_val = corpus.tok_val[entries] if len(corpus.tok_val) else corpus.tok_val
    return EncodedCorpus(
        tok_ptr=tok_ptr, tok_attr=corpus.tok_attr[entries],
        tok_val=tok_val, seq_ptr=np.asarray(seq_ptr, dtype=np.int64),
        n_attributes=corpus.n_attributes, dense=dense,
    )


class PartialPaths(NamedTuple):
    """The paths of partially labelled sequences, cut where they are known.

    A token with one allowed label (*pinned*) fixes the path there, so the
    sum over the allowed paths of a sequence is a product of independent
    parts: the *windows*, maximal runs of tokens that may take several labels
    with the pinned token on each side, and the rest, where the path is
    known. A window's pinned edge tokens carry no state score there (their
    state features, like every transition between two known labels, count
    in the known part), so every state and transition feature of a path
    counts exactly once.

    Attributes
    ----------
    window_tokens : ndarray of int64
        The tokens of the windows, window after window.
    window_ptr : ndarray of int64
        Window ``k`` is ``window_tokens[window_ptr[k]:window_ptr[k + 1]]``.
    window_weight : ndarray of float64
        The weight of each window's sequence.
    edge : ndarray of bool, shape (len(window_tokens),)
        The pinned edge tokens of the windows.
    known_tokens, known_ptr, known_weight
        The same for the runs of the known part (their transitions are those
        between consecutive tokens of a run).
    """

    window_tokens: np.ndarray
    window_ptr: np.ndarray
    window_weight: np.ndarray
    edge: np.ndarray
    known_tokens: np.ndarray
    known_ptr: np.ndarray
    known_weight: np.ndarray


def partial_paths(allowed, seq_ptr, keep, seq_weight):
    """The :class:`PartialPaths` of the sequences ``keep`` (bool, one per
    sequence) under ``allowed`` (n_tokens, L)."""
    n_tok = allowed.shape[0]
    seq = np.repeat(np.arange(len(seq_ptr) - 1), np.diff(seq_ptr))
    kept = keep[seq]
    pinned = np.count_nonzero(allowed, axis=1) == 1
    free = kept & ~pinned
    same_prev = np.zeros(n_tok, dtype=bool)
    same_prev[1:] = seq[1:] == seq[:-1]
    same_next = np.zeros(n_tok, dtype=bool)
    same_next[:-1] = same_prev[1:]
    in_window = free.copy()
    in_window[:-1] |= free[1:] & same_next[:-1]
    in_window[1:] |= free[:-1] & same_prev[1:]

    def runs(mask):
        tokens = np.flatnonzero(mask)
        starts = mask & ~(np.concatenate([[False], mask[:-1]]) & same_prev)
        ptr = np.append(np.flatnonzero(starts[tokens]), len(tokens)).astype(np.int64)
        return tokens, ptr, np.ascontiguousarray(seq_weight[seq[tokens[ptr[:-1]]]],
                                                 dtype=np.float64)

    window_tokens, window_ptr, window_weight = runs(in_window)
    edge = np.zeros(len(window_tokens), dtype=bool)
    if len(window_tokens):
        edge[window_ptr[:-1]] = True
        edge[window_ptr[1:] - 1] = True
    edge &= pinned[window_tokens]
    known = kept & pinned
    known[window_tokens[~edge]] = False
    known_tokens, known_ptr, known_weight = runs(known)
    return PartialPaths(window_tokens, window_ptr, window_weight, edge, known_tokens,
                        known_ptr, known_weight)


class AllowedPathsTerm(CRFObjective):
    """g(w) = Σ_s v_s log Z_s(allowed) and its gradient, the weighted expected
    feature counts under the label paths ``allowed`` allows.

    ``allowed`` (n_tokens, L) bool are the labels each token of ``corpus``
    may take. The labels a token may not take are -inf state scores, added
    through the state weights: each distinct row of ``allowed`` with a
    ``False`` is one more attribute, after the corpus's own, whose row of the
    dense (attributes × labels) weight matrix is 0 where the row allows a
    label and -inf where it does not, and which has no parameter (so
    :meth:`ParameterLayout.attribute_matrix` never writes it); each such
    token gets one entry of that attribute, value 1, after its own entries.
    The state scores, forward-backward and counts are then
    :class:`CRFObjective`'s, on the same kernels, with the same bits for any
    ``n_chunks``; the sequences with a -inf score are completed in log
    space, exact with -inf scores (as under ``constraints``, which apply
    too). The observed counts are zero: :meth:`nll` returns ``(g(w), ∇g)``.
    """

    def __init__(self, corpus, layout, allowed, seq_weight, *, n_chunks,
                 block_tokens=None, constraints=None):
        n_tok = corpus.n_tokens
        n_attr = corpus.n_attributes
        restricted = ~allowed.all(axis=1)
        patterns, pattern_of = np.unique(allowed[restricted], axis=0,
                                         return_inverse=True)
        # one more entry, after its own, for each token with a forbidden label
        n_own = np.diff(corpus.tok_ptr)
        tok_ptr = np.zeros(n_tok + 1, dtype=np.int64)
        np.cumsum(n_own + restricted, out=tok_ptr[1:])
        shift = np.repeat(tok_ptr[:-1] - corpus.tok_ptr[:-1], n_own)
        own = np.arange(len(corpus.tok_attr)) + shift
        tok_attr = np.empty(tok_ptr[-1], dtype=np.int32)
        tok_attr[own] = corpus.tok_attr
        tok_val = corpus.tok_val  # empty: every value is 1, the new entries' too
        if len(tok_val):
            tok_val = np.ones(tok_ptr[-1])
            tok_val[own] = corpus.tok_val
        tok_attr[tok_ptr[1:][restricted] - 1] = n_attr + pattern_of.ravel()
        extended = EncodedCorpus(
            tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=tok_val,
            seq_ptr=corpus.seq_ptr, n_attributes=n_attr + len(patterns),
            dense=corpus.dense,
        )
        attr_ptr = np.concatenate(
            [layout.attr_ptr, np.full(len(patterns), layout.attr_ptr[-1])]
        )
        super().__init__(
            extended, dataclasses.replace(layout, attr_ptr=attr_ptr),
            np.zeros(n_tok, dtype=np.int32), seq_weight, c2=0.0, n_chunks=n_chunks,
            block_tokens=block_tokens, constraints=constraints,
            observed_weight=np.zeros(corpus.n_sequences),
        )
        self._w_attr[n_attr:] = np.where(patterns, 0.0, -np.inf)


class PartialLabelObjective:
    """f(w) = Σ_s v_s (log Z_s − log Z_s(allowed)) + c2·‖w‖² and its gradient:
    the objective of partially labelled sequences.

    ``allowed`` (n_tokens, L) bool are the labels each token may take (one
    for a labelled token). The likelihood of a sequence is the total
    probability of the label paths its partial labels allow, so the
    gradient is the expected feature counts under the model minus those
    under the model restricted to the allowed paths; for a fully labelled
    sequence, the restricted expectation is the observed counts.

    :class:`CRFObjective` over the whole corpus gives log Z and the expected
    counts of every sequence, and the observed counts of the fully labelled
    ones only: those sequences get exactly the terms, and bits, of
    :class:`CRFObjective`. The restricted sums of the partially labelled
    sequences are cut where their labels are known (:class:`PartialPaths`):
    :class:`AllowedPathsTerm` over the windows, observed counts over the
    rest, so that the forward-backward with -inf scores (log space) runs
    over the tokens near an unknown label only. A sequence whose tokens all
    allow every label has no term at all (its two terms would be equal).
    ``labels`` are the label codes of the labelled tokens (any allowed label
    elsewhere). Transition ``constraints`` apply to both terms (their first
    and last labels as allowed labels of the first and last tokens); every
    sequence must have an allowed path (the caller checks,
    :func:`~sklearn_crf._engine.decoding.check_feasible`). Bitwise the same
    for any ``n_chunks``.
    """

    def __init__(self, corpus, layout, labels, allowed, seq_weight, *, c2, n_chunks,
                 block_tokens=None, constraints=None):
        self.layout = layout
        self.c2 = float(c2)
        seq_weight = np.ascontiguousarray(seq_weight, dtype=np.float64)
        seq_ptr = corpus.seq_ptr
        partial, restricted = partial_sequences(allowed, seq_ptr)
        free_weight = np.where(partial & ~restricted, 0.0, seq_weight)
        self.free = CRFObjective(
            corpus, layout, labels, free_weight, c2=0.0, n_chunks=n_chunks,
            block_tokens=block_tokens, constraints=constraints,
            observed_weight=np.where(partial, 0.0, seq_weight),
        )
        keep = partial & restricted & (seq_weight > 0)
        window_constraints = None
        if constraints is not None:
            # the first and last labels as allowed labels of those tokens
            lengths = np.diff(seq_ptr)
            allowed = allowed.copy()
            allowed[seq_ptr[:-1][lengths > 0]] &= constraints.start
            allowed[seq_ptr[1:][lengths > 0] - 1] &= constraints.end
            L = layout.n_labels
            window_constraints = TransitionConstraints(
                constraints.transitions, np.ones(L, dtype=bool), np.ones(L, dtype=bool),
                None,
            )
        paths = partial_paths(allowed, seq_ptr, keep, seq_weight)
        self.windows = None
        if len(paths.window_weight):
            tokens = paths.window_tokens
            self.windows = AllowedPathsTerm(
                select_tokens(corpus, tokens, paths.window_ptr, paths.edge), layout,
                allowed[tokens], paths.window_weight, n_chunks=n_chunks,
                block_tokens=block_tokens, constraints=window_constraints,
            )
        # the observed counts of the known part
        tokens = paths.known_tokens
        known = select_tokens(corpus, tokens, paths.known_ptr)
        known_labels = np.argmax(allowed[tokens], axis=1)
        self.known_counts = observed_counts(
            known.tok_ptr, known.tok_attr, known.tok_val, layout.attr_ptr,
            layout.attr_label, layout.transition_index(),
            known_labels.astype(np.int32), known.seq_ptr, paths.known_weight,
            layout.n_params,
        )
        if layout.n_dense and len(tokens):
            token_weight = np.repeat(paths.known_weight, np.diff(paths.known_ptr))
            self.known_counts[layout.dense_start:] = observed_dense_counts(
                known.dense, known_labels.astype(np.int64), token_weight,
                np.array([0, len(tokens)]), layout.n_labels,
            ).ravel()

    @property
    def n_params(self):
        """Length of the weight vector w."""
        return self.layout.n_params

    def nll(self, w):
        """Unregularized weighted negative log-likelihood and its gradient in w."""
        loss, grad = self.free.nll(w)
        if self.windows is not None:
            log_z, expected = self.windows.nll(w)
            loss -= log_z
            grad -= expected
        loss -= w @ self.known_counts
        grad -= self.known_counts
        return loss, grad

    __call__ = CRFObjective.__call__


def crf_objective(corpus, layout, labels, seq_weight, *, allowed=None, **kwargs):
    """The training objective of ``labels``: :class:`CRFObjective`, or
    :class:`PartialLabelObjective` when ``allowed`` (n_tokens, L) bool, the
    labels each token may take, is given (partial labels). ``kwargs`` are
    those of :class:`CRFObjective`."""
    if allowed is None:
        return CRFObjective(corpus, layout, labels, seq_weight, **kwargs)
    return PartialLabelObjective(corpus, layout, labels, allowed, seq_weight, **kwargs)
