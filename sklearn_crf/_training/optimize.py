"""Minimizing a CRF objective: the solvers, the stopping rule, the result check.

The objective (:class:`~sklearn_crf._training.objective.CRFObjective`) is smooth: the
negative log-likelihood plus the L2 term. The L1 term ``c1·‖w‖₁`` belongs to
the solver, as in CRFsuite's ``lbfgs`` algorithm:

* without L1 (``c1 == 0``), scipy's L-BFGS-B with no bounds;
* with L1, OWL-QN (Andrew & Gao, 2007), the orthant-wise L-BFGS that CRFsuite
  uses: a Python loop over iterations whose vector work is done by the
  NumPy and BLAS functions at the end of this module;
* with L1 and ``solver="l-bfgs-b"``, scipy's L-BFGS-B on split weights
  ``w = w⁺ - w⁻`` under bounds ``w⁺, w⁻ ≥ 0``, which reaches the same optimum
  but converges much more slowly on NER data (see ``benchmarks/README.md``).

All run with BLAS limited to one thread and share one stopping rule.
"""

import contextlib
import logging
import os
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas as _blas
from scipy.optimize import Bounds, minimize
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits


logger = logging.getLogger("sklearn_crf")


@contextlib.contextmanager
def progress_logging(verbose):
    """Within the block, the INFO lines of the ``"sklearn_crf"`` logger (the
    per-iteration progress) reach the user when ``verbose`` is positive, as
    scikit-learn's ``verbose`` output does, without duplicates:

    * when logging is not configured (no handler on the logger or its
      ancestors), a handler writing to ``sys.stderr`` is installed on the
      logger for the block;
    * otherwise the user's handlers print them; the logger's level is lowered
      to INFO for the block if it would drop them.

    The logger's handlers and level are restored at the end. Does nothing
    when ``verbose`` is 0.
    """
    if not verbose:
        yield
        return
    level = logger.level
    handler = None
    if not logger.hasHandlers():
        handler = logging.StreamHandler()  # sys.stderr at the time of each line
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.setLevel(level)
        if handler is not None:
            logger.removeHandler(handler)

#: iterations over which the relative decrease of the loss is measured
PERIOD = 10
#: L-BFGS history size (CRFsuite's default num_memories is 6)
HISTORY = 6
#: line search: sufficient decrease constant and maximum number of trials
ARMIJO = 1e-4
MAX_LINESEARCH = 40


@dataclass(frozen=True)
class SolverResult:
    """What :func:`minimize_crf` found.

    Attributes
    ----------
    w : ndarray of shape (n_params,)
        The weights.
    n_iter : int
        Number of iterations run.
    losses : ndarray of shape (n_iter,)
        The objective (with the L1 term) after each iteration.
    loss : float
        The objective (with the L1 term) at ``w``.
    validation_scores : ndarray of shape (n_iter,) or None
        The monitor's score of each iterate (None without a monitor).
    best_iteration : int or None
        The iteration (from 1) of the best validation score (None without a
        monitor, or when no iteration ran).
    """

    w: np.ndarray
    n_iter: int
    losses: np.ndarray
    loss: float
    validation_scores: np.ndarray | None = None
    best_iteration: int | None = None
    step_scale: float | None = None


def warm_step_scale(step_scale, c2_before, c2):
    """The first step's scale of a fit warm-started from another fit's solution
    on the same data (a :class:`SolverResult`'s ``step_scale``, under the L2
    coefficient ``c2_before``), under the L2 coefficient ``c2``.

    ``step_scale`` is ``s·y / y·y`` of OWL-QN's newest pair at the end of the
    fit: the inverse of the smooth objective's curvature along its last step.
    The L2 term adds ``2·c2`` to that curvature, so the scale under ``c2`` is
    ``1 / (1 / step_scale + 2·(c2 - c2_before))``; None when that is not
    positive, or when there is no scale.
    """
    if step_scale is None or not step_scale > 0:
        return None
    curvature = 1.0 / step_scale + 2.0 * (c2 - c2_before)
    return 1.0 / curvature if curvature > 0 else None


class ValidationMonitor:
    """Scores each iterate on a validation set and keeps the best one.

    Called by the solvers with the weights after each iteration (the
    iterate). ``score(w)`` returns a float, higher is better; the caller (the
    tagger) supplies it. With ``n_iter_no_change``, the monitor keeps a copy
    of the best iterate and asks the solver to stop once that many iterations
    have passed without a better score (a NaN score never is better); without
    it, the monitor only records the scores.

    Parameters
    ----------
    score : callable
        ``score(w) -> float`` for a weight vector ``w``.
    n_iter_no_change : int or None
        Iterations without a better score before stopping; None never stops
        and keeps no weights.
    """

    def __init__(self, score, n_iter_no_change=None):
        self.score = score
        self.n_iter_no_change = n_iter_no_change
        self.scores = []
        self.best_score = -np.inf
        self.best_iteration = None
        self.best_w = None

    @property
    def early_stopping(self):
        """True when the monitor stops the solver and keeps the best weights."""
        return self.n_iter_no_change is not None

    def __call__(self, w):
        """Score the iterate ``w``; True when the solver should stop."""
        score = float(self.score(w))
        self.scores.append(score)
        k = len(self.scores)
        if self.best_iteration is None or score > self.best_score:
            self.best_score = score if not np.isnan(score) else -np.inf
            self.best_iteration = k
            if self.early_stopping:
                self.best_w = np.array(w, dtype=np.float64, copy=True)
        return self.early_stopping and k - self.best_iteration >= self.n_iter_no_change


class _Progress:
    """Loss curve, logging, CRFsuite's two stopping rules (liblbfgs's), and
    the validation monitor.

    Stop when ``‖g‖ / max(‖w‖, 1) <= epsilon`` (g the gradient, or with L1 the
    pseudo-gradient; also tested at the starting point, so a fit from an
    optimum runs no iteration), when ``(f[k - PERIOD] - f[k]) / max(|f[k]|,
    1) < tol`` (the delta test), or when the :class:`ValidationMonitor` (if
    any), called with each iterate, says so.
    """

    def __init__(self, tol, verbose, epsilon=0.0, monitor=None):
        self.tol = tol
        self.epsilon = epsilon
        self.verbose = verbose
        self.monitor = monitor
        self.losses = []
        self.met = False
        self.start = time.perf_counter()

    def at_optimum(self, grad_norm, w):
        """The gradient-norm test; True when it is met."""
        if grad_norm <= self.epsilon * max(np.linalg.norm(w), 1.0):
            self.met = True
        return self.met

    def done(self, loss, grad_norm, w):
        """Record one iteration at weights w; True when a stopping rule is met."""
        self.losses.append(float(loss))
        k = len(self.losses)
        if self.monitor is not None and self.monitor(w):
            self.met = True
        if self.verbose:
            extra = ""
            if self.monitor is not None:
                extra = f"  validation {self.monitor.scores[-1]:.6g}"
            logger.info(
                "iter %4d  loss %.6e  |grad| %.3e%s  %.2fs",
                k, loss, grad_norm, extra, time.perf_counter() - self.start,
            )
        if self.at_optimum(grad_norm, w):
            return True
        if k > PERIOD:
            past = self.losses[k - 1 - PERIOD]
            if (past - loss) / max(abs(loss), 1.0) < self.tol:
                self.met = True
        return self.met


def minimize_crf(
    objective, w0, *, c1, solver, max_iter, tol, epsilon=0.0, verbose=0, monitor=None,
    step_scale=None,
):
    """Minimize ``objective(w) + c1·‖w‖₁`` from the weights w0.

    ``objective(w)`` returns the smooth loss and its gradient (a
    :class:`~sklearn_crf._training.objective.CRFObjective`). ``solver`` is ``"lbfgs"``
    (L-BFGS-B without L1, OWL-QN with it) or ``"l-bfgs-b"`` (L-BFGS-B, on split
    weights with L1). ``tol`` and ``epsilon`` are the stopping rules of
    :class:`_Progress`. ``monitor``, a :class:`ValidationMonitor`, is called
    with the weights after each iteration; with early stopping it may stop
    the solver, and the result holds its best iterate. ``step_scale`` (from
    :func:`warm_step_scale`) scales OWL-QN's first step of a warm start, which
    otherwise has length 1 (CRFsuite's first step, right from zeros, too long
    near an optimum: its line search then halves it several times). Returns a
    :class:`SolverResult`; warns with a ``ConvergenceWarning`` when no
    stopping rule was met.
    """
    progress = _Progress(tol, verbose, epsilon, monitor)
    with threadpool_limits(limits=1, user_api="blas"):
        end_scale = None
        if c1 > 0 and solver == "lbfgs":
            w, n_iter, message, end_scale = _owlqn(objective, w0, c1, max_iter, progress,
                                                   step_scale)
        else:
            w, n_iter, message = _lbfgsb(objective, w0, c1, max_iter, progress)
    _check_result(n_iter, max_iter, progress.met, message)
    losses = np.asarray(progress.losses)
    scores = best = None
    if monitor is not None:
        scores = np.asarray(monitor.scores, dtype=np.float64)
        best = monitor.best_iteration  # None when no iteration ran
    if best is not None and monitor.early_stopping:
        w = monitor.best_w
        loss = float(losses[best - 1])
    elif len(losses):
        loss = float(losses[-1])
    else:
        loss = objective(w)[0] + c1 * np.abs(w).sum()
    return SolverResult(
        w=w, n_iter=n_iter, losses=losses, loss=loss, validation_scores=scores,
        best_iteration=best, step_scale=end_scale,
    )


def _lbfgsb(objective, w0, c1, max_iter, progress):
    """scipy's L-BFGS-B; with L1, on split weights ``x = [w⁺, w⁻]`` under bounds
    ``x ≥ 0``, where the L1 term is ``c1·Σ x``."""
    n = len(w0)
    last_grad = [None]
    if c1 > 0:
        split = split_l1(objective, c1, n)
        x0 = np.concatenate([np.maximum(w0, 0.0), np.maximum(-w0, 0.0)])
        bounds = Bounds(np.zeros(2 * n), np.full(2 * n, np.inf))
    else:
        split = objective
        x0 = np.array(w0, dtype=np.float64)
        bounds = None
    first = [x0.copy(), *split(x0)]  # scipy starts with the same evaluation

    def fun(x):
        if first and np.array_equal(x, first[0]):
            f, last_grad[0] = first[1], first[2]
        else:
            f, last_grad[0] = split(x)
        first.clear()
        return f, last_grad[0]

    def grad_norm(x, grad):
        """‖g‖ with L2 only; with L1 the norm of the pseudo-gradient of w."""
        if c1 == 0:
            return np.linalg.norm(grad), x
        w = x[:n] - x[n:]
        pg = np.empty(n)
        return np.sqrt(owlqn_pseudo_gradient(w, grad[:n] - c1, c1, pg)), w

    def callback(intermediate_result):
        # the last evaluation is that of the new iterate
        if progress.done(intermediate_result.fun, *grad_norm(intermediate_result.x,
                                                             last_grad[0])):
            raise StopIteration

    if progress.at_optimum(*grad_norm(x0, first[2])):
        return np.array(w0, dtype=np.float64), 0, None

    result = minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
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
    w = result.x[:n] - result.x[n:] if c1 > 0 else result.x
    return w.copy(), int(min(result.nit, max_iter)), message


def split_l1(objective, c1, n):
    """``objective(w) + c1·‖w‖₁`` as a smooth function of ``x = [w⁺, w⁻] ≥ 0``
    (``w = w⁺ - w⁻``, n weights): returns ``fun(x) -> (loss, gradient in x)``."""

    def fun(x):
        loss, grad = objective(x[:n] - x[n:])
        loss += c1 * x.sum()
        return loss, np.concatenate([grad + c1, c1 - grad])

    return fun


def _owlqn(objective, w0, c1, max_iter, progress, step_scale=None):
    """OWL-QN with CRFsuite's choices: backtracking line search, history of 6.

    The vector work of an iteration is done by three functions
    (:func:`owlqn_pseudo_gradient`, :func:`lbfgs_two_loop`,
    :func:`owlqn_trial_point`); the history is a ring of ``HISTORY + 1`` rows,
    one of them free for the next step. The first step is
    ``-pg / ‖pg‖`` (CRFsuite's), or ``-step_scale·pg`` when given. Returns
    ``(w, n_iter, message, end_scale)``, the last ``s·y / y·y`` of the newest
    pair at the end (None without one).
    """
    n = len(w0)
    w = np.array(w0, dtype=np.float64)
    f_smooth, g = objective(w)
    f = f_smooth + c1 * np.abs(w).sum()
    pg = np.empty(n)
    if progress.at_optimum(np.sqrt(owlqn_pseudo_gradient(w, g, c1, pg)), w):
        return w, 0, None, step_scale
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
        lbfgs_two_loop(pg, s_hist, y_hist, rho, np.array(order, np.int64), d)
        if n_iter > 0:
            step = 1.0
        elif step_scale is not None:
            step = step_scale
        else:
            step = 1.0 / np.linalg.norm(d)
        w_new = np.empty(n)
        s = s_hist[free]
        for _ in range(MAX_LINESEARCH):
            dg = owlqn_trial_point(w, d, step, pg, w_new, s)
            f_smooth_new, g_new = objective(w_new)
            f_new = f_smooth_new + c1 * np.abs(w_new).sum()
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
        if progress.done(f, np.sqrt(owlqn_pseudo_gradient(w, g, c1, pg)), w):
            break
    end_scale = None
    if order:
        r = order[-1]
        end_scale = _blas.ddot(s_hist[r], y_hist[r]) / _blas.ddot(y_hist[r], y_hist[r])
    return w, n_iter, message, end_scale


def _check_result(n_iter, max_iter, rule_met, message):
    """The one place where an optimizer outcome is judged, with its warnings."""
    if rule_met:
        return
    if message is not None and n_iter < max_iter:
        warnings.warn(
            f"the solver stopped after {n_iter} iterations: {message}",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )
    elif n_iter >= max_iter:
        warnings.warn(
            f"the solver stopped after max_iter={max_iter} iterations before the "
            "stopping rule was met; increase max_iter or tol for a converged model",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )


def caller_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first frame outside
    this package and scikit-learn's ``fit`` wrapper (``sklearn/base.py``): the
    line of the caller's code that called ``fit``."""
    import sklearn.base

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    wrapper = os.path.abspath(sklearn.base.__file__)
    frame = sys._getframe(1)  # the caller of this function: level 1 for warn
    level = 1
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not (path.startswith(package) or path == wrapper):
            return level
        frame = frame.f_back
        level += 1
    return 1


# --------------------------------------------------------------------------
# OWL-QN's vector work: a few NumPy and BLAS passes per iteration
# --------------------------------------------------------------------------
#
# Written with NumPy and scipy's BLAS rather than as numba kernels: kernels
# would cost compile time at the first fit, and these passes are as fast (the
# masks are applied arithmetically: NumPy's masked selections are much slower
# on a random mask). The dot products and ``y += a·x`` go to scipy's BLAS
# (``ddot``, ``daxpy``); daxpy rounds ``a·x[i] + y[i]`` once (FMA) in its
# vector part and twice in its short tail. The solver runs on one thread: the
# results do not depend on the thread count.


def owlqn_pseudo_gradient(w, g, c1, out):
    """Fill ``out`` with the OWL-QN pseudo-gradient of f(w) + c1·‖w‖₁; returns
    its squared norm.

    ``g + c1·sign(w)`` where w is not 0; where it is, ``g`` shrunk towards 0 by
    c1 (0 inside [-c1, c1]): ``g - clip(g, -c1, c1)``, which is ``g + c1``,
    ``g - c1`` or 0 exactly. (Finite ``g``: the two cases are blended as
    ``x·1 + y·0``, exact, since NumPy's masked selections are ten times
    slower on a random mask.)
    """
    nonzero = w != 0.0
    np.clip(g, -c1, c1, out=out)
    np.subtract(g, out, out=out)
    np.multiply(out, ~nonzero, out=out)
    moved = np.copysign(c1, w)
    np.add(g, moved, out=moved)
    np.multiply(moved, nonzero, out=moved)
    np.add(out, moved, out=out)
    return float(_blas.ddot(out, out))


def lbfgs_two_loop(pg, s_hist, y_hist, rho, order, d):
    """OWL-QN's search direction: ``d = -H·pg`` by the L-BFGS two-loop recursion
    over the history rows ``order`` (oldest first) of ``s_hist``/``y_hist``
    (with ``rho = 1 / (s·y)``), scaled by ``s·y / y·y`` of the newest pair;
    then the components that do not descend (``d·pg >= 0``) are set to 0.
    ``d`` is written in place."""
    np.negative(pg, out=d)
    k = len(order)
    alphas = np.empty(k)
    for h in range(k - 1, -1, -1):
        r = order[h]
        a = rho[r] * _blas.ddot(s_hist[r], d)
        alphas[h] = a
        _axpy(-a, y_hist[r], d)
    if k > 0:
        r = order[k - 1]
        y = y_hist[r]
        d *= _blas.ddot(s_hist[r], y) / _blas.ddot(y, y)
    for h in range(k):
        r = order[h]
        b = alphas[h] - rho[r] * _blas.ddot(y_hist[r], d)
        _axpy(b, s_hist[r], d)
    _zero_where(d, d * pg >= 0.0)


def owlqn_trial_point(w, d, step, pg, w_new, s):
    """``w_new = w + step·d`` kept to the orthant of the step (sign of w, or of
    -pg where w is 0: a component that would cross it is set to 0) and
    ``s = w_new - w``. Returns ``pg·s``.
    """
    np.copyto(w_new, w)
    _axpy(step, d, w_new)
    # the orthant's sign: w, or -pg where w is 0 (w + (-pg)·[w == 0], exact)
    orthant = np.negative(pg)
    np.multiply(orthant, w == 0.0, out=orthant)
    np.add(orthant, w, out=orthant)
    np.multiply(orthant, w_new, out=orthant)
    _zero_where(w_new, orthant < 0.0)
    np.subtract(w_new, w, out=s)
    return float(_blas.ddot(pg, s))


def _zero_where(x, mask):
    """``x[mask] = 0.0`` for a finite ``x``, as ``x·[not mask] + 0.0`` (exact:
    ``x·1 = x``, and ``+ 0.0`` turns the -0.0 of a negative ``x·0`` into
    0.0), ten times faster than a masked assignment on a random mask."""
    np.multiply(x, ~mask, out=x)
    x += 0.0


def _axpy(a, x, y):
    """``y += a·x`` in place (BLAS ``daxpy``; ``y`` a contiguous float64 vector)."""
    out = _blas.daxpy(x, y, a=a)
    if out is not y:  # never for a contiguous float64 y; kept for safety
        y[:] = out
