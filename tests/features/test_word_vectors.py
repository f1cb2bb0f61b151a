"""Tests for sklearn_crf._features.word_vectors: the WordVectors table and its dense blocks."""

import copy
import doctest
import pickle

import numpy as np
import pytest
from sklearn.base import clone

import sklearn_crf._features.word_vectors as word_vectors_module
from sklearn_crf._features.word_vectors import WordVectors

RNG = np.random.default_rng(0)
WORDS = ["el", "Madrid", "madrid", "de", "EFE", "la"]
TABLE = {w: RNG.normal(size=4) for w in WORDS}


def naive_block(sentence, table, lookup, window):
    """Row t: the vectors of words t - window .. t + window, zeros when absent."""
    d = len(next(iter(table.values())))

    def vec(word):
        if lookup in ("exact", "exact_then_lower") and word in table:
            return np.asarray(table[word], dtype=float)
        if lookup in ("lower", "exact_then_lower") and word.lower() in table:
            return np.asarray(table[word.lower()], dtype=float)
        return np.zeros(d)

    rows = []
    for t in range(len(sentence)):
        parts = []
        for o in range(-window, window + 1):
            inside = 0 <= t + o < len(sentence)
            parts.append(vec(sentence[t + o]) if inside else np.zeros(d))
        rows.append(np.concatenate(parts))
    return np.array(rows).reshape(len(sentence), (2 * window + 1) * d)


def test_from_dict_stacks_the_vectors_in_order():
    table = WordVectors(TABLE)
    assert len(table) == 6 and table.vector_size == 4
    assert table.dtype == np.float64
    np.testing.assert_array_equal(table.vectors, np.array(list(TABLE.values())))
    assert "Madrid" in table and "MADRID" not in table
    np.testing.assert_array_equal(table["de"], TABLE["de"])
    assert "6 words x 4 float64" in repr(table)


def test_words_in_row_order_rebuild_the_table():
    table = WordVectors(TABLE)
    assert table.words == WORDS
    copy_ = WordVectors(dict(zip(table.words, table.vectors)))
    np.testing.assert_array_equal(copy_.vectors, table.vectors)
    assert copy_.words == table.words


def test_float32_stays_float32_and_other_types_become_float64():
    f32 = {w: v.astype(np.float32) for w, v in TABLE.items()}
    assert WordVectors(f32).dtype == np.float32
    assert WordVectors({"a": [1, 2], "b": [3, 4]}).dtype == np.float64
    mixed = {"a": np.ones(2, np.float32), "b": np.ones(2, np.float64)}
    assert WordVectors(mixed).dtype == np.float64
    assert WordVectors({"a": np.ones(2, np.float16)}).dtype == np.float64


def test_table_is_read_only_and_independent_of_the_dict():
    source = {"a": np.array([1.0, 2.0])}
    table = WordVectors(source)
    with pytest.raises(ValueError, match="read-only"):
        table.vectors[0, 0] = 5.0
    source["a"][0] = 9.0
    assert table["a"][0] == 1.0


def test_keyed_vectors_are_used_in_place():
    gensim_models = pytest.importorskip("gensim.models")
    kv = gensim_models.KeyedVectors(vector_size=3)
    kv.add_vectors(["uno", "dos"], np.arange(6, dtype=np.float32).reshape(2, 3))
    table = WordVectors(kv)
    assert table.dtype == np.float32 and len(table) == 2
    assert np.shares_memory(table.vectors, kv.vectors)  # no copy of the matrix
    assert not table.vectors.flags.writeable and kv.vectors.flags.writeable
    np.testing.assert_array_equal(table["dos"], [3, 4, 5])


@pytest.mark.parametrize(
    "vectors, exc, match",
    [
        ([1.0, 2.0], TypeError, r"expects a dict of str -> 1-D vector or a gensim"),
        (None, TypeError, r"expects a dict"),
        ({}, ValueError, r"mapping is empty"),
        ({3: [1.0]}, TypeError, r"every key must be a str"),
        ({"a": [1.0, 2.0], "b": [1.0]}, ValueError,
         r"word 'b' has 1 values, but the first vector has 2"),
        ({"a": [[1.0, 2.0]]}, ValueError, r"word 'a' must be 1-D and non-empty"),
        ({"a": []}, ValueError, r"word 'a' must be 1-D and non-empty"),
        ({"a": 1.0}, ValueError, r"word 'a' must be 1-D"),
        ({"a": ["x", "y"]}, TypeError, r"word 'a' must hold real numbers"),
        ({"a": [1j, 2]}, TypeError, r"word 'a' must hold real numbers"),
        ({"a": [1.0, 2.0], "b": [0.0, np.nan]}, ValueError,
         r"word 'b' has a non-finite value"),
        ({"a": [np.inf]}, ValueError, r"word 'a' has a non-finite value"),
    ],
)
def test_invalid_tables(vectors, exc, match):
    with pytest.raises(exc, match=match):
        WordVectors(vectors)


def test_invalid_keyed_vectors():
    gensim_models = pytest.importorskip("gensim.models")
    kv = gensim_models.KeyedVectors(vector_size=2)
    with pytest.raises(ValueError, match="KeyedVectors is empty"):
        WordVectors(kv)
    kv.add_vectors(["a", "b"], np.array([[1.0, 2.0], [np.nan, 0.0]], np.float32))
    with pytest.raises(ValueError, match="word 'b' has a non-finite value"):
        WordVectors(kv)


def test_shared_by_copy_deepcopy_and_clone():
    table = WordVectors(TABLE)
    assert copy.copy(table) is table
    assert copy.deepcopy(table) is table
    assert copy.deepcopy({"nested": [table]})["nested"][0] is table
    assert clone(table, safe=False) is table
    assert WordVectors(table).vectors is table.vectors


def test_pickle_round_trip_by_value():
    table = WordVectors({w: v.astype(np.float32) for w, v in TABLE.items()})
    restored = pickle.loads(pickle.dumps(table))
    assert restored is not table and restored.dtype == np.float32
    np.testing.assert_array_equal(restored.vectors, table.vectors)
    assert not restored.vectors.flags.writeable
    assert restored["EFE"].tolist() == table["EFE"].tolist()


@pytest.mark.parametrize("lookup", ["exact", "lower", "exact_then_lower"])
@pytest.mark.parametrize("window", [0, 1, 3])
def test_sentence_vectors_match_the_naive_definition(lookup, window):
    table = WordVectors(TABLE)
    sentences = [
        ["El", "Madrid", "de", "EFE"], [], ["la"], ["MADRID", "x", "el", "La", "de"],
    ]
    blocks = table.sentence_vectors(sentences, lookup=lookup, window=window)
    assert len(blocks) == len(sentences)
    for sentence, block in zip(sentences, blocks):
        assert block.flags.c_contiguous and block.dtype == np.float64
        np.testing.assert_array_equal(block, naive_block(sentence, TABLE, lookup, window))
    whole = table.corpus_vectors(sentences, lookup=lookup, window=window)
    assert whole.flags.c_contiguous and whole.dtype == np.float64
    np.testing.assert_array_equal(whole, np.concatenate(blocks))


def test_word_indices_and_bad_arguments():
    table = WordVectors(TABLE)
    words = iter(["Madrid", "MADRID", "zzz"])  # any iterable
    assert table.word_indices(words, lookup="exact_then_lower").tolist() == [1, 2, -1]
    assert table.sentence_vectors([]) == []
    with pytest.raises(ValueError, match="lookup must be one of"):
        table.word_indices(["a"], lookup="upper")
    with pytest.raises(ValueError, match="window must be an int >= 0"):
        table.sentence_vectors([["a"]], window=-1)
    with pytest.raises(ValueError, match="window must be an int >= 0"):
        table.corpus_vectors([["a"]], window=True)
    assert table.corpus_vectors([]).shape == (0, table.vector_size)


def test_docstring_examples():
    result = doctest.testmod(word_vectors_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
