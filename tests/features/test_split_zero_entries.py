"""The zero split of the encode loop (encode_dicts._split_zero_entries): the
same arrays from int32 and int64 entries, by binary searches or running
counts."""

import numpy as np
import pytest

from sklearn_crf import SequenceVectorizer
from sklearn_crf._features import encode_dicts


def _entries(seed, n_tokens, zero_share):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 9, size=n_tokens)
    tok_ptr = np.zeros(n_tokens + 1, dtype=np.int64)
    np.cumsum(counts, out=tok_ptr[1:])
    ids = rng.integers(0, 1000, size=tok_ptr[-1])
    entries = np.where(rng.random(len(ids)) < zero_share, ~ids, ids).astype(np.int64)
    slow_pos = np.flatnonzero(entries >= 0)[::7]
    slow_val = rng.uniform(-2.0, 2.0, size=len(slow_pos))
    return tok_ptr, entries, slow_pos, slow_val


def _reference(tok_ptr, entries, slow_pos, slow_val):
    """Token by token: (tok_ptr, tok_attr, tok_val, zero_tok, zero_attr)."""
    value = np.ones(len(entries))
    value[slow_pos] = slow_val
    nz_ptr, tok_attr, tok_val, zero_tok, zero_attr = [0], [], [], [], []
    for t in range(len(tok_ptr) - 1):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            if entries[k] >= 0:
                tok_attr.append(entries[k])
                tok_val.append(value[k])
            else:
                zero_tok.append(t)
                zero_attr.append(~entries[k])
        nz_ptr.append(len(tok_attr))
    return nz_ptr, tok_attr, tok_val, zero_tok, zero_attr


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n_tokens", [30, 3000])  # binary searches; running counts
@pytest.mark.parametrize("zero_share", [0.0, 0.5, 1.0])
def test_zero_split_of_int32_and_int64_entries(dtype, n_tokens, zero_share):
    """Both routes and both entry dtypes give the arrays of a token-by-token
    split, in the corpus's dtypes (int64 offsets and zero tokens, int32
    attributes, float64 values)."""
    tok_ptr, entries, slow_pos, slow_val = _entries(n_tokens, n_tokens, zero_share)
    if n_tokens > 100:
        assert len(entries) >= encode_dicts._SMALL_SPLIT
    got = encode_dicts._split_zero_entries(tok_ptr, entries.astype(dtype), slow_pos,
                                           slow_val)
    for array, expected, want in zip(got, _reference(tok_ptr, entries, slow_pos, slow_val),
                                     (np.int64, np.int32, np.float64, np.int64, np.int32)):
        assert array.dtype == want
        np.testing.assert_array_equal(array, np.asarray(expected, dtype=want))


def test_encoded_batches_match_token_by_token():
    """Many sentences (batched lookups, int32 entries) with values of 0 and
    other values encode to the corpus of one sentence at a time."""
    rng = np.random.default_rng(3)
    X = [[{f"w={rng.integers(40)}": 1.0, "cap": bool(rng.integers(2)),
           "len": float(rng.integers(3)), f"s={rng.integers(5)}": "x"}
          for _ in range(rng.integers(1, 12))] for _ in range(400)]
    vectorizer = SequenceVectorizer()
    corpus = vectorizer.fit_encode(X)
    assert len(corpus.zero_tok) and np.any(corpus.tok_val != 1.0)
    assert len(corpus.tok_attr) + len(corpus.zero_tok) >= encode_dicts._SMALL_SPLIT
    parts = [vectorizer.encode([x]) for x in X]
    whole = type(corpus).concatenate(parts)
    for name in ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr"):
        a, b = getattr(corpus, name), getattr(whole, name)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
