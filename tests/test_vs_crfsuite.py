"""Differential tests against CRFsuite (through sklearn-crfsuite / python-crfsuite).

Hypothesis draws small corpora whose tokens come in every form python-crfsuite
accepts (dicts of str, bool, int, float and NumPy scalar values, zeros of
every type, nested dicts, lists of str; lists of attribute names), and for
every combination of ``min_freq`` in {0, 1, 2}, ``all_possible_states`` and
``all_possible_transitions`` both libraries train on them to convergence:

* the number of features equals CRFsuite's (its training log reports it);
* the (attribute, label) and (label, label) pairs with non-zero weights are
  the same sets;
* the weights agree within 1e-5 (sklearn-crfsuite reads them from CRFsuite's
  model dump, rounded to 6 decimals) and the objectives within 1e-6 relative
  (CRFsuite logs its loss with 6 decimals, so within 5e-7 more in absolute).
"""

import itertools
import warnings

import numpy as np
import pytest
import sklearn_crfsuite  # in the test extra: these tests never skip
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger

#: few distinct values, so that attributes repeat and min_freq matters
WORDS = ["a", "b", "c"]
NUMBERS = [
    0, 1, 2, -1, 0.0, 0.5, 1.5, -0.5, True, False,
    np.float64(0.0), np.float64(1.25), np.int64(0), np.int64(2), np.float32(0.5),
    np.bool_(True), np.bool_(False),
]
LABELS = ["A", "B", "C"]

values = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(NUMBERS),
    st.sampled_from(WORDS).map(np.str_),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=2),
    st.dictionaries(st.sampled_from(["p", "q"]),
                    st.one_of(st.sampled_from(WORDS), st.sampled_from(NUMBERS)),
                    min_size=1, max_size=2),
)
dict_tokens = st.dictionaries(st.sampled_from(["w", "n", "f", "g"]), values,
                              min_size=1, max_size=3)
list_tokens = st.lists(st.sampled_from(["x=1", "x=2", "shape=Xx", "y"]), min_size=1,
                       max_size=3)
tokens = st.one_of(dict_tokens, dict_tokens, list_tokens)


@st.composite
def corpora(draw):
    n_seq = draw(st.integers(3, 5))
    X, y = [], []
    for _ in range(n_seq):
        n = draw(st.integers(2, 4))
        X.append([draw(tokens) for _ in range(n)])
        y.append([draw(st.sampled_from(LABELS)) for _ in range(n)])
    return X, y


#: one corpus with every token form and every kind of zero, tried first
RICH = (
    [
        [{"w": "a", "n": 1, "f": np.float64(0.0), "g": {"p": "b", "q": np.int64(0)}},
         ["x=1", "shape=Xx"], {"w": ["a", "b"], "n": -0.5, "f": np.bool_(False)}],
        [{"w": np.str_("b"), "n": np.float32(0.5), "g": {"p": 1.5}}, {"f": True, "g": False},
         ["y", "x=2"]],
        [{"w": "a", "n": 2}, {"w": "c", "n": 0, "f": np.int64(2)}],
        [["x=1"], {"w": "a", "g": {"p": "b", "q": 1}}, {"n": -1.0, b"bk": 1.0}, ["x=1", "y"]],
    ],
    [["A", "B", "A"], ["B", "C", "C"], ["A", "A"], ["A", "B", "C", "B"]],
)

COMBINATIONS = list(itertools.product([0, 1, 2], [False, True], [False, True]))


@pytest.mark.parametrize(
    "min_freq, all_states, all_transitions", COMBINATIONS,
    ids=[f"min_freq={m}-states={s}-transitions={t}" for m, s, t in COMBINATIONS],
)
@settings(max_examples=2, deadline=None)
@given(corpus=corpora(), c1=st.sampled_from([0.0, 0.05]))
@example(corpus=RICH, c1=0.0)
def test_same_features_weights_and_loss_as_crfsuite(
    min_freq, all_states, all_transitions, corpus, c1
):
    X, y = corpus
    common = dict(min_freq=min_freq, all_possible_states=all_states,
                  all_possible_transitions=all_transitions, c1=c1, c2=0.1)
    ref = sklearn_crfsuite.CRF(
        algorithm="lbfgs", max_iterations=10_000, epsilon=1e-10, delta=1e-10, **common
    ).fit(X, y)
    crf = CRFTagger(max_iter=10_000, tol=1e-10, epsilon=1e-10, n_jobs=1, **common)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the precision limit
        crf.fit(X, y)

    assert crf.layout_.n_params == ref.training_log_.featgen_num_features

    ours_state, theirs_state = crf.state_features_, ref.state_features_
    ours_trans, theirs_trans = crf.transition_features_, ref.transition_features_
    # a weight below the dump's resolution is printed as 0 there
    assert {k for k, w in ours_state.items() if abs(w) >= 5e-6} == {
        k for k, w in theirs_state.items() if w != 0}
    assert {k for k, w in ours_trans.items() if abs(w) >= 5e-6} == {
        k for k, w in theirs_trans.items() if w != 0}
    if c1 == 0:  # no L1: no weight near 0 but the structural zeros, in both
        assert ours_state.keys() == theirs_state.keys()
        assert ours_trans.keys() == theirs_trans.keys()
    for ours, theirs in ((ours_state, theirs_state), (ours_trans, theirs_trans)):
        for key in ours.keys() | theirs.keys():
            assert ours.get(key, 0.0) == pytest.approx(theirs.get(key, 0.0), abs=1e-5), key

    ref_loss = ref.training_log_.iterations[-1]["loss"] if ref.training_log_.iterations \
        else None
    if ref_loss is not None:
        assert abs(crf.loss_ - ref_loss) <= 1e-6 * abs(ref_loss) + 5e-7


def test_min_freq_rule_on_the_issue_example():
    """min_freq counts transitions and drops the all_possible_* extras, as CRFsuite."""
    X = [[{"w": "a"}, {"w": "b"}], [{"w": "a"}, {"w": "c"}], [{"w": "a"}, {"w": "b"}],
         [{"w": "d"}, {"w": "b"}]]
    y = [["X", "Y"], ["X", "Y"], ["X", "Y"], ["Y", "Y"]]
    for all_states, all_transitions in itertools.product([False, True], repeat=2):
        params = dict(min_freq=2, all_possible_states=all_states,
                      all_possible_transitions=all_transitions, c2=0.1)
        ref = sklearn_crfsuite.CRF(**params).fit(X, y)
        crf = CRFTagger(**params).fit(X, y)
        assert crf.layout_.n_params == ref.training_log_.featgen_num_features == 3


@pytest.mark.parametrize("with_dicts", [False, True], ids=["dense", "mixed"])
def test_dense_arrays_give_crfsuite_weights_of_the_valued_attributes(with_dicts):
    """Dense arrays here, the same values as {"v<j>": value} attributes in
    CRFsuite: the same weights (within the 6 decimals of CRFsuite's dump) and
    the same loss. Values positive: CRFsuite drops a pair whose values sum to
    a negative number, and every dense (dimension, label) pair has a weight."""
    rng = np.random.default_rng(21)
    X, X_dicts, y = [], [], []
    for _ in range(20):
        n = int(rng.integers(1, 5))
        arr = np.abs(rng.normal(size=(n, 3))) + 0.05
        tokens = [{"w": str(rng.choice(WORDS))} if with_dicts else {} for _ in range(n)]
        X.append((tokens, arr) if with_dicts else arr)
        X_dicts.append([{**tok, **{f"v{j}": float(v) for j, v in enumerate(row)}}
                        for tok, row in zip(tokens, arr)])
        y.append([str(rng.choice(LABELS)) for _ in range(n)])
    ref = sklearn_crfsuite.CRF(algorithm="lbfgs", c2=0.1, max_iterations=10_000,
                               epsilon=1e-10, delta=1e-10).fit(X_dicts, y)
    crf = CRFTagger(c2=0.1, max_iter=10_000, tol=1e-10, epsilon=1e-10, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the precision limit
        crf.fit(X, y)
    assert crf.layout_.n_params == ref.training_log_.featgen_num_features
    theirs = ref.state_features_
    classes = crf.classes_.tolist()
    for j in range(3):
        for k, label in enumerate(classes):
            assert crf.dense_coef_[j, k] == pytest.approx(theirs[(f"v{j}", label)], abs=1e-5)
    for key, w in crf.state_features_.items():
        assert w == pytest.approx(theirs.get(key, 0.0), abs=1e-5), key
    for key in crf.transition_features_.keys() | ref.transition_features_.keys():
        assert crf.transition_features_.get(key, 0.0) == pytest.approx(
            ref.transition_features_.get(key, 0.0), abs=1e-5), key
    ref_loss = ref.training_log_.iterations[-1]["loss"]
    assert abs(crf.loss_ - ref_loss) <= 1e-6 * abs(ref_loss) + 5e-7
