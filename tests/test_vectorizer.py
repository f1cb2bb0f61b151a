import numpy as np
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
    pycrfsuite = pytest.importorskip("pycrfsuite")
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
    assert Xt.shape == (2, 16) and vec.n_attributes_ == 16
    assert not hasattr(vec, "vocabulary_")
    for name, row, value in [("w:a", 0, 1.0), ("n", 0, 2.0), ("l:x", 0, 1.0), ("w:b", 1, 1.0)]:
        assert Xt[row, murmurhash3_32(name, positive=True) % 16] >= value
    # unseen attributes hash too, and transform equals fit_transform
    assert (vec.transform(X) != Xt).nnz == 0
    assert vec.transform([[{"w": "zzz"}]]).nnz == 1
    with pytest.raises(AttributeError):
        vec.get_feature_names_out()
