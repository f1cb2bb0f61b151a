"""Saving models: save_model / load_model (data only), pickle, joblib and skops.io."""

import copy
import io
import json
import os
import pickle
import re
import tempfile
import zipfile

import joblib
import numpy as np
import pytest
import skops.io as sio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sklearn_crf import CRFTagger, load_crfsuite, load_model, save_crfsuite, save_model

from conftest import REPO

README = REPO / "README.md"


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
# a whole Pipeline in one file


SENTENCES = [["Ana", "vive", "en", "Madrid"], ["el", "rey", "de", "Madrid"], ["Ana", "ví"],
             ["Madrid", "es", "de", "Ana"]]
LABELS = [["B-PER", "O", "O", "B-LOC"], ["O", "O", "O", "B-LOC"], ["B-PER", "O"],
          ["B-LOC", "O", "O", "B-PER"]]


@pytest.fixture(scope="module")
def pipelines():
    """Fitted Pipelines of each kind of step a model file holds, and their input."""
    from sklearn.pipeline import Pipeline, make_pipeline

    from sklearn_crf import SequenceFeaturizer, TemplateFeaturizer

    tokens = [[(w, "Cap" if w[:1].isupper() else "low") for w in s] for s in SENTENCES]
    sequence = make_pipeline(
        SequenceFeaturizer(window=2, prefixes=[1], suffixes=(2,), columns=("shape",),
                           neighbor_features="all"),
        CRFTagger(c2=0.05, max_iter=50, all_possible_transitions=True),
    ).fit(tokens, LABELS)
    templates = Pipeline(
        [("skip", "passthrough"),
         ("templates", TemplateFeaturizer(templates=["U00:%x[0,0]", "U01:%x[-1,1]/%x[0,1]"])),
         ("tagger", CRFTagger(c1=0.01, max_iter=50))],
        verbose=False,
    ).fit(tokens, LABELS)
    return tokens, {"sequence": sequence, "templates": templates}


def as_lists(params):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


@pytest.mark.parametrize("kind", ["sequence", "templates"])
def test_a_pipeline_round_trips_as_one_file(pipelines, kind, tmp_path):
    from sklearn.pipeline import Pipeline

    tokens, fitted_pipelines = pipelines
    pipe = fitted_pipelines[kind]
    save_model(pipe, tmp_path / "pipe.crf", metadata={"k": kind})
    back, metadata = load_model(tmp_path / "pipe.crf", return_metadata=True)
    assert isinstance(back, Pipeline) and metadata == {"k": kind}
    assert [name for name, _ in back.steps] == [name for name, _ in pipe.steps]
    for (_, got), (_, want) in zip(back.steps[:-1], pipe.steps[:-1]):
        assert type(got) is type(want)
        if not isinstance(want, str):
            assert as_lists(got.get_params()) == as_lists(want.get_params())
    assert_same_tagger(back[-1], pipe[-1], pipe[:-1].transform(tokens))
    assert back.predict(tokens) == pipe.predict(tokens)
    save_model(back, tmp_path / "again.crf", metadata={"k": kind})
    assert (tmp_path / "again.crf").read_bytes() == (tmp_path / "pipe.crf").read_bytes()


def test_a_pipeline_file_holds_its_steps_as_json(pipelines, tmp_path):
    pipe = pipelines[1]["sequence"]
    save_model(pipe, tmp_path / "pipe.crf")
    with zipfile.ZipFile(tmp_path / "pipe.crf") as zf:
        doc = json.loads(zf.read("model.json"))
    assert doc["format_version"] == 2
    assert doc["pipeline"]["steps"] == [
        {"name": "sequencefeaturizer", "class": "SequenceFeaturizer",
         "params": as_lists(pipe[0].get_params())},
        {"name": "crftagger", "class": "CRFTagger"},
    ]
    assert doc["params"]["c2"] == 0.05


def with_step(step):
    """A Pipeline of ``step`` and a fitted tagger."""
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer

    crf = CRFTagger().fit(SequenceFeaturizer().transform(SENTENCES), LABELS)
    return make_pipeline(step, crf)


def featurizer(**params):
    from sklearn_crf import SequenceFeaturizer

    return SequenceFeaturizer(**params)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: with_step(__import__("sklearn.preprocessing").preprocessing.FunctionTransformer()),
         "Pipeline step 'functiontransformer' is a FunctionTransformer: a model file holds"),
        (lambda: with_step(featurizer(window=9)),
         "pipeline.steps[0].params.window=9: larger than a model file may ask for (8)"),
        (lambda: with_step(featurizer(columns=(object(),))),
         "Pipeline step 'sequencefeaturizer' (SequenceFeaturizer): the parameter columns="),
        (lambda: with_step(featurizer(columns=(("a", "b"),))), "nested lists are not model-file values"),
        (lambda: with_step(featurizer(columns=(1,))), "The 'columns' parameter of SequenceFeaturizer"),
    ],
)
def test_a_pipeline_that_cannot_be_a_model_file_is_a_clear_error_at_save_time(make, message, tmp_path):
    with pytest.raises(ValueError) as err:
        save_model(make(), tmp_path / "m.crf")
    assert message in str(err.value)
    assert not (tmp_path / "m.crf").exists()


def test_a_pipeline_must_end_in_a_fitted_tagger(tmp_path):
    from sklearn.exceptions import NotFittedError
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer, SequenceVectorizer

    with pytest.raises(ValueError, match="the last step of a Pipeline saved as a model file must "
                                         "be a fitted CRFTagger; it is SequenceVectorizer"):
        save_model(make_pipeline(SequenceFeaturizer(), SequenceVectorizer()), tmp_path / "m.crf")
    with pytest.raises(NotFittedError):
        save_model(make_pipeline(SequenceFeaturizer(), CRFTagger()), tmp_path / "m.crf")
    with pytest.raises(TypeError, match="got a list"):
        save_model([CRFTagger()], tmp_path / "m.crf")


def edit_pipeline(contents, change):
    doc = json.loads(contents["model.json"])
    change(doc["pipeline"])
    return {**contents, "model.json": json.dumps(doc).encode()}


def setting(path, value):
    """A change of model.json's pipeline: the field at ``path`` becomes ``value``."""
    def change(doc):
        *parents, last = path
        for key in parents:
            doc = doc[key]
        doc[last] = value
    return change


MALFORMED_PIPELINES = [
    (setting(["steps"], []), "pipeline.steps must be a list of 1 to 100 steps"),
    (setting(["steps", 0], "SequenceFeaturizer"), "pipeline.steps[0] holds a str"),
    (setting(["steps", 0, "class"], "os.system"), "pipeline.steps[0].class='os.system' is not among"),
    (setting(["steps", 1, "class"], "SequenceFeaturizer"),
     "pipeline.steps[1].class='SequenceFeaturizer': the last step must be 'CRFTagger'"),
    (setting(["steps", 1, "params"], {}), "pipeline.steps[1] has the fields"),
    (setting(["steps", 0, "class"], "CRFTagger"), "pipeline.steps[0].class='CRFTagger' is not among"),
    (setting(["steps", 0, "name"], "a__b"), "pipeline.steps[0].name='a__b' is not a Pipeline step name"),
    (setting(["steps", 0, "name"], "crftagger"), "pipeline.steps[1].name='crftagger' names two steps"),
    (setting(["steps", 0, "name"], "memory"), "pipeline.steps[0].name='memory'"),
    (setting(["steps", 0, "params", "window"], 10**9), "pipeline.steps[0].params.window=1000000000: larger"),
    (setting(["steps", 0, "params", "window"], -1), "pipeline.steps[0].params: The 'window' parameter"),
    (setting(["steps", 0, "params", "lower"], "yes"), "pipeline.steps[0].params: The 'lower' parameter"),
    (setting(["steps", 0, "params", "prefixes"], [0]), "pipeline.steps[0].params: The 'prefixes' parameter"),
    (setting(["steps", 0, "params", "suffixes"], list(range(1, 2000))),
     "pipeline.steps[0].params.suffixes has 1999 items"),
    (setting(["steps", 0, "params", "columns"], [{"a": 1}]), "pipeline.steps[0].params.columns holds an item"),
    (setting(["steps", 0, "params", "window"], 1.5), "pipeline.steps[0].params.window is a float"),
    (setting(["steps", 0, "params", "rm -rf"], 1), "pipeline.steps[0].params names unknown SequenceFeaturizer"),
    (setting(["steps", 0, "params"], []), "pipeline.steps[0].params holds a list"),
    (setting(["verbose"], "yes"), "pipeline.verbose='yes' is not a bool"),
    (setting(["transform_input"], [1]), "pipeline.transform_input must be null or a list of str"),
    (setting(["memory"], "/tmp"), "pipeline has unknown fields ['memory']"),
]


@pytest.mark.parametrize("change, message", MALFORMED_PIPELINES)
def test_malformed_pipeline_in_a_model_file_is_a_value_error_naming_the_field(
        pipelines, tmp_path, change, message):
    save_model(pipelines[1]["sequence"], tmp_path / "good.crf")
    write_members(tmp_path / "bad.crf", edit_pipeline(members(tmp_path / "good.crf"), change))
    with pytest.raises(ValueError) as err:
        load_model(tmp_path / "bad.crf")
    assert str(err.value).startswith(f"{tmp_path / 'bad.crf'}: not a valid sklearn-crf model file: ")
    assert message in str(err.value)


def test_a_bad_template_in_a_pipeline_file_is_a_value_error(pipelines, tmp_path):
    save_model(pipelines[1]["templates"], tmp_path / "good.crf")
    change = setting(["steps", 1, "params", "templates"], ["B01:%x[0,0]"])
    write_members(tmp_path / "bad.crf", edit_pipeline(members(tmp_path / "good.crf"), change))
    with pytest.raises(ValueError, match=re.escape("pipeline.steps[1].params: template line 1")):
        load_model(tmp_path / "bad.crf")


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
    (lambda c: edit_json(c, format_version=3), "format version"),
    (lambda c: edit_json(c, format_version=2), "lacks 'pipeline'"),
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
    """The trusted-types list that the docs' persistence page shows."""
    page = README.parent / "docs" / "user_guide" / "persistence.rst"
    block = re.search(r"TRUSTED = (\[.*?\])", page.read_text(encoding="utf-8"), re.S).group(1)
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


# ---------------------------------------------------------------------------
# models with dense features


@pytest.fixture(scope="module")
def dense_fitted():
    """A tagger on (feature dicts, dense array) sequences, and its data."""
    rng = np.random.default_rng(2)
    X, y = [], []
    for _ in range(20):
        n = int(rng.integers(1, 5))
        tokens = [{"w": str(rng.choice(["a", "b", "c"]))} for _ in range(n)]
        X.append((tokens, rng.normal(size=(n, 3))))
        y.append([str(rng.choice(["O", "B-PER"])) for _ in range(n)])
    return CRFTagger(c2=0.1).fit(X, y), X, y


def assert_same_dense_tagger(got, want, X):
    assert_same_tagger(got, want, X)
    assert got.n_dense_features_ == want.n_dense_features_ == 3
    assert got.dense_coef_.tobytes() == want.dense_coef_.tobytes()


def test_save_load_model_restores_a_dense_tagger(dense_fitted, tmp_path):
    crf, X, _ = dense_fitted
    save_model(crf, tmp_path / "m.crf")
    assert_same_dense_tagger(load_model(tmp_path / "m.crf"), crf, X)
    contents = members(tmp_path / "m.crf")
    doc = json.loads(contents["model.json"])
    assert doc["format_version"] == 3 and doc["n_dense"] == 3
    assert np.load(io.BytesIO(contents["dense_coef.npy"])).tobytes() == \
        crf.dense_coef_.tobytes()


def test_a_model_without_dense_features_keeps_format_version_1(fitted, tmp_path):
    crf, _, _ = fitted
    save_model(crf, tmp_path / "m.crf")
    contents = members(tmp_path / "m.crf")
    assert json.loads(contents["model.json"])["format_version"] == 1
    assert "dense_coef.npy" not in contents


DENSE_MALFORMED = [
    (lambda c: {k: v for k, v in c.items() if k != "dense_coef.npy"}, "lacks dense_coef.npy"),
    (lambda c: edit_json(c, format_version=1), "does not hold dense_coef.npy"),
    (lambda c: edit_json(c, n_dense=0), "n_dense"),
    (lambda c: edit_json(c, n_dense=4), "expected n_dense"),
    (lambda c: edit_json(c, n_dense=10**9), "more dense weights than the file holds"),
    (lambda c: {**c, "dense_coef.npy": npy(np.full(6, np.inf))}, "not finite"),
    (lambda c: {**c, "dense_coef.npy": npy(np.zeros((3, 2)))}, "header of a 1-d array"),
]


@pytest.mark.parametrize("mutate, message", DENSE_MALFORMED)
def test_malformed_dense_model_file_is_a_clear_value_error(dense_fitted, tmp_path, mutate,
                                                           message):
    crf, _, _ = dense_fitted
    save_model(crf, tmp_path / "good.crf")
    write_members(tmp_path / "bad.crf", mutate(members(tmp_path / "good.crf")))
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_model(tmp_path / "bad.crf")
    assert "bad.crf" in str(err.value)


def test_pickle_joblib_and_skops_round_trip_a_dense_tagger(dense_fitted, tmp_path):
    crf, X, _ = dense_fitted
    assert_same_dense_tagger(pickle.loads(pickle.dumps(crf)), crf, X)
    joblib.dump(crf, tmp_path / "m.joblib")
    assert_same_dense_tagger(joblib.load(tmp_path / "m.joblib"), crf, X)
    sio.dump(crf, tmp_path / "m.skops")
    untrusted = sio.get_untrusted_types(file=tmp_path / "m.skops")
    assert sorted(untrusted) == sorted(readme_trusted_types())
    assert_same_dense_tagger(sio.load(tmp_path / "m.skops", trusted=untrusted), crf, X)


def test_save_crfsuite_refuses_a_dense_tagger(dense_fitted, tmp_path):
    crf, _, _ = dense_fitted
    with pytest.raises(ValueError, match="3 dense features per token.*save_model"):
        save_crfsuite(crf, tmp_path / "m.crfsuite")
    assert not (tmp_path / "m.crfsuite").exists()


# ---------------------------------------------------------------------------
# what loads can predict: the model checked as a whole, the work per token bounded
# ---------------------------------------------------------------------------


def edit_doc(path, out, change):
    contents = members(path)
    doc = json.loads(contents["model.json"])
    change(doc)
    write_members(out, {**contents, "model.json": json.dumps(doc).encode()})


def params_setting(name, value):
    def change(doc):
        doc["params"][name] = value
    return change


def classes_setting(index, value):
    def change(doc):
        doc["classes"][index] = value
    return change


UNUSABLE = [
    (classes_setting(-1, "O\x00"), "classes[2]='O\\x00' holds a NUL, newline or carriage return"),
    (classes_setting(-1, "O\n"), "classes[2]='O\\n' holds a NUL"),
    (classes_setting(-1, "O\udfff"), "classes[2]='O\\udfff' cannot be encoded as UTF-8"),
    (classes_setting(0, ""), "classes[0] is an empty label"),
    (params_setting("transition_constraints", [["O", "B-MISC"]]),
     "params.transition_constraints: transition_constraints[0] = ('O', 'B-MISC') names the "
     "label 'B-MISC'"),
    (params_setting("transition_constraints", []),
     "params.transition_constraints allow no label path for a sentence of 2 tokens"),
    (params_setting("transition_constraints", [["B-LOC", "O"], ["B-PER", "B-LOC"]]),
     "params.transition_constraints allow no label path for a sentence of 4 tokens"),
    (params_setting("transition_constraints", "IOE2"),
     "params.transition_constraints: label 'B-LOC' does not follow the IOE2 scheme"),
]


@pytest.mark.parametrize("change, message", UNUSABLE)
def test_a_model_that_could_not_predict_is_refused_at_load(fitted, tmp_path, change, message):
    crf, _, _ = fitted
    save_model(crf, tmp_path / "good.crf")
    edit_doc(tmp_path / "good.crf", tmp_path / "bad.crf", change)
    with pytest.raises(ValueError) as err:
        load_model(tmp_path / "bad.crf")
    assert str(err.value).startswith(f"{tmp_path / 'bad.crf'}: not a valid sklearn-crf model file: ")
    assert message in str(err.value)
    assert type(err.value).__name__ == "InvalidModelFile"


def test_constraints_with_a_path_for_every_length_load(fitted, tmp_path):
    crf, X, _ = fitted
    save_model(crf, tmp_path / "good.crf")
    pairs = [["O", "O"], ["O", "B-PER"], ["B-PER", "O"], ["B-LOC", "O"], ["O", "B-LOC"]]
    edit_doc(tmp_path / "good.crf", tmp_path / "ok.crf",
             params_setting("transition_constraints", pairs))
    loaded = load_model(tmp_path / "ok.crf")
    assert len(loaded.predict(X)) == len(X)


def test_save_model_refuses_what_load_model_would(fitted, tmp_path):
    crf = CRFTagger(c2=0.01, transition_constraints=[]).fit(
        [[{"w": "a"}, {"w": "b"}]], [["A", "B"]])
    with pytest.raises(ValueError, match="cannot be saved as a model file: params.transition_"
                                         "constraints allow no label path for a sentence of 2"):
        save_model(crf, tmp_path / "m.crf")
    assert not (tmp_path / "m.crf").exists()


def test_load_crfsuite_refuses_constraints_it_cannot_predict_with(fitted, tmp_path):
    crf, _, _ = fitted
    save_crfsuite(crf, tmp_path / "m.crfsuite")
    with pytest.raises(ValueError, match=r"m.crfsuite: not a usable CRFsuite model: params."
                                         r"transition_constraints: .* names the label 'X'"):
        load_crfsuite(tmp_path / "m.crfsuite", transition_constraints=[("O", "X")])


def test_the_issue_featurizer_is_refused_naming_the_field(pipelines, tmp_path):
    """window=64, 1,000 prefixes and suffixes, all neighbour features: once a
    12.8 kB file whose predict took 41 s and 1 GB on 30 tokens."""
    save_model(pipelines[1]["sequence"], tmp_path / "good.crf")
    for change, message in [
        (setting(["steps", 0, "params"], {
            "window": 8, "prefixes": list(range(1, 1001)), "suffixes": list(range(1, 1001)),
            "neighbor_features": "all"}),
         "features per token, more than a model file may ask for (1024"),
        (setting(["steps", 0, "params"], {"window": 8, "neighbor_features": "all",
                                          "prefixes": list(range(1, 60))}),
         "features per token, more than a model file may ask for (1024"),
        (setting(["steps", 0, "params", "window"], 64),
         "pipeline.steps[0].params.window=64: larger than a model file may ask for (8)"),
        (setting(["steps", 0, "params", "columns"], ["c" * 300]),
         "pipeline.steps[0].params.columns: a feature name of 300 bytes"),
    ]:
        write_members(tmp_path / "bad.crf", edit_pipeline(members(tmp_path / "good.crf"), change))
        with pytest.raises(ValueError) as err:
            load_model(tmp_path / "bad.crf")
        assert message in str(err.value) and "pipeline.steps[0].params" in str(err.value)


def test_templates_beyond_the_bounds_are_refused(pipelines, tmp_path):
    save_model(pipelines[1]["templates"], tmp_path / "good.crf")
    many = [f"U{i}:%x[0,0]" for i in range(1025)]
    long = ["U00:" + "x" * 300 + "%x[0,0]"]
    for templates, message in [(many, "1025 features per token"),
                               (long, "templates: a feature name of 311 bytes")]:
        change = setting(["steps", 1, "params", "templates"], templates)
        write_members(tmp_path / "bad.crf", edit_pipeline(members(tmp_path / "good.crf"), change))
        with pytest.raises(ValueError, match=re.escape(message)):
            load_model(tmp_path / "bad.crf")


def test_a_model_at_the_bounds_predicts_within_its_feature_budget(tmp_path):
    """The largest featurizer a model file may hold: predicting one sentence
    costs at most MAX_FEATURES_PER_TOKEN features per token."""
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer
    from sklearn_crf._io.persistence import MAX_FEATURES_PER_TOKEN, MAX_WINDOW, featurizer_work

    largest = SequenceFeaturizer(window=MAX_WINDOW, neighbor_features="all",
                                 prefixes=tuple(range(1, 27)), suffixes=tuple(range(1, 27)),
                                 identity=True, shape=True)
    n_features, _, _ = featurizer_work(largest)
    assert MAX_FEATURES_PER_TOKEN - 34 < n_features <= MAX_FEATURES_PER_TOKEN  # 2 more: over
    pipe = make_pipeline(largest, CRFTagger(c2=0.01)).fit(SENTENCES, LABELS)
    save_model(pipe, tmp_path / "m.crf")
    loaded = load_model(tmp_path / "m.crf")
    sentence = [f"Palabra{i}" for i in range(40)]
    X = loaded[0].transform([sentence])
    # the count is an upper bound: a token with all its neighbours has no BOS or EOS
    assert n_features - 2 <= max(len(token) for token in X[0]) <= n_features
    assert len(loaded.predict([sentence])[0]) == 40
    with pytest.raises(ValueError, match="features per token, more than a model file"):
        save_model(make_pipeline(largest.set_params(prefixes=tuple(range(1, 29))), pipe[-1]),
                   tmp_path / "over.crf")


def test_word_vectors_are_refused_saying_what_to_use_instead(tmp_path):
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer, WordVectors

    vectors = WordVectors({w: np.ones(2) for s in SENTENCES for w in s})
    pipe = make_pipeline(SequenceFeaturizer(vectors=vectors), CRFTagger(c2=0.01)).fit(
        SENTENCES, LABELS)
    with pytest.raises(ValueError, match="holds word vectors .* pickle, joblib or skops.io, or "
                                         "save the tagger alone with save_model"):
        save_model(pipe, tmp_path / "m.crf")
    assert not (tmp_path / "m.crf").exists()


def test_invalid_model_file_has_a_public_name(tmp_path):
    (tmp_path / "m.crf").write_bytes(b"PK not a zip")
    with pytest.raises(ValueError) as err:
        load_model(tmp_path / "m.crf")
    assert type(err.value).__name__ == "InvalidModelFile"
    assert "_InvalidModelFile" not in repr(err.value)


def test_a_missing_file_is_file_not_found_for_every_reader(tmp_path):
    from sklearn_crf import read_conll
    from sklearn_crf._io.corpus_store import load_corpus

    for read in (load_model, load_crfsuite, read_conll, load_corpus):
        with pytest.raises(FileNotFoundError):
            read(tmp_path / "missing")
