"""Dense token features (per-token float arrays): objective, training, inference.

The dense part of the model is a weight per (dimension, label), its state
scores ``dense @ W`` and its gradient ``denseᵀ (expected − observed)``; these
tests check it against brute force, finite differences, the same values given
as ``{"v<j>": value}`` dicts, and across every input form and method.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf._model.layout import build_layout
from sklearn_crf._training.objective import CRFObjective
from sklearn_crf._tagger import CRFTagger
from sklearn_crf._features.validation import encode_labels
from sklearn_crf._features.vectorizer import SequenceVectorizer

import _naive

LABELS = ["A", "B", "C"]


def dense_data(seed, n_seq=8, max_len=4, n_dense=3, dtype=np.float64, with_dicts=False,
               n_labels=3):
    """Random sequences: arrays (n, n_dense), or (feature dicts, array) tuples."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_seq):
        n = int(rng.integers(1, max_len + 1))
        arr = rng.normal(size=(n, n_dense)).astype(dtype)
        labels = [LABELS[int(k)] for k in rng.integers(n_labels, size=n)]
        if with_dicts:
            tokens = [{"w": f"w{rng.integers(4)}", "x": float(rng.normal())} for _ in range(n)]
            X.append((tokens, arr))
        else:
            X.append(arr)
        y.append(labels)
    return X, y


def as_dicts(X):
    """The same dense values as {"v<j>": value} feature dicts (with the tokens' own
    features first, for (tokens, array) sequences)."""
    out = []
    for seq in X:
        tokens, arr = seq if isinstance(seq, tuple) else ([{}] * len(seq), seq)
        out.append([{**tok, **{f"v{j}": float(v) for j, v in enumerate(row)}}
                    for tok, row in zip(tokens, np.asarray(arr, dtype=np.float64))])
    return out


def problem(X, y, **layout_kwargs):
    corpus = SequenceVectorizer().fit_encode(X)
    classes, labels = encode_labels(y, corpus.seq_ptr)
    kwargs = dict(min_freq=0, all_possible_states=False, all_possible_transitions=True)
    kwargs.update(layout_kwargs)
    layout = build_layout(corpus, labels, len(classes), **kwargs)
    return corpus, layout, labels


def converged(**params):
    return CRFTagger(max_iter=10_000, tol=0.0, epsilon=1e-12, n_jobs=1, **params)


# --- layout and objective ---------------------------------------------------------


def test_layout_gives_every_dense_dimension_a_weight_per_label():
    X, y = dense_data(0, n_dense=4, with_dicts=True)
    corpus, layout, _ = problem(X, y, min_freq=1e9)  # prunes every sparse pair
    assert layout.n_dense == 4
    assert layout.n_state == 0
    assert layout.n_params == layout.n_trans + 4 * 3
    w = np.arange(layout.n_params, dtype=np.float64)
    np.testing.assert_array_equal(
        layout.dense_matrix(w).ravel(), w[layout.dense_start:]
    )
    assert layout.transition_weights(w).shape == (layout.n_trans,)


@pytest.mark.parametrize("with_dicts", [False, True], ids=["dense", "mixed"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("route", ["rows", "distinct rows"])
def test_loss_and_gradient_match_brute_force(route, with_dicts, dtype):
    """Both routes of the dense part: products per block of rows (random rows),
    and over the distinct rows (rows that repeat, as word vectors do)."""
    if route == "rows":
        seed, zero = 1, 2
        X, y = dense_data(seed, n_seq=7, dtype=dtype, with_dicts=with_dicts)
    else:
        seed, zero = 23, 3
        X, y = repeated_data(seed, dtype=dtype, with_dicts=with_dicts)
    corpus, layout, labels = problem(X, y)
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    weights[zero] = 0.0
    w = rng.normal(size=layout.n_params)
    for block_tokens in (1, 3, 5, 4096):
        for n_chunks in (1, 2):
            obj = CRFObjective(corpus, layout, labels, weights, c2=0.3, n_chunks=n_chunks,
                               block_tokens=block_tokens)
            assert (obj._distinct is not None) == (route == "distinct rows")
            f, g = obj(w)
            assert f == pytest.approx(
                _naive.objective(w, layout, corpus, labels, weights, 0.0, 0.3), rel=1e-10
            )
            np.testing.assert_allclose(
                g, _naive.gradient(w, layout, corpus, labels, weights, 0.3), rtol=1e-9,
                atol=1e-10,
            )


def test_full_objective_matches_central_finite_differences():
    """NLL + c1·|w|₁ + c2·‖w‖² of a mixed model: its gradient (away from w = 0)."""
    X, y = dense_data(2, n_seq=6, with_dicts=True)
    corpus, layout, labels = problem(X, y)
    rng = np.random.default_rng(2)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    c1, c2 = 0.2, 0.4
    obj = CRFObjective(corpus, layout, labels, weights, c2=c2, n_chunks=1)

    def full(w):
        return obj(w)[0] + c1 * np.abs(w).sum()

    w = rng.normal(size=layout.n_params)
    w[np.abs(w) < 0.05] = 0.5  # away from the kink of |w|
    g = obj(w)[1] + c1 * np.sign(w)
    eps = 1e-6
    dense_dirs = list(np.eye(len(w))[layout.dense_start:])
    random_dirs = [d / np.linalg.norm(d) for d in rng.normal(size=(4, len(w)))]
    for d in dense_dirs + random_dirs:
        num = (full(w + eps * d) - full(w - eps * d)) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("block_tokens", [2, 7, 4096])
@pytest.mark.parametrize("route", ["rows", "distinct rows"])
def test_dense_objective_is_bitwise_identical_for_any_thread_count(route, block_tokens):
    """Both routes of the dense part: products per block of rows (random rows),
    and over the distinct rows (rows that repeat, as word vectors do)."""
    if route == "rows":
        seed, (X, y) = 3, dense_data(3, n_seq=40, max_len=8, n_dense=5, with_dicts=True)
    else:
        seed, (X, y) = 24, repeated_data(24, n_seq=60, max_len=8, with_dicts=True)
    corpus, layout, labels = problem(X, y)
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    results = []
    for n_chunks in (1, 2, 3):
        obj = CRFObjective(corpus, layout, labels, weights, c2=0.1, n_chunks=n_chunks,
                           block_tokens=block_tokens)
        assert (obj._distinct is not None) == (route == "distinct rows")
        results.append(obj(w))
    for f, g in results[1:]:
        assert f == results[0][0]
        np.testing.assert_array_equal(g, results[0][1])


def test_float32_input_is_not_copied_and_gives_the_float64_objective():
    """A float32 corpus stays float32 and its objective is bitwise that of its
    float64 copy (each block is converted exactly before its product)."""
    X32, y = dense_data(4, n_seq=12, dtype=np.float32)
    X64 = [a.astype(np.float64) for a in X32]
    c32, layout, labels = problem(X32, y)
    c64, _, _ = problem(X64, y)
    assert c32.dense.dtype == np.float32
    w = np.random.default_rng(4).normal(size=layout.n_params)
    obj32 = CRFObjective(c32, layout, labels, np.ones(len(y)), c2=0.1, n_chunks=2,
                         block_tokens=5)
    obj64 = CRFObjective(c64, layout, labels, np.ones(len(y)), c2=0.1, n_chunks=2,
                         block_tokens=5)
    assert obj32._dense is c32.dense  # the corpus's own array, no float64 copy
    f32, g32 = obj32(w)
    f64, g64 = obj64(w)
    assert f32 == f64
    np.testing.assert_array_equal(g32, g64)


def test_constrained_objective_with_dense_matches_brute_force():
    from sklearn_crf._model.constraints import build_constraints

    X, y = dense_data(5, n_seq=6, with_dicts=True)
    y = [["A"] + ["B"] * (len(s) - 1) for s in y]  # allowed under A -> B, B -> B
    corpus, layout, labels = problem(X, y)
    masks = build_constraints({("A", "B"), ("B", "B")}, ["A", "B"])
    w = np.random.default_rng(5).normal(size=layout.n_params)
    obj = CRFObjective(corpus, layout, labels, np.ones(len(y)), c2=0.0, n_chunks=2,
                       constraints=masks)
    f, g = obj(w)
    scores = _naive.all_state_scores(w, layout, corpus)
    trans = layout.transition_matrix(w)
    ref = 0.0
    for s in range(corpus.n_sequences):
        a, b = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        paths, total = _naive.allowed_paths(scores[a:b], trans, masks.transitions,
                                            masks.start, masks.end)
        gold = labels[a:b]
        ref += np.logaddexp.reduce(total) - (
            scores[np.arange(a, b), gold].sum() + trans[gold[:-1], gold[1:]].sum())
    assert f == pytest.approx(ref, rel=1e-10)
    eps = 1e-6
    for d in np.eye(len(w))[layout.dense_start:]:
        num = (obj(w + eps * d)[0] - obj(w - eps * d)[0]) / (2 * eps)
        assert num == pytest.approx(g @ d, rel=1e-6, abs=1e-7)


# --- the tagger ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_model():
    X, y = dense_data(6, n_seq=20, with_dicts=True)
    return CRFTagger(c2=0.1, n_jobs=1).fit(X, y), X, y


def _brute_scores(crf, x):
    corpus = crf.vectorizer_.encode([x])
    layout = crf.layout_
    return _naive.all_state_scores(crf.coef_, layout, corpus), crf.transition_matrix_


def test_inference_matches_brute_force(mixed_model):
    crf, X, _ = mixed_model
    marg = crf.predict_marginals(X[:5], output="array")
    log_z = crf.log_partition(X[:5])
    pred = crf.predict(X[:5])
    classes = crf.classes_.tolist()
    for s in range(5):
        scores, trans = _brute_scores(crf, X[s])
        node, _ = _naive.marginals(scores, trans)
        np.testing.assert_allclose(marg[s], node, rtol=0, atol=1e-10)
        assert log_z[s] == pytest.approx(_naive.log_partition(scores, trans), abs=1e-10)
        path, _ = _naive.best_path(scores, trans)
        assert pred[s] == [classes[k] for k in path]


def test_fitted_attributes_describe_the_dense_weights(mixed_model):
    crf, X, _ = mixed_model
    assert crf.n_dense_features_ == 3
    assert crf.dense_coef_.shape == (3, len(crf.classes_))
    assert np.shares_memory(crf.dense_coef_, crf.coef_)
    np.testing.assert_array_equal(
        crf.dense_coef_.ravel(), crf.coef_[crf.layout_.dense_start:]
    )


def test_every_input_form_gives_the_same_predictions(mixed_model):
    crf, X, _ = mixed_model
    corpus = crf.vectorizer_.encode(X)
    ref = crf.predict_marginals(X, output="array")
    for form in (corpus, SequenceVectorizer().fit(X).encode(X)):
        got = crf.predict_marginals(form, output="array")
        for a, b in zip(ref, got):
            np.testing.assert_array_equal(a, b)
    dense_only = CRFTagger(c2=0.1).fit([a for _, a in X], _labels(X, crf))
    arrays = [a for _, a in X]
    np.testing.assert_array_equal(
        dense_only.log_partition(arrays),
        dense_only.log_partition(dense_only.vectorizer_.encode(arrays)),
    )


def _labels(X, crf):
    return crf.predict(X)


def test_every_inference_method_accepts_arrays():
    X, y = dense_data(7, n_seq=20)
    crf = CRFTagger(c2=0.1, transition_constraints={("A", "B"), ("B", "C"), ("C", "A"),
                                                    ("A", "A"), ("B", "B"), ("C", "C")})
    crf.fit(X, y)
    pred = crf.predict(X)
    nbest = crf.predict_nbest(X, n=2)
    assert [paths[0][0] for paths in nbest] == pred
    log_p = crf.log_probability(X, pred)
    np.testing.assert_allclose(np.exp(log_p), [paths[0][1] for paths in nbest], rtol=1e-9)
    assert crf.score(X, y) == pytest.approx(
        np.mean([a == b for p, t in zip(pred, y) for a, b in zip(p, t)]))
    ents = crf.predict_entities(X[:3])
    assert len(ents) == 3


def test_predict_refuses_another_number_of_dense_features(mixed_model):
    crf, X, _ = mixed_model
    fitted = dict(crf.__dict__)
    wider = [(tokens, np.hstack([arr, arr])) for tokens, arr in X[:2]]
    with pytest.raises(ValueError, match="3"):
        crf.predict(wider)
    with pytest.raises(ValueError, match="dense features"):
        crf.predict([tokens for tokens, _ in X[:2]])
    assert crf.__dict__.keys() == fitted.keys()


@pytest.mark.parametrize("with_dicts", [False, True], ids=["dense", "mixed"])
@pytest.mark.parametrize("solver", ["ap", "pa", "arow", "l2sgd"])
def test_online_solvers_give_the_weights_of_the_equivalent_dicts(solver, with_dicts):
    """The online solvers see dimension j as the valued attribute "v<j>": the
    same updates in the same arithmetic order, so the dict fit's weights, bit
    for bit."""
    X, y = dense_data(8, n_seq=15, with_dicts=with_dicts)
    X = [(s[0], np.abs(s[1]) + 0.05) if with_dicts else np.abs(s) + 0.05 for s in X]
    params = dict(solver=solver, max_iter=5)
    if solver == "l2sgd":
        params.update(c2=0.1, calibration_samples=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = CRFTagger(**params).fit(X, y)
        dicts = CRFTagger(**params).fit(as_dicts(X), y)
    classes = dicts.classes_.tolist()
    state = dicts.state_features_
    ours = np.concatenate([
        dense.dense_coef_.ravel(), dense.transition_matrix_.ravel(),
        list(dense.state_features_.values())])
    theirs = np.concatenate([
        [state.get((f"v{j}", label), 0.0) for j in range(3) for label in classes],
        dicts.transition_matrix_.ravel(),
        [state[key] for key in dense.state_features_]])
    np.testing.assert_array_equal(ours, theirs)  # bit for bit
    np.testing.assert_array_equal(dense.loss_curve_, dicts.loss_curve_)
    assert dense.predict(X) == dicts.predict(as_dicts(X))


def test_c1_makes_dense_weights_exactly_zero():
    X, y = dense_data(9, n_seq=15, n_dense=6)
    crf = CRFTagger(c1=50.0, c2=0.0).fit(X, y)
    assert np.all(crf.dense_coef_ == 0.0)
    loose = CRFTagger(c1=0.01, c2=0.0).fit(X, y)
    assert np.count_nonzero(loose.dense_coef_) > 0


def test_sample_weight_two_is_the_sequence_twice():
    X, y = dense_data(10, n_seq=8)
    weight = np.ones(len(X))
    weight[3] = 2.0
    a = converged(c2=0.1).fit(X, y, sample_weight=weight)
    b = converged(c2=0.1).fit(X + [X[3]], y + [y[3]])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)


def test_warm_start_keeps_the_dense_weights():
    X, y = dense_data(11, n_seq=10)
    crf = converged(c2=0.1, warm_start=True).fit(X, y)
    first = crf.coef_.copy()
    crf.set_params(epsilon=1e-4).fit(X, y)
    assert crf.n_iter_ == 0  # started at the optimum: the epsilon test stops at once
    np.testing.assert_array_equal(crf.coef_, first)
    assert CRFTagger(c2=0.1, epsilon=1e-4).fit(X, y).n_iter_ > 0


def test_early_stopping_on_dense_sequences_and_on_an_encoded_corpus():
    X, y = dense_data(12, n_seq=30, with_dicts=True)
    a = CRFTagger(c2=0.1, early_stopping=True, random_state=0, n_iter_no_change=2)
    a.fit(X, y)
    corpus = SequenceVectorizer().fit_encode(X)
    b = CRFTagger(c2=0.1, early_stopping=True, random_state=0, n_iter_no_change=2)
    b.fit(corpus, y)
    assert b.vectorizer_ is corpus.vectorizer
    assert a.best_iteration_ == b.best_iteration_
    np.testing.assert_allclose(a.validation_scores_, b.validation_scores_, rtol=1e-12)
    arrays = [arr for _, arr in X]
    d = CRFTagger(c2=0.1, early_stopping=True, random_state=0, n_iter_no_change=2)
    assert d.fit(arrays, y).best_iteration_ >= 1
    c = CRFTagger(c2=0.1).fit(X[:20], y[:20], X_val=X[20:], y_val=y[20:])
    assert c.validation_scores_.shape == (c.n_iter_,)
    with pytest.raises(ValueError, match="dense"):
        CRFTagger(c2=0.1).fit(X[:20], y[:20], X_val=[t for t, _ in X[20:]],
                              y_val=y[20:])


def test_constrained_training_with_dense_features():
    X, y = dense_data(14, n_seq=12)
    y = [["A"] + ["B"] * (len(s) - 1) for s in y]
    pairs = {("A", "B"), ("B", "B")}
    crf = CRFTagger(c2=0.1, transition_constraints=pairs, constrain_training=True).fit(X, y)
    assert np.isfinite(crf.loss_)
    assert all(p[0] == "A" and set(p[1:]) <= {"B"} for p in crf.predict(X))


def test_encoded_corpus_without_vectorizer_is_refused():
    from dataclasses import replace

    X, y = dense_data(15)
    corpus = replace(SequenceVectorizer().fit_encode(X), vectorizer=None)
    with pytest.raises(ValueError, match="without a vectorizer"):
        CRFTagger().fit(corpus, y)


def test_pickle_round_trip_of_a_dense_model(mixed_model):
    crf, X, _ = mixed_model
    loaded = pickle.loads(pickle.dumps(crf))
    np.testing.assert_array_equal(loaded.coef_, crf.coef_)
    assert loaded.predict(X) == crf.predict(X)
    assert loaded.n_dense_features_ == 3


# --- the same model as the dict route ------------------------------------------------


@pytest.mark.parametrize("with_dicts", [False, True], ids=["dense", "mixed"])
def test_same_weights_as_the_equivalent_dict_fit(with_dicts):
    """Dense arrays and the same values as {"v<j>": value} dicts (every dimension
    seen with every label, with a positive sum) give the same weights at full
    precision."""
    X, y = dense_data(16, n_seq=25, n_dense=4, with_dicts=with_dicts)
    # positive values: CRFsuite drops a (attribute, label) pair whose values sum
    # to a negative number (its min_freq rule); dense dimensions are never dropped
    X = [(s[0], np.abs(s[1]) + 0.05) if with_dicts else np.abs(s) + 0.05 for s in X]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the precision limit
        dense = converged(c2=0.1, c1=0.0).fit(X, y)
        dicts = converged(c2=0.1, c1=0.0).fit(as_dicts(X), y)
    assert dense.layout_.n_params == dicts.layout_.n_params
    classes = dicts.classes_.tolist()
    state, trans = dicts.state_features_, dicts.transition_features_
    assert dense.transition_features_.keys() == trans.keys()
    ours = [dense.dense_coef_.ravel(), list(dense.transition_features_.values()),
            list(dense.state_features_.values())]  # the mixed model's dict part
    theirs = [[state[(f"v{j}", label)] for j in range(4) for label in classes],
              [trans[key] for key in dense.transition_features_],
              [state[key] for key in dense.state_features_]]
    ours, theirs = np.concatenate(ours), np.concatenate(theirs)
    assert len(ours) == len(theirs) == dicts.layout_.n_params
    # normwise relative: L-BFGS-B stops within ~1e-5 of the optimum's gradient
    assert np.max(np.abs(ours - theirs)) <= 1e-6 * np.max(np.abs(theirs))
    assert dense.loss_ == pytest.approx(dicts.loss_, rel=1e-10)


def test_a_layout_pickled_before_the_dense_part_reads_as_n_dense_0():
    X = [[{"w": "a"}, {"w": "b"}], [{"w": "b"}]]
    y = [["A", "B"], ["B"]]
    crf = CRFTagger(c2=0.1).fit(X, y)
    old = pickle.loads(pickle.dumps(crf))
    del old.layout_.__dict__["n_dense"]  # as unpickled from a version without it
    old = pickle.loads(pickle.dumps(old))
    assert "n_dense" not in old.layout_.__dict__
    assert old.n_dense_features_ == 0 and old.dense_coef_.shape == (0, 2)
    assert old.predict(X) == crf.predict(X)
    np.testing.assert_array_equal(old.transition_matrix_, crf.transition_matrix_)


def test_validation_scorer_on_dense_sequences():
    X, y = dense_data(17, n_seq=30)
    crf = CRFTagger(c2=0.1, validation_scoring="flat_accuracy", max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf.fit(X[:20], y[:20], X_val=X[20:], y_val=y[20:])
    # the last iteration's weights are the fitted ones: its score is the tagger's
    assert crf.validation_scores_[-1] == pytest.approx(crf.score(X[20:], y[20:]))


def test_from_weights_of_tagger_weights_is_the_same_dense_tagger(mixed_model):
    from sklearn_crf._io.crfsuite import tagger_weights

    crf, X, _ = mixed_model
    weights = tagger_weights(crf, "a test")
    assert weights.dense_coef.shape == (3, len(crf.classes_))
    back = CRFTagger.from_weights(weights, c2=0.1)
    np.testing.assert_array_equal(back.dense_coef_, crf.dense_coef_)
    np.testing.assert_array_equal(back.log_partition(X), crf.log_partition(X))
    with pytest.raises(ValueError, match=r"dense_coef must have shape \(n_dense, 3\)"):
        CRFTagger.from_weights(weights._replace(dense_coef=np.zeros((3, 2))))


# --- distinct rows (word vectors repeat) -----------------------------------------------


def repeated_data(seed, n_seq=30, max_len=6, n_dense=4, n_words=5, dtype=np.float64,
                  with_dicts=False):
    """Sequences whose dense rows are the vectors of a few "words" (so most rows
    repeat, as word vectors do); the labels depend on the words a little."""
    rng = np.random.default_rng(seed)
    table = np.abs(rng.normal(size=(n_words, n_dense))).astype(dtype)
    table[0] = 0.0
    X, y = [], []
    for _ in range(n_seq):
        n = int(rng.integers(1, max_len + 1))
        words = rng.integers(n_words, size=n)
        arr = table[words]
        labels = [LABELS[int(k) % 3] if rng.random() < 0.7 else LABELS[int(rng.integers(3))]
                  for k in words]
        if with_dicts:
            X.append(([{"w": f"w{k}", "x": float(rng.normal())} for k in words], arr))
        else:
            X.append(arr)
        y.append(labels)
    return X, y


def _readonly(array):
    array = array.view()
    array.flags.writeable = False  # as distinct_rows passes it (one specialization)
    return array


def _naive_distinct_rows(bits):
    """Row ids numbered in order of first occurrence, and the first rows, by a dict
    of the rows' bytes."""
    seen, row_id, first = {}, [], []
    for t, row in enumerate(bits):
        key = row.tobytes()
        if key not in seen:
            seen[key] = len(first)
            first.append(t)
        row_id.append(seen[key])
    return np.array(row_id, dtype=np.int32), np.array(first, dtype=np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distinct_rows_hashed_matches_a_dict_of_the_rows(dtype):
    from sklearn_crf._engine.dense import distinct_rows_hashed

    rng = np.random.default_rng(20)
    table = rng.normal(size=(40, 7)).astype(dtype)
    table[1] = -0.0  # a different row from +0.0 (other bits)
    table[2] = 0.0
    rows = table[rng.integers(40, size=500)]
    bits = _readonly(rows.view(np.uint32))
    want_id, want_first = _naive_distinct_rows(bits)
    for max_distinct in (len(want_first), len(want_first) + 1, 10_000):
        row_id, first = distinct_rows_hashed(bits, max_distinct)
        np.testing.assert_array_equal(row_id, want_id)
        np.testing.assert_array_equal(first, want_first)
        np.testing.assert_array_equal(rows[first][row_id], rows)
    row_id, first = distinct_rows_hashed(bits, len(want_first) - 1)  # too many
    assert row_id.shape == first.shape == (0,)
    # rows that differ in one word only, and no repeats at all
    rows = np.zeros((300, 5), dtype=np.uint32)
    rows[np.arange(300), np.arange(300) % 5] = np.arange(300) // 5
    for bits in (rows, np.ascontiguousarray(rows[:, :1]), np.zeros((3, 0), np.uint32)):
        bits = _readonly(bits)
        row_id, first = distinct_rows_hashed(bits, 10_000)
        want_id, want_first = _naive_distinct_rows(bits)
        np.testing.assert_array_equal(row_id, want_id)
        np.testing.assert_array_equal(first, want_first)


def test_distinct_scores_and_counts_match_numpy():
    from sklearn_crf._engine.dense import add_distinct_counts, add_distinct_scores

    rng = np.random.default_rng(21)
    row_id = rng.integers(6, size=50).astype(np.int32)
    distinct_scores = rng.normal(size=(6, 4))
    out = rng.normal(size=(50, 4))
    want = out.copy()
    want[10:30] += distinct_scores[row_id[10:30]]
    add_distinct_scores(distinct_scores, row_id, 10, 30, out)
    np.testing.assert_array_equal(out, want)
    node = rng.normal(size=(50, 4))
    sums = rng.normal(size=(6, 4))
    want = sums.copy()
    for t in range(5, 45):  # token order
        want[row_id[t]] += node[t]
    add_distinct_counts(node, row_id, 5, 45, sums)
    np.testing.assert_array_equal(sums, want)


def test_distinct_rows_is_none_when_rows_rarely_repeat():
    from sklearn_crf._engine.dense import distinct_rows

    rng = np.random.default_rng(22)
    table = rng.normal(size=(10, 3)).astype(np.float32)
    rows = table[rng.integers(10, size=100)]
    found = distinct_rows(rows)
    assert found.rows.dtype == np.float64
    np.testing.assert_array_equal(found.rows[found.row_id], rows)
    assert distinct_rows(rows, max_bytes=0.1) is None  # 10 distinct > 100 * 0.1 / 2
    assert distinct_rows(rows, max_bytes=0.2) is not None  # 10 <= 100 * 0.2 / 2
    assert distinct_rows(rows.astype(np.float64), max_bytes=0.1) is not None  # 10 <= 10
    assert distinct_rows(rng.normal(size=(100, 3))) is None
    assert distinct_rows(np.zeros((0, 3))) is None


def test_repeated_rows_float32_is_bitwise_the_float64_objective_and_near_the_row_route(
        monkeypatch):
    """float32 rows and their float64 copy have the same distinct rows, so the same
    bits; the products over every row (no distinct rows) give the same objective
    up to rounding."""
    from sklearn_crf._training import objective as _objective

    X32, y = repeated_data(25, n_seq=40, dtype=np.float32)
    c32, layout, labels = problem(X32, y)
    c64, _, _ = problem([a.astype(np.float64) for a in X32], y)
    assert c32.dense.dtype == np.float32
    w = np.random.default_rng(25).normal(size=layout.n_params)
    obj32 = CRFObjective(c32, layout, labels, np.ones(len(y)), c2=0.1, n_chunks=2)
    obj64 = CRFObjective(c64, layout, labels, np.ones(len(y)), c2=0.1, n_chunks=1)
    assert obj32._dense is c32.dense and obj32._distinct is not None
    f32, g32 = obj32(w)
    f64, g64 = obj64(w)
    assert f32 == f64
    np.testing.assert_array_equal(g32, g64)
    monkeypatch.setattr(_objective, "distinct_rows", lambda dense: None)
    rows = CRFObjective(c32, layout, labels, np.ones(len(y)), c2=0.1, n_chunks=1)
    assert rows._distinct is None
    f, g = rows(w)
    assert f == pytest.approx(f32, rel=1e-12)
    np.testing.assert_allclose(g, g32, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("constrained", [False, True])
def test_repeated_rows_where_scaling_declines_and_under_constraints(constrained):
    """Dense weights large enough that scaling declines on some sequences (the
    log-space completion of a block), with and without constraints: the same
    bits on 1, 2 and 3 threads, and brute force."""
    from sklearn_crf._model.constraints import TransitionConstraints
    from sklearn_crf._training.objective import ConstrainedCRFObjective

    X, y = repeated_data(29, n_seq=30, with_dicts=True)
    corpus, layout, labels = problem(X, y)
    rng = np.random.default_rng(29)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    w = rng.normal(size=layout.n_params)
    w[layout.dense_start::4] *= 300.0
    L = layout.n_labels
    results = []
    for n_chunks in (1, 2, 3):
        kwargs = dict(c2=0.1, n_chunks=n_chunks, block_tokens=5)
        if constrained:
            masks = TransitionConstraints(np.ones((L, L), bool), np.ones(L, bool),
                                          np.ones(L, bool), None)
            obj = ConstrainedCRFObjective(corpus, layout, labels, weights, masks=masks,
                                          **kwargs)
        else:
            obj = CRFObjective(corpus, layout, labels, weights, **kwargs)
        assert obj._distinct is not None
        results.append(obj(w))
    for f, g in results[1:]:
        assert f == results[0][0]
        np.testing.assert_array_equal(g, results[0][1])
    f, g = results[0]
    assert f == pytest.approx(
        _naive.objective(w, layout, corpus, labels, weights, 0.0, 0.1), rel=1e-10)
    np.testing.assert_allclose(
        g, _naive.gradient(w, layout, corpus, labels, weights, 0.1), rtol=1e-9, atol=1e-8)


def test_fit_on_repeated_rows_gives_the_weights_of_the_equivalent_dicts():
    X, y = repeated_data(26, n_seq=40)
    X = [a + 0.05 for a in X]  # positive: every (dimension, label) pair kept by the dicts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = converged(c2=0.1, c1=0.0).fit(X, y)
        dicts = converged(c2=0.1, c1=0.0).fit(as_dicts(X), y)
        two = CRFTagger(max_iter=30, c1=0.1, c2=0.1, n_jobs=2).fit(X, y)
        one = CRFTagger(max_iter=30, c1=0.1, c2=0.1, n_jobs=1).fit(X, y)
    classes = dicts.classes_.tolist()
    theirs = [dicts.state_features_[(f"v{j}", label)] for j in range(4) for label in classes]
    ours = dense.dense_coef_.ravel()
    assert np.max(np.abs(ours - theirs)) <= 1e-6 * np.max(np.abs(theirs))
    assert dense.loss_ == pytest.approx(dicts.loss_, rel=1e-10)
    np.testing.assert_array_equal(one.coef_, two.coef_)


# --- the dense block of X (no copy of adjacent arrays) -----------------------------------


def test_slices_of_one_matrix_become_the_dense_block_without_a_copy():
    from sklearn_crf._features.dense import split_dense as _split_dense

    V = np.random.default_rng(27).normal(size=(20, 3)).astype(np.float32)
    bounds = [0, 4, 4, 9, 20]  # an empty sequence too
    X = [V[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    tokens, dense = _split_dense(X, True)
    assert [len(t) for t in tokens] == [4, 0, 5, 11]
    assert dense.dtype == np.float32 and dense.shape == (20, 3)
    assert np.shares_memory(dense, V) and not dense.flags.writeable
    np.testing.assert_array_equal(dense, V)
    corpus = SequenceVectorizer().fit_encode(X)
    assert np.shares_memory(corpus.dense, V)
    # (tokens, array) tuples over adjacent slices too
    tokens, dense = _split_dense([([{"a": 1}] * 4, V[:4]), ([{}] * 16, V[4:])], True)
    assert np.shares_memory(dense, V)
    # a one-row array is C-contiguous whatever its row stride: the view's own strides
    W = V[::2]
    assert W[0:1].flags.c_contiguous and W[0:1].strides[0] == 2 * V.strides[0]
    _, dense = _split_dense([W[0:1], V[1:6]], True)
    assert np.shares_memory(dense, V)
    np.testing.assert_array_equal(dense, V[0:6])


@pytest.mark.parametrize("case", ["gap", "reversed", "dtypes", "strided", "ints"])
def test_arrays_that_are_not_adjacent_are_copied(case):
    from sklearn_crf._features.dense import split_dense as _split_dense

    V = np.random.default_rng(28).normal(size=(10, 4))
    X = {"gap": [V[0:3], V[4:10]],
         "reversed": [V[5:10], V[0:5]],
         "dtypes": [V[0:5], V[5:10].astype(np.float32)],
         "strided": [V[0:5, ::2], V[5:10, ::2]],
         "ints": [np.arange(8).reshape(2, 4), np.arange(8, 16).reshape(2, 4)]}[case]
    _, dense = _split_dense(X, True)
    assert not np.shares_memory(dense, V)
    np.testing.assert_array_equal(dense, np.concatenate(X).astype(dense.dtype))
    assert dense.dtype == (np.float64)


@pytest.mark.parametrize("adjacent", [True, False])
def test_a_non_finite_value_is_found_in_any_chunk(adjacent):
    from sklearn_crf._features.dense import _FINITE_ROWS, split_dense as _split_dense

    n = 2 * _FINITE_ROWS + 10
    V = np.ones((n, 3), dtype=np.float32)
    V[_FINITE_ROWS + 5, 2] = np.nan
    bounds = [0, _FINITE_ROWS, _FINITE_ROWS + 3, n]
    X = [V[a:b] if adjacent else V[a:b].copy() for a, b in zip(bounds[:-1], bounds[1:])]
    with pytest.raises(ValueError, match=r"X\[2\] has nan at token 2, dense column 2"):
        _split_dense(X, True)
