"""SequenceFeaturizer: its generated builders (``exec``) against plain loops (issue 9).

The featurizer builds the feature dicts of a sentence with small functions
generated as Python source and ``exec``-ed (one per layout: neighbours present,
first/last token). This script times ``transform`` on CoNLL-2002 esp.train
with those builders and with the same dicts built by plain loops over the
precomputed key lists (``featurize_sentence_plain`` below), checks that both
give equal output (same dicts, same key order), and prints the ratio::

    python benchmarks/bench_featurizer.py
    python benchmarks/bench_featurizer.py --repeat 7 --n-train 4000

``e2e``: raw tokens in, fitted model out (issue 20, item 3), each route in a
fresh child process, the routes alternating, ``--repeat`` rounds:

  encoded  make_pipeline(SequenceFeaturizer(output="encoded"), CRFTagger()).fit
  dicts    make_pipeline(SequenceFeaturizer(), CRFTagger()).fit (the default featurizer:
           its FeatureDicts, which the tagger fits on from the tokens, unread)
  word2features  the sklearn-crfsuite tutorial's word2features (_workloads.tutorial_features)
           then CRFTagger().fit on those dicts (a migrated user's own features)
  crfsuite the same word2features then sklearn_crfsuite.CRF.fit

(the tutorial's features and hyperparameters, ``max_iterations``/``max_iter``
``--max-iter``, so that the fit does not drown the rest). Per route: the
median wall time of the whole fit, of the featurize + encode phase alone
(timed again after the fit, in the same child: for sklearn-crfsuite the
Python feature dicts only, its own encoding being inside ``CRF.fit``), and
the child's peak RSS (``VmHWM``), absolute and above the RSS after the
imports; per token of esp.train::

    python benchmarks/bench_featurizer.py e2e --max-iter 10
    python benchmarks/bench_featurizer.py e2e --quick      # smoke run
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

#: featurizer settings measured: the default, and a wide one with shapes and a column
SETTINGS = {
    "default (tutorial features)": {},
    "window=2, shape, prefixes, all neighbours": dict(
        window=2, shape=True, prefixes=(1, 2), neighbor_features="all"
    ),
    "window=1, POS column": dict(columns=("pos",)),
}


def _plain_keys(plan):
    """Per offset: the (index in the word-feature tuple, feature name) pairs of the
    word features and the (column, feature name) pairs, computed once per plan."""
    keys = getattr(plan, "plain_keys", None)
    if keys is None:
        w = plan.window
        keys = {}
        for o in [*range(-w, 0), 0, *range(1, w + 1)]:
            prefix = f"{o:+d}:" if o else ""
            mask = [True] * len(plan.word_keys) if o == 0 else plan.neighbor_mask
            names = [prefix + key for key, used in zip(plan.word_keys, mask) if used]
            index = [k for k, used in enumerate(mask) if used]
            columns = [(c, prefix + name) for c, (name, _) in enumerate(plan.columns)]
            keys[o] = (names, index, all(mask), columns)
        plan.plain_keys = keys
    return keys


def featurize_sentence_plain(cols, plan, cache):
    """The feature dicts of one sentence by plain loops (same keys, same order)."""
    words = cols[0]
    n = len(words)
    if n == 0:
        return []
    rows = [cache[word] for word in words]
    extra = [cols[j] for _, j in plan.columns]
    w = plan.window
    keys = _plain_keys(plan)

    def add(d, o, j):
        names, index, full, columns = keys[o]
        row = rows[j]
        d.update(zip(names, row if full else [row[k] for k in index]))
        for c, name in columns:
            d[name] = extra[c][j]

    out = []
    for i in range(n):
        d = {"bias": 1.0} if plan.bias else {}
        add(d, 0, i)
        for o in range(1, min(i, w) + 1):
            add(d, -o, i - o)
        if i == 0 and plan.bos_eos:
            d["BOS"] = True
        for o in range(1, min(n - 1 - i, w) + 1):
            add(d, o, i + o)
        if i == n - 1 and plan.bos_eos:
            d["EOS"] = True
        out.append(d)
    return out


def best_time(func, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


ROUTES = ("encoded", "dicts", "word2features", "crfsuite")


def e2e_child(route, n_train, max_iter):
    """One route in this (fresh) process: the fit, then the phase alone; a dict."""
    import gc
    import warnings

    import _workloads as wl

    lib = "theirs" if route == "crfsuite" else "ours"
    estimator = wl.make_estimator(lib, max_iter=max_iter)  # imports the library
    if lib == "ours":
        from sklearn.pipeline import make_pipeline

        from sklearn_crf import SequenceFeaturizer, SequenceVectorizer
    sentences, tags = wl.read_conll2002("train", n_train)
    n_tokens = sum(map(len, sentences))
    gc.collect()
    rss_base = wl.peak_rss_mb()

    def featurize_encode():
        if route == "crfsuite":
            return [wl.tutorial_features(s) for s in sentences]
        if route == "word2features":
            return SequenceVectorizer().fit_encode([wl.tutorial_features(s) for s in sentences])
        if route == "dicts":
            return SequenceVectorizer().fit_encode(SequenceFeaturizer().transform(sentences))
        return SequenceFeaturizer(output="encoded").fit_transform(sentences)

    start = time.perf_counter()
    if route == "crfsuite":
        estimator.fit([wl.tutorial_features(s) for s in sentences], tags)
    elif route == "word2features":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit([wl.tutorial_features(s) for s in sentences], tags)
    else:
        output = "encoded" if route == "encoded" else "dicts"
        model = make_pipeline(SequenceFeaturizer(output=output), estimator)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(sentences, tags)
    fit_s = time.perf_counter() - start
    peak = wl.peak_rss_mb()
    gc.collect()
    start = time.perf_counter()
    featurize_encode()
    phase_s = time.perf_counter() - start
    return {"fit_s": fit_s, "phase_s": phase_s, "peak_rss_mb": peak,
            "base_rss_mb": rss_base, "n_tokens": n_tokens,
            "n_iter": wl.n_iterations(lib, estimator)}


def e2e(args):
    import json
    import subprocess

    import _workloads as wl

    env = wl.child_env()
    if args.max_iter is None:
        args.max_iter = 3 if args.quick else 10
    if args.quick:
        args.n_train, args.repeat = args.n_train or 300, 1

    def run(route):
        cmd = [sys.executable, os.path.abspath(__file__), "e2e-child", "--route", route,
               "--max-iter", str(args.max_iter)]
        if args.n_train:
            cmd += ["--n-train", str(args.n_train)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"{route} failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])

    print(f"command: {' '.join(sys.argv)}")
    run("encoded")  # warm numba's cache: no compilation in the timed children
    results = {route: [] for route in ROUTES}
    for r in range(args.repeat):
        for route in wl.alternate(ROUTES, r):
            results[route].append(run(route))
    n_tok = results["encoded"][0]["n_tokens"]
    print(f"esp.train: {n_tok} tokens; {args.max_iter} iterations; median of "
          f"{args.repeat} child processes per route, alternating")
    print("| route | fit from tokens (s) | µs/token | featurize + encode (s) | µs/token "
          "| peak RSS (MB) | above imports (MB) | bytes/token above imports |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    med = {}
    for route in ROUTES:
        rows = results[route]
        m = {key: wl.median([row[key] for row in rows])
             for key in ("fit_s", "phase_s", "peak_rss_mb", "base_rss_mb")}
        m["above"] = wl.median([row["peak_rss_mb"] - row["base_rss_mb"] for row in rows])
        med[route] = m
        print(f"| {route} | {m['fit_s']:.3f} | {1e6 * m['fit_s'] / n_tok:.2f} "
              f"| {m['phase_s']:.3f} | {1e6 * m['phase_s'] / n_tok:.2f} "
              f"| {m['peak_rss_mb']:.0f} | {m['above']:.0f} "
              f"| {1e6 * m['above'] / n_tok:.0f} |", flush=True)
    for route in ("encoded", "dicts", "word2features"):
        c = med["crfsuite"]
        print(f"{route} / crfsuite: fit from tokens {med[route]['fit_s'] / c['fit_s']:.2f}x, "
              f"peak RSS {med[route]['peak_rss_mb'] / c['peak_rss_mb']:.2f}x")
    e, d = med["encoded"], med["dicts"]
    print(f"encoded / dicts: fit from tokens {e['fit_s'] / d['fit_s']:.2f}x, featurize + "
          f"encode {e['phase_s'] / d['phase_s']:.2f}x, peak RSS "
          f"{e['peak_rss_mb'] / d['peak_rss_mb']:.2f}x (above imports "
          f"{e['above'] / d['above']:.2f}x)")


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("e2e", "e2e-child"):
        parser = argparse.ArgumentParser(description="raw tokens -> fitted model")
        parser.add_argument("mode")
        parser.add_argument("--route", choices=ROUTES)
        parser.add_argument("--repeat", type=int, default=3)
        parser.add_argument("--n-train", type=int, default=None)
        parser.add_argument("--max-iter", type=int, default=None)
        parser.add_argument("--quick", action="store_true")
        args = parser.parse_args()
        if args.mode == "e2e-child":
            import json

            print(json.dumps(e2e_child(args.route, args.n_train, args.max_iter)))
        else:
            e2e(args)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n-train", type=int, default=None)
    args = parser.parse_args()

    from sklearn_crf._features import featurizer as _featurizer
    from sklearn_crf._features.featurizer import SequenceFeaturizer
    from sklearn_crf.datasets import load_conll2002

    data = load_conll2002("train", n_sentences=args.n_train)
    words = data.sentences
    n_tokens = sum(map(len, words))
    print(f"command: {' '.join(sys.argv)}")
    print(f"esp.train: {len(words)} sentences, {n_tokens} tokens; best of {args.repeat}")
    print("| features | generated (s) | plain loops (s) | plain / generated |")
    print("|---|---:|---:|---:|")
    generated = _featurizer._featurize_sentence
    for name, params in SETTINGS.items():
        X = words
        if "columns" in params:
            X = [list(zip(s, tags)) for s, tags in zip(words, data.tags)]  # a stand-in column
        featurizer = SequenceFeaturizer(**params)
        t_gen, out_gen = best_time(lambda: featurizer.transform(X), args.repeat)
        _featurizer._featurize_sentence = featurize_sentence_plain
        try:
            t_plain, out_plain = best_time(lambda: featurizer.transform(X), args.repeat)
        finally:
            _featurizer._featurize_sentence = generated
        same = out_gen == out_plain and all(
            list(a) == list(b) for sa, sb in zip(out_gen, out_plain) for a, b in zip(sa, sb)
        )
        if not same:
            raise SystemExit(f"{name}: the two implementations disagree")
        print(f"| {name} | {t_gen:.3f} | {t_plain:.3f} | {t_plain / t_gen:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
