"""First use: what each public method of CRFTagger compiles in a fresh process (issue 20 item 6).

For every method, one fresh child process with an empty ``NUMBA_CACHE_DIR``
imports sklearn_crf and makes the method's first call; numba's compile events
(``numba:compile``) are recorded during the call. Reported per method: the
number of compiled specializations (one per dispatcher and signature: what the
call needs), the kernels they belong to, and their compile time (the sum of
each specialization's own time, nested compilations not counted twice). The
methods other than ``fit`` run on a model fitted by the parent and pickled, so
that a child compiles only what its method needs (unpickling compiles nothing).

Then the start-up sequence of the issue's table, ``import + fit + predict +
predict_marginals`` in one child, with an empty cache (cold) and again with the
cache it filled (warm): the count of specializations compiled (cold) and
loaded from the cache (warm).

The counts are repeatable (they depend on the code, not on the machine); the
seconds are not on a loaded machine (they are labelled as such).

    python benchmarks/bench_first_use.py             # every method
    python benchmarks/bench_first_use.py --quick     # fit, predict, predict_marginals only
    python benchmarks/bench_first_use.py --json out.json
"""

import argparse
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: the public methods measured, in order; ``startup`` is the issue's sequence
METHODS = ("fit", "predict", "predict_marginals", "predict_nbest", "predict_entities",
           "log_probability", "log_partition", "score", "explain_prediction",
           "compare_labels")
QUICK_METHODS = ("fit", "predict", "predict_marginals")
PARAMS = dict(c1=0.1, c2=0.1, all_possible_transitions=True, max_iter=5)
N_TRAIN = 200
N_TEST = 20


def say(*args):
    print(*args, flush=True)


# --------------------------------------------------------------------------- child


def _kernels():
    """Every numba dispatcher of the package's modules, by qualified name."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for name, module in list(sys.modules.items()):
        if not (name == "sklearn_crf" or name.startswith("sklearn_crf.")) or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher):
                found[f"{value.py_func.__module__}.{value.py_func.__qualname__}"] = value
    return found


def _call(method, data):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X_train, y_train, X_test, y_test = (data["X_train"], data["y_train"], data["X_test"],
                                        data["y_test"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if method in ("fit", "startup"):
            from sklearn_crf import CRFTagger

            crf = CRFTagger(**PARAMS).fit(X_train, y_train)
            if method == "startup":
                crf.predict(X_test)
                crf.predict_marginals(X_test)
            return
    crf = data["model"]
    if method == "predict_nbest":
        crf.predict_nbest(X_test, n=3)
    elif method == "log_probability":
        crf.log_probability(X_test, y_test)
    elif method == "score":
        crf.score(X_test, y_test)
    elif method == "compare_labels":
        labels = list(crf.classes_)
        crf.compare_labels(X_test[0], 0, labels[0], labels[-1])
    else:
        getattr(crf, method)(X_test)


def _child(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--method", required=True)
    parser.add_argument("--data", required=True)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    from numba.core import event

    import sklearn_crf

    t_import = time.perf_counter() - t0
    with open(args.data, "rb") as f:
        data = pickle.load(f)
    before = {name: len(d.overloads) for name, d in _kernels().items()}
    t1 = time.perf_counter()
    with event.install_recorder("numba:compile") as recorder:
        _call(args.method, data)
    t_call = time.perf_counter() - t1
    # compile events: START/END pairs, nested when a kernel compiles its callees
    stack, compiled = [], []
    for ts, ev in recorder.buffer:
        if ev.is_start:
            stack.append([ts, 0.0, ev.data])
        else:
            start, nested, info = stack.pop()
            total = ts - start
            if stack:
                stack[-1][1] += total
            disp = info["dispatcher"]
            compiled.append({
                "kernel": f"{disp.py_func.__module__}.{disp.py_func.__qualname__}",
                "signature": str(tuple(info["args"])),
                "own_s": total - nested, "inclusive_s": total})
    after = _kernels()
    loaded = sum(len(d.overloads) - before.get(name, 0) for name, d in after.items())
    hits = sum(sum(d._cache_hits.values()) for d in after.values())
    print(json.dumps({"file": sklearn_crf.__file__, "import_s": t_import, "call_s": t_call,
                      "compiled": compiled, "new_specializations": loaded,
                      "cache_hits": hits}))


# --------------------------------------------------------------------------- parent


def child_env(cache_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["NUMBA_CACHE_DIR"] = cache_dir
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def run_child(method, data_path, cache_dir):
    cmd = [sys.executable, os.path.abspath(__file__), "_child", "--method", method,
           "--data", data_path]
    proc = subprocess.run(cmd, env=child_env(cache_dir), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {method} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    res = json.loads([line for line in proc.stdout.splitlines() if line.strip()][-1])
    expect = os.path.join(ROOT, "sklearn_crf")
    if os.path.dirname(os.path.realpath(res["file"])) != os.path.realpath(expect):
        raise RuntimeError(f"child imported {res['file']}, expected {expect}")
    return res


def prepare(path):
    """Data and a fitted model, pickled for the children (the parent compiles into,
    or loads from, the default numba cache)."""
    sys.path.insert(0, ROOT)
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sklearn_crf import CRFTagger, SequenceFeaturizer
    from sklearn_crf.datasets import load_conll2002

    train = load_conll2002("train", n_sentences=N_TRAIN)
    test = load_conll2002("testb", n_sentences=N_TEST)
    featurizer = SequenceFeaturizer()
    data = {"X_train": featurizer.transform(train.sentences), "y_train": train.tags,
            "X_test": featurizer.transform(test.sentences), "y_test": test.tags}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        data["model"] = CRFTagger(**PARAMS).fit(data["X_train"], data["y_train"])
    with open(path, "wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)


def summarize(res):
    """Counts of the package's kernel specializations (numba's own helpers, e.g.
    the ``np.empty`` implementations compiled for a kernel, counted apart) and
    the compile seconds of all of them."""
    compiled = res["compiled"]
    ours = [c for c in compiled if c["kernel"].startswith("sklearn_crf.")]
    return {"n_compiled": len(ours),
            "n_kernels": len({c["kernel"] for c in ours}),
            "n_helpers": len(compiled) - len(ours),
            "compile_s": sum(c["own_s"] for c in compiled)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fit, predict and predict_marginals only, no start-up")
    parser.add_argument("--methods", help="comma-separated methods (default: all)")
    parser.add_argument("--verbose", action="store_true",
                        help="list every compiled specialization")
    parser.add_argument("--json", metavar="OUT", help="also write the results to OUT")
    args = parser.parse_args(argv)
    methods = (args.methods.split(",") if args.methods
               else QUICK_METHODS if args.quick else METHODS)
    unknown = set(methods) - set(METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}; choose among {', '.join(METHODS)}")
    tmp = tempfile.mkdtemp(prefix="bench_first_use_")
    results = {}
    try:
        say(f"# bench_first_use — {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
        say("command: " + " ".join([sys.executable, *sys.argv]))
        say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
            f"(seconds below are not comparable between loaded runs; counts are)")
        data_path = os.path.join(tmp, "data.pickle")
        prepare(data_path)
        say(f"data: {N_TRAIN} esp.train sentences, {N_TEST} esp.testb sentences; "
            f"CRFTagger({', '.join(f'{k}={v}' for k, v in PARAMS.items())})")
        say()
        say("| first call (empty NUMBA_CACHE_DIR) | kernel specializations compiled | "
            "kernels | numba helpers compiled | compile s (loaded machine) | "
            "call s (loaded machine) |")
        say("|---|---:|---:|---:|---:|---:|")
        for method in methods:
            cache = tempfile.mkdtemp(dir=tmp)
            res = run_child(method, data_path, cache)
            results[method] = {**res, **summarize(res)}
            s = results[method]
            say(f"| {method} | {s['n_compiled']} | {s['n_kernels']} | {s['n_helpers']} | "
                f"{s['compile_s']:.2f} | {res['call_s']:.2f} |")
        if not args.quick:
            cache = tempfile.mkdtemp(dir=tmp)
            cold = run_child("startup", data_path, cache)
            warm = run_child("startup", data_path, cache)
            results["startup_cold"] = {**cold, **summarize(cold)}
            results["startup_warm"] = {**warm, **summarize(warm)}
            c = results["startup_cold"]
            say(f"| import + fit + predict + predict_marginals, cold | {c['n_compiled']} | "
                f"{c['n_kernels']} | {c['n_helpers']} | {c['compile_s']:.2f} | "
                f"{cold['call_s']:.2f} (+ import {cold['import_s']:.2f}) |")
            w = results["startup_warm"]
            say(f"| the same, warm (cache filled by the cold run) | {w['n_compiled']} "
                f"(loaded from the cache: {warm['cache_hits']}) | | {w['n_helpers']} | "
                f"{w['compile_s']:.2f} | {warm['call_s']:.2f} (+ import "
                f"{warm['import_s']:.2f}) |")
        if args.verbose:
            for method, res in results.items():
                say(f"\n## {method}")
                for c in sorted(res["compiled"], key=lambda c: -c["own_s"]):
                    if c["kernel"].startswith("sklearn_crf."):
                        say(f"  {c['own_s']:6.2f} s  {c['kernel']}{c['signature']}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1)
            say(f"wrote {args.json}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return results


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        _child(sys.argv[2:])
    else:
        main()
