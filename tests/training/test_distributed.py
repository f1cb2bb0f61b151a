"""The data-parallel fit on a Dask cluster (sklearn_crf._training.distributed).

One LocalCluster of 2 single-threaded worker processes for the module
(loopback, no dashboard); every wait is bounded (``TIMEOUT``). The workers
import this checkout and this folder (the sources of the tests' shards are
functions of this module): their ``PYTHONPATH`` is set from here, so the
tests run the same from a checkout and against an installed package.
"""

import functools
import os
import pathlib
import signal
import time
import warnings

import numpy as np
import pytest
from distributed import Client, LocalCluster
from sklearn.exceptions import ConvergenceWarning

import sklearn_crf
from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf._model.layout import build_layout
from sklearn_crf._training.objective import CRFObjective
from sklearn_crf._training.optimize import ValidationMonitor
from sklearn_crf._training.distributed import (
    ShardedCorpus,
    ShardLostError,
    build_shard_objective,
    encode_shard,
    evaluate_shard,
    fit_sharded,
    prepare_sharded,
)
from sklearn_crf._features.streaming import encode_stream
from sklearn_crf._features.validation import encode_labels
from sklearn_crf._features.vectorizer import vocabulary_state
from sklearn_crf.datasets import load_conll2002

pytestmark = [
    pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning"),
]

#: a wait longer than this is taken for a hang
TIMEOUT = 300
#: this module's folder (the workers import this module)
HERE = pathlib.Path(__file__).resolve().parent
#: the folder sklearn_crf is imported from (this checkout, or site-packages)
PACKAGE_ROOT = pathlib.Path(sklearn_crf.__file__).resolve().parents[1]
#: a tight stopping rule: the local and the sharded fit reach the same optimum
TIGHT = dict(tol=1e-12, epsilon=1e-9, max_iter=1000)
N_TRAIN = 120


def _conll_part(start, stop):
    """Sentences start:stop of CoNLL-2002's training part, featurized: a shard source."""
    data = load_conll2002("train", n_sentences=stop)
    return SequenceFeaturizer().transform(data.sentences[start:]), data.tags[start:]


def _local_cluster(n_workers):
    path = os.pathsep.join(
        [str(PACKAGE_ROOT), str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])
    return LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, env={"PYTHONPATH": path},
    )


@pytest.fixture(scope="module")
def client():
    with _local_cluster(2) as cluster, Client(cluster, timeout=TIMEOUT) as client:
        client.wait_for_workers(2, timeout=TIMEOUT)
        yield client


@pytest.fixture
def fresh_client():
    """A cluster of its own, 3 workers: a test may kill one and go on with two."""
    with _local_cluster(3) as cluster, Client(cluster, timeout=TIMEOUT) as client:
        client.wait_for_workers(3, timeout=TIMEOUT)
        yield client


@pytest.fixture(scope="module")
def conll():
    return _conll_part(0, N_TRAIN)


def _sources(bounds):
    return [functools.partial(_conll_part, a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _fit_both(client, X, y, sample_weight=None, n_shards=3, **params):
    local = CRFTagger(**params).fit(X, y, sample_weight=sample_weight)
    sharded = ShardedCorpus.from_sequences(client, X, y, n_shards=n_shards,
                                           sample_weight=sample_weight)
    problem = prepare_sharded(sharded, local.get_params())
    return local, fit_sharded(problem, local.get_params())


def _assert_same_model(local, fit, max_iter_gap=3):
    result = fit.result
    assert fit.vectorizer.feature_names_ == local.vectorizer_.feature_names_
    np.testing.assert_array_equal(fit.classes, local.classes_)
    assert abs(result.n_iter - local.n_iter_) <= max_iter_gap
    scale = np.max(np.abs(local.coef_))
    assert np.max(np.abs(result.w - local.coef_)) <= 1e-6 * scale
    np.testing.assert_allclose(result.loss, local.loss_, rtol=1e-9)


def _layouts_equal(a, b):
    return (a.n_labels == b.n_labels and all(
        np.array_equal(getattr(a, name), getattr(b, name))
        for name in ("attr_ptr", "attr_label", "trans_from", "trans_to")))


@pytest.mark.parametrize("rules", [
    dict(min_freq=0, all_possible_states=False, all_possible_transitions=False),
    dict(min_freq=2, all_possible_states=False, all_possible_transitions=True),
    dict(min_freq=0, all_possible_states=True, all_possible_transitions=False),
    dict(min_freq=1, all_possible_states=True, all_possible_transitions=True),
])
def test_merged_vocabulary_labels_and_layout_are_the_local_fits(client, conll, rules):
    X, y = conll
    vectorizer = sklearn_crf.SequenceVectorizer()
    corpus = vectorizer.fit_encode(X)
    classes, labels = encode_labels(y, corpus.seq_ptr)
    expected = build_layout(corpus, labels, len(classes), **rules)
    sharded = ShardedCorpus.from_sources(client, _sources([0, 30, 31, 77, N_TRAIN]))
    params = dict(CRFTagger(**rules).get_params())
    problem = prepare_sharded(sharded, params)
    assert problem.vectorizer.feature_names_ == vectorizer.feature_names_
    assert problem.vectorizer.vocabulary_ == vectorizer.vocabulary_
    np.testing.assert_array_equal(problem.classes, classes)
    assert _layouts_equal(problem.layout, expected)
    assert (problem.n_sequences, problem.n_tokens) == (N_TRAIN, corpus.n_tokens)
    # the memo of (key, value) items too: the merged vectorizer encodes as fast
    assert vocabulary_state(problem.vectorizer) == vocabulary_state(vectorizer)
    problem.close()


def test_dask_sizes_a_shard_objective_by_its_arrays(conll):
    # the scheduler weighs moving a result by its sizeof: an objective must not
    # look like a few hundred bytes (Dask then copied it to idle workers)
    from dask.sizeof import sizeof

    X, y = conll
    shard = encode_shard(X, y)
    layout = build_layout(shard.corpus, shard.labels, len(shard.classes), min_freq=0,
                          all_possible_states=False, all_possible_transitions=True)
    label_map = np.arange(len(shard.classes), dtype=np.int32)
    held = build_shard_objective(shard, None, label_map, layout)
    assert sizeof(held) >= shard.corpus.nbytes + held.objective._wnode.nbytes


def test_a_shard_objective_is_bitwise_its_part_of_the_whole_objective(conll):
    # a shard in its own ids, over its part of the layout (restrict_layout),
    # gives the bits of the same sequences in the whole corpus's ids and layout
    X, y = conll
    vectorizer = sklearn_crf.SequenceVectorizer()
    corpus = vectorizer.fit_encode(X)
    classes, labels = encode_labels(y, corpus.seq_ptr)
    layout = build_layout(corpus, labels, len(classes), min_freq=0,
                          all_possible_states=False, all_possible_transitions=True)
    shard = encode_shard(X[70:], y[70:])
    attr_map = np.array([vectorizer.vocabulary_[name] for name in shard.vocabulary.attributes])
    label_map = np.searchsorted(classes, shard.classes).astype(np.int32)
    part = vectorizer.encode(X[70:])
    whole = CRFObjective(part, layout, label_map[shard.labels], np.ones(len(X) - 70),
                         c2=0.0, n_chunks=1)
    w = np.random.default_rng(0).normal(size=layout.n_params)
    value = evaluate_shard(build_shard_objective(shard, attr_map, label_map, layout), w)
    loss, grad = whole.nll(w)
    assert value.loss == loss
    np.testing.assert_array_equal(value.grad, grad)


def test_l2_fit_with_sample_weights_matches_the_local_fit(client, conll):
    # the weights travel with their shards
    X, y = conll
    weights = np.random.default_rng(0).uniform(0.2, 3.0, len(X))
    local, fit = _fit_both(client, X, y, sample_weight=weights, c2=3.0, **TIGHT)
    _assert_same_model(local, fit)
    unweighted = CRFTagger(c2=3.0, **TIGHT).fit(X, y)
    assert np.max(np.abs(unweighted.coef_ - local.coef_)) > 1e-3


def test_l1_owlqn_fit_matches_the_local_fit(client, conll):
    local, fit = _fit_both(client, *conll, c1=0.5, c2=5.0, **dict(TIGHT, tol=1e-9))
    assert np.count_nonzero(local.coef_ == 0) > 0  # L1 at work
    _assert_same_model(local, fit, max_iter_gap=5)
    np.testing.assert_array_equal(fit.result.w == 0, local.coef_ == 0)


def _first_iterations(client, sharded, X, y, **params):
    """The local and the sharded fit after a few iterations (the same up to rounding)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        local = CRFTagger(max_iter=5, **params).fit(X, y)
        problem = prepare_sharded(sharded, local.get_params())
        fit = fit_sharded(problem, local.get_params())
    problem.close()
    assert _layouts_equal(problem.layout, local.layout_)
    assert fit.result.n_iter == local.n_iter_
    np.testing.assert_allclose(fit.result.w, local.coef_, rtol=1e-9, atol=1e-12)
    return local, problem


def test_shards_of_a_corpus_store_fit_the_local_model(client, conll, tmp_path):
    X, y = conll
    batches = ((X[a:a + 25], y[a:a + 25]) for a in range(0, len(X), 25))
    encode_stream(batches, directory=tmp_path / "store", label_codes=True)
    sharded = ShardedCorpus.from_store(client, tmp_path / "store", n_shards=3)
    local, problem = _first_iterations(client, sharded, X, y, c2=0.1)
    assert vocabulary_state(problem.vectorizer) == vocabulary_state(local.vectorizer_)


def test_hashed_shards_fit_the_local_model(client, conll):
    X, y = conll
    sharded = ShardedCorpus.from_sources(client, _sources([0, 50, N_TRAIN]), hashing=2**12)
    local, problem = _first_iterations(client, sharded, X, y, c2=0.1, hashing=2**12)
    np.testing.assert_array_equal(problem.vectorizer.hash_slots_, local.vectorizer_.hash_slots_)


def _nll_score(vectorizer, classes, layout, X_val, y_val):
    """Minus the validation NLL per token: CRFTagger's validation_scoring=None."""
    corpus = vectorizer.encode(X_val)
    val_classes, codes = encode_labels(y_val, corpus.seq_ptr)
    index = {label: i for i, label in enumerate(classes.tolist())}
    labels = np.array([index[c] for c in val_classes.tolist()], np.int32)[codes]
    objective = CRFObjective(corpus, layout, labels, np.ones(corpus.n_sequences), c2=0.0,
                             n_chunks=1)
    return lambda w: -objective.nll(w)[0] / corpus.n_tokens


def test_early_stopping_on_a_validation_set_matches_the_local_fit(client, conll):
    X, y = conll
    X_val, y_val = _conll_part(N_TRAIN, N_TRAIN + 40)
    params = dict(c2=0.001, early_stopping=True, n_iter_no_change=2, max_iter=300, tol=1e-10)
    local = CRFTagger(**params).fit(X, y, X_val=X_val, y_val=y_val)
    assert local.best_iteration_ < local.n_iter_  # it stopped early
    problem = prepare_sharded(ShardedCorpus.from_sequences(client, X, y, n_shards=2),
                              local.get_params())
    monitor = ValidationMonitor(
        _nll_score(problem.vectorizer, problem.classes, problem.layout, X_val, y_val),
        n_iter_no_change=2)
    fit = fit_sharded(problem, local.get_params(), monitor=monitor)
    assert fit.result.best_iteration == local.best_iteration_
    assert fit.result.n_iter == local.n_iter_
    np.testing.assert_allclose(fit.result.validation_scores, local.validation_scores_,
                               rtol=1e-8)
    np.testing.assert_allclose(fit.result.w, local.coef_, rtol=1e-6,
                               atol=1e-6 * np.max(np.abs(local.coef_)))


def test_fit_is_deterministic_for_a_sharding(client, conll):
    X, y = conll
    params = CRFTagger(c2=0.1, max_iter=4).get_params()
    runs = []
    for _ in range(2):
        problem = prepare_sharded(ShardedCorpus.from_sequences(client, X, y, n_shards=3),
                                  params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            runs.append(fit_sharded(problem, params).result.w)
    np.testing.assert_array_equal(runs[0], runs[1])


def _objective_shards(dask_scheduler):
    """``{objective key: [its shard's key]}`` of every shard objective the scheduler knows."""
    return {str(ts.key): [str(d.key) for d in ts.dependencies if "sklearn-crf-shard" in str(d.key)]
            for ts in dask_scheduler.tasks.values() if "build_shard_objective" in str(ts.key)}


async def _keep_only_on(dask_scheduler, keys, address):
    """Delete the copies of ``keys`` held by any worker but ``address``."""
    for worker in list(dask_scheduler.workers):
        if worker != address:
            await dask_scheduler.delete_worker_data(worker, keys, "sklearn-crf-test")


def _sole_holder(client):
    """A worker that alone holds a shard objective and that objective's shard
    (killing it loses both). When every objective also has copies elsewhere
    (Dask copies a result when it moves a task to an idle worker), the copies
    of one objective and its shard are deleted first, so that a kill loses them."""
    who_has = {str(key): set(holders) for key, holders in client.who_has().items()}
    for objective, shards in client.run_on_scheduler(_objective_shards).items():
        holders = who_has.get(objective, set())
        if len(holders) == 1 and shards and all(who_has.get(k) == holders for k in shards):
            return holders.pop()
    for objective, shards in client.run_on_scheduler(_objective_shards).items():
        holders = set.intersection(who_has.get(objective, set()),
                                   *(who_has.get(k, set()) for k in shards))
        if shards and holders:
            victim = sorted(holders)[0]
            client.run_on_scheduler(_keep_only_on, keys=[objective, *shards], address=victim)
            return victim
    return None


def _killer(client, at_iteration):
    """A monitor that, from iteration ``at_iteration`` on (never if None), kills
    once a worker process that alone holds a shard objective and its shard, and
    records its iterates."""
    killed = []

    def score(w):
        if at_iteration is not None and len(monitor.scores) + 1 >= at_iteration and not killed:
            victim = _sole_holder(client)
            if victim is not None:
                for address, pid in client.run(os.getpid, workers=[victim]).items():
                    os.kill(pid, signal.SIGKILL)
                    killed.append(address)
                deadline = time.monotonic() + TIMEOUT
                while killed[0] in client.scheduler_info()["workers"]:
                    assert time.monotonic() < deadline, "the scheduler did not notice the kill"
                    time.sleep(0.05)
        return float(w @ w)

    monitor = ValidationMonitor(score)
    return monitor, killed


def test_a_killed_worker_loses_no_shard_read_from_a_source(client):
    bounds = [0, 40, 80, N_TRAIN]
    params = CRFTagger(c2=0.1, max_iter=8).get_params()

    def run(kill_at):
        sharded = ShardedCorpus.from_sources(client, _sources(bounds))
        problem = prepare_sharded(sharded, params)
        monitor, killed = _killer(client, kill_at)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = fit_sharded(problem, params, monitor=monitor)
        problem.close()
        client.wait_for_workers(2, timeout=TIMEOUT)  # the nanny restarts it
        return fit, killed

    expected, _ = run(kill_at=None)
    fit, killed = run(kill_at=3)
    assert len(killed) == 1
    # the lost shards and objectives were recomputed from their sources: the same bits
    assert fit.result.n_iter == expected.result.n_iter == 8
    np.testing.assert_array_equal(fit.result.w, expected.result.w)
    np.testing.assert_array_equal(fit.result.losses, expected.result.losses)


def test_a_killed_worker_holding_a_scattered_shard_stops_the_fit(client, conll):
    X, y = conll
    params = CRFTagger(c2=0.1, max_iter=12).get_params()
    sharded = ShardedCorpus.from_sequences(client, X, y, n_shards=4)
    problem = prepare_sharded(sharded, params)
    monitor, killed = _killer(client, 3)
    with pytest.raises(ShardLostError, match="scattered from the driver's memory"):
        fit_sharded(problem, params, monitor=monitor)
    assert len(killed) == 1
    client.wait_for_workers(2, timeout=TIMEOUT)


@pytest.mark.parametrize("params, message", [
    (dict(hashing=2**10), "the shards were encoded with hashing=None"),
    (dict(solver="ap"), "cannot train on a ShardedCorpus"),
])
def test_unsupported_settings_are_refused(client, conll, params, message):
    X, y = conll
    sharded = ShardedCorpus.from_sequences(client, X[:10], y[:10], n_shards=2)
    with pytest.raises(ValueError, match=message):
        prepare_sharded(sharded, CRFTagger(**params).get_params())


def test_from_sequences_checks_n_shards(client, conll):
    X, y = conll
    with pytest.raises(ValueError, match="n_shards must be between 1 and"):
        ShardedCorpus.from_sequences(client, X[:3], y[:3], n_shards=4)



def test_crftagger_fit_on_a_sharded_corpus(client, conll):
    X, y = conll
    X_val, y_val = _conll_part(N_TRAIN, N_TRAIN + 40)
    params = dict(c2=3.0, early_stopping=True, n_iter_no_change=3, **TIGHT)
    local = CRFTagger(**params).fit(X, y, X_val=X_val, y_val=y_val)
    sharded = ShardedCorpus.from_sources(client, _sources([0, 60, N_TRAIN]))
    crf = CRFTagger(**params).fit(sharded, None, X_val=X_val, y_val=y_val)
    assert crf.vectorizer_.feature_names_ == local.vectorizer_.feature_names_
    assert crf.n_iter_ == local.n_iter_ and crf.best_iteration_ == local.best_iteration_
    np.testing.assert_allclose(crf.coef_, local.coef_, rtol=1e-6,
                               atol=1e-6 * np.max(np.abs(local.coef_)))
    assert crf.predict(X_val) == local.predict(X_val)
    with pytest.raises(ValueError, match="labels and sequence weights come with its shards"):
        CRFTagger().fit(sharded, y)


# ---------------------------------------------------------------------------
# a worker killed at any point of the fit, the weights' scatter included
# ---------------------------------------------------------------------------

#: the longest a fit with a kill may take before it counts as a hang
FIT_BOUND = 600


def _kill_one_holder(client):
    """SIGKILL the process of one worker that holds shard objectives."""
    holders = [address for address, keys in client.has_what().items()
               if any("build_shard_objective" in str(key) for key in keys)]
    pids = client.run(os.getpid, workers=holders[:1])
    for pid in pids.values():
        os.kill(pid, signal.SIGKILL)
    return list(pids)


@pytest.fixture
def kill_at_scatter(monkeypatch):
    """Kill a worker when the driver sends the weights of the 3rd evaluation:
    just before the scatter ("before": the scheduler still lists the worker,
    the scatter may target it), or just after it ("after": the weights'
    only copy may die before the shards' tasks fetch it)."""
    from sklearn_crf._training import distributed

    calls, killed = [], []
    original = distributed._scatter

    def install(when):
        def scatter(client_, value, what):
            if what == "the weights":
                calls.append(1)
                if len(calls) == 3 and when == "before":
                    killed.extend(_kill_one_holder(client_))
            future = original(client_, value, what)
            if what == "the weights" and len(calls) == 3 and when == "after":
                killed.extend(_kill_one_holder(client_))
            return future

        monkeypatch.setattr(distributed, "_scatter", scatter)
        return killed

    return install


def _fit_in_time(problem, params):
    """fit_sharded in a thread: its result or error, or a failure after FIT_BOUND s."""
    import threading

    outcome = {}

    def run():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                outcome["fit"] = fit_sharded(problem, params)
        except BaseException as error:  # noqa: BLE001 - reported below
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(FIT_BOUND)
    assert not thread.is_alive(), f"the fit hung for {FIT_BOUND} s after a worker was killed"
    return outcome


def _make_sharded(kind, client, conll, tmp_path):
    X, y = conll
    if kind == "from_sources":
        return ShardedCorpus.from_sources(client, _sources([0, 30, 60, 90, N_TRAIN]))
    if kind == "from_store":
        store = tmp_path / "store"
        if not (store / "corpus.json").exists():
            encode_stream(((X[a:a + 30], y[a:a + 30]) for a in range(0, len(X), 30)),
                          directory=store, label_codes=True)
        return ShardedCorpus.from_store(client, store, n_shards=4)
    return ShardedCorpus.from_sequences(client, X, y, n_shards=4)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["from_sources", "from_store", "from_sequences"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_worker_killed_while_the_weights_are_sent_ends_as_documented(
        fresh_client, conll, tmp_path, kill_at_scatter, kind, when):
    client = fresh_client
    params = CRFTagger(c2=0.1, max_iter=6).get_params()
    problem = prepare_sharded(_make_sharded(kind, client, conll, tmp_path), params)
    expected = _fit_in_time(problem, params)["fit"]
    problem.close()
    problem = prepare_sharded(_make_sharded(kind, client, conll, tmp_path), params)
    killed = kill_at_scatter(when)
    outcome = _fit_in_time(problem, params)
    problem.close()
    assert len(killed) == 1
    if "error" in outcome:
        # only a shard that Dask cannot recompute may stop the fit, by name
        assert kind == "from_sequences", outcome["error"]
        assert isinstance(outcome["error"], ShardLostError), repr(outcome["error"])
        assert "shard" in str(outcome["error"])
        return
    fit = outcome["fit"]
    assert fit.result.n_iter == expected.result.n_iter
    np.testing.assert_array_equal(fit.result.w, expected.result.w)
