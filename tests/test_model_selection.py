"""CRFTagger in scikit-learn's model selection tools, on a CoNLL-2002 subset."""

import warnings

import numpy as np
import pytest
import sklearn
from joblib import parallel_config
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    RandomizedSearchCV,
    cross_validate,
)
from sklearn.model_selection import cross_val_predict as sklearn_cross_val_predict
from sklearn.pipeline import make_pipeline

import sklearn_crf.model_selection
from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score, flat_accuracy_score, get_scorer
from sklearn_crf.model_selection import cross_val_predict

import _blocks
from conftest import random_corpus

N_SENTENCES = 150
# few iterations: these tests are about the plumbing, not the optimum
FAST = dict(c1=0.05, c2=0.05, max_iter=25, n_jobs=1)

pytestmark = pytest.mark.filterwarnings(
    "ignore:the solver stopped after:sklearn.exceptions.ConvergenceWarning"
)




@pytest.fixture(scope="module")
def conll():
    data = load_conll2002("train", n_sentences=N_SENTENCES)
    X = SequenceFeaturizer().transform(data.sentences)
    return data.sentences, X, data.tags


def scorers():
    return {
        "f1": get_scorer("entity_f1"),
        "precision": get_scorer("entity_precision"),
        "recall": get_scorer("entity_recall"),
        "flat_f1": get_scorer("flat_f1"),
        "acc": get_scorer("flat_accuracy"),
        "seq_acc": get_scorer("sequence_accuracy"),
    }


def test_cross_validate_with_sequence_scorers(conll):
    _, X, y = conll
    res = cross_validate(
        CRFTagger(**FAST), X, y, cv=3, scoring=scorers(), error_score="raise",
        return_estimator=True, return_indices=True,
    )
    for name in scorers():
        scores = res[f"test_{name}"]
        assert scores.shape == (3,) and scores.dtype == np.float64
        assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1))
    # the entity F1 scorer is entity_f1_score of the fold's predictions
    for est, test, f1 in zip(res["estimator"], res["indices"]["test"], res["test_f1"]):
        y_test = [y[i] for i in test]
        assert f1 == entity_f1_score(y_test, est.predict([X[i] for i in test]))


def test_scorers_give_numbers_when_no_entity_is_predicted(conll):
    # an untrained-looking model (1 iteration, strong L1) predicts only "O":
    # entity precision is ill-defined, and must come out as 0, not NaN
    _, X, y = conll
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = cross_validate(
            CRFTagger(c1=50.0, max_iter=1, n_jobs=1), X, y, cv=2,
            scoring=scorers(), error_score="raise",
        )
    for name in scorers():
        assert np.all(np.isfinite(res[f"test_{name}"]))


def test_default_score_is_token_accuracy(conll):
    _, X, y = conll
    crf = CRFTagger(**FAST).fit(X, y)
    assert crf.score(X, y) == flat_accuracy_score(y, crf.predict(X))
    res = cross_validate(
        CRFTagger(**FAST), X, y, cv=3, return_estimator=True, return_indices=True
    )
    for est, test, score in zip(res["estimator"], res["indices"]["test"], res["test_score"]):
        X_test, y_test = [X[i] for i in test], [y[i] for i in test]
        assert score == flat_accuracy_score(y_test, est.predict(X_test))


def test_pipeline_on_raw_tokens(conll):
    sentences, _, y = conll
    pipe = make_pipeline(SequenceFeaturizer(window=1), CRFTagger(**FAST))
    pipe.fit(sentences, y)
    pred = pipe.predict(sentences[:20])
    assert [len(p) for p in pred] == [len(s) for s in sentences[:20]]
    assert 0.8 < pipe.score(sentences, y) <= 1.0
    # Pipeline forwards predict and score only; marginals go through the steps
    marginals = pipe[-1].predict_marginals(pipe[:-1].transform(sentences[:2]))
    assert marginals[0][0].keys() == set(pipe[-1].classes_.tolist())


def test_grid_search_over_featurizer_and_crf_params(conll):
    sentences, _, y = conll
    pipe = make_pipeline(SequenceFeaturizer(window=1), CRFTagger(**FAST))
    grid = {"sequencefeaturizer__window": [0, 2], "crftagger__c1": [0.0, 0.1]}
    search = GridSearchCV(
        pipe, grid, cv=2, scoring=get_scorer("entity_f1"), error_score="raise"
    ).fit(sentences, y)
    assert set(search.best_params_) == set(grid)
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (4,) and np.all(np.isfinite(scores))
    best = search.best_estimator_
    assert best[0].window == search.best_params_["sequencefeaturizer__window"]
    assert best[-1].c1 == search.best_params_["crftagger__c1"]
    # the window reaches the CRF: more neighbours, more attributes
    narrow = make_pipeline(SequenceFeaturizer(window=0), CRFTagger(**FAST)).fit(sentences, y)
    wide = make_pipeline(SequenceFeaturizer(window=2), CRFTagger(**FAST)).fit(sentences, y)
    assert len(wide[-1].vectorizer_.feature_names_) > len(narrow[-1].vectorizer_.feature_names_)
    assert search.score(sentences, y) == entity_f1_score(y, search.predict(sentences))


def test_randomized_search_with_loguniform(conll):
    from scipy.stats import loguniform

    _, X, y = conll
    search = RandomizedSearchCV(
        CRFTagger(**FAST),
        {"c1": loguniform(1e-3, 1), "c2": loguniform(1e-3, 1)},
        n_iter=3, cv=2, scoring=get_scorer("entity_f1"), random_state=0,
        error_score="raise",
    ).fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert 1e-3 <= search.best_params_["c1"] <= 1


# --- warm starts -----------------------------------------------------------


def test_warm_start_with_a_new_c1_reaches_the_optimum_sooner():
    X, y = random_corpus(11, n_seq=40, max_len=8)
    cold = CRFTagger(c1=0.05, c2=0.01, tol=1e-7, n_jobs=1).fit(X, y)
    warm = CRFTagger(c1=0.2, c2=0.01, tol=1e-7, warm_start=True, n_jobs=1).fit(X, y)
    previous = warm.coef_.copy()
    warm.set_params(c1=0.05).fit(X, y)
    assert not np.array_equal(warm.coef_, previous)
    assert warm.loss_ == pytest.approx(cold.loss_, rel=1e-6)
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=2e-2)
    assert warm.n_iter_ < cold.n_iter_


def test_warm_start_with_more_iterations_continues():
    X, y = random_corpus(11, n_seq=40, max_len=8)
    cold = CRFTagger(c1=0.05, c2=0.01, tol=1e-7, n_jobs=1).fit(X, y)
    warm = CRFTagger(
        c1=0.05, c2=0.01, tol=1e-7, max_iter=cold.n_iter_ // 2, warm_start=True, n_jobs=1
    )
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        warm.fit(X, y)
    first_loss = warm.loss_
    assert first_loss > cold.loss_
    warm.set_params(max_iter=1000).fit(X, y)
    # the second fit starts where the first stopped, not from zero
    assert warm.loss_curve_[0] <= first_loss
    assert warm.loss_ == pytest.approx(cold.loss_, rel=1e-6)
    assert warm.n_iter_ < cold.n_iter_


def test_without_warm_start_a_refit_starts_from_zero():
    X, y = random_corpus(11, n_seq=40, max_len=8)
    crf = CRFTagger(c1=0.05, c2=0.01, tol=1e-7, n_jobs=1).fit(X, y)
    n_iter = crf.n_iter_
    crf.fit(X, y)
    assert crf.n_iter_ == n_iter


# --- sample weights through the searches ----------------------------------


def test_sample_weight_through_cross_validate_params(conll):
    _, X, y = conll
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(X))
    res = cross_validate(
        CRFTagger(**FAST), X, y, cv=KFold(2), params={"sample_weight": w},
        return_estimator=True, return_indices=True,
    )
    for est, train in zip(res["estimator"], res["indices"]["train"]):
        ref = CRFTagger(**FAST).fit(
            [X[i] for i in train], [y[i] for i in train], sample_weight=w[train]
        )
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        unweighted = CRFTagger(**FAST).fit([X[i] for i in train], [y[i] for i in train])
        assert not np.array_equal(est.coef_, unweighted.coef_)


def test_sample_weight_through_grid_search_fit_params(conll):
    _, X, y = conll
    w = np.random.default_rng(1).uniform(0.2, 3.0, len(X))
    search = GridSearchCV(
        CRFTagger(**FAST), {"c2": [0.05, 0.5]}, cv=2, scoring=get_scorer("entity_f1")
    ).fit(X, y, sample_weight=w)
    ref = CRFTagger(**{**FAST, **search.best_params_}).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_.coef_, ref.coef_)


def test_sample_weight_with_metadata_routing(conll):
    _, X, y = conll
    w = np.random.default_rng(2).uniform(0.2, 3.0, len(X))
    with sklearn.config_context(enable_metadata_routing=True):
        crf = CRFTagger(**FAST).set_fit_request(sample_weight=True)
        # the sequence scorers take one weight per sequence too
        scorer = get_scorer("entity_f1").set_score_request(sample_weight=True)
        res = cross_validate(
            crf, X, y, cv=KFold(2), params={"sample_weight": w},
            scoring=scorer, return_estimator=True, return_indices=True,
        )
        search = GridSearchCV(
            crf, {"c2": [0.05, 0.5]}, cv=2, scoring=scorer
        ).fit(X, y, sample_weight=w)
    est = res["estimator"][0]
    train, test = res["indices"]["train"][0], res["indices"]["test"][0]
    ref = CRFTagger(**FAST).fit(
        [X[i] for i in train], [y[i] for i in train], sample_weight=w[train]
    )
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert res["test_score"][0] == entity_f1_score(
        [y[i] for i in test], est.predict([X[i] for i in test]), sample_weight=w[test]
    )
    ref = CRFTagger(**{**FAST, **search.best_params_}).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_.coef_, ref.coef_)


# --- parallel searches and group splits -------------------------------------


def test_grid_search_in_parallel_processes(conll, tmp_path):
    _, X, y = conll
    X, y = X[:80], y[:80]
    grid = {"c1": [0.0, 0.1], "c2": [0.05, 1.0]}

    def search(n_jobs):
        return GridSearchCV(
            CRFTagger(**FAST), grid, cv=2, n_jobs=n_jobs,
            scoring=get_scorer("entity_f1"), error_score="raise",
        ).fit(X, y)

    with parallel_config(backend="loky", temp_folder=str(tmp_path)):
        parallel = search(-1)
    assert list(tmp_path.iterdir()) == []  # nothing was memory-mapped to disk
    serial = search(None)
    # every fit pickled to a worker process and back gives the same numbers
    np.testing.assert_array_equal(
        parallel.cv_results_["mean_test_score"], serial.cv_results_["mean_test_score"]
    )
    np.testing.assert_array_equal(parallel.best_estimator_.coef_, serial.best_estimator_.coef_)


def test_group_k_fold_by_document(conll):
    _, X, y = conll
    docs = load_conll2002("train", n_sentences=N_SENTENCES).documents
    assert docs[0] == 0 and len(np.unique(docs)) >= 4
    cv = GroupKFold(n_splits=3)
    res = cross_validate(
        CRFTagger(**FAST), X, y, groups=docs, cv=cv,
        scoring=get_scorer("entity_f1"), return_indices=True, error_score="raise",
    )
    for train, test in zip(res["indices"]["train"], res["indices"]["test"]):
        assert not set(docs[train]) & set(docs[test])  # no article on both sides
    assert np.all(np.isfinite(res["test_score"]))
    search = GridSearchCV(
        CRFTagger(**FAST), {"c1": [0.0, 0.1]}, cv=cv, scoring=get_scorer("entity_f1")
    ).fit(X, y, groups=docs)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


# --- the docs' sample-weight routes, as written ---------------------------

#: the docs' search, made small enough for a test (nothing else is changed)
DOCS_FASTER = {"n_iter=10": "n_iter=2", "n_jobs=-1": "n_jobs=1"}


def docs_model_selection_blocks():
    """The Python blocks of docs/user_guide/model_selection.rst, by what they do."""
    page = _blocks.REPO / "docs" / "user_guide" / "model_selection.rst"
    code = [b.code for b in _blocks.blocks(page) if b.language == "python"]
    (search,) = [c for c in code if "RandomizedSearchCV(" in c]
    (unrouted,) = [c for c in code if "crftagger__sample_weight=w" in c]
    (routed,) = [c for c in code if "set_score_request(sample_weight=True)" in c]
    return search, unrouted, routed


def test_docs_sample_weight_routes_work_as_written(monkeypatch):
    search_code, unrouted_code, routed_code = docs_model_selection_blocks()
    for old, new in DOCS_FASTER.items():
        assert old in search_code
        search_code = search_code.replace(old, new)
    monkeypatch.setenv("SKLEARN_CRF_MAX_SENTENCES", "80")
    ns = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the documented settings converge
        exec(search_code, ns)
    train = ns["train"]
    assert len(train.sentences) == 80
    X, y = train.sentences, train.tags

    # without routing: weighted fits
    exec(unrouted_code, ns)
    search, pipe, w = ns["search"], ns["pipe"], ns["w"]
    assert len(set(w)) > 2
    params = search.best_params_
    weighted = clone(pipe).set_params(**params).fit(X, y, crftagger__sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_[-1].coef_, weighted[-1].coef_)
    unweighted = clone(pipe).set_params(**params).fit(X, y)
    assert not np.array_equal(weighted[-1].coef_, unweighted[-1].coef_)

    # with metadata routing: weighted fits and weighted scores
    exec(routed_code, ns)
    search, cv_results = ns["routed_search"], ns["cv_results"]
    assert not sklearn.get_config()["enable_metadata_routing"]  # only inside the block
    train_idx, test_idx = next(KFold(3).split(X))
    X_test, y_test = [X[i] for i in test_idx], [y[i] for i in test_idx]

    def fold_0(**params):
        return clone(pipe).set_params(**params).fit(
            [X[i] for i in train_idx], [y[i] for i in train_idx],
            crftagger__sample_weight=w[train_idx],
        )

    y_hat = fold_0().predict(X_test)
    weighted_f1 = entity_f1_score(y_test, y_hat, sample_weight=w[test_idx])
    assert cv_results["test_score"][0] == weighted_f1
    assert weighted_f1 != entity_f1_score(y_test, y_hat)
    y_hat = fold_0(**search.cv_results_["params"][0]).predict(X_test)
    assert search.cv_results_["split0_test_score"][0] == entity_f1_score(
        y_test, y_hat, sample_weight=w[test_idx]
    )
    ref = clone(pipe).set_params(**search.best_params_)
    ref.fit(X, y, crftagger__sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_[-1].coef_, ref[-1].coef_)


# --- out-of-fold predictions ---------------------------------------------------


def _hand_written_oof(estimator, X, y, splits, method="predict", **fit_params):
    """Out-of-fold predictions by a plain loop over the folds."""
    out = [None] * len(X)
    for train, test in splits:
        weights = {k: v[train] for k, v in fit_params.items()}
        model = clone(estimator).fit(
            [X[i] for i in train], [y[i] for i in train], **weights
        )
        for i, p in zip(test, getattr(model, method)([X[i] for i in test])):
            out[i] = p
    return out


def test_cross_val_predict_equals_a_loop_over_the_folds(conll):
    _, X, y = conll
    w = np.random.default_rng(3).uniform(0.2, 3.0, len(X))
    splits = list(KFold(3).split(X))
    crf = CRFTagger(**FAST)
    oof = cross_val_predict(crf, X, y, cv=3)
    assert oof == _hand_written_oof(crf, X, y, splits)
    assert [len(p) for p in oof] == [len(t) for t in y]
    assert oof != y  # out of fold: not the training labels
    marginals = cross_val_predict(crf, X, y, cv=3, method="predict_marginals")
    assert marginals == _hand_written_oof(crf, X, y, splits, "predict_marginals")
    weighted = cross_val_predict(crf, X, y, cv=3, params={"sample_weight": w})
    assert weighted == _hand_written_oof(crf, X, y, splits, sample_weight=w)
    assert weighted != oof
    assert not hasattr(crf, "coef_")  # the estimator itself is never fitted


def test_cross_val_predict_group_k_fold_keeps_documents_together(conll):
    _, X, y = conll
    docs = load_conll2002("train", n_sentences=N_SENTENCES).documents
    cv = GroupKFold(n_splits=3)
    splits = list(cv.split(X, y, groups=docs))
    for train, test in splits:
        assert not set(docs[train]) & set(docs[test])
    oof = cross_val_predict(CRFTagger(**FAST), X, y, groups=docs, cv=cv)
    assert oof == _hand_written_oof(CRFTagger(**FAST), X, y, splits)
    assert oof != cross_val_predict(CRFTagger(**FAST), X, y, cv=3)
    # with metadata routing, groups (and fit parameters) go through params
    w = np.random.default_rng(4).uniform(0.2, 3.0, len(X))
    with sklearn.config_context(enable_metadata_routing=True):
        crf = CRFTagger(**FAST).set_fit_request(sample_weight=True)
        routed = cross_val_predict(
            crf, X, y, cv=cv, params={"groups": docs, "sample_weight": w}
        )
        with pytest.raises(ValueError, match=r"params=\{'groups': groups\}"):
            cross_val_predict(crf, X, y, groups=docs, cv=cv)
    assert routed == _hand_written_oof(CRFTagger(**FAST), X, y, splits, sample_weight=w)


def test_cross_val_predict_in_parallel_equals_serial(conll):
    _, X, y = conll
    X, y = X[:90], y[:90]
    serial = cross_val_predict(CRFTagger(**FAST), X, y, cv=3, n_jobs=1)
    assert cross_val_predict(CRFTagger(**FAST), X, y, cv=3, n_jobs=2) == serial
    assert cross_val_predict(
        CRFTagger(**FAST), X, y, cv=3, n_jobs=2, method="predict_marginals"
    ) == cross_val_predict(CRFTagger(**FAST), X, y, cv=3, method="predict_marginals")


def test_cross_val_predict_pipeline_on_raw_tokens(conll):
    sentences, X, y = conll
    pipe = make_pipeline(SequenceFeaturizer(), CRFTagger(**FAST))
    splits = list(KFold(3).split(sentences))
    oof = cross_val_predict(pipe, sentences, y, cv=3)
    assert oof == _hand_written_oof(pipe, sentences, y, splits)
    assert oof == cross_val_predict(CRFTagger(**FAST), X, y, cv=3)
    marginals = cross_val_predict(pipe, sentences, y, cv=3, method="predict_marginals")
    assert marginals == cross_val_predict(
        CRFTagger(**FAST), X, y, cv=3, method="predict_marginals"
    )
    w = np.arange(len(y)) % 3
    weighted = cross_val_predict(
        pipe, sentences, y, cv=3, params={"crftagger__sample_weight": w}
    )
    assert weighted == _hand_written_oof(
        pipe, sentences, y, splits, crftagger__sample_weight=w
    )


def test_cross_val_predict_docs_call():
    train = load_conll2002("train", n_sentences=N_SENTENCES)
    pipe = make_pipeline(SequenceFeaturizer(), CRFTagger(**FAST))
    # as in the docs' "Model selection" page
    oof = sklearn_crf.model_selection.cross_val_predict(
        pipe, train.sentences, train.tags, groups=train.documents, cv=GroupKFold(3)
    )
    splits = list(GroupKFold(3).split(train.sentences, groups=train.documents))
    assert oof == _hand_written_oof(pipe, train.sentences, train.tags, splits)


def test_cross_val_predict_rejects_a_cv_that_is_not_a_partition(conll):
    _, X, y = conll
    X, y = X[:6], y[:6]
    crf = CRFTagger(**FAST)
    half = ([0, 1, 2], [3, 4, 5])
    with pytest.raises(ValueError, match="not a partition: sequence 0 is in 0 test"):
        cross_val_predict(crf, X, y, cv=[half])
    overlapping = [half, ([0, 1, 2, 3], [4, 5, 0, 1, 2])]
    with pytest.raises(ValueError, match="sequence 4 is in 2 test folds"):
        cross_val_predict(crf, X, y, cv=overlapping)
    with pytest.raises(ValueError, match="test index 6, but there are 6 sequences"):
        cross_val_predict(crf, X, y, cv=[half, ([3, 4, 5], [0, 1, 2, 6])])
    with pytest.raises(ValueError, match="method must be one of"):
        cross_val_predict(crf, X, y, method="predict_proba")


def test_sklearn_cross_val_predict_fails_on_label_sequences(conll):
    # the reason for sklearn_crf.model_selection.cross_val_predict
    _, X, y = conll
    with pytest.raises(ValueError, match="inhomogeneous"):
        sklearn_cross_val_predict(CRFTagger(**FAST), X[:60], y[:60], cv=3)
