"""Reading files that are untrusted input: bounded sizes, no devices.

Shared by the readers of CoNLL files (:mod:`sklearn_crf._io.conll`), CRFsuite
model files (:mod:`sklearn_crf._io.crfsuite`) and this project's model files
(:mod:`sklearn_crf._io.persistence`). A reader asks for the bytes of a path
through :func:`read_file_bytes`, which refuses, before reading anything, what
would never end (``/dev/zero``, a terminal), a directory, and a file larger
than the format allows; a model reader checks with
:func:`check_dense_size` that the weight matrices a file asks for are in
proportion to the file's size, and with :func:`check_fitted_model` that the
model it describes can tag every sentence.
"""

import json
import os
import re
import stat

import numpy as np

from .._model.constraints import build_constraints

__all__ = [
    "DENSE_BASE_BYTES", "DENSE_PER_FILE_BYTE", "MAX_PATH_CHECK", "NPY_HEADER", "QUOTE_LIMIT",
    "check_dense_size", "check_fitted_model", "check_labels", "quoted", "read_file_bytes",
    "read_json_object",
]

#: a model file may make the tagger allocate its dense (attribute, label) and
#: (label, label) weight matrices only up to this many bytes plus
#: ``DENSE_PER_FILE_BYTE`` times the file's size (valid models stay far below)
DENSE_BASE_BYTES = 2**30
DENSE_PER_FILE_BYTE = 64
#: an error message quotes at most this many characters of the input
QUOTE_LIMIT = 80
#: sentence lengths for which a model reader checks that transition
#: constraints leave a label path
MAX_PATH_CHECK = 1024
#: the ``.npy`` header NumPy writes for a C-order array, the only form the
#: readers accept (so that no other text reaches NumPy's header parser): the
#: dtype, then the shape's integers (``"3,"`` for 1-d, ``"3, 2"`` for 2-d)
NPY_HEADER = re.compile(
    r"\{'descr': '([<>|=]?[a-zA-Z]\d*)', 'fortran_order': False, "
    r"'shape': \((\d+,|\d+(?:, \d+)+|)\), \} *\n")


def quoted(text, limit=QUOTE_LIMIT):
    """``repr(text)``, cut to ``limit`` characters with the full length said.

    Error messages quote the input that is wrong; a line of 10,000 columns
    must not make a message of 20,000 characters.

    Examples
    --------
    >>> from sklearn_crf._io.safe_io import quoted
    >>> quoted("a b")
    "'a b'"
    >>> quoted("x " * 1000)  # doctest: +ELLIPSIS
    "'x x x ... (2000 characters)"
    """
    shown = repr(text)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit - 3]}... ({len(text)} characters)"


def check_labels(classes, fail, field="classes"):
    """Refuse the str labels that no output can hold, naming the first.

    A fitted model's labels are written to CoNLL files (``sklearn-crf tag``),
    CRFsuite files and JSON: a label must be a non-empty str that UTF-8 can
    encode (no lone surrogate) and that holds no NUL, newline or carriage
    return. Non-str labels (int) are left to the caller.

    Parameters
    ----------
    classes : sequence
        The labels.
    fail : callable
        ``fail(message)`` raises the reader's error (it names the file).
    field : str, default="classes"
        The field the labels come from, for the message.

    Examples
    --------
    >>> from sklearn_crf._io.safe_io import check_labels
    >>> def fail(message):
    ...     raise ValueError("model.crf: " + message)
    >>> check_labels(["B-PER", "O"], fail)
    >>> check_labels(["O", "B\\x00"], fail)
    Traceback (most recent call last):
    ...
    ValueError: model.crf: classes[1]='B\\x00' holds a NUL, newline or carriage return
    """
    for i, label in enumerate(classes):
        if not isinstance(label, str):
            continue
        if not label:
            fail(f"{field}[{i}] is an empty label")
        if "\0" in label or "\n" in label or "\r" in label:
            fail(f"{field}[{i}]={quoted(label)} holds a NUL, newline or carriage return")
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            fail(f"{field}[{i}]={quoted(label)} cannot be encoded as UTF-8 "
                 "(a lone surrogate)")


def read_file_bytes(path, what, *, max_size=None, allow_pipe=False):
    """The bytes of the file ``path``, checked before they are read.

    Parameters
    ----------
    path : str, bytes or path-like
        The file.
    what : str
        What the file should be, for the messages (``"CRFsuite model"``).
    max_size : int, default=None
        Largest size the format allows, in bytes (``None``: no bound).
    allow_pipe : bool, default=False
        Also read a pipe (FIFO) to its end, as ``<(zcat data.gz)`` gives one;
        then ``max_size`` is checked after reading (the size is not known
        before).

    Returns
    -------
    data : bytes
        The whole content.

    Raises
    ------
    ValueError
        When ``path`` is a directory, a device or socket (``/dev/zero`` would
        never end) or a pipe without ``allow_pipe``, when it is larger than
        ``max_size``, or when it changed size while being read; the message
        names the file.
    OSError
        When the file cannot be opened or read (``FileNotFoundError``,
        ``PermissionError``, ...).

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_crf._io.safe_io import read_file_bytes
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "data.txt")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"a O\\n")
    >>> read_file_bytes(path, "CoNLL")
    b'a O\\n'
    >>> read_file_bytes(folder, "CoNLL")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...: a directory, not a CoNLL file
    """
    name = os.fsdecode(path)
    if os.path.isdir(path):  # open() of a directory fails differently on each OS
        raise ValueError(f"{name}: a directory, not a {what} file")
    with open(path, "rb") as f:
        info = os.fstat(f.fileno())
        if stat.S_ISFIFO(info.st_mode) and allow_pipe:
            data = f.read() if max_size is None else f.read(max_size + 1)
            if max_size is not None and len(data) > max_size:
                raise ValueError(
                    f"{name}: more than {max_size} bytes, larger than a {what} file can be"
                )
            return data
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{name}: not a regular file, cannot be a {what} file")
        if max_size is not None and info.st_size > max_size:
            raise ValueError(
                f"{name}: {info.st_size} bytes, larger than a {what} file can be ({max_size})"
            )
        data = f.read(info.st_size + 1)
    if len(data) != info.st_size:
        raise ValueError(f"{name}: the file changed size while being read")
    return data


def check_dense_size(n_attributes, n_labels, file_size, fail):
    """Refuse a model whose dense weights are out of proportion to its file.

    A fitted tagger holds dense ``(n_attributes, n_labels)`` and
    ``(n_labels, n_labels)`` float64 matrices; a small crafted file must not
    make it allocate much more memory than it holds.

    Parameters
    ----------
    n_attributes, n_labels : int
        The sizes the file declares.
    file_size : int
        The file's size in bytes.
    fail : callable
        ``fail(message)`` raises the reader's error (it names the file).

    Examples
    --------
    >>> from sklearn_crf._io.safe_io import check_dense_size
    >>> def fail(message):
    ...     raise ValueError("model.crf: " + message)
    >>> check_dense_size(1000, 9, 50_000, fail)  # fine: returns None
    >>> check_dense_size(10**9, 9, 50_000, fail)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: model.crf: 1000000000 attributes and 9 labels need ... bytes of dense weights, ...
    """
    dense = 8 * (n_attributes * n_labels + n_labels * n_labels)
    limit = DENSE_BASE_BYTES + DENSE_PER_FILE_BYTE * file_size
    if dense > limit:
        fail(
            f"{n_attributes} attributes and {n_labels} labels need {dense} bytes of "
            f"dense weights, more than a file of {file_size} bytes justifies ({limit})"
        )


def check_fitted_model(classes, params, fail):
    """What a fitted tagger needs to predict, checked before it is built or
    written (by :func:`~sklearn_crf.save_model`, :func:`~sklearn_crf.load_model`
    and :func:`~sklearn_crf.load_crfsuite`): labels that every output can hold,
    and ``transition_constraints`` that name its labels and allow a label path
    for every sentence length."""
    check_labels(classes, fail)
    spec = params.get("transition_constraints")
    if spec is None:
        return
    try:
        constraints = build_constraints(spec, list(classes))
    except (ValueError, TypeError) as err:
        fail(f"params.transition_constraints: {str(err)[:300]}")
    length = _length_without_path(constraints)
    if length is not None:
        fail(f"params.transition_constraints allow no label path for a sentence of "
             f"{length} token{'s' if length > 1 else ''}: the model could not tag it")


def _length_without_path(constraints):
    """The shortest sentence length with no label path under ``constraints``
    (a :class:`TransitionConstraints`), or None when every length checked has one.

    The labels that can end a path of t tokens form a set that depends only
    on the set for t - 1: once a set repeats, the lengths after it repeat the
    same sets, and every length has a path. A scheme's sets repeat after two
    steps; the search stops at :data:`MAX_PATH_CHECK` tokens (a crafted
    file may refuse only longer sentences; predicting one of them is then a
    ValueError naming the sequence).
    """
    trans = constraints.transitions.astype(np.int64)
    reach = constraints.start.copy()
    seen = set()
    for length in range(1, MAX_PATH_CHECK + 1):
        if not (reach & constraints.end).any():
            return length
        key = reach.tobytes()
        if key in seen:
            return None
        seen.add(key)
        reach = (reach.astype(np.int64) @ trans) > 0
    return None


def read_json_object(raw, fail):
    """The JSON object (a dict) in the bytes ``raw`` of a file: the one reading
    of the JSON documents of model files and corpus stores. ``fail(message)``
    raises the reader's error (it names the file) when the bytes are not
    UTF-8, not JSON (nested too deeply included) or not an object."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        fail("not valid JSON (not UTF-8)")
    except RecursionError:
        fail("not valid JSON (nested too deeply)")
    except ValueError as err:
        fail(f"not valid JSON ({str(err)[:100]})")
    if not isinstance(doc, dict):
        fail(f"not a JSON object: it holds a {type(doc).__name__}, expected an object")
    return doc
