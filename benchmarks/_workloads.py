"""Shared helpers of the benchmarks: data, the two libraries, timing, child processes.

This module imports only the standard library at module level, so that it can
also run as the entry point of the fresh child processes that measure start-up
time and peak memory without importing numpy & co. before the clock starts::

    python benchmarks/_workloads.py startup --lib ours
    python benchmarks/_workloads.py floor
    python benchmarks/_workloads.py rss --lib theirs --n-train 8323 --max-iter 100

A child prints one JSON object as the last line of its standard output.
"""

import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))

#: the hyperparameters of sklearn-crfsuite's tutorial and reference figures
C1 = 0.1
C2 = 0.1

#: "ours" is sklearn-crf, "theirs" sklearn-crfsuite
LIBS = ("theirs", "ours")
LIB_NAMES = {"theirs": "sklearn-crfsuite", "ours": "sklearn-crf"}

#: environment variables that size the BLAS thread pools. Not OMP_NUM_THREADS:
#: numba may run sklearn-crf's kernels on its OpenMP threading layer, and the
#: kernels' thread count must stay numba's (NUMBA_NUM_THREADS / n_jobs).
BLAS_ENV_VARS = (
    "OPENBLAS_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def limit_blas_threads(env, n=1):
    """Set every BLAS thread-count variable of ``env`` to ``n`` (in place)."""
    for var in BLAS_ENV_VARS:
        env[var] = str(n)
    return env


# --------------------------------------------------------------------------- timing


def timed(func, *args, **kwargs):
    """``(wall seconds, result)`` of one call, after a garbage collection."""
    gc.collect()
    start = time.perf_counter()
    result = func(*args, **kwargs)
    return time.perf_counter() - start, result


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def alternate(items, repeat):
    """``items`` rotated by ``repeat`` places (two items: swapped every other time).

    So that no library always runs first (or last) in a repetition, and slow
    drifts of the machine (heat, other jobs) hit all alike.
    """
    items = list(items)
    k = repeat % len(items)
    return items[k:] + items[:k]


def ru_maxrss_mb():
    """``getrusage(RUSAGE_SELF).ru_maxrss`` in MB (10^6 bytes).

    Beware, on Linux, in a child process: ``execve`` carries the high-water
    mark of the memory it replaces over into ``ru_maxrss``, which is the
    parent's (``vfork``) or its copy (``fork``); so a child started by a large
    parent reports at least the parent's RSS. Hence :func:`peak_rss_mb`.
    """
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kilobytes on Linux, bytes on macOS
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6


def peak_rss_mb():
    """Peak resident set size of this process so far, in MB (10^6 bytes).

    ``VmHWM`` of ``/proc/self/status`` on Linux: the high-water mark of this
    process's own memory since it started its program (see
    :func:`ru_maxrss_mb` for why not ``ru_maxrss``); ``ru_maxrss`` elsewhere.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    return ru_maxrss_mb()


# --------------------------------------------------------------------------- machine


def package_versions():
    from importlib import metadata

    versions = {}
    for dist in ("numpy", "scipy", "numba", "llvmlite", "scikit-learn",
                 "sklearn-crfsuite", "python-crfsuite", "sklearn-crf", "seqeval"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return versions


def machine_info():
    """nproc, CPU, Python, package versions, thread settings, load (imports numba)."""
    import numba

    cpu = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), None)
    except OSError:
        cpu = platform.processor() or None
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    try:
        from threadpoolctl import threadpool_info

        blas = [f"{p['internal_api']} ({p['num_threads']} threads)"
                for p in threadpool_info()]
    except ImportError:
        blas = None
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "host": platform.node(),
        "platform": platform.platform(),
        "cpu": cpu,
        "nproc": os.cpu_count(),
        "cpus_available": affinity,
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "versions": package_versions(),
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threads_in_use": numba.get_num_threads(),
        "numba_threading_layer": numba.config.THREADING_LAYER,
        "blas_env": {var: os.environ.get(var) for var in BLAS_ENV_VARS},
        "thread_env": {var: os.environ.get(var)
                       for var in ("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER",
                                   "OMP_NUM_THREADS")},
        "blas_pools": blas,
        "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
        "load_average": os.getloadavg(),
    }


# --------------------------------------------------------------------------- data


@dataclass
class Corpus:
    X_train: list
    y_train: list
    X_test: list
    y_test: list
    train_sentences: list
    test_sentences: list

    @property
    def n_train_tokens(self):
        return sum(map(len, self.y_train))

    @property
    def n_test_tokens(self):
        return sum(map(len, self.y_test))


def load_ner(n_train=None, n_test=None, files=None):
    """CoNLL-2002 Spanish esp.train / esp.testb with ``SequenceFeaturizer()`` features.

    The default ``SequenceFeaturizer`` produces the sklearn-crfsuite tutorial
    features, and both libraries get these very same lists of feature dicts.
    ``files``: another NER task instead, ``{"train": path, "testb": path}``
    of CoNLL files (:func:`read_conll_file`).
    """
    from sklearn_crf import SequenceFeaturizer

    train_sentences, y_train = read_ner("train", n_train, files)
    test_sentences, y_test = read_ner("testb", n_test, files)
    featurizer = SequenceFeaturizer()
    return Corpus(
        X_train=list(featurizer.transform(train_sentences)),
        y_train=y_train,
        X_test=list(featurizer.transform(test_sentences)),
        y_test=y_test,
        train_sentences=train_sentences,
        test_sentences=test_sentences,
    )


def shape_class(word):
    """A word-shape class, each readable from the tutorial features.

    ``D`` all digits (``word.isdigit()``), ``U`` all upper case
    (``word.isupper()``), ``T`` title case (``word.istitle()``), ``L`` lower
    case, ``M`` anything else (punctuation, mixed case, digits and letters):
    ``L`` and ``M`` are told apart by ``word.lower()`` itself.
    """
    if word.isdigit():
        return "D"
    if word.isupper():
        return "U"
    if word.istitle():
        return "T"
    if word.islower():
        return "L"
    return "M"


def shape_labels(sentences, tags):
    """Deterministic many-label task: entity tag × word-shape class, e.g. ``B-ORG/U``.

    9 IOB2 tags × 5 shape classes; on esp.train 42 of the 45 combinations
    occur (40 on esp.testb). The labels are learnable from the same tutorial
    features: the shape part from the word flags and the lower-cased word, the
    entity part as in the NER task.
    """
    return [[f"{tag}/{shape_class(word)}" for word, tag in zip(sent, sent_tags)]
            for sent, sent_tags in zip(sentences, tags)]


#: a tiny corpus for the start-up measure: tokens and IOB2 tags
_TINY = [
    ("El presidente de Colombia , Andrés Pastrana , viajó a Madrid .",
     "O O O B-LOC O B-PER I-PER O O O B-LOC O"),
    ("La Agencia EFE informó ayer de la reunión en Bruselas .",
     "O B-ORG I-ORG O O O O O O B-LOC O"),
    ("El Real Madrid ganó la Copa del Rey en 1993 .",
     "O B-ORG I-ORG O O B-MISC I-MISC I-MISC O O O"),
    ("Según la ONU , la población de Brasil creció un 2 por ciento .",
     "O O B-ORG O O O O B-LOC O O O O O O"),
    ("María García trabaja en el Banco de España desde enero .",
     "B-PER I-PER O O O B-ORG I-ORG I-ORG O O O"),
    ("Los Juegos Olímpicos de Sydney comenzarán en septiembre .",
     "O B-MISC I-MISC O B-LOC O O O O"),
]


def _neighbor_features(word, prefix):
    return {prefix + "word.lower()": word.lower(),
            prefix + "word.istitle()": word.istitle(),
            prefix + "word.isupper()": word.isupper()}


def tutorial_features(sentence):
    """The sklearn-crfsuite tutorial features of a sentence, in plain Python.

    The same dicts as ``SequenceFeaturizer().transform([sentence])[0]`` (key
    order aside), without importing anything: for the child processes, where
    both libraries must featurize with the same code and import nothing else.
    """
    features = []
    last = len(sentence) - 1
    for i, word in enumerate(sentence):
        f = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:],
             "word[-2:]": word[-2:], "word.isupper()": word.isupper(),
             "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit()}
        if i > 0:
            f.update(_neighbor_features(sentence[i - 1], "-1:"))
        else:
            f["BOS"] = True
        if i < last:
            f.update(_neighbor_features(sentence[i + 1], "+1:"))
        else:
            f["EOS"] = True
        features.append(f)
    return features


def tiny_corpus():
    """``(X, y)``: a handful of featurized sentences, built without any import."""
    sentences = [text.split() for text, _ in _TINY]
    return [tutorial_features(s) for s in sentences], [tags.split() for _, tags in _TINY]


def read_ner(subset, n_sentences=None, files=None):
    """``(sentences, tags)`` of the NER task's ``subset`` ("train" or
    "testb"): the bundled esp.<subset>, or the CoNLL file ``files[subset]``."""
    if files is None:
        return read_conll2002(subset, n_sentences)
    return read_conll_file(files[subset], n_sentences)


def read_conll2002(subset, n_sentences=None):
    """``(sentences, tags)`` of the bundled esp.<subset>, with the standard library only.

    Parses like ``sklearn_crf.datasets.load_conll2002`` (which a child process
    measuring sklearn-crfsuite should not import: it would load numba), from
    the same file, located without importing the package.
    """
    from importlib.util import find_spec

    package_dir = find_spec("sklearn_crf").submodule_search_locations[0]
    return read_conll_file(os.path.join(package_dir, "datasets", "data", f"esp.{subset}.gz"),
                           n_sentences)


def read_conll_file(path, n_sentences=None):
    """``(sentences, tags)`` of a CoNLL file (gzip when its name ends in
    ``.gz``; UTF-8, else Latin-1 as CoNLL-2002's Dutch files are): a token per
    line, its word the first field and its label the last (separated by
    spaces), a blank line (or ``-DOCSTART-``) between sentences; the first
    ``n_sentences`` only, if given. The standard library only."""
    try:
        return _parse_conll(path, n_sentences, "utf-8")
    except UnicodeDecodeError:
        return _parse_conll(path, n_sentences, "latin-1")


def _parse_conll(path, n_sentences, encoding):
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    sentences, tags, tokens, labels = [], [], [], []
    with opener(path, "rt", encoding=encoding, newline="") as f:
        for line in f:
            if n_sentences is not None and len(sentences) >= n_sentences:
                break
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("-DOCSTART-"):
                if tokens:
                    sentences.append(tokens)
                    tags.append(labels)
                    tokens, labels = [], []
                continue
            fields = line.split()
            tokens.append(fields[0])
            labels.append(fields[-1])
    if tokens and (n_sentences is None or len(sentences) < n_sentences):
        sentences.append(tokens)
        tags.append(labels)
    return sentences, tags


# --------------------------------------------------------------------------- libraries


def make_estimator(lib, max_iter=None, n_jobs=None, tol=None):
    """The estimator of ``lib`` at the shared settings.

    ``max_iter=None`` keeps the library's default stopping: sklearn-crfsuite
    (CRFsuite) without ``max_iterations`` runs until its own convergence test
    (delta = 1e-5 over 10 iterations), CRFTagger uses its defaults
    (``max_iter=1000, tol=1e-3``). ``n_jobs`` is CRFTagger's thread count
    (``None``: numba's default, all cores); CRFsuite is single-threaded.
    ``tol`` is CRFTagger's delta test (``None``: its default, 1e-3; CRFsuite's
    default, which sklearn-crfsuite keeps, is 1e-5).
    """
    if lib == "ours":
        from sklearn_crf import CRFTagger

        kwargs = {} if max_iter is None else {"max_iter": max_iter}
        if tol is not None:
            kwargs["tol"] = tol
        return CRFTagger(c1=C1, c2=C2, all_possible_transitions=True, n_jobs=n_jobs,
                         **kwargs)
    if lib == "theirs":
        if tol is not None:
            raise ValueError("sklearn-crfsuite keeps CRFsuite's delta test (1e-5)")
        if n_jobs not in (None, 1):
            raise ValueError("sklearn-crfsuite is single-threaded")
        from sklearn_crfsuite import CRF

        kwargs = {} if max_iter is None else {"max_iterations": max_iter}
        return CRF(algorithm="lbfgs", c1=C1, c2=C2, all_possible_transitions=True,
                   **kwargs)
    raise ValueError(f"unknown library {lib!r}")


def fit_estimator(lib, estimator, X, y):
    """Fit; return whether it stopped at its iteration cap (ours: ConvergenceWarning).

    Our ConvergenceWarning is recorded, not shown: 100 iterations is the
    reference setting, not convergence.
    """
    if lib == "theirs":
        estimator.fit(X, y)
        return None
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        estimator.fit(X, y)
    return any(issubclass(w.category, ConvergenceWarning) for w in caught)


def n_iterations(lib, estimator):
    if lib == "ours":
        return int(estimator.n_iter_)
    log = estimator.training_log_
    return int(log.last_iteration["num"]) if log and log.last_iteration else None


def fit_from_tokens(lib, estimator, sentences, tags):
    """Raw tokens in, fitted model out: featurizing + fit.

    sklearn-crfsuite: the tutorial's Python ``word2features``
    (:func:`tutorial_features`) then ``CRF.fit``; sklearn-crf:
    ``make_pipeline(SequenceFeaturizer(output="encoded"), CRFTagger()).fit``
    on the token lists (the same features, encoded straight from the tokens
    without feature dicts; the same model as the dict route, bitwise).
    Returns the fitted estimator or pipeline.
    """
    if lib == "theirs":
        estimator.fit([tutorial_features(s) for s in sentences], tags)
        return estimator
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import make_pipeline

    from sklearn_crf import SequenceFeaturizer

    model = make_pipeline(SequenceFeaturizer(output="encoded"), estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(sentences, tags)
    return model


def token_accuracy(y_true, y_pred):
    pairs = [(a, b) for ts, ps in zip(y_true, y_pred) for a, b in zip(ts, ps)]
    return sum(a == b for a, b in pairs) / len(pairs)


def warm_up(lib):
    """Import ``lib`` and fit + predict once on the tiny corpus (compiles our kernels)."""
    X, y = tiny_corpus()
    estimator = make_estimator(lib, max_iter=5)
    fit_estimator(lib, estimator, X, y)
    estimator.predict(X)


# --------------------------------------------------------------------------- child processes


def run_child(args, env, timeout=None):
    """Run ``python _workloads.py *args``; return (parent wall seconds, child's JSON).

    The wall time is measured around the whole subprocess: interpreter start,
    imports, the work, interpreter shutdown.
    """
    cmd = [sys.executable, os.path.join(HERE, "_workloads.py"), *map(str, args)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(
            f"child {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return wall, json.loads(lines[-1])


def child_env(numba_cache_dir=None):
    """The environment of a child: ours, with BLAS limited; maybe its own numba cache."""
    env = limit_blas_threads(dict(os.environ))
    if numba_cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache_dir
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def cpu_seconds():
    """User + system CPU time of this process so far (s)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child_startup(lib):
    """Import the library, then fit, predict and predict_marginals on the tiny
    corpus (timed here: wall and this process's CPU time)."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    if lib == "ours":
        import sklearn_crf  # noqa: F401
    else:
        import sklearn_crfsuite  # noqa: F401
    t1 = time.perf_counter()
    X, y = tiny_corpus()
    estimator = make_estimator(lib, max_iter=100)
    fit_estimator(lib, estimator, X, y)
    t2 = time.perf_counter()
    estimator.predict(X)
    t3 = time.perf_counter()
    estimator.predict_marginals(X)
    t4 = time.perf_counter()
    return {"import_s": t1 - t0, "first_fit_s": t2 - t1, "first_predict_s": t3 - t2,
            "first_marginals_s": t4 - t3, "import_fit_s": t2 - t0,
            "import_fit_predict_s": t4 - t0, "cpu_s": cpu_seconds() - c0,
            "peak_rss_mb": peak_rss_mb()}


def _child_floor():
    """The start-up floor of a numba library (``_numba_floor.py``): import
    ``sklearn.base`` and numba, call one cached kernel (timed here)."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    import sklearn.base  # noqa: F401  (both libraries' estimators import it)
    import numba  # noqa: F401

    t1 = time.perf_counter()
    import _numba_floor

    _numba_floor.first_call()
    t2 = time.perf_counter()
    return {"import_s": t1 - t0, "first_call_s": t2 - t1, "import_fit_predict_s": t2 - t0,
            "cpu_s": cpu_seconds() - c0, "peak_rss_mb": peak_rss_mb()}


def _child_rss(lib, n_train, n_test, max_iter, shape=False, files=None):
    """Load, featurize, fit, predict; peak RSS after each stage (``shape``:
    on the many-label task, :func:`shape_labels`; ``files``: the NER task of
    :func:`read_ner`).

    Loading and featurizing use the same plain-Python code for both libraries
    (``read_conll2002``, ``tutorial_features``), so the process of each
    imports its own library and nothing of the other.
    """
    out = {}
    t0 = time.perf_counter()
    make_estimator(lib, max_iter=1)  # imports the library
    out["rss_after_import_mb"] = peak_rss_mb()
    train_sentences, y_train = read_ner("train", n_train, files)
    test_sentences, _ = read_ner("testb", n_test, files)
    if shape:
        y_train = shape_labels(train_sentences, y_train)
    X_train = [tutorial_features(s) for s in train_sentences]
    X_test = [tutorial_features(s) for s in test_sentences]
    out["rss_after_featurize_mb"] = peak_rss_mb()
    estimator = make_estimator(lib, max_iter=max_iter)
    t1 = time.perf_counter()
    fit_estimator(lib, estimator, X_train, y_train)
    t2 = time.perf_counter()
    out["rss_after_fit_mb"] = peak_rss_mb()
    estimator.predict(X_test)
    out["rss_after_predict_mb"] = peak_rss_mb()
    out.update(peak_rss_mb=peak_rss_mb(), ru_maxrss_mb=ru_maxrss_mb(), fit_s=t2 - t1,
               total_s=time.perf_counter() - t0, n_iter=n_iterations(lib, estimator),
               n_train=len(X_train))
    return out


def _main():
    parser = argparse.ArgumentParser(description="child process of bench_vs_crfsuite.py")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("startup")
    p.add_argument("--lib", choices=LIBS, required=True)
    sub.add_parser("floor")
    p = sub.add_parser("rss")
    p.add_argument("--lib", choices=LIBS, required=True)
    p.add_argument("--n-train", type=int, default=None)
    p.add_argument("--n-test", type=int, default=None)
    p.add_argument("--max-iter", type=int, default=100)
    p.add_argument("--shape-labels", action="store_true",
                   help="the many-label task (shape_labels) instead of the NER tags")
    p.add_argument("--train", default=None, help="a CoNLL file instead of esp.train")
    p.add_argument("--test", default=None, help="a CoNLL file instead of esp.testb")
    args = parser.parse_args()
    if args.command == "startup":
        result = _child_startup(args.lib)
    elif args.command == "floor":
        result = _child_floor()
    else:
        files = None if args.train is None else {"train": args.train, "testb": args.test}
        result = _child_rss(args.lib, args.n_train or None, args.n_test or None,
                            args.max_iter, args.shape_labels, files)
    print(json.dumps(result))


if __name__ == "__main__":
    _main()
