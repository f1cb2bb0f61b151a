import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from sklearn_crf import CRFTagger

import _naive
from conftest import random_corpus


def test_learns_toy_ner(toy_ner):
    X, y = toy_ner
    crf = CRFTagger(c1=0.01, c2=0.01).fit(X, y)
    assert crf.predict(X) == y
    assert crf.score(X, y) == 1.0
    assert crf.n_iter_ >= 1 and crf.loss_curve_.shape == (crf.n_iter_,)
    assert crf.loss_ == pytest.approx(crf.loss_curve_[-1])


@pytest.mark.parametrize("solver", ["lbfgs", "l-bfgs-b"])
def test_solvers_reach_the_same_optimum(toy_ner, solver):
    X, y = toy_ner
    ref = CRFTagger(c1=0.1, c2=0.05, tol=0, max_iter=2000).fit(X, y)
    crf = CRFTagger(c1=0.1, c2=0.05, tol=0, max_iter=2000, solver=solver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf.fit(X, y)
    assert crf.loss_ == pytest.approx(ref.loss_, rel=1e-6)
    np.testing.assert_allclose(crf.coef_, ref.coef_, atol=1e-3)


def test_predict_is_brute_force_argmax_of_the_weights():
    X, y = random_corpus(3, n_seq=12, max_len=5)
    crf = CRFTagger(c2=0.1, all_possible_transitions=True).fit(X, y)
    scores, seq_ptr = crf._state_scores(X)
    pred = crf.predict(X)
    marg = crf.predict_marginals(X)
    for s in range(len(X)):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            assert pred[s] == [] and marg[s] == []
            continue
        path, _ = _naive.best_path(scores[a:b], crf.transition_matrix_)
        assert pred[s] == [crf.classes_[k] for k in path]
        node, _ = _naive.marginals(scores[a:b], crf.transition_matrix_)
        got = np.array([[m[label] for label in crf.classes_] for m in marg[s]])
        np.testing.assert_allclose(got, node, rtol=1e-10)


def test_output_types_follow_the_labels():
    X = [[{"a": "x"}, {"a": "y"}], [{"a": "y"}]]
    for y in ([[1, 2], [2]], [["p", "q"], ["q"]]):
        crf = CRFTagger().fit(X, y)
        pred = crf.predict(X)
        assert isinstance(pred, list) and all(isinstance(p, list) for p in pred)
        assert type(pred[0][0]) is type(y[0][0])
        marg = crf.predict_marginals(X)
        assert set(marg[0][0]) == {y[0][0], y[0][1]}
        assert all(type(k) is type(y[0][0]) for k in marg[0][0])
        for seq in marg:
            for m in seq:
                assert sum(m.values()) == pytest.approx(1.0)


def test_single_label_and_empty_sequences():
    X = [[{"a": "x"}], [], [{"a": "y"}, {"b": 1.0}]]
    y = [["O"], [], ["O", "O"]]
    crf = CRFTagger().fit(X, y)
    assert crf.predict(X) == y
    assert crf.predict([]) == []
    assert crf.predict([[]]) == [[]]


def test_convergence_warning_and_n_iter():
    X, y = random_corpus(4, n_seq=20)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        crf = CRFTagger(max_iter=2, tol=0).fit(X, y)
    assert crf.n_iter_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        CRFTagger(max_iter=500, tol=1e-3).fit(X, y)


def test_all_possible_options_and_min_freq():
    X, y = random_corpus(5, n_seq=10)
    base = CRFTagger().fit(X, y)
    full = CRFTagger(all_possible_states=True, all_possible_transitions=True).fit(X, y)
    L = len(full.classes_)
    # every pair but those whose values sum to a negative number (CRFsuite's rule)
    X_pos = [[{k: abs(v) if isinstance(v, float) else v for k, v in tok.items()} for tok in seq]
             for seq in X]
    full = CRFTagger(all_possible_states=True, all_possible_transitions=True).fit(X_pos, y)
    assert full.layout_.n_params == len(full.vectorizer_.vocabulary_) * L + L * L
    assert base.layout_.n_params < full.layout_.n_params
    pruned = CRFTagger(min_freq=2).fit(X, y)
    assert pruned.layout_.n_state < base.layout_.n_state


def test_not_fitted():
    with pytest.raises(NotFittedError):
        CRFTagger().predict([[{"a": 1}]])


def test_sample_weight_equals_repetition():
    X, y = random_corpus(6, n_seq=8)
    w = np.array([1, 2, 1, 3, 1, 1, 2, 1], dtype=float)
    rep_X = [s for s, k in zip(X, w) for _ in range(int(k))]
    rep_y = [s for s, k in zip(y, w) for _ in range(int(k))]
    a = CRFTagger(c2=0.1, tol=0, max_iter=3000).fit(X, y, sample_weight=w)
    b = CRFTagger(c2=0.1, tol=0, max_iter=3000).fit(rep_X, rep_y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)


def test_warm_start_continues_from_previous_weights(toy_ner):
    X, y = toy_ner
    cold = CRFTagger(c2=0.5, tol=1e-7).fit(X, y)
    warm = CRFTagger(c2=1.0, tol=1e-7, warm_start=True).fit(X, y)
    warm.set_params(c2=0.5).fit(X, y)
    assert warm.loss_ == pytest.approx(cold.loss_, rel=1e-6)
    assert warm.n_iter_ < cold.n_iter_


def test_attributes_seen_only_with_value_zero_get_weights_as_in_crfsuite():
    X = [[{"digit": True, "w": "1"}, {"digit": False, "w": "a"}]]
    y = [["NUM", "WORD"]]
    crf = CRFTagger(c2=0.1).fit(X, y)
    names = crf.vectorizer_.feature_names_
    pairs = {(names[a], crf.classes_[k])
             for a, k in zip(crf.layout_.state_pairs(), crf.layout_.attr_label)}
    # ("digit", "WORD") exists although digit was 0 on the WORD token; its weight
    # learns from the NUM token, where the model must not predict WORD
    assert ("digit", "WORD") in pairs
    assert crf.state_features_[("digit", "WORD")] < 0
    assert CRFTagger(c2=0.1, min_freq=0.5).fit(X, y).state_features_.get(("digit", "WORD")) is None


def test_hashing_trains_predicts_and_warm_starts(toy_ner):
    X, y = toy_ner
    crf = CRFTagger(c2=0.05, hashing=4096, tol=1e-8).fit(X, y)
    assert crf.vectorizer_.n_attributes_ == len(crf.vectorizer_.hash_slots_) < 4096
    assert crf.score(X, y) == 1.0
    warm = CRFTagger(c2=0.1, hashing=4096, tol=1e-8, warm_start=True).fit(X, y)
    cold_iters = crf.n_iter_
    warm.set_params(c2=0.05).fit(X, y)
    assert warm.n_iter_ < cold_iters
    np.testing.assert_allclose(warm.coef_, crf.coef_, atol=1e-3)


def test_prediction_reads_the_transitions_from_coef(toy_ner):
    """Issue 10, item 4: coef_ is the one source of truth, transitions included."""
    X, y = toy_ner
    crf = CRFTagger(c2=0.1, all_possible_transitions=True).fit(X, y)
    layout = crf.layout_
    o = crf.classes_.tolist().index("O")
    k = np.flatnonzero((layout.trans_from == o) & (layout.trans_to == o))[0]
    crf.coef_ = crf.coef_.copy()
    crf.coef_[layout.n_state + k] = 50.0  # O → O now dominates
    assert crf.transition_matrix_[o, o] == 50.0
    scores, seq_ptr = crf._state_scores(X[:5])
    for s, pred in enumerate(crf.predict(X[:5])):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        path, _ = _naive.best_path(scores[a:b], crf.transition_matrix_)
        assert pred == [crf.classes_[c] for c in path]
    assert crf.predict(X[:5]) != y[:5]


def test_warm_refit_from_converged_weights_stops_at_once(toy_ner):
    """Issue 10, item 7: the gradient-norm test runs before the first iteration."""
    X, y = toy_ner
    for c1 in (0.0, 0.1):
        crf = CRFTagger(c1=c1, c2=0.1, tol=0, epsilon=1e-5, max_iter=1000,
                        warm_start=True).fit(X, y)
        assert 0 < crf.n_iter_ < 1000  # stopped by epsilon, not by max_iter or tol
        coef = crf.coef_
        crf.fit(X, y)
        assert crf.n_iter_ == 0 and crf.loss_curve_.shape == (0,)
        np.testing.assert_array_equal(crf.coef_, coef)


def test_epsilon_stops_when_the_gradient_is_small(toy_ner):
    X, y = toy_ner
    loose = CRFTagger(c2=0.1, tol=0, epsilon=1e-2).fit(X, y)
    tight = CRFTagger(c2=0.1, tol=0, epsilon=1e-7).fit(X, y)
    assert loose.n_iter_ < tight.n_iter_
    assert tight.loss_ <= loose.loss_


def test_hashing_model_scales_with_the_slots_seen():
    """Issue 10, item 8: 2**20 slots, 2 attributes: 2 * L + L * L parameters."""
    X = [[{"a": 1.0}, {"b": "x"}], [{"a": 2.0}]]
    y = [["P", "Q"], ["Q"]]
    crf = CRFTagger(hashing=2**20, all_possible_states=True, all_possible_transitions=True)
    crf.fit(X, y)
    assert crf.coef_.shape == (2 * 2 + 2 * 2,)
    assert len(pickle.dumps(crf)) < 20_000
    assert crf.predict(X) == crf.predict([[{"a": 1.0, "zzz": 1.0}, {"b": "x"}], [{"a": 2.0}]])


def test_convergence_warning_points_at_the_callers_line():
    """Issue 10, item 9: not at scikit-learn's fit wrapper."""
    X, y = random_corpus(4, n_seq=20)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        CRFTagger(max_iter=2, tol=0).fit(X, y)
    caught = [w for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(caught) == 1 and caught[0].filename == __file__


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_from_weights_builds_the_fitted_tagger_that_fit_built(toy_ner):
    """CRFTagger.from_weights on a fitted tagger's weights gives its predictions and weights."""
    import numpy as np

    from sklearn_crf._model.weights import TaggerWeights

    X, y = toy_ner
    crf = CRFTagger(c2=0.1, max_iter=30, tol=0).fit(X, y)
    layout = crf.layout_
    weights = TaggerWeights(
        classes=crf.classes_.tolist(), attributes=list(crf.vectorizer_.feature_names_),
        state_attr=layout.state_pairs().astype(np.int64),
        state_label=layout.attr_label.astype(np.int64),
        trans_from=layout.trans_from.astype(np.int64),
        trans_to=layout.trans_to.astype(np.int64), coef=crf.coef_,
    )
    rebuilt = CRFTagger.from_weights(weights, n_iter=crf.n_iter_, c2=0.1)
    assert rebuilt.get_params() == CRFTagger(c2=0.1).get_params()
    assert rebuilt.n_iter_ == crf.n_iter_
    assert rebuilt.predict(X) == crf.predict(X)
    assert rebuilt.state_features_ == crf.state_features_
    assert rebuilt.transition_features_ == crf.transition_features_
