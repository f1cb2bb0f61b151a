import pickle

import joblib
import numpy as np
import pycrfsuite  # in the test extra
import pytest

from sklearn_crf import SequenceVectorizer


def test_crfsuite_semantics():
    X = [[{
        "s": "a", "f": 2.5, "i": 3, "t": True, "z": False, "b": b"x",
        "lst": ["p", "q"], "nested": {"k": "v", "n": 0.5, "deep": {"d": "e"}},
    }]]
    vec = SequenceVectorizer()
    Xt = vec.fit_transform(X).toarray()[0]
    got = {name: Xt[i] for name, i in vec.vocabulary_.items()}
    assert got == {
        "s:a": 1.0, "f": 2.5, "i": 3.0, "t": 1.0, "z": 0.0, "b:x": 1.0, "lst:p": 1.0,
        "lst:q": 1.0, "nested:k:v": 1.0, "nested:n": 0.5, "nested:deep:d:e": 1.0,
    }


def test_matches_pycrfsuite_item_semantics():
    token = {
        "s": "a", "f": 2.5, "t": True, "off": False, "lst": ["p", "q"],
        "nested": {"k": "v", "n": 0.5},
    }
    seq = pycrfsuite.ItemSequence([token])
    expected = seq.items()[0]  # with "off": 0.0, an attribute of the vocabulary
    vec = SequenceVectorizer().fit([[token]])
    row = vec.transform([[token]]).toarray()[0]
    assert {name: row[i] for name, i in vec.vocabulary_.items()} == expected


def test_unseen_attributes_are_ignored_and_offsets():
    vec = SequenceVectorizer().fit([[{"a": "x"}], [{"a": "y"}, {"b": 1}]])
    Xt = vec.transform([[{"a": "z", "b": 2.0}], [], [{"a": "x"}]])
    assert Xt.shape == (2, 3)
    assert Xt.toarray().tolist() == [[0.0, 0.0, 2.0], [1.0, 0.0, 0.0]]
    np.testing.assert_array_equal(vec.sequence_offsets([[1], [], [1]]), [0, 1, 1, 2])


def test_fit_transform_equals_fit_then_transform():
    X = [[{"w": "a", "n": 1.5}, {"w": "b"}], [{"w": "a", "x": ["u"]}]]
    a = SequenceVectorizer().fit_transform(X)
    b = SequenceVectorizer().fit(X).transform(X)
    assert (a != b).nnz == 0


@pytest.mark.parametrize(
    "X, error, match",
    [
        ([[{"a": 1}, "tok"]], TypeError, r"X\[0\]\[1\] is a str"),
        ([[{"a": 1}], [None]], TypeError, r"X\[1\]\[0\] is a NoneType"),
        ([[{"a": 1}], [{"b": float("nan")}]], ValueError, r"X\[1\]\[0\]\['b'\] is nan"),
        ([[{"a": float("inf")}]], ValueError, r"X\[0\]\[0\]\['a'\] is inf"),
        ([[{1: "x"}]], TypeError, r"X\[0\]\[0\].*key 1 of type int"),
        ([[{"a": None}]], TypeError, r"X\[0\]\[0\]\['a'\] is a NoneType"),
        ([[{"a": [1]}]], TypeError, r"X\[0\]\[0\]\['a'\] holds a int"),
        ([{"a": 1}, {"b": 2}], ValueError, "single sequence"),
        ("abc", TypeError, "list of sequences"),
        ([], ValueError, "empty"),
        (["abc"], TypeError, r"X\[0\] is a str"),
    ],
)
def test_bad_input(X, error, match):
    with pytest.raises(error, match=match):
        SequenceVectorizer().fit(X)


def test_failed_fit_keeps_vocabulary():
    vec = SequenceVectorizer().fit([[{"a": "x"}]])
    with pytest.raises(ValueError):
        vec.fit([[{"a": "y"}, {"b": float("nan")}]])
    assert vec.feature_names_ == ["a:x"]


def test_hashing_maps_names_to_stable_slots():
    from sklearn.utils import murmurhash3_32

    X = [[{"w": "a", "n": 2.0, "l": ["x"]}], [{"w": "b"}]]
    vec = SequenceVectorizer(n_features=16)
    Xt = vec.fit_transform(X)
    slots = {murmurhash3_32(name, positive=True) % 16 for name in ("w:a", "n", "l:x", "w:b")}
    assert Xt.shape == (2, 16) and vec.n_attributes_ == len(slots)
    assert sorted(vec.hash_slots_.tolist()) == sorted(slots)
    assert not hasattr(vec, "vocabulary_")
    for name, row, value in [("w:a", 0, 1.0), ("n", 0, 2.0), ("l:x", 0, 1.0), ("w:b", 1, 1.0)]:
        assert Xt[row, murmurhash3_32(name, positive=True) % 16] >= value
    # transform equals fit_transform; a slot unseen in fit has no column of its own
    assert (vec.transform(X) != Xt).nnz == 0
    zzz = murmurhash3_32("w:zzz", positive=True) % 16
    assert vec.transform([[{"w": "zzz"}]]).nnz == int(zzz in slots)
    with pytest.raises(AttributeError):
        vec.get_feature_names_out()


def test_hashing_allocates_only_the_slots_seen():
    """Issue 10, item 8: 2**20 slots, 3 attributes: 3 attribute ids."""
    vec = SequenceVectorizer(n_features=2**20)
    corpus = vec.fit_encode([[{"a": 1.0, "b": "x"}, {"c": True}]])
    assert vec.n_attributes_ == corpus.n_attributes == 3
    assert corpus.tok_attr.max() < 3
    assert len(pickle.dumps(vec)) < 10_000
    # 1000 distinct attributes: the fitted state grows with the slots, not the names
    small = SequenceVectorizer(n_features=64).fit([[{"w": f"w{i}"} for i in range(1000)]])
    assert small.n_attributes_ <= 64 and len(pickle.dumps(small)) < 5_000


def test_encode_leaves_the_fitted_vectorizer_unchanged():
    """Issue 10, item 3: only fit fills the caches."""
    vec = SequenceVectorizer().fit([[{"a": {"b": 1.0}, "n": 2.0}]])
    before = joblib.hash(vec)
    vec.encode([[{"a": "b", "n": 1.0, "m": 0.0}], [["a:b", "zz"]]])
    vec.transform([[{"a": "b"}]])
    assert joblib.hash(vec) == before


@pytest.mark.parametrize(
    "zero", [False, 0, 0.0, -0.0, np.False_, np.float64(0), np.int64(0), np.float32(0)],
    ids=["False", "0", "0.0", "-0.0", "np.False_", "np.float64", "np.int64", "np.float32"],
)
def test_one_rule_for_every_zero(zero):
    """Issue 10, item 2: whatever its type or depth, a zero is a zero entry."""
    X = [[{"z": zero, "d": {"k": zero, "e": {"f": zero}}, "w": "a"}]]
    vec = SequenceVectorizer()
    corpus = vec.fit_encode(X)
    assert vec.feature_names_ == ["z", "d:k", "d:e:f", "w:a"]
    assert corpus.zero_attr.tolist() == [0, 1, 2] and corpus.zero_tok.tolist() == [0, 0, 0]
    assert corpus.tok_attr.tolist() == [3] and corpus.tok_val.tolist() == [1.0]


def test_token_forms_of_python_crfsuite():
    """Issue 10, item 5: every token form pycrfsuite.ItemSequence accepts, same meaning."""
    tokens = [
        ["word=madrid", "shape=Xx"],
        ("a", "b"),
        {"word=madrid": 1.0, "w2": 0.5, "neg": -2},
        {"s": "x", "n": np.float32(1.5), "i": np.int64(3), "b": np.True_, "z": np.False_},
        {"l": ["p", "q"], "st": {"v"}, "nested": {"k": "v", "m": {"x": 2.0}, "l": ["u"]}},
        {"bytes": b"x", "npstr": np.str_("y"), b"bkey": 1.5, np.str_("skey"): "v",
         b"bz": 0, "d": {b"k": "w"}},
        [],
        {},
    ]
    vec = SequenceVectorizer().fit([tokens])
    Xt = vec.transform([tokens]).toarray()
    for row, item in zip(Xt, pycrfsuite.ItemSequence(tokens).items()):
        got = {vec.feature_names_[j]: row[j] for j in np.flatnonzero(row)}
        assert got == {k: v for k, v in item.items() if v != 0}
        assert all(k in vec.vocabulary_ for k in item)  # zeros join the vocabulary


def test_readme_input_format_as_written():
    """Every example of the README's "Input format" section."""
    tokens = [
        {"word.lower()": "madrid"}, {"len": 6}, {"upper": True, "title": False},
        {"n": np.float64(2.5), "k": np.int64(3)}, {"tags": ["a", "b"]}, {"d": {"k": "v"}},
        ["word=madrid", "shape=Xx"], {"z": np.float64(0), "dz": {"q": np.False_}},
    ]
    vec = SequenceVectorizer()
    Xt = vec.fit_transform([tokens]).toarray()
    rows = [{vec.feature_names_[j]: row[j] for j in np.flatnonzero(row)} for row in Xt]
    assert rows == [
        {"word.lower():madrid": 1.0}, {"len": 6.0}, {"upper": 1.0}, {"n": 2.5, "k": 3.0},
        {"tags:a": 1.0, "tags:b": 1.0}, {"d:k:v": 1.0},
        {"word=madrid": 1.0, "shape=Xx": 1.0}, {},
    ]
    assert {"title", "z", "dz:q"} <= set(vec.vocabulary_)  # zeros make attributes known


def test_encode_fast_path_matches_the_generic_rules():
    """encode's memo of fit's (key, value) pairs gives the corpus of the generic
    rules, for every token form, unseen values, zeros of every type and numbers
    other than 0 and 1."""
    import numpy as np

    X = [[{"w": "a", "n": 0, "f": 2.5, "b": True, "z": np.float64(0)},
          {"w": "b", "l": ["x", "y"], "d": {"q": 1, "r": 0}, "i": np.int64(1)}],
         [["w:a", "q"], {"w": "zz", "n": 1, "f": 0.5, "b": np.False_}], [], [{}]]
    X_new = [[{"w": "unseen", "n": 3, "f": 1, "b": False, "d": {"q": 2.0}, "new": 1.0},
              {"b": 1.0, "w": "a", "l": ("y", "new")}], [["w:b", "zz"], {"n": 0.0}]]
    fields = ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr")
    for data in (X, X_new, X + X_new):  # fit: the same corpus and vocabulary order
        fast, ref = SequenceVectorizer(), SequenceVectorizer()
        fitted = fast.fit_encode(data)
        generic = ref._encode(data, fitting=True, generic=True)
        assert fast.vocabulary_ == ref.vocabulary_
        assert list(fast.vocabulary_) == list(ref.vocabulary_)
        vocab = fast.vocabulary_
        for (key, value), idx in fast._pair_ids.items():  # the memo agrees with the rules
            if isinstance(value, str):
                assert vocab[key + ":" + value] == idx
            else:
                assert idx == (vocab[key] if value else ~vocab[key])
        for name in fields:
            np.testing.assert_array_equal(getattr(fitted, name), getattr(generic, name))
    vec = SequenceVectorizer()
    vec.fit(X)
    for data in (X, X_new):
        fast = vec.encode(data)
        generic = vec._encode(data, fitting=False, generic=True)
        for name in fields:
            np.testing.assert_array_equal(getattr(fast, name), getattr(generic, name))
            assert getattr(fast, name).dtype == getattr(generic, name).dtype
    with pytest.raises(ValueError, match=r"X\[0\]\[1\]\['f'\]"):
        vec.encode([[{"w": "a"}, {"f": float("nan")}]])
    with pytest.raises(TypeError, match=r"X\[0\]\[0\]"):
        vec.encode([[{1: "a"}]])
