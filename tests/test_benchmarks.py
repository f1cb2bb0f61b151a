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


def test_vs_crfsuite_benchmark_on_other_conll_files(tmp_path):
    """``--train FILE --test FILE``: another NER task's CoNLL files (here a
    Latin-1 one and a gzip one, three columns) for the data of every measure
    that takes it, the rss children's included."""
    import gzip

    from sklearn_crf.datasets import load_conll2002

    def lines(data):
        return "".join("".join(f"{w} X {t}\n" for w, t in zip(s, ts)) + "\n"
                       for s, ts in zip(data.sentences, data.tags))

    train, test = tmp_path / "ner.train", tmp_path / "ner.test.gz"
    train.write_bytes(("-DOCSTART- X O\n\n" + lines(load_conll2002("train", n_sentences=60))
                       + "Ñandú X B-MISC\n").encode("latin-1"))
    with gzip.open(test, "wt", encoding="utf-8") as f:
        f.write(lines(load_conll2002("testb", n_sentences=40)))
    result = run_script("benchmarks/bench_vs_crfsuite.py", "--quick", "--only", "predict,rss",
                        "--train", train, "--test", test)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "61 training sentences" in result.stdout and "40 test sentences" in result.stdout
    assert "peak RSS" in result.stdout


def test_vs_crfsuite_benchmark_quick():
    # the regression measure is bench_regression.py's functions, smoke-tested
    # above; the default-stopping measure is a long sklearn-crfsuite fit
    result = run_script("benchmarks/bench_vs_crfsuite.py", "--quick",
                        "--only", "fit100,predict,latency,rss,startup")
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    for row in ("fit, 10 iterations", "p99 latency", "cold / warm numba cache",
                "predict floor", "floor (dict lookup per item) / predict_single",
                "start-up floor of a numba library", "peak RSS of the start-up floor"):
        assert row in out, out[-3000:]


def test_first_use_benchmark_quick():
    result = run_script("benchmarks/bench_first_use.py", "--quick")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split("|") for line in result.stdout.splitlines()
            if line.startswith("| fit ") or line.startswith("| predict")]
    assert [r[1].strip() for r in rows] == ["fit", "predict", "predict_marginals"]
    assert int(rows[0][2]) > 0  # an empty cache: fit compiles kernels


def test_dense_benchmark_quick():
    result = run_script("benchmarks/bench_dense.py", "--quick")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("): yes") == 2, result.stdout[-3000:]  # weights agree, both feature sets


def test_scale_benchmark_quick():
    result = run_script("benchmarks/bench_scale.py", "--quick")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "same model (dict / stream / dask): yes" in result.stdout, result.stdout[-3000:]


def test_featurizer_e2e_benchmark_quick():
    result = run_script("benchmarks/bench_featurizer.py", "e2e", "--quick")
    assert result.returncode == 0, result.stderr[-3000:]


def test_search_benchmark_quick():
    result = run_script("benchmarks/bench_search.py", "--quick")
    assert result.returncode == 0, result.stderr[-3000:]
    for search in ("tutorial", "grid", "path"):
        assert f"| {search} |" in result.stdout, result.stdout[-3000:]
    assert "path: time <= 0.35 x grid:" in result.stdout, result.stdout[-3000:]
