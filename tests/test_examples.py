"""The examples run end to end on a subset of the bundled data."""

import ast
import functools
import pathlib
import re
import subprocess
import sys

import pytest

import _examples

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLOTS = ("loss_curve.png", "transitions.png", "entity_scores.png", "c1_c2_grid.png")


@functools.cache
def completed(script, *args, warnings_as_errors=False):
    """Run one example in a fresh interpreter (with ``-W error`` if
    ``warnings_as_errors``); return the finished process, its exit status 0.

    Cached: tests of one example with the same arguments share its run."""
    flags = ["-W", "error"] if warnings_as_errors else []
    result = subprocess.run(
        [sys.executable, *flags, str(EXAMPLES / script), *args],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, (
        f"{script} exited with status {result.returncode}:\n{result.stderr[-3000:]}")
    return result


def run(script, *args, **options):
    """The standard output of :func:`completed`."""
    return completed(script, *args, **options).stdout


#: the main job's settings (the quick start's) on 2,000 sentences, warnings as
#: errors: its output is checked, and that it converges without a warning
TRAIN_RUN = ("train_conll2002.py", "--n-train", "2000", "--n-test", "50")


@pytest.mark.parametrize(
    "script, args, expect",
    [
        ("model_selection_conll2002.py",
         ["--n-train", "150", "--n-test", "50", "--n-iter", "2", "--max-iter", "15",
          "--n-jobs", "1", "--by-document"],
         ["searching 2 candidates", "[CV] END", "best parameters: c1=",
          "entity-level F1 (esp.testb)"]),
        ("cross_validation_conll2002.py",
         ["--n-train", "300", "--max-iter", "15", "--top", "5"],
         ["GroupKFold(3) by article", "cross_val_predict: 3 fits of 15 iterations", "fold 2:", "mean entity F1 over folds",
          "entity type confusion", "most frequent entity errors", "token errors:"]),
        ("inspect_model_conll2002.py",
         ["--n-train", "300", "--max-iter", "15", "--top", "3"],
         ["feature template", "B-PER: strongest positive | most negative",
          "transition weights (rows: from, columns: to)", "most likely transitions:"]),
        ("partial_labels_conll2002.py",
         ["--n-train", "300", "--n-test", "100", "--max-iter", "15", "--rates", "0.5"],
         ["all labels: entity F1", "(a) full only", "random tokens", "types per document",
          "types per doc., sets"]),
        ("decoding_conll2002.py",
         ["--n-train", "300", "--n-test", "100", "--max-iter", "15"],
         ["viterbi    IOB2", "posterior  IOB2", "predict_nbest(n=3)", "1. p=",
          "predict_entities:", "calibration", "allowed=: one token forced"]),
    ],
)
def test_example_prints_its_results(script, args, expect):
    out = run(script, *args)
    for text in expect:
        assert text in out


def test_train_example_prints_its_results():
    out = run(*TRAIN_RUN, warnings_as_errors=True)
    for text in ("fitting CRFTagger(", "entity-level F1 (esp.testb)",
                 "token F1 (weighted, without O)"):
        assert text in out


def test_dense_vectors_example_prints_its_table_and_an_explanation():
    pytest.importorskip("gensim")
    out = run("dense_vectors_conll2002.py", "--n-train", "200", "--n-test", "60",
              "--w2v-sentences", "400", "--vector-size", "16", "--epochs", "2",
              "--max-iter", "15")
    assert "Word2Vec on 400 sentences" in out
    rows = {line.split("  ")[0].strip(): line.split() for line in out.splitlines()
            if line.startswith(("hand-written ", "vectors only ", "both "))}
    assert set(rows) == {"hand-written", "vectors only", "both"}
    # columns: name, attributes, dense dims, entity F1, fit (s), iterations;
    # --vector-window 1 (the default): 3 x 16 dense columns
    assert rows["hand-written"][-5] != "0" and rows["hand-written"][-4] == "0"
    assert rows["vectors only"][-5] == "0" and rows["vectors only"][-4] == "48"
    assert rows["both"][-5] == rows["hand-written"][-5] and rows["both"][-4] == "48"
    assert all(0 <= float(row[-3]) <= 1 for row in rows.values())
    assert "explained prediction of the 'both' model" in out
    assert "dense[" in out and "entity " in out


def test_decoding_example_constraints_leave_no_invalid_label():
    out = run("decoding_conll2002.py", "--n-train", "300", "--n-test", "100", "--max-iter", "15")
    rows = [line.split() for line in out.splitlines() if line.split()[:2] in (
        ["viterbi", "IOB2"], ["posterior", "IOB2"])]
    assert len(rows) == 2
    assert all(row[-1] == "0" for row in rows)


def test_plots_example_writes_its_png_files(tmp_path):
    out = run(
        "plots_conll2002.py", "--out", str(tmp_path), "--n-train", "300", "--n-val", "100",
        "--n-test", "100", "--max-iter", "15", "--grid-n-train", "200", "--grid-max-iter", "10",
        "--c1", "0", "0.1", "--c2", "0.01", "1", "--cv", "2",
    )
    for name in PLOTS:
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE), name
        assert len(data) > 10_000, name
    assert "validation entity F1 (esp.testa): best" in out


def test_train_example_converges_without_a_warning():
    """The main job's settings (the quick start's) meet the stopping rule: on 2,000
    sentences a fixed 100 iterations would not."""
    result = completed(*TRAIN_RUN, warnings_as_errors=True)
    assert "ConvergenceWarning" not in result.stderr

def test_plots_example_grid_size_shrinks_the_grid_and_shows_progress(tmp_path):
    out = run(
        "plots_conll2002.py", "--out", str(tmp_path), "--n-train", "100", "--n-val", "50",
        "--n-test", "50", "--max-iter", "5", "--grid-n-train", "90", "--grid-max-iter", "5",
        "--grid-size", "2", "--cv", "2",
    )
    # 2 of the 5 default values of c1 and of c2: the first and the last
    assert "grid: 2 x 2 values x 2 folds = 8 fits on 90 sentences" in out
    assert out.count("[CV] END") == 8  # one progress line per fit
    assert "c1=0.0, c2=0.001" in out and "c1=2.0, c2=2.0" in out


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_help_shows_every_default(script):
    out = _examples.help_texts()[script]
    options = out.split("options:", 1)[1]
    # one entry per option (its help may wrap onto further lines)
    entries = re.split(r"\n  (?=-)", options.strip("\n"))
    entries = [e for e in entries if not e.lstrip().startswith("-h, --help")]
    assert entries
    for entry in entries:
        assert "(default:" in " ".join(entry.split()), entry


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_has_a_gallery_title(script):
    """sphinx-gallery needs a docstring that starts with a reStructuredText title."""
    doc = ast.get_docstring(ast.parse((EXAMPLES / script).read_text(encoding="utf-8")))
    title, underline = doc.splitlines()[:2]
    assert title and underline == "=" * len(title), script
