"""The one table of solvers: their parameters, defaults, capabilities,
CRFsuite's names for them, and the function that runs each.

:class:`CRFTagger` (its ``fit`` and parameter checks), the sklearn-crfsuite
drop-in :class:`~sklearn_crf.CRF` and the command line read this table; no
other module lists solvers or their defaults. Every solver returns a
:class:`~sklearn_crf._training.optimize.SolverResult`.
"""

import copy
import inspect
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional

from . import online as _online, optimize as _optimize
from .objective import crf_objective


class TrainingData(NamedTuple):
    """What every solver trains on.

    Attributes
    ----------
    corpus : EncodedCorpus
        The encoded training sequences (for the batch solvers, ``tok_val``
        may be empty: every value is 1).
    layout : ParameterLayout
        The weights to learn.
    labels : ndarray of int32, shape (n_tokens,)
        The gold label codes.
    seq_weight : ndarray of float64, shape (n_sequences,)
        The sequence weights.
    allowed : ndarray of bool, shape (n_tokens, n_labels), or None
        With partial labels, the labels each token may take (``labels`` then
        holds one of them); None when every token has its label. Only the
        batch solvers read it.
    """

    corpus: object
    layout: object
    labels: object
    seq_weight: object
    allowed: object = None


class ObjectiveCache:
    """The objectives of one :class:`TrainingData`, built once per thread count
    and reused by the fits of a regularization path, which differ only in
    ``c2``: building one costs as much as a few iterations. One caller at a
    time (the objectives own their work buffers)."""

    def __init__(self):
        self._built = {}

    def objective(self, data, c2, n_threads, constraints):
        """The objective of ``data`` under ``c2``, on ``n_threads`` chunks."""
        base = self._built.get(n_threads)
        if base is None:
            base = self._built[n_threads] = crf_objective(
                data.corpus, data.layout, data.labels, data.seq_weight,
                allowed=data.allowed, c2=0.0, n_chunks=n_threads, constraints=constraints,
            )
        objective = copy.copy(base)  # the arrays shared, c2 its own
        objective.c2 = float(c2)
        return objective


@dataclass(frozen=True)
class Solver:
    """One solver of :class:`~sklearn_crf.CRFTagger`.

    Attributes
    ----------
    name : str
        The value of ``CRFTagger(solver=...)``.
    kind : {"batch", "online"}
        Batch solvers minimize the objective with its full gradient (on
        threads); online solvers update the weights after each sequence (on
        one thread), as CRFsuite does.
    params : frozenset of str
        The CRFTagger parameters it reads besides those every solver reads.
    max_iter : int
        The default of ``max_iter`` (``max_iter=None``).
    epsilon : float or None
        The default of ``epsilon`` (``epsilon=None``), None when it reads none.
    crfsuite_algorithm : str or None
        CRFsuite's (and sklearn-crfsuite's) name of the algorithm, None for
        a solver CRFsuite does not have.
    crfsuite_params : dict
        sklearn-crfsuite parameter name → CRFTagger parameter name, or None
        where CRFTagger has a fixed behaviour (see ``crfsuite_fixed``).
    crfsuite_defaults : dict
        CRFsuite's defaults that differ from CRFTagger's (CRFTagger names).
    crfsuite_fixed : dict
        sklearn-crfsuite parameter name → the value CRFTagger always uses.
    warm_start, early_stopping, constraints_in_training, multithreaded : bool
        Capabilities: starting from the previous weights, a validation set
        and early stopping, ``constrain_training``, training on threads.
    run : callable
        ``run(solver, data, params, *, n_threads, w0, constraints, monitor,
        verbose) -> SolverResult``.
    """

    name: str
    kind: str
    params: frozenset
    max_iter: int
    epsilon: Optional[float]
    crfsuite_algorithm: Optional[str]
    crfsuite_params: dict
    run: Callable
    crfsuite_defaults: dict = field(default_factory=dict)
    crfsuite_fixed: dict = field(default_factory=dict)
    warm_start: bool = False
    early_stopping: bool = False
    constraints_in_training: bool = False
    multithreaded: bool = False
    fit_function: Optional[Callable] = None

    def resolved_max_iter(self, max_iter):
        """``max_iter``, or this solver's default when it is None."""
        return self.max_iter if max_iter is None else max_iter

    def resolved_epsilon(self, epsilon):
        """``epsilon``, or this solver's default when it is None."""
        return self.epsilon if epsilon is None else epsilon


def run_batch(solver, data, params, *, n_threads, w0, constraints, monitor, verbose,
              objectives=None, step_scale=None):
    """L-BFGS-B / OWL-QN (:func:`~sklearn_crf._training.optimize.minimize_crf`) on the
    objective of ``data`` (from ``objectives``, an :class:`ObjectiveCache`, when
    given), OWL-QN's first step scaled by ``step_scale`` when given."""
    if objectives is not None:
        objective = objectives.objective(data, params["c2"], n_threads, constraints)
    else:
        objective = crf_objective(
            data.corpus, data.layout, data.labels, data.seq_weight, allowed=data.allowed,
            c2=params["c2"], n_chunks=n_threads, constraints=constraints,
        )
    return _optimize.minimize_crf(
        objective, w0, c1=params["c1"], solver=solver.name,
        max_iter=solver.resolved_max_iter(params["max_iter"]), tol=params["tol"],
        epsilon=solver.resolved_epsilon(params["epsilon"]), verbose=verbose,
        monitor=monitor, step_scale=step_scale,
    )


def run_online(solver, data, params, *, n_threads, w0, constraints, monitor, verbose,
               objectives=None, step_scale=None):
    """One of CRFsuite's online algorithms (:mod:`sklearn_crf._training.online`), with
    the parameters it reads; they start from zeros, on one thread (``objectives``
    and ``step_scale`` are the batch solvers': online solvers have none)."""
    kwargs = {name: params[name] for name in solver.params if name != "epsilon"}
    if solver.epsilon is not None:
        kwargs["epsilon"] = float(solver.resolved_epsilon(params["epsilon"]))
    return solver.fit_function(
        data.corpus, data.layout, data.labels, data.seq_weight,
        max_iter=solver.resolved_max_iter(params["max_iter"]), verbose=verbose, **kwargs,
    )


#: the parameters of the validation set and early stopping
_EARLY_STOPPING = frozenset({
    "early_stopping", "validation_fraction", "n_iter_no_change", "validation_scoring",
    "random_state",
})
#: CRFsuite's lbfgs parameters: sklearn-crfsuite name -> CRFTagger name (None: fixed)
_LBFGS_CRFSUITE = {
    "c1": "c1", "c2": "c2", "delta": "tol", "epsilon": "epsilon",
    "num_memories": None, "period": None, "linesearch": None, "max_linesearch": None,
}
_BATCH = dict(
    kind="batch", params=frozenset({"c1", "c2", "tol", "epsilon", "warm_start",
                                    "constrain_training"}) | _EARLY_STOPPING,
    max_iter=1000, epsilon=1e-5, run=run_batch, warm_start=True, early_stopping=True,
    constraints_in_training=True, multithreaded=True,
)

#: what every online solver shares
_ONLINE = dict(kind="online", run=run_online)

SOLVERS = {
    "lbfgs": Solver(
        name="lbfgs", crfsuite_algorithm="lbfgs", crfsuite_params=_LBFGS_CRFSUITE,
        crfsuite_defaults={"tol": 1e-5},
        crfsuite_fixed={"num_memories": _optimize.HISTORY, "period": _optimize.PERIOD},
        **_BATCH,
    ),
    "l-bfgs-b": Solver(name="l-bfgs-b", crfsuite_algorithm=None, crfsuite_params={},
                       **_BATCH),
    "l2sgd": Solver(
        name="l2sgd",
        params=frozenset({"c2", "period", "delta", "calibration_eta", "calibration_rate",
                          "calibration_samples", "calibration_candidates",
                          "calibration_max_trials"}),
        max_iter=1000, epsilon=None, crfsuite_algorithm="l2sgd",
        crfsuite_params={name: name for name in (
            "c2", "period", "delta", "calibration_eta", "calibration_rate",
            "calibration_samples", "calibration_candidates", "calibration_max_trials")},
        fit_function=_online.fit_l2sgd, **_ONLINE,
    ),
    "ap": Solver(
        name="ap", params=frozenset({"epsilon"}), max_iter=100, epsilon=0.0,
        crfsuite_algorithm="ap", crfsuite_params={"epsilon": "epsilon"},
        fit_function=_online.fit_averaged_perceptron, **_ONLINE,
    ),
    "pa": Solver(
        name="pa",
        params=frozenset({"epsilon", "pa_type", "c", "error_sensitive", "averaging"}),
        max_iter=100, epsilon=0.0, crfsuite_algorithm="pa",
        crfsuite_params={"epsilon": "epsilon", "pa_type": "pa_type", "c": "c",
                         "error_sensitive": "error_sensitive", "averaging": "averaging"},
        fit_function=_online.fit_passive_aggressive, **_ONLINE,
    ),
    "arow": Solver(
        name="arow", params=frozenset({"epsilon", "variance", "gamma"}),
        max_iter=100, epsilon=0.0, crfsuite_algorithm="arow",
        crfsuite_params={"epsilon": "epsilon", "variance": "variance", "gamma": "gamma"},
        fit_function=_online.fit_arow, **_ONLINE,
    ),
}

#: parameters some solver reads and others ignore
SOLVER_SPECIFIC = frozenset().union(*(s.params for s in SOLVERS.values()))


def reads(solver, name):
    """Whether ``solver`` reads the CRFTagger parameter ``name``."""
    return name not in SOLVER_SPECIFIC or name in SOLVERS[solver].params


def check_solver_params(estimator):
    """ValueError when a parameter the chosen solver ignores has a non-default value.

    The defaults are those of the estimator's signature; never silently
    ignore a setting.
    """
    params = estimator.get_params(deep=False)
    signature = inspect.signature(type(estimator).__init__).parameters
    solver = params["solver"]
    ignored = sorted(
        name for name in SOLVER_SPECIFIC - SOLVERS[solver].params
        if name in params and not _same(params[name], signature[name].default)
    )
    if ignored:
        detail = "; ".join(
            f"{name}={params[name]!r} is a parameter of solver "
            + " / ".join(repr(s) for s, spec in SOLVERS.items() if name in spec.params)
            for name in ignored
        )
        raise ValueError(
            f"solver={solver!r} does not use {', '.join(ignored)} ({detail}); leave "
            "them at their defaults or choose a solver that uses them"
        )
    if solver == "l2sgd" and params["c2"] <= 0:
        raise ValueError(
            "solver='l2sgd' needs c2 > 0 (its learning rate is 1 / (lambda * (t0 + t)) "
            f"with lambda = 2 * c2 / n_sequences), got c2={params['c2']!r}"
        )


def _same(a, b):
    """Equal values, and a bool only equals a bool."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)
