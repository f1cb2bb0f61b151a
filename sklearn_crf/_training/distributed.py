"""Data-parallel training on a Dask cluster: the shards of a corpus live on the
workers, the driver runs the optimizer.

A :class:`ShardedCorpus` is a list of shards, each a contiguous range of the
training sequences held by a Dask worker as a :class:`Shard` (its sequences
encoded with the shard's own vocabulary, its labels and sequence weights).
A fit on it (:func:`prepare_sharded`, then :func:`fit_sharded`) runs in
three map-reduce steps and one loop:

1. **Vocabulary and labels.** Each shard sends its attribute names (in the
   order its vectorizer first saw them) and its labels (in first-seen order);
   the driver merges the name lists in shard order, which gives exactly the
   first-seen order of the whole corpus, i.e. the vocabulary of the local fit,
   and the labels with the local fit's rules
   (:func:`~sklearn_crf._validation.encode_labels`). Each shard gets the map of
   its attribute ids and label codes to the merged ones.
2. **Parameter layout.** Each shard sends the sufficient statistics of
   CRFsuite's rules (:func:`~sklearn_crf._objective.build_layout`) in merged
   ids: its (attribute, label) pairs seen (with any value, 0 included) with the
   sums of their values, and its label bigram counts; the driver adds them up in
   shard order and applies the rules (:func:`layout_from_pair_statistics`).
3. **Shard objectives.** Each worker builds, per shard, a
   :class:`~sklearn_crf._objective.CRFObjective` over the parameters of the
   attributes the shard has (its part of the merged layout) and keeps it.
4. **The solver loop.** Each evaluation broadcasts the weights ``w`` (one
   scatter), each worker returns its shards' unregularized loss and gradient,
   the driver adds them up in shard order, adds the L2 term and runs the same
   :func:`~sklearn_crf._optimize.minimize_crf` as the local fit (L-BFGS-B, or
   OWL-QN for ``c1 > 0``), with early stopping through a
   :class:`~sklearn_crf._optimize.ValidationMonitor` scored on the driver.

The driver holds the model (the vocabulary, the layout, a few weight vectors)
and never a shard. Every worker computation is deterministic (the engine gives
the same bits for any thread count), so a fit is deterministic for a given
sharding, and a shard objective recomputed after a worker was lost gives the
same bits as the one lost.

Faults: a shard made by a task (:meth:`ShardedCorpus.from_sources`: a source
read on a worker) is recomputed by Dask from its source when the worker
holding it dies, and so is its objective: the fit continues to the same model.
A shard scattered from the driver's memory
(:meth:`ShardedCorpus.from_sequences`) cannot be recomputed by Dask: when it
is lost, the fit stops with a :class:`ShardLostError` naming it.
"""

import logging
import uuid
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._engine import pair_frequencies
from .._objective import CRFObjective, ParameterLayout
from .._optimize import minimize_crf
from .._threads import n_threads
from .._validation import check_sequence_weight, check_sequences, encode_labels
from .._vectorizer import SequenceVectorizer
from .solvers import SOLVERS

logger = logging.getLogger("sklearn_crf")

#: seconds a shard's task may take before the fit is taken for stuck (a cold
#: worker compiles the kernels first: a minute or more on a busy machine)
TASK_TIMEOUT = 900


class ShardLostError(RuntimeError):
    """A shard of a :class:`ShardedCorpus` was lost and cannot be recomputed.

    Raised by a fit on a :class:`ShardedCorpus` when a worker holding a shard
    scattered from the driver's memory dies (or when a task of a shard fails
    on every worker it is tried on); the message names the shard and the cause.
    Build the corpus with :meth:`ShardedCorpus.from_sources` for shards that
    Dask recomputes from their source.
    """


# --------------------------------------------------------------------------
# what lives on the workers
# --------------------------------------------------------------------------


class Shard(NamedTuple):
    """One shard of a :class:`ShardedCorpus`, as a worker holds it.

    Attributes
    ----------
    corpus : EncodedCorpus
        The shard's sequences, encoded with the shard's own vocabulary.
    names : list of str
        The attribute name of each of the shard's attribute ids, in the order
        the shard's vectorizer first saw them.
    classes : ndarray of shape (n_shard_labels,)
        The shard's labels, sorted (:func:`~sklearn_crf._validation.encode_labels`).
    labels : ndarray of int32, shape (n_tokens,)
        The gold label of each token, as an index into ``classes``.
    first_labels : list
        The shard's labels in the order they first occur.
    seq_weight : ndarray of float64, shape (n_sequences,)
        The weight of each sequence.
    """

    corpus: Any
    names: list
    classes: np.ndarray
    labels: np.ndarray
    first_labels: list
    seq_weight: np.ndarray


def encode_shard(X, y, sample_weight=None):
    """A :class:`Shard` from feature-dict sequences, their labels and weights
    (on the worker): a new vectorizer's vocabulary, the labels' codes."""
    vectorizer = SequenceVectorizer()
    corpus = vectorizer.fit_encode(X)
    classes, labels = encode_labels(y, corpus.seq_ptr)
    seq_weight = check_sequence_weight(sample_weight, corpus.n_sequences)
    if seq_weight is None:
        seq_weight = np.ones(corpus.n_sequences)
    codes, first = np.unique(labels, return_index=True)
    first_labels = classes[codes[np.argsort(first, kind="stable")]].tolist()
    return Shard(corpus, list(vectorizer.feature_names_), classes, labels, first_labels,
                 seq_weight)


def _encode_part(part):
    """:func:`encode_shard` of a scattered ``(X, y, sample_weight)`` part."""
    return encode_shard(*part)


def load_source_shard(source):
    """A :class:`Shard` from a source (on the worker): ``source()`` returns
    ``(X, y)`` or ``(X, y, sample_weight)``."""
    data = source()
    if not isinstance(data, tuple) or len(data) not in (2, 3):
        raise TypeError(
            f"a shard source must return (X, y) or (X, y, sample_weight), got "
            f"{type(data).__name__}" + (f" of length {len(data)}" if isinstance(data, tuple) else "")
        )
    return encode_shard(*data)


class ShardSummary(NamedTuple):
    """What the driver learns of a shard before the vocabulary is merged.

    Attributes
    ----------
    names : list of str
        The shard's attribute names (:attr:`Shard.names`).
    first_labels : list
        The shard's labels in first-seen order.
    classes : ndarray
        The shard's sorted labels (what its label codes index).
    n_sequences, n_tokens : int
        The shard's size.
    """

    names: list
    first_labels: list
    classes: np.ndarray
    n_sequences: int
    n_tokens: int


def summarize_shard(shard):
    """The :class:`ShardSummary` of a shard (on the worker)."""
    return ShardSummary(shard.names, shard.first_labels, shard.classes,
                        shard.corpus.n_sequences, shard.corpus.n_tokens)


class PairStatistics(NamedTuple):
    """The sufficient statistics of CRFsuite's layout rules, in merged ids.

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


def shard_pair_statistics(shard, attr_map, label_map, n_labels):
    """The :class:`PairStatistics` of a shard (on the worker), in the merged
    attribute ids ``attr_map[local id]`` and label codes ``label_map[code]``.

    Frequencies are summed token by token as in
    :func:`~sklearn_crf._objective.build_layout` (its kernel,
    :func:`~sklearn_crf._engine.pair_frequencies`, on the shard's own ids).
    """
    corpus = shard.corpus
    L = n_labels
    labels = label_map[shard.labels].astype(np.int32)
    freq, seen = pair_frequencies(corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, labels,
                                  corpus.n_attributes, L)
    if len(corpus.zero_tok):
        seen[corpus.zero_attr, labels[corpus.zero_tok]] = True
    attr, label = np.nonzero(seen)
    keys = attr_map[attr].astype(np.int64) * L + label
    order = np.argsort(keys, kind="stable")
    return PairStatistics(keys[order], freq[attr, label][order],
                          _bigram_counts(labels, corpus.seq_ptr, L))


def _bigram_counts(labels, seq_ptr, L):
    """Label bigram counts within sequences, as build_layout counts them."""
    starts = seq_ptr[:-1]
    has_prev = np.ones(len(labels), dtype=bool)
    has_prev[starts[seq_ptr[1:] > starts]] = False
    idx = np.flatnonzero(has_prev)
    return np.bincount(
        labels[idx - 1].astype(np.int64) * L + labels[idx], minlength=L * L
    ).astype(np.float64)


class ShardObjective(NamedTuple):
    """A shard's objective as a worker keeps it.

    Attributes
    ----------
    objective : CRFObjective
        The unregularized objective of the shard over ``layout``.
    layout : ParameterLayout
        The merged layout restricted to the shard's attributes, in the
        shard's attribute ids.
    param_map : ndarray of int64, shape (layout.n_params,) or None
        The merged index of each of ``layout``'s parameters; None when they
        are all of them, in order.
    n_params : int
        The number of merged parameters.
    """

    objective: CRFObjective
    layout: ParameterLayout
    param_map: np.ndarray | None
    n_params: int


def restrict_layout(layout, attr_map):
    """The parameters of ``layout`` (merged ids) of the attributes ``attr_map``
    (the merged id of each local attribute id), in local ids.

    Returns the local :class:`~sklearn_crf._objective.ParameterLayout` (the
    same labels per attribute, in the same order; every transition) and the
    merged index of each of its parameters.
    """
    attr_map = np.asarray(attr_map, dtype=np.int64)
    starts = layout.attr_ptr[attr_map]
    counts = layout.attr_ptr[attr_map + 1] - starts
    attr_ptr = np.zeros(len(attr_map) + 1, dtype=np.int64)
    np.cumsum(counts, out=attr_ptr[1:])
    state_map = np.repeat(starts - attr_ptr[:-1], counts) + np.arange(attr_ptr[-1])
    param_map = np.concatenate(
        [state_map, layout.n_state + np.arange(len(layout.trans_from), dtype=np.int64)])
    local = ParameterLayout(
        attr_ptr=attr_ptr, attr_label=layout.attr_label[state_map],
        trans_from=layout.trans_from, trans_to=layout.trans_to, n_labels=layout.n_labels,
    )
    return local, param_map


def build_shard_objective(shard, attr_map, label_map, layout):
    """The :class:`ShardObjective` of a shard (on the worker) under the merged
    ``layout``, on the worker's threads."""
    local, param_map = restrict_layout(layout, attr_map)
    if len(param_map) == layout.n_params and np.array_equal(
            param_map, np.arange(layout.n_params)):
        local, param_map = layout, None
    labels = label_map[shard.labels].astype(np.int32)
    with n_threads(-1, shard.corpus.n_tokens) as n:
        objective = CRFObjective(shard.corpus, local, labels, shard.seq_weight, c2=0.0,
                                 n_chunks=n)
    return ShardObjective(objective, local, param_map, layout.n_params)


class ShardValue(NamedTuple):
    """A shard's unregularized loss and its gradient in the merged parameters."""

    loss: float
    grad: np.ndarray


def evaluate_shard(shard_objective, w):
    """The :class:`ShardValue` of a shard at the merged weights ``w`` (on the worker)."""
    param_map = shard_objective.param_map
    if param_map is None:
        loss, grad = shard_objective.objective.nll(w)
        return ShardValue(float(loss), grad)
    loss, local_grad = shard_objective.objective.nll(w[param_map])
    grad = np.zeros(shard_objective.n_params)
    grad[param_map] = local_grad
    return ShardValue(float(loss), grad)


# --------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ShardedCorpus:
    """A training corpus split into shards that live on the workers of a Dask cluster.

    A fit on it runs data-parallel: each worker computes the loss and gradient
    of its shards, the driver (the process calling ``fit``) sums them in shard
    order and runs the solver, and holds only the model. The vocabulary, the
    labels and the parameter layout are merged from the shards with the rules
    of the local fit, so the model is that of the local fit on the shards'
    sequences one after another (within the solver's tolerance: sums in
    another order round differently). Build one with :meth:`from_sources`
    (each shard read and encoded on a worker; Dask recomputes a lost shard
    from its source) or :meth:`from_sequences` (sequences in the driver's
    memory, split and scattered; for small data).

    Attributes
    ----------
    client : distributed.Client
        The cluster's client.
    shards : tuple of distributed.Future
        The :class:`Shard` of each shard, in corpus order.
    descriptions : tuple of str
        What each shard is made from, for messages.
    recoverable : tuple of bool
        Whether Dask can recompute each shard after losing it.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> from sklearn_crf._training.distributed import ShardedCorpus
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
    ...     with Client(cluster) as client:
    ...         sharded = ShardedCorpus.from_sequences(client, X, y, n_shards=2)
    ...         print(sharded.n_shards)
    2
    """

    client: Any
    shards: tuple
    descriptions: tuple
    recoverable: tuple

    @property
    def n_shards(self):
        """Number of shards."""
        return len(self.shards)

    @classmethod
    def from_sequences(cls, client, X, y, *, n_shards, sample_weight=None):
        """Split sequences in memory into ``n_shards`` contiguous shards and
        scatter them to the workers, where they are encoded.

        Parameters
        ----------
        client : distributed.Client
            The cluster's client.
        X : list of sequences of dict
            The training sequences, in any form :class:`~sklearn_crf.CRFTagger`
            accepts as feature dicts.
        y : list of sequences of labels
            One label per token.
        n_shards : int
            Number of shards (at most the number of sequences); shard ``k``
            holds sequences ``bounds[k]:bounds[k + 1]`` of
            ``numpy.linspace(0, n, n_shards + 1).astype(int)``.
        sample_weight : array-like of shape (n_sequences,), default=None
            The weight of each sequence; it travels with its shard.

        Returns
        -------
        sharded : ShardedCorpus
            Its shards cannot be recomputed when a worker holding one dies:
            the fit then raises :class:`ShardLostError`.
        """
        check_sequences(X, "X")
        check_sequences(y, "y")
        n = len(X)
        if len(y) != n:
            raise ValueError(f"X and y have different numbers of sequences: {n} and {len(y)}")
        if not 1 <= n_shards <= n:
            raise ValueError(
                f"n_shards must be between 1 and the number of sequences ({n}), got {n_shards}"
            )
        weights = check_sequence_weight(sample_weight, n)
        bounds = np.linspace(0, n, n_shards + 1).astype(int).tolist()
        parts = [
            (list(X[a:b]), list(y[a:b]), None if weights is None else weights[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])
        ]
        tag = uuid.uuid4().hex[:12]
        futures = client.scatter(parts, hash=False)
        shards = tuple(
            client.submit(_encode_part, part, key=f"sklearn-crf-shard-{tag}-{k}")
            for k, part in enumerate(futures)
        )
        descriptions = tuple(
            f"shard {k} (sequences {a}:{b}, scattered from the driver's memory)"
            for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
        )
        return cls(client, shards, descriptions, (False,) * n_shards)

    @classmethod
    def from_sources(cls, client, sources):
        """One shard per source, each read and encoded on a worker.

        Parameters
        ----------
        client : distributed.Client
            The cluster's client.
        sources : list of callable
            ``source()`` returns ``(X, y)`` or ``(X, y, sample_weight)`` of one
            shard (e.g. ``functools.partial`` of a function that reads a file
            the workers can read); it is called on a worker, and again when a
            worker holding the shard dies, so it must return the same data
            each time. The shards are in the order of ``sources``.

        Returns
        -------
        sharded : ShardedCorpus
            Dask recomputes a lost shard from its source.
        """
        sources = list(sources)
        if not sources:
            raise ValueError("sources is empty: a ShardedCorpus needs at least one shard")
        for k, source in enumerate(sources):
            if not callable(source):
                raise TypeError(
                    f"sources[{k}] is a {type(source).__name__}; a source is a callable "
                    "returning (X, y) or (X, y, sample_weight)"
                )
        tag = uuid.uuid4().hex[:12]
        shards = tuple(
            client.submit(load_source_shard, source, key=f"sklearn-crf-shard-{tag}-{k}")
            for k, source in enumerate(sources)
        )
        descriptions = tuple(f"shard {k} (from {source!r})" for k, source in enumerate(sources))
        return cls(client, shards, descriptions, (True,) * len(sources))


class ShardedProblem:
    """A fit's view of a :class:`ShardedCorpus`: the merged vocabulary, labels
    and layout, and the objective over the cluster.

    Made by :func:`prepare_sharded`; ``problem(w)`` is the objective
    ``Σ_shards nll_k(w) + c2·‖w‖²`` and its gradient, summed in shard order.
    :meth:`close` releases the shard objectives on the workers.

    Attributes
    ----------
    vectorizer : SequenceVectorizer
        Fitted on the merged vocabulary (the local fit's, name for name).
    classes : ndarray of shape (n_labels,)
        The merged labels, as the local fit sorts them.
    layout : ParameterLayout
        The merged parameter layout.
    n_sequences, n_tokens : int
        The corpus's size.
    n_evaluations : int
        Objective evaluations so far.
    """

    def __init__(self, sharded, vectorizer, classes, layout, futures, c2, n_sequences,
                 n_tokens):
        self.sharded = sharded
        self.vectorizer = vectorizer
        self.classes = classes
        self.layout = layout
        self.c2 = float(c2)
        self.n_sequences = n_sequences
        self.n_tokens = n_tokens
        self.n_evaluations = 0
        self._layout_future, objectives = futures
        self._objectives = list(objectives)

    def __call__(self, w):
        client = self.sharded.client
        w = np.ascontiguousarray(w, dtype=np.float64)
        [w_future] = client.scatter([w], broadcast=True, hash=False)
        futures = [client.submit(evaluate_shard, objective, w_future, pure=False)
                   for objective in self._objectives]
        loss = 0.0
        grad = np.zeros(self.layout.n_params)
        for k, future in enumerate(futures):  # in shard order
            value = _result(future, self.sharded, k)
            loss += value.loss
            grad += value.grad
        del futures, w_future
        self.n_evaluations += 1
        if self.c2 > 0:
            loss += self.c2 * (w @ w)
            grad += 2.0 * self.c2 * w
        return loss, grad

    @property
    def n_params(self):
        """Length of the weight vector."""
        return self.layout.n_params

    def close(self):
        """Release the shard objectives on the workers (the shards stay)."""
        self._objectives = []
        self._layout_future = None


def _result(future, sharded, k):
    """The result of a task of shard ``k``; a :class:`ShardLostError` naming
    the shard when its data is gone for good or its task failed on every
    worker it was tried on."""
    from distributed import CancelledError, KilledWorker

    try:
        return future.result(timeout=TASK_TIMEOUT)
    except KilledWorker as error:
        raise ShardLostError(
            f"{sharded.descriptions[k]}: its task was running on workers that died "
            f"({error}); the fit stopped"
        ) from error
    except CancelledError as error:
        cause = ("it was scattered from the driver's memory and the worker holding it "
                 "died, so Dask cannot recompute it; build the corpus with "
                 "ShardedCorpus.from_sources for shards that survive a worker"
                 if not sharded.recoverable[k] else f"its task was cancelled ({_reason(error)})")
        raise ShardLostError(f"{sharded.descriptions[k]} was lost: {cause}") from error


def _reason(error):
    """Dask's reason for cancelling a future, when it gives one."""
    reason = getattr(error, "reason", None)
    msg = getattr(error, "msg", None)
    return "; ".join(str(x) for x in (reason, msg) if x) or type(error).__name__


def layout_from_pair_statistics(stats, n_attributes, n_labels, *, min_freq,
                                all_possible_states, all_possible_transitions):
    """CRFsuite's parameter layout from the corpus's :class:`PairStatistics`.

    The rules of :func:`~sklearn_crf._objective.build_layout`, on its
    sufficient statistics: a pair seen with any value (or every pair with
    ``all_possible_states``, frequency 0 when unseen) is kept when its
    frequency is at least ``min_freq``; a label bigram when its count is at
    least ``min_freq`` and, without ``all_possible_transitions``, positive.
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
        trans_to=trans_to.astype(np.int32), n_labels=L,
    )


def _merge_pair_statistics(total, stats):
    """``total`` and a shard's statistics added up (``total`` first)."""
    if total is None:
        return stats
    keys = np.concatenate([total.keys, stats.keys])
    values = np.concatenate([total.freq, stats.freq])
    merged, inverse = np.unique(keys, return_inverse=True)
    freq = np.zeros(len(merged))
    np.add.at(freq, inverse, values)  # in order: the total's value, then the shard's
    return PairStatistics(merged, freq, total.bigrams + stats.bigrams)


def prepare_sharded(sharded, params):
    """Merge the vocabulary, labels and layout of a :class:`ShardedCorpus` and
    build the shard objectives on the workers.

    Parameters
    ----------
    sharded : ShardedCorpus
        The training corpus.
    params : dict
        :class:`~sklearn_crf.CRFTagger`'s parameters (``get_params()``); reads
        ``min_freq``, ``all_possible_states``, ``all_possible_transitions``,
        ``c2``, ``hashing``, ``solver``.

    Returns
    -------
    problem : ShardedProblem
        The vocabulary, labels, layout and the objective over the cluster.
    """
    if not isinstance(sharded, ShardedCorpus):
        raise TypeError(f"expected a ShardedCorpus, got a {type(sharded).__name__}")
    if params.get("hashing") is not None:
        raise ValueError(
            "hashing is not supported on a ShardedCorpus: the shards' vocabularies are "
            "merged by attribute name; use hashing=None"
        )
    if SOLVERS[params["solver"]].kind != "batch":
        raise ValueError(
            f"solver={params['solver']!r} updates the weights sequence by sequence and "
            "cannot train on a ShardedCorpus; use solver 'lbfgs' or 'l-bfgs-b'"
        )
    client = sharded.client
    # 1. vocabulary and labels, merged in shard order
    summaries = [client.submit(summarize_shard, shard, pure=False) for shard in sharded.shards]
    vocabulary = {}
    first_labels = {}
    local = []  # per shard: its attribute ids' merged ids, its classes
    n_sequences = n_tokens = 0
    for k, future in enumerate(summaries):
        summary = _result(future, sharded, k)
        ids = np.empty(len(summary.names), dtype=np.int64)
        for i, name in enumerate(summary.names):
            ids[i] = vocabulary.setdefault(name, len(vocabulary))
        for label in summary.first_labels:
            first_labels.setdefault(label, None)
        local.append((ids, summary.classes))
        n_sequences += summary.n_sequences
        n_tokens += summary.n_tokens
        del summary
    del summaries
    labels = list(first_labels)
    classes, _ = encode_labels([labels], np.array([0, len(labels)], dtype=np.int64))
    index = {label: i for i, label in enumerate(classes.tolist())}
    maps = [(ids, np.array([index[c] for c in shard_classes.tolist()], dtype=np.int32))
            for ids, shard_classes in local]
    del local, index
    vectorizer = SequenceVectorizer().fit([[list(vocabulary)]])
    n_attributes = len(vocabulary)
    del vocabulary
    L = len(classes)
    # 2. the layout from the shards' statistics, added up in shard order
    futures = [client.submit(shard_pair_statistics, shard, ids, label_map, L, pure=False)
               for shard, (ids, label_map) in zip(sharded.shards, maps)]
    total = None
    for k, future in enumerate(futures):
        total = _merge_pair_statistics(total, _result(future, sharded, k))
    del futures
    layout = layout_from_pair_statistics(
        total, n_attributes, L, min_freq=params["min_freq"],
        all_possible_states=params["all_possible_states"],
        all_possible_transitions=params["all_possible_transitions"],
    )
    del total
    # 3. the shard objectives, kept on the workers
    [layout_future] = client.scatter([layout], broadcast=True, hash=False)
    objectives = [
        client.submit(build_shard_objective, shard, ids, label_map, layout_future, pure=False)
        for shard, (ids, label_map) in zip(sharded.shards, maps)
    ]
    for k, future in enumerate(objectives):
        _wait(future, sharded, k)
    logger.debug(
        "%d shards: %d sequences, %d tokens, %d attributes, %d labels, %d parameters",
        sharded.n_shards, n_sequences, n_tokens, n_attributes, L, layout.n_params,
    )
    # the layout's future is held as long as the objectives: Dask rebuilds a
    # lost objective from its shard and the layout
    return ShardedProblem(sharded, vectorizer, classes, layout, (layout_future, objectives),
                          params["c2"], n_sequences, n_tokens)


def _wait(future, sharded, k):
    """Wait for a task of shard ``k`` without fetching its result."""
    from distributed import wait

    wait([future], timeout=TASK_TIMEOUT)
    if future.status != "finished":
        _result(future, sharded, k)  # raises the task's error


class ShardedFit(NamedTuple):
    """What a fit on a :class:`ShardedCorpus` found.

    Attributes
    ----------
    classes : ndarray of shape (n_labels,)
        The labels.
    vectorizer : SequenceVectorizer
        The merged vocabulary.
    layout : ParameterLayout
        The merged parameter layout.
    result : SolverResult
        The solver's result (weights, iterations, loss curve, validation scores).
    """

    classes: np.ndarray
    vectorizer: SequenceVectorizer
    layout: ParameterLayout
    result: Any


def fit_sharded(problem, params, *, w0=None, monitor=None, verbose=0):
    """Run the batch solver of ``params`` on a :class:`ShardedProblem`.

    Parameters
    ----------
    problem : ShardedProblem
        From :func:`prepare_sharded`.
    params : dict
        :class:`~sklearn_crf.CRFTagger`'s parameters; reads ``solver``,
        ``c1``, ``max_iter``, ``tol``, ``epsilon``.
    w0 : ndarray of shape (problem.n_params,), default=None
        The starting weights (zeros for None).
    monitor : ValidationMonitor, default=None
        Scores each iterate (on the driver) and may stop early.
    verbose : int, default=0
        Log one line per iteration (see :func:`~sklearn_crf._optimize.minimize_crf`).

    Returns
    -------
    fit : ShardedFit
        The classes, vectorizer, layout and the solver's result.
    """
    solver = SOLVERS[params["solver"]]
    if w0 is None:
        w0 = np.zeros(problem.n_params)
    result = minimize_crf(
        problem, w0, c1=params["c1"], solver=solver.name,
        max_iter=solver.resolved_max_iter(params["max_iter"]), tol=params["tol"],
        epsilon=solver.resolved_epsilon(params["epsilon"]), verbose=verbose,
        monitor=monitor,
    )
    return ShardedFit(problem.classes, problem.vectorizer, problem.layout, result)
