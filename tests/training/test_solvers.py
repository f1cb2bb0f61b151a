"""The table of solvers: what it says each solver reads and can do is what
CRFTagger does."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger
from sklearn_crf._training.solvers import SOLVER_SPECIFIC, SOLVERS, reads

#: a non-default value of every solver-specific parameter
NON_DEFAULT = {
    "c1": 0.1, "c2": 0.5, "tol": 1e-2, "epsilon": 1e-3, "period": 3, "delta": 1e-3,
    "calibration_eta": 0.2, "calibration_rate": 3.0, "calibration_samples": 5,
    "calibration_candidates": 2, "calibration_max_trials": 4, "pa_type": 2, "c": 0.5,
    "error_sensitive": False, "averaging": False, "variance": 0.5, "gamma": 0.5,
    "warm_start": True, "constrain_training": True, "early_stopping": True,
    "validation_fraction": 0.2, "n_iter_no_change": 3, "validation_scoring": "flat_f1",
    "random_state": 0,
}


def test_the_table_lists_the_solvers_and_parameters_of_crftagger():
    signature = inspect.signature(CRFTagger).parameters
    assert set(NON_DEFAULT) == SOLVER_SPECIFIC
    assert SOLVER_SPECIFIC <= set(signature)
    for name in NON_DEFAULT:
        assert NON_DEFAULT[name] != signature[name].default


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_solver_accepts_exactly_the_parameters_the_table_gives_it(toy_ner, solver):
    X, y = toy_ner
    X, y = X[:12], y[:12]
    for name, value in NON_DEFAULT.items():
        crf = CRFTagger(solver=solver, max_iter=2, **{name: value})
        if reads(solver, name):
            _fit_briefly(crf, X, y)
            assert crf.coef_.shape == (crf.layout_.n_params,)
        else:
            with pytest.raises(ValueError, match=f"does not use {name}"):
                crf.fit(X, y)


@pytest.mark.parametrize("solver", SOLVERS)
def test_capabilities_and_defaults(toy_ner, solver):
    spec = SOLVERS[solver]
    X, y = toy_ner
    assert spec.early_stopping == ("early_stopping" in spec.params)
    assert spec.warm_start == ("warm_start" in spec.params)
    assert spec.constraints_in_training == ("constrain_training" in spec.params)
    assert spec.multithreaded == (spec.kind == "batch")
    if not spec.early_stopping:
        with pytest.raises(ValueError, match="takes no validation set"):
            CRFTagger(solver=solver).fit(X, y, X_val=X[:2], y_val=y[:2])
    assert spec.resolved_max_iter(None) == spec.max_iter
    assert spec.resolved_max_iter(7) == 7
    assert spec.resolved_epsilon(None) == spec.epsilon


def _fit_briefly(crf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return crf.fit(X, y)


def test_every_solver_returns_one_result_type(toy_ner):
    X, y = toy_ner
    fitted = set()
    for solver in SOLVERS:
        crf = CRFTagger(solver=solver, max_iter=2)
        _fit_briefly(crf, X, y)
        assert crf.n_iter_ == len(crf.loss_curve_) == 2
        assert np.isfinite(crf.loss_)
        fitted.add(frozenset(k for k in vars(crf) if k.endswith("_")))
    assert len(fitted) == 1  # the same fitted attributes, set in one place
