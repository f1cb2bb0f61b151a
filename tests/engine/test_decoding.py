"""Decoding: n-best, constraints, forced labels, probabilities, entities.

Every kernel result is checked against brute force over all the allowed label
paths of small random CRFs (``tests/_naive.py``).
"""

import itertools

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_crf import CRFTagger, SequenceFeaturizer, _engine
from sklearn_crf._model.constraints import SCHEMES, TransitionConstraints, build_constraints
from sklearn_crf.datasets import load_conll2002

import _naive

TOL = 1e-10


def random_problem(seed, n, L, constrained=True):
    """Random continuous scores of one sequence and random constraints."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(scale=2.0, size=(n, L))
    trans = rng.normal(scale=2.0, size=(L, L))
    if not constrained:
        return scores, trans, None, None
    allowed = rng.random((L, L)) < 0.7
    start = rng.random(L) < 0.8
    end = rng.random(L) < 0.8
    mask = rng.random((n, L)) < 0.8
    return scores, trans, TransitionConstraints(allowed, start, end, None), mask


def cases():
    for seed in range(24):
        n = 1 + seed % 5
        L = 2 + seed % 3
        yield seed, n, L


def prepared(seed, n, L, constrained=True):
    scores, trans, cons, mask = random_problem(seed, n, L, constrained)
    seq_ptr = np.array([0, n])
    problem = _engine.apply_constraints(scores, trans, seq_ptr, cons, mask)
    kw = {}
    if cons is not None:
        kw = dict(allowed_trans=cons.transitions, start=cons.start, end=cons.end,
                  token_mask=mask)
    paths, total = _naive.allowed_paths(scores, trans, **kw)
    return problem, paths, total


# --------------------------------------------------------------------------
# kernels against brute force
# --------------------------------------------------------------------------


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_nbest_matches_brute_force(seed, n, L, constrained):
    problem, paths, total = prepared(seed, n, L, constrained)
    if len(paths) == 0:
        return
    K = 7
    result = _engine.nbest(problem, K, 1)
    want_paths, want_scores = _naive.ranked_paths(paths, total)
    count = int(result.counts[0])
    assert count == min(K, len(paths))
    got = result.paths[: count * n].reshape(count, n)
    np.testing.assert_array_equal(got, want_paths[:count])
    np.testing.assert_allclose(result.scores[0, :count], want_scores[:count], atol=TOL)
    assert len({tuple(p) for p in got.tolist()}) == count


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_nbest_one_is_viterbi(seed, n, L):
    problem, paths, _ = prepared(seed, n, L)
    if len(paths) == 0:
        return
    codes, best = _engine.viterbi_batch(problem.scores, problem.trans, problem.seq_ptr, 1)
    result = _engine.nbest(problem, 1, 1)
    np.testing.assert_array_equal(result.paths, codes)
    assert result.scores[0, 0] == best[0]


def test_nbest_ties_broken_by_labels_from_the_end():
    # all scores equal: every path ties; the order is that of the reversed paths
    scores = np.zeros((3, 2))
    trans = np.zeros((2, 2))
    problem = _engine.apply_constraints(scores, trans, np.array([0, 3]))
    result = _engine.nbest(problem, 8, 1)
    got = [tuple(p) for p in result.paths.reshape(8, 3).tolist()]
    assert got == sorted(got, key=lambda p: p[::-1])
    assert len(set(got)) == 8


def test_nbest_fewer_paths_than_asked():
    scores = np.zeros((2, 2))
    problem = _engine.apply_constraints(
        scores, np.zeros((2, 2)), np.array([0, 2]), token_mask=np.array([[1, 0], [1, 1]], bool)
    )
    result = _engine.nbest(problem, 5, 1)
    assert result.counts[0] == 2
    assert np.isneginf(result.scores[0, 2:]).all()


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_log_forward_backward_matches_brute_force(seed, n, L, constrained):
    problem, paths, total = prepared(seed, n, L, constrained)
    if len(paths) == 0:
        return
    fb = _engine.log_forward_backward(problem, 1)
    log_z, node, p = _naive.path_marginals(paths, total, L)
    assert abs(fb.log_z[0] - log_z) < TOL
    np.testing.assert_allclose(np.exp(fb.log_alpha + fb.log_beta), node, atol=TOL)
    # the same marginals from the package kernel with -inf scores (log-space fallback)
    z2, node2, _ = _engine.forward_backward_batch(
        problem.scores, problem.trans, problem.seq_ptr, False, 1
    )
    assert abs(z2[0] - log_z) < TOL
    np.testing.assert_allclose(node2, node, atol=TOL)
    # log p(y|x) of every allowed path, and -inf for a forbidden one
    lp = _engine.span_log_probs(
        problem, fb, np.zeros(len(paths)), np.full(len(paths), n),
        np.arange(len(paths)) * n, paths.ravel(), 1,
    )
    np.testing.assert_allclose(np.exp(lp), p, atol=TOL)
    np.testing.assert_allclose(lp, total - log_z, atol=TOL)


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_span_probabilities_match_brute_force(seed, n, L):
    problem, paths, total = prepared(seed, n, L)
    if len(paths) == 0:
        return
    fb = _engine.log_forward_backward(problem, 1)
    rng = np.random.default_rng(seed)
    for _ in range(10):
        a = int(rng.integers(n))
        m = int(rng.integers(1, n - a + 1))
        labels = rng.integers(L, size=m)
        got = _engine.span_log_probs(problem, fb, [a], [m], [0], labels, 1)[0]
        want = _naive.span_probability(paths, total, a, labels)
        assert abs(np.exp(got) - want) < TOL


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_posterior_decoding_matches_brute_force(seed, n, L):
    problem, paths, total = prepared(seed, n, L)
    if len(paths) == 0:
        return
    fb = _engine.log_forward_backward(problem, 1)
    post = _engine.posterior_problem(problem, np.exp(fb.log_alpha + fb.log_beta))
    codes, _ = _engine.viterbi_batch(post.scores, post.trans, post.seq_ptr, 1)
    np.testing.assert_array_equal(codes, _naive.posterior_path(paths, total, L))


def test_posterior_without_transition_constraints_is_tokenwise_argmax():
    scores, trans, _, mask = random_problem(3, 6, 4)
    problem = _engine.apply_constraints(scores, trans, np.array([0, 6]), None, mask)
    fb = _engine.log_forward_backward(problem, 1)
    node = np.exp(fb.log_alpha + fb.log_beta)
    post = _engine.posterior_problem(problem, node)
    codes, _ = _engine.viterbi_batch(post.scores, post.trans, post.seq_ptr, 1)
    np.testing.assert_array_equal(codes, node.argmax(axis=1))


@pytest.mark.parametrize("seed, n, L", list(cases()))
def test_constrained_viterbi_matches_brute_force(seed, n, L):
    problem, paths, total = prepared(seed, n, L)
    dead = _engine.first_dead_tokens(problem.scores, problem.trans, problem.seq_ptr)
    assert (dead[0] < 0) == (len(paths) > 0)
    if len(paths) == 0:
        return
    codes, best = _engine.viterbi_batch(problem.scores, problem.trans, problem.seq_ptr, 1)
    k = int(np.argmax(total))
    np.testing.assert_array_equal(codes, paths[k])
    assert abs(best[0] - total[k]) < TOL


def test_batches_of_sequences_match_one_at_a_time():
    rng = np.random.default_rng(5)
    lengths = [3, 0, 1, 4, 2]
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)])
    L = 3
    scores = rng.normal(size=(seq_ptr[-1], L))
    trans = rng.normal(size=(L, L))
    problem = _engine.apply_constraints(scores, trans, seq_ptr)
    for n_chunks in (1, 2):
        fb = _engine.log_forward_backward(problem, n_chunks)
        nb = _engine.nbest(problem, 3, n_chunks)
        for s, (a, b) in enumerate(zip(seq_ptr[:-1], seq_ptr[1:])):
            if a == b:
                assert fb.log_z[s] == 0.0 and nb.counts[s] == 1
                continue
            assert abs(fb.log_z[s] - _naive.log_partition(scores[a:b], trans)) < TOL
            paths, total = _naive.ranked_paths(*_naive.path_scores(scores[a:b], trans))
            got = nb.paths[a * 3:b * 3].reshape(3, b - a)
            np.testing.assert_array_equal(got, paths[:3])


def test_long_sequence_with_large_weights_stays_finite():
    rng = np.random.default_rng(0)
    n, L = 100_000, 5
    scores = rng.normal(scale=1e4, size=(n, L))
    trans = rng.normal(scale=1e4, size=(L, L))
    cons = build_constraints([(i, j) for i in range(L) for j in range(L) if i != j], range(L))
    problem = _engine.apply_constraints(scores, trans, np.array([0, n]), cons)
    fb = _engine.log_forward_backward(problem, 1)
    assert np.isfinite(fb.log_z).all()
    node = np.exp(fb.log_alpha + fb.log_beta)
    np.testing.assert_allclose(node.sum(axis=1), 1.0, atol=1e-9)
    nb = _engine.nbest(problem, 2, 1)
    lp = _engine.span_log_probs(problem, fb, [0, 0], [n, n], [0, n], nb.paths, 1)
    assert np.isfinite(lp).all() and lp[0] <= 0 and lp[1] <= lp[0]


# --------------------------------------------------------------------------
# scheme rules against seqeval's strict mode
# --------------------------------------------------------------------------


def _strict_covers_every_entity_label(labels, scheme):
    """seqeval strict mode reads every non-O label as part of an entity."""
    from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2, Entities

    classes = {"IOB1": IOB1, "IOB2": IOB2, "IOE1": IOE1, "IOE2": IOE2,
               "IOBES": IOBES, "BILOU": BILOU, "BMES": IOBES}
    if scheme == "BMES":
        labels = [label.replace("M-", "I-", 1) for label in labels]
    covered = set()
    for entity in Entities([labels], classes[scheme]).entities[0]:
        covered.update(range(entity.start, entity.end))
    return covered == {i for i, label in enumerate(labels) if label != "O"}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_scheme_rules_are_seqeval_strict_validity(scheme):
    labels = ["O"] + [f"{t}-{x}" for t in SCHEMES[scheme] if t for x in "AB"]
    cons = build_constraints(scheme, labels)
    for n in range(1, 5):
        for seq in itertools.product(range(len(labels)), repeat=n):
            ours = (cons.start[seq[0]] and cons.end[seq[-1]]
                    and all(cons.transitions[a, b] for a, b in zip(seq, seq[1:])))
            assert ours == _strict_covers_every_entity_label([labels[i] for i in seq], scheme)


# --------------------------------------------------------------------------
# CRFTagger: the public methods against brute force on a small NER model
# --------------------------------------------------------------------------



@pytest.fixture(scope="module")
def ner():
    """A CRF fitted briefly on 200 esp.train sentences (9 IOB2 labels), and
    featurized esp.testb sentences."""
    featurizer = SequenceFeaturizer()
    train = load_conll2002("train", n_sentences=200)
    test = load_conll2002("testb", n_sentences=300)
    crf = CRFTagger(c1=0.1, c2=0.1, max_iter=25, all_possible_transitions=True)
    with pytest.warns(Warning):
        crf.fit(featurizer.transform(train.sentences), train.tags)
    return crf, featurizer.transform(test.sentences), test.tags


def short_sentences(X, y, max_len=4, count=3):
    picked = [(x, t) for x, t in zip(X, y) if 2 <= len(x) <= max_len][:count]
    return [x for x, _ in picked], [t for _, t in picked]


def with_params(crf, **params):
    """A copy of the fitted tagger with decode-time parameters changed."""
    import copy

    other = copy.deepcopy(crf)
    other.set_params(**params)
    return other


def brute_force(crf, x, *, valid=None, mask=None):
    """All paths of one sentence that pass ``valid`` (labels -> bool) and the
    token ``mask``, with their scores under the tagger's weights."""
    scores, _ = crf._state_scores([x])
    trans = crf.transition_matrix_
    paths, total = _naive.allowed_paths(scores, trans, token_mask=mask)
    if valid is not None:
        labels = crf.classes_.tolist()
        keep = np.array([valid([labels[c] for c in p]) for p in paths.tolist()], dtype=bool)
        paths, total = paths[keep], total[keep]
    return paths, total


def iob2_valid(labels):
    return _strict_covers_every_entity_label(labels, "IOB2")


def test_tagger_iob2_matches_brute_force_over_valid_paths(ner):
    crf, X, y = ner
    crf = with_params(crf, transition_constraints="IOB2")
    X, y = short_sentences(X, y)
    L = len(crf.classes_)
    labels = crf.classes_.tolist()
    pred = crf.predict(X)
    nbest = crf.predict_nbest(X, n=6)
    marg = crf.predict_marginals(X, output="array")
    log_z = crf.log_partition(X)
    log_p_given = crf.log_probability(X, y)
    log_p_pred = crf.log_probability(X)
    entities = crf.predict_entities(X)
    for i, x in enumerate(X):
        paths, total = brute_force(crf, x, valid=iob2_valid)
        ranked, ranked_total = _naive.ranked_paths(paths, total)
        want_z, node, _ = _naive.path_marginals(paths, total, L)
        assert pred[i] == [labels[c] for c in ranked[0]]
        assert [p for p, _ in nbest[i]] == [[labels[c] for c in r] for r in ranked[:6]]
        np.testing.assert_allclose(
            [q for _, q in nbest[i]], np.exp(ranked_total[:6] - want_z), atol=TOL
        )
        np.testing.assert_allclose(marg[i], node, atol=TOL)
        assert abs(log_z[i] - want_z) < TOL
        gold = np.array([labels.index(t) for t in y[i]])
        hit = (paths == gold).all(axis=1)
        want = total[hit][0] - want_z if hit.any() else -np.inf
        assert log_p_given[i] == pytest.approx(want, abs=TOL)
        assert log_p_pred[i] == pytest.approx(ranked_total[0] - want_z, abs=TOL)
        for type_, a, b, prob in entities[i]:
            assert pred[i][a].endswith(type_)
            codes = [labels.index(t) for t in pred[i][a:b]]
            assert abs(prob - _naive.span_probability(paths, total, a, codes)) < TOL


def test_tagger_forced_and_partial_labels_match_brute_force(ner):
    crf, X, y = ner
    X, y = short_sentences(X, y)
    labels = crf.classes_.tolist()
    rng = np.random.default_rng(0)
    allowed, masks = [], []
    for x, t in zip(X, y):
        entries, mask = [], np.ones((len(x), len(labels)), dtype=bool)
        for k, gold in enumerate(t):
            kind = k % 3
            if kind == 0:
                entries.append(None)
            elif kind == 1:
                entries.append(gold)
                mask[k] = [lab == gold for lab in labels]
            else:
                subset = set(rng.choice(labels, 3, replace=False).tolist()) | {gold}
                entries.append(subset)
                mask[k] = [lab in subset for lab in labels]
        allowed.append(entries)
        masks.append(mask)
    pred = crf.predict(X, allowed=allowed)
    nbest = crf.predict_nbest(X, n=4, allowed=allowed)
    marg = crf.predict_marginals(X, allowed=allowed, output="array")
    log_z = crf.log_partition(X, allowed=allowed)
    for i, x in enumerate(X):
        paths, total = brute_force(crf, x, mask=masks[i])
        ranked, ranked_total = _naive.ranked_paths(paths, total)
        want_z, node, _ = _naive.path_marginals(paths, total, len(labels))
        assert pred[i] == [labels[c] for c in ranked[0]]
        assert [p for p, _ in nbest[i]] == [[labels[c] for c in r] for r in ranked[:4]]
        np.testing.assert_allclose(
            [q for _, q in nbest[i]], np.exp(ranked_total[:4] - want_z), atol=TOL
        )
        np.testing.assert_allclose(marg[i], node, atol=TOL)
        assert abs(log_z[i] - want_z) < TOL


def test_posterior_decoder_matches_brute_force(ner):
    crf, X, y = ner
    X, _ = short_sentences(X, y)
    L = len(crf.classes_)
    labels = crf.classes_.tolist()
    post = with_params(crf, decoder="posterior")
    post_iob2 = with_params(crf, decoder="posterior", transition_constraints="IOB2")
    free = post.predict(X)
    constrained = post_iob2.predict(X)
    for i, x in enumerate(X):
        marg = crf.predict_marginals([x], output="array")[0]
        assert free[i] == [labels[c] for c in marg.argmax(axis=1)]
        paths, total = brute_force(crf, x, valid=iob2_valid)
        assert constrained[i] == [labels[c] for c in _naive.posterior_path(paths, total, L)]


def test_forcing_every_token_gives_y_with_probability_one(ner):
    crf, X, y = ner
    crf = with_params(crf, transition_constraints="IOB2")
    X, y = X[:20], y[:20]
    assert crf.predict(X, allowed=y) == y
    nbest = crf.predict_nbest(X, n=3, allowed=y)
    assert [[p for p, _ in seq] for seq in nbest] == [[t] for t in y]
    np.testing.assert_allclose([q for seq in nbest for _, q in seq], 1.0, atol=TOL)
    np.testing.assert_allclose(crf.log_probability(X, y, allowed=y), 0.0, atol=TOL)
    for m, t in zip(crf.predict_marginals(X, allowed=y, output="array"), y):
        np.testing.assert_allclose(m, np.array(
            [[lab == g for lab in crf.classes_] for g in t], dtype=float), atol=TOL)
    for ents in crf.predict_entities(X, allowed=y):
        for *_, prob in ents:
            assert abs(prob - 1.0) < TOL


def test_forcing_no_token_gives_the_unconstrained_results(ner):
    crf, X, y = ner
    X = X[:30]
    free = [None] * len(X)
    free_tokens = [[None] * len(x) for x in X]
    assert crf.predict(X, allowed=free) == crf.predict(X)
    assert crf.predict(X, allowed=free_tokens) == crf.predict(X)
    np.testing.assert_allclose(
        np.concatenate(crf.predict_marginals(X, allowed=free_tokens, output="array")),
        np.concatenate(crf.predict_marginals(X, output="array")), atol=TOL,
    )
    np.testing.assert_allclose(
        crf.log_partition(X, allowed=free_tokens), crf.log_partition(X), atol=TOL
    )
    assert crf.predict_nbest(X, n=3, allowed=free_tokens) == crf.predict_nbest(X, n=3)


def test_nbest_of_one_is_predict(ner):
    crf, X, _ = ner
    for params in ({}, {"transition_constraints": "IOB2"}):
        tagger = with_params(crf, **params)
        nbest = tagger.predict_nbest(X[:100], n=1)
        assert [seq[0][0] for seq in nbest] == tagger.predict(X[:100])


def test_predict_marginals_dict_and_array_agree(ner):
    crf, X, _ = ner
    dicts = crf.predict_marginals(X[:10])
    arrays = crf.predict_marginals(X[:10], output="array")
    for d, a in zip(dicts, arrays):
        assert a.shape == (len(d), len(crf.classes_))
        np.testing.assert_array_equal(a, [[row[lab] for lab in crf.classes_] for row in d])


@pytest.mark.parametrize("scheme", ["IOB2", "IOB1"])
def test_constrained_predictions_on_testb_are_valid_in_strict_mode(ner, scheme):
    from seqeval.scheme import IOB1, IOB2, Entities

    crf, X, _ = ner
    tagger = with_params(crf, transition_constraints=scheme)
    for decoder in ("viterbi", "posterior"):
        tagger.set_params(decoder=decoder)
        pred = tagger.predict(X)
        for labels in pred:
            assert _strict_covers_every_entity_label(labels, scheme)
        for labels, *_ in (p for seq in tagger.predict_nbest(X[:50], n=5) for p in seq):
            assert _strict_covers_every_entity_label(labels, scheme)
        # the entity spans are those seqeval reads in strict mode
        cls = {"IOB1": IOB1, "IOB2": IOB2}[scheme]
        got = [[(t, a, b) for t, a, b, _ in seq] for seq in tagger.predict_entities(X)]
        want = [[(e.tag, e.start, e.end) for e in Entities([p], cls).entities[0]] for p in pred]
        assert got == want


def test_unconstrained_entities_use_the_default_reading(ner):
    from sklearn_crf.metrics import get_entities

    crf, X, _ = ner
    pred = crf.predict(X[:100])
    got = [[(t, a, b) for t, a, b, _ in seq] for seq in crf.predict_entities(X[:100])]
    assert got == [get_entities(p) for p in pred]


def test_transition_pairs_constrain_predictions(ner):
    crf, X, _ = ner
    pairs = [("O", "O"), ("O", "B-PER"), ("B-PER", "I-PER"), ("I-PER", "O"),
             ("B-PER", "O"), ("I-PER", "I-PER")]
    tagger = with_params(crf, transition_constraints=pairs)
    for labels in tagger.predict(X[:100]):
        assert all(pair in pairs for pair in zip(labels, labels[1:]))
    with pytest.raises(ValueError, match="sequence 0 has no label path"):
        tagger.predict([X[0]], allowed=[["B-LOC"] * len(X[0])])


def test_bmes_entities_are_read_as_iobes():
    X = [[{"w": w} for w in "a b c d e".split()]] * 3
    y = [["B-X", "M-X", "E-X", "S-Y", "O"]] * 3
    crf = CRFTagger(c2=0.01, transition_constraints="BMES").fit(X, y)
    assert crf.predict(X[:1]) == y[:1]
    ents = crf.predict_entities(X[:1])[0]
    assert [e[:3] for e in ents] == [("X", 0, 3), ("Y", 3, 4)]


def test_long_sequence_with_large_weights_is_finite(ner):
    import copy

    crf, X, _ = ner
    crf = copy.deepcopy(crf)
    crf.set_params(transition_constraints="IOB2")
    crf.coef_ = crf.coef_ * (1e4 / np.abs(crf.coef_).max())
    keep = ("bias", "word.lower()", "word.istitle()", "-1:word.lower()")
    x = [{k: v for k, v in tok.items() if k in keep} for seq in X for tok in seq]
    x = (x * (100_000 // len(x) + 1))[:100_000]
    log_z = crf.log_partition([x])
    log_p = crf.log_probability([x])
    assert np.isfinite(log_z).all() and np.isfinite(log_p).all() and log_p[0] <= 0
    nbest = crf.predict_nbest([x], n=2)[0]
    assert all(0.0 <= p <= 1.0 for _, p in nbest)
    for *_, prob in crf.predict_entities([x])[0]:
        assert 0.0 <= prob <= 1.0
    m = crf.predict_marginals([x], output="array")[0]
    assert np.isfinite(m).all()


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


def test_labels_breaking_the_scheme_raise_at_fit():
    X = [[{"w": "a"}, {"w": "b"}]]
    crf = CRFTagger(transition_constraints="IOB2")
    with pytest.raises(ValueError, match=r"label 'PER' does not follow the IOB2 scheme"):
        crf.fit(X, [["PER", "O"]])
    assert not hasattr(crf, "coef_")
    with pytest.raises(ValueError, match=r"label 'E-PER' does not follow the IOB2"):
        crf.fit(X, [["B-PER", "E-PER"]])


def test_constraint_pairs_with_unknown_labels_raise_at_fit():
    X = [[{"w": "a"}, {"w": "b"}]]
    crf = CRFTagger(transition_constraints=[("O", "B-PER"), ("B-PER", "X")])
    with pytest.raises(ValueError, match=r"names the label 'X'"):
        crf.fit(X, [["B-PER", "O"]])


def test_failed_refit_leaves_the_model_as_it_was(ner):
    import copy

    crf, X, y = ner
    crf = copy.deepcopy(crf)
    coef = crf.coef_.copy()
    crf.set_params(transition_constraints="IOBES")
    with pytest.raises(ValueError):
        crf.fit(X[:5], [["PER"] * len(s) for s in X[:5]])
    np.testing.assert_array_equal(crf.coef_, coef)


@pytest.mark.parametrize(
    "allowed, error, match",
    [
        ([["B-XYZ", None]], ValueError, r"allowed\[0\]\[0\] names the label 'B-XYZ'"),
        ([[None]], ValueError, r"allowed\[0\] has 1 entries but sequence 0 has 2 tokens"),
        ([[None, None], [None]], ValueError, "allowed has 2 entries but X has 1"),
        ([[None, set()]], ValueError, "sequence 0 has no label path .* at token 1"),
        ("O", TypeError, "allowed must be None or a list"),
        ([5], TypeError, r"allowed\[0\] must be None or a list"),
    ],
)
def test_bad_allowed_raises(ner, allowed, error, match):
    crf, X, _ = ner
    with pytest.raises(error, match=match):
        crf.predict([X[0][:2]], allowed=allowed)


def test_infeasible_forcing_names_sequence_and_token(ner):
    crf, X, _ = ner
    tagger = with_params(crf, transition_constraints="IOB2")
    x = X[0][:3]
    with pytest.raises(ValueError, match="sequence 1 has no label path .* at token 2"):
        tagger.predict_marginals([x, x], allowed=[None, ["O", "O", "I-PER"]])
    with pytest.raises(ValueError, match="sequence 0 .* at token 0"):
        tagger.log_partition([x], allowed=[["I-PER", None, None]])


def test_bad_arguments_raise(ner):
    crf, X, y = ner
    with pytest.raises(ValueError, match="n must be a positive integer"):
        crf.predict_nbest(X[:1], n=0)
    with pytest.raises(ValueError, match="output must be 'dict' or 'array'"):
        crf.predict_marginals(X[:1], output="list")
    with pytest.raises(ValueError, match=r"y\[0\]\[1\] is 'B-XYZ'"):
        crf.log_probability([X[0][:2]], [["O", "B-XYZ"]])
    with pytest.raises(ValueError, match=r"y\[0\] must be a sequence of 2 labels"):
        crf.log_probability([X[0][:2]], [["O"]])
    with pytest.raises(ValueError, match="not a scheme name"):
        with_params(crf, transition_constraints="IOB3").predict(X[:1])
    with pytest.raises(Exception, match="transition_constraints"):
        clone(crf).set_params(transition_constraints="IOB3").fit(X[:2], y[:2])


def test_predict_entities_needs_string_labels():
    X = [[{"w": "a"}, {"w": "b"}]]
    crf = CRFTagger().fit(X, [[1, 0]])
    with pytest.raises(TypeError, match="predict_entities needs string labels"):
        crf.predict_entities(X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_transition_constraints_do_not_change_training_without_constrain_training(toy_ner):
    X, y = toy_ner
    free = CRFTagger(c2=0.1, max_iter=20).fit(X, y)
    constrained = CRFTagger(
        c2=0.1, max_iter=20, transition_constraints="IOB2", constrain_training=False
    ).fit(X, y)
    np.testing.assert_array_equal(free.coef_, constrained.coef_)


@pytest.mark.parametrize(
    "constraints", ["IOB2", [("B-PER", "O"), ("O", "O"), ("O", "B-PER")]]
)
def test_decoding_parameters_survive_save_and_load(tmp_path, constraints):
    from sklearn_crf import load_model, save_model

    X = [[{"w": "ann"}, {"w": "runs"}], [{"w": "bob"}, {"w": "sleeps"}]]
    y = [["B-PER", "O"], ["B-PER", "O"]]
    crf = CRFTagger(c2=0.1, transition_constraints=constraints, decoder="posterior").fit(X, y)
    save_model(crf, tmp_path / "model.zip")
    loaded = load_model(tmp_path / "model.zip")
    assert loaded.decoder == "posterior"
    assert loaded.predict(X) == crf.predict(X)
    assert loaded.predict_nbest(X, n=3) == crf.predict_nbest(X, n=3)
