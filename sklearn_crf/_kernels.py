"""The vectorizer's numba kernel (the CRF numerics live in :mod:`sklearn_crf._engine`)."""

import numpy as np

from ._engine.config import kernel


@kernel
def split_zero_entries(tok_ptr, entries, slow_pos, slow_val):
    """The arrays of an :class:`~sklearn_crf._vectorizer.EncodedCorpus` from
    entries where a zero-valued entry of attribute ``a`` is ``~a`` (negative)
    and every value is 1 except ``slow_val`` at the increasing positions
    ``slow_pos``: returns ``tok_ptr``, ``tok_attr``, ``tok_val`` of the
    non-zero entries and ``zero_tok``, ``zero_attr`` of the others (without
    zero entries, ``tok_ptr`` and ``tok_attr`` are the arrays given)."""
    n_tokens = tok_ptr.shape[0] - 1
    n = entries.shape[0]
    n_zero = 0
    for k in range(n):
        if entries[k] < 0:
            n_zero += 1
    tok_val = np.empty(n - n_zero)
    zero_tok = np.empty(n_zero, dtype=np.int64)
    zero_attr = np.empty(n_zero, dtype=np.int32)
    if n_zero == 0:
        for k in range(n):
            tok_val[k] = 1.0
        for i in range(slow_pos.shape[0]):
            tok_val[slow_pos[i]] = slow_val[i]
        return tok_ptr, entries, tok_val, zero_tok, zero_attr
    new_ptr = np.empty(n_tokens + 1, dtype=np.int64)
    tok_attr = np.empty(n - n_zero, dtype=np.int32)
    i = 0
    z = 0
    slow = 0
    new_ptr[0] = 0
    for t in range(n_tokens):
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = entries[k]
            if a < 0:
                zero_tok[z] = t
                zero_attr[z] = ~a
                z += 1
                continue
            tok_attr[i] = a
            if slow < slow_pos.shape[0] and slow_pos[slow] == k:
                tok_val[i] = slow_val[slow]
                slow += 1
            else:
                tok_val[i] = 1.0
            i += 1
        new_ptr[t + 1] = i
    return new_ptr, tok_attr, tok_val, zero_tok, zero_attr
