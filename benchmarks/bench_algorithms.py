"""CRFsuite's online training algorithms, sklearn-crf against sklearn-crfsuite (issue 15).

For each algorithm (``l2sgd``, ``ap``, ``pa`` of types 0, 1 and 2, ``arow``) both
libraries train on all of CoNLL-2002 esp.train with the README quick-start
features (``SequenceFeaturizer()`` defaults, the sklearn-crfsuite tutorial
features) and ``all_possible_transitions=True``, with CRFsuite's default
parameters of the algorithm (``--max-iter`` overrides the epoch limit of all),
and are evaluated on esp.testb (entity-level F1, as seqeval computes it).

Every fit runs in a fresh child process: CRFsuite shuffles the training
sequences with the C library's ``rand()``, which it never seeds, so a second
fit in one process visits them in another order; in a fresh process its order
is the one sklearn-crf replays. The child featurizes, fits once (timed) and
predicts. sklearn-crf's child first fits a 20-sentence corpus so that the
numba kernels are loaded from the on-disk cache before the clock starts
(the cache is filled by the first run; see the README). The libraries
alternate in every repetition. Both train on one thread (these algorithms
update the weights after every sequence).

    python benchmarks/bench_algorithms.py                   # all algorithms, 1 repeat
    python benchmarks/bench_algorithms.py --only ap,arow --repeats 3
    python benchmarks/bench_algorithms.py --quick           # smoke test: 500 sentences, 5 epochs
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: (name, sklearn-crfsuite algorithm, its parameters); CRFsuite's defaults
#: otherwise, the same for sklearn-crf (its parameter names, see to_ours)
ALGORITHMS = {
    "l2sgd": ("l2sgd", {}),
    "ap": ("ap", {}),
    "pa0": ("pa", {"pa_type": 0}),
    "pa1": ("pa", {"pa_type": 1}),
    "pa2": ("pa", {"pa_type": 2}),
    "arow": ("arow", {}),
}


def to_ours(algorithm, params, max_iter):
    """sklearn-crf CRFTagger keyword arguments for the same training."""
    kwargs = dict(solver=algorithm, all_possible_transitions=True, n_jobs=1, **params)
    if max_iter is not None:
        kwargs["max_iter"] = max_iter
    return kwargs


def to_theirs(algorithm, params, max_iter):
    """sklearn_crfsuite.CRF keyword arguments for the same training."""
    kwargs = dict(algorithm=algorithm, all_possible_transitions=True, **params)
    if max_iter is not None:
        kwargs["max_iterations"] = max_iter
    return kwargs


def child(args):
    """Featurize, fit (timed) and evaluate once; print one JSON line."""
    sys.path.insert(0, ROOT)
    import warnings

    from sklearn_crf import SequenceFeaturizer
    from sklearn_crf.datasets import load_conll2002
    from sklearn_crf.metrics import entity_f1_score

    algorithm, params = ALGORITHMS[args.algorithm]
    train = load_conll2002("train")
    test = load_conll2002("testb")
    n_train = args.n_train or len(train.sentences)
    n_test = args.n_test or len(test.sentences)
    featurizer = SequenceFeaturizer()
    X_train = featurizer.transform(train.sentences[:n_train])
    y_train = train.tags[:n_train]
    X_test = featurizer.transform(test.sentences[:n_test])
    y_test = test.tags[:n_test]
    if args.lib == "ours":
        from sklearn_crf import CRFTagger

        kwargs = to_ours(algorithm, params, args.max_iter)
        CRFTagger(**{**kwargs, "max_iter": 1}).fit(X_train[:20], y_train[:20])  # load the kernels
        model = CRFTagger(**kwargs)
    else:
        import sklearn_crfsuite

        model = sklearn_crfsuite.CRF(**to_theirs(algorithm, params, args.max_iter))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X_train, y_train)
        fit_s = time.perf_counter() - start
    f1 = entity_f1_score(y_test, model.predict(X_test))
    if args.lib == "ours":
        n_iter = model.n_iter_
    else:
        n_iter = len(model.training_log_.iterations) if model.training_log_ else None
    print(json.dumps({"fit_s": fit_s, "f1": f1, "n_iter": n_iter}))


def run_child(lib, name, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--lib", lib,
           "--algorithm", name]
    for opt in ("n_train", "n_test", "max_iter"):
        value = getattr(args, opt)
        if value is not None:
            cmd += [f"--{opt.replace('_', '-')}", str(value)]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        env.setdefault(var, "1")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(ALGORITHMS),
                        help="comma-separated algorithms: " + ", ".join(ALGORITHMS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--n-train", type=int, default=None, help="default: all of esp.train")
    parser.add_argument("--n-test", type=int, default=None, help="default: all of esp.testb")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="epoch limit of every algorithm (default: CRFsuite's)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--lib", choices=("ours", "theirs"), help=argparse.SUPPRESS)
    parser.add_argument("--algorithm", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if args.quick:
        args.n_train, args.n_test, args.max_iter = 500, 300, 5
    names = args.only.split(",")
    for name in names:
        if name not in ALGORITHMS:
            parser.error(f"unknown algorithm {name!r}; choose from {', '.join(ALGORITHMS)}")
    import platform

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; n_train={args.n_train or 'all'}, "
          f"n_test={args.n_test or 'all'}, max_iter={args.max_iter or 'CRFsuite default'}")
    print(f"{'algorithm':10} {'lib':18} {'fit s':>8} {'epochs':>7} {'entity F1':>10}")
    results = []
    for name in names:
        runs = {"ours": [], "theirs": []}
        for r in range(args.repeats):
            for lib in (("theirs", "ours") if r % 2 == 0 else ("ours", "theirs")):
                runs[lib].append(run_child(lib, name, args))
        for lib, label in (("theirs", "sklearn-crfsuite"), ("ours", "sklearn-crf")):
            times = sorted(run["fit_s"] for run in runs[lib])
            fit_s = times[len(times) // 2]
            row = {"algorithm": name, "lib": lib, "fit_s": fit_s,
                   "n_iter": runs[lib][0]["n_iter"], "f1": runs[lib][0]["f1"],
                   "all_fit_s": times}
            results.append(row)
            print(f"{name:10} {label:18} {fit_s:8.1f} {row['n_iter'] or '-':>7} "
                  f"{row['f1']:10.4f}", flush=True)
        ours, theirs = results[-1], results[-2]
        print(f"{'':10} {'ratio / diff':18} {ours['fit_s'] / theirs['fit_s']:7.2f}x "
              f"{'':7} {100 * (ours['f1'] - theirs['f1']):+9.2f} pt", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
