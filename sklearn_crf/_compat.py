"""CRF: sklearn-crfsuite's ``CRF`` estimator, as a thin layer over CRFTagger.

``sklearn_crf.CRF`` takes sklearn-crfsuite's constructor parameters (names,
order, defaults), exposes its fitted attributes (``None`` before fit) and
methods, and reads and writes CRFsuite model files through ``model_filename``.
Training and prediction are :class:`~sklearn_crf.CRFTagger`'s: each
sklearn-crfsuite parameter is translated into the CRFTagger parameter that does
the same thing (see :data:`ALGORITHM_PARAMETERS`), and a parameter that
CRFTagger cannot honour raises a ``ValueError`` in :meth:`CRF.fit` rather than
being ignored.
"""

import logging
import math
import os
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils._param_validation import Interval, Options, StrOptions

from ._training import optimize as _optimize
from ._training.solvers import SOLVERS, reads
from ._tagger import CRFTagger

logger = logging.getLogger("sklearn_crf")

__all__ = ["CRF", "ModelFile", "Tagger", "TrainingLog"]

#: the training algorithms of sklearn-crfsuite (CRFsuite) and CRFTagger's solver
#: of each, from the solver table
ALGORITHMS = {
    spec.crfsuite_algorithm: name for name, spec in SOLVERS.items() if spec.crfsuite_algorithm
}

#: parameters every algorithm reads: sklearn-crfsuite name -> CRFTagger name
COMMON_PARAMETERS = {
    "min_freq": "min_freq",
    "all_possible_states": "all_possible_states",
    "all_possible_transitions": "all_possible_transitions",
    "max_iterations": "max_iter",
}

#: the algorithm-specific parameters of each algorithm (CRFsuite's parameter
#: sets): sklearn-crfsuite name -> CRFTagger name, or None where CRFTagger has
#: a fixed behaviour that :func:`_check_fixed` checks instead; from the solver table
ALGORITHM_PARAMETERS = {
    algorithm: SOLVERS[solver].crfsuite_params for algorithm, solver in ALGORITHMS.items()
}

#: CRFsuite's lbfgs runs without an iteration limit by default (INT_MAX); the
#: ``delta`` test stops it. This stands for "unlimited".
UNLIMITED_ITERATIONS = 10**7

_BOOL = ["boolean", Options(Integral, {0, 1})]


@dataclass
class TrainingLog:
    """What sklearn-crfsuite's ``training_log_`` holds, from a CRFTagger fit.

    sklearn-crfsuite parses CRFsuite's training log into python-crfsuite's
    ``TrainLogParser``; this has the attributes read from it.

    Attributes
    ----------
    iterations : list of dict
        One dict per iteration (epoch for the online algorithms), in order:
        ``"num"`` (1, 2, ...), ``"loss"`` (CRFTagger's ``loss_curve_``: for
        ``"lbfgs"`` and ``"l2sgd"`` the objective, for the others CRFsuite's
        per-epoch loss) and ``"scores"`` (a dict, empty unless the
        development set was evaluated at that iteration). The last iteration
        also has ``"feature_norm"`` (the L2 norm of the weights) and
        ``"active_features"`` (the number of non-zero weights). With a
        development set (``fit(X, y, X_dev, y_dev)``), the last iteration has
        CRFsuite's holdout evaluation of the fitted model: ``"scores"`` maps
        each label to a :class:`~sklearn_crf.metrics.LabelScore`, and ``"avg_precision"``,
        ``"avg_recall"``, ``"avg_f1"`` (CRFsuite's macro averages: the sum
        over labels divided by the number of labels, labels absent from the
        development set counting 0), ``"item_accuracy"`` and
        ``"instance_accuracy"`` (:class:`~fractions.Fraction`) and their
        ``"_float"`` values. The values are exact, not rounded to CRFsuite's
        printed 4 or 6 decimals.
    featgen_num_features : int
        Number of features (weights) of the model.
    training_seconds : float
        Wall-clock time of the training.
    featgen_seconds, storing_seconds : float or None
        Time to generate the features (None: it is part of the training) and
        to write ``model_filename`` (None when no file was written).
    """

    iterations: list = field(default_factory=list)
    featgen_num_features: int = None
    training_seconds: float = None
    featgen_seconds: float = None
    storing_seconds: float = None

    @property
    def last_iteration(self):
        """The last dict of :attr:`iterations`, or None when there is none."""
        return self.iterations[-1] if self.iterations else None


class ModelFile(NamedTuple):
    """Where a :class:`CRF`'s CRFsuite model file is (sklearn-crfsuite's ``modelfile``).

    ``name`` is the path (None when there is none), ``auto`` whether it is a
    temporary file chosen by the estimator (``keep_tempfiles=True``), and
    ``keep_tempfiles`` the parameter.
    """

    name: str
    auto: bool
    keep_tempfiles: bool


class Tagger:
    """python-crfsuite's ``Tagger`` interface over a fitted CRFTagger.

    What sklearn-crfsuite's ``crf.tagger_`` offers: :meth:`labels`,
    :meth:`set` a sequence, then :meth:`tag`, :meth:`marginal` and
    :meth:`probability` on it. Unlike python-crfsuite's, it holds no file:
    it pickles with the estimator.

    Parameters
    ----------
    crf : CRFTagger
        A fitted tagger.

    Examples
    --------
    >>> from sklearn_crf import CRF
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> tagger = CRF(c2=0.01).fit(X, y).tagger_
    >>> tagger.labels()
    ['O', 'PER']
    >>> tagger.tag([{"w": "Mary"}, {"w": "runs"}])
    ['PER', 'O']
    >>> round(tagger.marginal("PER", 0), 3), round(tagger.probability(["PER", "O"]), 3)
    (0.981, 0.967)
    """

    def __init__(self, crf):
        self._crf = crf
        self._labels = crf.classes_.tolist()
        self._index = {label: i for i, label in enumerate(self._labels)}
        self._xseq = []
        self._node = np.zeros((0, len(self._labels)))
        self._path = []

    def labels(self):
        """The labels of the model.

        Returns
        -------
        labels : list of str
            In ``classes_`` order (sorted).
        """
        return list(self._labels)

    def set(self, xseq):
        """Make ``xseq`` the current sequence of :meth:`tag`, :meth:`marginal`
        and :meth:`probability`.

        Parameters
        ----------
        xseq : list of dict
            One sequence of feature dicts.
        """
        xseq = list(xseq)
        self._path = self._crf.predict([xseq])[0] if xseq else []
        self._node = self._crf.predict_marginals([xseq], output="array")[0]
        self._xseq = xseq

    def tag(self, xseq=None):
        """The most likely labels (Viterbi) of ``xseq``, or of the current sequence.

        Parameters
        ----------
        xseq : list of dict, default=None
            When given, it becomes the current sequence (see :meth:`set`).

        Returns
        -------
        labels : list of str
            One label per token (empty before any :meth:`set`).
        """
        if xseq is not None:
            self.set(xseq)
        return list(self._path)

    def _check_position(self, pos):
        n = len(self._xseq)
        if isinstance(pos, bool) or not isinstance(pos, Integral) or not 0 <= pos < n:
            raise ValueError(f"the position {pos!r} is out of range of the {n} tokens of the sequence")

    def _label_index(self, label):
        try:
            return self._index[label]
        except (KeyError, TypeError):
            raise ValueError(f"{label!r} is not a label of the model (labels: {self._labels})") from None

    def marginal(self, y, pos):
        """Probability of label ``y`` at position ``pos`` of the current sequence.

        Parameters
        ----------
        y : str
            A label of the model.
        pos : int
            A token position, ``0 <= pos < len(sequence)``.

        Returns
        -------
        probability : float
        """
        j = self._label_index(y)
        self._check_position(pos)
        return float(self._node[pos, j])

    def probability(self, yseq):
        """Probability of the label sequence ``yseq`` for the current sequence.

        Parameters
        ----------
        yseq : list of str
            One label per token of the current sequence.

        Returns
        -------
        probability : float
        """
        n = len(self._xseq)
        if len(yseq) != n:
            raise ValueError(
                f"the numbers of items and labels differ: the sequence has {n} "
                f"tokens, yseq {len(yseq)} labels"
            )
        if n == 0:
            return 1.0
        for label in yseq:
            self._label_index(label)  # a ValueError for an unknown label
        return math.exp(float(self._crf.log_probability([self._xseq], [list(yseq)])[0]))


class CRF(BaseEstimator):
    """sklearn-crfsuite's ``CRF``, trained and run by :class:`CRFTagger`.

    A drop-in replacement for ``sklearn_crfsuite.CRF``: the same constructor
    (every parameter, in the same order, with the same defaults), the same
    fitted attributes (``None`` before fit), the same methods, and the same
    ``model_filename`` behaviour with CRFsuite's model file format; only the
    import changes. Each parameter is translated into the
    :class:`CRFTagger` parameter that does the same thing (the README's
    "Migrating from sklearn-crfsuite" table lists them); a parameter that
    CRFTagger cannot honour, or that the algorithm does not use (CRFsuite's
    "Parameter not found"), raises a ``ValueError`` in :meth:`fit`.

    Parameters
    ----------
    algorithm : {"lbfgs", "l2sgd", "ap", "pa", "arow"}, default=None
        The training algorithm; None is ``"lbfgs"``. CRFTagger's ``solver``.
    min_freq : float, default=None
        Keep a feature only when its frequency in the training data is at
        least ``min_freq`` (None: 0). CRFTagger's ``min_freq``.
    all_possible_states : bool, default=None
        A weight for every (attribute, label) pair (None: False).
    all_possible_transitions : bool, default=None
        A weight for every label transition (None: False).
    c1 : float, default=None
        L1 coefficient (``"lbfgs"``; None: 0).
    c2 : float, default=None
        L2 coefficient (``"lbfgs"``, ``"l2sgd"``; None: 1).
    max_iterations : int, default=None
        Maximum number of iterations (epochs for the online algorithms).
        None is CRFsuite's default: unlimited for ``"lbfgs"`` (its ``delta``
        test stops it), 1000 for ``"l2sgd"``, 100 for the others.
        CRFTagger's ``max_iter``.
    num_memories : int, default=None
        ``"lbfgs"``: the L-BFGS history size; CRFTagger keeps 6 (CRFsuite's
        default), so only None and 6 are accepted.
    epsilon : float, default=None
        Stopping test of ``"lbfgs"`` (the gradient norm relative to the
        weights' norm; None: 1e-5), ``"ap"``, ``"pa"`` and ``"arow"`` (the
        loss per sequence; None: 0); CRFTagger's ``epsilon``.
    period : int, default=None
        Iterations over which the ``delta`` test measures the decrease:
        ``"l2sgd"`` (CRFTagger's ``period``), ``"lbfgs"`` (fixed at 10 in
        CRFTagger: only None and 10 are accepted).
    delta : float, default=None
        The relative decrease of the loss over ``period`` iterations below
        which training stops: ``"lbfgs"`` (CRFTagger's ``tol``; None is
        CRFsuite's 1e-5) and ``"l2sgd"`` (CRFTagger's ``delta``).
    linesearch : {"MoreThuente", "Backtracking", "StrongBacktracking"}, default=None
        ``"lbfgs"``: the line search. Without L1 CRFTagger runs scipy's
        L-BFGS-B, whose line search is More and Thuente's, so only None and
        ``"MoreThuente"`` are accepted; with ``c1 > 0`` CRFsuite always uses
        backtracking (OWL-QN) whatever this says, and so does CRFTagger.
    max_linesearch : int, default=None
        ``"lbfgs"``: the maximum number of line search trials; CRFTagger's is
        fixed (20 without L1, as CRFsuite's default; 40 with L1), so only None
        and that value are accepted.
    calibration_eta, calibration_rate, calibration_samples, calibration_candidates, calibration_max_trials : default=None
        ``"l2sgd"``: the learning-rate calibration; CRFTagger's parameters of
        the same names.
    pa_type, c, error_sensitive, averaging : default=None
        ``"pa"``: CRFTagger's parameters of the same names.
    variance, gamma : float, default=None
        ``"arow"``: CRFTagger's parameters of the same names.
    verbose : bool, default=False
        Log the progress of training (CRFTagger's ``verbose``) on the
        ``"sklearn_crf"`` logger, and the development-set evaluation; nothing
        is printed.
    model_filename : str or path-like, default=None
        A CRFsuite model file. :meth:`fit` writes the model there (CRFsuite's
        format, which python-crfsuite and sklearn-crfsuite read); a ``CRF``
        built on an existing file predicts without :meth:`fit`, loading the
        file on first use.
    keep_tempfiles : bool, default=False
        sklearn-crfsuite trains through a temporary model file and deletes it
        unless this is True. No temporary file is needed here: with True
        (and no ``model_filename``), :meth:`fit` writes the model to a new
        temporary ``.crfsuite`` file that is kept, named by
        ``modelfile.name``.
    trainer_cls : None
        python-crfsuite's trainer class; only None is accepted (training is
        CRFTagger's).

    Attributes
    ----------
    estimator_ : CRFTagger or None
        The fitted tagger (or the one loaded from ``model_filename``).
    tagger_ : Tagger or None
        python-crfsuite's ``Tagger`` interface: ``labels()``, ``set(xseq)``,
        ``tag(xseq)``, ``marginal(y, pos)``, ``probability(yseq)``.
    classes_ : list of str or None
        The labels, sorted.
    attributes_ : list of str or None
        The attributes with a non-zero weight, in order of first appearance.
    state_features_ : dict or None
        ``{(attribute, label): weight}`` of the non-zero state weights.
    transition_features_ : dict or None
        ``{(label_from, label_to): weight}`` of the non-zero transition weights.
    num_attributes_ : int or None
        ``len(attributes_)``.
    size_ : int or None
        Size in bytes of the model as a CRFsuite model file.
    training_log_ : TrainingLog or None
        The iterations of the last :meth:`fit` (None for a model loaded from
        ``model_filename``).
    modelfile : ModelFile
        The model file's path (``modelfile.name``), as in sklearn-crfsuite.

    See Also
    --------
    CRFTagger : The estimator that does the work, with scikit-learn naming.

    Notes
    -----
    :meth:`predict` and :meth:`predict_marginals` return lists (as CRFTagger
    and sklearn-crfsuite's own test suite expect), not NumPy object arrays.
    ``classes_``, ``tagger_.labels()`` and the keys of the marginal dicts are
    sorted, where sklearn-crfsuite lists labels in order of first appearance.
    The weights are exact (sklearn-crfsuite reads them from a 6-decimal text
    dump). Pickling keeps the fitted model inside the pickle, even with
    ``model_filename``.

    Examples
    --------
    >>> from sklearn_crf import CRF
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> crf = CRF(algorithm="lbfgs", c1=0.0, c2=0.01, max_iterations=100)
    >>> crf.classes_ is None
    True
    >>> crf.fit(X, y, X_dev=X, y_dev=y).predict([[{"w": "Mary"}, {"w": "runs"}]])
    [['PER', 'O']]
    >>> crf.classes_
    ['O', 'PER']
    >>> crf.training_log_.last_iteration["avg_f1"]
    1.0
    """

    _parameter_constraints: dict = {
        "algorithm": [StrOptions(set(ALGORITHMS)), None],
        "min_freq": [Interval(Real, 0, None, closed="left"), None],
        "all_possible_states": _BOOL + [None],
        "all_possible_transitions": _BOOL + [None],
        "c1": [Interval(Real, 0, None, closed="left"), None],
        "c2": [Interval(Real, 0, None, closed="left"), None],
        "max_iterations": [Interval(Integral, 1, None, closed="left"), None],
        "num_memories": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="left"), None],
        "period": [Interval(Integral, 1, None, closed="left"), None],
        "delta": [Interval(Real, 0, None, closed="left"), None],
        "linesearch": [StrOptions({"MoreThuente", "Backtracking", "StrongBacktracking"}), None],
        "max_linesearch": [Interval(Integral, 1, None, closed="left"), None],
        "calibration_eta": [Interval(Real, 0, None, closed="neither"), None],
        "calibration_rate": [Interval(Real, 1, None, closed="neither"), None],
        "calibration_samples": [Interval(Integral, 1, None, closed="left"), None],
        "calibration_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "calibration_max_trials": [Interval(Integral, 1, None, closed="left"), None],
        "pa_type": [Options(Integral, {0, 1, 2}), None],
        "c": [Interval(Real, 0, None, closed="neither"), None],
        "error_sensitive": _BOOL + [None],
        "averaging": _BOOL + [None],
        "variance": [Interval(Real, 0, None, closed="neither"), None],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "verbose": ["verbose"],
        "model_filename": [str, os.PathLike, None],
        "keep_tempfiles": _BOOL,
        "trainer_cls": "no_validation",
    }

    def __init__(
        self,
        algorithm=None,
        min_freq=None,
        all_possible_states=None,
        all_possible_transitions=None,
        c1=None,
        c2=None,
        max_iterations=None,
        num_memories=None,
        epsilon=None,
        period=None,
        delta=None,
        linesearch=None,
        max_linesearch=None,
        calibration_eta=None,
        calibration_rate=None,
        calibration_samples=None,
        calibration_candidates=None,
        calibration_max_trials=None,
        pa_type=None,
        c=None,
        error_sensitive=None,
        averaging=None,
        variance=None,
        gamma=None,
        verbose=False,
        model_filename=None,
        keep_tempfiles=False,
        trainer_cls=None,
    ):
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
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
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls

    # ------------------------------------------------------------------
    # parameters

    def tagger_params(self):
        """The :class:`CRFTagger` parameters that train as this ``CRF`` does.

        Returns
        -------
        params : dict
            Keyword arguments of :class:`CRFTagger`.

        Raises
        ------
        ValueError
            When a parameter is set that the algorithm does not use, or that
            CRFTagger cannot honour.

        Examples
        --------
        >>> from sklearn_crf import CRF
        >>> CRF(c1=0.1, c2=0.05, max_iterations=100, delta=1e-4).tagger_params()
        {'solver': 'lbfgs', 'max_iter': 100, 'c1': 0.1, 'c2': 0.05, 'tol': 0.0001}
        """
        self._validate_params()
        if self.trainer_cls is not None:
            raise ValueError(
                f"trainer_cls={self.trainer_cls!r} cannot be honoured: it selects "
                "python-crfsuite's Trainer class, and CRF trains with CRFTagger; "
                "leave trainer_cls at None (verbose=True logs the iterations)"
            )
        algorithm = "lbfgs" if self.algorithm is None else self.algorithm
        own = ALGORITHM_PARAMETERS[algorithm]
        others = sorted(
            name for specific in ALGORITHM_PARAMETERS.values() for name in specific
            if name not in own and getattr(self, name) is not None
        )
        if others:
            name = others[0]
            users = sorted(a for a, names in ALGORITHM_PARAMETERS.items() if name in names)
            raise ValueError(
                f"algorithm={algorithm!r} has no parameter {name} (set to "
                f"{getattr(self, name)!r}); it is a parameter of {users} "
                "(sklearn-crfsuite: 'Parameter not found')"
            )
        accepted = CRFTagger().get_params()
        solver = ALGORITHMS[algorithm]
        params = {"solver": solver}
        for name, target in COMMON_PARAMETERS.items():
            value = getattr(self, name)
            if value is not None:
                params[target] = bool(value) if name.startswith("all_") else value
        if algorithm == "lbfgs" and self.max_iterations is None:
            params["max_iter"] = UNLIMITED_ITERATIONS
        for name, target in own.items():
            value = getattr(self, name)
            if target is None:
                _check_fixed(name, value, self.c1 or 0.0)
                continue
            if target not in accepted or not reads(solver, target):
                if value is not None:
                    raise ValueError(
                        f"{name}={value!r} cannot be honoured: CRFTagger has no "
                        f"parameter {target!r}"
                    )
                continue
            if value is None:
                value = SOLVERS[solver].crfsuite_defaults.get(target)
            if value is not None:
                params[target] = bool(value) if name in ("error_sensitive", "averaging") else value
        if self.verbose:
            params["verbose"] = 1
        return params

    # ------------------------------------------------------------------
    # fit and predict

    @_fit_context(prefer_skip_nested_validation=False)  # CRFTagger validates its own
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train a model; with ``model_filename``, write it there.

        Parameters
        ----------
        X : list of lists of dicts
            Feature dicts of each token of each sequence (any token form
            CRFTagger accepts).
        y : list of lists of str
            Labels of each token.
        X_dev, y_dev : list, default=None
            A development set, given both or neither: the fitted model is
            evaluated on it as CRFsuite evaluates its holdout data, into
            ``training_log_.last_iteration``.

        Returns
        -------
        self : CRF
            The fitted estimator.

        Raises
        ------
        ValueError
            When only one of ``X_dev`` and ``y_dev`` is given, or for a
            parameter CRFTagger cannot honour (see :meth:`tagger_params`).
        """
        if (X_dev is None) != (y_dev is None):
            raise ValueError("Pass both X_dev and y_dev to use the holdout data")
        if X_dev is not None:
            X_dev, y_dev = list(X_dev), list(y_dev)
            if len(X_dev) != len(y_dev):
                raise ValueError(
                    f"X_dev and y_dev have different numbers of sequences: "
                    f"{len(X_dev)} and {len(y_dev)}"
                )
        params = self.tagger_params()
        tagger = CRFTagger(**params)
        start = time.perf_counter()
        with warnings.catch_warnings():
            # CRFsuite stops at max_iterations (or its algorithm's default) silently
            warnings.filterwarnings(
                "ignore", message=r".*stopped after max_iter=", category=ConvergenceWarning
            )
            tagger.fit(X if isinstance(X, (list, tuple)) else list(X),
                       y if isinstance(y, (list, tuple)) else list(y))
        log = _training_log(tagger, time.perf_counter() - start)
        if X_dev is not None:
            from .metrics import crfsuite_holdout_report

            evaluation = crfsuite_holdout_report(
                y_dev, tagger.predict(X_dev), tagger.classes_.tolist(), output_dict=True
            )
            log.iterations[-1].update(evaluation)
            if self.verbose:
                _log_evaluation(evaluation)
        path, auto = self._model_path()
        if path is not None:
            start = time.perf_counter()
            from ._io.crfsuite import save_crfsuite  # on use: keeps the import light
            save_crfsuite(tagger, path)
            log.storing_seconds = time.perf_counter() - start
        self._model = tagger
        self._model_source = None
        self._tagger = Tagger(tagger)
        self._training_log = log
        self._modelfile = ModelFile(path, auto, bool(self.keep_tempfiles))
        return self

    def _model_path(self):
        """(path to write the model to or None, whether it is a temporary file)."""
        if self.model_filename is not None:
            return os.fspath(self.model_filename), False
        if self.keep_tempfiles:
            fd, path = tempfile.mkstemp(suffix=".crfsuite", prefix="model")
            os.close(fd)
            return path, True
        return None, False

    def predict(self, X):
        """Most likely label sequence of each sequence.

        Parameters
        ----------
        X : list of lists of dicts
            Feature dicts.

        Returns
        -------
        y : list of lists of str
            The predicted labels.
        """
        return self._fitted().predict(X)

    def predict_single(self, xseq):
        """Most likely labels of one sequence.

        Parameters
        ----------
        xseq : list of dicts
            Feature dicts of one sequence.

        Returns
        -------
        y : list of str
            The predicted labels.
        """
        return self._fitted().predict([xseq])[0]

    def predict_marginals(self, X):
        """Probability of each label at each token.

        Parameters
        ----------
        X : list of lists of dicts
            Feature dicts.

        Returns
        -------
        marginals : list of lists of dicts
            ``marginals[i][t][label]``, for every label.
        """
        return self._fitted().predict_marginals(X)

    def predict_marginals_single(self, xseq):
        """Probability of each label at each token of one sequence.

        Parameters
        ----------
        xseq : list of dicts
            Feature dicts of one sequence.

        Returns
        -------
        marginals : list of dicts
            ``marginals[t][label]``, for every label.
        """
        return self._fitted().predict_marginals([xseq])[0]

    def score(self, X, y, sample_weight=None):
        """Token accuracy of :meth:`predict` against y.

        Parameters
        ----------
        X : list of lists of dicts
            Feature dicts.
        y : list of lists of str
            The true labels.
        sample_weight : array-like of shape (n_sequences,), default=None
            Weight of each sequence.

        Returns
        -------
        score : float
            The fraction of tokens labelled correctly (other metrics are in
            :mod:`sklearn_crf.metrics`).
        """
        return self._fitted().score(X, y, sample_weight=sample_weight)

    # ------------------------------------------------------------------
    # the fitted model, loaded from model_filename when not fitted

    def _current(self):
        """The fitted or loaded CRFTagger, or None when there is none.

        A ``CRF`` that was not fitted but has a ``model_filename`` loads that
        file on first use (as sklearn-crfsuite opens it on first use) and
        keeps it.
        """
        model = self.__dict__.get("_model")
        if model is not None:
            source = self.__dict__.get("_model_source")
            if source is None or source == self._filename():
                return model
        path = self._filename()
        if path is None:
            return None
        from ._io.crfsuite import load_crfsuite  # on use: keeps the import light
        model = load_crfsuite(path)
        self._model = model
        self._model_source = path
        self._tagger = Tagger(model)
        self._training_log = None
        self._modelfile = ModelFile(path, False, bool(self.keep_tempfiles))
        return model

    def _filename(self):
        return None if self.model_filename is None else os.fspath(self.model_filename)

    def _fitted(self):
        model = self._current()
        if model is None:
            raise NotFittedError(
                "This CRF instance is not fitted yet and has no model_filename: "
                "call 'fit' first"
            )
        return model

    def __sklearn_is_fitted__(self):
        if self.__dict__.get("_model") is not None:
            return True
        path = self._filename()
        return path is not None and os.path.isfile(path)

    @property
    def estimator_(self):
        """The fitted :class:`CRFTagger` (None before fit)."""
        return self._current()

    @property
    def tagger_(self):
        """python-crfsuite's ``Tagger`` interface to the model (None before fit)."""
        return None if self._current() is None else self._tagger

    @property
    def training_log_(self):
        """The :class:`TrainingLog` of the last fit (None before fit)."""
        self._current()
        return self.__dict__.get("_training_log")

    @property
    def modelfile(self):
        """The model file (:class:`ModelFile`); ``modelfile.name`` is its path."""
        if self._current() is None:
            return ModelFile(None, bool(self.keep_tempfiles), bool(self.keep_tempfiles))
        return self._modelfile

    @property
    def classes_(self):
        """The labels, sorted (None before fit)."""
        model = self._current()
        return None if model is None else model.classes_.tolist()

    @property
    def attributes_(self):
        """The attributes with a non-zero weight (None before fit)."""
        model = self._current()
        return None if model is None else model.attributes_

    @property
    def num_attributes_(self):
        """Number of attributes with a non-zero weight (None before fit)."""
        model = self._current()
        return None if model is None else len(model.attributes_)

    @property
    def state_features_(self):
        """``{(attribute, label): weight}`` of the non-zero state weights (None before fit)."""
        model = self._current()
        return None if model is None else model.state_features_

    @property
    def transition_features_(self):
        """``{(label_from, label_to): weight}`` of the non-zero transition weights (None before fit)."""
        model = self._current()
        return None if model is None else model.transition_features_

    @property
    def size_(self):
        """Size in bytes of the model as a CRFsuite model file (None before fit)."""
        model = self._current()
        if model is None:
            return None
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.crfsuite")
            from ._io.crfsuite import save_crfsuite  # on use: keeps the import light
            save_crfsuite(model, path)
            return os.path.getsize(path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        tags.target_tags.required = True
        tags.target_tags.two_d_labels = False
        tags.non_deterministic = False
        return tags


def _check_fixed(name, value, c1):
    """ValueError when an lbfgs parameter asks for something CRFTagger does not do."""
    if value is None:
        return
    fixed = SOLVERS["lbfgs"].crfsuite_fixed
    if name == "num_memories":
        ok, does = value == fixed[name], f"keeps {fixed[name]} updates"
    elif name == "period":
        ok, does = value == fixed[name], f"measures the decrease over {fixed[name]} iterations"
    elif name == "linesearch":
        # with L1, CRFsuite (and CRFTagger's OWL-QN) always backtracks
        ok, does = value == "MoreThuente" or c1 > 0, "uses scipy's L-BFGS-B, whose line search is More-Thuente's"
    else:  # max_linesearch
        fixed = _optimize.MAX_LINESEARCH if c1 > 0 else _LBFGSB_MAX_LINESEARCH
        ok, does = value == fixed, f"tries at most {fixed} steps in its line search with c1={c1}"
    if not ok:
        raise ValueError(
            f"{name}={value!r} cannot be honoured: CRFTagger {does}; leave "
            f"{name} at None"
        )


#: scipy's L-BFGS-B default ``maxls`` (CRFTagger does not change it)
_LBFGSB_MAX_LINESEARCH = 20


def _training_log(tagger, seconds):
    """A :class:`TrainingLog` of a fitted CRFTagger."""
    losses = np.asarray(tagger.loss_curve_, dtype=np.float64).tolist()
    iterations = [{"num": k + 1, "scores": {}, "loss": loss} for k, loss in enumerate(losses)]
    if iterations:
        coef = tagger.coef_
        iterations[-1]["feature_norm"] = float(np.linalg.norm(coef))
        iterations[-1]["active_features"] = int(np.count_nonzero(coef))
    return TrainingLog(
        iterations=iterations,
        featgen_num_features=int(tagger.layout_.n_params),
        training_seconds=seconds,
    )


def _log_evaluation(evaluation):
    logger.info(
        "development set: macro precision %.3f recall %.3f F1 %.3f, item accuracy "
        "%.3f, instance accuracy %.3f",
        evaluation["avg_precision"], evaluation["avg_recall"], evaluation["avg_f1"],
        evaluation["item_accuracy_float"], evaluation["instance_accuracy_float"],
    )
    for label, s in evaluation["scores"].items():
        if s.precision is not None:
            logger.info(
                "  %s: precision %.3f recall %.3f F1 %.3f support %d",
                label, s.precision, s.recall, s.f1, s.ref,
            )
