"""The objective (NLL + L2) and its gradient: brute force and finite differences."""

import numpy as np
import pytest

from sklearn_crf._objective import CRFObjective

import _naive
from conftest import corpus_arrays, random_corpus


@pytest.mark.parametrize("c2", [0.0, 0.3])
@pytest.mark.parametrize("all_states", [False, True])
def test_loss_matches_brute_force(c2, all_states):
    X, y = random_corpus(1, n_seq=7)
    corpus, layout, labels = corpus_arrays(
        X, y, all_possible_states=all_states, all_possible_transitions=all_states
    )
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=3)
    w = rng.normal(size=layout.n_params)
    f, _ = obj(w)
    ref = _naive.objective(w, layout, corpus, labels, weights, 0.0, c2)
    assert f == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("c2", [0.0, 0.5])
def test_gradient_matches_finite_differences(c2):
    X, y = random_corpus(2, n_seq=6)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(1)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=2)
    w = rng.normal(size=layout.n_params)
    _, g = obj(w)
    eps = 1e-6
    directions = list(np.eye(len(w))[: min(len(w), 12)]) + [
        d / np.linalg.norm(d) for d in rng.normal(size=(4, len(w)))
    ]
    for d in directions:
        num = (obj(w + eps * d)[0] - obj(w - eps * d)[0]) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


def test_observed_counts_give_zero_gradient_at_data_optimum():
    """At w = 0 with one label, expected counts equal observed counts."""
    X = [[{"a": 1.0}, {"b": 2.0}], [{"a": 1.0}]]
    y = [["x", "x"], ["x"]]
    corpus, layout, labels = corpus_arrays(X, y)
    obj = CRFObjective(corpus, layout, labels, np.ones(2), c2=0.0, n_chunks=1)
    f, g = obj(np.zeros(layout.n_params))
    assert f == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(g, 0.0, atol=1e-12)
