"""The unconstrained best paths in one kernel call per range of sequences
(state scores and Viterbi): ``CRFTagger.predict``'s route without
constraints, ``allowed`` or dense features."""

import numpy as np
import pytest

import _naive
from sklearn_crf import CRFTagger, _engine


@pytest.mark.parametrize("n_labels", [1, 3, 9, 17])
def test_best_paths_sparse_matches_brute_force_and_the_batch_viterbi(n_labels):
    """Its labels are the brute-force best paths of the state scores through
    the parameter vector (every sequence, empty ones too), and bitwise what
    the scores and the list Viterbi give in two calls; on several threads
    (ranges of sequences), the same."""
    from conftest import corpus_arrays, random_corpus

    X, y = random_corpus(n_labels, n_seq=12, max_len=5, n_labels=n_labels)
    corpus, layout, _ = corpus_arrays(X, y)
    L = layout.n_labels
    rng = np.random.default_rng(n_labels)
    w = rng.normal(size=layout.n_params)
    trans = layout.transition_matrix(w)
    args = (w, layout.attr_ptr, layout.attr_label, corpus.tok_ptr, corpus.tok_attr,
            corpus.tok_val, trans, corpus.seq_ptr)
    codes = _engine.unconstrained_best_paths(*args)
    scores = _naive.all_state_scores(w, layout, corpus)
    for s in range(len(corpus.seq_ptr) - 1):
        a, b = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        if a < b:
            path, _ = _naive.best_path(scores[a:b], trans)
            np.testing.assert_array_equal(codes[a:b], path)
    two_calls = _engine.viterbi_batch(
        _engine.state_scores_sparse(w, layout.attr_ptr, layout.attr_label, corpus.tok_ptr,
                                    corpus.tok_attr, corpus.tok_val, L),
        trans, corpus.seq_ptr, 1).labels
    np.testing.assert_array_equal(codes, two_calls)
    np.testing.assert_array_equal(_engine.unconstrained_best_paths(*args, 3), codes)


def _sentences_of_entries(n_attributes, n_seq, seed):
    """Random sentences of item entries as the memo gives them (int32): ids,
    ``~id`` (a value of 0) and unknown attributes (at and far above
    ``n_attributes``), tokens without items too; ``(item_ptr, entries)`` each."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_seq):
        counts = rng.integers(0, 5, size=int(rng.integers(1, 7)))
        entries = rng.integers(0, n_attributes, size=int(counts.sum())).astype(np.int32)
        kind = rng.integers(0, 4, size=len(entries))
        entries[kind == 1] = ~entries[kind == 1]
        entries[kind == 2] = n_attributes
        entries[kind == 3] = np.iinfo(np.int32).max
        out.append((np.concatenate(([0], np.cumsum(counts))).astype(np.int64), entries))
    return out


@pytest.mark.parametrize("n_labels", [1, 3, 9, 17])
def test_best_path_of_entries_is_the_best_path_of_its_ids(n_labels):
    """One sentence straight from its entries: the brute-force best path of
    the state scores of its ids (``~id`` and unknown attributes add
    nothing), and bitwise the labels of best_paths_sparse on the entries
    pointed at a sink attribute without weights (predict's batch route)."""
    from conftest import corpus_arrays, random_corpus

    from sklearn_crf._engine.viterbi import best_path_of_entries

    X, y = random_corpus(n_labels, n_seq=12, max_len=5, n_labels=n_labels)
    _, layout, _ = corpus_arrays(X, y)
    L, n_attr = layout.n_labels, layout.n_attributes
    rng = np.random.default_rng(n_labels)
    w = rng.normal(size=layout.n_params)
    trans = layout.transition_matrix(w)
    sink_ptr = np.append(layout.attr_ptr, layout.attr_ptr[-1:]).astype(np.int64)
    for item_ptr, entries in _sentences_of_entries(n_attr, 20, n_labels):
        n = len(item_ptr) - 1
        codes = best_path_of_entries(w, layout.attr_ptr, layout.attr_label, item_ptr,
                                     entries, trans)
        scores = np.zeros((n, L))
        for t in range(n):
            for a in entries[item_ptr[t]:item_ptr[t + 1]].tolist():
                if 0 <= a < n_attr:
                    for p in range(layout.attr_ptr[a], layout.attr_ptr[a + 1]):
                        scores[t, layout.attr_label[p]] += w[p]
        path, _ = _naive.best_path(scores, trans)
        np.testing.assert_array_equal(codes, path)
        sunk = np.minimum(entries.view(np.uint32), n_attr).view(np.int32)
        batch = _engine.unconstrained_best_paths(
            w, sink_ptr, layout.attr_label, item_ptr, sunk, np.zeros(0), trans,
            np.array([0, n], dtype=np.int64))
        np.testing.assert_array_equal(codes, batch)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("n_jobs", [1, None])
def test_predict_in_one_call_equals_the_decoding_problem_route(n_jobs, monkeypatch):
    """predict without constraints, ``allowed`` or dense features runs the
    one-call kernel: the labels of the decoding-problem route (``decoder``
    and Viterbi over the problem), sentence by sentence and as a batch."""
    from conftest import iob2_corpus

    X, y = iob2_corpus(3, n_seq=150)
    tagger = CRFTagger(max_iter=20, n_jobs=n_jobs).fit(X, y)

    def problem_route(X):
        problem = tagger._problem(X, None)
        return tagger._labels(tagger._decode(problem), problem.seq_ptr)

    calls = []
    for name in ("unconstrained_best_paths", "unconstrained_best_paths_dense",
                 "best_path_of_entries"):
        one_call = getattr(_engine, name)
        monkeypatch.setattr(_engine, name, lambda *args, f=one_call, name=name:
                            calls.append(name) or f(*args))
    assert tagger.predict(X) == problem_route(X)
    assert calls == ["unconstrained_best_paths_dense"]  # more entries than weights
    assert [tagger.predict([x])[0] for x in X] == problem_route(X)
    assert len(calls) == 1 + len(X)
    unit = [[{k: v for k, v in tok.items() if k != "x"} for tok in x] for x in X]
    del calls[:]  # values of 1 and 0 only: a sentence's entries as they are
    assert [tagger.predict([x])[0] for x in unit] == problem_route(unit)
    assert calls == ["best_path_of_entries"] * len(X)


@pytest.mark.parametrize("n_labels", [2, 5, 9])
def test_best_paths_sparse_breaks_ties_as_the_list_viterbi(n_labels):
    """With weights of a few integer values, many paths tie: the one-call
    Viterbi picks the path (and score) the list Viterbi at n = 1 picks, the
    first maximum in label order."""
    from conftest import corpus_arrays, random_corpus

    X, y = random_corpus(n_labels + 40, n_seq=30, max_len=5, n_labels=n_labels)
    corpus, layout, _ = corpus_arrays(X, y)
    rng = np.random.default_rng(n_labels)
    w = rng.integers(-1, 2, size=layout.n_params).astype(np.float64)
    trans = layout.transition_matrix(w)
    scores = _engine.state_scores_sparse(w, layout.attr_ptr, layout.attr_label,
                                         corpus.tok_ptr, corpus.tok_attr, corpus.tok_val,
                                         layout.n_labels)
    paths = np.empty(corpus.n_tokens, dtype=np.int32)
    path_scores = np.empty(len(corpus.seq_ptr) - 1)
    from sklearn_crf._engine.viterbi import best_paths_sparse
    best_paths_sparse(w, layout.attr_ptr, layout.attr_label, corpus.tok_ptr, corpus.tok_attr,
                      corpus.tok_val, trans, corpus.seq_ptr, 0, len(corpus.seq_ptr) - 1,
                      np.empty_like(scores), paths, path_scores)
    listed = _engine.viterbi_batch(scores, trans, corpus.seq_ptr, 1)
    np.testing.assert_array_equal(paths, listed.labels)
    n_ties = 0
    for s in range(len(corpus.seq_ptr) - 1):
        a, b = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        if a < b:
            _, total = _naive.path_scores(scores[a:b], trans)
            assert path_scores[s] == total.max() == listed.scores[s]  # integer sums: exact
            n_ties += int((total == total.max()).sum() > 1)
    assert n_ties > 0  # the case this test is for


@pytest.mark.parametrize("L", [8, 9, 15, 16, 17, 42])
@pytest.mark.parametrize("ties", [False, True])
def test_viterbi_lanes_give_the_scalar_paths_scores_and_ties(L, ties):
    """Eight labels per vector (the last chunk overlapping): the scalar
    Viterbi's numbers bitwise and its first maximum on ties (small integer
    scores tie often), for every length, the brute force where it is small."""
    from sklearn_crf._engine.viterbi import viterbi_finite, viterbi_finite_lanes

    rng = np.random.default_rng(L + 100 * ties)
    draw = (lambda *shape: rng.integers(-2, 3, size=shape).astype(float)) if ties else (
        lambda *shape: rng.normal(size=shape))
    trans = draw(L, L)
    for n in (0, 1, 2, 3, 7):
        scores = np.vstack([draw(2, L), draw(n, L), draw(1, L)])  # rows 2..2+n-1
        delta = np.full((8, L), np.nan)
        path = np.full(n, -1, dtype=np.int32)
        path_lanes = np.full(n, -1, dtype=np.int32)
        best = viterbi_finite(scores[2:2 + n], trans, n, delta.copy(),
                              np.zeros((8, L), dtype=np.int32), path)
        best_lanes = viterbi_finite_lanes(scores, 2, trans, n, delta, np.zeros((8, L)),
                                          path_lanes)
        np.testing.assert_array_equal(path_lanes, path)
        assert best_lanes == best or (n == 0 and best_lanes == best == 0.0)
        if 0 < n <= 3 and L <= 9:
            naive_path, naive_score = _naive.best_path(scores[2:2 + n], trans)
            assert best == pytest.approx(naive_score)
            if not ties:
                np.testing.assert_array_equal(path, naive_path)
