"""Streamed encoding: a corpus built chunk by chunk, its feature dicts never all
in memory at once."""

import logging
from numbers import Integral

import numpy as np

from .._io.corpus_store import CorpusWriter, LabelCodes, load_corpus
from .validation import check_sequences, encode_labels
from .vectorizer import EncodedCorpus, SequenceVectorizer

__all__ = ["encode_stream"]

logger = logging.getLogger(__name__)


def encode_stream(batches, *, hashing=None, directory=None, overwrite=False,
                  label_codes=False):
    """Encode a corpus that comes in batches: the vocabulary and the encoded
    corpus of all of them, one batch in memory at a time.

    Each batch is a tuple ``(X, y)``: sequences in any form
    :class:`SequenceVectorizer` accepts (feature dicts, arrays of dense
    features, ``(tokens, array)`` tuples) and their label sequences (or None,
    for every batch, for an unlabeled corpus). The vocabulary grows batch by
    batch (:meth:`SequenceVectorizer.partial_fit_encode`) and the labels are
    coded as they come, so the result is **bitwise** that of the whole corpus
    in memory, ``SequenceVectorizer(n_features=hashing).fit_encode(all_X)``
    with ``all_y``: the same vocabulary in the same order, the same arrays,
    zero-valued entries and dense parts included, the same classes. CRFsuite's
    rules that decide which weights a model has (``min_freq``,
    ``all_possible_states``, ``all_possible_transitions``) read the encoded
    corpus only, so a model fitted on it is the model of the in-memory fit.

    With ``directory``, each encoded batch is appended to the files of a
    corpus store (:func:`~sklearn_crf.save_corpus`'s format) as it comes and
    the result is the store memory-mapped back: peak memory is that of one
    batch (its feature dicts and their encoding) plus the vocabulary, however
    large the corpus (with ``label_codes=True``; lists of labels are Python
    objects, one per token). Without it, the batches are encoded in memory and
    concatenated at the end (peak: the encoded corpus twice, plus one batch).

    Parameters
    ----------
    batches : iterable of tuple (X, y)
        The corpus, batch by batch (e.g. a generator that featurizes the
        chunks of :func:`~sklearn_crf.iter_conll`). Empty batches are skipped.
    hashing : int, default=None
        ``n_features`` of the :class:`SequenceVectorizer` (None: a vocabulary
        of attribute names).
    directory : str or path-like, default=None
        Write a corpus store there (it must be empty, or hold a store and
        ``overwrite`` be true) and return it memory-mapped.
    overwrite : bool, default=False
        Replace a store already in ``directory``.
    label_codes : bool, default=False
        Return the labels as a :class:`LabelCodes` (int32 codes, one per
        token, and the classes) instead of lists of labels.

    Returns
    -------
    corpus : EncodedCorpus
        Every sequence of every batch, in order; ``corpus.vectorizer`` is the
        fitted :class:`SequenceVectorizer`.
    y : list of lists of labels, LabelCodes or None
        None when the batches have no labels.

    Raises
    ------
    ValueError, TypeError
        A bad batch: the message names the batch and where its first
        sequence is in the stream, then what :class:`SequenceVectorizer` (or
        the label checks) say, with indices within the batch. With
        ``directory``, the unfinished store has no ``corpus.json``.

    See Also
    --------
    sklearn_crf.iter_conll : A CoNLL file chunk by chunk.
    sklearn_crf.load_corpus : Load a corpus store.

    Examples
    --------
    A CoNLL file larger than memory: featurize it chunk by chunk into a store.

    >>> import os, tempfile
    >>> from sklearn_crf import SequenceFeaturizer
    >>> from sklearn_crf._io.conll import iter_conll
    >>> from sklearn_crf._features.streaming import encode_stream
    >>> from sklearn_crf.datasets import _conll2002
    >>> path = os.path.join(os.path.dirname(_conll2002.__file__), "data", "esp.testb.gz")
    >>> featurizer = SequenceFeaturizer()
    >>> batches = ((featurizer.transform(chunk.sentences), chunk.tags)
    ...            for chunk in iter_conll(path, chunk_size=500))
    >>> corpus, y = encode_stream(batches, directory=tempfile.mkdtemp(), label_codes=True)
    >>> corpus.n_sequences, y.classes[:3]
    (1517, array(['B-LOC', 'B-MISC', 'B-ORG'], dtype='<U6'))
    >>> corpus.n_attributes == corpus.vectorizer.n_attributes_
    True
    """
    if hashing is not None and (isinstance(hashing, bool) or not isinstance(hashing, Integral)):
        raise TypeError(f"hashing must be None or an int, got {type(hashing).__name__}")
    vec = SequenceVectorizer(n_features=hashing)
    writer = None if directory is None else CorpusWriter(directory, overwrite=overwrite)
    try:
        result = _encode_batches(batches, vec, writer)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    parts, code_parts, y_all, labels = result
    classes = remap = None
    if labels is not None:
        classes, remap = encode_labels([labels], np.array([0, len(labels)], dtype=np.int64))
    if writer is not None:
        writer.close(vec, classes, code_map=remap)
        return load_corpus(directory, mmap=True, label_codes=label_codes)
    corpus = EncodedCorpus.concatenate(parts)
    if labels is None:
        return corpus, None
    if not label_codes:
        return corpus, y_all
    codes = np.concatenate(code_parts) if code_parts else np.zeros(0, np.int32)
    return corpus, LabelCodes(remap[codes], classes)


def _encode_batches(batches, vec, writer):
    """Encode every batch; returns the encoded parts (unless written), the
    label codes of each part (codes in order of first appearance), the labels
    as given, and the distinct labels in order of first appearance (None for
    an unlabeled stream)."""
    parts, code_parts, y_all = [], [], []
    label_ids = {}  # label → code, in order of first appearance
    labeled = None
    n_seq = n_tok = 0
    n_batches = 0
    k = -1
    for batch in batches:  # not enumerate: its result tuple would keep the last batch
        k += 1
        if type(batch) is not tuple or len(batch) != 2:
            raise TypeError(
                f"batch {k} is a {type(batch).__name__}; each batch must be a tuple "
                "(X, y), with y None for an unlabeled corpus"
            )
        X, y = batch
        if labeled is None:
            labeled = y is not None
        elif labeled != (y is not None):
            raise ValueError(
                f"batch {k} has {'labels' if y is not None else 'no labels'}, unlike "
                "the batches before it: every batch needs labels, or none"
            )
        if hasattr(X, "__len__") and len(X) == 0 and (y is None or len(y) == 0):
            batch = X = y = None
            continue
        try:
            part = vec.partial_fit_encode(X)
            codes = None if y is None else _label_codes(y, part, label_ids)
        except (ValueError, TypeError) as exc:
            raise type(exc)(
                f"batch {k} (its X[0] is sequence {n_seq} of the stream): {exc}"
            ) from exc
        if writer is not None:
            writer.append(part, codes)
        else:
            parts.append(part)
            if codes is not None:
                code_parts.append(codes)
                y_all.extend(y)
        n_seq += part.n_sequences
        n_tok += part.n_tokens
        n_batches += 1
        batch = X = y = part = None  # the batch can go before the next one comes
        logger.info("encode_stream: batch %d, %d sequences, %d tokens so far, %d attributes",
                    k, n_seq, n_tok, vec.n_attributes_)
    if not n_batches:
        raise ValueError("the stream has no sequences: encode_stream needs at least one batch")
    return parts, code_parts, y_all, (list(label_ids) if labeled else None)


def _label_codes(y, part, label_ids):
    """The codes of a batch's labels in ``label_ids`` (grown with its new labels
    in order of first appearance), after :func:`encode_labels`' checks."""
    if part.n_tokens == 0:  # encode_labels wants at least one label
        check_sequences(y, "y")
        if len(y) != part.n_sequences:
            raise ValueError(f"X and y have different numbers of sequences: "
                             f"{part.n_sequences} and {len(y)}")
        for s, seq in enumerate(y):
            if len(seq):
                raise ValueError(f"sequence {s} has 0 tokens in X but {len(seq)} labels in y")
        return np.zeros(0, dtype=np.int32)
    classes, codes = encode_labels(y, part.seq_ptr)
    classes = classes.tolist()
    present, first = np.unique(codes, return_index=True)
    for c in present[np.argsort(first, kind="stable")].tolist():
        label_ids.setdefault(classes[c], len(label_ids))
    return np.array([label_ids[label] for label in classes], dtype=np.int32)[codes]
