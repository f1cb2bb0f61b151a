"""Tests for the CRF++-style template featurizer (sklearn_crf._features.templates)."""

import pickle
import random
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.pipeline import make_pipeline

from sklearn_crf import CRFTagger, TemplateFeaturizer

SENTENCE = [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP")]


def naive_expand(template, sentence, i):
    """CRF++'s applyRule, written independently: textual substitution of each macro."""

    def value(match):
        row, column = int(match.group(1)), int(match.group(2))
        j = i + row
        if j < 0:
            return f"_B-{-j}"
        if j >= len(sentence):
            return f"_B+{j - len(sentence) + 1}"
        return sentence[j][column]

    return re.sub(r"%x\[(-?\d+),(\d+)\]", value, template)


def test_crfpp_semantics_by_hand():
    templates = ["U00:%x[-2,0]", "U01:%x[0,1]/%x[1,1]", "U02:%x[2,2]", "U"]
    X = TemplateFeaturizer(templates=templates).transform([SENTENCE])
    assert X == [[
        {"U00:_B-2": 1.0, "U01:PRP/VBZ": 1.0, "U02:B-NP": 1.0, "U": 1.0},
        {"U00:_B-1": 1.0, "U01:VBZ/DT": 1.0, "U02:_B+1": 1.0, "U": 1.0},
        {"U00:He": 1.0, "U01:DT/_B+1": 1.0, "U02:_B+2": 1.0, "U": 1.0},
    ]]


def test_matches_naive_substitution_on_random_templates():
    rng = random.Random(0)
    words = ["a", "b%", "c[1,0]", "_B-1", "dé"]
    X = [
        [tuple(rng.choice(words) for _ in range(3)) for _ in range(rng.randint(0, 7))]
        for _ in range(20)
    ]
    templates = []
    for k in range(30):
        macros = "".join(
            f"/%x[{rng.randint(-8, 8)},{rng.randint(0, 2)}]" for _ in range(rng.randint(0, 3))
        )
        templates.append(f"U{k:02d}:{macros}")
    features = TemplateFeaturizer(templates=templates).transform(X)
    for sentence, rows in zip(X, features):
        assert len(rows) == len(sentence)
        for i, row in enumerate(rows):
            assert row == {naive_expand(t, sentence, i): 1.0 for t in templates}


def test_template_file_text_comments_and_bigram_line():
    text = "# Unigram\nU00:%x[0,0]\r\n\n  U01:%x[-1,0]  \n\n# Bigram\nB\nB00\n"
    from_text = TemplateFeaturizer(templates=text).transform([SENTENCE])
    from_list = TemplateFeaturizer(templates=["U00:%x[0,0]", "U01:%x[-1,0]"]).transform([SENTENCE])
    assert from_text == from_list
    assert from_text[0][1] == {"U00:reckons": 1.0, "U01:He": 1.0}


def test_str_tokens_and_empty_sentences():
    X = TemplateFeaturizer(templates=["U00:%x[1,0]"]).transform([["Hola", "Madrid"], []])
    assert X == [[{"U00:Madrid": 1.0}, {"U00:_B+1": 1.0}], []]


@pytest.mark.parametrize(
    "templates, message",
    [
        (["B01:%x[0,0]"], r"line 1: 'B01:%x\[0,0\]' is a bigram template with observations"),
        (["U00:%x[0,0]", "X00:%x[0,0]"], r"line 2: 'X00:%x\[0,0\]' is neither a unigram"),
        (["U00:%x[9,0]"], r"line 1: %x\[9,0\] reads row 9; rows must be between -8 and 8"),
        (["U00:%x[ 0,0]"], r"line 1: .* has a '%' that does not start a %x\[row,column\] macro"),
        (["U00:%x[+1,0]"], r"'%' that does not start"),
        (["U00:%y"], r"'%' that does not start"),
    ],
)
def test_bad_templates(templates, message):
    featurizer = TemplateFeaturizer(templates=templates)
    with pytest.raises(ValueError, match=message):
        featurizer.fit([SENTENCE])
    with pytest.raises(ValueError, match=message):
        featurizer.transform([SENTENCE])


def test_missing_column_names_the_template_sentence_and_token():
    featurizer = TemplateFeaturizer(templates=["U00:%x[0,0]", "U01:%x[0,1]"])
    with pytest.raises(ValueError, match=r"template line 2 \('U01:%x\[0,1\]'\) reads column 1, "
                       r"but sentence 1, token 1 has 1 column"):
        featurizer.transform([[("a", "N")], [("b", "N"), ("c",)]])


@pytest.mark.parametrize(
    "X, error, message",
    [
        ("abc", TypeError, "X must be a list of sentences"),
        (["abc"], TypeError, "sentence 0 must be a list of tokens"),
        ([[("a", 1)]], TypeError, r"sentence 0, token 0, column 1: expected a str, got int"),
        ([[()]], TypeError, r"sentence 0, token 0: a token must be a str or a non-empty tuple"),
        ([[3]], TypeError, r"sentence 0, token 0: a token must be"),
    ],
)
def test_bad_input(X, error, message):
    with pytest.raises(error, match=message):
        TemplateFeaturizer().transform(X)


def test_bad_templates_type():
    with pytest.raises(TypeError, match=r"templates\[1\] must be a str"):
        TemplateFeaturizer(templates=["U00:%x[0,0]", 3]).transform([["a"]])
    with pytest.raises(ValueError, match="templates"):
        TemplateFeaturizer(templates=5).fit([["a"]])


def test_stateless_estimator_api():
    featurizer = TemplateFeaturizer(templates=("U00:%x[0,0]",))
    assert featurizer.fit([]) is featurizer
    copy = pickle.loads(pickle.dumps(clone(featurizer)))
    assert copy.get_params() == {"templates": ("U00:%x[0,0]",), "vectors": None,
                                 "vector_lookup": "exact", "vector_window": 0,
                                 "output": "dicts", "hashing": None}
    assert copy.transform([["a"]]) == [[{"U00:a": 1.0}]]


def test_pipeline_with_crftagger_learns_from_templates(toy_ner):
    X, y = toy_ner
    words = [[token["w"] for token in sentence] for sentence in X]
    pipe = make_pipeline(TemplateFeaturizer(), CRFTagger(max_iter=50))
    pipe.fit(words, y)
    assert pipe.score(words, y) == 1.0
    assert "U01:paris" in pipe[-1].attributes_


def test_vectors_add_a_dense_block_next_to_the_template_features():
    from sklearn_crf._features.word_vectors import WordVectors

    table = WordVectors({"he": np.array([1.0, 2.0]), "the": np.array([3.0, 4.0])})
    sentence = [("He", "PRP"), ("reckons", "VBZ"), ("the", "DT")]
    featurizer = TemplateFeaturizer(
        templates=["U01:%x[0,1]"], vectors=table, vector_lookup="lower", vector_window=1)
    [(dicts, dense)] = featurizer.transform([sentence])
    assert dicts == TemplateFeaturizer(templates=["U01:%x[0,1]"]).transform([sentence])[0]
    # rows: [previous, token, next] vectors, zeros outside the sentence or unknown
    assert dense.tolist() == [[0, 0, 1, 2, 0, 0], [1, 2, 0, 0, 3, 4], [0, 0, 3, 4, 0, 0]]
    assert clone(featurizer).vectors is table
    with pytest.raises(InvalidParameterError,
                       match="The 'vectors' parameter of TemplateFeaturizer .* wrap it"):
        TemplateFeaturizer(vectors={"he": [1.0]}).transform([sentence])
