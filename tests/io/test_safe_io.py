"""Reading untrusted files (sklearn_crf._io.safe_io), and the io boundary of issue 19."""

import ast
import os

import pytest

from sklearn_crf._io.safe_io import DENSE_BASE_BYTES, check_dense_size, read_file_bytes

from conftest import REPO

PACKAGE = REPO / "sklearn_crf"
#: the modules of the io boundary: CoNLL files, CRFsuite files, model files, the command line
IO_MODULES = ["_io/safe_io.py", "_io/conll.py", "_io/crfsuite.py", "_io/persistence.py",
              "_io/corpus_store.py", "_io/atomic.py", "_cli.py", "__main__.py"]


def test_reads_a_regular_file(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    assert read_file_bytes(tmp_path / "f", "test") == b"abc"
    assert read_file_bytes(os.fsencode(tmp_path / "f"), "test", max_size=3) == b"abc"


def test_a_file_larger_than_the_format_allows_is_refused(tmp_path):
    (tmp_path / "f").write_bytes(b"abcd")
    with pytest.raises(ValueError, match=r"f: 4 bytes, larger than a test file can be \(3\)"):
        read_file_bytes(tmp_path / "f", "test", max_size=3)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(ValueError, match="a directory, not a test file"):
        read_file_bytes(tmp_path, "test")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused_before_reading():
    with pytest.raises(ValueError, match="/dev/zero: not a regular file, cannot be a test file"):
        read_file_bytes("/dev/zero", "test", allow_pipe=True)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("allow_pipe", [True, False])
def test_a_pipe_is_read_only_when_allowed(tmp_path, allow_pipe):
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def feed():  # opening blocks until the reader opens the pipe
        try:
            with open(fifo, "wb") as f:
                f.write(b"a O\n")
        except BrokenPipeError:  # the reader refused it
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        if allow_pipe:
            assert read_file_bytes(fifo, "CoNLL", allow_pipe=True) == b"a O\n"
        else:
            with pytest.raises(ValueError, match="fifo: not a regular file, cannot be a model file"):
                read_file_bytes(fifo, "model")
    finally:
        writer.join(timeout=10)


def test_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_file_bytes(tmp_path / "none", "test")


def test_dense_size_is_bounded_by_the_file_size():
    messages = []
    check_dense_size(1000, 9, 10, messages.append)
    assert messages == []
    n_attributes = DENSE_BASE_BYTES // 8  # with one label: just above the base
    check_dense_size(n_attributes, 1, 0, messages.append)
    assert len(messages) == 1 and f"{n_attributes} attributes and 1 labels need" in messages[0]
    check_dense_size(n_attributes, 1, 1, messages.append)  # 64 bytes more allowed
    assert len(messages) == 1


def private_imports(path):
    """(module, name) of each private name the module imports from this package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            internal = node.level > 0 or (node.module or "").startswith("sklearn_crf")
            if internal:
                found += [(node.module, a.name) for a in node.names
                          if a.name.startswith("_") and not a.name.endswith("__")]
    return found


@pytest.mark.parametrize("module", IO_MODULES)
def test_io_modules_import_no_private_name(module):
    assert private_imports(PACKAGE / module) == []
