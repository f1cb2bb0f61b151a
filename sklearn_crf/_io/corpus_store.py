"""The corpus store: an :class:`EncodedCorpus` and its labels as a directory of
``.npy`` files, written once (or chunk by chunk) and memory-mapped back.

Format (version 1). A directory holding:

``corpus.json``
    The manifest, written last (a directory without it is not a store, or an
    unfinished write): ``{"format": "sklearn-crf corpus", "version": 1,
    "n_sequences", "n_tokens", "n_entries", "n_zeros", "n_attributes",
    "n_dense", "dense_dtype" ("float32", "float64" or null), "n_classes"
    (null: no labels), "vocabulary" (true or false)}``.
``seq_ptr.npy``, ``tok_ptr.npy``, ``tok_attr.npy``, ``tok_val.npy``, ``zero_tok.npy``, ``zero_attr.npy``
    The arrays of the :class:`EncodedCorpus`, with its dtypes (int64, int64,
    int32, float64, int64, int32) and shapes.
``dense.npy``
    The dense block, ``(n_tokens, n_dense)``, float32 or float64 (only when
    ``dense_dtype`` is not null).
``labels.npy``, ``classes.json``
    Only with labels: one int32 code per token, an index into the JSON list
    ``{"classes": [...]}`` (str, int, float or bool labels, sorted as the
    tagger sorts them).
``vocabulary.json``, ``hash_slots.npy``
    Only with a vocabulary: ``{"n_features", "n_dense", "attributes",
    "str_pairs", "num_keys"}`` (see :class:`VocabularyState`); when hashing,
    the slot of each attribute id is ``hash_slots.npy`` (int64) and
    ``attributes`` is null.

Every array is a plain ``.npy`` file (NumPy format 1.0, no pickles: object
arrays are refused on load), read with ``np.load(..., allow_pickle=False,
mmap_mode="r")``. On load every file is checked: the manifest's format and
version, each array's dtype and shape against the manifest, the pointers
(start at 0, never decrease, end at the count), ids and codes in range, values
finite, the vocabulary's names unique and its memo consistent; an error names
the file.
"""

import errno
import json
import logging
import os
import stat
import struct
from typing import NamedTuple

import numpy as np

from .atomic import temporary_path
from .safe_io import NPY_HEADER, read_file_bytes, read_json_object
from .._features.validation import encode_labels, label_array
from .._features.vectorizer import (
    EncodedCorpus,
    VocabularyState,
    vectorizer_from_state,
    vocabulary_state,
)

__all__ = ["CorpusWriter", "LabelCodes", "checked_label_codes", "load_corpus", "save_corpus"]

logger = logging.getLogger(__name__)

FORMAT = "sklearn-crf corpus"
VERSION = 1
MANIFEST = "corpus.json"
#: the corpus arrays: file stem → (dtype, dimensions after the first)
ARRAYS = {
    "seq_ptr": np.int64, "tok_ptr": np.int64, "tok_attr": np.int32, "tok_val": np.float64,
    "zero_tok": np.int64, "zero_attr": np.int32,
}
#: every file a store may hold (what ``overwrite`` removes)
FILES = (MANIFEST, "dense.npy", "labels.npy", "classes.json", "vocabulary.json",
         "hash_slots.npy") + tuple(f"{name}.npy" for name in ARRAYS)
#: elements per block of the checks on load (bounded memory on memory maps)
_BLOCK = 1 << 20
#: bytes of the .npy header the writer leaves (rewritten with the final shape)
_HEADER = 128
_JSON_LABELS = (str, int, float, bool)


class LabelCodes(NamedTuple):
    """Labels as int codes, without a Python object per token.

    Attributes
    ----------
    codes : ndarray of shape (n_tokens,), dtype int32
        The code of each token's label (memory-mapped when loaded so).
    classes : ndarray of shape (n_classes,)
        The labels by code, sorted (as ``CRFTagger.classes_``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_crf._io.corpus_store import LabelCodes
    >>> labels = LabelCodes(codes=np.int32([1, 0, 1]), classes=np.array(["B", "O"]))
    >>> labels.classes[labels.codes].tolist()
    ['O', 'B', 'O']
    """

    codes: np.ndarray
    classes: np.ndarray


def checked_label_codes(y, n_tokens):
    """(classes, codes) of a :class:`LabelCodes` for a corpus of ``n_tokens``
    tokens: the classes distinct and sorted (as a fit sorts them), the codes
    int32 and in range, checked in blocks (a memory-mapped array stays on
    disk, no Python object per token).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_crf._io.corpus_store import LabelCodes, checked_label_codes
    >>> checked_label_codes(LabelCodes(np.int32([1, 0]), np.array(["B", "O"])), 2)
    (array(['B', 'O'], dtype='<U1'), array([1, 0], dtype=int32))
    >>> checked_label_codes(LabelCodes(np.int32([2]), np.array(["B", "O"])), 1)
    Traceback (most recent call last):
    ...
    ValueError: y: label codes must be in [0, 2); index 0 is 2
    """
    classes = np.asarray(y.classes)
    codes = np.asarray(y.codes)
    if classes.ndim != 1 or not len(classes):
        raise ValueError("y: LabelCodes.classes must be a non-empty 1-d array of labels")
    listed = classes.tolist()
    if any(not a < b for a, b in zip(listed, listed[1:])):
        raise ValueError("y: LabelCodes.classes must be sorted and distinct, as a fit "
                         "sorts its labels (CRFTagger.classes_)")
    if codes.shape != (n_tokens,) or codes.dtype.kind not in "iu":
        raise ValueError(f"y: LabelCodes.codes must be {n_tokens} int codes, one per token "
                         f"of X; got {codes.dtype} of shape {codes.shape}")
    for start in _blocks(len(codes)):
        block = codes[start:start + _BLOCK]
        bad = np.flatnonzero((block < 0) | (block >= len(classes)))
        if len(bad):
            raise ValueError(f"y: label codes must be in [0, {len(classes)}); index "
                             f"{start + int(bad[0])} is {block[bad[0]]}")
    return label_array(listed), np.ascontiguousarray(codes, dtype=np.int32)


class _NpyAppender:
    """A ``.npy`` file written in pieces: a header of fixed size first, rows
    appended, the header rewritten with the final shape on :meth:`close`.

    The file is a temporary one next to ``path`` (``self.temporary``); the
    writer renames it to ``path`` once the whole store is written."""

    def __init__(self, path, dtype, row_shape=()):
        self.path = path
        self.temporary = temporary_path(path)
        self.dtype = np.dtype(dtype)
        self.row_shape = tuple(row_shape)
        self.n_rows = 0
        self.file = open(self.temporary, "xb")
        self.file.write(b"\0" * _HEADER)

    def append(self, rows):
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        if rows.shape[1:] != self.row_shape:  # pragma: no cover - the writer's own use
            raise ValueError(f"rows of shape {rows.shape[1:]} for {self.row_shape}")
        if rows.size:
            self.file.write(memoryview(rows).cast("B"))
        self.n_rows += rows.shape[0]

    def close(self):
        descr = np.lib.format.dtype_to_descr(self.dtype)
        shape = (self.n_rows,) + self.row_shape
        text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (descr, shape)
        text = text.ljust(_HEADER - 10 - 1) + "\n"
        header = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")
        assert len(header) == _HEADER
        self.file.seek(0)
        self.file.write(header)
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()

    def abort(self):
        self.file.close()
        _remove(self.temporary)


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


class CorpusWriter:
    """Write a corpus store chunk by chunk (see the module's format).

    Each :meth:`append` writes one chunk's arrays at the end of the files
    (the chunk's pointers shifted by what came before), so a corpus larger
    than memory is written with the memory of one chunk; :meth:`close`
    writes the vocabulary, the classes and the manifest. Used by
    :func:`save_corpus` and :func:`~sklearn_crf.encode_stream`.

    Every file is written to a temporary file in ``directory`` first;
    :meth:`close` renames them to their names once all are complete, the
    manifest last (a store already there loses its manifest just before,
    so that a failure during the renames leaves no store that looks
    finished). A failure or :meth:`abort` before that removes the temporary
    files and leaves a store already in ``directory`` as it was.

    Parameters
    ----------
    directory : str or path-like
        Created if missing; it must be empty, unless it holds a store and
        ``overwrite`` is true (then the store's files are replaced when
        :meth:`close` succeeds).
    overwrite : bool, default=False
        Replace a store already in ``directory``.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn_crf import SequenceVectorizer
    >>> from sklearn_crf._io.corpus_store import CorpusWriter, load_corpus
    >>> vec = SequenceVectorizer()
    >>> directory = tempfile.mkdtemp()
    >>> writer = CorpusWriter(directory)
    >>> writer.append(vec.partial_fit_encode([[{"w": "a"}]]), np.int32([0]))
    >>> writer.append(vec.partial_fit_encode([[{"w": "b"}]]), np.int32([1]))
    >>> writer.close(vec, classes=np.array(["B", "O"]))
    >>> corpus, y = load_corpus(directory)
    >>> corpus.tok_attr.tolist(), y
    ([0, 1], [['B'], ['O']])
    """

    def __init__(self, directory, *, overwrite=False):
        self.directory = os.fspath(directory)
        _prepare_directory(self.directory, overwrite)
        self.files = {name: _NpyAppender(self._path(f"{name}.npy"), dtype)
                      for name, dtype in ARRAYS.items()}
        self.dense = self.labels = self.hash_slots = None
        self.json_files = {}
        self.n_attributes = 0
        self.n_chunks = 0
        self.with_labels = None

    def _path(self, name):
        return os.path.join(self.directory, name)

    def append(self, corpus, codes=None):
        """Write one chunk: an :class:`EncodedCorpus` and, if the store has
        labels, the int32 code of each of its tokens' labels.

        Every chunk must agree with the first on labels (given or not) and on
        the dense part (its number of columns; the dtype is the first chunk's).
        """
        if self.with_labels is None:
            self.with_labels = codes is not None
            if self.with_labels:
                self.labels = _NpyAppender(self._path("labels.npy"), np.int32)
            if corpus.dense is not None:
                self.dense = _NpyAppender(self._path("dense.npy"), corpus.dense.dtype,
                                          (corpus.n_dense,))
        if (codes is not None) != self.with_labels:
            raise ValueError("every chunk needs labels, or none")
        if (corpus.dense is None) != (self.dense is None) or (
                self.dense is not None and corpus.n_dense != self.dense.row_shape[0]):
            raise ValueError("every chunk needs the first chunk's number of dense columns")
        if codes is not None and len(codes) != corpus.n_tokens:
            raise ValueError(
                f"{len(codes)} label codes for a chunk of {corpus.n_tokens} tokens")
        files = self.files
        n_tokens, n_entries = files["tok_ptr"].n_rows, files["tok_attr"].n_rows
        files["seq_ptr"].append(corpus.seq_ptr[:-1] + n_tokens)
        files["tok_ptr"].append(corpus.tok_ptr[:-1] + n_entries)
        files["tok_attr"].append(corpus.tok_attr)
        files["tok_val"].append(corpus.tok_val)
        files["zero_tok"].append(corpus.zero_tok + n_tokens)
        files["zero_attr"].append(corpus.zero_attr)
        if self.dense is not None:
            self.dense.append(corpus.dense)
        if codes is not None:
            self.labels.append(codes)
        self.n_attributes = max(self.n_attributes, corpus.n_attributes)
        self.n_chunks += 1

    def close(self, vectorizer=None, classes=None, code_map=None):
        """Finish the store: the vocabulary of ``vectorizer`` (a fitted
        :class:`SequenceVectorizer`, or None), the ``classes`` (labels by code)
        and the manifest. ``code_map`` (int32, optional) maps the codes written
        to the final ones (applied in place, in blocks). On failure the
        temporary files are removed (as by :meth:`abort`) and the error raised."""
        try:
            self._finish(vectorizer, classes, code_map)
        except BaseException:
            self.abort()
            raise

    def _finish(self, vectorizer, classes, code_map):
        files = self.files
        n_tokens, n_entries = files["tok_ptr"].n_rows, files["tok_attr"].n_rows
        n_sequences = files["seq_ptr"].n_rows
        files["seq_ptr"].append(np.array([n_tokens], dtype=np.int64))
        files["tok_ptr"].append(np.array([n_entries], dtype=np.int64))
        for appender in self._appenders():
            appender.close()
        n_classes = None
        if self.with_labels:
            classes = np.asarray(classes)
            if code_map is not None:
                codes = np.load(self.labels.temporary, mmap_mode="r+")
                for start in range(0, len(codes), _BLOCK):
                    codes[start:start + _BLOCK] = code_map[codes[start:start + _BLOCK]]
                codes.flush()
                del codes
            self._json("classes.json", {"classes": _json_labels(classes)})
            n_classes = len(classes)
        if vectorizer is not None:
            state = vocabulary_state(vectorizer)
            if vectorizer.n_attributes_ < self.n_attributes:
                raise ValueError(
                    f"the corpus has {self.n_attributes} attribute ids, but its "
                    f"vectorizer {vectorizer.n_attributes_}")
            if state.n_features is not None:
                slots = _NpyAppender(self._path("hash_slots.npy"), np.int64)
                self.hash_slots = slots
                slots.append(state.hash_slots)
                slots.close()
            self._json("vocabulary.json", {
                "n_features": state.n_features, "n_dense": state.n_dense,
                "attributes": state.attributes, "str_pairs": state.str_pairs,
                "num_keys": state.num_keys})
            self.n_attributes = vectorizer.n_attributes_
        manifest = {
            "format": FORMAT, "version": VERSION, "n_sequences": n_sequences,
            "n_tokens": n_tokens, "n_entries": n_entries,
            "n_zeros": files["zero_tok"].n_rows, "n_attributes": self.n_attributes,
            "n_dense": 0 if self.dense is None else self.dense.row_shape[0],
            "dense_dtype": None if self.dense is None else str(self.dense.dtype),
            "n_classes": n_classes, "vocabulary": vectorizer is not None}
        self._commit(manifest)
        logger.info("corpus store %s: %d sequences, %d tokens in %d chunks",
                    self.directory, n_sequences, n_tokens, self.n_chunks)

    def _json(self, name, obj):
        """Write a JSON file of the store to its temporary file."""
        path = self.json_files[name] = temporary_path(self._path(name))
        with open(path, "x", encoding="utf-8") as f:
            json.dump(obj, f)  # ensure_ascii: any str, lone surrogates too
            f.flush()
            os.fsync(f.fileno())

    def _commit(self, manifest):
        """Rename the complete temporary files to their names, the manifest
        last; files of a replaced store that the new one lacks are removed.
        Every byte is written before the first rename."""
        self._json(MANIFEST, manifest)
        written = {os.path.basename(a.path): a.temporary for a in self._appenders()}
        written.update(self.json_files)
        _remove(self._path(MANIFEST))  # from here, no finished store until the end
        for name in FILES[1:] + FILES[:1]:  # the manifest last
            if name in written:
                os.replace(written[name], self._path(name))
            else:
                _remove(self._path(name))
        self.json_files = {}

    def abort(self):
        """Remove the temporary files of an unfinished store (a store already
        in the directory is left as it was)."""
        for appender in self._appenders():
            appender.abort()
        for path in self.json_files.values():
            _remove(path)
        self.json_files = {}

    def _appenders(self):
        extra = [a for a in (self.dense, self.labels, self.hash_slots) if a is not None]
        return list(self.files.values()) + extra


def _prepare_directory(directory, overwrite):
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"{directory} is not a directory")
    os.makedirs(directory, exist_ok=True)
    present = os.listdir(directory)
    if not present:
        return
    if MANIFEST in present and overwrite:
        return  # the store's files are replaced when the new one is complete
    raise FileExistsError(
        f"{directory} is not empty"
        + (": it holds a corpus store (pass overwrite=True to replace it)"
           if MANIFEST in present else "; a corpus store needs a directory of its own")
    )


def _json_labels(classes):
    labels = classes.tolist()
    for label in labels:
        if type(label) not in _JSON_LABELS or (type(label) is float and not np.isfinite(label)):
            raise TypeError(
                f"the label {label!r} ({type(label).__name__}) cannot be stored: a "
                "corpus store holds str, int, float or bool labels"
            )
    return labels


def save_corpus(directory, corpus, y=None, *, overwrite=False):
    """Save an encoded corpus and its labels to a directory of ``.npy`` files.

    The format is described in :mod:`sklearn_crf._io.corpus_store`; no pickles.
    :func:`load_corpus` reads it back, memory-mapped.

    Parameters
    ----------
    directory : str or path-like
        Created if missing; it must be empty (or hold a store, with
        ``overwrite``).
    corpus : EncodedCorpus
        From :meth:`SequenceVectorizer.fit_encode` or
        :func:`~sklearn_crf.encode_stream`; its ``vectorizer`` (if set) is
        saved too, so that the loaded corpus has it again.
    y : list of sequences of labels, or LabelCodes, default=None
        One label per token (str, int, float or bool labels), or None.
    overwrite : bool, default=False
        Replace a store already in ``directory``.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn_crf import SequenceVectorizer
    >>> from sklearn_crf._io.corpus_store import load_corpus, save_corpus
    >>> corpus = SequenceVectorizer().fit_encode([[{"w": "a"}, {"w": "b"}]])
    >>> directory = tempfile.mkdtemp()
    >>> save_corpus(directory, corpus, [["B-LOC", "O"]])
    >>> loaded, y = load_corpus(directory)
    >>> loaded.tok_attr, y
    (memmap([0, 1], dtype=int32), [['B-LOC', 'O']])
    >>> loaded.vectorizer.feature_names_
    ['w:a', 'w:b']
    """
    if not isinstance(corpus, EncodedCorpus):
        raise TypeError(f"corpus must be an EncodedCorpus, got a {type(corpus).__name__}")
    classes = codes = None
    if isinstance(y, LabelCodes):
        classes, codes = np.asarray(y.classes), np.asarray(y.codes)
        if codes.shape != (corpus.n_tokens,):
            raise ValueError(
                f"y has {codes.shape} label codes for a corpus of {corpus.n_tokens} tokens")
        if len(codes) and (codes.min() < 0 or codes.max() >= len(classes)):
            raise ValueError(f"y has label codes out of range for {len(classes)} classes")
        codes = codes.astype(np.int32, copy=False)
    elif y is not None:
        classes, codes = encode_labels(y, corpus.seq_ptr)
    if classes is not None:
        _json_labels(classes)  # refuse before writing anything
    writer = CorpusWriter(directory, overwrite=overwrite)
    try:
        writer.append(corpus, codes)
        writer.close(corpus.vectorizer, classes)
    except BaseException:
        writer.abort()
        raise


def load_corpus(directory, *, mmap=True, label_codes=False):
    """Load a corpus store written by :func:`save_corpus` (or
    :func:`~sklearn_crf.encode_stream`), checking every file.

    Parameters
    ----------
    directory : str or path-like
        The store.
    mmap : bool, default=True
        Memory-map the arrays (read-only ``np.memmap``: the corpus stays on
        disk and its pages are shared by the processes that map it); False
        reads them into memory.
    label_codes : bool, default=False
        Give the labels as a :class:`LabelCodes` (int32 codes, memory-mapped
        with ``mmap``, and the classes) instead of lists of labels.

    Returns
    -------
    corpus : EncodedCorpus
        With its ``vectorizer`` (a fitted :class:`SequenceVectorizer`) when the
        store has a vocabulary.
    y : list of lists of labels, LabelCodes or None
        None when the store has no labels.

    Raises
    ------
    FileNotFoundError
        When ``directory`` does not exist (an OSError, as for every reader
        of the package).
    ValueError
        A file of the store missing, unreadable, malformed (a ``.npy``
        header that is not one NumPy writes for a C-order array, JSON that
        does not parse or nests deeper than Python can read) or inconsistent
        with the others (the message names it), or a store of another format
        or version.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn_crf import SequenceVectorizer
    >>> from sklearn_crf._io.corpus_store import load_corpus, save_corpus
    >>> directory = tempfile.mkdtemp()
    >>> save_corpus(directory, SequenceVectorizer().fit_encode([[{"w": "a"}]]), [["O"]])
    >>> corpus, y = load_corpus(directory, label_codes=True)
    >>> y.codes, y.classes
    (memmap([0], dtype=int32), array(['O'], dtype='<U1'))
    """
    directory = os.fspath(directory)
    if not os.path.exists(directory):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), directory)
    mode = "r" if mmap else None
    manifest = _read_manifest(directory)
    n_seq, n_tok = manifest["n_sequences"], manifest["n_tokens"]
    n_attr, n_dense = manifest["n_attributes"], manifest["n_dense"]
    shapes = {"seq_ptr": (n_seq + 1,), "tok_ptr": (n_tok + 1,),
              "tok_attr": (manifest["n_entries"],), "tok_val": (manifest["n_entries"],),
              "zero_tok": (manifest["n_zeros"],), "zero_attr": (manifest["n_zeros"],)}
    arrays = {name: _load_array(directory, name, ARRAYS[name], shapes[name], mode)
              for name in ARRAYS}
    _check_pointers(directory, "seq_ptr", arrays["seq_ptr"], n_tok)
    _check_pointers(directory, "tok_ptr", arrays["tok_ptr"], manifest["n_entries"])
    _check_range(directory, "tok_attr", arrays["tok_attr"], n_attr, "attribute ids")
    _check_range(directory, "zero_attr", arrays["zero_attr"], n_attr, "attribute ids")
    _check_range(directory, "zero_tok", arrays["zero_tok"], n_tok, "token indices")
    _check_pointers(directory, "zero_tok", arrays["zero_tok"], None)
    _check_values(directory, "tok_val", arrays["tok_val"], nonzero=True)
    dense = None
    if manifest["dense_dtype"] is not None:
        dense = _load_array(directory, "dense", np.dtype(manifest["dense_dtype"]),
                            (n_tok, n_dense), mode)
        _check_values(directory, "dense", dense, nonzero=False)
    vectorizer = None
    if manifest["vocabulary"]:
        vectorizer = _load_vocabulary(directory, manifest, mode)
    corpus = EncodedCorpus(n_attributes=n_attr, dense=dense, vectorizer=vectorizer, **arrays)
    y = None
    if manifest["n_classes"] is not None:
        codes = _load_array(directory, "labels", np.int32, (n_tok,), mode)
        classes = _load_classes(directory, manifest["n_classes"])
        _check_range(directory, "labels", codes, len(classes), "label codes")
        y = LabelCodes(codes, classes)
        if not label_codes:
            labels = classes[codes].tolist() if len(codes) else []
            seq_ptr = arrays["seq_ptr"].tolist()
            y = [labels[a:b] for a, b in zip(seq_ptr, seq_ptr[1:])]
    return corpus, y


def _fail(directory, name, message):
    raise ValueError(f"{os.path.join(directory, name)}: {message}")


def _read_json(directory, name):
    path = os.path.join(directory, name)
    try:
        data = read_file_bytes(path, "corpus store file")
    except FileNotFoundError:
        if name == MANIFEST:
            _fail(directory, name, "missing: not a corpus store (or one whose writing "
                  "did not finish)")
        _fail(directory, name, "missing")
    except OSError as e:
        _fail(directory, name, f"cannot be read ({e})")
    return read_json_object(data, lambda message: _fail(directory, name, message))


def _read_manifest(directory):
    manifest = _read_json(directory, MANIFEST)
    if manifest.get("format") != FORMAT:
        _fail(directory, MANIFEST, f"not a corpus store (format {manifest.get('format')!r})")
    if manifest.get("version") != VERSION:
        _fail(directory, MANIFEST, f"a corpus store of format version "
              f"{manifest.get('version')!r}; this version reads version {VERSION}")
    for key in ("n_sequences", "n_tokens", "n_entries", "n_zeros", "n_attributes", "n_dense"):
        value = manifest.get(key)
        if type(value) is not int or value < 0:
            _fail(directory, MANIFEST, f"{key} is {value!r}, not an int >= 0")
    if manifest["n_attributes"] > 2**31 - 1:
        _fail(directory, MANIFEST, "more than 2**31 - 1 attributes")
    if manifest.get("dense_dtype") not in (None, "float32", "float64"):
        _fail(directory, MANIFEST, f"dense_dtype is {manifest.get('dense_dtype')!r}")
    if manifest["dense_dtype"] is None and manifest["n_dense"]:
        _fail(directory, MANIFEST, "n_dense is not 0 but there is no dense_dtype")
    n_classes = manifest.get("n_classes")
    if n_classes is not None and (type(n_classes) is not int or n_classes < 1):
        _fail(directory, MANIFEST, f"n_classes is {n_classes!r}")
    if type(manifest.get("vocabulary")) is not bool:
        _fail(directory, MANIFEST, "vocabulary must be true or false")
    return manifest


def _load_array(directory, name, dtype, shape, mode):
    filename = f"{name}.npy"
    path = os.path.join(directory, filename)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _fail(directory, filename, "missing")
    if not stat.S_ISREG(info.st_mode):
        _fail(directory, filename, "not a regular file")
    _check_npy_header(directory, filename, path)
    try:
        array = np.load(path, mmap_mode=mode, allow_pickle=False)
    except Exception as e:  # the header is checked: only a damaged file gets here
        _fail(directory, filename, f"not a readable .npy array ({str(e)[:100]})")
    if not isinstance(array, np.ndarray):  # pragma: no cover - np.load of a .npz
        _fail(directory, filename, "not a .npy array")
    if array.dtype != dtype:
        _fail(directory, filename, f"dtype {array.dtype}, expected {np.dtype(dtype)}")
    if array.shape != shape:
        _fail(directory, filename, f"shape {array.shape}, expected {shape} "
              f"(from {MANIFEST})")
    if not array.flags.c_contiguous:
        _fail(directory, filename, "not in C order")
    return array


#: the longest .npy header read (NumPy writes a few hundred bytes)
_MAX_NPY_HEADER = 4096


def _check_npy_header(directory, filename, path):
    """Refuse a ``.npy`` file whose header is not of the form NumPy writes for
    a C-order array, before :func:`numpy.load` evaluates it."""
    try:
        with open(path, "rb") as f:
            start = f.read(12)
            if start[:6] != b"\x93NUMPY" or len(start) < 10:
                _fail(directory, filename, "not a .npy array (no NumPy magic)")
            if start[6] == 1:
                offset, (length,) = 10, struct.unpack_from("<H", start, 8)
            elif start[6] in (2, 3) and len(start) == 12:
                offset, (length,) = 12, struct.unpack_from("<I", start, 8)
            else:
                _fail(directory, filename, f"unsupported .npy version {start[6]}")
            if length > _MAX_NPY_HEADER:
                _fail(directory, filename, f"a .npy header of {length} bytes")
            f.seek(offset)
            header = f.read(length)
    except OSError as e:
        _fail(directory, filename, f"cannot be read ({e})")
    if len(header) != length or NPY_HEADER.fullmatch(header.decode("latin-1")) is None:
        _fail(directory, filename, "not the .npy header of a C-order array")


def _blocks(n):
    return range(0, n, _BLOCK)


def _check_pointers(directory, name, ptr, end):
    """Start at 0 (pointers), never decrease, end at ``end`` (None: only the order)."""
    filename = f"{name}.npy"
    if end is not None and (ptr[0] != 0 or ptr[-1] != end):
        _fail(directory, filename, f"must run from 0 to {end}, runs from {ptr[0]} to {ptr[-1]}")
    for start in _blocks(len(ptr)):
        block = ptr[max(start - 1, 0):start + _BLOCK]
        if (np.diff(block) < 0).any():
            i = max(start - 1, 0) + int(np.flatnonzero(np.diff(block) < 0)[0])
            _fail(directory, filename, f"decreases at index {i + 1}")


def _check_range(directory, name, ids, n, what):
    for start in _blocks(len(ids)):
        block = ids[start:start + _BLOCK]
        bad = np.flatnonzero((block < 0) | (block >= n))
        if len(bad):
            _fail(directory, f"{name}.npy", f"{what} must be in [0, {n}); index "
                  f"{start + int(bad[0])} is {block[bad[0]]}")


def _check_values(directory, name, values, nonzero):
    flat = values.reshape(-1)
    for start in _blocks(len(flat)):
        block = flat[start:start + _BLOCK]
        bad = ~np.isfinite(block)
        if nonzero:
            bad |= block == 0
        if bad.any():
            i = start + int(np.flatnonzero(bad)[0])
            _fail(directory, f"{name}.npy", f"value {flat[i]} at flat index {i}; values "
                  "must be finite" + (" and not 0" if nonzero else ""))


def _load_classes(directory, n_classes):
    classes = _read_json(directory, "classes.json").get("classes")
    if not isinstance(classes, list) or len(classes) != n_classes:
        _fail(directory, "classes.json", f"must list the {n_classes} classes of {MANIFEST}")
    kinds = {type(label) for label in classes}
    if len(kinds) != 1 or not kinds <= set(_JSON_LABELS):
        _fail(directory, "classes.json", "classes must all be str, all int, all float or all bool")
    if len(set(classes)) != len(classes):
        _fail(directory, "classes.json", "a class is listed twice")
    return label_array(classes)


def _load_vocabulary(directory, manifest, mode):
    vocab = _read_json(directory, "vocabulary.json")
    n_features = vocab.get("n_features")
    if n_features is not None and (type(n_features) is not int or n_features < 1):
        _fail(directory, "vocabulary.json", f"n_features is {n_features!r}")
    hash_slots = None
    if n_features is not None:
        hash_slots = _load_array(directory, "hash_slots", np.int64,
                                 (manifest["n_attributes"],), mode)
        _check_range(directory, "hash_slots", hash_slots, n_features, "hash slots")
        if len(np.unique(hash_slots)) != len(hash_slots):
            _fail(directory, "hash_slots.npy", "a hash slot is listed twice")
    state = VocabularyState(
        n_features=n_features, n_dense=vocab.get("n_dense"),
        attributes=vocab.get("attributes"), hash_slots=hash_slots,
        str_pairs=vocab.get("str_pairs", {}), num_keys=vocab.get("num_keys", {}))
    where = os.path.join(directory, "vocabulary.json")
    try:
        vectorizer = vectorizer_from_state(state, where=where)
    except RecursionError:
        _fail(directory, "vocabulary.json", "nested too deeply")
    except (TypeError, AttributeError, KeyError) as e:
        _fail(directory, "vocabulary.json", f"malformed ({type(e).__name__}: {str(e)[:100]})")
    if vectorizer.n_attributes_ != manifest["n_attributes"]:
        _fail(directory, "vocabulary.json", f"{vectorizer.n_attributes_} attributes, but "
              f"{MANIFEST} says {manifest['n_attributes']}")
    if vectorizer.n_dense_features_ != manifest["n_dense"]:
        _fail(directory, "vocabulary.json", f"n_dense is {vectorizer.n_dense_features_}, but "
              f"{MANIFEST} says {manifest['n_dense']}")
    return vectorizer

