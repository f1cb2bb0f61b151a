"""Named views of the weights (sklearn-crfsuite's formats) and training progress."""

import copy
import logging
import re

import numpy as np
import pytest

from sklearn_crf import CRFTagger

from conftest import random_corpus


def _dense_state_weights(crf):
    """(n_labels, n_attributes) state weights straight from coef_ and layout_."""
    layout = crf.layout_
    dense = np.zeros((layout.n_labels, len(crf.vectorizer_.feature_names_)))
    dense[layout.attr_label, layout.state_pairs()] = crf.coef_[: layout.n_state]
    return dense


@pytest.fixture(scope="module")
def l1_model():
    X, y = random_corpus(31, n_seq=40, max_len=8, n_words=30)
    y = [[f"L{k}" for k in seq] for seq in y]
    return CRFTagger(c1=1.0, c2=0.01, all_possible_transitions=True, n_jobs=1).fit(X, y)


def test_formats_and_values_match_coef(l1_model):
    crf = l1_model
    classes = crf.classes_.tolist()
    dense = _dense_state_weights(crf)
    names = crf.vectorizer_.feature_names_
    state = crf.state_features_
    assert isinstance(state, dict)
    for (attribute, label), weight in state.items():
        assert type(attribute) is str and type(label) is str and type(weight) is float
        assert dense[classes.index(label), names.index(attribute)] == weight
    trans = crf.transition_features_
    for (a, b), weight in trans.items():
        assert type(a) is str and type(b) is str and type(weight) is float
    for i, a in enumerate(classes):
        for j, b in enumerate(classes):
            assert crf.transition_matrix_[i, j] == trans.get((a, b), 0.0)


def test_only_non_zero_weights_are_listed(l1_model):
    crf = l1_model
    n_state = crf.layout_.n_state
    state_w = crf.coef_[:n_state]
    assert 0 < np.count_nonzero(state_w) < n_state  # L1 zeroed some weights
    assert len(crf.state_features_) == np.count_nonzero(state_w)
    assert 0.0 not in crf.state_features_.values()
    assert len(crf.transition_features_) == np.count_nonzero(crf.coef_[n_state:])
    # attributes_: those with a non-zero weight, in vectorizer order
    dense = _dense_state_weights(crf)
    names = crf.vectorizer_.feature_names_
    expected = [n for n, col in zip(names, dense.T) if np.any(col != 0)]
    assert crf.attributes_ == expected
    assert len(crf.attributes_) < len(names)
    assert {a for a, _ in crf.state_features_} == set(crf.attributes_)


def test_views_are_computed_not_stored(l1_model):
    for name in ("attributes_", "state_features_", "transition_features_"):
        assert name not in vars(l1_model)
    assert l1_model.state_features_ is not l1_model.state_features_


def test_labels_keep_their_type():
    X, y = random_corpus(32, n_seq=15)
    crf = CRFTagger(c2=0.1, n_jobs=1).fit(X, y)
    assert all(type(label) is int for _, label in crf.state_features_)
    assert all(type(a) is int and type(b) is int for a, b in crf.transition_features_)
    assert all(type(label) is int for label in crf.top_features())


def test_eli5_reads_them_like_sklearn_crfsuite(l1_model):
    # what eli5.sklearn_crfsuite.explain_weights does with a CRF (without eli5)
    crf = l1_model
    attr_index = {name: i for i, name in enumerate(crf.attributes_)}
    class_index = {label: i for i, label in enumerate(crf.classes_)}
    coef = np.zeros((len(crf.classes_), len(crf.attributes_)))
    for (attribute, label), weight in crf.state_features_.items():
        coef[class_index[label], attr_index[attribute]] = weight
    dense = _dense_state_weights(crf)
    names = crf.vectorizer_.feature_names_
    cols = [names.index(a) for a in crf.attributes_]
    np.testing.assert_array_equal(coef, dense[:, cols])
    trans = np.array([
        [crf.transition_features_.get((a, b), 0) for b in crf.classes_]
        for a in crf.classes_
    ])
    np.testing.assert_array_equal(trans, crf.transition_matrix_)


def test_eli5_explain_weights(l1_model):
    eli5 = pytest.importorskip("eli5")
    explain = pytest.importorskip("eli5.sklearn_crfsuite.explain_weights")
    eli5.explain_weights.register(CRFTagger, explain.explain_weights_sklearn_crfsuite)
    expl = eli5.explain_weights(l1_model, top=5)
    assert expl.error is None
    text = eli5.format_as_text(expl)
    for label in l1_model.classes_:
        assert label in text


def test_same_features_and_weights_as_sklearn_crfsuite(toy_ner):
    import sklearn_crfsuite  # in the test extra: never skipped
    X, y = toy_ner
    # with the zero values (title=False), which make features in both
    for c1 in (0.0, 0.5):
        ref = sklearn_crfsuite.CRF(
            c1=c1, c2=0.1, max_iterations=2000, epsilon=1e-10, delta=1e-10
        ).fit(X, y)
        crf = CRFTagger(c1=c1, c2=0.1, tol=1e-10, epsilon=1e-10, max_iter=2000, n_jobs=1).fit(X, y)
        assert crf.attributes_ == ref.attributes_
        assert crf.state_features_.keys() == ref.state_features_.keys()
        assert crf.transition_features_.keys() == ref.transition_features_.keys()
        for key, weight in ref.state_features_.items():
            assert crf.state_features_[key] == pytest.approx(weight, abs=1e-4)
        for key, weight in ref.transition_features_.items():
            assert crf.transition_features_[key] == pytest.approx(weight, abs=1e-4)


def test_top_features(l1_model):
    crf = l1_model
    state = crf.state_features_
    top = crf.top_features(n=3)
    assert list(top) == crf.classes_.tolist()
    for label, lists in top.items():
        mine = [(a, w) for (a, lab), w in state.items() if lab == label]
        pos = sorted((p for p in mine if p[1] > 0), key=lambda p: -p[1])[:3]
        neg = sorted((p for p in mine if p[1] < 0), key=lambda p: p[1])[:3]
        assert set(lists) == {"positive", "negative"}
        assert [w for _, w in lists["positive"]] == [w for _, w in pos]
        assert [w for _, w in lists["negative"]] == [w for _, w in neg]
        assert all(state[(a, label)] == w for a, w in lists["positive"] + lists["negative"])
    everything = crf.top_features(n=10**6)
    assert sum(len(v["positive"]) + len(v["negative"]) for v in everything.values()) == len(state)
    assert all(v == {"positive": [], "negative": []} for v in crf.top_features(n=0).values())
    for bad in (-1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="non-negative integer"):
            crf.top_features(n=bad)


# --- progress ----------------------------------------------------------------

LINE = re.compile(r"iter\s+(\d+)\s+loss (\S+)\s+\|grad\| (\S+)\s+(\S+)s")


@pytest.mark.parametrize("c1", [0.0, 0.1])  # L-BFGS-B and OWL-QN
def test_verbose_logs_each_iteration(toy_ner, caplog, capsys, c1):
    X, y = toy_ner
    caplog.set_level(logging.INFO, logger="sklearn_crf")
    crf = CRFTagger(c1=c1, c2=0.05, verbose=1, n_jobs=1).fit(X, y)
    lines = [
        r.getMessage() for r in caplog.records
        if r.name == "sklearn_crf" and r.levelno == logging.INFO
    ]
    parsed = [LINE.search(line) for line in lines]
    assert len(parsed) == crf.n_iter_ and all(parsed)
    assert [int(m.group(1)) for m in parsed] == list(range(1, crf.n_iter_ + 1))
    losses = np.array([float(m.group(2)) for m in parsed])
    np.testing.assert_allclose(losses, crf.loss_curve_, rtol=1e-6)
    assert all(float(m.group(3)) >= 0 for m in parsed)
    times = [float(m.group(4)) for m in parsed]
    assert times == sorted(times)
    assert crf.loss_curve_.shape == (crf.n_iter_,)
    assert np.all(np.diff(crf.loss_curve_) <= 1e-9 * abs(crf.loss_curve_[0]))
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # nothing printed


def test_quiet_by_default(toy_ner, caplog):
    caplog.set_level(logging.DEBUG, logger="sklearn_crf")
    crf = CRFTagger(c2=0.05, n_jobs=1).fit(*toy_ner)
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]
    assert crf.loss_curve_.shape == (crf.n_iter_,)  # recorded anyway


def test_no_names_to_list_with_hashed_attributes(l1_model):
    from sklearn_crf import SequenceVectorizer

    crf = copy.deepcopy(l1_model)
    crf.vectorizer_ = SequenceVectorizer(n_features=64).fit([[{"a": "b"}]])
    assert not hasattr(crf, "state_features_") and not hasattr(crf, "attributes_")
    with pytest.raises(AttributeError, match="hashed"):
        crf.top_features()
    assert crf.transition_features_ == l1_model.transition_features_
