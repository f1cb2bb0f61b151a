"""Tests for sklearn_crf._model.schemes: one definition of each tagging scheme.

seqeval has no BMES; its rules are checked here against a direct reading of
BMES (``B M* E`` or ``S``) on every label sequence up to length 4, and the
transition rules of every scheme against the entities that strict mode reads
(those are checked against seqeval in test_metrics.py).
"""

import itertools

import pytest

from sklearn_crf._model.schemes import SCHEMES, Token, may_follow, read_entities

MAX_LEN = 4


def _labels(scheme):
    """"O" and each tag of ``scheme`` with types A and B."""
    return ["O"] + [f"{tag}-{x}" for tag in SCHEMES[scheme] if tag for x in "AB"]


def _sequences(scheme):
    labels = _labels(scheme)
    for n in range(1, MAX_LEN + 1):
        yield from (list(seq) for seq in itertools.product(labels, repeat=n))


def _valid(seq, scheme):
    """Whether ``seq`` keeps :func:`may_follow` at every transition, ends included."""
    roles = dict(zip(SCHEMES[scheme], "BIES"))
    tokens = [None] + [
        Token("O", None) if label == "O" else Token(roles[label[0]], label[2:])
        for label in seq
    ] + [None]
    return all(may_follow(scheme, a, b) for a, b in zip(tokens, tokens[1:]))


def _bmes_by_hand(seq):
    """The entities of a BMES sequence read directly as ``B M* E`` or ``S``, or
    None when some label is not part of such an entity."""
    entities, i = [], 0
    while i < len(seq):
        tag, type_ = seq[i][0], seq[i][2:]
        if tag == "S":
            entities.append((type_, i, i + 1))
        elif tag == "B":
            j = i + 1
            while j < len(seq) and seq[j] == f"M-{type_}":
                j += 1
            if j == len(seq) or seq[j] != f"E-{type_}":
                return None
            entities.append((type_, i, j + 1))
            i = j
        elif tag != "O":
            return None
        i += 1
    return entities


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_transition_rules_are_strict_mode_validity(scheme):
    for seq in _sequences(scheme):
        covered = {i for _, a, b in read_entities(seq, scheme) for i in range(a, b)}
        every_label = {i for i, label in enumerate(seq) if label != "O"}
        assert _valid(seq, scheme) == (covered == every_label), seq


def test_bmes_strict_entities_are_read_by_hand():
    n_valid = 0
    for seq in _sequences("BMES"):
        by_hand = _bmes_by_hand(seq)
        assert _valid(seq, "BMES") == (by_hand is not None), seq
        if by_hand is not None:
            n_valid += 1
            assert read_entities(seq, "BMES") == by_hand, seq
    assert n_valid > 100


def test_bmes_is_iobes_with_m_for_i():
    # on ill-formed sequences too
    for seq in _sequences("BMES"):
        iobes = [label.replace("M-", "I-", 1) for label in seq]
        assert read_entities(seq, "BMES") == read_entities(iobes, "IOBES"), seq


def test_bilou_and_bmes_reject_the_tags_of_iobes():
    with pytest.raises(ValueError, match=r"must be one of B, E, M, O, S$"):
        read_entities(["B-PER", "I-PER"], "BMES")
    with pytest.raises(ValueError, match=r"must be one of B, I, L, O, U$"):
        read_entities(["S-PER"], "BILOU")


def test_constraints_read_labels_as_the_entity_metrics_do():
    # one reading of a label: "B-" and "I-" are an entity of type "_" for both
    from sklearn_crf._model.constraints import build_constraints
    from sklearn_crf._model.schemes import read_entities

    assert read_entities(["B-", "I-"], "IOB2") == [("_", 0, 2)]
    masks = build_constraints("IOB2", ["B-", "I-", "O"])
    assert masks.transitions[0, 1] and not masks.start[1]
