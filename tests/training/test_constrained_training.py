"""Training under transition constraints (``constrain_training=True``): the
constrained objective against brute force over the allowed paths, finite
differences and the ordinary objective; the estimator's switch."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_crf import CRFTagger
from sklearn_crf._model.constraints import TransitionConstraints, build_constraints
from sklearn_crf._training.objective import ConstrainedCRFObjective, CRFObjective

import _naive
from conftest import corpus_arrays, random_corpus


def _masks_allowing_gold(rng, labels, seq_ptr, L, density=0.4):
    """Random constraints that allow every gold sequence (and some more)."""
    trans = rng.random((L, L)) < density
    start = rng.random(L) < density
    end = rng.random(L) < density
    for a, b in zip(seq_ptr[:-1], seq_ptr[1:]):
        if b > a:
            gold = labels[a:b]
            start[gold[0]] = True
            end[gold[-1]] = True
            trans[gold[:-1], gold[1:]] = True
    return TransitionConstraints(trans, start, end, None)


def _brute_force_loss(w, layout, corpus, labels, weights, masks, c2):
    """Σ_s v_s (log Σ_{allowed paths} exp(score) - score(gold)) + c2 ‖w‖²."""
    seq_ptr = corpus.seq_ptr
    scores = _naive.dense_state_scores(
        w[: layout.n_state], corpus.tok_ptr, corpus.tok_attr, corpus.tok_val,
        layout.attr_ptr, layout.attr_label, layout.n_labels,
    )
    trans = layout.transition_matrix(w)
    loss = 0.0
    for s in range(len(seq_ptr) - 1):
        a, b = seq_ptr[s], seq_ptr[s + 1]
        if a == b:
            continue
        _, total = _naive.allowed_paths(
            scores[a:b], trans, masks.transitions, masks.start, masks.end
        )
        y = labels[a:b]
        gold = scores[np.arange(a, b), y].sum() + trans[y[:-1], y[1:]].sum()
        loss += weights[s] * (logsumexp(total) - gold)
    return loss + c2 * (w @ w)


@pytest.mark.parametrize("c2", [0.0, 0.3])
@pytest.mark.parametrize("all_possible", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_constrained_loss_matches_brute_force_over_allowed_paths(c2, all_possible, seed):
    X, y = random_corpus(seed, n_seq=7, n_labels=4)
    corpus, layout, labels = corpus_arrays(
        X, y, all_possible_states=all_possible, all_possible_transitions=all_possible
    )
    rng = np.random.default_rng(seed)
    masks = _masks_allowing_gold(rng, labels, corpus.seq_ptr, layout.n_labels)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = ConstrainedCRFObjective(
        corpus, layout, labels, weights, c2=c2, masks=masks, n_chunks=3
    )
    w = rng.normal(size=layout.n_params)
    ref = _brute_force_loss(w, layout, corpus, labels, weights, masks, c2)
    assert obj(w)[0] == pytest.approx(ref, rel=1e-10)
    assert obj.nll(w)[0] == pytest.approx(ref - c2 * (w @ w), rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("c2", [0.0, 0.5])
def test_constrained_gradient_matches_finite_differences(c2):
    X, y = random_corpus(3, n_seq=6, n_labels=4)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(4)
    masks = _masks_allowing_gold(rng, labels, corpus.seq_ptr, layout.n_labels)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj = ConstrainedCRFObjective(
        corpus, layout, labels, weights, c2=c2, masks=masks, n_chunks=2
    )
    w = rng.normal(size=layout.n_params)
    _, g = obj(w)
    eps = 1e-6
    directions = list(np.eye(len(w))) + [
        d / np.linalg.norm(d) for d in rng.normal(size=(4, len(w)))
    ]
    for d in directions:
        num = (obj(w + eps * d)[0] - obj(w - eps * d)[0]) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


def test_forbidden_transition_weights_only_feel_the_regularization():
    X, y = random_corpus(5, n_seq=6, n_labels=4)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    rng = np.random.default_rng(5)
    masks = _masks_allowing_gold(rng, labels, corpus.seq_ptr, layout.n_labels, 0.2)
    obj = ConstrainedCRFObjective(
        corpus, layout, labels, np.ones(len(X)), c2=0.0, masks=masks, n_chunks=1
    )
    _, g = obj(rng.normal(size=layout.n_params))
    forbidden = ~masks.transitions[layout.trans_from, layout.trans_to]
    assert forbidden.any()
    np.testing.assert_array_equal(g[layout.n_state:][forbidden], 0.0)


@pytest.mark.parametrize("c2", [0.0, 0.2])
def test_constraints_that_allow_everything_give_the_ordinary_objective(c2):
    X, y = random_corpus(6, n_seq=8, n_labels=3)
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=True)
    L = layout.n_labels
    masks = TransitionConstraints(
        np.ones((L, L), bool), np.ones(L, bool), np.ones(L, bool), None
    )
    rng = np.random.default_rng(6)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    constrained = ConstrainedCRFObjective(
        corpus, layout, labels, weights, c2=c2, masks=masks, n_chunks=2
    )
    ordinary = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=2)
    w = rng.normal(size=layout.n_params)
    f, g = constrained(w)
    f0, g0 = ordinary(w)
    assert f == pytest.approx(f0, rel=1e-10)
    np.testing.assert_allclose(g, g0, rtol=1e-9, atol=1e-10)


def _iob2_data():
    first = ["john", "mary", "ann", "paris", "rome", "acme"]
    second = ["smith", "jones", "lee", "city", "town", "corp"]
    kinds = ["PER", "PER", "PER", "LOC", "LOC", "ORG"]
    verbs = ["met", "saw", "left", "likes"]
    rng = np.random.default_rng(0)
    X, y = [], []
    for _ in range(40):
        i, j = rng.integers(len(first), size=2)
        v = verbs[rng.integers(len(verbs))]
        words = [first[i], second[i], v, first[j]]
        X.append([{"w": w, "bias": 1.0} for w in words])
        y.append([f"B-{kinds[i]}", f"I-{kinds[i]}", "O", f"B-{kinds[j]}"])
    return X, y


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_constrained_fit_predicts_valid_sequences_with_probabilities_summing_to_one():
    X, y = _iob2_data()
    crf = CRFTagger(
        c2=0.1, max_iter=30, all_possible_transitions=True,
        transition_constraints="IOB2", constrain_training=True,
    ).fit(X, y)
    free = CRFTagger(
        c2=0.1, max_iter=30, all_possible_transitions=True,
        transition_constraints="IOB2",
    ).fit(X, y)
    assert not np.array_equal(crf.coef_, free.coef_)
    classes = crf.classes_.tolist()
    masks = build_constraints("IOB2", classes)
    index = {label: i for i, label in enumerate(classes)}
    X_new = [[{"w": w, "bias": 1.0} for w in s] for s in
             (["smith", "john", "city"], ["met", "lee"], ["acme", "corp", "saw", "rome"])]
    for labels in crf.predict(X + X_new):
        codes = [index[label] for label in labels]
        assert masks.start[codes[0]] and masks.end[codes[-1]]
        assert all(masks.transitions[a, b] for a, b in zip(codes[:-1], codes[1:]))
    x = X_new[0]
    paths = [list(p) for p in itertools.product(classes, repeat=len(x))]
    allowed = [
        p for p in paths
        if masks.start[index[p[0]]] and masks.end[index[p[-1]]]
        and all(masks.transitions[index[a], index[b]] for a, b in zip(p[:-1], p[1:]))
    ]
    log_p = crf.log_probability([x] * len(allowed), allowed)
    assert np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_constrained_fit_minimizes_the_constrained_objective():
    """loss_ is the constrained objective at coef_."""
    X, y = _iob2_data()
    crf = CRFTagger(
        c2=0.1, max_iter=15, transition_constraints="IOB2", constrain_training=True,
    ).fit(X, y)
    corpus = crf.vectorizer_.encode(X)
    index = {label: i for i, label in enumerate(crf.classes_.tolist())}
    labels = np.array([index[label] for seq in y for label in seq], dtype=np.int32)
    obj = ConstrainedCRFObjective(
        corpus, crf.layout_, labels, np.ones(len(X)), c2=0.1,
        masks=build_constraints("IOB2", crf.classes_.tolist()), n_chunks=1,
    )
    assert obj(crf.coef_)[0] == pytest.approx(crf.loss_, rel=1e-9)


def test_training_labels_that_break_the_constraints_raise():
    X, y = _iob2_data()
    y = [list(seq) for seq in y]
    y[3][1:3] = ["O", "I-PER"]
    crf = CRFTagger(c2=0.1, max_iter=5, transition_constraints="IOB2",
                    constrain_training=True)
    with pytest.raises(ValueError, match=r"y\[3\]\[2\].*'I-PER' may not follow 'O'"):
        crf.fit(X, y)
    assert not hasattr(crf, "coef_")
    y = [list(seq) for seq in _iob2_data()[1]]
    y[5][0] = "I-PER"
    with pytest.raises(ValueError, match=r"y\[5\]\[0\].*may not start with 'I-PER'"):
        crf.fit(X, y)
    crf.set_params(transition_constraints=[("B-PER", "I-PER")])
    with pytest.raises(ValueError, match=r"y\[0\]\[1\]"):
        crf.fit(X, _iob2_data()[1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_constrain_training_without_constraints_changes_nothing():
    X, y = _iob2_data()
    free = CRFTagger(c2=0.1, max_iter=10).fit(X, y)
    switched = CRFTagger(c2=0.1, max_iter=10, constrain_training=True).fit(X, y)
    np.testing.assert_array_equal(free.coef_, switched.coef_)


@pytest.mark.parametrize("solver", ["l2sgd", "ap", "pa", "arow"])
def test_online_solvers_reject_constrain_training(solver):
    X, y = _iob2_data()
    crf = CRFTagger(solver=solver, c2=0.1 if solver == "l2sgd" else 1.0,
                    transition_constraints="IOB2", constrain_training=True)
    with pytest.raises(ValueError, match="constrain_training"):
        crf.fit(X, y)
