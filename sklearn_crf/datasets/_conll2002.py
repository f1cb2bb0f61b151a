"""Loader for the bundled CoNLL-2002 Spanish named-entity recognition data."""

import gzip
import io
import os
from importlib import resources
from numbers import Integral

import numpy as np
from sklearn.utils import Bunch

from .._io.conll import iter_blocks

_DATA_PACKAGE = "sklearn_crf.datasets"
_SUBSETS = ("train", "testa", "testb")
_LANGUAGES = ("esp",)

#: environment variable that caps the number of sentences of every subset
MAX_SENTENCES_ENV = "SKLEARN_CRF_MAX_SENTENCES"


def _data_file(name):
    """Return a traversable pointing to ``data/<name>`` inside the package."""
    return resources.files(_DATA_PACKAGE).joinpath("data", name)


def _document_ids(sentences):
    """Index of the news article of each sentence (see ``load_conll2002``)."""
    ids, doc = [], -1
    for tokens in sentences:
        head = tokens[:15]
        if any(head[i : i + 3] == ["(", "EFE", ")"] for i in range(len(head))):
            doc += 1
        ids.append(max(doc, 0))
    return np.array(ids, dtype=np.int64)


def _parse_conll(lines, source, n_sentences=None):
    """Parse ``TOKEN LABEL`` lines into lists of tokens and lists of labels.

    Parameters
    ----------
    lines : iterable of str
        Lines of the file, with or without their line terminators.

    source : str
        Name of the file, only used in error messages.

    n_sentences : int or None, default=None
        Stop after this many sentences. ``None`` reads the whole file.

    Returns
    -------
    sentences : list of list of str
        Tokens of each sentence.

    tags : list of list of str
        Labels of each sentence, aligned with ``sentences``.
    """
    sentences, tags = [], []
    for block in iter_blocks(lines, _split_on_space):
        if n_sentences is not None and len(sentences) >= n_sentences:
            break
        if block.docstart:  # document separators are not tokens
            continue
        tokens, labels = [], []
        for line_number, fields in zip(block.line_numbers, block.rows):
            if len(fields) < 2 or not fields[0] or not fields[-1]:
                raise ValueError(
                    f"Malformed line {line_number} in {source}: expected "
                    f"'TOKEN LABEL' separated by a single space, got "
                    f"{' '.join(fields)!r}."
                )
            # The token is the first column and the label the last one; any
            # column in between (e.g. a part-of-speech tag) is ignored.
            tokens.append(fields[0])
            labels.append(fields[-1])
        sentences.append(tokens)
        tags.append(labels)
    return sentences, tags


def _max_sentences_from_environment():
    """The cap that ``SKLEARN_CRF_MAX_SENTENCES`` sets (None when unset or empty)."""
    value = os.environ.get(MAX_SENTENCES_ENV, "").strip()
    if not value:
        return None
    try:
        cap = int(value)
    except ValueError:
        cap = 0
    if cap < 1:
        raise ValueError(
            f"the environment variable {MAX_SENTENCES_ENV} must be empty or a "
            f"positive integer, got {value!r}."
        )
    return cap


def _split_on_space(line):
    """The columns of a line of the bundled files (single-space separated)."""
    return line.split(" ")


def load_conll2002(
    subset="train", *, language="esp", return_X_y=False, n_sentences=None
):
    """Load the CoNLL-2002 Spanish named-entity recognition data.

    The data ships with the package (gzip-compressed), so no download is
    needed. Each sentence is a list of tokens and is labeled with one IOB2 tag
    per token over four entity types: person (``PER``), location (``LOC``),
    organization (``ORG``) and miscellaneous (``MISC``), i.e. nine labels
    ``O``, ``B-PER``, ``I-PER``, ``B-LOC``, ``I-LOC``, ``B-ORG``, ``I-ORG``,
    ``B-MISC`` and ``I-MISC``.

    ==================  ==========   =========
    subset              sentences    tokens
    ==================  ==========   =========
    ``"train"``         8,323        264,715
    ``"testa"`` (dev)   1,915        52,923
    ``"testb"`` (test)  1,517        51,533
    ==================  ==========   =========

    The Spanish texts come from the EFE news agency and were released for
    research as part of the CoNLL-2002 shared task (Tjong Kim Sang, 2002);
    the same files are distributed with NLTK's ``conll2002`` corpus. See the
    ``DESCR`` attribute of the returned bunch for the full attribution.

    Parameters
    ----------
    subset : {"train", "testa", "testb"}, default="train"
        Which part of the data to load: ``"train"`` is the training set,
        ``"testa"`` the development set and ``"testb"`` the test set.

    language : {"esp"}, default="esp"
        Language of the data. Only the Spanish data (``"esp"``) is bundled.

    return_X_y : bool, default=False
        If True, return ``(sentences, tags)`` instead of a
        :class:`~sklearn.utils.Bunch`.

    n_sentences : int, default=None
        If given, only the first ``n_sentences`` sentences of the subset are
        read and returned (all of them if the subset is shorter), which is
        handy for quick experiments and tests. ``None`` loads everything
        (up to the cap of ``SKLEARN_CRF_MAX_SENTENCES``, see Notes).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        sentences : list of list of str
            The tokens of each sentence.
        tags : list of list of str
            The IOB2 label of each token, aligned with ``sentences``.
        documents : ndarray of shape (n_sentences,), dtype int
            The news article of each sentence, for grouped cross-validation
            (e.g. ``GroupKFold`` with ``groups=data.documents``). The files have
            no document markers, but every EFE article starts with a dateline
            sentence such as ``Melbourne ( Australia ) , 25 may ( EFE ) .``;
            sentences before the first dateline count as article 0.
        DESCR : str
            Description of the data, with its source and attribution.
        subset : str
            The loaded subset.
        language : str
            The language of the data.

    (sentences, tags) : tuple of two lists of list of str
        Returned instead of the bunch when ``return_X_y`` is True.

    Notes
    -----
    The environment variable ``SKLEARN_CRF_MAX_SENTENCES``, when set to a
    positive integer N, caps every subset at its first N sentences (the
    smaller of N and ``n_sentences`` when both are given). It is the data
    switch of the documentation build, its tests and quick trials: every
    example and documented code block then runs as written, only on less
    data, e.g. ``SKLEARN_CRF_MAX_SENTENCES=300 python
    examples/train_conll2002.py``. Unset or empty, nothing is capped; any
    other value is a ``ValueError``. The returned ``DESCR`` says when a cap
    applied.

    Examples
    --------
    >>> from sklearn_crf.datasets import load_conll2002
    >>> data = load_conll2002("testa", n_sentences=2)
    >>> len(data.sentences)
    2
    >>> data.sentences[0][:4]
    ['Sao', 'Paulo', '(', 'Brasil']
    >>> data.tags[0][:4]
    ['B-LOC', 'I-LOC', 'O', 'B-LOC']
    >>> sentences, tags = load_conll2002("train", return_X_y=True)
    >>> len(sentences), sum(len(t) for t in tags)
    (8323, 264715)
    """
    if not isinstance(subset, str) or subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {list(_SUBSETS)}, got {subset!r}.")
    if not isinstance(language, str) or language not in _LANGUAGES:
        raise ValueError(
            f"language must be one of {list(_LANGUAGES)} (only the Spanish "
            f"CoNLL-2002 data is bundled), got {language!r}."
        )
    if n_sentences is not None:
        if isinstance(n_sentences, bool) or not isinstance(n_sentences, Integral):
            raise TypeError(
                "n_sentences must be None or a positive integer, got "
                f"{n_sentences!r} of type {type(n_sentences).__name__}."
            )
        if n_sentences < 1:
            raise ValueError(
                f"n_sentences must be None or a positive integer, got {n_sentences}."
            )
        n_sentences = int(n_sentences)
    cap = _max_sentences_from_environment()
    if cap is not None:
        n_sentences = cap if n_sentences is None else min(n_sentences, cap)

    file_name = f"{language}.{subset}.gz"
    with _data_file(file_name).open("rb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="rb") as compressed:
            lines = io.TextIOWrapper(compressed, encoding="utf-8", newline="")
            sentences, tags = _parse_conll(lines, file_name, n_sentences)

    if return_X_y:
        return sentences, tags
    descr = _data_file("README.md").read_text(encoding="utf-8")
    if cap is not None:
        descr = (
            f"Capped at the first {cap} sentences of {file_name} by the "
            f"environment variable {MAX_SENTENCES_ENV}.\n\n" + descr
        )
    return Bunch(
        sentences=sentences,
        tags=tags,
        documents=_document_ids(sentences),
        DESCR=descr,
        subset=subset,
        language=language,
    )
