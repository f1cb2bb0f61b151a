"""The parameter layout: which (attribute, label), (label, label) and (dense
dimension, label) pairs carry a weight, and CRFsuite's rules that choose them.

One home for the rules, used by the local fit, the sharded fit (on the shards'
summed statistics), per-fold layouts and :meth:`CRFTagger.from_weights`.
The weight vector is ``[state | transitions | dense]``: state weights
attribute-major (``attr_ptr`` / ``attr_label`` CSR), transitions by (from,
to), dense weights ``(n_dense, n_labels)`` row-major.
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import sparse

from .._engine import pair_frequencies


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

    Attributes
    ----------
    attr_ptr : ndarray of shape (n_attributes + 1,), int64
        CSR offsets: the labels of attribute ``a`` are
        ``attr_label[attr_ptr[a]:attr_ptr[a + 1]]``.
    attr_label : ndarray of shape (n_state,), int32
        The label of each state weight.
    trans_from, trans_to : ndarray of shape (n_trans,), int32
        The (from, to) labels of each transition weight.
    n_labels : int
    n_dense : int, default=0

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_crf import ParameterLayout
    >>> layout = ParameterLayout(
    ...     attr_ptr=np.array([0, 2]), attr_label=np.array([0, 1], np.int32),
    ...     trans_from=np.array([0], np.int32), trans_to=np.array([1], np.int32),
    ...     n_labels=2)
    >>> layout.n_params
    3
    """

    attr_ptr: np.ndarray
    attr_label: np.ndarray
    trans_from: np.ndarray
    trans_to: np.ndarray
    n_labels: int
    n_dense: int = 0

    @property
    def n_attributes(self):
        """Number of attributes (rows of ``attr_ptr`` offsets)."""
        return self.attr_ptr.shape[0] - 1

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


class PairStatistics(NamedTuple):
    """The sufficient statistics of CRFsuite's layout rules.

    Attributes
    ----------
    keys : ndarray of int64, shape (n_pairs,)
        ``attribute * n_labels + label`` of each (attribute, label) pair that
        occurs (with any value, 0 included) on a token with that label;
        sorted, distinct.
    freq : ndarray of float64, shape (n_pairs,)
        The sum of the pair's values.
    bigrams : ndarray of float64, shape (n_labels * n_labels,)
        Count of each label bigram ``from * n_labels + to`` within sequences.
    """

    keys: np.ndarray
    freq: np.ndarray
    bigrams: np.ndarray


def bigram_counts(labels, seq_ptr, n_labels):
    """Label bigram counts within sequences, (n_labels * n_labels,) float64."""
    L = n_labels
    starts = seq_ptr[:-1]
    has_prev = np.ones(len(labels), dtype=bool)
    has_prev[starts[seq_ptr[1:] > starts]] = False
    idx = np.flatnonzero(has_prev)
    return np.bincount(
        labels[idx - 1].astype(np.int64) * L + labels[idx], minlength=L * L
    ).astype(np.float64)


def pair_statistics(corpus, labels, n_labels, attr_map=None):
    """The :class:`PairStatistics` of an encoded corpus and its label codes.

    CRFsuite's candidates (``crf1df_generate``): the (a, y) pairs where
    attribute ``a`` occurs (with any value, 0 included: the corpus's zero
    entries) on a token labelled ``y``, with frequency the sum of those
    values; the label bigrams of the data, with frequency their count.
    ``attr_map`` gives the key's attribute id of each corpus attribute id
    (None: the corpus's own ids), for shards with their own vocabularies.
    """
    L = n_labels
    labels = np.ascontiguousarray(labels, dtype=np.int32)
    freq, seen = pair_frequencies(corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, labels,
                                  corpus.n_attributes, L)
    if len(corpus.zero_tok):
        seen[corpus.zero_attr, labels[corpus.zero_tok]] = True
    attr, label = np.nonzero(seen)
    del seen
    merged = attr if attr_map is None else np.asarray(attr_map)[attr]
    keys = merged.astype(np.int64) * L + label
    freq = freq[attr, label]
    if attr_map is not None:
        order = np.argsort(keys, kind="stable")
        keys, freq = keys[order], freq[order]
    return PairStatistics(keys, freq, bigram_counts(labels, corpus.seq_ptr, L))


def partial_pair_statistics(corpus, allowed):
    """The :class:`PairStatistics` of partial labels: ``allowed`` (n_tokens,
    L) bool, the labels each token may take.

    A token counts as a token of each label it may take (one, when it is
    labelled: then these are :func:`pair_statistics`), except a token that
    may take every label, which counts for none: it says nothing of its own.
    A label bigram counts once for each pair of labels two neighbouring
    tokens may take.
    """
    n_tok, L = allowed.shape
    rows = (allowed & ~allowed.all(axis=1, keepdims=True)).astype(np.float64)
    shape = (n_tok, corpus.n_attributes)

    def by_pair(values, tokens, attrs):
        return np.asarray(
            sparse.csr_matrix((values, (tokens, attrs)), shape=shape).T @ rows
        )

    tokens = np.repeat(np.arange(n_tok), np.diff(corpus.tok_ptr))
    freq = by_pair(corpus.tok_val, tokens, corpus.tok_attr)
    seen = by_pair(np.ones(len(tokens)), tokens, corpus.tok_attr) > 0
    if len(corpus.zero_tok):
        seen |= by_pair(np.ones(len(corpus.zero_tok)), corpus.zero_tok,
                        corpus.zero_attr) > 0
    keys = np.flatnonzero(seen.ravel())
    seq_ptr = corpus.seq_ptr
    has_prev = np.ones(n_tok, dtype=bool)
    has_prev[seq_ptr[:-1][seq_ptr[1:] > seq_ptr[:-1]]] = False
    idx = np.flatnonzero(has_prev)
    bigrams = (rows[idx - 1].T @ rows[idx]).ravel()
    return PairStatistics(keys.astype(np.int64), freq.ravel()[keys], bigrams)


def merge_pair_statistics(total, stats):
    """``total`` and another part's statistics added up (``total`` first; None
    for nothing yet)."""
    if total is None:
        return stats
    keys = np.concatenate([total.keys, stats.keys])
    values = np.concatenate([total.freq, stats.freq])
    merged, inverse = np.unique(keys, return_inverse=True)
    freq = np.zeros(len(merged))
    np.add.at(freq, inverse, values)  # in order: the total's value, then the part's
    return PairStatistics(merged, freq, total.bigrams + stats.bigrams)


def layout_from_pair_statistics(stats, n_attributes, n_labels, *, min_freq,
                                all_possible_states, all_possible_transitions, n_dense=0):
    """CRFsuite's parameter layout from :class:`PairStatistics`.

    A candidate (attribute, label) pair is kept when its frequency is at
    least ``min_freq`` (for ``min_freq=0`` too: a pair whose values sum to a
    negative number is dropped); ``all_possible_states`` makes every pair a
    candidate (frequency 0 when unseen). A label bigram is kept when its
    count is at least ``min_freq`` and, without ``all_possible_transitions``,
    positive. Every dense dimension has a weight per label.
    """
    L = n_labels
    keep = np.zeros((n_attributes, L), dtype=bool)
    if all_possible_states and 0.0 >= min_freq:
        keep[:] = True  # the unseen pairs (frequency 0), then the seen ones' rule
    flat = keep.ravel()
    flat[stats.keys] = stats.freq >= min_freq
    attr_label = (np.nonzero(flat)[0] % L).astype(np.int32)
    attr_ptr = np.zeros(n_attributes + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=attr_ptr[1:])
    del keep, flat
    counts = stats.bigrams
    keep_trans = counts >= min_freq
    if not all_possible_transitions:
        keep_trans &= counts > 0
    trans_from, trans_to = np.divmod(np.flatnonzero(keep_trans), L)
    return ParameterLayout(
        attr_ptr=attr_ptr, attr_label=attr_label, trans_from=trans_from.astype(np.int32),
        trans_to=trans_to.astype(np.int32), n_labels=L, n_dense=n_dense,
    )


def build_layout(
    corpus, labels, n_labels, *, min_freq, all_possible_states, all_possible_transitions,
    allowed=None,
):
    """The parameter layout seen in training data, exactly as CRFsuite builds it.

    ``corpus`` is an :class:`~sklearn_crf.EncodedCorpus` and ``labels`` its
    label codes (n_tokens,): :func:`layout_from_pair_statistics` of
    :func:`pair_statistics`. The corpus's dense dimensions get a weight for
    every label, whatever ``min_freq``. With partial labels, ``allowed``
    (n_tokens, L) bool, the labels each token may take, the statistics are
    :func:`partial_pair_statistics`.
    """
    stats = (pair_statistics(corpus, labels, n_labels) if allowed is None
             else partial_pair_statistics(corpus, allowed))
    return layout_from_pair_statistics(
        stats, corpus.n_attributes, n_labels,
        min_freq=min_freq, all_possible_states=all_possible_states,
        all_possible_transitions=all_possible_transitions, n_dense=corpus.n_dense,
    )


class CanonicalLayout(NamedTuple):
    """A layout in canonical order built from weight pairs, and where each
    given weight goes.

    Attributes
    ----------
    layout : ParameterLayout
    state_order, trans_order : ndarray of int64
        The given state (transition) weights' indices in layout order.
    """

    layout: ParameterLayout
    state_order: np.ndarray
    trans_order: np.ndarray


def layout_from_pairs(state_attr, state_label, trans_from, trans_to, n_attributes,
                      n_labels, n_dense=0):
    """The :class:`CanonicalLayout` of explicit (attribute, label) and (from,
    to) pairs: attribute-major with labels increasing, transitions by from
    then to label, the order :func:`build_layout` produces."""
    state_attr = np.asarray(state_attr, dtype=np.int64)
    state_label = np.asarray(state_label, dtype=np.int64)
    trans_from = np.asarray(trans_from, dtype=np.int64)
    trans_to = np.asarray(trans_to, dtype=np.int64)
    so = np.lexsort((state_label, state_attr))
    to = np.lexsort((trans_to, trans_from))
    layout = ParameterLayout(
        attr_ptr=np.concatenate(
            [[0], np.cumsum(np.bincount(state_attr, minlength=n_attributes))]
        ).astype(np.int64),
        attr_label=state_label[so].astype(np.int32),
        trans_from=trans_from[to].astype(np.int32),
        trans_to=trans_to[to].astype(np.int32),
        n_labels=n_labels,
        n_dense=n_dense,
    )
    return CanonicalLayout(layout, so, to)


def restrict_layout(layout, attr_map):
    """The parameters of ``layout`` of the attributes ``attr_map`` (the
    layout's id of each local attribute id), in local ids.

    Returns the local :class:`ParameterLayout` (the same labels per
    attribute, in the same order; every transition and dense weight) and the
    layout's index of each of its parameters.
    """
    attr_map = np.asarray(attr_map, dtype=np.int64)
    starts = layout.attr_ptr[attr_map]
    counts = layout.attr_ptr[attr_map + 1] - starts
    attr_ptr = np.zeros(len(attr_map) + 1, dtype=np.int64)
    np.cumsum(counts, out=attr_ptr[1:])
    state_map = np.repeat(starts - attr_ptr[:-1], counts) + np.arange(attr_ptr[-1])
    # then every transition and every dense weight, in order
    param_map = np.concatenate(
        [state_map, np.arange(layout.n_state, layout.n_params, dtype=np.int64)])
    local = ParameterLayout(
        attr_ptr=attr_ptr, attr_label=layout.attr_label[state_map],
        trans_from=layout.trans_from, trans_to=layout.trans_to, n_labels=layout.n_labels,
        n_dense=layout.n_dense,
    )
    return local, param_map
