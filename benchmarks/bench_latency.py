"""One sentence at a time: ``predict([x])`` against sklearn-crfsuite's ``predict_single``.

Also ``predict_marginals([x])`` against ``predict_marginals_single(x)``, and
``predict_nbest([x], n=3)`` (sklearn-crfsuite has none); each measure prints
the p50 and the p99 over sentences.

Both libraries are fitted on CoNLL-2002 esp.train with the tutorial features
(``c1=0.1, c2=0.1, all_possible_transitions=True``, ``--max-iter`` iterations),
then every esp.testb sentence is tagged alone, the two libraries alternating
sentence by sentence, ``--repeats`` passes; a sentence's latency is the median
of its passes, and the figure is the median over sentences. The same is then
done with a model of about 10x the attributes (``--scale 10``): every training
token gets ``scale - 1`` extra features ``rand<i>``, each with a random value
among as many values as the base vocabulary has attributes, so the vocabulary
grows about ``scale``-fold; the test sentences keep their tutorial features
only, so that a call does the same work with both models and only the model's
size differs. A per-call cost that grows with the model's size shows as a
larger latency on the big model.

Two serving routes are measured the same way, sentence by sentence:

``tokens``
    Raw tokens to labels: the tutorial's ``word2features`` then
    ``predict_single`` (sklearn-crfsuite) against a fitted
    ``make_pipeline(SequenceFeaturizer(), CRFTagger())`` (the tagger fitted
    above) and that Pipeline saved with ``save_model`` and read back with
    ``load_model``: ``pipe.predict([sentence])``; with the same two steps
    called one after the other (what the Pipeline adds), and the floor of any
    Pipeline: scikit-learn's ``Pipeline.predict`` of two steps that do nothing
    (its ``check_is_fitted`` of the Pipeline, the steps' tags, its loop).
``crfsuite``
    sklearn-crfsuite's model file, feature dicts in: ``predict_single(x)``
    against the file read by ``load_crfsuite`` (``predict([x])``), and, when
    it is installed, crfs (a Rust port of CRFsuite; never a dependency),
    ``Model.open(file).tag(items)``; and the floor of any Python encoder of
    the dicts: each (key, value) item looked up in the model's memo (by key,
    then value), nothing else.

    python benchmarks/bench_latency.py                  # both models, 3 passes
    python benchmarks/bench_latency.py --n-test 300 --max-iter 30   # quicker
    python benchmarks/bench_latency.py --scale 0 --measures predict   # predict only
    python benchmarks/bench_latency.py --scale 0 --measures tokens,crfsuite
"""

import argparse
import gc
import math
import os
import random
import statistics
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _workloads as wl  # noqa: E402

wl.limit_blas_threads(os.environ)


def add_random_features(X, n_extra, n_values, seed):
    """Copies of the token dicts of X with ``n_extra`` features ``rand<i>`` each."""
    rng = random.Random(seed)
    return [[dict(tok, **{f"rand{i}": str(rng.randrange(n_values)) for i in range(n_extra)})
             for tok in seq] for seq in X]


def fit_both(X, y, max_iter):
    models = {}
    for lib in wl.LIBS:
        est = wl.make_estimator(lib, max_iter=max_iter)
        seconds, _ = wl.timed(wl.fit_estimator, lib, est, X, y)
        models[lib] = est
        print(f"  fitted {wl.LIB_NAMES[lib]} in {seconds:.1f} s", flush=True)
    return models


#: what each measure calls on one sentence ``x``, per library (n-best: ours only,
#: sklearn-crfsuite has none)
CALLS = {
    "predict": {"ours": lambda est, x: est.predict([x]),
                "theirs": lambda est, x: est.predict_single(x)},
    "marginals": {"ours": lambda est, x: est.predict_marginals([x]),
                  "theirs": lambda est, x: est.predict_marginals_single(x)},
    "nbest": {"ours": lambda est, x: est.predict_nbest([x], n=3)},
}
CALL_NAMES = {
    "predict": ("predict([x])", "predict_single"),
    "marginals": ("predict_marginals([x])", "predict_marginals_single"),
    "nbest": ("predict_nbest([x], n=3)", None),
}


def latencies(models, X_test, repeats, measure="predict"):
    """Per sentence, the median over ``repeats`` passes of each library's latency (s)
    for ``measure`` (a key of :data:`CALLS`)."""
    calls = {lib: (lambda x, f=f, est=models[lib]: f(est, x))
             for lib, f in CALLS[measure].items()}
    libs = [lib for lib in wl.LIBS if lib in calls]
    for x in X_test[:50]:  # warm-up: opens CRFsuite's tagger, loads our kernels
        for lib in libs:
            calls[lib](x)
    times = {lib: [[] for _ in X_test] for lib in libs}
    clock = time.perf_counter
    for r in range(repeats):
        for i, x in enumerate(X_test):
            for lib in wl.alternate(libs, r + i):
                call = calls[lib]
                t0 = clock()
                call(x)
                times[lib][i].append(clock() - t0)
    return {lib: [statistics.median(ts) for ts in per] for lib, per in times.items()}


def crfsuite_items(x):
    """A sentence of feature dicts as CRFsuite attributes, as sklearn-crfsuite
    gives them to its tagger: ``"key:value"`` for a str value, else
    ``(key, float(value))``."""
    return [[f"{k}:{v}" if isinstance(v, str) else (k, float(v)) for k, v in token.items()]
            for token in x]


def route_calls(measure, models, sentences, X, tmp):
    """``{contender: call(i)}`` of a serving route (``tokens`` or ``crfsuite``),
    the reference (sklearn-crfsuite) first, on sentence ``i`` (raw tokens
    ``sentences[i]``, feature dicts ``X[i]``)."""
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer, load_crfsuite, load_model, save_model

    theirs = models["theirs"]
    if measure == "tokens":
        pipe = make_pipeline(SequenceFeaturizer(), models["ours"])
        path = os.path.join(tmp, f"pipe{len(os.listdir(tmp))}.skcrf")
        save_model(pipe, path)
        loaded = load_model(path)
        return {
            "word2features + predict_single":
                lambda i: theirs.predict_single(wl.tutorial_features(sentences[i])),
            "Pipeline predict([sentence])": lambda i: pipe.predict([sentences[i]]),
            "load_model file predict([sentence])": lambda i: loaded.predict([sentences[i]]),
            "the same two steps, no Pipeline":
                lambda i: models["ours"].predict(pipe[0].transform([sentences[i]])),
            "sklearn Pipeline floor (two steps that do nothing)":
                pipeline_floor(sentences),
        }
    if measure == "crfsuite":
        calls = {"predict_single(x)": lambda i: theirs.predict_single(X[i])}
        migrated = load_crfsuite(theirs.modelfile.name)
        calls["load_crfsuite file predict([x])"] = lambda i: migrated.predict([X[i]])
        calls["item-lookup floor"] = item_lookup_floor(migrated, X)
        try:
            import crfs
        except ImportError:
            print("  (crfs is not installed: not measured)", flush=True)
        else:
            model = crfs.Model.open(theirs.modelfile.name)
            items = [crfsuite_items(x) for x in X]  # its input form, made beforehand
            calls["crfs Model.tag(items)"] = lambda i: model.tag(items[i])
        return calls
    raise ValueError(f"unknown route {measure!r}")


def pipeline_floor(sentences):
    """``floor(i)``: ``Pipeline.predict([sentences[i]])`` of a fitted Pipeline
    of a transformer that returns X and a predictor that returns a constant:
    what scikit-learn's Pipeline costs per call (its ``check_is_fitted`` of
    the Pipeline, the steps' tags, the loop), the floor of any Pipeline."""
    from sklearn.base import BaseEstimator, TransformerMixin
    from sklearn.pipeline import make_pipeline

    class Passthrough(TransformerMixin, BaseEstimator):
        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def transform(self, X):
            return X

    class Constant(BaseEstimator):
        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def predict(self, X):
            return [["O"] * len(x) for x in X]

    pipe = make_pipeline(Passthrough(), Constant()).fit(sentences[:1], None)
    return lambda i: pipe.predict([sentences[i]])


def item_lookup_floor(tagger, X):
    """``floor(i)``: each (key, value) item of the dicts of ``X[i]`` looked up
    in the tagger's memo (``memo[key][value]``, C-level ``dict.get`` calls,
    into an array), and nothing else: the floor of a Python encoder of
    feature dicts."""
    from itertools import chain, repeat

    import numpy as np

    tagger.predict(X[:50])  # a model read from a file: its memo is derived at a first miss
    memo = tagger.vectorizer_._vocabulary(False).pairs
    none = {}

    def floor(i):
        tokens = X[i]
        return np.fromiter(map(dict.get, map(memo.get, chain.from_iterable(tokens), repeat(none)),
                               chain.from_iterable(map(dict.values, tokens)), repeat(-1)),
                           np.int64, sum(map(len, tokens)))

    return floor


def route_latencies(calls, n, repeats):
    """Per contender of ``calls`` and per sentence ``i < n``, the median over
    ``repeats`` passes of the time of ``call(i)``, the contenders rotating
    sentence by sentence."""
    names = list(calls)
    for i in range(min(n, 50)):  # warm-up
        for name in names:
            calls[name](i)
    times = {name: [[] for _ in range(n)] for name in names}
    clock = time.perf_counter
    for r in range(repeats):
        for i in range(n):
            for name in wl.alternate(names, r + i):
                call = calls[name]
                t0 = clock()
                call(i)
                times[name][i].append(clock() - t0)
    return {name: [statistics.median(ts) for ts in per] for name, per in times.items()}


def report_route(model, measure, lat, n_attributes):
    """Print each contender's p50 and p99 against the reference (the first);
    the rows for the final table."""
    names = list(lat)
    ref = names[0]
    ref50, ref99 = percentile(lat[ref], 50), percentile(lat[ref], 99)
    print(f"  {model}, {measure}: {n_attributes} attributes; {ref}: p50 {ref50 * 1e6:.0f} µs, "
          f"p99 {ref99 * 1e6:.0f} µs", flush=True)
    rows = []
    for name in names[1:]:
        p50, p99 = percentile(lat[name], 50), percentile(lat[name], 99)
        per_sentence = statistics.median(o / t for o, t in zip(lat[name], lat[ref]))
        print(f"    {name}: p50 {p50 * 1e6:.0f} µs, p99 {p99 * 1e6:.0f} µs; "
              f"ratio {p50 / ref50:.2f} / {p99 / ref99:.2f} (p50 / p99), median "
              f"per-sentence ratio {per_sentence:.2f}", flush=True)
        rows.append({"model": model, "measure": measure, "n_attributes": n_attributes,
                     "call": f"{name} / {ref}", "ours_us": p50 * 1e6,
                     "ours_p99_us": p99 * 1e6, "theirs_us": ref50 * 1e6,
                     "theirs_p99_us": ref99 * 1e6, "ratio": p50 / ref50,
                     "ratio_p99": p99 / ref99, "per_sentence_ratio": per_sentence})
    return rows


def percentile(values, q):
    """The ``q``-th percentile (nearest rank) of ``values``."""
    values = sorted(values)
    return values[min(len(values), max(1, math.ceil(q / 100 * len(values)))) - 1]


def report(name, lat, n_attributes, measure="predict"):
    ours_name, theirs_name = CALL_NAMES[measure]
    ours, ours99 = percentile(lat["ours"], 50), percentile(lat["ours"], 99)
    row = {"model": name, "measure": measure, "n_attributes": n_attributes,
           "ours_us": ours * 1e6, "ours_p99_us": ours99 * 1e6}
    if "theirs" not in lat:
        print(f"  {name}: median {ours_name} {ours * 1e6:.0f} µs, p99 {ours99 * 1e6:.0f} µs "
              "(sklearn-crfsuite has none)", flush=True)
        return row
    theirs, theirs99 = percentile(lat["theirs"], 50), percentile(lat["theirs"], 99)
    per_sentence = statistics.median(o / t for o, t in zip(lat["ours"], lat["theirs"]))
    print(f"  {name}: {n_attributes} attributes; median {ours_name} {ours * 1e6:.0f} µs, "
          f"{theirs_name} {theirs * 1e6:.0f} µs; ratio of medians {ours / theirs:.2f}, "
          f"median per-sentence ratio {per_sentence:.2f}", flush=True)
    print(f"    p99: {ours_name} {ours99 * 1e6:.0f} µs, {theirs_name} "
          f"{theirs99 * 1e6:.0f} µs; ratio of p99s {ours99 / theirs99:.2f}", flush=True)
    row.update(theirs_us=theirs * 1e6, theirs_p99_us=theirs99 * 1e6, ratio=ours / theirs,
               ratio_p99=ours99 / theirs99, per_sentence_ratio=per_sentence)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--n-train", type=int, default=None)
    parser.add_argument("--n-test", type=int, default=None)
    parser.add_argument("--measures", default="predict,marginals,nbest,tokens,crfsuite",
                        help="comma-separated: predict, marginals, nbest, tokens, crfsuite")
    parser.add_argument("--scale", type=int, default=10,
                        help="attribute multiplier of the big model (0: skip it)")
    args = parser.parse_args(argv)
    info = wl.machine_info()
    print(f"# bench_latency — {info['date']}; {info['cpu']}; nproc {info['nproc']}; "
          f"load average {' '.join(f'{x:.2f}' for x in info['load_average'])}")
    print("command: " + " ".join([sys.executable, *sys.argv]), flush=True)
    data = wl.load_ner(args.n_train, args.n_test)
    lengths = sorted(len(s) for s in data.X_test)
    print(f"{len(data.X_test)} test sentences, median length {statistics.median(lengths)}")
    warnings.simplefilter("ignore")
    results = []
    print("== fitting the base model (tutorial features)")
    fitted = {"base": fit_both(data.X_train, data.y_train, args.max_iter)}
    base_attrs = fitted["base"]["ours"].vectorizer_.n_attributes_
    if args.scale > 1:
        n_extra = args.scale - 1
        print(f"== fitting the {args.scale}x model: + {n_extra} random features a "
              "training token")
        X_train = add_random_features(data.X_train, n_extra, base_attrs, seed=0)
        fitted[f"{args.scale}x"] = fit_both(X_train, data.y_train, args.max_iter)
        del X_train
    # a serving process holds the models, not the training corpus: drop it, so
    # that the garbage collector's full passes do not walk millions of dicts
    X_test, sentences = data.X_test, data.test_sentences
    del data
    gc.collect()
    tmp = tempfile.mkdtemp(prefix="bench_latency_")
    print("== latencies (the same test sentences for every model)")
    for measure in args.measures.split(","):
        for name, models in fitted.items():
            n_attributes = models["ours"].vectorizer_.n_attributes_
            if measure in ("tokens", "crfsuite"):
                calls = route_calls(measure, models, sentences, X_test, tmp)
                lat = route_latencies(calls, len(X_test), args.repeats)
                results.extend(report_route(name, measure, lat, n_attributes))
                continue
            lat = latencies(models, X_test, args.repeats, measure)
            results.append(report(name, lat, n_attributes, measure))
    print("\n| model | call (ours / theirs) | attributes | sklearn-crfsuite p50 / p99 (µs) "
          "| sklearn-crf p50 / p99 (µs) | ours/theirs p50 / p99 |")
    print("|---|---|---:|---:|---:|---:|")
    for r in results:
        if "call" in r:
            print(f"| {r['model']} | {r['call']} | {r['n_attributes']:,} | "
                  f"{r['theirs_us']:.0f} / {r['theirs_p99_us']:.0f} | "
                  f"{r['ours_us']:.0f} / {r['ours_p99_us']:.0f} | "
                  f"{r['ratio']:.2f} / {r['ratio_p99']:.2f} |")
            continue
        ours_name, theirs_name = CALL_NAMES[r["measure"]]
        if "theirs_us" in r:
            theirs = f"{r['theirs_us']:.0f} / {r['theirs_p99_us']:.0f}"
            ratio = f"{r['ratio']:.2f} / {r['ratio_p99']:.2f}"
        else:
            theirs = ratio = "–"
        print(f"| {r['model']} | {ours_name} / {theirs_name or '–'} | "
              f"{r['n_attributes']:,} | {theirs} | "
              f"{r['ours_us']:.0f} / {r['ours_p99_us']:.0f} | {ratio} |")
    return results


if __name__ == "__main__":
    main()
