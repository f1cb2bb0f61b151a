"""The pair memo (``sklearn_crf._features.memo``): items by key, then value."""

from collections import OrderedDict

import numpy as np
import pytest

from sklearn_crf._features.memo import (
    ABSENT,
    add_item,
    add_items,
    copy_memo,
    cut_back,
    has_item,
    item_entries,
    mark,
    memo_items,
    memo_of_items,
    memo_of_per_key,
    n_items,
    per_key_of_memo,
    token_entries,
)

ITEMS = [("w", "a"), ("w", "b"), ("n", True), ("n", False), ("s", "a"), ("w:x", "y")]
ENTRIES = [0, 3, 1, ~1, 2, 4]


def naive_entry(items, entries, key, value):
    """The entry of one item by a scan of the (key, value) list: tuple equality."""
    for item, entry in zip(items, entries):
        if item == (key, value):
            return entry
    return None


def test_item_entries_are_those_of_a_scan_of_the_items():
    memo = memo_of_items(ITEMS, ENTRIES)
    tokens = [{"w": "a", "n": 1, "s": "b"}, {}, {"n": 0.0, "w": "b", "x": "a", "w:x": "y"},
              {"n": np.float64(1.0), "s": "a", "w": "A"}, {"n": "1", "q": True}]
    want = [naive_entry(ITEMS, ENTRIES, k, v) for t in tokens for k, v in t.items()]
    got = item_entries(memo, tokens, len(want))
    assert got.dtype == np.int32
    assert got.tolist() == [ABSENT if w is None else w for w in want]
    assert [token_entries(memo, t) for t in tokens] == [
        [naive_entry(ITEMS, ENTRIES, k, v) for k, v in t.items()] for t in tokens]


def test_token_entries_read_any_mapping():
    memo = memo_of_items(ITEMS, ENTRIES)
    assert token_entries(memo, OrderedDict([("s", "a"), ("w", "z"), ("n", 0)])) == [2, None, ~1]


@pytest.mark.parametrize("value", [["x"], {"k": 1}])
def test_an_unhashable_value_raises_type_error(value):
    memo = memo_of_items(ITEMS, ENTRIES)
    for key in ("w", "unknown"):  # a known key and one without values
        with pytest.raises(TypeError):
            item_entries(memo, [{"w": "a", key: value}], 2)
        with pytest.raises(TypeError):
            token_entries(memo, {key: value})


def test_items_keep_their_order_by_key_and_count():
    memo = {}
    add_item(memo, "w", "a", 0)
    add_items(memo, [("n", True), ("w", "b")], [1, 2])
    assert list(memo_items(memo)) == [(("w", "a"), 0), (("w", "b"), 2), (("n", True), 1)]
    assert n_items(memo) == 3
    assert has_item(memo, "n", 1.0) and not has_item(memo, "n", "True")
    assert not has_item(memo, "z", "a")


def test_cut_back_drops_what_was_added_since_the_mark():
    memo = memo_of_items(ITEMS, ENTRIES)
    before = list(memo_items(memo))
    sizes = mark(memo)
    add_items(memo, [("w", "c"), ("new", "k"), ("n", 2.5), ("w", "d")], [5, 6, 7, 8])
    cut_back(memo, sizes)
    assert list(memo_items(memo)) == before
    assert "new" not in memo


def test_copy_memo_shares_no_dict():
    memo = memo_of_items(ITEMS, ENTRIES)
    copy = copy_memo(memo)
    add_item(copy, "w", "z", 9)
    add_item(copy, "k", "v", 10)
    assert dict(memo_items(memo)) == dict(zip(ITEMS, ENTRIES))


def test_the_stored_form_gives_the_memo_back():
    memo = memo_of_items(ITEMS, ENTRIES)
    str_ids, num_ids = per_key_of_memo(memo)
    assert str_ids == {"w": {"a": 0, "b": 3}, "s": {"a": 2}, "w:x": {"y": 4}}
    assert num_ids == {"n": 1}
    assert dict(memo_items(memo_of_per_key(str_ids, num_ids))) == dict(zip(ITEMS, ENTRIES))
