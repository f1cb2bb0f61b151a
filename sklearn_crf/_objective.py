"""Parameter layout and the regularized negative log-likelihood of a linear-chain CRF.

The parameter vector is CRFsuite's: one weight per (attribute, label) state
feature, attribute-major (``attr_ptr`` / ``attr_label`` CSR), followed by one
weight per allowed (from label, to label) transition, followed by one weight
per (dense dimension, label) pair, ``(n_dense, n_labels)`` row-major (every
pair has one: dense dimensions are never pruned).
"""

from dataclasses import dataclass

import numpy as np

from ._engine import (
    attribute_index,
    attribute_ranges,
    block_bounds,
    forward_backward_blocks,
    gather_state_counts,
    observed_counts,
    pair_frequencies,
    run_ranges,
    state_scores_dense_range,
    transition_gradient,
)
from ._engine.dense import (
    add_dense_scores_blocks,
    dense_counts_blocks,
    observed_dense_counts,
    sum_blocks,
)


@dataclass(frozen=True)
class ParameterLayout:
    """Which (attribute, label) and (label, label) pairs carry a weight.

    The weight vector ``w`` is ``[state | transitions | dense]``: ``n_state``
    weights of the (attribute, label) pairs in ``attr_ptr`` / ``attr_label``
    order, ``n_trans`` weights of the (``trans_from``, ``trans_to``) pairs,
    then ``n_dense * n_labels`` weights of the dense dimensions, row-major
    (``w[dense_start + j * n_labels + k]`` is the weight of dimension ``j``
    for label ``k``). Layouts pickled before the dense part existed read as
    ``n_dense = 0``.
    """

    attr_ptr: np.ndarray  # (n_attributes + 1,) int64
    attr_label: np.ndarray  # (n_state,) int32
    trans_from: np.ndarray  # (n_trans,) int32
    trans_to: np.ndarray  # (n_trans,) int32
    n_labels: int
    n_dense: int = 0

    @property
    def n_state(self):
        """Number of state weights."""
        return self.attr_label.shape[0]

    @property
    def n_trans(self):
        """Number of transition weights."""
        return self.trans_from.shape[0]

    @property
    def dense_start(self):
        """Index in ``w`` of the first dense weight (``n_state + n_trans``)."""
        return self.n_state + self.trans_from.shape[0]

    @property
    def n_params(self):
        """Length of the weight vector."""
        return self.dense_start + self.n_dense * self.n_labels

    def transition_weights(self, w):
        """The transition part of ``w``, shape (n_trans,) (a view)."""
        return w[self.n_state : self.dense_start]

    def dense_matrix(self, w):
        """The dense weights of ``w`` as an (n_dense, n_labels) view."""
        return w[self.dense_start : self.n_params].reshape(self.n_dense, self.n_labels)

    def transition_index(self):
        """Parameter index (L, L) int64 of each transition, -1 where it has none."""
        index = np.full((self.n_labels, self.n_labels), -1, dtype=np.int64)
        index[self.trans_from, self.trans_to] = self.n_state + np.arange(
            len(self.trans_from)
        )
        return index

    def transition_matrix(self, w):
        """Dense (L, L) transition weights from the parameter vector."""
        trans = np.zeros((self.n_labels, self.n_labels))
        trans[self.trans_from, self.trans_to] = self.transition_weights(w)
        return trans

    def state_pairs(self):
        """Attribute id of each state parameter, (n_state,) int64."""
        return np.repeat(np.arange(len(self.attr_ptr) - 1), np.diff(self.attr_ptr))

    def dense_index(self):
        """Flat index of each state parameter in an (n_attributes, L) matrix."""
        return self.state_pairs() * self.n_labels + self.attr_label

    def attribute_matrix(self, w, dense_index=None, out=None):
        """Dense (n_attributes, L) state weights from the parameter vector.

        ``out``, a matrix this method returned before for the same layout, is
        refilled in place and returned (its entries without a parameter are
        still 0).
        """
        if dense_index is None:
            dense_index = self.dense_index()
        if out is None:
            out = np.zeros((len(self.attr_ptr) - 1, self.n_labels))
        out.ravel()[dense_index] = w[: self.n_state]
        return out


def build_layout(
    corpus, labels, n_labels, *, min_freq, all_possible_states, all_possible_transitions,
):
    """The parameter layout seen in training data, exactly as CRFsuite builds it.

    ``corpus`` is an :class:`~sklearn_crf._vectorizer.EncodedCorpus`. CRFsuite's
    rule (``crf1df_generate``): the candidate state features are the (a, y)
    pairs where attribute ``a`` occurs (with any value, 0 included: the
    corpus's zero entries) on a token labelled ``y``, with frequency the sum of
    those values; the candidate transitions are the label bigrams of the data,
    with frequency their count. ``all_possible_states`` adds every (attribute,
    label) pair and ``all_possible_transitions`` every label pair, with
    frequency 0 when unseen. A candidate is kept when its frequency is at least
    ``min_freq`` (for ``min_freq=0`` too: a pair whose values sum to a
    negative number is dropped). The corpus's dense dimensions (``n_dense``)
    get a weight for every label, whatever ``min_freq``.
    """
    L = n_labels
    n_attributes = corpus.n_attributes
    freq, seen = pair_frequencies(
        corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, labels, n_attributes, L
    )
    if all_possible_states:
        seen[:] = True
    elif len(corpus.zero_tok):
        seen[corpus.zero_attr, labels[corpus.zero_tok]] = True
    seen &= freq >= min_freq
    del freq
    attr_label = np.nonzero(seen.ravel())[0]
    attr_label %= L
    attr_label = attr_label.astype(np.int32)
    attr_ptr = np.zeros(n_attributes + 1, dtype=np.int64)
    np.cumsum(seen.sum(axis=1), out=attr_ptr[1:])
    del seen
    seq_ptr = corpus.seq_ptr
    starts = seq_ptr[:-1]
    has_prev = np.ones(len(labels), dtype=bool)
    has_prev[starts[seq_ptr[1:] > starts]] = False
    idx = np.flatnonzero(has_prev)
    counts = np.bincount(
        labels[idx - 1].astype(np.int64) * L + labels[idx], minlength=L * L
    ).astype(np.float64)
    keep = counts >= min_freq
    if not all_possible_transitions:
        keep &= counts > 0
    trans_from, trans_to = np.divmod(np.flatnonzero(keep), L)
    return ParameterLayout(
        attr_ptr=attr_ptr,
        attr_label=attr_label,
        trans_from=trans_from.astype(np.int32),
        trans_to=trans_to.astype(np.int32),
        n_labels=L,
        n_dense=corpus.n_dense,
    )


class CRFObjective:
    """f(w) = Σ_s v_s (log Z_s - score_s) + c2·‖w‖² and its gradient.

    The smooth part of CRFsuite's objective: the weighted negative
    log-likelihood of an :class:`~sklearn_crf._vectorizer.EncodedCorpus` plus
    the L2 term; the L1 term ``c1·‖w‖₁`` is the solver's business (see
    :func:`~sklearn_crf._optimize.minimize_crf`). ``v_s`` are per-sequence
    weights. Everything is arrays before the optimizer starts; a call does no
    per-token Python work.

    With ``constraints`` (a
    :class:`~sklearn_crf._constraints.TransitionConstraints`: allowed
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
    :func:`~sklearn_crf._constraints.check_allowed_labels`).

    The gradient is computed on ``n_chunks`` threads in passes over fixed
    blocks of sequences (``block_tokens`` tokens, default
    :data:`~sklearn_crf._engine.driver.BLOCK_TOKENS`): the state scores of
    each block's tokens, then forward-backward per block, which replaces them
    by the weighted node marginals
    (:func:`~sklearn_crf._engine.forward_backward.forward_backward_blocks`),
    then the expected state counts gathered by attribute
    (:func:`~sklearn_crf._engine.scores.gather_state_counts`). The result is
    bitwise the same for any ``n_chunks``, and the memory does not grow with
    it: one dense (attributes × labels) weight matrix, one (tokens × labels)
    buffer, an index of the entries by attribute (4 bytes an entry, 12 when
    some value is not 1), and a few (L, L) sums per block.

    A corpus with a dense part (``corpus.dense``, (n_tokens, n_dense)) adds
    ``dense @ W_dense`` to the state scores of each block and gets the
    gradient ``denseᵀ (expected − observed)`` of ``W_dense`` from the same
    node marginals, one BLAS product a block in each phase
    (:mod:`sklearn_crf._engine.dense`); the blocks' (n_dense, L) sums are
    added in block order, so the result stays bitwise the same for any
    ``n_chunks``. A float32 dense part is converted a block at a time (the
    corpus's array is used as it is, never copied whole); the dense part adds
    one (n_dense, L) sum per block to the memory.
    """

    def __init__(self, corpus, layout, labels, seq_weight, *, c2, n_chunks,
                 block_tokens=None, constraints=None):
        self.corpus = corpus
        self.layout = layout
        self.seq_weight = np.ascontiguousarray(seq_weight, dtype=np.float64)
        self.c2 = float(c2)
        self.n_chunks = int(n_chunks)
        self.constraints = constraints
        L = layout.n_labels
        self.observed = observed_counts(
            corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, layout.attr_ptr,
            layout.attr_label, layout.transition_index(),
            np.ascontiguousarray(labels, dtype=np.int32), corpus.seq_ptr, self.seq_weight,
            layout.n_params,
        )
        seq_ptr = corpus.seq_ptr
        self._block_ptr = block_bounds(seq_ptr, block_tokens)
        self._token_bounds = seq_ptr[self._block_ptr]
        n_blocks = len(self._block_ptr) - 1
        self._dense = corpus.dense if layout.n_dense else None
        if self._dense is not None:
            if self._dense.shape != (corpus.n_tokens, layout.n_dense):
                raise ValueError(
                    f"the corpus has dense features of shape {self._dense.shape}, the "
                    f"layout expects ({corpus.n_tokens}, {layout.n_dense})"
                )
            token_weight = np.repeat(self.seq_weight, np.diff(seq_ptr))
            self.observed[layout.dense_start:] = observed_dense_counts(
                self._dense, np.ascontiguousarray(labels, dtype=np.int64), token_weight,
                self._token_bounds, L,
            ).ravel()
            self._block_dense = np.zeros((n_blocks, layout.n_dense, L))
        self.dense_index = layout.dense_index()
        # work buffers reused by every evaluation: the dense state weights (zero
        # where a pair has no parameter), the weighted node marginals, the
        # blocks' sums
        self._w_attr = layout.attribute_matrix(
            np.zeros(layout.n_params), self.dense_index
        )
        self._max_len = int(np.max(np.diff(seq_ptr), initial=0))
        self._wnode = np.zeros((corpus.n_tokens, L))
        self._seq_log_z = np.zeros(corpus.n_sequences)
        self._block_log_z = np.zeros(n_blocks)
        self._block_outer = np.zeros((n_blocks, 4, L, L))
        self._block_edge = np.zeros((n_blocks, L, L))
        self._index = attribute_index(
            corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, corpus.n_attributes
        )
        self._attr_bounds = attribute_ranges(self._index.ptr, self.n_chunks)
        if constraints is not None:
            lengths = np.diff(seq_ptr)
            self._first_tok = seq_ptr[:-1][lengths > 0]
            self._last_tok = seq_ptr[1:][lengths > 0] - 1
            self._forbidden_start = np.flatnonzero(~constraints.start)
            self._forbidden_end = np.flatnonzero(~constraints.end)

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
        block_ptr = self._block_ptr
        cons = self.constraints
        if cons is not None:
            trans[~cons.transitions] = -np.inf

        wnode = self._wnode
        token_bounds = self._token_bounds
        dense = self._dense
        if dense is not None:
            w_dense = layout.dense_matrix(w)

        def state_scores(first, stop):
            a, b = token_bounds[first], token_bounds[stop]
            state_scores_dense_range(
                w_attr, corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, a, b, wnode[a:b]
            )
            if dense is not None:
                add_dense_scores_blocks(dense, w_dense, token_bounds, first, stop, wnode)

        def forward_backward(first, stop):
            forward_backward_blocks(
                wnode, trans, corpus.seq_ptr, self.seq_weight, block_ptr, first, stop,
                self._max_len, self._seq_log_z, self._block_log_z, self._block_outer,
                self._block_edge,
            )
            if dense is not None:  # the blocks' expected dense counts
                dense_counts_blocks(
                    dense, wnode, token_bounds, first, stop, self._block_dense
                )

        g_state = np.empty(layout.n_state)
        bounds = self._attr_bounds

        def gather(first, stop):
            gather_state_counts(
                self._wnode, self._index.ptr, self._index.tok, self._index.val,
                layout.attr_ptr, layout.attr_label, bounds[first], bounds[stop], g_state,
            )

        run_ranges(self.n_chunks, len(block_ptr) - 1, state_scores)
        if cons is not None:
            wnode[np.ix_(self._first_tok, self._forbidden_start)] = -np.inf
            wnode[np.ix_(self._last_tok, self._forbidden_end)] = -np.inf
        run_ranges(self.n_chunks, len(block_ptr) - 1, forward_backward)
        run_ranges(self.n_chunks, len(bounds) - 1, gather)
        e_trans = transition_gradient(trans, self._block_outer, self._block_edge)
        log_z = 0.0
        for value in self._block_log_z.tolist():  # in block order
            log_z += value
        parts = [g_state, e_trans[layout.trans_from, layout.trans_to]]
        if dense is not None:
            parts.append(sum_blocks(self._block_dense).ravel())
        grad = np.concatenate(parts)
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
    :class:`~sklearn_crf._constraints.TransitionConstraints`): the objective
    of ``CRFTagger(constrain_training=True)``, ``p(y | x, y allowed)``."""

    def __init__(self, corpus, layout, labels, seq_weight, *, c2, masks, n_chunks,
                 block_tokens=None):
        super().__init__(corpus, layout, labels, seq_weight, c2=c2, n_chunks=n_chunks,
                         block_tokens=block_tokens, constraints=masks)
