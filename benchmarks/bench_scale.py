"""Peak memory and speed of a fit as the corpus grows: in memory, streamed, on Dask.

Builds corpora of 1M and 10M tokens (``--sizes``) as CoNLL files: CoNLL-2002's
Spanish training sentences repeated, each repetition with deterministic
perturbations of its words (a word gets a suffix naming the repetition when a
CRC of the pair says so, one word in four), so the vocabulary grows with the
corpus as it does in real data. Then, per size, each route runs in a child
process of its own and reports its peak RSS (``ru_maxrss``):

* ``dict``: today's in-memory route: every sentence read and featurized into
  feature dicts, encoded at once (``SequenceVectorizer.fit_encode``), then
  ``CRFTagger.fit(corpus, y)``. Skipped with a message when its
  estimated peak (1.3 GB per million tokens) would not fit in the memory
  available.
* ``stream``: :func:`sklearn_crf.encode_stream` from ``iter_conll`` chunks
  into a corpus store, memory-mapped back with ``label_codes=True``, then
  ``CRFTagger.fit(corpus, label_codes)``: the public route, the labels as
  memory-mapped int32 codes.
* ``dask``: a 2-worker ``LocalCluster`` (processes, 1 thread each); one shard
  per file (4), each read and encoded on a worker with ``encode_stream``
  (:meth:`ShardedCorpus.from_sources`), then the data-parallel fit; the peak
  RSS of each worker process and of the driver (which runs the scheduler too).

Times: "encode" is reading, featurizing and encoding (for dask: until the
shard objectives are built on the workers); "s/iter" is the solver's time
per iteration (``--max-iter`` iterations, line searches included; for dict
and stream, the whole ``CRFTagger.fit`` on the encoded corpus, its layout
included, divided by the iterations). Seconds
are wall clock: on a loaded machine they are indicative only; the RSS figures
are not affected by load.

``--quick`` runs tiny sizes for a smoke test and checks that the three routes
give the same model (the same weights after ``--max-iter`` iterations, up to
rounding): it prints ``same model: yes``.

    python benchmarks/bench_scale.py                  # 1M and 10M tokens
    python benchmarks/bench_scale.py --sizes 1000000  # 1M only
    python benchmarks/bench_scale.py --quick
"""

import argparse
import functools
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
N_FILES = 4
#: the dict route's peak RSS per token (1.12 GB measured at 1M tokens, with margin)
DICT_BYTES_PER_TOKEN = 1300
PARAMS = dict(c1=0.0, c2=0.1, min_freq=0, all_possible_states=False,
              all_possible_transitions=False)


# --------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------


def perturbed(word, repetition):
    """A word of repetition ``repetition``: unchanged, or (one in four, decided
    by a CRC of the pair) with a suffix naming the repetition."""
    if repetition == 0 or zlib.crc32(f"{word}\t{repetition}".encode()) % 4:
        return word
    return f"{word}~{repetition}"


def write_corpus(directory, n_tokens):
    """CoNLL files (``N_FILES``, ``word tag`` lines) of about ``n_tokens`` tokens."""
    from sklearn_crf.datasets import load_conll2002

    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"part{k}.conll" for k in range(N_FILES)]
    if all(p.exists() for p in paths) and (directory / "n_tokens").exists():
        return paths, int((directory / "n_tokens").read_text())
    data = load_conll2002("train")
    sentences = list(zip(data.sentences, data.tags))
    per_file = n_tokens / N_FILES
    written = 0
    repetition = 0
    files = [open(p, "w", encoding="utf-8") for p in paths]
    try:
        k, in_file = 0, 0
        while written < n_tokens:
            for words, tags in sentences:
                if written >= n_tokens:
                    break
                out = files[k]
                for word, tag in zip(words, tags):
                    out.write(f"{perturbed(word, repetition)} {tag}\n")
                out.write("\n")
                written += len(words)
                in_file += len(words)
                if in_file >= per_file and k + 1 < N_FILES:
                    k, in_file = k + 1, 0
            repetition += 1
    finally:
        for f in files:
            f.close()
    (directory / "n_tokens").write_text(str(written))
    return paths, written


def batches(path, chunk_size=1000):
    """``(X, y)`` chunks of a CoNLL file, featurized: one chunk in memory at a time."""
    from sklearn_crf import SequenceFeaturizer
    from sklearn_crf._io.conll import iter_conll

    featurizer = SequenceFeaturizer()
    for chunk in iter_conll(path, chunk_size=chunk_size):
        yield featurizer.transform(chunk.sentences), chunk.tags


def encoded_file(path):
    """A shard source: the file encoded chunk by chunk (on a worker)."""
    from sklearn_crf._features.streaming import encode_stream

    return encode_stream(batches(path), label_codes=True)


# --------------------------------------------------------------------------
# the routes (each in a child process)
# --------------------------------------------------------------------------


def peak_rss():
    """This process's peak resident set size, bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _fit(corpus, y, max_iter):
    """``CRFTagger.fit(corpus, y)``, the public route, on an encoded corpus: the
    tagger, and the seconds of the fit (the layout and the solver)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sklearn_crf import CRFTagger

    crf = CRFTagger(max_iter=max_iter, n_jobs=1, **PARAMS)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf.fit(corpus, y)
    return crf, time.perf_counter() - start


def route_dict(paths, max_iter):
    from sklearn_crf import SequenceFeaturizer, SequenceVectorizer
    from sklearn_crf._io.conll import read_conll

    start = time.perf_counter()
    X, y = [], []
    featurizer = SequenceFeaturizer()
    for path in paths:
        data = read_conll(path)
        X.extend(featurizer.transform(data.sentences))
        y.extend(data.tags)
    corpus = SequenceVectorizer().fit_encode(X)  # an EncodedCorpus with its vectorizer
    encode = time.perf_counter() - start
    crf, seconds = _fit(corpus, y, max_iter)
    return dict(n_tokens=corpus.n_tokens, n_attributes=corpus.n_attributes,
                n_params=crf.coef_.shape[0], encode_s=encode, iter_s=seconds / crf.n_iter_,
                rss=peak_rss()), crf.coef_


def route_stream(paths, max_iter, workdir):
    from sklearn_crf._features.streaming import encode_stream

    def all_batches():
        for path in paths:
            yield from batches(path)

    start = time.perf_counter()
    corpus, y = encode_stream(all_batches(), directory=pathlib.Path(workdir) / "store",
                              overwrite=True, label_codes=True)
    encode = time.perf_counter() - start
    crf, seconds = _fit(corpus, y, max_iter)  # y: LabelCodes, memory-mapped int32 codes
    return dict(n_tokens=corpus.n_tokens, n_attributes=corpus.n_attributes,
                n_params=crf.coef_.shape[0], encode_s=encode, iter_s=seconds / crf.n_iter_,
                rss=peak_rss()), crf.coef_


def route_dask(paths, max_iter):
    import warnings

    from distributed import Client, LocalCluster
    from sklearn.exceptions import ConvergenceWarning

    from sklearn_crf import CRFTagger
    from sklearn_crf._training.distributed import ShardedCorpus, fit_sharded, prepare_sharded

    path = os.pathsep.join([str(ROOT), str(ROOT / "benchmarks"),
                            *filter(None, [os.environ.get("PYTHONPATH")])])
    params = CRFTagger(max_iter=max_iter, **PARAMS).get_params()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=0,
                      env={"PYTHONPATH": path}) as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        start = time.perf_counter()
        sources = [functools.partial(encoded_file, str(p)) for p in paths]
        sharded = ShardedCorpus.from_sources(client, sources)
        problem = prepare_sharded(sharded, params)
        encode = time.perf_counter() - start
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = fit_sharded(problem, params)
        seconds = time.perf_counter() - start
        workers = sorted(client.run(peak_rss).values())
        problem.close()
    return dict(n_tokens=problem.n_tokens, n_attributes=problem.vectorizer.n_attributes_,
                n_params=problem.layout.n_params, encode_s=encode,
                iter_s=seconds / fit.result.n_iter, rss=peak_rss(),
                workers_rss=workers), fit.result.w


def child(args):
    paths = [pathlib.Path(p) for p in args.paths]
    if args.child == "dict":
        report, w = route_dict(paths, args.max_iter)
    elif args.child == "stream":
        report, w = route_stream(paths, args.max_iter, args.workdir)
    else:
        report, w = route_dask(paths, args.max_iter)
    np.save(pathlib.Path(args.workdir) / f"w_{args.child}.npy", w)
    print(json.dumps(report))


# --------------------------------------------------------------------------
# the parent
# --------------------------------------------------------------------------


def available_memory():
    """MemAvailable of /proc/meminfo, bytes (None where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def run_route(route, paths, workdir, max_iter):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    command = [sys.executable, __file__, "--child", route, "--workdir", str(workdir),
               "--max-iter", str(max_iter), "--paths", *map(str, paths)]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"route {route} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def gb(n):
    return f"{n / 2**30:.2f} GB"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--max-iter", type=int, default=5)
    parser.add_argument("--routes", nargs="+", default=["dict", "stream", "dask"])
    parser.add_argument("--workdir", default=None,
                        help="where the corpora are written (default: a temporary folder)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a smoke test")
    parser.add_argument("--child", choices=["dict", "stream", "dask"], help=argparse.SUPPRESS)
    parser.add_argument("--paths", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return
    if args.quick:
        args.sizes, args.max_iter = [20_000], 3
    with tempfile.TemporaryDirectory() as tmp:
        workdir = pathlib.Path(args.workdir or tmp)
        print(f"{'tokens':>10} {'route':>7} {'peak RSS':>10} {'encode s':>9} {'s/iter':>7}"
              f" {'attributes':>10} {'params':>10}  workers' peak RSS")
        for size in args.sizes:
            size = int(size)
            folder = workdir / f"corpus_{size}"
            paths, n_tokens = write_corpus(folder, size)
            weights = {}
            for route in args.routes:
                if route == "dict":
                    need, have = DICT_BYTES_PER_TOKEN * n_tokens, available_memory()
                    if have is not None and need > 0.8 * have:
                        print(f"{n_tokens:>10} {route:>7}  skipped: would need about {gb(need)}"
                              f", {gb(have)} available")
                        continue
                report = run_route(route, paths, folder, args.max_iter)
                weights[route] = np.load(folder / f"w_{route}.npy")
                workers = ""
                if "workers_rss" in report:
                    workers = ", ".join(gb(r) for r in report["workers_rss"])
                    workers += f"  (driver {gb(report['rss'])})"
                print(f"{report['n_tokens']:>10} {route:>7} {gb(report['rss']):>10}"
                      f" {report['encode_s']:>9.1f} {report['iter_s']:>7.2f}"
                      f" {report['n_attributes']:>10} {report['n_params']:>10}  {workers}",
                      flush=True)
            if len(weights) > 1:
                routes = list(weights)
                first = weights[routes[0]]
                same = all(
                    w.shape == first.shape
                    and np.allclose(w, first, rtol=1e-7, atol=1e-9 * max(np.abs(first).max(), 1))
                    for w in weights.values())
                print(f"{n_tokens:>10} same model ({' / '.join(routes)}): "
                      f"{'yes' if same else 'NO'}")
                if not same:
                    sys.exit(1)


if __name__ == "__main__":
    main()
