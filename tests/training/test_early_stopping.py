"""Early stopping on a validation set: CRFTagger's validation parameters,
``fit(X_val=, y_val=)`` and the solvers' ValidationMonitor."""


import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.pipeline import Pipeline

import _naive
from conftest import random_corpus
from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf._training.optimize import ValidationMonitor
from sklearn_crf._tagger import VALIDATION_SCORERS
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score, flat_accuracy_score, get_scorer_names

pytestmark = pytest.mark.filterwarnings(
    "ignore:the solver stopped after:sklearn.exceptions.ConvergenceWarning"
)

#: small weights penalty: the validation score peaks and then declines
ES = dict(c2=0.01, early_stopping=True, n_iter_no_change=4, max_iter=200, n_jobs=1)


@pytest.fixture(scope="module")
def conll():
    featurizer = SequenceFeaturizer()
    train = load_conll2002("train", n_sentences=200)
    val = load_conll2002("testa", n_sentences=80)
    return (
        featurizer.transform(train.sentences), train.tags,
        featurizer.transform(val.sentences), val.tags,
        train.sentences, val.sentences,
    )


@pytest.mark.parametrize(
    "params",
    [
        dict(c1=0.0),  # L-BFGS-B
        dict(c1=0.05),  # OWL-QN
        dict(c1=0.05, solver="l-bfgs-b"),  # L-BFGS-B on split weights
        dict(c1=0.05, validation_scoring="entity_f1"),
    ],
    ids=["lbfgsb", "owlqn", "split", "entity_f1"],
)
def test_refit_to_best_iteration_gives_the_same_weights(conll, params):
    X, y, X_val, y_val = conll[:4]
    crf = CRFTagger(**ES, **params).fit(X, y, X_val=X_val, y_val=y_val)
    # it did stop early, n_iter_no_change iterations after the best
    assert crf.n_iter_ < ES["max_iter"]
    assert crf.n_iter_ - crf.best_iteration_ == ES["n_iter_no_change"]
    assert crf.validation_scores_.shape == (crf.n_iter_,)
    assert crf.best_iteration_ == np.argmax(crf.validation_scores_) + 1
    refit = CRFTagger(**{**ES, **params, "early_stopping": False}).set_params(
        max_iter=crf.best_iteration_
    )
    refit.fit(X, y)
    assert refit.n_iter_ == crf.best_iteration_
    np.testing.assert_array_equal(refit.coef_, crf.coef_)
    assert refit.loss_ == crf.loss_
    assert refit.validation_scores_ is None and refit.best_iteration_ is None


def test_entity_f1_scores_are_those_of_predict(conll):
    X, y, X_val, y_val = conll[:4]
    crf = CRFTagger(**ES, c1=0.05, validation_scoring="entity_f1")
    crf.fit(X, y, X_val=X_val, y_val=y_val)
    best = crf.validation_scores_[crf.best_iteration_ - 1]
    assert best == entity_f1_score(y_val, crf.predict(X_val), zero_division=0)


def test_validation_loss_is_the_nll_per_token_of_the_iterates():
    X, y = random_corpus(0, n_seq=8)
    X_val, y_val = random_corpus(1, n_seq=5)
    weights = np.linspace(0.5, 2.0, len(X))
    crf = CRFTagger(c2=0.1, max_iter=6, n_jobs=1)
    crf.fit(X, y, sample_weight=weights, X_val=X_val, y_val=y_val)
    assert crf.validation_scores_.shape == (crf.n_iter_,)
    corpus = crf.vectorizer_.encode(X_val)
    index = {label: i for i, label in enumerate(crf.classes_.tolist())}
    labels = np.array([index[label] for seq in y_val for label in seq])
    ones = np.ones(len(X_val))
    n_tokens = sum(map(len, y_val))
    for k in range(1, crf.n_iter_ + 1):
        w = clone(crf).set_params(max_iter=k).fit(X, y, sample_weight=weights).coef_
        nll = _naive.objective(w, crf.layout_, corpus, labels, ones, 0.0, 0.0)
        assert crf.validation_scores_[k - 1] == pytest.approx(-nll / n_tokens, rel=1e-10)


def test_validation_set_without_early_stopping_only_records(conll):
    X, y, X_val, y_val = conll[:4]
    params = dict(c1=0.05, c2=0.01, max_iter=30, n_jobs=1)
    crf = CRFTagger(**params).fit(X, y, X_val=X_val, y_val=y_val)
    plain = CRFTagger(**params).fit(X, y)
    np.testing.assert_array_equal(crf.coef_, plain.coef_)
    assert crf.n_iter_ == plain.n_iter_
    assert crf.validation_scores_.shape == (crf.n_iter_,)
    assert crf.best_iteration_ == np.argmax(crf.validation_scores_) + 1


def test_validation_fraction_sets_random_sequences_aside(conll):
    X, y = conll[:2]
    params = dict(ES, c1=0.05, validation_fraction=0.2, random_state=3)
    crf = CRFTagger(**params).fit(X, y)
    # the documented split: ceil(0.2 n) sequences drawn with random_state,
    # both parts in the input's order
    n = len(X)
    perm = np.random.RandomState(3).permutation(n)
    val = np.sort(perm[: int(np.ceil(0.2 * n))])
    train = np.sort(perm[int(np.ceil(0.2 * n)) :])
    explicit = CRFTagger(**params).fit(
        [X[i] for i in train], [y[i] for i in train],
        X_val=[X[i] for i in val], y_val=[y[i] for i in val],
    )
    np.testing.assert_array_equal(crf.validation_scores_, explicit.validation_scores_)
    np.testing.assert_array_equal(crf.coef_, explicit.coef_)
    other = CRFTagger(**{**params, "random_state": 4}).fit(X, y)
    assert not np.array_equal(other.validation_scores_[:3], crf.validation_scores_[:3])


def test_validation_fraction_keeps_each_parts_sample_weights():
    X, y = random_corpus(0, n_seq=12)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, len(X))
    params = dict(
        c2=0.1, early_stopping=True, validation_fraction=0.3, random_state=0,
        n_iter_no_change=50, max_iter=5, n_jobs=1,
    )
    crf = CRFTagger(**params).fit(X, y, sample_weight=weights)
    n = len(X)
    perm = np.random.RandomState(0).permutation(n)
    n_val = int(np.ceil(0.3 * n))
    val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    X_train, y_train = [X[i] for i in train], [y[i] for i in train]
    corpus = crf.vectorizer_.encode([X[i] for i in val])
    index = {label: i for i, label in enumerate(crf.classes_.tolist())}
    labels = np.array([index[label] for i in val for label in y[i]])
    lengths = np.diff(corpus.seq_ptr)
    plain = CRFTagger(c2=0.1, n_jobs=1)
    for k in range(1, crf.n_iter_ + 1):
        # the training part trains with its weights ...
        w = plain.set_params(max_iter=k).fit(X_train, y_train, sample_weight=weights[train]).coef_
        if k == crf.best_iteration_:
            np.testing.assert_array_equal(crf.coef_, w)
        # ... and the validation loss is weighted with the validation part's
        nll = _naive.objective(w, crf.layout_, corpus, labels, weights[val], 0.0, 0.0)
        expected = -nll / (weights[val] @ lengths)
        assert crf.validation_scores_[k - 1] == pytest.approx(expected, rel=1e-10)


def test_pipeline_routes_and_transforms_the_validation_set(conll):
    X, y, X_val, y_val, raw, raw_val = conll
    params = dict(ES, c1=0.05)
    direct = CRFTagger(**params).fit(X, y, X_val=X_val, y_val=y_val)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline(
            [
                ("features", SequenceFeaturizer()),
                ("crf", CRFTagger(**params).set_fit_request(X_val=True, y_val=True)),
            ],
            transform_input=["X_val"],
        )
        pipe.fit(raw, y, X_val=raw_val, y_val=y_val)
    np.testing.assert_array_equal(pipe[-1].validation_scores_, direct.validation_scores_)
    np.testing.assert_array_equal(pipe[-1].coef_, direct.coef_)


def test_x_val_without_y_val_is_an_error(conll):
    X, y, X_val, _ = conll[:4]
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        CRFTagger(**ES).fit(X, y, X_val=X_val)


def test_unseen_validation_label_with_the_loss_is_an_error():
    X = [[{"w": "a"}, {"w": "b"}]]
    y = [["A", "B"]]
    crf = CRFTagger(max_iter=3).fit(X, y)
    coef = crf.coef_.copy()
    with pytest.raises(ValueError, match="label 'C'"):
        crf.set_params(early_stopping=True).fit(X, y, X_val=X, y_val=[["A", "C"]])
    np.testing.assert_array_equal(crf.coef_, coef)  # the failed fit changed nothing
    # a scorer needs no loss: the label is just a wrong prediction
    crf.set_params(validation_scoring="flat_accuracy").fit(X, y, X_val=X, y_val=[["A", "C"]])
    assert crf.validation_scores_.max() == 0.5


def test_too_few_sequences_to_set_aside_is_an_error():
    X = [[{"w": "a"}]]
    with pytest.raises(ValueError, match="at least 2 sequences"):
        CRFTagger(early_stopping=True).fit(X, [["A"]])


def test_validation_scorers_are_the_shipped_scorers():
    assert sorted(VALIDATION_SCORERS) == get_scorer_names()


def test_monitor_stops_after_n_iter_no_change_and_keeps_the_best():
    scores = iter([1.0, 3.0, np.nan, 3.0, 2.0, 5.0])
    monitor = ValidationMonitor(lambda w: next(scores), n_iter_no_change=3)
    stops = [monitor(np.full(2, k)) for k in range(1, 6)]
    assert stops == [False, False, False, False, True]
    assert monitor.best_iteration == 2
    np.testing.assert_array_equal(monitor.best_w, [2.0, 2.0])
    recorder = ValidationMonitor(lambda w: float(w[0]))
    assert not any(recorder(np.full(1, -k)) for k in range(50))
    assert recorder.best_iteration == 1 and recorder.best_w is None


def test_validation_fraction_weights_the_scorer_too():
    X, y = random_corpus(2, n_seq=12)
    weights = np.random.default_rng(1).uniform(0.5, 2.0, len(X))
    params = dict(
        c2=0.1, early_stopping=True, validation_fraction=0.5, random_state=1,
        n_iter_no_change=50, max_iter=4, n_jobs=1, validation_scoring="flat_accuracy",
    )
    crf = CRFTagger(**params).fit(X, y, sample_weight=weights)
    perm = np.random.RandomState(1).permutation(len(X))
    val, train = np.sort(perm[:6]), np.sort(perm[6:])
    X_val, y_val = [X[i] for i in val], [y[i] for i in val]
    plain = CRFTagger(c2=0.1, n_jobs=1)
    for k in range(1, crf.n_iter_ + 1):
        plain.set_params(max_iter=k).fit(
            [X[i] for i in train], [y[i] for i in train], sample_weight=weights[train]
        )
        expected = flat_accuracy_score(y_val, plain.predict(X_val), sample_weight=weights[val])
        assert crf.validation_scores_[k - 1] == expected



@pytest.mark.parametrize("decoder", ["viterbi", "posterior"])
def test_validation_scores_what_predict_returns_under_constraints(decoder):
    # the data alternate A and B; the constraints allow no A -> B, so predict's
    # labels (constrained, under the tagger's decoder) are not the free
    # Viterbi labels: the recorded score of the kept weights must be predict's
    rng = np.random.default_rng(0)
    X, y = [], []
    for _ in range(60):
        n = int(rng.integers(2, 7))
        y.append(["A" if t % 2 == 0 else "B" for t in range(n)])
        X.append([{"w": lab, "r": str(rng.integers(3))} for lab in y[-1]])
    allowed = [("A", "A"), ("B", "A"), ("B", "B")]
    crf = CRFTagger(**ES, validation_scoring="flat_accuracy", decoder=decoder,
                    transition_constraints=allowed)
    crf.fit(X[:40], y[:40], X_val=X[40:], y_val=y[40:])
    predicted = crf.predict(X[40:])
    assert all(not (a == "A" and b == "B") for seq in predicted for a, b in zip(seq, seq[1:]))
    recorded = crf.validation_scores_[crf.best_iteration_ - 1]
    assert recorded == flat_accuracy_score(y[40:], predicted) < 1.0
