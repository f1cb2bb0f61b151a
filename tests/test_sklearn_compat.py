"""CRFTagger keeps the scikit-learn estimator contract.

The checks of ``sklearn.utils.estimator_checks`` that need no data run as they
are; the ones that fit on 2-D arrays do not apply (X is a list of sequences of
feature dicts), so their sequence versions are written here.
"""

import copy

import joblib
import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, check_cv, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.utils import estimator_checks, estimator_html_repr
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted, get_tags

from sklearn_crf import CRFTagger, SequenceFeaturizer

from conftest import random_corpus

# the data-free checks of sklearn.utils.estimator_checks
FIT_FREE_CHECKS = [
    "check_estimator_cloneable",
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_mixin_order",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
    # fits with each invalid parameter value: the error comes before X is read
    "check_param_validation",
]


@pytest.mark.parametrize("check", FIT_FREE_CHECKS)
def test_sklearn_fit_free_checks(check):
    getattr(estimator_checks, check)("CRFTagger", CRFTagger())


def test_tags_describe_sequences_and_no_classifier():
    crf = CRFTagger()
    tags = get_tags(crf)
    assert tags.input_tags.two_d_array is False
    assert tags.target_tags.required is True
    assert tags.estimator_type is None
    assert not is_classifier(crf) and not is_regressor(crf)
    assert tags.requires_fit is True
    # a ragged y is never stratified: cv=k is KFold
    y = [["O"] * n for n in range(1, 10)]
    assert isinstance(check_cv(3, y, classifier=is_classifier(crf)), KFold)


def test_cross_validate_splits_with_kfold(toy_ner):
    X, y = toy_ner
    res = cross_validate(
        CRFTagger(c2=0.1, n_jobs=1), X, y, cv=3, return_indices=True,
        error_score="raise",
    )
    expected = list(KFold(3).split(X))
    for got, (_, test) in zip(res["indices"]["test"], expected):
        np.testing.assert_array_equal(got, test)
    assert np.all(np.isfinite(res["test_score"]))


@pytest.mark.parametrize(
    "params",
    [
        {"c1": -1.0},
        {"c2": "big"},
        {"solver": "sgd"},
        {"max_iter": 0},
        {"max_iter": 2.5},
        {"tol": -1e-3},
        {"min_freq": -1},
        {"all_possible_states": "yes"},
        {"all_possible_transitions": None},
        {"warm_start": 1.0},
        {"n_jobs": 0},
        {"n_jobs": 1.5},
        {"verbose": "loud"},
    ],
)
def test_invalid_parameters_raise_at_fit(toy_ner, params):
    crf = CRFTagger(**params)  # __init__ does not validate
    with pytest.raises(InvalidParameterError, match=f"'{next(iter(params))}' parameter"):
        crf.fit(*toy_ner)


@pytest.mark.parametrize(
    "method, args",
    [
        ("predict", ()),
        ("predict_marginals", ()),
        ("score", ([["O"]],)),
        ("top_features", None),
    ],
)
def test_not_fitted_error_before_fit(method, args):
    crf = CRFTagger()
    call_args = () if args is None else ([[{"a": 1.0}]], *args)
    with pytest.raises(NotFittedError):
        getattr(crf, method)(*call_args)


@pytest.mark.parametrize(
    "name", ["attributes_", "state_features_", "transition_features_"]
)
def test_fitted_properties_are_absent_before_fit(name):
    crf = CRFTagger()
    with pytest.raises(NotFittedError):
        getattr(crf, name)
    assert not hasattr(crf, name)  # NotFittedError is an AttributeError


def test_fit_returns_self_and_keeps_params(toy_ner):
    X, y = toy_ner
    crf = CRFTagger(c1=0.01, c2=0.05, max_iter=200, n_jobs=1)
    params = copy.deepcopy(crf.get_params())
    public = {k for k in vars(crf) if not k.startswith("_")}
    assert crf.fit(X, y) is crf
    assert joblib.hash(crf.get_params()) == joblib.hash(params)
    # fit sets only attributes ending in "_" (or private ones)
    added = {k for k in vars(crf) if not k.startswith("_")} - public
    assert added and all(k.endswith("_") for k in added)
    check_is_fitted(crf)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fitting_twice_gives_the_same_model(n_jobs):
    X, y = random_corpus(21, n_seq=25, max_len=6)
    crf = CRFTagger(c1=0.05, c2=0.1, max_iter=20, n_jobs=n_jobs)
    first = crf.fit(X, y).coef_.copy()
    curve = crf.loss_curve_.copy()
    pred = crf.predict(X)
    crf.fit(X, y)
    np.testing.assert_array_equal(crf.coef_, first)
    np.testing.assert_array_equal(crf.loss_curve_, curve)
    assert crf.predict(X) == pred
    other = CRFTagger(c1=0.05, c2=0.1, max_iter=20, n_jobs=n_jobs).fit(X, y)
    np.testing.assert_array_equal(other.coef_, first)


def test_clone_of_a_fitted_model_is_unfitted(toy_ner):
    crf = CRFTagger(c1=0.02, warm_start=True, n_jobs=1).fit(*toy_ner)
    copy_ = clone(crf)
    assert copy_.get_params() == crf.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(copy_)
    with pytest.raises(NotFittedError):
        copy_.predict(toy_ner[0])
    assert not any(k.endswith("_") for k in vars(copy_))


def test_predict_does_not_change_the_model(toy_ner):
    X, y = toy_ner
    crf = CRFTagger(c2=0.1, n_jobs=1).fit(X, y)
    before = joblib.hash(vars(crf))
    crf.predict(X)
    crf.predict_marginals(X)
    crf.score(X, y)
    crf.top_features()
    crf.state_features_
    assert joblib.hash(vars(crf)) == before


def test_predictions_do_not_depend_on_the_batch():
    X, y = random_corpus(22, n_seq=20, max_len=6)
    crf = CRFTagger(c2=0.1, all_possible_transitions=True, n_jobs=1).fit(X, y)
    pred = crf.predict(X)
    marg = crf.predict_marginals(X)
    order = np.random.default_rng(0).permutation(len(X))
    assert crf.predict([X[i] for i in order]) == [pred[i] for i in order]
    assert [crf.predict([x])[0] for x in X] == pred
    for i, m in zip(order, crf.predict_marginals([X[i] for i in order])):
        for got, want in zip(m, marg[i]):
            assert got.keys() == want.keys()
            np.testing.assert_allclose(list(got.values()), list(want.values()), rtol=1e-12)


def test_html_repr(toy_ner):
    crf = CRFTagger(c1=0.1, c2=0.05, n_jobs=1)
    html = estimator_html_repr(crf)
    assert "CRFTagger" in html and "c1" in html
    crf.fit(*toy_ner)
    assert "CRFTagger" in estimator_html_repr(crf)
    assert "CRFTagger" in crf._repr_html_()
    pipe = make_pipeline(SequenceFeaturizer(), CRFTagger())
    html = estimator_html_repr(pipe)
    assert "SequenceFeaturizer" in html and "CRFTagger" in html


def test_sample_weight_variants(toy_ner):
    X, y = toy_ner
    ref = CRFTagger(c2=0.1, n_jobs=1).fit(X, y)
    ones = CRFTagger(c2=0.1, n_jobs=1).fit(X, y, sample_weight=[1.0] * len(X))
    np.testing.assert_array_equal(ones.coef_, ref.coef_)
    w = np.linspace(0.5, 2.0, len(X))
    w_copy = w.copy()
    CRFTagger(c2=0.1, n_jobs=1).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(w, w_copy)  # not overwritten
    # a zero weight is the same as dropping the sequence
    w = np.ones(len(X))
    w[::3] = 0.0
    keep = np.flatnonzero(w)
    weighted = CRFTagger(c2=0.1, tol=1e-8, n_jobs=1).fit(X, y, sample_weight=w)
    dropped = CRFTagger(c2=0.1, tol=1e-8, n_jobs=1).fit(
        [X[i] for i in keep], [y[i] for i in keep]
    )
    # same features: every (attribute, label) of the dropped sequences also
    # occurs in the kept ones in this data set
    assert weighted.state_features_.keys() == dropped.state_features_.keys()
    for key, value in dropped.state_features_.items():
        assert weighted.state_features_[key] == pytest.approx(value, abs=1e-4)
    with pytest.raises(ValueError, match="one weight per sequence"):
        CRFTagger().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="finite and non-negative"):
        CRFTagger().fit(X, y, sample_weight=-np.ones(len(X)))
