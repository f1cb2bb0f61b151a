"""The encoded path: featurizers handing CRFTagger an EncodedCorpus, never dicts.

``SequenceFeaturizer(output="encoded")`` (and ``TemplateFeaturizer``'s) must
give bitwise the corpus that ``SequenceVectorizer`` gives on the feature dicts
(the same vocabulary, in the same first-seen order), and so, in a Pipeline,
the dict route's model and predictions.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline

from sklearn_crf import (
    CRFTagger,
    EncodedCorpus,
    SequenceFeaturizer,
    SequenceVectorizer,
    TemplateFeaturizer,
    WordVectors,
    load_model,
    save_model,
)
from sklearn_crf._features.memo import memo_items
from sklearn_crf.datasets import load_conll2002

FIELDS = ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr")

SETTINGS = [
    {},
    dict(window=2, shape=True, prefixes=(1, 2), identity=True, neighbor_features="all"),
    dict(window=0, bias=False, bos_eos=False, suffixes=(1,)),
    dict(window=3, flags=False, neighbor_features=("suffixes", "isdigit")),
    dict(columns=("pos",)),
    dict(columns=("pos", None), neighbor_features=()),
]


@pytest.fixture(scope="module")
def data():
    d = load_conll2002("train", n_sentences=120)
    return d.sentences, d.tags


def with_pos(sentences, tags, width=2):
    """Tokens with a stand-in column (the tag) and, for width 3, a third one."""
    if width == 2:
        return [list(zip(s, t)) for s, t in zip(sentences, tags)]
    return [[(w, t, "x") for w, t in zip(s, ts)] for s, ts in zip(sentences, tags)]


def inputs(params, sentences, tags):
    cols = params.get("columns")
    if cols is None:
        return sentences
    return with_pos(sentences, tags, 1 + len(cols))


def assert_same_corpus(got, want):
    assert isinstance(got, EncodedCorpus)
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert got.n_attributes == want.n_attributes
    if want.dense is None:
        assert got.dense is None
    else:
        assert got.dense.dtype == want.dense.dtype
        np.testing.assert_array_equal(got.dense, want.dense)


def dict_route(params, X, n_features=None):
    params = {k: v for k, v in params.items() if k not in ("output", "hashing")}
    vec = SequenceVectorizer(n_features=n_features)
    return vec, vec.fit_encode(list(SequenceFeaturizer(**params).transform(X))), params


@pytest.mark.parametrize("params", SETTINGS)
def test_the_encoded_corpus_is_the_vectorizers_on_the_dicts(params, data):
    sentences, tags = data
    X = inputs(params, sentences, tags)
    vec, want, dict_params = dict_route(params, X)
    featurizer = SequenceFeaturizer(output="encoded", **params)
    got = featurizer.fit_transform(X)
    assert_same_corpus(got, want)
    assert got.vectorizer is featurizer.vectorizer_
    assert featurizer.vectorizer_.feature_names_ == vec.feature_names_
    assert featurizer.vectorizer_.vocabulary_ == vec.vocabulary_
    memo = featurizer.vectorizer_._pair_ids
    assert all(memo[key][value] == idx for (key, value), idx in memo_items(vec._pair_ids))
    # fit then transform: the same; on other sentences: encode of their dicts
    assert_same_corpus(clone(featurizer).fit(X).transform(X), want)
    other = [s[::-1] for s in X[::-1]] + [X[0][:1], []]
    assert_same_corpus(featurizer.transform(other),
                       vec.encode(SequenceFeaturizer(**dict_params).transform(other)))


def test_the_vectorizer_of_the_encoded_path_encodes_dicts_like_the_dict_routes(data):
    sentences, _ = data
    featurizer = SequenceFeaturizer(output="encoded").fit(sentences)
    vec, _, _ = dict_route({}, sentences)
    dicts = SequenceFeaturizer().transform(sentences[::-1])
    assert_same_corpus(featurizer.vectorizer_.encode(dicts), vec.encode(dicts))


def test_unfitted_transform_gives_a_corpus_of_its_own_vocabulary(data):
    sentences, _ = data
    vec, want, _ = dict_route({}, sentences)
    featurizer = SequenceFeaturizer(output="encoded")
    got = featurizer.transform(sentences)
    assert_same_corpus(got, want)
    assert got.vectorizer.feature_names_ == vec.feature_names_
    assert not hasattr(featurizer, "vectorizer_")


def test_each_fit_makes_a_new_vectorizer(data):
    sentences, _ = data
    featurizer = SequenceFeaturizer(output="encoded").fit(sentences[:10])
    first = featurizer.vectorizer_
    names = list(first.feature_names_)
    featurizer.fit(sentences[10:20])
    assert featurizer.vectorizer_ is not first
    assert first.feature_names_ == names
    SequenceFeaturizer.fit(featurizer.set_params(output="dicts"), sentences)
    assert not hasattr(featurizer, "vectorizer_")


@pytest.mark.parametrize("n_features", [2**6, 2**16])
def test_hashing_matches_the_hashing_vectorizer(n_features, data):
    sentences, _ = data
    vec, want, _ = dict_route({}, sentences, n_features)
    featurizer = SequenceFeaturizer(output="encoded", hashing=n_features)
    assert_same_corpus(featurizer.fit_transform(sentences), want)
    np.testing.assert_array_equal(featurizer.vectorizer_.hash_slots_, vec.hash_slots_)
    assert featurizer.vectorizer_._slot_ids == vec._slot_ids
    other = [s[::-1] for s in sentences[::-1]]
    assert_same_corpus(featurizer.transform(other),
                       vec.encode(SequenceFeaturizer().transform(other)))


@pytest.mark.parametrize("window", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_word_vectors_go_in_the_dense_block(data, window, dtype):
    sentences, _ = data
    rng = np.random.default_rng(0)
    words = sorted({w.lower() for s in sentences for w in s})[::3]
    table = WordVectors({w: rng.normal(size=4).astype(dtype) for w in words})
    params = dict(vectors=table, vector_lookup="lower", vector_window=window)
    vec, want, _ = dict_route(params, sentences)
    featurizer = SequenceFeaturizer(output="encoded", **params)
    got = featurizer.fit_transform(sentences)
    assert_same_corpus(got, want)
    assert got.dense.dtype == dtype
    assert featurizer.vectorizer_.n_dense_features_ == vec.n_dense_features_
    only = SequenceFeaturizer(output="encoded", vectors_only=True, **params)
    _, want_only, _ = dict_route(dict(params, vectors_only=True), sentences)
    assert_same_corpus(only.fit_transform(sentences), want_only)
    assert only.vectorizer_.n_attributes_ == 0


def test_empty_sentences_and_errors(data):
    sentences, _ = data
    X = [[], sentences[0], [], sentences[1]]
    _, want, _ = dict_route({}, X)
    assert_same_corpus(SequenceFeaturizer(output="encoded").fit_transform(X), want)
    # fit on no sentences learns nothing (load_model checks the parameters so)
    assert not hasattr(SequenceFeaturizer(output="encoded").fit([]), "vectorizer_")
    assert SequenceFeaturizer(output="encoded").fit_transform([]).n_sequences == 0
    with pytest.raises(TypeError, match="sentence 1, token 0"):
        SequenceFeaturizer(output="encoded").fit([["a"], [3]])
    with pytest.raises(ValueError, match="output"):
        SequenceFeaturizer(output="arrays").fit(sentences)


# ---------------------------------------------------------------------------
# in a Pipeline: the dict route's model


def fit_quietly(model, X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y, **kwargs)


def pipelines(featurizer_params=None, **tagger_params):
    featurizer_params = featurizer_params or {}
    tagger_params = dict(dict(c1=0.05, c2=0.01, max_iter=15, n_jobs=1), **tagger_params)
    hashing = featurizer_params.get("hashing")
    dicts = make_pipeline(
        SequenceFeaturizer(**{k: v for k, v in featurizer_params.items() if k != "hashing"}),
        CRFTagger(hashing=hashing, **tagger_params))
    encoded = make_pipeline(SequenceFeaturizer(output="encoded", **featurizer_params),
                            CRFTagger(hashing=hashing, **tagger_params))
    return dicts, encoded


def assert_same_model(got, want):
    a, b = got[-1], want[-1]
    assert a.coef_.tobytes() == b.coef_.tobytes()
    np.testing.assert_array_equal(a.classes_, b.classes_)
    if "feature_names_" in b.vectorizer_.__dict__:
        assert a.vectorizer_.feature_names_ == b.vectorizer_.feature_names_
    for name in ("attr_ptr", "attr_label", "trans_from", "trans_to"):
        np.testing.assert_array_equal(getattr(a.layout_, name), getattr(b.layout_, name))


@pytest.mark.parametrize("tagger_params", [{}, dict(min_freq=2.0), dict(c1=0.0)])
def test_the_pipeline_fits_the_dict_routes_model(data, tagger_params):
    sentences, tags = data
    dicts, encoded = pipelines(**tagger_params)
    fit_quietly(dicts, sentences, tags)
    fit_quietly(encoded, sentences, tags)
    assert_same_model(encoded, dicts)
    assert encoded[-1].vectorizer_ is encoded[0].vectorizer_


def test_every_inference_method_gives_the_dict_routes_answer(data):
    sentences, tags = data
    dicts, encoded = pipelines()
    fit_quietly(dicts, sentences, tags)
    fit_quietly(encoded, sentences, tags)
    X = [s[::-1] for s in sentences[:30]] + [["Madrid"], []]
    y = [t[::-1] for t in tags[:30]] + [["B-LOC"], []]
    assert encoded.predict(X) == dicts.predict(X)
    assert encoded.score(X, y) == dicts.score(X, y)
    Xd, Xe = dicts[0].transform(X), encoded[0].transform(X)
    assert Xe.vectorizer is encoded[-1].vectorizer_  # no mapping by name
    a, b = dicts[-1], encoded[-1]
    assert b.predict_entities(Xe) == a.predict_entities(Xd)
    assert b.predict_nbest(Xe, 3) == a.predict_nbest(Xd, 3)
    for got, want in zip(b.predict_marginals(Xe, output="array"),
                         a.predict_marginals(Xd, output="array")):
        assert got.tobytes() == want.tobytes()
    assert b.log_probability(Xe, y).tobytes() == a.log_probability(Xd, y).tobytes()
    assert ([str(e) for e in b.explain_prediction(Xe[:5], top=3)]
            == [str(e) for e in a.explain_prediction(Xd[:5], top=3)])


def test_hashing_in_a_pipeline(data):
    sentences, tags = data
    dicts, encoded = pipelines({"hashing": 2**12})
    fit_quietly(dicts, sentences, tags)
    fit_quietly(encoded, sentences, tags)
    assert_same_model(encoded, dicts)
    assert encoded.predict(sentences[:10]) == dicts.predict(sentences[:10])
    mismatched = make_pipeline(SequenceFeaturizer(output="encoded", hashing=2**12),
                               CRFTagger(max_iter=2))
    with pytest.raises(ValueError, match="n_features=4096.*hashing=None"):
        fit_quietly(mismatched, sentences, tags)


def test_columns_and_word_vectors_in_a_pipeline(data):
    sentences, tags = data
    X = with_pos(sentences, [[t[:1] for t in ts] for ts in tags])
    rng = np.random.default_rng(1)
    table = WordVectors({w.lower(): rng.normal(size=3) for s in sentences for w in s})
    params = dict(columns=("pos",), vectors=table, vector_lookup="lower")
    dicts, encoded = pipelines(params)
    fit_quietly(dicts, X, tags)
    fit_quietly(encoded, X, tags)
    assert_same_model(encoded, dicts)
    assert encoded[-1].dense_coef_.tobytes() == dicts[-1].dense_coef_.tobytes()
    assert encoded.predict(X[:20]) == dicts.predict(X[:20])


def test_cross_validation_and_search(data):
    sentences, tags = data
    dicts, encoded = pipelines(max_iter=5)
    cv = KFold(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        want = cross_val_score(dicts, sentences, tags, cv=cv)
        got = cross_val_score(encoded, sentences, tags, cv=cv)
        np.testing.assert_array_equal(got, want)
        grid = {"sequencefeaturizer__window": [0, 2], "crftagger__c2": [0.01, 1.0]}
        search_d = GridSearchCV(dicts, grid, cv=cv).fit(sentences, tags)
        search_e = GridSearchCV(encoded, grid, cv=cv).fit(sentences, tags)
    np.testing.assert_array_equal(search_e.cv_results_["mean_test_score"],
                                  search_d.cv_results_["mean_test_score"])
    assert search_e.best_params_ == search_d.best_params_
    assert_same_model(search_e.best_estimator_, search_d.best_estimator_)


def test_pickle_clone_and_skops(data):
    sio = pytest.importorskip("skops.io")
    sentences, tags = data
    _, encoded = pipelines()
    fit_quietly(encoded, sentences, tags)
    X = sentences[:25]
    want = encoded.predict(X)
    restored = pickle.loads(pickle.dumps(encoded))
    assert restored[-1].vectorizer_ is restored[0].vectorizer_  # still no mapping
    assert restored.predict(X) == want
    blob = sio.dumps(encoded)
    restored = sio.loads(blob, trusted=sio.get_untrusted_types(data=blob))
    assert restored.predict(X) == want
    cloned = clone(encoded)
    assert not hasattr(cloned[0], "vectorizer_")
    assert fit_quietly(cloned, sentences, tags).predict(X) == want


def test_save_model_of_an_encoded_pipeline(data, tmp_path):
    sentences, tags = data
    _, encoded = pipelines()
    fit_quietly(encoded, sentences, tags)
    save_model(encoded, tmp_path / "model.skcrf")
    loaded = load_model(tmp_path / "model.skcrf")
    assert loaded[0].get_params() == encoded[0].get_params()
    X = sentences[:25] + [["palabra", "nueva"]]
    # the loaded featurizer has no vocabulary: its corpora are mapped by name
    assert loaded.predict(X) == encoded.predict(X)
    a = loaded[-1].predict_marginals(loaded[0].transform(X), output="array")
    b = encoded[-1].predict_marginals(encoded[0].transform(X), output="array")
    for got, want in zip(a, b):
        assert got.tobytes() == want.tobytes()


# ---------------------------------------------------------------------------
# TemplateFeaturizer

TEMPLATE_SETS = [
    TemplateFeaturizer().templates,
    ["U00:%x[-2,0]", "U01:%x[0,1]/%x[1,1]", "U02:%x[2,1]", "U", "U03:%x[-1,0]/%x[0,1]/%x[1,0]"],
    # expansions that meet within a token (one dict key, one entry)
    ["U:%x[0,0]", "U:%x[-1,0]", "U%x[0,1]", "U:%x[1,0]", "U:%x[0,0]"],
]


@pytest.mark.parametrize("templates", TEMPLATE_SETS)
def test_templates_encoded_corpus_is_the_vectorizers_on_the_dicts(templates, data):
    sentences, tags = data
    X = with_pos(sentences, tags) + [[], [("_B-1", ":_B+1")], [("U", "x")] * 3]
    dicts = TemplateFeaturizer(templates=templates).transform(X)
    vec = SequenceVectorizer()
    want = vec.fit_encode(dicts)
    featurizer = TemplateFeaturizer(templates=templates, output="encoded")
    assert_same_corpus(featurizer.fit_transform(X), want)
    assert featurizer.vectorizer_.feature_names_ == vec.feature_names_
    other = [s[::-1] for s in X[::-1]]
    assert_same_corpus(featurizer.transform(other),
                       vec.encode(TemplateFeaturizer(templates=templates).transform(other)))
    hashed = SequenceVectorizer(n_features=64)
    assert_same_corpus(
        TemplateFeaturizer(templates=templates, output="encoded", hashing=64).fit_transform(X),
        hashed.fit_encode(dicts))


def test_templates_random_against_the_dicts():
    rng = np.random.default_rng(0)
    words = ["a", "b%", "c[1,0]", "_B-1", "dé", "/", ""]
    X = [[tuple(str(rng.choice(words)) for _ in range(3)) for _ in range(rng.integers(0, 7))]
         for _ in range(40)]
    for trial in range(5):
        templates = []
        for k in range(int(rng.integers(1, 12))):
            macros = "".join(f"/%x[{rng.integers(-8, 9)},{rng.integers(0, 3)}]"
                             for _ in range(rng.integers(0, 4)))
            templates.append(f"U{rng.integers(0, 3)}:{macros}")
        want = SequenceVectorizer().fit_encode(
            TemplateFeaturizer(templates=templates).transform(X))
        got = TemplateFeaturizer(templates=templates, output="encoded").fit_transform(X)
        assert_same_corpus(got, want)


def test_templates_in_a_pipeline_and_errors(data):
    sentences, tags = data
    X = with_pos(sentences, tags)
    templates = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,1]", "U02:%x[1,0]"]
    params = dict(c2=0.01, max_iter=10, n_jobs=1)
    dicts = make_pipeline(TemplateFeaturizer(templates=templates), CRFTagger(**params))
    encoded = make_pipeline(TemplateFeaturizer(templates=templates, output="encoded"),
                            CRFTagger(**params))
    fit_quietly(dicts, X, tags)
    fit_quietly(encoded, X, tags)
    assert_same_model(encoded, dicts)
    assert encoded.predict(X[:20]) == dicts.predict(X[:20])
    with pytest.raises(ValueError, match=r"reads column 1, but sentence 1, token 0 has 1"):
        TemplateFeaturizer(templates=["U:%x[0,1]"], output="encoded").fit(
            [[("a", "b")], ["c"]])


def test_templates_with_word_vectors(data):
    sentences, tags = data
    X = with_pos(sentences, tags)
    table = WordVectors({w: np.full(2, len(w), dtype=np.float32) for s in sentences for w in s[::2]})
    params = dict(templates=["U00:%x[0,1]"], vectors=table, vector_window=1)
    want = SequenceVectorizer().fit_encode(TemplateFeaturizer(**params).transform(X))
    got = TemplateFeaturizer(output="encoded", **params).fit_transform(X)
    assert_same_corpus(got, want)
    assert got.dense.dtype == np.float32


@pytest.mark.parametrize("params", [{}, dict(hashing=2**8), dict(columns=("pos",)),
                                    "vectors", "vectors_only"])
def test_a_sentence_at_a_time_gives_the_bulk_corpus(params, data):
    sentences, tags = data
    if isinstance(params, str):
        table = WordVectors({w: np.ones(2) * len(w) for s in sentences for w in s[::2]})
        params = dict(vectors=table, vectors_only=params == "vectors_only")
    X = inputs(params, sentences, tags)
    featurizer = SequenceFeaturizer(output="encoded", **params).fit(X)
    for x in X[:5] + [X[7][:1], []]:
        # few tokens: the dicts and the memo; many: the bulk path (a sentence repeated)
        few, bulk = featurizer.transform([x]), featurizer.transform([x] * 70)
        assert few.vectorizer is featurizer.vectorizer_
        assert_same_corpus(few, bulk[[0]])


def test_templates_a_sentence_at_a_time_gives_the_bulk_corpus(data):
    sentences, tags = data
    X = with_pos(sentences, tags)
    featurizer = TemplateFeaturizer(templates=TEMPLATE_SETS[2], output="encoded").fit(X)
    for x in X[:5] + [X[7][:1], []]:
        assert_same_corpus(featurizer.transform([x]), featurizer.transform([x] * 70)[[0]])


def test_the_entry_arrays_grow_past_a_small_capacity(data, monkeypatch):
    import sklearn_crf._features.interned as vectorizer_module

    def small(self, capacity=0):
        self.attr = np.empty(7, dtype=np.int32)
        self.zero_tok = np.empty(3, dtype=np.int64)
        self.zero_attr = np.empty(3, dtype=np.int32)
        self.n = self.n_zero = 0

    sentences, _ = data
    _, want, _ = dict_route({}, sentences)
    monkeypatch.setattr(vectorizer_module._GrowingArrays, "__init__", small)
    assert_same_corpus(SequenceFeaturizer(output="encoded").fit_transform(sentences), want)
