"""Tests for sklearn_crf.metrics."""

import json
import pickle
import random
from fractions import Fraction
import warnings
from collections import Counter, defaultdict

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import metrics as skm
from sklearn.base import BaseEstimator
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn_crfsuite import metrics as crfsuite_metrics

import sklearn_crf.metrics
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import (
    LabelScore,
    conlleval_report,
    crfsuite_holdout_report,
    entity_classification_report,
    entity_f1_score,
    entity_f1_scorer,
    entity_fbeta_score,
    entity_precision_recall_fscore_support,
    entity_precision_score,
    entity_recall_score,
    flat_accuracy_score,
    flat_accuracy_scorer,
    flat_classification_report,
    flat_f1_score,
    flat_f1_scorer,
    flat_fbeta_score,
    flat_precision_score,
    flat_recall_score,
    get_entities,
    get_scorer,
    get_scorer_names,
    sequence_accuracy_score,
    sequence_accuracy_scorer,
)

from conftest import outcome

seqeval = pytest.importorskip("seqeval")
from seqeval import scheme as seqeval_scheme  # noqa: E402
from seqeval.metrics import sequence_labeling as seqeval_lenient  # noqa: E402
from seqeval.metrics import v1 as seqeval_strict  # noqa: E402

SCHEMES = ["IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"]
SCHEME_PREFIXES = {
    "IOB1": "IOB",
    "IOB2": "IOB",
    "IOE1": "IOE",
    "IOE2": "IOE",
    "IOBES": "IOBES",
    "BILOU": "BILOU",
}
TYPES = ["PER", "LOC", "ORG", "MISC"]
AVERAGES = [None, "micro", "macro", "weighted"]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _random_label(rng, prefixes, typeless):
    prefix = rng.choice(prefixes)
    if prefix == "O":
        return "O"
    if prefix in typeless and rng.random() < 0.05:
        return prefix
    return f"{prefix}-{rng.choice(TYPES)}"


def _random_pair(seed, prefixes, typeless="", n_sequences=25, max_len=12):
    """Random, mostly ill-formed, aligned y_true and y_pred."""
    rng = random.Random(seed)
    lengths = [rng.randint(0, max_len) for _ in range(n_sequences)]
    y_true = [
        [_random_label(rng, prefixes, typeless) for _ in range(n)] for n in lengths
    ]
    y_pred = [
        # Copy part of the truth so that some entities are correct.
        [
            t if rng.random() < 0.6 else _random_label(rng, prefixes, typeless)
            for t in seq
        ]
        for seq in y_true
    ]
    return y_true, y_pred


def _to_suffix(y):
    return [
        [lab if lab == "O" else "-".join(reversed(lab.split("-", 1))) for lab in s]
        for s in y
    ]


def _seqeval_prfs(y_true, y_pred, mode, scheme, suffix=False, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode == "strict":
            return seqeval_strict.precision_recall_fscore_support(
                y_true,
                y_pred,
                scheme=getattr(seqeval_scheme, scheme),
                suffix=suffix,
                **kwargs,
            )
        return seqeval_lenient.precision_recall_fscore_support(
            y_true, y_pred, suffix=suffix, **kwargs
        )


def _seqeval_report(y_true, y_pred, mode, scheme, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return seqeval_lenient.classification_report(
            y_true,
            y_pred,
            mode=mode,
            scheme=getattr(seqeval_scheme, scheme) if scheme else None,
            **kwargs,
        )


def _ours_prfs(y_true, y_pred, mode, scheme, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return entity_precision_recall_fscore_support(
            y_true, y_pred, mode=mode, scheme=scheme, **kwargs
        )


def _assert_prfs_equal(ours, theirs):
    for a, b in zip(ours, theirs):
        assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _assert_reports_equal(ours, theirs):
    assert list(ours) == list(theirs)
    for row, scores in theirs.items():
        for key, value in scores.items():
            assert ours[row][key] == pytest.approx(value, rel=1e-12, abs=1e-12), (
                row,
                key,
            )


def _iob2_to_iobes(seq):
    out = []
    for i, label in enumerate(seq):
        if label == "O":
            out.append(label)
            continue
        prefix, type_ = label.split("-", 1)
        continues = i + 1 < len(seq) and seq[i + 1] == f"I-{type_}"
        if prefix == "B":
            out.append(("B-" if continues else "S-") + type_)
        else:
            out.append(("I-" if continues else "E-") + type_)
    return out


def _perturb(y, labels, seed, rate=0.1):
    rng = random.Random(seed)
    return [
        [rng.choice(labels) if rng.random() < rate else lab for lab in seq] for seq in y
    ]


@pytest.fixture(scope="module")
def testa_tags():
    return load_conll2002("testa", return_X_y=True)[1]


# ---------------------------------------------------------------------------
# get_entities
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seq, expected",
    [
        (["B-PER", "I-PER", "O", "B-LOC"], [("PER", 0, 2), ("LOC", 3, 4)]),
        (["O", "I-PER", "I-PER", "B-LOC"], [("PER", 1, 3), ("LOC", 3, 4)]),
        (["B-PER", "I-LOC", "I-LOC"], [("PER", 0, 1), ("LOC", 1, 3)]),
        (["B-PER", "B-PER", "I-PER"], [("PER", 0, 1), ("PER", 1, 3)]),
        (
            ["S-PER", "B-LOC", "I-LOC", "E-LOC", "E-LOC"],
            [("PER", 0, 1), ("LOC", 1, 4), ("LOC", 4, 5)],
        ),
        (["B", "I", "O", "B"], [("_", 0, 2), ("_", 3, 4)]),
        (["O", "O"], []),
        ([], []),
    ],
)
def test_get_entities_lenient(seq, expected):
    assert get_entities(seq) == expected
    assert get_entities(tuple(seq)) == expected
    # Suffix style gives the same entities.
    suffixed = _to_suffix([seq])[0]
    assert get_entities(suffixed, suffix=True) == expected
    # Same as seqeval, whose end offsets are inclusive.
    assert seqeval_lenient.get_entities(list(seq)) == [
        (t, s, e - 1) for t, s, e in expected
    ]


def test_lenient_entities_stay_within_sequences():
    # conlleval does not start a chunk at a bare label with an unknown chunk tag
    # after "O"; the chunk then begins at the start of the sequence (seqeval,
    # which concatenates sequences, can begin it in an earlier sequence).
    seq = ["O", "U", "B-PER"]
    assert get_entities(seq) == [("_", 0, 2), ("PER", 2, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert seqeval_lenient.get_entities(seq) == [("_", 0, 1), ("PER", 2, 2)]
        # Two sequences: seqeval's chunk starts at B-LOC of the first one.
        theirs = seqeval_lenient.get_entities([["B-LOC"], seq])
    assert theirs == [("LOC", 0, 0), ("_", 0, 3), ("PER", 4, 4)]
    assert get_entities(["B-LOC"]) == [("LOC", 0, 1)]


@pytest.mark.parametrize(
    "scheme, seq, expected",
    [
        ("IOB2", ["B-PER", "I-PER", "O", "B-LOC"], [("PER", 0, 2), ("LOC", 3, 4)]),
        ("IOB2", ["O", "I-PER", "I-PER", "B-LOC"], [("LOC", 3, 4)]),
        ("IOB2", ["B-PER", "I-LOC", "B-ORG"], [("PER", 0, 1), ("ORG", 2, 3)]),
        (
            "IOB1",
            ["I-PER", "I-PER", "B-PER", "I-LOC"],
            [("PER", 0, 2), ("PER", 2, 3), ("LOC", 3, 4)],
        ),
        ("IOE2", ["I-PER", "E-PER", "E-LOC", "O"], [("PER", 0, 2), ("LOC", 2, 3)]),
        (
            "IOBES",
            ["S-PER", "B-LOC", "E-LOC", "B-ORG", "O"],
            [("PER", 0, 1), ("LOC", 1, 3)],
        ),
        (
            "BILOU",
            ["U-PER", "B-LOC", "I-LOC", "L-LOC", "I-ORG"],
            [("PER", 0, 1), ("LOC", 1, 4)],
        ),
    ],
)
def test_get_entities_strict(scheme, seq, expected):
    assert get_entities(seq, mode="strict", scheme=scheme) == expected
    assert get_entities(seq, mode="strict", scheme=scheme.lower()) == expected
    suffixed = _to_suffix([seq])[0]
    assert get_entities(suffixed, mode="strict", scheme=scheme, suffix=True) == expected
    tokens = seqeval_scheme.Tokens(seq, getattr(seqeval_scheme, scheme))
    assert [(e.tag, e.start, e.end) for e in tokens.entities] == expected


# ---------------------------------------------------------------------------
# Entity metrics against seqeval
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [False, True])
def test_lenient_matches_seqeval_random(suffix):
    # B, I, E, S, O understood by conlleval, plus BILOU's L and U and
    # invalid transitions. Bare labels without type only for known tags
    # (see the note on sequence boundaries in get_entities).
    for seed in range(40):
        y_true, y_pred = _random_pair(seed, "BIESOLU", typeless="BIES")
        if suffix:
            y_true, y_pred = _to_suffix(y_true), _to_suffix(y_pred)
        for average in AVERAGES:
            _assert_prfs_equal(
                _ours_prfs(y_true, y_pred, None, None, average=average, suffix=suffix),
                _seqeval_prfs(
                    y_true, y_pred, None, None, average=average, suffix=suffix
                ),
            )


@pytest.mark.parametrize("scheme", SCHEMES)
def test_strict_matches_seqeval_random(scheme):
    for seed in range(25):
        y_true, y_pred = _random_pair(seed, SCHEME_PREFIXES[scheme], typeless="BIESLU")
        theirs = _seqeval_prfs(y_true, y_pred, "strict", scheme, average=None)
        _assert_prfs_equal(
            _ours_prfs(y_true, y_pred, "strict", scheme, average=None), theirs
        )
        if len(theirs[3]) == 0:
            continue  # seqeval's macro average is NaN without entities
        for average in ("micro", "macro", "weighted"):
            _assert_prfs_equal(
                _ours_prfs(y_true, y_pred, "strict", scheme, average=average),
                _seqeval_prfs(y_true, y_pred, "strict", scheme, average=average),
            )


@pytest.mark.parametrize(
    "mode, scheme", [(None, None), ("strict", "IOB2"), ("strict", "IOBES")]
)
def test_single_scores_match_seqeval(mode, scheme):
    prefixes = SCHEME_PREFIXES[scheme] if scheme else "BIESO"
    for seed in range(30):
        y_true, y_pred = _random_pair(seed, prefixes)
        kwargs = dict(
            mode=mode, scheme=getattr(seqeval_scheme, scheme) if scheme else None
        )
        for average in ("micro", "macro", "weighted"):
            ours = dict(mode=mode, scheme=scheme, average=average, zero_division=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = (
                    seqeval.metrics.precision_score(
                        y_true, y_pred, average=average, **kwargs
                    ),
                    seqeval.metrics.recall_score(
                        y_true, y_pred, average=average, **kwargs
                    ),
                    seqeval.metrics.f1_score(y_true, y_pred, average=average, **kwargs),
                )
            assert entity_precision_score(y_true, y_pred, **ours) == pytest.approx(
                expected[0]
            )
            assert entity_recall_score(y_true, y_pred, **ours) == pytest.approx(
                expected[1]
            )
            assert entity_f1_score(y_true, y_pred, **ours) == pytest.approx(expected[2])


@pytest.mark.parametrize(
    "mode, scheme", [(None, None), ("strict", "IOB2"), ("strict", "BILOU")]
)
@pytest.mark.parametrize("digits", [2, 4])
def test_classification_report_matches_seqeval(mode, scheme, digits):
    prefixes = SCHEME_PREFIXES[scheme] if scheme else "BIESO"
    for seed in range(20):
        y_true, y_pred = _random_pair(seed, prefixes)
        if not any(get_entities(s, mode=mode, scheme=scheme) for s in y_true + y_pred):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            text = entity_classification_report(
                y_true, y_pred, mode=mode, scheme=scheme, digits=digits
            )
            report = entity_classification_report(
                y_true, y_pred, mode=mode, scheme=scheme, output_dict=True
            )
        assert text == _seqeval_report(y_true, y_pred, mode, scheme, digits=digits)
        _assert_reports_equal(
            report, _seqeval_report(y_true, y_pred, mode, scheme, output_dict=True)
        )


@pytest.mark.parametrize("zero_division", ["warn", 0, 1])
@pytest.mark.parametrize(
    "y_true, y_pred",
    [
        ([["B-PER", "O"]], [["O", "O"]]),  # nothing predicted
        ([["O", "O"]], [["B-PER", "O"]]),  # nothing to find
        (
            [["B-PER", "O"]],
            [["O", "B-LOC"]],
        ),  # one type never predicted, one never true
        ([["B-PER", "I-PER"], ["O"]], [["B-PER", "I-PER"], ["B-ORG"]]),
    ],
)
def test_zero_division_matches_seqeval(y_true, y_pred, zero_division):
    for average in AVERAGES:
        for mode, scheme in [(None, None), ("strict", "IOB2")]:
            _assert_prfs_equal(
                _ours_prfs(
                    y_true,
                    y_pred,
                    mode,
                    scheme,
                    average=average,
                    zero_division=zero_division,
                ),
                _seqeval_prfs(
                    y_true,
                    y_pred,
                    mode,
                    scheme,
                    average=average,
                    zero_division=zero_division,
                ),
            )


def test_real_data_matches_seqeval(testa_tags):
    iob2_labels = sorted({lab for seq in testa_tags for lab in seq})
    y_pred = _perturb(testa_tags, iob2_labels, seed=0)
    for mode, scheme in [(None, None), ("strict", "IOB2")]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            ours = entity_classification_report(
                testa_tags, y_pred, mode=mode, scheme=scheme, output_dict=True
            )
        theirs = _seqeval_report(testa_tags, y_pred, mode, scheme, output_dict=True)
        _assert_reports_equal(ours, theirs)
        assert set(ours) == set(TYPES) | {"micro avg", "macro avg", "weighted avg"}
        assert 0.5 < ours["micro avg"]["f1-score"] < 0.95
    # Lenient and strict differ on ill-formed predictions.
    assert entity_f1_score(testa_tags, y_pred) != entity_f1_score(
        testa_tags, y_pred, mode="strict", scheme="IOB2"
    )
    assert entity_f1_score(testa_tags, testa_tags) == 1.0


def test_real_data_iobes_matches_seqeval(testa_tags):
    y_true = [_iob2_to_iobes(seq) for seq in testa_tags[:600]]
    labels = sorted({lab for seq in y_true for lab in seq})
    y_pred = _perturb(y_true, labels, seed=1, rate=0.15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ours = entity_classification_report(
            y_true, y_pred, mode="strict", scheme="IOBES", output_dict=True
        )
    _assert_reports_equal(
        ours, _seqeval_report(y_true, y_pred, "strict", "IOBES", output_dict=True)
    )
    # The IOBES conversion keeps the entities of the IOB2 data.
    for seq_iob2, seq_iobes in zip(testa_tags[:600], y_true):
        assert get_entities(seq_iob2, mode="strict", scheme="IOB2") == get_entities(
            seq_iobes, mode="strict", scheme="IOBES"
        )
        assert get_entities(seq_iob2) == get_entities(seq_iobes)


def test_strict_bmes_scores_are_iobes_scores_with_m_for_i():
    # seqeval has no BMES; its entities are IOBES' with M for I (tests/model/test_schemes.py)
    def to_iobes(y):
        return [["I" + lab[1:] if lab[0] == "M" else lab for lab in seq] for seq in y]

    for seed in range(15):
        y_true, y_pred = _random_pair(seed, "BMESO", typeless="BMES")
        for average in AVERAGES:
            _assert_prfs_equal(
                _ours_prfs(y_true, y_pred, "strict", "BMES", average=average),
                _ours_prfs(
                    to_iobes(y_true), to_iobes(y_pred), "strict", "IOBES",
                    average=average,
                ),
            )
    seq = ["B-PER", "M-PER", "E-PER", "S-LOC", "M-LOC", "O"]
    for scheme in ("BMES", "bmes"):
        assert get_entities(seq, mode="strict", scheme=scheme) == [
            ("PER", 0, 3),
            ("LOC", 3, 4),
        ]


# ---------------------------------------------------------------------------
# Entity metrics: behaviour of our own
# ---------------------------------------------------------------------------


def test_entity_scores_hand_example():
    y_true = [["O", "B-MISC", "I-MISC", "B-MISC"], ["B-PER", "I-PER", "O"]]
    y_pred = [["O", "B-MISC", "I-MISC", "I-MISC"], ["B-PER", "I-PER", "O"]]
    # true: MISC(1,3), MISC(3,4), PER(0,2); predicted: MISC(1,4), PER(0,2)
    p, r, f, s = entity_precision_recall_fscore_support(y_true, y_pred)
    assert_allclose(p, [0.0, 1.0])
    assert_allclose(r, [0.0, 1.0])
    assert_allclose(f, [0.0, 1.0])
    assert_array_equal(s, [2, 1])
    assert entity_precision_score(y_true, y_pred) == pytest.approx(0.5)
    assert entity_recall_score(y_true, y_pred) == pytest.approx(1 / 3)
    assert entity_f1_score(y_true, y_pred) == pytest.approx(0.4)
    assert entity_f1_score(y_true, y_pred, average="macro") == pytest.approx(0.5)
    assert entity_f1_score(y_true, y_pred, average="weighted") == pytest.approx(1 / 3)
    p, r = 0.5, 1 / 3
    assert entity_fbeta_score(y_true, y_pred, beta=2) == pytest.approx(
        5 * p * r / (4 * p + r)
    )
    assert entity_fbeta_score(y_true, y_pred, beta=0) == pytest.approx(p)
    support = entity_precision_recall_fscore_support(y_true, y_pred, average="micro")[3]
    assert support == 3 and isinstance(support, int)


def test_no_entities():
    y = [["O", "O"], ["O"]]
    for average in ("micro", "macro", "weighted"):
        assert entity_f1_score(y, y, average=average, zero_division=0) == 0.0
        assert entity_f1_score(y, y, average=average, zero_division=1) == 1.0
        assert np.isnan(entity_f1_score(y, y, average=average, zero_division=np.nan))
    p, r, f, s = entity_precision_recall_fscore_support(y, y, zero_division=0)
    assert p.shape == r.shape == f.shape == s.shape == (0,)
    report = entity_classification_report(y, y, zero_division=0)
    assert "micro avg" in report and "PER" not in report
    assert entity_f1_score([], [], zero_division=0) == 0.0


def test_zero_division_nan_is_ignored_in_averages():
    y_true = [["B-PER", "O", "B-LOC"]]
    y_pred = [["B-PER", "O", "O"]]  # LOC never predicted: precision undefined
    p = entity_precision_score(y_true, y_pred, average=None, zero_division=np.nan)
    assert p[1] == 1.0 and np.isnan(p[0])
    assert (
        entity_precision_score(y_true, y_pred, average="macro", zero_division=np.nan)
        == 1.0
    )
    assert (
        entity_precision_score(y_true, y_pred, average="weighted", zero_division=np.nan)
        == 1.0
    )


def test_undefined_metric_warnings():
    y_true, y_pred = [["B-PER", "O"]], [["O", "O"]]
    with pytest.warns(UndefinedMetricWarning, match="Precision is ill-defined"):
        entity_precision_score(y_true, y_pred)
    with pytest.warns(UndefinedMetricWarning, match="Recall is ill-defined"):
        entity_recall_score(y_pred, y_true)
    with pytest.warns(UndefinedMetricWarning, match="F-score is ill-defined"):
        entity_f1_score(y_pred, y_pred)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entity_precision_score(y_true, y_pred, zero_division=0)
        entity_f1_score(y_true, y_pred)  # F = 0 is well defined here
        entity_classification_report(y_true, y_pred, zero_division=1)


def test_entity_sample_weight_equals_repetition():
    y_true, y_pred = _random_pair(3, "BIO", n_sequences=12)
    weights = np.array([2, 1, 1, 3, 1, 1, 5, 2, 1, 1, 4, 1])
    rep_true = [s for s, w in zip(y_true, weights) for _ in range(w)]
    rep_pred = [s for s, w in zip(y_pred, weights) for _ in range(w)]
    for average in AVERAGES:
        _assert_prfs_equal(
            _ours_prfs(
                y_true, y_pred, None, None, average=average, sample_weight=weights
            ),
            _ours_prfs(rep_true, rep_pred, None, None, average=average),
        )
    assert sequence_accuracy_score(
        y_true, y_pred, sample_weight=weights
    ) == pytest.approx(sequence_accuracy_score(rep_true, rep_pred))
    assert flat_accuracy_score(y_true, y_pred, sample_weight=weights) == pytest.approx(
        flat_accuracy_score(rep_true, rep_pred)
    )
    # A zero weight removes the entities of a sequence.
    weights = np.ones(len(y_true))
    weights[0] = 0
    _assert_prfs_equal(
        _ours_prfs(y_true, y_pred, None, None, average="micro", sample_weight=weights),
        _ours_prfs(y_true[1:], y_pred[1:], None, None, average="micro"),
    )


def test_report_formats():
    y_true = [["B-PER", "I-PER", "O", "B-LONGTYPENAME"]]
    y_pred = [["B-PER", "I-PER", "O", "O"]]
    text = entity_classification_report(y_true, y_pred, digits=3, zero_division=0)
    lines = text.split("\n")
    assert lines[0].split() == ["precision", "recall", "f1-score", "support"]
    assert lines[2].split() == ["LONGTYPENAME", "0.000", "0.000", "0.000", "1"]
    assert lines[3].split() == ["PER", "1.000", "1.000", "1.000", "1"]
    assert lines[5].split() == ["micro", "avg", "1.000", "0.500", "0.667", "2"]
    assert text.endswith("\n")
    report = entity_classification_report(
        y_true, y_pred, output_dict=True, zero_division=0
    )
    assert report["PER"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1-score": 1.0,
        "support": 1,
    }
    for row in report.values():
        assert all(type(v) is float for k, v in row.items() if k != "support")
        assert type(row["support"]) is int


# ---------------------------------------------------------------------------
# Token-level and sequence-level metrics
# ---------------------------------------------------------------------------


def test_flat_metrics_match_sklearn(testa_tags):
    y_true = testa_tags[:300]
    labels = sorted({lab for seq in y_true for lab in seq})
    y_pred = _perturb(y_true, labels, seed=2, rate=0.2)
    flat_true = [lab for seq in y_true for lab in seq]
    flat_pred = [lab for seq in y_pred for lab in seq]
    no_o = [lab for lab in labels if lab != "O"]

    assert flat_accuracy_score(y_true, y_pred) == skm.accuracy_score(
        flat_true, flat_pred
    )
    assert flat_accuracy_score(y_true, y_pred, normalize=False) == skm.accuracy_score(
        flat_true, flat_pred, normalize=False
    )
    pairs = [
        (flat_precision_score, skm.precision_score),
        (flat_recall_score, skm.recall_score),
        (flat_f1_score, skm.f1_score),
    ]
    for average in ("micro", "macro", "weighted", None):
        kwargs = dict(labels=no_o, average=average, zero_division=0)
        for ours, theirs in pairs:
            assert_allclose(
                ours(y_true, y_pred, **kwargs), theirs(flat_true, flat_pred, **kwargs)
            )
        assert_allclose(
            flat_fbeta_score(y_true, y_pred, beta=0.5, **kwargs),
            skm.fbeta_score(flat_true, flat_pred, beta=0.5, **kwargs),
        )
    assert flat_classification_report(y_true, y_pred, labels=no_o, digits=3) == (
        skm.classification_report(flat_true, flat_pred, labels=no_o, digits=3)
    )
    assert flat_classification_report(y_true, y_pred, output_dict=True) == (
        skm.classification_report(flat_true, flat_pred, output_dict=True)
    )

    weights = np.linspace(0.5, 2.0, len(y_true))
    token_weights = np.repeat(weights, [len(s) for s in y_true])
    assert flat_f1_score(
        y_true, y_pred, average="weighted", labels=no_o, sample_weight=weights
    ) == pytest.approx(
        skm.f1_score(
            flat_true,
            flat_pred,
            average="weighted",
            labels=no_o,
            sample_weight=token_weights,
        )
    )


def test_flat_metrics_accept_other_sequence_types():
    y_true = [np.array(["O", "B-PER"]), ("B-LOC",)]
    y_pred = [["O", "O"], np.array(["B-LOC"])]
    assert flat_accuracy_score(y_true, y_pred) == pytest.approx(2 / 3)
    assert flat_accuracy_score(np.array([[0, 1], [1, 1]]), [[0, 1], [1, 0]]) == 0.75
    assert sequence_accuracy_score(y_true, y_pred) == 0.5
    assert entity_f1_score(y_true, y_pred) == pytest.approx(2 / 3)


def test_sequence_accuracy_score():
    y_true = [["B-PER", "I-PER", "O"], ["O"], ["B-LOC", "O"], []]
    assert sequence_accuracy_score(y_true, y_true) == 1.0
    y_pred = [["B-PER", "I-PER", "O"], ["B-LOC"], ["B-LOC", "B-LOC"], []]
    assert sequence_accuracy_score(y_true, y_pred) == 0.5
    assert sequence_accuracy_score(y_true, y_pred, sample_weight=[3, 1, 1, 0]) == 0.6
    assert sequence_accuracy_score([[1, 2]], [[1, 3]]) == 0.0
    # no sequence, or no weight: 0.0, as sklearn-crfsuite returns for no sequence
    assert sequence_accuracy_score([], []) == 0.0
    assert sequence_accuracy_score(y_true, y_true, sample_weight=[0, 0, 0, 0]) == 0.0


def test_same_results_as_sklearn_crfsuite(testa_tags):
    # every function of sklearn_crfsuite.metrics, called the same way
    # (positional beta and labels included), gives the same result here
    y_true = testa_tags[:200]
    labels = sorted({lab for seq in y_true for lab in seq})
    y_pred = _perturb(y_true, labels + ["B-NEW"], seed=4, rate=0.2)
    no_o = [lab for lab in labels if lab != "O"]
    ours = sklearn_crf.metrics
    calls = [
        ("flat_accuracy_score", (), {}),
        ("flat_precision_score", (), dict(average="micro", labels=no_o)),
        ("flat_recall_score", (), dict(average="macro", labels=no_o, zero_division=0)),
        ("flat_f1_score", (), dict(average="weighted", labels=no_o)),
        ("flat_f1_score", (), dict(average=None)),
        ("flat_fbeta_score", (0.5,), dict(average="macro", labels=no_o)),
        ("flat_fbeta_score", (), dict(beta=2, average="micro")),
        ("flat_classification_report", (no_o,), dict(digits=3)),
        ("flat_classification_report", (), dict(output_dict=True, zero_division=0)),
        ("sequence_accuracy_score", (), {}),
    ]
    cases = [
        # sequences of different lengths: see the note on equal lengths below
        (y_true, y_pred),
        ([], []),  # no sequence: 0 for sequence accuracy, ValueError for the rest
        ([["O", "B-PER"], ["O"]], [["O", "O"], ["O"]]),
        ([[1, 2, 3], [4]], [[1, 2, 4], [4]]),
    ]
    for name, args, kwargs in calls:
        for t, p in cases:
            theirs, mine = getattr(crfsuite_metrics, name), getattr(ours, name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)
                expected = outcome(lambda: theirs(t, p, *args, **kwargs), message=False)
                got = outcome(lambda: mine(t, p, *args, **kwargs), message=False)
            if isinstance(expected[-1], np.ndarray):
                assert got[0] == expected[0]
                assert_array_equal(got[1], expected[1])
            else:
                assert got == expected, (name, args, kwargs, t[:2])
    assert sequence_accuracy_score([], []) == 0.0
    # sklearn-crfsuite counts tokens instead of sequences when all sequences
    # have the same length (its np.array(y) is then 2-D): 3 / 2 here, not 1 / 2
    y_true, y_pred = [["a", "b"], ["c", "d"]], [["a", "x"], ["c", "d"]]
    assert crfsuite_metrics.sequence_accuracy_score(y_true, y_pred) == 1.5
    assert sequence_accuracy_score(y_true, y_pred) == 0.5


# ---------------------------------------------------------------------------
# conlleval's and CRFsuite's reports
# ---------------------------------------------------------------------------

#: (y_true, y_pred, conlleval's text): the text that sklearn_crf._cli's
#: format_conlleval(conll_evaluation(y_true, y_pred)) gave before the reports
#: moved here (checked identical then on these and on random inputs)
CONLLEVAL_CASES = [
    (
        [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG", "O", "B-MISC"]],
        [["B-PER", "I-PER", "O", "O"], ["B-ORG", "I-ORG", "O", "B-LOC", "I-MISC"]],
        "processed 9 tokens with 4 phrases; found: 4 phrases; correct: 2.\n"
        "accuracy:  55.56%; precision:  50.00%; recall:  50.00%; FB1:  50.00\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "             MISC: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
        "              ORG: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n",
    ),
    (
        [["I-PER", "I-PER", "B-PER"], ["O"]],
        [["B-PER", "I-PER", "B-PER"], ["I-LOC"]],
        "processed 4 tokens with 2 phrases; found: 3 phrases; correct: 2.\n"
        "accuracy:  50.00%; precision:  66.67%; recall: 100.00%; FB1:  80.00\n"
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
        "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  2\n",
    ),
    (
        [[], ["O", "O"]],
        [[], ["O", "O"]],
        "processed 2 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
        "accuracy: 100.00%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n",
    ),
    ([], [], "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"),
]


@pytest.mark.parametrize("y_true, y_pred, text", CONLLEVAL_CASES)
def test_conlleval_report_text(y_true, y_pred, text):
    assert conlleval_report(y_true, y_pred) == text


def test_conlleval_report_dict():
    y_true, y_pred, _ = CONLLEVAL_CASES[0]
    report = conlleval_report(y_true, y_pred, output_dict=True)
    # the JSON that `sklearn-crf eval --format json` printed before the move
    assert report == {
        "tokens": 9,
        "phrases": 4,
        "found": 4,
        "correct": 2,
        "accuracy": 5 / 9,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "types": {
            "LOC": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "found": 1, "support": 1},
            "MISC": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "found": 1, "support": 1},
            "ORG": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "found": 1, "support": 1},
            "PER": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "found": 1, "support": 1},
        },
    }
    # what `sklearn-crf eval --format json` prints: plain ints and floats, in this order
    assert json.dumps(report) == json.dumps(
        {k: report[k] for k in ("tokens", "phrases", "found", "correct", "accuracy",
                                "precision", "recall", "f1", "types")}
    )
    assert all(type(report[k]) is int for k in ("tokens", "phrases", "found", "correct"))
    assert all(type(report[k]) is float for k in ("accuracy", "precision", "recall", "f1"))


def test_conlleval_report_agrees_with_the_metrics(testa_tags):
    labels = sorted({lab for seq in testa_tags for lab in seq})
    y_pred = _perturb(testa_tags, labels, seed=5)
    report = conlleval_report(testa_tags, y_pred, output_dict=True)
    micro = entity_precision_recall_fscore_support(testa_tags, y_pred, average="micro")
    assert (report["precision"], report["recall"], report["f1"]) == micro[:3]
    assert report["phrases"] == micro[3]
    assert report["accuracy"] == flat_accuracy_score(testa_tags, y_pred)
    per_type = entity_classification_report(testa_tags, y_pred, output_dict=True)
    assert set(report["types"]) == set(TYPES)
    for type_, scores in report["types"].items():
        assert scores["f1"] == per_type[type_]["f1-score"]
        assert scores["support"] == per_type[type_]["support"]
    found = Counter(e[0] for seq in y_pred for e in get_entities(seq))
    assert {t: s["found"] for t, s in report["types"].items()} == found
    assert report["found"] == sum(found.values())


def test_crfsuite_holdout_report_dict():
    # a label never predicted nor present; a dev-only label; the macro
    # average divides by every label
    report = crfsuite_holdout_report(
        [["a", "b"], ["c", "a"]],
        [["a", "a"], ["c", "b"]],
        ["b", "a", "d"],
        output_dict=True,
    )
    assert list(report["scores"]) == ["b", "a", "d", "c"]
    assert report["scores"]["b"] == LabelScore(0, 1, 1, 0.0, 0.0, 0.0)
    assert report["scores"]["a"] == LabelScore(1, 2, 2, 0.5, 0.5, 0.5)
    assert report["scores"]["d"] == LabelScore(0, 0, 0, None, None, None)
    assert report["scores"]["c"] == LabelScore(1, 1, 1, 1.0, 1.0, 1.0)
    assert {k: v for k, v in report.items() if k != "scores"} == {
        "avg_precision": 0.375,
        "avg_recall": 0.375,
        "avg_f1": 0.375,
        "item_accuracy": Fraction(1, 2),
        "item_accuracy_float": 0.5,
        "instance_accuracy": Fraction(0),
        "instance_accuracy_float": 0.0,
    }
    # without labels: those of y_true, then of y_pred, in order of appearance
    report = crfsuite_holdout_report([["a", "b"]], [["c", "b"]], output_dict=True)
    assert list(report["scores"]) == ["a", "b", "c"]
    assert report["scores"]["c"] == LabelScore(0, 1, 0, None, None, None)


def test_crfsuite_holdout_report_is_crfsuites_text(tmp_path):
    """The text CRFsuite itself logs for a development set, byte for byte."""
    pycrfsuite = pytest.importorskip("pycrfsuite")
    X, y = load_conll2002("train", return_X_y=True, n_sentences=60)
    X_dev, y_dev = load_conll2002("testa", return_X_y=True, n_sentences=30)

    def features(sentence):
        return [{"w=" + w.lower(): 1.0, "title": float(w.istitle())} for w in sentence]

    class Trainer(pycrfsuite.Trainer):
        def message(self, text):
            log.append(text)

    log = []
    trainer = Trainer(verbose=False)
    trainer.set_params({"max_iterations": 5})
    for sentence, labels in zip(X, y):
        trainer.append(features(sentence), labels)
    for sentence, labels in zip(X_dev, y_dev):
        trainer.append(features(sentence), labels, group=1)
    trainer.train(str(tmp_path / "model.crfsuite"), holdout=1)
    text = "".join(log)
    want = text[text.rindex("Performance by label") :]
    want = want[: want.index("\n", want.index("Instance accuracy")) + 1]
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tmp_path / "model.crfsuite"))
    y_pred = [tagger.tag(features(sentence)) for sentence in X_dev]
    # CRFsuite's label order: first appearance in the training data, then the dev data
    labels = list(dict.fromkeys(label for seq in y + y_dev for label in seq))
    assert crfsuite_holdout_report(y_dev, y_pred, labels) == want
    assert want.count("\n") == len(labels) + 4


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------

ALL_METRICS = [
    flat_accuracy_score,
    lambda t, p: flat_f1_score(t, p, average="micro"),
    sequence_accuracy_score,
    entity_f1_score,
    entity_precision_recall_fscore_support,
    entity_classification_report,
    conlleval_report,
    crfsuite_holdout_report,
]


@pytest.mark.parametrize("metric", ALL_METRICS)
def test_validation_errors(metric):
    with pytest.raises(
        ValueError,
        match="^y_true and y_pred have different numbers of sequences: 2 and 1$",
    ):
        metric([["O"], ["O"]], [["O"]])
    with pytest.raises(
        ValueError, match="^sequence 1 has 2 labels in y_true but 1 in y_pred$"
    ):
        metric([["O"], ["O", "O"], ["O"]], [["O"], ["O"], ["O", "O"]])
    with pytest.raises(TypeError, match=r"^y_true\[0\] is a str; each sequence must be"):
        metric(["O", "B-PER"], [["O"], ["B-PER"]])
    with pytest.raises(TypeError, match=r"^y_pred\[1\] is a str; each sequence"):
        metric([["O"], ["B-PER"]], [["O"], "B-PER"])
    with pytest.raises(
        TypeError, match="^y_true must be a list of sequences, got a str$"
    ):
        metric("O B-PER", [["O"]])
    with pytest.raises(TypeError, match=r"^y_pred\[0\] is a int; each sequence"):
        metric([["O"]], [3])


@pytest.mark.parametrize(
    "metric",
    [
        flat_accuracy_score,
        lambda t, p, **kw: flat_f1_score(t, p, average="micro", **kw),
        sequence_accuracy_score,
        entity_f1_score,
        entity_classification_report,
    ],
)
def test_sample_weight_validation(metric):
    # the same check, and the same messages, as CRFTagger.fit
    y = [["O"], ["O"]]
    with pytest.raises(
        ValueError,
        match=r"^sample_weight has shape \(3,\), expected \(2,\): one weight per "
        "sequence$",
    ):
        metric(y, y, sample_weight=[1, 1, 1])
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(
            ValueError,
            match=rf"^sample_weight\[1\] is {bad}; weights must be finite and "
            "non-negative$",
        ):
            metric(y, y, sample_weight=[1.0, bad])


def test_metrics_and_fit_reject_the_same_weights(toy_ner):
    from sklearn_crf import CRFTagger

    X, y = toy_ner[0][:2], toy_ner[1][:2]
    for weights in ([1.0, -0.5], [np.nan, 1.0], [1.0, 1.0, 1.0]):
        with pytest.raises(ValueError) as fit_error:
            CRFTagger(max_iter=1).fit(X, y, sample_weight=weights)
        with pytest.raises(ValueError) as metric_error:
            entity_f1_score(y, y, sample_weight=weights)
        assert str(metric_error.value) == str(fit_error.value)


def test_entity_argument_validation():
    y = [["B-PER", "O"]]
    with pytest.raises(
        TypeError, match=r"^y_true\[1\]\[2\] is 3; entity-level metrics need non-empty"
    ):
        entity_f1_score([["O"], ["O", "B-PER", 3]], [["O"], ["O", "O", "O"]])
    with pytest.raises(ValueError, match=r"^seq\[0\] is ''; entity-level"):
        get_entities(["", "O"])
    with pytest.raises(TypeError, match=r"^seq\[1\] is None"):
        get_entities(["O", None], mode="strict", scheme="IOB2")
    with pytest.raises(
        ValueError,
        match=r"^y_true\[1\]\[2\] is 'E-PER', not a label of scheme IOB2: its prefix",
    ):
        entity_f1_score(
            [["O"], ["O", "B-PER", "E-PER"]],
            [["O"], ["O", "O", "O"]],
            mode="strict",
            scheme="IOB2",
        )
    with pytest.raises(ValueError, match="prefix must be one of B, I, L, O, U"):
        get_entities(["X-PER"], mode="strict", scheme="BILOU")
    with pytest.raises(ValueError, match="mode must be None or 'strict'"):
        entity_f1_score(y, y, mode="lenient")
    with pytest.raises(ValueError, match="requires a scheme"):
        entity_f1_score(y, y, mode="strict")
    with pytest.raises(ValueError, match="only used with mode='strict'"):
        entity_f1_score(y, y, scheme="IOB2")
    with pytest.raises(ValueError, match="scheme must be one of"):
        entity_f1_score(y, y, mode="strict", scheme="IOB3")
    with pytest.raises(ValueError, match="average must be one of"):
        entity_f1_score(y, y, average="binary")
    with pytest.raises(ValueError, match="zero_division must be"):
        entity_f1_score(y, y, zero_division="nan")
    with pytest.raises(ValueError, match="beta must be"):
        entity_fbeta_score(y, y, beta=-1)
    with pytest.raises(TypeError, match="seq must be a sequence of labels"):
        get_entities("B-PER")


# ---------------------------------------------------------------------------
# Scorers
# ---------------------------------------------------------------------------


class MemorizingTagger(BaseEstimator):
    """Tag each token with its most frequent training label."""

    def __init__(self, default="O"):
        self.default = default

    def fit(self, X, y):
        counts = defaultdict(Counter)
        for tokens, labels in zip(X, y):
            for token, label in zip(tokens, labels):
                counts[token][label] += 1
        self.vocabulary_ = {tok: c.most_common(1)[0][0] for tok, c in counts.items()}
        return self

    def predict(self, X):
        return [
            [self.vocabulary_.get(tok, self.default) for tok in tokens] for tokens in X
        ]


@pytest.fixture(scope="module")
def small_data():
    return load_conll2002("testa", n_sentences=300, return_X_y=True)


def test_scorers_in_cross_validate(small_data):
    X, y = small_data
    scoring = {name: get_scorer(name) for name in get_scorer_names()}
    cv = KFold(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the scorers never warn
        result = cross_validate(MemorizingTagger(), X, y, cv=cv, scoring=scoring)
    for name in get_scorer_names():
        scores = result[f"test_{name}"]
        assert scores.shape == (3,)
        assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1))

    # Same numbers as the metric functions on each fold.
    for k, (train, test) in enumerate(cv.split(X)):
        model = MemorizingTagger().fit([X[i] for i in train], [y[i] for i in train])
        y_test = [y[i] for i in test]
        y_hat = model.predict([X[i] for i in test])
        labels = sorted({lab for s in y_test + y_hat for lab in s} - {"O"})
        expected = {
            "entity_f1": entity_f1_score(y_test, y_hat),
            "entity_precision": entity_precision_score(y_test, y_hat),
            "entity_recall": entity_recall_score(y_test, y_hat),
            "flat_f1": flat_f1_score(y_test, y_hat, average="weighted", labels=labels),
            "flat_accuracy": flat_accuracy_score(y_test, y_hat),
            "sequence_accuracy": sequence_accuracy_score(y_test, y_hat),
        }
        for name, value in expected.items():
            assert result[f"test_{name}"][k] == pytest.approx(value), name


def test_scorer_objects_in_grid_search(small_data):
    X, y = small_data
    search = GridSearchCV(
        MemorizingTagger(),
        {"default": ["O", "B-PER"]},
        scoring={
            "f1": entity_f1_scorer,
            "acc": flat_accuracy_scorer,
            "seq": sequence_accuracy_scorer,
        },
        refit="f1",
        cv=KFold(3),
    )
    search.fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_f1"]))
    assert search.best_params_ == {"default": "O"}
    assert search.score(X, y) == pytest.approx(entity_f1_score(y, search.predict(X)))

    search = GridSearchCV(
        MemorizingTagger(), {"default": ["O"]}, scoring=flat_f1_scorer, cv=KFold(3)
    )
    assert np.isfinite(search.fit(X, y).best_score_)


def test_flat_f1_scorer_only_outside_labels():
    model = MemorizingTagger().fit([["a", "b"]], [["O", "O"]])
    assert flat_f1_scorer(model, [["a", "b"]], [["O", "O"]]) == 0.0


def test_get_scorer():
    assert get_scorer_names() == sorted(get_scorer_names())
    assert {"entity_f1", "flat_f1", "sequence_accuracy", "flat_accuracy"} <= set(
        get_scorer_names()
    )
    scorer = get_scorer("entity_f1")
    assert scorer is not entity_f1_scorer
    assert repr(scorer) == repr(entity_f1_scorer)
    assert get_scorer(entity_f1_score) is entity_f1_score
    with pytest.raises(ValueError, match="valid names are .*'entity_f1'"):
        get_scorer("f1")
    with pytest.raises(TypeError, match="scoring must be"):
        get_scorer(3)
    for name in get_scorer_names():
        pickle.loads(pickle.dumps(get_scorer(name)))


def test_sklearn_scorer_names_do_not_handle_ragged_y(small_data):
    # Documented limitation: scikit-learn's own scorers reject lists of sequences.
    X, y = small_data
    model = MemorizingTagger().fit(X, y)
    with pytest.raises((ValueError, TypeError)):
        skm.get_scorer("f1_micro")(model, X, y)


@pytest.mark.parametrize("bad", [
    "O B-PER",  # not a list of sequences
    {0: ["O"], 1: ["O"]},  # a mapping
    (seq for seq in [["O"], ["O"]]),  # a generator: no length
    [["O"], "O"],  # a str as a sequence
    [["O"], 3],  # a label as a sequence
    [["O"], {"O"}],  # a set: no order
])
def test_metrics_and_fit_read_label_sequences_by_one_rule(toy_ner, bad):
    from sklearn_crf import CRFTagger

    X = toy_ner[0][:2]
    with pytest.raises((TypeError, ValueError)) as fit_error:
        CRFTagger(max_iter=1).fit(X, bad)
    if not isinstance(bad, (str, dict, list)):  # a generator is consumed
        bad = (seq for seq in [["O"], ["O"]])
    with pytest.raises(type(fit_error.value)) as metric_error:
        flat_accuracy_score(bad, [["O"], ["O"]])
    assert str(metric_error.value) == str(fit_error.value).replace("y", "y_true", 1)
