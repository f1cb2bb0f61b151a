"""CRF++-style feature templates: ``U00:%x[-1,0]`` lines to per-token feature dicts."""

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from numbers import Integral

from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ._word_vectors import LOOKUPS, WordVectors

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
    """The columns of a sentence: a list over columns of lists over tokens."""
    if isinstance(sentence, (str, bytes)) or isinstance(sentence, Mapping):
        raise TypeError(
            f"sentence {s} must be a list of tokens, got {type(sentence).__name__}."
        )
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


def _featurize(rows, templates, s):
    n = len(rows)
    if n == 0:
        return []
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
    out = []
    for i in range(n):
        base = i + MAX_CONTEXT
        features = {}
        for template in templates:
            literals, macros = template.literals, template.macros
            parts = [literals[0]]
            for k, (row, column) in enumerate(macros):
                parts.append(columns[column][base + row])
                parts.append(literals[k + 1])
            features["".join(parts)] = 1.0
        out.append(features)
    return out


class TemplateFeaturizer(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
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

    Notes
    -----
    The transformer is stateless: ``fit`` only checks the templates and
    ``transform`` works without fitting.

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
    """

    _parameter_constraints: dict = {
        "templates": [str, list, tuple],
        "vectors": [None, WordVectors],
        "vector_lookup": [StrOptions(set(LOOKUPS))],
        "vector_window": [Interval(Integral, 0, None, closed="left")],
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
    ):
        self.templates = templates
        self.vectors = vectors
        self.vector_lookup = vector_lookup
        self.vector_window = vector_window

    def _parsed(self):
        return _parse_templates(tuple(_template_lines(self.templates)))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the templates; the transformer learns nothing.

        Parameters
        ----------
        X : list of sentences
            Ignored.

        y : None
            Ignored.

        Returns
        -------
        self : TemplateFeaturizer
            The transformer itself.
        """
        self._parsed()
        return self

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
        X_features : list of list of dict, or list of tuple
            ``X_features[s][t]`` maps each expanded template of token ``t`` of
            sentence ``s`` to 1.0. With ``vectors``, ``X_features[s]`` is a
            tuple ``(dicts, dense)``, ``dense`` an ndarray of shape
            ``(n_tokens, (2 * vector_window + 1) * vectors.vector_size)``.

        Raises
        ------
        ValueError
            A malformed template (naming its line), or a template reading a
            column that a token lacks (naming the sentence and token).
        TypeError
            A malformed sentence or token.
        """
        self._validate_params()
        templates = self._parsed()
        if isinstance(X, (str, bytes, Mapping)) or not hasattr(X, "__iter__"):
            raise TypeError(
                "X must be a list of sentences (each a list of tokens), got "
                f"{type(X).__name__}."
            )
        rows = [_token_columns(sentence, s) for s, sentence in enumerate(X)]
        features = [_featurize(r, templates, s) for s, r in enumerate(rows)]
        if self.vectors is None:
            return features
        blocks = self.vectors.sentence_vectors(
            [[row[0] for row in r] for r in rows],
            lookup=self.vector_lookup, window=self.vector_window,
        )
        return list(zip(features, blocks))

    def __sklearn_is_fitted__(self):
        """Return True: the transformer is stateless and needs no fitting."""
        return True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = []
        return tags
