"""Turn tokenised sentences into per-token feature dicts for CRF taggers."""

import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from functools import lru_cache
from numbers import Integral
from itertools import accumulate, chain, repeat
from operator import itemgetter

import numpy as np

from sklearn.utils._param_validation import InvalidParameterError, Interval, StrOptions

from .base import _check_sentence_list, _Featurizer
from .attributes import str_attribute
from .encode_dicts import UNIT_VALUES, ScoringEntries
from .interned import first_seen_ids
from .vocabulary import ABSENT, fitted_lookup
from .word_vectors import LOOKUPS, WordVectors

__all__ = ["SequenceFeaturizer"]

# Names accepted in ``neighbor_features`` (besides "all"), mapped to the
# token-feature kinds they select.  Columns are always emitted for neighbours.
_NEIGHBOR_GROUPS = {
    "lower": ("lower",),
    "identity": ("identity",),
    "prefixes": ("prefix",),
    "suffixes": ("suffix",),
    "shape": ("shape", "short_shape"),
    "flags": ("isupper", "istitle", "isdigit"),
    "isupper": ("isupper",),
    "istitle": ("istitle",),
    "isdigit": ("isdigit",),
}


class _ShapeTable(dict):
    """``str.translate`` table mapping code points to their shape character.

    Filled lazily, so it works for any Unicode character: letters become
    ``"X"``/``"x"``, digits ``"d"``, everything else is kept.
    """

    def __missing__(self, code):
        char = chr(code)
        if char.isalpha():
            shape = "X" if char.isupper() else "x"
        elif char.isdigit():
            shape = "d"
        else:
            shape = char
        self[code] = shape
        return shape


_SHAPE_TABLE = _ShapeTable()
_REPEATS = re.compile(r"(.)\1+", re.DOTALL)


def _offset_prefix(offset):
    """The prefix of the features of the neighbour at ``offset``: ``"-1:"``,
    ``"+2:"``... (none for the token itself)."""
    return f"{offset:+d}:" if offset else ""


def _word_shape(word):
    return word.translate(_SHAPE_TABLE)


def _short_word_shape(word):
    return _REPEATS.sub(r"\1", word.translate(_SHAPE_TABLE))


class _WordCache(dict):
    """Per-call memo ``word -> tuple of its word features``.

    All word features are pure functions of the word, and words repeat a lot
    in corpora, so each distinct word is featurized once per ``transform``.
    """

    def __init__(self, funcs):
        super().__init__()
        self._funcs = funcs

    def __missing__(self, word):
        values = self[word] = tuple([func(word) for func in self._funcs])
        return values


def _invalid(name, message):
    return InvalidParameterError(
        f"The {name!r} parameter of SequenceFeaturizer {message}"
    )


def _check_lengths(name, value):
    lengths = []
    for k in value:
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise _invalid(name, f"must contain integers >= 1. Got {value!r} instead.")
        lengths.append(int(k))
    if len(set(lengths)) != len(lengths):
        raise _invalid(name, f"must not contain duplicates. Got {value!r} instead.")
    return lengths


@lru_cache(maxsize=512)
def _compile_builder(source):
    namespace = {}
    exec(compile(source, "<SequenceFeaturizer builder>", "exec"), namespace)
    return namespace["build"]


class _Plan:
    """Parameters of a :class:`SequenceFeaturizer`, compiled for transform.

    The feature dicts are built by small generated functions (one per
    "layout": number of left/right neighbours present, first/last token),
    each a single list comprehension whose dict display has the feature names
    as constants.  The word features of every distinct word are computed once
    (``_WordCache``) and the neighbour features are read from the neighbours'
    cached tuples, so no work is repeated.
    """

    def __init__(self, est):
        word = []  # (key, kind, func): features computed from the word alone
        if est.lower:
            word.append(("word.lower()", "lower", str.lower))
        if est.identity:
            word.append(("word", "identity", str))
        for k in _check_lengths("prefixes", est.prefixes):
            word.append((f"word[:{k}]", "prefix", itemgetter(slice(None, k))))
        for k in _check_lengths("suffixes", est.suffixes):
            word.append((f"word[-{k}:]", "suffix", itemgetter(slice(-k, None))))
        if est.shape:
            word.append(("word.shape()", "shape", _word_shape))
            word.append(("word.short_shape()", "short_shape", _short_word_shape))
        if est.flags:
            word.append(("word.isupper()", "isupper", str.isupper))
            word.append(("word.istitle()", "istitle", str.istitle))
            word.append(("word.isdigit()", "isdigit", str.isdigit))

        # Neighbour features: a filter on the enabled word features.
        nf = est.neighbor_features
        if isinstance(nf, str):  # "all", guaranteed by _parameter_constraints
            kinds = {kind for _, kind, _ in word}
        else:
            kinds = set()
            for name in nf:
                if not isinstance(name, str) or name not in _NEIGHBOR_GROUPS:
                    raise _invalid(
                        "neighbor_features",
                        'must be "all" or a tuple of names among '
                        f"{sorted(_NEIGHBOR_GROUPS)}. Got {nf!r} instead.",
                    )
                kinds.update(_NEIGHBOR_GROUPS[name])
        self.neighbor_mask = [kind in kinds for _, kind, _ in word]

        # Extra columns: (feature name, index of the column in the token).
        self.columns = []
        if est.columns is None:
            self.n_columns = None
        else:
            names = [c for c in est.columns if c is not None]
            if not all(isinstance(c, str) and c for c in names) or len(
                set(names)
            ) != len(names):
                raise _invalid(
                    "columns",
                    "must be None or a tuple of distinct non-empty str (or None "
                    f"to skip a column). Got {est.columns!r} instead.",
                )
            self.columns = [
                (name, j)
                for j, name in enumerate(est.columns, start=1)
                if name is not None
            ]
            self.n_columns = 1 + len(est.columns)

        self.word_specs = word
        self.word_keys = [key for key, _, _ in word]
        self.word_funcs = [func for _, _, func in word]
        self.bias = bool(est.bias)
        self.bos_eos = bool(est.bos_eos)
        self.vectors = est.vectors
        self.vector_lookup = est.vector_lookup
        self.vector_window = int(est.vector_window)
        self.vectors_only = bool(est.vectors_only)
        if self.vectors_only and self.vectors is None:
            raise _invalid(
                "vectors_only",
                "can be True only with word vectors: set vectors=WordVectors(...).",
            )
        self.window = int(est.window)
        self._builders = {}
        #: what the features depend on (for the token route's tables)
        self.signature = (tuple(self.word_keys), tuple(self.neighbor_mask),
                          tuple(self.columns), self.bias, self.bos_eos, self.window)

        w = self.window
        all_keys = self._token_keys(0) + ["BOS", "EOS"] * self.bos_eos
        for o in [*range(-w, 0), *range(1, w + 1)]:
            all_keys += self._token_keys(o)
        if len(set(all_keys)) != len(all_keys):
            dup = sorted({k for k in all_keys if all_keys.count(k) > 1})
            raise _invalid(
                "columns", f"must not give names clashing with other features: {dup}."
            )

    def _token_keys(self, offset):
        """Feature names contributed by the token at ``offset`` (0 = itself)."""
        if offset == 0:
            keys = ["bias"] * self.bias + self.word_keys
        else:
            keys = [k for k, m in zip(self.word_keys, self.neighbor_mask) if m]
        keys += [name for name, _ in self.columns]
        if offset:
            keys = [_offset_prefix(offset) + key for key in keys]
        return keys

    def builder(self, n_left, n_right, first, last):
        """Function ``(rows, cols, start, stop) -> list of feature dicts``.

        ``rows[i]`` is the word-feature tuple of token ``i`` and ``cols`` the
        extra columns; the returned dicts are those of tokens ``start`` to
        ``stop - 1``, which all have ``n_left`` left and ``n_right`` right
        neighbours within the window, and are the first/last of the sentence
        if ``first``/``last``.
        """
        layout = (n_left, n_right, first, last)
        build = self._builders.get(layout)
        if build is None:
            build = self._builders[layout] = _compile_builder(self._source(*layout))
        return build

    def _source(self, n_left, n_right, first, last):
        n_word = len(self.word_keys)
        offsets = [0, *range(-1, -n_left - 1, -1)]
        if first and self.bos_eos:
            offsets.append("BOS")
        offsets += range(1, n_right + 1)
        if last and self.bos_eos:
            offsets.append("EOS")

        entries = []  # "key: expression" of the dict display
        targets = []  # loop targets, one per zipped sequence
        sequences = []
        if self.bias:
            entries.append('"bias": 1.0')
        for offset in offsets:
            if offset in ("BOS", "EOS"):
                entries.append(f"{offset!r}: True")
                continue
            tag = f"m{-offset}" if offset < 0 else f"p{offset}"
            prefix = _offset_prefix(offset)
            sl = f"[start{offset:+d}:stop{offset:+d}]" if offset else "[start:stop]"
            mask = [True] * n_word if offset == 0 else self.neighbor_mask
            if any(mask):
                names = []
                for k, (key, used) in enumerate(zip(self.word_keys, mask)):
                    if used:
                        names.append(f"w{tag}_{k}")
                        entries.append(f"{prefix + key!r}: {names[-1]}")
                    else:
                        names.append("_")
                targets.append("(" + ", ".join(names) + ",)")
                sequences.append("rows" + sl)
            for c, (name, _) in enumerate(self.columns):
                targets.append(f"c{tag}_{c}")
                entries.append(f"{prefix + name!r}: {targets[-1]}")
                sequences.append(f"cols[{c}]{sl}")
        display = "{" + ", ".join(entries) + "}"
        if sequences:
            loop = f"for ({', '.join(targets)},) in zip({', '.join(sequences)})"
        else:
            loop = "for _ in range(stop - start)"
        return (
            "def build(rows, cols, start, stop):\n"
            f"    return [{display} {loop}]\n"
        )

    def word_cache(self):
        return _WordCache(self.word_funcs)


def _short_repr(obj):
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(obj):
    return f"{type(obj).__name__} {_short_repr(obj)}"


def _is_token_sequence(token):
    """Whether ``token`` can be a tuple/list of columns."""
    if isinstance(token, (str, bytes, Mapping)):
        return False
    if isinstance(token, Sequence):
        return True
    return getattr(token, "ndim", None) == 1  # e.g. a row of a numpy array


def _split_sentence_slow(sentence, s, n_columns):
    """Validate a sentence token by token, returning its list of columns.

    Also accepts str subclasses (e.g. ``numpy.str_``, converted to str) and
    tokens that are other sequences (e.g. rows of a 2-D numpy array).
    """
    rows = []
    for t, token in enumerate(sentence):
        where = f"sentence {s}, token {t}"
        if isinstance(token, str):
            row = (token,)
        elif _is_token_sequence(token):
            row = tuple(token)
            if not row:
                raise ValueError(f"{where}: a token must have at least one column.")
        else:
            raise TypeError(
                f"{where}: a token must be a str or a tuple/list of str "
                f"(word first), got {_describe(token)}."
            )
        if n_columns is not None and len(row) != n_columns:
            raise ValueError(
                f"{where}: expected {n_columns} columns (the word and the "
                f"{n_columns - 1} `columns`), got {len(row)}: {_short_repr(token)}."
            )
        used = row if n_columns is not None else row[:1]
        for j, value in enumerate(used):
            if not isinstance(value, str):
                what = "column 0 (the word)" if j == 0 else f"column {j}"
                raise TypeError(
                    f"{where}: {what} must be a str, got {_describe(value)}."
                )
        rows.append([v if type(v) is str else str(v) for v in used])
    if n_columns is None:
        return [[row[0] for row in rows]]
    return [list(col) for col in zip(*rows)]


def _split_sentence(sentence, s, n_columns):
    """Return the list of columns (column 0 = words) of one sentence.

    Fast path: a few C-level passes (``set(map(type, ...))``); on anything
    unusual, fall back to the token-by-token validation which either raises
    an informative error or normalises the input.
    """
    if isinstance(sentence, (str, bytes)):
        raise TypeError(
            f"sentence {s} is a {type(sentence).__name__} ({_short_repr(sentence)}); "
            "expected a list of tokens. X must be a list of sentences, each a list "
            "of tokens (wrap a single sentence in a list)."
        )
    if isinstance(sentence, Mapping) or not hasattr(sentence, "__len__"):
        raise TypeError(
            f"sentence {s} must be a list of tokens, got {_describe(sentence)}."
        )
    if not len(sentence):
        return [[]]
    types = set(map(type, sentence))
    if types == {str} or all(issubclass(t, str) for t in types):
        if n_columns is None or n_columns == 1:
            return [sentence if types == {str} else list(map(str, sentence))]
    elif types and types <= {tuple, list}:
        lengths = set(map(len, sentence))
        if n_columns is None:
            if 0 not in lengths:
                words = list(map(itemgetter(0), sentence))
                if set(map(type, words)) == {str}:
                    return [words]
        elif lengths == {n_columns}:
            cols = list(zip(*sentence))
            if all(set(map(type, col)) == {str} for col in cols):
                return cols
    return _split_sentence_slow(sentence, s, n_columns)


def _featurize_sentence(cols, plan, cache):
    words = cols[0]
    n = len(words)
    if n == 0:
        return []
    rows = list(map(cache.__getitem__, words))
    extra = [cols[j] for _, j in plan.columns]
    w = plan.window
    h = max(w, 1)  # tokens [h, n - h) share the interior layout
    if n <= 2 * h:
        out = []
        for i in range(n):
            build = plan.builder(min(i, w), min(n - 1 - i, w), i == 0, i == n - 1)
            out += build(rows, extra, i, i + 1)
        return out
    out = []
    for i in range(h):
        out += plan.builder(min(i, w), w, i == 0, False)(rows, extra, i, i + 1)
    out += plan.builder(w, w, False, False)(rows, extra, h, n - h)
    for i in range(n - h, n):
        j = n - 1 - i
        out += plan.builder(w, min(j, w), False, j == 0)(rows, extra, i, i + 1)
    return out


#: vectorizer -> {plan signature: _TokenIds}: kept outside the vectorizer
#: (whose state encoding does not change), for as long as it lives
_TOKEN_IDS = weakref.WeakKeyDictionary()
_NO_TOK = np.zeros(0, dtype=np.int64)
_NO_TOK.flags.writeable = False
_NO_ATTR = np.zeros(0, dtype=np.int32)
_NO_ATTR.flags.writeable = False
#: most words a _TokenIds remembers; past it, it starts again (a served model
#: meets words without end)
_MAX_WORDS = 1 << 16


class _TokenIds:
    """A fitted vocabulary's attribute ids of a plan's features, word by word.

    The token route of :class:`SequenceFeaturizer` into a tagger. A word's
    features (its lower-cased form, suffixes, flags...) are computed once,
    the first time the word is met, and each is looked up under the name it
    has at every offset of the window (``"word.lower():juan"``,
    ``"-1:word.lower():juan"``...). The results are a row of ``table``: one
    cell per feature of a token's dict, in its order (``layout``: the bias,
    the token, its left neighbours, BOS, its right neighbours, EOS), holding
    the vectorizer's entry (``id`` for a value of 1, ``~id`` for a flag that
    is False) or ``ABSENT`` (an attribute the vocabulary does not know). A
    token's cells are then one gather: at each column, the row of the word
    at the column's offset from the token (row 0, all ``ABSENT``, outside the
    sentence; row 1 holds BOS and row 2 EOS, read by the first and last
    tokens). Its entries are its cells but the ``ABSENT`` ones: those the
    vectorizer gives its dict, with no dict built.
    """

    def __init__(self, plan, ids, lookup):
        self.vocabulary = ids  # the vocabulary's dict, to see it change (a refit)
        self.n_ids = len(ids)
        self.lookup = lookup
        w = self.window = plan.window
        offsets = [0, *range(-1, -w - 1, -1), *range(1, w + 1)]
        n_word = len(plan.word_specs)
        # the columns of a token's cells, in the order of its dict: per group,
        # (kind, offset, first column, past the last, names or extra column)
        self.layout = []
        col = 0

        def group(kind, offset, width, what):
            nonlocal col
            if width:
                self.layout.append((kind, offset, col, col + width, what))
                col += width

        group("bias", 0, int(plan.bias), None)
        for offset in offsets:
            if offset == 1:
                group("BOS", 0, int(plan.bos_eos), None)
            prefix = _offset_prefix(offset)
            mask = [True] * n_word if offset == 0 else plan.neighbor_mask
            spec = [(k, prefix + key, kind in _BOOL_KINDS)
                    for k, ((key, kind, _), used) in enumerate(zip(plan.word_specs, mask))
                    if used]
            group("word", offset, len(spec), spec)
            for name, j in plan.columns:
                group("column", offset, 1, (j, str_attribute((prefix + name, "")), {}))
        if not w:
            group("BOS", 0, int(plan.bos_eos), None)
        group("EOS", 0, int(plan.bos_eos), None)
        self.width = col
        self.offset_of = np.zeros(col, dtype=np.intp)  # each column's offset
        for _, offset, lo, hi, _ in self.layout:
            self.offset_of[lo:hi] = offset
        self.column_index = np.arange(col, dtype=np.intp)
        self.bos_col = next((lo for kind, _, lo, _, _ in self.layout if kind == "BOS"), None)
        self.eos_col = next((lo for kind, _, lo, _, _ in self.layout if kind == "EOS"), None)
        self.columns = [g for g in self.layout if g[0] == "column"]
        self.funcs = plan.word_funcs
        self.has_zeros = any(flag for g in self.layout if g[0] == "word"
                             for _, _, flag in g[4])
        #: held by encode: the table grows (or starts again) as words come
        self.lock = threading.Lock()
        self._reset(1024)

    def _reset(self, capacity):
        """An empty table: rows 0 (absent), 1 (BOS) and 2 (EOS), and their
        words' rows from 3."""
        self.index = {}
        self.n_rows = 3
        self.table = np.full((max(capacity, 3), self.width), ABSENT, dtype=np.int32)
        for kind, _, lo, _, _ in self.layout:
            name = {"bias": "bias", "BOS": "BOS", "EOS": "EOS"}.get(kind)
            if name is not None:
                idx = self.lookup(name)
                row = 1 if kind == "BOS" else 2 if kind == "EOS" else slice(3, None)
                self.table[row, lo] = ABSENT if idx is None else idx
        #: a word's row before its features are looked up: the bias, else ABSENT
        self.fresh = self.table[-1].copy()

    def _add_words(self, words):
        """Rows for the new ones among ``words`` (the table starts again when
        full)."""
        new = list(dict.fromkeys(w for w in words if w not in self.index))
        if self.n_rows + len(new) > _MAX_WORDS:
            self._reset(len(self.table))
            new = list(dict.fromkeys(words))
        start, stop = self.n_rows, self.n_rows + len(new)
        if stop > len(self.table):
            grown = np.empty((max(stop, 2 * len(self.table)), self.width), dtype=np.int32)
            grown[:start] = self.table[:start]
            grown[start:] = self.fresh
            self.table = grown
        values = [[func(word) for func in self.funcs] for word in new]
        lookup = self.lookup
        for kind, _, lo, hi, spec in self.layout:
            if kind != "word":
                continue
            cells = []
            for row in values:
                for k, name, flag in spec:
                    idx = lookup(name) if flag else lookup(str_attribute((name, row[k])))
                    cells.append(ABSENT if idx is None else idx if not flag or row[k]
                                 else ~idx)
            self.table[start:stop, lo:hi] = np.array(
                cells, dtype=np.int32).reshape(len(new), hi - lo)
        self.index.update(zip(new, range(start, stop)))
        self.n_rows = stop

    def _column_cells(self, memo, prefix, values):
        """The cells of an extra column's values under their attributes' prefix."""
        if not all(map(memo.__contains__, values)):
            if len(memo) + len(values) > _MAX_WORDS:
                memo.clear()
            for value in values:
                if value not in memo:
                    idx = self.lookup(prefix + value)
                    memo[value] = ABSENT if idx is None else idx
        return np.fromiter(map(memo.__getitem__, values), np.int32, len(values))

    def encode(self, sentences, vectorizer):
        """The :class:`~sklearn_crf.EncodedCorpus` of the checked sentences
        (their lists of columns)."""
        cells, seq_ptr = self.cells(sentences)
        n_tok = len(cells)
        # the entries: ids (of value 1) and ~ids (a value of 0), taken apart as
        # the vectorizer does; ABSENT cells dropped
        flat = cells.ravel()
        ones = flat.view(np.uint32) < ABSENT  # ~ids are >= 2**31 as uint32
        tok_ptr = np.zeros(n_tok + 1, dtype=np.int64)
        np.cumsum(ones.reshape(n_tok, self.width).sum(axis=1), out=tok_ptr[1:])
        zero_tok, zero_attr = _NO_TOK, _NO_ATTR
        if self.has_zeros:
            zero = flat < 0
            if zero.any():
                zero_tok = zero.reshape(n_tok, self.width).nonzero()[0]
                zero_attr = ~flat[zero]
        return vectorizer._corpus_of_ids(tok_ptr, flat[ones], seq_ptr, zero_tok, zero_attr)

    def entries(self, sentences):
        """The :class:`~sklearn_crf._features.encode_dicts.ScoringEntries` of
        the checked sentences: each token's cells, as they are."""
        cells, seq_ptr = self.cells(sentences)
        width = self.width
        return ScoringEntries(np.arange(0, len(cells) * width + 1, width, dtype=np.int64),
                              cells.ravel(), UNIT_VALUES, seq_ptr)

    def cells(self, sentences):
        """``(cells, seq_ptr)``: the cells of each token of the checked
        sentences (their lists of columns), (n_tokens, width) int32, and the
        sentences' offsets; one thread at a time (the table grows)."""
        with self.lock:
            return self._cells(sentences)

    def _cells(self, sentences):
        n_seq = len(sentences)
        if n_seq == 1:
            words = sentences[0][0]
            lengths = [len(words)]
        else:
            words = list(chain.from_iterable(cols[0] for cols in sentences))
            lengths = list(map(len, (cols[0] for cols in sentences)))
        n_tok = len(words)
        if not all(map(self.index.__contains__, words)):
            self._add_words(words)
        index = self.index
        w = self.window
        # the tokens' rows, with w absent rows (row 0) around each sentence: the
        # neighbour at offset o of the token at ``place`` is at place + o
        place = np.arange(w, n_tok + w, dtype=np.intp)
        if n_seq == 1:
            seq_ptr = np.array((0, n_tok), dtype=np.int64)
            starts, ends = 0, n_tok - 1
        else:
            seq_ptr = np.fromiter(accumulate(lengths, initial=0), np.int64, n_seq + 1)
            nonempty = np.flatnonzero(np.diff(seq_ptr))
            starts, ends = seq_ptr[nonempty], seq_ptr[nonempty + 1] - 1
            if w:
                place += np.arange(0, 2 * w * n_seq, 2 * w, dtype=np.intp).repeat(lengths)
        padded = np.zeros(n_tok + 2 * w * n_seq, dtype=np.intp)
        padded[place] = np.fromiter(map(index.__getitem__, words), np.intp, n_tok)
        source = padded[place[:, None] + self.offset_of]
        if n_tok:
            if self.bos_col is not None:
                source[starts, self.bos_col] = 1
            if self.eos_col is not None:
                source[ends, self.eos_col] = 2
        cells = self.table[source, self.column_index]
        for _, offset, lo, _, (j, prefix, memo) in self.columns:
            column = np.empty(len(padded), dtype=np.int32)
            column.fill(ABSENT)
            column[place] = self._column_cells(memo, prefix, list(
                chain.from_iterable(cols[j] for cols in sentences if cols[0])))
            cells[:, lo] = column[place + offset]
        return cells, seq_ptr


def _token_table(plan, vectorizer):
    """The :class:`_TokenIds` of a plan under a fitted vectorizer (made once
    per vocabulary and plan), or None (word vectors: the dicts' route)."""
    if plan.vectors is not None:
        return None
    ids, lookup = fitted_lookup(vectorizer)
    tables = _TOKEN_IDS.get(vectorizer)
    if tables is None:
        tables = _TOKEN_IDS[vectorizer] = {}
    table = tables.get(plan.signature)
    if table is None or table.vocabulary is not ids or table.n_ids != len(ids):
        table = tables[plan.signature] = _TokenIds(plan, ids, lookup)
    return table


#: tokens per block of the token-by-entry matrix of the encoded path (bounds
#: its transient memory: 32768 tokens x 15 entries x 8 bytes = 3.9 MB)
_CHUNK = 1 << 15
#: the word features whose values are bools (valued attributes, 1 or 0)
_BOOL_KINDS = frozenset({"isupper", "istitle", "isdigit"})


class _Interned:
    """Ids ("pids") of the distinct (feature key, value) pairs of one call.

    Allocated in blocks: a feature key at an offset gets one pid per distinct
    value of its feature (``base + value index``): its str values, or
    ``[False, True]`` for a flag (``[True]`` for the bias, BOS and EOS).
    Names and memo keys are built from the blocks, only for the pids that
    occur (:func:`~sklearn_crf._features.interned.encode_interned`).
    """

    def __init__(self):
        self.n_pids = 0
        self.bases = []
        self.blocks = []  # (key, values, valued)

    def block(self, key, values, valued=False):
        base = self.n_pids
        self.bases.append(base)
        self.blocks.append((key, values, valued))
        self.n_pids += len(values)
        return base

    def zero_pids(self):
        """Whether each pid's value is 0 (the False of a flag): a bool array."""
        zero = np.zeros(self.n_pids, dtype=bool)
        for base, (_, values, valued) in zip(self.bases, self.blocks):
            if valued and values[0] is False:
                zero[base] = True
        return zero

    def info(self, pids):
        """(attribute names, memo keys, zero flags) of ``pids`` (increasing)."""
        cuts = np.searchsorted(pids, self.bases + [self.n_pids]).tolist()
        names, pairs, zero = [], [], []
        for b, (key, values, valued) in enumerate(self.blocks):
            lo, hi = cuts[b], cuts[b + 1]
            if lo == hi:
                continue
            if hi - lo == len(values):
                chosen = values
            else:
                chosen = [values[i] for i in (pids[lo:hi] - self.bases[b]).tolist()]
            pairs.extend(zip(repeat(key), chosen))
            if valued:
                names.extend(repeat(key, hi - lo))
                zero.extend([not v for v in chosen])
            else:
                names.extend(map(str_attribute, zip(repeat(key), chosen)))
                zero.extend(repeat(False, hi - lo))
        return names, pairs, np.array(zero, dtype=bool)


def _encoded_rows(plan, sentences):
    """The token rows of pids of :func:`_featurize_sentence`'s dicts, without
    the dicts: ``(chunks of the token-by-entry matrix, seq_ptr, interned, its
    size)``.

    Column ``j`` of a row is the ``j``-th feature of the dict display of the
    interior layout (bias, the token, its left neighbours, BOS, its right
    neighbours, EOS); features a token lacks (a neighbour outside the
    sentence, BOS/EOS inside it) are ``ABSENT``. Every feature of every
    distinct word is computed once (``map`` of the feature function over the
    distinct words), and the per-token work is NumPy gathers.
    """
    lengths = np.fromiter(map(len, (cols[0] for cols in sentences)), dtype=np.int64,
                          count=len(sentences))
    seq_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    n_tok = int(seq_ptr[-1])
    interned = _Interned()
    words = list(chain.from_iterable(cols[0] for cols in sentences))
    distinct, word_idx = first_seen_ids(words)
    n_distinct = len(distinct)
    # per word feature: (kind, value index per distinct word, distinct values or None)
    features = []
    kinds = [kind for _, kind, _ in plan.word_specs]
    for func, kind in zip(plan.word_funcs, kinds):
        values = list(map(func, distinct))
        if kind in _BOOL_KINDS:
            features.append((np.fromiter(values, dtype=bool, count=n_distinct)
                             .astype(np.int64), None))
        else:
            uniques, index = first_seen_ids(values)
            features.append((index, uniques))
    columns = []  # per extra column: (value index per token, distinct values)
    for _, j in plan.columns:
        uniques, index = first_seen_ids(list(chain.from_iterable(
            cols[j] for cols in sentences if cols[0])))  # an empty one is [[]]
        columns.append((index, uniques))

    position = np.arange(n_tok, dtype=np.int64) - np.repeat(seq_ptr[:-1], lengths)
    length = np.repeat(lengths, lengths)
    w = plan.window
    offsets = [0, *range(-1, -w - 1, -1), "BOS", *range(1, w + 1), "EOS"]
    blocks = []  # per column group: ("const", pid) | ("where", mask, pid) | ("take", table, rows) | ("pids", array)
    if plan.bias:
        blocks.append(("const", interned.block("bias", [True], valued=True)))
    for offset in offsets:
        if offset in ("BOS", "EOS"):
            if plan.bos_eos:
                mask = position == 0 if offset == "BOS" else position == length - 1
                blocks.append(("where", mask, interned.block(offset, [True], valued=True)))
            continue
        prefix = _offset_prefix(offset)
        mask = [True] * len(features) if offset == 0 else plan.neighbor_mask
        if offset == 0:
            source = np.arange(n_tok, dtype=np.int64)
        else:
            inside = (position + offset >= 0) & (position + offset < length)
            source = np.where(inside, np.arange(n_tok, dtype=np.int64) + offset, n_tok)
        if any(mask):
            table = np.empty((n_distinct + 1, sum(mask)), dtype=np.int32)
            table[n_distinct] = ABSENT
            k = 0
            for (index, uniques), key, used in zip(features, plan.word_keys, mask):
                if not used:
                    continue
                if uniques is None:
                    base = interned.block(prefix + key, [False, True], valued=True)
                else:
                    base = interned.block(prefix + key, uniques)
                table[:n_distinct, k] = index + base
                k += 1
            rows = np.append(word_idx, n_distinct)[source]
            blocks.append(("take", table, rows))
        for (index, uniques), (name, _) in zip(columns, plan.columns):
            base = interned.block(prefix + name, uniques)
            blocks.append(("pids", np.append(index + base, ABSENT).astype(np.int32)[source]))

    def chunks():
        for start in range(0, n_tok, _CHUNK):
            stop = min(start + _CHUNK, n_tok)
            parts = []
            for block in blocks:
                if block[0] == "const":
                    parts.append(np.full((stop - start, 1), block[1], dtype=np.int32))
                elif block[0] == "where":
                    parts.append(np.where(block[1][start:stop], np.int32(block[2]),
                                          np.int32(ABSENT))[:, None])
                elif block[0] == "take":
                    parts.append(block[1][block[2][start:stop]])
                else:
                    parts.append(block[1][start:stop, None])
            if parts:
                yield np.hstack(parts)
            else:
                yield np.empty((stop - start, 0), dtype=np.int32)

    width = sum(1 if b[0] in ("const", "where", "pids") else b[1].shape[1] for b in blocks)
    return chunks(), seq_ptr, interned, n_tok * width


class SequenceFeaturizer(_Featurizer, auto_wrap_output_keys=None):
    """Turn tokenised sentences into per-token feature dicts.

    Stateless transformer producing the input format of CRF sequence taggers
    (the format of sklearn-crfsuite): for every sentence a list with one
    ``{feature name: str | float | bool}`` dict per token.  The default
    parameters reproduce exactly the ``word2features`` function of the
    sklearn-crfsuite CoNLL-2002 tutorial (without POS tags).

    Feature names follow the tutorial: ``"bias"``, ``"word.lower()"``,
    ``"word"`` (identity), ``"word[:2]"`` (prefix), ``"word[-3:]"`` (suffix),
    ``"word.shape()"``, ``"word.short_shape()"``, ``"word.isupper()"``,
    ``"word.istitle()"``, ``"word.isdigit()"``, the column names given in
    ``columns``, and ``"BOS"``/``"EOS"``.  Neighbour features carry an offset
    prefix: ``"-1:word.lower()"``, ``"+2:pos"``...

    Parameters
    ----------
    window : int, default=1
        Number of neighbours on each side whose features (see
        ``neighbor_features`` and ``columns``) are added to a token, with the
        prefixes ``"-1:"``, ``"+1:"``, ``"-2:"``, ...  Neighbours outside the
        sentence are simply absent.

    lower : bool, default=True
        Add the lower-cased word, ``"word.lower()"``.

    identity : bool, default=False
        Add the word itself, ``"word"``.

    prefixes : tuple of int, default=()
        Lengths of the prefixes to add, e.g. ``(2,)`` adds ``"word[:2]"``.
        Computed on the word as-is (not lower-cased); a word shorter than the
        length gives the whole word.

    suffixes : tuple of int, default=(2, 3)
        Lengths of the suffixes to add, e.g. ``"word[-3:]"``, computed on the
        word as-is as in the sklearn-crfsuite tutorial.

    shape : bool, default=False
        Add the word shape ``"word.shape()"`` (upper-case letters become
        ``"X"``, other letters ``"x"``, digits ``"d"``, other characters are
        kept: ``"Jun-21"`` -> ``"Xxx-dd"``) and the short shape
        ``"word.short_shape()"`` where runs of the same character are
        collapsed (``"Xx-d"``).

    flags : bool, default=True
        Add the booleans ``"word.isupper()"``, ``"word.istitle()"`` and
        ``"word.isdigit()"``.

    neighbor_features : "all" or tuple of str, default=("lower", "istitle", \
"isupper")
        Which of the enabled token features are also emitted for the
        neighbours.  Names among ``"lower"``, ``"identity"``, ``"prefixes"``,
        ``"suffixes"``, ``"shape"``, ``"flags"`` (the three flags),
        ``"isupper"``, ``"istitle"`` and ``"isdigit"``; ``"all"`` selects every
        enabled token feature except the bias.  Naming a disabled feature is
        allowed and has no effect (e.g. ``flags=False`` drops
        ``"-1:word.istitle()"``).

    columns : tuple of str or None, default=None
        Names of the extra columns of the tokens (after the word), e.g.
        ``("postag",)`` for ``(word, postag)`` tokens.  The column values are
        added as features named after the column, for the token and its
        neighbours (``"postag"``, ``"-1:postag"``, ...).  Use ``None`` as a name
        to ignore a column, e.g. ``("postag", None)`` for
        ``(word, postag, label)`` triples.  When given, every token must have
        exactly ``1 + len(columns)`` columns.  When ``None``, tokens may be
        plain strings or tuples/lists of any length of which only the first
        element (the word) is used.

    bos_eos : bool, default=True
        Add ``"BOS": True`` to the first token of each sentence and
        ``"EOS": True`` to the last one.

    bias : bool, default=True
        Add the constant feature ``"bias": 1.0``.

    vectors : WordVectors or None, default=None
        Word vectors to add to every token as dense features (a
        :class:`WordVectors` wrapping a dict of str -> vector or gensim's
        ``KeyedVectors``).  When given, ``transform`` returns per sentence a
        tuple ``(feature dicts, dense block)``, the ``(tokens, array)`` form
        that :class:`CRFTagger` and :class:`SequenceVectorizer` take.  Words
        without a vector get zeros.  The table is shared, not copied, when the
        featurizer is cloned (grid searches, cross-validation).

    vector_lookup : {"exact", "lower", "exact_then_lower"}, default="exact"
        How a word is looked up in ``vectors``: as it is, lower-cased (for
        vectors trained on lower-cased text), or as it is and, when absent,
        lower-cased.

    vector_window : int, default=0
        Also give each token the vectors of the ``vector_window`` words on
        each side: its dense row is ``[v(t - w), ..., v(t), ..., v(t + w)]``
        (``(2 * w + 1) * vector_size`` columns), with zeros for positions
        outside the sentence.

    vectors_only : bool, default=False
        Return only the dense blocks (one 2-D array per sentence), without
        feature dicts; requires ``vectors``.  The dict parameters are then
        ignored (but still validated).

    output : {"dicts", "encoded"}, default="dicts"
        ``"dicts"``: ``transform`` returns the feature dicts described above.
        ``"encoded"``: it returns an :class:`~sklearn_crf.EncodedCorpus` of
        those features without building any dict (the features of each
        distinct word are computed once and the tokens' attribute ids
        gathered by NumPy), which :class:`~sklearn_crf.CRFTagger` takes as it
        is: ``make_pipeline(SequenceFeaturizer(output="encoded"),
        CRFTagger())`` fits the model of the dict route, bitwise, in less time
        and memory. In this mode the featurizer is stateful: ``fit`` learns
        the vocabulary (``vectorizer_``, the attributes in the order
        :class:`~sklearn_crf.SequenceVectorizer` gives them on the dicts),
        ``transform`` encodes with it and drops the attributes it does not
        know; not fitted (or fitted on no sentence), ``transform`` gives a
        corpus of its own vocabulary, which a fitted tagger maps by name. Word
        vectors go in the corpus' ``dense`` block.

    hashing : int or None, default=None
        With ``output="encoded"``: hash the attribute names into that many
        slots (``SequenceVectorizer(n_features=hashing)``) instead of keeping
        a vocabulary by name. The :class:`~sklearn_crf.CRFTagger` that takes
        the corpus must have the same ``hashing``. Ignored with
        ``output="dicts"``.

    Attributes
    ----------
    vectorizer_ : SequenceVectorizer
        With ``output="encoded"``, the vocabulary learnt by ``fit`` (a new
        fitted vectorizer at each fit); the ``vectorizer`` of the corpora
        ``transform`` returns, and so the ``vectorizer_`` of the tagger fitted
        on them in a Pipeline. Not set with ``output="dicts"``.

    See Also
    --------
    sklearn.feature_extraction.DictVectorizer : Vectorise feature dicts for
        non-sequence estimators.

    Notes
    -----
    With ``output="dicts"`` the transformer is stateless: ``fit`` only
    validates the parameters and ``transform`` can be called without fitting.
    As the output is a list of lists of dicts (or an EncodedCorpus),
    ``get_feature_names_out`` is not provided and ``set_output`` only accepts
    ``"default"`` (the global ``transform_output`` configuration is ignored).

    Examples
    --------
    >>> from sklearn_crf import SequenceFeaturizer
    >>> X = [["Jim", "bought", "300", "shares"], ["Hi"]]
    >>> feats = SequenceFeaturizer().fit_transform(X)
    >>> len(feats), len(feats[0]), len(feats[1])
    (2, 4, 1)
    >>> sorted(feats[0][1])  # doctest: +NORMALIZE_WHITESPACE
    ['+1:word.istitle()', '+1:word.isupper()', '+1:word.lower()',
     '-1:word.istitle()', '-1:word.isupper()', '-1:word.lower()',
     'bias', 'word.isdigit()', 'word.istitle()', 'word.isupper()',
     'word.lower()', 'word[-2:]', 'word[-3:]']
    >>> feats[0][1]["-1:word.lower()"], feats[0][1]["word[-3:]"]
    ('jim', 'ght')
    >>> feats[1][0]["BOS"], feats[1][0]["EOS"]
    (True, True)

    Tokens can carry extra columns such as part-of-speech tags:

    >>> featurizer = SequenceFeaturizer(
    ...     window=1, suffixes=(), flags=False, neighbor_features=(),
    ...     columns=("pos",), bos_eos=False, bias=False)
    >>> featurizer.transform([[("The", "DT"), ("cat", "NN")]])
    [[{'word.lower()': 'the', 'pos': 'DT', '+1:pos': 'NN'}, \
{'word.lower()': 'cat', 'pos': 'NN', '-1:pos': 'DT'}]]

    Word vectors give each sentence a dense block next to its dicts:

    >>> import numpy as np
    >>> from sklearn_crf import WordVectors
    >>> table = WordVectors({"the": np.array([0.5, -1.0]), "cat": [2.0, 0.0]})
    >>> [(dicts, dense)] = SequenceFeaturizer(
    ...     vectors=table, vector_lookup="lower").transform([["The", "cat", "sat"]])
    >>> len(dicts), dense.shape
    (3, (3, 2))
    >>> dense
    array([[ 0.5, -1. ],
           [ 2. ,  0. ],
           [ 0. ,  0. ]])
    >>> SequenceFeaturizer(vectors=table, vectors_only=True).transform([["cat"]])
    [array([[2., 0.]])]

    Straight to an encoded corpus, in a Pipeline with a tagger:

    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_crf import CRFTagger
    >>> X = [["Ana", "runs"], ["The", "end"]]
    >>> y = [["B-PER", "O"], ["O", "O"]]
    >>> featurizer = SequenceFeaturizer(output="encoded")
    >>> corpus = featurizer.fit_transform(X)
    >>> corpus.n_sequences, corpus.n_tokens, corpus.n_attributes
    (2, 4, 26)
    >>> featurizer.vectorizer_.feature_names_[:3]
    ['bias', 'word.lower():ana', 'word[-2:]:na']
    >>> pipe = make_pipeline(SequenceFeaturizer(output="encoded"), CRFTagger(c2=0.1))
    >>> pipe.fit(X, y).predict([["Ana", "ends"]])
    [['B-PER', 'O']]
    """

    _parameter_constraints: dict = {
        "window": [Interval(Integral, 0, None, closed="left")],
        "lower": ["boolean"],
        "identity": ["boolean"],
        "prefixes": [tuple, list],
        "suffixes": [tuple, list],
        "shape": ["boolean"],
        "flags": ["boolean"],
        "neighbor_features": [StrOptions({"all"}), tuple, list],
        "columns": [None, tuple, list],
        "bos_eos": ["boolean"],
        "bias": ["boolean"],
        "vectors": [None, WordVectors],
        "vector_lookup": [StrOptions(set(LOOKUPS))],
        "vector_window": [Interval(Integral, 0, None, closed="left")],
        "vectors_only": ["boolean"],
        "output": [StrOptions({"dicts", "encoded"})],
        "hashing": [Interval(Integral, 1, np.iinfo(np.int32).max, closed="both"), None],
    }

    def __init__(
        self,
        *,
        window=1,
        lower=True,
        identity=False,
        prefixes=(),
        suffixes=(2, 3),
        shape=False,
        flags=True,
        neighbor_features=("lower", "istitle", "isupper"),
        columns=None,
        bos_eos=True,
        bias=True,
        vectors=None,
        vector_lookup="exact",
        vector_window=0,
        vectors_only=False,
        output="dicts",
        hashing=None,
    ):
        self.window = window
        self.lower = lower
        self.identity = identity
        self.prefixes = prefixes
        self.suffixes = suffixes
        self.shape = shape
        self.flags = flags
        self.neighbor_features = neighbor_features
        self.columns = columns
        self.bos_eos = bos_eos
        self.bias = bias
        self.vectors = vectors
        self.vector_lookup = vector_lookup
        self.vector_window = vector_window
        self.vectors_only = vectors_only
        self.output = output
        self.hashing = hashing

    def transform(self, X):
        """Compute the features of every token of every sentence.

        Parameters
        ----------
        X : list of sentences
            Each sentence is a list of tokens; a token is a str (the word) or
            a tuple/list of str whose first element is the word and the others
            the values of ``columns``.

        Returns
        -------
        X_features : list of list of dict, of tuple, or of ndarray, or EncodedCorpus
            Without ``vectors``: ``X_features[s][t]`` is the
            ``{name: str | float | bool}`` feature dict of token ``t`` of
            sentence ``s``; empty sentences give empty lists.  With
            ``vectors``: ``X_features[s]`` is a tuple ``(dicts, dense)``,
            ``dense`` an ndarray of shape
            ``(n_tokens, (2 * vector_window + 1) * vectors.vector_size)`` (the
            table's dtype, float32 or float64); with ``vectors_only``, just
            that array.  With ``output="encoded"``: an
            :class:`~sklearn_crf.EncodedCorpus` of those features under the
            vocabulary learnt by :meth:`fit` (``vectorizer_``; attributes it
            does not know are dropped), or, not fitted, under a vocabulary of
            its own.

        Raises
        ------
        TypeError, ValueError
            If ``X``, a sentence or a token is malformed; the message tells
            which sentence and token.
        """
        return self._transform(X)

    def _make_plan(self):
        return _Plan(self)  # checks the content of the tuple-valued parameters

    def _checked(self, X):
        """(plan, the columns of each sentence)."""
        plan = self._plan()
        _check_sentence_list(X)
        n_columns = plan.n_columns
        return plan, [_split_sentence(sentence, s, n_columns)
                      for s, sentence in enumerate(X)]

    @staticmethod
    def _words(checked):
        return [cols[0] for cols in checked[1]]

    @staticmethod
    def _dicts(checked):
        """The dict output of :meth:`transform` of the checked sentences."""
        plan, sentences = checked
        if plan.vectors is None:
            cache = plan.word_cache()
            return [_featurize_sentence(cols, plan, cache) for cols in sentences]
        blocks = plan.vectors.sentence_vectors(
            SequenceFeaturizer._words(checked),
            lookup=plan.vector_lookup,
            window=plan.vector_window,
        )
        if plan.vectors_only:
            return blocks
        cache = plan.word_cache()
        return [
            (_featurize_sentence(cols, plan, cache), block)
            for cols, block in zip(sentences, blocks)
        ]

    @staticmethod
    def _token_ids(checked, vectorizer):
        table = _token_table(checked[0], vectorizer)
        return None if table is None else table.encode(checked[1], vectorizer)

    @staticmethod
    def _token_entries(checked, vectorizer):
        table = _token_table(checked[0], vectorizer)
        return None if table is None else table.entries(checked[1])

    @staticmethod
    def _encoded_rows(checked):
        plan, sentences = checked
        if not plan.vectors_only:
            return _encoded_rows(plan, sentences)
        seq_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum([len(cols[0]) for cols in sentences], out=seq_ptr[1:])
        return [np.empty((int(seq_ptr[-1]), 0), dtype=np.int32)], seq_ptr, _Interned(), 0
