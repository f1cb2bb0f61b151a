"""Tagging schemes: the one definition of each scheme's tags and entity rules.

A scheme names the tags that play the four roles of a chunk, begin, inside,
end and single (a one-token entity), and says, with seqeval's strict-mode
patterns, which consecutive labels start, continue and close an entity. From
that one definition come

* :func:`read_entities`, the entities of a label sequence: seqeval's strict
  mode for a scheme (what :func:`sklearn_crf.metrics.get_entities` and
  :meth:`CRFTagger.predict_entities <sklearn_crf.CRFTagger.predict_entities>`
  return), or, without a scheme, conlleval's (and seqeval's default) rules;
* :func:`may_follow`, the transitions a sequence must keep for strict mode to
  read every one of its labels but ``"O"`` as part of an entity: the
  decoding constraints of :mod:`sklearn_crf._model.constraints`.

Roles are written with the letters of IOBES: ``B`` begin, ``I`` inside,
``E`` end, ``S`` single and ``O`` outside, so BILOU's ``L`` and ``U`` and
BMES' ``M`` are read as ``E``, ``S`` and ``I``. The rules that
:func:`may_follow` gives (``x`` is one entity type):

* IOB2: ``I-x`` only after ``B-x`` or ``I-x`` (so never first).
* IOB1: ``B-x`` only after ``B-x`` or ``I-x`` (so never first).
* IOE2: ``I-x`` only before ``I-x`` or ``E-x`` (so never last).
* IOE1: ``E-x`` only after ``I-x`` or ``E-x`` and only before ``I-x`` or
  ``E-x`` (so never first or last).
* IOBES, BILOU, BMES: after a begin or inside tag of type x comes an inside
  or end tag of type x, and an inside or end tag of type x comes only after
  a begin or inside tag of type x; so no sequence starts with an inside or
  end tag, nor ends with a begin or inside tag.
"""

import functools
from typing import NamedTuple, Optional

__all__ = [
    "PATTERNS",
    "ROLES",
    "SCHEMES",
    "EntityPatterns",
    "SchemeTags",
    "Token",
    "may_follow",
    "read_entities",
    "read_label",
]


class SchemeTags(NamedTuple):
    """The tags of a scheme in the roles of a chunk; None where it has none."""

    begin: Optional[str]
    inside: Optional[str]
    end: Optional[str]
    single: Optional[str]


#: scheme name -> its tags in the roles (begin, inside, end, single)
SCHEMES = {
    "IOB1": SchemeTags("B", "I", None, None),
    "IOB2": SchemeTags("B", "I", None, None),
    "IOE1": SchemeTags(None, "I", "E", None),
    "IOE2": SchemeTags(None, "I", "E", None),
    "IOBES": SchemeTags("B", "I", "E", "S"),
    "BILOU": SchemeTags("B", "I", "L", "U"),
    "BMES": SchemeTags("B", "M", "E", "S"),
}

#: the role letter of each field of :class:`SchemeTags` (``"O"`` is outside)
ROLES = "BIES"


class Token(NamedTuple):
    """One label read in a scheme: its role letter (one of ``"BIESO"``) and
    entity type (any for ``"O"``: no rule reads the type of an outside label)."""

    role: str
    type: Optional[str]


class EntityPatterns(NamedTuple):
    """seqeval's strict-mode patterns of a scheme, over role letters.

    Each maps ``(previous role, current role)`` to the condition on the two
    entity types, ``"any"``, ``"same"`` or ``"diff"``, under which the current
    token starts an entity (``start``), continues the entity of the previous
    one (``inside``) or, following the previous token, closes its entity
    (``end``).
    """

    start: dict
    inside: dict
    end: dict


def _patterns(*specs):
    """``{(previous, current): condition}`` of ``(previous roles, current roles,
    condition)`` triples (transcribed from seqeval.scheme); two conditions on
    one pair give ``"any"``."""
    table = {}
    for previous, current, condition in specs:
        for p in previous:
            for c in current:
                old = table.get((p, c))
                table[p, c] = condition if old in (None, condition) else "any"
    return table


_ANY = "BIESO"

#: begin/inside/end/single schemes (IOBES, BILOU, BMES)
_BIES = EntityPatterns(
    start=_patterns((_ANY, "BS", "any")),
    inside=_patterns(("BI", "IE", "same")),
    end=_patterns(("ES", _ANY, "any")),
)

#: scheme name -> how seqeval's strict mode reads its entities
PATTERNS = {
    "IOB1": EntityPatterns(
        start=_patterns(("OB", "I", "any"), ("I", "I", "diff"), ("IB", "B", "same")),
        inside=_patterns(("BI", "I", "same")),
        end=_patterns(
            ("BI", "O", "any"),
            ("I", "B", "any"),
            ("BI", "I", "diff"),
            ("B", "B", "same"),
        ),
    ),
    "IOB2": EntityPatterns(
        start=_patterns((_ANY, "B", "any")),
        inside=_patterns(("BI", "I", "same")),
        end=_patterns(("BI", "OB", "any"), ("BI", "I", "diff")),
    ),
    "IOE1": EntityPatterns(
        start=_patterns(("OE", "I", "any"), ("I", "I", "diff"), ("E", "E", "same")),
        inside=_patterns(("I", "IE", "same")),
        end=_patterns(("I", "IE", "diff"), ("I", "O", "any"), ("E", "IE", "same")),
    ),
    "IOE2": EntityPatterns(
        start=_patterns(("OE", "IE", "any"), ("I", "IE", "diff")),
        inside=_patterns(("I", "IE", "same")),
        end=_patterns(("E", _ANY, "any")),
    ),
    "IOBES": _BIES,
    "BILOU": _BIES,
    "BMES": _BIES,
}

#: what stands before the first and after the last token of a sequence
_BOUNDARY = Token("O", "_")


@functools.lru_cache(maxsize=None)
def _role_letters(scheme):
    """``{tag: role letter}`` of the tags of ``scheme``, ``"O"`` included
    (shared: never written)."""
    letters = {tag: role for tag, role in zip(SCHEMES[scheme], ROLES) if tag}
    letters["O"] = "O"
    return letters


def read_label(label, scheme, *, suffix=False):
    """The :class:`Token` of a non-empty str label in ``scheme``, as seqeval's
    strict mode reads it, or None when its tag is not one of the scheme's.

    The tag is the label's first character (its last with ``suffix``), the
    type the rest without its ``"-"`` (``"_"`` when empty); the tag ``"O"``
    is outside. The one reading of a label for entities
    (:func:`read_entities`) and for decoding constraints
    (:mod:`sklearn_crf._model.constraints`).
    """
    tag, type_ = (label[-1], label[:-1]) if suffix else (label[0], label[1:])
    role = _role_letters(scheme).get(tag)
    return None if role is None else Token(role, type_.strip("-") or "_")


def _matches(patterns, prev, token):
    condition = patterns.get((prev.role, token.role))
    return condition is not None and (
        condition == "any" or (condition == "same") == (prev.type == token.type)
    )


def may_follow(scheme, prev, cur):
    """Whether the :class:`Token` ``cur`` may follow ``prev`` in ``scheme``.

    None stands for the start (``prev``) or the end (``cur``) of a sequence.
    A sequence keeps these rules at each of its transitions, first and last
    label included, exactly when :func:`read_entities` reads each of its
    labels but ``"O"`` as part of an entity: ``cur`` continues the entity of
    ``prev``, or ``prev`` closes its entity (or is ``"O"``) and ``cur``
    starts one (or is ``"O"``).
    """
    patterns = PATTERNS[scheme]
    prev = _BOUNDARY if prev is None else prev
    cur = _BOUNDARY if cur is None else cur
    if _matches(patterns.inside, prev, cur):
        return True
    return (prev.role == "O" or _matches(patterns.end, prev, cur)) and (
        cur.role == "O" or _matches(patterns.start, prev, cur)
    )


def _strict_entities(tokens, scheme):
    """Entities ``(type, start, end)`` of a list of :class:`Token` that are
    well formed in ``scheme`` (seqeval's strict mode); ``end`` is exclusive."""
    start, inside, end = PATTERNS[scheme]
    tokens = list(tokens) + [_BOUNDARY]
    entities = []
    i, prev = 0, _BOUNDARY
    while i < len(tokens):
        token = tokens[i]
        if _matches(start, prev, token):
            # Extend the entity over inside tokens; keep it only if it is
            # properly closed. The final boundary token is never inside.
            j = i + 1
            while _matches(inside, tokens[j - 1], tokens[j]):
                j += 1
            if _matches(end, tokens[j - 1], tokens[j]):
                entities.append((token.type, i, j))
            i = j
        else:
            i += 1
        prev = tokens[i - 1]
    return entities


def _check_label(label, where):
    """Raise a TypeError or ValueError when ``label`` is not a non-empty str."""
    if not isinstance(label, str) or not label:
        error = ValueError if isinstance(label, str) else TypeError
        raise error(
            f"{where} is {label!r}; entity-level metrics need non-empty str labels "
            "such as 'B-PER' or 'O'"
        )


def _conlleval_entities(labels, suffix, where):
    """Entities ``(type, start, end)`` of a label sequence with conlleval's rules.

    ``where`` names the sequence in error messages, e.g. ``"y_true[3]"``.
    """
    entities = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, label in enumerate(list(labels) + ["O"]):
        _check_label(label, f"{where}[{i}]")
        if suffix:
            tag, type_ = label[-1], label[:-1].rsplit("-", 1)[0] or "_"
        else:
            tag, type_ = label[0], label[1:].split("-", 1)[-1] or "_"
        # A chunk ends after an E or S tag, before B, S or O, or on a change of
        # type; it starts at B or S, at I or E not continuing a chunk, or on a
        # change of type. Tags "O" and "." never carry a chunk.
        if (
            prev_tag in "ES"
            or (prev_tag in "BI" and tag in "BSO")
            or (prev_tag not in "O." and prev_type != type_)
        ):
            entities.append((prev_type, begin, i))
        if (
            tag in "BS"
            or (prev_tag in "ESO" and tag in "EI")
            or (tag not in "O." and prev_type != type_)
        ):
            begin = i
        prev_tag, prev_type = tag, type_
    return entities


def read_entities(labels, scheme=None, *, suffix=False, where="seq"):
    """The entities ``(type, start, end)`` of one label sequence, in order.

    With a scheme name (upper case), seqeval's strict mode for it; with None,
    conlleval's rules. A label is split into a one-character tag (its first
    character, or its last with ``suffix=True``) and a type (the rest, without
    the ``"-"``; ``"_"`` when empty). ``where`` names the sequence in the
    TypeError or ValueError raised for a label that is not a non-empty str
    or, in strict mode, whose tag is not one of the scheme's.
    """
    if scheme is None:
        return _conlleval_entities(labels, suffix, where)
    tokens = []
    for i, label in enumerate(labels):
        _check_label(label, f"{where}[{i}]")
        token = read_label(label, scheme, suffix=suffix)
        if token is None:
            raise ValueError(
                f"{where}[{i}] is {label!r}, not a label of scheme {scheme}: its "
                f"{'suffix' if suffix else 'prefix'} must be one of "
                f"{', '.join(sorted(_role_letters(scheme)))}"
            )
        tokens.append(token)
    return _strict_entities(tokens, scheme)
