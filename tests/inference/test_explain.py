"""Explained predictions (sklearn_crf._inference.explain): the terms add up to the path's score."""

import math
import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002

from conftest import random_corpus


def explain_prediction(crf, X, y=None, **kwargs):
    return crf.explain_prediction(X, y, **kwargs)


def compare_labels(crf, x, t, a, b, **kwargs):
    return crf.compare_labels(x, t, a, b, **kwargs)


def assert_additive(ex, rtol=1e-9):
    """score == Σ terms == log p + log Z, to rtol relative to the magnitudes."""
    scale = max(1.0, abs(ex.score), abs(ex.log_partition))
    terms = math.fsum(r["contribution"] for r in ex.to_records())
    assert abs(terms - ex.score) <= rtol * scale
    assert abs(math.fsum(t.score for t in ex.tokens) - ex.score) <= rtol * scale
    assert abs(ex.log_probability + ex.log_partition - ex.score) <= rtol * scale


def random_model(seed, **params):
    X, y = random_corpus(seed, n_seq=8, max_len=6, n_labels=3)
    crf = CRFTagger(c2=0.05, all_possible_transitions=True, **params).fit(X, y)
    return crf, X, y


TOY_X = [[{"w": "John", "cap": True}, {"w": "Smith", "cap": True}, {"w": "runs"}],
         [{"w": "Mary", "cap": True}, {"w": "sleeps"}],
         [{"w": "Smith", "cap": True}, {"w": "runs"}],
         [{"w": "The", "cap": True}, {"w": "end"}]]
TOY_Y = [["B-PER", "I-PER", "O"], ["B-PER", "O"], ["B-PER", "O"], ["O", "O"]]
TOY_NEW = [[{"w": "Mary", "cap": True}, {"w": "Smith", "cap": True}, {"w": "sleeps"}],
           [{"w": "The", "cap": True}, {"w": "John", "cap": True}, {"w": "runs"}]]


@pytest.fixture(scope="module")
def toy():
    return CRFTagger(c2=0.05, all_possible_transitions=True).fit(TOY_X, TOY_Y)


@pytest.fixture(scope="module")
def iob2():
    return CRFTagger(c2=0.05, transition_constraints="IOB2").fit(TOY_X, TOY_Y)


@pytest.fixture(scope="module")
def conll():
    sents, tags = load_conll2002(n_sentences=300, return_X_y=True)
    featurizer = SequenceFeaturizer()
    X = featurizer.fit_transform(sents)
    with pytest.warns(Warning):  # max_iter stops it: a ConvergenceWarning
        crf = CRFTagger(max_iter=20).fit(X, tags)
    return crf, sents, X, tags


@pytest.mark.parametrize("seed", range(5))
def test_terms_add_up_to_path_score_on_random_models(seed):
    crf, X, y = random_model(seed)
    rng = np.random.default_rng(seed)
    other = [[int(rng.integers(3)) for _ in seq] for seq in y]
    for labels in (None, y, other):
        explanations = explain_prediction(crf, X, labels)
        assert len(explanations) == len(X)
        for s, ex in enumerate(explanations):
            assert ex.index == s and len(ex.tokens) == len(X[s])
            assert_additive(ex)


def test_terms_add_up_to_path_score_on_conll2002(conll):
    crf, sents, X, tags = conll
    for labels in (None, tags):
        explanations = explain_prediction(crf, X, labels)
        for ex in explanations:
            assert_additive(ex)
    predicted = crf.predict(X)
    assert [ex.labels for ex in explain_prediction(crf, X)] == predicted


def test_terms_match_a_naive_sum_over_the_weight_dicts():
    crf, X, y = random_model(11)
    state, trans = crf.state_features_, crf.transition_features_
    for ex, x in zip(explain_prediction(crf, X, y), X):
        for t, (tok, feats) in enumerate(zip(ex.tokens, x)):
            naive = {}
            for key, value in feats.items():
                if isinstance(value, str):
                    name, v = f"{key}:{value}", 1.0
                else:
                    name, v = key, float(value)
                c = state.get((name, tok.label), 0.0) * v
                if c != 0.0:
                    naive[name] = c
            assert {c.name: c.contribution for c in tok.state} == pytest.approx(naive, rel=1e-12)
            assert tok.state_score == pytest.approx(sum(naive.values()), rel=1e-12, abs=1e-15)
            if t == 0:
                assert tok.transition is None and tok.previous_label is None
            else:
                w = trans.get((ex.labels[t - 1], tok.label), 0.0)
                assert tok.previous_label == ex.labels[t - 1]
                assert tok.transition.weight == w and tok.transition.contribution == w
                assert tok.transition.name == f"{ex.labels[t - 1]} -> {tok.label}"


def test_state_terms_sorted_by_absolute_contribution(conll):
    crf, _, X, _ = conll
    for ex in explain_prediction(crf, X[:20]):
        for tok in ex.tokens:
            sizes = [abs(c.contribution) for c in tok.state]
            assert sizes == sorted(sizes, reverse=True)
            assert all(c.kind == "attribute" and c.token == tok.index for c in tok.state)
            assert all(c.contribution == c.weight * c.value for c in tok.state)


def test_repeated_attributes_of_a_token_are_one_term():
    X = [[["a", "a", "b"], ["b"]], [["b"], ["a"]]]
    crf = CRFTagger(c2=0.1).fit(X, [["x", "y"], ["y", "x"]])
    tok = explain_prediction(crf, [[["a", "a", "b"]]], [["x"]])[0].tokens[0]
    weights = crf.state_features_
    by_name = {c.name: c for c in tok.state}
    assert sorted(by_name) == ["a", "b"]
    assert by_name["a"].value == 2.0 and by_name["a"].weight == weights[("a", "x")]
    assert by_name["a"].contribution == pytest.approx(2 * weights[("a", "x")], rel=1e-15)


def test_default_path_is_the_prediction_under_allowed(toy):
    allowed = [[None, {"O", "B-PER"}, None], None]
    default = explain_prediction(toy, TOY_NEW, allowed=allowed)
    given = explain_prediction(toy, TOY_NEW, toy.predict(TOY_NEW, allowed=allowed),
                               allowed=allowed)
    assert [ex.labels for ex in default] == toy.predict(TOY_NEW, allowed=allowed)
    assert [ex.labels for ex in default] != toy.predict(TOY_NEW)
    for d, g in zip(default, given):
        assert d.score == g.score and d.log_probability == g.log_probability
        assert d.to_records() == g.to_records()


def test_given_path_reports_its_own_probability(toy):
    y = [["O", "O", "O"], ["B-PER", "I-PER", "O"]]
    explanations = explain_prediction(toy, TOY_NEW, y)
    assert [ex.labels for ex in explanations] == y
    np.testing.assert_allclose([ex.log_probability for ex in explanations],
                               toy.log_probability(TOY_NEW, y), rtol=1e-12)
    np.testing.assert_allclose([ex.log_partition for ex in explanations],
                               toy.log_partition(TOY_NEW), rtol=1e-12)
    best = explain_prediction(toy, TOY_NEW)
    assert all(g.score < b.score for g, b in zip(explanations, best))


def test_allowed_conditions_probabilities_not_scores(toy):
    y = toy.predict(TOY_NEW)
    allowed = [[None, {"I-PER", "O"}, None], ["O", None, None]]
    free = explain_prediction(toy, TOY_NEW, y)
    cond = explain_prediction(toy, TOY_NEW, y, allowed=allowed)
    for f, c in zip(free, cond):
        assert f.to_records() == c.to_records() and f.score == c.score
        assert c.log_partition < f.log_partition and c.log_probability > f.log_probability
        assert_additive(c)


def test_forbidden_path_has_a_finite_score_and_no_probability(iob2):
    x = TOY_NEW[0]
    ex = explain_prediction(iob2, [x], [["O", "I-PER", "O"]])[0]
    assert ex.log_probability == -np.inf and ex.probability == 0.0
    assert np.isfinite(ex.score)
    # conlleval reads an I- after O as the start of an entity; that span is
    # allowed (after B-PER), so it has a probability
    assert [(e.type, e.start, e.end) for e in ex.entities] == [("PER", 1, 2)]
    lz = iob2.log_partition([x], allowed=[[None, "I-PER", None]])[0]
    assert ex.entities[0].probability == pytest.approx(math.exp(lz - ex.log_partition),
                                                       rel=1e-9)
    # I-PER cannot start a sequence under IOB2: the span has probability 0
    ex = explain_prediction(iob2, [x], [["I-PER", "O", "O"]])[0]
    assert [(e.type, e.start, e.end, e.probability) for e in ex.entities] == [
        ("PER", 0, 1, 0.0)]


def test_empty_sequence_and_empty_input(toy):
    ex = explain_prediction(toy, [[], TOY_NEW[0]])
    assert ex[0].tokens == [] and ex[0].score == 0.0 and ex[0].labels == []
    assert ex[0].log_probability == 0.0 and ex[0].entities == []
    assert_additive(ex[1])
    assert explain_prediction(toy, []) == []


@pytest.mark.parametrize("y, message", [
    ([["O", "O", "O"], ["O", "B-XYZ", "O"]], r"y\[1\]\[1\] is 'B-XYZ'"),
    ([["O", "O"], ["O", "O", "O"]], r"y\[0\] must be a sequence of 3 labels"),
    ([["O", "O", "O"]], r"y must be a list of 2 label sequences"),
])
def test_bad_labels_name_the_sequence_and_token(toy, y, message):
    with pytest.raises(ValueError, match=message):
        explain_prediction(toy, TOY_NEW, y)


@pytest.mark.parametrize("top", [0, -1, 1.5, True, "3"])
def test_bad_top(toy, top):
    with pytest.raises(ValueError, match="top must be a positive integer or None"):
        explain_prediction(toy, TOY_NEW, top=top)


def test_unfitted_tagger():
    with pytest.raises(NotFittedError):
        explain_prediction(CRFTagger(), TOY_NEW)


def test_hashing_tagger_names_attributes_by_slot():
    crf, X, y = random_model(3, hashing=2**12)
    slots = set(crf.vectorizer_.hash_slots_.tolist())
    explanations = explain_prediction(crf, X, y)
    names = [c.name for ex in explanations for tok in ex.tokens for c in tok.state]
    assert names
    for name in names:
        match = re.fullmatch(r"<slot (\d+)>", name)
        assert match and int(match.group(1)) in slots
    plain, _, _ = random_model(3)
    for h, p in zip(explanations, explain_prediction(plain, X, y)):
        assert_additive(h)
        assert h.score == pytest.approx(p.score, rel=1e-6)  # no collision at 4096 slots


def test_top_keeps_the_largest_terms_and_the_totals(conll):
    crf, _, X, _ = conll
    full = explain_prediction(crf, X[:10])
    cut = explain_prediction(crf, X[:10], top=2)
    for f, c in zip(full, cut):
        assert c.score == f.score
        assert_additive(c)
        for ft, ct in zip(f.tokens, c.tokens):
            assert ct.state == ft.state[:2] and ct.n_other == len(ft.state[2:])
            assert ct.other == pytest.approx(sum(x.contribution for x in ft.state[2:]),
                                             rel=1e-12, abs=1e-12)
            assert ct.state_score == ft.state_score
        rows = [r for r in c.to_records() if r["kind"] == "other"]
        assert len(rows) == sum(1 for t in c.tokens if t.n_other)
        assert all(math.isnan(r["value"]) and math.isnan(r["weight"]) for r in rows)


def test_text_rendering_shows_totals_and_top_terms(conll):
    crf, sents, X, _ = conll
    ex = explain_prediction(crf, X[:5])
    for s, e in enumerate(ex):
        text = e.to_text(top=2, words=sents[s])
        lines = text.splitlines()
        assert lines[0].startswith(f"sequence {s}: score {e.score:+.4f} = log Z")
        for tok in e.tokens:
            head = f"token {tok.index} {sents[s][tok.index]!r} {tok.label}: {tok.score:+.4f}"
            at = next(i for i, line in enumerate(lines) if line.startswith(head))
            for k, c in enumerate(tok.state[:2]):
                assert lines[at + 1 + k] == f"    {c.contribution:+.4f}  {c.name}"
            if len(tok.state) > 2:
                assert lines[at + 3].endswith(f"({len(tok.state) - 2} more)")
        for ent in e.entities:
            assert any(line.startswith(f"entity {ent.type}, tokens {ent.start}-{ent.end - 1}")
                       for line in lines)
        assert str(e) == e.to_text()
    with pytest.raises(ValueError, match="words has 1 entries but sequence 0 has"):
        ex[0].to_text(words=["x"])


def test_entity_terms_sum_inside_the_span(conll):
    crf, _, X, tags = conll
    n_entities = 0
    for labels in (None, tags[:60]):
        for ex in explain_prediction(crf, X[:60], labels):
            for ent in ex.entities:
                n_entities += 1
                toks = ex.tokens[ent.start:ent.end]
                expected = math.fsum([t.state_score for t in toks]
                                     + [t.transition.contribution for t in toks[1:]])
                assert ent.score == pytest.approx(expected, rel=1e-12, abs=1e-12)
                assert ent.entering is ex.tokens[ent.start].transition
                assert ent.labels == tuple(ex.labels[ent.start:ent.end])
                terms = math.fsum(c.contribution for c in ent.contributions) + ent.other
                assert terms == pytest.approx(ent.score, rel=1e-12, abs=1e-12)
                assert all(ent.start <= c.token < ent.end for c in ent.contributions)
                assert not any(c.kind == "transition" and c.token == ent.start
                               for c in ent.contributions)
    assert n_entities > 50


def test_entity_probabilities_are_those_of_predict_entities(conll):
    crf, _, X, _ = conll
    expected = crf.predict_entities(X[:60])
    for labels in (None, crf.predict(X[:60])):
        got = [[(e.type, e.start, e.end, e.probability) for e in ex.entities]
               for ex in explain_prediction(crf, X[:60], labels)]
        assert [[e[:3] for e in s] for s in got] == [[e[:3] for e in s] for s in expected]
        np.testing.assert_allclose([e[3] for s in got for e in s],
                                   [e[3] for s in expected for e in s], rtol=1e-9)


def test_entity_probability_of_a_given_path_is_a_span_marginal(toy):
    y = [["B-PER", "B-PER", "O"], ["O", "B-PER", "I-PER"]]
    explanations = explain_prediction(toy, TOY_NEW, y)
    marginals = toy.predict_marginals(TOY_NEW, output="array")
    index = {label: k for k, label in enumerate(toy.classes_.tolist())}
    checked = 0
    for s, ex in enumerate(explanations):
        for ent in ex.entities:
            if ent.end - ent.start == 1:  # a one-token span: its node marginal
                assert ent.probability == pytest.approx(
                    marginals[s][ent.start, index[ent.labels[0]]], rel=1e-9)
                checked += 1
            else:  # forcing the span: log Z(span) - log Z
                forced = [None] * len(y[s])
                forced[ent.start:ent.end] = ent.labels
                lz = toy.log_partition([TOY_NEW[s]], allowed=[forced])[0]
                assert ent.probability == pytest.approx(math.exp(lz - ex.log_partition), rel=1e-9)
                checked += 1
    assert checked == 3


def test_entities_are_none_for_labels_that_are_not_strings():
    crf, X, y = random_model(2)
    explanations = explain_prediction(crf, X)
    assert all(ex.entities is None for ex in explanations)
    assert "entity" not in explanations[0].to_text()


@pytest.mark.parametrize("seed", range(2))
def test_compare_labels_difference_is_the_log_probability_difference(seed):
    crf, X, y = random_model(seed)
    classes = crf.classes_.tolist()
    rng = np.random.default_rng(seed)
    checked = 0
    for x, labels in zip(X, y):
        if not x:
            continue
        t = int(rng.integers(len(x)))  # one token of each sequence, every pair of labels
        for a in classes:
            for b in classes:
                cmp = compare_labels(crf, x, t, a, b, y=labels)
                scale = max(1.0, abs(cmp.score_a))
                assert abs(cmp.difference - (cmp.log_probability_a - cmp.log_probability_b)) \
                    <= 1e-9 * scale
                parts = cmp.state_difference + sum(
                    tr.difference for tr in (cmp.transition_in, cmp.transition_out)
                    if tr is not None)
                assert abs(cmp.difference - parts) <= 1e-9 * scale
                assert cmp.state_difference == pytest.approx(
                    math.fsum(c.difference for c in cmp.state), rel=1e-9, abs=1e-12)
                checked += 1
    assert checked >= 27


def test_compare_labels_paths_and_terms(toy):
    x = TOY_NEW[0]
    path = toy.predict([x])[0]
    cmp = compare_labels(toy, x, 1, "O", "I-PER", y=["B-PER", "I-PER", "O"])
    assert cmp.labels_a == ["B-PER", "O", "O"] and cmp.labels_b == ["B-PER", "I-PER", "O"]
    ex_a, ex_b = explain_prediction(toy, [x, x], [cmp.labels_a, cmp.labels_b])
    assert cmp.score_a == ex_a.score and cmp.score_b == ex_b.score
    wa = {c.name: c.weight for c in ex_a.tokens[1].state}
    wb = {c.name: c.weight for c in ex_b.tokens[1].state}
    assert {c.name for c in cmp.state} == set(wa) | set(wb)
    for c in cmp.state:
        assert (c.weight_a, c.weight_b) == (wa.get(c.name, 0.0), wb.get(c.name, 0.0))
    assert (cmp.transition_in.name_a, cmp.transition_in.name_b) == ("B-PER -> O", "B-PER -> I-PER")
    assert cmp.transition_out.name_a == "O -> O" and cmp.transition_out.name_b == "I-PER -> O"
    default = compare_labels(toy, x, 2, path[2], "B-PER")
    assert default.labels_a == path
    first = compare_labels(toy, x, 0, "B-PER", "O")
    assert first.transition_in is None
    text = cmp.to_text()
    assert text.startswith(f"token 1: O rather than I-PER by {cmp.difference:+.4f}")
    assert "transition in B-PER -> O" in text and str(cmp) == text


def test_compare_labels_under_allowed(iob2):
    x = TOY_NEW[0]
    allowed = [None, {"O", "B-PER"}, None]
    cmp = compare_labels(iob2, x, 1, "O", "B-PER", allowed=allowed)
    assert cmp.labels_a[1] == "O" and np.isfinite(cmp.log_probability_b)
    assert cmp.difference == pytest.approx(cmp.log_probability_a - cmp.log_probability_b,
                                           rel=1e-9)
    forbidden = compare_labels(iob2, x, 1, "O", "I-PER", allowed=allowed)
    assert forbidden.log_probability_b == -np.inf and np.isfinite(forbidden.difference)


@pytest.mark.parametrize("args, message", [
    ((3, "O", "B-PER"), r"t must be a token index of x, from 0 to 2, got 3"),
    ((-1, "O", "B-PER"), r"t must be a token index"),
    ((1, "O", "B-XYZ"), r"b is 'B-XYZ', which is not one of the labels"),
    ((1, "Q", "O"), r"a is 'Q', which is not one of the labels"),
])
def test_compare_labels_errors(toy, args, message):
    with pytest.raises(ValueError, match=message):
        compare_labels(toy, TOY_NEW[0], *args)
    with pytest.raises(ValueError, match=r"y must be a sequence of 3 labels"):
        compare_labels(toy, TOY_NEW[0], 0, "O", "B-PER", y=["O"])
    with pytest.raises(ValueError, match=r"y\[2\] is 'Q', which is not one of the labels"):
        compare_labels(toy, TOY_NEW[0], 0, "O", "B-PER", y=["O", "O", "Q"])


def dense_model(seed, with_dicts):
    """A fitted tagger on dense arrays, or on (feature dicts, array) tuples."""
    X, y = random_corpus(seed, n_seq=8, max_len=6, n_labels=3)
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=(len(seq), 4)) for seq in X]
    X = [(seq, arr) for seq, arr in zip(X, arrays)] if with_dicts else arrays
    crf = CRFTagger(c2=0.05, all_possible_transitions=True).fit(X, y)
    return crf, X, y


@pytest.mark.parametrize("with_dicts", [False, True], ids=["dense", "mixed"])
@pytest.mark.parametrize("seed", range(3))
def test_terms_add_up_to_path_score_on_dense_and_mixed_models(seed, with_dicts):
    crf, X, y = dense_model(seed, with_dicts)
    rng = np.random.default_rng(seed)
    other = [[int(rng.integers(3)) for _ in seq] for seq in y]
    for labels in (None, y, other):
        for s, ex in enumerate(explain_prediction(crf, X, labels)):
            assert ex.index == s and len(ex.tokens) == len(y[s])
            assert_additive(ex)
            kinds = {c.kind for tok in ex.tokens for c in tok.state}
            if y[s] and labels is y:  # gold labels: every attribute has a weight
                assert "dense" in kinds
                assert ("attribute" in kinds) == with_dicts


def test_dense_terms_are_value_times_weight_per_dimension():
    crf, X, y = dense_model(7, with_dicts=False)
    classes = crf.classes_.tolist()
    ex = explain_prediction(crf, X[:3], y[:3])
    for s in range(3):
        for tok in ex[s].tokens:
            k = classes.index(tok.label)
            want = {f"dense[{j}]": (X[s][tok.index, j], crf.dense_coef_[j, k])
                    for j in range(4)}
            got = {c.name: (c.value, c.weight) for c in tok.state}
            assert got == want
            for c in tok.state:
                assert c.kind == "dense" and c.contribution == c.value * c.weight


def test_dense_explanation_of_an_encoded_corpus_and_top():
    crf, X, y = dense_model(8, with_dicts=True)
    corpus = crf.vectorizer_.encode(X)
    a = explain_prediction(crf, X, top=2)
    b = explain_prediction(crf, corpus, top=2)
    for ea, eb in zip(a, b):
        assert ea.score == eb.score and ea.labels == eb.labels
        assert [t.state for t in ea.tokens] == [t.state for t in eb.tokens]
        assert all(len(t.state) <= 2 for t in eb.tokens)
        assert_additive(eb)
    with pytest.raises(ValueError, match="dense"):
        explain_prediction(crf, [tokens for tokens, _ in X])


@pytest.mark.parametrize("with_dicts", [False, True], ids=["dense", "mixed"])
def test_compare_labels_with_dense_features(with_dicts):
    crf, X, y = dense_model(9, with_dicts)
    classes = crf.classes_.tolist()
    x, labels = next((x, labels) for x, labels in zip(X, y) if labels)
    for a in classes:
        for b in classes:
            cmp = compare_labels(crf, x, 0, a, b, y=labels)
            scale = max(1.0, abs(cmp.score_a))
            assert abs(cmp.difference - (cmp.log_probability_a - cmp.log_probability_b)) \
                <= 1e-9 * scale
            assert cmp.state_difference == pytest.approx(
                math.fsum(c.difference for c in cmp.state), rel=1e-9, abs=1e-12)
            assert "dense" in {c.kind for c in cmp.state}


def test_top_on_a_dense_model_is_the_top_of_the_full_explanation():
    """With ``top``, only the largest dense terms are built, and the explanation
    is the full one's cut at ``top``: the same terms, counts and totals."""
    _, X, y = dense_model(10, with_dicts=True)
    y = [[["B-A", "I-A", "O"][k] for k in seq] for seq in y]
    crf = CRFTagger(c2=0.05, all_possible_transitions=True).fit(X, y)
    full = explain_prediction(crf, X)
    assert sum(len(ex.entities) for ex in full) > 0
    for top in (1, 2, 3):
        cut = explain_prediction(crf, X, top=top)
        for ef, ec in zip(full, cut):
            assert_additive(ec)
            for tf, tc in zip(ef.tokens, ec.tokens):
                assert tc.state == tf.state[:top]
                assert tc.n_other == len(tf.state) - len(tc.state)
                assert tc.other == pytest.approx(
                    math.fsum(c.contribution for c in tf.state[top:]), abs=1e-12)
                assert tc.state_score == pytest.approx(tf.state_score, abs=1e-12)
            for nf, nc in zip(ef.entities, ec.entities):
                assert nc.contributions == nf.contributions[:top]
                assert nc.n_other == len(nf.contributions) - len(nc.contributions)
                assert nc.score == pytest.approx(nf.score, abs=1e-12)


def test_entities_of_a_given_path_through_an_encoded_corpus():
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(n, 3)) for n in (3, 4, 2, 5)]
    y = [["B-A", "I-A", "O"], ["O", "B-A", "O", "O"], ["B-A", "O"],
         ["O", "O", "B-A", "I-A", "I-A"]]
    crf = CRFTagger(c2=0.1).fit(X, y)
    by_arrays = explain_prediction(crf, X, y)
    by_corpus = explain_prediction(crf, crf.vectorizer_.encode(X), y)
    assert [ex.entities for ex in by_corpus] == [ex.entities for ex in by_arrays]
    assert sum(len(ex.entities) for ex in by_corpus) == 4


def test_explanations_encode_x_once(toy, monkeypatch):
    # the explanation helpers take the encoded corpus: X is encoded once per call
    vectorizer = type(toy.vectorizer_)
    encode = vectorizer.encode
    calls = []

    def counting(self, X):
        calls.append(len(X))
        return encode(self, X)

    monkeypatch.setattr(vectorizer, "encode", counting)
    toy.explain_prediction(TOY_NEW)
    toy.explain_prediction(TOY_NEW, [["B-PER", "I-PER", "O"], ["O", "B-PER", "O"]])
    toy.compare_labels(TOY_NEW[0], 1, "I-PER", "O")
    assert calls == [2, 2, 1]


@pytest.mark.parametrize("with_allowed", [False, True])
def test_entity_probabilities_match_brute_force_over_allowed_paths(iob2, with_allowed):
    # given paths (one the constraints forbid: conlleval's reading) and predicted ones
    import _naive
    from sklearn_crf._model.constraints import build_constraints, token_mask

    classes = iob2.classes_.tolist()
    masks = build_constraints("IOB2", classes)
    ys = [["B-PER", "I-PER", "O"], ["I-PER", "O", "B-PER"]]
    allowed = [[None, {"I-PER", "B-PER"}, None], None] if with_allowed else None
    explanations = (iob2.explain_prediction(TOY_NEW, ys, allowed=allowed)
                    + iob2.explain_prediction(TOY_NEW, allowed=allowed))
    checked = 0
    for ex in explanations:
        x = TOY_NEW[ex.index]
        scores, _ = iob2._state_scores([x])
        mask = None
        if allowed is not None and allowed[ex.index] is not None:
            mask = token_mask([allowed[ex.index]], classes, np.array([0, len(x)]))
        paths, total = _naive.allowed_paths(scores, iob2.transition_matrix_, masks.transitions,
                                            masks.start, masks.end, mask)
        for ent in ex.entities:
            codes = [classes.index(label) for label in ent.labels]
            expected = _naive.span_probability(paths, total, ent.start, codes)
            assert ent.probability == pytest.approx(expected, rel=1e-9, abs=1e-300)
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("allowed", [
    [None],  # one entry for two sequences
    [None, ["O", "O"]],  # two entries for three tokens
    [None, [None, "X-NEW", None]],  # an unknown label
    [None, [None, set(), None]],  # nothing allowed at a token
    "O",
])
def test_allowed_is_read_once_the_errors_of_predict(toy, allowed):
    # explanations read allowed= through the decoding problem, as predict does
    with pytest.raises((TypeError, ValueError)) as predicted:
        toy.predict(TOY_NEW, allowed=allowed)
    for call in (lambda: toy.explain_prediction(TOY_NEW, allowed=allowed),
                 lambda: toy.explain_prediction(TOY_NEW, [["O"] * 3] * 2, allowed=allowed)):
        with pytest.raises(type(predicted.value), match=re.escape(str(predicted.value))):
            call()
