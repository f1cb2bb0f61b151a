"""Training on partially labelled sequences: the objective against brute force
over the label paths the partial labels allow and finite differences, with
transition constraints, sample weights and dense features; the estimator's
input forms, options and errors; scoring with partial gold labels."""

import numpy as np
import pytest

from sklearn_crf import CRFTagger, SequenceVectorizer
from sklearn_crf._features.validation import encode_labels, encode_partial_labels
from sklearn_crf._model.constraints import TransitionConstraints
from sklearn_crf._model.layout import build_layout
from sklearn_crf._training.objective import CRFObjective, PartialLabelObjective

import _naive
from conftest import random_corpus


def _hide(y, rng, p_unknown=0.3, p_set=0.2, n_labels=3, unknown_seq=(1,)):
    """y with some labels None (unknown) and some sets of two labels holding
    the gold one; the sequences ``unknown_seq`` entirely unknown."""
    out = []
    for s, seq in enumerate(y):
        row = []
        for label in seq:
            u = rng.random()
            if s in unknown_seq or u < p_unknown:
                row.append(None)
            elif u < p_unknown + p_set:
                other = (label + 1 + int(rng.integers(n_labels - 1))) % n_labels
                row.append({label, other})
            else:
                row.append(label)
        out.append(row)
    return out


def _problem(seed, n_seq=8, dense=False, **layout_kwargs):
    """(corpus, layout, encoded labels, gold codes) of a random partially
    labelled corpus (three labels, all seen)."""
    rng = np.random.default_rng(seed)
    X, y = random_corpus(seed, n_seq=n_seq, max_len=5)
    y[0] = [0, 1, 2]
    X[0] = [{"w": "a"}, {"w": "b"}, {"w": "c"}]
    if dense:
        X = [(seq, rng.normal(size=(len(seq), 2))) for seq in X]
    corpus = SequenceVectorizer().fit_encode(X)
    partial = _hide(y, rng)
    enc = encode_partial_labels(partial, corpus.seq_ptr)
    assert enc.allowed is not None
    _, gold = encode_labels(y, corpus.seq_ptr)
    kwargs = dict(min_freq=0, all_possible_states=False, all_possible_transitions=True)
    kwargs.update(layout_kwargs)
    layout = build_layout(corpus, enc.codes, len(enc.classes), allowed=enc.allowed,
                          **kwargs)
    return corpus, layout, enc, gold


def _constraints_allowing(rng, gold, seq_ptr, L, density=0.5):
    """Random transition constraints that allow every gold sequence."""
    trans = rng.random((L, L)) < density
    start = rng.random(L) < density
    end = rng.random(L) < density
    for a, b in zip(seq_ptr[:-1], seq_ptr[1:]):
        if b > a:
            start[gold[a]] = end[gold[b - 1]] = True
            trans[gold[a:b - 1], gold[a + 1:b]] = True
    return TransitionConstraints(trans, start, end, None)


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("n_chunks, block_tokens", [(1, None), (3, 4)])
def test_objective_and_gradient_match_brute_force(constrained, dense, n_chunks,
                                                  block_tokens):
    corpus, layout, enc, gold = _problem(3, dense=dense)
    rng = np.random.default_rng(4)
    weights = rng.uniform(0.5, 2.0, size=corpus.n_sequences)
    weights[2] = 0.0
    masks = (_constraints_allowing(rng, gold, corpus.seq_ptr, layout.n_labels)
             if constrained else None)
    obj = PartialLabelObjective(corpus, layout, enc.codes, enc.allowed, weights, c2=0.3,
                                n_chunks=n_chunks, block_tokens=block_tokens,
                                constraints=masks)
    w = rng.normal(size=layout.n_params)
    f, g = obj(w)
    ref_f, ref_g = _naive.partial_objective(w, layout, corpus, enc.allowed, weights, 0.3,
                                            masks)
    assert f == pytest.approx(ref_f, rel=1e-10)
    np.testing.assert_allclose(g, ref_g, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_windows_around_unknown_tokens_match_brute_force(seed):
    """Longer sequences with runs of known and unknown labels in every
    arrangement (windows at either end, next to each other, known tokens
    between two unknown ones), the first and last labels constrained."""
    rng = np.random.default_rng(seed)
    X, y = random_corpus(seed, n_seq=6, max_len=7)
    corpus = SequenceVectorizer().fit_encode(X)
    lengths = np.diff(corpus.seq_ptr)
    y[0] = [0, 1, 2][:lengths[0]] + [0] * max(0, lengths[0] - 3)
    partial = _hide(y, rng, p_unknown=0.4, p_set=0.1, unknown_seq=())
    enc = encode_partial_labels(partial, corpus.seq_ptr)
    if enc.allowed is None or len(enc.classes) < 3:
        pytest.skip("no partial label or fewer labels drawn")
    _, gold = encode_labels(y, corpus.seq_ptr)
    layout = build_layout(corpus, enc.codes, 3, allowed=enc.allowed, min_freq=0,
                          all_possible_states=True, all_possible_transitions=True)
    masks = _constraints_allowing(rng, gold, corpus.seq_ptr, 3, density=0.7)
    weights = rng.uniform(0.5, 2.0, size=corpus.n_sequences)
    obj = PartialLabelObjective(corpus, layout, enc.codes, enc.allowed, weights, c2=0.0,
                                n_chunks=2, constraints=masks)
    w = rng.normal(size=layout.n_params)
    f, g = obj(w)
    ref_f, ref_g = _naive.partial_objective(w, layout, corpus, enc.allowed, weights, 0.0,
                                            masks)
    assert f == pytest.approx(ref_f, rel=1e-10)
    np.testing.assert_allclose(g, ref_g, rtol=1e-9, atol=1e-10)


def test_gradient_matches_finite_differences():
    corpus, layout, enc, gold = _problem(5)
    rng = np.random.default_rng(6)
    masks = _constraints_allowing(rng, gold, corpus.seq_ptr, layout.n_labels)
    obj = PartialLabelObjective(corpus, layout, enc.codes, enc.allowed,
                                rng.uniform(0.5, 2.0, corpus.n_sequences), c2=0.1,
                                n_chunks=2, constraints=masks)
    w = rng.normal(size=layout.n_params)
    _, g = obj(w)
    eps = 1e-6
    for d in list(np.eye(len(w))[:10]) + [d / np.linalg.norm(d)
                                          for d in rng.normal(size=(4, len(w)))]:
        num = (obj(w + eps * d)[0] - obj(w - eps * d)[0]) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


def test_fully_labelled_mask_gives_the_ordinary_objective_bitwise():
    """One allowed label a token: the bits of CRFObjective."""
    corpus, layout, _, gold = _problem(7, dense=True)
    allowed = np.zeros((corpus.n_tokens, layout.n_labels), dtype=bool)
    allowed[np.arange(corpus.n_tokens), gold] = True
    weights = np.random.default_rng(8).uniform(0.5, 2.0, corpus.n_sequences)
    w = np.random.default_rng(9).normal(size=layout.n_params)
    for n_chunks in (1, 3):
        f, g = PartialLabelObjective(corpus, layout, gold, allowed, weights, c2=0.2,
                                     n_chunks=n_chunks)(w)
        f0, g0 = CRFObjective(corpus, layout, gold, weights, c2=0.2, n_chunks=n_chunks)(w)
        assert f == f0
        np.testing.assert_array_equal(g, g0)


def test_unknown_tokens_add_no_term_of_their_own():
    """A sequence whose tokens all allow every label adds exactly nothing."""
    corpus, layout, enc, _ = _problem(10)
    w = np.random.default_rng(11).normal(size=layout.n_params)
    weights = np.ones(corpus.n_sequences)
    f, g = PartialLabelObjective(corpus, layout, enc.codes, enc.allowed, weights, c2=0.0,
                                 n_chunks=1)(w)
    weights[1] = 0.0  # sequence 1 is all unknown (see _hide)
    f0, g0 = PartialLabelObjective(corpus, layout, enc.codes, enc.allowed, weights,
                                   c2=0.0, n_chunks=1)(w)
    assert f == f0
    np.testing.assert_array_equal(g, g0)


@pytest.mark.parametrize("block_tokens", [3, 4096])
def test_objective_is_bitwise_identical_for_any_thread_count(block_tokens):
    corpus, layout, enc, gold = _problem(12, n_seq=12, dense=True)
    rng = np.random.default_rng(13)
    masks = _constraints_allowing(rng, gold, corpus.seq_ptr, layout.n_labels)
    w = rng.normal(size=layout.n_params)
    results = [
        PartialLabelObjective(corpus, layout, enc.codes, enc.allowed,
                              np.ones(corpus.n_sequences), c2=0.1, n_chunks=k,
                              block_tokens=block_tokens, constraints=masks)(w)
        for k in (1, 2, 3)
    ]
    for f, g in results[1:]:
        assert f == results[0][0]
        np.testing.assert_array_equal(g, results[0][1])


def test_layout_counts_each_allowed_label_and_no_unknown_token():
    X = [[{"w": "a"}, {"w": "b"}, {"w": "c"}, {"w": "d"}]]
    y = [["x", {"x", "y"}, None, "z"]]
    corpus = SequenceVectorizer().fit_encode(X)
    enc = encode_partial_labels(y, corpus.seq_ptr)
    layout = build_layout(corpus, enc.codes, 3, allowed=enc.allowed, min_freq=0,
                          all_possible_states=False, all_possible_transitions=False)
    names = corpus.vectorizer.feature_names_
    pairs = sorted((names[a], enc.classes[k]) for a, k in zip(
        layout.state_pairs(), layout.attr_label))
    assert pairs == [("w:a", "x"), ("w:b", "x"), ("w:b", "y"), ("w:d", "z")]
    trans = sorted(zip(enc.classes[layout.trans_from], enc.classes[layout.trans_to]))
    assert trans == [("x", "x"), ("x", "y")]


# --------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------


def _ner(n=40, seed=0):
    """A small NER task (two entity types) and the same labels with a third
    of the entity labels unknown and some tokens given a set of two labels."""
    rng = np.random.default_rng(seed)
    names = {"john": "PER", "mary": "PER", "paris": "LOC", "rome": "LOC"}
    words = ["visited", "likes", "the", "city", "."]
    X, y, partial = [], [], []
    for _ in range(n):
        seq = list(rng.choice(words, 2)) + [rng.choice(list(names))] + list(
            rng.choice(words, 2))
        tags = ["B-" + names[w] if w in names else "O" for w in seq]
        X.append([{"w": w, "bias": 1.0} for w in seq])
        y.append(tags)
        partial.append([None if tag != "O" and rng.random() < 0.3
                        else {tag, "O"} if rng.random() < 0.1 else tag for tag in tags])
    return X, y, partial


FAST = dict(c2=0.1, max_iter=300)


def test_fit_on_partial_labels_learns_the_hidden_entities():
    X, y, partial = _ner()
    crf = CRFTagger(**FAST).fit(X, partial)
    assert crf.classes_.tolist() == ["B-LOC", "B-PER", "O"]
    assert crf.score(X, y) == 1.0


def test_fully_labelled_y_gives_the_same_model_bitwise():
    """Sets of one label are labels: the fit of fully labelled data."""
    X, y, _ = _ner()
    ref = CRFTagger(**FAST).fit(X, y)
    singleton = [[frozenset({tag}) if t % 2 else tag for t, tag in enumerate(seq)]
                 for seq in y]
    crf = CRFTagger(**FAST).fit(X, singleton)
    np.testing.assert_array_equal(crf.coef_, ref.coef_)
    assert crf.loss_ == ref.loss_


def test_an_unknown_sequence_changes_nothing():
    X, y, partial = _ner()
    ref = CRFTagger(**FAST).fit(X, partial)
    crf = CRFTagger(**FAST).fit(X + [X[0]], partial + [[None] * len(X[0])])
    np.testing.assert_array_equal(crf.coef_, ref.coef_)


@pytest.mark.parametrize("solver", ["lbfgs", "l-bfgs-b"])
def test_fit_is_bitwise_identical_for_any_thread_count(solver):
    X, _, partial = _ner(n=80)
    X_val, y_val = X[:10], partial[:10]
    fits = [CRFTagger(solver=solver, n_jobs=k, **FAST).fit(X, partial, X_val=X_val,
                                                           y_val=y_val)
            for k in (1, 2, 3)]
    for crf in fits[1:]:
        np.testing.assert_array_equal(crf.coef_, fits[0].coef_)
        np.testing.assert_array_equal(crf.validation_scores_, fits[0].validation_scores_)


def test_every_input_form_and_sample_weights():
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer

    X, y, partial = _ner()
    weights = np.linspace(0.5, 2.0, len(X))
    ref = CRFTagger(**FAST).fit(X, partial, sample_weight=weights)
    encoded = SequenceVectorizer().fit_encode(X)
    crf = CRFTagger(**FAST).fit(encoded, partial, sample_weight=weights)
    np.testing.assert_array_equal(crf.coef_, ref.coef_)
    dense = [np.array([[t["w"] in ("john", "mary"), t["w"] in ("paris", "rome"), 1.0]
                       for t in seq]) for seq in X]
    assert CRFTagger(**FAST).fit(dense, partial).score(dense, y) == 1.0
    sentences = [[t["w"] for t in seq] for seq in X]
    pipe = make_pipeline(SequenceFeaturizer(), CRFTagger(**FAST))
    assert pipe.fit(sentences, partial, crftagger__sample_weight=weights).score(
        sentences, y) == 1.0


def test_warm_start_and_early_stopping():
    X, y, partial = _ner(n=60)
    crf = CRFTagger(warm_start=True, **FAST).fit(X[:30], partial[:30])
    crf.fit(X, partial)
    assert crf.score(X, y) == 1.0
    for scoring in (None, "entity_f1"):
        stopped = CRFTagger(early_stopping=True, validation_scoring=scoring,
                            n_iter_no_change=3, **FAST).fit(X, partial)
        assert np.all(np.isfinite(stopped.validation_scores_))


def test_constrained_training_with_partial_labels():
    X, y, partial = _ner()
    crf = CRFTagger(transition_constraints="IOB2", constrain_training=True,
                    **FAST).fit(X, partial)
    assert crf.score(X, y) == 1.0


def test_partial_labels_no_constrained_path_raises():
    X, _, partial = _ner()
    partial[3] = ["O", "O", frozenset({"I-PER", "I-LOC"}), "O", "O"]
    partial[4] = ["B-PER", "I-PER", "O", "B-LOC", "I-LOC"]
    with pytest.raises(ValueError, match="sequence 3 has no label path allowed by the "
                       "partial labels of y and transition_constraints"):
        CRFTagger(transition_constraints="IOB2", constrain_training=True,
                  **FAST).fit(X, partial)


@pytest.mark.parametrize("solver", ["ap", "pa", "arow", "l2sgd"])
def test_online_solvers_refuse_partial_labels(solver):
    X, _, partial = _ner(n=5)
    with pytest.raises(ValueError, match=f"solver='{solver}' cannot train on"):
        CRFTagger(solver=solver, max_iter=2).fit(X, partial)


def test_sharded_fits_refuse_partial_labels():
    from sklearn_crf._training.distributed import encode_shard

    X, partial, _ = _ner(n=5)
    partial[2][1] = None
    with pytest.raises(ValueError, match=r"y\[2\]\[1\] is None, not a label: partial "
                       "labels .* are read only by CRFTagger.fit"):
        encode_shard(X, partial)


@pytest.mark.parametrize("entry, error, message", [
    (set(), ValueError, r"y\[0\]\[1\] is an empty set"),
    ({"O", None}, ValueError, r"y\[0\]\[1\] is None, not a label"),
    ({"O", 3}, TypeError, "y mixes labels of different types"),
    (["O"], TypeError, r"y\[0\]\[1\] is a list, which is not hashable"),
])
def test_bad_partial_labels_raise(entry, error, message):
    X, _, partial = _ner(n=3)
    partial[0][1] = entry
    with pytest.raises(error, match=message):
        CRFTagger(**FAST).fit(X, partial)


def test_all_unknown_raises():
    X, _, _ = _ner(n=3)
    with pytest.raises(ValueError, match="every token is unknown"):
        CRFTagger(**FAST).fit(X, [[None] * len(seq) for seq in X])


# --------------------------------------------------------------------------
# scoring with partial gold labels
# --------------------------------------------------------------------------


def test_token_metrics_leave_out_unknown_gold_tokens():
    from sklearn_crf.metrics import flat_accuracy_score, sequence_accuracy_score

    y_true = [["B-PER", None, "O"], [{"O", "B-LOC"}, frozenset({"O"})]]
    y_pred = [["B-PER", "O", "B-LOC"], ["B-LOC", "O"]]
    assert flat_accuracy_score(y_true, y_pred) == 2 / 3
    assert sequence_accuracy_score(y_true, y_pred) == 0.5


def test_entity_metrics_leave_out_entities_at_unknown_gold_tokens():
    from sklearn_crf.metrics import entity_f1_score, entity_precision_score

    y_true = [["B-PER", "I-PER", "O", None, "O", "B-LOC", "O"]]
    # the LOC at the unknown token is left out; the PER and the last LOC count
    y_pred = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-LOC", "O"]]
    assert entity_precision_score(y_true, y_pred) == 1.0
    # a predicted entity touching the unknown token is left out too
    assert entity_f1_score(y_true, [["B-PER", "I-PER", "B-ORG", "O", "O", "O", "O"]]) \
        == pytest.approx(2 / 3)


def test_score_of_the_tagger_with_partial_gold():
    X, y, partial = _ner()
    crf = CRFTagger(**FAST).fit(X, y)
    assert crf.score(X, partial) == 1.0


def test_an_empty_tok_val_gives_the_bits_of_all_ones():
    """Windows and known parts cut from a corpus whose tok_val is empty
    (every value 1, without_unit_values): the bits of the ones."""
    import dataclasses

    corpus, layout, enc, gold = _problem(14, n_seq=12)
    rng = np.random.default_rng(15)
    masks = _constraints_allowing(rng, gold, corpus.seq_ptr, layout.n_labels)
    w = rng.normal(size=layout.n_params)
    weights = rng.uniform(0.5, 2.0, corpus.n_sequences)
    results = [
        PartialLabelObjective(dataclasses.replace(corpus, tok_val=tok_val), layout,
                              enc.codes, enc.allowed, weights, c2=0.1, n_chunks=2,
                              constraints=masks)(w)
        for tok_val in (np.ones(len(corpus.tok_attr)), np.zeros(0))
    ]
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
