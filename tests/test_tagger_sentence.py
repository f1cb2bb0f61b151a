"""Lists of feature dicts: ``predict(X)``, of one sentence or many, reads an
entry per item (those without one at an attribute without weights) in one
kernel call per range of sentences, and gives the labels of the general
route, for a fitted tagger and for one read from a CRFsuite file."""

import gc
import pickle

import numpy as np
import pytest

from sklearn_crf import CRFTagger, _engine, load_crfsuite, save_crfsuite
from sklearn_crf._tagger import _SINK_ATTR_PTRS, _sink_attr_ptr, _transitions


def _sentences(rng, n, n_words):
    out = []
    for _ in range(n):
        sentence = []
        for _ in range(int(rng.integers(0, 12))):
            word = f"w{rng.integers(n_words)}"
            sentence.append({
                "bias": 1.0, "w": word, "-1:w": f"w{rng.integers(n_words)}",
                "suf": word[-1:], "cap": bool(rng.integers(2)),  # often False: a zero
                "odd": int(rng.integers(2)), "tail": "x:" + word,
            })
        out.append(sentence)
    return out


@pytest.fixture(scope="module")
def taggers(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = _sentences(rng, 150, 40)
    y = [[("A", "B", "C")[len(tok["w"]) % 3 if tok["cap"] else 0] for tok in x] for x in X]
    fitted = CRFTagger(c1=0.05, c2=0.05, max_iter=200, all_possible_transitions=True).fit(X, y)
    path = tmp_path_factory.mktemp("crfsuite") / "model.crfsuite"
    save_crfsuite(fitted, path)
    # test sentences with words unseen in fit (80 words, 40 seen)
    return {"fitted": fitted, "loaded": load_crfsuite(path)}, _sentences(rng, 200, 80)


def _general_labels(crf, x):
    """The labels of the general one-call route: the EncodedCorpus of [x]."""
    corpus = crf._encode([x])
    return crf._labels(crf._best_paths(corpus, _transitions(crf.layout_, crf.coef_), 1),
                       corpus.seq_ptr)


@pytest.mark.parametrize("name", ["fitted", "loaded"])
def test_one_sentence_route_gives_the_general_labels(taggers, name):
    models, X = taggers
    crf = models[name]
    for x in X:
        assert crf._sink_labels([x]) is not None
        assert crf.predict([x]) == _general_labels(crf, x)
    assert [crf.predict([x])[0] for x in X] == crf._sink_labels(X) == crf.predict(X)


def _corpus_labels(crf, X):
    corpus = crf._encode(X)
    return crf._labels(crf._best_paths(corpus, _transitions(crf.layout_, crf.coef_), 1),
                       corpus.seq_ptr)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("n_sequences", [0, 1, 2, 1000])
def test_a_batch_gives_the_labels_of_its_corpus(taggers, n_jobs, n_sequences):
    """On one thread or on two (ranges of sequences), small and large."""
    models, X = taggers
    crf = pickle.loads(pickle.dumps(models["fitted"])).set_params(n_jobs=n_jobs)
    X = (X * 5)[:n_sequences]
    assert crf._sink_labels(X) == _corpus_labels(crf, X)


def test_a_batch_error_names_the_sequence_and_token(taggers):
    """A bad value met among a batch's misses names its place in X."""
    models, X = taggers
    crf = models["fitted"]
    bad = X * 3
    bad[400] = [X[0][0], dict(X[0][0], w=None)]
    with pytest.raises(TypeError, match=r"X\[400\]\[1\]\['w'\] is a NoneType"):
        crf.predict(bad)


def test_other_sentences_take_the_general_route(taggers):
    models, X = taggers
    crf = models["fitted"]
    x = [dict(X[1][0], odd=2.5), X[1][0]]  # a value other than 0 and 1
    assert crf._sink_labels([x]) is None
    assert crf._sink_labels(X + [x]) is None
    assert crf.predict([x]) == _general_labels(crf, x)
    assert crf.predict(X + [x]) == crf.predict(X) + crf.predict([x])
    with pytest.raises(TypeError, match=r"X\[0\]\[0\]\['w'\] is a NoneType"):
        crf.predict([[dict(X[1][0], w=None)]])


@pytest.mark.parametrize("name", ["fitted", "loaded"])
def test_the_sink_attribute_leaves_the_scores_bitwise(taggers, name):
    models, X = taggers
    crf = models[name]
    layout = crf.layout_
    attr_ptr = _sink_attr_ptr(layout)
    assert len(attr_ptr) == len(layout.attr_ptr) + 1 and attr_ptr[-1] == attr_ptr[-2]
    for x in X[:50]:
        entries = crf.vectorizer_._scoring_entries([x], len(attr_ptr) - 2).sunk(
            len(attr_ptr) - 2)
        corpus = crf._encode([x])
        np.testing.assert_array_equal(
            _engine.state_scores_sparse(crf.coef_, attr_ptr, layout.attr_label,
                                        *entries[:3], layout.n_labels),
            crf._scores(corpus))


def test_the_sink_attr_ptr_goes_with_its_layout(taggers):
    models, X = taggers
    crf = pickle.loads(pickle.dumps(models["fitted"]))
    crf.predict(X[:2])  # a batch of fewer entries than weights: the sink attribute
    key = id(crf.layout_)
    assert key in _SINK_ATTR_PTRS
    del crf
    gc.collect()
    assert key not in _SINK_ATTR_PTRS


def test_the_dense_weights_give_the_codes_of_the_parameter_vector(taggers, monkeypatch):
    """A batch with more entries than state weights reads the dense copy of
    the weights: the codes of the parameter vector's route; an in-place
    change of coef_ is seen; a copy beyond the byte budget is not made."""
    from sklearn_crf import _tagger

    models, X = taggers
    crf = pickle.loads(pickle.dumps(models["fitted"]))
    X = X * 5
    entries = crf.vectorizer_._scoring_entries(X, crf.layout_.n_attributes).sunk(
        crf.layout_.n_attributes)
    assert len(entries.tok_attr) >= crf.layout_.n_state
    trans = _transitions(crf.layout_, crf.coef_)
    sparse = _engine.unconstrained_best_paths(
        crf.coef_, _sink_attr_ptr(crf.layout_), crf.layout_.attr_label, *entries[:3],
        trans, entries.seq_ptr)
    np.testing.assert_array_equal(crf._best_paths(entries, trans, 1), sparse)
    np.testing.assert_array_equal(crf._best_paths(entries, trans, 2), sparse)
    assert _tagger._dense_state_weights(crf.layout_, crf.coef_) is not None
    crf.coef_[: crf.layout_.n_state] *= -1.0  # in place: the kept copy is stale
    flipped = _engine.unconstrained_best_paths(
        crf.coef_, _sink_attr_ptr(crf.layout_), crf.layout_.attr_label, *entries[:3],
        trans, entries.seq_ptr)
    assert not np.array_equal(flipped, sparse)
    np.testing.assert_array_equal(crf._best_paths(entries, trans, 1), flipped)
    monkeypatch.setattr(_tagger, "DENSE_WEIGHTS_BYTES", 8)
    assert _tagger._dense_state_weights(crf.layout_, crf.coef_) is None
    np.testing.assert_array_equal(crf._best_paths(entries, trans, 1), flipped)
