"""CRFTagger: a linear-chain CRF sequence labeler as a scikit-learn estimator."""

import logging
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._derived import DerivedValues
from ._model import constraints as _constraints
from . import _engine
from ._inference import entities as _entities, explain as _explain, inspection as _inspection
from ._engine.decoding import best_path_labels, node_marginals
from ._engine.dense import dense_scores
from ._engine.first_use import note_compilation as _note_compilation
from ._features.forms import sequence_length
from ._features.validation import check_n_dense as _check_n_dense
from ._model.layout import layout_from_pairs
from ._model.weights import FittedModel
from ._training.fit import fit_model
from ._training.solvers import SOLVERS, check_solver_params
from ._engine.threads import n_threads as _n_threads
from ._features.validation import label_array
from ._features.corpus import FeatureDicts
from ._features.vectorizer import SequenceVectorizer
from ._version import __version__

logger = logging.getLogger("sklearn_crf")

#: the names of :func:`sklearn_crf.metrics.get_scorer` (``validation_scoring``);
#: not imported from there, to keep ``import sklearn_crf`` light
VALIDATION_SCORERS = (
    "entity_f1", "entity_precision", "entity_recall", "flat_accuracy", "flat_f1",
    "sequence_accuracy",
)


class CRFTagger(BaseEstimator):
    """Linear-chain conditional random field for sequence labeling.

    CRFsuite's model and objective (so sklearn-crfsuite's tuned
    hyperparameters carry over): it minimizes ``-Σ_s log p(y_s | x_s) +
    c1·‖w‖₁ + c2·‖w‖²`` over one weight per (attribute, label) pair seen in
    training, per label transition and per (dense dimension, label) pair, with
    L-BFGS (OWL-QN under L1) or one of CRFsuite's online algorithms. X is a
    list of sequences of feature dicts, of 2-D float arrays (dense features),
    of ``(dicts, array)`` tuples, or an :class:`~sklearn_crf.EncodedCorpus`;
    y a list of label sequences. The user guide has the details: the model,
    training algorithms, decoding, input formats, dense features.

    Parameters
    ----------
    c1 : float, default=0.0
        Coefficient of the L1 penalty; with ``c1 > 0`` many weights are
        exactly 0. Solvers ``"lbfgs"`` and ``"l-bfgs-b"``.
    c2 : float, default=1.0
        Coefficient of the squared L2 penalty. Solvers ``"lbfgs"``,
        ``"l-bfgs-b"`` and ``"l2sgd"`` (which needs ``c2 > 0``).
    solver : {"lbfgs", "l-bfgs-b", "l2sgd", "ap", "pa", "arow"}, default="lbfgs"
        The training algorithm: L-BFGS or one of CRFsuite's online
        algorithms. ``"lbfgs"`` is CRFsuite's (L-BFGS-B, or OWL-QN when
        ``c1 > 0``), ``"l-bfgs-b"`` always L-BFGS-B (L1 on split weights);
        ``"l2sgd"``, ``"ap"``, ``"pa"`` and ``"arow"`` are SGD, averaged
        perceptron, passive-aggressive and AROW, run as CRFsuite runs them,
        on one thread. A parameter of another solver set to a non-default
        value raises a ValueError in :meth:`fit`.
    max_iter : int, default=None
        Maximum number of iterations (epochs for the online solvers). None:
        1000 for ``"lbfgs"``, ``"l-bfgs-b"`` and ``"l2sgd"``, 100 for the
        others; a fit that reaches it raises a ``ConvergenceWarning``.
    tol : float, default=1e-3
        Stop when the loss decreased by less than ``tol``, relative to its
        current value, over the last 10 iterations (CRFsuite's "delta" test,
        whose default is 1e-5). Solvers ``"lbfgs"`` and ``"l-bfgs-b"``.
    epsilon : float, default=None
        CRFsuite's ``epsilon`` stopping rule (None: CRFsuite's default).
        ``"lbfgs"``, ``"l-bfgs-b"``: stop when ``‖g‖ / max(‖w‖, 1) <=
        epsilon`` (1e-5), tested before the first iteration too; ``"ap"``,
        ``"pa"``, ``"arow"``: stop after an epoch whose loss per sequence is
        below ``epsilon`` (0).
    period : int, default=10
        ``"l2sgd"``: the stopping test compares the loss with the loss
        ``period`` epochs earlier.
    delta : float, default=1e-6
        ``"l2sgd"``: stop when the loss improved by less than ``delta``,
        relative to its current value, over the last ``period`` epochs.
    calibration_eta : float, default=0.1
        ``"l2sgd"``: the first learning rate the calibration tries.
    calibration_rate : float, default=2.0
        ``"l2sgd"``: the factor by which the calibration changes the
        learning rate.
    calibration_samples : int, default=1000
        ``"l2sgd"``: the number of sequences the calibration trains on.
    calibration_candidates : int, default=10
        ``"l2sgd"``: the number of learning rates that decrease the loss the
        calibration tries in each direction.
    calibration_max_trials : int, default=20
        ``"l2sgd"``: the maximum number of learning rates the calibration
        tries.
    pa_type : {0, 1, 2}, default=1
        ``"pa"``: the update, 0 without slack, 1 PA-I, 2 PA-II.
    c : float, default=1.0
        ``"pa"``: the aggressiveness parameter of types 1 and 2.
    error_sensitive : bool, default=True
        ``"pa"``: a mistake costs the square root of the number of wrong
        labels (else 1) on top of the score difference.
    averaging : bool, default=True
        ``"pa"``: return the average of the weights over all updates (else
        the last weights).
    variance : float, default=1.0
        ``"arow"``: the initial variance of every weight.
    gamma : float, default=1.0
        ``"arow"``: the trade-off between the loss and the change of the
        weights.
    min_freq : float, default=0.0
        CRFsuite's feature cut-off: a state feature is kept when the
        attribute's values on the training tokens of its label sum to at
        least ``min_freq``, a transition when it occurs at least
        ``min_freq`` times.
    all_possible_states : bool, default=False
        Give a weight to every (attribute, label) pair, not only those seen
        in training.
    all_possible_transitions : bool, default=False
        Give a weight to every label transition, so that unseen transitions
        can learn negative weights.
    hashing : int, default=None
        None keeps a vocabulary of the attributes seen in training; an int
        hashes attribute names into that many slots (bounded memory, at the
        cost of collisions and of attribute names).
    warm_start : bool, default=False
        Refit from the previous fit's weights (matched by attribute and label
        names) instead of zeros. Solvers ``"lbfgs"`` and ``"l-bfgs-b"``.
    early_stopping : bool, default=False
        Stop when the validation score has not improved for
        ``n_iter_no_change`` iterations and keep the weights of the best
        iteration. The validation set is ``X_val``, ``y_val`` of :meth:`fit`,
        else ``validation_fraction`` of the training sequences.
    validation_fraction : float, default=0.1
        With ``early_stopping`` and no ``X_val``: the fraction of the
        sequences set aside, at random (``random_state``), to validate on.
    n_iter_no_change : int, default=10
        With ``early_stopping``: the number of iterations without a better
        validation score after which training stops.
    validation_scoring : str or None, default=None
        The validation score, higher is better: None is minus the validation
        loss per token, a name of :func:`sklearn_crf.metrics.get_scorer`
        (``"entity_f1"``, ...) scores the predictions.
    random_state : int, RandomState instance or None, default=None
        The draw of the validation set of ``early_stopping``; nothing else
        is random.
    n_jobs : int, default=None
        Number of threads of the kernels: None is numba's default (all cores,
        or ``NUMBA_NUM_THREADS``), -1 all cores, -2 all but one. The weights
        are bitwise the same for any ``n_jobs``.
    transition_constraints : None, str or collection of (label, label), default=None
        The label sequences the decoders may produce: any (None), those of a
        tagging scheme (``"IOB1"``, ``"IOB2"``, ``"IOE1"``, ``"IOE2"``,
        ``"IOBES"``, ``"BILOU"``, ``"BMES"``), or those made of the given
        ``(from_label, to_label)`` pairs. Forbidden sequences get probability
        0 in every inference method.
    constrain_training : bool, default=False
        Train under ``transition_constraints`` too: the likelihood of a
        sequence is then ``p(y | x, y allowed)``. Solvers ``"lbfgs"`` and
        ``"l-bfgs-b"``.
    decoder : {"viterbi", "posterior"}, default="viterbi"
        How :meth:`predict` and :meth:`predict_entities` choose labels: the
        most probable sequence, or the most probable label of each token
        (under constraints, the allowed sequence with the largest sum of
        token marginals).
    verbose : int, default=0
        When positive, log each iteration's loss, gradient norm and time at
        INFO level on the ``"sklearn_crf"`` logger (on stderr when logging
        is not configured).

    Attributes
    ----------
    classes_ : ndarray of shape (n_labels,)
        The labels, sorted.
    vectorizer_ : SequenceVectorizer
        The fitted vectorizer that maps tokens to attribute ids.
    layout_ : ParameterLayout
        Which (attribute, label) pairs, transitions and dense dimensions
        carry a weight.
    coef_ : ndarray of shape (n_params,)
        All weights, the one source of truth: the state weights in
        ``layout_`` order, the transitions, then ``dense_coef_`` row-major
        (``n_params`` is ``layout_.n_params``).
    n_dense_features_ : int
        Number of dense features per token (0 without them).
    dense_coef_ : ndarray of shape (n_dense_features_, n_labels)
        The weights of the dense features, a view of the tail of ``coef_``.
    transition_matrix_ : ndarray of shape (n_labels, n_labels)
        Weight of ``classes_[i]`` followed by ``classes_[j]`` (0 where there
        is no such feature), computed from ``coef_``.
    n_iter_ : int
        Number of iterations (epochs) of the last fit.
    loss_ : float
        The objective at the fitted weights.
    loss_curve_ : ndarray of shape (n_iter_,)
        The objective after each iteration (CRFsuite's per-epoch loss for
        the online solvers).
    validation_scores_ : ndarray of shape (n_iter_,) or None
        The validation score after each iteration; None without a
        validation set.
    best_iteration_ : int or None
        The iteration (counted from 1) with the best validation score, whose
        weights ``coef_`` holds with ``early_stopping``; None without a
        validation set.
    attributes_ : list of str
        Names of the attributes with a non-zero weight for some label.
    state_features_ : dict of (str, label) to float
        ``{(attribute, label): weight}`` for every non-zero state weight.
    transition_features_ : dict of (label, label) to float
        ``{(from_label, to_label): weight}`` for every non-zero transition
        weight.

    See Also
    --------
    CRF : The drop-in replacement of sklearn-crfsuite's ``CRF``.
    CRFTaggerCV : The regularization path over folds.
    SequenceFeaturizer : Feature dicts, or an encoded corpus, from raw tokens.
    SequenceVectorizer : The feature-dict vectorizer used inside.
    sklearn_crf.metrics.get_scorer : Sequence-labeling scorers.

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
        "solver": [StrOptions(set(SOLVERS))],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="left"), None],
        "period": [Interval(Integral, 1, None, closed="left")],
        "delta": [Interval(Real, 0, None, closed="left")],
        "calibration_eta": [Interval(Real, 0, None, closed="neither")],
        "calibration_rate": [Interval(Real, 1, None, closed="neither")],
        "calibration_samples": [Interval(Integral, 1, None, closed="left")],
        "calibration_candidates": [Interval(Integral, 1, None, closed="left")],
        "calibration_max_trials": [Interval(Integral, 1, None, closed="left")],
        "pa_type": [Options(Integral, {0, 1, 2})],
        "c": [Interval(Real, 0, None, closed="neither")],
        "error_sensitive": ["boolean"],
        "averaging": ["boolean"],
        "variance": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "min_freq": [Interval(Real, 0, None, closed="left")],
        "all_possible_states": ["boolean"],
        "all_possible_transitions": ["boolean"],
        "hashing": [Interval(Integral, 1, np.iinfo(np.int32).max, closed="both"), None],
        "warm_start": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "validation_scoring": [StrOptions(set(VALIDATION_SCORERS)), None],
        "random_state": ["random_state"],
        "n_jobs": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Integral, None, -1, closed="right"),
            None,
        ],
        "transition_constraints": [
            None, StrOptions(set(_constraints.SCHEMES)), "array-like"
        ],
        "constrain_training": ["boolean"],
        "decoder": [StrOptions({"viterbi", "posterior"})],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        c1=0.0,
        c2=1.0,
        solver="lbfgs",
        max_iter=None,
        tol=1e-3,
        epsilon=None,
        period=10,
        delta=1e-6,
        calibration_eta=0.1,
        calibration_rate=2.0,
        calibration_samples=1000,
        calibration_candidates=10,
        calibration_max_trials=20,
        pa_type=1,
        c=1.0,
        error_sensitive=True,
        averaging=True,
        variance=1.0,
        gamma=1.0,
        min_freq=0.0,
        all_possible_states=False,
        all_possible_transitions=False,
        hashing=None,
        warm_start=False,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        validation_scoring=None,
        random_state=None,
        n_jobs=None,
        transition_constraints=None,
        constrain_training=False,
        decoder="viterbi",
        verbose=0,
    ):
        self.c1 = c1
        self.c2 = c2
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.hashing = hashing
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.validation_scoring = validation_scoring
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.transition_constraints = transition_constraints
        self.constrain_training = constrain_training
        self.decoder = decoder
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, X_val=None, y_val=None):
        """Train the CRF.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            Each sequence is a list of tokens, each token in any form
            sklearn-crfsuite accepts: a dict of features or a list of
            attribute names (see :class:`SequenceVectorizer`); or a 2-D
            float array (n_tokens, n_dense) of dense features; or a tuple
            ``(tokens, array)`` of both (``len(tokens) == len(array)``); or an
            :class:`~sklearn_crf.EncodedCorpus` whose ``vectorizer`` is set,
            which becomes ``vectorizer_``.
        y : list of sequences of labels
            One label per token. Labels may be str, int or any hashable, all of
            one type. For partially labelled data (solvers ``"lbfgs"`` and
            ``"l-bfgs-b"``), a token's entry may also be None (unknown) or a
            set or frozenset of labels (one of them): the likelihood of a
            sequence is then that of the label paths its labels allow.
        sample_weight : array-like of shape (n_sequences,), default=None
            Weight of each sequence in the likelihood (for ``"ap"``, ``"pa"``
            and ``"arow"``, in their updates, as CRFsuite's instance weight).
        X_val : same forms as X, default=None
            A validation set, in the same form as X (an EncodedCorpus is
            re-encoded through the fit's vectorizer): its score is recorded
            after each iteration in ``validation_scores_`` and, with
            ``early_stopping``, decides when to stop (then no part of X is
            set aside). In a :class:`~sklearn.pipeline.Pipeline`, request it
            with ``set_fit_request(X_val=True, y_val=True)`` under
            ``sklearn.set_config(enable_metadata_routing=True)``; the
            Pipeline passes metadata on untransformed, so give it
            ``transform_input=["X_val"]`` to have the steps before the
            tagger transform ``X_val`` as they transform ``X``.
        y_val : list of sequences of labels, default=None
            The labels of ``X_val``; given together with it.

        Returns
        -------
        self : CRFTagger
            The fitted tagger.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
        >>> y = [["PER", "O"], ["PER", "O"]]
        >>> X_val, y_val = [[{"w": "Mary"}, {"w": "runs"}]], [["PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, early_stopping=True, n_iter_no_change=3)
        >>> crf = crf.fit(X, y, X_val=X_val, y_val=y_val)
        >>> crf.validation_scores_.shape == (crf.n_iter_,)
        True
        >>> crf.best_iteration_ <= crf.n_iter_
        True
        """
        check_solver_params(self)  # no parameter of another solver
        previous = self._fitted_model() if self.warm_start and hasattr(self, "coef_") else None
        outcome = fit_model(
            self.get_params(deep=False), X, y, sample_weight, X_val, y_val,
            previous=previous, tagger_for=self._tagger_for,
        )
        return self._set_fitted(outcome)

    def _set_fitted(self, outcome):
        """Set the fitted attributes from a fit's
        :class:`~sklearn_crf._training.fit.FitOutcome` (the end of every fit);
        returns self."""
        model, result = outcome
        if result.w.shape != (model.layout.n_params,):
            raise ValueError(
                f"the solver returned {result.w.shape} weights for a layout of "
                f"{model.layout.n_params}"
            )
        self.classes_ = model.classes
        self.vectorizer_ = model.vectorizer
        self.layout_ = model.layout
        self.coef_ = result.w
        self.n_iter_ = result.n_iter
        self.loss_curve_ = result.losses
        self.loss_ = result.loss
        self.validation_scores_ = result.validation_scores
        self.best_iteration_ = result.best_iteration
        self._sklearn_crf_version = __version__
        return self

    def _fitted_model(self):
        """The fitted model as a :class:`~sklearn_crf._model.weights.FittedModel`
        (a NotFittedError before a fit)."""
        if "coef_" not in self.__dict__:
            check_is_fitted(self)
        return FittedModel(self.classes_, self.vectorizer_, self.layout_, self.coef_)

    def _tagger_for(self, model):
        """A fitted tagger with this tagger's parameters and the arrays of
        ``model`` (a :class:`~sklearn_crf._model.weights.FittedModel`): what the
        fit's validation scorers predict with, so that they score exactly what
        :meth:`predict` returns. ``self`` is left as it is."""
        tagger = type(self)(**self.get_params(deep=False))
        tagger.classes_ = model.classes
        tagger.vectorizer_ = model.vectorizer
        tagger.layout_ = model.layout
        tagger.coef_ = model.coef
        return tagger

    def __sklearn_is_fitted__(self):
        """Whether the model is set (by fit or from_weights): one lookup, for the
        check scikit-learn makes at every call (e.g. a Pipeline's predict)."""
        return "coef_" in self.__dict__

    def _encode(self, X):
        """X as an EncodedCorpus of the fitted vectorizer, checked against the
        fit's number of dense features: the one encoding of an inference call."""
        if "coef_" not in self.__dict__:  # check_is_fitted costs more than a sentence
            check_is_fitted(self)
        corpus = self.vectorizer_.encode(X)
        _check_n_dense(corpus.n_dense, self.layout_.n_dense)
        return corpus

    def predict(self, X, *, allowed=None):
        """Most likely label sequence of each sequence.

        Viterbi, or the posterior decoder (see ``decoder``), under
        ``transition_constraints`` and ``allowed``.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        allowed : list, default=None
            Labels each token may take (forced or partial labels): ``None``,
            or one entry per sequence, ``None`` (free) or one entry per token:
            ``None`` (free), a label (forced) or a set, frozenset, list or
            tuple of labels. The result is the best sequence among those that
            respect it. An unknown label, a wrong length, or a sequence left
            without an allowed path raise a ValueError naming the sequence and
            token.

        Returns
        -------
        y : list of lists
            The predicted labels, of the same type as the training labels.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "Smith"}, {"w": "runs"}],
        ...      [{"w": "Mary"}, {"w": "sleeps"}], [{"w": "Smith"}, {"w": "runs"}]]
        >>> y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, transition_constraints="IOB2").fit(X, y)
        >>> crf.predict([[{"w": "Mary"}, {"w": "Smith"}, {"w": "sleeps"}]])
        [['B-PER', 'I-PER', 'O']]
        >>> crf.predict([[{"w": "Mary"}, {"w": "Smith"}, {"w": "sleeps"}]],
        ...             allowed=[[None, {"O", "B-PER"}, None]])
        [['B-PER', 'B-PER', 'O']]
        """
        if (allowed is not None or self.decoder != "viterbi"
                or self.transition_constraints is not None):
            problem = self._problem(X, allowed)
            return self._labels(self._decode(problem), problem.seq_ptr)
        if type(X) is list or type(X) is FeatureDicts:
            y = self._sink_labels(X)
            if y is not None:
                return y
        corpus = self._encode(X)
        if not self.layout_.n_dense:  # scores and Viterbi in one call per range
            with _n_threads(self.n_jobs, corpus.n_tokens) as n_threads:
                codes = self._best_paths(corpus, _transitions(self.layout_, self.coef_),
                                         n_threads)
            return self._labels(codes, corpus.seq_ptr)
        problem = self._problem_of(corpus, None)
        return self._labels(self._decode(problem), problem.seq_ptr)

    def predict_nbest(self, X, n=5, *, allowed=None):
        """The ``n`` most probable label sequences of each sequence.

        Exact (a list Viterbi): the ``n`` sequences of largest probability,
        most probable first, each once; fewer when fewer sequences are
        allowed. Ties are broken by the labels read from the end (the
        sequence whose last label comes first in ``classes_``, then the one
        before it, ...), so the first sequence is :meth:`predict`'s with
        ``decoder="viterbi"``.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        n : int, default=5
            Number of sequences to return per input sequence (at least 1).
        allowed : list, default=None
            Labels each token may take, as in :meth:`predict`.

        Returns
        -------
        nbest : list of lists of (list, float)
            ``nbest[i]`` lists up to ``n`` pairs ``(labels, probability)`` for
            sequence ``i``, by decreasing probability; the probability is
            ``p(labels | x)``, conditional on ``transition_constraints`` and
            ``allowed`` when they are set.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "Smith"}, {"w": "runs"}],
        ...      [{"w": "Mary"}, {"w": "sleeps"}], [{"w": "Smith"}, {"w": "runs"}]]
        >>> y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, transition_constraints="IOB2").fit(X, y)
        >>> for labels, p in crf.predict_nbest([[{"w": "Mary"}, {"w": "runs"}]], n=3)[0]:
        ...     print(labels, round(p, 3))
        ['B-PER', 'O'] 0.958
        ['B-PER', 'I-PER'] 0.037
        ['O', 'O'] 0.004
        """
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        n = int(n)
        problem = self._problem(X, allowed)
        seq_ptr = problem.seq_ptr
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            best = _engine.nbest(problem, n, n_threads)
            fb = _engine.log_forward_backward(problem, n_threads)
            log_p = _engine.nbest_log_probabilities(problem, fb, best, n_threads)
        labels = self.classes_.tolist()
        flat = [labels[c] for c in best.paths.tolist()]
        prob = np.exp(log_p).tolist()
        out = []
        k = 0
        for s, (a, b) in enumerate(zip(seq_ptr[:-1].tolist(), seq_ptr[1:].tolist())):
            m = b - a
            out.append([
                (flat[a * n + r * m:a * n + (r + 1) * m], prob[k + r])
                for r in range(int(best.counts[s]))
            ])
            k += int(best.counts[s])
        return out

    def predict_marginals(self, X, *, allowed=None, output="dict"):
        """Probability of each label at each token (forward-backward).

        Exact marginals ``p(y_t = label | x)``, conditional on
        ``transition_constraints`` and ``allowed`` when they are set.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        allowed : list, default=None
            Labels each token may take, as in :meth:`predict`.
        output : {"dict", "array"}, default="dict"
            ``"dict"``: sklearn-crfsuite's format; ``"array"``: one NumPy
            array per sequence.

        Returns
        -------
        marginals : list of lists of dict, or list of ndarray
            With ``output="dict"``, ``marginals[i][t][label]`` is the
            probability that token ``t`` of sequence ``i`` has that label
            (sklearn-crfsuite's format). With ``output="array"``,
            ``marginals[i]`` has shape (n_tokens_i, n_labels), columns in
            ``classes_`` order.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "Smith"}, {"w": "runs"}],
        ...      [{"w": "Mary"}, {"w": "sleeps"}], [{"w": "Smith"}, {"w": "runs"}]]
        >>> y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, transition_constraints="IOB2").fit(X, y)
        >>> crf.classes_.tolist()
        ['B-PER', 'I-PER', 'O']
        >>> crf.predict_marginals([[{"w": "Mary"}, {"w": "runs"}]], output="array")[0].round(3)
        array([[0.996, 0.   , 0.004],
               [0.001, 0.037, 0.962]])
        >>> m = crf.predict_marginals([[{"w": "Mary"}, {"w": "runs"}]],
        ...                           allowed=[["O", None]], output="array")
        >>> m[0].round(3)
        array([[0.   , 0.   , 1.   ],
               [0.047, 0.   , 0.953]])
        """
        if output not in ("dict", "array"):
            raise ValueError(f"output must be 'dict' or 'array', got {output!r}")
        problem = self._problem(X, allowed)
        node = self._node_marginals(problem)
        bounds = zip(problem.seq_ptr[:-1].tolist(), problem.seq_ptr[1:].tolist())
        if output == "array":
            return [node[a:b] for a, b in bounds]
        labels = self.classes_.tolist()
        rows = [dict(zip(labels, row)) for row in node.tolist()]
        return [rows[a:b] for a, b in bounds]

    def log_probability(self, X, y=None, *, allowed=None):
        """log p(y | x) of given label sequences, or of the predicted ones.

        Computed in normalized log space: finite and accurate for long
        sequences and large weights.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        y : list of sequences of labels, default=None
            The label sequences to score; ``None`` scores those of
            :meth:`predict`.
        allowed : list, default=None
            Labels each token may take, as in :meth:`predict`.

        Returns
        -------
        log_p : ndarray of shape (n_sequences,)
            ``log p(y_i | x_i)``, conditional on ``transition_constraints``
            and ``allowed`` when they are set (-inf for a sequence they
            forbid).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "Smith"}, {"w": "runs"}],
        ...      [{"w": "Mary"}, {"w": "sleeps"}], [{"w": "Smith"}, {"w": "runs"}]]
        >>> y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, transition_constraints="IOB2").fit(X, y)
        >>> np.exp(crf.log_probability(X, y)).round(3)
        array([0.833, 0.943, 0.956])
        >>> crf.log_probability([[{"w": "Mary"}, {"w": "runs"}]], [["I-PER", "O"]])
        array([-inf])
        """
        problem = self._problem(X, allowed)
        seq_ptr = problem.seq_ptr
        if y is None:
            codes = self._decode(problem)
        else:
            codes = _encode_known_labels(y, self.classes_.tolist(), seq_ptr)
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            fb = _engine.log_forward_backward(problem, n_threads)
            return _engine.span_log_probs(
                problem, fb, seq_ptr[:-1], np.diff(seq_ptr), seq_ptr[:-1], codes, n_threads
            )

    def log_partition(self, X, *, allowed=None):
        """log Z of each sequence: the log-sum-exp of the scores of its label
        sequences (of the allowed ones under ``transition_constraints`` and
        ``allowed``).

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        allowed : list, default=None
            Labels each token may take, as in :meth:`predict`.

        Returns
        -------
        log_z : ndarray of shape (n_sequences,)
            log Z; 0 for an empty sequence.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "Smith"}, {"w": "runs"}],
        ...      [{"w": "Mary"}, {"w": "sleeps"}], [{"w": "Smith"}, {"w": "runs"}]]
        >>> y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, transition_constraints="IOB2").fit(X, y)
        >>> forced = crf.log_partition(X, allowed=y)  # only y left: log Z = score(y)
        >>> bool(((crf.log_partition(X) - forced) > 0).all())
        True
        """
        problem = self._problem(X, allowed)
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            return _engine.log_forward_backward(problem, n_threads).log_z

    def predict_entities(self, X, *, allowed=None):
        """The entities of the predicted labels, with their probabilities.

        The labels are those of :meth:`predict`; they are read into entities
        with seqeval's strict mode for the scheme of
        ``transition_constraints`` when it is a scheme name (BMES included),
        and with the default, conlleval, rules otherwise (see
        :func:`sklearn_crf.metrics.get_entities`). Labels must be strings.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        allowed : list, default=None
            Labels each token may take, as in :meth:`predict`.

        Returns
        -------
        entities : list of lists of tuple
            ``entities[i]`` lists ``(type, start, end, probability)`` for the
            entities of sequence ``i`` in order, tokens ``start`` to ``end -
            1``; ``probability`` is the exact marginal probability that these
            tokens carry these labels, ``p(y[start:end] = labels | x)``
            (conditional on the constraints when set), whatever the labels
            outside the span.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "John"}, {"w": "Smith"}, {"w": "runs"}],
        ...      [{"w": "Mary"}, {"w": "sleeps"}], [{"w": "Smith"}, {"w": "runs"}]]
        >>> y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"]]
        >>> crf = CRFTagger(c2=0.01, transition_constraints="IOB2").fit(X, y)
        >>> [(t, a, b, round(p, 3)) for t, a, b, p in
        ...  crf.predict_entities([[{"w": "Mary"}, {"w": "Smith"}, {"w": "runs"}]])[0]]
        [('PER', 0, 2, 0.838)]
        """
        problem = self._problem(X, allowed)
        if not all(isinstance(label, str) for label in self.classes_.tolist()):
            raise TypeError(
                "predict_entities needs string labels such as 'B-PER' and 'O'; "
                f"this tagger's labels are {self.classes_.tolist()}"
            )
        codes = self._decode(problem)
        sequences = self._labels(codes, problem.seq_ptr)
        spans = _entities.read_spans(sequences, [self._scheme()] * len(sequences))
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            fb = _engine.log_forward_backward(problem, n_threads)
            prob = _entities.span_probabilities(problem, fb, spans, codes, n_threads)
        return _entities.by_sequence(len(sequences), spans, prob)

    def _scores(self, corpus):
        """The state scores (n_tokens, n_labels) of an encoded corpus, straight
        from ``coef_`` (the cost does not grow with the model's size)."""
        _note_compilation()
        layout = self.layout_
        scores = _engine.state_scores_sparse(
            self.coef_, layout.attr_ptr, layout.attr_label, corpus.tok_ptr,
            corpus.tok_attr, corpus.tok_val, layout.n_labels,
        )
        if layout.n_dense:
            scores += dense_scores(corpus.dense, layout.dense_matrix(self.coef_))
        return scores

    def _state_scores(self, X):
        """Vectorize X and return (state scores, sequence offsets)."""
        corpus = self._encode(X)
        return self._scores(corpus), corpus.seq_ptr

    def _best_paths(self, corpus, trans, n_threads):
        """Label codes of the best paths of an encoded corpus (or
        :class:`~sklearn_crf._features.encode_dicts.ScoringEntries`) without
        constraints (``trans``: the transition matrix), one kernel call per
        range of sequences on ``n_threads``: from the dense copy of the state
        weights when the corpus has at least as many entries as the model
        has state weights (:func:`_dense_state_weights`, whose check reads
        them all) and the copy is small enough, else from the parameter
        vector. The same codes either way."""
        _note_compilation()
        layout = self.layout_
        coef = self.coef_
        tok_attr = corpus.tok_attr
        if len(tok_attr) >= layout.n_state:
            w_attr = _dense_state_weights(layout, coef)
            if w_attr is not None:
                return _engine.unconstrained_best_paths_dense(
                    w_attr, corpus.tok_ptr, tok_attr, corpus.tok_val, trans, corpus.seq_ptr,
                    n_threads)
        return _engine.unconstrained_best_paths(
            coef, _sink_attr_ptr(layout), layout.attr_label, corpus.tok_ptr, tok_attr,
            corpus.tok_val, trans, corpus.seq_ptr, n_threads)

    def _sink_labels(self, X):
        """The best label sequences of X, a list of sequences of dict tokens
        or a featurizer's :class:`FeatureDicts`, without constraints, from
        its entries as they are
        (:meth:`SequenceVectorizer._scoring_entries`): one sentence in one
        call of :func:`~sklearn_crf._engine.viterbi.best_path_of_entries`, a
        batch through :meth:`_best_paths` with the items without an entry at
        an attribute without weights (one kernel call per range of
        sequences); no entry taken out, no zero split off. None when X takes
        the general route (another form, dense features, values other than 0
        and 1)."""
        if "coef_" not in self.__dict__:  # check_is_fitted costs more than a sentence
            check_is_fitted(self)
        layout = self.layout_
        if layout.n_dense:
            return None
        entries = self.vectorizer_._scoring_entries(X, layout.n_attributes)
        if entries is None:
            return None
        trans = _transitions(layout, self.coef_)
        if len(entries.seq_ptr) == 2:  # one sentence: one kernel call, nothing to prepare
            _note_compilation()
            return [self._label_list(_engine.best_path_of_entries(
                self.coef_, layout.attr_ptr, layout.attr_label, entries.tok_ptr,
                entries.tok_attr, trans))]
        with _n_threads(self.n_jobs, len(entries.tok_ptr) - 1) as n_threads:
            codes = self._best_paths(entries.sunk(layout.n_attributes), trans, n_threads)
        return self._labels(codes, entries.seq_ptr)

    def _problem(self, X, allowed):
        """:meth:`_problem_of` the encoding of X."""
        return self._problem_of(self._encode(X), allowed)

    def _problem_of(self, corpus, allowed):
        """The state scores and transitions of an encoded corpus with
        ``transition_constraints`` and ``allowed`` applied as -inf (a
        :class:`~sklearn_crf._engine.decoding.DecodingProblem`); a ValueError
        names the first sequence left without an allowed path."""
        classes = self.classes_.tolist()
        problem = _engine.apply_constraints(
            self._scores(corpus), _transitions(self.layout_, self.coef_), corpus.seq_ptr,
            _constraints.cached_constraints(self.transition_constraints, classes),
            _constraints.token_mask(allowed, classes, corpus.seq_ptr),
        )
        if problem.constrained:
            _engine.check_feasible(
                problem, "transition_constraints and allowed" if allowed is not None
                else "transition_constraints"
            )
        return problem

    def _scheme(self):
        """The scheme entities are read with: ``transition_constraints`` when it
        names one, else None (conlleval's rules)."""
        scheme = self.transition_constraints
        return scheme if isinstance(scheme, str) else None

    def _node_marginals(self, problem):
        """Node marginals (n_tokens, n_labels) of a decoding problem."""
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            return node_marginals(problem, n_threads)

    def _decode(self, problem):
        """Label codes (n_tokens,) chosen by ``decoder``."""
        if self.decoder == "posterior":
            problem = _engine.posterior_problem(problem, self._node_marginals(problem))
        elif self.decoder != "viterbi":
            raise ValueError(f"decoder must be 'viterbi' or 'posterior', got {self.decoder!r}")
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            return best_path_labels(problem, n_threads)

    def _label_list(self, codes):
        """The labels of label codes, as a list."""
        return list(map(self.classes_.tolist().__getitem__, codes.tolist()))

    def _labels(self, codes, seq_ptr):
        """Label sequences of the codes."""
        flat = self._label_list(codes)
        if len(seq_ptr) == 2:  # one sequence
            return [flat]
        return [flat[a:b] for a, b in zip(seq_ptr[:-1].tolist(), seq_ptr[1:].tolist())]

    def score(self, X, y, sample_weight=None):
        """Token accuracy of :meth:`predict` on X against y.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts.
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
    def n_dense_features_(self):
        """Number of dense features per token (0 without them); from ``layout_``."""
        if "coef_" not in self.__dict__:
            check_is_fitted(self)
        return self.layout_.n_dense

    @property
    def dense_coef_(self):
        """(n_dense, n_labels) view of the dense weights in ``coef_`` (``n_dense`` is ``n_dense_features_``)."""
        if "coef_" not in self.__dict__:
            check_is_fitted(self)
        return self.layout_.dense_matrix(self.coef_)

    @property
    def attributes_(self):
        """Names of the attributes with a non-zero weight for some label.

        Computed from ``coef_`` on each access, in the order of
        ``vectorizer_.feature_names_``; sklearn-crfsuite's ``attributes_``.
        """
        return _inspection.attributes(self._fitted_model())

    @property
    def state_features_(self):
        """``{(attribute, label): weight}`` of the non-zero state weights.

        Computed from ``coef_`` on each access; sklearn-crfsuite's
        ``state_features_``. Pairs that are absent have weight 0.
        """
        return _inspection.state_features(self._fitted_model())

    @property
    def transition_features_(self):
        """``{(from_label, to_label): weight}`` of the non-zero transition weights.

        Computed from ``coef_`` on each access; sklearn-crfsuite's
        ``transition_features_``. Pairs that are absent have weight 0.
        """
        return _inspection.transition_features(self._fitted_model())

    def explain_prediction(self, X, y=None, *, allowed=None, top=None):
        """Explain label paths: each attribute's and transition's share of their scores.

        Per token, the contribution ``weight × value`` of each attribute (and
        dense feature) for the token's label and the weight of the incoming
        transition; they add up, to float rounding, to the path's score
        ``log p(y | x) + log Z(x)``. Per entity, the terms inside it and its
        probability.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            The sequences, in any form :meth:`fit` accepts, with the
            ``n_dense_features_`` of the fit.
        y : list of sequences of labels, default=None
            The label paths to explain; None explains those of :meth:`predict`
            (under ``allowed``). An unknown label or a wrong length raises a
            ValueError naming the sequence and token.
        allowed : list, default=None
            Labels each token may take, as in :meth:`predict`: it conditions
            the prediction, ``log_partition``, ``log_probability`` and the
            entity probabilities, not the scores and their terms.
        top : int, default=None
            Keep only the ``top`` largest terms of each token and entity (the
            others summed in ``other``, so totals stay exact).

        Returns
        -------
        explanations : list of SequenceExplanation
            One per sequence: ``labels``, ``tokens``, ``score``,
            ``log_partition``, ``log_probability``, ``entities`` (None when
            the labels are not strings); ``str()`` renders it,
            ``.to_records()`` lists its terms.

        Notes
        -----
        The score is that of the model without constraints: for a path that
        ``transition_constraints`` or ``allowed`` forbid, ``log_probability``
        is -inf while ``score`` is finite. Entities are read as
        :meth:`predict_entities` reads them (a given path that the
        constraints forbid with conlleval's rules); an entity's ``score``
        holds the terms of its tokens and the transitions between them, not
        the transition into it (its ``entering`` field). A hashing tagger
        names its attributes by slot, ``"<slot N>"``.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "Ana", "cap": True}, {"w": "runs"}],
        ...      [{"w": "The", "cap": True}, {"w": "end"}]]
        >>> y = [["B-PER", "O"], ["O", "O"]]
        >>> crf = CRFTagger(c2=0.1).fit(X, y)
        >>> ex = crf.explain_prediction([X[0]])[0]
        >>> ex.labels
        ['B-PER', 'O']
        >>> bool(abs(ex.score - (ex.log_probability + ex.log_partition)) < 1e-12)
        True
        """
        top = _explain.check_top(top, "top")
        corpus = self._encode(X)
        problem = self._problem_of(corpus, allowed)
        if y is None:
            codes = self._decode(problem)
        else:
            codes = _encode_known_labels(y, self.classes_.tolist(), problem.seq_ptr)
        with _n_threads(self.n_jobs, len(problem.scores)) as n_threads:
            return _explain.explain_paths(
                self._fitted_model(), corpus, problem, codes, given=y is not None,
                scheme=self._scheme(), top=top, n_threads=n_threads,
            )

    def compare_labels(self, x, t, a, b, *, y=None, allowed=None):
        """Why label ``a`` and not label ``b`` at token ``t`` of one sequence.

        The terms of the two paths' scores that differ when token ``t`` of a
        path (the predicted one, or ``y``) takes ``a`` or ``b``: the token's
        attribute contributions under either label and the transitions into
        and out of it.

        Parameters
        ----------
        x : sequence of dict, ndarray or (tokens, ndarray)
            One sequence, in any form :meth:`fit` accepts for a sequence.
        t : int
            The token, ``0 <= t < len(x)``.
        a, b : label
            The two labels compared; either may be the path's own label at ``t``.
        y : sequence of labels, default=None
            The path's labels; None is the predicted path (under ``allowed``).
        allowed : list, default=None
            Labels each token of ``x`` may take (one sequence's entry of
            ``allowed`` in :meth:`predict`): it conditions the prediction and
            the log-probabilities, not the scores.

        Returns
        -------
        comparison : LabelComparison
            The differing terms, ``difference = score_a - score_b``, and both
            paths' log-probabilities: ``difference == log_probability_a -
            log_probability_b`` when the constraints allow both paths.

        Examples
        --------
        >>> from sklearn_crf import CRFTagger
        >>> X = [[{"w": "Ana", "cap": True}, {"w": "runs"}],
        ...      [{"w": "The", "cap": True}, {"w": "end"}]]
        >>> y = [["B-PER", "O"], ["O", "O"]]
        >>> crf = CRFTagger(c2=0.1).fit(X, y)
        >>> cmp = crf.compare_labels(X[0], 0, "B-PER", "O")
        >>> bool(abs(cmp.difference - (cmp.log_probability_a - cmp.log_probability_b)) < 1e-9)
        True
        """
        if "coef_" not in self.__dict__:
            check_is_fitted(self)
        classes = self.classes_.tolist()
        n = sequence_length(x)
        if isinstance(t, bool) or not isinstance(t, Integral) or not 0 <= t < n:
            raise ValueError(f"t must be a token index of x, from 0 to {n - 1}, got {t!r}")
        t = int(t)
        for name, label in (("a", a), ("b", b)):
            if not _is_class(label, classes):
                raise ValueError(f"{name} is {label!r}, which is not one of the labels {classes}")
        if y is not None:
            if isinstance(y, (str, bytes)) or not hasattr(y, "__len__") or len(y) != n:
                raise ValueError(f"y must be a sequence of {n} labels, one per token of x")
            for k, label in enumerate(y):
                if not _is_class(label, classes):
                    raise ValueError(
                        f"y[{k}] is {label!r}, which is not one of the labels {classes}"
                    )
        corpus = self._encode([x])
        problem = self._problem_of(corpus, None if allowed is None else [allowed])
        path = self._labels(self._decode(problem), problem.seq_ptr)[0] if y is None else y
        labels_a, labels_b = list(path), list(path)
        labels_a[t], labels_b[t] = a, b
        codes = _encode_known_labels([labels_a, labels_b], classes, np.array([0, n, 2 * n]))
        with _n_threads(self.n_jobs, 2 * n) as n_threads:
            return _explain.compare_paths(self._fitted_model(), corpus, problem, t, labels_a,
                                          labels_b, codes, n_threads=n_threads)

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
        return _inspection.top_state_features(self._fitted_model(), int(n))

    @classmethod
    def from_weights(cls, weights, *, n_iter=0, loss=float("nan"), loss_curve=None, **params):
        """A fitted tagger from its weights by name (no training).

        The one constructor of a fitted :class:`CRFTagger` besides
        :meth:`fit`: model files are read through it.

        Parameters
        ----------
        weights : TaggerWeights
            Labels, attribute names, the (attribute, label) and (label,
            label) pairs that carry a weight, and the weights (checked by
            the caller: indices in range, pairs distinct); the dense
            weights ``dense_coef`` when the model takes dense features.
        n_iter : int, default=0
            ``n_iter_`` of the result.
        loss : float, default=nan
            ``loss_`` of the result.
        loss_curve : array-like of shape (n_iter,), default=None
            ``loss_curve_`` of the result (None: empty).
        **params
            Constructor parameters of the tagger.

        Returns
        -------
        crf : CRFTagger
            The fitted tagger, with ``layout_`` in canonical order
            (attribute-major, labels increasing; transitions by from, then
            to label) and a vocabulary of exactly ``weights.attributes``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_crf import CRFTagger
        >>> from sklearn_crf._model.weights import TaggerWeights
        >>> weights = TaggerWeights(
        ...     classes=["N", "V"], attributes=["w:dog", "w:runs"],
        ...     state_attr=np.array([0, 1]), state_label=np.array([0, 1]),
        ...     trans_from=np.array([0]), trans_to=np.array([1]),
        ...     coef=np.array([2.0, 2.0, 0.5]))
        >>> crf = CRFTagger.from_weights(weights, c2=0.1)
        >>> crf.predict([[{"w:dog": 1}, {"w:runs": 1}]])
        [['N', 'V']]
        """
        crf = cls(**params)
        classes, attributes = weights.classes, weights.attributes
        L, A = len(classes), len(attributes)
        coef = np.asarray(weights.coef, dtype=np.float64)
        dense_coef = np.asarray(weights.dense_coef, dtype=np.float64)
        n_dense = dense_coef.shape[0] if dense_coef.size else 0
        if n_dense and dense_coef.shape != (n_dense, L):
            raise ValueError(
                f"dense_coef must have shape (n_dense, {L}) for {L} labels, got "
                f"{dense_coef.shape}"
            )
        S = len(weights.state_attr)
        layout, so, to = layout_from_pairs(
            weights.state_attr, weights.state_label, weights.trans_from, weights.trans_to,
            A, L, n_dense,
        )
        # the vocabulary, through the public API: one token whose numeric
        # features are the attribute names, so each name becomes attribute i
        # (with a row of dense features when the model has them)
        token = [dict.fromkeys(attributes, 1.0)]
        vectorizer = SequenceVectorizer().fit(
            [(token, np.zeros((1, n_dense)))] if n_dense else [token]
        )
        crf.classes_ = label_array(list(classes))
        crf.vectorizer_ = vectorizer
        crf.layout_ = layout
        crf.coef_ = np.concatenate([coef[:S][so], coef[S:][to], dense_coef.ravel()])
        crf.n_iter_ = int(n_iter)
        crf.loss_ = float(loss)
        crf.loss_curve_ = (
            np.zeros(0) if loss_curve is None else np.asarray(loss_curve, dtype=np.float64)
        )
        crf._sklearn_crf_version = __version__
        return crf

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


#: per coef_ array: its (L, L) transition matrix under its layout
_TRANSITIONS = DerivedValues()


def _transitions(layout, coef):
    """The dense (L, L) transition matrix of ``coef`` under ``layout``, kept
    between calls: the decoders' one model-derived array.

    Kept per ``coef`` object (:class:`~sklearn_crf._derived.DerivedValues`;
    a fit, :meth:`CRFTagger.from_weights` or an assignment to ``coef_`` gives
    a new one; the entry goes when the array does) and checked against the
    transition weights themselves at every call (L² bytes), so an in-place
    change of ``coef_`` is seen too. Nothing is stored on the estimator. The
    matrix is shared: the decoders never write it.
    """
    weights = coef[layout.n_state:layout.dense_start].tobytes()
    return _TRANSITIONS.kept(coef, lambda: layout.transition_matrix(coef), (layout,),
                             (weights,))


#: the largest dense (attributes x labels) copy of the state weights kept for
#: decoding (:func:`_dense_state_weights`), in bytes
DENSE_WEIGHTS_BYTES = 32 << 20

#: per coef_ array: the dense copy of its state weights under its layout
_DENSE_STATE_WEIGHTS = DerivedValues()


def _dense_state_weights(layout, coef):
    """The state weights of ``coef`` as a dense (n_attributes + 1, L) matrix,
    the last row (the sink attribute of :func:`_sink_attr_ptr`) zeros, kept
    between calls; None when it would take more than
    :data:`DENSE_WEIGHTS_BYTES`.

    A row per entry in the state scores, eight labels per vector
    instruction, instead of three lookups into the parameter lists. Kept per
    ``coef`` object (:class:`~sklearn_crf._derived.DerivedValues`) and checked
    against the state weights themselves at every call (their bytes), so an
    in-place change of ``coef_`` is seen too: a call that reads fewer
    entries than there are state weights reads the parameter vector instead
    (:meth:`CRFTagger._best_paths`).
    """
    n_rows = layout.n_attributes + 1
    if n_rows * layout.n_labels * 8 > DENSE_WEIGHTS_BYTES:
        return None

    def derive():
        w_attr = np.zeros((n_rows, layout.n_labels))
        layout.attribute_matrix(coef, out=w_attr[:-1])
        return w_attr

    weights = coef[:layout.n_state].tobytes()
    return _DENSE_STATE_WEIGHTS.kept(coef, derive, (layout,), (weights,))


#: per layout: its attr_ptr with one more attribute without weights
_SINK_ATTR_PTRS = DerivedValues()


def _sink_attr_ptr(layout):
    """``layout.attr_ptr`` and one more attribute, ``n_attributes``, without
    state weights: the attribute the items of a sentence that give no entry
    point at (:meth:`CRFTagger._sink_labels`). Kept per layout
    (:class:`~sklearn_crf._derived.DerivedValues`); nothing is stored on the
    estimator."""
    attr_ptr = layout.attr_ptr
    return _SINK_ATTR_PTRS.kept(
        layout, lambda: np.append(attr_ptr, attr_ptr[-1:]).astype(np.int64, copy=False),
        (attr_ptr,))


def _is_class(label, classes):
    """Whether ``label`` is one of ``classes`` (False for an unhashable one)."""
    try:
        return label in set(classes)
    except TypeError:
        return False


def _encode_known_labels(y, classes, seq_ptr):
    """Label codes (n_tokens,) of y; errors name the sequence and token."""
    n_seq = len(seq_ptr) - 1
    if isinstance(y, (str, bytes)) or not hasattr(y, "__len__") or len(y) != n_seq:
        raise ValueError(f"y must be a list of {n_seq} label sequences, one per sequence of X")
    index = {label: i for i, label in enumerate(classes)}
    codes = np.empty(int(seq_ptr[-1]), dtype=np.int32)
    for s, seq in enumerate(y):
        n = int(seq_ptr[s + 1] - seq_ptr[s])
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__") or len(seq) != n:
            raise ValueError(f"y[{s}] must be a sequence of {n} labels, one per token")
        for t, label in enumerate(seq):
            try:
                codes[seq_ptr[s] + t] = index[label]
            except (KeyError, TypeError):
                raise ValueError(
                    f"y[{s}][{t}] is {label!r}, which is not one of the labels {classes}"
                ) from None
    return codes


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


def __getattr__(name):
    """Names that moved out of this module, for pickles written before
    (:data:`sklearn_crf._moved.MOVED_NAMES`)."""
    from ._moved import moved_attribute

    return moved_attribute(__name__, name)
