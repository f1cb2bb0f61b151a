"""One sentence at a time (issue 20, item 5): a sentence alone gives the bits
it has in a batch (one block and one thread instead of many), and costs no
thread set-up and no state on the estimator."""

import gc
import pickle

import numba
import numpy as np
import pytest

from sklearn_crf import CRFTagger, _tagger
from sklearn_crf._model import constraints as _constraints
from sklearn_crf._engine import driver
from sklearn_crf._engine import threads as _threads
from sklearn_crf._engine.threads import MIN_TOKENS_PER_THREAD, n_threads

from conftest import iob2_corpus


@pytest.fixture(scope="module")
def model():
    """An IOB2 tagger on two threads and 500 sentences."""
    X, y = iob2_corpus(3, n_seq=500)
    crf = CRFTagger(c2=0.1, max_iter=40, all_possible_transitions=True,
                    n_jobs=2).fit(X, y)
    return crf, X


@pytest.fixture
def served(model, monkeypatch):
    """The tagger, with blocks of 64 tokens and a thread per 100 tokens, so
    that the 500 sentences in one call make many blocks on two threads, and
    one sentence alone one block on the calling thread."""
    monkeypatch.setattr(driver, "BLOCK_TOKENS", 64)
    monkeypatch.setattr(_threads, "MIN_TOKENS_PER_THREAD", 100)
    crf, X = model
    assert len(driver.block_bounds(crf._problem(X, None).seq_ptr)) > 10
    with _threads.n_threads(crf.n_jobs, sum(map(len, X))) as n:
        assert n == 2
    return crf, X


def _alone(method, X, **kwargs):
    return [out for x in X for out in method([x], **kwargs)]


@pytest.mark.parametrize("constraints", [None, "IOB2"])
@pytest.mark.parametrize("decoder", ["viterbi", "posterior"])
def test_one_sentence_labels_are_the_batch_labels(served, constraints, decoder):
    crf, X = served
    crf = crf.set_params(transition_constraints=constraints, decoder=decoder)
    try:
        assert _alone(crf.predict, X) == crf.predict(X)
    finally:
        crf.set_params(transition_constraints=None, decoder="viterbi")


@pytest.mark.parametrize("constraints", [None, "IOB2"])
def test_one_sentence_marginals_are_the_batch_marginals_bitwise(served, constraints):
    crf, X = served
    crf.set_params(transition_constraints=constraints)
    try:
        batch = crf.predict_marginals(X, output="array")
        alone = _alone(crf.predict_marginals, X, output="array")
        for a, b in zip(alone, batch):
            np.testing.assert_array_equal(a, b)
        assert _alone(crf.predict_marginals, X[:50]) == crf.predict_marginals(X[:50])
    finally:
        crf.set_params(transition_constraints=None)


def test_one_sentence_nbest_is_the_batch_nbest_exactly(served):
    crf, X = served
    assert _alone(crf.predict_nbest, X, n=4) == crf.predict_nbest(X, n=4)


def test_one_sentence_with_allowed_labels_is_the_batch_result(served):
    crf, X = served
    allowed = [[None] * len(x) for x in X]
    for x, a in zip(X, allowed):
        if x:
            a[0] = {"O", "B-PER"}
    alone = [crf.predict([x], allowed=[a])[0] for x, a in zip(X, allowed)]
    assert alone == crf.predict(X, allowed=allowed)
    alone = [crf.predict_marginals([x], allowed=[a], output="array")[0]
             for x, a in zip(X, allowed)]
    for a, b in zip(alone, crf.predict_marginals(X, allowed=allowed, output="array")):
        np.testing.assert_array_equal(a, b)


def test_empty_and_one_token_sentences(model):
    crf, X = model
    assert crf.predict([[]]) == [[]]
    assert crf.predict_marginals([[]], output="array")[0].shape == (0, len(crf.classes_))
    assert crf.predict_nbest([[]], n=2) == [[([], 1.0)]]
    x = [X[0][0]]
    assert crf.predict([x]) == crf.predict([x] * 300)[:1]


def test_small_calls_ask_numba_nothing(model, monkeypatch):
    """No thread set-up for one sentence: the thread count is not even asked."""
    crf, X = model

    def refuse(*args):
        raise AssertionError("a small call asked for the thread count")

    monkeypatch.setattr(numba, "get_num_threads", refuse)
    with n_threads(None, MIN_TOKENS_PER_THREAD - 1) as n:
        assert n == 1
    crf.predict([X[0]])
    crf.predict_marginals([X[0]])
    crf.predict_nbest([X[0]], n=3)


def test_serving_changes_nothing_on_the_estimator(model):
    crf, X = model
    before = dict(crf.__dict__)
    crf.predict([X[1]])
    crf.predict_marginals([X[1]])
    crf.predict_nbest([X[1]])
    assert crf.__dict__.keys() == before.keys()
    assert all(crf.__dict__[k] is v for k, v in before.items())
    assert "_TRANSITIONS" not in pickle.dumps(crf).decode("latin-1")


def test_the_kept_transitions_follow_coef(model):
    """A new coef_, and an in-place change of coef_, are both seen."""
    crf, X = model
    crf = pickle.loads(pickle.dumps(crf))
    x = [X[2]]
    layout = crf.layout_
    o = crf.classes_.tolist().index("O")
    k = np.flatnonzero((layout.trans_from == o) & (layout.trans_to == o))[0]
    crf.predict(x)
    crf.coef_[layout.n_state + k] = 1e3  # in place: O -> O dominates
    assert crf.predict(x) == [["O"] * len(x[0])]
    crf.coef_ = crf.coef_.copy()
    crf.coef_[layout.n_state + k] = -1e3  # a new array: O -> O forbidden in effect
    labels = crf.predict(x)[0]
    assert not any(a == b == "O" for a, b in zip(labels[:-1], labels[1:]))
    np.testing.assert_array_equal(_tagger._transitions(layout, crf.coef_),
                                  crf.transition_matrix_)


def test_the_kept_transitions_go_with_their_coef(model):
    crf, X = model
    crf = pickle.loads(pickle.dumps(crf))
    crf.predict([X[0]])
    key = id(crf.coef_)
    assert key in _tagger._TRANSITIONS
    del crf
    gc.collect()
    assert key not in _tagger._TRANSITIONS


def test_cached_constraints_follow_the_spec_by_value():
    classes = ["B-PER", "I-PER", "O"]
    first = _constraints.cached_constraints("IOB2", classes)
    assert first is _constraints.cached_constraints("IOB2", list(classes))
    assert not first.transitions.flags.writeable
    expected = _constraints.build_constraints("IOB2", classes)
    for a, b in zip(first[:3], expected[:3]):
        np.testing.assert_array_equal(a, b)
    pairs = [("O", "O"), ("O", "B-PER")]
    masks = _constraints.cached_constraints(pairs, classes)
    assert masks.transitions.sum() == 2
    pairs.append(("B-PER", "I-PER"))  # changed in place: new masks
    assert _constraints.cached_constraints(pairs, classes).transitions.sum() == 3
    assert _constraints.cached_constraints(None, classes) is None


@pytest.mark.parametrize("spec, error, match", [
    ("IOB9", ValueError, "not a scheme name"),
    ([("O", "X")], ValueError, "names the label 'X'"),
    ([("O",)], ValueError, r"not a \(from_label, to_label\) pair"),
    (["OO"], ValueError, r"not a \(from_label, to_label\) pair"),
    (3, TypeError, "transition_constraints must be None"),
    ([({"O"}, "O")], ValueError, "names the label"),
    ([iter(("O", "O"))], ValueError, r"not a \(from_label, to_label\) pair"),
])
def test_cached_constraints_raise_what_build_constraints_raises(spec, error, match):
    with pytest.raises(error, match=match):
        _constraints.cached_constraints(spec, ["B-PER", "I-PER", "O"])


def test_compat_predict_single_is_the_batch_prediction():
    """sklearn-crfsuite's one-sequence methods of the CRF drop-in take the same path."""
    from sklearn_crf import CRF

    X, y = iob2_corpus(5, n_seq=300)
    crf = CRF(c1=0.0, c2=0.1, max_iterations=30).fit(X, y)
    assert [crf.predict_single(x) for x in X] == crf.predict(X)
    assert [crf.predict_marginals_single(x) for x in X[:40]] == crf.predict_marginals(X[:40])


# --------------------------------------------------------------------------
# raw tokens through a Pipeline: the featurizer's output is encoded from the
# tokens (FeatureDicts), with the answers of the feature dicts
# --------------------------------------------------------------------------

import warnings  # noqa: E402

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from sklearn_crf import (  # noqa: E402
    SequenceFeaturizer, SequenceVectorizer, TemplateFeaturizer, load_model, save_model,
)
from sklearn_crf._features import base as _base  # noqa: E402
from sklearn_crf._features.corpus import FeatureDicts  # noqa: E402
from sklearn_crf._features.memo import memo_items  # noqa: E402
from sklearn_crf._features.vocabulary import _DERIVED_MEMOS  # noqa: E402
from sklearn_crf.datasets import load_conll2002  # noqa: E402

FEATURIZERS = {
    "tutorial": SequenceFeaturizer(),
    "wide": SequenceFeaturizer(window=2, prefixes=(1, 3), shape=True, identity=True,
                               neighbor_features="all"),
    "bare": SequenceFeaturizer(window=0, bias=False, bos_eos=False, suffixes=(2,)),
    "templates": TemplateFeaturizer(),
}


@pytest.fixture(scope="module")
def ner():
    train = load_conll2002("train", n_sentences=300)
    test = load_conll2002("testb", n_sentences=120)
    return train, test


@pytest.fixture(scope="module", params=list(FEATURIZERS))
def pipelines(request, ner, tmp_path_factory):
    """A fitted Pipeline and its load_model copy."""
    train, _ = ner
    pipe = make_pipeline(clone(FEATURIZERS[request.param]),
                         CRFTagger(c2=0.1, max_iter=15, all_possible_transitions=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipe.fit(train.sentences, train.tags)
    path = tmp_path_factory.mktemp("serve") / "model.skcrf"
    save_model(pipe, path)
    return pipe, load_model(path)


def _dict_route(pipe, X):
    """The answers through the feature dicts, as a list."""
    return pipe[-1].predict(list(pipe[0].transform(X)))


def _sentences(test):
    # unseen words, a one-token sentence, repeats
    return [*test.sentences[:60], ["Zyxwv", "qqq", "Madrid"], ["Hola"], test.sentences[0]]


def test_pipeline_labels_are_the_dict_labels(pipelines, ner):
    _, test = ner
    X = _sentences(test)
    for pipe in pipelines:
        expected = _dict_route(pipe, X)
        assert pipe.predict(X) == expected
        assert [y for x in X for y in pipe.predict([x])] == expected
    assert pipelines[0].predict(X) == pipelines[1].predict(X)


def test_pipeline_marginals_are_the_dict_marginals_bitwise(pipelines, ner):
    _, test = ner
    X = _sentences(test)[:30]
    pipe, loaded = pipelines
    for p in (pipe, loaded):
        dicts = p[-1].predict_marginals(list(p[0].transform(X)), output="array")
        tagger, featurizer = p[-1], p[0]
        fast = tagger.predict_marginals(featurizer.transform(X), output="array")
        for a, b in zip(fast, dicts):
            np.testing.assert_array_equal(a, b)
        for x, b in zip(X, dicts):
            np.testing.assert_array_equal(
                tagger.predict_marginals(featurizer.transform([x]), output="array")[0], b)


@pytest.mark.parametrize("name", list(FEATURIZERS) + ["columns"])
def test_token_route_gives_the_corpus_of_the_dicts(name, ner):
    """The encoded corpus itself, every array, against a vocabulary fitted on
    the dicts: known and unknown words and columns, empty sentences."""
    train, test = ner
    if name == "columns":
        featurizer = SequenceFeaturizer(window=2, columns=("pos", None))
        data = [[(w, "N" if w.istitle() else "V", "x") for w in s] for s in train.sentences]
        X = data[:100] + [[], [("Nuevo", "Q", "x")]] + data[150:170]
    else:
        featurizer = clone(FEATURIZERS[name])
        data = train.sentences
        X = test.sentences[:50] + [[], ["Nuevo"], []] + train.sentences[:20]
    vectorizer = SequenceVectorizer().fit(list(featurizer.transform(data[:150])))
    for batch in (X, X[:1], [X[-1]], [[]]):
        fast = vectorizer.encode(featurizer.transform(batch))
        slow = vectorizer.encode(list(featurizer.transform(batch)))
        for field in ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr"):
            a, b = getattr(fast, field), getattr(slow, field)
            assert a.dtype == b.dtype, field
            np.testing.assert_array_equal(a, b, err_msg=field)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("hashing", [None, 256])
@pytest.mark.parametrize("name", list(FEATURIZERS) + ["columns"])
def test_fit_on_unread_feature_dicts_learns_from_the_tokens(name, hashing, ner):
    """A tagger fitted on a featurizer's output that nobody read (a Pipeline's
    fit) learns its vocabulary from the tokens, building no dict: the
    vectorizer's fitted state and the model of the fit on the dicts, bitwise.
    Dicts once read are fitted on as they are."""
    train, _ = ner
    if name == "columns":
        featurizer = SequenceFeaturizer(window=2, columns=("pos", None))
        X = [[(w, "N" if w.istitle() else "V", "x") for w in s] for s in train.sentences]
    else:
        featurizer = clone(FEATURIZERS[name])
        X = train.sentences
    X, y = X[:120] + [[]], train.tags[:120] + [[]]
    out = featurizer.transform(X)
    params = dict(c2=0.1, max_iter=5, hashing=hashing)
    tokens = CRFTagger(**params).fit(out, y)
    assert out._list is None  # no dict was built
    dicts = CRFTagger(**params).fit(list(featurizer.transform(X)), y)
    np.testing.assert_array_equal(tokens.coef_, dicts.coef_)
    state = sorted(k for k in vars(dicts.vectorizer_) if k.endswith("_") or k.startswith("_"))
    assert sorted(k for k in vars(tokens.vectorizer_)
                  if k.endswith("_") or k.startswith("_")) == state
    for key in state:
        a, b = getattr(tokens.vectorizer_, key), getattr(dicts.vectorizer_, key)
        if key == "_pair_ids":  # the tokens' memo holds every pair of the corpus
            assert dict(memo_items(b)).items() <= dict(memo_items(a)).items()
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b, key
    read = featurizer.transform(X)
    read[0][0].clear()  # read and changed in place: fitted on as it is
    changed = list(featurizer.transform(X))
    changed[0][0] = {}
    np.testing.assert_array_equal(CRFTagger(**params).fit(read, y).coef_,
                                  CRFTagger(**params).fit(changed, y).coef_)


def test_feature_dicts_behave_as_their_list(ner):
    _, test = ner
    X = test.sentences[:3]
    out = SequenceFeaturizer().transform(X)
    assert type(out) is FeatureDicts and len(out) == 3
    expected = [SequenceFeaturizer().transform([x])[0] for x in X]
    assert out == expected and expected == out
    assert out[1] == expected[1] and out[-2:] == expected[-2:]
    assert list(out) == expected and repr(out) == repr(expected)
    assert out + [] == expected and [] + out == expected
    copy = pickle.loads(pickle.dumps(out))
    assert type(copy) is list and copy == expected


def test_dicts_once_read_are_what_a_tagger_encodes(pipelines, ner):
    """Read (and changed in place) before the tagger sees them, the dicts are
    encoded as they are."""
    _, test = ner
    pipe = pipelines[0]
    x = test.sentences[5]
    out = pipe[0].transform([x])
    for token in out[0]:
        token.clear()
    assert pipe[-1].predict(out) == pipe[-1].predict([[{}] * len(x)])


def test_transform_checks_the_parameters_once(monkeypatch):
    calls = []
    validate = SequenceFeaturizer._validate_params
    monkeypatch.setattr(SequenceFeaturizer, "_validate_params",
                        lambda self: calls.append(1) or validate(self))
    featurizer = SequenceFeaturizer()
    for _ in range(3):
        featurizer.transform([["Hola", "Madrid"]])
    assert len(calls) == 1
    featurizer.set_params(window=2)
    assert "+2:word.lower()" in featurizer.transform([["a", "b", "c"]])[0][0]
    assert len(calls) == 2
    featurizer.suffixes = [3]  # a list changed in place is seen too
    featurizer.transform([["a"]])
    featurizer.suffixes.append(2)
    assert "word[-2:]" in featurizer.transform([["abc"]])[0][0]
    with pytest.raises(ValueError, match="prefixes"):
        featurizer.set_params(prefixes=(0,)).transform([["a"]])
    assert len(_base._PLANS) >= 1


def test_serving_a_pipeline_changes_nothing_on_it(pipelines, ner):
    _, test = ner
    for pipe in pipelines:
        before = [dict(step.__dict__) for _, step in pipe.steps]
        vectorizer = dict(pipe[-1].vectorizer_.__dict__)
        data = pickle.dumps(pipe)
        pipe.predict(test.sentences[:5])
        pipe.predict([test.sentences[7]])
        assert [step.__dict__ for _, step in pipe.steps] == before
        assert pipe[-1].vectorizer_.__dict__.keys() == vectorizer.keys()
        assert pickle.dumps(pipe) == data


def test_a_loaded_tagger_reads_dicts_as_the_fitted_one(pipelines, ner):
    """load_model's tagger (through from_weights: a memo of names only) gets a
    memo of (key, value) pairs at its first miss, outside its state; the same
    bits as the fitted tagger."""
    _, test = ner
    pipe, loaded = pipelines
    X = list(pipe[0].transform(test.sentences[:40]))
    vectorizer = loaded[-1].vectorizer_
    state = pickle.dumps(vectorizer)
    for x in X[:10]:
        np.testing.assert_array_equal(
            loaded[-1].predict_marginals([x], output="array")[0],
            pipe[-1].predict_marginals([x], output="array")[0])
    assert loaded[-1].predict(X) == pipe[-1].predict(X)
    assert pickle.dumps(vectorizer) == state
    if not isinstance(pipe[0], TemplateFeaturizer):  # str values: a derived memo
        pairs = vectorizer._pair_ids
        memo = _DERIVED_MEMOS.get(vectorizer, (pairs,), (len(vectorizer.vocabulary_),))
        assert memo is not None and memo is not pairs


def test_token_route_takes_a_hashing_vocabulary():
    X = [["Ana", "runs"], ["The", "end"], ["Ana", "ends"]]
    y = [["B-PER", "O"], ["O", "O"], ["B-PER", "O"]]
    pipe = make_pipeline(SequenceFeaturizer(), CRFTagger(c2=0.1, hashing=64)).fit(X, y)
    assert pipe.predict(X) == _dict_route(pipe, X)


@pytest.mark.parametrize("pipelines", ["tutorial", "wide", "bare"], indirect=True)
def test_word_table_starts_again_when_full(pipelines, ner, monkeypatch):
    from sklearn_crf._features import featurizer as _featurizer

    _, test = ner
    pipe = pipelines[1]  # TemplateFeaturizer has no word table
    monkeypatch.setattr(_featurizer, "_MAX_WORDS", 40)
    _featurizer._TOKEN_IDS.pop(pipe[-1].vectorizer_, None)
    X = test.sentences[:30]
    assert [y for x in X for y in pipe.predict([x])] == _dict_route(pipe, X)
    table, = _featurizer._TOKEN_IDS[pipe[-1].vectorizer_].values()
    assert table.n_rows <= 40 + 3


def test_threads_share_a_served_pipeline(pipelines, ner):
    from concurrent.futures import ThreadPoolExecutor

    _, test = ner
    pipe = pipelines[1]
    X = _sentences(test)
    expected = _dict_route(pipe, X)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda x: pipe.predict([x])[0], X * 3))
    assert got == expected * 3
