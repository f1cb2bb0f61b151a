"""The ``sklearn-crf`` command line (``python -m sklearn_crf``): train, tag, eval, dump, convert.

A thin layer over the public API: CoNLL files through :func:`read_conll` and
:func:`write_conll`, features through :class:`SequenceFeaturizer` or
:class:`TemplateFeaturizer`, models through ``save_model``/``load_model``
(``train`` saves the featurizer and the tagger as one Pipeline, so ``tag``
featurizes as ``train`` did) and ``load_crfsuite``/``save_crfsuite``.

The command line holds no default of its own: a training or featurizer
option that is not given is not passed, so the estimator's default applies,
and ``--help`` shows the estimator's defaults. Every command checks what it
can before working (its output files can be written, a model is given where
one is needed, the input's columns fit the model). :func:`main` is the one
error boundary: whatever fails is reported as one line, ``sklearn-crf:
error: FILE[, line N]: what is wrong``, with a non-zero exit status and no
traceback (``--debug`` shows it). An output file is written whole or not at
all (:mod:`sklearn_crf._io.atomic`): a failed run leaves an existing one as it
was.
"""

import argparse
import contextlib
import io
import json
import logging
import os
import re
import sys
import time
import warnings
from typing import NamedTuple

from ._io.atomic import atomic_write
from ._io.conll import read_conll, write_conll
from ._model.constraints import SCHEMES
from ._io.crfsuite import MAGIC as CRFSUITE_MAGIC
from ._io.persistence import MAX_LIST, MAX_TEMPLATES, MAX_WINDOW
from ._io.safe_io import read_file_bytes
from ._version import __version__

PROG = "sklearn-crf"
#: key of the command line's settings in a model file's metadata
METADATA_KEY = "sklearn_crf_cli"
#: version 1: a CRFTagger with the featurizer's settings in the metadata;
#: version 2: a Pipeline (featurizer + tagger), the metadata says how the
#: training files were read
METADATA_VERSION = 2

#: the training options and the CRFTagger parameters they set
TRAINING_OPTIONS = {
    "c1": "c1", "c2": "c2", "max_iter": "max_iter", "tol": "tol", "min_freq": "min_freq",
    "all_possible_states": "all_possible_states",
    "all_possible_transitions": "all_possible_transitions", "n_jobs": "n_jobs",
}
#: the featurizer options and the SequenceFeaturizer parameters they set
FEATURIZER_OPTIONS = (
    "window", "lower", "identity", "prefixes", "suffixes", "shape", "flags",
    "neighbor_features", "bos_eos", "bias",
)

logger = logging.getLogger("sklearn_crf")
#: the longest error message the command line prints (one line)
MAX_MESSAGE = 500


class CommandError(Exception):
    """A problem reported as one line on stderr, with a non-zero exit status."""


class UsageError(CommandError):
    """A problem with the arguments (exit status 2), found after parsing."""


class _ArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors become :class:`UsageError`."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


# ---------------------------------------------------------------------------
# Checks before work
# ---------------------------------------------------------------------------


def _check_output(path, option):
    """Fail now, in one line, if ``path`` (an output file) cannot be written.

    ``-`` and None (stdout) always can. A directory, a missing folder or a
    folder or file without write permission is a :class:`CommandError`
    naming the path and the option that gave it.
    """
    if path is None or path == "-":
        return
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory; {option} takes a file name.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CommandError(f"{path}: no such folder {folder!r} ({option}).")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise CommandError(f"{path}: cannot write the file (permission denied; {option}).")
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise CommandError(f"{path}: cannot write in {folder!r} (permission denied; {option}).")


def _check_input(path):
    """Fail now if the input file ``path`` does not exist (``-`` is stdin)."""
    if path != "-" and not os.path.exists(path):
        raise CommandError(f"{path}: no such file.")


def _is_crfsuite_file(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == CRFSUITE_MAGIC
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise CommandError(f"{path}: is a directory, not a model file.") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror}).") from None


# ---------------------------------------------------------------------------
# Reading and featurizing
# ---------------------------------------------------------------------------


def _read(path, **kwargs):
    """read_conll on a path, or on stdin for ``-``."""
    if path == "-":
        stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
        data = read_conll(stdin, **kwargs)
        return data, "<stdin>"
    return read_conll(path, **kwargs), path


class _TrainingFile(NamedTuple):
    """One training file as ``train`` read it.

    Attributes
    ----------
    name : str
        Its name for messages (``<stdin>`` for ``-``).
    sentences, tags : list
        As :func:`read_conll` gives them.
    lines : ndarray
        The first line of each sentence, for messages.
    """

    name: str
    sentences: list
    tags: list
    lines: object


def _read_training_files(paths, label_column, sep):
    """The training files (each a :class:`_TrainingFile`) and their number of columns."""
    files, n_columns = [], None
    for path in paths:
        with _about("<stdin>" if path == "-" else path):
            data, name = _read(path, label_column=None, sep=sep)
        if not data.sentences:
            raise CommandError(f"{name}: no sentences.")
        if data.n_columns < 2:
            raise CommandError(
                f"{name}, line {data.lines[0]}: 1 column; training needs a token "
                "column and a label column (--label-column says which, the last by default)."
            )
        index = _label_index(data.n_columns, label_column, name, data.lines[0])
        if n_columns is not None and data.n_columns != n_columns:
            raise CommandError(
                f"{name}, line {data.lines[0]}: {data.n_columns} columns, but "
                f"{paths[0]} has {n_columns}."
            )
        n_columns = data.n_columns
        sentences, tags = _split_column(data.sentences, index)
        files.append(_TrainingFile(name, sentences, tags, data.lines))
        logger.info(
            "read %s: %d sentences, %d tokens, %d columns",
            name, len(data.sentences), sum(map(len, data.sentences)), data.n_columns,
        )
    return files, n_columns


def _label_index(n_columns, label_column, name, line):
    """The index of ``--label-column`` among ``n_columns`` columns, or a
    CommandError naming the file and line."""
    if not -n_columns <= label_column < n_columns or label_column % n_columns == 0:
        raise CommandError(
            f"{name}, line {line}: --label-column {label_column} does not name a "
            f"column after the token of {n_columns} columns."
        )
    return label_column % n_columns


def _split_column(sentences, index):
    """The sentences without column ``index``, and that column (the labels)."""
    rest = [[t[:index] + t[index + 1:] for t in s] for s in sentences]
    column = [[t[index] for t in s] for s in sentences]
    return rest, column


def _split_columns(args):
    """Column names of ``--columns``, and the training files it swallowed.

    ``--columns`` takes comma-separated names (``--columns pos,chunk``) or,
    as before, names separated by spaces; trailing values that name existing
    files are the training files given after it (``--columns pos
    train.conll``), not columns.
    """
    if args.columns is None:
        return None
    if isinstance(args.columns, str):
        args.columns = [args.columns]
    k = len(args.columns)
    while k > 0 and "," not in args.columns[k - 1] and os.path.isfile(args.columns[k - 1]):
        k -= 1
    if k < len(args.columns):
        if not hasattr(args, "files"):
            raise UsageError(f"--columns: {args.columns[k]!r} is a file, not a column name.")
        args.files = list(args.files) + list(args.columns[k:])
    values = [name for value in args.columns[:k] for name in value.split(",")]
    if not values:
        raise UsageError("--columns names no column (e.g. --columns pos,chunk).")
    if "" in values:
        raise UsageError(f"--columns {','.join(values)!r} has an empty name.")
    return values


def _featurizer_settings(args, n_token_columns):
    """The featurizer of ``train`` (or ``convert --with-featurizer``), from the
    options given (no default of its own); ``n_token_columns``, when known,
    is checked against ``--columns``."""
    from ._features.featurizer import SequenceFeaturizer
    from ._features.templates import TemplateFeaturizer

    given = {name: getattr(args, name) for name in FEATURIZER_OPTIONS if hasattr(args, name)}
    if args.template is not None:
        if args.columns is not None:
            raise CommandError(
                "--columns names columns for the built-in featurizer; with --template, "
                "the templates read the columns (%x[row,column])."
            )
        if given:
            raise CommandError(
                f"--{sorted(given)[0].replace('_', '-')} is an option of the built-in "
                "featurizer, which --template replaces."
            )
        try:
            lines = read_file_bytes(args.template, "template", allow_pipe=True).decode(
                "utf-8").split("\n")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CommandError(f"{args.template}: cannot read the template file ({exc}).")
        featurizer = TemplateFeaturizer(templates=lines)
        try:
            featurizer.fit([])
        except ValueError as exc:
            raise CommandError(f"{args.template}: {exc}") from None
        return featurizer
    if args.columns is not None:
        if n_token_columns is not None and len(args.columns) != n_token_columns - 1:
            raise CommandError(
                f"--columns names {len(args.columns)} column(s), but the training "
                f"data has {n_token_columns - 1} column(s) between the token and "
                "the label."
            )
        given["columns"] = tuple(None if name == "-" else name for name in args.columns)
    elif n_token_columns is not None and n_token_columns > 1:
        logger.info(
            "ignoring %d column(s) between the token and the label "
            "(name them with --columns to use them as features)",
            n_token_columns - 1,
        )
    for name in ("prefixes", "suffixes", "neighbor_features"):
        if isinstance(given.get(name), list):
            given[name] = "all" if given[name] == ["all"] else tuple(given[name])
    featurizer = SequenceFeaturizer(**given)
    try:
        featurizer.fit([])
    except ValueError as exc:
        raise CommandError(f"invalid featurizer options: {str(exc).splitlines()[0]}") from None
    return featurizer


def _make_featurizer(settings):
    """The featurizer described by the settings of a version-1 model file."""
    from ._features.featurizer import SequenceFeaturizer
    from ._features.templates import TemplateFeaturizer

    kind = settings.get("kind") if isinstance(settings, dict) else None
    if kind == "templates":
        featurizer = TemplateFeaturizer(templates=list(settings["templates"]))
    elif kind == "sequence":
        params = dict(settings["params"])
        for name in ("prefixes", "suffixes", "columns"):
            if isinstance(params.get(name), list):
                params[name] = tuple(params[name])
        if isinstance(params.get("neighbor_features"), list):
            params["neighbor_features"] = tuple(params["neighbor_features"])
        try:
            featurizer = SequenceFeaturizer(**params)
        except TypeError as exc:  # an unknown parameter name
            raise CommandError(f"invalid featurizer settings in the model file ({exc}).") from None
    else:
        raise CommandError(f"unknown featurizer settings in the model file: {settings!r}")
    featurizer.fit([])  # validates the settings
    from ._io.persistence import check_featurizer_work

    def fail(what):
        raise CommandError(f"invalid featurizer settings in the model file ({what}).")

    check_featurizer_work(featurizer, f"{METADATA_KEY}.featurizer", fail)
    return featurizer


def _cli_metadata(metadata, model_path, *, featurizer):
    """The command line's settings in a model's metadata, checked (None if absent).

    A model file is untrusted input: the settings must have the types and
    sizes ``train`` writes, so that a crafted file cannot make ``tag`` fail
    with a traceback or build an unbounded featurizer. ``featurizer``: the
    settings must describe it (a version-1 file, a CRFTagger), or not (a
    version-2 file, a Pipeline that holds it).
    """
    settings = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if settings is None:
        return None

    def bad(what):
        return CommandError(f"{model_path}: invalid featurizer settings in the model file ({what}).")

    def is_int(value):
        return isinstance(value, int) and not isinstance(value, bool)

    if not isinstance(settings, dict):
        raise bad(f"{METADATA_KEY} is a {type(settings).__name__}")
    if featurizer and "featurizer" not in settings:
        return None
    n_token_columns = settings.get("n_token_columns")
    if not is_int(n_token_columns) or not 1 <= n_token_columns <= MAX_LIST:
        raise bad(f"n_token_columns={n_token_columns!r}")
    label_column = settings.get("label_column")
    if not is_int(label_column) or not 0 < abs(label_column) <= n_token_columns + 1 or (
        label_column % (n_token_columns + 1) == 0
    ):
        raise bad(f"label_column={label_column!r}")
    sep = settings.get("sep")
    if sep is not None and (not isinstance(sep, str) or not sep or "\n" in sep or "\r" in sep):
        raise bad(f"sep={sep!r}")
    if not featurizer:
        return settings
    featurizer = settings["featurizer"]
    kind = featurizer.get("kind") if isinstance(featurizer, dict) else None
    if kind == "templates":
        templates = featurizer.get("templates")
        if not isinstance(templates, list) or len(templates) > MAX_TEMPLATES or not all(
            isinstance(line, str) for line in templates
        ):
            raise bad("templates")
    elif kind == "sequence":
        params = featurizer.get("params")
        if not isinstance(params, dict):
            raise bad("params")
        window = params.get("window", 1)
        if not is_int(window) or not 0 <= window <= MAX_WINDOW:
            raise bad(f"window={window!r}")
        for name, value in params.items():
            if isinstance(value, list) and len(value) > MAX_LIST:
                raise bad(f"{name} has {len(value)} entries")
            if name in ("prefixes", "suffixes") and isinstance(value, list) and not all(
                is_int(k) and 1 <= k <= MAX_LIST for k in value
            ):
                raise bad(f"{name}={value!r}")
    else:
        raise bad(f"kind={kind!r}")
    return settings


def _load(model_path):
    """(model, metadata) of a model file; a CRFsuite file says to convert it."""
    from ._io.persistence import load_model

    if not os.path.exists(model_path):
        raise CommandError(f"{model_path}: no such model file.")
    if _is_crfsuite_file(model_path):
        raise CommandError(
            f"{model_path}: a CRFsuite model file, not a {PROG} model file; convert it "
            f"first: '{PROG} convert {model_path} MODEL' (see '{PROG} convert --help')."
        )
    try:
        with _about(model_path):
            return load_model(model_path, return_metadata=True)
    except CommandError as exc:
        cause = exc.__cause__
        if isinstance(cause, FileNotFoundError):
            raise CommandError(f"{model_path}: no such model file.") from cause
        if isinstance(cause, OSError):
            raise CommandError(
                f"{model_path}: cannot read the model file ({cause.strerror}).") from cause
        raise


def _tagger_of(model):
    """The CRFTagger of a loaded model: itself, or a Pipeline's last step."""
    from sklearn.pipeline import Pipeline

    return model.steps[-1][1] if isinstance(model, Pipeline) else model


def _named(path, exc, lines=None):
    """An exception's first line, prefixed with the file's name unless it has it.

    With ``lines`` (the first line of each sentence, :func:`read_conll`'s
    ``lines``), a message that names a sentence and token (``sentence 3,
    token 2``, as the featurizers and the tagger say) gets that token's line:
    ``FILE, line N: ...``.
    """
    message = _first_line(exc)
    if str(path) in message:
        return message
    found = re.search(r"sentence (\d+), token (\d+)", message)
    if lines is not None and found and int(found.group(1)) < len(lines):
        line = int(lines[int(found.group(1))]) + int(found.group(2))
        return f"{path}, line {line}: {message}"
    return f"{path}: {message}"


def _first_line(exc):
    """The first line of an exception's message (its type's name when it has
    none, or when the type says more than the message, as for a KeyError)."""
    text = str(exc)
    lines = text.splitlines()
    message = lines[0] if lines and lines[0].strip() else ""
    if not isinstance(exc, (ValueError, TypeError, OSError, CommandError)) or not message:
        message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return message


@contextlib.contextmanager
def _about_files(files):
    """:func:`_about` over several files read one after the other (each a
    :class:`_TrainingFile`): a message naming sentence s of all of them names
    the file that holds it and the line."""
    try:
        yield
    except (CommandError, KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:
        found = re.search(r"sentence (\d+), token (\d+)", _first_line(exc))
        s = int(found.group(1)) if found else 0
        for file in files:
            if s < len(file.sentences) or file is files[-1]:
                break
            s -= len(file.sentences)
        if found:
            message = _first_line(exc)
            line = int(file.lines[s]) + int(found.group(2)) if s < len(file.lines) else None
            where = file.name if line is None else f"{file.name}, line {line}"
            raise CommandError(f"{where}: {message}") from exc
        raise CommandError(_named(", ".join(f.name for f in files), exc)) from exc


@contextlib.contextmanager
def _about(path, lines=None):
    """Report any failure inside the block as a :class:`CommandError` naming
    ``path`` (and the line, see :func:`_named`); the original error stays
    chained, for ``--debug``."""
    try:
        yield
    except (CommandError, KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:
        raise CommandError(_named(path, exc, lines)) from exc


class _Model(NamedTuple):
    """A model file as ``tag`` and ``eval`` use it.

    Attributes
    ----------
    crf : CRFTagger
        The tagger.
    featurizer : object
        Its ``transform`` turns the token columns of sentences into the
        tagger's input: the Pipeline's steps before the tagger, or the
        featurizer of a version-1 file.
    n_token_columns : int or None
        How many columns of the input are token columns (the features'
        input); None when the model does not say (a Pipeline saved from
        Python whose featurizer reads any number of columns): every column
        but a label column is given to the featurizer.
    label_column : int
        Where a gold label column is, when the input has one.
    sep : str or None
        The column separator the training files were read with.
    """

    crf: object
    featurizer: object
    n_token_columns: object
    label_column: int
    sep: object


def _model_for_tagging(model_path):
    """The :class:`_Model` of a model file, or a CommandError saying why not."""
    from sklearn.pipeline import Pipeline

    model, metadata = _load(model_path)
    if isinstance(model, Pipeline):
        crf = model.steps[-1][1]
        featurizers = [s for _, s in model.steps[:-1] if not (s is None or s == "passthrough")]
        settings = _cli_metadata(metadata, model_path, featurizer=False)
        featurizer = model[:-1] if featurizers else None
    else:
        crf = model
        settings = _cli_metadata(metadata, model_path, featurizer=True)
        featurizer = None
        if settings is not None:
            try:
                featurizer = _make_featurizer(settings["featurizer"])
            except (ValueError, TypeError, CommandError) as exc:
                raise CommandError(_named(model_path, exc)) from None
    if featurizer is None:
        raise CommandError(
            f"{model_path}: the model has no featurizer settings: it is a CRFTagger "
            f"alone (saved from Python, or converted from CRFsuite), which tags "
            f"feature dicts, not the tokens of a file; save a Pipeline of a "
            f"featurizer and the tagger with save_model to use it with '{PROG} tag', "
            f"or use it from Python with your own features."
        )
    if settings is not None:
        return _Model(crf, featurizer, settings["n_token_columns"],
                      settings["label_column"], settings["sep"])
    from ._features.featurizer import SequenceFeaturizer

    first = featurizers[0]
    n_token_columns = None
    if isinstance(first, SequenceFeaturizer) and first.columns is not None:
        n_token_columns = 1 + len(first.columns)
    return _Model(crf, featurizer, n_token_columns, -1, None)


def _tokens_for_features(data, model, name, *, need_gold=False):
    """The token columns the model reads, and the gold labels (or None).

    ``data`` is :func:`read_conll`'s result with every column kept: the
    model's token columns, optionally plus a label column (at the training
    label column's position), which is dropped from the features.
    """
    sentences, n_columns = data.sentences, data.n_columns
    line = data.lines[0] if len(data.lines) else 1
    n_token_columns = model.n_token_columns
    if n_token_columns is None:  # the featurizer reads any number of columns
        if need_gold and n_columns < 2:
            raise CommandError(
                f"{name}, line {line}: no gold label column (1 column, the token only)."
            )
        n_token_columns = n_columns - 1 if need_gold else n_columns
    if n_columns == n_token_columns and not need_gold:
        return sentences, None
    if n_columns == n_token_columns + 1 and n_token_columns >= 1:
        return _split_column(sentences, model.label_column % n_columns)
    if need_gold and n_columns == n_token_columns:
        raise CommandError(
            f"{name}, line {line}: no gold label column ({n_columns} column(s), "
            "the model's token columns only)."
        )
    raise CommandError(
        f"{name}, line {line}: {n_columns} columns, but the model was trained on "
        f"{n_token_columns} token column(s) (plus a label column)."
    )


def _allowed_labels(cell):
    """A cell of the --allowed-column: ``*`` any, ``A`` forced, ``A|B`` a set."""
    if cell == "*":
        return None
    return cell if "|" not in cell else set(cell.split("|"))


def _read_allowed(data, column, classes, name):
    """The ``allowed`` argument from ``--allowed-column``, checked against the labels.

    Returns the sentences without that column, and ``allowed``; an unknown
    label is a CommandError naming the file and line.
    """
    n_columns = data.n_columns
    if not -n_columns < column < n_columns or column % n_columns == 0:
        raise CommandError(
            f"{name}: --allowed-column {column} does not name a column after "
            f"the token of {n_columns} columns."
        )
    j = column % n_columns
    known = set(classes)
    allowed = []
    for s, sentence in enumerate(data.sentences):
        row = []
        for t, token in enumerate(sentence):
            cell = _allowed_labels(token[j])
            labels = () if cell is None else [cell] if isinstance(cell, str) else sorted(cell)
            for label in labels:
                if label not in known:
                    raise CommandError(
                        f"{name}, line {data.lines[s] + t}: --allowed-column: the label "
                        f"{label!r} (in {token[j]!r}) is not one of the model's labels "
                        f"{sorted(known)}."
                    )
            row.append(cell)
        allowed.append(row)
    sentences = [[t[:j] + t[j + 1 :] for t in s] for s in data.sentences]
    return sentences, allowed


class _Prediction(NamedTuple):
    """What :func:`_predict` read and computed.

    Attributes
    ----------
    crf : CRFTagger
        The loaded tagger.
    data : Bunch
        :func:`read_conll`'s result for the input, every column kept.
    gold : list of list of str or None
        The input's label column, when it has one.
    X : list of list of dict
        The features of each token.
    sep : str or None
        The column separator used to read the input (and to write the output).
    allowed : list or None
        The ``allowed`` argument of the decoders, from ``--allowed-column``.
    """

    crf: object
    data: object
    gold: object
    X: list
    sep: object
    allowed: object = None


def _predict(model_path, path, sep, allowed_column=None, *, need_gold=False):
    """Model, file data, gold labels (or None) and features for a CoNLL file."""
    model = _model_for_tagging(model_path)
    sep = sep if sep is not None else model.sep
    with _about("<stdin>" if path == "-" else path):
        data, name = _read(path, label_column=None, sep=sep)
    allowed = None
    view = data
    if allowed_column is not None and data.sentences:
        sentences, allowed = _read_allowed(data, allowed_column, model.crf.classes_.tolist(), name)
        view = type(data)(**{**data, "sentences": sentences, "n_columns": data.n_columns - 1})
    tokens, gold = _tokens_for_features(view, model, name, need_gold=need_gold) if (
        data.sentences) else ([], None)
    with _about(name, data.lines):
        X = model.featurizer.transform(tokens) if tokens else []
    _check_dense_features(model_path, model.crf, X)
    return _Prediction(model.crf, data, gold, X, sep, allowed)


def _dense_width(X):
    """Number of dense features per token of featurized sentences: of an
    EncodedCorpus (a featurizer's ``output="encoded"``), or of the first
    sentence (feature dicts: 0; dicts and an array: its columns)."""
    from ._features.forms import dense_array
    from ._features.vectorizer import EncodedCorpus

    if isinstance(X, EncodedCorpus):
        return X.n_dense
    array = dense_array(X[0])
    return 0 if array is None else array.shape[1]


def _check_dense_features(model_path, crf, X):
    """A CommandError when the tagger needs dense features (word vectors) that
    the model's featurizer does not compute, or the other way round."""
    need = getattr(crf, "n_dense_features_", 0)
    if not len(X):
        return
    got = _dense_width(X)
    if got != need:
        raise CommandError(
            f"{model_path}: the model's tagger takes {need} dense features per token, "
            f"but its featurizer gives {got}: '{PROG} tag' and '{PROG} eval' can use "
            "a model with dense features (word vectors) only when it is a Pipeline "
            "whose featurizer computes them."
        )


# ---------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------


def _training_params(args):
    """The CRFTagger parameters given on the command line (and only those)."""
    params = {param: getattr(args, option) for option, param in TRAINING_OPTIONS.items()
              if hasattr(args, option)}
    params["verbose"] = 0 if args.quiet else 1
    return params


def _cmd_train(args):
    from sklearn.pipeline import make_pipeline

    from ._io.persistence import save_model
    from ._tagger import CRFTagger

    columns = _split_columns(args)
    args.columns = columns
    if not args.files:
        raise UsageError(
            f"the following arguments are required: FILE (see '{PROG} train --help')"
        )
    _check_output(args.model, "-m/--model")
    for path in args.files:
        _check_input(path)
    crf = CRFTagger(**_training_params(args))
    files, n_columns = _read_training_files(args.files, args.label_column, args.sep)
    featurizer = _featurizer_settings(args, n_columns - 1)
    start = time.perf_counter()
    X, tags = [], []
    for file in files:  # an error names the file and line (and the template file)
        with _about(file.name, file.lines):
            try:
                X += featurizer.transform(file.sentences)
            except ValueError as exc:
                if args.template is None:
                    raise
                raise ValueError(f"{_first_line(exc)} (templates of {args.template})") from exc
        tags += file.tags
    logger.info("featurized %d sentences in %.1f s", len(X), time.perf_counter() - start)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, _about_files(files):
        warnings.simplefilter("always")
        crf.fit(X, tags)
    for warning in caught:
        logger.warning("%s", str(warning.message).splitlines()[0])
    logger.info(
        "trained in %.1f s: %d iterations, loss %.4f, %d labels, %d parameters",
        time.perf_counter() - start, crf.n_iter_, crf.loss_, len(crf.classes_),
        crf.coef_.shape[0],
    )
    metadata = {
        METADATA_KEY: {
            "version": METADATA_VERSION,
            "n_token_columns": n_columns - 1,
            "label_column": args.label_column,
            "sep": args.sep,
            "sklearn_crf_version": __version__,
        }
    }
    with _about(args.model):
        save_model(make_pipeline(featurizer, crf), args.model, metadata=metadata)
    logger.info("saved the model to %s", args.model)
    return 0


def _write_tagged(out, data, extra, sep, fill):
    """``data``'s sentences with the ``extra`` columns of each token, and its
    ``-DOCSTART-`` lines where they were (each given ``fill`` columns when it
    has as many columns as a token line)."""
    starts = {}
    for docstart in data.docstarts:
        starts.setdefault(docstart.sentence, []).append(docstart.fields)
    joiner = " " if sep is None else sep

    def docstart_lines(s):
        for fields in starts.get(s, ()):
            fields = list(fields)
            if len(fields) == data.n_columns:
                fields += fill
            out.write(joiner.join(fields) + "\n\n")

    for s, (sentence, rows) in enumerate(zip(data.sentences, extra)):
        docstart_lines(s)
        write_conll(out, [[token + tuple(row) for token, row in zip(sentence, rows)]], sep=sep)
    docstart_lines(len(data.sentences))


def _cmd_tag(args):
    if args.nbest is not None and args.marginals:
        raise UsageError("--nbest and --marginals cannot be combined.")
    _check_output(args.output, "-o/--output")
    _check_input(args.file)
    crf, data, _, X, sep, allowed = _predict(args.model, args.file, args.sep, args.allowed_column)
    if args.constraints is not None:
        with _about(args.model):
            _check_scheme(crf, args.constraints)
        crf.set_params(transition_constraints=args.constraints)
    name = "<stdin>" if args.file == "-" else args.file
    if args.nbest is not None:
        return _write_nbest(args, crf, data, X, sep, allowed)
    with _about(name, data.lines):
        predictions = crf.predict(X, allowed=allowed) if len(X) else []
        extra = [[[str(label)] for label in sentence] for sentence in predictions]
        fill = ["O"]
        if args.marginals:
            fill.append("-X-")
            marginals = crf.predict_marginals(X, allowed=allowed) if len(X) else []
            for rows, sentence, probabilities in zip(extra, predictions, marginals):
                for row, label, p in zip(rows, sentence, probabilities):
                    row.append(f"{p[label]:.6f}")
    buffer = io.StringIO()
    with _about(args.model):  # labels the output cannot hold
        _write_tagged(buffer, data, extra, sep, fill)
    _write_output(args.output, buffer.getvalue())
    logger.info(
        "tagged %d sentences, %d tokens", len(predictions), sum(map(len, predictions))
    )
    return 0


def _check_scheme(crf, scheme):
    """A ValueError when the tagger's labels do not follow ``--constraints``' scheme."""
    from ._model.constraints import check_scheme_labels

    try:
        check_scheme_labels(scheme, crf.classes_.tolist())
    except ValueError as exc:
        raise ValueError(f"--constraints {scheme}: {exc}") from None


def _write_nbest(args, crf, data, X, sep, allowed):
    """CRF++'s n-best output: ``# rank probability`` then the tagged sentence, per path."""
    with _about("<stdin>" if args.file == "-" else args.file, data.lines):
        nbest = crf.predict_nbest(X, n=args.nbest, allowed=allowed) if len(X) else []
    buffer = io.StringIO()
    starts = {}
    for docstart in data.docstarts:
        starts.setdefault(docstart.sentence, []).append(docstart.fields)
    joiner = " " if sep is None else sep
    for s, (sentence, paths) in enumerate(zip(data.sentences, nbest)):
        for fields in starts.get(s, ()):
            buffer.write(joiner.join(fields) + "\n\n")
        for rank, (labels, probability) in enumerate(paths):
            buffer.write(f"# {rank} {probability:.6f}\n")
            with _about(args.model):
                write_conll(buffer, [[token + (str(label),) for token, label in
                                      zip(sentence, labels)]], sep=sep)
    for fields in starts.get(len(data.sentences), ()):
        buffer.write(joiner.join(fields) + "\n\n")
    _write_output(args.output, buffer.getvalue())
    logger.info("tagged %d sentences (%d best paths each)", len(nbest), args.nbest)
    return 0


def _write_output(path, text):
    """Write ``text`` to the file ``path`` whole or not at all (an existing file
    is replaced only once the text is written), or to stdout for None or ``-``."""
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    try:
        with atomic_write(path, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
    except OSError as exc:
        raise CommandError(f"{path}: cannot write ({exc.strerror or exc}).") from exc


def _cmd_eval(args):
    if args.model is not None and args.tagged:
        raise UsageError("give either -m/--model (tag FILE, then compare) or --tagged "
                         "(FILE holds the predictions), not both.")
    if args.model is None and not args.tagged:
        raise UsageError(
            "no model: give -m MODEL to tag FILE and compare with its labels, or "
            "--tagged if FILE's last two columns are the gold and the predicted labels "
            f"(as '{PROG} tag' writes them) (see '{PROG} eval --help')"
        )
    _check_input(args.file)
    name = "<stdin>" if args.file == "-" else args.file
    if args.model is not None:
        crf, data, gold, X, _, _ = _predict(args.model, args.file, args.sep, need_gold=True)
        with _about(name, data.lines):
            predicted = [[str(label) for label in seq] for seq in crf.predict(X)] if len(
                X) else []
    else:
        with _about(name):
            data, name = _read(args.file, label_column=None, sep=args.sep)
        if data.sentences and data.n_columns < 3:
            raise CommandError(
                f"{name}, line {data.lines[0]}: {data.n_columns} column(s); with --tagged "
                "the last two columns are the gold and the predicted labels, after the "
                "token."
            )
        gold = [[t[-2] for t in s] for s in data.sentences]
        predicted = [[t[-1] for t in s] for s in data.sentences]
    from .metrics import conlleval_report

    with _about(name, data.lines):
        report = conlleval_report(gold or [], predicted, output_dict=args.format == "json")
    if args.format == "json":
        report = json.dumps(report, indent=2) + "\n"
    sys.stdout.write(report)
    return 0


def _cmd_dump(args):
    model, _ = _load(args.model)
    crf = _tagger_of(model)
    if getattr(crf, "hashing", None) is not None:
        raise CommandError(
            f"{args.model}: the model hashes its attributes (hashing="
            f"{crf.hashing}); it has no attribute names to show."
        )
    n = args.top
    transitions = sorted(crf.transition_features_.items(), key=lambda kv: -kv[1])
    states = sorted(crf.state_features_.items(), key=lambda kv: -kv[1])
    top_transitions = transitions[:n]
    bottom_transitions = transitions[::-1][:n]
    top_states = states[:n]
    bottom_states = states[::-1][:n]
    if args.format == "json":
        def t_rows(rows):
            return [{"from": a, "to": b, "weight": w} for (a, b), w in rows]

        def s_rows(rows):
            return [{"attribute": a, "label": b, "weight": w} for (a, b), w in rows]

        out = {
            "labels": list(map(str, crf.classes_)),
            "transitions": {"positive": t_rows(top_transitions),
                            "negative": t_rows(bottom_transitions)},
            "state_features": {"positive": s_rows(top_states),
                               "negative": s_rows(bottom_states)},
        }
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return 0
    width = max([len(str(c)) for c in crf.classes_] + [5])
    lines = []
    for title, rows in (
        (f"Top {n} transitions (largest weights):", top_transitions),
        (f"Bottom {n} transitions (most negative weights):", bottom_transitions),
    ):
        lines.append(title)
        lines += [f"  {a!s:<{width}} -> {b!s:<{width}} {w:10.6f}" for (a, b), w in rows]
        lines.append("")
    for title, rows in (
        (f"Top {n} state features (largest weights):", top_states),
        (f"Bottom {n} state features (most negative weights):", bottom_states),
    ):
        lines.append(title)
        lines += [f"  {w:10.6f} {b!s:<{width}} {a}" for (a, b), w in rows]
        lines.append("")
    sys.stdout.write("\n".join(lines))
    return 0


def _cmd_convert(args):
    from ._io.crfsuite import load_crfsuite
    from ._io.persistence import load_model

    args.columns = _split_columns(args)
    featurizer_options = [name for name in FEATURIZER_OPTIONS if hasattr(args, name)]
    featurizer_options += [name for name in ("columns", "template")
                           if getattr(args, name) is not None]
    with_featurizer = args.with_featurizer or bool(featurizer_options)
    _check_output(args.output, "OUTPUT")
    source = args.source_format
    if source == "auto":
        source = "crfsuite" if _is_crfsuite_file(args.input) else "model"
    if with_featurizer and source != "crfsuite":
        option = f"--{featurizer_options[0].replace('_', '-')}" if featurizer_options else (
            "--with-featurizer")
        raise UsageError(f"{option} bundles a featurizer with a model converted from "
                         "CRFsuite; a CRFsuite file written from INPUT holds no featurizer.")
    featurizer = _featurizer_settings(args, None) if with_featurizer else None
    try:
        with _about(args.input):
            model = load_crfsuite(args.input) if source == "crfsuite" else load_model(
                args.input)
    except CommandError as exc:
        if isinstance(exc.__cause__, FileNotFoundError):
            raise CommandError(f"{args.input}: no such file.") from exc.__cause__
        raise
    with _about(args.output):
        _convert(args, source, model, featurizer)
    return 0


def _convert(args, source, model, featurizer):
    """Write the converted ``model`` (see :func:`_cmd_convert`)."""
    from sklearn.pipeline import make_pipeline

    from ._io.crfsuite import save_crfsuite
    from ._io.persistence import save_model

    if source == "crfsuite" and featurizer is not None:
        save_model(make_pipeline(featurizer, model), args.output)
        logger.info(
            "converted the CRFsuite model %s to %s: a Pipeline of the featurizer given "
            "and the tagger, for '%s tag' and load_model() (its features must be those "
            "the CRFsuite model was trained on)", args.input, args.output, PROG,
        )
    elif source == "crfsuite":
        save_model(model, args.output)
        logger.info(
            "converted the CRFsuite model %s to %s: a CRFTagger without a featurizer, "
            "for load_model() in Python on your own feature dicts (not for '%s tag': "
            "give --with-featurizer and the featurizer options that made its features)",
            args.input, args.output, PROG,
        )
    else:
        crf = _tagger_of(model)
        save_crfsuite(crf, args.output)
        dropped = " (the tagger only: a CRFsuite file holds no featurizer)" if (
            crf is not model) else ""
        logger.info(
            "converted %s to the CRFsuite model %s%s, for python-crfsuite's Tagger, "
            "sklearn_crfsuite.CRF(model_filename=...) and 'crfsuite tag'",
            args.input, args.output, dropped,
        )


def _cmd_data(args):
    from .datasets import load_conll2002

    _check_output(args.output, "-o/--output")
    data = load_conll2002(args.subset, n_sentences=args.n_sentences)
    buffer = io.StringIO()
    write_conll(buffer, data.sentences, data.tags)
    _write_output(args.output, buffer.getvalue())
    logger.info("wrote %d sentences of esp.%s", len(data.sentences), args.subset)
    return 0


# ---------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------


def _report(exc, *, debug=False):
    """Write ``exc`` as the one line ``sklearn-crf: error: ...`` on stderr (at
    most :data:`MAX_MESSAGE` characters), then its traceback with ``debug``."""
    message = str(exc) if isinstance(exc, CommandError) else _first_line(exc)
    message = " ".join(message.split("\n")) if message else type(exc).__name__
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE - 3] + "..."
    cause = exc.__cause__ if isinstance(exc, CommandError) else exc
    if not debug and cause is not None and not isinstance(
            cause, (ValueError, TypeError, OSError, CommandError)):
        message += " (an unexpected error; --debug shows where)"
    sys.stderr.write(f"{PROG}: error: {message}\n")
    if debug:
        import traceback

        traceback.print_exception(exc, file=sys.stderr)


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _non_negative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def _label_column(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("0 is the token column; the label is -1 (last) by default")
    return value


def _separator(text):
    text = {"tab": "\t", "\\t": "\t", "space": " "}.get(text, text)
    if not text or "\n" in text or "\r" in text:
        raise argparse.ArgumentTypeError(f"not a column separator: {text!r}")
    return text


def _n_jobs(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("n_jobs cannot be 0 (use -1 for all cores)")
    return value


def _shown(value):
    """A default as the help shows it: ``1.0``, ``2 3``, ``none``, ``on``/``off``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if isinstance(value, (tuple, list)):
        return " ".join(map(str, value)) if value else "none"
    return str(value)


def _add_featurizer_options(parser, *, columns_nargs="+"):
    """The built-in featurizer's options: SequenceFeaturizer's parameters,
    not set unless given (so the defaults are the estimator's, shown).
    ``columns_nargs=None``: ``--columns`` takes one value (comma-separated),
    for a command whose positional arguments come after it."""
    from ._features.featurizer import SequenceFeaturizer

    default = SequenceFeaturizer().get_params()
    S = argparse.SUPPRESS
    feats = parser.add_argument_group(
        "features (built-in featurizer, SequenceFeaturizer; defaults are its own)")
    feats.add_argument(
        "--columns", nargs=columns_nargs, metavar="NAMES", default=None,
        help="names of the columns between the token and the label, used as features, "
             "comma-separated (e.g. --columns pos,chunk); '-' ignores a column "
             f"(default: {_shown(default['columns'])}, the other columns are ignored)")
    feats.add_argument("--window", type=_non_negative_int, default=S,
                       help="neighbours on each side whose features are added "
                            f"(default: {default['window']})")
    feats.add_argument("--no-lower", dest="lower", action="store_false", default=S,
                       help=f"no lower-cased word feature (default: {_shown(default['lower'])})")
    feats.add_argument("--identity", action="store_true", default=S,
                       help=f"add the word itself (default: {_shown(default['identity'])})")
    feats.add_argument("--prefixes", type=_positive_int, nargs="*", metavar="K", default=S,
                       help=f"prefix lengths (default: {_shown(default['prefixes'])})")
    feats.add_argument("--suffixes", type=_positive_int, nargs="*", metavar="K", default=S,
                       help=f"suffix lengths (default: {_shown(default['suffixes'])})")
    feats.add_argument("--shape", action="store_true", default=S,
                       help=f"add word shapes (default: {_shown(default['shape'])})")
    feats.add_argument("--no-flags", dest="flags", action="store_false", default=S,
                       help="no isupper/istitle/isdigit features "
                            f"(default: {_shown(default['flags'])})")
    feats.add_argument("--neighbor-features", nargs="*", metavar="NAME", default=S,
                       help="token features also given for the neighbours, or 'all' "
                            f"(default: {_shown(default['neighbor_features'])})")
    feats.add_argument("--no-bos-eos", dest="bos_eos", action="store_false", default=S,
                       help=f"no BOS/EOS features (default: {_shown(default['bos_eos'])})")
    feats.add_argument("--no-bias", dest="bias", action="store_false", default=S,
                       help=f"no bias feature (default: {_shown(default['bias'])})")
    feats.add_argument("--template", metavar="FILE",
                       help="a CRF++ template file (U lines; a plain B line is accepted); "
                            "replaces the built-in featurizer and its options")


def _add_training_options(parser):
    """CRFTagger's training parameters, not set unless given (defaults: its own, shown)."""
    from ._tagger import CRFTagger

    default = CRFTagger().get_params()
    S = argparse.SUPPRESS
    hyper = parser.add_argument_group("training (CRFTagger; defaults are its own)")
    hyper.add_argument("--c1", type=_non_negative_float, default=S,
                       help=f"L1 coefficient (default: {default['c1']})")
    hyper.add_argument("--c2", type=_non_negative_float, default=S,
                       help=f"L2 coefficient (default: {default['c2']})")
    hyper.add_argument("--max-iter", type=_positive_int, default=S,
                       help="maximum number of iterations (default: "
                            f"{_shown(default['max_iter'])}: the solver's own limit, see "
                            "CRFTagger's max_iter)")
    hyper.add_argument("--tol", type=_non_negative_float, default=S,
                       help="relative loss decrease that stops the solver "
                            f"(default: {default['tol']}; see CRFTagger's tol)")
    hyper.add_argument("--min-freq", type=_non_negative_float, default=S,
                       help=f"drop attributes seen fewer times (default: {default['min_freq']})")
    hyper.add_argument("--all-possible-states", action="store_true", default=S,
                       help="a weight for every (attribute, label) pair "
                            f"(default: {_shown(default['all_possible_states'])})")
    hyper.add_argument("--all-possible-transitions", action="store_true", default=S,
                       help="a weight for every label transition "
                            f"(default: {_shown(default['all_possible_transitions'])})")
    hyper.add_argument("--n-jobs", type=_n_jobs, default=S,
                       help="threads, -1 for all cores (default: "
                            f"{_shown(default['n_jobs'])}: numba's, all cores or "
                            "NUMBA_NUM_THREADS)")


def build_parser():
    """The argument parser of the ``sklearn-crf`` command.

    Returns
    -------
    parser : argparse.ArgumentParser
        With the subcommands ``train``, ``tag``, ``eval``, ``dump``,
        ``convert`` and ``data``.
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no progress or convergence messages on stderr (errors only)")
    common.add_argument("--debug", action="store_true",
                        help="on an error, show the Python traceback after the one-line message")
    sep = argparse.ArgumentParser(add_help=False)
    sep.add_argument("--sep", type=_separator, default=None,
                     help="column separator (e.g. 'tab'); default: the model's, else "
                          "runs of whitespace to read, one space to write")

    parser = _ArgumentParser(
        prog=PROG,
        description="Linear-chain CRF sequence labeling on CoNLL column files "
                    "(one token per line, the label last, blank lines between sentences).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    sub.required = True

    train = sub.add_parser(
        "train", parents=[common, sep], help="train a model on CoNLL files",
        description="Train a CRF on CoNLL files and save the featurizer and the tagger "
                    "as one model file (a Pipeline; it loads with load_model() without "
                    "executing code, and 'tag' uses it as it is). Features come from "
                    "the built-in featurizer (options below) or from a CRF++ template "
                    "file. Options not given keep the estimators' defaults (shown).",
    )
    train.add_argument("files", nargs="*", metavar="FILE",
                       help="training data (CoNLL columns; '-' for stdin; .gz allowed)")
    train.add_argument("-m", "--model", required=True,
                       help="the model file to write (checked before training)")
    train.add_argument("--label-column", type=_label_column, default=-1,
                       help="index of the label column (default: -1, the last)")
    _add_featurizer_options(train)
    _add_training_options(train)
    train.set_defaults(handler=_cmd_train)

    tag = sub.add_parser(
        "tag", parents=[common, sep], help="tag a CoNLL file with a model",
        description="Tag a CoNLL file: writes its columns plus the predicted label, "
                    "and its -DOCSTART- lines where they were. The model is a file "
                    "written by 'train' or by save_model() of a Pipeline (featurizer "
                    "+ CRFTagger); its featurizer makes the features (tag has no "
                    "featurizer options). The file has the model's token columns, "
                    "optionally with a gold label column (kept in the output). A "
                    "CRFTagger saved alone or converted from CRFsuite has no "
                    "featurizer, and cannot tag raw tokens.",
    )
    tag.add_argument("-m", "--model", required=True,
                     help="a model file written by 'train' or save_model(pipeline)")
    tag.add_argument("file", nargs="?", default="-", metavar="FILE",
                     help="the data to tag (default: stdin)")
    tag.add_argument("-o", "--output", help="output file (default: stdout)")
    tag.add_argument("--marginals", action="store_true",
                     help="add a column with the marginal probability of each predicted label")
    tag.add_argument("--nbest", type=_positive_int, metavar="N",
                     help="the N most probable label sequences of each sentence, as CRF++ "
                          "writes them: a '# rank probability' line before each")
    tag.add_argument("--constraints", choices=sorted(SCHEMES),
                     help="decode only label sequences valid in this tagging scheme "
                          "(e.g. IOB2: no I-X after O); probabilities are conditional on it")
    tag.add_argument("--allowed-column", type=_label_column, metavar="INDEX",
                     help="a column of FILE with the labels each token may take: '*' any, "
                          "'B-PER' forced, 'B-PER|I-PER' one of these (not a feature; "
                          "kept in the output)")
    tag.set_defaults(handler=_cmd_tag)

    ev = sub.add_parser(
        "eval", parents=[common, sep], help="entity-level evaluation (conlleval)",
        description="Entity-level precision, recall and F1 as conlleval reports them: "
                    "of a model on a gold file (-m MODEL: FILE is tagged and compared "
                    "with its label column), or of a file that already holds the "
                    "predictions (--tagged: its last two columns are the gold and the "
                    "predicted labels, as 'tag' writes them). One of the two is required.",
    )
    ev.add_argument("file", nargs="?", default="-", metavar="FILE",
                    help="gold data (with -m), or gold and predicted columns (with "
                         "--tagged) (default: stdin)")
    ev.add_argument("-m", "--model", help="tag FILE with this model and compare with its labels")
    ev.add_argument("--tagged", action="store_true",
                    help="FILE's last two columns are the gold and the predicted labels")
    ev.add_argument("--format", choices=["text", "json"], default="text",
                    help="the report as conlleval's text (default) or as JSON")
    ev.set_defaults(handler=_cmd_eval)

    dump = sub.add_parser(
        "dump", parents=[common], help="show the strongest features of a model",
        description="Show a model's largest and most negative transition weights and "
                    "state-feature weights (of the tagger of a Pipeline).",
    )
    dump.add_argument("model", metavar="MODEL", help="a model file (from 'train' or save_model)")
    dump.add_argument("--top", type=_positive_int, default=20,
                      help="how many of each kind (default: 20)")
    dump.add_argument("--format", choices=["text", "json"], default="text",
                      help="a text table (default) or JSON")
    dump.set_defaults(handler=_cmd_dump)

    convert = sub.add_parser(
        "convert", parents=[common], help="convert between this model format and CRFsuite's",
        description="Convert a CRFsuite model file (CRFsuite, python-crfsuite, "
                    "sklearn-crfsuite) to this project's model file, or back. "
                    "From CRFsuite: a CRFsuite file holds the weights, not how the "
                    "features were made nor the training parameters, so the result is "
                    "a CRFTagger without a featurizer, for load_model() in Python on "
                    "your own feature dicts; 'tag' needs a Pipeline of a featurizer "
                    "and the tagger: give --with-featurizer and the featurizer options "
                    "(or --template) that reproduce the model's features (the "
                    "defaults are the sklearn-crfsuite tutorial's word2features "
                    "without part-of-speech tags). To CRFsuite: the result is for "
                    "python-crfsuite's Tagger, sklearn_crfsuite.CRF(model_filename=...) "
                    "and 'crfsuite tag'; of a Pipeline, only the tagger is written.",
    )
    convert.add_argument("input", metavar="INPUT",
                         help="a CRFsuite model file, or a model file of this project")
    convert.add_argument("output", metavar="OUTPUT",
                         help="the file to write, in the other format (checked first)")
    convert.add_argument("--from", dest="source_format", default="auto",
                         choices=["auto", "crfsuite", "model"],
                         help="format of INPUT (default: detected from its first bytes)")
    convert.add_argument("--with-featurizer", action="store_true",
                         help="from CRFsuite: write a Pipeline of the built-in featurizer "
                              "(options below; any of them implies this flag) or of "
                              "--template's, and the tagger, which 'tag' uses")
    _add_featurizer_options(convert, columns_nargs=None)
    convert.set_defaults(handler=_cmd_convert)

    data = sub.add_parser("data", parents=[common],
                          help="write the bundled CoNLL-2002 Spanish data as a CoNLL file",
                          description="Write a subset of the bundled CoNLL-2002 Spanish "
                                      "NER data (token and label columns).")
    data.add_argument("subset", choices=["train", "testa", "testb"],
                      help="the subset: train, testa (development) or testb (test)")
    data.add_argument("-o", "--output", help="output file (default: stdout)")
    data.add_argument("--n-sentences", type=_positive_int, default=None,
                      help="only the first N sentences")
    data.set_defaults(handler=_cmd_data)
    return parser


def main(argv=None):
    """Run the ``sklearn-crf`` command line.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (without the program name); ``None`` reads ``sys.argv``.

    Returns
    -------
    status : int
        0 on success, 1 on an error in the data or files, 2 on bad arguments;
        an error is one line on stderr, ``sklearn-crf: error: ...``.

    Examples
    --------
    >>> from sklearn_crf._cli import main
    >>> main(["data", "testb", "--n-sentences", "1", "--quiet"])
    La B-LOC
    Coruña I-LOC
    , O
    23 O
    may O
    ( O
    EFECOM B-ORG
    ) O
    . O
    <BLANKLINE>
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CommandError as exc:
        _report(exc)
        return 2
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG} {args.command}: %(message)s"))
    previous_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.ERROR if args.quiet else logging.INFO)
    try:
        return args.handler(args)
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except Exception as exc:  # the one error boundary: every failure is one line
        _report(exc, debug=args.debug)
        return 2 if isinstance(exc, UsageError) else 1
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous_level)
