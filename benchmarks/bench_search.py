"""Searching c1 and c2: sklearn-crfsuite's tutorial search, GridSearchCV over
CRFTagger and CRFTaggerCV, side by side on CoNLL-2002 Spanish NER.

Three searches with the same number of candidates and folds, on the first
``--n-train`` sentences of esp.train, each refitted on all of them and
evaluated on esp.testb (entity F1):

  tutorial  sklearn-crfsuite's tutorial, as written: its ``word2features``
            (the tutorial's features, ``_workloads.tutorial_features``),
            ``CRF(algorithm="lbfgs", max_iterations=100,
            all_possible_transitions=True)``, ``RandomizedSearchCV`` over
            ``c1 ~ expon(scale=0.5)``, ``c2 ~ expon(scale=0.05)``, its scorer
            (``flat_f1_score``, weighted, over the labels but "O"), ``n_jobs=-1``
  grid      ``GridSearchCV`` over ``CRFTagger(max_iter=100,
            all_possible_transitions=True)`` on ``SequenceFeaturizer()``'s
            feature dicts (the same dicts), ``n_jobs=-1``
  path      ``CRFTaggerCV`` on the same dicts and grid, ``n_jobs=-1``

The three use the same ``KFold`` splits and the tutorial's scorer. The grid
of ``grid`` and ``path`` has ``--n-c1`` × ``--n-c2`` candidates, log-spaced
(as ``LogisticRegressionCV``'s), c1 from 0.001 to 1 and c2 from 0.01 to 1:
the decades around the tutorial's two distributions (whose means are 0.5
and 0.05); the random search draws as many candidates (``random_state=0``).
The default, 10 × 5, is the tutorial's own number of candidates (50) and
folds (3). Each time is the wall time of featurizing
the training sentences and the search with its refit; the numba kernels are
compiled (or loaded from numba's cache) before the clock starts.

    python benchmarks/bench_search.py                    # 2,000 sentences, 10 x 5, 3 folds
    python benchmarks/bench_search.py --n-c1 4 --n-c2 3  # 12 candidates
    python benchmarks/bench_search.py --n-train 0        # all of esp.train
    python benchmarks/bench_search.py --only grid,path   # without sklearn-crfsuite
    python benchmarks/bench_search.py --quick            # a smoke run
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _workloads import tutorial_features  # noqa: E402

SEARCHES = ("tutorial", "grid", "path")
#: the tutorial's distributions: c1 ~ expon(scale=0.5), c2 ~ expon(scale=0.05)
SCALES = {"c1": 0.5, "c2": 0.05}
#: the range of the log-spaced grid of ``grid`` and ``path``
RANGES = {"c1": (0.001, 1.0), "c2": (0.01, 1.0)}


def log_grid(name, n):
    """``n`` log-spaced values over ``RANGES[name]`` (rounded to 4 digits)."""
    return [float(v) for v in np.round(np.geomspace(*RANGES[name], n), 4)]


def tutorial_scorer(tags):
    """The tutorial's scorer: sklearn-crfsuite's ``flat_f1_score``, weighted,
    over the training labels but "O"."""
    from sklearn.metrics import make_scorer
    from sklearn_crfsuite import metrics as crfsuite_metrics

    labels = sorted({t for seq in tags for t in seq} - {"O"})
    return make_scorer(crfsuite_metrics.flat_f1_score, average="weighted", labels=labels)


def run_tutorial(train, n_candidates, cv, scorer, max_iter):
    import scipy.stats
    import sklearn_crfsuite
    from sklearn.model_selection import RandomizedSearchCV

    start = time.perf_counter()
    X = [tutorial_features(s) for s in train.sentences]
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", max_iterations=max_iter,
                               all_possible_transitions=True)
    search = RandomizedSearchCV(
        crf, {"c1": scipy.stats.expon(scale=SCALES["c1"]),
              "c2": scipy.stats.expon(scale=SCALES["c2"])},
        cv=cv, n_jobs=-1, n_iter=n_candidates, scoring=scorer, random_state=0,
    ).fit(X, train.tags)
    seconds = time.perf_counter() - start
    return seconds, search.best_params_, search.best_score_, search.best_estimator_, \
        tutorial_features


def run_grid(train, grid, cv, scorer, max_iter):
    from sklearn.model_selection import GridSearchCV

    from sklearn_crf import CRFTagger, SequenceFeaturizer

    start = time.perf_counter()
    featurizer = SequenceFeaturizer()
    X = featurizer.transform(train.sentences)
    search = GridSearchCV(
        CRFTagger(max_iter=max_iter, all_possible_transitions=True), grid, cv=cv,
        n_jobs=-1, scoring=scorer,
    ).fit(X, train.tags)
    seconds = time.perf_counter() - start
    return seconds, search.best_params_, search.best_score_, search.best_estimator_, \
        lambda s: featurizer.transform([s])[0]


def run_path(train, grid, cv, scorer, max_iter):
    from sklearn_crf import CRFTaggerCV, SequenceFeaturizer

    start = time.perf_counter()
    featurizer = SequenceFeaturizer()
    X = featurizer.transform(train.sentences)
    model = CRFTaggerCV(c1s=grid["c1"], c2s=grid["c2"], cv=cv, scoring=scorer,
                        max_iter=max_iter, all_possible_transitions=True,
                        n_jobs=-1).fit(X, train.tags)
    seconds = time.perf_counter() - start
    iterations = int(model.cv_results_["mean_n_iter"].sum() * model.n_splits_)
    print(f"  path: {iterations} iterations over the folds' paths "
          f"(per candidate, fold mean: {model.cv_results_['mean_n_iter'].round(1).tolist()}), "
          f"refit {model.n_iter_} iterations in {model.refit_time_:.1f} s")
    return seconds, model.best_params_, model.best_score_, model, \
        lambda s: featurizer.transform([s])[0]


def warm_up():
    """Compile (or load from numba's cache) the kernels a fit and a predict run."""
    from sklearn_crf import CRFTagger

    X = [[{"w": "a", "x": 1.0}, {"w": "b"}]] * 3
    y = [["B-PER", "O"]] * 3
    CRFTagger(c1=0.1, max_iter=3).fit(X, y).predict(X)
    CRFTagger(c1=0.0, max_iter=3).fit(X, y).predict(X)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=2000,
                        help="the first N sentences of esp.train (0: all)")
    parser.add_argument("--n-c1", type=int, default=10,
                        help="c1 values of the grid (default 10 x 5: the tutorial's 50 candidates)")
    parser.add_argument("--n-c2", type=int, default=5)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=100,
                        help="the tutorial's max_iterations, for all three")
    parser.add_argument("--only", default=",".join(SEARCHES),
                        help=f"comma-separated searches among {', '.join(SEARCHES)}")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 200 sentences, 2 x 2 candidates, 10 iterations")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_train, args.n_c1, args.n_c2, args.max_iter = 200, 2, 2, 10
    searches = args.only.split(",")
    unknown = sorted(set(searches) - set(SEARCHES))
    if unknown:
        parser.error(f"unknown searches {unknown}; choose among {list(SEARCHES)}")

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import KFold

    from sklearn_crf.datasets import load_conll2002
    from sklearn_crf.metrics import entity_f1_score

    print("$", " ".join([os.path.basename(sys.executable)] + sys.argv))
    print(time.strftime("%Y-%m-%d %H:%M:%S"), f"nproc={os.cpu_count()}",
          "load average %.2f %.2f %.2f" % os.getloadavg())
    train = load_conll2002("train", n_sentences=args.n_train or None)
    test = load_conll2002("testb", n_sentences=200 if args.quick else None)
    grid = {"c1": log_grid("c1", args.n_c1), "c2": log_grid("c2", args.n_c2)}
    n_candidates = args.n_c1 * args.n_c2
    cv = KFold(args.folds)
    scorer = tutorial_scorer(train.tags)
    print(f"{len(train.sentences)} training sentences, {len(test.sentences)} test "
          f"sentences; {n_candidates} candidates x {args.folds} folds, max_iter "
          f"{args.max_iter}; grid c1 {grid['c1']}, c2 {grid['c2']}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warm_up()
    runs = {"tutorial": lambda: run_tutorial(train, n_candidates, cv, scorer, args.max_iter),
            "grid": lambda: run_grid(train, grid, cv, scorer, args.max_iter),
            "path": lambda: run_path(train, grid, cv, scorer, args.max_iter)}
    rows = {}
    for name in searches:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            seconds, params, cv_score, model, features = runs[name]()
        test_f1 = entity_f1_score(test.tags, model.predict(
            [features(s) for s in test.sentences]))
        rows[name] = (seconds, params, cv_score, test_f1)
        print(f"  {name}: {seconds:.1f} s, best {params}, CV {cv_score:.4f}, "
              f"test entity F1 {test_f1:.4f}", flush=True)

    print()
    print("| search | time (s) | best c1 | best c2 | best CV score | test entity F1 "
          "| time / tutorial | time / grid |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (seconds, params, cv_score, test_f1) in rows.items():
        ratios = [f"{seconds / rows[ref][0]:.3f}" if ref in rows else "-"
                  for ref in ("tutorial", "grid")]
        print(f"| {name} | {seconds:.1f} | {params['c1']:.4g} | {params['c2']:.4g} "
              f"| {cv_score:.4f} | {test_f1:.4f} | {' | '.join(ratios)} |")
    if "path" in rows:
        best_f1 = max(row[3] for row in rows.values())
        checks = [("test entity F1 within 0.005 of the best",
                   rows["path"][3] >= best_f1 - 0.005)]
        if "tutorial" in rows:
            checks += [("time <= 0.1 x tutorial", rows["path"][0] <= 0.1 * rows["tutorial"][0]),
                       ("best CV score >= tutorial's", rows["path"][2] >= rows["tutorial"][2])]
        if "grid" in rows:
            checks += [("time <= 0.35 x grid", rows["path"][0] <= 0.35 * rows["grid"][0])]
        print()
        for text, ok in checks:
            print(f"path: {text}: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
