"""Regression benchmark: CRFTagger of the working tree against a git revision (issue 20).

Times ``CRFTagger(c1=0.1, c2=0.1, max_iter=100, all_possible_transitions=True)``
fit on CoNLL-2002 Spanish esp.train (bundled, ``sklearn_crf.datasets``) and
predict on esp.testb, for the code of the working tree (A) and the code of a
git revision (B, ``--rev``, default ``main``), on the very same data:

* the features are computed once, here, with the working tree's
  ``SequenceFeaturizer()`` (the quick-start features), and pickled to a temp
  file that every child loads, so only CRFTagger's fit and predict are compared;
* the revision's ``sklearn_crf/`` is extracted with ``git archive`` into a temp
  dir that goes first on the child's ``PYTHONPATH`` (the child checks that
  ``sklearn_crf.__file__`` is the expected one; both commits are printed);
* every timing runs in a fresh child process, the versions alternating
  (A B, B A, A B, ...: neither always first), at ``--n-jobs`` 1 and the default
  (numba's thread count) unless told otherwise;
* numba caches: every child uses one temp ``NUMBA_CACHE_DIR`` (each version's
  kernels have their own entries there, by source path); each version is warmed
  once per thread setting before timing (an untimed child that compiles and
  caches), and each timed child first fits and predicts 20 sentences untimed
  (loading the cached kernels), so the timings hold neither compilation nor
  cache loading;
* reported: per-version medians, the per-pair ratios A/B (< 1: the working
  tree is faster) and their median, and whether ``coef_`` is bitwise equal
  between the versions (a cheap check that a refactor kept the results).

``--callgrind`` counts instructions instead (repeatable when wall time is
noisy): per version, after an untimed warm-up child that compiles into a shared
temp ``NUMBA_CACHE_DIR``, one child runs under ``valgrind --tool=callgrind``
with ``NUMBA_NUM_THREADS=1`` and ``n_jobs=1``; it fits 20 sentences first
(loading the kernels, not counted), then the fit that is counted: it runs inside
a call of libc's ``qsort`` (a ctypes callback) and callgrind collects only
there (``--toggle-collect=qsort*``), so interpreter start-up, imports and data
loading are not counted. Instruction counts (Ir) of both versions and their
ratio are printed.

    python benchmarks/bench_regression.py                      # A = working tree, B = main
    python benchmarks/bench_regression.py --rev HEAD~3 --n-jobs 1
    python benchmarks/bench_regression.py --quick --rev HEAD   # smoke run, seconds of work
    python benchmarks/bench_regression.py --callgrind --n-train 300 --max-iter 10
    python benchmarks/bench_regression.py --json out.json
"""

import argparse
import hashlib
import json
import os
import pickle
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: the quick-start hyperparameters
PARAMS = dict(c1=0.1, c2=0.1, all_possible_transitions=True)
#: sentences of the untimed in-process warm-up fit of each child
WARM_SENTENCES = 20
BLAS_ENV_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS",
                 "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass(frozen=True)
class Version:
    """One code version under test: its label, where its ``sklearn_crf`` lives."""

    key: str  # "tree" or "rev"
    name: str  # what the output calls it
    commit: str
    path: str  # the directory put first on PYTHONPATH (holds sklearn_crf/)


def say(*args):
    print(*args, flush=True)


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


# --------------------------------------------------------------------------- git


def git(*args, **kwargs):
    return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True,
                          **kwargs).stdout


def resolve(rev):
    try:
        return git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", text=True).strip()
    except subprocess.CalledProcessError:
        sys.exit(f"bench_regression: {rev!r} is not a commit of the repository at {ROOT}")


def extract(commit, dest):
    """``sklearn_crf/`` of ``commit`` into ``dest`` (``git archive``)."""
    data = git("archive", "--format=tar", commit, "sklearn_crf")
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            if sys.version_info >= (3, 12):
                tar.extractall(dest, filter="data")
            else:
                tar.extractall(dest)


def tree_version():
    head = resolve("HEAD")
    dirty = git("status", "--porcelain", "--", "sklearn_crf", text=True).strip()
    return Version("tree", "working tree", head + (" + uncommitted changes" if dirty else ""),
                   ROOT)


# --------------------------------------------------------------------------- children


def child_env(version, cache_dir, n_threads=None):
    env = dict(os.environ)
    for var in BLAS_ENV_VARS:
        env[var] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        [version.path] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["NUMBA_CACHE_DIR"] = cache_dir
    env.setdefault("PYTHONHASHSEED", "0")
    if n_threads is not None:
        env["NUMBA_NUM_THREADS"] = str(n_threads)
    return env


def child_args(version, data_path, n_jobs, max_iter, warm_only=False, toggle=False):
    args = [os.path.abspath(__file__), "_child", "--data", data_path,
            "--expect", os.path.join(version.path, "sklearn_crf"),
            "--max-iter", str(max_iter), "--n-jobs", str(n_jobs or 0)]
    if warm_only:
        args.append("--warm-only")
    if toggle:
        args.append("--toggle")
    return args


def run_child(version, data_path, n_jobs, max_iter, cache_dir, warm_only=False,
              prefix=(), toggle=False, n_threads=None):
    cmd = [*prefix, sys.executable,
           *child_args(version, data_path, n_jobs, max_iter, warm_only, toggle)]
    proc = subprocess.run(cmd, env=child_env(version, cache_dir, n_threads),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {shlex.join(cmd)} failed ({proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])


def _child(argv):
    """One child: load the data, warm up untimed, fit and predict timed; print JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--expect", required=True)
    parser.add_argument("--max-iter", type=int, required=True)
    parser.add_argument("--n-jobs", type=int, required=True)
    parser.add_argument("--warm-only", action="store_true")
    parser.add_argument("--toggle", action="store_true")
    args = parser.parse_args(argv)
    import warnings

    import numpy as np

    import sklearn_crf
    from sklearn.exceptions import ConvergenceWarning
    from sklearn_crf import CRFTagger

    found = os.path.dirname(os.path.realpath(sklearn_crf.__file__))
    if found != os.path.realpath(args.expect):
        raise SystemExit(f"imported sklearn_crf from {found}, expected {args.expect}")
    with open(args.data, "rb") as f:
        data = pickle.load(f)
    X_train, y_train, X_test = data["X_train"], data["y_train"], data["X_test"]
    n_jobs = args.n_jobs or None

    def fit(X, y, max_iter):
        crf = CRFTagger(**PARAMS, max_iter=max_iter, n_jobs=n_jobs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(X, y)
        return crf

    # untimed: loads (or, in a warm-up child, compiles) the kernels
    warm = fit(X_train[:WARM_SENTENCES], y_train[:WARM_SENTENCES], 2)
    warm.predict(X_test[:WARM_SENTENCES])
    out = {"file": sklearn_crf.__file__}
    if args.warm_only:
        crf = fit(X_train, y_train, 1)
        crf.predict(X_test)
    elif args.toggle:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        compare_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        fitted = []

        def compare(a, b):
            if not fitted:  # callgrind collects only inside qsort: this fit
                fitted.append(fit(X_train, y_train, args.max_iter))
            return 0

        pair = (ctypes.c_int * 2)(0, 1)
        libc.qsort(pair, 2, ctypes.sizeof(ctypes.c_int), compare_type(compare))
        crf = fitted[0]
    else:
        t0 = time.perf_counter()
        crf = fit(X_train, y_train, args.max_iter)
        t1 = time.perf_counter()
        pred = crf.predict(X_test)
        t2 = time.perf_counter()
        out.update(fit_s=t1 - t0, predict_s=t2 - t1,
                   pred_sha256=hashlib.sha256(
                       json.dumps([list(map(str, p)) for p in pred]).encode()).hexdigest())
    coef = np.ascontiguousarray(crf.coef_)
    out.update(n_iter=int(crf.n_iter_), coef_shape=list(coef.shape),
               coef_sha256=hashlib.sha256(coef.tobytes()).hexdigest(),
               classes=list(map(str, crf.classes_)))
    print(json.dumps(out))


# --------------------------------------------------------------------------- parent


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="main",
                        help="the git revision to compare with (default main)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed pairs per thread setting (default 5; 1 with --quick)")
    parser.add_argument("--n-train", type=int, default=None,
                        help="first N training sentences (default all; 300 with --quick, "
                             "300 with --callgrind)")
    parser.add_argument("--n-test", type=int, default=None,
                        help="first N test sentences (default all; 200 with --quick)")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="L-BFGS iterations (default 100; 5 with --quick, 10 with "
                             "--callgrind)")
    parser.add_argument("--n-jobs", action="append", type=int, metavar="N",
                        help="thread setting(s) to time, 0 for the default (numba's "
                             "thread count); repeatable (default: 1 and 0)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 300 sentences, 5 iterations, 1 repeat")
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions of one fit per version under callgrind")
    parser.add_argument("--json", metavar="OUT", help="also write the results to OUT")
    args = parser.parse_args(argv)
    quick = args.quick
    if args.repeats is None:
        args.repeats = 1 if quick or args.callgrind else 5
    if args.n_train is None:
        args.n_train = 300 if quick or args.callgrind else None
    if args.n_test is None:
        args.n_test = 200 if quick or args.callgrind else None
    if args.max_iter is None:
        args.max_iter = 5 if quick else (10 if args.callgrind else 100)
    if args.n_jobs is None:
        args.n_jobs = [1] if args.callgrind else [1, 0]
    if args.repeats < 1 or args.max_iter < 1:
        parser.error("--repeats and --max-iter must be >= 1")
    if args.callgrind and args.n_jobs != [1]:
        parser.error("--callgrind runs with one thread (n_jobs=1) only")
    return args


def featurize(n_train, n_test, path):
    """The working tree's quick-start features of esp.train / esp.testb, pickled."""
    sys.path.insert(0, ROOT)
    import sklearn_crf
    from sklearn_crf import SequenceFeaturizer
    from sklearn_crf.datasets import load_conll2002

    assert os.path.dirname(os.path.realpath(sklearn_crf.__file__)) == os.path.realpath(
        os.path.join(ROOT, "sklearn_crf")), sklearn_crf.__file__
    train = load_conll2002("train", n_sentences=n_train)
    test = load_conll2002("testb", n_sentences=n_test)
    featurizer = SequenceFeaturizer()
    data = {"X_train": featurizer.transform(train.sentences), "y_train": train.tags,
            "X_test": featurizer.transform(test.sentences)}
    with open(path, "wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
    return (len(train.sentences), sum(map(len, train.tags)), len(test.sentences),
            sum(map(len, test.tags)))


def jobs_name(n_jobs):
    return f"n_jobs={n_jobs}" if n_jobs else "n_jobs=None (numba's threads)"


def bitwise(results, versions):
    """Whether every fit of both versions gave one coef_ (and each version's own fits)."""
    digests = {v.key: {r["coef_sha256"] for r in results[v.key]} for v in versions}
    within = {v.key: len(digests[v.key]) == 1 for v in versions}
    between = all(within.values()) and len(set.union(*digests.values())) == 1
    return between, within


def time_versions(args, versions, data_path, cache_dir):
    out = {}
    for n_jobs in args.n_jobs:
        say(f"## fit ({args.max_iter} iterations) and predict, {jobs_name(n_jobs)}")
        for version in versions:  # untimed: compile into the cache
            run_child(version, data_path, n_jobs, args.max_iter, cache_dir, warm_only=True)
        say(f"  warmed each version once (untimed child: compiled into {cache_dir})")
        results = {v.key: [] for v in versions}
        for r in range(args.repeats):
            order = versions if r % 2 == 0 else versions[::-1]
            for version in order:
                res = run_child(version, data_path, n_jobs, args.max_iter, cache_dir)
                results[version.key].append(res)
                say(f"  pair {r + 1}: {version.name:<12} fit {res['fit_s']:7.2f} s  "
                    f"predict {res['predict_s']:6.3f} s  ({res['n_iter']} iterations)")
        summary = {}
        for measure in ("fit_s", "predict_s"):
            ratios = [a[measure] / b[measure]
                      for a, b in zip(results["tree"], results["rev"])]
            summary[measure] = {
                "tree_median": median([x[measure] for x in results["tree"]]),
                "rev_median": median([x[measure] for x in results["rev"]]),
                "ratios": ratios, "median_ratio": median(ratios)}
        between, within = bitwise(results, versions)
        preds = {x["pred_sha256"] for v in versions for x in results[v.key]}
        say()
        say(f"| {jobs_name(n_jobs)} | working tree (median) | {args.rev} (median) | "
            "ratio (median of pairs) | per-pair ratios |")
        say("|---|---:|---:|---:|---|")
        for measure, label in (("fit_s", "fit"), ("predict_s", "predict")):
            s = summary[measure]
            say(f"| {label} | {s['tree_median']:.3f} s | {s['rev_median']:.3f} s | "
                f"{s['median_ratio']:.3f} | {' '.join(f'{x:.3f}' for x in s['ratios'])} |")
        say()
        for version in versions:
            say(f"  {version.name}: coef_ of its {len(results[version.key])} fits "
                f"{'identical' if within[version.key] else 'DIFFER'}; bitwise equal to the "
                f"other version's: {'yes' if between else 'NO'}")
        say(f"  predictions equal between all fits: {'yes' if len(preds) == 1 else 'NO'}")
        say()
        out[str(n_jobs)] = {"results": results, "summary": summary,
                            "coef_bitwise_equal": between, "coef_within": within,
                            "predictions_equal": len(preds) == 1}
    return out


def callgrind_versions(args, versions, data_path, cache_dir):
    if shutil.which("valgrind") is None:
        sys.exit("bench_regression: --callgrind needs valgrind on PATH")
    say(f"## callgrind: instructions (Ir) of one fit ({args.max_iter} iterations, "
        "n_jobs=1, NUMBA_NUM_THREADS=1)")
    out = {"results": {v.key: [] for v in versions}}
    for version in versions:  # untimed: compile into the shared cache
        run_child(version, data_path, 1, args.max_iter, cache_dir, warm_only=True,
                  n_threads=1)
    say(f"  warmed each version once (untimed child, NUMBA_CACHE_DIR={cache_dir})")
    for r in range(args.repeats):
        order = versions if r % 2 == 0 else versions[::-1]
        for version in order:
            cg_out = os.path.join(cache_dir, f"callgrind.{version.key}.{r}")
            prefix = ["valgrind", "--tool=callgrind", "--toggle-collect=qsort*",
                      f"--callgrind-out-file={cg_out}"]
            res = run_child(version, data_path, 1, args.max_iter, cache_dir,
                            prefix=prefix, toggle=True, n_threads=1)
            res["ir"] = read_ir(cg_out)
            out["results"][version.key].append(res)
            say(f"  {version.name:<12} Ir {res['ir']:>15,}  ({res['n_iter']} iterations)")
    ir = {v.key: median([x["ir"] for x in out["results"][v.key]]) for v in versions}
    out["ir_median"] = ir
    out["ratio"] = ir["tree"] / ir["rev"]
    between, within = bitwise(out["results"], versions)
    out["coef_bitwise_equal"] = between
    say()
    say(f"  Ir working tree / {args.rev}: {ir['tree']:,.0f} / {ir['rev']:,.0f} = "
        f"{out['ratio']:.4f}")
    for version in versions:
        say(f"  {version.name}: coef_ bitwise equal to the other version's: "
            f"{'yes' if between else 'NO'}")
    return out


def read_ir(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"no instruction count in {path}")


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    command = shlex.join([sys.executable, *sys.argv])
    tmp = tempfile.mkdtemp(prefix="bench_regression_")
    try:
        rev_commit = resolve(args.rev)
        tree = tree_version()
        rev_dir = os.path.join(tmp, "rev")
        extract(rev_commit, rev_dir)
        rev = Version("rev", args.rev, rev_commit, rev_dir)
        versions = [tree, rev]
        say(f"# bench_regression — {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
        say(f"command: {command}")
        say(f"working tree: {ROOT} at {tree.commit}")
        say(f"revision:     {args.rev} = {rev.commit} (git archive into {rev_dir})")
        say(f"machine: nproc {os.cpu_count()}; load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        data_path = os.path.join(tmp, "data.pickle")
        n_sent, n_tok, n_test, n_test_tok = featurize(args.n_train, args.n_test, data_path)
        say(f"data: esp.train {n_sent} sentences ({n_tok} tokens), esp.testb {n_test} "
            f"sentences ({n_test_tok} tokens), featurized once by the working tree's "
            "SequenceFeaturizer() and pickled for both")
        say(f"settings: CRFTagger(c1=0.1, c2=0.1, max_iter={args.max_iter}, "
            f"all_possible_transitions=True, n_jobs=...); repeats {args.repeats}"
            + ("; QUICK (a smoke run, not the benchmark)" if args.quick else ""))
        say()
        cache_dir = os.path.join(tmp, "numba_cache")
        os.makedirs(cache_dir)
        if args.callgrind:
            results = {"callgrind": callgrind_versions(args, versions, data_path, cache_dir)}
        else:
            results = {"timing": time_versions(args, versions, data_path, cache_dir)}
        for version in versions:
            first = next(iter(results.values()))
            res = first["results"] if "results" in first else next(iter(first.values()))["results"]
            say(f"{version.name} imported from {os.path.dirname(res[version.key][0]['file'])}")
        say(f"total {time.perf_counter() - start:.0f} s")
        if args.json:
            payload = {"command": command, "args": vars(args),
                       "versions": [vars(v) for v in versions], **results}
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(payload, f, indent=1)
            say(f"wrote {args.json}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        _child(sys.argv[2:])
    else:
        main()
