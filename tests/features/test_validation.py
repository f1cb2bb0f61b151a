"""encode_labels against a token-by-token reference: codes, classes and which error first."""

import math

import numpy as np
import pytest

from sklearn_crf._features.validation import encode_labels


def _reference(y, seq_ptr):
    """The per-token loop encode_labels replaced: (label of each code in order of
    first appearance, codes) or the (type, message) of its first error."""
    index, codes = {}, []
    for s, seq in enumerate(y):
        n = int(seq_ptr[s + 1] - seq_ptr[s])
        if len(seq) != n:
            return ValueError, f"sequence {s} has {n} tokens in X but {len(seq)} labels in y"
        for t, label in enumerate(seq):
            try:
                code = index.get(label)
            except TypeError:
                return TypeError, f"y[{s}][{t}] is a {type(label).__name__}, which is not"
            if code is None:
                if label is None or (isinstance(label, float) and math.isnan(label)):
                    return ValueError, f"y[{s}][{t}] is {label!r}, not a label"
                code = index[label] = len(index)
            codes.append(code)
    return list(index), codes


def _seq_ptr(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_encode_labels_matches_the_token_loop(seed):
    rng = np.random.default_rng(seed)
    pool = ["A", "B", "C", None, float("nan"), ["x"]] if seed % 2 else [3, 1, 2, None, {}]
    y = []
    for _ in range(rng.integers(1, 6)):
        n = int(rng.integers(0, 5))
        # mostly good labels; now and then a bad one
        y.append([pool[int(rng.integers(0, len(pool)))] if rng.random() < 0.08
                  else pool[int(rng.integers(0, 3))] for _ in range(n)])
    lengths = [len(seq) for seq in y]
    if seed % 3 == 0 and y:
        s = int(rng.integers(0, len(y)))
        lengths[s] += 1  # X has one more token there
    seq_ptr = _seq_ptr(lengths)
    want = _reference(y, seq_ptr)
    if isinstance(want[0], type):
        with pytest.raises(want[0]) as info:
            encode_labels(y, seq_ptr)
        assert str(info.value).startswith(want[1])
        return
    labels, codes = want
    if not labels:
        with pytest.raises(ValueError, match="y holds no labels"):
            encode_labels(y, seq_ptr)
        return
    classes, got = encode_labels(y, seq_ptr)
    assert got.dtype == np.int32 and len(got) == len(codes)
    assert [classes.tolist()[c] for c in got] == [labels[c] for c in codes]
    assert classes.tolist() == sorted(labels)


def test_encode_labels_takes_tuples_and_arrays_of_labels():
    y = (("B", "A"), np.array(["A", "C", "B"]))
    classes, codes = encode_labels(y, _seq_ptr([2, 3]))
    assert classes.tolist() == ["A", "B", "C"]
    assert codes.tolist() == [1, 0, 0, 2, 1]
