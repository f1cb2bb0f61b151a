"""CRFsuite model files in and out, and the one builder of an imported CRFTagger.

The file layout is CRFsuite's ``crf1d`` model (chokkan/crfsuite,
``lib/crf/src/crf1d_model.c``): a 48-byte header (``lCRF``, ``FOMC``, version
100, counts and offsets), a ``FEAT`` chunk of 20-byte features (type, source,
destination as uint32, weight as float64), two CQDB string databases (labels,
attributes; ``lib/cqdb/src/cqdb.c``, hashed with lookup3's ``hashlittle``), and
the ``LFRF`` / ``AFRF`` chunks that list, for each label and each attribute,
the ids of its transition and state features. Every integer is little-endian.

Model files are untrusted input: every offset and count is checked against the
bytes that hold it before anything is read or allocated, and any inconsistency
is a ``ValueError`` that names the file and what is wrong.
"""

import os
import struct
from typing import NamedTuple

import numpy as np

from .atomic import write_bytes
from .safe_io import check_dense_size, check_fitted_model, read_file_bytes
from .._model.weights import TaggerWeights
from .._tagger import CRFTagger

__all__ = ["load_crfsuite", "save_crfsuite"]

#: the first four bytes of a CRFsuite model file
MAGIC = b"lCRF"
_MODEL_TYPE = b"FOMC"
_VERSION = 100
_HEADER = struct.Struct("<4sI4s9I")  # 48 bytes
_CHUNK = struct.Struct("<4sII")  # chunk id, size, number of items
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
_FT_STATE, _FT_TRANS = 0, 1
_CQDB_HEADER = struct.Struct("<4s5I")  # "CQDB", size, flag, byteorder, bwd_size, bwd_offset
_CQDB_BYTEORDER = 0x62445371
_CQDB_TABLES = 256
_CQDB_DATA = _CQDB_HEADER.size + 8 * _CQDB_TABLES  # offset of the first record


class CRFsuiteModel(NamedTuple):
    """The content of a CRFsuite model file, in the file's own ids.

    ``state_attr`` / ``state_label`` index ``attributes`` / ``labels``;
    ``trans_from`` / ``trans_to`` index ``labels``. Integer arrays are int64,
    weights float64.
    """

    labels: list
    attributes: list
    state_attr: np.ndarray
    state_label: np.ndarray
    state_weight: np.ndarray
    trans_from: np.ndarray
    trans_to: np.ndarray
    trans_weight: np.ndarray


# --------------------------------------------------------------------------
# lookup3's hashlittle (Bob Jenkins), vectorized over keys


def _rot(x, k):
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def _hashlittle(keys):
    """lookup3 ``hashlittle(key, len(key), 0)`` of each bytes key, (n,) uint32.

    Keys must be non-empty (CQDB keys include their terminating NUL).
    """
    n = len(keys)
    out = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return out
    lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=n)
    blocks = (lengths + 11) // 12
    for nb in np.unique(blocks).tolist():
        rows = np.flatnonzero(blocks == nb)
        lens = lengths[rows]
        flat = np.frombuffer(b"".join(keys[i] for i in rows.tolist()), dtype=np.uint8)
        starts = np.zeros(len(rows), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        buf = np.zeros((len(rows), 12 * nb), dtype=np.uint8)
        row = np.repeat(np.arange(len(rows)), lens)
        col = np.arange(len(flat)) - np.repeat(starts, lens)
        buf[row, col] = flat
        words = buf.view("<u4").astype(np.uint32).reshape(len(rows), nb, 3)
        a = (np.uint32(0xDEADBEEF) + lens.astype(np.uint32)).astype(np.uint32)
        b = a.copy()
        c = a.copy()
        for j in range(nb):
            a += words[:, j, 0]
            b += words[:, j, 1]
            c += words[:, j, 2]
            if j < nb - 1:  # mix(a, b, c)
                a -= c; a ^= _rot(c, 4); c += b  # noqa: E702
                b -= a; b ^= _rot(a, 6); a += c  # noqa: E702
                c -= b; c ^= _rot(b, 8); b += a  # noqa: E702
                a -= c; a ^= _rot(c, 16); c += b  # noqa: E702
                b -= a; b ^= _rot(a, 19); a += c  # noqa: E702
                c -= b; c ^= _rot(b, 4); b += a  # noqa: E702
        # final(a, b, c); the last block is zero-padded, as hashlittle's switch
        c ^= b; c -= _rot(b, 14)  # noqa: E702
        a ^= c; a -= _rot(c, 11)  # noqa: E702
        b ^= a; b -= _rot(a, 25)  # noqa: E702
        c ^= b; c -= _rot(b, 16)  # noqa: E702
        a ^= c; a -= _rot(c, 4)  # noqa: E702
        b ^= a; b -= _rot(a, 14)  # noqa: E702
        c ^= b; c -= _rot(b, 24)  # noqa: E702
        out[rows] = c
    return out


# --------------------------------------------------------------------------
# reading


class _Reader:
    """Bounds-checked little-endian reads from the bytes of one file."""

    def __init__(self, data, name):
        self.data = data
        self.size = len(data)
        self.name = name
        self.u8 = np.frombuffer(data, dtype=np.uint8)

    def fail(self, what):
        raise ValueError(f"{self.name}: not a valid CRFsuite model file: {what}")

    def need(self, offset, n, what):
        """Check that bytes [offset, offset + n) are inside the file."""
        if offset < 0 or n < 0 or offset + n > self.size:
            self.fail(
                f"{what} at offset {offset} needs {n} bytes but the file has "
                f"{self.size} (truncated, or an offset outside the file)"
            )

    def unpack(self, fmt, offset, what):
        self.need(offset, fmt.size, what)
        return fmt.unpack_from(self.data, offset)

    def u32_at(self, offsets):
        """uint32 at each of the (already checked) byte offsets, as int64."""
        u8 = self.u8
        return (
            u8[offsets].astype(np.int64)
            | (u8[offsets + 1].astype(np.int64) << 8)
            | (u8[offsets + 2].astype(np.int64) << 16)
            | (u8[offsets + 3].astype(np.int64) << 24)
        )

    def chunk(self, offset, chunk_id, what):
        """(size, num) of the chunk at offset, checked to lie in the file."""
        cid, size, num = self.unpack(_CHUNK, offset, what)
        if cid != chunk_id:
            self.fail(f"{what} at offset {offset} starts with {cid!r}, expected {chunk_id!r}")
        if size < _CHUNK.size:
            self.fail(f"{what} at offset {offset} has size {size}, less than its header")
        self.need(offset, size, what)
        return size, num


def _parse_crfsuite(data, name):
    """The :class:`CRFsuiteModel` in the bytes of a model file; ValueError if invalid."""
    r = _Reader(data, name)
    if r.size < _HEADER.size:
        r.fail(f"{r.size} bytes, shorter than the {_HEADER.size}-byte header")
    (magic, size, mtype, version, _num_features, n_labels, n_attrs, off_features,
     off_labels, off_attrs, off_labelrefs, off_attrrefs) = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        r.fail(f"bad magic number {magic!r} (expected {MAGIC!r})")
    if mtype != _MODEL_TYPE:
        r.fail(f"model type {mtype!r} is not {_MODEL_TYPE!r} (a linear-chain CRF)")
    if version != _VERSION:
        r.fail(f"format version {version}, expected {_VERSION}")
    if size != r.size:
        r.fail(f"the header says the file has {size} bytes, it has {r.size} "
               "(truncated or damaged)")
    if n_labels == 0:
        r.fail("the model has no labels")

    # features
    fsize, n_features = r.chunk(off_features, b"FEAT", "the feature chunk")
    if n_features > (fsize - _CHUNK.size) // _FEATURE.itemsize:
        r.fail(f"{n_features} features do not fit in a feature chunk of {fsize} bytes")
    features = np.frombuffer(data, dtype=_FEATURE, count=n_features,
                             offset=off_features + _CHUNK.size)

    check_dense_size(n_attrs, n_labels, r.size, r.fail)
    labels = _read_cqdb(r, off_labels, n_labels, "label")
    attributes = _read_cqdb(r, off_attrs, n_attrs, "attribute")

    trans_owner, trans_fid = _read_refs(r, off_labelrefs, b"LFRF", n_labels, n_features, "label")
    state_owner, state_fid = _read_refs(r, off_attrrefs, b"AFRF", n_attrs, n_features, "attribute")

    out = {}
    for kind, owner, fid, ftype, sources in (
        ("state", state_owner, state_fid, _FT_STATE, attributes),
        ("transition", trans_owner, trans_fid, _FT_TRANS, labels),
    ):
        f = features[fid]
        bad = np.flatnonzero(f["type"] != ftype)
        if len(bad):
            r.fail(f"feature {fid[bad[0]]} is listed as a {kind} feature but has "
                   f"type {f['type'][bad[0]]}")
        bad = np.flatnonzero(f["src"].astype(np.int64) != owner)
        if len(bad):
            r.fail(f"{kind} feature {fid[bad[0]]} has source {f['src'][bad[0]]} but is "
                   f"listed under {owner[bad[0]]}")
        dst = f["dst"].astype(np.int64)
        bad = np.flatnonzero(dst >= n_labels)
        if len(bad):
            r.fail(f"{kind} feature {fid[bad[0]]} has label id {dst[bad[0]]}, the model "
                   f"has {n_labels} labels")
        weight = f["weight"].astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(weight))
        if len(bad):
            r.fail(f"{kind} feature {fid[bad[0]]} has the weight {weight[bad[0]]}")
        keys = owner * n_labels + dst
        uniq, counts = np.unique(keys, return_counts=True)
        if len(uniq) != len(keys):
            k = int(uniq[np.argmax(counts > 1)])
            r.fail(f"the {kind} feature ({sources[k // n_labels]!r}, "
                   f"{labels[k % n_labels]!r}) is listed twice")
        out[kind] = (owner, dst, weight)
    (sa, sl, sw), (tf, tt, tw) = out["state"], out["transition"]
    return CRFsuiteModel(labels, attributes, sa, sl, sw, tf, tt, tw)


def _read_refs(r, offset, chunk_id, n, n_features, what):
    """(owner ids, feature ids) of a feature-reference chunk (LFRF / AFRF).

    The chunk lists ``num >= n`` offsets; the first ``n`` point to a list (a
    uint32 count, then that many uint32 feature ids) inside the chunk, after
    the offset table; lists may not overlap.
    """
    size, num = r.chunk(offset, chunk_id, f"the {what} reference chunk")
    if num < n:
        r.fail(f"the {what} reference chunk lists {num} {what}s, the model has {n}")
    if num > (size - _CHUNK.size) // 4:
        r.fail(f"{num} {what} references do not fit in a chunk of {size} bytes")
    table_end = offset + _CHUNK.size + 4 * num
    end = offset + size
    starts = np.frombuffer(
        r.data, dtype="<u4", count=n, offset=offset + _CHUNK.size
    ).astype(np.int64)
    bad = np.flatnonzero((starts < table_end) | (starts + 4 > end))
    if len(bad):
        r.fail(f"the feature list of {what} {bad[0]} is at offset {starts[bad[0]]}, "
               "outside its chunk")
    counts = r.u32_at(starts)
    stops = starts + 4 + 4 * counts
    bad = np.flatnonzero(stops > end)
    if len(bad):
        r.fail(f"the {counts[bad[0]]} features of {what} {bad[0]} do not fit in their chunk")
    order = np.argsort(starts, kind="stable")
    if np.any(stops[order[:-1]] > starts[order[1:]]):
        r.fail(f"the feature lists of the {what}s overlap")
    total = int(counts.sum())  # <= size / 4: the lists are disjoint and in the chunk
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    pos = np.repeat(starts + 4 - 4 * first, counts) + 4 * np.arange(total, dtype=np.int64)
    fids = r.u32_at(pos)
    owners = np.repeat(np.arange(n, dtype=np.int64), counts)
    bad = np.flatnonzero(fids >= n_features)
    if len(bad):
        r.fail(f"{what} {owners[bad[0]]} refers to feature {fids[bad[0]]}, the model "
               f"has {n_features}")
    return owners, fids


def _read_cqdb(r, offset, n, what):
    """The strings of ids 0 .. n - 1 of the CQDB at ``offset`` (backward links)."""
    name = f"the {what} database"
    cid, size, _flag, byteorder, bwd_size, bwd_offset = r.unpack(_CQDB_HEADER, offset, name)
    if cid != b"CQDB":
        r.fail(f"{name} at offset {offset} starts with {cid!r}, expected b'CQDB'")
    if byteorder != _CQDB_BYTEORDER:
        r.fail(f"{name} has the byte-order mark {byteorder:#x}, expected {_CQDB_BYTEORDER:#x}")
    if size < _CQDB_DATA:
        r.fail(f"{name} has size {size}, less than its {_CQDB_DATA}-byte header")
    r.need(offset, size, name)
    if n == 0:
        return []
    if bwd_size < n or bwd_offset < _CQDB_DATA or bwd_offset + 4 * n > size:
        r.fail(f"{name} has no valid id table for its {n} {what}s")
    rec = np.frombuffer(r.data, dtype="<u4", count=n, offset=offset + bwd_offset).astype(np.int64)
    bad = np.flatnonzero((rec < _CQDB_DATA) | (rec + 8 > size))
    if len(bad):
        r.fail(f"{what} {bad[0]} is at offset {rec[bad[0]]}, outside {name}")
    rec += offset
    ids = r.u32_at(rec)
    bad = np.flatnonzero(ids != np.arange(n))
    if len(bad):
        r.fail(f"{name} maps id {bad[0]} to a record of id {ids[bad[0]]}")
    ksize = r.u32_at(rec + 4)
    stops = rec + 8 + ksize
    bad = np.flatnonzero((ksize == 0) | (stops > offset + size))
    if len(bad):
        r.fail(f"the name of {what} {bad[0]} ({ksize[bad[0]]} bytes) does not fit in {name}")
    order = np.argsort(rec, kind="stable")
    if np.any(stops[order[:-1]] > rec[order[1:]]):
        r.fail(f"the records of {name} overlap")
    bad = np.flatnonzero(r.u8[stops - 1] != 0)
    if len(bad):
        r.fail(f"the name of {what} {bad[0]} is not NUL-terminated")
    data = r.data
    names = []
    for i, (a, b) in enumerate(zip((rec + 8).tolist(), (stops - 1).tolist())):
        raw = data[a:b]
        if b"\x00" in raw:
            r.fail(f"the name of {what} {i} contains a NUL byte")
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            r.fail(f"the name of {what} {i} is not UTF-8: {raw[:40]!r}")
    if len(set(names)) != n:
        seen = set()
        dup = next(s for s in names if s in seen or seen.add(s))
        r.fail(f"the {what} {dup!r} appears twice")
    return names


# --------------------------------------------------------------------------
# writing


def _cqdb_bytes(names):
    """A CQDB chunk mapping ``names[i]`` <-> ``i``, byte for byte as CRFsuite writes it."""
    keys = [s.encode("utf-8") + b"\x00" for s in names]
    n = len(keys)
    hashes = _hashlittle(keys).tolist()
    parts = []
    rec_offsets = []
    cur = _CQDB_DATA
    for i, key in enumerate(keys):
        rec_offsets.append(cur)
        parts.append(struct.pack("<II", i, len(key)))
        parts.append(key)
        cur += 8 + len(key)
    members = [[] for _ in range(_CQDB_TABLES)]
    for i, hv in enumerate(hashes):
        members[hv % _CQDB_TABLES].append(i)
    refs = []
    for ids in members:
        if not ids:
            refs.append((0, 0))
            continue
        m = 2 * len(ids)
        bucket_hash = [0] * m
        bucket_off = [0] * m
        for i in ids:
            hv = hashes[i]
            k = (hv >> 8) % m
            while bucket_off[k] != 0:
                k = (k + 1) % m
            bucket_hash[k] = hv
            bucket_off[k] = rec_offsets[i]
        table = np.empty((m, 2), dtype="<u4")
        table[:, 0] = bucket_hash
        table[:, 1] = bucket_off
        parts.append(table.tobytes())
        refs.append((cur, m))
        cur += 8 * m
    bwd_offset = 0
    if n:
        bwd_offset = cur
        parts.append(np.asarray(rec_offsets, dtype="<u4").tobytes())
        cur += 4 * n
    head = _CQDB_HEADER.pack(b"CQDB", cur, 0, _CQDB_BYTEORDER, n, bwd_offset)
    table_refs = np.asarray(refs, dtype="<u4").reshape(_CQDB_TABLES, 2).tobytes()
    return b"".join([head, table_refs] + parts)


def _refs_bytes(chunk_id, offset, owners, fids, n, n_table):
    """A feature-reference chunk at ``offset``: ``n`` lists (``fids`` grouped by
    ``owners``, which are sorted), an offset table of ``n_table >= n`` entries."""
    counts = np.bincount(owners, minlength=n).astype(np.int64)
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    starts = np.arange(n, dtype=np.int64) + first  # in uint32 units
    body = np.empty(n + len(fids), dtype="<u4")
    body[starts] = counts
    body[np.repeat(starts + 1 - first, counts) + np.arange(len(fids))] = fids
    table = np.zeros(n_table, dtype="<u4")
    table[:n] = offset + _CHUNK.size + 4 * n_table + 4 * starts
    size = _CHUNK.size + 4 * n_table + 4 * len(body)
    return _CHUNK.pack(chunk_id, size, n_table) + table.tobytes() + body.tobytes()


def _model_bytes(model):
    """The bytes of a CRFsuite model file holding ``model`` (a CRFsuiteModel).

    Features are written state features first (sorted by attribute, then
    label), then transitions (sorted by from, then to label); the layout and
    padding are those of CRFsuite's writer.
    """
    L, A = len(model.labels), len(model.attributes)
    so = np.lexsort((model.state_label, model.state_attr))
    to = np.lexsort((model.trans_to, model.trans_from))
    S, T = len(so), len(to)
    feats = np.empty(S + T, dtype=_FEATURE)
    feats["type"] = [_FT_STATE] * S + [_FT_TRANS] * T
    feats["src"] = np.concatenate([model.state_attr[so], model.trans_from[to]])
    feats["dst"] = np.concatenate([model.state_label[so], model.trans_to[to]])
    feats["weight"] = np.concatenate([model.state_weight[so], model.trans_weight[to]])
    out = bytearray(_HEADER.size)
    off_features = len(out)
    out += _CHUNK.pack(b"FEAT", _CHUNK.size + feats.nbytes, S + T) + feats.tobytes()
    off_labels = len(out)
    out += _cqdb_bytes(model.labels)
    off_attrs = len(out)
    out += _cqdb_bytes(model.attributes)
    out += bytes(-len(out) % 4)
    off_labelrefs = len(out)
    out += _refs_bytes(b"LFRF", off_labelrefs, model.trans_from[to],
                       np.arange(S, S + T), L, L + 2)
    out += bytes(-len(out) % 4)
    off_attrrefs = len(out)
    out += _refs_bytes(b"AFRF", off_attrrefs, model.state_attr[so], np.arange(S), A, A)
    out[: _HEADER.size] = _HEADER.pack(
        MAGIC, len(out), _MODEL_TYPE, _VERSION, 0, L, A, off_features, off_labels,
        off_attrs, off_labelrefs, off_attrrefs,
    )
    return bytes(out)


# --------------------------------------------------------------------------
# CRFTagger <-> arrays


def tagger_weights(crf, what):
    """The :class:`TaggerWeights` of a fitted CRFTagger, for a model file.

    The counterpart of :meth:`CRFTagger.from_weights`: the writers of model
    files (CRFsuite's, this project's) read a tagger through it.

    Parameters
    ----------
    crf : CRFTagger
        A fitted tagger with attribute names (not ``hashing``).
    what : str
        The destination, for the message of the ValueError
        (``"a CRFsuite model file"``).

    Returns
    -------
    weights : TaggerWeights
        In the tagger's ``layout_`` order; ``from_weights`` of it predicts
        as ``crf`` does.

    Raises
    ------
    NotFittedError
        When ``crf`` is not fitted.
    ValueError
        When the tagger hashes its attributes (there are no names to write).

    Examples
    --------
    >>> from sklearn_crf import CRFTagger
    >>> from sklearn_crf._io.crfsuite import tagger_weights
    >>> crf = CRFTagger().fit([[{"w": "a"}, {"w": "b"}]], [["X", "Y"]])
    >>> weights = tagger_weights(crf, "a model file")
    >>> weights.classes, weights.attributes
    (['X', 'Y'], ['w:a', 'w:b'])
    >>> bool((CRFTagger.from_weights(weights).coef_ == crf.coef_).all())
    True
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(crf)
    names = getattr(crf.vectorizer_, "feature_names_", None)
    if names is None:
        raise ValueError(
            f"this CRFTagger hashes its attributes (hashing={crf.hashing}): there are "
            f"no attribute names to write to {what}; pickle it or use skops.io instead"
        )
    layout = crf.layout_
    return TaggerWeights(
        classes=crf.classes_.tolist(), attributes=list(names),
        state_attr=layout.state_pairs().astype(np.int64),
        state_label=layout.attr_label.astype(np.int64),
        trans_from=layout.trans_from.astype(np.int64),
        trans_to=layout.trans_to.astype(np.int64),
        coef=np.asarray(crf.coef_[: layout.dense_start], dtype=np.float64),
        dense_coef=np.array(layout.dense_matrix(crf.coef_), dtype=np.float64),
    )


def _crfsuite_params(crf):
    """CRFTagger parameters of a fitted sklearn_crfsuite.CRF (those that map)."""
    params = {}
    if getattr(crf, "algorithm", None) in (None, "lbfgs"):
        for name, target in (("c1", "c1"), ("c2", "c2"), ("max_iterations", "max_iter"),
                             ("min_freq", "min_freq"),
                             ("all_possible_states", "all_possible_states"),
                             ("all_possible_transitions", "all_possible_transitions")):
            value = getattr(crf, name, None)
            if value is not None:
                params[target] = value
    return params


def load_crfsuite(source, **params):
    """Import a CRFsuite model as a fitted :class:`CRFTagger`.

    A CRFsuite model file holds the labels, the attribute names and the
    weights, nothing else: not the training parameters (``c1``, ``c2``, the
    algorithm, ``max_iterations``, ``min_freq``, ``all_possible_states``,
    ``all_possible_transitions``, ...), which CRFsuite does not write, and
    which cannot be told from the weights (CRFsuite writes only the non-zero
    ones). The imported tagger predicts exactly as the file does whatever its
    parameters; they matter when it is trained again. So from a path its
    parameters are :class:`CRFTagger`'s defaults (``c1=0``, ``c2=1``, ...)
    except those given in ``params``: **before a warm start, give the
    parameters the model was trained with**, or the refit runs under other
    regularization. From a fitted ``sklearn_crfsuite.CRF`` they are read
    from the object.

    Parameters
    ----------
    source : str, path-like or sklearn_crfsuite.CRF
        The path of a model file written by CRFsuite, python-crfsuite's
        ``Trainer`` or sklearn-crfsuite (its ``model_filename``), or a fitted
        ``sklearn_crfsuite.CRF`` (its model file is read, and its ``c1``,
        ``c2``, ``max_iterations``, ``min_freq``, ``all_possible_states`` and
        ``all_possible_transitions``, where set and when its algorithm is
        ``"lbfgs"``, become the tagger's parameters).
    **params
        :class:`CRFTagger` parameters of the result (e.g. ``c1=0.1,
        c2=0.1, all_possible_transitions=True, warm_start=True``), checked as
        :meth:`CRFTagger.fit` checks them; they override those read from a
        ``sklearn_crfsuite.CRF``.

    Returns
    -------
    crf : CRFTagger
        A fitted tagger that predicts as python-crfsuite's ``Tagger`` does on
        the same file: the same Viterbi labels and marginals. ``classes_`` are
        the file's labels, sorted; the attributes keep the file's order; every
        weight is the file's float64, exactly. Features whose weight is exactly
        0 are left out (they change no score). ``n_iter_`` is 0, ``loss_`` NaN
        and ``loss_curve_`` empty. With ``warm_start=True``, a refit starts
        from the imported weights.

    Raises
    ------
    ValueError
        When the file is not a valid CRFsuite model (truncated, a bad magic
        number, offsets or counts that do not fit, names that are not UTF-8,
        ...): the message names the file and what is wrong. Also when a
        ``sklearn_crfsuite.CRF`` is not fitted, when ``params`` holds an
        invalid value, and when the tagger's dense weight matrices
        (``n_attributes * n_labels + n_labels ** 2`` float64) would exceed
        1 GiB plus 64 times the file's size: a small file cannot make it
        allocate much more memory than it holds. And when the model could
        not predict, as :func:`~sklearn_crf.load_model` checks: a label
        that is empty or holds a newline, ``transition_constraints`` that
        name an unknown label or leave no label path.
    TypeError
        When ``params`` names a parameter that :class:`CRFTagger` does not
        have.
    FileNotFoundError
        When the file does not exist (an OSError); other OSErrors when it
        cannot be read.

    See Also
    --------
    save_crfsuite : The other way.
    sklearn_crf.load_model : This project's own model files.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_crf import CRFTagger, load_crfsuite, save_crfsuite
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> crf = CRFTagger(c2=0.01).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.crfsuite")
    >>> save_crfsuite(crf, path)
    >>> imported = load_crfsuite(path)
    >>> imported.classes_
    array(['O', 'PER'], dtype='<U3')
    >>> imported.predict([[{"w": "Mary"}, {"w": "runs"}]])
    [['PER', 'O']]
    >>> bool((imported.coef_ == crf.coef_).all())
    True

    The file does not say that ``c2=0.01`` trained it (the import has the
    default ``c2=1.0``); to continue training, say so:

    >>> imported.c2
    1.0
    >>> resumed = load_crfsuite(path, c2=0.01, warm_start=True, max_iter=5)
    >>> resumed.c2, resumed.warm_start
    (0.01, True)
    >>> resumed.fit(X, y).predict([[{"w": "Mary"}, {"w": "runs"}]])
    [['PER', 'O']]
    """
    from sklearn.utils._param_validation import InvalidParameterError

    recovered = {}
    if hasattr(source, "modelfile") and hasattr(source, "_get_trainer"):
        path = getattr(source.modelfile, "name", None)
        if path is None:
            raise ValueError("this sklearn_crfsuite.CRF is not fitted: it has no model file")
        recovered = _crfsuite_params(source)
    elif isinstance(source, (str, bytes, os.PathLike)):
        path = source
    else:
        raise TypeError(
            "source must be the path of a CRFsuite model file or a fitted "
            f"sklearn_crfsuite.CRF, got a {type(source).__name__}"
        )
    unknown = sorted(set(params) - set(CRFTagger().get_params()))
    if unknown:
        raise TypeError(f"load_crfsuite() got CRFTagger parameters it does not have: {unknown}")
    params = {**recovered, **params}
    try:
        CRFTagger(**params)._validate_params()
    except InvalidParameterError as err:
        raise ValueError(f"load_crfsuite(): {err}") from None
    data = read_file_bytes(path, "CRFsuite model", max_size=2**32 - 1)
    model = _parse_crfsuite(data, os.fsdecode(path))
    _check_crfsuite_model(model, params, os.fsdecode(path))
    order = sorted(range(len(model.labels)), key=model.labels.__getitem__)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    ks = model.state_weight != 0
    kt = model.trans_weight != 0
    weights = TaggerWeights(
        classes=[model.labels[i] for i in order], attributes=model.attributes,
        state_attr=model.state_attr[ks], state_label=rank[model.state_label[ks]],
        trans_from=rank[model.trans_from[kt]], trans_to=rank[model.trans_to[kt]],
        coef=np.concatenate([model.state_weight[ks], model.trans_weight[kt]]),
    )
    return CRFTagger.from_weights(weights, **params)


def _check_crfsuite_model(model, params, name):
    """The checks of :func:`load_model` on what a CRFsuite file and the
    caller's parameters give: labels every output can hold, constraints that
    name them and leave a label path."""

    def fail(what):
        raise ValueError(f"{name}: not a usable CRFsuite model: {what}")

    check_fitted_model(sorted(model.labels), params, fail)


def save_crfsuite(crf, path):
    """Write a fitted :class:`CRFTagger` as a CRFsuite model file.

    python-crfsuite's ``Tagger().open(path)`` (and so
    ``sklearn_crfsuite.CRF(model_filename=path)``) then tags as the tagger
    does. As CRFsuite's trainer does, only the non-zero weights are written,
    and only the attributes that have one; labels are written in ``classes_``
    order. The bytes depend only on the weights, so
    ``save_crfsuite(load_crfsuite(path), path2)`` writes the same bytes as
    ``path`` whenever ``path`` was written by this function.

    Parameters
    ----------
    crf : CRFTagger
        A fitted tagger with str labels and attribute names (not ``hashing``).
    path : str or path-like
        The file to write. It is replaced only once the whole model is
        written (through a temporary file in its folder): a failure, an
        interrupt included, leaves an existing file as it was.

    Raises
    ------
    TypeError
        When the labels are not str (CRFsuite's labels are strings).
    ValueError
        When the tagger hashes its attributes, or takes dense features
        (``n_dense_features_ > 0``: CRFsuite's format has named attributes
        only; :func:`~sklearn_crf.save_model`, pickle and skops keep them),
        or a label or attribute name contains a NUL character, or the model
        is too large for the format's 32-bit offsets.

    See Also
    --------
    load_crfsuite : The other way.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_crf import CRFTagger, save_crfsuite
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> crf = CRFTagger(c2=0.01).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.crfsuite")
    >>> save_crfsuite(crf, path)
    >>> with open(path, "rb") as f:
    ...     f.read(4)
    b'lCRF'
    """
    weights = tagger_weights(crf, "a CRFsuite model file")
    if weights.dense_coef.size:
        raise ValueError(
            f"this CRFTagger takes {weights.dense_coef.shape[0]} dense features per "
            "token, which a CRFsuite model file cannot hold (CRFsuite knows named "
            "attributes only); save it with save_model, pickle or skops.io instead"
        )
    classes, names, sa, sl, tf, tt, coef = weights[:7]
    bad = [c for c in classes if not isinstance(c, str)]
    if bad:
        raise TypeError(
            f"CRFsuite model files hold str labels; this tagger's labels are "
            f"{type(bad[0]).__name__} (e.g. {bad[0]!r})"
        )
    for kind, strings in (("label", classes), ("attribute", names)):
        for s in strings:
            if "\x00" in s:
                raise ValueError(
                    f"the {kind} {s!r} contains a NUL character, which CRFsuite cannot store"
                )
    S = len(sa)
    ks = np.flatnonzero(coef[:S] != 0)
    kt = np.flatnonzero(coef[S:] != 0)
    active = np.unique(sa[ks])
    new_id = np.full(len(names), -1, dtype=np.int64)
    new_id[active] = np.arange(len(active))
    model = CRFsuiteModel(
        labels=classes,
        attributes=[names[a] for a in active.tolist()],
        state_attr=new_id[sa[ks]], state_label=sl[ks], state_weight=coef[:S][ks],
        trans_from=tf[kt], trans_to=tt[kt], trans_weight=coef[S:][kt],
    )
    try:
        data = _model_bytes(model)
    except (struct.error, OverflowError):
        raise ValueError("the model is too large for a CRFsuite model file (4 GiB)") from None
    if len(data) >= 2**32:
        raise ValueError("the model is too large for a CRFsuite model file (4 GiB)")
    write_bytes(path, data)
