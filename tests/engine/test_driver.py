"""The batch driver: ranges on threads, blocks, and the first-use notice."""

import logging
import threading

import numpy as np
import pytest

from sklearn_crf._engine.driver import attribute_ranges, run_ranges


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_run_ranges_covers_every_item_once(n_threads):
    seen = np.zeros(101, dtype=int)
    lock = threading.Lock()

    def func(lo, hi):
        with lock:
            seen[lo:hi] += 1

    run_ranges(n_threads, len(seen), func)
    assert (seen == 1).all()


def test_run_ranges_raises_a_thread_error_in_the_caller():
    def func(lo, hi):
        if lo <= 50 < hi:
            raise KeyError("item 50")

    with pytest.raises(KeyError, match="item 50"):
        run_ranges(3, 100, func)


def test_run_ranges_keeps_its_helper_threads_between_calls():
    """Many calls start no new thread each: the helpers are kept, at most
    MAX_HELPERS of them."""
    from sklearn_crf._engine.threads import MAX_HELPERS

    seen = np.zeros(40, dtype=int)

    def func(lo, hi):
        seen[lo:hi] += 1

    def helpers():  # by name: the process may run other threads (a Dask client's)
        return {t for t in threading.enumerate() if t.name == "sklearn_crf-engine"}

    run_ranges(3, len(seen), func)
    before = helpers()
    for _ in range(200):
        run_ranges(3, len(seen), func)
    assert (seen == 201).all()
    after = helpers()
    assert before and before <= after and len(after) <= MAX_HELPERS


def test_run_ranges_nested_on_busy_threads_never_waits_for_a_helper():
    """Calls from more Python threads than there are helpers (a search's
    folds, each fitting on threads), with every helper kept busy by a slow
    range: each call ends, covering its items once, without waiting for a
    helper that is busy elsewhere."""
    from concurrent.futures import ThreadPoolExecutor

    from sklearn_crf._engine.threads import MAX_HELPERS

    release = threading.Event()
    released = []

    def slow(lo, hi):  # holds helpers until every nested call below has ended
        released.append(release.wait(timeout=60))  # False: a nested call waited

    blockers = [threading.Thread(target=run_ranges, args=(MAX_HELPERS + 1, MAX_HELPERS + 1,
                                                          slow)) for _ in range(2)]
    for thread in blockers:
        thread.start()

    def call(i):
        seen = np.zeros(30, dtype=int)

        def func(lo, hi):
            seen[lo:hi] += 1

        run_ranges(3, len(seen), func)
        return seen

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(call, range(32)))
    release.set()
    for thread in blockers:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert all((seen == 1).all() for seen in results)
    assert released and all(released)


def test_attribute_ranges_split_the_entries():
    index_ptr = np.array([0, 3, 3, 10, 11, 20])
    assert attribute_ranges(index_ptr, 1).tolist() == [0, 5]
    bounds = attribute_ranges(index_ptr, 2)
    assert bounds[0] == 0 and bounds[-1] == 5 and (np.diff(bounds) > 0).all()
    assert len(bounds) == 3  # one range per thread


def test_with_logging_configured_the_notice_is_a_log_record(monkeypatch, caplog, capsys):
    """When logging is configured, the compile notice is an INFO record of the
    ``sklearn_crf`` logger, and nothing goes to stderr (plain Python's one
    stderr line, and the notice once per process from an empty cache:
    tests/engine/test_first_use.py)."""
    from sklearn_crf._engine import first_use

    answers = iter([True, False])  # a first call that compiles, then a later one
    monkeypatch.setattr(first_use, "needs_compiling", lambda: next(answers))
    with caplog.at_level(logging.INFO, logger="sklearn_crf"):
        first_use.note_compilation()
        first_use.note_compilation()
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert records == [("sklearn_crf", logging.INFO, first_use.NOTICE)]
    assert capsys.readouterr().err == ""
