"""The examples run end to end on a subset of the bundled data."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    "script, args, expect",
    [
        ("train_conll2002.py", ["--n-train", "300", "--n-test", "100", "--max-iter", "30"],
         "entity-level F1"),
        ("model_selection_conll2002.py",
         ["--n-train", "150", "--n-test", "50", "--n-iter", "2", "--max-iter", "15",
          "--n-jobs", "1", "--by-document"],
         "entity-level F1 (esp.testb)"),
    ],
)
def test_example_runs(script, args, expect):
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        check=True, capture_output=True, text=True, timeout=600,
    ).stdout
    assert expect in out
