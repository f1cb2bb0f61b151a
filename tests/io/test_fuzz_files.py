"""Mutated files: model files, corpus stores and CoNLL inputs, from Python and the shell.

Hypothesis flips bytes, truncates, and rewrites JSON fields of valid files.
From Python, a reader either refuses the file with a ValueError or TypeError
(nothing else) or returns something that works: a model that predicts, a
corpus of the declared size, sentences. From the command line, ``tag``
either succeeds or prints one line ``sklearn-crf: error: ...`` with a
non-zero status, and an output file that was there before a failed run is
byte for byte what it was.
"""

import io
import os
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline

from sklearn_crf import (
    CRFTagger,
    SequenceFeaturizer,
    SequenceVectorizer,
    load_model,
    read_conll,
    save_model,
    write_conll,
)
from sklearn_crf._cli import main
from sklearn_crf._io.corpus_store import load_corpus, save_corpus

SENTENCES = [["Juan", "vive", "en", "Madrid"], ["Ana", "come"], ["El", "rey"]]
TAGS = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O"], ["O", "B-PER"]]
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 60)), deadline=None,
                derandomize=os.environ.get("FUZZ_EXAMPLES") is None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=8,
)


def flip(data, positions, values):
    """``data`` with the byte at each position (mod its length) replaced."""
    data = bytearray(data)
    for position, value in zip(positions, values):
        data[position % len(data)] = value
    return bytes(data)


BYTE_EDITS = st.tuples(st.lists(st.integers(0, 2**20), min_size=1, max_size=6),
                       st.lists(st.integers(0, 255), min_size=1, max_size=6))


@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "model.skcrf"
    pipe = make_pipeline(SequenceFeaturizer(window=2), CRFTagger(
        c2=0.01, transition_constraints="IOB2")).fit(SENTENCES, TAGS)
    save_model(pipe, path)
    return path.read_bytes()


def rewrite_json(data, key_path, value):
    """A model file whose model.json has ``value`` at ``key_path``."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    doc = json.loads(members["model.json"])
    target = doc
    for key in key_path[:-1]:
        target = target[key] if isinstance(target, dict) else target[int(key) % len(target)]
    if isinstance(target, dict):
        target[key_path[-1]] = value
    members["model.json"] = json.dumps(doc).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return out.getvalue()


MODEL_FIELDS = st.sampled_from([
    ("classes",), ("attributes",), ("label_type",), ("format_version",), ("n_iter",),
    ("params", "transition_constraints"), ("params", "c2"), ("params", "n_jobs"),
    ("pipeline", "steps"), ("pipeline", "steps", "0", "params", "window"),
    ("pipeline", "steps", "0", "params", "prefixes"),
    ("pipeline", "steps", "0", "params", "columns"),
    ("pipeline", "steps", "0", "params", "neighbor_features"),
    ("pipeline", "steps", "0", "class"), ("metadata",),
])


def check_model_file(path):
    """load_model refuses with ValueError/TypeError, or gives a model that
    predicts (or refuses an input it does not fit, e.g. the number of
    columns its featurizer reads, with a ValueError naming the token)."""
    try:
        model = load_model(path)
    except (ValueError, TypeError):
        return
    try:
        predicted = model.predict([["Ana", "vive", "en", "Madrid"]])
    except ValueError as err:
        assert str(err).startswith("sentence 0, token 0:"), err
        return
    assert len(predicted) == 1 and len(predicted[0]) == 4


@FUZZ
@given(edit=BYTE_EDITS, cut=st.none() | st.integers(0, 2**16))
def test_a_mutated_model_file_is_refused_or_predicts(model_bytes, tmp_path, edit, cut):
    data = flip(model_bytes, *edit)
    if cut is not None:
        data = data[:cut]
    (tmp_path / "m.skcrf").write_bytes(data)
    check_model_file(tmp_path / "m.skcrf")


@FUZZ
@given(field=MODEL_FIELDS, value=JSON_VALUES)
def test_a_model_file_with_a_rewritten_field_is_refused_or_predicts(
        model_bytes, tmp_path, field, value):
    (tmp_path / "m.skcrf").write_bytes(rewrite_json(model_bytes, field, value))
    check_model_file(tmp_path / "m.skcrf")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    directory = tmp_path_factory.mktemp("store") / "store"
    corpus = SequenceVectorizer().fit_encode(
        [[{"w": w, "n": float(len(w))} for w in s] for s in SENTENCES])
    save_corpus(directory, corpus, TAGS)
    return {p.name: p.read_bytes() for p in directory.iterdir()}


STORE_FILES = st.sampled_from(["corpus.json", "seq_ptr.npy", "tok_ptr.npy", "tok_attr.npy",
                               "tok_val.npy", "zero_tok.npy", "labels.npy", "classes.json",
                               "vocabulary.json"])


@FUZZ
@given(name=STORE_FILES, edit=BYTE_EDITS, cut=st.none() | st.integers(0, 512),
       nest=st.none() | st.integers(1, 100_000))
def test_a_mutated_corpus_store_is_refused_naming_the_file_or_loads(
        store, tmp_path, name, edit, cut, nest):
    directory = tmp_path / "store"
    directory.mkdir(exist_ok=True)
    for member, raw in store.items():
        (directory / member).write_bytes(raw)
    data = flip(store[name], *edit)
    if cut is not None:
        data = data[:cut]
    if nest is not None and name.endswith(".json"):
        data = b"[" * nest + b"]" * nest  # deeply nested JSON
    (directory / name).write_bytes(data)
    try:
        corpus, y = load_corpus(directory)
    except ValueError as err:
        assert str(directory) in str(err)
        return
    assert corpus.n_sequences == len(y) and sum(map(len, y)) == corpus.n_tokens


CONLL_TEXT = st.text(alphabet=st.sampled_from(list("ab O-\t \n\r\x00é\udfff")), max_size=200)


@FUZZ
@given(text=CONLL_TEXT, gz=st.booleans(), edit=BYTE_EDITS)
def test_a_mutated_conll_file_is_read_or_refused(tmp_path, text, gz, edit):
    import gzip

    raw = text.encode("utf-8", "surrogatepass")
    if gz:
        raw = flip(gzip.compress(raw), *edit)
    (tmp_path / "data.conll").write_bytes(raw)
    try:
        data = read_conll(tmp_path / "data.conll")
    except ValueError as err:
        assert str(tmp_path / "data.conll") in str(err)
        return
    assert len(data.sentences) == len(data.tags)


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory, model_bytes):
    tmp = tmp_path_factory.mktemp("cli")
    data = tmp / "data.conll"
    write_conll(data, SENTENCES, TAGS)
    return tmp, data


def run_tag(capsys, model, data, out):
    """Run ``tag`` with an existing output: success, or one line and the output unchanged."""
    out.write_bytes(b"the previous output\n")
    status = main(["tag", "-m", str(model), str(data), "-o", str(out), "-q"])
    err = capsys.readouterr().err
    if status == 0:
        return
    assert status == 1
    assert err.startswith("sklearn-crf: error: ") and err.count("\n") == 1, err
    assert out.read_bytes() == b"the previous output\n"


@FUZZ
@given(field=MODEL_FIELDS, value=JSON_VALUES, edit=st.none() | BYTE_EDITS)
def test_tag_with_a_mutated_model_is_one_line_and_keeps_the_output(
        model_bytes, cli_files, tmp_path, capsys, field, value, edit):
    tmp, data = cli_files
    raw = rewrite_json(model_bytes, field, value)
    if edit is not None:
        raw = flip(raw, *edit)
    (tmp_path / "m.skcrf").write_bytes(raw)
    run_tag(capsys, tmp_path / "m.skcrf", data, tmp_path / "out.txt")


@FUZZ
@given(text=CONLL_TEXT, gz=st.booleans(), edit=BYTE_EDITS)
def test_tag_with_a_mutated_input_is_one_line_and_keeps_the_output(
        model_bytes, tmp_path, capsys, text, gz, edit):
    import gzip

    (tmp_path / "m.skcrf").write_bytes(model_bytes)
    raw = text.encode("utf-8", "surrogatepass")
    if gz:
        raw = flip(gzip.compress(raw), *edit)
    (tmp_path / "data.conll").write_bytes(raw)
    run_tag(capsys, tmp_path / "m.skcrf", tmp_path / "data.conll", tmp_path / "out.txt")
