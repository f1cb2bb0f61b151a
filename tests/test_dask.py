"""Searches on a Dask cluster through joblib's Dask backend.

The first cluster's workers start with an empty numba cache (they compile the
kernels at the same time, into the same directory); the later clusters reuse
that directory.
"""

import subprocess
import sys
import warnings

import joblib
import numba
import numpy as np
import pytest
from distributed import Client, LocalCluster, get_worker
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf._engine.threads import n_threads
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import get_scorer

pytestmark = [
    pytest.mark.filterwarnings(
        "ignore:the solver stopped after:sklearn.exceptions.ConvergenceWarning"
    ),
    # the scheduler's HTTP server (no dashboard) moves off a port in use
    pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning"),
]

#: a task that takes longer than this is taken for a hang (a cold start
#: compiles the kernels: a minute or more on a busy machine)
TIMEOUT = 300


@pytest.fixture(scope="module")
def numba_cache_dir(tmp_path_factory):
    """An empty numba cache directory for the clusters' workers."""
    return tmp_path_factory.mktemp("numba_cache")


def _cluster(cache_dir, n_workers, threads_per_worker, **env):
    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env={"NUMBA_CACHE_DIR": str(cache_dir), **env},
    )


@pytest.fixture(scope="module")
def client(numba_cache_dir):
    """2 worker processes of 1 thread each, starting with an empty numba cache."""
    with _cluster(numba_cache_dir, 2, 1) as cluster, Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def conll():
    data = load_conll2002("train", n_sentences=200)
    return data.sentences, data.tags


def _search():
    pipe = make_pipeline(SequenceFeaturizer(), CRFTagger(max_iter=15))
    return GridSearchCV(
        pipe,
        {"crftagger__c1": [0.0, 0.1], "crftagger__c2": [0.01, 0.1]},
        cv=2,
        scoring=get_scorer("entity_f1"),
        error_score="raise",
    )


def test_search_on_dask_matches_n_jobs_1(client, conll, numba_cache_dir):
    X, y = conll
    local = _search().fit(X, y)
    with joblib.parallel_backend("dask"):
        remote = _search().fit(X, y)
    # the workers compiled the kernels into their (empty) cache directory
    assert any(numba_cache_dir.rglob("*.nbi"))
    for key, value in local.cv_results_.items():
        if "score" in key and "time" not in key:
            np.testing.assert_array_equal(remote.cv_results_[key], value, err_msg=key)
    assert remote.cv_results_["params"] == local.cv_results_["params"]
    assert remote.best_params_ == local.best_params_
    assert remote.best_estimator_.predict(X) == local.best_estimator_.predict(X)
    np.testing.assert_array_equal(
        remote.best_estimator_[-1].coef_, local.best_estimator_[-1].coef_
    )


def _threads_in_force(n_jobs):
    """(threads of a call on a huge input, the worker's threads)."""
    with n_threads(n_jobs, 10**9) as n:
        return n, get_worker().state.nthreads


@pytest.mark.parametrize("n_jobs", [None, -1, 8])
def test_numba_threads_fit_the_worker(client, n_jobs):
    workers = list(client.scheduler_info()["workers"])
    for address in workers:
        future = client.submit(_threads_in_force, n_jobs, workers=[address], pure=False)
        n, worker_threads = future.result(timeout=TIMEOUT)
        assert worker_threads == 1
        assert n == 1


def test_numba_threads_outside_a_worker_ignore_dask():
    # a process that imported distributed but is not a worker keeps numba's count
    with n_threads(-1, 10**9) as n:
        assert n == numba.config.NUMBA_NUM_THREADS


def _fit(X, y, c2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf = CRFTagger(c2=c2, max_iter=4, n_jobs=2).fit(X, y)
    return crf.coef_


def test_two_threaded_fits_at_once_in_one_worker(numba_cache_dir, conll):
    # two tasks at once in one process, each running the engine on two
    # threads: the same weights as one fit at a time
    data = load_conll2002("train", n_sentences=400)  # > 10,000 tokens: 2 threads
    X, y = SequenceFeaturizer().transform(data.sentences), data.tags
    expected = [_fit(X, y, c2) for c2 in (0.01, 0.1, 1.0, 10.0)]
    with _cluster(
        numba_cache_dir, 1, 2
    ) as cluster, Client(cluster) as client:
        X_remote, y_remote = client.scatter([X, y], broadcast=True)
        futures = [
            client.submit(_fit, X_remote, y_remote, c2, pure=False)
            for c2 in (0.01, 0.1, 1.0, 10.0)
        ]
        results = [future.result(timeout=TIMEOUT) for future in futures]
    for coef, want in zip(results, expected):
        np.testing.assert_array_equal(coef, want)


def test_thread_policy_does_not_import_distributed():
    code = (
        "import sys\n"
        "import sklearn_crf\n"
        "from sklearn_crf._engine.threads import n_threads\n"
        "with n_threads(None, 10**9):\n"
        "    pass\n"
        "assert 'distributed' not in sys.modules, 'distributed was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=TIMEOUT)
