"""CRFTagger: a linear-chain CRF sequence labeler as a scikit-learn estimator."""

import logging
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _inspection, _kernels
from ._objective import CRFObjective, build_layout
from ._optimize import minimize_crf
from ._threads import MIN_TOKENS_PER_THREAD
from ._threads import n_threads as _n_threads
from ._validation import check_sequence_weight, encode_labels
from ._vectorizer import SequenceVectorizer
from ._version import __version__

logger = logging.getLogger("sklearn_crf")


class CRFTagger(BaseEstimator):
    """Linear-chain conditional random field for sequence labeling.

    The model and its training objective are CRFsuite's (and so
    sklearn-crfsuite's with ``algorithm="lbfgs"``), so tuned hyperparameters
    carry over: it minimizes

    ``-Σ_s log p(y_s | x_s) + c1·‖w‖₁ + c2·‖w‖²``

    over one weight per (attribute, label) pair seen in training and one per
    label transition, with scipy's L-BFGS-B, or OWL-QN when there is an L1
    term (see ``solver``). The forward-backward and
    Viterbi kernels are compiled with numba and run over sequences in parallel.

    Parameters
    ----------
    c1 : float, default=0.0
        Coefficient of the L1 penalty. With ``c1 > 0`` many weights are exactly 0.
    c2 : float, default=1.0
        Coefficient of the (squared) L2 penalty.
    solver : {"lbfgs", "l-bfgs-b"}, default="lbfgs"
        ``"lbfgs"`` is CRFsuite's ``lbfgs`` algorithm: scipy's L-BFGS-B (no
        bounds) when ``c1 == 0``, OWL-QN, the orthant-wise L-BFGS, when
        ``c1 > 0``. ``"l-bfgs-b"`` always uses scipy's L-BFGS-B; with
        ``c1 > 0`` it splits each weight into non-negative parts ``w = w⁺ - w⁻``
        under bounds, which reaches the same optimum but needs many more
        iterations. Both keep a history of 6 updates.
    max_iter : int, default=1000
        Maximum number of solver iterations.
    tol : float, default=1e-3
        Stopping rule (CRFsuite's "delta" test): training stops when the loss
        decreased by less than ``tol`` relative to its current value over the
        last 10 iterations, ``(f[k-10] - f[k]) / max(|f[k]|, 1) < tol``.
        L-BFGS-B also stops when it cannot decrease the loss any further. When
        ``max_iter`` stops it first, a ``ConvergenceWarning`` is raised.
        CRFsuite's default is 1e-5 (about 730 iterations on CoNLL-2002
        Spanish NER); 1e-3 stops there after about 150 iterations with an
        entity F1 within 0.002 of the converged model's; use 1e-5 to train to
        CRFsuite's precision.
    epsilon : float, default=1e-5
        CRFsuite's other stopping rule (its ``epsilon``): training stops when
        ``‖g‖ / max(‖w‖, 1) <= epsilon``, g the gradient of the loss (with
        ``c1 > 0`` its orthant-wise pseudo-gradient). Tested before the first
        iteration too, so a refit that starts at an optimum (a warm start
        from converged weights) runs no iteration.
    min_freq : float, default=0.0
        CRFsuite's feature frequency cut-off, for every kind of feature: a
        state feature (attribute, label) is kept only when the sum of the
        attribute's values over the training tokens with that label is at
        least ``min_freq`` (so with the default 0, a pair whose values sum to
        a negative number is dropped, as in CRFsuite), a transition only when
        the label bigram occurs at least ``min_freq`` times. The extra
        features of ``all_possible_states`` and ``all_possible_transitions``
        have frequency 0: any ``min_freq > 0`` drops those not seen often
        enough.
    all_possible_states : bool, default=False
        Give a weight to every (attribute, label) pair, not only those seen in
        training. Slower, rarely more accurate.
    all_possible_transitions : bool, default=False
        Give a weight to every label pair transition, not only those seen in
        training, so that unseen transitions can learn negative weights.
    hashing : int, default=None
        ``None`` keeps a vocabulary of every attribute seen in training. An int
        hashes attribute names into that many slots instead (the hashing trick,
        see :class:`SequenceVectorizer`): memory stays bounded for huge
        vocabularies, at the cost of collisions and of attribute names in the
        inspection attributes.
    warm_start : bool, default=False
        When refitting, start from the weights of the previous fit (matched by
        attribute and label names; features new to this fit start at 0)
        instead of zeros. Refitting after :meth:`set_params` with a new ``c1``
        or ``c2``, or with a larger ``max_iter`` after a fit stopped by
        ``max_iter``, continues from the previous weights and so needs fewer
        iterations; each fit runs at most ``max_iter`` iterations and
        ``loss_curve_`` holds the last fit's. :func:`~sklearn.base.clone`, and
        so :class:`~sklearn.model_selection.GridSearchCV`, drops the fitted
        weights: warm starts help a hand-written loop over a regularization
        path, not a search.
    n_jobs : int, default=None
        Number of threads of the numba kernels. ``None`` uses numba's default
        (all cores, or the ``NUMBA_NUM_THREADS`` environment variable); ``-1``
        all cores, ``-2`` all but one, etc. The fitted weights are bitwise
        the same for any ``n_jobs`` (the work is split into blocks that depend
        on the data only). In a process-parallel search
        (``GridSearchCV(..., n_jobs=k)`` with joblib's default "loky"
        backend), joblib sets ``NUMBA_NUM_THREADS`` in each worker to the
        cores divided by ``k``, so the processes do not oversubscribe the
        cores.
    verbose : int, default=0
        When positive, log the loss, gradient norm and elapsed time of each
        iteration at INFO level on the ``"sklearn_crf"`` logger (see
        :mod:`logging`; e.g. ``logging.basicConfig(level=logging.INFO)`` shows
        them). The losses are kept in ``loss_curve_`` whatever ``verbose``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_labels,)
        The labels, sorted.
    vectorizer_ : SequenceVectorizer
        The fitted vectorizer that maps feature dicts to attribute ids.
    layout_ : ParameterLayout
        Which (attribute, label) pairs and label transitions have a weight.
    coef_ : ndarray of shape (n_state_features + n_transition_features,)
        All weights: the state features in ``layout_`` order, then the
        transition features.
    transition_matrix_ : ndarray of shape (n_labels, n_labels)
        ``transition_matrix_[i, j]`` is the weight of label ``classes_[i]``
        followed by ``classes_[j]`` (0 where there is no such feature);
        computed from ``coef_`` on each access (``coef_`` is the one source of
        truth: edit it, not this copy).
    n_iter_ : int
        Number of iterations of the solver (L-BFGS-B or OWL-QN) in the last fit.
    loss_ : float
        The objective at the fitted weights.
    loss_curve_ : ndarray of shape (n_iter_,)
        The objective after each iteration.
    attributes_ : list of str, length (n_active_attributes,)
        Names of the attributes that have a non-zero weight for at least one
        label, in the order of ``vectorizer_.feature_names_`` (which lists
        every attribute seen in training).
    state_features_ : dict of (str, label) to float
        ``{(attribute, label): weight}`` for every non-zero state weight.
    transition_features_ : dict of (label, label) to float
        ``{(from_label, to_label): weight}`` for every non-zero transition
        weight; ``transition_matrix_`` holds all of them as an array.

    See Also
    --------
    SequenceVectorizer : The feature-dict vectorizer used inside.
    sklearn_crf.metrics.get_scorer : Sequence-labeling scorers for
        :func:`~sklearn.model_selection.cross_validate` and the searches.

    Notes
    -----
    ``attributes_``, ``state_features_`` and ``transition_features_`` have
    sklearn-crfsuite's formats and, as there, list only the features with a
    non-zero weight (what a CRFsuite model file stores): with ``c1 > 0`` many
    are absent. They are computed from ``coef_`` on each access, not stored;
    keep the result in a variable rather than reading them in a loop.
    :meth:`top_features` lists the strongest weights of each label.

    `eli5 <https://github.com/eli5-org/eli5>`_ (>= 0.14) explains
    sklearn-crfsuite models from these three attributes and ``classes_``;
    registering its explainer for this class makes
    ``eli5.explain_weights(crf)`` and ``eli5.show_weights(crf)`` work
    (``eli5.sklearn_crfsuite`` imports sklearn-crfsuite, so both must be
    installed)::

        import eli5
        from eli5.sklearn_crfsuite.explain_weights import (
            explain_weights_sklearn_crfsuite,
        )
        eli5.explain_weights.register(CRFTagger, explain_weights_sklearn_crfsuite)

    As an estimator, ``CRFTagger`` is neither a classifier nor a regressor
    (its ``y`` is a list of label sequences of different lengths), so
    :func:`~sklearn.model_selection.cross_validate` and the searches split
    ``cv=k`` with :class:`~sklearn.model_selection.KFold`, never stratified;
    :meth:`score` is the token accuracy and
    :func:`sklearn_crf.metrics.get_scorer` gives entity-level F1 and the
    other sequence scores.

    Examples
    --------
    >>> from sklearn_crf import CRFTagger
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> crf = CRFTagger(c2=0.01).fit(X, y)
    >>> crf.predict([[{"w": "Mary"}, {"w": "runs"}]])
    [['PER', 'O']]
    >>> crf.score(X, y)
    1.0
    """

    _parameter_constraints: dict = {
        "c1": [Interval(Real, 0, None, closed="left")],
        "c2": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"lbfgs", "l-bfgs-b"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "min_freq": [Interval(Real, 0, None, closed="left")],
        "all_possible_states": ["boolean"],
        "all_possible_transitions": ["boolean"],
        "hashing": [Interval(Integral, 1, np.iinfo(np.int32).max, closed="both"), None],
        "warm_start": ["boolean"],
        "n_jobs": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Integral, None, -1, closed="right"),
            None,
        ],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        c1=0.0,
        c2=1.0,
        solver="lbfgs",
        max_iter=1000,
        tol=1e-3,
        epsilon=1e-5,
        min_freq=0.0,
        all_possible_states=False,
        all_possible_transitions=False,
        hashing=None,
        warm_start=False,
        n_jobs=None,
        verbose=0,
    ):
        self.c1 = c1
        self.c2 = c2
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.epsilon = epsilon
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.hashing = hashing
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the CRF.

        Parameters
        ----------
        X : list of sequences of dict
            Each sequence is a list of tokens, each token a dict of features in
            sklearn-crfsuite's format (see :class:`SequenceVectorizer`).
        y : list of sequences of labels
            One label per token. Labels may be str, int or any hashable, all of
            one type.
        sample_weight : array-like of shape (n_sequences,), default=None
            Weight of each sequence in the likelihood.

        Returns
        -------
        self : CRFTagger
            The fitted tagger.
        """
        vectorizer = SequenceVectorizer(n_features=self.hashing)
        corpus = vectorizer.fit_encode(X)
        classes, labels = encode_labels(y, corpus.seq_ptr)
        seq_weight = check_sequence_weight(sample_weight, corpus.n_sequences)
        if seq_weight is None:
            seq_weight = np.ones(corpus.n_sequences)
        layout = build_layout(
            corpus, labels, len(classes),
            min_freq=self.min_freq,
            all_possible_states=self.all_possible_states,
            all_possible_transitions=self.all_possible_transitions,
        )
        logger.debug(
            "%d sequences, %d tokens, %d attributes, %d labels, %d parameters",
            corpus.n_sequences, corpus.n_tokens, corpus.n_attributes,
            len(classes), layout.n_params,
        )
        with _n_threads(self.n_jobs, corpus.n_tokens) as n_threads:
            objective = CRFObjective(
                corpus, layout, labels, seq_weight, c2=self.c2, n_chunks=n_threads,
            )
            w0 = self._warm_start_weights(vectorizer, classes, layout)
            result = minimize_crf(
                objective, w0, c1=self.c1, solver=self.solver,
                max_iter=self.max_iter, tol=self.tol, epsilon=self.epsilon,
                verbose=self.verbose,
            )
        self.classes_ = classes
        self.vectorizer_ = vectorizer
        self.layout_ = layout
        self.coef_ = result.w
        self.n_iter_ = result.n_iter
        self.loss_curve_ = result.losses
        self.loss_ = result.loss
        self._sklearn_crf_version = __version__
        return self

    def _warm_start_weights(self, vectorizer, classes, layout):
        """Zeros, or with ``warm_start`` the previous weights of the same features."""
        w0 = np.zeros(layout.n_params)
        if not (self.warm_start and hasattr(self, "coef_")):
            return w0
        old_layout = self.layout_
        label_map = {label: i for i, label in enumerate(classes.tolist())}
        old_to_new_label = np.array(
            [label_map.get(label, -1) for label in self.classes_.tolist()], dtype=np.int64
        )
        old_to_new_attr = _attribute_map(self.vectorizer_, vectorizer)
        L = len(classes)
        # state features: match (attribute, label) keys
        old_attr = old_to_new_attr[old_layout.state_pairs()]
        old_label = old_to_new_label[old_layout.attr_label]
        ok = (old_attr >= 0) & (old_label >= 0)
        old_keys = old_attr[ok] * L + old_label[ok]
        _copy_matching(
            w0[: layout.n_state], layout.dense_index(), old_keys,
            self.coef_[: old_layout.n_state][ok],
        )
        # transitions
        f = old_to_new_label[old_layout.trans_from]
        t = old_to_new_label[old_layout.trans_to]
        ok = (f >= 0) & (t >= 0)
        _copy_matching(
            w0[layout.n_state :],
            layout.trans_from.astype(np.int64) * L + layout.trans_to,
            f[ok] * L + t[ok],
            self.coef_[old_layout.n_state :][ok],
        )
        return w0

    def _infer(self, X, kernel):
        """Vectorize X, score its tokens and run ``kernel(scores, seq_ptr,
        n_threads)`` with the thread count in force; returns (result, seq_ptr)."""
        if "coef_" not in self.__dict__:  # check_is_fitted costs more than a sentence
            check_is_fitted(self)
        corpus = self.vectorizer_.encode(X)
        layout = self.layout_
        # straight from coef_: the cost does not grow with the model's size
        scores = _kernels.state_scores_sparse(
            self.coef_, layout.attr_ptr, layout.attr_label, corpus.tok_ptr,
            corpus.tok_attr, corpus.tok_val, layout.n_labels,
        )
        if corpus.n_tokens < MIN_TOKENS_PER_THREAD:  # one thread whatever n_jobs
            return kernel(scores, corpus.seq_ptr, 1), corpus.seq_ptr
        with _n_threads(self.n_jobs, corpus.n_tokens) as n_threads:
            return kernel(scores, corpus.seq_ptr, n_threads), corpus.seq_ptr

    def _state_scores(self, X):
        """Vectorize X and return (state scores, sequence offsets)."""
        return self._infer(X, lambda scores, seq_ptr, n_threads: scores)

    def predict(self, X):
        """Most likely label sequence of each sequence (Viterbi).

        Parameters
        ----------
        X : list of sequences of dict
            Sequences of feature dicts, as in :meth:`fit`.

        Returns
        -------
        y : list of lists
            The predicted labels, of the same type as the training labels.
        """
        trans = self.transition_matrix_  # from coef_; NotFittedError before fit
        (codes, _), seq_ptr = self._infer(
            X, lambda scores, seq_ptr, n_threads: _kernels.viterbi_batch(
                scores, trans, seq_ptr, n_threads
            )
        )
        labels = self.classes_.tolist()
        flat = [labels[c] for c in codes.tolist()]
        return [flat[a:b] for a, b in zip(seq_ptr[:-1].tolist(), seq_ptr[1:].tolist())]

    def predict_marginals(self, X):
        """Probability of each label at each token (forward-backward).

        Parameters
        ----------
        X : list of sequences of dict
            Sequences of feature dicts, as in :meth:`fit`.

        Returns
        -------
        marginals : list of lists of dict
            ``marginals[i][t][label]`` is the probability that token ``t`` of
            sequence ``i`` has that label (sklearn-crfsuite's format).
        """
        trans = self.transition_matrix_  # from coef_; NotFittedError before fit
        (_, node, _), seq_ptr = self._infer(
            X, lambda scores, seq_ptr, n_threads: _kernels.forward_backward_batch(
                scores, trans, seq_ptr, False, n_threads
            )
        )
        labels = self.classes_.tolist()
        rows = [dict(zip(labels, row)) for row in node.tolist()]
        return [rows[a:b] for a, b in zip(seq_ptr[:-1].tolist(), seq_ptr[1:].tolist())]

    def score(self, X, y, sample_weight=None):
        """Token accuracy of :meth:`predict` on X against y.

        Parameters
        ----------
        X : list of sequences of dict
            Sequences of feature dicts.
        y : list of sequences of labels
            The true labels.
        sample_weight : array-like of shape (n_sequences,), default=None
            Weight of each sequence; each of its tokens gets that weight.

        Returns
        -------
        score : float
            The fraction of tokens labelled correctly.
        """
        from .metrics import flat_accuracy_score

        return flat_accuracy_score(y, self.predict(X), sample_weight=sample_weight)

    @property
    def transition_matrix_(self):
        """Dense (n_labels, n_labels) transition weights, computed from ``coef_``.

        ``transition_matrix_[i, j]`` is the weight of ``classes_[i]`` followed
        by ``classes_[j]``, 0 where there is no such feature.
        """
        if "coef_" not in self.__dict__:
            check_is_fitted(self)
        return self.layout_.transition_matrix(self.coef_)

    @property
    def attributes_(self):
        """Names of the attributes with a non-zero weight for some label.

        Computed from ``coef_`` on each access, in the order of
        ``vectorizer_.feature_names_``; sklearn-crfsuite's ``attributes_``.
        """
        return _inspection.attributes(self)

    @property
    def state_features_(self):
        """``{(attribute, label): weight}`` of the non-zero state weights.

        Computed from ``coef_`` on each access; sklearn-crfsuite's
        ``state_features_``. Pairs that are absent have weight 0.
        """
        return _inspection.state_features(self)

    @property
    def transition_features_(self):
        """``{(from_label, to_label): weight}`` of the non-zero transition weights.

        Computed from ``coef_`` on each access; sklearn-crfsuite's
        ``transition_features_``. Pairs that are absent have weight 0.
        """
        return _inspection.transition_features(self)

    def top_features(self, n=10):
        """The strongest positive and negative state weights of each label.

        Parameters
        ----------
        n : int, default=10
            Number of features of each sign to list for each label.

        Returns
        -------
        top : dict
            ``top[label]["positive"]`` is a list of up to ``n`` pairs
            ``(attribute, weight)`` with the largest positive weights for
            ``label``, by decreasing weight; ``top[label]["negative"]`` the
            same for the most negative weights, most negative first. Labels
            are in ``classes_`` order; zero weights are never listed.

        See Also
        --------
        state_features_ : All non-zero state weights.
        transition_matrix_ : The transition weights.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John", "title": True}, {"w": "runs"}],
        ...      [{"w": "Mary", "title": True}, {"w": "runs"}],
        ...      [{"w": "Ann", "title": True}, {"w": "sleeps"}]]
        >>> y = [["PER", "O"], ["PER", "O"], ["PER", "O"]]
        >>> crf = CRFTagger(c2=0.1, all_possible_states=True).fit(X, y)
        >>> top = crf.top_features(n=2)
        >>> [(name, round(weight, 2)) for name, weight in top["PER"]["positive"]]
        [('title', 0.65), ('w:Ann', 0.22)]
        >>> [(name, round(weight, 2)) for name, weight in top["PER"]["negative"]]
        [('w:runs', -0.63), ('w:sleeps', -0.44)]
        """
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        return _inspection.top_state_features(self, int(n))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        tags.target_tags.required = True
        tags.target_tags.two_d_labels = False
        tags.non_deterministic = False
        return tags

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise ValueError(
                f"cannot read this pickled CRFTagger: its state is a "
                f"{type(state).__name__}, not a dict"
            )
        version = state.get("_sklearn_crf_version")
        if version is not None and version != __version__:
            warnings.warn(InconsistentVersionWarning(version, __version__), stacklevel=2)
        state = dict(state)
        state.pop("transition_matrix_", None)  # a stored copy before 0.2: coef_ has it
        _check_fitted_state(state, version)
        super().__setstate__(state)


def _attribute_map(old, new):
    """New attribute id of each old attribute id (-1 where it has none)."""
    if old.n_features is None and new.n_features is None:
        vocab = new.vocabulary_
        return np.array([vocab.get(name, -1) for name in old.feature_names_], dtype=np.int64)
    if old.n_features == new.n_features:  # the same hash slots
        ids = new._slot_ids
        return np.array([ids.get(slot, -1) for slot in old.hash_slots_.tolist()],
                        dtype=np.int64)
    return np.full(old.n_attributes_, -1, dtype=np.int64)


class InconsistentVersionWarning(UserWarning):
    """A CRFTagger pickled by another version of sklearn-crf was loaded.

    As scikit-learn's :class:`~sklearn.exceptions.InconsistentVersionWarning`:
    the model is loaded, but it may not behave as it did; refit it to be sure.

    Parameters
    ----------
    original_version : str
        The sklearn-crf version that pickled the model.
    current_version : str
        The installed version.

    Examples
    --------
    >>> from sklearn_crf import InconsistentVersionWarning
    >>> str(InconsistentVersionWarning("0.1.0", "0.2.0"))[:58]
    'Trying to unpickle a CRFTagger pickled by sklearn-crf 0.1.'
    """

    def __init__(self, original_version, current_version):
        self.original_version = original_version
        self.current_version = current_version

    def __str__(self):
        return (
            f"Trying to unpickle a CRFTagger pickled by sklearn-crf "
            f"{self.original_version} with sklearn-crf {self.current_version} "
            "installed. It is loaded, but it might not behave as it did; refit it "
            "to be sure."
        )


#: fitted attributes without which a fitted CRFTagger cannot be used
_FITTED_STATE = ("classes_", "vectorizer_", "layout_", "coef_")


def _check_fitted_state(state, version):
    """Refuse, with a clear message, a fitted state that cannot be read."""
    present = [name for name in _FITTED_STATE if name in state]
    if not present:
        return  # an unfitted estimator: its parameters are all there is
    made_by = f"pickled by sklearn-crf {version}" if version else "pickled"
    missing = [name for name in _FITTED_STATE if name not in state]
    if missing:
        raise ValueError(
            f"cannot read this CRFTagger ({made_by}): its fitted state lacks "
            f"{', '.join(missing)}; refit it"
        )
    coef, layout = state["coef_"], state["layout_"]
    n_params = getattr(layout, "n_params", None)
    if not isinstance(coef, np.ndarray) or coef.ndim != 1 or coef.shape[0] != n_params:
        raise ValueError(
            f"cannot read this CRFTagger ({made_by}): coef_ does not match its "
            "parameter layout; refit it"
        )


def _copy_matching(dest, dest_keys, src_keys, src_values):
    """dest[i] = src_values[j] wherever dest_keys[i] == src_keys[j] (unique keys)."""
    if len(src_keys) == 0 or len(dest_keys) == 0:
        return
    order = np.argsort(src_keys, kind="stable")
    sorted_keys = src_keys[order]
    pos = np.clip(np.searchsorted(sorted_keys, dest_keys), 0, len(sorted_keys) - 1)
    hit = sorted_keys[pos] == dest_keys
    dest[hit] = src_values[order[pos[hit]]]


