"""The batch driver: ranges on threads, blocks, and the first-use notice."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from sklearn_crf._engine.driver import attribute_ranges, run_ranges


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_run_ranges_covers_every_item_once(n_threads):
    seen = np.zeros(101, dtype=int)
    lock = threading.Lock()

    def func(lo, hi):
        with lock:
            seen[lo:hi] += 1

    run_ranges(n_threads, len(seen), func)
    assert (seen == 1).all()


def test_run_ranges_raises_a_thread_error_in_the_caller():
    def func(lo, hi):
        if lo <= 50 < hi:
            raise KeyError("item 50")

    with pytest.raises(KeyError, match="item 50"):
        run_ranges(3, 100, func)


def test_attribute_ranges_split_the_entries():
    index_ptr = np.array([0, 3, 3, 10, 11, 20])
    assert attribute_ranges(index_ptr, 1).tolist() == [0, 5]
    bounds = attribute_ranges(index_ptr, 2)
    assert bounds[0] == 0 and bounds[-1] == 5 and (np.diff(bounds) > 0).all()


_FIRST_USE = """
import logging, warnings
logging.basicConfig(level=logging.INFO, format="%(message)s")
warnings.simplefilter("ignore")
from sklearn_crf import CRFTagger
from sklearn_crf._engine import forward_backward
X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
y = [["PER", "O"], ["PER", "O"]]
for _ in range(2):
    CRFTagger(max_iter=3).fit(X, y).predict(X)
compiled = [name for name in ("forward_backward_blocks_log", "forward_backward_log",
                              "edge_sum_log", "node_marginals_log")
            if getattr(forward_backward, name).signatures]
print("log-space kernels compiled:", compiled)
"""


@pytest.fixture(scope="module")
def first_use_children(tmp_path_factory):
    """Two processes fitting and predicting: with an empty NUMBA_CACHE_DIR, then
    with the cache the first one filled."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path_factory.mktemp("numba_cache")),
               PYTHONPATH=root)
    children = []
    for _ in range(2):
        child = subprocess.run([sys.executable, "-c", _FIRST_USE], capture_output=True,
                               text=True, timeout=600, cwd=root, env=env)
        assert child.returncode == 0, child.stderr[-2000:]
        children.append(child)
    return children


def test_first_use_without_a_cache_says_once_that_it_compiles(first_use_children):
    counts = [child.stderr.count("compiling the numba kernels on first use")
              for child in first_use_children]
    assert counts == [1, 0]


def test_a_fit_whose_sequences_all_scale_compiles_no_log_space_kernel(first_use_children):
    for child in first_use_children:
        assert "log-space kernels compiled: []" in child.stdout, child.stdout
