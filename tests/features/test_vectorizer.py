import pickle

import joblib
import numpy as np
import pycrfsuite  # in the test extra
import pytest
from sklearn.utils import murmurhash3_32

from sklearn_crf import SequenceVectorizer
from sklearn_crf._features.vectorizer import EncodedCorpus
from sklearn_crf._features.memo import ABSENT, memo_items


def test_crfsuite_semantics():
    X = [[{
        "s": "a", "f": 2.5, "i": 3, "t": True, "z": False, "b": b"x",
        "lst": ["p", "q"], "nested": {"k": "v", "n": 0.5, "deep": {"d": "e"}},
    }]]
    vec = SequenceVectorizer()
    Xt = vec.fit_transform(X).toarray()[0]
    got = {name: Xt[i] for name, i in vec.vocabulary_.items()}
    assert got == {
        "s:a": 1.0, "f": 2.5, "i": 3.0, "t": 1.0, "z": 0.0, "b:x": 1.0, "lst:p": 1.0,
        "lst:q": 1.0, "nested:k:v": 1.0, "nested:n": 0.5, "nested:deep:d:e": 1.0,
    }


def test_matches_pycrfsuite_item_semantics():
    token = {
        "s": "a", "f": 2.5, "t": True, "off": False, "lst": ["p", "q"],
        "nested": {"k": "v", "n": 0.5},
    }
    seq = pycrfsuite.ItemSequence([token])
    expected = seq.items()[0]  # with "off": 0.0, an attribute of the vocabulary
    vec = SequenceVectorizer().fit([[token]])
    row = vec.transform([[token]]).toarray()[0]
    assert {name: row[i] for name, i in vec.vocabulary_.items()} == expected


def test_unseen_attributes_are_ignored_and_offsets():
    vec = SequenceVectorizer().fit([[{"a": "x"}], [{"a": "y"}, {"b": 1}]])
    Xt = vec.transform([[{"a": "z", "b": 2.0}], [], [{"a": "x"}]])
    assert Xt.shape == (2, 3)
    assert Xt.toarray().tolist() == [[0.0, 0.0, 2.0], [1.0, 0.0, 0.0]]
    np.testing.assert_array_equal(vec.sequence_offsets([[1], [], [1]]), [0, 1, 1, 2])


def test_fit_transform_equals_fit_then_transform():
    X = [[{"w": "a", "n": 1.5}, {"w": "b"}], [{"w": "a", "x": ["u"]}]]
    a = SequenceVectorizer().fit_transform(X)
    b = SequenceVectorizer().fit(X).transform(X)
    assert (a != b).nnz == 0


@pytest.mark.parametrize(
    "X, error, match",
    [
        ([[{"a": 1}, "tok"]], TypeError, r"X\[0\]\[1\] is a str"),
        ([[{"a": 1}], [None]], TypeError, r"X\[1\]\[0\] is a NoneType"),
        ([[{"a": 1}], [{"b": float("nan")}]], ValueError, r"X\[1\]\[0\]\['b'\] is nan"),
        ([[{"a": float("inf")}]], ValueError, r"X\[0\]\[0\]\['a'\] is inf"),
        ([[{1: "x"}]], TypeError, r"X\[0\]\[0\].*key 1 of type int"),
        ([[{"a": None}]], TypeError, r"X\[0\]\[0\]\['a'\] is a NoneType"),
        ([[{"a": [1]}]], TypeError, r"X\[0\]\[0\]\['a'\] holds a int"),
        ([{"a": 1}, {"b": 2}], ValueError, "single sequence"),
        ("abc", TypeError, "list of sequences"),
        ([], ValueError, "empty"),
        (["abc"], TypeError, r"X\[0\] is a str"),
    ],
)
def test_bad_input(X, error, match):
    with pytest.raises(error, match=match):
        SequenceVectorizer().fit(X)


def test_failed_fit_keeps_vocabulary():
    vec = SequenceVectorizer().fit([[{"a": "x"}]])
    with pytest.raises(ValueError):
        vec.fit([[{"a": "y"}, {"b": float("nan")}]])
    assert vec.feature_names_ == ["a:x"]


def test_hashing_maps_names_to_stable_slots():
    from sklearn.utils import murmurhash3_32

    X = [[{"w": "a", "n": 2.0, "l": ["x"]}], [{"w": "b"}]]
    vec = SequenceVectorizer(n_features=16)
    Xt = vec.fit_transform(X)
    slots = {murmurhash3_32(name, positive=True) % 16 for name in ("w:a", "n", "l:x", "w:b")}
    assert Xt.shape == (2, 16) and vec.n_attributes_ == len(slots)
    assert sorted(vec.hash_slots_.tolist()) == sorted(slots)
    assert not hasattr(vec, "vocabulary_")
    for name, row, value in [("w:a", 0, 1.0), ("n", 0, 2.0), ("l:x", 0, 1.0), ("w:b", 1, 1.0)]:
        assert Xt[row, murmurhash3_32(name, positive=True) % 16] >= value
    # transform equals fit_transform; a slot unseen in fit has no column of its own
    assert (vec.transform(X) != Xt).nnz == 0
    zzz = murmurhash3_32("w:zzz", positive=True) % 16
    assert vec.transform([[{"w": "zzz"}]]).nnz == int(zzz in slots)
    with pytest.raises(AttributeError):
        vec.get_feature_names_out()


def test_hashing_allocates_only_the_slots_seen():
    """Issue 10, item 8: 2**20 slots, 3 attributes: 3 attribute ids."""
    vec = SequenceVectorizer(n_features=2**20)
    corpus = vec.fit_encode([[{"a": 1.0, "b": "x"}, {"c": True}]])
    assert vec.n_attributes_ == corpus.n_attributes == 3
    assert corpus.tok_attr.max() < 3
    assert len(pickle.dumps(vec)) < 10_000
    # 1000 distinct attributes: the fitted state grows with the slots, not the names
    small = SequenceVectorizer(n_features=64).fit([[{"w": f"w{i}"} for i in range(1000)]])
    assert small.n_attributes_ <= 64 and len(pickle.dumps(small)) < 5_000


def test_encode_leaves_the_fitted_vectorizer_unchanged():
    """Issue 10, item 3: only fit fills the caches."""
    vec = SequenceVectorizer().fit([[{"a": {"b": 1.0}, "n": 2.0}]])
    before = joblib.hash(vec)
    vec.encode([[{"a": "b", "n": 1.0, "m": 0.0}], [["a:b", "zz"]]])
    vec.transform([[{"a": "b"}]])
    assert joblib.hash(vec) == before


@pytest.mark.parametrize(
    "zero", [False, 0, 0.0, -0.0, np.False_, np.float64(0), np.int64(0), np.float32(0)],
    ids=["False", "0", "0.0", "-0.0", "np.False_", "np.float64", "np.int64", "np.float32"],
)
def test_one_rule_for_every_zero(zero):
    """Issue 10, item 2: whatever its type or depth, a zero is a zero entry."""
    X = [[{"z": zero, "d": {"k": zero, "e": {"f": zero}}, "w": "a"}]]
    vec = SequenceVectorizer()
    corpus = vec.fit_encode(X)
    assert vec.feature_names_ == ["z", "d:k", "d:e:f", "w:a"]
    assert corpus.zero_attr.tolist() == [0, 1, 2] and corpus.zero_tok.tolist() == [0, 0, 0]
    assert corpus.tok_attr.tolist() == [3] and corpus.tok_val.tolist() == [1.0]


def test_token_forms_of_python_crfsuite():
    """Issue 10, item 5: every token form pycrfsuite.ItemSequence accepts, same meaning."""
    tokens = [
        ["word=madrid", "shape=Xx"],
        ("a", "b"),
        {"word=madrid": 1.0, "w2": 0.5, "neg": -2},
        {"s": "x", "n": np.float32(1.5), "i": np.int64(3), "b": np.True_, "z": np.False_},
        {"l": ["p", "q"], "st": {"v"}, "nested": {"k": "v", "m": {"x": 2.0}, "l": ["u"]}},
        {"bytes": b"x", "npstr": np.str_("y"), b"bkey": 1.5, np.str_("skey"): "v",
         b"bz": 0, "d": {b"k": "w"}},
        [],
        {},
    ]
    vec = SequenceVectorizer().fit([tokens])
    Xt = vec.transform([tokens]).toarray()
    for row, item in zip(Xt, pycrfsuite.ItemSequence(tokens).items()):
        got = {vec.feature_names_[j]: row[j] for j in np.flatnonzero(row)}
        assert got == {k: v for k, v in item.items() if v != 0}
        assert all(k in vec.vocabulary_ for k in item)  # zeros join the vocabulary


def test_readme_input_format_as_written():
    """Every example of the README's "Input format" section."""
    tokens = [
        {"word.lower()": "madrid"}, {"len": 6}, {"upper": True, "title": False},
        {"n": np.float64(2.5), "k": np.int64(3)}, {"tags": ["a", "b"]}, {"d": {"k": "v"}},
        ["word=madrid", "shape=Xx"], {"z": np.float64(0), "dz": {"q": np.False_}},
    ]
    vec = SequenceVectorizer()
    Xt = vec.fit_transform([tokens]).toarray()
    rows = [{vec.feature_names_[j]: row[j] for j in np.flatnonzero(row)} for row in Xt]
    assert rows == [
        {"word.lower():madrid": 1.0}, {"len": 6.0}, {"upper": 1.0}, {"n": 2.5, "k": 3.0},
        {"tags:a": 1.0, "tags:b": 1.0}, {"d:k:v": 1.0},
        {"word=madrid": 1.0, "shape=Xx": 1.0}, {},
    ]
    assert {"title", "z", "dz:q"} <= set(vec.vocabulary_)  # zeros make attributes known


def naive_encode(X, vocab, grow, n_slots=None):
    """CRFsuite's rules written plainly, token by token, item by item: the
    arrays of an EncodedCorpus (attribute ids by name, or by hash slot)."""
    def decode(v):
        return v.decode("utf-8") if isinstance(v, bytes) else v

    def flat(key, value, prefix=""):
        name = prefix + str(decode(key))
        value = decode(value)
        if isinstance(value, str):
            return [(name + ":" + value, 1.0)]
        if isinstance(value, dict):
            return [e for k, v in value.items() for e in flat(k, v, name + ":")]
        if isinstance(value, (list, tuple, set, frozenset)):
            return [(name + ":" + decode(v), 1.0) for v in value]
        return [(name, float(value))]

    def attr(name):
        key = murmurhash3_32(name, positive=True) % n_slots if n_slots else name
        if key not in vocab and grow:
            vocab[key] = len(vocab)
        return vocab.get(key)

    tok_ptr, tok_attr, tok_val, seq_ptr, zero_tok, zero_attr = [0], [], [], [0], [], []
    for seq in X:
        for token in seq:
            if isinstance(token, dict):
                entries = [e for k, v in token.items() for e in flat(k, v)]
            else:
                entries = [(decode(name), 1.0) for name in token]
            for name, x in entries:
                a = attr(name)
                if a is None:
                    continue
                if x == 0:
                    zero_tok.append(len(tok_ptr) - 1)
                    zero_attr.append(a)
                else:
                    tok_attr.append(a)
                    tok_val.append(x)
            tok_ptr.append(len(tok_attr))
        seq_ptr.append(len(tok_ptr) - 1)
    return {"tok_ptr": np.array(tok_ptr, np.int64), "tok_attr": np.array(tok_attr, np.int32),
            "tok_val": np.array(tok_val, np.float64), "seq_ptr": np.array(seq_ptr, np.int64),
            "zero_tok": np.array(zero_tok, np.int64), "zero_attr": np.array(zero_attr, np.int32)}


def many_forms(n_sequences):
    """Sequences of every token form, with repeats, unseen values, zeros of every
    type, numbers other than 0 and 1, lists, nested dicts and bytes: enough of
    them to span several of the encoder's batches."""
    forms = [
        {"w": "a", "n": 0, "f": 2.5, "b": True, "z": np.float64(0)},
        {"w": "b", "l": ["x", "y"], "d": {"q": 1, "r": 0}, "i": np.int64(1)},
        ["w:a", "q"], ("a", b"b"), {}, [],
        {"w": "zz", "n": 1, "f": 0.5, "b": np.False_, "z": -0.0, "one": np.float32(1)},
        {"bytes": b"x", "npstr": np.str_("y"), b"bkey": 1.5, np.str_("skey"): "v", "bz": 0},
        {"s": {"v"}, "t": ("p", "q"), "big": 10**6, "neg": -2, "f1": 1.0, "f0": 0.0},
    ]
    X = []
    for s in range(n_sequences):
        seq = []
        for t in range(s % 7):
            token = forms[(s + t) % len(forms)]
            if isinstance(token, dict) and (s * t) % 3 == 1:
                token = {**token, "w": f"w{(s * t) % 50}", "new": (s + t) % 3}
            seq.append(token)
        X.append(seq)
    return X


FIELDS = ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr")


def assert_corpus_equal(corpus, want):
    for name in FIELDS:
        got = getattr(corpus, name)
        np.testing.assert_array_equal(got, want[name], err_msg=name)
        assert got.dtype == want[name].dtype, name


@pytest.mark.parametrize("n_features", [None, 2**18, 8])
def test_encode_follows_the_plain_rules(n_features):
    """The one encode loop (memo hits in batches, misses by the rules) gives the
    corpus and vocabulary of the rules applied token by token, by name or by
    hash slot (8 slots: collisions), in fit and in encode."""
    X = many_forms(700)
    X_new = many_forms(40)[::-1] + [[{"w": "unseen", "l": ["x", "new"], "n": 3}]]
    vec = SequenceVectorizer(n_features=n_features)
    vocab = {}
    assert_corpus_equal(vec.fit_encode(X), naive_encode(X, vocab, True, n_features))
    if n_features is None:
        assert list(vec.vocabulary_) == list(vocab)
    else:
        assert vec.hash_slots_.tolist() == list(vocab)
    for data in (X, X_new):
        assert_corpus_equal(vec.encode(data), naive_encode(data, vocab, False, n_features))


@pytest.mark.parametrize("extra", [
    None,  # every miss a str key with a str value: looked up by name at once
    {"npstr": np.str_("v")},  # a str subclass: that batch by the rules, item by item
    {"w": "a", "n": 2.5},  # a value other than 1 and 0
    {"d": {"k": "v"}},  # a nested value (the batch token by token)
])
def test_encode_of_unseen_str_values(extra):
    """Unseen words (a known key with an unseen str value, an unknown key) missing
    the memo in batches of many tokens give the corpus of the rules, alone or
    next to misses of other kinds."""
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(300)]

    def sentences(n, n_words, new):
        return [[{"w": words[rng.integers(n_words)], **({"new": words[rng.integers(300)]}
                                                      if new and rng.integers(3) else {}),
                  "s": "x", "b": bool(rng.integers(2)), "one": 1}
                 for _ in range(rng.integers(1, 12))] for _ in range(n)]

    X, X_new = sentences(100, 150, False), sentences(700, 300, True)
    if extra is not None:
        X_new[400][0].update(extra)
    vec, vocab = SequenceVectorizer(), {}
    assert_corpus_equal(vec.fit_encode(X), naive_encode(X, vocab, True))
    assert_corpus_equal(vec.encode(X_new), naive_encode(X_new, vocab, False))


def test_encode_reads_the_pair_memo_of_fit():
    """fit's memo of (key, value) pairs agrees with the vocabulary, so a memo hit
    gives the id the rules give; a vectorizer without a memo (state of another
    version) encodes the same."""
    X = many_forms(300)
    vec = SequenceVectorizer().fit(X)
    vocab = vec.vocabulary_
    assert vec._pair_ids
    for (key, value), idx in memo_items(vec._pair_ids):
        if isinstance(value, str):
            assert vocab[key + ":" + value] == idx
        else:
            assert idx == (vocab[key] if value else ~vocab[key])
    bare = pickle.loads(pickle.dumps(vec))
    del bare.__dict__["_pair_ids"]
    assert_corpus_equal(bare.encode(X), naive_encode(X, dict(vocab), False))


def test_pickles_with_per_key_caches_still_load():
    """The state of pickles before the pair memo: ``_str_ids`` and ``_num_ids``."""
    X = [[{"w": "a", "n": 1.0, "z": 0}], [{"w": "b", "l": ["x"]}]]
    vec = SequenceVectorizer().fit(X)
    state = vec.__getstate__()
    assert "_pair_ids" not in state and state["_str_ids"] == {"w": {"a": 0, "b": 3}}
    old = SequenceVectorizer.__new__(SequenceVectorizer)
    old.__setstate__(state)
    assert dict(memo_items(vec._pair_ids)).items() <= dict(memo_items(old._pair_ids)).items()
    assert_corpus_equal(old.encode(X), naive_encode(X, dict(vec.vocabulary_), False))


def test_slot_ids_inverts_hash_slots():
    vec = SequenceVectorizer(n_features=2**10).fit(many_forms(50))
    slot_ids = vec.slot_ids_
    assert {slot: i for i, slot in enumerate(vec.hash_slots_.tolist())} == dict(slot_ids)
    with pytest.raises(TypeError):
        slot_ids[0] = 1  # read-only
    assert not hasattr(SequenceVectorizer().fit(many_forms(5)), "slot_ids_")
    assert not hasattr(SequenceVectorizer(n_features=8), "slot_ids_")


def test_encode_errors_say_where():
    vec = SequenceVectorizer().fit(many_forms(10))
    with pytest.raises(ValueError, match=r"X\[0\]\[1\]\['f'\]"):
        vec.encode([[{"w": "a"}, {"f": float("nan")}]])
    with pytest.raises(TypeError, match=r"X\[0\]\[0\]"):
        vec.encode([[{1: "a"}]])
    # the first bad token of X, in a batch past the first
    X = many_forms(600)
    X[400] = [{"w": "a"}, {"w": "a", 2: "b"}]
    X[500] = [{"w": 1j}]
    with pytest.raises(TypeError, match=r"X\[400\]\[1\] has the feature key 2"):
        vec.encode(X)
    with pytest.raises(TypeError, match=r"X\[400\]\[1\] has the feature key 2"):
        SequenceVectorizer(n_features=64).fit(X)


def test_pickling_keeps_the_memo():
    """Pickling a fitted vectorizer leaves its pair memo in place (it used to
    pop it from the vectorizer's own __dict__, so encode lost its fast path)."""
    vec = SequenceVectorizer().fit([[{"w": "a", "n": 1.0}]])
    memo = dict(memo_items(vec._pair_ids))
    pickle.dumps(vec)
    assert dict(memo_items(vec._pair_ids)) == memo


# --- dense features (issue 21) -------------------------------------------------

def dense_corpus_input(dtype=np.float64):
    """Sequences of each dense form: (tokens, array), array only, an empty list."""
    rng = np.random.default_rng(0)
    tokens = [[{"w": "a", "z": 0}, {"w": "b", "f": 2.5}], [{"w": "a"}], []]
    arrays = [rng.normal(size=(2, 3)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype),
              rng.normal(size=(1, 3)).astype(dtype)]
    X = [(tokens[0], arrays[0]), arrays[1], (tokens[1], arrays[2]), tokens[2]]
    plain = [tokens[0], [{}] * 4, tokens[1], tokens[2]]
    return X, plain, arrays


def test_dense_forms_give_the_dense_block():
    X, plain, arrays = dense_corpus_input()
    vec = SequenceVectorizer()
    corpus = vec.fit_encode(X)
    assert vec.n_dense_features_ == corpus.n_dense == 3
    assert corpus.vectorizer is vec
    want = np.concatenate(arrays)
    assert corpus.dense.dtype == np.float64 and corpus.dense.flags.c_contiguous
    np.testing.assert_array_equal(corpus.dense, want)
    # the attributes are those of the tokens alone (an array-only sequence: no attributes)
    assert_corpus_equal(corpus, naive_encode(plain, {}, True))
    assert corpus.nbytes == sum(getattr(corpus, f).nbytes for f in FIELDS) + want.nbytes
    np.testing.assert_array_equal(vec.sequence_offsets(X), [0, 2, 6, 7, 7])
    np.testing.assert_array_equal(corpus.seq_ptr, [0, 2, 6, 7, 7])


def test_plain_sequences_have_no_dense_part():
    vec = SequenceVectorizer()
    corpus = vec.fit_encode([[{"w": "a"}]])
    assert corpus.dense is None and corpus.n_dense == 0 and vec.n_dense_features_ == 0
    assert corpus.vectorizer is vec and vec.encode([[{"w": "a"}]]).vectorizer is vec


@pytest.mark.parametrize("dtypes, want", [
    ((np.float32, np.float32), np.float32),
    ((np.float32, np.float64), np.float64),
    ((np.int64, np.float32), np.float64),
    ((np.bool_, np.uint8), np.float64),
])
def test_dense_dtype(dtypes, want):
    """float32 stays float32 (one float32 block); any other mix is float64."""
    X = [np.ones((2, 2), dtype=dtypes[0]), np.full((1, 2), 3, dtype=dtypes[1])]
    dense = SequenceVectorizer().fit_encode(X).dense
    assert dense.dtype == want
    np.testing.assert_array_equal(dense, [[1, 1], [1, 1], [3, 3]])


@pytest.mark.parametrize("X, error, match", [
    ([np.ones(3)], ValueError, r"X\[0\] is an array of 1 dimensions"),
    ([np.ones((2, 2, 2))], ValueError, r"X\[0\] is an array of 3 dimensions"),
    ([np.ones((1, 2)), np.ones((1, 2), dtype=complex)], TypeError,
     r"X\[1\] is an array of dtype complex128"),
    ([np.array([["a"]])], TypeError, r"X\[0\] is an array of dtype <U1"),
    ([np.ones((2, 2)), np.ones((2, 3))], ValueError, r"X\[1\] has 3 dense columns but X\[0\] has 2"),
    ([([{"a": 1}], np.ones((2, 2)))], ValueError, r"X\[0\] has 1 tokens but an array of 2 rows"),
    ([np.ones((1, 2)), [{"a": 1}]], ValueError, r"X\[1\] is a list of tokens without dense"),
    ([[{"a": 1}], np.ones((1, 2))], ValueError, r"X\[0\] is a list of tokens .* X\[1\] has an"),
    ([np.ones((3, 2)), np.array([[0.0, 1.0], [1.0, np.inf]])], ValueError,
     r"X\[1\] has inf at token 1, dense column 1; dense features must be finite"),
    ([np.ones((1, 2)), ("ab", np.ones((2, 2)))], TypeError, r"X\[1\] is a \(tokens, array\) tuple"),
    ([np.ones((1, 2)), 5], TypeError, r"X\[1\] is a int"),
])
def test_dense_bad_input(X, error, match):
    with pytest.raises(error, match=match):
        SequenceVectorizer().fit(X)


def test_failed_dense_fit_keeps_the_fitted_state():
    vec = SequenceVectorizer().fit([np.ones((1, 2))])
    before = joblib.hash(vec)
    with pytest.raises(ValueError):
        vec.fit([([{"a": "x"}], np.ones((1, 4))), np.array([[np.nan] * 4])])
    assert joblib.hash(vec) == before and vec.n_dense_features_ == 2


def test_encode_checks_the_number_of_dense_columns():
    vec = SequenceVectorizer().fit([([{"w": "a"}], np.ones((1, 2)))])
    with pytest.raises(ValueError, match="X has 3 dense columns per token, but the vectorizer "
                                         "was fitted with 2"):
        vec.encode([np.ones((1, 3))])
    with pytest.raises(ValueError, match="X has no dense features"):
        vec.encode([[{"w": "a"}]])
    assert vec.encode([[]]).dense.shape == (0, 2)  # no tokens: no array needed
    with pytest.raises(ValueError, match="X has 2 dense columns per token, but the vectorizer "
                                         "was fitted with 0"):
        SequenceVectorizer().fit([[{"w": "a"}]]).encode([np.ones((1, 2))])


def test_transform_appends_the_dense_columns():
    X, plain, arrays = dense_corpus_input()
    vec = SequenceVectorizer()
    Xt = vec.fit_transform(X)
    assert Xt.shape == (7, vec.n_attributes_ + 3)
    np.testing.assert_array_equal(Xt[:, vec.n_attributes_:].toarray(), np.concatenate(arrays))
    np.testing.assert_array_equal(Xt[:, :vec.n_attributes_].toarray(),
                                  SequenceVectorizer().fit_transform(plain).toarray())
    names = vec.get_feature_names_out()
    assert list(names) == vec.feature_names_ + ["dense[0]", "dense[1]", "dense[2]"]
    hashed = SequenceVectorizer(n_features=16).fit(X).transform(X)
    assert hashed.shape == (7, 16 + 3)
    np.testing.assert_array_equal(hashed[:, 16:].toarray(), np.concatenate(arrays))


def test_encode_of_its_own_corpus_is_the_corpus():
    X, _, _ = dense_corpus_input()
    vec = SequenceVectorizer()
    corpus = vec.fit_encode(X)
    assert vec.encode(corpus) is corpus


@pytest.mark.parametrize("n_features", [None, 8])
def test_encode_maps_another_vectorizers_corpus(n_features):
    """Mapped through the attribute names (hash slots): the corpus that encoding
    the feature dicts with this vectorizer gives, unknown attributes and zeros
    dropped, the dense part kept."""
    X = many_forms(80)
    other = SequenceVectorizer(n_features=n_features)
    corpus = other.fit_encode(X)
    vec = SequenceVectorizer(n_features=n_features).fit(many_forms(30)[::-1])
    got = vec.encode(corpus)
    assert got.vectorizer is vec and got.n_attributes == vec.n_attributes_
    assert_corpus_equal(got, {f: getattr(vec.encode(X), f) for f in FIELDS})
    dense_X = [(seq, np.full((len(seq), 2), s, np.float32)) for s, seq in enumerate(X)]
    dense_vec = SequenceVectorizer(n_features=n_features).fit(dense_X[::-1])
    mapped = dense_vec.encode(other.fit_encode(dense_X))
    assert mapped.dense.dtype == np.float32
    np.testing.assert_array_equal(mapped.dense, dense_vec.encode(dense_X).dense)
    assert_corpus_equal(mapped, {f: getattr(dense_vec.encode(dense_X), f) for f in FIELDS})


def test_encode_refuses_a_corpus_it_cannot_map():
    X = [[{"w": "a"}]]
    corpus = SequenceVectorizer().fit_encode(X)
    with pytest.raises(ValueError, match="non-hashing vectorizer; its attribute ids"):
        SequenceVectorizer(n_features=8).fit(X).encode(corpus)
    with pytest.raises(ValueError, match="hashed into 8 slots; this vectorizer hashes into 16"):
        SequenceVectorizer(n_features=16).fit(X).encode(
            SequenceVectorizer(n_features=8).fit_encode(X))
    bare = EncodedCorpus(corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, corpus.seq_ptr, 1)
    with pytest.raises(ValueError, match="without a vectorizer"):
        SequenceVectorizer().fit(X).encode(bare)
    with pytest.raises(ValueError, match="X has no dense features"):
        SequenceVectorizer().fit([np.ones((1, 2))]).encode(corpus)
    with pytest.raises(TypeError, match="X is an EncodedCorpus: it is encoded already"):
        SequenceVectorizer().fit(corpus)


def test_encoded_corpus_checks_its_dense_block():
    corpus = SequenceVectorizer().fit_encode([[{"w": "a"}, {"w": "b"}]])
    parts = (corpus.tok_ptr, corpus.tok_attr, corpus.tok_val, corpus.seq_ptr, 2)
    assert EncodedCorpus(*parts, dense=np.zeros((2, 3), np.float32)).n_dense == 3
    for dense, match in [(np.zeros((3, 3)), "3 rows for 2 tokens"),
                         (np.zeros(2), "2-D ndarray"),
                         (np.zeros((2, 3), np.int64), "float32 or float64"),
                         (np.asfortranarray(np.zeros((2, 3))), "non-contiguous")]:
        with pytest.raises(ValueError, match=match):
            EncodedCorpus(*parts, dense=dense)


def test_pickles_before_dense_features_load():
    vec = SequenceVectorizer().fit([[{"w": "a"}]])
    state = vec.__getstate__()
    del state["n_dense_features_"]
    old = SequenceVectorizer.__new__(SequenceVectorizer)
    old.__setstate__(state)
    assert old.n_dense_features_ == 0 and old.encode([[{"w": "a"}]]).dense is None


# --- selecting sequences (a corpus as X of cross-validation) ----------------------

def selection_data():
    X = [(seq, np.arange(2 * len(seq), dtype=np.float32).reshape(-1, 2) + s)
         for s, seq in enumerate(many_forms(60))]
    vec = SequenceVectorizer().fit(X)
    return X, vec, vec.encode(X)


def assert_same_corpus(got, want):
    assert_corpus_equal(got, {f: getattr(want, f) for f in FIELDS})
    np.testing.assert_array_equal(got.dense, want.dense)
    assert got.dense.dtype == np.float32 and got.dense.flags.c_contiguous  # as the corpus
    assert got.n_attributes == want.n_attributes and got.vectorizer is want.vectorizer


@pytest.mark.parametrize("key", [
    [5, 3, 3, 0, 59, -1], np.array([], dtype=np.int64), [], np.arange(60)[::-7],
    slice(10, 40), slice(None, None, 3), slice(50, 10, -4), slice(30, 30), slice(0, 200),
    np.arange(60) % 3 == 1, np.uint8([7, 2]),
])
def test_corpus_selection_encodes_the_selected_sequences(key):
    """corpus[key] is the corpus that encoding those sequences gives."""
    X, vec, corpus = selection_data()
    idx = np.arange(60)[key] if not isinstance(key, list) else np.array(key, dtype=int)
    assert_same_corpus(corpus[key], vec.encode([X[i] for i in idx]))


def test_corpus_slice_is_a_view():
    _, _, corpus = selection_data()
    sub = corpus[10:20]
    assert np.shares_memory(sub.tok_attr, corpus.tok_attr)
    assert np.shares_memory(sub.dense, corpus.dense)


def test_corpus_with_sklearn_indexing():
    from sklearn.model_selection import KFold
    from sklearn.utils import _safe_indexing, check_consistent_length
    from sklearn.utils.validation import _num_samples

    X, vec, corpus = selection_data()
    y = [["O"] * len(seq) for seq, _ in X]
    assert len(corpus) == _num_samples(corpus) == 60 and corpus.shape == (60,)
    check_consistent_length(corpus, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        check_consistent_length(corpus, y[:-1])
    for train, test in KFold(3, shuffle=True, random_state=0).split(corpus, y):
        assert_same_corpus(_safe_indexing(corpus, train), vec.encode([X[i] for i in train]))
    mask = np.arange(60) < 7
    assert_same_corpus(_safe_indexing(corpus, mask), vec.encode(X[:7]))


@pytest.mark.parametrize("key, error, match", [
    (3, TypeError, "not a int"), ("a", TypeError, "not a str"),
    ([0, 60], IndexError, "sequence index 60 is out of range for a corpus of 60"),
    ([-61], IndexError, "sequence index -61"),
    (np.ones(5, dtype=bool), IndexError, "a boolean mask of 5 entries"),
    ([0.5], IndexError, "must be integers or booleans"),
    (np.zeros((2, 2), dtype=int), IndexError, "must be 1-D"),
])
def test_corpus_bad_index(key, error, match):
    _, _, corpus = selection_data()
    with pytest.raises(error, match=match):
        corpus[key]


# --- a vocabulary that grows chunk by chunk ------------------------------------

@pytest.mark.parametrize("n_features", [None, 8, 2**18])
@pytest.mark.parametrize("dense", [False, True])
def test_partial_fit_encode_chunks_equal_fit_encode(n_features, dense):
    """Chunk by chunk, the vocabulary and the concatenated chunks are fit_encode's
    on the whole (bitwise), zero entries and dense parts included."""
    X = many_forms(700)
    if dense:
        X = [(seq, np.full((len(seq), 2), s / 7, np.float32)) for s, seq in enumerate(X)]
    whole_vec = SequenceVectorizer(n_features=n_features)
    whole = whole_vec.fit_encode(X)
    vec = SequenceVectorizer(n_features=n_features)
    bounds = [0, 1, 2, 50, 51, 300, 700]
    parts = [vec.partial_fit_encode(X[a:b]) for a, b in zip(bounds, bounds[1:])]
    assert [p.n_attributes for p in parts] == sorted(p.n_attributes for p in parts)
    joined = EncodedCorpus.concatenate(parts)
    assert_corpus_equal(joined, {f: getattr(whole, f) for f in FIELDS})
    assert joined.n_attributes == whole.n_attributes == vec.n_attributes_
    if dense:
        assert joined.dense.dtype == np.float32
        np.testing.assert_array_equal(joined.dense, whole.dense)
    if n_features is None:
        assert vec.feature_names_ == whole_vec.feature_names_
        assert vec.vocabulary_ == whole_vec.vocabulary_
        assert vec._pair_ids == whole_vec._pair_ids
    else:
        np.testing.assert_array_equal(vec.hash_slots_, whole_vec.hash_slots_)
        assert dict(vec.slot_ids_) == dict(whole_vec.slot_ids_)
    assert_corpus_equal(vec.encode(X), {f: getattr(whole_vec.encode(X), f) for f in FIELDS})


def _token_by_token(fit):
    """``fit()`` with every batch encoded token by token (:func:`_encode_tokens`,
    the rules item after item): the reference of the batched fit."""
    from sklearn_crf._features import encode_dicts

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encode_dicts, "_SMALL", 10**9)
        return fit()


def _str_misses(n_sequences, seed):
    """Dict tokens whose misses are mostly str keys with str values (new words),
    with names that two pairs share (``("a", "b:c")`` and ``("a:b", "c")``),
    valued keys whose 1 and 0 come late, and repeats within a batch."""
    rng = np.random.default_rng(seed)
    X = []
    for s in range(n_sequences):
        seq = []
        for _ in range(rng.integers(0, 12)):
            w = f"w{rng.integers(40 + 3 * s)}"
            tok = {"bias": 1.0, "w": w, "suf": w[-2:], "a": "b:" + w[-1], "a:b": w[-1] + ":x"}
            if rng.integers(9) == 0:
                tok["late"] = bool(rng.integers(2)) if s > 100 else 2.0
            if rng.integers(7) == 0:
                tok["a:b:" + w[-1]] = 1  # the name of the pair ("a", "b:" + w[-1])
            seq.append(tok)
        X.append(seq)
    return X


@pytest.mark.parametrize("seed", [0, 1])
def test_fit_batches_equal_the_token_by_token_rules(seed):
    """The batched fit (misses that are str keys with str values named and given
    ids all at once) gives fit_encode's corpus, vocabulary and memo, in the
    order of the rules applied item after item; so does partial_fit_encode."""
    X = _str_misses(600, seed) + many_forms(80)
    want_vec = SequenceVectorizer()
    want = _token_by_token(lambda: want_vec.fit_encode(X))
    vec = SequenceVectorizer()
    assert_corpus_equal(vec.fit_encode(X), {f: getattr(want, f) for f in FIELDS})
    assert list(vec.vocabulary_.items()) == list(want_vec.vocabulary_.items())
    assert list(memo_items(vec._pair_ids)) == list(memo_items(want_vec._pair_ids))
    grown = SequenceVectorizer()
    parts = [grown.partial_fit_encode(X[a:b]) for a, b in [(0, 90), (90, 400), (400, len(X))]]
    assert_corpus_equal(EncodedCorpus.concatenate(parts), {f: getattr(want, f) for f in FIELDS})
    assert list(memo_items(grown._pair_ids)) == list(memo_items(want_vec._pair_ids))


@pytest.mark.parametrize("n_features", [None, 8])
def test_failed_partial_fit_encode_keeps_the_vocabulary(n_features):
    vec = SequenceVectorizer(n_features=n_features)
    vec.partial_fit_encode(many_forms(30))
    before = joblib.hash(vec)
    bad = many_forms(40)[::-1] + [[{"w": "new1"}, {"f": float("nan")}]]
    with pytest.raises(ValueError, match=r"X\[40\]\[1\]\['f'\] is nan"):
        vec.partial_fit_encode(bad)
    assert joblib.hash(vec) == before
    with pytest.raises(ValueError, match="X has 2 dense columns per token, but the vectorizer"):
        vec.partial_fit_encode([np.ones((1, 2))])
    assert joblib.hash(vec) == before
    vec.set_params(n_features=16)
    with pytest.raises(ValueError, match="partial_fit_encode continues the vocabulary"):
        vec.partial_fit_encode(many_forms(3))


def test_concatenate_checks_its_parts():
    vec = SequenceVectorizer()
    a = vec.partial_fit_encode([[{"w": "a"}]])
    b = vec.partial_fit_encode([[{"w": "b"}]])
    with pytest.raises(ValueError, match="the last corpus must have the most attributes"):
        EncodedCorpus.concatenate([b, a])
    with pytest.raises(ValueError, match="no corpus"):
        EncodedCorpus.concatenate([])
    c = SequenceVectorizer().fit_encode([np.ones((1, 2))])
    with pytest.raises(ValueError, match="different numbers of dense columns"):
        EncodedCorpus.concatenate([c, b])


def test_vocabulary_state_round_trip_and_checks():
    from sklearn_crf._features.vectorizer import vectorizer_from_state, vocabulary_state

    X = many_forms(200)
    for n_features in (None, 32):
        vec = SequenceVectorizer(n_features=n_features).fit([(s, np.ones((len(s), 2)))
                                                             for s in X])
        rebuilt = vectorizer_from_state(vocabulary_state(vec))
        assert joblib.hash(rebuilt) == joblib.hash(vec)
        assert_corpus_equal(rebuilt.encode([(s, np.ones((len(s), 2))) for s in X]),
                            {f: getattr(vec.encode([(s, np.ones((len(s), 2))) for s in X]), f)
                             for f in FIELDS})
    state = vocabulary_state(SequenceVectorizer().fit([[{"w": "a", "n": 2.0}]]))
    for changes, match in [({"attributes": "w:a"}, "must be a list of str"),
                           ({"attributes": ["w:a", 3]}, "must be a list of str"),
                           ({"n_dense": -1}, "n_dense is -1"),
                           ({"str_pairs": []}, "the memo must be dicts"),
                           ({"str_pairs": {"w": "a"}}, "the memo of key 'w' is not a dict"),
                           ({"num_keys": {"w": 0}}, "the memo gives the key 'w' the id 0")]:
        with pytest.raises(ValueError, match=f"^here: .*{match}"):
            vectorizer_from_state(state._replace(**changes), where="here")
    hashed = vocabulary_state(SequenceVectorizer(n_features=8).fit([[{"w": "a"}]]))
    with pytest.raises(ValueError, match="hash slots must be a 1-D int64 array"):
        vectorizer_from_state(hashed._replace(hash_slots=[1]), where="here")
    with pytest.raises(ValueError, match="n_features is 0"):
        vectorizer_from_state(hashed._replace(n_features=0), where="here")


def _general_encode(vec, X):
    """``vec.encode(X)`` by the general loop, never the one-sentence path."""
    from sklearn_crf._features import vectorizer as _vectorizer

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_vectorizer, "encode_sentence", lambda *args: None)
        return vec.encode(X)


def _takes_the_one_sentence_path(vec, x):
    from sklearn_crf._features import encode_dicts, vocabulary

    return encode_dicts.encode_sentence([x], vocabulary.fitted_vocabulary(vec), vec) is not None


def _assert_same_corpus(a, b):
    for name in ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.n_attributes == b.n_attributes and a.vectorizer is b.vectorizer
    assert (a.dense is None and b.dense is None) or (
        a.dense.dtype == b.dense.dtype and np.array_equal(a.dense, b.dense))


def _random_sentences(rng, n, n_words):
    words = [f"w{i}" for i in range(n_words)]
    out = []
    for _ in range(n):
        sentence = []
        for _ in range(rng.integers(0, 30)):
            tok = {"bias": 1.0, "w": words[rng.integers(n_words)],
                   "suf": words[rng.integers(n_words)][-2:],
                   "title": bool(rng.integers(2)), "np_flag": np.bool_(rng.integers(2)),
                   "one": int(rng.integers(2)), "zero": 0.0}
            if rng.integers(3) == 0:
                tok[f"rare{rng.integers(50)}"] = "x"  # often unknown
            if rng.integers(5) == 0:
                tok["w"] = "w" + words[rng.integers(n_words)]  # an unknown value
            sentence.append(tok)
        out.append(sentence)
    return out


@pytest.mark.parametrize("n_features", [None, 64])
def test_one_sentence_encode_is_the_general_encode(n_features):
    rng = np.random.default_rng(0)
    vec = SequenceVectorizer(n_features=n_features).fit(_random_sentences(rng, 200, 300))
    n_fast = 0
    for x in _random_sentences(rng, 200, 400):
        _assert_same_corpus(vec.encode([x]), _general_encode(vec, [x]))
        n_fast += _takes_the_one_sentence_path(vec, x)
    assert n_fast == (0 if n_features else 200)  # hashing: the general loop


@pytest.mark.parametrize("x", [
    [],  # no tokens
    [{}],  # a token without features
    [{"w": "a"}, {"w": "nope", "other": "x"}],  # every miss dropped
    [{"w": "a", "n": 2.5}],  # a value other than 1 and 0 (the general loop)
    [{"w": "a", "n": 0}, {"n": np.float64(1.0)}],  # number keys seen with 1 and 0
    [{"w": "a", "new": True, "newer": False}],  # unknown valued attributes
    [{"w": "a", "lst": ["p", "q"]}],  # an unhashable value (the general loop)
    [{"w": "a", "nested": {"k": "v"}}],  # ditto
    [{"w": "a", "lst": ("p", "q")}],  # a hashable container: several entries
    [{"w": b"a", b"n": 1}],  # bytes
    [["w:a", "n"], {"w": "a"}],  # a list token (the general loop)
    [{"w": "a", "w2": "a"}, {"n": 0, "w": "a"}],
    [{"w": "zz", "n2": 1, "new": "q"}, {"w": "b", "n2": 0}],  # str and number misses
])
def test_one_sentence_encode_forms(x):
    vec = SequenceVectorizer().fit([[{"w": "a", "n": 0, "lst": "p", "nested:k": "v"},
                                     {"n": 1.0, "w": "b", "n2": 3.0, "lst:q": 1}]])
    _assert_same_corpus(vec.encode([x]), _general_encode(vec, [x]))


def _assert_entries_are_the_nonzero_corpus(vec, x):
    """The scoring entries of [x] are an entry per item, the non-zero
    entries of its general encoding with the others at the sink attribute,
    or there are none (the general route)."""
    return _assert_batch_entries_are_the_nonzero_corpus(vec, [x])


def _assert_batch_entries_are_the_nonzero_corpus(vec, X):
    """As above, for the sentences X at once."""
    sink = vec.n_attributes_ + 3
    entries = vec._scoring_entries(X, sink)
    if entries is None:
        return False
    entries = entries.sunk(sink)
    corpus = _general_encode(vec, X)
    lengths = [len(t) for x in X for t in x]
    assert len(entries.tok_attr) == sum(lengths)
    np.testing.assert_array_equal(np.diff(entries.tok_ptr), lengths)
    np.testing.assert_array_equal(entries.seq_ptr, corpus.seq_ptr)
    assert entries.tok_val.dtype == np.float64 and len(entries.tok_val) == 0  # all ones
    assert (corpus.tok_val == 1).all()
    keep = entries.tok_attr != sink
    kept_before = np.concatenate(([0], np.cumsum(keep)))
    for a, b in ((kept_before[entries.tok_ptr], corpus.tok_ptr),
                 (entries.tok_attr[keep], corpus.tok_attr)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    return True


def test_scoring_entries_are_the_nonzero_entries_of_encode():
    rng = np.random.default_rng(2)
    vec = SequenceVectorizer().fit(_random_sentences(rng, 200, 300))
    n_fast = sum(_assert_entries_are_the_nonzero_corpus(vec, x)
                 for x in _random_sentences(rng, 200, 400))
    assert n_fast > 150  # all but the sentences with a value other than 0 and 1


def test_scoring_entries_of_a_batch_are_the_nonzero_entries_of_encode():
    """Many sentences at once (the batch loop, its misses gathered by
    position); a sentence with a value other than 0 and 1 sends the whole
    batch to the general route."""
    rng = np.random.default_rng(3)
    vec = SequenceVectorizer().fit(_random_sentences(rng, 200, 300))
    X = _random_sentences(rng, 300, 400)
    assert _assert_batch_entries_are_the_nonzero_corpus(vec, X)
    assert _assert_batch_entries_are_the_nonzero_corpus(vec, [])
    assert not _assert_batch_entries_are_the_nonzero_corpus(
        vec, X + [[{"w": "w1", "one": 2.5}]])


@pytest.mark.parametrize("x", [
    [], [{}], [{"w": "nope"}, {"w": "a", "n": 0}],
    [{"w": "a", "n": 2.5}],  # a value other than 1 and 0: the general route
    [{"w": "a", "lst": ["p", "q"]}],  # an unhashable value: the general route
    [["w:a"]],  # a list token: the general route
])
def test_scoring_entries_forms(x):
    vec = SequenceVectorizer().fit([[{"w": "a", "n": 0}, {"n": 1.0, "w": "b"}]])
    assert _assert_entries_are_the_nonzero_corpus(vec, x) == (
        not x or all(type(t) is dict and not set(map(type, t.values())) & {float, list}
                     for t in x))


def test_scoring_entries_take_no_hashing_or_dense_vectorizer_or_small_sink():
    x = [{"w": "a"}]
    assert SequenceVectorizer(n_features=8).fit([x])._scoring_entries([x], 10) is None
    assert SequenceVectorizer().fit([(x, np.ones((1, 2)))])._scoring_entries([x], 10) is None
    vec = SequenceVectorizer().fit([[{"w": "a", "v": "b"}]])
    assert vec._scoring_entries([x], 1) is None  # a sink among the ids
    assert vec._scoring_entries([x], 2) is not None
    assert vec._scoring_entries(tuple([x]), 2) is None  # not a list: the general route
    assert vec._scoring_entries([tuple(x)], 2) is None


@pytest.mark.parametrize("x, n_entries", [
    ([{"a": "b:c"}], 1),  # names the attribute "a:b:c" of the item ("a:b", "c")
    ([{"x": "y"}], 1),  # names the number-valued attribute "x:y"
    ([{"v": "p:q"}, {"a:b": "c", "v": "zz"}], 2),  # a value with a ":"; an unknown one
    ([{"a": "zz"}, {"v": "p", "w": "q"}], 0),  # unknown attributes of open keys and another
])
def test_a_miss_of_an_open_key_is_looked_up_by_name(x, n_entries):
    """An item missing from the memo may still name an attribute when its key
    is the part before a ":" of one; such misses are looked up by name."""
    from sklearn_crf._features import vocabulary

    vec = SequenceVectorizer().fit([[{"a:b": "c", "x:y": 1.0, "v:p": "q"}]])
    assert vocabulary.open_keys(vec, vec._pair_ids) == {"a", "x", "v"}
    assert _takes_the_one_sentence_path(vec, x)
    _assert_same_corpus(vec.encode([x]), _general_encode(vec, [x]))
    assert _assert_entries_are_the_nonzero_corpus(vec, x)
    assert len(vec.encode([x]).tok_attr) == n_entries


@pytest.mark.parametrize("x, n_entries", [
    ([{"a": "b:c"}], 1),
    ([{"x": "y"}], 1),
    ([{"v": "p:q"}, {"a:b": "c", "v": "zz"}], 2),
    ([{"a": "zz"}, {"v": "p", "w": "q"}], 0),
])
def test_a_batch_looks_up_the_misses_of_open_keys_by_name(x, n_entries):
    """In a batch (looked up at once, misses resolved together), the misses of
    open keys name their attributes as one sentence's do; the others (unknown
    words of other keys) are dropped without building their names."""
    from sklearn_crf._features import vocabulary

    vec = SequenceVectorizer().fit([[{"a:b": "c", "x:y": 1.0, "v:p": "q", "w": "k"}]])
    X = [x + [{"w": "new", "u": "v"}] * 30] * 4  # over 64 tokens: the batch loop
    batch = vec.encode(X)  # the open keys not known yet: every miss looked up by name
    assert vocabulary.open_keys(vec, vec._pair_ids, compute=False) is None
    assert len(batch.tok_attr) == 4 * n_entries
    one = vec.encode([X[0]])  # one sentence: the open keys computed
    np.testing.assert_array_equal(batch.tok_attr, np.tile(one.tok_attr, 4))
    assert vocabulary.open_keys(vec, vec._pair_ids, compute=False) == {"a", "x", "v"}
    np.testing.assert_array_equal(vec.encode(X).tok_attr, batch.tok_attr)  # now known


def test_open_keys_follow_a_partial_fit():
    """A partial fit that adds a name with a ":" but no memo entry (a number
    other than 0 and 1) opens its key."""
    vec = SequenceVectorizer()
    vec.partial_fit_encode([[{"w": "a"}]])
    x = [{"x": "y", "w": "zz"}]
    assert len(vec.encode([x]).tok_attr) == 0  # open keys computed: none
    vec.partial_fit_encode([[{"x:y": 2.5}]])
    assert len(vec.encode([x]).tok_attr) == 1
    _assert_same_corpus(vec.encode([x]), _general_encode(vec, [x]))
    assert _assert_entries_are_the_nonzero_corpus(vec, x)


@pytest.mark.parametrize("x, error, match", [
    ([{"w": "a"}, {"w": "b", "n": float("nan")}], ValueError, r"X\[0\]\[1\]\['n'\] is nan"),
    ([{"w": "a", "n": float("inf")}], ValueError, r"X\[0\]\[0\]\['n'\] is inf"),
    ([{"w": "a"}, {"n": 10**400}], ValueError, r"X\[0\]\[1\]\['n'\] is an int too large"),
    ([{"w": "a"}, {"w": b"\xff"}], ValueError, r"X\[0\]\[1\]\['w'\] holds bytes"),
    ([{"w": "a"}, {"w": None}], TypeError, r"X\[0\]\[1\]\['w'\] is a NoneType"),
    ([{"w": "a", 3: "x"}], TypeError, r"X\[0\]\[0\] has the feature key 3"),
    ([{"w": "a"}, "tok"], TypeError, r"X\[0\]\[1\] is a str"),
])
def test_one_sentence_encode_errors(x, error, match):
    vec = SequenceVectorizer().fit([[{"w": "a", "n": 0}, {"n": 1}]])
    with pytest.raises(error, match=match):
        vec.encode([x])
    with pytest.raises(error, match=match):
        _general_encode(vec, [x])


def test_one_sentence_encode_after_pickling_and_partial_fit():
    X = [[{"w": "a", "t": True}], [{"w": "b", "t": False}]]
    vec = SequenceVectorizer()
    vec.partial_fit_encode(X[:1])
    vec.partial_fit_encode(X[1:])
    for v in (vec, pickle.loads(pickle.dumps(vec))):
        x = [{"w": "b", "t": False}, {"w": "c", "t": 1}]
        _assert_same_corpus(v.encode([x]), _general_encode(v, [x]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_sentence_encode_with_dense_features(dtype):
    rng = np.random.default_rng(1)
    X = [([{"w": "a", "t": False}, {"w": "b"}], rng.normal(size=(2, 3)).astype(dtype)),
         ([{"w": "c", "t": True}], rng.normal(size=(1, 3)).astype(dtype))]
    vec = SequenceVectorizer().fit(X)
    x = ([{"w": "b", "t": False}, {"w": "z"}, {"t": True}],
         rng.normal(size=(3, 3)).astype(dtype))
    assert _takes_the_one_sentence_path(vec, x[0])
    for sentence in (x, x[1], (tuple(x[0]), x[1])):
        _assert_same_corpus(vec.encode([sentence]), _general_encode(vec, [sentence]))
    with pytest.raises(ValueError, match="X has no dense features"):
        vec.encode([x[0]])


# --- the fitted state: one writer for every path ------------------------------------

def _fitted_state(vec):
    """A vectorizer's fitted attributes, in ``__dict__`` order, as comparable values."""
    return [(name, value.tolist() if isinstance(value, np.ndarray) else
             list(value.items()) if isinstance(value, dict) else value)
            for name, value in vec.__dict__.items()]


@pytest.mark.parametrize("n_features", [None, 2**10])
def test_every_path_writes_the_fitted_state_of_fit(n_features):
    """fit, chunks of partial_fit_encode, a VocabularyState and a pickle give one
    fitted state: the same attributes and values (in the same order, but a
    pickle's memo, which comes last, as it did)."""
    from sklearn_crf._features.vectorizer import vectorizer_from_state, vocabulary_state

    X = [(seq, np.ones((len(seq), 2))) for seq in many_forms(120)]
    fitted = SequenceVectorizer(n_features=n_features).fit(X)
    grown = SequenceVectorizer(n_features=n_features)
    for a, b in [(0, 1), (1, 50), (50, 120)]:
        grown.partial_fit_encode(X[a:b])
    rebuilt = vectorizer_from_state(vocabulary_state(fitted))
    unpickled = pickle.loads(pickle.dumps(fitted))
    want = _fitted_state(fitted)
    assert _fitted_state(grown) == want
    if n_features is not None:  # (by name, these two rebuild the memo from per-key dicts)
        assert _fitted_state(rebuilt) == want
        assert _fitted_state(unpickled) == want
    assert [name for name, _ in _fitted_state(rebuilt)] == [name for name, _ in want]
    for vec in (rebuilt, unpickled):
        assert {name for name, _ in _fitted_state(vec)} == {name for name, _ in want}
        assert_corpus_equal(vec.encode(X), {f: getattr(fitted.encode(X), f) for f in FIELDS})


@pytest.mark.parametrize("hashing", [None, 64])
def test_encoded_featurizer_writes_the_fitted_state_of_fit(hashing):
    """The featurizers' encoded fit gives its vectorizer the vocabulary, slots and
    attribute order of a vectorizer fitted on the dicts."""
    from sklearn_crf import SequenceFeaturizer

    sentences = [["Juan", "vive", "en", "Madrid", "."], ["El", "río", "Ebro"], []]
    by_dicts = SequenceVectorizer(n_features=hashing).fit(
        list(SequenceFeaturizer().transform(sentences)))
    encoded = SequenceFeaturizer(output="encoded", hashing=hashing).fit(sentences).vectorizer_
    want = [(n, v) for n, v in _fitted_state(by_dicts) if n != "_pair_ids"]
    assert [(n, v) for n, v in _fitted_state(encoded) if n != "_pair_ids"] == want
    if hashing is None:
        assert (dict(memo_items(by_dicts._pair_ids)).items()
                <= dict(memo_items(encoded._pair_ids)).items())


def test_pickles_with_every_slot_a_column_still_load():
    """The state of hashing vectorizers before slots were ids: ``_hash_slots``,
    every slot of MurmurHash3 an attribute id."""
    old = SequenceVectorizer.__new__(SequenceVectorizer)
    old.__setstate__({"n_features": 8, "n_attributes_": 8, "_hash_slots": 8})
    assert old.hash_slots_.tolist() == list(range(8)) and dict(old.slot_ids_) == {
        s: s for s in range(8)}
    assert old.n_dense_features_ == 0
    corpus = old.encode([[{"w": "a", "n": 2.0}]])
    want = sorted(murmurhash3_32(name, positive=True) % 8 for name in ("w:a", "n"))
    assert sorted(corpus.tok_attr.tolist()) == want


def test_corpora_pickled_under_the_vectorizer_module_still_load():
    """EncodedCorpus lived in the vectorizer module: its pickles name that module."""
    corpus = SequenceVectorizer().fit_encode([[{"w": "a", "n": 0}, {"w": "b"}]])
    data = pickle.dumps(corpus, protocol=0)  # (text globals: the module name can be edited)
    where = f"{type(corpus).__module__}\nEncodedCorpus".encode()
    assert data.count(where) == 1
    old = pickle.loads(data.replace(where, b"sklearn_crf._features.vectorizer\nEncodedCorpus"))
    assert type(old) is type(corpus) and old.vectorizer.vocabulary_ == {"w:a": 0, "n": 1, "w:b": 2}
    assert_corpus_equal(old, {f: getattr(corpus, f) for f in FIELDS})


def test_scoring_entries_of_feature_dicts_once_read():
    """A featurizer's FeatureDicts: from its tokens until read (a cell per
    feature the token may have: its dict's entries in order, and ABSENT for
    the others), then its dicts, as a list of them."""
    from sklearn_crf import SequenceFeaturizer, TemplateFeaturizer

    sentences = [["Hola", "mundo", "."], ["Adiós", "Juan"], ["nuevo"], []]
    featurizer = SequenceFeaturizer()
    vec = SequenceVectorizer().fit(list(featurizer.transform(sentences[:2])))
    X = featurizer.transform(sentences)
    sink = vec.n_attributes_
    tokens = vec._scoring_entries(X, sink)
    dicts = vec._scoring_entries(list(X), sink)
    np.testing.assert_array_equal(tokens.seq_ptr, dicts.seq_ptr)
    assert len(tokens.tok_val) == len(dicts.tok_val) == 0
    for t in range(len(dicts.tok_ptr) - 1):
        cells = tokens.tok_attr[tokens.tok_ptr[t]:tokens.tok_ptr[t + 1]]
        items = dicts.tok_attr[dicts.tok_ptr[t]:dicts.tok_ptr[t + 1]]
        np.testing.assert_array_equal(cells[cells != ABSENT], items[items != ABSENT])
    list(X)  # read: the dicts are built
    got = vec._scoring_entries(X, sink)
    for a, b in zip(got, dicts):
        np.testing.assert_array_equal(a, b)
    assert _assert_batch_entries_are_the_nonzero_corpus(vec, list(X))
    templates = TemplateFeaturizer()  # no entries from its tokens: its dicts'
    vec = SequenceVectorizer().fit(list(templates.transform(sentences[:2])))
    assert vec._scoring_entries(templates.transform(sentences), sink) is None
