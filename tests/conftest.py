
from pathlib import Path

import numpy as np
import pytest

from sklearn_crf import SequenceVectorizer
from sklearn_crf._model.layout import build_layout
from sklearn_crf._features.validation import encode_labels

#: this folder (the shared helpers: conftest.py, _naive.py, data/) and the
#: repository's root, for the tests in any sub-folder
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def outcome(call, *, message=True):
    """What ``call()`` gives, comparable with ``==``: ``("value", result)`` or
    ``("error", exception type, message)`` (without the message when
    ``message`` is False: another library's wording may differ).

    A NaN result (float or NumPy scalar) is reported as the string ``"nan"``:
    two NaN objects compare equal only when they are the same object, which
    varies between versions of scikit-learn and Python.
    """
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001 - the outcome is compared, whatever it is
        return ("error", type(exc), str(exc)) if message else ("error", type(exc))
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return ("value", "nan")
    return ("value", value)


def random_corpus(seed, n_seq=6, max_len=5, n_labels=3, n_words=6):
    """Small random feature-dict sequences with str, float and bool features."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_seq):
        n = int(rng.integers(0, max_len + 1))
        X.append([
            {
                "w": f"w{rng.integers(n_words)}",
                "x": float(rng.normal()),
                "flag": bool(rng.integers(2)),
            }
            for _ in range(n)
        ])
        y.append([int(rng.integers(n_labels)) for _ in range(n)])
    return X, y


def corpus_arrays(X, y, **layout_kwargs):
    """(EncodedCorpus, layout, labels) of a corpus, as CRFTagger.fit builds them."""
    corpus = SequenceVectorizer().fit_encode(X)
    classes, labels = encode_labels(y, corpus.seq_ptr)
    kwargs = dict(min_freq=0, all_possible_states=False, all_possible_transitions=False)
    kwargs.update(layout_kwargs)
    layout = build_layout(corpus, labels, len(classes), **kwargs)
    return corpus, layout, labels


@pytest.fixture
def toy_ner():
    """A tiny NER-like task that a CRF learns perfectly."""
    names = ["John", "Mary", "Paris", "Berlin", "Acme", "Globex"]
    kinds = {"John": "PER", "Mary": "PER", "Paris": "LOC", "Berlin": "LOC",
             "Acme": "ORG", "Globex": "ORG"}
    verbs = ["visited", "likes", "met", "left"]
    rng = np.random.default_rng(0)
    X, y = [], []
    for _ in range(60):
        a, b = rng.choice(names, 2)
        v = rng.choice(verbs)
        words = [a, v, b, "."]
        X.append([{"w": w.lower(), "title": w.istitle(), "bias": 1.0} for w in words])
        y.append([f"B-{kinds[a]}", "O", f"B-{kinds[b]}", "O"])
    return X, y


def iob2_corpus(seed, n_seq=80, max_len=7, types=("PER", "LOC")):
    """Random feature-dict sequences whose labels are valid IOB2 (``I-x`` only
    after ``B-x`` or ``I-x``)."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_seq):
        n = int(rng.integers(0, max_len + 1))
        labels = []
        for t in range(n):
            prev = labels[-1] if labels else "O"
            r = rng.random()
            if prev != "O" and r < 0.4:
                labels.append("I-" + prev[2:])
            elif r < 0.7:
                labels.append("O")
            else:
                labels.append("B-" + types[int(rng.integers(len(types)))])
        X.append([
            {"w": f"w{rng.integers(8)}", "x": float(rng.normal()), "cap": bool(rng.integers(2)),
             "is_" + lab[:1]: True}
            for lab in labels
        ])
        y.append(labels)
    return X, y


#: test modules (paths in this folder) that run subprocesses, compile from an
#: empty cache, start Dask clusters or run scripts on CoNLL data: all of them
#: are ``slow``
SLOW_MODULES = {
    "test_benchmarks.py", "test_docs.py", "test_examples.py", "test_imports.py",
    "engine/test_first_use.py", "training/test_distributed.py", "test_dask.py",
    "io/test_fuzz_files.py",
}
#: single tests elsewhere that take more than a few seconds
SLOW_TESTS = {
    "test_grid_search_in_parallel_processes",
    "test_cross_val_predict_in_parallel_equals_serial",
    "test_tagger_predictions_do_not_depend_on_order_or_grouping",
    "test_concurrent_predictions_equal_sequential_ones",
    "test_threaded_calls_never_start_numbas_thread_pool",
    "test_cross_validation",
}
#: under pytest-xdist (``-n``), each test module goes whole to one worker, so
#: that its module fixtures are built once, except these: their tests are long
#: and share nothing costly, and are handed out one by one
SPREAD_MODULES = {"test_benchmarks.py", "test_docs.py"}
#: the longest modules (a Dask cluster, first-use compiles), started first
FIRST_MODULES = ["training/test_distributed.py", "test_dask.py", "engine/test_first_use.py"]


def _test_module(path):
    """The path of a test module in this folder (``"engine/test_kernels.py"``),
    or None for a file elsewhere (the package's doctests)."""
    try:
        return Path(path).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW_MODULES` and :data:`SLOW_TESTS` ``slow``:
    ``pytest -m "not slow"`` is the fast subset. In a pytest-xdist worker, also
    order the tests for the scheduler, which hands out the modules (and the
    tests of :data:`SPREAD_MODULES`) in this order: :data:`FIRST_MODULES`,
    then the modules that hold slow tests, then the rest, so that no long
    test starts last."""
    slow = pytest.mark.slow
    modules = {item: _test_module(item.path) for item in items}
    for item in items:
        if modules[item] in SLOW_MODULES or getattr(item, "originalname", None) in SLOW_TESTS:
            item.add_marker(slow)
    if hasattr(config, "workerinput"):
        with_slow = {modules[item] for item in items if item.get_closest_marker("slow")}

        def order(item):
            module = modules[item]
            first = FIRST_MODULES.index(module) if module in FIRST_MODULES else len(FIRST_MODULES)
            return first, module not in with_slow

        items.sort(key=order)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``-n`` (``--dist load``, the default), hand out whole modules,
    in the workers' order, and the tests of :data:`SPREAD_MODULES` one by one.
    (xdist's ``--dist loadfile`` groups every module; its ``loadgroup`` would
    name groups by marks, but renames the tests by a node attribute that
    pytest 9 no longer reads.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath
    config.option.loadscopereorder = False  # keep the workers' order, not by size

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            file = nodeid.split("::", 1)[0]
            return nodeid if _test_module(root / file) in SPREAD_MODULES else file

    return ModuleScheduling(config, log)
