"""The pair memo: a token's ``(key, value)`` items to their entries, by key.

A fitted vocabulary by name looks a feature dict's items up here without
building attribute names: ``memo[key][value]`` is the entry of the item
``(key, value)``, an attribute id, or ``~id`` for a number value of 0
(``memo[key][True]`` and ``memo[key][False]`` for a number key seen with 1
and 0; ``True`` and ``False`` equal 1 and 0 of every numeric type, so they
hit for those values whatever their type). Two levels rather than one dict
of ``(key, value)`` tuples: a token's few keys are found at once (a small
table that stays in cache) and each value in its key's table, with no tuple
built, hashed and compared per item (fewer cache lines read per item: the
most of a served sentence's time), and the memo holds no tuple per item.

Each per-key dict keeps insertion order, so a call that grew the memo is
undone by :func:`cut_back` to a :func:`mark` taken before it.
"""

from itertools import chain, repeat

import numpy as np

#: no attribute: above every id (at most 2**31 - 2), so that an id and the
#: entry of a zero value of attribute ``a``, ``~a``, are never it. The memo's
#: default, an unknown attribute's entry until it is dropped, an absent cell
#: of the featurizers' token rows
ABSENT = np.iinfo(np.int32).max

#: the values of a key the memo does not hold: an empty dict, never written
_NO_VALUES = {}


def item_entries(memo, tokens, n_items):
    """The entry of each ``(key, value)`` item of the dict ``tokens``, in order,
    :data:`ABSENT` for an item the memo does not hold: an int32 array of
    ``n_items`` (the tokens' items). C loops (``map``), no Python code per
    item. A TypeError for an unhashable value (a list, a dict)."""
    return np.fromiter(
        map(dict.get, map(memo.get, chain.from_iterable(tokens), repeat(_NO_VALUES)),
            chain.from_iterable(map(dict.values, tokens)), repeat(ABSENT)),
        np.int32, n_items)


def token_entries(memo, token):
    """The entry of each item of one token (a dict or any Mapping), in order,
    None for an item the memo does not hold (a list). A TypeError for an
    unhashable value."""
    return list(map(dict.get, map(memo.get, token, repeat(_NO_VALUES)), token.values()))


def add_item(memo, key, value, entry):
    """The memo gives the item ``(key, value)`` the entry ``entry``."""
    values = memo.get(key)
    if values is None:
        values = memo[key] = {}
    values[value] = entry


def add_items(memo, items, entries):
    """The memo gives each ``(key, value)`` of ``items`` its entry of ``entries``."""
    get = memo.get
    for (key, value), entry in zip(items, entries):  # add_item, inlined: a fit's new words
        values = get(key)
        if values is None:
            values = memo[key] = {}
        values[value] = entry


def has_item(memo, key, value):
    """Whether the memo holds the item ``(key, value)``."""
    return value in memo.get(key, _NO_VALUES)


def n_items(memo):
    """The number of items the memo holds."""
    return sum(map(len, memo.values()))


def memo_items(memo):
    """The memo's ``((key, value), entry)``, key by key, each key's in the order
    they joined."""
    for key, values in memo.items():
        for value, entry in values.items():
            yield (key, value), entry


def memo_of_items(items, entries):
    """A memo of ``(key, value)`` items and their entries."""
    memo = {}
    add_items(memo, items, entries)
    return memo


def copy_memo(memo):
    """A memo with the same items that shares no dict with ``memo``."""
    return {key: dict(values) for key, values in memo.items()}


def mark(memo):
    """What :func:`cut_back` takes the memo back to: its size per key."""
    return dict(zip(memo, map(len, memo.values())))


def cut_back(memo, sizes):
    """The memo back to ``sizes`` (a :func:`mark`): the items added since dropped."""
    for key in [key for key in memo if key not in sizes]:
        del memo[key]
    for key, size in sizes.items():
        values = memo[key]
        for _ in range(len(values) - size):
            values.popitem()


def memo_of_per_key(str_ids, num_ids):
    """The memo from its stored form (:func:`per_key_of_memo`): ``str_ids[key]
    [value]`` the id of a str value's item, ``num_ids[key]`` the id of a number
    key (its items ``True`` -> id, ``False`` -> ``~id``)."""
    memo = {key: dict(ids) for key, ids in str_ids.items()}
    for key, idx in num_ids.items():
        add_item(memo, key, True, idx)
        add_item(memo, key, False, ~idx)
    return memo


def per_key_of_memo(memo):
    """``(str_ids, num_ids)``: the memo as what skops, JSON and the corpus store
    can hold (str keys of str values); :func:`memo_of_per_key` rebuilds it."""
    str_ids, num_ids = {}, {}
    for (key, value), idx in memo_items(memo):
        if type(value) is str:
            str_ids.setdefault(key, {})[value] = idx
        else:
            num_ids[key] = idx if idx >= 0 else ~idx
    return str_ids, num_ids
