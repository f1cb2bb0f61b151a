"""CoNLL column files: one token per line, whitespace-separated columns.

The format of CoNLL-2000/2002/2003, CRF++, CRFsuite and Wapiti data: the token
in the first column, optional columns (part-of-speech tag, chunk tag, ...),
the label in the last column; a blank line ends a sentence and a line whose
first column is ``-DOCSTART-`` starts a document.
"""

import gzip
import io
import os
import stat
import zlib
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.utils import Bunch

from .atomic import atomic_write
from .safe_io import quoted, read_file_bytes

__all__ = ["ConllChunk", "iter_conll", "read_conll", "write_conll"]

DOCSTART = "-DOCSTART-"


class DocStart(NamedTuple):
    """A ``-DOCSTART-`` line of a column file, in :func:`read_conll`'s result.

    Attributes
    ----------
    sentence : int
        Index of the sentence that follows it (the number of sentences
        before it).
    line : int
        Its 1-based line number.
    fields : tuple of str
        Its columns, ``"-DOCSTART-"`` first.
    """

    sentence: int
    line: int
    fields: tuple


class Block(NamedTuple):
    """One unit of a column file, as yielded by :func:`iter_blocks`.

    Attributes
    ----------
    docstart : bool
        True for a ``-DOCSTART-`` line (then ``rows`` holds its columns
        only), False for a sentence.
    line_numbers : list of int
        1-based line number of each row (of the ``-DOCSTART-`` line).
    rows : list of list of str
        The columns of each token line of the sentence.
    """

    docstart: bool
    line_numbers: list
    rows: list


def iter_blocks(lines, split):
    """Split the lines of a column file into sentences and document starts.

    Shared by :func:`read_conll`, the bundled-data loader and the command
    line (which keeps the ``-DOCSTART-`` lines of ``tag``'s input). A blank line
    (only whitespace) ends a sentence; a line whose first column is
    ``-DOCSTART-`` starts a document and also ends a sentence; its other
    columns are ignored.

    Parameters
    ----------
    lines : iterable of str
        Lines, with or without their terminators (``"\\n"``, ``"\\r\\n"``).
    split : callable
        ``split(line) -> list of str``, the columns of a token line.

    Yields
    ------
    block : Block
        Sentences (non-empty) and document starts, in file order.

    Examples
    --------
    >>> from sklearn_crf._io.conll import iter_blocks
    >>> lines = ["-DOCSTART- O", "", "a O", "b O", "", "c O"]
    >>> [(b.docstart, b.line_numbers) for b in iter_blocks(lines, str.split)]
    [(True, [1]), (False, [3, 4]), (False, [6])]
    """
    numbers, rows = [], []
    for line_number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            if rows:
                yield Block(False, numbers, rows)
                numbers, rows = [], []
            continue
        fields = split(line)
        if fields and fields[0] == DOCSTART:
            if rows:
                yield Block(False, numbers, rows)
                numbers, rows = [], []
            yield Block(True, [line_number], [fields])
            continue
        numbers.append(line_number)
        rows.append(fields)
    if rows:
        yield Block(False, numbers, rows)


def _source_name(path_or_file):
    """A name for error messages: the path, the file's name, or a placeholder."""
    if isinstance(path_or_file, (str, os.PathLike)):
        return os.fspath(path_or_file)
    name = getattr(path_or_file, "name", None)
    return name if isinstance(name, str) else "<file>"


def _read_text(path_or_file, source, encoding):
    """The whole text of a path (``.gz`` decompressed) or of an open file."""
    if isinstance(path_or_file, (str, os.PathLike)):
        try:
            data = read_file_bytes(path_or_file, "CoNLL", allow_pipe=True)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise ValueError(f"{source}: cannot read the file ({exc.strerror}).") from None
    elif hasattr(path_or_file, "read"):
        try:
            data = path_or_file.read()
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{source}: the file is not valid {exc.encoding} text ({exc.reason})."
            ) from None
        if isinstance(data, str):
            return data
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(
                f"{source}: read() returned {type(data).__name__}, expected str or bytes."
            )
    else:
        raise TypeError(
            "path_or_file must be a path (str or os.PathLike) or a file object, "
            f"got {type(path_or_file).__name__}."
        )
    data = bytes(data)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{source}: corrupt gzip data ({exc}).") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{source}, line {line}: not valid {encoding} text "
            f"(byte {data[exc.start:exc.start + 1]!r} at offset {exc.start})."
        ) from None


def _check_label_column(label_column):
    if label_column is None:
        return None
    if isinstance(label_column, bool) or not isinstance(label_column, Integral):
        raise TypeError(
            f"label_column must be an int or None, got {type(label_column).__name__}."
        )
    if label_column == 0:
        raise ValueError(
            "label_column must not be 0: the first column is the token "
            "(use -1 for the last column)."
        )
    return int(label_column)


def read_conll(path_or_file, *, label_column=-1, sep=None, encoding="utf-8"):
    """Read a CoNLL-style column file.

    One token per line: the token first, then any number of columns (e.g.
    part-of-speech and chunk tags) and the label, last by default. A blank
    line ends a sentence; a line whose first column is ``-DOCSTART-`` starts a
    new document (it is not a token). Every token line of the file must have
    the same number of columns. Gzip-compressed data (paths and binary files)
    is decompressed.

    Parameters
    ----------
    path_or_file : str, os.PathLike or file object
        The file's path, or an open file in text or binary mode (e.g.
        ``sys.stdin.buffer`` or :class:`io.StringIO`).

    label_column : int or None, default=-1
        Index of the label column (negative indices count from the end);
        ``None`` for unlabeled input, where every column belongs to the
        tokens. Cannot be 0, the token column.

    sep : str or None, default=None
        Column separator; ``None`` splits on runs of whitespace (spaces and
        tabs), as CoNLL, CRF++ and CRFsuite do. With a separator such as
        ``"\\t"``, tokens may contain spaces, and empty columns are an error.

    encoding : str, default="utf-8"
        Text encoding of a path or binary file. A leading byte-order mark is
        dropped.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With the attributes:

        sentences : list of list of tuple of str
            For each sentence, one tuple per token holding its columns except
            the label, the token first: the input of
            ``SequenceFeaturizer(columns=...)`` (with ``columns=None`` only the
            token is used).
        tags : list of list of str or None
            The label of each token, aligned with ``sentences``; ``None`` when
            ``label_column`` is None.
        documents : ndarray of shape (n_sentences,), dtype int64
            The document of each sentence: 0 until the first ``-DOCSTART-``
            line that follows a sentence, then 1, ... (for ``GroupKFold``).
        n_columns : int
            Number of columns of each line, label included (0 for a file
            without tokens).
        lines : ndarray of shape (n_sentences,), dtype int64
            The 1-based line number of the first token of each sentence (the
            tokens of a sentence are on consecutive lines): for messages
            that name the file and line.
        docstarts : list of DocStart
            The ``-DOCSTART-`` lines, in file order: each with the index of
            the sentence it precedes (``n_sentences`` at the end of the
            file), its line number and its columns, so that a program can
            write them back where they were.

    Raises
    ------
    FileNotFoundError
        When the path does not exist (as every reader of the package).
    ValueError
        Naming the file and line: a line with a different number of columns
        than the previous ones, no label column, an empty column, text that
        is not valid in ``encoding``, corrupt gzip data; or a file that
        cannot be read.

    See Also
    --------
    write_conll : Write sentences and labels in this format.
    sklearn_crf.datasets.load_conll2002 : The bundled CoNLL-2002 data.

    Examples
    --------
    >>> import io
    >>> from sklearn_crf import read_conll
    >>> text = '''-DOCSTART- -X- O
    ...
    ... El DA O
    ... Abogado NC B-PER
    ... General AQ I-PER
    ...
    ... Madrid NC B-LOC
    ... '''
    >>> data = read_conll(io.StringIO(text))
    >>> data.sentences
    [[('El', 'DA'), ('Abogado', 'NC'), ('General', 'AQ')], [('Madrid', 'NC')]]
    >>> data.tags
    [['O', 'B-PER', 'I-PER'], ['B-LOC']]
    >>> data.documents, data.n_columns, data.lines
    (array([0, 0]), 3, array([3, 7]))
    >>> data.docstarts
    [DocStart(sentence=0, line=1, fields=('-DOCSTART-', '-X-', 'O'))]

    The part-of-speech column as features, as in the sklearn-crfsuite tutorial:

    >>> from sklearn_crf import SequenceFeaturizer
    >>> X = SequenceFeaturizer(columns=("postag",)).transform(data.sentences)
    >>> X[0][1]["postag"], X[0][1]["-1:postag"]
    ('NC', 'DA')

    Errors name the file and the line:

    >>> read_conll(io.StringIO("a DT O\\nb O\\n"))
    Traceback (most recent call last):
    ...
    ValueError: <file>, line 2: 2 columns, expected 3 as on line 1: 'b O'
    """
    label_column = _check_label_column(label_column)
    _check_sep(sep)
    source = _source_name(path_or_file)
    text = _read_text(path_or_file, source, encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    parser = _SentenceParser(source, label_column, sep)
    sentences, tags, documents, lines = [], [], [], []
    for tokens, labels, document, line in parser.sentences(text.split("\n")):
        sentences.append(tokens)
        tags.append(labels)
        documents.append(document)
        lines.append(line)
    return Bunch(
        sentences=sentences,
        tags=None if label_column is None else tags,
        documents=np.array(documents, dtype=np.int64),
        n_columns=parser.n_columns or 0,
        lines=np.array(lines, dtype=np.int64),
        docstarts=parser.docstarts,
    )


def _check_sep(sep):
    if sep is not None and (not isinstance(sep, str) or not sep or sep.strip("\r\n") != sep):
        raise ValueError(f"sep must be None or a non-empty str without newlines, got {sep!r}.")


class _SentenceParser:
    """The rules of a column file's sentences, shared by :func:`read_conll` and
    :func:`iter_conll`: :meth:`sentences` yields ``(tokens, labels, document,
    line)`` per sentence of the lines it is given and records the
    ``-DOCSTART-`` lines in ``docstarts``; ``n_columns`` is set by the first
    token line. Errors name ``source`` and the line."""

    def __init__(self, source, label_column, sep):
        self.source = source
        self.label_column = label_column
        self.sep = sep
        self.n_columns = None
        self.docstarts = []

    def sentences(self, lines):
        source, label_column, sep = self.source, self.label_column, self.sep
        split = str.split if sep is None else (lambda line: line.split(sep))
        n_columns = first_line = None
        document, document_used = 0, False
        label_index = None
        n_sentences = 0
        for block in iter_blocks(lines, split):
            if block.docstart:
                self.docstarts.append(
                    DocStart(n_sentences, block.line_numbers[0], tuple(block.rows[0]))
                )
                if document_used:
                    document += 1
                    document_used = False
                continue
            if n_columns is None:
                n_columns, first_line = len(block.rows[0]), block.line_numbers[0]
                self.n_columns = n_columns
                if label_column is not None:
                    if n_columns < 2:
                        raise ValueError(
                            f"{source}, line {first_line}: 1 column, expected a token "
                            "and a label (read unlabeled files with label_column=None)."
                        )
                    if (not -n_columns <= label_column < n_columns
                            or label_column % n_columns == 0):
                        raise ValueError(
                            f"{source}, line {first_line}: label_column={label_column} "
                            f"does not name a column after the token of {n_columns} columns."
                        )
                    label_index = label_column % n_columns
            tokens, labels = [], []
            for line_number, fields in zip(block.line_numbers, block.rows):
                if len(fields) != n_columns:
                    raise ValueError(
                        f"{source}, line {line_number}: {len(fields)} column"
                        f"{'s' if len(fields) != 1 else ''}, expected {n_columns} as on "
                        f"line {first_line}: "
                        f"{quoted(sep.join(fields) if sep else ' '.join(fields))}"
                    )
                if sep is not None and "" in fields:
                    raise ValueError(
                        f"{source}, line {line_number}: empty column {fields.index('') + 1}."
                    )
                if label_index is None:
                    tokens.append(tuple(fields))
                else:
                    labels.append(fields[label_index])
                    tokens.append(tuple(fields[:label_index] + fields[label_index + 1 :]))
            yield tokens, labels, document, block.line_numbers[0]
            n_sentences += 1
            document_used = True


class ConllChunk(NamedTuple):
    """A chunk of the sentences of a column file, as yielded by :func:`iter_conll`.

    Attributes
    ----------
    sentences : list of list of tuple of str
        As :func:`read_conll`'s ``sentences``.
    tags : list of list of str or None
        As :func:`read_conll`'s ``tags`` (None for ``label_column=None``).
    documents : ndarray of shape (n_sentences,), dtype int64
        The document of each sentence, counted over the whole file.
    lines : ndarray of shape (n_sentences,), dtype int64
        The line number of each sentence's first token.

    Examples
    --------
    >>> import io
    >>> from sklearn_crf._io.conll import iter_conll
    >>> chunk = next(iter_conll(io.StringIO("Madrid B-LOC\\n")))
    >>> chunk.sentences, chunk.tags, chunk.documents, chunk.lines
    ([[('Madrid',)]], [['B-LOC']], array([0]), array([1]))
    """

    sentences: list
    tags: list | None
    documents: np.ndarray
    lines: np.ndarray


def iter_conll(path_or_file, *, chunk_size=1000, label_column=-1, sep=None,
               encoding="utf-8"):
    """Read a column file chunk by chunk, for files larger than memory.

    The file is read line by line (gzip-compressed data decompressed on the
    way), so memory holds one chunk of sentences, whatever the file's size.
    The rules and the errors (naming the file and the line) are those of
    :func:`read_conll`, and the chunks, one after another, are its result:
    ``sentences``, ``tags``, ``documents`` and ``lines``. A malformed line
    raises when its chunk is read (the chunks before it have been yielded).

    Parameters
    ----------
    path_or_file : str, os.PathLike or file object
        The file's path (a regular file or a pipe), or an open file in text
        or binary mode. A missing path raises FileNotFoundError.
    chunk_size : int, default=1000
        Sentences per chunk (the last chunk may have fewer).
    label_column : int or None, default=-1
        As in :func:`read_conll`.
    sep : str or None, default=None
        As in :func:`read_conll`.
    encoding : str, default="utf-8"
        As in :func:`read_conll`.

    Yields
    ------
    chunk : ConllChunk
        ``chunk_size`` sentences (fewer in the last chunk) with their tags,
        documents and line numbers.

    See Also
    --------
    read_conll : The whole file at once.
    sklearn_crf.encode_stream : Encode the chunks into a corpus store.

    Examples
    --------
    >>> import io
    >>> from sklearn_crf._io.conll import iter_conll
    >>> text = "El O\\nAbogado B-PER\\n\\nMadrid B-LOC\\n\\nvive O\\n"
    >>> for chunk in iter_conll(io.StringIO(text), chunk_size=2):
    ...     print(chunk.tags, chunk.lines)
    [['O', 'B-PER'], ['B-LOC']] [1 4]
    [['O']] [6]
    """
    label_column = _check_label_column(label_column)
    _check_sep(sep)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an int >= 1, got {chunk_size!r}.")
    source = _source_name(path_or_file)
    parser = _SentenceParser(source, label_column, sep)
    with _open_lines(path_or_file, source, encoding) as lines:
        chunk = []
        for sentence in parser.sentences(lines):
            chunk.append(sentence)
            if len(chunk) == chunk_size:
                yield _chunk(chunk, label_column)
                chunk = []
        if chunk:
            yield _chunk(chunk, label_column)


def _chunk(sentences, label_column):
    tokens, labels, documents, lines = zip(*sentences)
    return ConllChunk(
        sentences=list(tokens),
        tags=None if label_column is None else list(labels),
        documents=np.array(documents, dtype=np.int64),
        lines=np.array(lines, dtype=np.int64),
    )


class _Prefixed(io.RawIOBase):
    """A binary stream: ``prefix``, then the rest of ``raw`` (after a peek)."""

    def __init__(self, prefix, raw):
        self.prefix = prefix
        self.raw = raw

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        data = self.raw.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class _open_lines:
    """The lines of a path or file object, decoded one by one (a context
    manager that closes what it opened). For an encoding in which ``"\\n"`` is
    the byte ``b"\\n"`` (UTF-8, Latin-1, ...) a decoding error names the line
    and the byte offset, as :func:`read_conll`'s."""

    def __init__(self, path_or_file, source, encoding):
        self.source = source
        self.encoding = encoding
        self.opened = None
        if isinstance(path_or_file, (str, os.PathLike)):
            name = os.fsdecode(path_or_file)
            if os.path.isdir(path_or_file):
                raise ValueError(f"{name}: a directory, not a CoNLL file")
            try:
                self.opened = binary = open(path_or_file, "rb")
            except FileNotFoundError:
                raise
            except OSError as exc:
                raise ValueError(f"{source}: cannot read the file ({exc.strerror}).") from None
            mode = os.fstat(binary.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                binary.close()
                raise ValueError(f"{name}: not a regular file, cannot be a CoNLL file")
        elif hasattr(path_or_file, "read"):
            binary = path_or_file
        else:
            raise TypeError(
                "path_or_file must be a path (str or os.PathLike) or a file object, "
                f"got {type(path_or_file).__name__}."
            )
        self.binary = binary

    def __enter__(self):
        try:
            first = self.binary.read(2)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{self.source}: the file is not valid {exc.encoding} text ({exc.reason})."
            ) from None
        if isinstance(first, str):  # a text file object: its own decoding
            return self._text_lines(first, self.binary)
        if not isinstance(first, (bytes, bytearray)):
            raise TypeError(
                f"{self.source}: read() returned {type(first).__name__}, expected str or bytes."
            )
        stream = io.BufferedReader(_Prefixed(bytes(first), self.binary))
        if first == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        if "\n".encode(self.encoding) == b"\n":
            return self._byte_lines(stream)
        return self._text_lines("", io.TextIOWrapper(stream, encoding=self.encoding,
                                                      newline="\n"))

    def __exit__(self, *exc):
        if self.opened is not None:
            self.opened.close()

    def _text_lines(self, first, text):
        """Lines of text read in blocks, split on ``"\\n"`` as :func:`read_conll`
        splits the whole text (the last line may be empty)."""
        pending = first
        line_number = 0
        try:
            while True:
                block = text.read(1 << 16)
                if not block:
                    break
                if not isinstance(block, str):
                    raise TypeError(
                        f"{self.source}: read() returned {type(block).__name__} after str."
                    )
                parts = (pending + block).split("\n")
                pending = parts.pop()
                for line in parts:
                    line_number += 1
                    yield line[1:] if line_number == 1 and line.startswith("\ufeff") else line
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{self.source}, after line {line_number}: not valid {exc.encoding} "
                f"text ({exc.reason})."
            ) from None
        line_number += 1
        yield pending[1:] if line_number == 1 and pending.startswith("\ufeff") else pending

    def _byte_lines(self, stream):
        offset = 0
        line_number = 0
        try:
            for raw in stream:
                line_number += 1
                try:
                    line = raw.decode(self.encoding)
                except UnicodeDecodeError as exc:
                    raise ValueError(
                        f"{self.source}, line {line_number}: not valid {self.encoding} text "
                        f"(byte {raw[exc.start:exc.start + 1]!r} at offset "
                        f"{offset + exc.start})."
                    ) from None
                if line_number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                offset += len(raw)
                yield line
        except (OSError, EOFError, zlib.error) as exc:
            if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
                raise ValueError(f"{self.source}: corrupt gzip data ({exc}).") from None
            raise ValueError(f"{self.source}: cannot read the file ({exc}).") from None


def _check_cell(value, where, sep):
    if not isinstance(value, str):
        raise TypeError(f"{where}: expected a str, got {type(value).__name__}.")
    if not value:
        raise ValueError(f"{where}: empty value.")
    bad = (sep in value) if sep is not None else any(c.isspace() for c in value)
    if bad or "\n" in value or "\r" in value:
        raise ValueError(
            f"{where}: {value!r} contains the column separator or a newline."
        )
    if value == DOCSTART and where.endswith("column 0"):
        raise ValueError(f"{where}: a token cannot be {DOCSTART}.")


def _format_lines(sentences, tags, documents, sep):
    """Yield the lines (with newlines) of a column file."""
    joiner = " " if sep is None else sep
    if tags is not None and len(tags) != len(sentences):
        raise ValueError(
            f"tags has {len(tags)} sequences, sentences has {len(sentences)}."
        )
    if documents is not None:
        documents = list(documents)
        if len(documents) != len(sentences):
            raise ValueError(
                f"documents has {len(documents)} entries, sentences has {len(sentences)}."
            )
    n_columns = None
    previous_document = object()
    for s, sentence in enumerate(sentences):
        if isinstance(sentence, (str, bytes)):
            raise TypeError(f"sentence {s} is a str; expected a list of tokens.")
        sentence = list(sentence)
        labels = None if tags is None else list(tags[s])
        if labels is not None and len(labels) != len(sentence):
            raise ValueError(
                f"sentence {s}: {len(sentence)} tokens but {len(labels)} labels."
            )
        rows = []
        for t, token in enumerate(sentence):
            if isinstance(token, str):
                row = [token]
            elif isinstance(token, (tuple, list)):
                row = list(token)
            else:
                raise TypeError(
                    f"sentence {s}, token {t}: a token must be a str or a tuple of "
                    f"str, got {type(token).__name__}."
                )
            if labels is not None:
                row.append(labels[t])
            for j, value in enumerate(row):
                _check_cell(value, f"sentence {s}, token {t}, column {j}", sep)
            if n_columns is None:
                n_columns = len(row)
            elif len(row) != n_columns:
                raise ValueError(
                    f"sentence {s}, token {t}: {len(row)} columns, expected {n_columns}."
                )
            rows.append(joiner.join(row) + "\n")
        if not rows:
            continue  # an empty sentence cannot be written (a blank line ends one)
        if documents is not None and documents[s] != previous_document:
            previous_document = documents[s]
            filler = [DOCSTART] + ["-X-"] * (n_columns - 2) + (["O"] if n_columns > 1 else [])
            if labels is None and n_columns > 1:
                filler[-1] = "-X-"
            yield joiner.join(filler) + "\n\n"
        yield from rows
        yield "\n"


def write_conll(path_or_file, sentences, tags=None, *, documents=None, sep=None, encoding="utf-8"):
    """Write sentences (and labels) as a CoNLL-style column file.

    Each token on its own line, its columns separated by ``sep`` (a space by
    default), the label last; a blank line after each sentence.
    :func:`read_conll` reads the file back.

    Parameters
    ----------
    path_or_file : str, os.PathLike or file object
        Where to write: a path or an open text file (e.g. ``sys.stdout``).
        A path is replaced only once the whole text is written (through a
        temporary file in its folder): a failure, an interrupt included,
        leaves an existing file as it was.

    sentences : list of list of (str or tuple of str)
        The tokens; a token is a str or a tuple of columns (the token first,
        as :func:`read_conll` returns them). All lines must end up with the
        same number of columns. Empty sentences are skipped.

    tags : list of list of str, default=None
        A label per token, written as the last column; ``None`` writes no
        label column.

    documents : array-like of shape (n_sentences,), default=None
        Document of each sentence: a ``-DOCSTART-`` line (padded with
        ``-X-`` columns and an ``O`` label, as in CoNLL-2003) and a blank line
        are written before the first sentence and at every change of value.

    sep : str or None, default=None
        Column separator; ``None`` writes a single space.

    encoding : str, default="utf-8"
        Encoding of a file written to a path.

    Raises
    ------
    ValueError, TypeError
        Naming the sentence, token and column: a value that is not a str, is
        empty or contains the separator or a newline; a different number of
        columns than the first token; lengths that do not match. Nothing is
        written to a path in that case.

    See Also
    --------
    read_conll : Read such a file.

    Examples
    --------
    >>> import io
    >>> from sklearn_crf import read_conll, write_conll
    >>> out = io.StringIO()
    >>> write_conll(out, [[("Juan", "NP"), ("vive", "VM")]], [["B-PER", "O"]])
    >>> print(out.getvalue(), end="")
    Juan NP B-PER
    vive VM O
    <BLANKLINE>
    >>> read_conll(io.StringIO(out.getvalue())).tags
    [['B-PER', 'O']]
    """
    if sep is not None and (not isinstance(sep, str) or not sep or sep.strip("\r\n") != sep):
        raise ValueError(f"sep must be None or a non-empty str without newlines, got {sep!r}.")
    if isinstance(sentences, (str, bytes)) or not hasattr(sentences, "__len__"):
        raise TypeError("sentences must be a list of sentences (lists of tokens).")
    # Format everything first, so that bad input leaves no half-written file.
    text = "".join(_format_lines(sentences, tags, documents, sep))
    if isinstance(path_or_file, (str, os.PathLike)):
        with atomic_write(path_or_file, "w", encoding=encoding, newline="\n") as f:
            f.write(text)
    elif hasattr(path_or_file, "write"):
        if isinstance(path_or_file, (io.RawIOBase, io.BufferedIOBase)):
            path_or_file.write(text.encode(encoding))
        else:
            path_or_file.write(text)
    else:
        raise TypeError(
            "path_or_file must be a path (str or os.PathLike) or a file object, "
            f"got {type(path_or_file).__name__}."
        )
