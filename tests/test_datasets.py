"""Tests for the bundled CoNLL-2002 data."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.utils import Bunch

from sklearn_crf.datasets import load_conll2002
from sklearn_crf.datasets._conll2002 import _parse_conll

SHARED_DIR = Path("/work/shared/data/conll2002")

IOB2_LABELS = {
    "O",
    "B-PER",
    "I-PER",
    "B-LOC",
    "I-LOC",
    "B-ORG",
    "I-ORG",
    "B-MISC",
    "I-MISC",
}

EXPECTED_COUNTS = {
    "train": (8323, 264715),
    "testa": (1915, 52923),
    "testb": (1517, 51533),
}


@pytest.fixture(scope="module")
def loaded():
    return {subset: load_conll2002(subset) for subset in EXPECTED_COUNTS}


@pytest.mark.parametrize("subset", sorted(EXPECTED_COUNTS))
def test_counts_and_labels(loaded, subset):
    data = loaded[subset]
    assert isinstance(data, Bunch)
    assert data.subset == subset
    assert data.language == "esp"
    n_sentences, n_tokens = EXPECTED_COUNTS[subset]
    assert len(data.sentences) == len(data.tags) == n_sentences
    assert sum(len(s) for s in data.sentences) == n_tokens
    assert sum(len(t) for t in data.tags) == n_tokens
    for tokens, labels in zip(data.sentences, data.tags):
        assert len(tokens) == len(labels) > 0
        assert all(isinstance(tok, str) and tok and " " not in tok for tok in tokens)
    assert {label for labels in data.tags for label in labels} == IOB2_LABELS


def test_descr_has_attribution(loaded):
    descr = loaded["train"].DESCR
    assert "CoNLL-2002" in descr
    assert "Tjong Kim Sang" in descr
    assert "EFE" in descr
    assert "NLTK" in descr


def test_first_sentences():
    data = load_conll2002("train", n_sentences=2)
    assert data.sentences[0] == [
        "Melbourne",
        "(",
        "Australia",
        ")",
        ",",
        "25",
        "may",
        "(",
        "EFE",
        ")",
        ".",
    ]
    assert data.tags[0] == [
        "B-LOC",
        "O",
        "B-LOC",
        "O",
        "O",
        "O",
        "O",
        "O",
        "B-ORG",
        "O",
        "O",
    ]
    assert data.sentences[1] == ["-"]
    assert data.tags[1] == ["O"]


def test_return_X_y(loaded):
    sentences, tags = load_conll2002("testb", return_X_y=True)
    assert sentences == loaded["testb"].sentences
    assert tags == loaded["testb"].tags


@pytest.mark.parametrize("n_sentences", [1, 7, 1517, 10**6])
def test_n_sentences(loaded, n_sentences):
    full = loaded["testb"]
    sentences, tags = load_conll2002("testb", return_X_y=True, n_sentences=n_sentences)
    expected = min(n_sentences, len(full.sentences))
    assert len(sentences) == len(tags) == expected
    assert sentences == full.sentences[:expected]
    assert tags == full.tags[:expected]


@pytest.mark.parametrize("subset", ["test", "dev", "TRAIN", "", None, 1])
def test_bad_subset(subset):
    with pytest.raises(ValueError, match="subset must be one of"):
        load_conll2002(subset)


@pytest.mark.parametrize("language", ["ned", "spa", None])
def test_bad_language(language):
    with pytest.raises(ValueError, match="language must be one of"):
        load_conll2002("train", language=language)


@pytest.mark.parametrize(
    "n_sentences, error",
    [
        (0, ValueError),
        (-3, ValueError),
        (2.5, TypeError),
        ("10", TypeError),
        (True, TypeError),
    ],
)
def test_bad_n_sentences(n_sentences, error):
    with pytest.raises(error, match="n_sentences"):
        load_conll2002("train", n_sentences=n_sentences)


def test_parse_conll_edge_cases():
    lines = [
        "-DOCSTART- -X- O\n",
        "\n",
        "Juan B-PER\r\n",
        "vive O\n",
        "\n",
        "\n",
        "-DOCSTART- O\n",
        "Madrid NC B-LOC\n",  # an extra middle column is ignored
        "-DOCSTART- O\n",  # a document break also ends the sentence
        "Hola O",  # no trailing newline, no trailing blank line
    ]
    sentences, tags = _parse_conll(lines, "toy")
    assert sentences == [["Juan", "vive"], ["Madrid"], ["Hola"]]
    assert tags == [["B-PER", "O"], ["B-LOC"], ["O"]]
    assert _parse_conll(lines, "toy", n_sentences=2) == (sentences[:2], tags[:2])

    with pytest.raises(ValueError, match="Malformed line 2 in toy"):
        _parse_conll(["a O\n", "lonely\n"], "toy")


@pytest.mark.skipif(
    not SHARED_DIR.is_dir(), reason="shared copy of the data not available"
)
@pytest.mark.parametrize("subset", sorted(EXPECTED_COUNTS))
def test_matches_shared_copy(loaded, subset):
    path = SHARED_DIR / f"esp.{subset}"
    with open(path, encoding="utf-8") as f:
        sentences, tags = _parse_conll(f, path.name)
    assert loaded[subset].sentences == sentences
    assert loaded[subset].tags == tags

    # Independent, naive parse of the raw text: same first and last sentences.
    blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    assert len(blocks) == EXPECTED_COUNTS[subset][0]
    for index in (0, -1):
        pairs = [line.split(" ") for line in blocks[index].strip("\n").split("\n")]
        assert loaded[subset].sentences[index] == [tok for tok, _ in pairs]
        assert loaded[subset].tags[index] == [lab for _, lab in pairs]


def test_documents_group_sentences_by_article():
    data = load_conll2002("train", n_sentences=200)
    docs = data.documents
    assert docs.shape == (200,) and docs[0] == 0
    assert np.all(np.diff(docs) >= 0) and np.all(np.diff(docs) <= 1)
    starts = np.flatnonzero(np.diff(docs)) + 1
    assert len(starts) >= 4
    for i in starts:  # an article starts with its "( EFE )" dateline
        assert "EFE" in data.sentences[i][:15]


# --- the data switch of the docs and the examples: SKLEARN_CRF_MAX_SENTENCES ---


def test_max_sentences_environment_caps_every_subset(monkeypatch):
    full = load_conll2002("testb", n_sentences=20)
    monkeypatch.setenv("SKLEARN_CRF_MAX_SENTENCES", "7")
    for subset in EXPECTED_COUNTS:
        data = load_conll2002(subset)
        assert len(data.sentences) == len(data.tags) == len(data.documents) == 7
        assert "SKLEARN_CRF_MAX_SENTENCES" in data.DESCR
    assert load_conll2002("testb", return_X_y=True) == (full.sentences[:7], full.tags[:7])
    # the smaller of the cap and n_sentences
    assert len(load_conll2002("testb", n_sentences=3).sentences) == 3
    assert len(load_conll2002("testb", n_sentences=50).sentences) == 7


@pytest.mark.parametrize("value", ["", "  "])
def test_max_sentences_environment_empty_means_no_cap(monkeypatch, value):
    monkeypatch.setenv("SKLEARN_CRF_MAX_SENTENCES", value)
    data = load_conll2002("testb")
    assert len(data.sentences) == EXPECTED_COUNTS["testb"][0]
    assert "SKLEARN_CRF_MAX_SENTENCES" not in data.DESCR


@pytest.mark.parametrize("value", ["0", "-5", "ten", "2.5"])
def test_max_sentences_environment_bad_value(monkeypatch, value):
    monkeypatch.setenv("SKLEARN_CRF_MAX_SENTENCES", value)
    with pytest.raises(ValueError, match=f"SKLEARN_CRF_MAX_SENTENCES must be empty or a positive integer, got '{value}'"):
        load_conll2002("testb")
