"""Data-parallel training on a Dask cluster: the shards of a corpus live on the
workers, the driver runs the optimizer.

A fit (:func:`prepare_sharded`, then :func:`fit_sharded`) merges the shards'
vocabularies and labels in shard order, builds CRFsuite's layout from their
summed pair statistics (:mod:`sklearn_crf._model.layout`), keeps one
objective per shard on its worker and sums the shards' losses and gradients
in shard order at each evaluation: the local fit's model, deterministic for
a given sharding. Lost shards made by a task are recomputed; a lost shard
scattered from the driver stops the fit with :class:`ShardLostError`.
Every remote step is bounded in time (:data:`SCATTER_TIMEOUT` to send the
weights or the layout to one worker, :data:`TASK_TIMEOUT` per shard task); a
worker lost meanwhile fails the evaluation, which is tried again
(:data:`MAX_ATTEMPTS` in all) before a :class:`ShardLostError`, never a hang.
``docs/developers.rst`` ("The sharded fit") tells the steps in full.
"""

import logging
import uuid
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._model.layout import (
    ParameterLayout,
    layout_from_pair_statistics,
    merge_pair_statistics,
    pair_statistics,
    restrict_layout,
)
from .objective import CRFObjective
from .optimize import minimize_crf
from .._engine.threads import n_threads
from .._features.validation import check_sequence_weight, check_sequences, encode_labels
from .._features.vectorizer import (
    SequenceVectorizer,
    VocabularyState,
    vectorizer_from_state,
    vocabulary_state,
)
from .solvers import SOLVERS

logger = logging.getLogger("sklearn_crf")

#: seconds a shard's task may take before the fit is taken for stuck (a cold
#: worker compiles the kernels first: a minute or more on a busy machine)
TASK_TIMEOUT = 900
#: seconds the driver waits for the weights (or the layout) to reach a worker
SCATTER_TIMEOUT = 120


class ShardLostError(RuntimeError):
    """A shard of a :class:`ShardedCorpus` was lost and cannot be recomputed.

    Raised by a fit on a :class:`ShardedCorpus` when a worker holding a shard
    scattered from the driver's memory dies, when a task of a shard fails on
    every worker it is tried on or gives no result within
    :data:`TASK_TIMEOUT` seconds, or when the weights cannot be sent to the
    cluster (:data:`MAX_ATTEMPTS` times); the message names the shard (or the
    weights) and the cause.
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
        The shard's sequences.
    vocabulary : VocabularyState or None
        The vocabulary of the shard's own attribute ids (its vectorizer's, in
        the order it first saw them); None when the ids are those of a
        vocabulary shared by every shard (a corpus store's).
    classes : ndarray of shape (n_shard_labels,)
        The labels that ``labels`` index, sorted
        (:func:`~sklearn_crf._features.validation.encode_labels`).
    labels : ndarray of int32, shape (n_tokens,)
        The gold label of each token, as an index into ``classes``.
    first_labels : list
        The shard's labels in the order they first occur.
    seq_weight : ndarray of float64, shape (n_sequences,)
        The weight of each sequence.
    """

    corpus: Any
    vocabulary: VocabularyState | None
    classes: np.ndarray
    labels: np.ndarray
    first_labels: list
    seq_weight: np.ndarray


def _first_labels(classes, labels):
    """The labels of ``classes[labels]`` in the order they first occur."""
    codes, first = np.unique(labels, return_index=True)
    return classes[codes[np.argsort(first, kind="stable")]].tolist()


def _weights(sample_weight, n_sequences):
    weights = check_sequence_weight(sample_weight, n_sequences)
    return np.ones(n_sequences) if weights is None else weights


def encode_shard(X, y, sample_weight=None, *, hashing=None):
    """A :class:`Shard` from sequences, their labels and weights (on the
    worker): a new vectorizer's vocabulary (``n_features=hashing``), the
    labels' codes."""
    vectorizer = SequenceVectorizer(n_features=hashing)
    corpus = vectorizer.fit_encode(X)
    classes, labels = encode_labels(y, corpus.seq_ptr)
    return Shard(corpus, vocabulary_state(vectorizer), classes, labels,
                 _first_labels(classes, labels), _weights(sample_weight, corpus.n_sequences))


def _encode_part(part, hashing):
    """:func:`encode_shard` of a scattered ``(X, y, sample_weight)`` part."""
    return encode_shard(*part, hashing=hashing)


def shard_from_corpus(corpus, y, sample_weight=None):
    """A :class:`Shard` from an encoded corpus with its ``vectorizer`` (e.g.
    :func:`~sklearn_crf.encode_stream`'s, chunk by chunk on the worker) and
    its labels: lists of labels, or a ``LabelCodes``."""
    if corpus.vectorizer is None:
        raise ValueError("a shard source's EncodedCorpus must have its vectorizer set")
    if hasattr(y, "codes") and hasattr(y, "classes"):  # a LabelCodes
        classes = np.asarray(y.classes)
        labels = np.ascontiguousarray(y.codes, dtype=np.int32)
        if labels.shape != (corpus.n_tokens,):
            raise ValueError(
                f"a shard source gave {labels.shape[0]} label codes for {corpus.n_tokens} tokens")
    else:
        classes, labels = encode_labels(y, corpus.seq_ptr)
    return Shard(corpus, vocabulary_state(corpus.vectorizer), classes, labels,
                 _first_labels(classes, labels), _weights(sample_weight, corpus.n_sequences))


def load_source_shard(source, hashing=None):
    """A :class:`Shard` from a source (on the worker): ``source()`` returns
    ``(X, y)`` or ``(X, y, sample_weight)``, X sequences (encoded here) or an
    EncodedCorpus with its vectorizer (:func:`shard_from_corpus`)."""
    from .._features.vectorizer import EncodedCorpus

    data = source()
    if not isinstance(data, tuple) or len(data) not in (2, 3):
        raise TypeError(
            f"a shard source must return (X, y) or (X, y, sample_weight), got "
            f"{type(data).__name__}" + (f" of length {len(data)}" if isinstance(data, tuple) else "")
        )
    if isinstance(data[0], EncodedCorpus):
        shard = shard_from_corpus(*data)
        if shard.vocabulary.n_features != hashing:
            raise ValueError(
                f"a shard source gave a corpus encoded with hashing="
                f"{shard.vocabulary.n_features!r}, the ShardedCorpus has hashing={hashing!r}")
        return shard
    return encode_shard(*data, hashing=hashing)


def load_store_shard(directory, start, stop, sample_weight=None):
    """Sequences ``start:stop`` of a corpus store as a :class:`Shard` (on the
    worker): memory-mapped, in the store's vocabulary."""
    from .._io.corpus_store import load_corpus

    corpus, y = load_corpus(directory, mmap=True, label_codes=True)
    if y is None:
        raise ValueError(f"{directory}: the corpus store has no labels to train on")
    if corpus.vectorizer is None:
        raise ValueError(f"{directory}: the corpus store has no vocabulary")
    part = corpus[start:stop]
    t0, t1 = int(corpus.seq_ptr[start]), int(corpus.seq_ptr[stop])
    labels = np.ascontiguousarray(y.codes[t0:t1], dtype=np.int32)
    return Shard(part, None, y.classes, labels, _first_labels(y.classes, labels),
                 _weights(sample_weight, part.n_sequences))


def store_vocabulary(directory):
    """The :class:`VocabularyState` of a corpus store (on a worker)."""
    from .._io.corpus_store import load_corpus

    corpus, _ = load_corpus(directory, mmap=True)
    return vocabulary_state(corpus.vectorizer)


class ShardSummary(NamedTuple):
    """What the driver learns of a shard before the vocabulary is merged.

    Attributes
    ----------
    vocabulary : VocabularyState or None
        The shard's vocabulary (:attr:`Shard.vocabulary`).
    first_labels : list
        The shard's labels in first-seen order.
    classes : ndarray
        The shard's sorted labels (what its label codes index).
    n_sequences, n_tokens, n_dense : int
        The shard's size and its number of dense features.
    """

    vocabulary: VocabularyState | None
    first_labels: list
    classes: np.ndarray
    n_sequences: int
    n_tokens: int
    n_dense: int


def summarize_shard(shard):
    """The :class:`ShardSummary` of a shard (on the worker)."""
    corpus = shard.corpus
    return ShardSummary(shard.vocabulary, shard.first_labels, shard.classes,
                        corpus.n_sequences, corpus.n_tokens, corpus.n_dense)


def shard_pair_statistics(shard, attr_map, label_map, n_labels):
    """The :class:`~sklearn_crf._model.layout.PairStatistics` of a shard (on
    the worker), in the merged attribute ids ``attr_map[local id]`` (the
    shard's ids for None) and label codes ``label_map[code]``."""
    labels = label_map[shard.labels].astype(np.int32)
    return pair_statistics(shard.corpus, labels, n_labels, attr_map)


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


def build_shard_objective(shard, attr_map, label_map, layout):
    """The :class:`ShardObjective` of a shard (on the worker) under the merged
    ``layout`` (``attr_map``: the merged id of each of the shard's attribute
    ids, None when they are the merged ids), on the worker's threads."""
    if attr_map is None:
        local, param_map = layout, None
    else:
        local, param_map = restrict_layout(layout, attr_map)
    labels = label_map[shard.labels].astype(np.int32)
    with n_threads(-1, shard.corpus.n_tokens) as n:
        objective = CRFObjective(shard.corpus, local, labels, shard.seq_weight, c2=0.0,
                                 n_chunks=n)
    return ShardObjective(objective, local, param_map, layout.n_params)


def shard_objective_nbytes(shard_objective):
    """Bytes a worker holds for a :class:`ShardObjective`: the arrays of its
    objective (the shard's corpus, the entry index, the buffers) and its
    parameter map.

    Registered as Dask's ``sizeof`` of a ShardObjective. The scheduler sizes a
    result to choose where its dependents run and whether moving them to an
    idle worker pays; without it, Dask took an objective for a few hundred
    bytes and copied it to other workers, each copy a shard's worth of memory.
    """
    objective = shard_objective.objective
    parts = [objective.corpus.nbytes, *objective._entries]
    parts += [v for v in vars(objective).values() if isinstance(v, np.ndarray)]
    if shard_objective.param_map is not None:
        parts.append(shard_objective.param_map)
    return sum(p if isinstance(p, int) else p.nbytes for p in parts)


try:  # the module is importable without Dask (the sharded fit needs it)
    from dask.sizeof import sizeof as _dask_sizeof
except ImportError:  # pragma: no cover - distributed is an optional extra
    pass
else:
    _dask_sizeof.register(ShardObjective)(shard_objective_nbytes)


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
    another order round differently). Build one with

    * :meth:`from_store`: ranges of a corpus store
      (:func:`~sklearn_crf.encode_stream`, :func:`~sklearn_crf.save_corpus`)
      that the workers can read, memory-mapped on each worker;
    * :meth:`from_sources`: each shard read and encoded on a worker;
    * :meth:`from_sequences`: sequences in the driver's memory, split and
      scattered (for small data).

    Dask recomputes a lost shard of a store or of a source from it; a lost
    scattered shard stops the fit with :class:`ShardLostError`.

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
    hashing : int or None
        The shards' ``SequenceVectorizer(n_features=...)``: a fit on them
        needs ``CRFTagger(hashing=...)`` to be the same (a store's own).
    store : str or None
        The corpus store the shards are ranges of (their attribute ids are
        its vocabulary's); None when each shard has its own vocabulary.

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
    hashing: int | None = None
    store: str | None = None

    @property
    def n_shards(self):
        """Number of shards."""
        return len(self.shards)

    @classmethod
    def from_sequences(cls, client, X, y, *, n_shards, sample_weight=None, hashing=None):
        """Split sequences in memory into ``n_shards`` contiguous shards and
        scatter them to the workers, where they are encoded.

        Parameters
        ----------
        client : distributed.Client
            The cluster's client.
        X : list of sequences
            The training sequences, in any form :class:`~sklearn_crf.CRFTagger`
            accepts.
        y : list of sequences of labels
            One label per token.
        n_shards : int
            Number of shards (at most the number of sequences); shard ``k``
            holds sequences ``bounds[k]:bounds[k + 1]`` of
            ``numpy.linspace(0, n, n_shards + 1).astype(int)``.
        sample_weight : array-like of shape (n_sequences,), default=None
            The weight of each sequence; it travels with its shard.
        hashing : int, default=None
            The ``hashing`` of the tagger that will fit on it.

        Returns
        -------
        sharded : ShardedCorpus
            Its shards cannot be recomputed when a worker holding one dies:
            the fit then raises :class:`ShardLostError`.
        """
        n = _check_corpus_size(X, y, n_shards)
        weights = check_sequence_weight(sample_weight, n)
        bounds = _bounds(n, n_shards)
        parts = [
            (list(X[a:b]), list(y[a:b]), None if weights is None else weights[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])
        ]
        tag = uuid.uuid4().hex[:12]
        futures = client.scatter(parts, hash=False)
        shards = tuple(
            client.submit(_encode_part, part, hashing, key=f"sklearn-crf-shard-{tag}-{k}")
            for k, part in enumerate(futures)
        )
        descriptions = tuple(
            f"shard {k} (sequences {a}:{b}, scattered from the driver's memory)"
            for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
        )
        return cls(client, shards, descriptions, (False,) * n_shards, hashing)

    @classmethod
    def from_sources(cls, client, sources, *, hashing=None):
        """One shard per source, each read and encoded on a worker.

        Parameters
        ----------
        client : distributed.Client
            The cluster's client.
        sources : list of callable
            ``source()`` returns ``(X, y)`` or ``(X, y, sample_weight)`` of one
            shard, X sequences or an ``EncodedCorpus`` with its vectorizer
            (e.g. :func:`~sklearn_crf.encode_stream`'s, so that a shard's
            feature dicts never all exist at once; y then may be its
            ``LabelCodes``), e.g. ``functools.partial`` of a function that reads a file
            the workers can read); it is called on a worker, and again when a
            worker holding the shard dies, so it must return the same data
            each time. The shards are in the order of ``sources``.
        hashing : int, default=None
            The ``hashing`` of the tagger that will fit on it.

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
            client.submit(load_source_shard, source, hashing,
                          key=f"sklearn-crf-shard-{tag}-{k}")
            for k, source in enumerate(sources)
        )
        descriptions = tuple(f"shard {k} (from {source!r})" for k, source in enumerate(sources))
        return cls(client, shards, descriptions, (True,) * len(sources), hashing)

    @classmethod
    def from_store(cls, client, directory, *, n_shards, sample_weight=None):
        """Contiguous ranges of a corpus store, each memory-mapped on a worker.

        Parameters
        ----------
        client : distributed.Client
            The cluster's client.
        directory : str or path-like
            A corpus store with labels and a vocabulary
            (:func:`~sklearn_crf.encode_stream` with ``directory``,
            :func:`~sklearn_crf.save_corpus`), at a path every worker can
            read.
        n_shards : int
            Number of shards; shard ``k`` holds sequences ``bounds[k]:bounds[k
            + 1]`` of ``numpy.linspace(0, n, n_shards + 1).astype(int)``.
        sample_weight : array-like of shape (n_sequences,), default=None
            The weight of each sequence; each shard's part travels with it.

        Returns
        -------
        sharded : ShardedCorpus
            Dask reloads a lost shard from the store.
        """
        import os

        directory = os.path.abspath(os.fspath(directory))
        info = client.submit(_store_size, directory, pure=False).result(timeout=TASK_TIMEOUT)
        n = info.n_sequences
        if not 1 <= n_shards <= max(n, 1):
            raise ValueError(
                f"n_shards must be between 1 and the number of sequences ({n}), got {n_shards}"
            )
        weights = check_sequence_weight(sample_weight, n)
        bounds = _bounds(n, n_shards)
        tag = uuid.uuid4().hex[:12]
        shards = tuple(
            client.submit(load_store_shard, directory, a, b,
                          None if weights is None else weights[a:b],
                          key=f"sklearn-crf-shard-{tag}-{k}")
            for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
        )
        descriptions = tuple(
            f"shard {k} (sequences {a}:{b} of the corpus store {directory})"
            for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
        )
        return cls(client, shards, descriptions, (True,) * n_shards, info.hashing,
                   store=directory)


class _StoreSize(NamedTuple):
    n_sequences: int
    hashing: int | None


def _store_size(directory):
    """The number of sequences and the hashing of a corpus store (on a worker)."""
    from .._io.corpus_store import load_corpus

    corpus, _ = load_corpus(directory, mmap=True, label_codes=True)
    hashing = None if corpus.vectorizer is None else corpus.vectorizer.n_features
    return _StoreSize(corpus.n_sequences, hashing)


def _check_corpus_size(X, y, n_shards):
    check_sequences(X, "X")
    check_sequences(y, "y")
    n = len(X)
    if len(y) != n:
        raise ValueError(f"X and y have different numbers of sequences: {n} and {len(y)}")
    if not 1 <= n_shards <= n:
        raise ValueError(
            f"n_shards must be between 1 and the number of sequences ({n}), got {n_shards}"
        )
    return n


def _bounds(n, n_shards):
    return np.linspace(0, n, n_shards + 1).astype(int).tolist()


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

    def __init__(self, sharded, vectorizer, classes, layout, maps, c2, n_sequences,
                 n_tokens):
        self.sharded = sharded
        self.vectorizer = vectorizer
        self.classes = classes
        self.layout = layout
        self.c2 = float(c2)
        self.n_sequences = n_sequences
        self.n_tokens = n_tokens
        self.n_evaluations = 0
        self._maps = maps
        self._build()

    def _build(self):
        """Scatter the layout and build the shard objectives on the workers,
        tried again (:data:`MAX_ATTEMPTS` times in all) when a worker is lost
        meanwhile."""
        for attempt in range(MAX_ATTEMPTS):
            try:
                return self._build_once()
            except _LostTask as lost:
                self._check_lost(lost, attempt + 1 == MAX_ATTEMPTS)
                logger.info("%s was lost (%s) while building the shard objectives: "
                            "building them again", lost.what, _reason(lost.error))

    def _check_lost(self, lost, last):
        """Raise the :class:`ShardLostError` of ``lost`` (a :class:`_LostTask`)
        when it cannot be tried again: the last attempt, or a shard that Dask
        cannot recompute and whose data is gone."""
        if lost.k is None:  # the weights or the layout did not reach the cluster
            if last:
                raise ShardLostError(
                    f"{lost.what} could not be sent to the workers {MAX_ATTEMPTS} times "
                    f"({_reason(lost.error)}); the fit stopped"
                ) from lost.error
        elif last or not (self.sharded.recoverable[lost.k]
                          or _holds_data(self.sharded.shards[lost.k])):
            _raise_lost(self.sharded, lost.k, lost.error)

    def _build_once(self):
        client = self.sharded.client
        # the layout's future is held as long as the objectives: Dask rebuilds
        # a lost objective from its shard and the layout
        self._layout_future = _scatter(client, self.layout, "the parameter layout")
        self._objectives = [
            client.submit(build_shard_objective, shard, ids, label_map, self._layout_future,
                          pure=False)
            for shard, (ids, label_map) in zip(self.sharded.shards, self._maps)
        ]
        for k, future in enumerate(self._objectives):
            _wait(future, self.sharded, k, lost_ok=True)

    def __call__(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        for attempt in range(MAX_ATTEMPTS):
            try:
                loss, grad = self._evaluate(w)
                break
            except _LostTask as lost:
                self._check_lost(lost, attempt + 1 == MAX_ATTEMPTS)
                # a shard, the layout or the weights are gone with a worker:
                # Dask recomputes the shards from their sources as they are needed
                logger.info("%s was lost (%s): building the shard objectives again",
                            lost.what, _reason(lost.error))
                self._build()
        self.n_evaluations += 1
        if self.c2 > 0:
            loss += self.c2 * (w @ w)
            grad += 2.0 * self.c2 * w
        return loss, grad

    def _evaluate(self, w):
        """Σ_shards nll_k(w) and its gradient, added up in shard order."""
        client = self.sharded.client
        w_future = _scatter(client, w, "the weights")
        futures = [client.submit(evaluate_shard, objective, w_future, pure=False)
                   for objective in self._objectives]
        loss = 0.0
        grad = np.zeros(self.layout.n_params)
        for k, future in enumerate(futures):  # in shard order
            value = _result(future, self.sharded, k, lost_ok=True)
            loss += value.loss
            grad += value.grad
        return loss, grad

    @property
    def n_params(self):
        """Length of the weight vector."""
        return self.layout.n_params

    def close(self):
        """Release the shard objectives on the workers (the shards stay)."""
        self._objectives = []
        self._layout_future = None


#: evaluations of the objective tried after losing shards, before giving up
MAX_ATTEMPTS = 3


class _LostTask(Exception):
    """A task of shard ``k`` was cancelled by Dask (its data lost), or, with
    ``k`` None, data could not be sent to the cluster; ``what`` names it."""

    def __init__(self, k, error, what):
        super().__init__(k, error, what)
        self.k = k
        self.error = error
        self.what = what


def _scatter(client, value, what):
    """A future of ``value`` on one worker (the tasks that need it fetch it
    from there, and Dask handles a worker lost meanwhile as for any data);
    a worker that dies in flight, or no answer within
    :data:`SCATTER_TIMEOUT` seconds, is a :class:`_LostTask` naming ``what``.

    Not a broadcast: replicating to every worker while one dies can leave
    the scheduler retrying the replication forever.
    """
    import asyncio

    try:
        [future] = client.scatter([value], hash=False, timeout=SCATTER_TIMEOUT)
    except (OSError, TimeoutError, asyncio.TimeoutError) as error:  # CommClosedError too
        raise _LostTask(None, error, what) from error
    return future


def _holds_data(future):
    """Whether the data of ``future`` (a shard) is still on the cluster."""
    return future.status == "finished"


def _result(future, sharded, k, lost_ok=False):
    """The result of a task of shard ``k``; a :class:`ShardLostError` naming
    the shard when its data is gone (or, with ``lost_ok``, a
    :class:`_LostTask` when Dask cancelled it) or its task failed on every
    worker it was tried on."""
    from distributed import CancelledError, KilledWorker

    try:
        return future.result(timeout=TASK_TIMEOUT)
    except TimeoutError as error:
        _raise_timed_out(sharded, k, error)
    except KilledWorker as error:
        raise ShardLostError(
            f"{sharded.descriptions[k]}: its task was running on workers that died "
            f"({error}); the fit stopped"
        ) from error
    except (CancelledError, OSError) as error:  # OSError: a worker's comm closed
        if lost_ok:
            raise _LostTask(k, error, sharded.descriptions[k]) from error
        _raise_lost(sharded, k, error)


def _raise_timed_out(sharded, k, error):
    raise ShardLostError(
        f"{sharded.descriptions[k]}: no result after {TASK_TIMEOUT} s; is the cluster "
        "running (client.scheduler_info())?"
    ) from error


def _raise_lost(sharded, k, error):
    if sharded.recoverable[k]:
        cause = f"its tasks were cancelled ({_reason(error)}) {MAX_ATTEMPTS} times"
    else:
        cause = ("it was scattered from the driver's memory and the worker holding it "
                 "died, so Dask cannot recompute it; build the corpus with "
                 "ShardedCorpus.from_store or ShardedCorpus.from_sources for shards "
                 "that survive a worker")
    raise ShardLostError(f"{sharded.descriptions[k]} was lost: {cause}") from error


def _reason(error):
    """Dask's reason for cancelling a future, when it gives one."""
    reason = getattr(error, "reason", None)
    msg = getattr(error, "msg", None)
    return "; ".join(str(x) for x in (reason, msg) if x) or type(error).__name__


class _VocabularyMerger:
    """The shards' vocabularies merged in shard order: a name (or hash slot)
    gets the next merged id when no earlier shard had it, so the merged order
    is the first-seen order of the whole corpus; the memos are merged too."""

    def __init__(self, hashing):
        self.hashing = hashing
        self.ids = {}  # name (or slot) -> merged id
        self.str_pairs = {}
        self.num_keys = {}

    def add(self, state):
        """The merged id of each of a shard's attribute ids."""
        names = state.attributes if self.hashing is None else state.hash_slots.tolist()
        ids = np.empty(len(names), dtype=np.int64)
        table = self.ids
        for i, name in enumerate(names):
            ids[i] = table.setdefault(name, len(table))
        for key, values in state.str_pairs.items():
            merged = self.str_pairs.setdefault(key, {})
            for value, idx in values.items():
                merged.setdefault(value, int(ids[idx]))
        for key, idx in state.num_keys.items():
            self.num_keys.setdefault(key, int(ids[idx]))
        return ids

    def state(self, n_dense):
        """The merged :class:`~sklearn_crf._features.vectorizer.VocabularyState`."""
        if self.hashing is None:
            return VocabularyState(None, n_dense, list(self.ids), None, self.str_pairs,
                                   self.num_keys)
        return VocabularyState(self.hashing, n_dense, None,
                               np.fromiter(self.ids, dtype=np.int64, count=len(self.ids)),
                               {}, {})


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
    if params.get("hashing") != sharded.hashing:
        raise ValueError(
            f"the shards were encoded with hashing={sharded.hashing!r}, the tagger has "
            f"hashing={params.get('hashing')!r}: give the ShardedCorpus the tagger's hashing"
        )
    if SOLVERS[params["solver"]].kind != "batch":
        raise ValueError(
            f"solver={params['solver']!r} updates the weights sequence by sequence and "
            "cannot train on a ShardedCorpus; use solver 'lbfgs' or 'l-bfgs-b'"
        )
    client = sharded.client
    # 1. vocabulary and labels, merged in shard order
    summaries = [client.submit(summarize_shard, shard, pure=False) for shard in sharded.shards]
    merger = _VocabularyMerger(sharded.hashing)
    first_labels = {}
    local = []  # per shard: the merged ids of its attribute ids (None: the same), its classes
    n_sequences = n_tokens = 0
    n_dense = set()
    for k, future in enumerate(summaries):
        summary = _result(future, sharded, k)
        ids = None
        if summary.vocabulary is not None:
            ids = merger.add(summary.vocabulary)
        for label in summary.first_labels:
            first_labels.setdefault(label, None)
        local.append((ids, summary.classes))
        n_sequences += summary.n_sequences
        n_tokens += summary.n_tokens
        n_dense.add(summary.n_dense)
        del summary
    del summaries
    if len(n_dense) > 1:
        raise ValueError(
            f"the shards have different numbers of dense features: {sorted(n_dense)}")
    [n_dense] = n_dense
    if sharded.store is not None:
        state = client.submit(store_vocabulary, sharded.store, pure=False).result(
            timeout=TASK_TIMEOUT)
    else:
        state = merger.state(n_dense)
    del merger
    vectorizer = vectorizer_from_state(state, where="the shards' merged vocabulary")
    n_attributes = vectorizer.n_attributes_
    del state
    labels = list(first_labels)
    classes, _ = encode_labels([labels], np.array([0, len(labels)], dtype=np.int64))
    index = {label: i for i, label in enumerate(classes.tolist())}
    maps = [(ids, np.array([index[c] for c in shard_classes.tolist()], dtype=np.int32))
            for ids, shard_classes in local]
    del local, index
    L = len(classes)
    # 2. the layout from the shards' statistics, added up in shard order
    futures = [client.submit(shard_pair_statistics, shard, ids, label_map, L, pure=False)
               for shard, (ids, label_map) in zip(sharded.shards, maps)]
    total = None
    for k, future in enumerate(futures):
        total = merge_pair_statistics(total, _result(future, sharded, k))
    del futures
    layout = layout_from_pair_statistics(
        total, n_attributes, L, min_freq=params["min_freq"],
        all_possible_states=params["all_possible_states"],
        all_possible_transitions=params["all_possible_transitions"], n_dense=n_dense,
    )
    del total
    # 3. the shard objectives, kept on the workers
    problem = ShardedProblem(sharded, vectorizer, classes, layout, maps, params["c2"],
                             n_sequences, n_tokens)
    logger.debug(
        "%d shards: %d sequences, %d tokens, %d attributes, %d labels, %d parameters",
        sharded.n_shards, n_sequences, n_tokens, n_attributes, L, layout.n_params,
    )
    return problem


def _wait(future, sharded, k, lost_ok=False):
    """Wait for a task of shard ``k`` without fetching its result (errors as
    :func:`_result`'s)."""
    from distributed import CancelledError, wait

    try:
        wait([future], timeout=TASK_TIMEOUT)
    except TimeoutError as error:
        _raise_timed_out(sharded, k, error)
    except CancelledError:  # FuturesCancelledError: the status says it, below
        pass
    if future.status != "finished":
        _result(future, sharded, k, lost_ok)  # raises the task's error


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
        Log one line per iteration (see :func:`~sklearn_crf._training.optimize.minimize_crf`).

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


def __getattr__(name):
    """Names that moved out of this module, for pickles written before
    (:data:`sklearn_crf._moved.MOVED_NAMES`)."""
    from .._moved import moved_attribute

    return moved_attribute(__name__, name)
