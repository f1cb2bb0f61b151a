"""The vocabulary's memo and names (sklearn_crf._features.vocabulary)."""

import pytest

from sklearn_crf import SequenceVectorizer
from sklearn_crf._features.attributes import str_splits
from sklearn_crf._features.memo import has_item
from sklearn_crf._features.vocabulary import _open_keys, open_keys

from test_vectorizer import many_forms


def naive_open_keys(names, memo):
    """The definition: the part before a ":" of any name whose split there is
    not in the memo."""
    return frozenset(k for name in names if ":" in name
                     for k, value in str_splits(name) if not has_item(memo, k, value))


COLONS = [
    # keys with a ":" whose part before it is another key (and is not)
    {"a": "b:c", "a:b": "c", "a:x": "y", "-1:w": "u", "w": "k:"},
    # numbers and zeros of keys with a ":"; a value with two ":"
    {"n:1": 1.0, "n:2": 0, "n:3": 2.5, "a": "p:q:r", "x:": ""},
    # nested values: names no memo item gives
    {"d:e": {"f": 1, "g:h": 0}, "l": ["m:n", "o"], ":": ":"},
    {"a:b": "c:d", "a": "b:c:d", "b": True, "b:": False},
]


@pytest.mark.parametrize("X", [
    [COLONS], [COLONS[:2]], [COLONS[2:]], many_forms(60), many_forms(60) + [COLONS],
])
def test_open_keys_by_the_memo_are_those_by_every_name(X):
    vec = SequenceVectorizer().fit(X)
    memo, names = vec._pair_ids, vec.vocabulary_
    want = naive_open_keys(names, memo)
    assert _open_keys(names, memo) == want
    assert open_keys(vec, memo) == want


def test_the_open_keys_of_colon_features():
    vec = SequenceVectorizer().fit([COLONS[:1]])
    # "a:b:c" splits as ("a:b", "c") and ("a", "b:c"), both in the memo; "a:x:y"
    # as ("a", "x:y"), not in it; "-1:w:u" as ("-1", "w:u"): no key "-1";
    # "w:k:" as ("w:k", ""): no key "w:k"
    assert open_keys(vec, vec._pair_ids) == {"a", "-1", "w:k"}
