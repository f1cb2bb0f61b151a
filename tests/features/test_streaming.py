import gc
import os
import weakref

import numpy as np
import pytest

from sklearn_crf import SequenceFeaturizer, SequenceVectorizer, read_conll
from sklearn_crf._io.conll import iter_conll
from sklearn_crf._io.corpus_store import LabelCodes
from sklearn_crf._features.streaming import encode_stream
from sklearn_crf._features.memo import memo_items
from sklearn_crf._features.validation import encode_labels
from sklearn_crf.datasets import _conll2002

FIELDS = ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr")
TESTB = os.path.join(os.path.dirname(_conll2002.__file__), "data", "esp.testb.gz")


def corpus_input(n_seq=300, dense=False, int_labels=False):
    """Sequences with repeats, new attributes late in the stream, zeros of several
    types, values other than 1, nested dicts, lists, empty sequences; labels whose
    sorted order is not their order of first appearance."""
    X, y = [], []
    for s in range(n_seq):
        seq = []
        for t in range(s % 6):
            token = {"w": f"w{(s * 7 + t) % (5 + s // 10)}", "n": (s + t) % 3,
                     "z": [False, 0, 0.0][t % 3], "f": 0.25 * (t - 1)}
            if (s + t) % 4 == 0:
                token["d"] = {"k": f"v{t}", "x": 0}
            if s % 9 == 0:
                token["l"] = ["a", f"b{s}"]
            seq.append(token)
        labels = ["O", "B-PER", "I-PER", "B-LOC", "Z"] if not int_labels else [9, 3, 5, 1]
        y.append([labels[(s * 3 + t) % (1 + min(len(labels) - 1, s // 40))]
                  for t in range(len(seq))])
        if dense:
            X.append((seq, (np.arange(3 * len(seq), dtype=np.float32).reshape(-1, 3) - s) / 4))
        else:
            X.append(seq)
    return X, y


def batched(X, y, bounds):
    return ((X[a:b], y[a:b]) for a, b in zip(bounds, bounds[1:]))


def assert_bitwise(got, want):
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert got.n_attributes == want.n_attributes
    assert (got.dense is None) == (want.dense is None)
    if want.dense is not None:
        assert got.dense.dtype == want.dense.dtype
        assert got.dense.tobytes() == want.dense.tobytes()


def assert_same_vocabulary(got, want):
    if want.n_features is None:
        assert got.feature_names_ == want.feature_names_
        assert got.vocabulary_ == want.vocabulary_
        assert dict(memo_items(got._pair_ids)).items() >= dict(memo_items(want._pair_ids)).items()
    else:
        np.testing.assert_array_equal(got.hash_slots_, want.hash_slots_)
    assert got.n_dense_features_ == want.n_dense_features_


@pytest.mark.parametrize("hashing", [None, 64])
@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("to_disk", [False, True])
def test_stream_equals_in_memory_fit_encode(tmp_path, hashing, dense, to_disk):
    X, y = corpus_input(dense=dense)
    vec = SequenceVectorizer(n_features=hashing)
    want = vec.fit_encode(X)
    assert len(want.zero_tok) and (want.tok_val != 1).any()
    bounds = [0, 1, 1, 7, 120, 121, 300]  # an empty batch, batches of one sequence
    corpus, y2 = encode_stream(batched(X, y, bounds), hashing=hashing,
                               directory=tmp_path / "store" if to_disk else None)
    assert_bitwise(corpus, want)
    assert y2 == y
    assert_same_vocabulary(corpus.vectorizer, vec)
    assert isinstance(corpus.tok_attr, np.memmap) == to_disk
    # the vectorizer goes on encoding as the in-memory one
    assert_bitwise(corpus.vectorizer.encode(X[::-1]), vec.encode(X[::-1]))


@pytest.mark.parametrize("to_disk", [False, True])
@pytest.mark.parametrize("int_labels", [False, True])
def test_stream_label_codes(tmp_path, to_disk, int_labels):
    """Labels seen first late in the stream, sorted among the others: the codes
    and classes of the whole y."""
    X, y = corpus_input(int_labels=int_labels)
    corpus, codes = encode_stream(batched(X, y, [0, 50, 100, 300]), label_codes=True,
                                  directory=tmp_path if to_disk else None)
    classes, want = encode_labels(y, corpus.seq_ptr)
    assert isinstance(codes, LabelCodes) and codes.codes.dtype == np.int32
    np.testing.assert_array_equal(codes.codes, want)
    np.testing.assert_array_equal(codes.classes, classes)
    assert codes.classes.dtype == classes.dtype


def test_stream_from_a_conll_file(tmp_path):
    """The documented recipe: iter_conll, a featurizer per chunk, encode_stream
    into a store: bitwise read_conll + fit_encode of the whole file."""
    featurizer = SequenceFeaturizer()
    data = read_conll(TESTB)
    vec = SequenceVectorizer()
    want = vec.fit_encode(list(featurizer.transform(data.sentences)))
    batches = ((featurizer.transform(chunk.sentences), chunk.tags)
               for chunk in iter_conll(TESTB, chunk_size=400))
    corpus, y = encode_stream(batches, directory=tmp_path)
    assert_bitwise(corpus, want)
    assert y == data.tags
    assert_same_vocabulary(corpus.vectorizer, vec)


def test_stream_keeps_no_batch():
    """The feature dicts of a batch are gone once the next batch is asked for."""
    X, y = corpus_input(n_seq=60)

    class Batch(list):  # a list that a weak reference can follow
        pass

    refs = []

    def batches():
        for a in range(0, 60, 20):
            gc.collect()
            assert all(ref() is None for ref in refs)
            batch = Batch(X[a:a + 20])
            refs.append(weakref.ref(batch))
            yield batch, y[a:a + 20]
            del batch

    corpus, _ = encode_stream(batches())
    assert_bitwise(corpus, SequenceVectorizer().fit_encode(X))
    assert len(refs) == 3


def test_stream_without_labels(tmp_path):
    X, _ = corpus_input(n_seq=30)
    corpus, y = encode_stream(((X[a:a + 10], None) for a in range(0, 30, 10)),
                              directory=tmp_path)
    assert y is None and not (tmp_path / "labels.npy").exists()
    assert_bitwise(corpus, SequenceVectorizer().fit_encode(X))


def test_stream_errors_name_the_batch(tmp_path):
    X, y = corpus_input(n_seq=30)
    bad = [list(seq) for seq in X]
    bad[25] = [{"w": "a"}, {"f": float("nan")}]
    with pytest.raises(ValueError, match=r"^batch 2 \(its X\[0\] is sequence 20 of the "
                                         r"stream\): X\[5\]\[1\]\['f'\] is nan"):
        encode_stream(batched(bad, y, [0, 10, 20, 30]), directory=tmp_path / "a")
    assert not (tmp_path / "a" / "corpus.json").exists()
    short = [list(labels) for labels in y]
    short[14] = short[14][:-1]
    with pytest.raises(ValueError, match=r"^batch 1 .*sequence 4 has 2 tokens in X but 1 "
                                         "labels in y"):
        encode_stream(batched(X, short, [0, 10, 30]))
    with pytest.raises(TypeError, match="batch 0 is a list; each batch must be a tuple"):
        encode_stream([X[:2]])
    with pytest.raises(ValueError, match="batch 1 has no labels, unlike the batches before"):
        encode_stream([(X[:5], y[:5]), (X[5:10], None)])
    mixed = [[str(label) for label in labels] for labels in y[:10]]
    mixed += [[1] * len(labels) for labels in y[10:20]]
    with pytest.raises(TypeError, match="y mixes labels of different types"):
        encode_stream(batched(X, mixed, [0, 10, 20]))
    with pytest.raises(ValueError, match="the stream has no sequences"):
        encode_stream(iter([]))
    with pytest.raises(ValueError, match="X and y have different numbers of sequences"):
        encode_stream([([[]], [[], []])])
    with pytest.raises(TypeError, match="hashing must be None or an int"):
        encode_stream([(X, y)], hashing=2.0)


# --- fitting on a streamed, memory-mapped corpus ------------------------------------

@pytest.fixture(scope="module")
def testb_head():
    data = read_conll(TESTB)
    return SequenceFeaturizer().transform(data.sentences[:150]), data.tags[:150]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_streamed_store_fits_the_in_memory_model(tmp_path, testb_head):
    """CRFsuite's rules (min_freq, all_possible_*) read the encoded corpus: the
    model fitted on the streamed, memory-mapped store is the in-memory fit's,
    bitwise."""
    from sklearn_crf import CRFTagger

    X, y = testb_head
    params = dict(c1=0.05, c2=0.01, max_iter=12, min_freq=2, all_possible_transitions=True,
                  all_possible_states=True)
    want = CRFTagger(**params).fit(X, y)
    corpus, y2 = encode_stream(batched(X, y, [0, 40, 41, 150]), directory=tmp_path)
    assert isinstance(corpus.tok_attr, np.memmap)
    got = CRFTagger(**params).fit(corpus, y2)
    assert got.coef_.tobytes() == want.coef_.tobytes()
    assert got.vectorizer_.feature_names_ == want.vectorizer_.feature_names_
    assert got.predict(corpus[100:150]) == want.predict(X[100:150])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_search_on_a_stored_corpus(tmp_path, testb_head):
    """A search over a pre-encoded corpus (encoded once): the scores of the
    same search over the feature dicts."""
    from sklearn.model_selection import GridSearchCV, KFold

    from sklearn_crf import CRFTagger

    X, y = testb_head
    corpus, y2 = encode_stream(batched(X, y, [0, 75, 150]), directory=tmp_path)
    grid = {"c2": [0.1, 1.0]}
    on_corpus = GridSearchCV(CRFTagger(max_iter=6), grid, cv=KFold(3)).fit(corpus, y2)
    on_dicts = GridSearchCV(CRFTagger(max_iter=6), grid, cv=KFold(3)).fit(X, y)
    np.testing.assert_allclose(on_corpus.cv_results_["mean_test_score"],
                               on_dicts.cv_results_["mean_test_score"], rtol=1e-9)
    assert on_corpus.best_estimator_.vectorizer_ is corpus.vectorizer
