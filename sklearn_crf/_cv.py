"""CRFTaggerCV: a CRF tagger whose ``c1`` and ``c2`` are chosen by
cross-validation along a warm-started regularization path."""

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from ._engine.threads import n_threads as _n_threads
from ._features.validation import check_sequence_weight, encode_labels
from ._tagger import CRFTagger
from ._training.distributed import ShardedCorpus
from ._training.fit import (
    check_constraint_labels,
    encode_training,
    solve,
    training_problem,
)
from ._training.optimize import progress_logging, warm_step_scale
from ._training.path import fold_data, path_steps
from ._training.solvers import SOLVERS, ObjectiveCache, check_solver_params
from ._training.warm_start import warm_start_weights

#: the parameters of CRFTagger that CRFTaggerCV does not take, and why
NOT_TAKEN = {
    "c1": "the grid c1s replaces it",
    "c2": "the grid c2s replaces it",
    "warm_start": "every fit of the path but the first starts from a neighbour's solution",
    "early_stopping": "each fit runs the loss stopping rule (tol) to its end",
    "validation_fraction": "no early stopping",
    "n_iter_no_change": "no early stopping",
    "validation_scoring": "no early stopping; scoring scores the folds",
    "random_state": "nothing is random",
}
NOT_TAKEN.update({
    name: "a parameter of an online solver"
    for spec in SOLVERS.values() if not spec.warm_start for name in spec.params
    if name not in NOT_TAKEN and name not in SOLVERS["lbfgs"].params
})

#: the solvers of a path: those that start from given weights
PATH_SOLVERS = tuple(name for name, spec in SOLVERS.items() if spec.warm_start)

#: (smallest, largest) value of the default log-spaced grid of c1 and of c2
DEFAULT_RANGES = {"c1s": (1e-2, 1.0), "c2s": (1e-3, 1.0)}


class CRFTaggerCV(CRFTagger):
    """CRF tagger with ``c1`` and ``c2`` chosen by cross-validation.

    :class:`CRFTagger` with built-in search over a grid of ``c1`` and ``c2``,
    as :class:`~sklearn.linear_model.LogisticRegressionCV` is to
    ``LogisticRegression``: the same search as
    :class:`~sklearn.model_selection.GridSearchCV` over a ``CRFTagger`` (the
    same splits, candidates and scores, to the optimizer's tolerance), in a
    fraction of its time. X is encoded once; on each fold, the candidates
    are fitted one after another from strong to weak regularization (down
    ``c2``; for each ``c2``, along ``c1``, down then up on the next row),
    each starting from the solution of the fit before it on the same fold, a
    grid neighbour close to its own, so that it needs few iterations (each still runs to the stopping rule
    ``tol``). Each fold's model is the one a ``CRFTagger`` fitted on the
    fold's training sequences alone learns: the same labels, the same
    weights by CRFsuite's rules (``min_freq``, ``all_possible_*``), the same
    optimum. The folds run in parallel on threads when ``n_jobs`` allows.
    Then, with ``refit=True``, the tagger is fitted on all the data with the
    best ``c1`` and ``c2``, starting from the first fold's solution for
    them: after :meth:`fit` this is a fitted :class:`CRFTagger`.

    Parameters
    ----------
    c1s : int or array-like of float, default=4
        The values of ``c1`` (L1 penalty) to try: an int ``n`` for ``n``
        log-spaced values from 0.01 to 1, or the values (non-negative,
        distinct; 0 for no L1 penalty).
    c2s : int or array-like of float, default=4
        The values of ``c2`` (L2 penalty) to try: an int ``n`` for ``n``
        log-spaced values from 0.001 to 1, or the values (non-negative,
        distinct).
    cv : int, cross-validation generator or iterable, default=5
        The splits, as for :class:`~sklearn.model_selection.GridSearchCV`: an
        int ``k`` for :class:`~sklearn.model_selection.KFold` with ``k``
        folds (never stratified: y is a list of label sequences), a
        splitter (``groups`` of :meth:`fit` go to its ``split``), or an
        iterable of (train, test) index arrays.
    scoring : str, callable, list, tuple, dict or None, default=None
        The score of a fold's model on its held-out sequences, higher is
        better. None is :meth:`CRFTagger.score` (token accuracy); a name of
        :func:`sklearn_crf.metrics.get_scorer` (``"entity_f1"``,
        ``"flat_f1"``, ...); a callable ``scorer(estimator, X, y)``; or,
        for several scores, a list or tuple of names, or a dict of names to
        names or callables (then ``refit`` names the one that chooses).
    refit : bool or str, default=True
        Fit a tagger on all the data with the best ``c1`` and ``c2`` (with
        several scores, ``refit`` is the name of the one that chooses, or
        False). With False, only the search's results are kept and the
        estimator cannot predict.
    solver : {"lbfgs", "l-bfgs-b"}, default="lbfgs"
        As for :class:`CRFTagger` (the solvers that start from given weights).
    max_iter : int, default=None
        The most iterations of each fit (None: the solver's default, 1000).
    tol, epsilon, min_freq, all_possible_states, all_possible_transitions, hashing, transition_constraints, constrain_training, decoder, verbose
        As for :class:`CRFTagger`, for every fit of the search and the refit.
        ``CRFTagger``'s other parameters do not apply (``c1``, ``c2``: the
        grid; ``warm_start``: the path always starts from a neighbour;
        ``early_stopping`` and its parameters; the online solvers').
    n_jobs : int, default=None
        Number of cores: the folds run in parallel on threads (as many at
        once as ``n_jobs`` and the number of folds allow), each fit sharing
        the cores with the folds that run with it; prediction after the fit
        uses ``n_jobs`` threads as :class:`CRFTagger` does. None: numba's
        thread count (all cores); ``-1`` all cores. The results are bitwise
        the same for any ``n_jobs``.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        The search's results, in :class:`~sklearn.model_selection.GridSearchCV`'s
        format and candidate order (``c1`` outer, ``c2`` inner):
        ``params``, ``param_c1``, ``param_c2``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (with
        several scores, ``_<name>`` instead of ``_score``),
        ``mean_fit_time``, ``std_fit_time``, ``mean_score_time``,
        ``std_score_time``, and the solver's iterations ``split<k>_n_iter``
        and ``mean_n_iter``.
    best_index_ : int
        The index in ``cv_results_`` of the best candidate (the first among
        equals); not set with several scores and ``refit=False``.
    best_params_ : dict
        ``{"c1": c1_, "c2": c2_}``.
    best_score_ : float
        The mean cross-validated score of the best candidate.
    c1_, c2_ : float
        The chosen ``c1`` and ``c2``.
    c1s_, c2s_ : ndarray of float
        The grid.
    scores_ : ndarray of shape (n_splits, len(c1s_), len(c2s_)) or dict
        The score of each fold's model for each candidate; with several
        scores, a dict of such arrays by name.
    scorer_ : callable or dict
        The scorer(s) used.
    multimetric_ : bool
        Whether several scores were computed.
    n_splits_ : int
        The number of folds.
    refit_time_ : float
        Seconds of the refit on all the data (with ``refit``).
    classes_, vectorizer_, layout_, coef_, n_iter_, loss_, loss_curve_
        The fitted tagger's, as for :class:`CRFTagger` (with ``refit``).

    See Also
    --------
    CRFTagger : The tagger with given ``c1`` and ``c2``.
    sklearn_crf.metrics.get_scorer : The sequence-labeling scorers.

    Notes
    -----
    Each fit of the path stops by the same rule as a fit of
    :class:`CRFTagger` (``tol``, ``epsilon``, ``max_iter``), so each
    candidate's model equals the one a cold ``CRFTagger`` fit reaches to the
    optimizer's tolerance, not bit for bit: two runs of L-BFGS from
    different starting points stop at different points near the optimum.
    When ``max_iter`` stops the cold fits before the rule is met, the path's
    fits, which start closer, get nearer to the optimum.

    The scores are unweighted, as in ``GridSearchCV`` without metadata
    routing: ``sample_weight`` weighs the sequences in the fits.

    Examples
    --------
    >>> from sklearn_crf import CRFTaggerCV
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}],
    ...      [{"w": "Ann"}, {"w": "runs"}], [{"w": "Bob"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"]] * 4
    >>> crf = CRFTaggerCV(c1s=[0.0, 0.1], c2s=[0.01, 1.0], cv=2).fit(X, y)
    >>> crf.best_params_
    {'c1': 0.0, 'c2': 0.01}
    >>> crf.cv_results_["mean_test_score"]
    array([1., 1., 1., 1.])
    >>> crf.predict([[{"w": "Mary"}, {"w": "runs"}]])
    [['PER', 'O']]
    """

    _parameter_constraints: dict = {
        **{name: constraint for name, constraint in CRFTagger._parameter_constraints.items()
           if name not in NOT_TAKEN},
        "c1s": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "c2s": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "scoring": [str, callable, list, tuple, dict, None],
        "refit": ["boolean", str],
        "solver": [StrOptions(set(PATH_SOLVERS))],
    }

    def __init__(
        self,
        *,
        c1s=4,
        c2s=4,
        cv=5,
        scoring=None,
        refit=True,
        solver="lbfgs",
        max_iter=None,
        tol=1e-3,
        epsilon=None,
        min_freq=0.0,
        all_possible_states=False,
        all_possible_transitions=False,
        hashing=None,
        n_jobs=None,
        transition_constraints=None,
        constrain_training=False,
        decoder="viterbi",
        verbose=0,
    ):
        self.c1s = c1s
        self.c2s = c2s
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.epsilon = epsilon
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.hashing = hashing
        self.n_jobs = n_jobs
        self.transition_constraints = transition_constraints
        self.constrain_training = constrain_training
        self.decoder = decoder
        self.verbose = verbose

    def _tagger_params(self, **overrides):
        """The parameters of the :class:`CRFTagger` that one fit of the search
        (or the refit) is: CRFTagger's defaults, this estimator's shared
        parameters, then ``overrides``."""
        params = CRFTagger().get_params(deep=False)
        own = self.get_params(deep=False)
        params.update({name: own[name] for name in params if name in own})
        params.update(overrides)
        return params

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, groups=None):
        """Cross-validate the grid along the path, then refit on all the data.

        Parameters
        ----------
        X : list of sequences of dict, list of ndarray, list of (tokens, ndarray) or EncodedCorpus
            Any form :meth:`CRFTagger.fit` takes (see "Input forms" in its
            notes); encoded once.
        y : list of sequences of labels
            One label per token.
        sample_weight : array-like of shape (n_sequences,), default=None
            Weight of each sequence in the likelihood of every fit (each
            fold's fits get the weights of its training sequences).
        groups : array-like of shape (n_sequences,), default=None
            Group labels for a group splitter (e.g.
            :class:`~sklearn.model_selection.GroupKFold`) as ``cv``.

        Returns
        -------
        self : CRFTaggerCV
            The fitted estimator.
        """
        from sklearn.model_selection import check_cv

        check_solver_params(CRFTagger(**self._tagger_params()))
        if isinstance(X, ShardedCorpus):
            raise ValueError(
                "CRFTaggerCV does not take a ShardedCorpus: its folds are cut from one "
                "corpus in memory; give an EncodedCorpus or the sequences"
            )
        c1s = _grid(self.c1s, "c1s")
        c2s = _grid(self.c2s, "c2s")
        scorers, multimetric, refit_metric = _check_scoring(self.scoring, self.refit)
        check_constraint_labels(self.transition_constraints, y)
        vectorizer, corpus = encode_training(X, self.hashing)
        classes, labels = encode_labels(y, corpus.seq_ptr)
        seq_weight = check_sequence_weight(sample_weight, corpus.n_sequences)
        if seq_weight is None:
            seq_weight = np.ones(corpus.n_sequences)
        cv = check_cv(self.cv, y, classifier=False)
        splits = [(np.asarray(train), np.asarray(test))
                  for train, test in cv.split(corpus, y, groups)]
        search = _Search(self, vectorizer, corpus, classes, labels, seq_weight, y,
                         c1s, c2s, scorers)
        for name in [name for name in vars(self) if name.endswith("_")]:
            delattr(self, name)  # nothing of a previous fit survives this one
        with _blas_and_logging(self.verbose):
            folds = search.run(splits)
            self._store_results(folds, c1s, c2s, scorers, multimetric, refit_metric)
            if self.refit:
                start = time.perf_counter()
                self._refit(search, folds[0])
                self.refit_time_ = time.perf_counter() - start
        return self

    def _store_results(self, folds, c1s, c2s, scorers, multimetric, refit_metric):
        """Set ``cv_results_``, ``scores_`` and the best candidate's attributes."""
        n1, n2 = len(c1s), len(c2s)
        results = {}
        for key in ("fit_time", "score_time"):
            values = np.array([fold.arrays[key] for fold in folds])
            results[f"mean_{key}"] = values.mean(axis=0)
            results[f"std_{key}"] = values.std(axis=0)
        unmasked = np.zeros(n1 * n2, dtype=bool)  # GridSearchCV's type: every value set
        results["param_c1"] = np.ma.MaskedArray(np.repeat(c1s, n2), mask=unmasked.copy())
        results["param_c2"] = np.ma.MaskedArray(np.tile(c2s, n1), mask=unmasked.copy())
        results["params"] = [{"c1": float(c1), "c2": float(c2)}
                             for c1 in c1s.tolist() for c2 in c2s.tolist()]
        scores = {}
        for name in scorers:
            suffix = name if multimetric else "score"
            values = np.array([fold.arrays["test_" + name] for fold in folds])
            for k, row in enumerate(values):
                results[f"split{k}_test_{suffix}"] = row
            means = values.mean(axis=0)
            results[f"mean_test_{suffix}"] = means
            results[f"std_test_{suffix}"] = values.std(axis=0)
            results[f"rank_test_{suffix}"] = _rank(means)
            scores[name] = values.reshape(len(folds), n1, n2)
        n_iter = np.array([fold.arrays["n_iter"] for fold in folds])
        for k, row in enumerate(n_iter):
            results[f"split{k}_n_iter"] = row
        results["mean_n_iter"] = n_iter.mean(axis=0)
        self.cv_results_ = results
        self.c1s_, self.c2s_ = c1s, c2s
        self.n_splits_ = len(folds)
        self.multimetric_ = multimetric
        self.scorer_ = scorers if multimetric else next(iter(scorers.values()))
        self.scores_ = scores if multimetric else next(iter(scores.values()))
        if refit_metric is not None:
            suffix = refit_metric if multimetric else "score"
            self.best_index_ = int(results[f"rank_test_{suffix}"].argmin())
            self.best_params_ = dict(results["params"][self.best_index_])
            self.best_score_ = float(results[f"mean_test_{suffix}"][self.best_index_])
            self.c1_ = self.best_params_["c1"]
            self.c2_ = self.best_params_["c2"]

    def _refit(self, search, first_fold):
        """Fit on all the data with ``c1_``, ``c2_``, from the first fold's
        solution for them."""
        params = self._tagger_params(c1=self.c1_, c2=self.c2_)
        problem = training_problem(params, search.vectorizer, search.corpus, search.classes,
                                   search.labels, search.seq_weight)
        w0 = warm_start_weights(first_fold.models[self.best_index_], search.vectorizer,
                                search.classes, problem.layout)
        self._set_fitted(solve(params, problem, w0=w0))

    def __sklearn_is_fitted__(self):
        return hasattr(self, "coef_")


class _Solution(NamedTuple):
    """A fit of a fold's path, kept while a later fit starts from it.

    Attributes
    ----------
    w : ndarray of shape (n_params,)
        Its weights: the next fit's initial weights.
    step_scale : float or None
        Its solver's last ``s·y / y·y``
        (:func:`~sklearn_crf._training.optimize.warm_step_scale`).
    c2 : float
        Its L2 coefficient.
    """

    w: np.ndarray
    step_scale: float | None
    c2: float


class _FoldPath:
    """What one fold's path produced: per candidate (in ``cv_results_``
    order) the scores, times and iterations, and, when kept, the fitted
    models (a :class:`~sklearn_crf._model.weights.FittedModel` each), from
    which the refit starts."""

    def __init__(self, n_candidates, names, keep):
        self.arrays = {key: np.zeros(n_candidates) for key in
                       ("fit_time", "score_time", *("test_" + n for n in names))}
        self.arrays["n_iter"] = np.zeros(n_candidates, dtype=np.int64)
        self.models = {} if keep else None


class _Search:
    """The search of one :meth:`CRFTaggerCV.fit`: the data encoded once, the
    grid and the scorers; runs the folds' paths."""

    def __init__(self, estimator, vectorizer, corpus, classes, labels, seq_weight, y,
                 c1s, c2s, scorers):
        self.estimator = estimator
        self.vectorizer = vectorizer
        self.corpus = corpus
        self.classes = classes
        self.labels = labels
        self.seq_weight = seq_weight
        self.y = y
        self.c1s, self.c2s = c1s, c2s
        self.scorers = scorers
        self.steps = path_steps(c1s, c2s)

    def tagger(self, model, n_jobs):
        """A fitted CRFTagger of a fold's model (a
        :class:`~sklearn_crf._model.weights.FittedModel`), with the
        estimator's inference parameters: what the scorers score."""
        return CRFTagger(**self.estimator._tagger_params(n_jobs=n_jobs))._tagger_for(model)

    def run(self, splits):
        """The paths of all folds (a list of :class:`_FoldPath`, in fold order)."""
        budget = _core_budget(self.estimator.n_jobs)
        n_workers = max(1, min(budget, len(splits)))
        cores = _CoreShare(budget)
        work = [(k, train, test, cores) for k, (train, test) in enumerate(splits)]
        if n_workers == 1:
            return [self._path(*item) for item in work]
        with ThreadPoolExecutor(n_workers) as pool:
            return list(pool.map(lambda item: self._path(*item), work))

    def _path(self, k, train, test, cores):
        """Fit fold ``k``'s path and score each candidate on its test part."""
        with cores.running():
            est = self.estimator
            data = fold_data(self.corpus, self.labels, len(self.classes), train,
                             self.seq_weight)
            problem = training_problem(
                est._tagger_params(), self.vectorizer, data.corpus,
                self.classes[data.classes], data.labels, data.seq_weight,
            )
            X_test = self.corpus[test]
            y_test = _safe_indexing(self.y, test)
            n2 = len(self.c2s)
            fold = _FoldPath(len(self.c1s) * n2, self.scorers, keep=k == 0)
            solutions = {}
            objectives = ObjectiveCache()
            for n, step in enumerate(self.steps):
                candidate = step.i * n2 + step.j
                params = est._tagger_params(c1=float(self.c1s[step.i]),
                                            c2=float(self.c2s[step.j]), n_jobs=cores.share())
                if step.start is None:
                    w0, step_scale = np.zeros(problem.layout.n_params), None
                else:
                    before = solutions[step.start]
                    w0 = before.w
                    step_scale = warm_step_scale(before.step_scale, before.c2, params["c2"])
                start = time.perf_counter()
                model, result = solve(params, problem, w0=w0, objectives=objectives,
                                      step_scale=step_scale)
                fold.arrays["fit_time"][candidate] = time.perf_counter() - start
                fold.arrays["n_iter"][candidate] = result.n_iter
                start = time.perf_counter()
                tagger = self.tagger(model, params["n_jobs"])
                for name, scorer in self.scorers.items():
                    fold.arrays["test_" + name][candidate] = scorer(tagger, X_test, y_test)
                fold.arrays["score_time"][candidate] = time.perf_counter() - start
                solutions[n] = _Solution(result.w, result.step_scale, params["c2"])
                if fold.models is not None:
                    fold.models[candidate] = model
                for m in set(solutions) - {s.start for s in self.steps[n + 1:]}:
                    del solutions[m]
            return fold


class _CoreShare:
    """The cores of a search shared by the folds' paths running at a time:
    each fit takes an equal share when it starts (so a path left alone gets
    them all). Thread counts change no result."""

    def __init__(self, budget):
        self.budget = budget
        self.active = 0
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def running(self):
        with self.lock:
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1

    def share(self):
        with self.lock:
            return max(1, self.budget // max(self.active, 1))


def _core_budget(n_jobs):
    """The number of cores ``n_jobs`` asks for (CRFTagger's rule for its
    thread count, without the cap by the number of tokens)."""
    with _n_threads(n_jobs, np.iinfo(np.int64).max) as n:
        return n


@contextlib.contextmanager
def _blas_and_logging(verbose):
    """BLAS on one thread (as every fit runs it, set once for all the
    threads of the search) and the progress lines of ``verbose``."""
    with threadpool_limits(limits=1, user_api="blas"), progress_logging(verbose):
        yield


def _grid(values, name):
    """The grid values of ``c1s`` or ``c2s`` as a float64 array."""
    if isinstance(values, Integral) and not isinstance(values, bool):
        low, high = DEFAULT_RANGES[name]
        return np.geomspace(low, high, int(values))
    try:
        grid = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be an int or a list of non-negative numbers, got {values!r}"
        ) from None
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(
            f"{name} must be an int or a non-empty 1-D list of values, got shape "
            f"{grid.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(grid) | (grid < 0))
    if len(bad):
        raise ValueError(
            f"{name}[{bad[0]}] is {float(grid[bad[0]])!r}; the values must be finite and "
            "non-negative"
        )
    if len(np.unique(grid)) != len(grid):
        raise ValueError(f"{name} has repeated values: {grid.tolist()}")
    return grid


def _token_accuracy(estimator, X, y):
    """The estimator's own score (scoring=None)."""
    return estimator.score(X, y)


def _check_scoring(scoring, refit):
    """(scorers by name, whether there are several, the name of the one that
    chooses the best candidate: None with several and ``refit=False``)."""
    from .metrics import get_scorer

    if scoring is None or isinstance(scoring, str) or callable(scoring):
        if isinstance(refit, str):
            raise ValueError(
                f"refit={refit!r} names a score, but scoring gives one score: use "
                "refit=True or False"
            )
        scorer = _token_accuracy if scoring is None else get_scorer(scoring)
        return {"score": scorer}, False, "score"
    if isinstance(scoring, (list, tuple)):
        if not scoring or not all(isinstance(name, str) for name in scoring):
            raise ValueError(
                f"scoring as a list or tuple must hold scorer names, got {scoring!r}"
            )
        if len(set(scoring)) != len(scoring):
            raise ValueError(f"scoring has repeated names: {list(scoring)}")
        scorers = {name: get_scorer(name) for name in scoring}
    else:
        if not scoring or not all(isinstance(name, str) for name in scoring):
            raise ValueError(
                "scoring as a dict must map names (str) to scorer names or callables, "
                f"got {scoring!r}"
            )
        scorers = {name: get_scorer(value) for name, value in scoring.items()}
    if refit is False:
        return scorers, True, None
    if not isinstance(refit, str) or refit not in scorers:
        raise ValueError(
            "with several scores, refit must be False or the name of the score that "
            f"chooses the candidate, one of {sorted(scorers)}; got refit={refit!r}"
        )
    return scorers, True, refit


def _rank(means):
    """GridSearchCV's ranks: 1 for the best, equal means share the smallest
    rank, NaN ranks last."""
    values = np.where(np.isnan(means), -np.inf, means)
    return (1 + (values[None, :] > values[:, None]).sum(axis=1)).astype(np.int32)
