"""CRFTaggerCV: the search of GridSearchCV over CRFTagger along a warm-started path."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold
from sklearn.pipeline import make_pipeline
from sklearn.utils import estimator_checks
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_crf import CRFTagger, CRFTaggerCV, SequenceFeaturizer, SequenceVectorizer
from sklearn_crf._cv import NOT_TAKEN
from sklearn_crf._training.path import fold_data, path_steps
from sklearn_crf.metrics import get_scorer

from test_sklearn_compat import FIT_FREE_CHECKS

#: a stopping rule tight enough that a cold fit and a warm-started fit stop at
#: the same optimum: losses equal to ~1e-12 relative, weights to ~1e-5 (two
#: runs of L-BFGS from different starts stop at different points near it; the
#: line search ends the tightest fits, hence the ConvergenceWarnings ignored)
TIGHT = dict(tol=1e-12, epsilon=1e-9, max_iter=5000)


def ner_corpus(seed, n_seq=90):
    """Sentences of words with IOB2 entity labels, every label in every fold."""
    rng = np.random.default_rng(seed)
    names = ["john", "mary", "paris", "berlin", "acme", "globex", "rome", "ann"]
    kinds = ["PER", "PER", "LOC", "LOC", "ORG", "ORG", "LOC", "PER"]
    words = ["visited", "likes", "met", "left", "the", "a", "and", "."]
    X, y = [], []
    for _ in range(n_seq):
        sent, tags = [], []
        for _ in range(int(rng.integers(3, 9))):
            if rng.random() < 0.3:
                k = int(rng.integers(len(names)))
                sent.append(names[k])
                # noise: a name is sometimes not an entity, so scores vary
                tags.append("O" if rng.random() < 0.15 else f"B-{kinds[k]}")
            else:
                sent.append(str(rng.choice(words)))
                tags.append("O")
        X.append([{"w": w, "title": w in names, "bias": 1.0} for w in sent])
        y.append(tags)
    return X, y


def mean_log_probability(estimator, X, y):
    """A continuous score (mean log-probability of the true labels): equal
    scores then mean equal models, not only equal predictions."""
    return float(np.mean(estimator.log_probability(X, y)))


def results_without_times(results):
    return {k: v for k, v in results.items() if "time" not in k}


def assert_same_results(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key == "params":
            assert a[key] == b[key]
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_same_search_as_grid_search_over_crftagger():
    X, y = ner_corpus(0)
    c1s, c2s = [0.0, 0.05, 0.5], [0.01, 0.1, 1.0]
    cv = KFold(3, shuffle=True, random_state=0)
    ours = CRFTaggerCV(c1s=c1s, c2s=c2s, cv=cv, scoring=mean_log_probability,
                       n_jobs=1, **TIGHT).fit(X, y)
    search = GridSearchCV(CRFTagger(n_jobs=1, **TIGHT), {"c1": c1s, "c2": c2s}, cv=cv,
                          scoring=mean_log_probability).fit(X, y)
    theirs = search.cv_results_
    for k in range(3):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"],
                                   theirs[f"split{k}_test_score"], rtol=1e-6)
    assert ours.cv_results_["params"] == theirs["params"]
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"],
                                  theirs["rank_test_score"])
    assert ours.best_params_ == search.best_params_
    assert ours.best_index_ == search.best_index_
    # and the path needed fewer iterations than the cold fits
    assert ours.cv_results_["mean_n_iter"].sum() < sum(
        CRFTagger(c1=p["c1"], c2=p["c2"], n_jobs=1, **TIGHT).fit(X, y).n_iter_
        for p in theirs["params"]
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_refit_is_crftagger_with_the_chosen_c1_c2():
    X, y = ner_corpus(1)
    cv_model = CRFTaggerCV(c1s=[0.0, 0.1], c2s=[0.01, 0.3], cv=3, scoring="entity_f1",
                           all_possible_transitions=True, n_jobs=1, **TIGHT).fit(X, y)
    single = CRFTagger(c1=cv_model.c1_, c2=cv_model.c2_, all_possible_transitions=True,
                       n_jobs=1, **TIGHT).fit(X, y)
    assert isinstance(cv_model, CRFTagger)
    assert (cv_model.c1_, cv_model.c2_) == (cv_model.best_params_["c1"],
                                           cv_model.best_params_["c2"])
    assert list(cv_model.classes_) == list(single.classes_)
    np.testing.assert_array_equal(cv_model.layout_.attr_ptr, single.layout_.attr_ptr)
    np.testing.assert_allclose(cv_model.loss_, single.loss_, rtol=1e-9)
    np.testing.assert_allclose(cv_model.coef_, single.coef_, atol=1e-5)
    assert cv_model.predict(X) == single.predict(X)
    assert cv_model.refit_time_ > 0


@pytest.mark.slow
def test_results_are_bitwise_the_same_for_any_n_jobs():
    X, y = ner_corpus(2, n_seq=120)
    fits = [CRFTaggerCV(c1s=[0.0, 0.1], c2s=3, cv=3, scoring="entity_f1",
                        n_jobs=n_jobs).fit(X, y) for n_jobs in (1, 2, 3)]
    for other in fits[1:]:
        assert_same_results(results_without_times(fits[0].cv_results_),
                            results_without_times(other.cv_results_))
        np.testing.assert_array_equal(fits[0].coef_, other.coef_)


def test_path_visits_c2_strong_to_weak_each_fit_from_the_one_before():
    c1s, c2s = [0.1, 0.0, 1.0], [0.01, 1.0]
    steps = path_steps(c1s, c2s)
    assert sorted((s.i, s.j) for s in steps) == [(i, j) for i in range(3) for j in range(2)]
    # strongest first, then down c2 row by row, along c1 back and forth
    assert [(c1s[s.i], c2s[s.j]) for s in steps] == [
        (1.0, 1.0), (0.1, 1.0), (0.0, 1.0), (0.0, 0.01), (0.1, 0.01), (1.0, 0.01)]
    assert steps[0].start is None
    for n, step in enumerate(steps[1:], 1):
        # each from the fit before it, a grid neighbour, never from a weaker c2
        source = steps[step.start]
        assert step.start == n - 1
        assert c2s[source.j] >= c2s[step.j]
        assert (source.i == step.i) != (source.j == step.j)


def test_fold_data_has_the_labels_of_its_training_sequences():
    X = [[{"w": "a"}], [{"w": "b"}, {"w": "c"}], [{"w": "d"}]]
    y = [["X"], ["Y", "Z"], ["X"]]
    corpus = SequenceVectorizer().fit_encode(X)
    labels = np.array([0, 1, 2, 0], dtype=np.int32)
    data = fold_data(corpus, labels, 3, np.array([0, 2]), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(data.classes, [0])
    np.testing.assert_array_equal(data.labels, [0, 0])
    np.testing.assert_array_equal(data.seq_weight, [1.0, 3.0])
    data = fold_data(corpus, np.array([0, 2, 1, 0], dtype=np.int32), 3, np.array([1]),
                     np.ones(3))
    np.testing.assert_array_equal(data.classes, [1, 2])
    np.testing.assert_array_equal(data.labels, [1, 0])
    assert data.corpus.n_sequences == 1 and data.corpus.n_attributes == 4
    assert len(y) == corpus.n_sequences


def test_a_label_missing_from_a_fold_is_not_predicted_by_its_model():
    X, y = ner_corpus(3, n_seq=30)
    X, y = X + [[{"w": "zz"}]], y + [["B-MISC"]]  # one B-MISC, in the last fold only
    model = CRFTaggerCV(c1s=[0.0], c2s=[0.1], cv=KFold(2), scoring="flat_accuracy").fit(X, y)
    assert "B-MISC" in model.classes_
    single = clone(CRFTagger(c2=0.1)).fit(X[:16], y[:16])
    assert "B-MISC" not in single.classes_
    np.testing.assert_allclose(
        model.cv_results_["split1_test_score"],
        [get_scorer("flat_accuracy")(single, X[16:], y[16:])], rtol=1e-6,
    )


def test_input_forms_give_the_same_search():
    X, y = ner_corpus(4, n_seq=40)
    params = dict(c1s=[0.0, 0.1], c2s=[0.1, 1.0], cv=3, scoring="entity_f1")
    dicts = CRFTaggerCV(**params).fit(X, y)
    encoded = CRFTaggerCV(**params).fit(SequenceVectorizer().fit_encode(X), y)
    assert_same_results(results_without_times(dicts.cv_results_),
                        results_without_times(encoded.cv_results_))
    np.testing.assert_array_equal(dicts.coef_, encoded.coef_)
    # raw tokens behind a featurizer in a Pipeline
    sentences = [[token["w"] for token in seq] for seq in X]
    featurizer = SequenceFeaturizer(output="encoded")
    pipe = make_pipeline(featurizer, CRFTaggerCV(**params)).fit(sentences, y)
    direct = CRFTaggerCV(**params).fit(SequenceFeaturizer().transform(sentences), y)
    assert_same_results(results_without_times(pipe[-1].cv_results_),
                        results_without_times(direct.cv_results_))
    assert pipe.predict(sentences[:3]) == direct.predict(
        SequenceFeaturizer().transform(sentences[:3]))


def test_dense_and_mixed_inputs():
    X, y = ner_corpus(5, n_seq=40)
    rng = np.random.default_rng(0)
    dense = [rng.normal(size=(len(seq), 3)) for seq in X]
    for X_form in (dense, list(zip(X, dense))):
        model = CRFTaggerCV(c1s=[0.0, 0.1], c2s=[0.1], cv=2, **TIGHT).fit(X_form, y)
        assert model.n_dense_features_ == 3
        single = CRFTagger(c1=model.c1_, c2=model.c2_, **TIGHT).fit(X_form, y)
        # the same optimum: equal losses; with L1 on dense features some
        # directions are flat, so the weights agree to less
        np.testing.assert_allclose(model.loss_, single.loss_, rtol=1e-9)
        np.testing.assert_allclose(model.coef_, single.coef_, atol=1e-4)
        assert len(model.predict(X_form[:2])) == 2


@pytest.mark.filterwarnings("ignore:The scoring .* does not support sample_weight")
def test_sample_weight_and_groups_reach_the_fits_and_the_splitter():
    X, y = ner_corpus(6, n_seq=30)
    weights = np.linspace(0.5, 2.0, len(X))
    groups = np.arange(len(X)) % 5
    cv = GroupKFold(3)
    params = dict(c1s=[0.0, 0.1], c2s=[0.1], scoring=mean_log_probability, **TIGHT)
    ours = CRFTaggerCV(cv=cv, **params).fit(X, y, sample_weight=weights, groups=groups)
    search = GridSearchCV(CRFTagger(**TIGHT), {"c1": [0.0, 0.1], "c2": [0.1]}, cv=cv,
                          scoring=mean_log_probability)
    search.fit(X, y, groups=groups, sample_weight=weights)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               search.cv_results_["mean_test_score"], rtol=1e-6)
    # the explicit splits of the groups give the same search
    splits = list(cv.split(X, y, groups))
    again = CRFTaggerCV(cv=splits, **params).fit(X, y, sample_weight=weights)
    assert_same_results(results_without_times(ours.cv_results_),
                        results_without_times(again.cv_results_))
    unweighted = CRFTaggerCV(cv=splits, **params).fit(X, y)
    assert not np.array_equal(unweighted.cv_results_["mean_test_score"],
                              ours.cv_results_["mean_test_score"])


def test_several_scores_and_refit_by_name():
    X, y = ner_corpus(7, n_seq=30)
    model = CRFTaggerCV(c1s=[0.0, 0.1], c2s=[0.1, 1.0], cv=2,
                        scoring={"f1": "entity_f1", "acc": get_scorer("flat_accuracy")},
                        refit="acc").fit(X, y)
    assert model.multimetric_
    for name in ("f1", "acc"):
        for key in (f"mean_test_{name}", f"std_test_{name}", f"rank_test_{name}",
                    f"split0_test_{name}", f"split1_test_{name}"):
            assert model.cv_results_[key].shape == (4,)
        assert model.scores_[name].shape == (2, 2, 2)
    assert model.best_index_ == int(np.argmax(model.cv_results_["mean_test_acc"]))
    assert model.best_score_ == model.cv_results_["mean_test_acc"][model.best_index_]
    np.testing.assert_allclose(model.scores_["acc"].mean(axis=0).ravel(),
                               model.cv_results_["mean_test_acc"])
    listed = CRFTaggerCV(c1s=[0.0], c2s=[1.0], cv=2, scoring=["entity_f1", "flat_f1"],
                         refit=False).fit(X, y)
    assert {"mean_test_entity_f1", "mean_test_flat_f1"} <= set(listed.cv_results_)
    assert not hasattr(listed, "best_index_")


def test_without_refit_the_search_is_kept_and_nothing_predicts():
    X, y = ner_corpus(8, n_seq=20)
    model = CRFTaggerCV(c1s=[0.0], c2s=[0.1, 1.0], cv=2, refit=False).fit(X, y)
    assert model.best_params_ in model.cv_results_["params"]
    assert not hasattr(model, "coef_")
    with pytest.raises(NotFittedError):
        model.predict(X)
    # a fit without refit after one with it leaves no tagger of the first
    model.set_params(refit=True).fit(X, y)
    model.set_params(refit=False, c2s=[0.5]).fit(X, y)
    assert not hasattr(model, "coef_") and len(model.cv_results_["params"]) == 1


def test_default_grids_are_log_spaced():
    X, y = ner_corpus(9, n_seq=20)
    model = CRFTaggerCV(c1s=2, c2s=3, cv=2).fit(X, y)
    np.testing.assert_allclose(model.c1s_, [0.01, 1.0])
    np.testing.assert_allclose(model.c2s_, [0.001, 0.031622776601683794, 1.0])
    assert len(model.cv_results_["params"]) == 6
    assert model.cv_results_["params"][1] == {"c1": 0.01, "c2": model.c2s_[1]}


@pytest.mark.parametrize("grid, message", [
    ([], "non-empty"),
    ([[0.1, 0.2]], "1-D"),
    ([0.1, -1.0], r"c1s\[1\] is -1.0"),
    ([0.1, float("nan")], "finite"),
    ([0.1, 0.1], "repeated"),
    (["big"], "non-negative numbers"),
])
def test_bad_grids_are_named(grid, message):
    X, y = ner_corpus(10, n_seq=10)
    with pytest.raises(ValueError, match=message):
        CRFTaggerCV(c1s=grid, cv=2).fit(X, y)


@pytest.mark.parametrize("params, error, message", [
    ({"c2s": 0}, InvalidParameterError, "c2s"),
    ({"scoring": "f1"}, ValueError, "not a valid sequence-labeling scorer name"),
    ({"scoring": ["entity_f1", 3]}, ValueError, "must hold scorer names"),
    ({"scoring": {}}, ValueError, "must map names"),
    ({"scoring": {"a": "entity_f1", "b": "flat_f1"}}, ValueError, "refit must be False"),
    ({"scoring": {"a": "entity_f1"}, "refit": "b"}, ValueError, "one of"),
    ({"scoring": "entity_f1", "refit": "entity_f1"}, ValueError, "names a score"),
    ({"solver": "ap"}, InvalidParameterError, "solver"),
])
def test_bad_scorers_and_parameters_are_named(params, error, message):
    X, y = ner_corpus(10, n_seq=10)
    with pytest.raises(error, match=message):
        CRFTaggerCV(cv=2, **params).fit(X, y)


def test_parameters_are_crftaggers_but_those_a_search_replaces():
    ours = inspect.signature(CRFTaggerCV).parameters
    theirs = inspect.signature(CRFTagger).parameters
    assert set(theirs) - set(ours) == set(NOT_TAKEN)
    for name in set(theirs) & set(ours):
        assert ours[name].default == theirs[name].default, name
    assert set(ours) - set(theirs) == {"c1s", "c2s", "cv", "scoring", "refit"}


@pytest.mark.parametrize("check", FIT_FREE_CHECKS)
def test_sklearn_fit_free_checks(check):
    getattr(estimator_checks, check)("CRFTaggerCV", CRFTaggerCV())


def test_clone_drops_the_search_and_pickles():
    import pickle

    X, y = ner_corpus(11, n_seq=20)
    model = CRFTaggerCV(c1s=[0.0], c2s=[0.1, 1.0], cv=2).fit(X, y)
    assert not hasattr(clone(model), "cv_results_")
    again = pickle.loads(pickle.dumps(model))
    assert again.predict(X) == model.predict(X)
    assert_same_results(again.cv_results_, model.cv_results_)


def test_convergence_warnings_of_the_path_are_shown():
    X, y = ner_corpus(12, n_seq=20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CRFTaggerCV(c1s=[0.0], c2s=[0.1], cv=2, max_iter=2, n_jobs=1).fit(X, y)
    assert any("max_iter=2" in str(w.message) for w in caught)


def test_fit_returns_self_keeps_params_and_refits_the_same():
    import copy

    import joblib
    from sklearn.utils.validation import check_is_fitted

    X, y = ner_corpus(13, n_seq=24)
    model = CRFTaggerCV(c1s=[0.0, 0.1], c2s=[0.1], cv=2, n_jobs=1)
    params = copy.deepcopy(model.get_params())
    public = {k for k in vars(model) if not k.startswith("_")}
    with pytest.raises(NotFittedError):
        model.predict(X)
    assert model.fit(X, y) is model
    assert joblib.hash(model.get_params()) == joblib.hash(params)
    added = {k for k in vars(model) if not k.startswith("_")} - public
    assert added and all(k.endswith("_") for k in added)
    check_is_fitted(model)
    coef, results = model.coef_.copy(), results_without_times(model.cv_results_)
    # (joblib.hash cannot hash masked arrays, GridSearchCV's param_<name> type)
    state = lambda: joblib.hash({k: v for k, v in vars(model).items() if k != "cv_results_"})
    before = state()
    model.predict(X)
    model.score(X, y)
    assert state() == before
    assert_same_results(results, results_without_times(model.cv_results_))
    model.fit(X, y)
    np.testing.assert_array_equal(model.coef_, coef)
    assert_same_results(results, results_without_times(model.cv_results_))
