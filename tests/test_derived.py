"""Values kept beside the objects they derive from (sklearn_crf._derived)."""

import gc

import numpy as np

from sklearn_crf._derived import DerivedValues


class Owner:
    pass


def test_a_value_is_kept_while_its_sources_and_values_are_the_same():
    table, owner, source = DerivedValues(), Owner(), np.arange(3)
    assert table.get(owner, (source,), (3,)) is None
    value = table.put(owner, "derived", (source,), (3,))
    assert value == "derived"
    assert table.get(owner, (source,), (3,)) == "derived"
    assert table.get(owner, (source.copy(),), (3,)) is None  # an equal array, not the same
    assert table.get(owner, (source,), (4,)) is None  # grown in place
    assert table.get(Owner(), (source,), (3,)) is None


def test_the_entry_goes_with_its_owner():
    table, owner = DerivedValues(), Owner()
    table.put(owner, 1)
    key = id(owner)
    assert key in table
    del owner
    gc.collect()
    assert key not in table


def test_an_owner_without_weak_references_gets_no_entry():
    table, owner = DerivedValues(), (1, 2)  # tuples take no weak reference
    assert table.put(owner, "v") == "v"
    assert id(owner) not in table
    assert table.get(owner) is None


def test_kept_derives_once_and_again_when_a_source_changes():
    table, owner, source = DerivedValues(), Owner(), np.arange(3)
    calls = []

    def derive():
        calls.append(1)
        return len(calls)

    assert table.kept(owner, derive, (source,)) == 1
    assert table.kept(owner, derive, (source,)) == 1  # kept: not derived again
    assert table.kept(owner, derive, (np.arange(3),)) == 2  # another source
    assert len(calls) == 2
