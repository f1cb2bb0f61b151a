"""From a feature dict's items to attribute names and values: CRFsuite's rules.

One home for how features are named, so that the vectorizer, which reads
feature dicts, and the featurizers, which name their features without
building dicts, give every feature the same attribute: a str value ``v`` of
the key ``k`` is the attribute ``"k:v"`` of value 1 (:data:`str_attribute`),
a number is the attribute ``"k"`` of that value, a list gives one ``"k:v"``
per item and a nested dict joins its keys the same way
(:func:`flatten_feature`).
"""

import math
from collections.abc import Mapping

import numpy as np

_NUMBER_TYPES = (int, float, np.integer, np.floating, np.bool_)
_CONTAINER_TYPES = (list, tuple, set, frozenset)


#: ``str_attribute((key, value))``: the attribute name of the feature ``key``
#: with the str value ``value``, ``key:value`` (a nested dict's keys are joined
#: the same way; ``str_attribute((key, ""))`` is the prefix of them all). A
#: C function of the item, as cheap as building the name in place (and
#: ``map(str_attribute, items)`` names many in C loops)
str_attribute = ":".join


def str_splits(name):
    """Every ``(key, value)`` whose :data:`str_attribute` is ``name``: one per ``":"``."""
    cut = name.find(":")
    while cut >= 0:
        yield name[:cut], name[cut + 1:]
        cut = name.find(":", cut + 1)


def _decode(value, s, t, name):
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(
            f"X[{s}][{t}][{name!r}] holds bytes that are not UTF-8: {value[:20]!r}"
        ) from None


def flatten_feature(key, value, s, t, prefix=""):
    """The (attribute name, value) pairs of the item ``key: value`` of token
    ``X[s][t]`` (a nested dict's item: under ``prefix``), every form of value
    CRFsuite reads; a TypeError or ValueError says where a bad one is."""
    if isinstance(key, bytes):
        key = _decode(key, s, t, prefix + repr(key))
    if not isinstance(key, str):
        raise TypeError(
            f"X[{s}][{t}] has the feature key {prefix}{key!r} of type "
            f"{type(key).__name__}; feature keys must be str (or UTF-8 bytes)"
        )
    name = prefix + str(key)
    if isinstance(value, str):
        return [(str_attribute((name, value)), 1.0)]
    if isinstance(value, bytes):
        return [(str_attribute((name, _decode(value, s, t, name))), 1.0)]
    if isinstance(value, _NUMBER_TYPES):
        try:
            x = float(value)
        except OverflowError:
            raise ValueError(
                f"X[{s}][{t}][{name!r}] is an int too large for a float64"
            ) from None
        return [(name, x)]
    if isinstance(value, Mapping):
        out = []
        for k2, v2 in value.items():
            out.extend(flatten_feature(k2, v2, s, t, prefix=str_attribute((name, ""))))
        return out
    if isinstance(value, _CONTAINER_TYPES):
        out = []
        prefix = str_attribute((name, ""))
        for v2 in value:
            if isinstance(v2, bytes):
                v2 = _decode(v2, s, t, name)
            if not isinstance(v2, str):
                raise TypeError(
                    f"X[{s}][{t}][{name!r}] holds a {type(v2).__name__}; a list "
                    "or set feature value may only hold str"
                )
            out.append((prefix + v2, 1.0))
        return out
    raise TypeError(
        f"X[{s}][{t}][{name!r}] is a {type(value).__name__}; a feature value "
        "must be a str, a number, a bool, a list of str or a dict"
    )


def list_token(token, s, t):
    """(name, 1.0) pairs of a token given as a list of attribute names
    (python-crfsuite's form: ``["word=madrid", "shape=Xx"]``)."""
    if not isinstance(token, (list, tuple)):
        raise TypeError(
            f"X[{s}][{t}] is a {type(token).__name__}, expected a dict of features "
            "(feature name -> str, number, bool, list of str or dict) or a list of "
            "attribute names (str)"
        )
    out = []
    for name in token:
        if isinstance(name, bytes):
            name = _decode(name, s, t, "a list token")
        if not isinstance(name, str):
            raise TypeError(
                f"X[{s}][{t}] is a list token holding a {type(name).__name__} "
                f"({name!r}); a token given as a list may only hold attribute names (str)"
            )
        out.append((str(name), 1.0))
    return out


def raise_bad_value(X):
    """Find the first feature value of X that is not a finite float (NaN, inf, an
    int beyond float64, bytes that are not UTF-8) and say where it is."""
    for s, seq in enumerate(X):
        for t, token in enumerate(seq):
            if not isinstance(token, Mapping):
                continue  # a list of names: every value is 1
            for key, value in token.items():
                for name, x in flatten_feature(key, value, s, t):
                    if not math.isfinite(x):
                        raise ValueError(
                            f"X[{s}][{t}][{name!r}] is {x}; feature values must "
                            "be finite"
                        )
    raise ValueError("X contains a feature value that is not a finite float")  # pragma: no cover
