"""Parameter layout and the regularized negative log-likelihood of a linear-chain CRF.

The parameter vector is CRFsuite's: one weight per (attribute, label) state
feature, attribute-major (``attr_ptr`` / ``attr_label`` CSR), followed by one
weight per allowed (from label, to label) transition.
"""

from dataclasses import dataclass

import numpy as np

from . import _constraints, _decoding, _kernels


@dataclass(frozen=True)
class ParameterLayout:
    """Which (attribute, label) and (label, label) pairs carry a weight."""

    attr_ptr: np.ndarray  # (n_attributes + 1,) int64
    attr_label: np.ndarray  # (n_state,) int32
    trans_from: np.ndarray  # (n_trans,) int32
    trans_to: np.ndarray  # (n_trans,) int32
    n_labels: int

    @property
    def n_state(self):
        return self.attr_label.shape[0]

    @property
    def n_params(self):
        return self.n_state + self.trans_from.shape[0]

    def transition_matrix(self, w):
        """Dense (L, L) transition weights from the parameter vector."""
        trans = np.zeros((self.n_labels, self.n_labels))
        trans[self.trans_from, self.trans_to] = w[self.n_state :]
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
    negative number is dropped).
    """
    L = n_labels
    n_attributes = corpus.n_attributes
    freq, seen = _kernels.pair_frequencies(
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
    )


class CRFObjective:
    """f(w) = Σ_s v_s (log Z_s - score_s) + c2·‖w‖² and its gradient.

    The smooth part of CRFsuite's objective: the weighted negative
    log-likelihood of an :class:`~sklearn_crf._vectorizer.EncodedCorpus` plus
    the L2 term; the L1 term ``c1·‖w‖₁`` is the solver's business (see
    :func:`~sklearn_crf._optimize.minimize_crf`). ``v_s`` are per-sequence
    weights. Everything is arrays before the optimizer starts; a call does no
    per-token Python work.
    """

    def __init__(self, corpus, layout, labels, seq_weight, *, c2, n_chunks):
        self.corpus = corpus
        self.layout = layout
        self.seq_weight = np.ascontiguousarray(seq_weight, dtype=np.float64)
        self.c2 = float(c2)
        self.n_chunks = int(n_chunks)
        obs_state, obs_trans = _kernels.observed_counts(
            corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, layout.attr_ptr,
            layout.attr_label, labels, corpus.seq_ptr, self.seq_weight,
            layout.n_state, layout.n_labels,
        )
        self.observed = np.concatenate(
            [obs_state, obs_trans[layout.trans_from, layout.trans_to]]
        )
        self.dense_index = layout.dense_index()
        # work buffers reused by every evaluation: the dense state weights (zero
        # where a pair has no parameter) and the per-chunk gradients
        self._w_attr = layout.attribute_matrix(
            np.zeros(layout.n_params), self.dense_index
        )
        self._g_attr = np.empty((self.n_chunks,) + self._w_attr.shape)

    @property
    def n_params(self):
        """Length of the weight vector w."""
        return self.layout.n_params

    def nll(self, w):
        """Unregularized weighted negative log-likelihood and its gradient in w."""
        layout = self.layout
        corpus = self.corpus
        log_z, e_attr, e_trans = _kernels.nll_gradient(
            layout.attribute_matrix(w, self.dense_index, out=self._w_attr),
            layout.transition_matrix(w), corpus.tok_ptr, corpus.tok_attr,
            corpus.tok_val, corpus.seq_ptr, self.seq_weight, self._g_attr,
        )
        grad = np.concatenate([
            e_attr.ravel()[self.dense_index], e_trans[layout.trans_from, layout.trans_to]
        ])
        grad -= self.observed
        return log_z - w @ self.observed, grad

    def __call__(self, w):
        """The NLL plus the L2 term and its gradient in w."""
        loss, grad = self.nll(w)
        if self.c2 > 0:
            loss += self.c2 * (w @ w)
            grad += 2.0 * self.c2 * w
        return loss, grad


class ConstrainedCRFObjective:
    """f(w) = Σ_s v_s (log Z'_s - score_s) + c2·‖w‖² under transition constraints.

    The objective of ``CRFTagger(constrain_training=True)``: as
    :class:`CRFObjective`, but the partition function ``Z'_s`` sums only over
    the label sequences that ``masks`` (a
    :class:`~sklearn_crf._constraints.TransitionConstraints`: allowed
    transitions, first and last labels) allows, so the likelihood is
    ``p(y | x, y allowed)`` and the model spends no probability mass on
    forbidden sequences. The gradient is the expected feature counts under
    that conditional distribution minus the observed counts; transition
    weights of forbidden pairs get no expected count and so only feel the
    regularization. Every training label sequence must be allowed (a
    ValueError naming the sequence and token otherwise).

    State scores are computed from the sparse parameter layout, the
    marginals by the exact masked log-space forward-backward of
    :mod:`sklearn_crf._decoding`, and the expected counts gathered per
    parameter (:func:`~sklearn_crf._decoding.scatter_state_counts`).
    """

    def __init__(self, corpus, layout, labels, seq_weight, *, c2, masks, n_chunks):
        self.corpus = corpus
        self.layout = layout
        self.masks = masks
        self.seq_weight = np.ascontiguousarray(seq_weight, dtype=np.float64)
        self.c2 = float(c2)
        self.n_chunks = int(n_chunks)
        labels = np.asarray(labels, dtype=np.int32)
        seq_ptr = np.asarray(corpus.seq_ptr, dtype=np.int64)
        self.seq_ptr = seq_ptr
        _constraints.check_allowed_labels(masks, labels, seq_ptr)
        self.occurrences = _decoding.attribute_occurrences(
            corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, corpus.n_attributes
        )
        L = layout.n_labels
        lengths = np.diff(seq_ptr)
        tok_weight = np.repeat(self.seq_weight, lengths)
        gold = np.zeros((len(labels), L))
        gold[np.arange(len(labels)), labels] = tok_weight
        obs_state = self._scatter(gold)
        obs_trans = np.zeros((L, L))
        has_prev = np.ones(len(labels), dtype=bool)
        has_prev[seq_ptr[:-1][lengths > 0]] = False
        idx = np.flatnonzero(has_prev)
        np.add.at(obs_trans, (labels[idx - 1], labels[idx]), tok_weight[idx])
        self.observed = np.concatenate(
            [obs_state, obs_trans[layout.trans_from, layout.trans_to]]
        )

    def _scatter(self, node):
        layout, occ = self.layout, self.occurrences
        return _decoding.scatter_state_counts(
            node, layout.attr_ptr, layout.attr_label, occ.occ_ptr, occ.occ_tok,
            occ.occ_val,
        )

    @property
    def n_params(self):
        """Length of the weight vector w."""
        return self.layout.n_params

    def nll(self, w):
        """Unregularized weighted constrained negative log-likelihood and its
        gradient in w."""
        dec = _decoding
        layout = self.layout
        corpus = self.corpus
        w = np.ascontiguousarray(w, dtype=np.float64)
        scores = dec.sparse_state_scores(
            w, layout.attr_ptr, layout.attr_label, corpus.tok_ptr, corpus.tok_attr,
            corpus.tok_val, layout.n_labels,
        )
        problem = dec.apply_constraints(
            scores, layout.transition_matrix(w), self.seq_ptr, self.masks
        )
        log_z, node, edge = dec.masked_expected_counts(
            problem.scores, problem.trans, problem.seq_ptr, self.seq_weight,
            self.n_chunks,
        )
        grad = np.concatenate(
            [self._scatter(node), edge[layout.trans_from, layout.trans_to]]
        )
        grad -= self.observed
        return float(self.seq_weight @ log_z) - w @ self.observed, grad

    def __call__(self, w):
        """The NLL plus the L2 term and its gradient in w."""
        loss, grad = self.nll(w)
        if self.c2 > 0:
            loss += self.c2 * (w @ w)
            grad += 2.0 * self.c2 * w
        return loss, grad
