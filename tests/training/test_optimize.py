"""The solvers: OWL-QN's kernels against NumPy twins, the split-weight L1
objective of L-BFGS-B, and a known L1 optimum."""

import numpy as np
import pytest

from sklearn_crf._training import optimize as _optimize
from sklearn_crf._training.objective import CRFObjective
from sklearn_crf._training.optimize import HISTORY, _owlqn, _Progress, split_l1

import _naive
from conftest import REPO, corpus_arrays, random_corpus


def _pseudo_gradient_numpy(w, g, c1):
    pg = g + c1 * np.sign(w)
    zero = w == 0
    gz = g[zero]
    pg[zero] = np.where(gz + c1 < 0, gz + c1, np.where(gz - c1 > 0, gz - c1, 0.0))
    return pg


def _two_loop_numpy(pg, pairs):
    """pairs: (s, y) oldest first."""
    d = -pg
    alphas = []
    for s, y in reversed(pairs):
        a = (s @ d) / (s @ y)
        d -= a * y
        alphas.append(a)
    if pairs:
        s, y = pairs[-1]
        d *= (s @ y) / (y @ y)
    for (s, y), a in zip(pairs, reversed(alphas)):
        d += (a - (y @ d) / (s @ y)) * s
    d[d * pg >= 0] = 0.0
    return d


def _sparse_vector(rng, n):
    v = rng.normal(size=n)
    v[rng.random(n) < 0.3] = 0.0
    return v


def test_pseudo_gradient_matches_numpy():
    rng = np.random.default_rng(0)
    w = _sparse_vector(rng, 500)
    g = rng.normal(size=500) * 0.2
    g[:5] = [0.1, -0.1, 0.05, 0.0, -0.3]
    w[:5] = 0.0
    out = np.empty(500)
    sq = _optimize.owlqn_pseudo_gradient(w, g, 0.1, out)
    want = _pseudo_gradient_numpy(w, g, 0.1)
    np.testing.assert_array_equal(out, want)
    assert sq == pytest.approx(want @ want, rel=1e-12)
    assert np.any(out[:5] == 0.0) and out[4] == pytest.approx(-0.2)


@pytest.mark.parametrize("k", [0, 1, 3, HISTORY])
def test_two_loop_matches_numpy(k):
    rng = np.random.default_rng(k)
    n = 300
    pairs = []
    for _ in range(k):
        s = rng.normal(size=n)
        y = s * rng.uniform(0.5, 2.0, size=n) + 0.01 * rng.normal(size=n)
        pairs.append((s, y))
    # the ring: rows in a scrambled order, one row free
    rows = rng.permutation(HISTORY + 1)[:k]
    s_hist = np.full((HISTORY + 1, n), np.nan)
    y_hist = np.full((HISTORY + 1, n), np.nan)
    rho = np.full(HISTORY + 1, np.nan)
    for r, (s, y) in zip(rows, pairs):
        s_hist[r], y_hist[r], rho[r] = s, y, 1.0 / (s @ y)
    pg = _sparse_vector(rng, n)
    d = np.empty(n)
    _optimize.lbfgs_two_loop(pg, s_hist, y_hist, rho, rows.astype(np.int64), d)
    np.testing.assert_allclose(d, _two_loop_numpy(pg, pairs), rtol=1e-10, atol=1e-12)
    assert np.all(d * pg <= 0)


def test_trial_point_keeps_to_the_orthant():
    rng = np.random.default_rng(3)
    n = 400
    w = _sparse_vector(rng, n)
    pg = _sparse_vector(rng, n)
    d = rng.normal(size=n) * 2
    d[d * pg >= 0] = 0.0
    w_new, s = np.empty(n), np.empty(n)
    dg = _optimize.owlqn_trial_point(w, d, 0.7, pg, w_new, s)
    orthant = np.where(w != 0, np.sign(w), -np.sign(pg))
    want = w + 0.7 * d
    want[np.sign(want) != orthant] = 0.0
    # the kernels may fuse w + step * d into one FMA: equal up to rounding
    np.testing.assert_allclose(w_new, want, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(w_new == 0, want == 0)
    np.testing.assert_allclose(s, want - w, rtol=1e-14, atol=1e-15)
    assert dg == pytest.approx(pg @ (want - w), rel=1e-12)


class _SeparableL1:
    """0.5·Σ a (w - b)² + c1·‖w‖₁, whose minimum is soft-thresholding."""

    def __init__(self, a, b, c1):
        self.a, self.b, self.c1 = a, b, c1

    def __call__(self, w):
        r = w - self.b
        return 0.5 * (self.a * r) @ r, self.a * r

    def optimum(self):
        return np.sign(self.b) * np.maximum(np.abs(self.b) - self.c1 / self.a, 0.0)


def test_owlqn_reaches_the_soft_thresholding_optimum():
    rng = np.random.default_rng(5)
    n = 2000
    problem = _SeparableL1(rng.uniform(0.5, 3.0, n), rng.normal(size=n), c1=0.4)
    want = problem.optimum()
    assert 0.2 < np.mean(want == 0) < 0.8
    w, n_iter, message, _ = _owlqn(problem, np.zeros(n), problem.c1, 500,
                                   _Progress(1e-14, 0))
    assert message is None and n_iter < 500
    np.testing.assert_allclose(w, want, atol=1e-6)
    assert np.array_equal(w == 0, want == 0)


def test_split_weights_objective_matches_brute_force_and_finite_differences():
    """L-BFGS-B's variable x = [w⁺, w⁻]: f(x) = objective(w⁺ - w⁻) + c1·Σ x."""
    c1, c2 = 0.3, 0.2
    X, y = random_corpus(2, n_seq=6)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(1)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=2)
    n = layout.n_params
    fun = split_l1(obj, c1, n)
    x = rng.uniform(0.1, 1.0, size=2 * n)  # away from the bounds
    w = x[:n] - x[n:]
    f, g = fun(x)
    assert f - c1 * x.sum() + c1 * np.abs(w).sum() == pytest.approx(
        _naive.objective(w, layout, corpus, labels, weights, c1, c2), rel=1e-10
    )
    eps = 1e-6
    directions = list(np.eye(2 * n)[:12]) + [
        d / np.linalg.norm(d) for d in rng.normal(size=(4, 2 * n))
    ]
    for d in directions:
        num = (fun(x + eps * d)[0] - fun(x - eps * d)[0]) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


# --------------------------------------------------------------------------
# verbose output
# --------------------------------------------------------------------------

_VERBOSE_FIT = """
import logging, sys, warnings
{setup}
warnings.simplefilter("ignore")
from sklearn_crf import CRFTagger
X = [[{{"w": "John"}}, {{"w": "runs"}}], [{{"w": "Mary"}}, {{"w": "sleeps"}}]]
y = [["PER", "O"], ["PER", "O"]]
crf = CRFTagger(max_iter=3, tol=0, verbose=1).fit(X, y)
logger = logging.getLogger("sklearn_crf")
print(crf.n_iter_, len(logger.handlers), logger.level)
"""


#: the logging set-ups of the children: none (a handler on stderr for the fit),
#: the user's handler at INFO, the user's handler at WARNING (lowered for the fit)
_SETUPS = {"unconfigured": "", "info": "logging.basicConfig(level=logging.INFO)",
           "warning": "logging.basicConfig()"}


@pytest.fixture(scope="module")
def verbose_fits():
    """``{set-up: (stdout words, the iteration lines of stderr)}`` of a verbose fit
    in a fresh process per logging set-up (the processes run at the same time)."""
    import os
    import subprocess
    import sys

    root = str(REPO)
    children = {
        name: subprocess.Popen(
            [sys.executable, "-c", _VERBOSE_FIT.format(setup=setup)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd=root, env=dict(os.environ, PYTHONPATH=root))
        for name, setup in _SETUPS.items()
    }
    fits = {}
    for name, child in children.items():
        stdout, stderr = child.communicate(timeout=300)
        assert child.returncode == 0, stderr[-2000:]
        fits[name] = stdout.split(), [line for line in stderr.splitlines() if "iter " in line]
    return fits


@pytest.mark.parametrize("setup", list(_SETUPS))
def test_verbose_shows_each_iteration_once_on_stderr(verbose_fits, setup):
    (n_iter, n_handlers, level), lines = verbose_fits[setup]
    assert n_iter == "3"
    assert [line.split("iter", 1)[1].split()[0] for line in lines] == ["1", "2", "3"]
    assert (n_handlers, level) == ("0", "0")  # the logger is left as it was


def test_warm_step_scale_adds_the_l2_term_to_the_curvature():
    # on f(w) = 0.5·a·w² + c2·w², a step s gives y = (a + 2·c2)·s: s·y / y·y = 1 / (a + 2·c2)
    a = 3.0
    scale = 1.0 / (a + 2 * 0.5)
    assert _optimize.warm_step_scale(scale, 0.5, 0.1) == pytest.approx(1.0 / (a + 2 * 0.1))
    assert _optimize.warm_step_scale(scale, 0.5, 0.5) == pytest.approx(scale)
    assert _optimize.warm_step_scale(scale, 0.5, -2.0) is None  # no positive curvature left
    assert _optimize.warm_step_scale(None, 0.5, 0.1) is None


class _CountingCalls:
    """An objective that records how many iterations had run at each call."""

    def __init__(self, objective, progress):
        self.objective, self.progress, self.calls = objective, progress, []

    def __call__(self, w):
        self.calls.append(len(self.progress.losses))
        return self.objective(w)


def test_a_warm_start_with_its_neighbours_step_scale_takes_a_full_first_step():
    """From a neighbour's optimum, CRFsuite's first step (length 1) is too long
    and the line search halves it; the neighbour's ``s·y / y·y`` gives a first
    step the line search accepts at once, to the same optimum."""
    rng = np.random.default_rng(7)
    n = 2000
    a, b = rng.uniform(20.0, 60.0, n), rng.normal(size=n) * 30
    first = _SeparableL1(a, b, c1=4.0)
    w_first, _, _, scale = _owlqn(first, np.zeros(n), first.c1, 500, _Progress(1e-14, 0))
    assert scale is not None and 1 / 60.0 <= scale <= 1 / 20.0
    second = _SeparableL1(a, b, c1=3.9)  # a near neighbour: a short way to go
    trials = {}
    for name, step_scale in (("crfsuite", None), ("scaled", scale)):
        progress = _Progress(1e-14, 0)
        counting = _CountingCalls(second, progress)
        w, n_iter, message, _ = _owlqn(counting, w_first, second.c1, 500, progress,
                                       step_scale)
        assert message is None and n_iter < 500
        np.testing.assert_allclose(w, second.optimum(), atol=1e-6)
        trials[name] = counting.calls.count(0) - 1  # the first iteration's line search
    assert trials["scaled"] == 1
    assert trials["crfsuite"] > 1
