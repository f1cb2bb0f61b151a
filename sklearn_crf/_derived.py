"""Values derived from an object and kept beside it, not on it.

A serving call must not change a fitted model (only ``fit`` sets its
attributes), yet a few values derived from its arrays are worth computing
once rather than at every call: :class:`DerivedValues` keeps them in a table
of its own, one entry per object, for as long as the object lives and its
sources are the same.
"""

import weakref
from operator import is_


class DerivedValues:
    """A value derived from each of several objects, kept while the object
    lives (a weak reference drops its entry with it) and while what it was
    derived from is the same: ``sources``, objects compared by identity, and
    ``values``, compared by value (the size of a dict that grows in place,
    the bytes of an array that may change in place).

    An object without weak references gets no entry: its value is computed
    at every call.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_crf._derived import DerivedValues
    >>> class Layout:
    ...     attr_ptr = np.array([0, 2, 3])
    >>> table, layout = DerivedValues(), Layout()
    >>> table.get(layout, (layout.attr_ptr,)) is None
    True
    >>> table.put(layout, layout.attr_ptr[-1] * 2, (layout.attr_ptr,))
    np.int64(6)
    >>> table.get(layout, (layout.attr_ptr,))
    np.int64(6)
    >>> layout.attr_ptr = np.array([0, 1])  # another source: no value
    >>> table.get(layout, (layout.attr_ptr,)) is None
    True
    """

    def __init__(self):
        self._entries = {}

    def __contains__(self, key):
        """``id(owner) in table``: whether a value is kept for that object
        (by its id, so that one can tell its entry went with it)."""
        return key in self._entries

    def get(self, owner, sources=(), values=()):
        """The value kept for ``owner`` from these ``sources`` and ``values``, or None."""
        entry = self._entries.get(id(owner))
        if (entry is None or entry[0]() is not owner or entry[2] != values
                or len(entry[1]) != len(sources) or not all(map(is_, entry[1], sources))):
            return None
        return entry[3]

    def kept(self, owner, derive, sources=(), values=()):
        """The value kept for ``owner`` from these ``sources`` and
        ``values``; when there is none, ``derive()``, kept (:meth:`put`)
        and returned."""
        value = self.get(owner, sources, values)
        if value is None:
            value = self.put(owner, derive(), sources, values)
        return value

    def put(self, owner, value, sources=(), values=()):
        """Keep ``value`` for ``owner``, derived from ``sources`` and
        ``values``; returns ``value``."""
        key = id(owner)
        try:
            ref = weakref.ref(owner, lambda _, key=key: self._entries.pop(key, None))
        except TypeError:  # no weak references: nothing kept
            return value
        self._entries[key] = (ref, tuple(sources), tuple(values), value)
        return value
