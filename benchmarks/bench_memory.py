"""Peak memory and wall time of CRFTagger on a large synthetic corpus.

A corpus of ``--n-tokens`` tokens (1,000,000 by default) in sequences of 20-40
tokens, each token a dict of about ``--attrs-per-token`` (20) attributes drawn
from a Zipf distribution over ``--n-attributes`` (500,000) attribute names, with
``--n-labels`` (9) labels from a sticky Markov chain. A quarter of each token's
attributes is drawn from the attributes that indicate its label (attribute ids
congruent to the label), so the task is learnable; the rest is noise.

The script reports, after each stage (import and kernel warm-up, building the
corpus, vectorizing it alone, fit, predict), the wall time, the resident set size (RSS, from
``/proc/self/statm``) and the peak RSS so far (``resource.getrusage``
``ru_maxrss``), and the sizes of the arrays behind the fit, so that one can
tell how much memory the Python corpus takes and how much the estimator adds::

    python benchmarks/bench_memory.py                    # the full size (a few minutes)
    python benchmarks/bench_memory.py --quick            # smoke test, a few seconds
    python benchmarks/bench_memory.py --json memory.json

Training memory must not depend on the thread count; compare the peaks of::

    python benchmarks/bench_memory.py --n-jobs 1
    python benchmarks/bench_memory.py --n-jobs 2
    NUMBA_NUM_THREADS=32 python benchmarks/bench_memory.py --n-jobs 32   # as on 32 cores

Run it on an otherwise idle machine: the wall times (not the memory) suffer
from other jobs.

``--routes`` measures instead the peak RSS of *encoding* a corpus by two
routes, each in a fresh process (peak RSS is per process): CoNLL-2002
esp.train repeated ``--repeats`` times (4: about 1.06M tokens; each repeat
after the first renames a seventh of the words, deterministically, so that the
vocabulary grows too), written to a temporary CoNLL file, then

  in memory  read_conll(file) → SequenceFeaturizer().transform (every feature
             dict at once) → SequenceVectorizer().fit_encode, labels as lists
  streamed   iter_conll(file, chunk_size) → the featurizer per chunk →
             encode_stream(..., directory=..., label_codes=True): each chunk's
             arrays appended to a corpus store, memory-mapped back

and checks that both give bitwise the same arrays::

    python benchmarks/bench_memory.py --routes                 # 4 repeats
    python benchmarks/bench_memory.py --routes --repeats 1 --chunk-size 500
"""

import argparse
import gc
import json
import os
import platform
import resource
import sys
import time
import warnings

import numpy as np

MIB = 1024 * 1024


def rss_mib():
    """Current resident set size of this process, in MiB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / MIB


def peak_rss_mib():
    """Peak resident set size of this process so far, in MiB (Linux: ru_maxrss in KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / MIB


def zipf_sampler(n, exponent, rng):
    """A function drawing ``size`` ranks in [0, n) with P(k) ∝ 1 / (k + 1)^exponent."""
    cdf = np.cumsum(1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent)
    cdf /= cdf[-1]

    def draw(size):
        return np.minimum(np.searchsorted(cdf, rng.random(size)), n - 1)

    return draw


def label_chain(n_labels, rng, stay=0.7):
    """A sticky Markov chain over the labels: (initial distribution, transition matrix)."""
    trans = rng.dirichlet(np.ones(n_labels), size=n_labels) * (1 - stay)
    trans[np.arange(n_labels), np.arange(n_labels)] += stay
    return np.full(n_labels, 1.0 / n_labels), trans


def build_corpus(args, rng):
    """X (list of lists of dicts) and y (list of lists of str), built chunk by chunk.

    Every token dict shares its keys (the attribute-name strings) and its value
    (one float object) with the others, so that a token costs one dict.
    """
    n_attr, L, k = args.n_attributes, args.n_labels, args.attrs_per_token
    names = [f"attr{i}" for i in range(n_attr)]
    labels = [f"L{j}" for j in range(L)]
    one = 1.0
    noise = zipf_sampler(n_attr, args.zipf, rng)
    per_label = -(-n_attr // L)
    signal = zipf_sampler(per_label, args.zipf, rng)
    k_signal = max(1, k // 4)
    start, trans = label_chain(L, rng)
    cum_trans = np.cumsum(trans, axis=1)
    X, y = [], []
    n_done = 0
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of new containers: the cyclic GC would rescan them over and over
    try:
        while n_done < args.n_tokens:
            # one chunk of sequences, ~50,000 tokens, vectorized
            lengths = rng.integers(args.min_len, args.max_len + 1, size=2000)
            lengths = lengths[np.cumsum(lengths) <= max(args.n_tokens - n_done, lengths[0])]
            if len(lengths) == 0:
                lengths = np.array([args.n_tokens - n_done])
            lengths[-1] = min(lengths[-1], args.n_tokens - n_done - lengths[:-1].sum())
            n = int(lengths.sum())
            tags = np.empty(n, dtype=np.int64)
            u = rng.random(n)
            pos = 0
            for length in lengths:
                tags[pos] = rng.choice(L, p=start)
                for t in range(pos + 1, pos + length):
                    tags[t] = min(np.searchsorted(cum_trans[tags[t - 1]], u[t]), L - 1)
                pos += length
            attrs = np.empty((n, k), dtype=np.int64)
            attrs[:, :k_signal] = np.minimum(
                signal((n, k_signal)) * L + tags[:, None], n_attr - 1
            )
            attrs[:, k_signal:] = noise((n, k - k_signal))
            attr_rows = attrs.tolist()
            tag_list = tags.tolist()
            pos = 0
            for length in lengths.tolist():
                X.append([dict.fromkeys([names[a] for a in row], one)
                          for row in attr_rows[pos:pos + length]])
                y.append([labels[t] for t in tag_list[pos:pos + length]])
                pos += length
            n_done += n
            del attrs, attr_rows, tag_list, tags, u
    finally:
        if gc_was_enabled:
            gc.enable()
    gc.collect()
    gc.freeze()  # the corpus lives to the end: keep the GC from traversing it again
    return X, y


def stage(report, name, start, **extra):
    gc.collect()
    entry = {
        "stage": name,
        "seconds": round(time.perf_counter() - start, 2),
        "rss_mib": round(rss_mib(), 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        **extra,
    }
    report["stages"].append(entry)
    print(
        f"{name:<24} {entry['seconds']:>8.1f} s   RSS {entry['rss_mib']:>8.1f} MiB   "
        f"peak RSS {entry['peak_rss_mib']:>8.1f} MiB",
        *(f"  {k}={v}" for k, v in extra.items()),
        flush=True,
    )
    return entry


def fitted_array_sizes(crf, X):
    """MiB of the arrays the fit keeps or builds (its vectorized corpus rebuilt here)."""
    corpus = crf.vectorizer_.encode(X)
    layout = crf.layout_
    sizes = {
        "EncodedCorpus (tok_ptr, tok_attr, tok_val, seq_ptr, zero entries)": corpus.nbytes,
        "layout (attr_ptr, attr_label, transitions)": sum(
            a.nbytes for a in (layout.attr_ptr, layout.attr_label, layout.trans_from,
                               layout.trans_to)
        ),
        "coef_": crf.coef_.nbytes,
        "dense (n_attributes, L) weights, one copy": crf.vectorizer_.n_attributes_
        * layout.n_labels * 8,
    }
    return {k: round(v / MIB, 1) for k, v in sizes.items()}


def repeated_conll(path, repeats):
    """esp.train ``repeats`` times into the CoNLL file ``path``; in repeat r > 0
    the words at positions ≡ r (mod 7) of each sentence get the suffix ``~r``.
    Returns the number of tokens."""
    from sklearn_crf import write_conll
    from sklearn_crf.datasets import load_conll2002

    data = load_conll2002("train")
    n_tokens = 0
    with open(path, "w", encoding="utf-8") as f:
        for r in range(repeats):
            sentences = [[w + f"~{r}" if r and t % 7 == r % 7 else w
                          for t, w in enumerate(sent)] for sent in data.sentences]
            write_conll(f, sentences, data.tags)
            f.write("\n")
            n_tokens += sum(map(len, sentences))
    return n_tokens


def encode_route(route, path, directory, chunk_size, result):
    """One route in this process: its peak RSS and the arrays' digest."""
    import hashlib

    from sklearn_crf import SequenceFeaturizer, SequenceVectorizer, read_conll

    before = peak_rss_mib()
    featurizer = SequenceFeaturizer()
    start = time.process_time()
    if route == "memory":
        data = read_conll(path)
        X = featurizer.transform(data.sentences)
        corpus, y = SequenceVectorizer().fit_encode(X), data.tags
        n_labels = sum(map(len, y))
    else:
        from sklearn_crf._io.conll import iter_conll
        from sklearn_crf._features.streaming import encode_stream

        batches = ((featurizer.transform(chunk.sentences), chunk.tags)
                   for chunk in iter_conll(path, chunk_size=chunk_size))
        corpus, y = encode_stream(batches, directory=directory, label_codes=True)
        n_labels = len(y.codes)
    digest = hashlib.sha256()
    for name in ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr"):
        digest.update(np.ascontiguousarray(getattr(corpus, name)).tobytes())
    digest.update("\n".join(corpus.vectorizer.feature_names_).encode())
    with open(result, "w") as f:
        json.dump({"route": route, "peak_rss_mib": round(peak_rss_mib(), 1),
                   "peak_rss_before_mib": round(before, 1),
                   "cpu_seconds": round(time.process_time() - start, 1),
                   "tokens": int(corpus.n_tokens), "labels": n_labels,
                   "attributes": int(corpus.n_attributes),
                   "corpus_mib": round(corpus.nbytes / MIB, 1),
                   "sha256": digest.hexdigest()}, f)


def compare_routes(args):
    """Both routes of ``--routes``, each in a child process; a table of their peaks."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.conll")
        n_tokens = repeated_conll(path, args.repeats)
        print(f"esp.train x {args.repeats}: {n_tokens} tokens, "
              f"{os.path.getsize(path) / MIB:.0f} MiB of CoNLL text; chunks of "
              f"{args.chunk_size} sentences", flush=True)
        results = []
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))  # this checkout
        for route in ("memory", "stream"):
            out = os.path.join(tmp, f"{route}.json")
            subprocess.run([sys.executable, os.path.abspath(__file__), "--route", route,
                            path, os.path.join(tmp, "store"), str(args.chunk_size), out],
                           check=True, env=env)
            with open(out) as f:
                results.append(json.load(f))
    print("\n| route | peak RSS (MiB) | at start (MiB) | encoded corpus (MiB) | attributes |"
          " CPU s |\n|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['route']} | {r['peak_rss_mib']:.0f} | {r['peak_rss_before_mib']:.0f} | "
              f"{r['corpus_mib']:.0f} | {r['attributes']} | {r['cpu_seconds']:.0f} |")
    same = results[0]["sha256"] == results[1]["sha256"]
    print(f"\nbitwise the same arrays and vocabulary: {'yes' if same else 'NO'}; "
          f"streamed / in-memory peak RSS: "
          f"{results[1]['peak_rss_mib'] / results[0]['peak_rss_mib']:.2f}")
    if not same:
        raise SystemExit("the routes differ")
    return results


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--route"]:  # a child of --routes
        route, path, directory, chunk_size, result = argv[1:6]
        return encode_route(route, path, directory, int(chunk_size), result)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--routes", action="store_true",
                        help="peak RSS of in-memory vs streamed encoding (see the docstring)")
    parser.add_argument("--repeats", type=int, default=4,
                        help="--routes: esp.train this many times (default 4)")
    parser.add_argument("--chunk-size", type=int, default=2000,
                        help="--routes: sentences per chunk of the streamed route")
    parser.add_argument("--n-tokens", type=int, default=1_000_000)
    parser.add_argument("--n-attributes", type=int, default=500_000)
    parser.add_argument("--attrs-per-token", type=int, default=20)
    parser.add_argument("--n-labels", type=int, default=9)
    parser.add_argument("--min-len", type=int, default=20)
    parser.add_argument("--max-len", type=int, default=40)
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent (default 1.0)")
    parser.add_argument("--max-iter", type=int, default=50)
    parser.add_argument("--c1", type=float, default=0.1)
    parser.add_argument("--c2", type=float, default=0.1)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--hashing", type=int, default=None,
                        help="CRFTagger(hashing=N): hash attributes into N slots")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 50,000 tokens, 25,000 attributes, 5 iterations")
    parser.add_argument("--json", help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.routes:
        return compare_routes(args)
    if args.quick:
        args.n_tokens, args.n_attributes, args.max_iter = 50_000, 25_000, 5

    report = {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "args": vars(args),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
        "stages": [],
    }
    print(report["command"])
    print(f"n_jobs {args.n_jobs}; NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}")
    print(f"load average {report['machine']['load_average']}, {os.cpu_count()} CPUs")
    if report["machine"]["load_average"][0] > 0.5:
        print("warning: other jobs are running; wall times will suffer", flush=True)

    start = time.perf_counter()
    stage(report, "start", start)
    from sklearn.exceptions import ConvergenceWarning

    from sklearn_crf import CRFTagger, __version__

    report["sklearn_crf"] = __version__
    # load (or compile) the numba kernels on a toy problem, so that their memory is
    # counted here and not in the fit
    toy = [[{"a": 1.0}, {"b": 1.0}], [{"a": 1.0}]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        CRFTagger(max_iter=5, n_jobs=args.n_jobs).fit(toy, [["x", "y"], ["x"]]).predict(toy)
    stage(report, "imports + kernels", start)

    start = time.perf_counter()
    X, y = build_corpus(args, np.random.default_rng(args.seed))
    n_tokens = sum(len(s) for s in X)
    corpus = stage(report, "build corpus", start, sequences=len(X), tokens=n_tokens)

    # the vectorizing pass alone (fit repeats it): how far its arrays raise the peak
    from sklearn_crf import SequenceVectorizer

    start = time.perf_counter()
    vec_args = {} if args.hashing is None else {"n_features": args.hashing}
    encoded = SequenceVectorizer(**vec_args).fit_encode(X)
    stage(report, "vectorize only", start, array_mib=round(encoded.nbytes / MIB, 1))
    del encoded

    params = dict(c1=args.c1, c2=args.c2, max_iter=args.max_iter, n_jobs=args.n_jobs)
    if args.hashing is not None:
        params["hashing"] = args.hashing
    crf = CRFTagger(**params)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf.fit(X, y)
    fit = stage(
        report, "fit", start, iterations=crf.n_iter_,
        attributes=crf.vectorizer_.n_attributes_, parameters=int(crf.layout_.n_params),
        nonzero=int(np.count_nonzero(crf.coef_)),
    )

    start = time.perf_counter()
    pred = crf.predict(X)
    accuracy = float(np.mean([p == t for ps, ts in zip(pred, y) for p, t in zip(ps, ts)]))
    del pred
    stage(report, "predict (training set)", start, train_accuracy=round(accuracy, 4))

    sizes = fitted_array_sizes(crf, X)
    report["array_mib"] = sizes
    corpus_mib = corpus["rss_mib"] - report["stages"][1]["rss_mib"]
    fit_extra = fit["peak_rss_mib"] - corpus["rss_mib"]
    report["summary"] = {
        "corpus_mib": round(corpus_mib, 1),
        "fit_peak_above_corpus_mib": round(fit_extra, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    print("\narrays of the fit (MiB):")
    for k, v in sizes.items():
        print(f"  {k:<55} {v:>8.1f}")
    print(
        f"\nthe Python corpus (lists of dicts) takes {corpus_mib:.0f} MiB of RSS; the fit "
        f"peaks {fit_extra:.0f} MiB above the RSS after building it; "
        f"peak RSS {peak_rss_mib():.0f} MiB"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
