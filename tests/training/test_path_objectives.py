"""The fits of a regularization path share their objectives
(:class:`~sklearn_crf._training.solvers.ObjectiveCache`) and get the fits
they would get alone, bit for bit."""

import numpy as np
import pytest

from sklearn_crf import CRFTagger
from sklearn_crf._features.validation import encode_labels
from sklearn_crf._training.fit import encode_training, solve, training_problem
from sklearn_crf._training.solvers import ObjectiveCache


def _data(rng, n=30):
    words = ["a", "b", "c", "d", "e"]
    X, y = [], []
    for _ in range(n):
        length = int(rng.integers(1, 6))
        X.append([{"w": str(rng.choice(words)), "v": float(rng.normal())}
                  for _ in range(length)])
        y.append([str(rng.choice(["O", "B-PER", "I-PER"])) for _ in range(length)])
    return X, y


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("partial", [False, True])
def test_a_shared_objective_gives_the_fit_of_a_fresh_one(n_jobs, partial):
    X, y = _data(np.random.default_rng(0))
    if partial:
        y[0] = [None] * len(y[0])
    vectorizer, corpus = encode_training(X, None)
    if partial:
        from sklearn_crf._features.validation import encode_partial_labels
        classes, labels, allowed = encode_partial_labels(y, corpus.seq_ptr)
    else:
        (classes, labels), allowed = encode_labels(y, corpus.seq_ptr), None
    base = CRFTagger(max_iter=15, n_jobs=n_jobs).get_params()
    problem = training_problem(base, vectorizer, corpus, classes, labels, None, allowed)
    cache = ObjectiveCache()
    w0 = np.zeros(problem.layout.n_params)
    for c1, c2 in [(0.5, 1.0), (0.1, 0.1), (0.0, 0.01)]:
        params = dict(base, c1=c1, c2=c2)
        shared = solve(params, problem, w0=w0, objectives=cache)
        alone = solve(params, problem, w0=w0)
        np.testing.assert_array_equal(shared.model.coef, alone.model.coef)
        np.testing.assert_array_equal(shared.result.losses, alone.result.losses)
        w0 = shared.model.coef
