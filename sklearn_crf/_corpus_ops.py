"""Operations on an :class:`~sklearn_crf._vectorizer.EncodedCorpus` that its
consumers share (the tagger's validation split, the explanations)."""

import numpy as np

from ._vectorizer import EncodedCorpus


def _concatenated_ranges(starts, lengths):
    """The indices ``starts[i], ..., starts[i] + lengths[i] - 1`` for every i, in order."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(total)


def take_sequences(corpus, seqs):
    """The EncodedCorpus of the sequences ``seqs`` of ``corpus``, in that order.

    Parameters
    ----------
    corpus : EncodedCorpus
        The corpus (its ``dense`` part and ``vectorizer`` are kept).
    seqs : array-like of int
        Sequence indices (any order; repeats allowed).

    Returns
    -------
    subset : EncodedCorpus
        Its own arrays (copies), the attributes, zero entries and dense rows
        of those sequences.

    Examples
    --------
    >>> from sklearn_crf import SequenceVectorizer
    >>> corpus = SequenceVectorizer().fit_encode([[{"a": 1}], [{"b": 2}, {"a": 0}]])
    >>> sub = take_sequences(corpus, [1])
    >>> sub.n_sequences, sub.n_tokens, sub.tok_val.tolist(), sub.zero_tok.tolist()
    (1, 2, [2.0], [1])
    """
    seqs = np.asarray(seqs, dtype=np.int64).reshape(-1)
    seq_ptr = corpus.seq_ptr
    lengths = np.diff(seq_ptr)[seqs]
    toks = _concatenated_ranges(seq_ptr[seqs], lengths)
    n_entries = np.diff(corpus.tok_ptr)[toks]
    entries = _concatenated_ranges(corpus.tok_ptr[toks], n_entries)
    # zero entries: a token's zero entries, in the order of its new position
    order = np.argsort(corpus.zero_tok, kind="stable")
    zero_ptr = np.searchsorted(corpus.zero_tok[order], np.arange(corpus.n_tokens + 1))
    n_zero = np.diff(zero_ptr)[toks]
    zeros = order[_concatenated_ranges(zero_ptr[toks], n_zero)]
    return EncodedCorpus(
        tok_ptr=np.concatenate([[0], np.cumsum(n_entries)]).astype(np.int64),
        tok_attr=corpus.tok_attr[entries],
        tok_val=corpus.tok_val[entries],
        seq_ptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        n_attributes=corpus.n_attributes,
        zero_tok=np.repeat(np.arange(len(toks), dtype=np.int64), n_zero),
        zero_attr=corpus.zero_attr[zeros],
        dense=None if corpus.dense is None else np.ascontiguousarray(corpus.dense[toks]),
        vectorizer=corpus.vectorizer,
    )
