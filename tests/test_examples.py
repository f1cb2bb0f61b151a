"""The examples run end to end on a subset of the bundled data."""

import functools
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLOTS = ("loss_curve.png", "transitions.png", "entity_scores.png", "c1_c2_grid.png")


@functools.cache
def run(script, *args):
    """Run one example in a fresh interpreter; return its standard output.

    Cached: tests of one example with the same arguments share its run."""
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        check=True, capture_output=True, text=True, timeout=600,
    ).stdout


@pytest.mark.parametrize(
    "script, args, expect",
    [
        ("train_conll2002.py", ["--n-train", "300", "--n-test", "100", "--max-iter", "30"],
         ["entity-level F1 (esp.testb)", "token F1 (weighted, without O)"]),
        ("model_selection_conll2002.py",
         ["--n-train", "150", "--n-test", "50", "--n-iter", "2", "--max-iter", "15",
          "--n-jobs", "1", "--by-document"],
         ["best parameters: c1=", "entity-level F1 (esp.testb)"]),
        ("cross_validation_conll2002.py",
         ["--n-train", "300", "--max-iter", "15", "--top", "5"],
         ["GroupKFold(3) by article", "fold 2:", "mean entity F1 over folds",
          "entity type confusion", "most frequent entity errors", "token errors:"]),
        ("inspect_model_conll2002.py",
         ["--n-train", "300", "--max-iter", "15", "--top", "3"],
         ["feature template", "B-PER: strongest positive | most negative",
          "transition weights (rows: from, columns: to)", "most likely transitions:"]),
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
