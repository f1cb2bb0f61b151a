"""This project's model files: a fitted CRFTagger, or a whole Pipeline, as data.

A model file is an uncompressed zip archive (``numpy.load`` opens it as an
``.npz``) of:

* ``model.json``: the format name and version, the label type (``"str"`` or
  ``"int"``), the sorted labels, the attribute names, the tagger's parameters,
  ``n_iter`` and ``loss``, the caller's JSON ``metadata`` and, for a
  :class:`~sklearn.pipeline.Pipeline` (format version 2), its steps: each
  step's name, class (``SequenceFeaturizer``, ``TemplateFeaturizer``,
  ``passthrough``, then ``CRFTagger`` last) and parameters, as JSON values;
* ``coef.npy`` (float64), ``state_attr.npy`` (int64), ``state_label.npy``,
  ``trans_from.npy``, ``trans_to.npy`` (int32) and ``loss_curve.npy``
  (float64), written with ``allow_pickle=False``;
* for a tagger that takes dense token features (format version 3, a tagger
  or, with ``"pipeline"`` in ``model.json``, a pipeline): ``n_dense`` in
  ``model.json`` and ``dense_coef.npy``, the (n_dense, n_labels) dense
  weights row-major as a 1-d float64 array. Files of a model without dense
  features are versions 1 and 2, byte for byte as before; older versions of
  sklearn-crf refuse version 3 with a message naming the version.

Reading parses JSON and ``.npy`` headers only (never pickle, never code),
checks every member's size against the file before reading it, every array
length and index against the others, and every parameter through the
estimators' own validation: a damaged or hostile file is a ``ValueError``
naming the file and the field.
"""

import io
import json
import os
import struct
import zipfile
import zlib
from numbers import Integral, Real

import numpy as np

from .atomic import atomic_write
from .crfsuite import tagger_weights
from .safe_io import (
    NPY_HEADER, check_dense_size, check_fitted_model, check_labels, read_file_bytes,
    read_json_object,
)
from .._model.weights import TaggerWeights
from .._tagger import CRFTagger
from .._version import __version__

__all__ = ["InvalidModelFile", "load_model", "save_model"]

_FORMAT = "sklearn-crf model"
_FORMAT_VERSION = 1  # a CRFTagger
_PIPELINE_VERSION = 2  # a Pipeline of featurizers and a CRFTagger
_DENSE_VERSION = 3  # either, with dense feature weights
_DENSE_MEMBER = "dense_coef.npy"
_JSON = "model.json"
#: array members and their exact dtypes
_ARRAYS = {
    "coef": "<f8",
    "state_attr": "<i8",
    "state_label": "<i4",
    "trans_from": "<i4",
    "trans_to": "<i4",
    "loss_curve": "<f8",
}
_MEMBERS = {_JSON} | {f"{name}.npy" for name in _ARRAYS}
_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member dates: the bytes depend on the model only


def _json_value(value):
    """A parameter value as JSON can hold it: a NumPy scalar as its Python value,
    a set (e.g. of allowed label pairs) as a list in a fixed order, a tuple as a
    list; anything else as is."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted((_json_value(v) for v in value), key=repr)
    if isinstance(value, tuple):
        return [_json_value(v) for v in value]
    return value


#: the featurizers a model file can hold (stateless transformers whose
#: parameters are JSON values; their own validation checks them on load)
_FEATURIZERS = ("SequenceFeaturizer", "TemplateFeaturizer")


def _featurizer_class(name):
    """The featurizer class of that name (imported on first use: ``import
    sklearn_crf`` does not load the featurizers)."""
    if name == "SequenceFeaturizer":
        from .._features.featurizer import SequenceFeaturizer

        return SequenceFeaturizer
    from .._features.templates import TemplateFeaturizer

    return TemplateFeaturizer
_PASSTHROUGH = "passthrough"
_TAGGER = "CRFTagger"
#: bounds on what a model file may ask a featurizer for (untrusted input): the
#: work of featurizing one token is at most MAX_FEATURES_PER_TOKEN features of
#: at most MAX_KEY_BYTES bytes each besides the text of the tokens they copy
#: (a word, its lower-cased form or shape, a prefix, a column's value, each of
#: one token within the window); MAX_WINDOW bounds the neighbours a token reads
#: on each side, as CRF++ bounds a template's rows
MAX_WINDOW = 8
MAX_FEATURES_PER_TOKEN = 1024
MAX_KEY_BYTES = 256
#: the longest list setting (prefixes, columns, ...) and the most template
#: lines a model file may hold; the command line's own settings use them too
MAX_LIST = 1000
MAX_TEMPLATES = 100_000
_MAX_STEPS = 100
#: int labels are stored as int64
_INT_LABEL_BOUND = 2**63
#: the Pipeline parameters a model file holds (``memory``, a cache, is not one)
_PIPELINE_PARAMS = ("verbose", "transform_input")


def save_model(crf, path, *, metadata=None):
    """Save a fitted :class:`CRFTagger`, or a Pipeline ending in one, as a data-only file.

    Unlike pickle, the file holds only data (JSON and ``.npy`` arrays in an
    uncompressed zip, see :func:`load_model`), so loading a file from an
    untrusted source cannot execute code. The bytes depend only on the model
    and ``metadata``: saving the same model twice writes identical files.

    A :class:`~sklearn.pipeline.Pipeline` is saved whole when its steps are
    this project's featurizers, :class:`SequenceFeaturizer` and
    :class:`TemplateFeaturizer` (any number, or ``"passthrough"``), and a
    fitted :class:`CRFTagger` last: one file from raw tokens to labels,
    which :func:`load_model` returns as a Pipeline of the same steps (names
    kept) and ``sklearn-crf tag`` uses as it is. The featurizers are
    stateless, so their parameters are all they hold; the Pipeline's
    ``verbose`` and ``transform_input`` are kept, ``memory`` (a cache) is
    not.

    Parameters
    ----------
    crf : CRFTagger or Pipeline
        A fitted tagger whose labels are all str or all int, with attribute
        names (not ``hashing``; pickle or skops such a tagger instead), or a
        Pipeline of featurizers ending in such a tagger.
    path : str or path-like
        The file to write (overwritten).
    metadata : JSON-serializable, default=None
        Anything :func:`json.dumps` accepts (e.g. how the training data was
        read); :func:`load_model` returns it with ``return_metadata=True``.

    Raises
    ------
    TypeError
        When the labels are neither all str nor all int, a parameter of the
        tagger is not a JSON value, or ``metadata`` is not JSON-serializable.
    ValueError
        When the tagger hashes its attributes, or ``metadata`` holds NaN or
        infinity; when :func:`load_model` would refuse the model (a label
        that is empty, holds a NUL, a newline or a lone surrogate;
        ``transition_constraints`` that name an unknown label or leave no
        label path for some sentence length); for a Pipeline, when a step is
        not one of those above (the message names it), or a featurizer
        parameter cannot be written to a model file or read back from it
        (the message names the step and the parameter; a featurizer is
        refused beyond the bounds on the work per token that
        :func:`load_model` checks: a ``window`` above 8, more than 1,024
        features per token, a template line or column name longer than 256
        bytes).
    OSError
        When the file cannot be written; an existing file at ``path`` is
        then left as it was (the file is written to a temporary file in the
        same folder, which replaces ``path`` only once complete, so a
        failure at any point, an interrupt included, loses nothing).

    See Also
    --------
    load_model : The other way.
    save_crfsuite : Write a CRFsuite model file instead.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_crf import CRFTagger, load_model, save_model
    >>> X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]]
    >>> y = [["PER", "O"], ["PER", "O"]]
    >>> crf = CRFTagger(c2=0.01).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.crf")
    >>> save_model(crf, path, metadata={"window": 1})
    >>> loaded, metadata = load_model(path, return_metadata=True)
    >>> loaded.predict([[{"w": "Mary"}, {"w": "runs"}]]), metadata
    ([['PER', 'O']], {'window': 1})
    >>> bool((loaded.coef_ == crf.coef_).all())
    True

    A whole pipeline, from raw tokens:

    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_crf import SequenceFeaturizer
    >>> pipe = make_pipeline(SequenceFeaturizer(window=2), CRFTagger(c2=0.01))
    >>> pipe = pipe.fit([["John", "runs"], ["Mary", "sleeps"]], y)
    >>> save_model(pipe, path)
    >>> loaded = load_model(path)
    >>> [name for name, _ in loaded.steps]
    ['sequencefeaturizer', 'crftagger']
    >>> loaded[0].window, loaded.predict([["Mary", "runs"]])
    (2, [['PER', 'O']])
    """
    crf, pipeline = _split_model(crf)
    weights = tagger_weights(crf, "a model file")
    classes, names, sa, sl, tf, tt, coef = weights[:7]
    n_dense = weights.dense_coef.shape[0] if weights.dense_coef.size else 0
    if all(isinstance(c, str) for c in classes):
        label_type = "str"
    elif all(isinstance(c, Integral) and not isinstance(c, bool) for c in classes):
        label_type = "int"
        classes = [int(c) for c in classes]
    else:
        raise TypeError(
            "model files hold str or int labels; this tagger's labels are "
            f"{type(classes[0]).__name__} (e.g. {classes[0]!r})"
        )

    def refuse(what):
        raise ValueError(f"this model cannot be saved as a model file: {what}")

    check_fitted_model(classes, crf.get_params(), refuse)
    loss = float(crf.loss_)
    doc = {
        "format": _FORMAT,
        "format_version": (_DENSE_VERSION if n_dense else
                           _FORMAT_VERSION if pipeline is None else _PIPELINE_VERSION),
        "sklearn_crf_version": __version__,
        "label_type": label_type,
        "classes": classes,
        "attributes": names,
        "params": {k: _json_value(v) for k, v in crf.get_params().items()},
        "n_iter": int(crf.n_iter_),
        "loss": loss if np.isfinite(loss) else None,
        "metadata": metadata,
    }
    if pipeline is not None:
        doc["pipeline"] = pipeline
    if n_dense:
        doc["n_dense"] = n_dense
    try:
        json.dumps(doc["params"], allow_nan=False)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"a parameter of this tagger cannot be written to a model file: {err}"
        ) from None
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False)
    except TypeError as err:
        raise TypeError(f"metadata must be JSON-serializable: {err}") from None
    except ValueError as err:
        raise ValueError(f"metadata must be JSON-serializable: {err}") from None
    arrays = {
        "coef": coef, "state_attr": sa, "state_label": sl, "trans_from": tf,
        "trans_to": tt, "loss_curve": np.asarray(crf.loss_curve_, dtype=np.float64),
    }
    with atomic_write(path) as f, zipfile.ZipFile(
            f, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo(_JSON, date_time=_DATE), text.encode("utf-8"))
        if n_dense:
            arrays["dense_coef"] = weights.dense_coef.ravel()
        for name, dtype in [*_ARRAYS.items(), ("dense_coef", "<f8")]:
            if name not in arrays:
                continue
            buf = io.BytesIO()
            np.lib.format.write_array(
                buf, np.ascontiguousarray(arrays[name], dtype=dtype), allow_pickle=False
            )
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=_DATE), buf.getvalue())


def _split_model(model):
    """(tagger, pipeline description or None) of what :func:`save_model` saves.

    The description is what ``model.json`` holds under ``"pipeline"``,
    checked by reading it back as :func:`load_model` does, so that a file
    this function writes always loads.
    """
    from sklearn.pipeline import Pipeline

    if isinstance(model, CRFTagger):
        return model, None
    if not isinstance(model, Pipeline):
        raise TypeError(
            "save_model saves a fitted CRFTagger or a Pipeline ending in one, "
            f"got a {type(model).__name__}"
        )
    steps = model.steps
    if not steps or not isinstance(steps[-1][1], CRFTagger):
        last = type(steps[-1][1]).__name__ if steps else "nothing"
        raise ValueError(
            "the last step of a Pipeline saved as a model file must be a fitted "
            f"CRFTagger; it is {last}"
        )
    described = []
    for name, step in steps[:-1]:
        if step is None or (isinstance(step, str) and step == _PASSTHROUGH):
            described.append({"name": name, "class": _PASSTHROUGH})
            continue
        kind = type(step).__name__
        if kind not in _FEATURIZERS or _featurizer_class(kind) is not type(step):
            raise ValueError(
                f"Pipeline step {name!r} is a {kind}: a model file holds the steps "
                f"{sorted(_FEATURIZERS)} (or 'passthrough') and a CRFTagger last; "
                "pickle or skops.io can save other steps"
            )
        params = {}
        for param, value in step.get_params(deep=False).items():
            if param == "vectors" and value is not None:
                raise ValueError(
                    f"Pipeline step {name!r} ({kind}) holds word vectors (vectors=...), "
                    "which a model file does not store: save this Pipeline with pickle, "
                    "joblib or skops.io, or save the tagger alone with save_model and "
                    "build the featurizer again with its WordVectors when loading"
                )
            try:
                params[param] = _featurizer_value(value)
            except ValueError as err:
                raise ValueError(
                    f"Pipeline step {name!r} ({kind}): the parameter {param}={value!r} "
                    f"cannot be written to a model file ({err})"
                ) from None
        described.append({"name": name, "class": kind, "params": params})
    described.append({"name": steps[-1][0], "class": _TAGGER})
    doc = {"steps": described}
    own = model.get_params(deep=False)
    for param in _PIPELINE_PARAMS:
        if param in own:
            doc[param] = _json_value(own[param])

    def fail(what):
        raise ValueError(f"this Pipeline cannot be saved as a model file: {what}")

    _read_pipeline(doc, fail)  # what load_model will check, checked now
    return steps[-1][1], doc


def _featurizer_value(value):
    """A featurizer parameter as a JSON value: None, bool, int, str, or a list
    of those (from a list or tuple); a ValueError for anything else."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (Integral, np.bool_)):
        return _json_value(value) if isinstance(value, np.generic) else int(value)
    if isinstance(value, (list, tuple)):
        items = [_featurizer_value(v) for v in value]
        if any(isinstance(v, list) for v in items):
            raise ValueError("nested lists are not model-file values")
        return items
    raise ValueError(f"a {type(value).__name__} is not a model-file value")


def load_model(path, *, return_metadata=False):
    """Load a :class:`CRFTagger` or Pipeline saved by :func:`save_model`, running no code from it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_model`.
    return_metadata : bool, default=False
        Also return the ``metadata`` given to :func:`save_model`.

    Returns
    -------
    model : CRFTagger or Pipeline
        What was saved. A fitted tagger: the same parameters, labels,
        attributes, layout and weights (bit for bit), ``n_iter_``, ``loss_``
        and ``loss_curve_``. A Pipeline: the same steps under the same names,
        the featurizers with the same parameters (lists and tuples as
        tuples), that tagger last, so that it predicts as the saved one did.
    metadata : JSON value
        Only with ``return_metadata=True``.

    Raises
    ------
    InvalidModelFile
        A ValueError, when the file is not a valid model file or holds a
        model that could not predict: not a zip archive, members missing,
        compressed or larger than the file, bad JSON or ``.npy`` headers,
        lengths, shapes, dtypes or indices that disagree, non-finite weights,
        dense weights larger than the file justifies as in
        :func:`load_crfsuite`, a label that is empty or holds a NUL, a
        newline or a lone surrogate, ``transition_constraints`` that name an
        unknown label or leave no label path for a sentence length (checked
        up to 1,024 tokens), invalid parameters of the tagger or of a
        featurizer, a featurizer beyond the bounds on the work per token
        (a ``window`` above :data:`MAX_WINDOW` = 8, more than
        :data:`MAX_FEATURES_PER_TOKEN` = 1,024 features per token, a
        feature name (template line, column name) longer than
        :data:`MAX_KEY_BYTES` = 256 bytes besides the token text it copies),
        an unknown step class. The message names the file and the field.
    FileNotFoundError
        When the file does not exist (an OSError, as for every reader of
        the package); other OSErrors when it cannot be read.

    See Also
    --------
    save_model : The other way.
    load_crfsuite : Import a CRFsuite model file.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_crf import CRFTagger, load_model, save_model
    >>> crf = CRFTagger().fit([[{"w": "a"}, {"w": "b"}]], [[1, 2]])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.crf")
    >>> save_model(crf, path)
    >>> load_model(path).predict([[{"w": "b"}, {"w": "a"}]])
    [[2, 1]]
    """
    name = os.fsdecode(path)
    data = read_file_bytes(path, "model")

    def fail(what):
        raise InvalidModelFile(f"{name}: not a valid sklearn-crf model file: {what}")

    raw = _read_members(data, fail)
    doc = _read_json(raw[_JSON], fail)
    arrays = {key: _read_npy(raw[f"{key}.npy"], dtype, f"{key}.npy", fail)
              for key, dtype in _ARRAYS.items()}
    classes, attributes, params, n_iter, loss = _check_doc(doc, fail)
    version = doc["format_version"]
    if (version == _DENSE_VERSION) != (_DENSE_MEMBER in raw):
        fail(f"format version {version} " + (
            f"lacks {_DENSE_MEMBER}" if version == _DENSE_VERSION else
            f"does not hold {_DENSE_MEMBER} (only version {_DENSE_VERSION} does)"))
    pipeline = None
    if version == _PIPELINE_VERSION and "pipeline" not in doc:
        fail(f"{_JSON} of format version {_PIPELINE_VERSION} lacks 'pipeline'")
    if version in (_PIPELINE_VERSION, _DENSE_VERSION) and "pipeline" in doc:
        pipeline = _read_pipeline(doc["pipeline"], fail)
    L, A = len(classes), len(attributes)
    check_dense_size(A, L, len(data), fail)
    _check_arrays(arrays, A, L, fail)
    dense_coef = np.zeros((0, 0))
    if version == _DENSE_VERSION:
        dense_coef = _read_dense_coef(doc, raw[_DENSE_MEMBER], L, len(data), fail)
    weights = TaggerWeights(
        classes, attributes, arrays["state_attr"], arrays["state_label"],
        arrays["trans_from"], arrays["trans_to"], arrays["coef"], dense_coef,
    )
    crf = CRFTagger.from_weights(weights, n_iter=n_iter, loss=loss,
                                 loss_curve=arrays["loss_curve"], **params)
    model = crf if pipeline is None else pipeline(crf)
    return (model, doc["metadata"]) if return_metadata else model


def _read_dense_coef(doc, raw, n_labels, file_size, fail):
    """The checked (n_dense, n_labels) dense weights of a version-3 file."""
    n_dense = doc.get("n_dense")
    if not isinstance(n_dense, int) or isinstance(n_dense, bool) or n_dense < 1:
        fail(f"{_JSON} of format version {_DENSE_VERSION} must give n_dense, a positive int")
    if n_dense * n_labels * 8 > file_size:
        fail(f"n_dense={n_dense} asks for more dense weights than the file holds")
    values = _read_npy(raw, "<f8", _DENSE_MEMBER, fail)
    if values.shape[0] != n_dense * n_labels:
        fail(f"{_DENSE_MEMBER} has {values.shape[0]} weights, expected n_dense × "
             f"n_labels = {n_dense} × {n_labels}")
    if not np.all(np.isfinite(values)):
        fail(f"{_DENSE_MEMBER} holds a weight that is not finite")
    return values.reshape(n_dense, n_labels)


def _read_pipeline(doc, fail):
    """A function ``tagger -> Pipeline`` from the checked ``"pipeline"`` of model.json.

    Every field is checked, and every featurizer built and validated by its
    own parameter validation, before the tagger is; ``fail(message)`` names
    the field (``pipeline.steps[0].params.window``).
    """
    from sklearn.pipeline import Pipeline
    from sklearn.utils._param_validation import InvalidParameterError

    if not isinstance(doc, dict):
        fail(f"pipeline holds a {type(doc).__name__}, expected an object")
    unknown = set(doc) - {"steps", *_PIPELINE_PARAMS}
    if unknown:
        fail(f"pipeline has unknown fields {sorted(unknown)[:5]}")
    steps = doc.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= _MAX_STEPS:
        fail(f"pipeline.steps must be a list of 1 to {_MAX_STEPS} steps")
    own_params = set(Pipeline([("x", "passthrough")]).get_params(deep=False))
    built, names = [], set()
    for i, step in enumerate(steps):
        where = f"pipeline.steps[{i}]"
        if not isinstance(step, dict):
            fail(f"{where} holds a {type(step).__name__}, expected an object")
        name, kind = step.get("name"), step.get("class")
        if not isinstance(name, str) or not name or "__" in name or name in own_params:
            fail(f"{where}.name={str(name)[:40]!r} is not a Pipeline step name")
        if name in names:
            fail(f"{where}.name={name[:40]!r} names two steps")
        names.add(name)
        if i == len(steps) - 1:
            if kind != _TAGGER:
                fail(f"{where}.class={str(kind)[:40]!r}: the last step must be {_TAGGER!r}")
        elif kind not in _FEATURIZERS and kind != _PASSTHROUGH:
            fail(f"{where}.class={str(kind)[:40]!r} is not among "
                 f"{sorted(_FEATURIZERS) + [_PASSTHROUGH]}")
        expected = {"name", "class"} | ({"params"} if kind in _FEATURIZERS else set())
        if set(step) != expected:
            fail(f"{where} has the fields {sorted(step)[:5]}, expected {sorted(expected)}")
        if kind == _TAGGER:
            built.append((name, None))
        elif kind == _PASSTHROUGH:
            built.append((name, _PASSTHROUGH))
        else:
            built.append((name, _read_featurizer(_featurizer_class(kind), step["params"],
                                                 f"{where}.params", fail)))
    verbose = doc.get("verbose", False)
    if not isinstance(verbose, bool):
        fail(f"pipeline.verbose={str(verbose)[:20]!r} is not a bool")
    extra = {}
    if "verbose" in own_params:
        extra["verbose"] = verbose
    transform_input = doc.get("transform_input")
    if transform_input is not None:
        if not isinstance(transform_input, list) or len(transform_input) > MAX_LIST or not all(
            isinstance(v, str) for v in transform_input
        ):
            fail("pipeline.transform_input must be null or a list of str")
        if "transform_input" not in own_params:
            fail("pipeline.transform_input is set, but this scikit-learn's Pipeline "
                 "has no transform_input")
    if "transform_input" in own_params:
        extra["transform_input"] = transform_input
    try:
        Pipeline([(n, s if s is not None else CRFTagger()) for n, s in built],
                 **extra)._validate_params()
    except InvalidParameterError as err:
        fail(f"pipeline: {err}")

    def make(crf):
        return Pipeline([(n, s if s is not None else crf) for n, s in built], **extra)

    return make


def _read_featurizer(cls, params, where, fail):
    """The featurizer ``cls(**params)`` from model.json, checked by its own validation."""
    from sklearn.utils._param_validation import InvalidParameterError

    if not isinstance(params, dict):
        fail(f"{where} holds a {type(params).__name__}, expected an object")
    known = cls().get_params(deep=False)
    unknown = set(params) - set(known)
    if unknown:
        fail(f"{where} names unknown {cls.__name__} parameters {sorted(unknown)[:5]}")
    values = {}
    for param, value in params.items():
        field = f"{where}.{param}"
        if isinstance(value, list):
            bound = MAX_TEMPLATES if param == "templates" else MAX_LIST
            if len(value) > bound:
                fail(f"{field} has {len(value)} items, more than a model file may hold ({bound})")
            if not all(v is None or isinstance(v, (bool, int, str)) for v in value):
                fail(f"{field} holds an item that is not null, a bool, an int or a str")
            value = tuple(value)
        elif not (value is None or isinstance(value, (bool, int, str))):
            fail(f"{field} is a {type(value).__name__}, not a featurizer parameter value")
        if param == "window" and isinstance(value, int) and not isinstance(value, bool) and (
            value > MAX_WINDOW
        ):
            fail(f"{field}={value}: larger than a model file may ask for ({MAX_WINDOW})")
        values[param] = value
    featurizer = cls(**values)
    try:
        featurizer._validate_params()
        featurizer.fit([])  # the checks of the parameters' content (templates, columns)
    except (InvalidParameterError, ValueError, TypeError) as err:
        fail(f"{where}: {str(err).splitlines()[0][:300]}")
    check_featurizer_work(featurizer, where, fail)
    return featurizer


def featurizer_work(featurizer):
    """(features per token, longest feature key in bytes, the field that sets the key)
    of a validated :class:`SequenceFeaturizer` or :class:`TemplateFeaturizer`.

    A TemplateFeaturizer gives each token one feature per unigram (``U``)
    line. A SequenceFeaturizer's count is measured on its own output: a
    one-token sentence gives the token's own features (BOS and EOS
    included), the first token of a two-token sentence those plus one
    neighbour's (EOS excluded), and a token with all its neighbours has the
    own features and ``2 * window`` neighbours' (the two probes cost at most
    twice the own features, whatever the window).
    """
    from sklearn.base import clone

    if not hasattr(featurizer, "window"):  # a TemplateFeaturizer
        lines = featurizer.templates
        lines = lines.split("\n") if isinstance(lines, str) else list(lines)
        units = [line.strip() for line in lines if line.strip().startswith("U")]
        longest = max((len(u.encode("utf-8", "surrogatepass")) for u in units), default=0)
        return len(units), longest, "templates"
    probe = clone(featurizer).set_params(output="dicts", hashing=None)
    columns = featurizer.columns or ()
    token = ("w",) + ("c",) * len(columns) if columns else "w"
    own = len(probe.transform([[token]])[0][0])
    if own > MAX_FEATURES_PER_TOKEN or not featurizer.window:
        total = own
    else:
        first_of_two = len(probe.transform([[token, token]])[0][0])
        neighbour = first_of_two - (own - int(bool(featurizer.bos_eos)))
        total = own + 2 * featurizer.window * neighbour
    names = [name for name in columns if name is not None]
    longest = max((len(n.encode("utf-8", "surrogatepass")) for n in names), default=0)
    return total, longest, "columns"


def check_featurizer_work(featurizer, where, fail):
    """Refuse a featurizer whose work per token exceeds the bounds of a model file.

    At most :data:`MAX_FEATURES_PER_TOKEN` features per token, each with a
    key of at most :data:`MAX_KEY_BYTES` bytes (besides the text of the
    tokens it copies), within a window of :data:`MAX_WINDOW` tokens on each
    side: the cost of featurizing, and so of predicting, grows linearly with
    the input. ``fail(message)`` names ``where`` and the field.
    """
    window = getattr(featurizer, "window", 0)
    if window > MAX_WINDOW:
        fail(f"{where}.window={window}: larger than a model file may ask for ({MAX_WINDOW})")
    n_features, longest, field = featurizer_work(featurizer)
    if n_features > MAX_FEATURES_PER_TOKEN:
        fail(f"{where}: {n_features} features per token, more than a model file may ask "
             f"for ({MAX_FEATURES_PER_TOKEN}; see window, prefixes, suffixes, "
             "neighbor_features, columns or templates)")
    if longest > MAX_KEY_BYTES:
        fail(f"{where}.{field}: a feature name of {longest} bytes, longer than a model "
             f"file may ask for ({MAX_KEY_BYTES})")


class InvalidModelFile(ValueError):
    """A model file that :func:`load_model` refuses: a ValueError naming the file and the field."""


def _read_members(data, fail):
    """{member name: bytes} of the zip archive in ``data``, each checked first."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            names = [info.filename for info in infos]
            if sorted(names) not in (sorted(_MEMBERS), sorted(_MEMBERS | {_DENSE_MEMBER})):
                shown = [n[:40] for n in sorted(names)[:10]]
                fail(f"the archive holds {shown}, expected {sorted(_MEMBERS)} (and "
                     f"{_DENSE_MEMBER} for a model with dense features)")
            out = {}
            for info in infos:
                if info.flag_bits & 0x1:
                    fail(f"{info.filename} is encrypted")
                if info.compress_type != zipfile.ZIP_STORED:
                    fail(f"{info.filename} is compressed; model files store their members")
                if info.file_size != info.compress_size or info.file_size > len(data):
                    fail(f"{info.filename} claims {info.file_size} bytes, more than "
                         "the file holds")
                out[info.filename] = zf.read(info)
            return out
    except InvalidModelFile:
        raise
    except (ValueError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError,
            struct.error, NotImplementedError, UnicodeDecodeError, zlib.error,
            OverflowError) as err:
        fail(f"not a readable zip archive ({err})")


def _read_json(raw, fail):
    """The model's JSON document (:func:`~sklearn_crf._io.safe_io.read_json_object`)."""
    return read_json_object(raw, lambda message: fail(f"{_JSON} is {message}"))


def _read_npy(raw, dtype, what, fail):
    """The 1-d array of exactly ``dtype`` in the ``.npy`` bytes ``raw``.

    The header is matched against the one form ``numpy.lib.format`` writes for a
    1-d array (no Python literal is evaluated); the data must be exactly the
    declared number of items.
    """
    if raw[:6] != b"\x93NUMPY" or len(raw) < 10:
        fail(f"{what} is not a .npy array")
    major = raw[6]
    if major == 1:
        start, (length,) = 10, struct.unpack_from("<H", raw, 8)
    elif major in (2, 3) and len(raw) >= 12:
        start, (length,) = 12, struct.unpack_from("<I", raw, 8)
    else:
        fail(f"{what} has the unsupported .npy version {major}")
    header = raw[start:start + length]
    match = NPY_HEADER.fullmatch(header.decode("latin-1"))
    if len(header) != length or match is None or not match.group(2).endswith(","):
        fail(f"{what} does not have the header of a 1-d array")
    if match.group(1) != np.dtype(dtype).str:
        fail(f"{what} has dtype {match.group(1)}, expected {np.dtype(dtype).str}")
    n = int(match.group(2)[:-1])
    offset = start + length
    found = np.dtype(dtype)
    if n * found.itemsize != len(raw) - offset:
        fail(f"{what} declares {n} items but holds {len(raw) - offset} bytes of data")
    return np.frombuffer(raw, dtype=found, count=n, offset=offset).copy()


def _check_doc(doc, fail):
    """(classes, attributes, params, n_iter, loss) of a checked model.json."""
    from sklearn.utils._param_validation import InvalidParameterError

    if doc.get("format") != _FORMAT:
        fail(f"{_JSON} has the format {str(doc.get('format'))[:50]!r}, expected {_FORMAT!r}")
    version = doc.get("format_version")
    if (version not in (_FORMAT_VERSION, _PIPELINE_VERSION, _DENSE_VERSION)
            or isinstance(version, bool)):
        fail(f"format version {str(version)[:20]}; this sklearn-crf reads versions "
             f"{_FORMAT_VERSION} (a tagger), {_PIPELINE_VERSION} (a pipeline) and "
             f"{_DENSE_VERSION} (either, with dense features)")
    missing = {"label_type", "classes", "attributes", "params", "n_iter", "loss",
               "metadata"} - set(doc)
    if missing:
        fail(f"{_JSON} lacks {sorted(missing)}")
    label_type, classes = doc["label_type"], doc["classes"]
    if label_type == "str":
        ok = isinstance(classes, list) and all(isinstance(c, str) for c in classes)
    elif label_type == "int":
        ok = isinstance(classes, list) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in classes)
    else:
        fail(f"the label type {str(label_type)[:20]!r} is neither 'str' nor 'int'")
    if not ok or not classes:
        fail(f"classes must be a non-empty list of {label_type} labels")
    if any(a >= b for a, b in zip(classes, classes[1:])):
        fail("classes are not sorted and distinct")
    if label_type == "int" and not -_INT_LABEL_BOUND <= classes[0] <= classes[-1] < (
            _INT_LABEL_BOUND):
        fail("classes: an int label outside the range of int64")
    attributes = doc["attributes"]
    if not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
        fail("attributes must be a list of str")
    if len(set(attributes)) != len(attributes):
        fail("an attribute name appears twice")
    params = doc["params"]
    if not isinstance(params, dict):
        fail("params must be an object")
    known = CRFTagger().get_params()
    unknown = set(params) - set(known)
    if unknown:
        fail(f"unknown CRFTagger parameters {sorted(unknown)[:5]}")
    if params.get("hashing") is not None:
        fail("params set hashing, but a model file holds attribute names, not hash slots")
    try:
        CRFTagger(**params)._validate_params()
    except InvalidParameterError as err:
        fail(f"invalid parameters: {err}")
    check_fitted_model(classes, params, fail)
    n_iter, loss = doc["n_iter"], doc["loss"]
    if not isinstance(n_iter, int) or isinstance(n_iter, bool) or n_iter < 0:
        fail("n_iter must be a non-negative int")
    if loss is None:
        loss = float("nan")
    elif not isinstance(loss, Real) or isinstance(loss, bool):
        fail("loss must be a number or null")
    return classes, attributes, params, n_iter, float(loss)


def _check_arrays(arrays, n_attributes, n_labels, fail):
    """Lengths, index ranges, distinct pairs and finite weights of the arrays."""
    sa, sl = arrays["state_attr"], arrays["state_label"]
    tf, tt = arrays["trans_from"], arrays["trans_to"]
    if len(sl) != len(sa) or len(tt) != len(tf):
        fail("the state or transition index arrays have different lengths")
    if len(arrays["coef"]) != len(sa) + len(tf):
        fail(f"coef has {len(arrays['coef'])} weights for {len(sa)} state and "
             f"{len(tf)} transition features")
    for what, values, bound in (("state_attr", sa, n_attributes), ("state_label", sl, n_labels),
                                ("trans_from", tf, n_labels), ("trans_to", tt, n_labels)):
        if len(values) and (values.min() < 0 or values.max() >= bound):
            fail(f"{what} holds an index outside [0, {bound})")
    for what, a, b in (("state", sa, sl), ("transition", tf, tt)):
        keys = a.astype(np.int64) * n_labels + b
        if len(np.unique(keys)) != len(keys):
            fail(f"a {what} feature is listed twice")
    if not np.all(np.isfinite(arrays["coef"])):
        fail("coef holds a weight that is not finite")
