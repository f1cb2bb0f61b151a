"""CRF++-style feature templates: ``U00:%x[-1,0]`` lines to per-token feature dicts."""

import re
from collections.abc import Mapping
from functools import lru_cache
from itertools import accumulate, chain, repeat
from typing import NamedTuple

from numbers import Integral

import numpy as np

from sklearn.utils._param_validation import Interval, StrOptions

from .base import _check_sentence_list, _Featurizer
from .interned import first_seen_ids
from .vocabulary import ABSENT, fitted_lookup
from .word_vectors import LOOKUPS, WordVectors

__all__ = ["TemplateFeaturizer"]

#: CRF++ accepts rows -8 to 8 (``kMaxContextSize`` in its ``feature_index.cpp``)
MAX_CONTEXT = 8
_BOS = tuple(f"_B-{k}" for k in range(MAX_CONTEXT, 0, -1))  # _B-8 ... _B-1
_EOS = tuple(f"_B+{k}" for k in range(1, MAX_CONTEXT + 1))  # _B+1 ... _B+8
_MACRO = re.compile(r"%x\[(-?[0-9]+),([0-9]+)\]")


class _Template(NamedTuple):
    """A parsed unigram template.

    Attributes
    ----------
    text : str
        The template line, e.g. ``"U01:%x[0,1]/%x[1,1]"``.
    line : int
        Its 1-based line number among the template lines (for errors).
    literals : tuple of str
        The text around the macros: ``len(macros) + 1`` strings.
    macros : tuple of (int, int)
        The ``(row, column)`` of each ``%x[row,column]``, in order.
    """

    text: str
    line: int
    literals: tuple
    macros: tuple


def _template_lines(templates):
    if isinstance(templates, str):
        return templates.split("\n")
    if isinstance(templates, (list, tuple)):
        for k, line in enumerate(templates):
            if not isinstance(line, str):
                raise TypeError(
                    f"templates[{k}] must be a str (a template line), got "
                    f"{type(line).__name__}."
                )
        return list(templates)
    raise TypeError(
        "templates must be a str (the text of a CRF++ template file) or a list "
        f"of template lines, got {type(templates).__name__}."
    )


@lru_cache(maxsize=64)
def _parse_templates(lines):
    """Parse template lines (a tuple of str) into unigram ``_Template`` objects."""
    parsed = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kind = line[0]
        if kind not in "UB":
            raise ValueError(
                f"template line {number}: {line!r} is neither a unigram ('U...') "
                "nor a bigram ('B...') template."
            )
        literals, macros, position = [], [], 0
        for match in _MACRO.finditer(line):
            literals.append(line[position : match.start()])
            row, column = int(match.group(1)), int(match.group(2))
            if abs(row) > MAX_CONTEXT:
                raise ValueError(
                    f"template line {number}: {match.group(0)} reads row {row}; "
                    f"rows must be between -{MAX_CONTEXT} and {MAX_CONTEXT}, as in CRF++."
                )
            macros.append((row, column))
            position = match.end()
        literals.append(line[position:])
        stray = [text for text in literals if "%" in text]
        if stray:
            raise ValueError(
                f"template line {number}: {line!r} has a '%' that does not start a "
                "%x[row,column] macro (row an integer, column >= 0, no spaces)."
            )
        if kind == "B":
            if macros:
                raise ValueError(
                    f"template line {number}: {line!r} is a bigram template with "
                    "observations; this CRF's transition weights depend on the two "
                    "labels only. Use 'B' alone (label bigrams, always modelled) and "
                    "move the observations to 'U' templates."
                )
            continue  # plain label-bigram features: the CRF's transitions
        parsed.append(_Template(line, number, tuple(literals), tuple(macros)))
    return tuple(parsed)


def _token_columns(sentence, s):
    """The tokens of a sentence as tuples (or lists) of str, checked."""
    if isinstance(sentence, (str, bytes)) or isinstance(sentence, Mapping):
        raise TypeError(
            f"sentence {s} must be a list of tokens, got {type(sentence).__name__}."
        )
    types = set(map(type, sentence))
    if types == {tuple} and 0 not in set(map(len, sentence)) and set(
            map(type, chain.from_iterable(sentence))) == {str}:
        return sentence  # the common case, checked at C speed
    rows = []
    for t, token in enumerate(sentence):
        row = (token,) if isinstance(token, str) else token
        if not isinstance(row, (tuple, list)) or not row:
            raise TypeError(
                f"sentence {s}, token {t}: a token must be a str or a non-empty "
                f"tuple of str (token first), got {type(token).__name__}."
            )
        for j, value in enumerate(row):
            if not isinstance(value, str):
                raise TypeError(
                    f"sentence {s}, token {t}, column {j}: expected a str, got "
                    f"{type(value).__name__}."
                )
        rows.append(row)
    return rows


def _template_columns(rows, templates, s):
    """The columns the templates read, each padded with the ``_B-k``/``_B+k``
    of CRF++ (``MAX_CONTEXT`` on each side); a ValueError names the first
    template reading a column that a token of sentence ``s`` lacks."""
    if not rows:
        return {}
    width = min(map(len, rows))
    columns = {}
    for template in templates:
        for row, column in template.macros:
            if column not in columns:
                if column >= width:
                    t = next(t for t, r in enumerate(rows) if len(r) <= column)
                    raise ValueError(
                        f"template line {template.line} ({template.text!r}) reads "
                        f"column {column}, but sentence {s}, token {t} has "
                        f"{len(rows[t])} column(s)."
                    )
                columns[column] = _BOS + tuple(r[column] for r in rows) + _EOS
    return columns


def _token_names(rows, templates, s):
    """Per token of a sentence, the names of its expanded templates (in
    template order, repeats included)."""
    columns = _template_columns(rows, templates, s)
    out = []
    for i in range(len(rows)):
        base = i + MAX_CONTEXT
        names = []
        for template in templates:
            literals, macros = template.literals, template.macros
            parts = [literals[0]]
            for k, (row, column) in enumerate(macros):
                parts.append(columns[column][base + row])
                parts.append(literals[k + 1])
            names.append("".join(parts))
        out.append(names)
    return out


def _featurize(rows, templates, s):
    return [dict.fromkeys(names, 1.0) for names in _token_names(rows, templates, s)]


def _template_token_ids(rows_list, templates, vectorizer):
    """The corpus of :func:`_featurize`'s dicts under a fitted vectorizer,
    without the dicts: each token's names looked up in the vocabulary, a
    repeated name once (as in its dict), unknown ones dropped."""
    _, lookup = fitted_lookup(vectorizer)
    entries, counts = [], []
    for s, rows in enumerate(rows_list):
        for names in _token_names(rows, templates, s):
            ids = [i for i in map(lookup, dict.fromkeys(names)) if i is not None]
            entries += ids
            counts.append(len(ids))
    tok_ptr = np.fromiter(accumulate(counts, initial=0), np.int64, len(counts) + 1)
    seq_ptr = np.fromiter(accumulate(map(len, rows_list), initial=0), np.int64,
                          len(rows_list) + 1)
    return vectorizer._corpus_of_entries(
        tok_ptr, np.array(entries, dtype=np.int32), seq_ptr)


#: tokens per block of rows handed to encode_interned
_CHUNK = 1 << 15


class _TemplateInterned:
    """The pids of one encoded call: per template, one per distinct expansion
    (its name built once); see :func:`~sklearn_crf._features.interned.encode_interned`."""

    def __init__(self, names):
        self.names = names
        self.n_pids = len(names)

    def zero_pids(self):
        return np.zeros(self.n_pids, dtype=bool)

    def info(self, pids):
        names = self.names
        chosen = [names[i] for i in pids.tolist()]
        return chosen, list(zip(chosen, repeat(True))), np.zeros(len(chosen), dtype=bool)


def _value_ids(rows_flat, column):
    """(distinct values of a column, then the 16 markers; id of each token's value)."""
    uniques, ids = first_seen_ids([row[column] for row in rows_flat])
    return uniques + list(_BOS + _EOS), ids


def _encoded_template_rows(rows, templates):
    """The token rows of pids of :func:`_featurize`'s dicts, without the dicts:
    ``(chunks, seq_ptr, interned, size)`` for :func:`encode_interned`.

    A template with one macro gets a pid per distinct value of its column
    (and per marker ``_B-k``/``_B+k``); one with several, a pid per distinct
    combination (``np.unique`` of the combined value ids); each name is built
    once. Two templates of a token that expand to the same name give one
    entry (a dict key), as in the dicts.
    """
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    seq_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    n_tok = int(seq_ptr[-1])
    flat = list(chain.from_iterable(rows))
    needed = max((c for t in templates for _, c in t.macros), default=-1)
    if needed >= 0 and n_tok:
        widths = np.fromiter(map(len, flat), dtype=np.int64, count=n_tok)
        if widths.min() <= needed:  # the dict path's error, naming the first place
            narrow = int(np.searchsorted(seq_ptr, np.flatnonzero(widths <= needed)[0],
                                         side="right") - 1)
            _featurize(rows[narrow], templates, narrow)
    position = np.arange(n_tok, dtype=np.int64) - np.repeat(seq_ptr[:-1], lengths)
    length = np.repeat(lengths, lengths)
    columns = {}
    names = []  # of every pid
    pid_columns = []
    for template in templates:
        literals, macros = template.literals, template.macros
        combined, n_combined = np.zeros(n_tok, dtype=np.int64), 1
        shifted = []  # per macro: (its column's values, each token's value id)
        for row, column in macros:
            if column not in columns:
                columns[column] = _value_ids(flat, column)
            values, ids = columns[column]
            n_values = len(values) - 2 * MAX_CONTEXT
            j = position + row
            ids = np.where(
                j < 0, n_values + MAX_CONTEXT + j,  # _B-k is marker MAX_CONTEXT - k
                np.where(j >= length, n_values + MAX_CONTEXT + j - length,
                         ids[np.clip(np.arange(n_tok) + row, 0, max(n_tok - 1, 0))]))
            shifted.append((values, ids))
            combined = combined * len(values) + ids
            n_combined *= len(values)
            if n_combined > 2**40 or len(macros) > 1:
                uniques, combined = np.unique(combined, return_inverse=True)
                n_combined = len(uniques)
        base = len(names)
        if not macros:
            names.append(literals[0])
        elif len(macros) == 1:
            values = columns[macros[0][1]][0]
            names.extend([literals[0] + v + literals[1] for v in values])
        else:
            # a token of each combination (its first) spells the name
            _, first = np.unique(combined, return_index=True)
            parts = [repeat(literals[0])]
            for (values, ids), literal in zip(shifted, literals[1:]):
                parts.append(map(values.__getitem__, ids[first].tolist()))
                parts.append(repeat(literal))
            names.extend(map("".join, zip(*parts)))
        pid_columns.append((combined + base).astype(np.int32))
    if len(set(names)) < len(names) and len(templates) > 1:
        # expansions that meet: one pid per name, one entry per name and token
        canon = {}
        table = np.fromiter(map(canon.setdefault, names, range(len(names))),
                            dtype=np.int32, count=len(names))
        pid_columns = [table[c] for c in pid_columns]
        for j in range(1, len(pid_columns)):
            seen = np.zeros(n_tok, dtype=bool)
            for k in range(j):
                seen |= pid_columns[j] == pid_columns[k]
            pid_columns[j] = np.where(seen, np.int32(ABSENT), pid_columns[j])

    def chunks():
        for start in range(0, n_tok, _CHUNK):
            stop = min(start + _CHUNK, n_tok)
            if pid_columns:
                yield np.stack([c[start:stop] for c in pid_columns], axis=1)
            else:
                yield np.empty((stop - start, 0), dtype=np.int32)

    return chunks(), seq_ptr, _TemplateInterned(names), n_tok * len(pid_columns)


class TemplateFeaturizer(_Featurizer, auto_wrap_output_keys=None):
    """Per-token feature dicts from CRF++-style unigram templates.

    Each unigram template line such as ``U01:%x[0,1]/%x[1,1]`` gives every
    token one binary feature: the line with each ``%x[row,column]`` replaced by
    the value of column ``column`` of the token ``row`` positions away
    (``U01:NN/VB``). Positions before the sentence read ``_B-1``, ``_B-2``, ...
    and positions after it ``_B+1``, ``_B+2``, ..., as in CRF++, so the
    features, and hence the attribute names of a fitted
    :class:`~sklearn_crf.CRFTagger`, are CRF++'s feature strings. The output is
    the input of :class:`~sklearn_crf.CRFTagger`.

    The template syntax is CRF++'s: one template per line; empty lines and
    lines starting with ``#`` are ignored; ``row`` is an integer from -8 to 8
    and ``column`` an index into the token's columns (0 is the token itself,
    the label is not a column). Bigram lines are accepted without macros
    (``B``: label-bigram features, which the CRF's transition weights always
    are) and rejected with observations (``B01:%x[0,0]``), which a linear-chain
    CRF with label-only transitions cannot express. Leading and trailing
    whitespace of a line is ignored.

    Parameters
    ----------
    templates : str or list of str, default=("U00:%x[-1,0]", "U01:%x[0,0]", \
"U02:%x[1,0]", "U03:%x[-1,0]/%x[0,0]", "U04:%x[0,0]/%x[1,0]")
        The template lines, or the text of a template file.

    vectors : WordVectors or None, default=None
        Word vectors of the tokens (column 0) to add as dense features:
        ``transform`` then returns per sentence a tuple ``(feature dicts,
        array)``, as :class:`~sklearn_crf.SequenceFeaturizer` does with the
        same parameter (shared, not copied, by ``clone``).

    vector_lookup : {"exact", "lower", "exact_then_lower"}, default="exact"
        How a token is looked up in ``vectors`` (as
        :class:`~sklearn_crf.SequenceFeaturizer`'s).

    vector_window : int, default=0
        Also give each token the vectors of the ``vector_window`` tokens on
        each side (as :class:`~sklearn_crf.SequenceFeaturizer`'s).

    output : {"dicts", "encoded"}, default="dicts"
        ``"encoded"``: ``transform`` returns an
        :class:`~sklearn_crf.EncodedCorpus` of the features without building
        feature dicts (each distinct expansion of a template named once), for
        :class:`~sklearn_crf.CRFTagger` in a Pipeline: the model is the dict
        route's, bitwise. ``fit`` then learns the vocabulary (``vectorizer_``,
        in the order :class:`~sklearn_crf.SequenceVectorizer` gives it on the
        dicts) and ``transform`` encodes with it, as
        :class:`~sklearn_crf.SequenceFeaturizer` does with the same parameter.

    hashing : int or None, default=None
        With ``output="encoded"``: hash the attribute names into that many
        slots; the tagger needs the same ``hashing``.

    Attributes
    ----------
    vectorizer_ : SequenceVectorizer
        With ``output="encoded"``, the vocabulary learnt by ``fit``.

    Notes
    -----
    With ``output="dicts"`` the transformer is stateless: ``fit`` only checks
    the templates and ``transform`` works without fitting.

    Examples
    --------
    >>> from sklearn_crf import TemplateFeaturizer
    >>> sentence = [("He", "PRP"), ("reckons", "VBZ"), ("the", "DT")]
    >>> featurizer = TemplateFeaturizer(templates=["U00:%x[-1,0]", "U01:%x[0,1]/%x[1,1]"])
    >>> X = featurizer.transform([sentence])
    >>> X[0][0]
    {'U00:_B-1': 1.0, 'U01:PRP/VBZ': 1.0}
    >>> X[0][2]
    {'U00:reckons': 1.0, 'U01:DT/_B+1': 1.0}

    A template file's text works as well:

    >>> text = "# words\\nU00:%x[0,0]\\n\\nB\\n"
    >>> TemplateFeaturizer(templates=text).transform([["Hola"]])
    [[{'U00:Hola': 1.0}]]

    An encoded corpus instead of dicts:

    >>> featurizer = TemplateFeaturizer(templates=["U00:%x[-1,0]"], output="encoded")
    >>> corpus = featurizer.fit_transform([sentence])
    >>> corpus.tok_attr, featurizer.vectorizer_.feature_names_
    (array([0, 1, 2], dtype=int32), ['U00:_B-1', 'U00:He', 'U00:reckons'])
    """

    _parameter_constraints: dict = {
        "templates": [str, list, tuple],
        "vectors": [None, WordVectors],
        "vector_lookup": [StrOptions(set(LOOKUPS))],
        "vector_window": [Interval(Integral, 0, None, closed="left")],
        "output": [StrOptions({"dicts", "encoded"})],
        "hashing": [Interval(Integral, 1, np.iinfo(np.int32).max, closed="both"), None],
    }

    def __init__(
        self,
        *,
        templates=(
            "U00:%x[-1,0]",
            "U01:%x[0,0]",
            "U02:%x[1,0]",
            "U03:%x[-1,0]/%x[0,0]",
            "U04:%x[0,0]/%x[1,0]",
        ),
        vectors=None,
        vector_lookup="exact",
        vector_window=0,
        output="dicts",
        hashing=None,
    ):
        self.templates = templates
        self.vectors = vectors
        self.vector_lookup = vector_lookup
        self.vector_window = vector_window
        self.output = output
        self.hashing = hashing

    def _parsed(self):
        return _parse_templates(tuple(_template_lines(self.templates)))

    def transform(self, X):
        """Apply the unigram templates to every token of every sentence.

        Parameters
        ----------
        X : list of sentences
            Each sentence a list of tokens; a token a str (one column) or a
            tuple of str, the token first (as :func:`~sklearn_crf.read_conll`
            returns them).

        Returns
        -------
        X_features : list of list of dict, list of tuple, or EncodedCorpus
            ``X_features[s][t]`` maps each expanded template of token ``t`` of
            sentence ``s`` to 1.0. With ``vectors``, ``X_features[s]`` is a
            tuple ``(dicts, dense)``, ``dense`` an ndarray of shape
            ``(n_tokens, (2 * vector_window + 1) * vectors.vector_size)``. With
            ``output="encoded"``, an :class:`~sklearn_crf.EncodedCorpus` of
            those features under the vocabulary learnt by :meth:`fit`
            (``vectorizer_``; unknown attributes dropped), or, not fitted,
            under a vocabulary of its own.

        Raises
        ------
        ValueError
            A malformed template (naming its line), or a template reading a
            column that a token lacks (naming the sentence and token).
        TypeError
            A malformed sentence or token.
        """
        return self._transform(X)

    def _make_plan(self):
        return self._parsed()

    def _checked(self, X):
        """(parsed templates, the checked token tuples of each sentence)."""
        templates = self._plan()
        _check_sentence_list(X)
        rows = [_token_columns(sentence, s) for s, sentence in enumerate(X)]
        for s, r in enumerate(rows):  # (the errors at transform, not when read)
            _template_columns(r, templates, s)
        return templates, rows

    @staticmethod
    def _words(checked):
        return [[row[0] for row in r] for r in checked[1]]

    def _dicts(self, checked):
        """The dict output of :meth:`transform` of the checked rows."""
        templates, rows = checked
        features = [_featurize(r, templates, s) for s, r in enumerate(rows)]
        if self.vectors is None:
            return features
        blocks = self.vectors.sentence_vectors(
            self._words(checked), lookup=self.vector_lookup, window=self.vector_window)
        return list(zip(features, blocks))

    def _token_ids(self, checked, vectorizer):
        if self.vectors is not None:
            return None
        templates, rows = checked
        return _template_token_ids(rows, templates, vectorizer)

    @staticmethod
    def _token_entries(checked, vectorizer):
        return None  # predict encodes the tokens (_token_ids)

    @staticmethod
    def _encoded_rows(checked):
        templates, rows = checked
        return _encoded_template_rows(rows, templates)
