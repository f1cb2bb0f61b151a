"""Parameter layout and the regularized negative log-likelihood of a linear-chain CRF.

The parameter vector is CRFsuite's: one weight per (attribute, label) state
feature, attribute-major (``attr_ptr`` / ``attr_label`` CSR), followed by one
weight per allowed (from label, to label) transition.
"""

from dataclasses import dataclass

import numpy as np

from . import _kernels


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
    tok_ptr, tok_attr, tok_val, seq_ptr, labels, n_attributes, n_labels, *,
    min_freq, all_possible_states, all_possible_transitions, zero_entries=None,
):
    """The parameter layout seen in training data, as CRFsuite builds it.

    A state feature (a, y) exists when attribute ``a`` fires on a token labelled
    ``y`` and the sum of its values there is at least ``min_freq`` (or for all
    pairs when ``all_possible_states``); a transition (y1, y2) exists when it
    occurs in the training data (or for all pairs when
    ``all_possible_transitions``). ``zero_entries`` are the (token ids,
    attribute ids) where an attribute had the value 0: those pairs count as
    seen, with frequency 0.
    """
    L = n_labels
    if all_possible_states:
        attr_ptr = np.arange(n_attributes + 1, dtype=np.int64) * L
        attr_label = np.tile(np.arange(L, dtype=np.int32), n_attributes)
    else:
        freq, seen = _kernels.pair_frequencies(
            tok_ptr, tok_attr, tok_val, labels, n_attributes, L
        )
        if zero_entries is not None and len(zero_entries[0]):
            zero_tok, zero_attr = zero_entries
            seen[zero_attr, labels[zero_tok]] = True
        if min_freq > 0:
            seen &= freq >= min_freq
        del freq
        attr_label = np.nonzero(seen.ravel())[0]
        attr_label %= L
        attr_label = attr_label.astype(np.int32)
        attr_ptr = np.zeros(n_attributes + 1, dtype=np.int64)
        np.cumsum(seen.sum(axis=1), out=attr_ptr[1:])
    if all_possible_transitions:
        trans_from, trans_to = np.divmod(np.arange(L * L, dtype=np.int32), L)
    else:
        starts = seq_ptr[:-1]
        has_prev = np.ones(len(labels), dtype=bool)
        has_prev[starts[seq_ptr[1:] > starts]] = False
        idx = np.flatnonzero(has_prev)
        pairs = np.unique(labels[idx - 1].astype(np.int64) * L + labels[idx])
        trans_from, trans_to = np.divmod(pairs, L)
    return ParameterLayout(
        attr_ptr=attr_ptr,
        attr_label=attr_label,
        trans_from=trans_from.astype(np.int32),
        trans_to=trans_to.astype(np.int32),
        n_labels=L,
    )


class CRFObjective:
    """f(x) = Σ_s v_s (log Z_s - score_s) + c1·‖w‖₁ + c2·‖w‖² and its gradient.

    ``v_s`` are per-sequence weights. With ``c1 > 0`` the optimizer variable is
    ``x = [w⁺, w⁻]`` (both bounded below by 0, ``w = w⁺ - w⁻``) and the L1 term is
    ``c1·Σ x``; otherwise ``x = w``. Everything is arrays before the optimizer
    starts; a call does no per-token Python work.
    """

    def __init__(self, data, layout, labels, seq_weight, *, c1, c2, n_chunks):
        self.tok_ptr, self.tok_attr, self.tok_val, self.seq_ptr = data
        self.layout = layout
        self.seq_weight = np.ascontiguousarray(seq_weight, dtype=np.float64)
        self.c1 = float(c1)
        self.c2 = float(c2)
        self.n_chunks = int(n_chunks)
        obs_state, obs_trans = _kernels.observed_counts(
            self.tok_ptr, self.tok_attr, self.tok_val, layout.attr_ptr,
            layout.attr_label, labels, self.seq_ptr, self.seq_weight,
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
    def split(self):
        return self.c1 > 0

    def weights(self, x):
        """The CRF weights w of an optimizer variable x."""
        if self.split:
            n = self.layout.n_params
            return x[:n] - x[n:]
        return x

    def initial_point(self, w):
        """The optimizer variable for the CRF weights w."""
        if self.split:
            return np.concatenate([np.maximum(w, 0.0), np.maximum(-w, 0.0)])
        return np.array(w, dtype=np.float64)

    def bounds(self):
        """L-BFGS-B bounds as (lower, upper) arrays, or None without L1."""
        if not self.split:
            return None
        n = 2 * self.layout.n_params
        return np.zeros(n), np.full(n, np.inf)

    def nll(self, w):
        """Unregularized weighted negative log-likelihood and its gradient in w."""
        layout = self.layout
        log_z, e_attr, e_trans = _kernels.nll_gradient(
            layout.attribute_matrix(w, self.dense_index, out=self._w_attr),
            layout.transition_matrix(w), self.tok_ptr, self.tok_attr,
            self.tok_val, self.seq_ptr, self.seq_weight, self._g_attr,
        )
        grad = np.concatenate([
            e_attr.ravel()[self.dense_index], e_trans[layout.trans_from, layout.trans_to]
        ])
        grad -= self.observed
        return log_z - w @ self.observed, grad

    def smooth(self, w):
        """The NLL plus the L2 term (everything but L1) and its gradient in w."""
        loss, grad = self.nll(w)
        if self.c2 > 0:
            loss += self.c2 * (w @ w)
            grad += 2.0 * self.c2 * w
        return loss, grad

    def full_loss(self, w, smooth_loss):
        """The whole objective at w given ``smooth(w)[0]``."""
        return smooth_loss + self.c1 * np.abs(w).sum()

    def __call__(self, x):
        """The objective and its gradient in the L-BFGS-B variable x."""
        w = self.weights(x)
        loss, grad = self.smooth(w)
        if self.split:
            loss += self.c1 * x.sum()
            return loss, np.concatenate([grad + self.c1, self.c1 - grad])
        return loss, grad
