"""Every writer replaces its file whole or not at all.

Each writer (save_model, save_crfsuite, write_conll, save_corpus and
encode_stream's store, the command line's outputs) is made to fail midway —
the disk fills after a few bytes, or an interrupt arrives after the last byte
and before the rename — and must leave the file that was there byte for
byte as it was, and no temporary file behind.
"""

import errno
import os

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from sklearn_crf import (
    CRFTagger,
    SequenceFeaturizer,
    SequenceVectorizer,
    load_model,
    save_model,
    write_conll,
)
from sklearn_crf._cli import main
from sklearn_crf._io import atomic, corpus_store
from sklearn_crf._io.atomic import atomic_write
from sklearn_crf._io.corpus_store import load_corpus, save_corpus
from sklearn_crf._io.crfsuite import save_crfsuite

SENTENCES = [["John", "runs"], ["Mary", "sleeps", "well"]]
TAGS = [["PER", "O"], ["PER", "O", "O"]]


class _Full:
    """A file whose disk fills after ``room`` bytes (a short write, then ENOSPC)."""

    def __init__(self, f, room):
        self._f = f
        self._room = room

    def write(self, data):
        if len(data) > self._room:
            self._f.write(data[:self._room])
            self._room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


@pytest.fixture
def disk_full(monkeypatch):
    """The disk fills after 150 bytes of any file the writers open (through
    atomic_write, and the corpus store's files, written chunk by chunk)."""
    def fake_open(*args, **kwargs):
        return _Full(open(*args, **kwargs), 150)

    monkeypatch.setattr(atomic, "open", fake_open, raising=False)
    monkeypatch.setattr(corpus_store, "open", fake_open, raising=False)


@pytest.fixture
def interrupt_before_rename(monkeypatch):
    """Ctrl-C after the last byte is written, before the file is renamed."""
    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)


@pytest.fixture(scope="module")
def pipeline():
    return make_pipeline(SequenceFeaturizer(), CRFTagger(c2=0.01)).fit(SENTENCES, TAGS)


def snapshot(folder):
    """{name: bytes} of every file under ``folder``."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = f.read()
    return out


def old_file(tmp_path, name="target"):
    path = tmp_path / name
    path.write_bytes(b"the old content\n" * 10)
    return path


FAILURES = ["disk_full", "interrupt_before_rename"]
ERRORS = {"disk_full": OSError, "interrupt_before_rename": KeyboardInterrupt}


def check_untouched(request, failure, tmp_path, write):
    before = snapshot(tmp_path)
    request.getfixturevalue(failure)
    with pytest.raises(ERRORS[failure]):
        write()
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("failure", FAILURES)
def test_save_model_failing_midway_leaves_the_old_file(request, failure, tmp_path, pipeline):
    path = old_file(tmp_path)
    check_untouched(request, failure, tmp_path, lambda: save_model(pipeline, path))


@pytest.mark.parametrize("failure", FAILURES)
def test_save_crfsuite_failing_midway_leaves_the_old_file(request, failure, tmp_path, pipeline):
    path = old_file(tmp_path)
    check_untouched(request, failure, tmp_path, lambda: save_crfsuite(pipeline[-1], path))


@pytest.mark.parametrize("failure", FAILURES)
def test_write_conll_failing_midway_leaves_the_old_file(request, failure, tmp_path):
    path = old_file(tmp_path)
    check_untouched(request, failure, tmp_path, lambda: write_conll(path, SENTENCES * 10, TAGS * 10))


def test_save_model_with_a_label_it_cannot_write_leaves_the_old_file(tmp_path, pipeline):
    path = old_file(tmp_path)
    before = snapshot(tmp_path)
    crf = CRFTagger(c2=0.01).fit([[{"w": "a"}, {"w": "b"}]], [["O", "B\udfff"]])
    with pytest.raises(ValueError, match="lone surrogate"):
        save_model(crf, path)
    assert snapshot(tmp_path) == before


def store_and_corpus(tmp_path):
    vec = SequenceVectorizer()
    corpus = vec.fit_encode([[{"w": "a"}, {"w": "b"}], [{"w": "c"}]])
    store = tmp_path / "store"
    save_corpus(store, corpus, [["B", "O"], ["O"]])
    corpus2 = SequenceVectorizer().fit_encode([[{"x": "z"}] * 5])
    return store, corpus2


@pytest.mark.parametrize("failure", FAILURES)
def test_save_corpus_failing_midway_leaves_the_old_store(request, failure, tmp_path):
    store, other = store_and_corpus(tmp_path)
    check_untouched(request, failure, tmp_path,
                    lambda: save_corpus(store, other, [["A"] * 5], overwrite=True))
    corpus, y = load_corpus(store)
    assert y == [["B", "O"], ["O"]]


def test_save_corpus_failing_while_appending_leaves_the_old_store(tmp_path, monkeypatch):
    store, other = store_and_corpus(tmp_path)
    before = snapshot(tmp_path)
    calls = []

    def failing_append(self, rows):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, rows)

    original = corpus_store._NpyAppender.append
    monkeypatch.setattr(corpus_store._NpyAppender, "append", failing_append)
    with pytest.raises(OSError):
        save_corpus(store, other, [["A"] * 5], overwrite=True)
    assert snapshot(tmp_path) == before


def test_save_corpus_overwrite_replaces_every_file(tmp_path):
    store, other = store_and_corpus(tmp_path)
    save_corpus(store, other, overwrite=True)  # no labels: classes.json and labels.npy go
    assert not (store / "labels.npy").exists() and not (store / "classes.json").exists()
    corpus, y = load_corpus(store)
    assert y is None and corpus.n_tokens == 5
    assert sorted(os.listdir(store)) == sorted(
        n for n in os.listdir(store) if not n.startswith("."))


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("command", ["tag", "data", "train", "convert"])
def test_command_line_failing_midway_leaves_the_old_output(
        request, failure, command, tmp_path, pipeline, capsys):
    model = tmp_path / "model.skcrf"
    save_model(pipeline, model)
    data = tmp_path / "data.conll"
    write_conll(data, SENTENCES * 10, TAGS * 10)
    out = old_file(tmp_path, "out")
    argv = {
        "tag": ["tag", "-m", str(model), str(data), "-o", str(out)],
        "data": ["data", "testb", "--n-sentences", "3", "-o", str(out)],
        "train": ["train", "-m", str(out), str(data), "--c2", "0.01", "--max-iter", "3"],
        "convert": ["convert", str(model), str(out)],
    }[command]
    before = snapshot(tmp_path)
    request.getfixturevalue(failure)
    status = main(argv + ["--quiet"])
    assert status == (130 if failure == "interrupt_before_rename" else 1)
    assert snapshot(tmp_path) == before
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err


def test_tag_with_a_failing_prediction_leaves_the_old_output(tmp_path, pipeline, monkeypatch,
                                                              capsys):
    model = tmp_path / "model.skcrf"
    save_model(pipeline, model)
    data = tmp_path / "data.conll"
    write_conll(data, SENTENCES, TAGS)
    out = old_file(tmp_path, "out")
    before = snapshot(tmp_path)

    def fails(self, X, **kwargs):
        raise RuntimeError("something unexpected")

    monkeypatch.setattr(CRFTagger, "predict", fails)
    assert main(["tag", "-m", str(model), str(data), "-o", str(out)]) == 1
    assert snapshot(tmp_path) == before
    err = capsys.readouterr().err
    assert err.startswith(f"sklearn-crf: error: {data}: RuntimeError: something unexpected")
    assert len(err.splitlines()) == 1


def test_a_new_file_gets_the_permissions_of_a_new_file(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = tmp_path / "new.txt"
    with atomic_write(path, "w", encoding="utf-8") as f:
        f.write("x")
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask
    os.chmod(path, 0o640)
    with atomic_write(path, "w", encoding="utf-8") as f:
        f.write("y")
    assert os.stat(path).st_mode & 0o777 == 0o640 and path.read_text() == "y"


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    target = old_file(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(target)
    write_conll(link, SENTENCES, TAGS)
    assert link.is_symlink() and target.read_text().startswith("John PER")


def test_a_device_is_written_in_place(pipeline):
    save_model(pipeline, os.devnull)  # not replaced by a regular file
    assert not os.path.isfile(os.devnull)


def test_a_saved_model_still_loads(tmp_path, pipeline):
    path = tmp_path / "m.skcrf"
    save_model(pipeline, path)
    save_model(pipeline, path)  # over an existing file
    assert load_model(path).predict([["Mary", "runs"]]) == pipeline.predict([["Mary", "runs"]])
    assert os.listdir(tmp_path) == ["m.skcrf"]
    assert np.array_equal(load_model(path)[-1].coef_, pipeline[-1].coef_)
