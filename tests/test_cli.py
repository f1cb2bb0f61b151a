"""Tests for the ``sklearn-crf`` command line (sklearn_crf._cli), called in-process through main()."""

import importlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sklearn_crf import CRFTagger, SequenceFeaturizer, TemplateFeaturizer, read_conll, write_conll
from sklearn_crf._cli import main
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_classification_report, flat_accuracy_score

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

TRAIN_PARAMS = ["--c1", "0.05", "--c2", "0.01", "--max-iter", "15", "--n-jobs", "1"]
API_PARAMS = dict(c1=0.05, c2=0.01, max_iter=15, n_jobs=1)
TEMPLATES = "# CRF++ template\nU00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[1,0]\nU03:%x[0,1]\nU04:%x[0,1]/%x[1,1]\n\nB\n"


def run(argv, capsys, stdin=None, monkeypatch=None):
    """(status, stdout, stderr) of main(argv)."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"))
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def shape(word):
    """A stand-in for a part-of-speech column: the bundled data has none."""
    return "Cap" if word[:1].isupper() else "Num" if word[:1].isdigit() else "low"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Small CoNLL files: 2 columns (token, label) and 3 columns (token, shape, label)."""
    tmp = tmp_path_factory.mktemp("cli")
    train = load_conll2002("train", n_sentences=300)
    test = load_conll2002("testa", n_sentences=80)
    paths = {"dir": tmp}
    for name, data in (("train", train), ("test", test)):
        paths[name] = tmp / f"{name}.conll"
        write_conll(paths[name], data.sentences, data.tags)
        paths[name + "3"] = tmp / f"{name}3.conll"
        sentences = [[(w, shape(w)) for w in s] for s in data.sentences]
        write_conll(paths[name + "3"], sentences, data.tags)
    paths["template"] = tmp / "template.txt"
    paths["template"].write_text(TEMPLATES, encoding="utf-8")
    return paths, train, test


@pytest.fixture(scope="module")
def model(corpus):
    """A model trained by the command line on the 2-column training file."""
    paths, _, _ = corpus
    path = paths["dir"] / "model.skcrf"
    assert main(["train", str(paths["train"]), "-m", str(path), "-q", *TRAIN_PARAMS]) == 0
    return path


@pytest.fixture(scope="module")
def api_predictions(corpus):
    """The same training through the Python API: predictions on the test file."""
    _, train, test = corpus
    featurizer = SequenceFeaturizer()
    crf = CRFTagger(**API_PARAMS).fit(featurizer.transform(train.sentences), train.tags)
    return crf.predict(featurizer.transform(test.sentences)), crf, featurizer


def test_data_writes_the_bundled_data(tmp_path, capsys):
    out = tmp_path / "testb.conll"
    status, stdout, _ = run(["data", "testb", "-o", out, "--n-sentences", "50"], capsys)
    assert status == 0 and stdout == ""
    data, bundled = read_conll(out), load_conll2002("testb", n_sentences=50)
    assert [[t for (t,) in s] for s in data.sentences] == bundled.sentences
    assert data.tags == bundled.tags


def test_train_then_tag_equals_the_python_api(corpus, model, api_predictions, capsys):
    paths, _, test = corpus
    status, stdout, stderr = run(["tag", "-m", model, paths["test"]], capsys)
    assert status == 0, stderr
    tagged = read_conll(io.StringIO(stdout))
    assert tagged.n_columns == 3  # token, gold label, predicted label
    assert [[t[1] for t in s] for s in tagged.sentences] == test.tags
    assert tagged.tags == api_predictions[0]

    from sklearn_crf import load_model

    pipe = load_model(model)  # the featurizer and the tagger: one Pipeline
    assert pipe.predict(test.sentences) == api_predictions[0]
    assert pipe[0].get_params() == api_predictions[2].get_params()
    np.testing.assert_array_equal(pipe[-1].coef_, api_predictions[1].coef_)


def test_tag_stdin_without_gold_and_marginals(corpus, model, api_predictions, capsys, monkeypatch, tmp_path):
    paths, _, test = corpus
    unlabeled = io.StringIO()
    write_conll(unlabeled, test.sentences)
    out = tmp_path / "tagged.conll"
    status, stdout, stderr = run(
        ["tag", "-m", model, "--marginals", "-o", out], capsys, stdin=unlabeled.getvalue(), monkeypatch=monkeypatch
    )
    assert status == 0 and stdout == "", stderr
    tagged = read_conll(out, label_column=None)
    assert tagged.n_columns == 3  # token, predicted label, its probability
    assert [[t[1] for t in s] for s in tagged.sentences] == api_predictions[0]
    crf, featurizer = api_predictions[1], api_predictions[2]
    marginals = crf.predict_marginals(featurizer.transform(test.sentences))
    for sentence, probabilities in zip(tagged.sentences, marginals):
        for (_, label, p), expected in zip(sentence, probabilities):
            assert float(p) == pytest.approx(expected[label], abs=5e-7)


def test_eval_equals_entity_classification_report(corpus, model, api_predictions, capsys, tmp_path):
    paths, _, test = corpus
    y_pred = api_predictions[0]
    expected = entity_classification_report(test.tags, y_pred, output_dict=True, zero_division=0)

    status, stdout, _ = run(["eval", "-m", model, paths["test"], "--format", "json"], capsys)
    assert status == 0
    report = json.loads(stdout)
    assert report["precision"] == expected["micro avg"]["precision"]
    assert report["recall"] == expected["micro avg"]["recall"]
    assert report["f1"] == expected["micro avg"]["f1-score"]
    assert report["phrases"] == expected["micro avg"]["support"]
    assert report["accuracy"] == flat_accuracy_score(test.tags, y_pred)
    assert report["tokens"] == sum(map(len, test.tags))
    types = [k for k in expected if not k.endswith(" avg")]
    assert list(report["types"]) == types
    for t in types:
        assert report["types"][t]["precision"] == expected[t]["precision"]
        assert report["types"][t]["recall"] == expected[t]["recall"]
        assert report["types"][t]["f1"] == expected[t]["f1-score"]
        assert report["types"][t]["support"] == expected[t]["support"]
    assert report["correct"] == round(report["precision"] * report["found"])

    # conlleval's text report, from the tag output's gold and predicted columns
    tagged = tmp_path / "tagged.conll"
    assert run(["tag", "-m", model, paths["test"], "-o", tagged], capsys)[0] == 0
    status, text, _ = run(["eval", "--tagged", tagged], capsys)
    assert status == 0
    lines = text.splitlines()
    assert lines[0] == (
        f"processed {report['tokens']} tokens with {report['phrases']} phrases; "
        f"found: {report['found']} phrases; correct: {report['correct']}."
    )
    micro = expected["micro avg"]
    assert lines[1] == (
        f"accuracy: {100 * report['accuracy']:6.2f}%; precision: {100 * micro['precision']:6.2f}%; "
        f"recall: {100 * micro['recall']:6.2f}%; FB1: {100 * micro['f1-score']:6.2f}"
    )
    assert len(lines) == 2 + len(types)
    for line, t in zip(lines[2:], types):
        match = re.fullmatch(
            r" *(\S+): precision: +([\d.]+)%; recall: +([\d.]+)%; FB1: +([\d.]+)  (\d+)", line
        )
        assert match and match.group(1) == t
        assert [float(match.group(k)) for k in (2, 3, 4)] == [
            round(100 * expected[t][m], 2) for m in ("precision", "recall", "f1-score")
        ]
        assert int(match.group(5)) == report["types"][t]["found"]


def test_extra_columns_as_features(corpus, capsys):
    paths, train, test = corpus
    path = paths["dir"] / "pos.skcrf"
    status, _, stderr = run(
        ["train", paths["train3"], "-m", path, "--columns", "shape", "-q", *TRAIN_PARAMS], capsys
    )
    assert status == 0, stderr
    status, stdout, _ = run(["tag", "-m", path, paths["test3"]], capsys)
    assert status == 0
    featurizer = SequenceFeaturizer(columns=("shape",))
    X_train = featurizer.transform([[(w, shape(w)) for w in s] for s in train.sentences])
    crf = CRFTagger(**API_PARAMS).fit(X_train, train.tags)
    assert any(a.startswith("-1:shape:") for a in crf.attributes_)
    X_test = featurizer.transform([[(w, shape(w)) for w in s] for s in test.sentences])
    assert read_conll(io.StringIO(stdout)).tags == crf.predict(X_test)


def test_crfpp_templates(corpus, capsys):
    paths, train, test = corpus
    path = paths["dir"] / "template.skcrf"
    status, _, stderr = run(
        ["train", paths["train3"], "-m", path, "--template", paths["template"], "-q", *TRAIN_PARAMS], capsys
    )
    assert status == 0, stderr
    status, stdout, _ = run(["tag", "-m", path, paths["test3"]], capsys)
    assert status == 0
    featurizer = TemplateFeaturizer(templates=TEMPLATES)
    X_train = featurizer.transform([[(w, shape(w)) for w in s] for s in train.sentences])
    crf = CRFTagger(**API_PARAMS).fit(X_train, train.tags)
    X_test = featurizer.transform([[(w, shape(w)) for w in s] for s in test.sentences])
    assert read_conll(io.StringIO(stdout)).tags == crf.predict(X_test)
    status, stdout, _ = run(["dump", path, "--format", "json", "--top", "3"], capsys)
    assert all(row["attribute"].startswith("U0") for row in json.loads(stdout)["state_features"]["positive"])


def test_train_logs_progress_on_stderr(corpus, capsys, tmp_path):
    paths, _, _ = corpus
    status, stdout, stderr = run(
        ["train", paths["train"], "-m", tmp_path / "m.skcrf", "--max-iter", "3", "--n-jobs", "1"], capsys
    )
    assert status == 0 and stdout == ""
    assert "sklearn-crf train: read " in stderr
    assert "saved the model to" in stderr
    assert "max_iter" in stderr or "iterations" in stderr


def test_dump(model, capsys):
    from sklearn_crf import load_model

    crf = load_model(model)[-1]
    status, stdout, _ = run(["dump", model, "--format", "json", "--top", "5"], capsys)
    assert status == 0
    dumped = json.loads(stdout)
    transitions = sorted(crf.transition_features_.items(), key=lambda kv: -kv[1])
    assert [(r["from"], r["to"], r["weight"]) for r in dumped["transitions"]["positive"]] == [
        (a, b, w) for (a, b), w in transitions[:5]
    ]
    states = sorted(crf.state_features_.items(), key=lambda kv: kv[1])
    assert [(r["attribute"], r["label"], r["weight"]) for r in dumped["state_features"]["negative"]] == [
        (a, b, w) for (a, b), w in states[:5]
    ]
    status, text, _ = run(["dump", model, "--top", "2"], capsys)
    assert status == 0
    assert text.splitlines()[0] == "Top 2 transitions (largest weights):"
    (a, b), w = transitions[0]
    assert re.fullmatch(rf"  {re.escape(a)} +-> {re.escape(b)} +{w:.6f}", text.splitlines()[1])


def test_convert_to_crfsuite_and_back(corpus, model, api_predictions, capsys, tmp_path):
    import pycrfsuite

    paths, _, test = corpus
    crfsuite_path, back = tmp_path / "model.crfsuite", tmp_path / "back.skcrf"
    assert run(["convert", model, crfsuite_path, "-q"], capsys)[0] == 0
    assert crfsuite_path.read_bytes()[:4] == b"lCRF"
    tagger = pycrfsuite.Tagger()
    tagger.open(str(crfsuite_path))
    X_test = api_predictions[2].transform(test.sentences)
    assert [tagger.tag(x) for x in X_test] == api_predictions[0]

    assert run(["convert", crfsuite_path, back, "-q"], capsys)[0] == 0
    from sklearn_crf import load_model

    assert load_model(back).predict(X_test) == api_predictions[0]
    # a converted CRFsuite model has no featurizer settings: tag says so
    status, _, stderr = run(["tag", "-m", back, paths["test"]], capsys)
    assert status == 1 and "no featurizer settings" in stderr


@pytest.fixture(scope="module")
def truncated_crfsuite(model, tmp_path_factory):
    """The first 200 bytes of the model converted to a CRFsuite file."""
    path = tmp_path_factory.mktemp("crfsuite") / "full.crfsuite"
    assert main(["convert", str(model), str(path), "-q"]) == 0
    return path.read_bytes()[:200]


@pytest.mark.parametrize(
    "argv, status, message",
    [
        ([], 2, "the following arguments are required: COMMAND"),
        (["fly"], 2, "invalid choice: 'fly'"),
        (["train", "{train}"], 2, "the following arguments are required: -m/--model"),
        (["train", "{train}", "-m", "{tmp}/m", "--c1", "-1"], 2, "argument --c1: expected a finite number >= 0"),
        (["train", "{train}", "-m", "{tmp}/m", "--max-iter", "0"], 2, "argument --max-iter: expected a positive integer"),
        (["train", "{train}", "-m", "{tmp}/m", "--label-column", "0"], 2, "0 is the token column"),
        (["train", "{tmp}/missing.conll", "-m", "{tmp}/m"], 1, "missing.conll: no such file"),
        (["train", "{ragged}", "-m", "{tmp}/m"], 1, "ragged.conll, line 3: 3 columns, expected 2 as on line 1"),
        (["train", "{bad_utf8}", "-m", "{tmp}/m"], 1, "bad_utf8.conll, line 2: not valid utf-8 text"),
        (["train", "{train3}", "-m", "{tmp}/m", "--columns", "a", "b"], 1, "--columns names 2 column(s), but"),
        (["train", "{train}", "{train3}", "-m", "{tmp}/m"], 1, "train3.conll, line 1: 3 columns, but"),
        (["train", "{train3}", "-m", "{tmp}/m", "--template", "{bad_template}"], 1, "bad_template.txt: template line 1: 'B01:%x[0,0]' is a bigram"),
        (["train", "{train}", "-m", "{tmp}/m", "--template", "{tmp}/none.txt"], 1, "none.txt: cannot read the template file"),
        (["train", "{train3}", "-m", "{tmp}/m", "--template", "{bad_template}", "--columns", "pos"], 1,
         "with --template, the templates read the columns"),
        (["tag", "-m", "{tmp}/none.skcrf", "{test}"], 1, "none.skcrf: no such model file"),
        (["tag", "-m", "{not_a_model}", "{test}"], 1, "not_a_model"),
        (["tag", "-m", "{model}", "{test3_with_extra}"], 1, "4 columns, but the model was trained on 1 token column(s)"),
        (["eval", "-m", "{model}", "{unlabeled}"], 1, "no gold label column"),
        (["eval", "--tagged", "{unlabeled}"], 1, "with --tagged the last two columns are the gold"),
        (["dump", "{tmp}/none.skcrf"], 1, "none.skcrf: no such model file"),
        (["convert", "{tmp}/none.crfsuite", "{tmp}/out"], 1, "none.crfsuite: no such file"),
        (["convert", "{truncated_crfsuite}", "{tmp}/out"], 1, "truncated.crfsuite"),
        (["data", "dev"], 2, "argument subset: invalid choice: 'dev'"),
    ],
)
def test_errors_are_one_line_without_traceback(corpus, model, truncated_crfsuite, capsys, tmp_path,
                                               argv, status, message):
    paths = dict(corpus[0])
    (tmp_path / "ragged.conll").write_text("a O\nb O\nc N O\n", encoding="utf-8")
    (tmp_path / "bad_utf8.conll").write_bytes(b"a O\n\xff O\n")
    (tmp_path / "bad_template.txt").write_text("B01:%x[0,0]\n", encoding="utf-8")
    (tmp_path / "not_a_model").write_bytes(b"not a model file at all")
    (tmp_path / "unlabeled.conll").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "test3_with_extra.conll").write_text("a N X O\n", encoding="utf-8")
    (tmp_path / "truncated.crfsuite").write_bytes(truncated_crfsuite)
    names = {
        "tmp": tmp_path, "model": model, "train": paths["train"], "train3": paths["train3"],
        "test": paths["test"],
        **{k: tmp_path / f"{k}.conll" for k in ("ragged", "bad_utf8", "unlabeled", "test3_with_extra")},
        "bad_template": tmp_path / "bad_template.txt", "not_a_model": tmp_path / "not_a_model",
        "truncated_crfsuite": tmp_path / "truncated.crfsuite",
    }
    capsys.readouterr()
    code, stdout, stderr = run([a.format(**names) for a in argv], capsys)
    assert code == status
    lines = stderr.splitlines()
    # progress lines may come first; the error is the last line, and the only one
    assert lines[-1].startswith("sklearn-crf: error: ")
    assert sum(line.startswith("sklearn-crf: error") for line in lines) == 1
    assert message in lines[-1]
    assert "Traceback" not in stderr


def test_python_dash_m_help_in_a_subprocess():
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_crf", "--help"], capture_output=True, text=True, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: sklearn-crf")
    for command in ("train", "tag", "eval", "dump", "convert", "data"):
        assert command in result.stdout


def test_console_script_points_to_main():
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    target = re.search(r'^sklearn-crf\s*=\s*"([\w.]+):(\w+)"', section, re.MULTILINE)
    assert target is not None
    module, name = target.groups()
    assert getattr(importlib.import_module(module), name) is main


def test_train_featurizer_defaults_are_sequence_featurizer_defaults():
    from sklearn_crf._cli import _featurizer_settings, build_parser

    args = build_parser().parse_args(["train", "x.conll", "-m", "m"])
    featurizer = _featurizer_settings(args, n_token_columns=1)
    assert featurizer.get_params() == SequenceFeaturizer().get_params()


def test_skipped_column_and_tab_separator(corpus, capsys, tmp_path):
    paths, train, _ = corpus
    tabbed = tmp_path / "train.tsv"
    write_conll(tabbed, [[(w, shape(w)) for w in s] for s in train.sentences[:50]],
                train.tags[:50], sep="\t")
    path = tmp_path / "skip.skcrf"
    argv = ["train", tabbed, "--sep", "tab", "-m", path, "--columns", "-", "-q", "--max-iter", "3"]
    status, _, stderr = run(argv, capsys)
    assert status == 0, stderr
    status, stdout, _ = run(["dump", path, "--format", "json", "--top", "100000"], capsys)
    attributes = {row["attribute"] for row in json.loads(stdout)["state_features"]["positive"]}
    assert attributes and not any("shape" in a for a in attributes)
    status, stdout, _ = run(["tag", "-m", path, tabbed], capsys)
    assert status == 0 and stdout.splitlines()[0].count("\t") == 3


def test_readme_commands_parse():
    from sklearn_crf._cli import build_parser

    page = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "cli.rst"
    commands = [line.strip()[len("$ sklearn-crf "):].split("|")[0].split()
                for line in page.read_text(encoding="utf-8").splitlines()
                if line.strip().startswith("$ sklearn-crf ")]
    assert {c[0] for c in commands} >= {"data", "train", "tag", "eval", "dump"}
    for argv in commands:
        build_parser().parse_args(argv)


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"featurizer": {"kind": "sequence", "params": {"window": 10**9}}, "n_token_columns": 1,
          "label_column": -1, "sep": None}, "window=1000000000"),
        ({"featurizer": {"kind": "sequence", "params": {}}, "label_column": -1}, "n_token_columns=None"),
        ({"featurizer": {"kind": "sequence", "params": {"no_such": 1}}, "n_token_columns": 1,
          "label_column": -1, "sep": None}, "no_such"),
        ({"featurizer": {"kind": "sequence", "params": {"lower": "yes"}}, "n_token_columns": 1,
          "label_column": -1, "sep": None}, "lower"),
        ({"featurizer": {"kind": "templates", "templates": ["U00:%x[99,0]"]}, "n_token_columns": 1,
          "label_column": -1, "sep": None}, "template line 1"),
        ({"featurizer": {"kind": "python"}, "n_token_columns": 1, "label_column": -1, "sep": None},
         "kind='python'"),
        ({"featurizer": {"kind": "sequence", "params": {}}, "n_token_columns": 1, "label_column": 0,
          "sep": None}, "label_column=0"),
        ({"featurizer": {"kind": "sequence", "params": {}}, "n_token_columns": 1, "label_column": -1,
          "sep": 5}, "sep=5"),
    ],
)
def test_untrusted_featurizer_settings_in_a_model_file(corpus, model, capsys, tmp_path, settings, message):
    from sklearn_crf import load_model, save_model

    path = tmp_path / "crafted.skcrf"  # a CRFTagger with the featurizer in the metadata (version 1)
    save_model(load_model(model)[-1], path, metadata={"sklearn_crf_cli": settings})
    status, _, stderr = run(["tag", "-m", path, corpus[0]["test"], "-q"], capsys)
    assert status == 1
    assert stderr.count("\n") == 1 and stderr.startswith(f"sklearn-crf: error: {path}: ")
    assert message in stderr


def test_tag_nbest_and_constraints(corpus, model, api_predictions, capsys):
    paths, _, test = corpus
    crf, featurizer = api_predictions[1], api_predictions[2]
    X_test = featurizer.transform(test.sentences[:20])
    status, stdout, stderr = run(["tag", "-m", model, paths["test"], "--constraints", "IOB2"], capsys)
    assert status == 0, stderr
    constrained = CRFTagger(**API_PARAMS, transition_constraints="IOB2")
    constrained.fit(featurizer.transform(corpus[1].sentences), corpus[1].tags)
    assert read_conll(io.StringIO(stdout)).tags == constrained.predict(featurizer.transform(test.sentences))

    status, stdout, stderr = run(["tag", "-m", model, paths["test"], "--nbest", "3"], capsys)
    assert status == 0, stderr
    blocks = stdout.split("# ")[1:]
    expected = crf.predict_nbest(X_test, n=3)
    k = 0
    for s, paths_s in enumerate(expected):
        for rank, (labels, probability) in enumerate(paths_s):
            header, *rows = blocks[k].rstrip("\n").split("\n")
            assert header == f"{rank} {probability:.6f}"
            assert [row.split()[-1] for row in rows] == labels
            assert [row.split()[0] for row in rows] == test.sentences[s]
            k += 1


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--nbest", "0"], "argument --nbest: expected a positive integer"),
        (["--nbest", "2", "--marginals"], "--nbest and --marginals cannot be combined"),
        (["--constraints", "XYZ"], "argument --constraints: invalid choice: 'XYZ'"),
    ],
)
def test_tag_decoding_option_errors(corpus, model, capsys, extra, message):
    status, _, stderr = run(["tag", "-m", model, corpus[0]["test"], "-q", *extra], capsys)
    assert status in (1, 2)
    assert stderr.count("\n") == 1 and stderr.startswith("sklearn-crf: error: ") and message in stderr


def test_tag_allowed_column(corpus, model, api_predictions, capsys, tmp_path):
    _, _, test = corpus
    crf, featurizer = api_predictions[1], api_predictions[2]
    sentences = test.sentences[:30]
    cells = [["B-PER" if t == 0 else "B-LOC|O" if t == 1 else "*" for t in range(len(s))]
             for s in sentences]
    path = tmp_path / "forced.conll"
    write_conll(path, [list(zip(s, c)) for s, c in zip(sentences, cells)])
    status, stdout, stderr = run(["tag", "-m", model, path, "--allowed-column", "1"], capsys)
    assert status == 0, stderr
    allowed = [[None if c == "*" else set(c.split("|")) if "|" in c else c for c in s] for s in cells]
    expected = crf.predict(featurizer.transform(sentences), allowed=allowed)
    tagged = read_conll(io.StringIO(stdout))
    assert tagged.tags == expected
    assert all(labels[0] == "B-PER" for labels in tagged.tags)
    assert [[t[1] for t in s] for s in tagged.sentences] == cells  # the column is kept

    (tmp_path / "unknown.conll").write_text("Madrid NOPE\n", encoding="utf-8")
    status, _, stderr = run(["tag", "-m", model, tmp_path / "unknown.conll", "--allowed-column", "1"], capsys)
    assert status == 1 and stderr.count("\n") == 1 and "NOPE" in stderr


# ---------------------------------------------------------------------------
# The newcomer's stumbles (issue 23) and the CLI's defaults (issue 19), through
# main() on standard streams of its own (the real entry point in a subprocess:
# test_python_dash_m_help_in_a_subprocess, test_quiet_silences_the_convergence_message)

ROOT = Path(__file__).resolve().parents[1]


def cli(*argv, stdin=None):
    """(status, stdout, stderr) of ``sklearn-crf ARGV``, as ``python -m sklearn_crf``
    runs it (``sys.exit(main())``), in this process: main() reads ``stdin`` (the
    text given, else nothing) and writes to fresh streams, help at 80 columns."""
    def stream(text=""):
        return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8",
                                write_through=True)

    saved = sys.stdin, sys.stdout, sys.stderr, os.environ.get("COLUMNS")
    sys.stdin, sys.stdout, sys.stderr = stream(stdin or ""), stream(), stream()
    os.environ["COLUMNS"] = "80"  # as in a subprocess writing to a pipe
    try:
        status = main([str(a) for a in argv])
        out, err = (s.buffer.getvalue().decode("utf-8") for s in (sys.stdout, sys.stderr))
    finally:
        sys.stdin, sys.stdout, sys.stderr, columns = saved
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return status, out, err


def cli_subprocess(*argv):
    """(status, stdout, stderr) of ``python -m sklearn_crf ARGV`` in a subprocess."""
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_crf", *map(str, argv)],
        capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return result.returncode, result.stdout, result.stderr


def one_error_line(stderr):
    """The error of a stderr that holds exactly one line, an error."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("sklearn-crf: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_eval_without_a_model_is_an_error(corpus):
    """Stumble 2: `eval FILE` read the token column as the gold labels and exited 0."""
    status, stdout, stderr = cli("eval", corpus[0]["test"])
    assert status == 2 and stdout == ""
    assert "no model: give -m MODEL" in one_error_line(stderr)
    assert "--tagged" in stderr


def test_eval_tagged_reads_the_last_two_columns(corpus, model, capsys, tmp_path):
    tagged = tmp_path / "tagged.conll"
    assert run(["tag", "-m", model, corpus[0]["test"], "-o", tagged, "-q"], capsys)[0] == 0
    data = read_conll(tagged, label_column=None)
    expected = format_conlleval_of([[t[1] for t in s] for s in data.sentences],
                                   [[t[2] for t in s] for s in data.sentences])
    status, stdout, stderr = cli("eval", "--tagged", tagged)
    assert status == 0, stderr
    assert stdout == expected
    status, _, stderr = cli("eval", "--tagged", "-m", model, tagged)
    assert status == 2 and "not both" in one_error_line(stderr)


def format_conlleval_of(gold, predicted):
    from sklearn_crf.metrics import conlleval_report

    return conlleval_report(gold, predicted)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "{train}", "-m", "{tmp}", "--max-iter", "2"], "is a directory; -m/--model takes a file name"),
        (["train", "{train}", "-m", "{tmp}/missing/m.skcrf", "--max-iter", "2"], "no such folder"),
        (["convert", "{model}", "{tmp}"], "is a directory; OUTPUT takes a file name"),
        (["convert", "{model}", "{tmp}/missing/m.crfsuite"], "no such folder"),
        (["tag", "-m", "{model}", "{test}", "-o", "{tmp}/missing/out"], "no such folder"),
        (["data", "testb", "-o", "{tmp}"], "is a directory; -o/--output takes a file name"),
    ],
)
def test_output_paths_are_checked_before_any_work(corpus, model, tmp_path, argv, message):
    """Stumble 3: `train -m DIR` failed after the whole fit with a raw [Errno 21]."""
    names = {"tmp": tmp_path, "train": corpus[0]["train"], "test": corpus[0]["test"], "model": model}
    status, stdout, stderr = cli(*[a.format(**names) for a in argv])
    assert status == 1 and stdout == ""
    line = one_error_line(stderr)  # no progress line: nothing was read or trained
    assert message in line and "Errno" not in line


@pytest.fixture(scope="module")
def python_pipeline(corpus):
    """A Pipeline trained and saved from Python, its file and its predictions."""
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import save_model

    paths, train, test = corpus
    pipe = make_pipeline(SequenceFeaturizer(window=2, shape=True), CRFTagger(**API_PARAMS))
    pipe.fit(train.sentences, train.tags)
    path = paths["dir"] / "python.skcrf"
    save_model(pipe, path)
    return path, pipe, pipe.predict(test.sentences)


def test_a_pipeline_saved_from_python_tags_on_the_command_line(corpus, python_pipeline):
    """Stumble 4: save_model(pipe) raised AttributeError; `tag` could not use a Python model."""
    path, _, expected = python_pipeline
    status, stdout, stderr = cli("tag", "-m", path, corpus[0]["test"], "-q")
    assert status == 0, stderr
    tagged = read_conll(io.StringIO(stdout))
    assert tagged.tags == expected
    unlabeled = io.StringIO()
    write_conll(unlabeled, corpus[2].sentences)
    status, stdout, stderr = cli("tag", "-m", path, "-q", stdin=unlabeled.getvalue())
    assert status == 0, stderr
    assert read_conll(io.StringIO(stdout)).tags == expected


def test_eval_of_a_pipeline_saved_from_python(corpus, python_pipeline):
    from sklearn_crf.metrics import conlleval_report

    path, _, expected = python_pipeline
    status, stdout, stderr = cli("eval", "-m", path, corpus[0]["test"], "--format", "json")
    assert status == 0, stderr
    assert json.loads(stdout) == json.loads(json.dumps(conlleval_report(corpus[2].tags, expected, output_dict=True)))


def test_tag_on_a_crfsuite_file_says_to_convert_it(model, tmp_path, corpus):
    """Stumble 4: `tag -m file.crfsuite` said "not a readable zip archive"."""
    crfsuite = tmp_path / "m.crfsuite"
    assert cli("convert", model, crfsuite, "-q")[0] == 0
    status, _, stderr = cli("tag", "-m", crfsuite, corpus[0]["test"])
    line = one_error_line(stderr)
    assert status == 1 and "a CRFsuite model file" in line and "sklearn-crf convert" in line
    assert "zip" not in line


def test_convert_says_what_the_result_can_be_used_for(model, tmp_path, corpus):
    """Stumble 4: convert's help and output did not say that `tag` cannot use the result."""
    status, stdout, _ = cli("convert", "--help")
    assert status == 0
    text = " ".join(stdout.split())
    assert "without a featurizer" in text and "'tag' needs a Pipeline" in text
    assert "python-crfsuite's Tagger" in text
    crfsuite, back = tmp_path / "m.crfsuite", tmp_path / "back.skcrf"
    status, _, stderr = cli("convert", model, crfsuite)
    assert status == 0 and "python-crfsuite's Tagger" in stderr
    assert "the tagger only: a CRFsuite file holds no featurizer" in stderr
    status, _, stderr = cli("convert", crfsuite, back)
    assert status == 0 and "for load_model() in Python" in stderr and "not for 'sklearn-crf tag'" in stderr
    status, _, stderr = cli("tag", "-m", back, corpus[0]["test"])
    assert status == 1 and "no featurizer" in one_error_line(stderr)


def test_quiet_silences_the_convergence_message(corpus, tmp_path):
    """Stumble 8: `-q` still printed the convergence message (in a subprocess: nothing
    of the whole process on stderr)."""
    status, stdout, stderr = cli_subprocess("train", corpus[0]["train"], "-m", tmp_path / "m.skcrf",
                                 "--max-iter", "2", "--n-jobs", "1", "-q")
    assert status == 0 and stdout == "" and stderr == ""
    status, _, stderr = cli("train", corpus[0]["train"], "-m", tmp_path / "m.skcrf",
                            "--max-iter", "2", "--n-jobs", "1")
    assert status == 0 and "max_iter=2" in stderr  # without -q, the message is there


def test_tag_keeps_the_docstart_lines(model, tmp_path):
    """Stumble 8: `tag` dropped the -DOCSTART- lines."""
    text = ("-DOCSTART- O\n\nLa O\nCoruña O\n\n-DOCSTART- O\n\nMadrid O\nes O\n\n"
            "Ana O\n\n-DOCSTART- O\n")
    status, stdout, stderr = cli("tag", "-m", model, "-q", stdin=text)
    assert status == 0, stderr
    got = [line.split() for line in stdout.rstrip("\n").split("\n")]
    want = [line.split() for line in text.rstrip("\n").split("\n")]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w[:1] == ["-DOCSTART-"]:
            assert g == w + ["O"]  # its label column, as conlleval expects
        else:
            assert g[:len(w)] == w and len(g) == len(w) + (1 if w else 0)


def test_columns_does_not_swallow_the_file_name(corpus, tmp_path, capsys):
    """Stumble 8: `--columns shape FILE` took FILE for a column name."""
    paths = corpus[0]
    after, before, comma = (tmp_path / f"{k}.skcrf" for k in ("after", "before", "comma"))
    status, _, stderr = cli("train", "--columns", "shape", paths["train3"], "-m", after,
                            "-q", *TRAIN_PARAMS)
    assert status == 0, stderr
    assert run(["train", paths["train3"], "--columns", "shape", "-m", before, "-q", *TRAIN_PARAMS],
               capsys)[0] == 0
    assert run(["train", paths["train3"], "--columns", "shape,", "-m", comma, "-q", *TRAIN_PARAMS],
               capsys)[0] == 2  # an empty name
    from sklearn_crf import load_model

    a, b = load_model(after), load_model(before)
    assert a[0].columns == b[0].columns == ("shape",)
    assert a[-1].coef_.tobytes() == b[-1].coef_.tobytes()


def test_columns_comma_separated(corpus, tmp_path, capsys):
    tabbed = tmp_path / "four.conll"
    _, train, _ = corpus
    write_conll(tabbed, [[(w, shape(w), w[-1:]) for w in s] for s in train.sentences[:40]],
                train.tags[:40])
    path = tmp_path / "m.skcrf"
    status, _, stderr = run(["train", "--columns", "shape,-", tabbed, "-m", path, "-q",
                             "--max-iter", "3"], capsys)
    assert status == 0, stderr
    from sklearn_crf import load_model

    assert load_model(path)[0].columns == ("shape", None)


def test_a_bad_allowed_label_names_the_file_and_line(model, tmp_path):
    """Stumble 8: a bad label in --allowed-column was reported as allowed[0][1]."""
    path = tmp_path / "allowed.conll"
    path.write_text("La *\nCoruña B-LOC|NOPE\n\nMadrid *\n", encoding="utf-8")
    status, _, stderr = cli("tag", "-m", model, path, "--allowed-column", "1")
    line = one_error_line(stderr)
    assert status == 1
    assert f"{path}, line 2: --allowed-column: the label 'NOPE'" in line
    assert "allowed[" not in line


def test_dump_convert_and_format_have_help_texts():
    """Stumble 8: `dump`, `convert` and `--format` had no help text."""
    for command in ("dump", "convert", "eval"):
        status, stdout, _ = cli(command, "--help")
        assert status == 0
        assert stdout.split("\n\n")[1].strip(), f"{command} has no description"
        # every positional argument and option line is followed by a help text
        args_text = stdout.split("positional arguments:", 1)[1]
        entries = [line for line in args_text.splitlines() if line.startswith("  ") and
                   not line.startswith("      ")]
        for entry in entries:
            name, _, help_text = entry.strip().partition("  ")
            following = args_text.split(entry, 1)[1].splitlines()[1:2]
            assert help_text.strip() or (following and following[0].startswith("      ")), (
                f"{command}: {name} has no help text")
        assert "--format" not in stdout or "JSON" in stdout.split("--format", 1)[1]


def test_training_defaults_are_crftaggers(corpus, tmp_path):
    """Issue 19: the command line held copies of the defaults (--c2 1.0,
    --max-iter 1000, --tol 1e-3); now an option not given is not passed, and
    --help shows CRFTagger's own defaults."""
    from sklearn_crf import load_model

    status, stdout, _ = cli("train", "--help")
    assert status == 0
    text = " ".join(stdout.split())
    defaults = CRFTagger().get_params()
    for option, param in (("--c1", "c1"), ("--c2", "c2"), ("--tol", "tol"), ("--min-freq", "min_freq")):
        assert re.search(rf"{option} \S+ .*?\(default: {re.escape(str(defaults[param]))}[);:]", text), option
    assert re.search(r"--max-iter \S+ .*?\(default: none", text)
    path = tmp_path / "m.skcrf"
    status, _, stderr = cli("train", corpus[0]["train"], "-m", path, "-q", "--tol", "0.5")
    assert status == 0, stderr
    params = load_model(path)[-1].get_params()
    assert params == {**defaults, "tol": 0.5, "verbose": 0}


def test_column_count_errors_name_the_file_and_line(model, tmp_path):
    path = tmp_path / "four.conll"
    path.write_text("\n\n-DOCSTART- -X- O O\n\na N X O\n", encoding="utf-8")
    status, _, stderr = cli("tag", "-m", model, path)
    assert status == 1
    assert f"{path}, line 5: 4 columns, but the model was trained on 1 token column(s)" in one_error_line(stderr)


def test_convert_with_a_featurizer_makes_a_crfsuite_model_usable_by_tag(corpus, tmp_path):
    """Stumble 4: a model converted from CRFsuite could not be used by `tag`."""
    import pycrfsuite

    paths, train, test = corpus
    featurizer = SequenceFeaturizer(columns=("shape",))
    trainer = pycrfsuite.Trainer(verbose=False)
    for sentence, labels in zip(train.sentences[:100], train.tags[:100]):
        trainer.append(featurizer.transform([[(w, shape(w)) for w in sentence]])[0], labels)
    trainer.set_params({"c1": 0.1, "c2": 0.1, "max_iterations": 20})
    crfsuite = tmp_path / "tutorial.crfsuite"
    trainer.train(str(crfsuite))
    tagger = pycrfsuite.Tagger()
    tagger.open(str(crfsuite))
    expected = [tagger.tag(x) for x in featurizer.transform([[(w, shape(w)) for w in s]
                                                             for s in test.sentences])]
    out = tmp_path / "tutorial.skcrf"
    status, _, stderr = cli("convert", "--columns", "shape", crfsuite, out)
    assert status == 0 and "a Pipeline of the featurizer given and the tagger" in stderr
    status, stdout, stderr = cli("tag", "-m", out, paths["test3"], "-q")
    assert status == 0, stderr
    assert read_conll(io.StringIO(stdout)).tags == expected
    status, _, stderr = cli("convert", "--with-featurizer", out, tmp_path / "x.crfsuite")
    assert status == 2 and "bundles a featurizer with a model converted from CRFsuite" in (
        one_error_line(stderr))


def test_a_model_file_of_the_previous_cli_format_still_tags(corpus, model, capsys, tmp_path):
    """Files written by `train` before the Pipeline format: a CRFTagger, the
    featurizer's settings in the metadata (version 1)."""
    from sklearn_crf import load_model, save_model

    pipe = load_model(model)
    settings = {"version": 1, "n_token_columns": 1, "label_column": -1, "sep": None,
                "featurizer": {"kind": "sequence", "params": {
                    k: list(v) if isinstance(v, tuple) else v for k, v in pipe[0].get_params().items()}}}
    old = tmp_path / "old.skcrf"
    save_model(pipe[-1], old, metadata={"sklearn_crf_cli": settings})
    status, stdout, stderr = run(["tag", "-m", old, corpus[0]["test"], "-q"], capsys)
    assert status == 0, stderr
    assert read_conll(io.StringIO(stdout)).tags == pipe.predict(corpus[2].sentences)


def test_eval_of_a_python_pipeline_needs_a_gold_column(python_pipeline, tmp_path, capsys):
    path = tmp_path / "tokens.conll"
    path.write_text("Madrid\nes\n", encoding="utf-8")
    status, _, stderr = run(["eval", "-m", python_pipeline[0], path], capsys)
    assert status == 1 and f"{path}, line 1: no gold label column" in stderr


@pytest.fixture(scope="module")
def dense_models(corpus):
    """Model files of a tagger that takes 3 dense features per token: alone, and in
    a Pipeline whose featurizer does not compute them."""
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import save_model

    paths, train, _ = corpus
    featurizer = SequenceFeaturizer()
    sentences, tags = train.sentences[:60], train.tags[:60]
    rng = np.random.default_rng(0)
    X = [(tokens, rng.normal(size=(len(tokens), 3)))
         for tokens in featurizer.fit_transform(sentences)]
    crf = CRFTagger(**API_PARAMS).fit(X, tags)
    save_model(crf, paths["dir"] / "dense.skcrf")
    save_model(make_pipeline(featurizer, crf), paths["dir"] / "dense-pipe.skcrf")
    return paths["dir"] / "dense.skcrf", paths["dir"] / "dense-pipe.skcrf"


@pytest.mark.parametrize("command", ["tag", "eval"])
def test_a_model_needing_dense_features_it_cannot_compute_is_a_clear_error(
        corpus, dense_models, command, capsys):
    alone, pipe = dense_models
    status, stdout, stderr = run([command, "-m", pipe, corpus[0]["test"], "-q"], capsys)
    assert status == 1 and stdout == ""
    line = one_error_line(stderr)
    assert "takes 3 dense features per token, but its featurizer gives 0" in line
    status, stdout, stderr = run([command, "-m", alone, corpus[0]["test"], "-q"], capsys)
    assert status == 1 and stdout == ""
    assert "no featurizer settings" in one_error_line(stderr)


# ---------------------------------------------------------------------------
# One error boundary: every failure is one line naming the file
# ---------------------------------------------------------------------------

SMALL = [["Juan", "vive", "en", "Madrid"], ["Ana", "come"]]
SMALL_TAGS = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O"]]


def one_line_error(status, stderr, start):
    assert status == 1
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"sklearn-crf: error: {start}"), stderr


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import save_model

    tmp = tmp_path_factory.mktemp("small")
    data = tmp / "data.conll"
    write_conll(data, SMALL * 5, SMALL_TAGS * 5)
    model = tmp / "model.skcrf"
    save_model(make_pipeline(SequenceFeaturizer(), CRFTagger(c2=0.01)).fit(SMALL, SMALL_TAGS),
               model)
    return tmp, data, model


def test_a_corrupted_gzip_file_is_one_line(small_files, capsys, tmp_path):
    import gzip

    _, data, model = small_files
    raw = bytearray(gzip.compress(data.read_bytes() * 20))
    raw[30:40] = bytes(b ^ 0xFF for b in raw[30:40])  # inside the deflate stream
    path = tmp_path / "data.conll.gz"
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="data.conll.gz: corrupt gzip data"):
        read_conll(path)
    for argv in (["tag", "-m", model, path], ["eval", "-m", model, path],
                 ["train", "-m", tmp_path / "m", path]):
        status, _, stderr = run(argv + ["-q"], capsys)
        one_line_error(status, stderr, f"{path}: corrupt gzip data")


def test_debug_shows_the_traceback(small_files, capsys, tmp_path):
    _, _, model = small_files
    path = tmp_path / "bad.conll"
    path.write_text("a b O\nc O\n", encoding="utf-8")
    status, _, stderr = run(["tag", "-m", model, path, "-q"], capsys)
    assert status == 1 and "Traceback" not in stderr
    status, _, stderr = run(["tag", "-m", model, path, "-q", "--debug"], capsys)
    assert status == 1
    assert stderr.startswith(f"sklearn-crf: error: {path}, line 2: ")
    assert "Traceback (most recent call last)" in stderr


def test_an_unexpected_error_is_one_line(small_files, capsys, monkeypatch):
    _, data, model = small_files

    def broken(self, X):
        raise KeyError("a bug")

    monkeypatch.setattr(SequenceFeaturizer, "transform", broken)
    status, _, stderr = run(["tag", "-m", model, data, "-q"], capsys)
    one_line_error(status, stderr, f"{model}: KeyError: 'a bug'")  # the load probes it
    assert "--debug shows where" in stderr


def test_an_error_quotes_at_most_a_bounded_excerpt(small_files, capsys, tmp_path):
    _, _, model = small_files
    path = tmp_path / "wide.conll"
    path.write_text("a O\n" + " ".join(["x"] * 10_000) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        read_conll(path)
    assert len(str(err.value)) < 300 and "(19999 characters)" in str(err.value)
    status, _, stderr = run(["tag", "-m", model, path, "-q"], capsys)
    one_line_error(status, stderr, f"{path}, line 2: ")
    assert len(stderr) < 500


def test_train_on_an_unlabeled_file_speaks_command_line(capsys, tmp_path):
    path = tmp_path / "tokens.conll"
    path.write_text("a\nb\n", encoding="utf-8")
    status, _, stderr = run(["train", "-m", tmp_path / "m", path, "-q"], capsys)
    one_line_error(status, stderr, f"{path}, line 1: 1 column")
    assert "--label-column" in stderr and "label_column=None" not in stderr


def test_a_template_error_names_the_data_and_the_template(small_files, capsys, tmp_path):
    _, data, _ = small_files
    template = tmp_path / "template.txt"
    template.write_text("U00:%x[0,3]\n", encoding="utf-8")
    status, _, stderr = run(["train", "-m", tmp_path / "m", data, "--template", template, "-q"],
                            capsys)
    one_line_error(status, stderr, f"{data}, line 1: ")
    assert str(template) in stderr and "column 3" in stderr


def test_a_template_that_is_a_device_or_a_directory_is_refused(small_files, capsys, tmp_path):
    """The template file is read through the package's bounded reader: a
    device (/dev/zero would never end) or a directory is a one-line error."""
    _, data, _ = small_files
    for template in ("/dev/zero", tmp_path):
        status, _, stderr = run(["train", "-m", tmp_path / "m", data, "--template", template,
                                 "-q"], capsys)
        one_line_error(status, stderr, f"{template}: cannot read the template file")


def test_an_encoded_pipeline_tags_and_evaluates(small_files, capsys, tmp_path):
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import save_model

    _, data, model = small_files
    encoded = tmp_path / "encoded.skcrf"
    save_model(make_pipeline(SequenceFeaturizer(output="encoded"), CRFTagger(c2=0.01)).fit(
        SMALL, SMALL_TAGS), encoded)
    outputs = {}
    for path in (model, encoded):
        status, out, stderr = run(["tag", "-m", path, data, "-q"], capsys)
        assert status == 0, stderr
        status, report, stderr = run(["eval", "-m", path, data, "-q", "--format", "json"],
                                     capsys)
        assert status == 0, stderr
        outputs[path] = out, report
    assert outputs[model] == outputs[encoded]


def test_an_int_label_pipeline_tags_and_evaluates(small_files, capsys, tmp_path):
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import save_model

    _, data, _ = small_files
    codes = {"B-PER": 1, "O": 0, "B-LOC": 2}
    path = tmp_path / "ints.skcrf"
    save_model(make_pipeline(SequenceFeaturizer(), CRFTagger(c2=0.01)).fit(
        SMALL, [[codes[t] for t in s] for s in SMALL_TAGS]), path)
    status, out, stderr = run(["tag", "-m", path, data, "-q"], capsys)
    assert status == 0, stderr
    tagged = read_conll(io.StringIO(out))
    assert tagged.tags[:2] == [[str(codes[t]) for t in s] for s in SMALL_TAGS]
    status, report, stderr = run(["eval", "-m", path, data, "-q"], capsys)
    assert status == 0 and stderr == "" and "accuracy" in report


def test_tag_output_is_unchanged_when_the_model_cannot_be_used(small_files, capsys, tmp_path):
    """Issue 1's run: a label UTF-8 cannot encode, an existing output file."""
    import zipfile

    _, data, model = small_files
    crafted = tmp_path / "surrogate.skcrf"
    with zipfile.ZipFile(model) as src, zipfile.ZipFile(crafted, "w") as dst:
        for info in src.infolist():
            raw = src.read(info)
            if info.filename == "model.json":
                doc = json.loads(raw)
                doc["classes"][-1] = "PER\udfff"
                raw = json.dumps(doc).encode()
            dst.writestr(info, raw)
    out = tmp_path / "out.txt"
    out.write_text("the old output\n", encoding="utf-8")
    status, _, stderr = run(["tag", "-m", crafted, data, "-o", out, "-q"], capsys)
    one_line_error(status, stderr, f"{crafted}: not a valid sklearn-crf model file: classes[")
    assert out.read_text(encoding="utf-8") == "the old output\n"
