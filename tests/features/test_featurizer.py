"""Tests for sklearn_crf._features.featurizer.SequenceFeaturizer."""

import doctest
import itertools
import pickle
import random
from collections import Counter

import numpy as np
import pytest
from sklearn import config_context
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_mixin_order,
    check_no_attributes_set_in_init,
    check_param_validation,
    check_parameters_default_constructible,
    check_set_params,
    check_valid_tag_types,
)
from sklearn.utils.validation import check_is_fitted

import sklearn_crf._features.featurizer as featurizer_module
from sklearn_crf import SequenceFeaturizer, TemplateFeaturizer
from sklearn_crf._features.word_vectors import WordVectors

# CoNLL-2002 (Spanish) style sentences: (word, POS tag, BIO label) triples.
SENTS = [
    [
        ("Melbourne", "NP", "B-LOC"),
        ("(", "Fpa", "O"),
        ("Australia", "NP", "B-LOC"),
        (")", "Fpt", "O"),
        (",", "Fc", "O"),
        ("25", "Z", "O"),
        ("may", "NC", "O"),
        ("(", "Fpa", "O"),
        ("EFE", "NC", "B-ORG"),
        (")", "Fpt", "O"),
        (".", "Fp", "O"),
    ],
    [("-", "Fg", "O")],
    [
        ("El", "DA", "O"),
        ("Abogado", "NC", "B-PER"),
        ("General", "AQ", "I-PER"),
        ("del", "SP", "I-PER"),
        ("Estado", "NC", "I-PER"),
        (",", "Fc", "O"),
        ("Daryl", "VMI", "B-PER"),
        ("Williams", "NC", "I-PER"),
        (",", "Fc", "O"),
        ("subrayó", "VMI", "O"),
        ("hoy", "RG", "O"),
        ("la", "DA", "O"),
        ("necesidad", "NC", "O"),
        ("de", "SP", "O"),
        ("tomar", "VMN", "O"),
        ("medidas", "NC", "O"),
        ("para", "SP", "O"),
        ("proteger", "VMN", "O"),
        ("al", "SP", "O"),
        ("sistema", "NC", "O"),
        ("judicial", "AQ", "O"),
        ("australiano", "AQ", "O"),
        ("frente", "RG", "O"),
        ("a", "SP", "O"),
        ("una", "DI", "O"),
        ("página", "NC", "O"),
        ("de", "SP", "O"),
        ("internet", "NC", "O"),
        ("que", "PR", "O"),
        ("imposibilita", "VMI", "O"),
        ("el", "DA", "O"),
        ("cumplimiento", "NC", "O"),
        ("de", "SP", "O"),
        ("los", "DA", "O"),
        ("principios", "NC", "O"),
        ("básicos", "AQ", "O"),
        ("de", "SP", "O"),
        ("la", "DA", "O"),
        ("Ley", "NC", "B-MISC"),
        (".", "Fp", "O"),
    ],
    [("La", "DA", "O"), ("ONU", "NP", "B-ORG")],
    [("Jun-21", "Z", "O"), ("2024", "Z", "O"), ("ÉPOCA", "NC", "O")],
]


def word2features(sent, i):
    """The feature function of the sklearn-crfsuite CoNLL-2002 tutorial."""
    word = sent[i][0]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
    }
    if i > 0:
        word1 = sent[i - 1][0]
        features.update(
            {
                "-1:word.lower()": word1.lower(),
                "-1:word.istitle()": word1.istitle(),
                "-1:word.isupper()": word1.isupper(),
            }
        )
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1 = sent[i + 1][0]
        features.update(
            {
                "+1:word.lower()": word1.lower(),
                "+1:word.istitle()": word1.istitle(),
                "+1:word.isupper()": word1.isupper(),
            }
        )
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def words(sent):
    return [token[0] for token in sent]


def labels(sent):
    return [token[-1] for token in sent]


# --------------------------------------------------------------------------
# A naive reference implementation of every parameter, to cross-check the
# generated fast code.
def _shape(word):
    out = []
    for c in word:
        if c.isalpha():
            out.append("X" if c.isupper() else "x")
        elif c.isdigit():
            out.append("d")
        else:
            out.append(c)
    return "".join(out)


def _short_shape(word):
    shape = _shape(word)
    return "".join(c for i, c in enumerate(shape) if i == 0 or shape[i - 1] != c)


def _word_feats(word, p):
    f = {}
    if p["lower"]:
        f["word.lower()"] = ("lower", word.lower())
    if p["identity"]:
        f["word"] = ("identity", word)
    for k in p["prefixes"]:
        f[f"word[:{k}]"] = ("prefixes", word[:k])
    for k in p["suffixes"]:
        f[f"word[-{k}:]"] = ("suffixes", word[-k:])
    if p["shape"]:
        f["word.shape()"] = ("shape", _shape(word))
        f["word.short_shape()"] = ("shape", _short_shape(word))
    if p["flags"]:
        f["word.isupper()"] = ("isupper", word.isupper())
        f["word.istitle()"] = ("istitle", word.istitle())
        f["word.isdigit()"] = ("isdigit", word.isdigit())
    return f


def naive_features(sent, p):
    names = [c for c in (p["columns"] or ())]
    out = []
    n = len(sent)
    nf = p["neighbor_features"]
    for i in range(n):
        d = {}
        if p["bias"]:
            d["bias"] = 1.0
        for key, (_, value) in _word_feats(sent[i][0], p).items():
            d[key] = value
        for j, name in enumerate(names, start=1):
            if name is not None:
                d[name] = sent[i][j]
        for off in range(-p["window"], p["window"] + 1):
            if off == 0 or not 0 <= i + off < n:
                continue
            for key, (group, value) in _word_feats(sent[i + off][0], p).items():
                wanted = nf == "all" or group in nf
                wanted |= group in ("isupper", "istitle", "isdigit") and "flags" in nf
                if wanted:
                    d[f"{off:+d}:{key}"] = value
            for j, name in enumerate(names, start=1):
                if name is not None:
                    d[f"{off:+d}:{name}"] = sent[i + off][j]
        if p["bos_eos"] and i == 0:
            d["BOS"] = True
        if p["bos_eos"] and i == n - 1:
            d["EOS"] = True
        out.append(d)
    return out


# --------------------------------------------------------------------------
def test_defaults_reproduce_sklearn_crfsuite_tutorial():
    expected = [sent2features(s) for s in SENTS]
    featurizer = SequenceFeaturizer()
    # (word, pos, label) triples as in the tutorial: extra columns are ignored
    assert featurizer.fit_transform(SENTS) == expected
    # plain str tokens, and tokens given as lists
    assert featurizer.transform([words(s) for s in SENTS]) == expected
    assert featurizer.transform([[list(t) for t in s] for s in SENTS]) == expected
    # tuple sentences
    assert featurizer.transform([tuple(words(s)) for s in SENTS]) == expected


def test_key_order():
    # dicts compare equal regardless of order, but the order is deterministic:
    # token features, left neighbours, BOS, right neighbours, EOS.
    feats = SequenceFeaturizer().transform([["Jim", "bought", "shares"]])[0]
    base = [
        "bias",
        "word.lower()",
        "word[-2:]",
        "word[-3:]",
        "word.isupper()",
        "word.istitle()",
        "word.isdigit()",
    ]
    nb = ["word.lower()", "word.isupper()", "word.istitle()"]
    assert list(feats[0]) == base + ["BOS"] + ["+1:" + k for k in nb]
    assert list(feats[1]) == base + ["-1:" + k for k in nb] + ["+1:" + k for k in nb]
    assert list(feats[2]) == base + ["-1:" + k for k in nb] + ["EOS"]


def test_window_keys():
    sent = ["a", "b", "c", "d", "e"]
    feats = SequenceFeaturizer(window=2).transform([sent])[0]
    nb = ("word.lower()", "word.istitle()", "word.isupper()")
    base = {
        "bias",
        "word.lower()",
        "word[-2:]",
        "word[-3:]",
        "word.isupper()",
        "word.istitle()",
        "word.isdigit()",
    }
    middle = base | {f"{o}:{k}" for o in ("-2", "-1", "+1", "+2") for k in nb}
    assert set(feats[2]) == middle
    assert feats[2]["-2:word.lower()"] == "a"
    assert feats[2]["+2:word.lower()"] == "e"
    assert set(feats[0]) == base | {"BOS"} | {
        f"{o}:{k}" for o in ("+1", "+2") for k in nb
    }
    assert set(feats[1]) == base | {f"{o}:{k}" for o in ("-1", "+1", "+2") for k in nb}
    assert set(feats[4]) == base | {"EOS"} | {
        f"{o}:{k}" for o in ("-2", "-1") for k in nb
    }

    feats0 = SequenceFeaturizer(window=0).transform([sent])[0]
    assert set(feats0[2]) == base
    assert set(feats0[0]) == base | {"BOS"}
    assert set(feats0[4]) == base | {"EOS"}

    # window wider than the sentence
    feats5 = SequenceFeaturizer(window=5).transform([["x", "y"]])[0]
    assert feats5[0]["+1:word.lower()"] == "y"
    assert not any(k.startswith(("+2:", "-")) for k in feats5[0])


def test_prefixes_suffixes_shape_identity():
    featurizer = SequenceFeaturizer(
        window=0,
        identity=True,
        prefixes=(1, 3),
        suffixes=(4,),
        shape=True,
        bos_eos=False,
    )
    [[f_jun, f_ab, f_epoca, f_x]] = featurizer.transform(
        [["Jun-21", "ab", "ÉPOCA", "X.Y"]]
    )
    assert f_jun["word"] == "Jun-21"
    assert f_jun["word[:1]"] == "J"
    assert f_jun["word[:3]"] == "Jun"
    assert f_jun["word[-4:]"] == "n-21"
    assert f_jun["word.shape()"] == "Xxx-dd"
    assert f_jun["word.short_shape()"] == "Xx-d"
    assert "word[-2:]" not in f_jun and "word[-3:]" not in f_jun
    # lengths larger than the word give the whole word, as slicing does
    assert f_ab["word[:3]"] == "ab" and f_ab["word[-4:]"] == "ab"
    assert f_ab["word.shape()"] == "xx" and f_ab["word.short_shape()"] == "x"
    assert f_epoca["word.shape()"] == "XXXXX"
    assert f_epoca["word.short_shape()"] == "X"
    assert f_x["word.shape()"] == "X.X"
    # prefixes/suffixes are on the word as-is (not lower-cased)
    assert SequenceFeaturizer().transform([["ABCD"]])[0][0]["word[-2:]"] == "CD"


def test_feature_switches():
    sent = ["The", "EFE", "agency"]
    feats = SequenceFeaturizer(lower=False, flags=False, bias=False, bos_eos=False)
    out = feats.transform([sent])[0]
    assert out[1] == {"word[-2:]": "FE", "word[-3:]": "EFE"}
    # neighbour features select only among the enabled token features
    out = SequenceFeaturizer(flags=False).transform([sent])[0]
    assert "-1:word.istitle()" not in out[1]
    assert out[1]["-1:word.lower()"] == "the"

    out = SequenceFeaturizer(neighbor_features="all").transform([sent])[0]
    assert out[1]["-1:word[-3:]"] == "The"
    assert out[1]["+1:word.isdigit()"] is False
    assert "-1:bias" not in out[1]

    featurizer = SequenceFeaturizer(neighbor_features=("suffixes", "flags"))
    out = featurizer.transform([sent])[0]
    assert {k for k in out[1] if k.startswith("-1:")} == {
        "-1:word[-2:]",
        "-1:word[-3:]",
        "-1:word.isupper()",
        "-1:word.istitle()",
        "-1:word.isdigit()",
    }
    out = SequenceFeaturizer(neighbor_features=()).transform([sent])[0]
    assert not any(k.startswith(("-", "+")) for k in out[1])

    empty = SequenceFeaturizer(
        lower=False, suffixes=(), flags=False, bias=False, bos_eos=False
    ).transform([sent])
    assert empty == [[{}, {}, {}]]


def test_value_types():
    out = SequenceFeaturizer(shape=True, prefixes=(2,), identity=True).transform(
        [w for w in (words(s) for s in SENTS)]
    )
    for sent in out:
        for feats in sent:
            for key, value in feats.items():
                assert type(key) is str
                assert type(value) in (str, bool, float), (key, value)


def test_columns_pos_for_token_and_neighbours():
    featurizer = SequenceFeaturizer(columns=("postag", None))
    out = featurizer.transform(SENTS)
    s0 = out[0]
    assert s0[0]["postag"] == "NP"
    assert "-1:postag" not in s0[0] and s0[0]["+1:postag"] == "Fpa"
    assert s0[1]["postag"] == "Fpa"
    assert s0[1]["-1:postag"] == "NP" and s0[1]["+1:postag"] == "NP"
    assert s0[-1]["-1:postag"] == "Fpt" and "+1:postag" not in s0[-1]
    # labels (the skipped column) never leak into the features
    assert not any("O" == v or "B-LOC" == v for f in s0 for v in f.values())
    # everything else is the tutorial
    for sent, feats in zip(SENTS, out):
        expected = sent2features(sent)
        for i, (f, e) in enumerate(zip(feats, expected)):
            stripped = {k: v for k, v in f.items() if not k.endswith("postag")}
            assert stripped == e

    # window=2 with (word, pos) pairs
    pairs = [[t[:2] for t in SENTS[0]]]
    out2 = SequenceFeaturizer(window=2, columns=("pos",)).transform(pairs)[0]
    assert out2[2]["-2:pos"] == "NP" and out2[2]["+2:pos"] == "Fc"

    # neighbours only get the columns when neighbor_features=()
    featurizer = SequenceFeaturizer(columns=("pos",), neighbor_features=())
    out3 = featurizer.transform(pairs)[0]
    assert {k for k in out3[1] if k.startswith(("-", "+"))} == {"-1:pos", "+1:pos"}


def test_columns_mismatch_errors():
    with pytest.raises(ValueError, match=r"sentence 0, token 0: expected 2 columns"):
        SequenceFeaturizer(columns=("pos",)).transform(SENTS)
    with pytest.raises(ValueError, match=r"sentence 1, token 2: expected 3 columns"):
        SequenceFeaturizer(columns=("pos", None)).transform(
            [SENTS[1], [("a", "b", "c"), ("d", "e", "f"), ("g", "h")]]
        )
    with pytest.raises(ValueError, match=r"sentence 0, token 0: expected 2 columns"):
        SequenceFeaturizer(columns=("pos",)).transform([["plain", "strings"]])
    with pytest.raises(TypeError, match=r"sentence 0, token 1: column 1 must be a str"):
        SequenceFeaturizer(columns=("pos",)).transform([[("a", "DT"), ("b", None)]])


@pytest.mark.parametrize(
    "X, exc, match",
    [
        ("a sentence", TypeError, "X must be a list of sentences"),
        (None, TypeError, "X must be a list of sentences"),
        ({"a": ["b"]}, TypeError, "X must be a list of sentences"),
        (["Hello", "world"], TypeError, r"sentence 0 is a str .*wrap a single"),
        ([["ok"], 3], TypeError, r"sentence 1 must be a list of tokens"),
        ([["ok"], ["fine", 3]], TypeError, r"sentence 1, token 1: a token must be"),
        ([["ok", None]], TypeError, r"sentence 0, token 1: a token must be"),
        ([["ok", {"w": "x"}]], TypeError, r"sentence 0, token 1: a token must be"),
        ([["a", b"bytes"]], TypeError, r"sentence 0, token 1: a token must be"),
        ([[("a", "b"), ()]], ValueError, r"sentence 0, token 1: .*at least one"),
        ([[("a",), (1, "NN")]], TypeError, r"sentence 0, token 1: column 0 \(the word"),
        ([[["a"], [None]]], TypeError, r"sentence 0, token 1: column 0 \(the word"),
    ],
)
def test_bad_input(X, exc, match):
    with pytest.raises(exc, match=match):
        SequenceFeaturizer().transform(X)


def test_empty_inputs():
    featurizer = SequenceFeaturizer()
    assert featurizer.transform([]) == []
    assert featurizer.transform([[], ["a"], ()]) == [[], sent2features([["a"]]), []]
    assert SequenceFeaturizer(columns=("pos",)).transform([[]]) == [[]]


def test_numpy_and_other_containers():
    expected = [sent2features(s) for s in SENTS]
    np_words = [np.array(words(s)) for s in SENTS]
    out = SequenceFeaturizer().transform(np_words)
    assert out == expected
    assert all(type(v) is str for f in out[0] for v in f.values() if isinstance(v, str))

    np_rows = [np.array([t[:2] for t in s]) for s in SENTS]  # 2-D arrays of str
    out = SequenceFeaturizer(columns=("pos",)).transform(np_rows)
    pairs = [[t[:2] for t in s] for s in SENTS]
    ref = SequenceFeaturizer(columns=("pos",)).transform(pairs)
    assert out == ref
    assert type(out[0][0]["pos"]) is str

    # a generator of sentences
    assert SequenceFeaturizer().transform(iter(SENTS)) == expected


def test_outputs_are_independent_dicts():
    out = SequenceFeaturizer().transform([["a", "b", "c", "d"], ["a", "b", "c", "d"]])
    ids = {id(d) for s in out for d in s}
    assert len(ids) == 8
    out[0][1]["new"] = 1
    assert "new" not in out[1][1] and "new" not in out[0][2]


@pytest.mark.parametrize("seed", range(4))
def test_matches_naive_reference_on_random_params(seed):
    rng = random.Random(seed)
    vocab = ["a", "Bb", "CCC", "d4", "12", "Épée", "x-Y", "", "...", "Zz9z"]
    pos_tags = ["NN", "VB", "DT"]
    sents = [
        [(rng.choice(vocab), rng.choice(pos_tags), "O") for _ in range(n)]
        for n in [0, 1, 2, 3, 4, 5, 6, 7, 9]
    ]
    for _ in range(25):
        params = dict(
            window=rng.choice([0, 1, 2, 3]),
            lower=rng.random() < 0.7,
            identity=rng.random() < 0.3,
            prefixes=tuple(rng.sample([1, 2, 3], rng.randint(0, 2))),
            suffixes=tuple(rng.sample([1, 2, 3, 4], rng.randint(0, 2))),
            shape=rng.random() < 0.4,
            flags=rng.random() < 0.6,
            neighbor_features=rng.choice(
                ["all", (), ("lower",), ("lower", "istitle", "isupper"),
                 ("flags", "shape"), ("identity", "prefixes", "suffixes")]
            ),
            columns=rng.choice([None, ("pos", None)]),
            bos_eos=rng.random() < 0.7,
            bias=rng.random() < 0.7,
        )
        out = SequenceFeaturizer(**params).transform(sents)
        assert out == [naive_features(s, params) for s in sents], params


def test_params_searchable_with_gridsearch():
    class MajorityTagger(BaseEstimator):
        """Dummy sequence estimator: predicts the most frequent label."""

        def fit(self, X, y):
            assert all(isinstance(f, dict) for s in X for f in s)
            self.label_ = Counter(lab for s in y for lab in s).most_common(1)[0][0]
            self.feature_names_ = {k for s in X for f in s for k in f}
            return self

        def predict(self, X):
            return [[self.label_] * len(s) for s in X]

        def score(self, X, y):
            pred = self.predict(X)
            pairs = [(p, t) for ps, ts in zip(pred, y) for p, t in zip(ps, ts)]
            return sum(p == t for p, t in pairs) / len(pairs)

    X = SENTS * 4
    y = [labels(s) for s in X]
    pipe = make_pipeline(SequenceFeaturizer(), MajorityTagger())
    grid = GridSearchCV(
        pipe,
        {
            "sequencefeaturizer__window": [0, 1],
            "sequencefeaturizer__suffixes": [(), (2, 3)],
        },
        cv=2,
    )
    grid.fit(X, y)
    searched = [
        (p["sequencefeaturizer__window"], p["sequencefeaturizer__suffixes"])
        for p in grid.cv_results_["params"]
    ]
    assert sorted(searched) == [(0, ()), (0, (2, 3)), (1, ()), (1, (2, 3))]
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    assert 0 < grid.score(X, y) <= 1

    pipe.set_params(sequencefeaturizer__window=0).fit(X, y)
    assert not any(k.startswith(("-1:", "+1:")) for k in pipe[-1].feature_names_)
    pipe.set_params(sequencefeaturizer__window=1).fit(X, y)
    assert "-1:word.lower()" in pipe[-1].feature_names_


def test_clone_get_set_params_and_pickle():
    featurizer = SequenceFeaturizer(window=2, columns=("pos",), prefixes=[1, 2])
    params = featurizer.get_params()
    assert params["window"] == 2
    assert params["columns"] == ("pos",)
    assert params["prefixes"] == [1, 2]  # stored untouched
    assert set(params) == {
        "window", "lower", "identity", "prefixes", "suffixes", "shape", "flags",
        "neighbor_features", "columns", "bos_eos", "bias",
        "vectors", "vector_lookup", "vector_window", "vectors_only", "output", "hashing",
    }
    cloned = clone(featurizer)
    assert cloned is not featurizer and cloned.get_params() == params
    assert cloned.set_params(window=0, shape=True) is cloned
    assert cloned.window == 0 and cloned.shape is True
    assert featurizer.window == 2
    restored = pickle.loads(pickle.dumps(featurizer))
    X = [[t[:2] for t in s] for s in SENTS]
    assert restored.transform(X) == featurizer.transform(X)
    assert "window=2" in repr(featurizer)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"window": -1}, r"The 'window' parameter of SequenceFeaturizer must be"),
        ({"window": 1.5}, r"The 'window' parameter"),
        ({"lower": "yes"}, r"The 'lower' parameter"),
        ({"prefixes": 2}, r"The 'prefixes' parameter"),
        ({"prefixes": (0,)}, r"The 'prefixes' parameter .* integers >= 1"),
        ({"suffixes": ("3",)}, r"The 'suffixes' parameter .* integers >= 1"),
        ({"suffixes": (True,)}, r"The 'suffixes' parameter .* integers >= 1"),
        ({"suffixes": (2, 2)}, r"The 'suffixes' parameter .* duplicates"),
        ({"neighbor_features": "lower"}, r"The 'neighbor_features' parameter"),
        ({"neighbor_features": ("foo",)}, r"The 'neighbor_features' parameter"),
        ({"columns": "pos"}, r"The 'columns' parameter"),
        ({"columns": ("pos", "pos")}, r"The 'columns' parameter .* distinct"),
        ({"columns": ("",)}, r"The 'columns' parameter"),
        ({"columns": (3,)}, r"The 'columns' parameter"),
        ({"columns": ("word.lower()",)}, r"The 'columns' parameter .* clashing"),
        ({"columns": ("BOS",)}, r"The 'columns' parameter .* clashing"),
        ({"vectors": {"a": [1.0]}}, r"The 'vectors' parameter .* wrap it"),
        ({"vectors": "glove.txt"}, r"The 'vectors' parameter .* instance of .*WordVectors"),
        ({"vector_lookup": "upper"}, r"The 'vector_lookup' parameter"),
        ({"vector_window": -1}, r"The 'vector_window' parameter"),
        ({"vectors_only": True}, r"The 'vectors_only' parameter .* only with"),
    ],
)
def test_invalid_params(params, match):
    featurizer = SequenceFeaturizer(**params)  # no validation in __init__
    for method in ("fit", "transform", "fit_transform"):
        with pytest.raises(InvalidParameterError, match=match):
            getattr(featurizer, method)([["a"]])


def test_valid_param_variants():
    X = [["a", "B", "c"]]
    ref = SequenceFeaturizer().transform(X)
    same = SequenceFeaturizer(
        window=np.int64(1),
        lower=np.bool_(True),
        suffixes=[np.int32(2), 3],
        neighbor_features=["lower", "istitle", "isupper"],
    ).transform(X)
    assert same == ref
    # a column named like a disabled feature is fine
    out = SequenceFeaturizer(columns=("bias",), bias=False, window=0).transform(
        [[("a", "x")]]
    )
    assert out[0][0]["bias"] == "x"


def test_stateless_transformer_api():
    featurizer = SequenceFeaturizer()
    check_is_fitted(featurizer)  # no fit needed
    assert featurizer.fit([["a"]]) is featurizer
    assert featurizer.__dict__.keys() == SequenceFeaturizer().__dict__.keys()
    assert not hasattr(featurizer, "n_features_in_")

    tags = get_tags(featurizer)
    assert tags.requires_fit is False
    assert tags.input_tags.two_d_array is False
    assert tags.input_tags.string is True
    assert tags.target_tags.required is False
    assert tags.transformer_tags is not None


@pytest.mark.parametrize("cls", [SequenceFeaturizer, TemplateFeaturizer])
def test_set_output(cls):
    featurizer = cls()
    assert featurizer.set_output(transform="default") is featurizer
    assert featurizer.set_output() is featurizer
    with pytest.raises(ValueError, match=f"{cls.__name__} does not support set_output"):
        featurizer.set_output(transform="pandas")
    # pipelines can configure the default output
    make_pipeline(cls()).set_output(transform="default")
    # the global config does not change the output
    X = [words(s) for s in SENTS]
    with config_context(transform_output="pandas"):
        out = SequenceFeaturizer().fit_transform(X)
    assert out == [sent2features(s) for s in SENTS]
    assert not hasattr(featurizer, "get_feature_names_out")


@pytest.mark.parametrize(
    "check",
    [
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_get_params_invariance,
        check_set_params,
        check_do_not_raise_errors_in_init_or_set_params,
        check_estimator_cloneable,
        check_estimator_repr,
        check_mixin_order,
        check_valid_tag_types,
        check_param_validation,
    ],
    ids=lambda check: check.__name__,
)
def test_sklearn_fit_free_checks(check):
    check("SequenceFeaturizer", SequenceFeaturizer())


def test_docstring_examples():
    result = doctest.testmod(featurizer_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_parameter_grid_exhaustive_small():
    """Every combination of the boolean switches agrees with the reference."""
    sents = [[(w, "NN") for w in words(s)] for s in SENTS]
    for lower, identity, shape, flags, bos_eos, bias in itertools.product(
        [False, True], repeat=6
    ):
        params = dict(
            window=1,
            lower=lower,
            identity=identity,
            prefixes=(2,),
            suffixes=(2, 3),
            shape=shape,
            flags=flags,
            neighbor_features="all",
            columns=("pos",),
            bos_eos=bos_eos,
            bias=bias,
        )
        out = SequenceFeaturizer(**params).transform(sents)
        assert out == [naive_features(s, params) for s in sents], params


# --------------------------------------------------------------------------
# Word vectors
VOCAB = sorted({w for s in SENTS for w in words(s)} | {"melbourne", "efe"})
VECTORS = {w: np.random.default_rng(k).normal(size=3) for k, w in enumerate(VOCAB)}


def test_vectors_add_a_dense_block_next_to_the_same_dicts():
    table = WordVectors(VECTORS)
    X = [words(s) for s in SENTS] + [[]]
    out = SequenceFeaturizer(vectors=table).transform(X)
    plain = SequenceFeaturizer().transform(X)
    assert len(out) == len(X)
    for sent, seq, dicts in zip(X, out, plain):
        assert type(seq) is tuple and len(seq) == 2  # the (tokens, array) form
        tokens, dense = seq
        assert tokens == dicts
        assert dense.shape == (len(sent), 3) and dense.dtype == np.float64
        for t, word in enumerate(sent):
            np.testing.assert_array_equal(dense[t], VECTORS[word])


def test_vector_lookup_and_window():
    table = WordVectors({"melbourne": np.ones(3), "(": np.full(3, 2.0)})
    sent = [["Melbourne", "(", "Australia"]]
    [exact] = SequenceFeaturizer(vectors=table, vectors_only=True).transform(sent)
    assert exact[:, 0].tolist() == [0.0, 2.0, 0.0]
    [lower] = SequenceFeaturizer(
        vectors=table, vector_lookup="lower", vectors_only=True
    ).transform(sent)
    assert lower[:, 0].tolist() == [1.0, 2.0, 0.0]
    [wide] = SequenceFeaturizer(
        vectors=table, vector_lookup="exact_then_lower", vector_window=1,
        vectors_only=True,
    ).transform(sent)
    # columns: previous word, the word, next word (zeros outside the sentence)
    assert wide.shape == (3, 9)
    assert wide[:, ::3].tolist() == [[0, 1, 2], [1, 2, 0], [2, 0, 0]]


def test_vectors_only_gives_arrays_and_float32_stays_float32():
    table = WordVectors({w: v.astype(np.float32) for w, v in VECTORS.items()})
    X = [words(s) for s in SENTS]
    out = SequenceFeaturizer(vectors=table, vectors_only=True).fit_transform(X)
    assert all(type(a) is np.ndarray and a.dtype == np.float32 for a in out)
    assert [len(a) for a in out] == [len(s) for s in X]
    mixed = SequenceFeaturizer(vectors=table).transform(X)
    for a, seq in zip(out, mixed):
        np.testing.assert_array_equal(a, seq[1])
        assert a.flags.c_contiguous


def test_vectors_read_the_word_column_of_tokens_with_columns():
    table = WordVectors(VECTORS)
    featurizer = SequenceFeaturizer(vectors=table, columns=("pos", None))
    [seq] = featurizer.transform(SENTS[:1])
    assert seq[0][0]["pos"] == "NP"
    np.testing.assert_array_equal(seq[1][2], VECTORS["Australia"])


def test_clone_and_pickle_share_or_keep_the_table():
    table = WordVectors(VECTORS)
    featurizer = SequenceFeaturizer(vectors=table, vector_window=1)
    assert clone(featurizer).vectors is table
    restored = pickle.loads(pickle.dumps(featurizer))
    X = [words(s) for s in SENTS]
    for a, b in zip(restored.transform(X), featurizer.transform(X)):
        assert a[0] == b[0]
        np.testing.assert_array_equal(a[1], b[1])


def test_grid_search_does_not_copy_the_table():
    import tracemalloc

    class DenseShapeTagger(BaseEstimator):
        """Records the width of the dense blocks it is fitted on."""

        def fit(self, X, y):
            self.n_dense_ = X[0][1].shape[1]
            return self

        def score(self, X, y):
            return 0.0

    big = WordVectors(
        {f"w{k}": np.full(50, k, dtype=np.float64) for k in range(20_000)}
        | {w: np.zeros(50) for w in VOCAB}
    )  # 8 MB
    X = [words(s) for s in SENTS] * 4
    y = [labels(s) for s in SENTS] * 4
    pipe = make_pipeline(SequenceFeaturizer(vectors=big), DenseShapeTagger())
    grid = GridSearchCV(pipe, {"sequencefeaturizer__vector_window": [0, 1, 2]}, cv=2)
    tracemalloc.start()
    try:
        grid.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 7 fits (3 candidates x 2 folds + the refit): one copy would be 8 MB
    assert peak < big.vectors.nbytes / 4
    assert grid.best_estimator_[0].vectors is big
    assert grid.best_estimator_[-1].n_dense_ == 50 * (
        2 * grid.best_params_["sequencefeaturizer__vector_window"] + 1
    )


def _ner_subset(n=60, d=8):
    from sklearn_crf.datasets import load_conll2002

    data = load_conll2002("train", n_sentences=n)
    vocab = sorted({w.lower() for s in data.sentences for w in s})
    rng = np.random.default_rng(0)
    table = WordVectors({w: rng.normal(size=d).astype(np.float32) for w in vocab})
    return data.sentences, data.tags, table


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_cross_val_score_of_a_pipeline_with_vectors_is_the_manual_folds():
    from sklearn.model_selection import KFold, cross_val_score

    from sklearn_crf import CRFTagger

    X, y, table = _ner_subset()
    pipe = make_pipeline(
        SequenceFeaturizer(vectors=table, vector_lookup="lower"),
        CRFTagger(c2=0.1, max_iter=15, n_jobs=1),
    )
    cv = KFold(2)
    scores = cross_val_score(pipe, X, y, cv=cv)
    manual = []
    for train, test in cv.split(X):
        model = clone(pipe).fit([X[i] for i in train], [y[i] for i in train])
        assert model[-1].n_dense_features_ == 8
        manual.append(model.score([X[i] for i in test], [y[i] for i in test]))
    np.testing.assert_array_equal(scores, manual)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_grid_search_over_the_vector_options():
    from sklearn_crf import CRFTagger

    X, y, table = _ner_subset()
    pipe = make_pipeline(
        SequenceFeaturizer(vectors=table, vector_lookup="lower"),
        CRFTagger(c2=0.1, max_iter=10, n_jobs=1),
    )
    grid = GridSearchCV(
        pipe,
        {"sequencefeaturizer__vector_window": [0, 1],
         "sequencefeaturizer__vectors_only": [False, True]},
        cv=2, error_score="raise",
    )
    grid.fit(X, y)
    assert len(grid.cv_results_["params"]) == 4
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    best = grid.best_estimator_
    window = grid.best_params_["sequencefeaturizer__vector_window"]
    assert best[0].vectors is table
    assert best[-1].n_dense_features_ == 8 * (2 * window + 1)
    only = grid.best_params_["sequencefeaturizer__vectors_only"]
    assert (len(best[-1].vectorizer_.feature_names_) == 0) == only


@pytest.fixture(scope="module")
def vectors_pipeline():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sklearn_crf import CRFTagger

    X, y, table = _ner_subset(40)
    pipe = make_pipeline(
        SequenceFeaturizer(vectors=table, vector_lookup="lower", vector_window=1),
        CRFTagger(c2=0.1, max_iter=10, n_jobs=1),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipe.fit(X, y)
    return pipe, X


def test_fitted_pipeline_with_vectors_round_trips_pickle_and_skops(vectors_pipeline):
    sio = pytest.importorskip("skops.io")
    pipe, X = vectors_pipeline
    expected = pipe[-1].predict_marginals(pipe[0].transform(X))
    data = sio.dumps(pipe)
    for restored in (pickle.loads(pickle.dumps(pipe)),
                     sio.loads(data, trusted=sio.get_untrusted_types(data=data))):
        assert restored[0].vectors is not pipe[0].vectors
        np.testing.assert_array_equal(restored[0].vectors.vectors, pipe[0].vectors.vectors)
        got = restored[-1].predict_marginals(restored[0].transform(X))
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)


def test_save_model_refuses_a_featurizer_with_vectors(vectors_pipeline, tmp_path):
    from sklearn_crf import save_model

    pipe, _ = vectors_pipeline
    with pytest.raises(ValueError, match=r"holds word vectors \(vectors=...\), which a "
                                         r"model file does not store: save this Pipeline with pickle"):
        save_model(pipe, tmp_path / "model.skcrf")
