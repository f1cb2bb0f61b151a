"""CRFsuite's online solvers (sklearn_crf._training.online): kernels against brute force,
algorithms against naive twins and against CRFsuite itself, and CRFTagger's
solver parameters."""

import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf import _engine
from sklearn_crf._training import online as _online
from sklearn_crf._training.solvers import SOLVERS as SOLVER_TABLE
from sklearn_crf.datasets import load_conll2002

import _naive
from conftest import corpus_arrays, random_corpus

SOLVERS = ("l2sgd", "ap", "pa", "arow")


def _problem(seed, n_seq=6, max_len=4, n_labels=3, **layout_kwargs):
    X, y = random_corpus(seed, n_seq=n_seq, max_len=max_len, n_labels=n_labels)
    return corpus_arrays(X, y, **layout_kwargs)


def _random_weights(layout, seed, scale=1.0):
    return np.random.default_rng(seed).normal(scale=scale, size=layout.n_params)


# ----------------------------------------------------------------- the shuffle


def test_glibc_rand_replays_the_c_library_from_seed_1():
    # the first rand() values of glibc after srand(1) (or no srand at all)
    state = _online.glibc_rand_state(1)
    assert [_online.glibc_rand(state) for _ in range(5)] == [
        1804289383, 846930886, 1681692777, 1714636915, 1957747793,
    ]


def test_shuffle_is_crfsuites_swap_loop():
    perm = np.arange(5, dtype=np.int64)
    state = _online.glibc_rand_state(1)
    _online.shuffle_crfsuite(perm, state)
    expected = list(range(5))
    ref = _online.glibc_rand_state(1)
    for i in range(5):
        j = _online.glibc_rand(ref) % 5
        expected[i], expected[j] = expected[j], expected[i]
    assert perm.tolist() == expected
    assert sorted(perm.tolist()) == list(range(5))


# ------------------------------------------------------ per-sequence kernels


@pytest.mark.parametrize("seed", range(4))
def test_sequence_scores_match_the_dense_weights(seed):
    corpus, layout, labels = _problem(seed, all_possible_transitions=seed % 2 == 0)
    p = _online._Problem(corpus, layout, labels, np.ones(len(corpus.seq_ptr) - 1))
    w = _random_weights(layout, seed)
    a = p.arrays
    trans = np.zeros((layout.n_labels, layout.n_labels))
    _online.transition_scores(w, 0.5, a.trans_index, trans)
    r = p.rank  # the kernels number the labels by first appearance
    for s in range(p.n_seq):
        scores_ref, trans_ref = _naive.sequence_scores(w, layout, corpus, s)
        n = len(scores_ref)
        out = np.zeros((max(n, 1), layout.n_labels))
        _engine.state_scores_sparse_range_exact(
            w, 0.5, a.attr_ptr, a.attr_label, a.tok_ptr, a.tok_attr, a.tok_val,
            a.seq_ptr[s], a.seq_ptr[s + 1], out,
        )
        np.testing.assert_allclose(out[:n][:, r], 0.5 * scores_ref, atol=1e-12)
        np.testing.assert_allclose(trans[np.ix_(r, r)], 0.5 * trans_ref, atol=1e-12)


def test_labels_are_numbered_by_first_appearance():
    corpus, layout, labels = _problem(0, n_labels=4)
    p = _online._Problem(corpus, layout, labels, np.ones(len(corpus.seq_ptr) - 1))
    first = list(dict.fromkeys(labels.tolist()))
    assert p.rank[first].tolist() == list(range(len(first)))
    np.testing.assert_array_equal(p.arrays.labels, p.rank[labels])


@pytest.mark.parametrize("seed", range(6))
def test_viterbi_is_the_brute_force_argmax(seed):
    rng = np.random.default_rng(seed)
    n, L = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    scores, trans = rng.normal(size=(n, L)), rng.normal(size=(L, L))
    path = np.zeros(n, dtype=np.int32)
    best = np.zeros(1)
    _engine.list_viterbi(scores, trans, n, 1, _engine.viterbi_workspace(n, L, 1), path, best)
    best = best[0]
    ref_path, ref_score = _naive.best_path(scores, trans)
    np.testing.assert_array_equal(path, ref_path)
    assert best == pytest.approx(ref_score, abs=1e-12)
    assert _engine.path_score(scores, trans, path, n) == pytest.approx(ref_score, abs=1e-12)


def test_viterbi_ties_go_to_the_first_label():
    # CRFsuite compares with a strict <: with all scores equal, label 0 everywhere
    n, L = 4, 3
    path = np.full(n, -1, dtype=np.int32)
    _engine.list_viterbi(
        np.zeros((n, L)), np.zeros((L, L)), n, 1, _engine.viterbi_workspace(n, L, 1), path,
        np.zeros(1),
    )
    assert path.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("seed", range(6))
def test_forward_backward_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, L = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    scale = 3.0 if seed % 2 else 30.0  # large scores: the shifted exp stays exact
    scores, trans = scale * rng.normal(size=(n, L)), rng.normal(size=(L, L))
    node = np.zeros((n, L))
    edge_sum = np.zeros((L, L))
    log_z = _engine.forward_backward_scaled_crfsuite(
        scores, trans, n, np.zeros((n, L)), np.zeros((L, L)), np.zeros((n, L)),
        np.zeros((n, L)), np.zeros(n), node, edge_sum,
    )
    ref_node, ref_edge = _naive.marginals(scores, trans)
    assert log_z == pytest.approx(_naive.log_partition(scores, trans), rel=1e-12)
    np.testing.assert_allclose(node, ref_node, atol=1e-10)
    np.testing.assert_allclose(edge_sum, ref_edge.sum(axis=0), atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_path_features_and_actives(seed):
    corpus, layout, labels = _problem(seed)
    p = _online._Problem(corpus, layout, labels, np.ones(len(corpus.seq_ptr) - 1))
    rng = np.random.default_rng(seed)
    for s in range(p.n_seq):
        start, stop = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        path = rng.integers(layout.n_labels, size=stop - start)
        vec = np.zeros(layout.n_params)
        actives = np.zeros(100, dtype=np.int64)
        internal = p.rank[path]
        m = _engine.add_path_features_exact(
            vec, 2.0, internal, start, stop - start, p.arrays.tok_ptr, p.arrays.tok_attr,
            p.arrays.tok_val, p.arrays.attr_ptr, p.arrays.attr_label, p.arrays.trans_index,
            actives, 0,
        )
        ref = _naive.feature_vector(layout, corpus, s, path)
        np.testing.assert_allclose(vec, 2.0 * ref, atol=1e-12)
        used = np.zeros(layout.n_params, dtype=np.bool_)
        m = _online.unique_actives(actives, m, used)
        assert set(actives[:m].tolist()) >= set(np.flatnonzero(ref).tolist())
        assert len(set(actives[:m].tolist())) == m and not used.any()


# ----------------------------------------------- epochs against naive twins


def _epoch_setup(seed, weights=False):
    corpus, layout, labels = _problem(seed, n_seq=5, max_len=4, n_labels=3)
    n_seq = len(corpus.seq_ptr) - 1
    seq_weight = (
        np.random.default_rng(seed).uniform(0.5, 2.0, n_seq) if weights else np.ones(n_seq)
    )
    # one label numbering for both: the driver's (first appearance), so that
    # brute force and kernel see the same problem
    p = _online._Problem(corpus, layout, labels, seq_weight)
    internal_layout = type(layout)(
        attr_ptr=layout.attr_ptr, attr_label=p.arrays.attr_label.astype(np.int32),
        trans_from=_from_index(p, 0), trans_to=_from_index(p, 1), n_labels=layout.n_labels,
    )
    order = np.random.default_rng(seed + 100).permutation(n_seq).astype(np.int64)
    return p, internal_layout, corpus, order, seq_weight


def _from_index(p, axis):
    """trans_from (axis 0) or trans_to (axis 1) in parameter order, internal labels."""
    n_state = len(p.arrays.attr_label)
    out = np.zeros(p.n_params - n_state, dtype=np.int32)
    i, j = np.nonzero(p.arrays.trans_index >= 0)
    out[p.arrays.trans_index[i, j] - n_state] = (i, j)[axis]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_perceptron_epochs_match_the_naive_twin(seed):
    p, layout, corpus, order, sw = _epoch_setup(seed, weights=seed == 2)
    w, ws = np.zeros(p.n_params), np.zeros(p.n_params)
    rw, rws, rc = w.copy(), ws.copy(), 1
    c = 1
    for _ in range(3):
        loss, c = _online.perceptron_epoch(w, ws, c, order, p.arrays, p.decode_buffers())
        rw, rws, rc, rloss = _naive.perceptron_epoch(rw, rws, rc, order, layout, corpus, p.arrays.labels, sw)
        assert c == rc and loss == pytest.approx(rloss)
        np.testing.assert_allclose(w, rw, atol=1e-10)
        np.testing.assert_allclose(ws, rws, atol=1e-10)


@pytest.mark.parametrize("pa_type", [0, 1, 2])
@pytest.mark.parametrize("error_sensitive", [True, False])
def test_passive_aggressive_epochs_match_the_naive_twin(pa_type, error_sensitive):
    p, layout, corpus, order, sw = _epoch_setup(pa_type, weights=True)
    w, ws = np.zeros(p.n_params), np.zeros(p.n_params)
    margin = p.margin_buffers()
    rw, rws, ru, u = w.copy(), ws.copy(), 1, 1
    for _ in range(3):
        loss, u = _online.passive_aggressive_epoch(
            w, ws, u, order, pa_type, 0.3, error_sensitive, p.arrays,
            p.decode_buffers(), margin,
        )
        rw, rws, ru, rloss = _naive.passive_aggressive_epoch(
            rw, rws, ru, order, layout, corpus, p.arrays.labels, sw, pa_type, 0.3, error_sensitive
        )
        assert u == ru and loss == pytest.approx(rloss)
        np.testing.assert_allclose(w, rw, atol=1e-10)
        np.testing.assert_allclose(ws, rws, atol=1e-10)
        assert not margin.delta.any()


@pytest.mark.parametrize("seed", range(3))
def test_arow_epochs_match_the_naive_twin(seed):
    p, layout, corpus, order, sw = _epoch_setup(seed, weights=seed == 1)
    mean, cov = np.zeros(p.n_params), np.full(p.n_params, 0.7)
    margin = p.margin_buffers()
    rmean, rcov = mean.copy(), cov.copy()
    for _ in range(3):
        loss = _online.arow_epoch(
            mean, cov, order, 1.5, p.arrays, p.decode_buffers(), margin
        )
        rmean, rcov, rloss = _naive.arow_epoch(rmean, rcov, order, layout, corpus, p.arrays.labels, sw, 1.5)
        assert loss == pytest.approx(rloss)
        np.testing.assert_allclose(mean, rmean, atol=1e-10)
        np.testing.assert_allclose(cov, rcov, atol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_sgd_epochs_with_lazy_decay_match_the_naive_twin(seed):
    p, layout, corpus, order, sw = _epoch_setup(seed, weights=seed == 1)
    buffers = p.sgd_buffers()
    lam, t0 = 0.3, 4.0
    w = np.zeros(p.n_params)
    rw, rt, t = w.copy(), 0.0, 0.0
    for _ in range(3):
        loss, _, t, _ = _online.l2sgd_epoch(w, order, t, t0, lam, p.arrays, buffers)
        rw, rt, rloss = _naive.sgd_epoch(rw, order, rt, t0, lam, layout, corpus, p.arrays.labels, sw)
        assert t == rt and loss == pytest.approx(rloss, rel=1e-10)
        np.testing.assert_allclose(w, rw, atol=1e-10)


# ---------------------------------------------------------- the estimator


@pytest.mark.parametrize("solver", SOLVERS)
def test_each_solver_learns_a_separable_task(toy_ner, solver):
    X, y = toy_ner
    params = {"max_iter": 50} if solver == "l2sgd" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # l2sgd at max_iter
        crf = CRFTagger(solver=solver, **params).fit(X, y)
    assert crf.score(X, y) == 1.0
    assert crf.coef_.shape == (crf.layout_.n_params,)
    assert crf.n_iter_ == len(crf.loss_curve_)


def test_max_iter_none_is_crfsuites_default_and_epsilon_stops(toy_ner):
    X, y = toy_ner
    assert CRFTagger(solver="ap").fit(X, y).n_iter_ == 100  # epsilon 0 never stops ap
    arow = CRFTagger(solver="arow").fit(X, y)  # stops after an epoch without mistakes
    assert arow.n_iter_ < 100 and arow.loss_curve_[-1] == 0.0
    ap = CRFTagger(solver="ap", epsilon=0.01).fit(X, y)
    assert ap.n_iter_ < 100 and ap.loss_curve_[-1] / len(X) < 0.01
    assert np.all(ap.loss_curve_[:-1] / len(X) >= 0.01)
    assert CRFTagger(solver="pa", max_iter=7).fit(X, y).n_iter_ == 7


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_thread_count_does_not_change_the_weights(toy_ner, solver):
    X, y = toy_ner
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fits = [CRFTagger(solver=solver, max_iter=5, n_jobs=n).fit(X, y) for n in (1, 2)]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)


def test_zero_sample_weights_leave_the_weights_at_zero(toy_ner):
    X, y = toy_ner
    for solver in ("ap", "pa", "arow"):
        crf = CRFTagger(solver=solver, max_iter=3).fit(X, y, sample_weight=np.zeros(len(X)))
        assert not crf.coef_.any()


def test_l2sgd_warns_when_max_iter_stops_it(toy_ner):
    X, y = toy_ner
    with pytest.warns(ConvergenceWarning, match="max_iter=3") as record:
        crf = CRFTagger(solver="l2sgd", max_iter=3).fit(X, y)
    assert record[0].filename == __file__  # points at the call of fit
    assert crf.n_iter_ == 3
    # the returned weights are those of the best epoch
    assert crf.loss_ == pytest.approx(crf.loss_curve_.min())


@pytest.mark.parametrize(
    "params, match",
    [
        ({"solver": "ap", "c2": 0.5}, "does not use c2"),
        ({"solver": "ap", "c1": 0.1}, "does not use c1"),
        ({"solver": "pa", "tol": 1e-5}, "does not use tol"),
        ({"solver": "arow", "warm_start": True}, "does not use warm_start"),
        ({"solver": "l2sgd", "c1": 0.1}, "does not use c1"),
        ({"solver": "l2sgd", "epsilon": 0.1}, "does not use epsilon"),
        ({"solver": "ap", "gamma": 2.0, "pa_type": 2}, "does not use gamma, pa_type"),
        ({"solver": "pa", "gamma": 2.0}, "does not use gamma"),
        ({"solver": "lbfgs", "variance": 2.0}, "does not use variance"),
        ({"solver": "lbfgs", "period": 5}, "does not use period"),
        ({"solver": "arow", "calibration_eta": 0.5}, "does not use calibration_eta"),
        ({"solver": "l2sgd", "c2": 0.0}, "needs c2 > 0"),
        ({"solver": "ap", "early_stopping": True}, "does not use early_stopping"),
        ({"solver": "pa", "validation_scoring": "entity_f1"}, "does not use validation_scoring"),
    ],
)
def test_a_parameter_the_solver_does_not_use_raises(toy_ner, params, match):
    X, y = toy_ner
    crf = CRFTagger(solver="ap", max_iter=2).fit(X, y)
    before = crf.coef_.copy()
    with pytest.raises(ValueError, match=match):
        crf.set_params(**params).fit(X, y)
    np.testing.assert_array_equal(crf.coef_, before)  # the fitted model is untouched


def test_online_solvers_take_no_validation_set(toy_ner):
    X, y = toy_ner
    crf = CRFTagger(solver="ap", max_iter=2).fit(X, y)
    before = crf.coef_.copy()
    with pytest.raises(ValueError, match="takes no validation set"):
        crf.fit(X, y, X_val=X[:5], y_val=y[:5])
    np.testing.assert_array_equal(crf.coef_, before)
    assert crf.validation_scores_ is None and crf.best_iteration_ is None


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "sgd"},
        {"pa_type": 3},
        {"pa_type": 1.0},
        {"c": 0.0},
        {"variance": 0.0},
        {"gamma": -1.0},
        {"epsilon": -0.1},
        {"period": 0},
        {"delta": -1.0},
        {"calibration_eta": 0.0},
        {"calibration_rate": 1.0},
        {"calibration_samples": 0},
        {"calibration_candidates": 0},
        {"calibration_max_trials": 0},
        {"error_sensitive": 1},
        {"averaging": "yes"},
        {"max_iter": 0},
    ],
)
def test_bad_parameter_values(toy_ner, params):
    X, y = toy_ner
    with pytest.raises(ValueError):
        CRFTagger(**params).fit(X, y)


@pytest.mark.parametrize("solver", SOLVERS)
def test_defaults_are_crfsuites(solver):
    import pycrfsuite

    theirs = pycrfsuite.Trainer(algorithm=solver, verbose=False).get_params()
    ours = CRFTagger().get_params()
    names = {"max_iterations": None, "type": "pa_type"}
    for name, value in theirs.items():
        if name.startswith("feature."):
            continue
        if name == "max_iterations":
            assert SOLVER_TABLE[solver].resolved_max_iter(ours["max_iter"]) == value
        elif name == "epsilon":  # None: CRFsuite's default of the algorithm, 0
            assert ours["epsilon"] is None and value == 0.0
        else:
            assert ours[names.get(name, name.replace(".", "_"))] == value, name
    # the parameters the solver reads are exactly CRFsuite's, besides max_iter
    crfsuite_names = {names.get(n, n.replace(".", "_")) for n in theirs if not n.startswith("feature.")}
    assert SOLVER_TABLE[solver].params == crfsuite_names - {None}


def test_epsilon_none_is_crfsuites_lbfgs_epsilon():
    import pycrfsuite

    theirs = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False).get_params()["epsilon"]
    for solver in ("lbfgs", "l-bfgs-b"):
        assert SOLVER_TABLE[solver].resolved_epsilon(CRFTagger().epsilon) == theirs
        assert SOLVER_TABLE[solver].resolved_max_iter(CRFTagger().max_iter) == 1000


def test_lbfgs_with_epsilon_none_fits_as_with_1e5(toy_ner):
    X, y = toy_ner
    a = CRFTagger(c2=0.1, n_jobs=1).fit(X, y)
    b = CRFTagger(c2=0.1, epsilon=1e-5, n_jobs=1).fit(X, y)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.coef_, b.coef_)


# ------------------------------------------------------ CRFsuite as the oracle


@pytest.fixture(scope="module")
def conll_sample(tmp_path_factory):
    train = load_conll2002("train")
    X = SequenceFeaturizer().transform(train.sentences[:120])
    y = train.tags[:120]
    path = tmp_path_factory.mktemp("online") / "xy.pkl"
    with open(path, "wb") as fh:
        pickle.dump((X, y), fh)
    return X, y, path


def _crfsuite_weights(path, algorithm, params, tmp_path):
    """Train pycrfsuite in a fresh process (its rand() starts from seed 1) and
    return its model's weights as one dict."""
    model = tmp_path / "model.crfsuite"
    code = textwrap.dedent(f"""
        import pickle, pycrfsuite
        X, y = pickle.load(open({str(path)!r}, "rb"))
        trainer = pycrfsuite.Trainer(algorithm={algorithm!r}, verbose=False)
        for xseq, yseq in zip(X, y):
            trainer.append(xseq, yseq)
        trainer.set_params({params!r})
        trainer.train({str(model)!r})
        tagger = pycrfsuite.Tagger()
        tagger.open({str(model)!r})
        info = tagger.info()
        weights = dict(info.state_features)
        weights.update(info.transitions)
        pickle.dump(weights, open({str(model) + ".pkl"!r}, "wb"))
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
    with open(str(model) + ".pkl", "rb") as fh:
        return pickle.load(fh)


@pytest.mark.parametrize(
    "solver, ours, theirs",
    [
        ("ap", {"max_iter": 4}, {"max_iterations": 4}),
        ("pa", {"max_iter": 4}, {"max_iterations": 4}),
        ("pa", {"max_iter": 3, "pa_type": 0, "error_sensitive": False},
         {"max_iterations": 3, "type": 0, "error_sensitive": False}),
        ("pa", {"max_iter": 3, "pa_type": 2, "c": 0.2, "averaging": False},
         {"max_iterations": 3, "type": 2, "c": 0.2, "averaging": False}),
        ("arow", {"max_iter": 4, "variance": 0.5, "gamma": 2.0},
         {"max_iterations": 4, "variance": 0.5, "gamma": 2.0}),
        ("l2sgd", {"max_iter": 4, "c2": 0.5, "calibration_samples": 50},
         {"max_iterations": 4, "c2": 0.5, "calibration.samples": 50}),
    ],
)
def test_same_weights_as_crfsuite(conll_sample, tmp_path, solver, ours, theirs):
    X, y, path = conll_sample
    expected = _crfsuite_weights(path, solver, theirs, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf = CRFTagger(solver=solver, n_jobs=1, **ours).fit(X, y)
    got = dict(crf.state_features_)
    got.update(crf.transition_features_)
    keys = set(got) | set(expected)
    a = np.array([got.get(k, 0.0) for k in keys])
    b = np.array([expected.get(k, 0.0) for k in keys])
    assert np.abs(b).max() > 0.1
    # CRFsuite's model dump prints 6 decimals
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)



@pytest.mark.parametrize("n_dense", [0, 2])
def test_transition_kernel_reads_the_layouts_transition_matrix(n_dense):
    # the online solvers' per-instance transition matrix is the layout's, in
    # their label numbers and parameter order (dense weights before transitions)
    X, y = random_corpus(5, n_seq=8, max_len=5, n_labels=4)
    if n_dense:
        rng = np.random.default_rng(0)
        X = [(x, rng.normal(size=(len(x), n_dense))) for x in X]
    corpus, layout, labels = corpus_arrays(X, y, all_possible_transitions=False)
    assert layout.n_dense == n_dense and 0 < layout.n_trans < layout.n_labels ** 2
    p = _online._Problem(corpus, layout, labels, np.ones(corpus.n_sequences))
    w = np.random.default_rng(1).normal(size=p.n_params)
    trans = np.full((layout.n_labels, layout.n_labels), np.nan)
    _online.transition_scores(w, 1.0, p.arrays.trans_index, trans)
    expected = layout.transition_matrix(p.layout_order(w))
    r = p.rank
    assert np.array_equal(trans[np.ix_(r, r)], expected)
