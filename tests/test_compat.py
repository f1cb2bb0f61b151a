"""sklearn_crf.CRF as a drop-in for sklearn_crfsuite.CRF.

The first part replays every behaviour that sklearn-crfsuite's own test suite
(tests/test_crf.py, tests/test_metrics.py, on its conftest's sequence)
exercises, with ``sklearn_crf`` imported instead; the rest compares with
``sklearn_crfsuite.CRF`` and python-crfsuite on the same data and checks the
translation of each parameter into CRFTagger's.
"""

import inspect
import itertools
import os
import pickle
import warnings

import numpy as np
import pycrfsuite
import pytest
import sklearn_crfsuite
import sklearn_crfsuite.metrics
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils import estimator_checks

from sklearn_crf import CRF, CRFTagger, SequenceFeaturizer, metrics, scorers
from sklearn_crf._compat import ALGORITHM_PARAMETERS, Tagger, TrainingLog
from sklearn_crf.metrics import LabelScore, crfsuite_holdout_report
from sklearn_crf.datasets import load_conll2002

ALGORITHMS = ["lbfgs", "l2sgd", "pa", "ap", "arow"]


def assert_learned(crf, xseq, yseq, algorithm):
    """sklearn-crfsuite's checks: exact, except for the averaged perceptron
    ("regularized too much" there, and here)."""
    if algorithm != "ap":
        assert crf.predict([xseq]) == [yseq]
        assert crf.score([xseq], [yseq]) == 1.0
    else:
        assert crf.score([xseq], [yseq]) > 0.8


@pytest.fixture()
def xseq():
    """sklearn-crfsuite's test sequence (its tests/conftest.py), bytes value included."""
    return [
        {"walk": 1, "shop": 0.5},
        {"walk": 1},
        {"walk": 1, "clean": 0.5},
        {"shop": 0.5, "clean": 0.5},
        {"walk": 0.5, "clean": 1},
        {"clean": 1, "shop": 0.1},
        {"walk": 1, "shop": 0.5},
        {},
        {"clean": 1},
        {"солнце": "не светит".encode("utf8"), "clean": 1},
    ]


@pytest.fixture()
def yseq():
    return ["sunny", "sunny", "sunny", "rainy", "rainy", "rainy",
            "sunny", "sunny", "rainy", "rainy"]


@pytest.fixture(scope="module")
def conll():
    """300 CoNLL-2002 training sentences and 150 of esp.testa, featurized."""
    featurizer = SequenceFeaturizer()
    train = load_conll2002("train", n_sentences=300)
    dev = load_conll2002("testa", n_sentences=150)
    return (featurizer.transform(train.sentences), train.tags,
            featurizer.transform(dev.sentences), dev.tags)


@pytest.fixture(scope="module")
def crfsuite_model(conll, tmp_path_factory):
    """sklearn_crfsuite.CRF fitted on the CoNLL subset with a development set,
    its model file kept at ``model_filename``."""
    X, y, X_dev, y_dev = conll
    path = str(tmp_path_factory.mktemp("crfsuite") / "skcrf.crfsuite")
    crf = sklearn_crfsuite.CRF(c1=0.05, c2=0.05, max_iterations=40, model_filename=path)
    crf.fit(X, y, X_dev, y_dev)
    return crf, path


# --------------------------------------------------------------------------
# sklearn-crfsuite's test suite, with sklearn_crf imported


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_crf(xseq, yseq, algorithm):
    crf = CRF(algorithm)
    crf.fit([xseq], [yseq])
    assert_learned(crf, xseq, yseq, algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("use_dev", [True, False])
def test_crf_verbose(xseq, yseq, algorithm, use_dev, caplog):
    crf = CRF(algorithm, verbose=True)
    X_dev, y_dev = ([xseq], [yseq]) if use_dev else (None, None)
    with caplog.at_level("INFO", logger="sklearn_crf"):
        crf.fit(X=[xseq, xseq], y=[yseq, yseq], X_dev=X_dev, y_dev=y_dev)
    assert_learned(crf, xseq, yseq, algorithm)
    messages = [r.getMessage() for r in caplog.records if r.name == "sklearn_crf"]
    assert any("loss" in m for m in messages)  # one line per iteration
    assert any("development set" in m for m in messages) == use_dev


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_crf_marginals(xseq, yseq, algorithm):
    crf = CRF(algorithm)
    crf.fit([xseq], [yseq])
    y_pred_marginals = crf.predict_marginals([xseq])
    assert len(y_pred_marginals) == 1
    marginals = y_pred_marginals[0]
    assert len(marginals) == len(yseq)
    labels = crf.tagger_.labels()
    for m in marginals:
        assert isinstance(m, dict)
        assert set(m.keys()) == set(labels)
        assert abs(sum(m.values()) - 1.0) < 1e-6


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_predict_without_fit(xseq, algorithm):
    crf = CRF(algorithm)
    with pytest.raises(NotFittedError):
        crf.predict([xseq])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_crf_score(xseq, yseq, algorithm):
    crf = CRF(algorithm)
    crf.fit([xseq], [yseq])
    assert_learned(crf, xseq, yseq, algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_crf_pickling(xseq, yseq, algorithm):
    crf = CRF(algorithm=algorithm)
    crf.fit([xseq], [yseq])
    crf2 = pickle.loads(pickle.dumps(crf, protocol=pickle.HIGHEST_PROTOCOL))
    assert_learned(crf2, xseq, yseq, algorithm)
    assert crf2.algorithm == algorithm
    assert crf2.predict_marginals([xseq]) == crf.predict_marginals([xseq])


def test_crf_model_filename(xseq, yseq, tmp_path):
    path = str(tmp_path / "foo.crfsuite")
    assert not os.path.exists(path)
    # the model file is created at the given location
    crf = CRF(model_filename=path)
    crf.fit([xseq], [yseq])
    assert os.path.exists(path)
    assert crf.modelfile.name == path
    # the model is usable given just the file name
    crf2 = CRF(model_filename=path)
    assert crf2.score([xseq], [yseq]) == 1.0
    # crf is picklable
    crf3 = pickle.loads(pickle.dumps(crf, protocol=pickle.HIGHEST_PROTOCOL))
    assert crf3.score([xseq], [yseq]) == 1.0


def test_cross_validation(xseq, yseq):
    scores = cross_val_score(CRF(), [xseq] * 20, [yseq] * 20, n_jobs=2, cv=5)
    assert scores.mean() == 1.0


def test_crf_dev_bad_arguments(xseq, yseq):
    crf = CRF()
    X, y = [xseq] * 20, [yseq] * 20
    with pytest.raises(ValueError, match="Pass both X_dev and y_dev"):
        crf.fit(X, y, X)
    with pytest.raises(ValueError, match="Pass both X_dev and y_dev"):
        crf.fit(X, y, y_dev=y)


def test_attributes(xseq, yseq):
    crf = CRF()
    assert crf.tagger_ is None
    assert crf.size_ is None
    assert crf.classes_ is None
    assert crf.num_attributes_ is None
    assert crf.attributes_ is None
    assert crf.state_features_ is None
    assert crf.transition_features_ is None
    assert crf.training_log_ is None
    assert crf.estimator_ is None

    crf.fit([xseq] * 20, [yseq] * 20)

    assert crf.tagger_ is not None
    assert crf.size_ > 1000
    assert set(crf.classes_) == {"sunny", "rainy"}
    assert crf.num_attributes_ > 0
    assert len(crf.attributes_) == crf.num_attributes_
    assert all(crf.attributes_)
    assert "clean" in crf.attributes_
    assert len(crf.state_features_) > 0
    assert all(isinstance(c, float) for c in crf.state_features_.values())
    assert all(
        attr in crf.attributes_ and label in crf.classes_
        for (attr, label) in crf.state_features_
    )
    assert len(crf.transition_features_) > 0
    assert all(isinstance(c, float) for c in crf.transition_features_.values())
    assert all(a in crf.classes_ and b in crf.classes_ for (a, b) in crf.transition_features_)


Y1 = [["x", "z", "y"], ["x", "x"]]
Y2 = [["y", "z", "y"], ["x", "y"]]


def test_flat_metrics_as_sklearn_crfsuite():
    assert metrics.flat_accuracy_score(Y1, Y2) == 3 / 5
    assert metrics.flat_precision_score(Y1, Y2, average="micro") == 3 / 5
    assert metrics.flat_recall_score(Y1, Y2, average="micro") == 3 / 5
    assert metrics.flat_f1_score(Y1, Y2, average="macro") == 2 / 3
    assert metrics.flat_fbeta_score(Y1, Y2, beta=1, average="macro") == 2 / 3
    assert metrics.flat_fbeta_score(Y1, Y2, 1, average="macro") == 2 / 3  # beta by position
    assert metrics.flat_classification_report(Y1, Y2, ["x", "y"]) == (
        sklearn_crfsuite.metrics.flat_classification_report(Y1, Y2, ["x", "y"])
    )
    s = [["x", "y"], ["x", "y"]]
    assert metrics.flat_f1_score(s, s, average="weighted") == 1.0


def test_sequence_accuracy_as_sklearn_crfsuite():
    assert metrics.sequence_accuracy_score(Y1, Y2) == 0
    assert metrics.sequence_accuracy_score([], []) == 0
    assert metrics.sequence_accuracy_score([[1, 2], [3], [4]], [[1, 2], [4], [4]]) == 2 / 3
    assert metrics.sequence_accuracy_score([[1, 2], [3]], [[1, 2], [3]]) == 1.0


# --------------------------------------------------------------------------
# the same interface as sklearn_crfsuite.CRF


def test_signature_is_sklearn_crfsuites():
    ours = inspect.signature(CRF)
    theirs = inspect.signature(sklearn_crfsuite.CRF)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]
    assert CRF().get_params() == sklearn_crfsuite.CRF().get_params()


def test_public_methods_and_attributes_are_sklearn_crfsuites():
    def public(cls):
        return {name for name in dir(cls) if not name.startswith("_")}

    missing = public(sklearn_crfsuite.CRF) - public(CRF)
    assert missing == set()


def test_predict_single_and_marginals_single(xseq, yseq):
    crf = CRF().fit([xseq], [yseq])
    assert crf.predict_single(xseq) == yseq
    assert crf.predict_marginals_single(xseq) == crf.predict_marginals([xseq])[0]
    assert crf.predict([[], xseq]) == [[], yseq]


def test_classes_attributes_and_size_as_sklearn_crfsuite(conll, crfsuite_model):
    X, y, _, _ = conll
    theirs, path = crfsuite_model
    ours = CRF(c1=0.05, c2=0.05, max_iterations=40).fit(X, y)
    assert isinstance(ours.classes_, list)
    assert ours.classes_ == sorted(theirs.classes_)
    names = ours.estimator_.vectorizer_.feature_names_
    attributes = set(ours.attributes_)
    assert ours.attributes_ == [a for a in names if a in attributes]
    assert ours.num_attributes_ == len(ours.attributes_)
    # loaded from sklearn-crfsuite's model file: the same model, attribute for attribute
    loaded = CRF(model_filename=path)
    assert loaded.attributes_ == theirs.attributes_
    assert loaded.num_attributes_ == theirs.num_attributes_
    assert loaded.size_ == theirs.size_ == os.path.getsize(path)
    assert loaded.state_features_.keys() == theirs.state_features_.keys()
    for key, weight in theirs.state_features_.items():
        assert abs(loaded.state_features_[key] - weight) <= 5e-7
    for key, weight in theirs.transition_features_.items():
        assert abs(loaded.transition_features_[key] - weight) <= 5e-7


def test_model_file_from_sklearn_crfsuite_tags_identically(conll, crfsuite_model):
    _, _, X_dev, _ = conll
    theirs, path = crfsuite_model
    ours = CRF(model_filename=path)
    assert ours.training_log_ is None
    assert ours.predict(X_dev) == [list(p) for p in theirs.predict(X_dev)]
    want = theirs.predict_marginals(X_dev)
    for got_seq, want_seq in zip(ours.predict_marginals(X_dev), want):
        for got, exp in zip(got_seq, want_seq):
            assert got.keys() == exp.keys()
            np.testing.assert_allclose(
                [got[k] for k in exp], [exp[k] for k in exp], rtol=0, atol=1e-12
            )


def test_model_file_written_is_read_by_sklearn_crfsuite(conll, tmp_path):
    X, y, X_dev, _ = conll
    path = str(tmp_path / "ours.crfsuite")
    ours = CRF(c1=0.1, c2=0.1, max_iterations=30, model_filename=path).fit(X, y)
    theirs = sklearn_crfsuite.CRF(model_filename=path)
    assert [list(p) for p in theirs.predict(X_dev)] == ours.predict(X_dev)
    assert sorted(theirs.classes_) == ours.classes_
    assert theirs.attributes_ == ours.attributes_
    assert theirs.size_ == ours.size_ == os.path.getsize(path)
    assert ours.training_log_.storing_seconds >= 0


def test_fit_is_crftaggers(conll):
    """CRF is a thin layer: its model is the CRFTagger of tagger_params()."""
    X, y, X_dev, _ = conll
    crf = CRF(c1=0.1, c2=0.05, max_iterations=20, all_possible_transitions=True)
    crf.fit(X, y)
    params = crf.tagger_params()
    assert params == {
        "solver": "lbfgs", "max_iter": 20, "all_possible_transitions": True,
        "c1": 0.1, "c2": 0.05, "tol": 1e-5,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tagger = CRFTagger(**params).fit(X, y)
    np.testing.assert_array_equal(crf.estimator_.coef_, tagger.coef_)
    assert crf.predict(X_dev) == tagger.predict(X_dev)
    assert crf.state_features_ == tagger.state_features_
    assert crf.transition_features_ == tagger.transition_features_


def test_close_to_sklearn_crfsuite_on_the_same_data(conll, crfsuite_model):
    X, y, X_dev, y_dev = conll
    theirs, _ = crfsuite_model
    ours = CRF(c1=0.05, c2=0.05, max_iterations=40).fit(X, y)
    flat_ours = [t for s in ours.predict(X_dev) for t in s]
    flat_theirs = [t for s in theirs.predict(X_dev) for t in s]
    agreement = np.mean([a == b for a, b in zip(flat_ours, flat_theirs)])
    assert agreement > 0.99
    assert abs(ours.score(X_dev, y_dev) - theirs.score(X_dev, y_dev)) < 0.01


def test_max_iterations_stops_silently(xseq, yseq):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        crf = CRF(max_iterations=2).fit([xseq], [yseq])
    assert crf.estimator_.n_iter_ == 2
    assert len(crf.training_log_.iterations) == 2


def test_labels_are_sorted_lists(xseq, yseq):
    crf = CRF().fit([xseq], [yseq])
    assert crf.classes_ == ["rainy", "sunny"]
    assert crf.tagger_.labels() == ["rainy", "sunny"]
    assert [list(m) for m in crf.predict_marginals_single(xseq)] == [["rainy", "sunny"]] * len(xseq)


# --------------------------------------------------------------------------
# tagger_: python-crfsuite's Tagger interface


def test_tagger_matches_pycrfsuite(conll, crfsuite_model):
    _, _, X_dev, _ = conll
    _, path = crfsuite_model
    ours = CRF(model_filename=path).tagger_
    assert isinstance(ours, Tagger)
    theirs = pycrfsuite.Tagger()
    theirs.open(path)
    assert ours.labels() == sorted(theirs.labels())
    for xseq in X_dev[:20]:
        assert ours.tag(xseq) == theirs.tag(xseq)
        for pos in range(len(xseq)):
            for label in ours.labels():
                assert abs(ours.marginal(label, pos) - theirs.marginal(label, pos)) < 1e-12
        tags = theirs.tag()
        assert ours.probability(tags) == pytest.approx(theirs.probability(tags), rel=1e-10)
        other = ["O"] * len(xseq)
        assert ours.probability(other) == pytest.approx(theirs.probability(other), rel=1e-10, abs=1e-300)
    theirs.close()


def test_tagger_is_one_object_and_keeps_the_current_sequence(xseq, yseq):
    crf = CRF().fit([xseq], [yseq])
    assert crf.tagger_ is crf.tagger_
    assert crf.tagger_.tag() == []  # nothing set yet, as python-crfsuite
    crf.tagger_.set(xseq)
    assert crf.tagger_.tag() == yseq
    total = sum(crf.tagger_.marginal(label, 0) for label in crf.tagger_.labels())
    assert total == pytest.approx(1.0)


def test_tagger_probability_over_all_paths(xseq, yseq):
    tagger = CRF(c2=1.0).fit([xseq], [yseq]).tagger_
    short = xseq[:5]
    tagger.set(short)
    paths = list(itertools.product(tagger.labels(), repeat=len(short)))
    probs = [tagger.probability(list(p)) for p in paths]
    assert sum(probs) == pytest.approx(1.0, abs=1e-12)
    assert list(paths[int(np.argmax(probs))]) == tagger.tag()
    for pos in range(len(short)):
        for label in tagger.labels():
            want = sum(q for p, q in zip(paths, probs) if p[pos] == label)
            assert tagger.marginal(label, pos) == pytest.approx(want, abs=1e-12)


def test_tagger_errors(xseq, yseq):
    tagger = CRF().fit([xseq], [yseq]).tagger_
    tagger.set(xseq)
    with pytest.raises(ValueError, match="not a label"):
        tagger.marginal("cloudy", 0)
    with pytest.raises(ValueError, match="out of range"):
        tagger.marginal("sunny", len(xseq))
    with pytest.raises(ValueError, match="out of range"):
        tagger.marginal("sunny", -1)
    with pytest.raises(ValueError, match="numbers of items and labels differ"):
        tagger.probability(yseq[:-1])
    with pytest.raises(ValueError, match="not a label"):
        tagger.probability(["cloudy"] * len(xseq))


# --------------------------------------------------------------------------
# training_log_ and the development set


def test_training_log_follows_the_fit(xseq, yseq):
    crf = CRF(c2=0.1).fit([xseq] * 3, [yseq] * 3)
    log = crf.training_log_
    assert isinstance(log, TrainingLog)
    model = crf.estimator_
    assert [it["num"] for it in log.iterations] == list(range(1, model.n_iter_ + 1))
    assert [it["loss"] for it in log.iterations] == model.loss_curve_.tolist()
    assert log.last_iteration is log.iterations[-1]
    assert log.last_iteration["feature_norm"] == pytest.approx(np.linalg.norm(model.coef_))
    assert log.last_iteration["active_features"] == np.count_nonzero(model.coef_)
    assert log.featgen_num_features == len(model.coef_)
    assert log.training_seconds > 0
    assert all(it["scores"] == {} for it in log.iterations)
    assert TrainingLog().last_iteration is None


def test_dev_evaluation_keys_are_sklearn_crfsuites(conll, crfsuite_model):
    X, y, X_dev, y_dev = conll
    theirs, _ = crfsuite_model
    ours = CRF(c1=0.05, c2=0.05, max_iterations=40).fit(X, y, X_dev, y_dev)
    last = ours.training_log_.last_iteration
    their_last = theirs.training_log_.last_iteration
    dev_keys = {"avg_precision", "avg_recall", "avg_f1", "item_accuracy",
                "item_accuracy_float", "instance_accuracy", "instance_accuracy_float"}
    assert dev_keys <= set(their_last) and dev_keys <= set(last)
    assert {"num", "loss", "scores", "feature_norm", "active_features"} <= set(their_last) & set(last)
    assert set(last["scores"]) == set(their_last["scores"])
    assert all(isinstance(s, LabelScore) for s in last["scores"].values())
    assert LabelScore._fields == tuple(next(iter(their_last["scores"].values()))._fields)


def test_dev_evaluation_is_crfsuites(conll, crfsuite_model):
    """CRFsuite's holdout report, recomputed from sklearn-crfsuite's own predictions."""
    _, _, X_dev, y_dev = conll
    theirs, _ = crfsuite_model
    want = theirs.training_log_.last_iteration
    got = crfsuite_holdout_report(y_dev, theirs.predict(X_dev), theirs.classes_, output_dict=True)
    for label, score in want["scores"].items():
        mine = got["scores"][label]
        assert mine[:3] == score[:3]
        for a, b in zip(mine[3:], score[3:]):
            assert (a is None and b is None) or abs(a - b) <= 5e-5
    for key in ("avg_precision", "avg_recall", "avg_f1"):
        assert got[key] == pytest.approx(want[key], abs=5e-7)
    for key in ("item_accuracy", "instance_accuracy"):
        assert got[key] == want[key]
        assert got[key + "_float"] == want[key + "_float"]


def test_dev_evaluation_of_the_fitted_model(conll):
    X, y, X_dev, y_dev = conll
    crf = CRF(c2=0.1, max_iterations=15).fit(X, y, X_dev=X_dev, y_dev=y_dev)
    got = crf.training_log_.last_iteration
    want = crfsuite_holdout_report(y_dev, crf.predict(X_dev), crf.classes_, output_dict=True)
    assert {k: got[k] for k in want} == want
    assert got["item_accuracy_float"] == crf.score(X_dev, y_dev)
    assert got["instance_accuracy_float"] == metrics.sequence_accuracy_score(
        y_dev, crf.predict(X_dev)
    )


def test_dev_evaluation_edge_cases():
    # a label never predicted nor present; a dev-only label; the macro average
    # divides by every label
    got = crfsuite_holdout_report(
        [["a", "b"], ["c"]], [["a", "a"], ["a"]], ["a", "b", "d"], output_dict=True
    )
    assert got["scores"]["a"] == LabelScore(1, 3, 1, 1 / 3, 1.0, 0.5)
    assert got["scores"]["b"] == LabelScore(0, 0, 1, 0.0, 0.0, 0.0)
    assert got["scores"]["d"] == LabelScore(0, 0, 0, None, None, None)
    assert got["scores"]["c"] == LabelScore(0, 0, 1, 0.0, 0.0, 0.0)
    assert got["avg_f1"] == pytest.approx(0.5 / 4)
    assert got["item_accuracy_float"] == 1 / 3
    assert got["instance_accuracy_float"] == 0.0


def test_dev_set_length_mismatch(xseq, yseq):
    with pytest.raises(ValueError, match="X_dev and y_dev"):
        CRF().fit([xseq], [yseq], [xseq, xseq], [yseq])


def test_failed_fit_keeps_the_model(xseq, yseq):
    crf = CRF().fit([xseq], [yseq])
    before = crf.estimator_
    with pytest.raises(ValueError):
        crf.fit([xseq], [yseq], X_dev=[xseq])
    with pytest.raises(ValueError):
        crf.set_params(num_memories=3).fit([xseq], [yseq[:-1]])
    assert crf.estimator_ is before
    assert crf.predict([xseq]) == [yseq]


# --------------------------------------------------------------------------
# parameters: translated, or a clear error


def test_lbfgs_defaults_are_crfsuites():
    params = CRF().tagger_params()
    assert params["solver"] == "lbfgs"
    assert params["tol"] == 1e-5  # CRFsuite's delta
    assert params["max_iter"] >= 10**6  # CRFsuite: no limit
    assert "c1" not in params and "c2" not in params  # CRFTagger's 0 and 1, CRFsuite's


@pytest.mark.parametrize("name, value, algorithm", [
    ("c1", 0.1, "ap"),
    ("pa_type", 1, "lbfgs"),
    ("calibration_eta", 0.2, "lbfgs"),
    ("variance", 2.0, "pa"),
    ("num_memories", 6, "l2sgd"),
])
def test_parameter_of_another_algorithm(name, value, algorithm):
    with pytest.raises(ValueError, match=f"algorithm='{algorithm}' has no parameter {name}"):
        CRF(algorithm=algorithm, **{name: value}).tagger_params()


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_memories=10), "num_memories=10 cannot be honoured"),
    (dict(period=5), "period=5 cannot be honoured"),
    (dict(linesearch="Backtracking"), "linesearch='Backtracking' cannot be honoured"),
    (dict(max_linesearch=50), "max_linesearch=50 cannot be honoured"),
    (dict(trainer_cls=pycrfsuite.Trainer), "trainer_cls=.* cannot be honoured"),
])
def test_parameter_that_cannot_be_honoured(kwargs, message, xseq, yseq):
    with pytest.raises(ValueError, match=message):
        CRF(**kwargs).fit([xseq], [yseq])


def test_fixed_lbfgs_parameters_at_crftaggers_values():
    CRF(num_memories=6, period=10, linesearch="MoreThuente", max_linesearch=20).tagger_params()
    # with L1, CRFsuite backtracks whatever linesearch says, and so does CRFTagger
    CRF(c1=0.1, linesearch="Backtracking").tagger_params()


def test_invalid_parameter_values():
    for kwargs in (dict(algorithm="sgd"), dict(c1=-1.0), dict(linesearch="Foo"),
                   dict(max_iterations=0), dict(pa_type=3)):
        with pytest.raises(ValueError):
            CRF(**kwargs).tagger_params()


def test_every_algorithm_parameter_is_translated():
    names = {p for p in inspect.signature(CRF).parameters}
    specific = {n for params in ALGORITHM_PARAMETERS.values() for n in params}
    handled = specific | {"algorithm", "min_freq", "all_possible_states",
                          "all_possible_transitions", "max_iterations", "verbose",
                          "model_filename", "keep_tempfiles", "trainer_cls"}
    assert names == handled


# --------------------------------------------------------------------------
# model files, pickling, cloning, searching


def test_keep_tempfiles_keeps_a_model_file(xseq, yseq):
    crf = CRF(keep_tempfiles=True).fit([xseq], [yseq])
    path = crf.modelfile.name
    try:
        assert crf.modelfile.auto and path.endswith(".crfsuite")
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        assert tagger.tag(xseq) == yseq
        tagger.close()
    finally:
        os.unlink(path)
    assert CRF().fit([xseq], [yseq]).modelfile.name is None


def test_model_filename_pickles_the_model(xseq, yseq, tmp_path):
    path = str(tmp_path / "m.crfsuite")
    crf = CRF(model_filename=path).fit([xseq], [yseq])
    data = pickle.dumps(crf)
    os.unlink(path)
    assert pickle.loads(data).predict([xseq]) == [yseq]


def test_unfitted_model_filename_loads_after_unpickling(xseq, yseq, tmp_path):
    path = str(tmp_path / "m.crfsuite")
    unfitted = pickle.dumps(CRF(model_filename=path))
    CRF(model_filename=path).fit([xseq], [yseq])
    assert pickle.loads(unfitted).predict([xseq]) == [yseq]


def test_missing_model_file(xseq):
    crf = CRF(model_filename="/nonexistent/model.crfsuite")
    with pytest.raises(OSError):
        crf.predict([xseq])
    with pytest.raises(OSError):
        crf.classes_


def test_clone_keeps_parameters_not_the_model(xseq, yseq, tmp_path):
    crf = CRF(algorithm="lbfgs", c2=0.5).fit([xseq], [yseq])
    copy = clone(crf)
    assert copy.get_params() == crf.get_params()
    assert copy.classes_ is None
    path = str(tmp_path / "m.crfsuite")
    CRF(model_filename=path).fit([xseq], [yseq])
    assert clone(CRF(model_filename=path)).predict([xseq]) == [yseq]


def test_search_as_in_the_sklearn_crfsuite_tutorial(conll):
    X, y, _, _ = conll
    X, y = X[:120], y[:120]
    crf = CRF(algorithm="lbfgs", max_iterations=10, all_possible_transitions=True)
    labels = sorted({t for s in y for t in s} - {"O"})
    f1_scorer = make_scorer(metrics.flat_f1_score, average="weighted", labels=labels)
    search = GridSearchCV(crf, {"c1": [0.05, 0.5], "c2": [0.05]}, cv=2, scoring=f1_scorer)
    search.fit(X, y)
    assert search.best_params_["c1"] in (0.05, 0.5)
    assert 0 < search.best_score_ <= 1
    assert search.best_estimator_.predict(X[:3]) == search.predict(X[:3])


def test_scorers_module(xseq, yseq):
    X, y = [xseq] * 6, [yseq] * 6
    for scorer in (scorers.flat_accuracy, scorers.sequence_accuracy):
        assert cross_val_score(CRF(), X, y, cv=3, scoring=scorer).tolist() == [1.0] * 3


# --------------------------------------------------------------------------
# the README's migration table, row by row


@pytest.mark.parametrize("kwargs, expected", [
    (dict(), dict(solver="lbfgs", max_iter=10**7, tol=1e-5)),
    (dict(algorithm="lbfgs", min_freq=0.5, all_possible_states=False,
          all_possible_transitions=False),
     dict(solver="lbfgs", max_iter=10**7, tol=1e-5, min_freq=0.5,
          all_possible_states=False, all_possible_transitions=False)),
    (dict(all_possible_states=True, all_possible_transitions=True),
     dict(solver="lbfgs", max_iter=10**7, tol=1e-5,
          all_possible_states=True, all_possible_transitions=True)),
    (dict(c1=0.1, c2=0.2, max_iterations=50, delta=1e-4),
     dict(solver="lbfgs", max_iter=50, tol=1e-4, c1=0.1, c2=0.2)),
    (dict(period=10, num_memories=6, linesearch="MoreThuente", max_linesearch=20),
     dict(solver="lbfgs", max_iter=10**7, tol=1e-5)),
    (dict(algorithm="l2sgd", c2=0.5, period=5, delta=1e-3, max_iterations=30,
          calibration_eta=0.2, calibration_rate=3.0, calibration_samples=50,
          calibration_candidates=4, calibration_max_trials=8),
     dict(solver="l2sgd", c2=0.5, period=5, delta=1e-3, max_iter=30,
          calibration_eta=0.2, calibration_rate=3.0, calibration_samples=50,
          calibration_candidates=4, calibration_max_trials=8)),
    (dict(algorithm="ap", epsilon=0.01), dict(solver="ap", epsilon=0.01)),
    (dict(epsilon=1e-4, min_freq=2, all_possible_states=True),
     dict(solver="lbfgs", max_iter=10**7, tol=1e-5, epsilon=1e-4, min_freq=2,
          all_possible_states=True)),
    (dict(algorithm="pa", epsilon=0.01, pa_type=2, c=0.5, error_sensitive=False,
          averaging=False),
     dict(solver="pa", epsilon=0.01, pa_type=2, c=0.5, error_sensitive=False,
          averaging=False)),
    (dict(algorithm="arow", epsilon=0.01, variance=2.0, gamma=0.5),
     dict(solver="arow", epsilon=0.01, variance=2.0, gamma=0.5)),
    (dict(verbose=True), dict(solver="lbfgs", max_iter=10**7, tol=1e-5, verbose=1)),
])
def test_migration_table_parameters(kwargs, expected):
    params = CRF(**kwargs).tagger_params()
    assert params == expected
    CRFTagger(**params)._validate_params()


@pytest.mark.parametrize("kwargs", [
    dict(min_freq=0.5),  # drops the pairs of zero-valued (False) attributes
    dict(min_freq=2),  # and the rare transitions
    dict(all_possible_transitions=True),
    dict(all_possible_states=True),
    dict(all_possible_states=True, all_possible_transitions=True, min_freq=3),
])
def test_feature_generation_as_sklearn_crfsuite(conll, kwargs):
    """min_freq and the all-possible switches make CRFsuite's feature set."""
    X, y, _, _ = conll
    X, y = X[:100], y[:100]
    ours = CRF(c2=0.1, max_iterations=3, **kwargs).fit(X, y)
    theirs = sklearn_crfsuite.CRF(c2=0.1, max_iterations=3, **kwargs).fit(X, y)
    assert ours.state_features_.keys() == theirs.state_features_.keys()
    assert ours.transition_features_.keys() == theirs.transition_features_.keys()
    assert ours.training_log_.featgen_num_features == theirs.training_log_.featgen_num_features


def test_fit_takes_iterables(xseq, yseq):
    """sklearn-crfsuite feeds X and y through zip: any iterables do."""
    crf = CRF().fit(iter([xseq, xseq]), (s for s in [yseq, yseq]),
                    X_dev=iter([xseq]), y_dev=iter([yseq]))
    assert crf.predict([xseq]) == [yseq]
    assert crf.training_log_.last_iteration["instance_accuracy_float"] == 1.0


@pytest.mark.parametrize("check", [
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
    "check_param_validation",
])
def test_sklearn_fit_free_checks(check):
    """The data-free checks of scikit-learn's estimator contract, as for CRFTagger."""
    getattr(estimator_checks, check)("CRF", CRF())
