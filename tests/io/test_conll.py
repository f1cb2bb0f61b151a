"""Tests for the CoNLL column-file reader and writer (sklearn_crf._io.conll)."""

import gzip
import os
import io
import random

import numpy as np
import pytest

from sklearn_crf import CRFTagger, SequenceFeaturizer, read_conll, write_conll
from sklearn_crf.datasets import load_conll2002
from sklearn_crf._io.conll import iter_conll

THREE_COLUMNS = """\
-DOCSTART- -X- O

El DA O
Abogado NC B-PER
General AQ I-PER

Madrid NC B-LOC

-DOCSTART- -X- O
-DOCSTART- -X- O

Hola I O
"""


def test_read_columns_tags_and_documents():
    data = read_conll(io.StringIO(THREE_COLUMNS))
    assert data.sentences == [
        [("El", "DA"), ("Abogado", "NC"), ("General", "AQ")],
        [("Madrid", "NC")],
        [("Hola", "I")],
    ]
    assert data.tags == [["O", "B-PER", "I-PER"], ["B-LOC"], ["O"]]
    # two consecutive -DOCSTART- lines open one document, not two
    np.testing.assert_array_equal(data.documents, [0, 0, 1])
    assert data.documents.dtype == np.int64
    assert data.n_columns == 3


def test_sentences_before_the_first_docstart_are_document_zero():
    text = "a O\n\nb O\n-DOCSTART- O\nc O\n\n-DOCSTART- O\n\nd O\ne O\n"
    data = read_conll(io.StringIO(text))
    assert data.sentences == [[("a",)], [("b",)], [("c",)], [("d",), ("e",)]]
    np.testing.assert_array_equal(data.documents, [0, 0, 1, 2])


def test_label_column_none_and_in_the_middle():
    text = "Juan B-PER NP\nvive O VM\n"
    unlabeled = read_conll(io.StringIO(text), label_column=None)
    assert unlabeled.tags is None
    assert unlabeled.sentences == [[("Juan", "B-PER", "NP"), ("vive", "O", "VM")]]
    middle = read_conll(io.StringIO(text), label_column=1)
    assert middle.tags == [["B-PER", "O"]]
    assert middle.sentences == [[("Juan", "NP"), ("vive", "VM")]]
    assert read_conll(io.StringIO(text), label_column=-2).tags == middle.tags


def test_whitespace_tabs_crlf_bom_and_no_final_newline():
    text = "\ufeffJuan\tNP  B-PER\r\nvive VM\tO\r\n \t\r\nya RG O"
    data = read_conll(io.StringIO(text))
    assert data.sentences == [[("Juan", "NP"), ("vive", "VM")], [("ya", "RG")]]
    assert data.tags == [["B-PER", "O"], ["O"]]


def test_explicit_separator_keeps_spaces_in_tokens():
    data = read_conll(io.StringIO("New York\tB-LOC\nis\tO\n"), sep="\t")
    assert data.sentences == [[("New York",), ("is",)]]
    with pytest.raises(ValueError, match=r"<file>, line 1: empty column 1"):
        read_conll(io.StringIO("\tO\n"), sep="\t")


def test_paths_gzip_and_binary_files(tmp_path):
    plain = tmp_path / "train.txt"
    plain.write_text(THREE_COLUMNS, encoding="utf-8")
    compressed = tmp_path / "train.txt.gz"
    compressed.write_bytes(gzip.compress(THREE_COLUMNS.encode()))
    expected = read_conll(io.StringIO(THREE_COLUMNS))
    binary, gz_binary = io.BytesIO(THREE_COLUMNS.encode()), io.BytesIO(compressed.read_bytes())
    for source in (plain, str(plain), compressed, binary, gz_binary):
        data = read_conll(source)
        assert data.sentences == expected.sentences
        assert data.tags == expected.tags
    broken = tmp_path / "broken.gz"
    broken.write_bytes(compressed.read_bytes()[:-12])
    with pytest.raises(ValueError, match="broken.gz: corrupt gzip data"):
        read_conll(broken)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Coruña B-LOC\n".encode("latin-1"))
    assert read_conll(latin, encoding="latin-1").sentences == [[("Coruña",)]]


def test_empty_file():
    data = read_conll(io.StringIO("\n\n"))
    assert data.sentences == [] and data.tags == [] and data.n_columns == 0
    assert data.documents.shape == (0,)


@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("a DT O\nb DT O\n\nc O\n", {}, r"line 4: 2 columns, expected 3 as on line 1: 'c O'"),
        ("a DT O\nb DT O X\n", {}, r"line 2: 4 columns, expected 3 as on line 1"),
        ("a\nb\n", {}, r"line 1: 1 column, expected a token and a label"),
        ("x O\n\na\n", {}, r"line 3: 1 column, expected 2"),
        ("a O\n", {"label_column": 2}, r"line 1: label_column=2 does not name a column"),
        ("a O\n", {"label_column": -2}, r"label_column=-2 does not name a column"),
    ],
)
def test_malformed_files_name_the_file_and_line(tmp_path, text, kwargs, message):
    path = tmp_path / "bad.conll"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as error:
        read_conll(path, **kwargs)
    assert str(error.value).startswith(f"{path}, line ")


def test_bad_encoding_names_the_line(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_bytes(b"a O\n\nb O\nCoru\xf1a B-LOC\n")
    with pytest.raises(ValueError, match=r"line 4: not valid utf-8 text") as error:
        read_conll(path)
    assert str(error.value).startswith(f"{path}, line 4")


def test_missing_file_and_bad_arguments(tmp_path):
    # a missing file is FileNotFoundError, as for every reader of the package
    with pytest.raises(FileNotFoundError, match="nope.conll"):
        read_conll(tmp_path / "nope.conll")
    with pytest.raises(FileNotFoundError, match="nope.conll"):
        next(iter_conll(tmp_path / "nope.conll"))
    with pytest.raises(ValueError, match="label_column must not be 0"):
        read_conll(io.StringIO("a O\n"), label_column=0)
    with pytest.raises(TypeError, match="label_column must be an int or None"):
        read_conll(io.StringIO("a O\n"), label_column="last")
    with pytest.raises(TypeError, match="must be a path .* or a file object"):
        read_conll(42)
    with pytest.raises(ValueError, match="sep must be None or"):
        read_conll(io.StringIO("a O\n"), sep="\n")


def test_write_then_read_round_trip(tmp_path):
    rng = random.Random(0)
    words = ["a", "Bé", "c-d", "1,5", "(", "Z"]
    sentences, tags = [], []
    for _ in range(30):
        n = rng.randint(1, 6)
        sentences.append([(rng.choice(words), rng.choice(["N", "V"])) for _ in range(n)])
        tags.append([rng.choice(["O", "B-X", "I-X"]) for _ in range(n)])
    documents = np.sort(np.array([rng.randint(0, 4) for _ in range(30)]))
    path = tmp_path / "out.conll"
    write_conll(path, sentences, tags, documents=documents)
    data = read_conll(path)
    assert data.sentences == sentences
    assert data.tags == tags
    # documents are renumbered 0, 1, ... in order of appearance
    np.testing.assert_array_equal(data.documents, np.unique(documents, return_inverse=True)[1])
    text = path.read_text(encoding="utf-8")
    assert text.startswith("-DOCSTART- -X- O\n\n")

    unlabeled = io.StringIO()
    write_conll(unlabeled, sentences, sep="\t")
    assert read_conll(io.StringIO(unlabeled.getvalue()), label_column=None, sep="\t").sentences == sentences


def test_write_str_tokens_and_binary_file():
    out = io.BytesIO()
    write_conll(out, [["Coruña", "es"], []], [["B-LOC", "O"], []])
    assert out.getvalue() == "Coruña B-LOC\nes O\n\n".encode()


@pytest.mark.parametrize(
    "sentences, tags, message",
    [
        ([["New York"]], [["B-LOC"]], r"sentence 0, token 0, column 0: 'New York' contains"),
        ([["a", "b"]], [["O"]], r"sentence 0: 2 tokens but 1 labels"),
        ([["a"], ["b"]], [["O"]], r"tags has 1 sequences, sentences has 2"),
        ([[("a", "N"), ("b",)]], None, r"sentence 0, token 1: 1 columns, expected 2"),
        ([["a", ""]], None, r"sentence 0, token 1, column 0: empty value"),
        ([["a"]], [["O\n"]], r"sentence 0, token 0, column 1: 'O\\n' contains"),
        ([["-DOCSTART-"]], None, r"a token cannot be -DOCSTART-"),
    ],
)
def test_write_errors_write_nothing(tmp_path, sentences, tags, message):
    path = tmp_path / "out.conll"
    with pytest.raises(ValueError, match=message):
        write_conll(path, sentences, tags)
    assert not path.exists()


def test_write_type_errors():
    with pytest.raises(TypeError, match=r"sentence 0, token 0: a token must be a str or a tuple"):
        write_conll(io.StringIO(), [[1]])
    with pytest.raises(TypeError, match=r"sentence 0, token 0, column 1: expected a str, got int"):
        write_conll(io.StringIO(), [[("a", 1)]])
    with pytest.raises(TypeError, match="sentence 0 is a str"):
        write_conll(io.StringIO(), ["abc"])


def test_bundled_data_round_trips(tmp_path):
    data = load_conll2002("testa", n_sentences=200)
    path = tmp_path / "testa.conll"
    write_conll(path, data.sentences, data.tags)
    read = read_conll(path)
    assert [[token for (token,) in s] for s in read.sentences] == data.sentences
    assert read.tags == data.tags


def test_pos_column_as_features():
    """The part-of-speech column reaches the model through SequenceFeaturizer(columns=...).

    The bundled CoNLL-2002 copy has no POS column, so the data here is built so
    that the label is a function of the POS tag alone, on words never repeated
    between training and test: only the POS features can tag the test set.
    """
    rng = random.Random(0)

    def corpus(prefix, n):
        lines = []
        for s in range(n):
            for t in range(rng.randint(2, 6)):
                pos = rng.choice(["NP", "VM", "DA"])
                label = "B-PER" if pos == "NP" else "O"
                lines.append(f"{prefix}{s}w{t} {pos} {label}")
            lines.append("")
        return read_conll(io.StringIO("\n".join(lines)))

    train, test = corpus("tr", 60), corpus("te", 30)
    with_pos = SequenceFeaturizer(columns=("postag",))
    X_train, X_test = with_pos.transform(train.sentences), with_pos.transform(test.sentences)
    assert X_train[0][0]["postag"] == train.sentences[0][0][1]
    crf = CRFTagger(max_iter=30).fit(X_train, train.tags)
    assert crf.predict(X_test) == test.tags
    assert any(attribute.startswith("postag:") for attribute in crf.attributes_)

    words_only = SequenceFeaturizer()
    crf_words = CRFTagger(max_iter=30).fit(words_only.transform(train.sentences), train.tags)
    assert crf_words.predict(words_only.transform(test.sentences)) != test.tags


# --- iter_conll: the same file, chunk by chunk -------------------------------------

def read_in_chunks(source, chunk_size, **kwargs):
    from sklearn_crf._io.conll import iter_conll

    chunks = list(iter_conll(source, chunk_size=chunk_size, **kwargs))
    assert all(len(c.sentences) == chunk_size for c in chunks[:-1])
    assert all(len(c.sentences) == len(c.documents) == len(c.lines) for c in chunks)
    return chunks


def assert_chunks_are_read_conll(chunks, data):
    assert [s for c in chunks for s in c.sentences] == data.sentences
    if data.tags is None:
        assert all(c.tags is None for c in chunks)
    else:
        assert [t for c in chunks for t in c.tags] == data.tags
    for name in ("documents", "lines"):
        got = np.concatenate([getattr(c, name) for c in chunks] or [np.zeros(0, np.int64)])
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, getattr(data, name))


@pytest.mark.parametrize("chunk_size", [1, 2, 1000])
@pytest.mark.parametrize("text, kwargs", [
    (THREE_COLUMNS, {}),
    ("\ufeffJuan\tNP  B-PER\r\nvive VM\tO\r\n \t\r\nya RG O", {}),
    ("New York\tB-LOC\nis\tO\n\nya\tO", {"sep": "\t"}),
    ("Juan B-PER NP\nvive O VM\n\n-DOCSTART-\nx O V\n", {"label_column": 1}),
    ("Juan B-PER NP\nvive O VM\n", {"label_column": None}),
    ("\n\n", {}),
])
def test_iter_conll_chunks_are_read_conll(tmp_path, chunk_size, text, kwargs):
    data = read_conll(io.StringIO(text), **kwargs)
    path = tmp_path / "data.conll"
    path.write_bytes(text.encode())
    compressed = tmp_path / "data.conll.gz"
    compressed.write_bytes(gzip.compress(text.encode()))
    for source in (io.StringIO(text), path, str(compressed), io.BytesIO(text.encode()),
                   io.BytesIO(compressed.read_bytes())):
        assert_chunks_are_read_conll(read_in_chunks(source, chunk_size, **kwargs), data)


def test_iter_conll_bundled_data():
    from sklearn_crf.datasets import _conll2002  # the bundled files: CoNLL-2002 format

    path = os.path.join(os.path.dirname(_conll2002.__file__), "data", "esp.testb.gz")
    data = read_conll(path)
    chunks = read_in_chunks(path, 500)
    assert len(chunks) == -(-len(data.sentences) // 500) > 2
    assert_chunks_are_read_conll(chunks, data)


def test_iter_conll_other_encodings(tmp_path):
    text = "Coruña B-LOC\n\nésta O\n"
    for encoding in ("latin-1", "utf-16"):
        path = tmp_path / f"{encoding}.txt"
        path.write_bytes(text.encode(encoding))
        assert_chunks_are_read_conll(read_in_chunks(path, 1, encoding=encoding),
                                     read_conll(path, encoding=encoding))


@pytest.mark.parametrize(
    "text, kwargs",
    [
        ("a DT O\nb DT O\n\nc O\n", {}),
        ("a DT O\nb DT O X\n", {}),
        ("a\nb\n", {}),
        ("x O\n\na\n", {}),
        ("a O\n", {"label_column": 2}),
        ("\tO\n", {"sep": "\t"}),
        (b"a O\n\nb O\nCoru\xf1a B-LOC\n", {}),
    ],
)
def test_iter_conll_errors_are_read_conlls(tmp_path, text, kwargs):
    path = tmp_path / "bad.conll"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as want:
        read_conll(path, **kwargs)
    with pytest.raises(ValueError) as got:
        read_in_chunks(path, 1, **kwargs)
    assert str(got.value) == str(want.value)


def test_iter_conll_bad_sources_and_arguments(tmp_path):
    with pytest.raises(ValueError, match="a directory, not a CoNLL file"):
        next(iter_conll(tmp_path))
    with pytest.raises(ValueError, match="not a regular file"):
        next(iter_conll("/dev/zero"))
    compressed = tmp_path / "broken.gz"
    compressed.write_bytes(gzip.compress(THREE_COLUMNS.encode())[:-12])
    with pytest.raises(ValueError, match="broken.gz: corrupt gzip data"):
        list(iter_conll(compressed))
    with pytest.raises(TypeError, match="must be a path .* or a file object"):
        next(iter_conll(42))
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="chunk_size must be an int >= 1"):
            next(iter_conll(io.StringIO("a O\n"), chunk_size=bad))
    with pytest.raises(ValueError, match="label_column must not be 0"):
        next(iter_conll(io.StringIO("a O\n"), label_column=0))
