"""CRFsuite model files: import, export, and the reader as a parser of untrusted input.

python-crfsuite (``pycrfsuite``) is the oracle: models it trains are imported,
and the files written here are opened by its ``Tagger``.
"""

import os
import struct
import tempfile
import warnings

import numpy as np
import pycrfsuite
import pytest
import sklearn_crfsuite
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer, load_crfsuite, save_crfsuite
from sklearn_crf._io.crfsuite import _cqdb_bytes, _hashlittle, _parse_crfsuite
from sklearn_crf.datasets import load_conll2002

HEADER = struct.Struct("<4sI4s9I")


def train_pycrfsuite(X, y, path, **params):
    """Train python-crfsuite's lbfgs on (X, y) into the model file ``path``."""
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params(params)
    trainer.train(str(path))
    return path


def pycrfsuite_outputs(path, X, labels):
    """(Viterbi labels, marginals as arrays over ``labels``) of pycrfsuite's Tagger."""
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    tags, margs = [], []
    for xseq in X:
        tags.append(tagger.tag(xseq))
        margs.append(np.array(
            [[tagger.marginal(label, t) for label in labels] for t in range(len(xseq))]
        ).reshape(len(xseq), len(labels)))
    tagger.close()
    return tags, margs


def marginal_arrays(crf, X):
    return [
        np.array([[m[label] for label in crf.classes_] for m in seq]).reshape(len(seq), -1)
        for seq in crf.predict_marginals(X)
    ]


def assert_tags_like_pycrfsuite(crf, path, X):
    """Viterbi labels identical and marginals within 1e-12 of pycrfsuite's on ``path``."""
    tags, margs = pycrfsuite_outputs(path, X, crf.classes_.tolist())
    assert crf.predict(X) == tags
    for got, want in zip(marginal_arrays(crf, X), margs):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def conll():
    """500 CoNLL-2002 training sentences and 300 of esp.testb, featurized, and a
    pycrfsuite model trained on the former (c1 = c2 = 0.1, 50 iterations)."""
    featurizer = SequenceFeaturizer()
    train = load_conll2002("train")
    test = load_conll2002("testb")
    X = featurizer.transform(train.sentences[:500])
    y = train.tags[:500]
    X_test = featurizer.transform(test.sentences[:300])
    path = os.path.join(tempfile.mkdtemp(), "conll.crfsuite")
    train_pycrfsuite(X, y, path, c1=0.1, c2=0.1, max_iterations=50)
    return X, y, X_test, path


@pytest.fixture(scope="module")
def small_model():
    """The bytes of a small pycrfsuite model (for the fuzzer) and its training data."""
    rng = np.random.default_rng(0)
    words = ["el", "rey", "Madrid", "de", "Ana", "ví", "ß", "x"]
    X, y = [], []
    for _ in range(30):
        n = int(rng.integers(1, 6))
        X.append([{"w": str(rng.choice(words)), "len": float(rng.integers(1, 5))}
                  for _ in range(n)])
        y.append([str(rng.choice(["O", "B-PER", "I-PER", "B-LOC"])) for _ in range(n)])
    path = os.path.join(tempfile.mkdtemp(), "small.crfsuite")
    train_pycrfsuite(X, y, path, c1=0.05, c2=0.01, max_iterations=30)
    with open(path, "rb") as f:
        return f.read(), X, y


def test_hashlittle_matches_lookup3_test_vectors():
    # lookup3.c's driver: hashlittle("Four score and seven years ago", 30, 0)
    assert _hashlittle([b"Four score and seven years ago"]).tolist() == [0x17770551]
    # "" + NUL, and keys of every length class land in their own groups
    keys = [b"\x00", b"a" * 12, b"b" * 13, b"c" * 24, b"d" * 25]
    one_by_one = [int(_hashlittle([k])[0]) for k in keys]
    assert _hashlittle(keys).tolist() == one_by_one


def test_string_databases_are_crfsuites_byte_for_byte(conll):
    _, _, _, path = conll
    with open(path, "rb") as f:
        data = f.read()
    model = _parse_crfsuite(data, path)
    off_labels, off_attrs = HEADER.unpack_from(data)[8:10]
    assert _cqdb_bytes(model.labels) == data[off_labels:off_attrs]
    attrs = _cqdb_bytes(model.attributes)
    assert attrs == data[off_attrs:off_attrs + len(attrs)]


def test_import_tags_like_pycrfsuite_on_conll2002(conll):
    X, _, X_test, path = conll
    crf = load_crfsuite(path)
    assert crf.classes_.tolist() == sorted(pycrfsuite_labels(path))
    assert_tags_like_pycrfsuite(crf, path, X_test)
    assert_tags_like_pycrfsuite(crf, path, X[:50])


def pycrfsuite_labels(path):
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    return tagger.labels()


def test_import_keeps_every_weight_at_full_precision(conll):
    """Against the file's FEAT records read with struct here, named through
    python-crfsuite's own id <-> name maps: every weight exactly."""
    _, _, _, path = conll
    crf = load_crfsuite(path)
    with open(path, "rb") as f:
        data = f.read()
    off_features = HEADER.unpack_from(data)[7]
    _, _, n_features = struct.unpack_from("<4sII", data, off_features)
    records = struct.iter_unpack(
        "<IIId", data[off_features + 12: off_features + 12 + 20 * n_features]
    )
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    info = tagger.info()
    attr_name = {int(i): name for name, i in info.attributes.items()}
    label_name = {int(i): name for name, i in info.labels.items()}
    state, trans = {}, {}
    for ftype, src, dst, weight in records:
        if ftype == 0:
            state[attr_name[src], label_name[dst]] = weight
        else:
            trans[label_name[src], label_name[dst]] = weight
    assert crf.state_features_ == state  # exact float64 equality
    assert crf.transition_features_ == trans
    assert crf.vectorizer_.feature_names_ == [attr_name[i] for i in range(len(attr_name))]
    dumped = info.state_features  # sklearn-crfsuite's source: a 6-decimal text dump
    assert dumped.keys() == state.keys()
    assert 0 < max(abs(dumped[k] - state[k]) for k in state) <= 5e-7


def test_export_tags_like_the_tagger_in_pycrfsuite(conll, tmp_path):
    _, _, X_test, path = conll
    crf = load_crfsuite(path)
    out = tmp_path / "back.crfsuite"
    save_crfsuite(crf, out)
    tags, _ = pycrfsuite_outputs(out, X_test, crf.classes_.tolist())
    original, _ = pycrfsuite_outputs(path, X_test, crf.classes_.tolist())
    assert tags == original == crf.predict(X_test)


def test_load_save_load_is_bitwise_stable(conll, tmp_path):
    _, _, _, path = conll
    first = load_crfsuite(path)
    save_crfsuite(first, tmp_path / "a.crfsuite")
    second = load_crfsuite(tmp_path / "a.crfsuite")
    save_crfsuite(second, tmp_path / "b.crfsuite")
    assert (tmp_path / "a.crfsuite").read_bytes() == (tmp_path / "b.crfsuite").read_bytes()
    assert second.coef_.tobytes() == first.coef_.tobytes()
    assert second.vectorizer_.feature_names_ == first.vectorizer_.feature_names_
    for field in ("attr_ptr", "attr_label", "trans_from", "trans_to"):
        np.testing.assert_array_equal(
            getattr(second.layout_, field), getattr(first.layout_, field)
        )


def test_warm_start_begins_from_the_imported_model(small_model, tmp_path):
    _, X, y = small_model
    path = train_pycrfsuite(X, y, tmp_path / "l2.crfsuite", c1=0.0, c2=0.5,
                            max_iterations=500, epsilon=1e-8, delta=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cold = CRFTagger(c2=0.5, max_iter=2).fit(X, y)
        warm = load_crfsuite(path).set_params(c2=0.5, max_iter=2, warm_start=True).fit(X, y)
    converged = CRFTagger(c2=0.5, tol=0, max_iter=1000).fit(X, y)
    assert warm.loss_ < cold.loss_
    assert warm.loss_ == pytest.approx(converged.loss_, rel=1e-6)


def test_imported_tagger_has_no_training_history(small_model, tmp_path):
    data, _, _ = small_model
    (tmp_path / "m.crfsuite").write_bytes(data)
    crf = load_crfsuite(tmp_path / "m.crfsuite")
    assert crf.n_iter_ == 0 and crf.loss_curve_.shape == (0,) and np.isnan(crf.loss_)
    assert crf.get_params() == CRFTagger().get_params()


def test_import_with_the_training_parameters_warm_starts_under_them(small_model, tmp_path):
    """A CRFsuite file does not hold its training parameters: given to
    load_crfsuite, they are the tagger's, and a warm start continues the
    training under them (the same optimum as a cold fit)."""
    data, X, y = small_model  # trained with c1=0.05, c2=0.01
    (tmp_path / "m.crfsuite").write_bytes(data)
    params = dict(c1=0.05, c2=0.01, all_possible_transitions=True)
    crf = load_crfsuite(tmp_path / "m.crfsuite", **params, warm_start=True, tol=1e-9)
    assert {k: crf.get_params()[k] for k in params} == params and crf.warm_start is True
    assert crf.predict(X) == load_crfsuite(tmp_path / "m.crfsuite").predict(X)
    converged = CRFTagger(**params, tol=1e-9).fit(X, y)
    assert crf.fit(X, y).loss_ == pytest.approx(converged.loss_, rel=1e-6)


def test_import_parameters_are_checked(small_model, tmp_path):
    data, _, _ = small_model
    (tmp_path / "m.crfsuite").write_bytes(data)
    with pytest.raises(TypeError, match=r"CRFTagger parameters it does not have: \['c3'\]"):
        load_crfsuite(tmp_path / "m.crfsuite", c3=1.0)
    with pytest.raises(ValueError, match="The 'c2' parameter of CRFTagger must be"):
        load_crfsuite(tmp_path / "m.crfsuite", c2=-1.0)


def test_import_from_a_fitted_sklearn_crfsuite_crf(small_model):
    _, X, y = small_model
    ref = sklearn_crfsuite.CRF(c1=0.05, c2=0.02, max_iterations=40,
                               all_possible_transitions=True).fit(X, y)
    crf = load_crfsuite(ref)
    assert crf.get_params()["c1"] == 0.05 and crf.get_params()["c2"] == 0.02
    assert crf.max_iter == 40 and crf.all_possible_transitions is True
    assert crf.predict(X) == [ref.predict_single(x) for x in X]
    for got, want in zip(crf.predict_marginals(X), map(ref.predict_marginals_single, X)):
        for g, w in zip(got, want):
            assert g.keys() == w.keys()
            np.testing.assert_allclose(list(g.values()), [w[k] for k in g], atol=1e-12)
    assert crf.state_features_.keys() == ref.state_features_.keys()
    assert load_crfsuite(ref, c2=0.5).get_params()["c2"] == 0.5  # given parameters win


def test_unfitted_sklearn_crfsuite_crf_is_a_value_error():
    with pytest.raises(ValueError, match="not fitted"):
        load_crfsuite(sklearn_crfsuite.CRF())


def test_bytes_path_is_accepted(small_model, tmp_path):
    data, X, _ = small_model
    (tmp_path / "m.crfsuite").write_bytes(data)
    crf = load_crfsuite(os.fsencode(tmp_path / "m.crfsuite"))
    assert crf.predict(X) == load_crfsuite(tmp_path / "m.crfsuite").predict(X)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused_before_reading():
    with pytest.raises(ValueError, match="not a regular file"):
        load_crfsuite("/dev/zero")


def test_source_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="path of a CRFsuite model file"):
        load_crfsuite(12)


def test_save_of_a_fitted_tagger_tags_identically_in_pycrfsuite(toy_ner, tmp_path):
    X, y = toy_ner
    crf = CRFTagger(c1=0.05, c2=0.01, all_possible_transitions=True).fit(X, y)
    path = tmp_path / "toy.crfsuite"
    save_crfsuite(crf, path)
    assert_tags_like_pycrfsuite(crf, path, X)
    ref = sklearn_crfsuite.CRF(model_filename=str(path))
    assert [ref.predict_single(x) for x in X] == crf.predict(X)
    back = load_crfsuite(path)
    assert back.state_features_ == crf.state_features_
    assert back.transition_features_ == crf.transition_features_


def test_save_keeps_only_non_zero_weights(toy_ner, tmp_path):
    X, y = toy_ner
    crf = CRFTagger(c1=0.5, c2=0.01).fit(X, y)
    assert np.any(crf.coef_ == 0)
    save_crfsuite(crf, tmp_path / "m.crfsuite")
    back = load_crfsuite(tmp_path / "m.crfsuite")
    assert np.all(back.coef_ != 0)
    assert back.vectorizer_.feature_names_ == crf.attributes_
    assert back.predict(X) == crf.predict(X)


def test_save_rejects_int_labels(tmp_path):
    crf = CRFTagger().fit([[{"a": "x"}, {"a": "y"}]], [[1, 2]])
    with pytest.raises(TypeError, match="str labels"):
        save_crfsuite(crf, tmp_path / "m.crfsuite")


def test_save_rejects_hashed_attributes(tmp_path):
    crf = CRFTagger(hashing=16).fit([[{"a": "x"}, {"a": "y"}]], [["p", "q"]])
    with pytest.raises(ValueError, match="hashes its attributes"):
        save_crfsuite(crf, tmp_path / "m.crfsuite")


def test_save_rejects_nul_in_a_name(tmp_path):
    crf = CRFTagger().fit([[{"a": "x\x00y"}, {"a": "y"}]], [["p", "q"]])
    with pytest.raises(ValueError, match="NUL"):
        save_crfsuite(crf, tmp_path / "m.crfsuite")


def test_a_model_without_state_features_loads(tmp_path):
    crf = CRFTagger(c1=100.0, all_possible_transitions=True).fit(
        [[{"a": "x"}, {"a": "y"}]], [["p", "q"]]
    )
    save_crfsuite(crf, tmp_path / "m.crfsuite")
    back = load_crfsuite(tmp_path / "m.crfsuite")
    assert back.vectorizer_.feature_names_ == []
    assert back.predict([[{"a": "x"}]]) == crf.predict([[{"a": "x"}]])


# ---------------------------------------------------------------------------
# malformed files: a ValueError naming the file and the problem


def load_bytes(data, tmp_path, name="bad.crfsuite"):
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return load_crfsuite(path)


def patched(data, offset, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return out


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d[:30], "shorter than the 48-byte header"),
        (lambda d: d[:-10], "header says the file has"),
        (lambda d: b"XCRF" + d[4:], "bad magic number"),
        (lambda d: d[:8] + b"WXYZ" + d[12:], "model type"),
        (lambda d: patched(d, 12, "<I", 101), "format version"),
        (lambda d: patched(d, 20, "<I", 0), "no labels"),
        (lambda d: patched(d, 28, "<I", 2**32 - 5), "outside the file"),  # off_features
        (lambda d: patched(d, 48 + 8, "<I", 2**31), "do not fit"),  # FEAT count
        (lambda d: patched(d, 24, "<I", 10**6), "1000000 attributes"),  # num_attrs
        (lambda d: patched(d, 20, "<I", 2**20), "justifies"),  # num_labels: L * L weights
    ],
)
def test_malformed_header_is_a_clear_value_error(small_model, tmp_path, mutate, message):
    data, _, _ = small_model
    with pytest.raises(ValueError, match=message) as err:
        load_bytes(mutate(data), tmp_path)
    assert "bad.crfsuite" in str(err.value)


def test_non_utf8_attribute_name_is_a_value_error(tmp_path):
    crf = CRFTagger().fit([[{"w": "caf\u00e9"}, {"w": "x"}]], [["p", "q"]])
    save_crfsuite(crf, tmp_path / "m.crfsuite")
    data = (tmp_path / "m.crfsuite").read_bytes()
    assert data.count("caf\u00e9".encode()) == 1
    bad = data.replace("caf\u00e9".encode(), b"caf\xff\xfe")
    with pytest.raises(ValueError, match="not UTF-8"):
        load_bytes(bad, tmp_path)


def test_overlapping_reference_lists_are_a_value_error(small_model, tmp_path):
    data, _, _ = small_model
    off_attrrefs = HEADER.unpack_from(data)[11]
    first = struct.unpack_from("<I", data, off_attrrefs + 12)[0]
    bad = patched(data, off_attrrefs + 16, "<I", first)  # attribute 1 -> attribute 0's list
    with pytest.raises(ValueError, match="overlap|listed under"):
        load_bytes(bad, tmp_path)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_model_files_load_or_raise_value_error(small_model, data):
    """Truncations, byte flips and overwritten uint32 fields (counts, offsets) of a
    real model file: success or ValueError only."""
    original, X, _ = small_model
    buf = bytearray(original)
    if data.draw(st.booleans(), label="truncate"):
        buf = buf[: data.draw(st.integers(0, len(buf) - 1), label="length")]
    interesting = st.sampled_from([0, 1, 2, 4, 12, 48, len(original), 2**31, 2**32 - 1])
    for _ in range(data.draw(st.integers(0, 8), label="edits") if len(buf) >= 4 else 0):
        i = data.draw(st.integers(0, len(buf) - 4), label="at")
        if data.draw(st.booleans(), label="word"):
            value = data.draw(interesting | st.integers(0, 2**32 - 1), label="uint32")
            struct.pack_into("<I", buf, i, value)
        else:
            buf[i] = data.draw(st.integers(0, 255), label="byte")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.crfsuite")
        with open(path, "wb") as f:
            f.write(buf)
        try:
            crf = load_crfsuite(path)
        except ValueError as err:
            assert "fuzz.crfsuite" in str(err)
        else:
            crf.predict(X[:3])
