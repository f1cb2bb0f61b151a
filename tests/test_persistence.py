"""Saving models: save_model / load_model (data only), pickle, joblib and skops.io."""

import copy
import io
import json
import os
import pickle
import re
import tempfile
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest
import skops.io as sio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sklearn_crf import CRFTagger, load_crfsuite, load_model, save_crfsuite, save_model

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def fitted():
    """A small fitted tagger (str labels, L1 so some weights are 0) and its data."""
    rng = np.random.default_rng(1)
    words = ["el", "rey", "Madrid", "de", "Ana", "ví"]
    X, y = [], []
    for _ in range(25):
        n = int(rng.integers(1, 6))
        X.append([{"w": str(rng.choice(words)), "len": float(rng.integers(1, 4))}
                  for _ in range(n)])
        y.append([str(rng.choice(["O", "B-PER", "B-LOC"])) for _ in range(n)])
    crf = CRFTagger(c1=0.05, c2=0.01, max_iter=300, all_possible_transitions=True).fit(X, y)
    return crf, X, y


def assert_same_tagger(got, want, X):
    assert got.get_params() == want.get_params()
    assert got.classes_.tolist() == want.classes_.tolist()
    assert got.classes_.dtype == want.classes_.dtype
    assert got.coef_.tobytes() == want.coef_.tobytes()
    for field in ("attr_ptr", "attr_label", "trans_from", "trans_to"):
        np.testing.assert_array_equal(getattr(got.layout_, field), getattr(want.layout_, field))
    assert got.vectorizer_.feature_names_ == want.vectorizer_.feature_names_
    assert got.n_iter_ == want.n_iter_
    np.testing.assert_array_equal(got.loss_curve_, want.loss_curve_)
    assert got.loss_ == want.loss_ or (np.isnan(got.loss_) and np.isnan(want.loss_))
    assert got.predict(X) == want.predict(X)
    assert got.predict_marginals(X) == want.predict_marginals(X)


def test_save_load_model_restores_the_tagger(fitted, tmp_path):
    crf, X, _ = fitted
    save_model(crf, tmp_path / "m.crf", metadata={"featurizer": {"window": 2}, "note": "é"})
    back, metadata = load_model(tmp_path / "m.crf", return_metadata=True)
    assert_same_tagger(back, crf, X)
    assert metadata == {"featurizer": {"window": 2}, "note": "é"}
    assert load_model(tmp_path / "m.crf").coef_.tobytes() == crf.coef_.tobytes()


def test_saved_bytes_depend_only_on_the_model(fitted, tmp_path):
    crf, _, _ = fitted
    save_model(crf, tmp_path / "a.crf", metadata=[1])
    save_model(load_model(tmp_path / "a.crf"), tmp_path / "b.crf", metadata=[1])
    assert (tmp_path / "a.crf").read_bytes() == (tmp_path / "b.crf").read_bytes()


def test_a_set_of_allowed_pairs_is_saved_as_a_list(fitted, tmp_path):
    crf, X, _ = fitted
    pairs = {("O", "B-PER"), ("B-PER", "O"), ("O", "O"), ("O", "B-LOC"), ("B-LOC", "O")}
    constrained = copy.deepcopy(crf).set_params(transition_constraints=pairs)
    save_model(constrained, tmp_path / "m.crf")
    back = load_model(tmp_path / "m.crf")
    assert {tuple(p) for p in back.transition_constraints} == pairs
    assert back.predict(X) == constrained.predict(X)


def test_a_parameter_json_cannot_hold_is_a_clear_error(fitted, tmp_path):
    crf, _, _ = fitted
    odd = copy.deepcopy(crf).set_params(random_state=np.random.RandomState(0))
    with pytest.raises(TypeError, match="a parameter of this tagger cannot be written"):
        save_model(odd, tmp_path / "m.crf")


def test_int_labels_round_trip(tmp_path):
    X = [[{"w": "a"}, {"w": "b"}], [{"w": "b"}]]
    crf = CRFTagger().fit(X, [[3, 1], [1]])
    save_model(crf, tmp_path / "m.crf")
    back = load_model(tmp_path / "m.crf")
    assert back.classes_.dtype == np.int64
    assert_same_tagger(back, crf, X)


def test_an_imported_crfsuite_model_round_trips(fitted, tmp_path):
    crf, X, _ = fitted
    save_crfsuite(crf, tmp_path / "m.crfsuite")
    imported = load_crfsuite(tmp_path / "m.crfsuite")
    save_model(imported, tmp_path / "m.crf")
    assert_same_tagger(load_model(tmp_path / "m.crf"), imported, X)


def test_the_file_is_an_npz_without_pickles(fitted, tmp_path):
    crf, _, _ = fitted
    save_model(crf, tmp_path / "m.crf")
    with zipfile.ZipFile(tmp_path / "m.crf") as zf:
        doc = json.loads(zf.read("model.json"))
    assert doc["classes"] == crf.classes_.tolist()
    with np.load(tmp_path / "m.crf", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["coef"], crf.coef_)


def test_metadata_must_be_json(fitted, tmp_path):
    crf, _, _ = fitted
    with pytest.raises(TypeError, match="JSON-serializable"):
        save_model(crf, tmp_path / "m.crf", metadata={"f": object()})
    with pytest.raises(ValueError, match="JSON-serializable"):
        save_model(crf, tmp_path / "m.crf", metadata={"x": float("nan")})


def test_save_model_rejects_hashed_attributes(tmp_path):
    crf = CRFTagger(hashing=8).fit([[{"a": "x"}]], [["p"]])
    with pytest.raises(ValueError, match="hashes its attributes"):
        save_model(crf, tmp_path / "m.crf")


def test_save_model_rejects_labels_of_other_types(tmp_path):
    crf = CRFTagger().fit([[{"a": "x"}, {"a": "y"}]], [[(1, 2), (3, 4)]])
    with pytest.raises(TypeError, match="str or int labels"):
        save_model(crf, tmp_path / "m.crf")


# ---------------------------------------------------------------------------
# malformed files


def members(path):
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def write_members(path, contents, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in contents.items():
            zf.writestr(name, data)


def npy(array, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=allow_pickle)
    return buf.getvalue()


def edit_json(contents, **changes):
    doc = json.loads(contents["model.json"])
    doc.update(changes)
    return {**contents, "model.json": json.dumps(doc).encode()}


class Boom:
    """Unpickling this would run code: it must never be unpickled."""

    def __reduce__(self):
        return (os.system, ("echo unpickled > /dev/null",))


MALFORMED = [
    (lambda c: {k: v for k, v in c.items() if k != "coef.npy"}, "the archive holds"),
    (lambda c: {**c, "extra.npy": b""}, "the archive holds"),
    (lambda c: {**c, "model.json": b"\xff\xfe"}, "not UTF-8"),
    (lambda c: {**c, "model.json": b"[" * 100000}, "not valid JSON"),
    (lambda c: {**c, "model.json": b"[1, 2]"}, "expected an object"),
    (lambda c: edit_json(c, format="other"), "has the format"),
    (lambda c: edit_json(c, format_version=2), "format version"),
    (lambda c: edit_json(c, classes=["O", "B-LOC", "B-PER"]), "not sorted"),
    (lambda c: edit_json(c, classes=[]), "non-empty list"),
    (lambda c: edit_json(c, label_type="float"), "neither 'str' nor 'int'"),
    (lambda c: edit_json(c, attributes=["a", "a"]), "appears twice"),
    (lambda c: edit_json(c, params={"c1": -1.0}), "invalid parameters"),
    (lambda c: edit_json(c, params={"rm -rf": 1}), "unknown CRFTagger parameters"),
    (lambda c: edit_json(c, params={"hashing": 16}), "hash slots"),
    (lambda c: edit_json(c, n_iter=-1), "n_iter"),
    (lambda c: {**c, "coef.npy": npy(np.zeros(3, dtype=np.float32))}, "dtype"),
    (lambda c: {**c, "coef.npy": npy(np.zeros((2, 2)))}, "header of a 1-d array"),
    (lambda c: {**c, "coef.npy": npy(np.array([Boom()], dtype=object), allow_pickle=True)},
     "dtype"),
    (lambda c: {**c, "coef.npy": npy(np.zeros(4))[:-8]}, "declares 4 items"),
    (lambda c: {**c, "coef.npy": b"not an npy"}, "not a .npy array"),
    (lambda c: {**c, "coef.npy": npy(np.zeros(1))}, "weights for"),
    (lambda c: {**c, "state_attr.npy": npy(np.full(
        len(np.load(io.BytesIO(c["state_attr.npy"]))), 10**6, dtype=np.int64))}, "outside"),
    (lambda c: {**c, "trans_to.npy": npy(np.zeros(
        len(np.load(io.BytesIO(c["trans_to.npy"]))), dtype=np.int32))}, "listed twice"),
    (lambda c: {**c, "coef.npy": npy(np.full(
        len(np.load(io.BytesIO(c["coef.npy"]))), np.nan))}, "not finite"),
    (lambda c: edit_json(c, classes=[f"L{i:05d}" for i in range(20000)]), "justifies"),
]


@pytest.mark.parametrize("mutate, message", MALFORMED)
def test_malformed_model_file_is_a_clear_value_error(fitted, tmp_path, mutate, message):
    crf, _, _ = fitted
    save_model(crf, tmp_path / "good.crf")
    write_members(tmp_path / "bad.crf", mutate(members(tmp_path / "good.crf")))
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_model(tmp_path / "bad.crf")
    assert "bad.crf" in str(err.value)


def test_compressed_members_are_refused(fitted, tmp_path):
    crf, _, _ = fitted
    save_model(crf, tmp_path / "good.crf")
    write_members(tmp_path / "bad.crf", members(tmp_path / "good.crf"), zipfile.ZIP_DEFLATED)
    with pytest.raises(ValueError, match="compressed"):
        load_model(tmp_path / "bad.crf")


def test_a_file_that_is_not_a_zip_is_a_value_error(tmp_path):
    (tmp_path / "bad.crf").write_bytes(b"lCRF" + bytes(100))
    with pytest.raises(ValueError, match="bad.crf: .*zip"):
        load_model(tmp_path / "bad.crf")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused_before_reading():
    with pytest.raises(ValueError, match="not a regular file"):
        load_model("/dev/zero")


def fuzz_load(data, X):
    """load_model on ``data`` in a file: success (then predict) or a ValueError."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.crf")
        with open(path, "wb") as f:
            f.write(data)
        try:
            crf = load_model(path)
        except ValueError as err:
            assert "fuzz.crf" in str(err)
        else:
            crf.predict(X[:3])


def flip(data, draw, max_flips=8):
    buf = bytearray(data)
    if draw(st.booleans()):
        buf = buf[: draw(st.integers(0, len(buf)))]
    for _ in range(draw(st.integers(0, max_flips)) if buf else 0):
        buf[draw(st.integers(0, len(buf) - 1))] = draw(st.integers(0, 255))
    return bytes(buf)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_model_files_load_or_raise_value_error(fitted, data):
    """Truncations and byte flips of the whole file (the zip layer)."""
    crf, X, _ = fitted
    buf = io.BytesIO()
    save_model(crf, buf)
    fuzz_load(flip(buf.getvalue(), data.draw), X)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_members_load_or_raise_value_error(fitted, data):
    """Byte flips inside one member, in a valid zip (the JSON and .npy layer)."""
    crf, X, _ = fitted
    buf = io.BytesIO()
    save_model(crf, buf)
    contents = members(io.BytesIO(buf.getvalue()))
    name = data.draw(st.sampled_from(sorted(contents)))
    contents[name] = flip(contents[name], data.draw)
    out = io.BytesIO()
    write_members(out, contents)
    fuzz_load(out.getvalue(), X)


# ---------------------------------------------------------------------------
# pickle, joblib, skops


def test_pickle_round_trip(fitted):
    crf, X, _ = fitted
    assert_same_tagger(pickle.loads(pickle.dumps(crf)), crf, X)


def test_joblib_round_trip(fitted, tmp_path):
    crf, X, _ = fitted
    joblib.dump(crf, tmp_path / "m.joblib")
    assert_same_tagger(joblib.load(tmp_path / "m.joblib"), crf, X)


def readme_trusted_types():
    """The trusted-types list that README's "Saving models" section shows."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Saving models", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"TRUSTED = (\[.*?\])", section, re.S).group(1)
    return json.loads(block.replace("'", '"'))


@pytest.mark.parametrize("source", ["fitted", "imported"])
def test_skops_round_trip_with_the_documented_trusted_types(fitted, tmp_path, source):
    crf, X, _ = fitted
    if source == "imported":
        save_crfsuite(crf, tmp_path / "m.crfsuite")
        crf = load_crfsuite(tmp_path / "m.crfsuite")
    sio.dump(crf, tmp_path / "m.skops")
    untrusted = sio.get_untrusted_types(file=tmp_path / "m.skops")
    assert sorted(untrusted) == sorted(readme_trusted_types())
    assert_same_tagger(sio.load(tmp_path / "m.skops", trusted=untrusted), crf, X)
