"""The compile notice of a first fit, seen without any logging configuration."""

import os
import subprocess
import sys

import pytest

_PLAIN_FIT = """
from sklearn_crf import CRFTagger
X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
y = [["PER", "O"], ["PER", "O"]]
CRFTagger().fit(X, y).predict(X)
"""


@pytest.mark.slow
def test_a_first_fit_from_plain_python_prints_one_line_about_compiling(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"), PYTHONPATH=root)
    env.pop("PYTHONWARNINGS", None)
    stderr = []
    for _ in range(2):  # an empty cache, then the cache the first process filled
        child = subprocess.run([sys.executable, "-c", _PLAIN_FIT], capture_output=True,
                               text=True, timeout=900, cwd=root, env=env)
        assert child.returncode == 0, child.stderr[-2000:]
        stderr.append(child.stderr)
    lines = stderr[0].splitlines()
    assert len(lines) == 1 and "compiling the numba kernels" in lines[0], stderr[0]
    assert stderr[1] == ""
