"""Side-by-side benchmark of sklearn-crf against sklearn-crfsuite (issue 5).

Both libraries train the same model (CRFsuite's L-BFGS / OWL-QN objective,
``c1=0.1, c2=0.1, all_possible_transitions=True``) on the same feature dicts
(``SequenceFeaturizer()`` defaults = the sklearn-crfsuite tutorial features) of
CoNLL-2002 Spanish (bundled esp.train; evaluation on esp.testb), in one run on
one machine, the libraries alternating in every repetition. Measures:

  fit100   fit wall time at 100 iterations and entity-level F1, sklearn-crf also
           with one thread (n_jobs=1)
  e2e      raw tokens in, fitted model out: the tutorial's Python word2features +
           CRF.fit against make_pipeline(SequenceFeaturizer(output="encoded"), CRFTagger()).fit
  default  fit wall time, iterations and F1 with each library's default stopping
           (sklearn-crfsuite: its convergence test, delta 1e-5, ~730 iterations,
           ~4 min a fit; sklearn-crf: tol=1e-3), and sklearn-crf at tol=1e-5 too,
           the same stopping rule as sklearn-crfsuite's
  predict  predict wall time on esp.testb (feature dicts in, labels out), throughput
  rss      peak RSS of a fresh process that loads, featurizes, fits (100 it.), predicts;
           the floor: sklearn-crfsuite's peak with its import replaced by the numba
           floor process's peak (below)
  rss_labels  the same on the many-label task (``--labels-n-train`` sentences)
  startup  import + first fit + predict + predict_marginals on a tiny corpus in a
           fresh process (numba cache cold and warm for sklearn-crf), and
           sklearn-crf's cold/warm ratio
  latency  one sentence at a time over esp.testb: predict([x]) against
           predict_single, p50 and p99 of the per-sentence latencies
           (bench_latency.py's loop)
  labels   a 42-label task (entity tag x word-shape class) at 100 iterations, and
           the batch predict of esp.testb by its models (with the lookup floor)
  regression  sklearn-crf's fit and predict against its own code at a git revision
           (--rev, default main), child processes alternating, per-pair ratios
           and the coef_ bitwise check (bench_regression.py's machinery)

Floors (what no numba library with feature-dict input can go below, measured in
the same run): ``startup`` also times a child that only imports sklearn.base and
numba and calls one cached kernel (``_numba_floor.py``: numba's import and its
set-up at a first call), and its peak RSS; ``predict`` and ``latency`` also time
a Python dict lookup per (key, value) item of the test dicts (a memo of every
training item by key, ``memo[key][value]``, in C loops:
``np.fromiter(map(dict.get, map(memo.get, keys), values))``, no encoding and no
kernels), over esp.testb and per sentence.

CRFsuite is single-threaded; sklearn-crf runs its kernels on numba threads, all
cores by default (``NUMBA_NUM_THREADS`` to change): the header says how many.
BLAS pools are limited to one thread for both (sklearn-crf also does that itself
around its solver).

    python benchmarks/bench_vs_crfsuite.py --repeats 3            # the full run
    python benchmarks/bench_vs_crfsuite.py --quick                # smoke test
    python benchmarks/bench_vs_crfsuite.py --skip-default --json out.json
    python benchmarks/bench_vs_crfsuite.py --only fit100,predict
"""

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _workloads as wl  # noqa: E402  (standard library only)

# Before numpy & co. are imported: one BLAS thread, here and in the children.
wl.limit_blas_threads(os.environ)

MEASURES = ("fit100", "e2e", "predict", "latency", "labels", "default", "rss", "rss_labels",
            "startup", "regression")
IN_PROCESS = {"fit100", "e2e", "predict", "latency", "labels", "default"}


@dataclass
class Config:
    repeats: int
    n_train: int | None  # None: all of esp.train
    n_test: int | None  # None: all of esp.testb
    max_iter: int  # the "100 iterations" of fit100, labels and rss
    predict_repeats: int
    labels_n_train: int | None  # training sentences of the labels measure
    quick: bool = False
    rev: str = "main"  # the git revision of the regression measure
    files: dict | None = None  # another NER task: {"train": path, "testb": path}


@dataclass(frozen=True)
class Contender:
    key: str
    lib: str
    n_jobs: int | None
    name: str
    tol: float | None = None


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="measures: " + ", ".join(MEASURES),
    )
    parser.add_argument("--repeats", type=int, default=None,
                        help="repetitions of each measure (default 3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 300 training sentences, 200 test sentences, "
                             "10 iterations, no untimed page-cache runs")
    parser.add_argument("--skip-default", action="store_true",
                        help="skip the default-stopping measure (~4 min per "
                             "sklearn-crfsuite fit)")
    parser.add_argument("--only", action="append", metavar="MEASURE",
                        help="run only these measures (comma-separated, repeatable)")
    parser.add_argument("--json", metavar="OUT", help="also write all results to OUT")
    parser.add_argument("--rev", default="main",
                        help="git revision the regression measure compares sklearn-crf's "
                             "working tree with (default main)")
    parser.add_argument("--n-train", type=int, default=None,
                        help="first N training sentences (default: all, 300 with --quick)")
    parser.add_argument("--labels-n-train", type=int, default=None,
                        help="first N training sentences for the labels measure only "
                             "(default: as the others; ~4 min a sklearn-crfsuite fit "
                             "on all of esp.train)")
    parser.add_argument("--train", metavar="FILE", default=None,
                        help="another NER task: its training CoNLL file (a token per "
                             "line, word first, label last), instead of esp.train; "
                             "with --test, for the measures fit100, predict, labels and rss")
    parser.add_argument("--test", metavar="FILE", default=None,
                        help="that task's test CoNLL file, instead of esp.testb")
    args = parser.parse_args(argv)
    if (args.train is None) != (args.test is None):
        parser.error("--train and --test go together")
    other = set(args.only and ",".join(args.only).split(",") or MEASURES) - {
        "fit100", "predict", "labels", "rss", "rss_labels"}
    if args.train is not None and {m.strip() for m in other} - {""}:
        parser.error("--train and --test take --only with fit100, predict, labels, rss, "
                     "rss_labels")
    if args.only:
        selected = [m.strip() for item in args.only for m in item.split(",") if m.strip()]
        unknown = sorted(set(selected) - set(MEASURES))
        if unknown:
            parser.error(f"unknown measure(s) {unknown}; choose from {list(MEASURES)}")
    else:
        selected = list(MEASURES)
    if args.skip_default:
        selected = [m for m in selected if m != "default"]
    args.measures = [m for m in MEASURES if m in selected]
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    return args


# --------------------------------------------------------------------------- output


def fmt(value, kind):
    if value is None:
        return "–"
    if kind == "s":
        return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"
    if kind == "f1":
        return f"{value:.4f}"
    if kind == "mb":
        return f"{value:.0f} MB"
    if kind == "it":
        return f"{value:.0f}"
    if kind == "tps":
        return f"{value:,.0f} tok/s"
    if kind == "sps":
        return f"{value:,.0f} sentences/s"
    if kind == "us":
        return f"{value:,.0f} µs"
    if kind == "x":
        return f"{value:.2f}x"
    return str(value)


def ratio(ours, theirs):
    if ours is None or theirs in (None, 0):
        return None
    return ours / theirs


def say(text=""):
    print(text, flush=True)


def print_medians(summary, fields, ours=("ours",)):
    """One line per field: median of each library and ours/theirs."""
    for field, kind in fields:
        t = summary["theirs"].get(field)
        parts = [f"sklearn-crfsuite {fmt(t, kind)}"]
        for key in ours:
            o = summary[key].get(field)
            r = ratio(o, t)
            label = ("sklearn-crf" if key == "ours" else key if key.startswith("floor")
                     else f"sklearn-crf [{key}]")
            parts.append(f"{label} {fmt(o, kind)} (ours/theirs "
                         f"{'–' if r is None else f'{r:.3f}'})")
        say(f"  median {field}: " + " | ".join(parts))


def summarize(runs):
    """Median of every numeric field, per contender."""
    summary = {}
    for key, records in runs.items():
        fields = {f for rec in records for f, v in rec.items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool)}
        summary[key] = {f: wl.median([rec.get(f) for rec in records]) for f in sorted(fields)}
    return summary


# --------------------------------------------------------------------------- in-process fits


def contenders(single_thread=False):
    import numba

    n = numba.get_num_threads()
    out = [Contender("theirs", "theirs", None, "sklearn-crfsuite (1 thread)"),
           Contender("ours", "ours", None, f"sklearn-crf ({n} numba threads)")]
    if single_thread:
        out.append(Contender("ours_1thread", "ours", 1, "sklearn-crf (n_jobs=1)"))
    return out


def run_fits(cfg, players, X, y, X_test, evaluate, max_iter):
    """Fit each contender ``cfg.repeats`` times, alternating; evaluate each fit.

    Returns the per-run records and the last fitted model of each contender.
    """
    runs = {c.key: [] for c in players}
    models = {}
    for r in range(cfg.repeats):
        for c in wl.alternate(players, r):
            models.pop(c.key, None)  # free the previous model first
            estimator = wl.make_estimator(c.lib, max_iter=max_iter, n_jobs=c.n_jobs,
                                          tol=c.tol)
            seconds, capped = wl.timed(wl.fit_estimator, c.lib, estimator, X, y)
            record = {"fit_s": seconds, "n_iter": wl.n_iterations(c.lib, estimator)}
            if capped is not None:
                record["hit_max_iter"] = capped
            if c.lib == "theirs" and estimator.training_log_ is not None:
                record["crfsuite_training_s"] = estimator.training_log_.training_seconds
            record.update(evaluate(estimator.predict(X_test)))
            runs[c.key].append(record)
            models[c.key] = estimator
            extra = "  ".join(f"{k} {v:.4f}" for k, v in record.items()
                              if k.endswith(("f1", "accuracy")))
            say(f"  rep {r + 1}/{cfg.repeats}  {c.name:<34} fit {fmt(seconds, 's'):>9}  "
                f"{record['n_iter']} it  {extra}")
    return runs, models


def ner_evaluation(y_test):
    from sklearn_crf.metrics import entity_f1_score

    try:
        from seqeval.metrics import f1_score as seqeval_f1
    except ImportError:  # pragma: no cover - seqeval is in the [bench] extra
        seqeval_f1 = None

    def evaluate(y_pred):
        out = {"entity_f1": entity_f1_score(y_test, y_pred)}
        if seqeval_f1 is not None:
            out["seqeval_f1"] = seqeval_f1(y_test, y_pred)
            if abs(out["seqeval_f1"] - out["entity_f1"]) > 1e-9:
                say(f"  WARNING: entity_f1_score {out['entity_f1']:.6f} != seqeval "
                    f"{out['seqeval_f1']:.6f}")
        return out

    return evaluate


def measure_fit100(cfg, data, state):
    say(f"== fit100: fit at {cfg.max_iter} iterations on {len(data.X_train)} sentences "
        f"({data.n_train_tokens} tokens); entity F1 on esp.testb ==")
    runs, models = run_fits(cfg, contenders(single_thread=True), data.X_train, data.y_train,
                            data.X_test, ner_evaluation(data.y_test), cfg.max_iter)
    state["models"] = {k: models[k] for k in ("theirs", "ours")}
    summary = summarize(runs)
    print_medians(summary, [("fit_s", "s"), ("entity_f1", "f1")],
                  ours=("ours", "ours_1thread"))
    return {"runs": runs, "summary": summary}


def measure_default(cfg, data, state):
    say(f"== default: fit with each library's default stopping on {len(data.X_train)} "
        "sentences (sklearn-crfsuite: no max_iterations, CRFsuite's delta test at 1e-5; "
        "sklearn-crf: max_iter=1000, tol=1e-3), and sklearn-crf at tol=1e-5: the same "
        "stopping rule as sklearn-crfsuite's ==")
    import numba

    players = contenders() + [Contender(
        "ours_tol", "ours", None,
        f"sklearn-crf tol=1e-5 ({numba.get_num_threads()} threads)", tol=1e-5)]
    runs, _ = run_fits(cfg, players, data.X_train, data.y_train, data.X_test,
                       ner_evaluation(data.y_test), max_iter=None)
    summary = summarize(runs)
    print_medians(summary, [("fit_s", "s"), ("n_iter", "it"), ("entity_f1", "f1")],
                  ours=("ours", "ours_tol"))
    if any(rec.get("hit_max_iter") for rec in runs["ours"]):
        say("  note: sklearn-crf stopped at max_iter=1000 (ConvergenceWarning)")
    return {"runs": runs, "summary": summary}


def measure_e2e(cfg, data, state):
    say(f"== e2e: raw tokens in, fitted model out ({cfg.max_iter} iterations): "
        "sklearn-crfsuite = the tutorial's Python word2features + CRF.fit; sklearn-crf = "
        "make_pipeline(SequenceFeaturizer(output=\"encoded\"), CRFTagger()).fit (no feature dicts); the same features ==")
    players = contenders()
    runs = {c.key: [] for c in players}
    for r in range(cfg.repeats):
        for c in wl.alternate(players, r):
            estimator = wl.make_estimator(c.lib, max_iter=cfg.max_iter)
            seconds, model = wl.timed(wl.fit_from_tokens, c.lib, estimator,
                                      data.train_sentences, data.y_train)
            runs[c.key].append({"e2e_s": seconds})
            del model, estimator
            say(f"  rep {r + 1}/{cfg.repeats}  {c.name:<34} featurize + fit "
                f"{fmt(seconds, 's'):>9}")
    summary = summarize(runs)
    print_medians(summary, [("e2e_s", "s")])
    return {"runs": runs, "summary": summary}


def measure_predict(cfg, data, state):
    models = fitted_models(cfg, data, state)
    say(f"== predict: esp.testb, {len(data.X_test)} sentences ({data.n_test_tokens} tokens), "
        f"feature dicts in, labels out; {cfg.predict_repeats} predicts x {cfg.repeats} "
        "repetitions, after one untimed predict each ==")
    return time_batch_predict(cfg, models, data.X_train, data.X_test, data.n_test_tokens)


def time_batch_predict(cfg, models, X_train, X_test, n_tokens):
    """Batch predict of X_test by each library's fitted model and by the
    item-lookup floor (:func:`item_lookup_floor` of X_train), alternating."""
    players = contenders()
    for c in players:
        models[c.key].predict(X_test)  # warm-up: loads CRFsuite's tagger
    lookup = item_lookup_floor(X_train)
    predictors = {c.key: models[c.key].predict for c in players}
    predictors["floor"] = lookup
    players = players + [Contender("floor", "floor", None, "floor: dict lookup per item")]
    lookup(X_test)  # warm-up
    runs = {c.key: [] for c in players}
    for r in range(cfg.repeats * cfg.predict_repeats):
        for c in wl.alternate(players, r):
            seconds, _ = wl.timed(predictors[c.key], X_test)
            runs[c.key].append({"predict_s": seconds, "tokens_per_s": n_tokens / seconds})
    summary = summarize(runs)
    for key in runs:  # throughput of the median time
        summary[key]["tokens_per_s"] = n_tokens / summary[key]["predict_s"]
    for c in players:
        times = ", ".join(f"{rec['predict_s']:.3f}" for rec in runs[c.key])
        say(f"  {c.name:<34} {times} s")
    print_medians(summary, [("predict_s", "s"), ("tokens_per_s", "tps")],
                  ours=("ours", "floor"))
    return {"runs": runs, "summary": summary, "n_tokens": n_tokens}


def item_lookup_floor(X_train):
    """The floor of a Python encoder of feature dicts: a function of X that
    looks each (key, value) item of its dicts up in a memo of every training
    item by key (``memo[key][value]``: the key's dict, then the value in it,
    C-level ``dict.get`` calls, into an int64 array), and does nothing else."""
    from itertools import chain, repeat

    import numpy as np

    memo = {}
    for token in chain.from_iterable(X_train):
        for key, value in token.items():
            values = memo.setdefault(key, {})
            values.setdefault(value, len(values))
    none = {}

    def lookup(X):
        tokens = list(chain.from_iterable(X))
        n = sum(map(len, tokens))
        return np.fromiter(map(dict.get, map(memo.get, chain.from_iterable(tokens), repeat(none)),
                               chain.from_iterable(map(dict.values, tokens)), repeat(-1)),
                           np.int64, n)

    return lookup


def measure_labels(cfg, data, state):
    n = cfg.labels_n_train if cfg.labels_n_train is not None else len(data.X_train)
    X_train = data.X_train[:n]
    y_train = wl.shape_labels(data.train_sentences[:n], data.y_train[:n])
    y_test = wl.shape_labels(data.test_sentences, data.y_test)
    n_labels = len({label for seq in y_train for label in seq})
    n_test_labels = len({label for seq in y_test for label in seq})
    say(f"== labels: {n_labels}-label task (entity tag x word shape D/U/T/L/M; "
        f"{n_test_labels} labels in the test part) at {cfg.max_iter} iterations; "
        f"{len(X_train)} training sentences; token accuracy on esp.testb ==")

    def evaluate(y_pred):
        return {"token_accuracy": wl.token_accuracy(y_test, y_pred)}

    runs, models = run_fits(cfg, contenders(), X_train, y_train, data.X_test, evaluate,
                            cfg.max_iter)
    summary = summarize(runs)
    print_medians(summary, [("fit_s", "s"), ("token_accuracy", "f1")])
    say(f"  batch predict of esp.testb by the {n_labels}-label models, "
        f"{cfg.predict_repeats} predicts x {cfg.repeats} repetitions:")
    predict = time_batch_predict(cfg, models, X_train, data.X_test, data.n_test_tokens)
    return {"runs": runs, "summary": summary, "n_labels": n_labels,
            "n_test_labels": n_test_labels, "n_train": len(X_train), "predict": predict}


# --------------------------------------------------------------------------- child processes


def measure_rss(cfg, data, state, shape=False):
    n_train = cfg.labels_n_train if shape else cfg.n_train
    task = "the many-label task (shape_labels)" if shape else "the NER tags"
    say(f"== rss{'_labels' if shape else ''}: peak RSS of a fresh process that imports its "
        f"library, loads and featurizes esp.train{'' if n_train is None else f' [:{n_train}]'}"
        f" and esp.testb, fits {cfg.max_iter} iterations on {task} and predicts (VmHWM of "
        "the child: its ru_maxrss would include this process's own peak; the numba cache "
        "is warm) ==")
    ensure_warm(state, state["info"])  # the children's numba cache
    args = ["--n-train", n_train or 0, "--n-test", cfg.n_test or 0,
            "--max-iter", cfg.max_iter, *(["--shape-labels"] if shape else []),
            *([] if cfg.files is None else ["--train", cfg.files["train"],
                                            "--test", cfg.files["testb"]])]
    env = wl.child_env()
    runs = {lib: [] for lib in wl.LIBS}
    runs["floor"] = []
    for r in range(cfg.repeats):
        numba_floor = None
        for lib in wl.alternate([*wl.LIBS, "floor"], r):
            if lib == "floor":
                numba_floor = wl.run_child(["floor"], env)[1]["peak_rss_mb"]
                say(f"  rep {r + 1}/{cfg.repeats}  numba floor process peak "
                    f"{fmt(numba_floor, 'mb'):>7}")
                continue
            wall, record = wl.run_child(["rss", "--lib", lib, *args], env)
            record["parent_wall_s"] = wall
            runs[lib].append(record)
            say(f"  rep {r + 1}/{cfg.repeats}  {wl.LIB_NAMES[lib]:<17} peak "
                f"{fmt(record['peak_rss_mb'], 'mb'):>7}  (after import "
                f"{record['rss_after_import_mb']:.0f}, featurize "
                f"{record['rss_after_featurize_mb']:.0f}, fit {record['rss_after_fit_mb']:.0f},"
                f" predict {record['rss_after_predict_mb']:.0f} MB)  fit "
                f"{fmt(record['fit_s'], 's')}, process {fmt(wall, 's')}")
        # the floor of a numba library doing sklearn-crfsuite's work: its peak
        # with its import replaced by the numba floor process's whole peak
        theirs = runs["theirs"][-1]
        runs["floor"].append({"peak_rss_mb": theirs["peak_rss_mb"]
                              - theirs["rss_after_import_mb"] + numba_floor,
                              "numba_floor_mb": numba_floor})
    summary = summarize(runs)
    print_medians(summary, [("peak_rss_mb", "mb")], ours=("ours", "floor"))
    print_medians(summary, [("rss_after_featurize_mb", "mb")])
    return {"runs": runs, "summary": summary}


def measure_startup(cfg, data, state):
    say("== startup: a fresh process imports the library and fits (100 iterations max) "
        f"then predicts and predict_marginals on a {len(wl.tiny_corpus()[0])}-sentence corpus; wall time from the "
        "parent around the process and inside the child; sklearn-crf with a cold numba "
        "cache (fresh NUMBA_CACHE_DIR) and then warm (the same dir, populated by the "
        "cold run) ==")
    runs = {"theirs": [], "ours_cold": [], "ours_warm": [], "floor_cold": [], "floor": []}
    root = tempfile.mkdtemp(prefix="bench_numba_cache_")
    try:
        if not cfg.quick:
            # untimed, with the default numba cache: bring both libraries' files
            # (and numba's, llvmlite's) into the OS page cache
            wl.run_child(["startup", "--lib", "theirs"], wl.child_env())
            wl.run_child(["startup", "--lib", "ours"], wl.child_env())
        for r in range(cfg.repeats):
            cache = os.path.join(root, f"rep{r}")
            for unit in wl.alternate(["theirs", "ours", "floor"], r):
                steps = {"theirs": [("theirs", "theirs")],
                         "ours": [("ours_cold", "ours"), ("ours_warm", "ours")],
                         "floor": [("floor_cold", "floor"), ("floor", "floor")]}[unit]
                for key, lib in steps:
                    command = ["floor"] if lib == "floor" else ["startup", "--lib", lib]
                    wall, record = wl.run_child(command, wl.child_env(cache))
                    record["parent_wall_s"] = wall
                    runs[key].append(record)
                    if lib == "floor":
                        say(f"  rep {r + 1}/{cfg.repeats}  {key:<10} process "
                            f"{fmt(wall, 's'):>8}  in child: import sklearn.base + numba "
                            f"{fmt(record['import_s'], 's')} + one kernel's first call "
                            f"{fmt(record['first_call_s'], 's')}; peak RSS "
                            f"{fmt(record['peak_rss_mb'], 'mb')}")
                        continue
                    say(f"  rep {r + 1}/{cfg.repeats}  {key:<10} process "
                        f"{fmt(wall, 's'):>8}  in child: import {fmt(record['import_s'], 's')}"
                        f" + first fit {fmt(record['first_fit_s'], 's')} = "
                        f"{fmt(record['import_fit_s'], 's')}; first predict "
                        f"{fmt(record['first_predict_s'], 's')}, predict_marginals "
                        f"{fmt(record['first_marginals_s'], 's')}; CPU "
                        f"{fmt(record['cpu_s'], 's')}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    summary = summarize(runs)
    print_medians(summary, [("parent_wall_s", "s"), ("import_fit_predict_s", "s"),
                            ("cpu_s", "s"), ("peak_rss_mb", "mb")],
                  ours=("ours_cold", "ours_warm", "floor"))
    return {"runs": runs, "summary": summary}


def fitted_models(cfg, data, state):
    """The fit100 models of both libraries, or fitted here at ``cfg.max_iter``."""
    models = state.get("models")
    if models is None:
        say(f"  (fitting both at {cfg.max_iter} iterations)")
        models = {}
        for c in contenders():
            models[c.key] = wl.make_estimator(c.lib, max_iter=cfg.max_iter)
            wl.fit_estimator(c.lib, models[c.key], data.X_train, data.y_train)
        state["models"] = models
    return models


def percentile(values, q):
    """The ``q``-th percentile (nearest rank) of ``values``."""
    import math

    values = sorted(values)
    return values[min(len(values), max(1, math.ceil(q / 100 * len(values)))) - 1]


def measure_latency(cfg, data, state):
    import bench_latency

    models = fitted_models(cfg, data, state)
    say(f"== latency: each of the {len(data.X_test)} esp.testb sentences tagged alone, "
        "sklearn-crf predict([x]) against sklearn-crfsuite predict_single, alternating "
        f"sentence by sentence, {cfg.repeats} passes; a sentence's latency is the median "
        "of its passes; p50 and p99 over the sentences ==")
    lat = bench_latency.latencies({"ours": models["ours"], "theirs": models["theirs"]},
                                  data.X_test, cfg.repeats)
    summary = {}
    for lib in wl.LIBS:
        summary[lib] = {"p50_us": 1e6 * percentile(lat[lib], 50),
                        "p99_us": 1e6 * percentile(lat[lib], 99),
                        "sentences_per_s": len(lat[lib]) / sum(lat[lib])}
    per_sentence = [o / t for o, t in zip(lat["ours"], lat["theirs"])]
    summary["ours"]["per_sentence_ratio_p50"] = percentile(per_sentence, 50)
    floor = floor_latencies(item_lookup_floor(data.X_train), data.X_test, cfg.repeats)
    summary["floor"] = {"p50_us": 1e6 * percentile(floor, 50),
                        "p99_us": 1e6 * percentile(floor, 99),
                        "sentences_per_s": len(floor) / sum(floor)}
    print_medians(summary, [("p50_us", "us"), ("p99_us", "us"),
                            ("sentences_per_s", "sps")], ours=("ours", "floor"))
    say(f"  median of the per-sentence ratios ours/theirs: "
        f"{summary['ours']['per_sentence_ratio_p50']:.3f}")
    return {"summary": summary, "n_sentences": len(lat["ours"])}


def floor_latencies(lookup, X, repeats):
    """Per sentence of X, the median over ``repeats`` passes of the time of
    ``lookup([x])`` (the item-lookup floor, :func:`item_lookup_floor`)."""
    passes = []
    for _ in range(repeats):
        times = []
        for x in X:
            t0 = time.perf_counter()
            lookup([x])
            times.append(time.perf_counter() - t0)
        passes.append(times)
    return [wl.median(list(ts)) for ts in zip(*passes)]


def measure_regression(cfg, data, state):
    import argparse as _argparse

    import bench_regression as br

    say(f"== regression: sklearn-crf of this working tree against {cfg.rev}, fit "
        f"({cfg.max_iter} iterations) and predict in child processes, alternating, "
        f"{cfg.repeats} pairs per thread setting (bench_regression.py) ==")
    tmp = tempfile.mkdtemp(prefix="bench_vs_crfsuite_regression_")
    try:
        rev_commit = br.resolve(cfg.rev)
        tree = br.tree_version()
        rev_dir = os.path.join(tmp, "rev")
        br.extract(rev_commit, rev_dir)
        versions = [tree, br.Version("rev", cfg.rev, rev_commit, rev_dir)]
        say(f"  working tree {tree.commit}; {cfg.rev} = {rev_commit}")
        data_path = os.path.join(tmp, "data.pickle")
        br.featurize(cfg.n_train, cfg.n_test, data_path)
        cache_dir = os.path.join(tmp, "numba_cache")
        os.makedirs(cache_dir)
        args = _argparse.Namespace(n_jobs=[1] if cfg.quick else [1, 0], max_iter=cfg.max_iter,
                                   repeats=cfg.repeats, rev=cfg.rev)
        timing = br.time_versions(args, versions, data_path, cache_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {}
    for n_jobs, res in timing.items():
        for measure in ("fit_s", "predict_s"):
            s = res["summary"][measure]
            summary.setdefault("tree", {})[f"{measure}_{n_jobs}"] = s["tree_median"]
            summary.setdefault("rev", {})[f"{measure}_{n_jobs}"] = s["rev_median"]
            summary.setdefault("ratio", {})[f"{measure}_{n_jobs}"] = s["median_ratio"]
    summary["bitwise"] = {n_jobs: res["coef_bitwise_equal"] for n_jobs, res in timing.items()}
    return {"summary": summary, "rev": cfg.rev, "rev_commit": rev_commit,
            "tree_commit": tree.commit,
            "timing": {k: {"summary": v["summary"], "coef_bitwise_equal":
                           v["coef_bitwise_equal"]} for k, v in timing.items()}}


def ensure_warm(state, info):
    """Import both libraries and fit + predict once on a tiny corpus, untimed.

    This compiles our kernels, or loads them from numba's cache, which it
    fills: the default cache, the one the ``rss`` child processes use too.
    """
    if state.get("warm"):
        return
    for lib in wl.LIBS:
        seconds, _ = wl.timed(wl.warm_up, lib)
        say(f"warm-up (import, tiny fit + predict, untimed in the results) "
            f"{wl.LIB_NAMES[lib]}: {seconds:.1f} s")
    import numba

    info["numba_threading_layer_used"] = numba.threading_layer()
    say(f"numba threading layer in use: {info['numba_threading_layer_used']}")
    state["warm"] = True


MEASURE_FUNCS = {
    "fit100": measure_fit100,
    "e2e": measure_e2e,
    "default": measure_default,
    "predict": measure_predict,
    "rss": measure_rss,
    "startup": measure_startup,
    "labels": measure_labels,
    "rss_labels": lambda cfg, data, state: measure_rss(cfg, data, state, shape=True),
    "latency": measure_latency,
    "regression": measure_regression,
}


# --------------------------------------------------------------------------- table


def table_rows(results, cfg, n_threads):
    """(measure, sklearn-crfsuite, sklearn-crf, ours/theirs) rows of the final table."""
    rows = []
    if "predict" in results.get("labels", {}):  # the labels models' batch predict
        results = {**results, "labels_predict": results["labels"]["predict"]}

    def add(name, measure, field, kind, ours="ours", theirs="theirs"):
        summary = results.get(measure, {}).get("summary")
        if not summary:
            return
        t, o = summary[theirs].get(field), summary[ours].get(field)
        r = ratio(o, t)
        rows.append((name, fmt(t, kind), fmt(o, kind), "–" if r is None else f"{r:.2f}"))

    it = cfg.max_iter
    threads = f"{n_threads} threads"
    add(f"fit, {it} iterations, ours on {threads} (s)", "fit100", "fit_s", "s")
    add(f"fit, {it} iterations, ours with n_jobs=1 (s)", "fit100", "fit_s", "s",
        ours="ours_1thread")
    add(f"entity F1 on esp.testb, {it} iterations", "fit100", "entity_f1", "f1")
    add(f"featurize + fit from raw tokens, {it} iterations, ours on {threads} (s)",
        "e2e", "e2e_s", "s")
    add(f"fit, each library's default stopping (theirs delta 1e-5, ours tol 1e-3), "
        f"ours on {threads} (s)", "default", "fit_s", "s")
    add("iterations, each library's default stopping", "default", "n_iter", "it")
    add("entity F1 on esp.testb, each library's default stopping", "default",
        "entity_f1", "f1")
    add(f"fit, both stopping at delta 1e-5 (ours tol=1e-5), ours on {threads} (s)",
        "default", "fit_s", "s", ours="ours_tol")
    add("iterations, both at delta 1e-5", "default", "n_iter", "it", ours="ours_tol")
    add("entity F1 on esp.testb, both at delta 1e-5", "default", "entity_f1", "f1",
        ours="ours_tol")
    add(f"predict esp.testb (s), ours on {threads}", "predict", "predict_s", "s")
    add("predict throughput (tokens/s, higher is better)", "predict", "tokens_per_s", "tps")
    add("one sentence, predict([x]) / predict_single: p50 latency", "latency", "p50_us", "us")
    add("one sentence, predict([x]) / predict_single: p99 latency", "latency", "p99_us", "us")
    add("predict floor: one Python dict lookup per (key, value) item of esp.testb, "
        "nothing else (s)", "predict", "predict_s", "s", ours="floor")
    add("one sentence at a time: throughput (higher is better)", "latency",
        "sentences_per_s", "sps")
    add("one sentence, floor (dict lookup per item) / predict_single: p50 latency",
        "latency", "p50_us", "us", ours="floor")
    add("one sentence, floor (dict lookup per item) / predict_single: p99 latency",
        "latency", "p99_us", "us", ours="floor")
    add(f"peak RSS: load + featurize + fit {it} it. + predict", "rss", "peak_rss_mb", "mb")
    add("peak RSS floor: sklearn-crfsuite's peak, its import replaced by the numba floor "
        "process (sklearn.base + numba + one kernel)", "rss", "peak_rss_mb", "mb",
        ours="floor")
    add("many-label task: peak RSS, load + featurize + fit + predict", "rss_labels",
        "peak_rss_mb", "mb")
    add("many-label task: peak RSS floor (as above)", "rss_labels", "peak_rss_mb", "mb",
        ours="floor")
    for cache in ("cold", "warm"):
        add(f"import + first fit + predict + predict_marginals, {cache} numba cache: "
            "process wall (s)", "startup", "parent_wall_s", "s", ours=f"ours_{cache}")
        add(f"import + first fit + predict + predict_marginals, {cache} numba cache: "
            "in child (s)", "startup", "import_fit_predict_s", "s", ours=f"ours_{cache}")
        add(f"the same, CPU time of the child (s), {cache} numba cache", "startup",
            "cpu_s", "s", ours=f"ours_{cache}")
    add("start-up floor of a numba library: import sklearn.base + numba + one cached "
        "kernel's first call, in child (s)", "startup", "import_fit_predict_s", "s",
        ours="floor")
    add("peak RSS of the start-up process, sklearn-crf warm", "startup", "peak_rss_mb", "mb",
        ours="ours_warm")
    add("peak RSS of the start-up floor process (sklearn.base + numba + one kernel)",
        "startup", "peak_rss_mb", "mb", ours="floor")
    startup = results.get("startup", {}).get("summary")
    if startup:
        cold = startup["ours_cold"].get("import_fit_predict_s")
        warm = startup["ours_warm"].get("import_fit_predict_s")
        r = ratio(cold, warm)
        rows.append(("sklearn-crf start-up in child, cold / warm numba cache", "–",
                     f"{fmt(cold, 's')} / {fmt(warm, 's')}", "–" if r is None else
                     f"{r:.2f} (cold/warm)"))
    regression = results.get("regression", {}).get("summary")
    if regression:
        rev = results["regression"]["rev"]
        for key, label in (("fit_s_1", f"fit, {it} iterations, n_jobs=1"),
                           ("fit_s_0", f"fit, {it} iterations, numba's threads"),
                           ("predict_s_1", "predict, n_jobs=1"),
                           ("predict_s_0", "predict, numba's threads")):
            if key in regression["ratio"]:
                rows.append((f"regression: {label}, working tree against {rev} "
                             f"(columns: {rev}, the working tree, tree/{rev} as the "
                             "median of the pairs' ratios)",
                             fmt(regression["rev"][key], "s"),
                             fmt(regression["tree"][key], "s"),
                             f"{regression['ratio'][key]:.2f}"))
        rows.append((f"regression: coef_ bitwise equal to {rev}'s", "–",
                     ", ".join(f"n_jobs={k if k != '0' else 'None'}: {'yes' if v else 'NO'}"
                               for k, v in regression["bitwise"].items()), "–"))
    n_labels = results.get("labels", {}).get("n_labels")
    add(f"{n_labels}-label task: fit, {it} iterations, ours on {threads} (s)", "labels",
        "fit_s", "s")
    add(f"{n_labels}-label task: token accuracy on esp.testb", "labels", "token_accuracy",
        "f1")
    add(f"{n_labels}-label task: predict esp.testb (s), ours on {threads}", "labels_predict",
        "predict_s", "s")
    add(f"{n_labels}-label task: predict floor, one dict lookup per item (s)",
        "labels_predict", "predict_s", "s", ours="floor")
    return rows


def markdown_table(rows):
    lines = ["| measure (median) | sklearn-crfsuite | sklearn-crf | ours/theirs |",
             "|---|---:|---:|---:|"]
    lines += [f"| {m} | {t} | {o} | {r} |" for m, t, o, r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    quick = args.quick
    cfg = Config(
        repeats=args.repeats,
        n_train=args.n_train if args.n_train is not None else (300 if quick else None),
        n_test=200 if quick else None,
        max_iter=10 if quick else 100,
        predict_repeats=2 if quick else 5,
        labels_n_train=args.labels_n_train,
        quick=quick,
        rev=args.rev,
        files=None if args.train is None else {"train": args.train, "testb": args.test},
    )
    command = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
    info = wl.machine_info()
    v = info["versions"]
    say(f"# bench_vs_crfsuite — {info['date']}")
    say(f"command: {command}")
    say(f"machine: {info['cpu']}; nproc {info['nproc']} ({info['cpus_available']} "
        f"available); {info['platform']}; load average "
        f"{' '.join(f'{x:.2f}' for x in info['load_average'])}")
    say(f"python {info['python']}; numpy {v['numpy']}, scipy {v['scipy']}, numba "
        f"{v['numba']}, scikit-learn {v['scikit-learn']}, sklearn-crfsuite "
        f"{v['sklearn-crfsuite']}, python-crfsuite {v['python-crfsuite']}, sklearn-crf "
        f"{v['sklearn-crf']}, seqeval {v['seqeval']}")
    n_threads = info["numba_threads_in_use"]
    say(f"threads: sklearn-crf uses {n_threads} numba threads (NUMBA_NUM_THREADS="
        f"{info['numba_num_threads']}, layer {info['numba_threading_layer']}); "
        "sklearn-crfsuite (CRFsuite) is single-threaded; BLAS pools limited to 1 thread "
        f"({', '.join(info['blas_pools'] or ['?'])})")
    load = info["load_average"][0]
    if load > 0.25 * (info["nproc"] or 1):
        say(f"WARNING: load average {load:.2f} on {info['nproc']} cores: other jobs are "
            "running, timings will be noisy (and sklearn-crf's threads hit hardest)")
    say(f"settings: c1={wl.C1}, c2={wl.C2}, all_possible_transitions=True, "
        f"algorithm lbfgs; repeats {cfg.repeats}; measures {', '.join(args.measures)}"
        + ("; QUICK (subset, 10 iterations: not the benchmark)" if quick else ""))
    say()

    state = {"info": info}
    data = None
    if IN_PROCESS & set(args.measures):
        seconds, data = wl.timed(wl.load_ner, cfg.n_train, cfg.n_test, cfg.files)
        source = ("the bundled esp.train, esp.testb" if cfg.files is None
                  else f"{cfg.files['train']}, {cfg.files['testb']}")
        say(f"data ({source}): {len(data.X_train)} training sentences "
            f"({data.n_train_tokens} tokens), "
            f"{len(data.X_test)} test sentences ({data.n_test_tokens} tokens); loaded and "
            f"featurized in {seconds:.1f} s")
        ensure_warm(state, info)
        say()

    results = {}
    for measure in args.measures:
        t0 = time.perf_counter()
        results[measure] = MEASURE_FUNCS[measure](cfg, data, state)
        results[measure]["elapsed_s"] = time.perf_counter() - t0
        say(f"  ({measure}: {time.perf_counter() - t0:.0f} s)")
        say()

    rows = table_rows(results, cfg, n_threads)
    total = time.perf_counter() - start
    say(f"## Results ({info['date']}, {cfg.repeats} repetitions, total {total:.0f} s, "
        f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    say()
    say(f"sklearn-crf on {n_threads} numba threads, sklearn-crfsuite single-threaded, "
        f"on {info['nproc']} cores ({info['cpu']}); ours/theirs < 1 means sklearn-crf "
        "takes less (time, memory) — except for F1, accuracy and throughput, where it "
        "is the plain ratio.")
    say()
    say(markdown_table(rows))

    if args.json:
        import json

        payload = {"command": command, "machine": info, "config": asdict(cfg),
                   "measures": results, "table": rows, "total_s": total}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=1, default=str)
        say(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
