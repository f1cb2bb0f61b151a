"""The first use of the kernels in a fresh process, seen from plain Python: the
compile notice, and what a first fit compiles.

One process fits and predicts twice with an empty ``NUMBA_CACHE_DIR``, then a
second one with the cache the first filled; no logging configuration (the
notice as a logged record: tests/engine/test_driver.py).
"""

import os
import subprocess
import sys

import pytest

from conftest import REPO

_PLAIN_FIT = """
from sklearn_crf import CRFTagger
from sklearn_crf._engine import forward_backward
X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
y = [["PER", "O"], ["PER", "O"]]
for _ in range(2):
    CRFTagger().fit(X, y).predict(X)
compiled = [name for name in ("forward_backward_blocks_log", "forward_backward_log",
                              "edge_sum_log", "node_marginals_log")
            if getattr(forward_backward, name).signatures]
print("log-space kernels compiled:", compiled)
"""


@pytest.fixture(scope="module")
def first_use_children(tmp_path_factory):
    """Two processes running ``_PLAIN_FIT``: with an empty NUMBA_CACHE_DIR, then
    with the cache the first one filled."""
    root = str(REPO)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path_factory.mktemp("numba_cache")),
               PYTHONPATH=root)
    env.pop("PYTHONWARNINGS", None)
    children = []
    for _ in range(2):
        child = subprocess.run([sys.executable, "-c", _PLAIN_FIT], capture_output=True,
                               text=True, timeout=900, cwd=root, env=env)
        assert child.returncode == 0, child.stderr[-2000:]
        children.append(child)
    return children


def test_a_first_fit_from_plain_python_prints_one_line_about_compiling(first_use_children):
    # one line for the process, though it fits twice; none through a filled cache
    cold, warm = first_use_children
    lines = cold.stderr.splitlines()
    assert len(lines) == 1 and "compiling the numba kernels on first use" in lines[0], cold.stderr
    assert warm.stderr == ""


def test_a_fit_whose_sequences_all_scale_compiles_no_log_space_kernel(first_use_children):
    for child in first_use_children:
        assert "log-space kernels compiled: []" in child.stdout, child.stdout
