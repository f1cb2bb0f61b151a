"""Reliability: bad input, extreme numerics, determinism, persistence, threads.

The bad-input tables below are the complete list of what ``CRFTagger`` must
reject (each with an error that says what is wrong and where: sequence index,
token index, feature key) or accept (single label, unseen labels at score
time, empty sequences, unusual containers). A failing call never changes a
fitted model.
"""

import copy
import decimal
import math
import os
import pickle
import subprocess
import sys
import tempfile
import types
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import reduce

import joblib
import numba
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import accuracy_score
from sklearn.utils.validation import check_is_fitted

from sklearn_crf import CRFTagger, InconsistentVersionWarning, __version__, _engine
from sklearn_crf._model.layout import build_layout
from sklearn_crf._training.objective import CRFObjective
from sklearn_crf._engine.threads import MIN_TOKENS_PER_THREAD
from sklearn_crf._features.vectorizer import EncodedCorpus

import _naive
from conftest import corpus_arrays, iob2_corpus, outcome, random_corpus

# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------

#: a valid corpus; the bad cases below break it at sequence 1, token 2
X_OK = [
    [{"w": "a", "n": 1.5, "d": {"n": 0.5}}, {"w": "b"}],
    [{"w": "c", "n": -0.5}, {"w": "a"}, {"w": "b", "n": 2.0}, {"w": "c"}],
]
Y_OK = [["A", "B"], ["B", "A", "B", "A"]]


def _with_token(token):
    X = copy.deepcopy(X_OK)
    X[1][2] = token
    return X


def _with_feature(key, value):
    return _with_token({"w": "b", key: value})


def _with_label(label, t=0):
    y = copy.deepcopy(Y_OK)
    y[1][t] = label
    return y


def _generator():
    return (seq for seq in X_OK)


_AT = r"X\[1\]\[2\]"  # where the bad token is
_KEY = _AT + r" has the feature key "
_V = _AT + r"\['v'\]"
_N = _AT + r"\['n'\]"
_LIST_OF_SEQUENCES = "must be a list of sequences"

#: X cases: bad for fit, predict, predict_marginals and score alike
#: (id, X, error, message regex)
BAD_X = [
    # the container
    ("X-empty", [], ValueError, r"X is empty: it must hold at least one sequence"),
    ("X-one-sequence", X_OK[1], ValueError,
     r"X looks like a single sequence of feature dicts.*pass \[X\]"),
    ("X-one-sequence-tuple", tuple(X_OK[1]), ValueError, r"single sequence of feature dicts"),
    ("X-str", "abc", TypeError, _LIST_OF_SEQUENCES + ", got a str"),
    ("X-dict", X_OK[0][0], TypeError, _LIST_OF_SEQUENCES + ", got a dict"),
    ("X-None", None, TypeError, _LIST_OF_SEQUENCES + ", got a NoneType"),
    ("X-int", 3, TypeError, _LIST_OF_SEQUENCES + ", got a int"),
    ("X-generator", "generator", TypeError, _LIST_OF_SEQUENCES + ", got a generator"),
    ("sequence-str", [X_OK[0], "abc"], TypeError, r"X\[1\] is a str; each sequence must be a list"),
    ("sequence-dict", [X_OK[0], {"w": "a"}], TypeError, r"X\[1\] is a dict; each sequence"),
    ("sequence-None", [X_OK[0], None], TypeError, r"X\[1\] is a NoneType; each sequence"),
    # tokens that are not dicts
    ("token-str", _with_token("b"), TypeError, _AT + r" is a str, expected a dict of features"),
    ("token-list-of-tuple", _with_token([("w", "b")]), TypeError,
     _AT + r" is a list token holding a tuple.*may only hold attribute names"),
    ("token-list-of-float", _with_token(["w", 1.0]), TypeError,
     _AT + r" is a list token holding a float"),
    ("token-None", _with_token(None), TypeError, _AT + r" is a NoneType, expected a dict"),
    ("token-int", _with_token(7), TypeError, _AT + r" is a int, expected a dict"),
    ("token-set", _with_token({"w"}), TypeError, _AT + r" is a set, expected a dict"),
    # non-finite values (of an attribute seen in training, so predict reaches them too)
    ("value-nan", _with_feature("n", float("nan")), ValueError,
     _N + r" is nan; feature values must be finite"),
    ("value-inf", _with_feature("n", float("inf")), ValueError, _N + r" is inf; feature"),
    ("value--inf", _with_feature("n", -float("inf")), ValueError, _N + r" is -inf; feature"),
    ("value-np.float32-nan", _with_feature("n", np.float32("nan")), ValueError, _N + r" is nan"),
    ("value-np.float64-inf", _with_feature("n", np.float64("inf")), ValueError, _N + r" is inf"),
    ("value-nested-nan", _with_feature("d", {"n": float("nan")}), ValueError,
     _AT + r"\['d:n'\] is nan"),
    # feature keys that are not str
    ("key-int", _with_feature(1, "x"), TypeError,
     _KEY + r"1 of type int; feature keys must be str"),
    ("key-int-numeric-value", _with_feature(1, 2.0), TypeError, _KEY + r"1 of type int"),
    ("key-None", _with_feature(None, "x"), TypeError, _KEY + r"None of type NoneType"),
    ("key-tuple", _with_feature(("k",), 1.0), TypeError, _KEY + r"\('k',\) of type tuple"),
    ("key-float", _with_feature(1.5, "x"), TypeError, _KEY + r"1.5 of type float"),
    ("key-nested-int", _with_feature("d", {2: "x"}), TypeError, _KEY + r"d:2 of type int"),
    # values of unsupported types
    ("value-None", _with_feature("v", None), TypeError,
     _V + r" is a NoneType; a feature value must be a str, a number"),
    ("value-object", _with_feature("v", object()), TypeError, _V + r" is a object; a feature"),
    ("value-complex", _with_feature("v", 1j), TypeError, _V + r" is a complex; a feature value"),
    ("value-Decimal", _with_feature("v", decimal.Decimal("1.5")), TypeError, _V + r" is a Decimal"),
    ("value-ndarray", _with_feature("v", np.ones(2)), TypeError, _V + r" is a ndarray"),
    ("value-function", _with_feature("v", len), TypeError,
     _V + r" is a builtin_function_or_method"),
    ("value-nested-None", _with_feature("d", {"v": None}), TypeError,
     _AT + r"\['d:v'\] is a NoneType"),
    ("value-list-of-int", _with_feature("v", ["x", 1]), TypeError,
     _V + r" holds a int; a list or set feature value may only hold str"),
    ("value-list-of-None", _with_feature("v", [None]), TypeError, _V + r" holds a NoneType"),
    ("value-list-of-list", _with_feature("v", [["x"]]), TypeError, _V + r" holds a list"),
    ("value-set-of-float", _with_feature("v", {1.5}), TypeError, _V + r" holds a float"),
]

#: cases that only fit sees: y, the pairing of X and y, sample_weight
#: (id, X, y, fit kwargs, error, message regex)
BAD_FIT = [
    ("X-y-different-lengths", X_OK, Y_OK[:1], {}, ValueError,
     r"X and y have different numbers of sequences: 2 and 1"),
    ("y-longer-than-X", X_OK[:1], Y_OK, {}, ValueError,
     r"X and y have different numbers of sequences: 1 and 2"),
    ("token-label-count", X_OK, [["A", "B"], ["B", "A", "B"]], {}, ValueError,
     r"sequence 1 has 4 tokens in X but 3 labels in y"),
    ("label-for-empty-sequence", [X_OK[0], []], [["A", "B"], ["A"]], {}, ValueError,
     r"sequence 1 has 0 tokens in X but 1 labels in y"),
    ("all-sequences-empty", [[], []], [[], []], {}, ValueError,
     r"y holds no labels: all 2 sequences are empty"),
    ("y-one-sequence", X_OK[:1], Y_OK[0], {}, ValueError,
     r"y looks like a single sequence of labels.*pass \[y\]"),
    ("y-one-sequence-ndarray", X_OK[:1], np.array(Y_OK[0]), {}, ValueError,
     r"y looks like a single sequence of labels"),
    ("y-str", X_OK[:1], "AB", {}, TypeError, r"y must be a list of sequences, got a str"),
    ("y-None", X_OK, None, {}, TypeError, r"y must be a list of sequences, got a NoneType"),
    ("y-empty", X_OK, [], {}, ValueError, r"y is empty"),
    ("y-sequence-str", X_OK, [["A", "B"], "BABA"], {}, TypeError,
     r"y\[1\] is a str; each sequence must be a list"),
    ("label-mixed-str-int", X_OK, _with_label(1), {}, TypeError,
     r"y mixes labels of different types: int \(e\.g\. 1\), str \(e\.g\. 'A'\)"),
    ("label-mixed-across-sequences", X_OK, [[1, 2], ["B", "A", "B", "A"]], {}, TypeError,
     r"y mixes labels of different types: int \(e\.g\. 1\), str \(e\.g\. 'B'\)"),
    ("label-mixed-int-float", X_OK, [[1, 2], [2, 1.5, 1, 2]], {}, TypeError,
     r"y mixes labels of different types: float \(e\.g\. 1\.5\), int \(e\.g\. 1\)"),
    ("label-mixed-bool-int", X_OK, [[True, 2], [2, True, 2, 2]], {}, TypeError,
     r"mixes labels of different types: bool \(e\.g\. True\), int \(e\.g\. 2\)"),
    ("label-mixed-bytes-str", X_OK, _with_label(b"A"), {}, TypeError,
     r"mixes labels of different types: bytes \(e\.g\. b'A'\), str"),
    ("label-nan", X_OK, [[1.0, 2.0], [1.0, 2.0, float("nan"), 1.0]], {}, ValueError,
     r"y\[1\]\[2\] is nan, not a label"),
    ("label-list", X_OK, _with_label(["A"], t=2), {}, TypeError,
     r"y\[1\]\[2\] is a list, which is not hashable"),
    ("label-dict", X_OK, _with_label({"A": 1}, t=2), {}, TypeError,
     r"y\[1\]\[2\] is a dict, which is not hashable"),
    ("sample_weight-length", X_OK, Y_OK, {"sample_weight": [1.0]}, ValueError,
     r"sample_weight has shape \(1,\), expected \(2,\)"),
    ("sample_weight-2d", X_OK, Y_OK, {"sample_weight": [[1.0, 1.0]]}, ValueError,
     r"sample_weight has shape \(1, 2\), expected \(2,\)"),
    ("sample_weight-nan", X_OK, Y_OK, {"sample_weight": [1.0, np.nan]}, ValueError,
     r"sample_weight\[1\] is nan"),
    ("sample_weight-negative", X_OK, Y_OK, {"sample_weight": [1.0, -2.0]}, ValueError,
     r"sample_weight\[1\] is -2\.0"),
] + [(case_id, X, Y_OK, {}, error, match) for case_id, X, error, match in BAD_X]

#: feature values that do not convert to a finite float64
BAD_X_CONVERSION = [
    pytest.param(_with_feature("n", 10**400), ValueError, _AT + r"\['n'\]",
                 id="value-int-too-large"),
    pytest.param(_with_feature("d", {"n": -(10**400)}), ValueError, _AT + r"\['d:n'\]",
                 id="value-nested-int-too-large"),
    pytest.param(_with_feature("w", b"\xff"), ValueError, _AT + r"\['w'\]",
                 id="value-bytes-not-utf8"),
    pytest.param(_with_feature("v", [b"\xff"]), ValueError, _AT + r"\['v'\]",
                 id="value-list-of-bytes-not-utf8"),
]


def _materialize(X):
    return _generator() if isinstance(X, str) and X == "generator" else X


@pytest.fixture(scope="module")
def fitted():
    # one thread: each call of a parallel numba kernel wakes the worker threads
    return CRFTagger(c2=0.1, all_possible_transitions=True, n_jobs=1).fit(X_OK, Y_OK)


class _Snapshot:
    """Everything observable about a fitted tagger, to check it is untouched."""

    def __init__(self, crf):
        self.state = pickle.dumps(crf)
        self.pred = crf.predict(X_OK)
        self.marg = crf.predict_marginals(X_OK)
        self.score = crf.score(X_OK, Y_OK)

    def check(self, crf):
        assert pickle.dumps(crf) == self.state
        assert crf.predict(X_OK) == self.pred
        assert crf.predict_marginals(X_OK) == self.marg
        assert crf.score(X_OK, Y_OK) == self.score


def _check_fit_fails(crf, X, y, kwargs, error, match):
    snapshot = _Snapshot(crf)
    with pytest.raises(error, match=match):
        crf.fit(_materialize(X), y, **kwargs)
    snapshot.check(crf)
    fresh = CRFTagger()
    with pytest.raises(error, match=match):
        fresh.fit(_materialize(X), y, **kwargs)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)


@pytest.mark.parametrize(
    "X, y, kwargs, error, match",
    [pytest.param(*case[1:], id=case[0]) for case in BAD_FIT],
)
def test_bad_fit_input_is_reported_and_leaves_the_model_untouched(
    fitted, X, y, kwargs, error, match
):
    _check_fit_fails(copy.deepcopy(fitted), X, y, kwargs, error, match)


@pytest.mark.parametrize(
    "X, error, match",
    # predicting no sequences is valid: X-empty is in test_empty_sequences
    [pytest.param(*case[1:], id=case[0]) for case in BAD_X if case[0] != "X-empty"]
    + BAD_X_CONVERSION,
)
@pytest.mark.parametrize("method", ["predict", "predict_marginals", "score"])
def test_bad_predict_input_is_reported_and_leaves_the_model_untouched(
    fitted, method, X, error, match
):
    crf = copy.deepcopy(fitted)
    snapshot = _Snapshot(crf)
    args = (Y_OK,) if method == "score" else ()
    with pytest.raises(error, match=match):
        getattr(crf, method)(_materialize(X), *args)
    snapshot.check(crf)


@pytest.mark.parametrize("X, error, match", BAD_X_CONVERSION)
def test_bad_fit_input_conversion(fitted, X, error, match):
    _check_fit_fails(copy.deepcopy(fitted), X, Y_OK, {}, error, match)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {"n": -float("inf")}])
@pytest.mark.parametrize("method", ["predict", "predict_marginals"])
def test_non_finite_value_of_an_unseen_attribute_at_predict_time(fitted, method, value):
    """Rejected although the attribute is ignored, so that predict accepts what fit does."""
    with pytest.raises(ValueError, match=_AT + r"\['unseen(:n)?'\] is (nan|inf|-inf)"):
        getattr(fitted, method)(_with_feature("unseen", value))


def test_predict_errors_before_fitting():
    for method, args in [("predict", ()), ("predict_marginals", ()), ("score", (Y_OK,))]:
        with pytest.raises(NotFittedError):
            getattr(CRFTagger(), method)(X_OK, *args)


# --------------------------------------------------------------------------
# unusual but valid input
# --------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["O", 7, ("O", 1)], ids=["str", "int", "tuple"])
@pytest.mark.parametrize(
    "params",
    [{}, {"c1": 0.1}, {"c1": 0.1, "solver": "l-bfgs-b"},
     {"all_possible_states": True, "all_possible_transitions": True}, {"min_freq": 5}],
    ids=["l2", "owlqn", "l-bfgs-b", "all-possible", "min_freq"],
)
def test_single_label_trains_and_predicts_that_label(params, label):
    y = [[label] * len(seq) for seq in X_OK]
    crf = CRFTagger(n_jobs=1, **params).fit(X_OK, y)
    assert crf.classes_.tolist() == [label]
    X_new = [[{"w": "zzz"}], [], [{"w": "a"}, {}, {"n": 3.0}]]
    assert crf.predict(X_OK) == y
    assert crf.predict(X_new) == [[label], [], [label] * 3]
    assert crf.predict_marginals(X_new) == [[{label: 1.0}], [], [{label: 1.0}] * 3]
    assert crf.score(X_OK, y) == 1.0
    assert np.isfinite(crf.coef_).all() and np.isfinite(crf.loss_)


def test_score_with_tuple_labels():
    y = [[("B", 1) if lab == "B" else ("A", 0) for lab in seq] for seq in Y_OK]
    crf = CRFTagger(c2=0.1, n_jobs=1).fit(X_OK, y)
    assert crf.score(X_OK, y) == flat_accuracy(y, crf.predict(X_OK))


def flat_accuracy(y_true, y_pred):
    pairs = [(a, b) for s, t in zip(y_true, y_pred) for a, b in zip(s, t)]
    return sum(a == b for a, b in pairs) / len(pairs)


@pytest.mark.parametrize(
    "y_true, sample_weight",
    [
        ([["A", "UNSEEN"], ["B", "A", "NEW", "A"]], None),
        ([["X", "Y"], ["Z", "X", "Y", "Z"]], None),  # no label known to the model
        ([["A", "UNSEEN"], ["B", "A", "NEW", "A"]], [2.0, 0.5]),
        ([[1, 2], [1, 2, 1, 2]], None),  # labels of another type than the model's
    ],
    ids=["some-unseen", "all-unseen", "weighted", "other-type"],
)
def test_unseen_labels_at_score_time_are_handled_as_sklearn_does(fitted, y_true, sample_weight):
    pred = fitted.predict(X_OK)
    flat_true = [label for seq in y_true for label in seq]
    flat_pred = [label for seq in pred for label in seq]
    weights = None if sample_weight is None else np.repeat(sample_weight, [2, 4])
    expected = outcome(lambda: accuracy_score(flat_true, flat_pred, sample_weight=weights))
    got = outcome(lambda: fitted.score(X_OK, y_true, sample_weight=sample_weight))
    assert got == expected
    assert isinstance(got[1], (float, np.floating)) or got[1] is ValueError


def test_empty_sequences(fitted):
    X_empty = [[]] + X_OK + [[], []]
    y_empty = [[]] + Y_OK + [[], []]
    crf = CRFTagger(c2=0.1, all_possible_transitions=True, n_jobs=1).fit(X_empty, y_empty)
    np.testing.assert_allclose(crf.coef_, fitted.coef_, rtol=1e-10)  # they add nothing
    assert crf.predict([]) == [] and crf.predict_marginals([]) == []
    assert crf.predict([[]]) == [[]] and crf.predict_marginals([[]]) == [[]]
    pred, marg = crf.predict(X_OK), crf.predict_marginals(X_OK)
    assert crf.predict(X_empty) == [[]] + pred + [[], []]
    assert crf.predict_marginals(X_empty) == [[]] + marg + [[], []]
    assert crf.score(X_empty, y_empty) == crf.score(X_OK, Y_OK)
    assert crf.score(X_empty, y_empty, sample_weight=[5, 1, 1, 5, 5]) == crf.score(X_OK, Y_OK)
    # no token at all: whatever scikit-learn's accuracy_score does with no samples
    no_tokens = outcome(lambda: crf.score([[], []], [[], []]))
    assert no_tokens == outcome(lambda: accuracy_score([], []))


def test_unusual_containers_give_the_same_model():
    """Tuples, 1-d object arrays, read-only mappings, empty tokens and big ints."""
    X = [[{"w": "a", "n": 1}, {}, {"w": "b"}], [{"w": "b"}, {"w": "a", "n": True}]]
    y = [["A", "B", "A"], ["B", "A"]]
    ref = CRFTagger(c2=0.1).fit(X, y)
    seq0 = np.empty(3, dtype=object)
    seq0[:] = X[0]
    variants = [
        (tuple(tuple(s) for s in X), tuple(tuple(s) for s in y)),
        ([seq0, X[1]], [np.array(y[0]), np.array(y[1])]),
        ([[types.MappingProxyType(tok) for tok in seq] for seq in X], y),
    ]
    for X2, y2 in variants:
        crf = CRFTagger(c2=0.1).fit(X2, y2)
        np.testing.assert_array_equal(crf.coef_, ref.coef_)
        assert crf.predict(X2) == ref.predict(X)
    big = [[2**70 if lab == "A" else -1 for lab in seq] for seq in y]  # beyond int64
    crf = CRFTagger(c2=0.1).fit(X, big)
    assert crf.classes_.tolist() == [-1, 2**70]
    expected = [[2**70 if lab == "A" else -1 for lab in seq] for seq in ref.predict(X)]
    assert crf.predict(X) == expected


# --------------------------------------------------------------------------
# numerics: 1,000,000 tokens, weights up to 1e4, forbidden transitions
# --------------------------------------------------------------------------


def _log_product(a, b):
    """Log-semiring products ``a[m] ⊗ b[m]`` of stacks of (L, L) matrices."""
    terms = [a[:, :, k, None] + b[:, None, k, :] for k in range(a.shape[2])]
    top = reduce(np.maximum, terms)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(sum(np.exp(t - shift) for t in terms)) + shift


def _max_product(a, b):
    """Max-plus products of stacks of (L, L) matrices."""
    return reduce(np.maximum, [a[:, :, k, None] + b[:, None, k, :] for k in range(a.shape[2])])


def _chain(mats, product):
    """``mats[0] ⊗ mats[1] ⊗ ...``: sequential within ~sqrt(m) blocks, then across."""
    L = mats.shape[1]
    identity = np.full((L, L), -np.inf)
    np.fill_diagonal(identity, 0.0)
    if len(mats) == 0:
        return identity
    while len(mats) > 1:
        k = max(2, math.isqrt(len(mats)))
        n_blocks = -(-len(mats) // k)
        pad = n_blocks * k - len(mats)
        if pad:
            mats = np.concatenate([mats, np.broadcast_to(identity, (pad, L, L))])
        blocks = mats.reshape(n_blocks, k, L, L)
        acc = blocks[:, 0]
        for j in range(1, k):
            acc = product(acc, blocks[:, j])
        mats = acc
    return mats[0]


def _reference(scores, trans, checkpoints):
    """log Z, best path score and marginals at ``checkpoints``, independently.

    numpy only, no recursion over the whole sequence: the chain of (L, L)
    transfer matrices is multiplied in the log (max-plus) semiring in blocks,
    so rounding errors grow with about sqrt(n), not n.
    """
    n, L = scores.shape
    mats = trans[None] + scores[1:, None, :]  # mats[t - 1] takes position t - 1 to t
    cps = sorted(set(checkpoints) | {0, n - 1})
    spans = list(zip(cps[:-1], cps[1:]))
    segments = [_chain(mats[a:b], _log_product) for a, b in spans]
    alpha, beta = {0: scores[0]}, {n - 1: np.zeros(L)}
    for (a, b), seg in zip(spans, segments):
        alpha[b] = _log_product(alpha[a][None, None, :], seg[None])[0, 0]
    for (a, b), seg in reversed(list(zip(spans, segments))):
        beta[a] = _log_product(seg[None], beta[b][None, :, None])[0, :, 0]
    log_z = _log_product(alpha[n - 1][None, None, :], np.zeros((1, L, 1)))[0, 0, 0]
    node = {t: np.exp(alpha[t] + beta[t] - log_z) for t in cps}
    edge = {
        t: np.exp(alpha[t - 1][:, None] + trans + scores[t] + beta[t] - log_z)
        for t in cps if t - 1 in alpha
    }
    best = np.max(scores[0][:, None] + _chain(mats, _max_product))
    return log_z, best, node, edge


N_LONG = 1_000_000

#: regime → (label count, scale of the scores and transitions)
REGIMES = {"moderate": (3, 2.0), "weights-1e4": (3, 1e4)}


@pytest.fixture(scope="module", params=sorted(REGIMES))
def million(request):
    """One sequence of 1e6 tokens with two forbidden transitions, and its reference."""
    L, scale = REGIMES[request.param]
    rng = np.random.default_rng(42)
    scores = rng.uniform(-scale, scale, size=(N_LONG, L))
    trans = rng.uniform(-scale, scale, size=(L, L))
    trans[0, 1] = trans[2, 0] = -np.inf
    checkpoints = [1, 2, 3, N_LONG // 2 - 1, N_LONG // 2, N_LONG - 2]
    seq_ptr = np.array([0, N_LONG], dtype=np.int64)
    log_z, node, edge = _engine.forward_backward_batch(scores, trans, seq_ptr, True, 1)
    labels, best = _engine.viterbi_batch(scores, trans, seq_ptr, 1)
    return types.SimpleNamespace(
        regime=request.param, scores=scores, trans=trans, scale=scale,
        log_z=log_z[0], node=node, edge=edge, labels=labels, best=best[0],
        ref=_reference(scores, trans, checkpoints),
    )


def test_million_tokens_log_z_and_viterbi(million):
    m = million
    ref_log_z, ref_best, _, _ = m.ref
    assert np.isfinite(m.log_z) and np.isfinite(m.best)
    # ~1e6 sequential additions of terms up to `scale`: relative error ~1e-11
    assert m.log_z == pytest.approx(ref_log_z, rel=1e-9)
    assert m.best == pytest.approx(ref_best, rel=1e-9)
    assert m.best <= m.log_z
    y = m.labels
    assert np.isfinite(m.trans[y[:-1], y[1:]]).all()  # no forbidden transition
    path_score = math.fsum(m.scores[np.arange(N_LONG), y]) + math.fsum(m.trans[y[:-1], y[1:]])
    assert path_score == pytest.approx(ref_best, rel=1e-12)  # the path is optimal
    assert path_score == pytest.approx(m.best, rel=1e-9)


def _check_marginals(node, edge, forbidden, ref_node, ref_edge, atol, ref_atol):
    assert np.isfinite(node).all() and np.isfinite(edge).all()
    np.testing.assert_allclose(node.sum(axis=1), 1.0, rtol=0, atol=atol)
    np.testing.assert_allclose(edge[1:].sum(axis=1), node[1:], rtol=0, atol=atol)
    np.testing.assert_allclose(edge[1:].sum(axis=2), node[:-1], rtol=0, atol=atol)
    for i, j in forbidden:
        assert (edge[1:, i, j] == 0).all()
    for t, p in ref_node.items():
        np.testing.assert_allclose(node[t], p, rtol=0, atol=ref_atol, err_msg=f"node {t}")
    for t, p in ref_edge.items():
        np.testing.assert_allclose(edge[t], p, rtol=0, atol=ref_atol, err_msg=f"edge {t}")


def test_million_tokens_marginals(million):
    """With weights of 1e4 scaling fails and the (normalized) log-space fallback runs."""
    m = million
    # scores of 1e4 carry rounding errors of ~1e-12 into every exp(); the reference's own
    # error is ~ulp(|log alpha| ~ scale * n) ~ 1e-10 * scale
    _check_marginals(m.node, m.edge, [(0, 1), (2, 0)], *m.ref[2:],
                     atol=1e-9 * max(1.0, m.scale / 1e3), ref_atol=max(1e-9, 1e-9 * m.scale))


def _run_log_space(m, trans=None):
    trans = m.trans if trans is None else trans
    n, L = m.scores.shape
    node, edge = np.zeros((n, L)), np.zeros((n, L, L))
    log_z = _engine.marginals_log(m.scores, trans, n, node, edge)
    return log_z, node, edge


def _run_scaled(m, trans=None):
    trans = m.trans if trans is None else trans
    n, L = m.scores.shape
    node, edge = np.zeros((n, L)), np.zeros((n, L, L))
    log_z = _engine.marginals_scaled(
        m.scores, _engine.transition_terms(trans), n, _engine.scaled_workspace(n, L),
        node, edge,
    )
    return log_z, node, edge


def _allowed(m):
    """The transitions with the forbidden ones made merely unlikely (-30): scaling
    declines forbidden transitions by design (see forward_scaled)."""
    return np.where(np.isneginf(m.trans), -30.0, m.trans)


def test_scaled_and_log_space_log_z_agree_on_a_million_tokens(million):
    log_z_l = _run_log_space(million)[0]
    assert log_z_l == pytest.approx(million.ref[0], rel=1e-9)
    assert np.isnan(_run_scaled(million)[0])  # forbidden transitions: log space
    trans = _allowed(million)
    log_z_s = _run_scaled(million, trans)[0]
    if million.regime == "moderate":
        assert log_z_s == pytest.approx(_run_log_space(million, trans)[0], rel=1e-10)
    else:  # a spread of 1e4: scaling declines, the caller falls back to log space
        assert np.isnan(log_z_s)


def test_scaled_and_log_space_marginals_agree_on_a_million_tokens(million):
    """Unnormalized log space drifted by 1e-5 here (0.4 with weights of 1e4)."""
    _, node_l, edge_l = _run_log_space(million)
    if million.regime == "moderate":
        trans = _allowed(million)
        log_z_s, node_s, edge_s = _run_scaled(million, trans)
        assert not np.isnan(log_z_s)
        _, node_a, edge_a = _run_log_space(million, trans)
        np.testing.assert_allclose(node_a, node_s, rtol=0, atol=1e-8)
        np.testing.assert_allclose(edge_a, edge_s, rtol=0, atol=1e-8)
    _check_marginals(node_l, edge_l, [(0, 1), (2, 0)], *million.ref[2:], atol=1e-8,
                     ref_atol=max(1e-8, 1e-9 * million.scale))


def test_marginals_with_weights_1e4_on_10000_tokens():
    """The log-space fallback must stay exact: node rows sum to 1."""
    rng = np.random.default_rng(0)
    n, L = 10_000, 3
    scores = rng.normal(scale=1e4, size=(n, L))
    trans = rng.normal(scale=1e4, size=(L, L))
    trans[0, 1] = -np.inf
    _, node, _ = _engine.forward_backward_batch(scores, trans, np.array([0, n]), False, 1)
    np.testing.assert_allclose(node.sum(axis=1), 1.0, rtol=0, atol=1e-6)


#: (seed, generated length, length used, scale): found by a sweep over seeds
UNDERFLOW_CASES = [
    (139, 6, 6, 300.0), (286, 6, 6, 300.0), (119, 5, 5, 300.0), (40, 6, 6, 1000.0),
    (176, 50, 12, 1000.0),
]


@pytest.mark.parametrize("seed, n, prefix, scale", UNDERFLOW_CASES)
def test_partial_underflow_short_sequences(seed, n, prefix, scale):
    scores, trans = _naive.seeded_crf(seed, n, scale)
    scores = scores[:prefix]
    seq_ptr = np.array([0, prefix], dtype=np.int64)
    log_z, node, edge = _engine.forward_backward_batch(scores, trans, seq_ptr, True, 1)
    assert log_z[0] == pytest.approx(_naive.log_partition(scores, trans), rel=1e-12)
    node_ref, edge_ref = _naive.marginals(scores, trans)
    np.testing.assert_allclose(node, node_ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge[1:], edge_ref[1:], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [118, 196])
def test_partial_underflow_long_sequences(seed):
    """Forward and backward lose the same path here: rows still sum to 1, log Z is wrong."""
    n = 300
    scores, trans = _naive.seeded_crf(seed, n, 1000.0)
    log_z, node, edge = _engine.forward_backward_batch(
        scores, trans, np.array([0, n], dtype=np.int64), True, 1
    )
    ref_log_z, _, ref_node, ref_edge = _reference(scores, trans, [1, 100, 200])
    assert log_z[0] == pytest.approx(ref_log_z, rel=1e-12)
    _check_marginals(node, edge, [], ref_node, ref_edge, atol=1e-9, ref_atol=1e-6)


def test_partial_underflow_breaks_the_training_objective():
    """One attribute per token, so the state weights are the scores of case 176."""
    scores, trans = _naive.seeded_crf(176, 50, 1000.0)
    scores = scores[:12]
    n, L = scores.shape
    corpus = EncodedCorpus(np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int32),
                           np.ones(n), np.array([0, n], dtype=np.int64), n)
    labels = np.zeros(n, dtype=np.int32)
    layout = _full_layout(corpus, labels, L)
    w = np.concatenate([scores.ravel(), trans.ravel()])
    obj = CRFObjective(corpus, layout, labels, np.ones(1), c2=0.0, n_chunks=1)
    loss, grad = obj(w)
    ref = _naive.objective(w, layout, corpus, labels, np.ones(1), 0, 0)
    assert loss == pytest.approx(ref, rel=1e-10)
    np.testing.assert_allclose(grad, _naive.gradient(w, layout, corpus, labels, np.ones(1), 0.0),
                               rtol=0, atol=1e-7)


@pytest.mark.parametrize("scale", [1e2, 1e4])
@pytest.mark.parametrize("n_chunks", [1, 3])
def test_objective_with_huge_weights_is_finite_and_exact(scale, n_chunks):
    X, y = random_corpus(8, n_seq=10, max_len=5)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    seq_weight = np.linspace(0.5, 2.0, len(X))
    obj = CRFObjective(corpus, layout, labels, seq_weight, c2=0.1, n_chunks=n_chunks)
    rng = np.random.default_rng(int(scale))
    w = rng.uniform(-scale, scale, size=layout.n_params)
    loss, grad = obj(w)
    assert np.isfinite(loss) and np.isfinite(grad).all()
    ref_loss = _naive.objective(w, layout, corpus, labels, seq_weight, 0, 0.1)
    assert loss == pytest.approx(ref_loss, rel=1e-10)
    ref = _naive.gradient(w, layout, corpus, labels, seq_weight, 0.1)
    np.testing.assert_allclose(grad, ref, rtol=1e-9, atol=1e-7 * scale)


def _long_sequence_data(n, n_attr, L, rng):
    """Arrays of one sequence of n tokens, one attribute each, and a full layout."""
    tok_ptr = np.arange(n + 1, dtype=np.int64)
    tok_attr = rng.integers(0, n_attr, size=n).astype(np.int32)
    corpus = EncodedCorpus(tok_ptr, tok_attr, np.ones(n), np.array([0, n], dtype=np.int64),
                           n_attr)
    labels = rng.integers(0, L, size=n).astype(np.int32)
    return corpus, _full_layout(corpus, labels, L), labels


def _full_layout(corpus, labels, L):
    """A weight for every (attribute, label) and every transition."""
    return build_layout(corpus, labels, L, min_freq=0.0,
                        all_possible_states=True, all_possible_transitions=True)


@pytest.mark.parametrize("scale", [1.0, 1e4], ids=["weights-1", "weights-1e4"])
def test_objective_on_a_million_tokens_is_finite_and_consistent(scale):
    """Expected counts of each attribute (and of all transitions) add up over labels."""
    rng = np.random.default_rng(5)
    L, n_attr = 3, 50
    corpus, layout, labels = _long_sequence_data(N_LONG, n_attr, L, rng)
    obj = CRFObjective(corpus, layout, labels, np.ones(1), c2=0.0, n_chunks=2)
    w = rng.uniform(-scale, scale, size=layout.n_params)
    loss, grad = obj(w)
    assert np.isfinite(loss) and np.isfinite(grad).all()
    assert loss >= -1e-9 * scale * N_LONG  # -log p(y|x) >= 0
    # Σ_labels (expected - observed) = 0 for every attribute and over all transitions
    np.testing.assert_allclose(grad[: layout.n_state].reshape(n_attr, L).sum(axis=1), 0.0,
                               atol=1e-6 * N_LONG / n_attr)
    assert grad[layout.n_state:].sum() == pytest.approx(0.0, abs=1e-6 * N_LONG)


def test_tagger_with_huge_and_forbidden_weights(toy_ner):
    X, y = toy_ner
    crf = CRFTagger(c2=0.01, all_possible_transitions=True).fit(X, y)
    crf.coef_ = crf.coef_ * 1e4
    layout = crf.layout_
    o = crf.classes_.tolist().index("O")
    per = crf.classes_.tolist().index("B-PER")
    k = np.flatnonzero((layout.trans_from == per) & (layout.trans_to == o))[0]
    crf.coef_[layout.n_state + k] = -np.inf  # forbid B-PER → O
    assert crf.transition_matrix_[per, o] == -np.inf
    pred = crf.predict(X)
    assert all(
        not (a == "B-PER" and b == "O") for seq in pred for a, b in zip(seq[:-1], seq[1:])
    )
    marg = crf.predict_marginals(X)
    for seq in marg:
        for m in seq:
            values = np.array(list(m.values()))
            assert np.isfinite(values).all() and (values >= 0).all()
            assert values.sum() == pytest.approx(1.0, abs=1e-9)


# --------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------


#: enough tokens for CRFTagger to use 2 threads (it runs small inputs on one)
N_THREADED = 2 * MIN_TOKENS_PER_THREAD + 1000


@pytest.fixture(scope="module")
def threaded_corpus():
    X, y = random_corpus(11, n_seq=N_THREADED // 2, max_len=5, n_labels=4)  # ~2.5 tokens each
    assert sum(map(len, X)) >= N_THREADED - 1000
    return X, y


@pytest.mark.parametrize(
    "params",
    [{"c1": 0.0, "c2": 0.5}, {"c1": 0.1, "c2": 0.05},
     {"c1": 0.1, "c2": 0.05, "solver": "l-bfgs-b", "all_possible_transitions": True}],
    ids=["l-bfgs-b-l2", "owlqn", "l-bfgs-b-split"],
)
def test_fits_are_bitwise_identical_for_any_n_jobs(threaded_corpus, params):
    """Repeated fits, on one thread and on two, give the very same bits."""
    X, y = threaded_corpus
    fits = []
    for n_jobs in (1, 2, 2):
        crf = CRFTagger(max_iter=25, tol=0, n_jobs=n_jobs, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(X, y, sample_weight=np.linspace(0.5, 1.5, len(X)))
        fits.append(crf)
    ref = fits[0]
    for crf in fits[1:]:
        assert crf.coef_.tobytes() == ref.coef_.tobytes()
        assert crf.loss_curve_.tobytes() == ref.loss_curve_.tobytes()
        assert crf.n_iter_ == ref.n_iter_
    assert crf.predict_marginals(X[:200]) == ref.predict_marginals(X[:200])


def test_forced_block_split_gives_the_same_bits_on_one_and_two_threads(monkeypatch):
    """Small blocks and a thread for every token: n_jobs=1 and 2 give the same model."""
    import sklearn_crf._engine.driver
    import sklearn_crf._engine.threads

    monkeypatch.setattr(sklearn_crf._engine.threads, "MIN_TOKENS_PER_THREAD", 1)
    monkeypatch.setattr(sklearn_crf._engine.driver, "BLOCK_TOKENS", 8)
    X, y = random_corpus(13, n_seq=60, max_len=6, n_labels=4)
    coefs = []
    for n_jobs in (1, 2):
        crf = CRFTagger(c1=0.05, c2=0.05, max_iter=15, tol=0, n_jobs=n_jobs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(X, y)
        coefs.append(crf.coef_.tobytes())
    assert coefs[0] == coefs[1]


@pytest.fixture
def many_blocks(monkeypatch):
    """Blocks of 16 tokens, a thread for every token and 3 threads available:
    every call splits its work into many blocks, on 1, 2 or 3 threads."""
    import sklearn_crf._engine.driver
    import sklearn_crf._engine.threads

    monkeypatch.setattr(sklearn_crf._engine.threads, "MIN_TOKENS_PER_THREAD", 1)
    monkeypatch.setattr(sklearn_crf._engine.threads, "available_threads", lambda: 3)
    monkeypatch.setattr(sklearn_crf._engine.driver, "BLOCK_TOKENS", 16)


DETERMINISM_FITS = {
    "l-bfgs-b-l2": dict(c2=0.5),
    "owlqn": dict(c1=0.1, c2=0.05),
    "l-bfgs-b-split": dict(c1=0.1, c2=0.05, solver="l-bfgs-b", all_possible_transitions=True),
    "constrained": dict(c2=0.1, transition_constraints="IOB2", constrain_training=True),
    "early-stopping": dict(c2=0.1, early_stopping=True, n_iter_no_change=3, random_state=0,
                           validation_scoring="entity_f1"),
    "all-possible": dict(c2=0.1, all_possible_states=True, all_possible_transitions=True),
    "ap": dict(solver="ap", max_iter=4),
    "pa": dict(solver="pa", max_iter=4),
    "arow": dict(solver="arow", max_iter=4),
    "l2sgd": dict(solver="l2sgd", max_iter=4, calibration_samples=20),
}


@pytest.mark.parametrize("params", DETERMINISM_FITS.values(), ids=DETERMINISM_FITS.keys())
def test_every_fit_is_bitwise_identical_on_1_2_and_3_threads(many_blocks, params):
    X, y = iob2_corpus(21)
    fits = []
    for n_jobs in (1, 2, 3):
        kwargs = dict(max_iter=15) if "solver" in params else dict(max_iter=15, tol=0)
        kwargs.update(params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(CRFTagger(n_jobs=n_jobs, **kwargs).fit(
                X, y, sample_weight=np.linspace(0.5, 1.5, len(X))))
    ref = fits[0]
    for crf in fits[1:]:
        assert crf.coef_.tobytes() == ref.coef_.tobytes()
        assert crf.loss_curve_.tobytes() == ref.loss_curve_.tobytes()
        assert crf.n_iter_ == ref.n_iter_


@pytest.fixture(scope="module")
def iob2_model():
    X, y = iob2_corpus(22)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf = CRFTagger(c2=0.1, max_iter=20, transition_constraints="IOB2").fit(X, y)
    X_test, y_test = iob2_corpus(23, n_seq=120)
    allowed = [[label if t % 3 == 0 else None for t, label in enumerate(seq)] for seq in y_test]
    return crf, X_test, y_test, allowed


INFERENCE = {
    "predict": lambda crf, X, y, allowed: crf.predict(X, allowed=allowed),
    "predict-posterior": lambda crf, X, y, allowed: crf.set_params(decoder="posterior").predict(
        X, allowed=allowed),
    "predict_marginals": lambda crf, X, y, allowed: np.concatenate(
        crf.predict_marginals(X, allowed=allowed, output="array")).tobytes(),
    "predict_nbest": lambda crf, X, y, allowed: crf.predict_nbest(X, 4, allowed=allowed),
    "predict_entities": lambda crf, X, y, allowed: crf.predict_entities(X, allowed=allowed),
    "log_probability": lambda crf, X, y, allowed: crf.log_probability(
        X, y, allowed=allowed).tobytes(),
    "log_probability-predicted": lambda crf, X, y, allowed: crf.log_probability(
        X, allowed=allowed).tobytes(),
    "log_partition": lambda crf, X, y, allowed: crf.log_partition(X, allowed=allowed).tobytes(),
}


@pytest.mark.parametrize("constraints", [None, "IOB2"])
@pytest.mark.parametrize("with_allowed", [False, True], ids=["free", "allowed"])
@pytest.mark.parametrize("method", INFERENCE.values(), ids=INFERENCE.keys())
def test_every_inference_method_is_bitwise_identical_on_1_2_and_3_threads(
    many_blocks, iob2_model, method, constraints, with_allowed
):
    crf, X, y, allowed = iob2_model
    crf = copy.deepcopy(crf).set_params(transition_constraints=constraints)
    results = [
        method(crf.set_params(n_jobs=n_jobs, decoder="viterbi"), X, y,
               allowed if with_allowed else None)
        for n_jobs in (1, 2, 3)
    ]
    assert results[0] == results[1] == results[2]


# --------------------------------------------------------------------------
# persistence
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def persisted():
    X, y = random_corpus(12, n_seq=40, max_len=7)
    params = dict(c1=0.05, c2=0.05, max_iter=60, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf = CRFTagger(**params).fit(X, y)
    return types.SimpleNamespace(
        crf=crf, X=X, y=y, params=params, pred=crf.predict(X), marg=crf.predict_marginals(X)
    )


def _same_model(crf, ref):
    assert crf.get_params() == ref.crf.get_params()
    assert crf.coef_.tobytes() == ref.crf.coef_.tobytes()
    assert crf.predict(ref.X) == ref.pred
    assert crf.predict_marginals(ref.X) == ref.marg
    assert not any(isinstance(v, np.memmap) for v in vars(crf).values())


@pytest.mark.parametrize("how", ["pickle", "joblib", "joblib-compressed"])
def test_round_trip_in_process_refers_to_no_file(persisted, tmp_path, how):
    path = tmp_path / "model.bin"
    if how == "pickle":
        path.write_bytes(pickle.dumps(persisted.crf, protocol=pickle.HIGHEST_PROTOCOL))
        loaded = pickle.loads(path.read_bytes())
    else:
        joblib.dump(persisted.crf, path, compress=3 if how == "joblib-compressed" else 0)
        loaded = joblib.load(path)
    path.unlink()
    _same_model(loaded, persisted)


def test_pickle_holds_no_path_and_records_the_version(persisted, tmp_path):
    data = pickle.dumps(persisted.crf)
    paths = {"/tmp", tempfile.gettempdir(), str(tmp_path), os.getcwd(), os.path.expanduser("~")}
    for path in paths - {"", "/"}:
        assert path.encode() not in data, path
    assert persisted.crf.__getstate__()["_sklearn_crf_version"] == __version__
    assert __version__.encode() in data
    unfitted = pickle.loads(pickle.dumps(CRFTagger(c1=0.3)))
    assert unfitted.get_params() == CRFTagger(c1=0.3).get_params()


def test_fitting_writes_no_file(tmp_path, monkeypatch):
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    for var in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.setenv(var, str(tmpdir))
    X, y = random_corpus(13, n_seq=10)
    crf = CRFTagger(c1=0.1, verbose=1).fit(X, y)
    crf.predict(X), crf.predict_marginals(X), crf.score(X, y)
    pickle.loads(pickle.dumps(crf)).predict(X)
    assert os.listdir(workdir) == [] and os.listdir(tmpdir) == []


_CHILD = """
import pickle, sys, warnings
import joblib
from sklearn.exceptions import ConvergenceWarning
from sklearn_crf import CRFTagger
X, y, params = pickle.load(open(sys.argv[1], "rb"))
out = {}
for name, model in [("pickle", pickle.load(open(sys.argv[2], "rb"))),
                    ("joblib", joblib.load(sys.argv[3]))]:
    out[name] = (model.predict(X), model.predict_marginals(X), model.coef_.tobytes())
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    out["refit"] = CRFTagger(**params).fit(X, y).coef_.tobytes()
pickle.dump(out, open(sys.argv[4], "wb"))
"""


def test_round_trip_in_a_fresh_process(persisted, tmp_path):
    """Load with pickle and joblib in a new interpreter; a refit there is bitwise equal."""
    files = [tmp_path / name for name in ("data.pkl", "model.pkl", "model.joblib", "out.pkl")]
    files[0].write_bytes(pickle.dumps((persisted.X, persisted.y, persisted.params)))
    files[1].write_bytes(pickle.dumps(persisted.crf))
    joblib.dump(persisted.crf, files[2], compress=3)
    subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, files)], check=True, timeout=300,
        capture_output=True,
    )
    out = pickle.loads(files[3].read_bytes())
    coef = persisted.crf.coef_.tobytes()
    for name in ("pickle", "joblib"):
        pred, marg, child_coef = out[name]
        assert pred == persisted.pred and marg == persisted.marg and child_coef == coef
    assert out["refit"] == coef


def _other_version(kind):
    major, minor, patch = (int(p) for p in __version__.split(".")[:3])
    return {
        "major": f"{major + 1}.{minor}.{patch}",
        "minor": f"{major}.{minor + 1}.0",
        "older": "0.0.1" if (major, minor) != (0, 0) else "9.9.9",
        "patch": f"{major}.{minor}.{patch + 7}",
    }[kind]


@pytest.mark.parametrize("kind", ["major", "minor", "older", "patch"])
def test_loading_another_version_warns_and_loads(persisted, tmp_path, kind):
    """Issue 10, item 6: as scikit-learn, warn naming both versions, then load."""
    other = copy.copy(persisted.crf)
    version = other._sklearn_crf_version = _other_version(kind)
    other.__dict__["transition_matrix_"] = np.zeros((1, 1))  # a stale copy of old versions
    data = pickle.dumps(other)
    path = tmp_path / "model.joblib"
    joblib.dump(other, path)
    for load in (lambda: pickle.loads(data), lambda: joblib.load(path)):
        with pytest.warns(InconsistentVersionWarning) as record:
            loaded = load()
        message = str(record[0].message)
        assert f"sklearn-crf {version}" in message and f"sklearn-crf {__version__}" in message
        assert record[0].message.original_version == version
        _same_model(loaded, persisted)
        np.testing.assert_array_equal(
            loaded.transition_matrix_, persisted.crf.layout_.transition_matrix(loaded.coef_)
        )


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda state: state.pop("coef_"), r"its fitted state lacks coef_"),
        (lambda state: state.update(coef_=np.zeros(3)), r"coef_ does not match its parameter"),
        (lambda state: state.update(coef_="abc"), r"coef_ does not match its parameter"),
    ],
    ids=["missing-coef", "coef-length", "coef-type"],
)
def test_unreadable_state_is_refused_clearly(persisted, change, match):
    state = persisted.crf.__getstate__()
    state["_sklearn_crf_version"] = "0.0.1"
    change(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentVersionWarning)
        with pytest.raises(ValueError, match=r"cannot read this CRFTagger \(pickled by "
                           r"sklearn-crf 0\.0\.1\): " + match):
            CRFTagger().__setstate__(state)


# --------------------------------------------------------------------------
# thread safety
# --------------------------------------------------------------------------


def test_concurrent_predictions_equal_sequential_ones(threaded_corpus):
    """4 Python threads share 3 models (n_jobs None, 1, 2), each call on its own input."""
    X, y = threaded_corpus
    models = [CRFTagger(c2=0.1, max_iter=30, n_jobs=n_jobs) for n_jobs in (None, 1, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        models = [m.fit(X, y) for m in models]
    parts = {"all": (X, y), "head": (X[:300], y[:300]), "tail": (X[300:], y[300:]),
             "reversed": (X[::-1], y[::-1])}
    calls = [
        (m, method, part)
        for m in range(len(models))
        for method in ("predict", "predict_marginals", "score")
        for part in parts
    ] * 2

    def run(call):
        m, method, part = call
        X_part, y_part = parts[part]
        args = (y_part,) if method == "score" else ()
        return getattr(models[m], method)(X_part, *args)

    expected = {call: run(call) for call in set(calls)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, calls))
    for call, result in zip(calls, results):
        assert result == expected[call], call


_PLAIN_THREADS_CHILD = """
import sys, warnings
from concurrent.futures import ThreadPoolExecutor
import numba
from sklearn.exceptions import ConvergenceWarning
sys.path.insert(0, sys.argv[1])
from conftest import random_corpus
from sklearn_crf import CRFTagger
X, y = random_corpus(11, n_seq=int(sys.argv[2]), max_len=5, n_labels=4)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    crf = CRFTagger(c2=0.1, max_iter=5, n_jobs=2).fit(X, y)
ref = crf.predict(X)
with ThreadPoolExecutor(max_workers=4) as pool:
    assert all(r == ref for r in pool.map(lambda _: crf.predict(X), range(60)))
crf.predict_nbest(X[:50], 3), crf.predict_marginals(X[:50]), crf.log_partition(X)
try:
    numba.threading_layer()
except ValueError:  # no parallel kernel ever ran: no threading layer was chosen
    pass
else:
    raise AssertionError("a kernel started numba's thread pool")
"""


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_threaded_calls_never_start_numbas_thread_pool():
    """The engine runs on plain threads: even under numba's workqueue layer
    (which aborts when two Python threads enter parallel kernels at once),
    concurrent threaded calls work, and no parallel kernel ever runs."""
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    child = subprocess.run(
        [sys.executable, "-c", _PLAIN_THREADS_CHILD, os.path.dirname(__file__), str(N_THREADED // 2)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert child.returncode == 0, child.stderr[-2000:]
