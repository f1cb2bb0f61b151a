"""The ``sklearn-crf`` command line (``python -m sklearn_crf``): train, tag, eval, dump, convert.

A thin layer over the public API: CoNLL files through :func:`read_conll` and
:func:`write_conll`, features through :class:`SequenceFeaturizer` or
:class:`TemplateFeaturizer`, models through ``save_model``/``load_model``
(whose metadata records how the features were made, so ``tag`` featurizes
as ``train`` did) and ``load_crfsuite``/``save_crfsuite``.
"""

import argparse
import io
import json
import logging
import os
import sys
import time
import warnings
from typing import NamedTuple

from ._conll import read_conll, write_conll
from ._constraints import SCHEMES
from ._version import __version__

PROG = "sklearn-crf"
#: key of the command line's settings in a model file's metadata
METADATA_KEY = "sklearn_crf_cli"
METADATA_VERSION = 1
CRFSUITE_MAGIC = b"lCRF"

logger = logging.getLogger("sklearn_crf")


class CommandError(Exception):
    """A problem reported as one line on stderr, with a non-zero exit status."""


class _ArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors become :class:`CommandError`."""

    def error(self, message):
        raise CommandError(f"{message} (see '{self.prog} --help')")


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


def _read_training_files(paths, label_column, sep):
    sentences, tags, n_columns = [], [], None
    for path in paths:
        data, name = _read(path, label_column=label_column, sep=sep)
        if not data.sentences:
            raise CommandError(f"{name}: no sentences.")
        if n_columns is not None and data.n_columns != n_columns:
            raise CommandError(
                f"{name}: {data.n_columns} columns, but {paths[0]} has {n_columns}."
            )
        n_columns = data.n_columns
        sentences += data.sentences
        tags += data.tags
        logger.info(
            "read %s: %d sentences, %d tokens, %d columns",
            name, len(data.sentences), sum(map(len, data.sentences)), data.n_columns,
        )
    return sentences, tags, n_columns


def _featurizer_settings(args, n_token_columns):
    """The JSON-serializable description of the featurizer ``train`` uses."""
    if args.template is not None:
        if args.columns is not None:
            raise CommandError(
                "--columns names columns for the built-in featurizer; with --template, "
                "the templates read the columns (%x[row,column])."
            )
        try:
            with open(args.template, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{args.template}: cannot read the template file ({exc}).")
        from ._templates import TemplateFeaturizer

        try:
            TemplateFeaturizer(templates=lines).fit([])
        except ValueError as exc:
            raise CommandError(f"{args.template}: {exc}") from None
        return {"kind": "templates", "templates": lines}
    columns = None
    if args.columns is not None:
        if len(args.columns) != n_token_columns - 1:
            raise CommandError(
                f"--columns names {len(args.columns)} column(s), but the training "
                f"data has {n_token_columns - 1} column(s) between the token and "
                "the label."
            )
        columns = [None if name == "-" else name for name in args.columns]
    elif n_token_columns > 1:
        logger.info(
            "ignoring %d column(s) between the token and the label "
            "(name them with --columns to use them as features)",
            n_token_columns - 1,
        )
    params = {
        "window": args.window,
        "lower": args.lower,
        "identity": args.identity,
        "prefixes": args.prefixes,
        "suffixes": args.suffixes,
        "shape": args.shape,
        "flags": args.flags,
        "neighbor_features": (
            "all" if args.neighbor_features == ["all"] else args.neighbor_features
        ),
        "columns": columns,
        "bos_eos": args.bos_eos,
        "bias": args.bias,
    }
    return {"kind": "sequence", "params": params}


def _make_featurizer(settings):
    """The featurizer described by :func:`_featurizer_settings`."""
    from ._featurizer import SequenceFeaturizer
    from ._templates import TemplateFeaturizer

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
    return featurizer


#: bounds on the featurizer settings read from a model file (untrusted input)
_MAX_WINDOW = 64
_MAX_LIST = 1000


def _cli_metadata(metadata, model_path):
    """The command line's settings in a model's metadata, checked.

    A model file is untrusted input: the settings must have the types and
    sizes ``train`` writes, so that a crafted file cannot make ``tag`` fail
    with a traceback or build an unbounded featurizer.
    """
    settings = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if not isinstance(settings, dict) or "featurizer" not in settings:
        raise CommandError(
            f"{model_path}: the model has no featurizer settings (it was not trained "
            f"by '{PROG} train'; a model converted from CRFsuite can be used from "
            "Python with your own features)."
        )

    def bad(what):
        return CommandError(f"{model_path}: invalid featurizer settings in the model file ({what}).")

    def is_int(value):
        return isinstance(value, int) and not isinstance(value, bool)

    n_token_columns = settings.get("n_token_columns")
    if not is_int(n_token_columns) or not 1 <= n_token_columns <= _MAX_LIST:
        raise bad(f"n_token_columns={n_token_columns!r}")
    label_column = settings.get("label_column")
    if not is_int(label_column) or not 0 < abs(label_column) <= n_token_columns + 1 or (
        label_column % (n_token_columns + 1) == 0
    ):
        raise bad(f"label_column={label_column!r}")
    sep = settings.get("sep")
    if sep is not None and (not isinstance(sep, str) or not sep or "\n" in sep or "\r" in sep):
        raise bad(f"sep={sep!r}")
    featurizer = settings["featurizer"]
    kind = featurizer.get("kind") if isinstance(featurizer, dict) else None
    if kind == "templates":
        templates = featurizer.get("templates")
        if not isinstance(templates, list) or len(templates) > 100 * _MAX_LIST or not all(
            isinstance(line, str) for line in templates
        ):
            raise bad("templates")
    elif kind == "sequence":
        params = featurizer.get("params")
        if not isinstance(params, dict):
            raise bad("params")
        window = params.get("window", 1)
        if not is_int(window) or not 0 <= window <= _MAX_WINDOW:
            raise bad(f"window={window!r}")
        for name, value in params.items():
            if isinstance(value, list) and len(value) > _MAX_LIST:
                raise bad(f"{name} has {len(value)} entries")
            if name in ("prefixes", "suffixes") and isinstance(value, list) and not all(
                is_int(k) and 1 <= k <= _MAX_LIST for k in value
            ):
                raise bad(f"{name}={value!r}")
    else:
        raise bad(f"kind={kind!r}")
    return settings


def _load(model_path):
    from ._persistence import load_model

    try:
        return load_model(model_path, return_metadata=True)
    except FileNotFoundError:
        raise CommandError(f"{model_path}: no such model file.") from None
    except OSError as exc:
        raise CommandError(f"{model_path}: cannot read the model file ({exc.strerror}).") from None
    except (ValueError, TypeError) as exc:
        raise CommandError(_named(model_path, exc)) from None


def _named(path, exc):
    """An exception's first line, prefixed with the file's name unless it has it."""
    message = (str(exc).splitlines() or [type(exc).__name__])[0]
    return message if str(path) in message else f"{path}: {message}"


def _tokens_for_features(sentences, settings, n_columns, name):
    """The token columns the model was trained on, from a file's full columns.

    ``n_columns`` is the file's number of columns: the model's token columns,
    optionally plus a label column (at the training label column's position),
    which is dropped.
    """
    n_token_columns = settings["n_token_columns"]
    if n_columns == n_token_columns:
        return sentences, None
    if n_columns == n_token_columns + 1:
        index = settings["label_column"] % n_columns
        features = [[t[:index] + t[index + 1 :] for t in s] for s in sentences]
        labels = [[t[index] for t in s] for s in sentences]
        return features, labels
    raise CommandError(
        f"{name}: {n_columns} columns, but the model was trained on "
        f"{n_token_columns} token column(s) (plus a label column)."
    )


# ---------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------


def _cmd_train(args):
    from ._persistence import save_model
    from ._tagger import CRFTagger

    sentences, tags, n_columns = _read_training_files(args.files, args.label_column, args.sep)
    settings = _featurizer_settings(args, n_columns - 1)
    featurizer = _make_featurizer(settings)
    start = time.perf_counter()
    X = featurizer.transform(sentences)
    logger.info("featurized %d sentences in %.1f s", len(X), time.perf_counter() - start)
    crf = CRFTagger(
        c1=args.c1,
        c2=args.c2,
        max_iter=args.max_iter,
        tol=args.tol,
        min_freq=args.min_freq,
        all_possible_states=args.all_possible_states,
        all_possible_transitions=args.all_possible_transitions,
        n_jobs=args.n_jobs,
        verbose=0 if args.quiet else 1,
    )
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
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
            "featurizer": settings,
            "n_token_columns": n_columns - 1,
            "label_column": args.label_column,
            "sep": args.sep,
            "sklearn_crf_version": __version__,
        }
    }
    save_model(crf, args.model, metadata=metadata)
    logger.info("saved the model to %s", args.model)
    return 0


def _predict(model_path, path, sep, allowed_column=None):
    """Model, file data, gold labels (or None) and predictions for a CoNLL file."""
    crf, metadata = _load(model_path)
    settings = _cli_metadata(metadata, model_path)
    try:
        featurizer = _make_featurizer(settings["featurizer"])
    except (ValueError, TypeError, CommandError) as exc:
        raise CommandError(_named(model_path, exc)) from None
    sep = sep if sep is not None else settings["sep"]
    data, name = _read(path, label_column=None, sep=sep)
    sentences, n_columns, allowed = data.sentences, data.n_columns, None
    if allowed_column is not None and sentences:
        if not -n_columns < allowed_column < n_columns or allowed_column % n_columns == 0:
            raise CommandError(
                f"{name}: --allowed-column {allowed_column} does not name a column after "
                f"the token of {n_columns} columns."
            )
        j = allowed_column % n_columns
        allowed = [[_allowed_labels(t[j]) for t in s] for s in sentences]
        sentences = [[t[:j] + t[j + 1 :] for t in s] for s in sentences]
        n_columns -= 1
    tokens, gold = _tokens_for_features(sentences, settings, n_columns, name)
    X = featurizer.transform(tokens) if sentences else []
    return _Prediction(crf, data, gold, X, sep, allowed)


def _allowed_labels(cell):
    """A cell of the --allowed-column: ``*`` any label, ``A`` forced, ``A|B`` a set."""
    if cell == "*":
        return None
    return cell if "|" not in cell else set(cell.split("|"))


class _Prediction(NamedTuple):
    """What :func:`_predict` read and computed.

    Attributes
    ----------
    crf : CRFTagger
        The loaded model.
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


def _cmd_tag(args):
    if args.nbest is not None and args.marginals:
        raise CommandError("--nbest and --marginals cannot be combined.")
    crf, data, _, X, sep, allowed = _predict(args.model, args.file, args.sep, args.allowed_column)
    if args.constraints is not None:
        crf.set_params(transition_constraints=args.constraints)
    if args.nbest is not None:
        return _write_nbest(args, crf, data, X, sep, allowed)
    predictions = crf.predict(X, allowed=allowed) if X else []
    extra = [[[label] for label in sentence] for sentence in predictions]
    if args.marginals:
        marginals = crf.predict_marginals(X, allowed=allowed) if X else []
        for rows, sentence, probabilities in zip(extra, predictions, marginals):
            for row, label, p in zip(rows, sentence, probabilities):
                row.append(f"{p[label]:.6f}")
    sentences = [
        [token + tuple(row) for token, row in zip(sentence, rows)]
        for sentence, rows in zip(data.sentences, extra)
    ]
    documents = data.documents if len(data.documents) and data.documents.max() > 0 else None
    out = _open_output(args.output)
    try:
        write_conll(out, sentences, documents=documents, sep=sep)
    finally:
        if out is not sys.stdout:
            out.close()
    logger.info(
        "tagged %d sentences, %d tokens", len(sentences), sum(map(len, sentences))
    )
    return 0


def _write_nbest(args, crf, data, X, sep, allowed):
    """CRF++'s n-best output: ``# rank probability`` then the tagged sentence, per path."""
    nbest = crf.predict_nbest(X, n=args.nbest, allowed=allowed) if X else []
    buffer = io.StringIO()
    for sentence, paths in zip(data.sentences, nbest):
        for rank, (labels, probability) in enumerate(paths):
            buffer.write(f"# {rank} {probability:.6f}\n")
            write_conll(
                buffer, [[token + (label,) for token, label in zip(sentence, labels)]], sep=sep
            )
    out = _open_output(args.output)
    try:
        out.write(buffer.getvalue())
    finally:
        if out is not sys.stdout:
            out.close()
    logger.info("tagged %d sentences (%d best paths each)", len(nbest), args.nbest)
    return 0


def _open_output(path):
    if path is None or path == "-":
        return sys.stdout
    try:
        return open(path, "w", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise CommandError(f"{path}: cannot write ({exc.strerror}).") from None


def conll_evaluation(y_true, y_pred):
    """conlleval's counts and scores, computed with :mod:`sklearn_crf.metrics`.

    Parameters
    ----------
    y_true, y_pred : list of list of str
        Gold and predicted label sequences.

    Returns
    -------
    report : dict
        ``tokens``, ``phrases`` (gold entities), ``found`` (predicted
        entities), ``correct``, ``accuracy`` (token accuracy), ``precision``,
        ``recall``, ``f1`` (micro-averaged over entities, as fractions), and
        ``types``: for each entity type its ``precision``, ``recall``, ``f1``,
        ``found`` and ``support`` (gold entities).

    Examples
    --------
    >>> from sklearn_crf._cli import conll_evaluation
    >>> report = conll_evaluation([["B-PER", "I-PER", "O"]], [["B-PER", "O", "O"]])
    >>> report["phrases"], report["found"], report["correct"], report["accuracy"]
    (1, 1, 0, 0.6666666666666666)
    """
    from .metrics import (
        entity_precision_recall_fscore_support,
        flat_accuracy_score,
        get_entities,
    )

    true_entities = [set(get_entities(s)) for s in y_true]
    pred_entities = [set(get_entities(s)) for s in y_pred]
    types = sorted({e[0] for s in true_entities + pred_entities for e in s})
    found = {t: 0 for t in types}
    for s in pred_entities:
        for e in s:
            found[e[0]] += 1
    correct = sum(len(t & p) for t, p in zip(true_entities, pred_entities))
    precision, recall, f1, _ = entity_precision_recall_fscore_support(
        y_true, y_pred, average="micro", zero_division=0.0
    )
    report = {
        "tokens": sum(map(len, y_true)),
        "phrases": sum(map(len, true_entities)),
        "found": sum(map(len, pred_entities)),
        "correct": correct,
        "accuracy": flat_accuracy_score(y_true, y_pred) if any(y_true) else 0.0,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "types": {},
    }
    if types:
        per_type = entity_precision_recall_fscore_support(
            y_true, y_pred, average=None, zero_division=0.0
        )
        for k, t in enumerate(types):
            report["types"][t] = {
                "precision": float(per_type[0][k]),
                "recall": float(per_type[1][k]),
                "f1": float(per_type[2][k]),
                "found": found[t],
                "support": int(per_type[3][k]),
            }
    return report


def format_conlleval(report):
    """conlleval's text report of :func:`conll_evaluation`'s result.

    Parameters
    ----------
    report : dict
        A result of :func:`conll_evaluation`.

    Returns
    -------
    text : str
        conlleval's summary lines and one line per entity type (precision,
        recall, FB1 and the number of predicted entities).

    Examples
    --------
    >>> from sklearn_crf._cli import conll_evaluation, format_conlleval
    >>> y_true = [["B-PER", "I-PER", "O", "B-LOC"]]
    >>> y_pred = [["B-PER", "I-PER", "O", "O"]]
    >>> print(format_conlleval(conll_evaluation(y_true, y_pred)), end="")
    processed 4 tokens with 2 phrases; found: 1 phrases; correct: 1.
    accuracy:  75.00%; precision: 100.00%; recall:  50.00%; FB1:  66.67
                  LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0
                  PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1
    """
    lines = [
        f"processed {report['tokens']} tokens with {report['phrases']} phrases; "
        f"found: {report['found']} phrases; correct: {report['correct']}."
    ]
    if report["tokens"]:
        lines.append(
            f"accuracy: {100 * report['accuracy']:6.2f}%; "
            f"precision: {100 * report['precision']:6.2f}%; "
            f"recall: {100 * report['recall']:6.2f}%; "
            f"FB1: {100 * report['f1']:6.2f}"
        )
    for t, scores in report["types"].items():
        lines.append(
            f"{t:>17}: precision: {100 * scores['precision']:6.2f}%; "
            f"recall: {100 * scores['recall']:6.2f}%; "
            f"FB1: {100 * scores['f1']:6.2f}  {scores['found']}"
        )
    return "\n".join(lines) + "\n"


def _cmd_eval(args):
    if args.model is not None:
        crf, data, gold, X, _, _ = _predict(args.model, args.file, args.sep)
        if gold is None:
            raise CommandError(
                f"{args.file}: no gold label column ({data.n_columns} column(s), "
                "the model's token columns only)."
            )
        predicted = crf.predict(X) if X else []
    else:
        data, name = _read(args.file, label_column=None, sep=args.sep)
        if data.sentences and data.n_columns < 2:
            raise CommandError(
                f"{name}: {data.n_columns} column; without --model the last two "
                "columns must be the gold and the predicted labels."
            )
        gold = [[t[-2] for t in s] for s in data.sentences]
        predicted = [[t[-1] for t in s] for s in data.sentences]
    report = conll_evaluation(gold, predicted)
    if args.format == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(format_conlleval(report))
    return 0


def _cmd_dump(args):
    crf, _ = _load(args.model)
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


def _is_crfsuite_file(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == CRFSUITE_MAGIC
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file.") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror}).") from None


def _cmd_convert(args):
    from ._crfsuite import load_crfsuite, save_crfsuite
    from ._persistence import load_model, save_model

    source = args.source_format
    if source == "auto":
        source = "crfsuite" if _is_crfsuite_file(args.input) else "model"
    try:
        crf = load_crfsuite(args.input) if source == "crfsuite" else load_model(args.input)
    except FileNotFoundError:
        raise CommandError(f"{args.input}: no such file.") from None
    except (ValueError, TypeError, OSError) as exc:
        raise CommandError(_named(args.input, exc)) from None
    if source == "crfsuite":
        save_model(crf, args.output)
        logger.info("converted the CRFsuite model %s to %s", args.input, args.output)
    else:
        save_crfsuite(crf, args.output)
        logger.info("converted %s to the CRFsuite model %s", args.input, args.output)
    return 0


def _cmd_data(args):
    from .datasets import load_conll2002

    data = load_conll2002(args.subset, n_sentences=args.n_sentences)
    out = _open_output(args.output)
    try:
        write_conll(out, data.sentences, data.tags)
    finally:
        if out is not sys.stdout:
            out.close()
    logger.info("wrote %d sentences of esp.%s", len(data.sentences), args.subset)
    return 0


# ---------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
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
                        help="no progress messages on stderr")
    sep = argparse.ArgumentParser(add_help=False)
    sep.add_argument("--sep", type=_separator, default=None,
                     help="column separator (e.g. 'tab'); default: runs of whitespace "
                          "to read, one space to write")

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
        description="Train a CRF on CoNLL files and save it (a model file that loads "
                    "without executing code). Features come from the built-in "
                    "featurizer (options below) or from a CRF++ template file.",
    )
    train.add_argument("files", nargs="+", metavar="FILE",
                       help="training data (CoNLL columns; '-' for stdin; .gz allowed)")
    train.add_argument("-m", "--model", required=True, help="the model file to write")
    train.add_argument("--label-column", type=_label_column, default=-1,
                       help="index of the label column (default: -1, the last)")
    feats = train.add_argument_group("features (built-in featurizer)")
    feats.add_argument("--columns", nargs="+", metavar="NAME",
                       help="names of the columns between the token and the label, used "
                            "as features (e.g. --columns pos chunk); '-' ignores a column; "
                            "give the FILEs before this option")
    feats.add_argument("--window", type=int, default=1,
                       help="neighbours on each side whose features are added (default: 1)")
    feats.add_argument("--no-lower", dest="lower", action="store_false",
                       help="no lower-cased word feature")
    feats.add_argument("--identity", action="store_true", help="add the word itself")
    feats.add_argument("--prefixes", type=int, nargs="*", default=[], metavar="K",
                       help="prefix lengths (default: none)")
    feats.add_argument("--suffixes", type=int, nargs="*", default=[2, 3], metavar="K",
                       help="suffix lengths (default: 2 3)")
    feats.add_argument("--shape", action="store_true", help="add word shapes")
    feats.add_argument("--no-flags", dest="flags", action="store_false",
                       help="no isupper/istitle/isdigit features")
    feats.add_argument("--neighbor-features", nargs="*", metavar="NAME",
                       default=["lower", "istitle", "isupper"],
                       help="token features also given for the neighbours, or 'all' "
                            "(default: lower istitle isupper)")
    feats.add_argument("--no-bos-eos", dest="bos_eos", action="store_false",
                       help="no BOS/EOS features")
    feats.add_argument("--no-bias", dest="bias", action="store_false", help="no bias feature")
    feats.add_argument("--template", metavar="FILE",
                       help="a CRF++ template file (U lines; a plain B line is accepted); "
                            "replaces the built-in featurizer")
    hyper = train.add_argument_group("training")
    hyper.add_argument("--c1", type=_non_negative_float, default=0.0,
                       help="L1 coefficient (default: 0)")
    hyper.add_argument("--c2", type=_non_negative_float, default=1.0,
                       help="L2 coefficient (default: 1)")
    hyper.add_argument("--max-iter", type=_positive_int, default=1000,
                       help="maximum number of iterations (default: 1000)")
    hyper.add_argument("--tol", type=_non_negative_float, default=1e-3,
                       help="relative loss decrease over 10 iterations to stop (default: 1e-3)")
    hyper.add_argument("--min-freq", type=_non_negative_float, default=0.0,
                       help="drop attributes seen fewer times (default: 0)")
    hyper.add_argument("--all-possible-states", action="store_true",
                       help="a weight for every (attribute, label) pair")
    hyper.add_argument("--all-possible-transitions", action="store_true",
                       help="a weight for every label transition")
    hyper.add_argument("--n-jobs", type=_n_jobs, default=None,
                       help="threads (default: all cores)")
    train.set_defaults(handler=_cmd_train)

    tag = sub.add_parser(
        "tag", parents=[common, sep], help="tag a CoNLL file with a model",
        description="Tag a CoNLL file: writes its columns plus the predicted label. "
                    "The file has the model's token columns, optionally with a gold "
                    "label column (kept in the output).",
    )
    tag.add_argument("-m", "--model", required=True, help="a model written by 'train'")
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
                    "of a model on a gold file (--model), or of a file whose last two "
                    "columns are the gold and the predicted labels (e.g. 'tag' output).",
    )
    ev.add_argument("file", nargs="?", default="-", metavar="FILE",
                    help="gold data, or gold and predicted columns (default: stdin)")
    ev.add_argument("-m", "--model", help="tag FILE with this model and compare with its labels")
    ev.add_argument("--format", choices=["text", "json"], default="text",
                    help="conlleval text (default) or JSON")
    ev.set_defaults(handler=_cmd_eval)

    dump = sub.add_parser("dump", parents=[common], help="show the strongest features of a model")
    dump.add_argument("model", metavar="MODEL")
    dump.add_argument("--top", type=_positive_int, default=20,
                      help="how many of each kind (default: 20)")
    dump.add_argument("--format", choices=["text", "json"], default="text")
    dump.set_defaults(handler=_cmd_dump)

    convert = sub.add_parser(
        "convert", parents=[common], help="convert between this model format and CRFsuite's",
        description="Convert a CRFsuite model file (python-crfsuite, sklearn-crfsuite) "
                    "to this project's model file, or back.",
    )
    convert.add_argument("input", metavar="INPUT")
    convert.add_argument("output", metavar="OUTPUT")
    convert.add_argument("--from", dest="source_format", default="auto",
                         choices=["auto", "crfsuite", "model"],
                         help="format of INPUT (default: detected from its first bytes)")
    convert.set_defaults(handler=_cmd_convert)

    data = sub.add_parser("data", parents=[common],
                          help="write the bundled CoNLL-2002 Spanish data as a CoNLL file")
    data.add_argument("subset", choices=["train", "testa", "testb"])
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
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG} {args.command}: %(message)s"))
    previous_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        return args.handler(args)
    except CommandError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (ValueError, TypeError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"{PROG}: error: {message}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous_level)
