"""The benchmarks' ``--quick`` smoke runs: each script runs to the end on small data.

Only the exit status and the result checks they print are asserted; their
timings on CI's shared machine are not the benchmark (no timing assertion).
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_script(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, *map(str, args)], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=900,
    )


def test_regression_benchmark_quick_against_head():
    result = run_script("benchmarks/bench_regression.py", "--quick", "--rev", "HEAD", "--n-jobs", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout.lower()
    assert "ratio" in out and "bitwise" in out, result.stdout[-3000:]


def test_encode_benchmark_quick():
    result = run_script("benchmarks/bench_encode.py", "--quick", "--rev", "HEAD")
    assert result.returncode == 0, result.stderr[-3000:]
