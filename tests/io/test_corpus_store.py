import json
import os

import numpy as np
import pytest

from sklearn_crf import SequenceVectorizer
from sklearn_crf._io.corpus_store import CorpusWriter, LabelCodes, load_corpus, save_corpus
from sklearn_crf._features.validation import encode_labels
from sklearn_crf._features.memo import memo_items

FIELDS = ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr")


def sample(n_features=None, dense=True, n_seq=40):
    """Sequences with zero entries, values other than 1, empty sequences and
    (optionally) a float32 dense part; labels for them."""
    X, y = [], []
    for s in range(n_seq):
        seq = [{"w": f"w{(s * t) % 11}", "n": (s + t) % 3, "f": 0.5 * t, "z": False}
               for t in range(s % 5)]
        y.append([("B", "I", "O")[(s + t) % 3] for t in range(len(seq))])
        X.append((seq, np.arange(2 * len(seq), dtype=np.float32).reshape(-1, 2) - s)
                 if dense else seq)
    vec = SequenceVectorizer(n_features=n_features)
    return X, y, vec, vec.fit_encode(X)


def assert_bitwise(got, want):
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert got.n_attributes == want.n_attributes
    if want.dense is None:
        assert got.dense is None
    else:
        assert got.dense.dtype == want.dense.dtype
        assert got.dense.tobytes() == want.dense.tobytes()


@pytest.mark.parametrize("n_features", [None, 64])
@pytest.mark.parametrize("mmap", [True, False])
def test_round_trip_is_bitwise(tmp_path, n_features, mmap):
    X, y, vec, corpus = sample(n_features)
    assert len(corpus.zero_tok) and corpus.dense.dtype == np.float32
    save_corpus(tmp_path / "c", corpus, y)
    loaded, y2 = load_corpus(tmp_path / "c", mmap=mmap)
    assert_bitwise(loaded, corpus)
    assert y2 == y
    arrays = [getattr(loaded, f) for f in FIELDS] + [loaded.dense]
    assert all(isinstance(a, np.memmap) for a in arrays) == mmap
    assert not any(isinstance(a, np.memmap) for a in arrays) == (not mmap)
    # the vocabulary comes back: the loaded vectorizer encodes as the original
    lvec = loaded.vectorizer
    assert lvec is not None and lvec.n_dense_features_ == 2
    assert_bitwise(lvec.encode(X), vec.encode(X))
    if n_features is None:
        assert lvec.feature_names_ == vec.feature_names_
        assert dict(memo_items(lvec._pair_ids)).items() >= dict(memo_items(vec._pair_ids)).items()
    else:
        np.testing.assert_array_equal(lvec.hash_slots_, vec.hash_slots_)
    assert lvec.encode(loaded) is loaded


def test_memory_mapped_arrays_are_read_only(tmp_path):
    _, y, _, corpus = sample()
    save_corpus(tmp_path, corpus, y)
    loaded, _ = load_corpus(tmp_path)
    with pytest.raises(ValueError, match="read-only"):
        loaded.tok_attr[0] = 1


def test_label_codes(tmp_path):
    _, y, _, corpus = sample()
    save_corpus(tmp_path / "a", corpus, y)
    _, codes = load_corpus(tmp_path / "a", label_codes=True)
    classes, want = encode_labels(y, corpus.seq_ptr)
    assert isinstance(codes, LabelCodes) and isinstance(codes.codes, np.memmap)
    assert codes.codes.dtype == np.int32
    np.testing.assert_array_equal(codes.codes, want)
    np.testing.assert_array_equal(codes.classes, classes)
    # LabelCodes are accepted by save_corpus too: the same store
    save_corpus(tmp_path / "b", corpus, LabelCodes(want, classes))
    for name in ("labels.npy", "classes.json", "corpus.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("labels", [[3, 1, 2], [True, False, True], [0.5, -1.0, 2.0]],
                         ids=["int", "bool", "float"])
def test_labels_keep_their_type(tmp_path, labels):
    corpus = SequenceVectorizer().fit_encode([[{"w": "a"}] * 3])
    save_corpus(tmp_path, corpus, [labels])
    _, y = load_corpus(tmp_path)
    assert y == [labels] and [type(v) for v in y[0]] == [type(v) for v in labels]


def test_no_labels_no_vectorizer_empty_sequences(tmp_path):
    vec = SequenceVectorizer()
    corpus = vec.fit_encode([[], [{"w": "a"}], []])
    bare = type(corpus)(corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, corpus.seq_ptr,
                        corpus.n_attributes)
    save_corpus(tmp_path, bare)
    loaded, y = load_corpus(tmp_path)
    assert y is None and loaded.vectorizer is None and loaded.dense is None
    assert_bitwise(loaded, corpus)
    assert not (tmp_path / "labels.npy").exists()


def test_directory_must_be_empty_or_overwritten(tmp_path):
    _, y, _, corpus = sample()
    save_corpus(tmp_path, corpus, y)
    with pytest.raises(FileExistsError, match="holds a corpus store .*overwrite=True"):
        save_corpus(tmp_path, corpus, y)
    _, y2, _, small = sample(dense=False, n_seq=5)
    save_corpus(tmp_path, small, y2, overwrite=True)
    loaded, _ = load_corpus(tmp_path)
    assert_bitwise(loaded, small)
    assert not (tmp_path / "dense.npy").exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="needs a directory of its own"):
        save_corpus(tmp_path / "other", corpus, y, overwrite=True)


def test_labels_that_json_cannot_hold_are_refused_before_writing(tmp_path):
    corpus = SequenceVectorizer().fit_encode([[{"w": "a"}]])
    with pytest.raises(TypeError, match=r"the label \('a', 1\) \(tuple\) cannot be stored"):
        save_corpus(tmp_path / "c", corpus, [[("a", 1)]])
    assert not (tmp_path / "c").exists()


def test_writer_chunks_need_the_same_form(tmp_path):
    vec = SequenceVectorizer()
    writer = CorpusWriter(tmp_path)
    writer.append(vec.partial_fit_encode([[{"w": "a"}]]), np.int32([0]))
    with pytest.raises(ValueError, match="every chunk needs labels, or none"):
        writer.append(vec.partial_fit_encode([[{"w": "b"}]]))
    with pytest.raises(ValueError, match="2 label codes for a chunk of 1 tokens"):
        writer.append(vec.partial_fit_encode([[{"w": "b"}]]), np.int32([0, 0]))
    with pytest.raises(ValueError, match="dense columns"):
        writer.append(SequenceVectorizer().fit_encode([np.ones((1, 2))]), np.int32([0]))
    writer.abort()
    with pytest.raises(ValueError, match="corpus.json: missing: not a corpus store"):
        load_corpus(tmp_path)


# --- corrupt, missing, mismatched files ------------------------------------------

@pytest.fixture
def store(tmp_path):
    _, y, _, corpus = sample()
    save_corpus(tmp_path, corpus, y)
    return tmp_path


def edit_json(path, **changes):
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_missing_files(store):
    for name in ("tok_attr.npy", "dense.npy", "labels.npy", "classes.json", "vocabulary.json"):
        data = (store / name).read_bytes()
        os.remove(store / name)
        with pytest.raises(ValueError, match=f"{name}: missing"):
            load_corpus(store)
        (store / name).write_bytes(data)
    load_corpus(store)


@pytest.mark.parametrize("name, array, match", [
    ("tok_attr.npy", np.zeros(3, np.int64), "dtype int64, expected int32"),
    ("tok_attr.npy", np.zeros(3, np.int32), r"shape \(3,\), expected \(\d+,\)"),
    ("dense.npy", np.zeros((2, 2), np.float64), "dtype float64, expected float32"),
    ("tok_attr.npy", np.array([{"a": 1}], dtype=object), "not a readable .npy array"),
])
def test_mismatched_arrays(store, name, array, match):
    np.save(store / name, array, allow_pickle=True)
    with pytest.raises(ValueError, match=f"{name}: {match}"):
        load_corpus(store)


def test_truncated_and_garbled_arrays(store):
    data = (store / "tok_val.npy").read_bytes()
    (store / "tok_val.npy").write_bytes(data[:-8])
    for mmap in (True, False):
        with pytest.raises(ValueError, match="tok_val.npy: not a readable .npy array"):
            load_corpus(store, mmap=mmap)
    (store / "tok_val.npy").write_bytes(b"not numpy at all")
    with pytest.raises(ValueError, match="tok_val.npy: not a .npy array"):
        load_corpus(store)


def corrupt(store, name, index, value):
    array = np.load(store / name)
    array[index] = value
    np.save(store / name, array)


@pytest.mark.parametrize("name, index, value, match", [
    ("seq_ptr.npy", 3, 0, "decreases at index 3"),
    ("seq_ptr.npy", -1, 10**6, "must run from 0 to"),
    ("tok_ptr.npy", 0, 1, "must run from 0 to"),
    ("tok_ptr.npy", 5, 10**6, "decreases at index 6"),
    ("tok_attr.npy", 2, 10**6, r"attribute ids must be in \[0, \d+\); index 2 is 1000000"),
    ("zero_attr.npy", 0, -1, "attribute ids must be in"),
    ("zero_tok.npy", 1, 10**6, "token indices must be in"),
    ("zero_tok.npy", 4, 0, "decreases at index 4"),
    ("tok_val.npy", 4, np.nan, "value nan at flat index 4; values must be finite and not 0"),
    ("tok_val.npy", 4, 0.0, "value 0.0 at flat index 4"),
    ("dense.npy", (1, 1), np.inf, "value inf at flat index 3; values must be finite"),
    ("labels.npy", 0, 3, r"label codes must be in \[0, 3\)"),
])
def test_corrupt_arrays(store, name, index, value, match):
    corrupt(store, name, index, value)
    with pytest.raises(ValueError, match=f"{name}: {match}"):
        load_corpus(store)


def test_corrupt_hashing_vocabulary(tmp_path):
    _, y, _, corpus = sample(n_features=64)
    save_corpus(tmp_path, corpus, y)
    slots = np.load(tmp_path / "hash_slots.npy")
    corrupt(tmp_path, "hash_slots.npy", 0, 64)
    # the file that is wrong is named: hash_slots.npy, not vocabulary.json
    with pytest.raises(ValueError, match=r"hash_slots.npy: hash slots must be in \[0, 64\); "
                                         "index 0 is 64"):
        load_corpus(tmp_path)
    corrupt(tmp_path, "hash_slots.npy", 0, slots[1])
    with pytest.raises(ValueError, match="hash_slots.npy: a hash slot is listed twice"):
        load_corpus(tmp_path)


@pytest.mark.parametrize("name, changes, match", [
    ("corpus.json", {"version": 2}, "format version 2; this version reads version 1"),
    ("corpus.json", {"format": "other"}, "not a corpus store"),
    ("corpus.json", {"n_tokens": -1}, "n_tokens is -1"),
    ("corpus.json", {"n_tokens": 3}, r"seq_ptr.npy: must run from 0 to 3|shape"),
    ("corpus.json", {"dense_dtype": "int8"}, "dense_dtype is 'int8'"),
    ("corpus.json", {"n_classes": 4}, "classes.json: must list the 4 classes"),
    ("corpus.json", {"n_attributes": 1}, "attribute ids must be in"),
    ("classes.json", {"classes": ["B", "B", "O"]}, "a class is listed twice"),
    ("classes.json", {"classes": ["B", 1, "O"]}, "classes must all be str"),
    ("vocabulary.json", {"n_dense": 3}, "n_dense is 3, but corpus.json says 2"),
    ("vocabulary.json", {"attributes": ["a", "a"]}, "the attribute 'a' is listed twice"),
    ("vocabulary.json", {"attributes": ["a"], "str_pairs": {}, "num_keys": {}},
     "1 attributes, but corpus.json says"),
    ("vocabulary.json", {"str_pairs": {"w": {"w1": 0}}}, r"the memo gives \('w', 'w1'\)"),
    ("vocabulary.json", {"num_keys": {"n": 0}}, "the memo gives the key 'n' the id 0"),
])
def test_mismatched_json(store, name, changes, match):
    edit_json(store / name, **changes)
    with pytest.raises(ValueError, match=match):
        load_corpus(store)


def test_garbled_json(store):
    (store / "corpus.json").write_bytes(b"\xff{")
    with pytest.raises(ValueError, match="corpus.json: not valid JSON"):
        load_corpus(store)
    (store / "corpus.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="corpus.json: not a JSON object"):
        load_corpus(store)


def test_a_device_is_not_an_array(store):
    os.remove(store / "tok_val.npy")
    os.symlink("/dev/zero", store / "tok_val.npy")
    with pytest.raises(ValueError, match="tok_val.npy: not a regular file"):
        load_corpus(store)


def test_a_streamed_store_fits_through_the_public_route(tmp_path):
    """CRFTagger.fit(corpus, label_codes): the route encode_stream's memory bound is for."""
    from sklearn_crf import CRFTagger
    from sklearn_crf._features.streaming import encode_stream

    X = [[{"w": "Juan"}, {"w": "vive"}], [{"w": "en"}, {"w": "Madrid"}, {"w": "hoy"}]] * 20
    y = [["B-PER", "O"], ["O", "B-LOC", "O"]] * 20
    corpus, codes = encode_stream(((X[a:a + 7], y[a:a + 7]) for a in range(0, 40, 7)),
                                  directory=tmp_path / "store", label_codes=True)
    assert isinstance(codes, LabelCodes) and isinstance(codes.codes, np.memmap)
    streamed = CRFTagger(c2=0.1).fit(corpus, codes)
    in_memory = CRFTagger(c2=0.1).fit(X, y)
    np.testing.assert_array_equal(streamed.coef_, in_memory.coef_)
    assert streamed.predict(X[:2]) == y[:2]
    bad = LabelCodes(np.full(corpus.n_tokens, 5, dtype=np.int32), codes.classes)
    with pytest.raises(ValueError, match=r"y: label codes must be in \[0, 3\); index 0 is 5"):
        CRFTagger().fit(corpus, bad)
    with pytest.raises(ValueError, match="early_stopping with y as LabelCodes needs X_val"):
        CRFTagger(early_stopping=True).fit(corpus, codes)
