"""Model selection for sequence labeling: out-of-fold predictions.

scikit-learn's :func:`~sklearn.model_selection.cross_validate` and the searches
work on label sequences as they are (with the scorers of
:mod:`sklearn_crf.metrics`); its ``cross_val_predict`` does not, as it
concatenates the folds' predictions into one array. :func:`cross_val_predict`
here returns them as a list of sequences in the input's order.
"""

import numpy as np
import sklearn
from sklearn.base import clone
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.model_selection import check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_method_params

__all__ = ["cross_val_predict"]

_METHODS = ("predict", "predict_marginals")


def cross_val_predict(
    estimator,
    X,
    y=None,
    *,
    groups=None,
    cv=None,
    n_jobs=None,
    verbose=0,
    params=None,
    pre_dispatch="2*n_jobs",
    method="predict",
):
    """Out-of-fold predictions for label sequences.

    The sequences are split by ``cv``; each test fold is predicted by a clone
    of ``estimator`` fitted on the other folds. This is
    :func:`sklearn.model_selection.cross_val_predict` for ragged outputs: the
    same ``cv``, ``groups``, ``n_jobs`` and parameter routing, but the
    predictions come back as a list with one entry per sequence, in the order
    of ``X``, for error analysis (which sentences does a model get wrong when
    it has not seen them?).

    As the folds' models differ, a metric computed on all out-of-fold
    predictions at once is not the mean of the folds' scores; use
    :func:`~sklearn.model_selection.cross_validate` to estimate performance.

    Parameters
    ----------
    estimator : estimator
        A sequence labeler such as :class:`~sklearn_crf.CRFTagger`, or a
        :class:`~sklearn.pipeline.Pipeline` ending in one. It is cloned for
        each fold and never fitted itself.

    X : list of sequences
        The input sequences (of feature dicts, or of tokens for a pipeline
        that featurizes them).

    y : list of sequences of labels, default=None
        The label sequences, aligned with ``X``.

    groups : array-like of shape (n_sequences,), default=None
        Group of each sequence (e.g. its document), used by group splitters
        such as :class:`~sklearn.model_selection.GroupKFold`. With metadata
        routing enabled, pass it as ``params={"groups": groups}`` instead.

    cv : int, cross-validation generator or iterable, default=None
        The splitting: None for 5 folds, an int for that many folds (both
        :class:`~sklearn.model_selection.KFold`, never stratified: a label
        sequence has no single class), a splitter, or an iterable of
        ``(train, test)`` index arrays. Every sequence must be in exactly one
        test fold.

    n_jobs : int, default=None
        Number of folds fitted in parallel by joblib (None: 1 unless in a
        :func:`joblib.parallel_config` context; -1: all processors).

    verbose : int, default=0
        joblib's verbosity.

    params : dict, default=None
        Parameters of ``estimator.fit`` (e.g. ``sample_weight``, or
        ``crftagger__sample_weight`` for a pipeline) and, with metadata
        routing, of the splitter (``groups``). Values with one entry per
        sequence are split with the folds.

    pre_dispatch : int or str, default="2*n_jobs"
        Number of jobs dispatched at once, as in joblib.

    method : {"predict", "predict_marginals"}, default="predict"
        The method called on each fold's model. For a pipeline,
        ``"predict_marginals"`` transforms with all steps but the last and
        calls the last step's ``predict_marginals``.

    Returns
    -------
    predictions : list of length n_sequences
        The out-of-fold result of ``method`` for each sequence of ``X``: a
        list of labels, or of ``{label: probability}`` dicts for
        ``"predict_marginals"``.

    Raises
    ------
    ValueError
        If ``method`` is unknown, or ``cv`` does not put every sequence in
        exactly one test fold.

    See Also
    --------
    sklearn.model_selection.cross_validate : Scores per fold.
    sklearn_crf.metrics.get_scorer : Scorers for label sequences.

    Examples
    --------
    >>> from sklearn.model_selection import GroupKFold
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_crf import CRFTagger, SequenceFeaturizer
    >>> from sklearn_crf.datasets import load_conll2002
    >>> from sklearn_crf.model_selection import cross_val_predict
    >>> data = load_conll2002("train", n_sentences=60)
    >>> pipe = make_pipeline(SequenceFeaturizer(), CRFTagger(c2=0.1, max_iter=200))
    >>> y_oof = cross_val_predict(
    ...     pipe, data.sentences, data.tags, groups=data.documents, cv=GroupKFold(3)
    ... )
    >>> len(y_oof) == len(data.tags)
    True
    >>> data.sentences[1], y_oof[1]
    (['-'], ['O'])

    Each sentence was predicted by a model that saw none of its article's
    sentences; the errors can be read sentence by sentence:

    >>> wrong = [i for i, (p, t) in enumerate(zip(y_oof, data.tags)) if p != t]
    >>> 0 < len(wrong) < len(data.tags)
    True
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {list(_METHODS)}, got {method!r}")
    X, y = indexable(X, y)
    params = {} if params is None else params
    if sklearn.get_config()["enable_metadata_routing"]:
        if groups is not None:
            raise ValueError(
                "groups cannot be given with metadata routing enabled; pass "
                "params={'groups': groups} instead"
            )
        router = (
            MetadataRouter(owner="cross_val_predict")
            .add(
                splitter=cv,
                method_mapping=MethodMapping().add(caller="fit", callee="split"),
            )
            .add(
                estimator=estimator,
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )
        try:
            routed = process_routing(router, "fit", **params)
        except UnsetMetadataPassedError as error:
            raise UnsetMetadataPassedError(
                message=str(error).replace(
                    "cross_val_predict.fit", "cross_val_predict"
                ),
                unrequested_params=error.unrequested_params,
                routed_params=error.routed_params,
            ) from None
        split_params, fit_params = routed.splitter.split, routed.estimator.fit
    else:
        split_params, fit_params = {"groups": groups}, params

    cv = check_cv(cv, y, classifier=False)
    splits = list(cv.split(X, y, **split_params))
    _check_partition([test for _, test in splits], len(X))

    parallel = Parallel(n_jobs=n_jobs, verbose=verbose, pre_dispatch=pre_dispatch)
    fold_predictions = parallel(
        delayed(_fit_and_predict)(
            clone(estimator), X, y, train, test, fit_params, method
        )
        for train, test in splits
    )
    predictions = [None] * len(X)
    for (_, test), fold in zip(splits, fold_predictions):
        for index, prediction in zip(test.tolist(), fold):
            predictions[index] = prediction
    return predictions


def _check_partition(test_folds, n_sequences):
    """Check that every sequence is in exactly one test fold."""
    indices = np.concatenate([np.asarray(test, dtype=np.intp) for test in test_folds])
    outside = indices[(indices < 0) | (indices >= n_sequences)]
    if len(outside):
        raise ValueError(
            f"cv is not a partition: it gives the test index {outside[0]}, but "
            f"there are {n_sequences} sequences"
        )
    counts = np.bincount(indices, minlength=n_sequences)
    bad = np.flatnonzero(counts != 1)
    if len(bad):
        raise ValueError(
            f"cv is not a partition: sequence {bad[0]} is in {counts[bad[0]]} test "
            "folds; cross_val_predict needs every sequence in exactly one test fold"
        )


def _fit_and_predict(estimator, X, y, train, test, fit_params, method):
    """Fit ``estimator`` on the ``train`` sequences, apply ``method`` to ``test``."""
    fit_params = _check_method_params(X, params=fit_params, indices=train)
    X_train, X_test = _safe_indexing(X, train), _safe_indexing(X, test)
    if y is None:
        estimator.fit(X_train, **fit_params)
    else:
        estimator.fit(X_train, _safe_indexing(y, train), **fit_params)
    if method == "predict_marginals" and isinstance(estimator, Pipeline):
        return estimator[-1].predict_marginals(estimator[:-1].transform(X_test))
    return getattr(estimator, method)(X_test)
