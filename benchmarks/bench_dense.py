"""Dense token features: arrays against one dict entry per dimension (issue 21).

The same CRF (``c1=0.1, c2=0.1, all_possible_transitions=True``) on the same
features of CoNLL-2002 Spanish esp.train, given three ways:

  dense     sklearn-crf, the features as arrays: per sentence a float32 array
            (n_tokens, d); with the tutorial features, the ``EncodedCorpus`` of
            ``SequenceFeaturizer(output="encoded")`` (no feature dicts) with the
            vectors as its dense block
  dicts     sklearn-crf, the same values as ``{"v<j>": value}`` dict entries
            (merged into the tutorial dicts for "both")
  crfsuite  sklearn-crfsuite, the same dicts as ``dicts``

on two feature sets:

  vectors   the d-dimensional Word2Vec vector of each token's lower-cased word
            (zeros for a word without one), nothing else
  both      the tutorial features (``SequenceFeaturizer()``, the dicts of
            ``_workloads.tutorial_features``) and the vectors

The vectors are trained once, here, by gensim's Word2Vec on the lower-cased
text of the training sentences (skip-gram, seed 0, one worker, a fixed hash
function: reproducible), and stored as one float32 .npy that every child loads.
Each dimension is shifted by its minimum over the tokens (``v - min``, so every
value is >= 0; ``--no-shift`` keeps them as they are): CRFsuite (and this
project's dict route, which follows it) keeps an (attribute, label) pair only
when its values on the tokens of that label sum to at least ``min_freq`` = 0,
while the dense route gives every (dimension, label) pair a weight; with
non-negative values both have every pair, so they fit the same model.
Each fit runs in a fresh child process (the routes alternating in every
repetition); the child builds its input, fits 2 iterations on 5 of its
sentences (a warm-up: numba's cache load and first calls, which
bench_vs_crfsuite's start-up measure covers, are not in the figures), resets
its peak-RSS mark (``/proc/self/clear_refs``), fits, and reports the fit's wall
time and the peak RSS of the fit (its input resident) and of the whole process. Medians over the
repetitions; ratios to sklearn-crfsuite; and whether the weights agree (max
absolute difference of every state, dense and transition weight against
sklearn-crfsuite's, and between the two sklearn-crf routes).

Each fit runs 100 iterations (``--max-iter``), the reference budget of the
other benchmarks: both libraries run the same L-BFGS / OWL-QN, so the same
iterations give the same weights, which the weight check verifies.
``--converge`` runs each library to its stopping rule instead, the same one on
both sides (CRFsuite's delta test over 10 iterations at 1e-5,
``CRFTagger(tol=1e-5)``).
sklearn-crf runs on one thread unless ``--n-jobs`` says otherwise (CRFsuite is
single-threaded); BLAS is limited to one thread in the children.

    python benchmarks/bench_dense.py                  # the full run (esp.train, d=100)
    python benchmarks/bench_dense.py --json dense.json --converge
    python benchmarks/bench_dense.py --quick          # smoke test (small data)
    python benchmarks/bench_dense.py --routes dense,crfsuite   # without the (slow) dict route
"""

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _workloads as wl  # noqa: E402  (standard library only)

wl.limit_blas_threads(os.environ)  # before numpy is imported, here and in the children

ROUTES = ("dense", "dicts", "crfsuite")
FEATURES = ("vectors", "both")
ROUTE_NAMES = {"dense": "sklearn-crf, arrays", "dicts": "sklearn-crf, dicts",
               "crfsuite": "sklearn-crfsuite, dicts"}
#: the targets of issue 21 (dense route against sklearn-crfsuite)
TARGET_TIME, TARGET_RSS = 0.1, 0.25
#: the weights agree when no weight differs by more than this (times max(1, max |w|))
WEIGHT_TOL = 1e-4


def stable_hash(text):
    """Word2Vec's seeding hash (Python's ``hash`` changes between processes)."""
    return zlib.crc32(text.encode("utf-8"))


# --------------------------------------------------------------------------- data


def prepare(directory, n_train, dims, epochs, shift):
    """Train the vectors and store each training token's vector (float32 .npy).

    ``shift``: subtract each dimension's minimum over the tokens, so that every
    value is >= 0 (see the module's docstring)."""
    import numpy as np
    from gensim.models import Word2Vec

    sentences, _ = wl.read_conll2002("train", n_train)
    lowered = [[w.lower() for w in s] for s in sentences]
    start = time.perf_counter()
    model = Word2Vec(lowered, vector_size=dims, window=5, min_count=2, sg=1,
                     epochs=epochs, seed=0, workers=1, hashfxn=stable_hash)
    seconds = time.perf_counter() - start
    index, table = model.wv.key_to_index, model.wv.vectors
    rows = np.array([index.get(w, -1) for s in lowered for w in s], dtype=np.int64)
    vectors = np.zeros((rows.size, dims), dtype=np.float32)
    vectors[rows >= 0] = table[rows[rows >= 0]]
    if shift:
        vectors -= vectors.min(axis=0)
    np.save(os.path.join(directory, "vectors.npy"), vectors)
    return {"n_sentences": len(sentences), "n_tokens": int(rows.size),
            "vocabulary": len(index), "oov_tokens": int((rows < 0).sum()),
            "word2vec_s": seconds}


def status_mb(field):
    """A ``VmRSS``/``VmHWM`` line of /proc/self/status, in MB (None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    return None


def reset_peak_rss():
    """Reset VmHWM to the current RSS (Linux >= 4.0); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------- child


def child(args):
    import numpy as np

    sentences, tags = wl.read_conll2002("train", args.n_train)
    vectors = np.load(os.path.join(args.data, "vectors.npy"))
    bounds = np.cumsum([0] + [len(s) for s in sentences])
    blocks = [vectors[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    tutorial = ([wl.tutorial_features(s) for s in sentences]
                if args.features == "both" and args.route != "dense" else None)
    if args.route == "dense" and args.features == "both":
        # the tutorial features straight from the tokens, no feature dicts
        # (SequenceFeaturizer's defaults are the tutorial's features), and the
        # vectors as the corpus's dense block
        from dataclasses import replace

        from sklearn_crf import SequenceFeaturizer

        X = replace(SequenceFeaturizer(output="encoded").fit_transform(sentences),
                    dense=vectors)
        del blocks
    elif args.route == "dense":
        X = blocks
    else:
        names = [f"v{j}" for j in range(vectors.shape[1])]
        X = []
        for s, block in enumerate(blocks):
            rows = [dict(zip(names, row)) for row in block.tolist()]
            if tutorial is not None:
                rows = [{**t, **r} for t, r in zip(tutorial[s], rows)]
            X.append(rows)
        del vectors, blocks, tutorial
    lib = "theirs" if args.route == "crfsuite" else "ours"
    n_jobs = None if lib == "theirs" else args.n_jobs
    # warm-up on 5 sentences of the same form: numba's cache load and first calls
    wl.fit_estimator(lib, wl.make_estimator(lib, max_iter=2, n_jobs=n_jobs), X[:5], tags[:5])
    gc.collect()
    peak_build = status_mb("VmHWM") or wl.peak_rss_mb()
    rss_input = status_mb("VmRSS")
    can_reset = reset_peak_rss()

    tol = None if lib == "theirs" or args.max_iter is not None else 1e-5
    estimator = wl.make_estimator(lib, max_iter=args.max_iter, tol=tol, n_jobs=n_jobs)
    start = time.perf_counter()
    wl.fit_estimator(lib, estimator, X, tags)
    fit_s = time.perf_counter() - start
    peak_fit = status_mb("VmHWM") if can_reset else None

    weights = {f"{a}\t{b}": w for (a, b), w in estimator.state_features_.items()}
    weights.update({f"{a}\t->\t{b}": w
                    for (a, b), w in estimator.transition_features_.items()})
    if args.route == "dense":
        coef = estimator.dense_coef_
        for j in range(coef.shape[0]):
            for k, label in enumerate(estimator.classes_):
                if coef[j, k] != 0:
                    weights[f"v{j}\t{label}"] = float(coef[j, k])
    with open(args.weights, "w", encoding="utf-8") as f:
        json.dump(weights, f)
    print(json.dumps({
        "fit_s": fit_s, "n_iter": wl.n_iterations(lib, estimator),
        "peak_rss_fit_mb": peak_fit, "peak_rss_mb": max(peak_build, peak_fit or 0),
        "rss_input_mb": rss_input, "n_tokens": int(bounds[-1]),
    }))


def run_child(args, route, features, weights_path):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--route", route,
           "--features", features, "--data", args.data, "--weights", weights_path,
           "--n-jobs", str(args.n_jobs)]
    if args.n_train is not None:
        cmd += ["--n-train", str(args.n_train)]
    cmd += ["--converge"] if args.max_iter is None else ["--max-iter", str(args.max_iter)]
    env = wl.child_env()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- parent


def max_difference(a, b):
    """max |a - b| over the union of the keys (absent = 0), and max |a|."""
    keys = set(a) | set(b)
    diff = max((abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in keys), default=0.0)
    return diff, max(map(abs, a.values()), default=0.0)


def fmt_ratio(value):
    return "   n/a" if value is None else f"{value:6.3f}x"


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="fits per route and feature set")
    parser.add_argument("--n-train", type=int, default=None,
                        help="first N sentences of esp.train, all if not given")
    parser.add_argument("--dims", type=int, default=100, help="word vector length")
    parser.add_argument("--epochs", type=int, default=5, help="Word2Vec epochs")
    parser.add_argument("--max-iter", type=int, default=100,
                        help="iterations of every fit")
    parser.add_argument("--converge", action="store_true",
                        help="fit to each library's stopping rule (the same delta test "
                             "at 1e-5) instead of --max-iter iterations")
    parser.add_argument("--n-jobs", type=int, default=1, help="sklearn-crf's threads")
    parser.add_argument("--no-shift", action="store_true",
                        help="keep the vectors' negative values: CRFsuite then drops the "
                             "(dimension, label) pairs whose values sum to a negative "
                             "number, so the models differ")
    parser.add_argument("--only", default=",".join(FEATURES),
                        help="comma-separated feature sets: " + ", ".join(FEATURES))
    parser.add_argument("--routes", default=",".join(ROUTES),
                        help="comma-separated routes among " + ", ".join(ROUTES)
                             + " (the ratios need crfsuite)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 150 sentences, 1 repeat, 30 iterations")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    parser.add_argument("--features", choices=FEATURES, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--weights", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.converge:
        args.max_iter = None
    if args.child:
        return child(args)
    if args.quick:
        args.n_train, args.repeats, args.max_iter = args.n_train or 150, 1, 30
        args.epochs = min(args.epochs, 2)
    features = [f.strip() for f in args.only.split(",") if f.strip()]
    if not set(features) <= set(FEATURES):
        parser.error(f"--only: feature sets among {FEATURES}")
    routes = [r for r in ROUTES if r in {r.strip() for r in args.routes.split(",")}]
    if not {"dense", "crfsuite"} <= set(routes) or not set(
            r.strip() for r in args.routes.split(",") if r.strip()) <= set(ROUTES):
        parser.error(f"--routes: routes among {ROUTES}, dense and crfsuite included")

    tmp = tempfile.mkdtemp(prefix="bench_dense_")
    args.data = tmp
    try:
        info = prepare(tmp, args.n_train, args.dims, args.epochs, not args.no_shift)
        stop = (f"{args.max_iter} iterations" if args.max_iter is not None
                else "each library's stopping rule (delta 1e-5 over 10 iterations)")
        print(f"esp.train: {info['n_sentences']} sentences, {info['n_tokens']} tokens; "
              f"Word2Vec d={args.dims}: {info['vocabulary']} words, "
              f"{info['oov_tokens']} tokens without a vector, {info['word2vec_s']:.1f} s; "
              + ("values as they are" if args.no_shift else
                 "each dimension shifted to start at 0 (v - min)"))
        print(f"c1={wl.C1}, c2={wl.C2}, all transitions; {stop}; sklearn-crf "
              f"n_jobs={args.n_jobs}; {args.repeats} repeat(s), routes alternating")
        records = {(f, r): [] for f in features for r in routes}
        weights = {}
        for repeat in range(args.repeats):
            for feature_set in features:
                for route in wl.alternate(routes, repeat):
                    path = os.path.join(tmp, f"w_{feature_set}_{route}.json")
                    record = run_child(args, route, feature_set, path)
                    records[feature_set, route].append(record)
                    if repeat == 0:
                        with open(path, encoding="utf-8") as f:
                            weights[feature_set, route] = json.load(f)
                    print(f"  [{repeat + 1}/{args.repeats}] {feature_set:<7} "
                          f"{ROUTE_NAMES[route]:<24} fit {record['fit_s']:8.2f} s, "
                          f"{record['n_iter']} it., peak RSS {record['peak_rss_mb']:7.0f} MB "
                          f"(fit {record['peak_rss_fit_mb'] or float('nan'):.0f}, "
                          f"input {record['rss_input_mb'] or float('nan'):.0f})", flush=True)
        summary = report(args, features, routes, records, weights)
        summary["data"] = info
        summary["machine"] = wl.machine_info()
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(summary, f, indent=2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(args, features, routes, records, weights):
    summary = {"config": vars(args).copy(), "results": {}}
    print()
    print(f"{'features':<8} {'route':<24} {'fit (s)':>9} {'iters':>6} {'peak RSS':>9} "
          f"{'fit RSS':>8} {'time/crfsuite':>13} {'RSS/crfsuite':>12}  weights vs crfsuite")
    for feature_set in features:
        med = {r: {k: wl.median([rec[k] for rec in records[feature_set, r]])
                   for k in ("fit_s", "n_iter", "peak_rss_mb", "peak_rss_fit_mb")}
               for r in routes}
        theirs = med["crfsuite"]
        for route in routes:
            m = med[route]
            time_ratio = m["fit_s"] / theirs["fit_s"] if theirs["fit_s"] else None
            rss_ratio = m["peak_rss_mb"] / theirs["peak_rss_mb"] if theirs["peak_rss_mb"] else None
            diff, scale = max_difference(weights[feature_set, route],
                                         weights[feature_set, "crfsuite"])
            agree = "" if route == "crfsuite" else f"max |dw| {diff:.2e} (max |w| {scale:.2f})"
            print(f"{feature_set:<8} {ROUTE_NAMES[route]:<24} {m['fit_s']:9.2f} "
                  f"{m['n_iter']:6.0f} {m['peak_rss_mb']:8.0f}M "
                  f"{(m['peak_rss_fit_mb'] or float('nan')):7.0f}M "
                  f"{fmt_ratio(time_ratio):>13} {fmt_ratio(rss_ratio):>12}  {agree}")
            summary["results"][f"{feature_set}/{route}"] = {
                **m, "time_ratio": time_ratio, "rss_ratio": rss_ratio,
                "max_weight_diff_vs_crfsuite": diff, "max_abs_weight": scale}
        ours_diff = (max_difference(weights[feature_set, "dense"],
                                    weights[feature_set, "dicts"])[0]
                     if "dicts" in routes else None)
        r = summary["results"][f"{feature_set}/dense"]
        met = (r["time_ratio"] is not None and r["time_ratio"] <= TARGET_TIME
               and r["rss_ratio"] is not None and r["rss_ratio"] <= TARGET_RSS)
        agree = all(summary["results"][f"{feature_set}/{route}"]
                    ["max_weight_diff_vs_crfsuite"] <= WEIGHT_TOL * max(1.0, r["max_abs_weight"])
                    for route in ("dense", "dicts") if route in routes) and (
                        ours_diff is None or ours_diff <= WEIGHT_TOL)
        versus = ("" if ours_diff is None
                  else f"arrays vs dicts in sklearn-crf: max |dw| {ours_diff:.2e}; ")
        print(f"{feature_set:<8} {versus}"
              f"weights agree (max |dw| <= {WEIGHT_TOL:g} max(1, max |w|)): "
              f"{'yes' if agree else 'NO'}")
        print(f"{feature_set:<8} target (arrays: time <= {TARGET_TIME}x, peak RSS <= "
              f"{TARGET_RSS}x sklearn-crfsuite's): {'met' if met else 'NOT met'}"
              + (" (--quick: small data, the ratios measure start-up costs)"
                 if args.quick else ""))
        r["max_weight_diff_vs_dicts"] = ours_diff
        r["weights_agree"] = agree
        r["target_met"] = met
    return summary


if __name__ == "__main__":
    sys.exit(main())
