"""Minimizing a CRF objective: the solvers, the stopping rule, the result check.

Two solvers, as in CRFsuite's ``lbfgs`` algorithm:

* without L1 (``c1 == 0``), scipy's L-BFGS-B with no bounds;
* with L1, OWL-QN (Andrew & Gao, 2007), the orthant-wise L-BFGS that CRFsuite
  uses, written here with NumPy. scipy's L-BFGS-B on split weights
  ``w = w⁺ - w⁻`` under bounds ``w⁺, w⁻ ≥ 0`` (``solver="l-bfgs-b"``) reaches
  the same optimum but converges much more slowly on NER data (see
  ``benchmarks/README.md``).

Both run with BLAS limited to one thread and share one stopping rule.
"""

import logging
import time
import warnings

import numpy as np
from scipy.optimize import Bounds, minimize
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from . import _kernels

logger = logging.getLogger("sklearn_crf")

#: iterations over which the relative decrease of the loss is measured
PERIOD = 10
#: L-BFGS history size (CRFsuite's default num_memories is 6)
HISTORY = 6
#: line search: sufficient decrease constant and maximum number of trials
ARMIJO = 1e-4
MAX_LINESEARCH = 40


class _Progress:
    """Loss curve, logging and CRFsuite's delta stopping rule.

    Stop when ``(f[k - PERIOD] - f[k]) / max(|f[k]|, 1) < tol``.
    """

    def __init__(self, tol, verbose):
        self.tol = tol
        self.verbose = verbose
        self.losses = []
        self.met = False
        self.start = time.perf_counter()

    def done(self, loss, grad_norm):
        """Record one iteration; True when the stopping rule is met."""
        self.losses.append(float(loss))
        k = len(self.losses)
        if self.verbose:
            logger.info(
                "iter %4d  loss %.6e  |grad| %.3e  %.2fs",
                k, loss, grad_norm, time.perf_counter() - self.start,
            )
        if k > PERIOD:
            past = self.losses[k - 1 - PERIOD]
            if (past - loss) / max(abs(loss), 1.0) < self.tol:
                self.met = True
        return self.met


def minimize_crf(objective, w0, *, solver, max_iter, tol, verbose=0):
    """Minimize a :class:`~sklearn_crf._objective.CRFObjective` from weights w0.

    Returns ``(w, n_iter, losses)`` where ``losses`` holds the objective after
    each iteration.
    """
    progress = _Progress(tol, verbose)
    with threadpool_limits(limits=1, user_api="blas"):
        if objective.c1 > 0 and solver == "lbfgs":
            w, n_iter, message = _owlqn(objective, w0, max_iter, progress)
        else:
            w, n_iter, message = _lbfgsb(objective, w0, max_iter, progress)
    _check_result(n_iter, max_iter, progress.met, message)
    return w, n_iter, np.asarray(progress.losses)


def _lbfgsb(objective, w0, max_iter, progress):
    """scipy's L-BFGS-B; with L1, on split weights under bounds."""
    last_grad = [None]

    def fun(x):
        f, last_grad[0] = objective(x)
        return f, last_grad[0]

    def callback(intermediate_result):
        # the last evaluation is that of the new iterate
        if progress.done(intermediate_result.fun, np.linalg.norm(last_grad[0])):
            raise StopIteration

    bounds = objective.bounds()
    result = minimize(
        fun,
        objective.initial_point(w0),
        jac=True,
        method="L-BFGS-B",
        bounds=None if bounds is None else Bounds(*bounds),
        callback=callback,
        options={
            "maxiter": max_iter,
            "maxfun": max(15000, 2 * max_iter),
            "ftol": 64 * np.finfo(float).eps,
            "gtol": 1e-10,
            "maxcor": HISTORY,
        },
    )
    message = None if result.success else str(result.message)
    return objective.weights(result.x).copy(), int(min(result.nit, max_iter)), message


def _owlqn(objective, w0, max_iter, progress):
    """OWL-QN with CRFsuite's choices: backtracking line search, history of 6.

    The vector work of an iteration is done by three kernels
    (:func:`~sklearn_crf._kernels.owlqn_pseudo_gradient`,
    :func:`~sklearn_crf._kernels.lbfgs_two_loop`,
    :func:`~sklearn_crf._kernels.owlqn_trial_point`); the history is a ring of
    ``HISTORY + 1`` rows, one of them free for the next step.
    """
    c1 = objective.c1
    n = len(w0)
    w = np.array(w0, dtype=np.float64)
    f_smooth, g = objective.smooth(w)
    f = objective.full_loss(w, f_smooth)
    pg = np.empty(n)
    _kernels.owlqn_pseudo_gradient(w, g, c1, pg)
    s_hist = np.empty((HISTORY + 1, n))
    y_hist = np.empty((HISTORY + 1, n))
    rho = np.empty(HISTORY + 1)
    order = []  # history rows in use, oldest first
    free = 0  # the row the next step is written to
    d = np.empty(n)
    n_iter = 0
    message = None
    while n_iter < max_iter:
        if not np.any(pg):
            break  # an exact optimum
        _kernels.lbfgs_two_loop(pg, s_hist, y_hist, rho, np.array(order, np.int64), d)
        step = 1.0 / np.linalg.norm(d) if n_iter == 0 else 1.0
        w_new = np.empty(n)
        s = s_hist[free]
        for _ in range(MAX_LINESEARCH):
            dg = _kernels.owlqn_trial_point(w, d, step, pg, w_new, s)
            f_smooth_new, g_new = objective.smooth(w_new)
            f_new = objective.full_loss(w_new, f_smooth_new)
            if f_new <= f + ARMIJO * dg:
                break
            step *= 0.5
        else:
            message = "the line search found no sufficient decrease"
            break
        y = np.subtract(g_new, g, out=y_hist[free])
        sy = s @ y
        if sy > 0:
            rho[free] = 1.0 / sy
            order.append(free)
            if len(order) > HISTORY:
                del order[0]
            free = next(r for r in range(HISTORY + 1) if r not in order)
        w, f, g = w_new, f_new, g_new
        n_iter += 1
        if progress.done(f, np.sqrt(_kernels.owlqn_pseudo_gradient(w, g, c1, pg))):
            break
    return w, n_iter, message


def _check_result(n_iter, max_iter, rule_met, message):
    """The one place where an optimizer outcome is judged, with its warnings."""
    if rule_met:
        return
    if message is not None and n_iter < max_iter:
        warnings.warn(
            f"the solver stopped after {n_iter} iterations: {message}",
            ConvergenceWarning,
            stacklevel=4,
        )
    elif n_iter >= max_iter:
        warnings.warn(
            f"the solver stopped after max_iter={max_iter} iterations before the "
            "stopping rule was met; increase max_iter or tol for a converged model",
            ConvergenceWarning,
            stacklevel=4,
        )
