"""The one fit entry point: the estimator's parameters and training data in,
a :class:`FitOutcome` out, for local and sharded data.

``fit`` = encode (the vectorizer) → labels → parameter layout (CRFsuite's
rules) → initial weights (warm start) → the solver of the solver table, with
a validation monitor when there is a validation set. The estimator checks
its parameters, calls :func:`fit_model` and stores the outcome; cross-validation
calls :func:`training_problem` and :func:`solve` on the folds of one encoding.
"""

import dataclasses
import logging
from typing import Any, NamedTuple

import numpy as np

from .._engine.decoding import apply_constraints, check_feasible
from .._engine.first_use import note_compilation
from .._engine.threads import n_threads as thread_count
from .._features.validation import check_sequence_weight, encode_partial_labels
from .._features.vectorizer import EncodedCorpus, SequenceVectorizer
from .._io.corpus_store import LabelCodes, checked_label_codes
from .._model import constraints as _constraints
from .._model.layout import build_layout
from .._model.weights import FittedModel
from .distributed import ShardedCorpus, fit_sharded, prepare_sharded
from .optimize import SolverResult, ValidationMonitor, progress_logging
from .solvers import SOLVERS, TrainingData
from .validation import split_validation, validation_score
from .warm_start import warm_start_weights

logger = logging.getLogger("sklearn_crf")


class TrainingProblem(NamedTuple):
    """An encoded training set with its labels and the weights to learn.

    Attributes
    ----------
    vectorizer : SequenceVectorizer
        The fitted vectorizer of ``corpus``.
    corpus : EncodedCorpus
        The training sequences, without their entries of value 0
        (:func:`without_zero_entries`: only the layout counts them); for a
        batch solver, with an empty ``tok_val`` when every value is 1
        (:func:`without_unit_values`).
    classes : ndarray of shape (n_classes,)
        The labels; code ``k`` is ``classes[k]``.
    labels : ndarray of int32, shape (n_tokens,)
        The gold label codes (with partial labels, one allowed label).
    seq_weight : ndarray of float64, shape (n_sequences,)
        The sequence weights.
    layout : ParameterLayout
        The weights to learn (CRFsuite's rules on ``corpus`` and ``labels``).
    constraints : TransitionConstraints or None
        The masks of ``constrain_training``, None without it.
    allowed : ndarray of bool, shape (n_tokens, n_classes), or None
        With partial labels, the labels each token may take; None when
        every token has its label.
    """

    vectorizer: Any
    corpus: Any
    classes: np.ndarray
    labels: np.ndarray
    seq_weight: np.ndarray
    layout: Any
    constraints: Any
    allowed: Any = None


class FitOutcome(NamedTuple):
    """A fit's result: the model and the solver's record.

    Attributes
    ----------
    model : FittedModel
        Labels, vectorizer, layout and weights.
    result : SolverResult
        Iterations, losses and validation scores of the solver.
    """

    model: FittedModel
    result: SolverResult


def check_constraint_labels(spec, y):
    """At fit: a ValueError when a label breaks the naming of the scheme of
    ``transition_constraints`` or a constraint pair names an unknown label.
    Malformed ``y`` is left to the checks of fit."""
    if spec is None:
        return
    try:
        labels = set()
        for seq in y:
            for entry in seq:  # partial labels: None, or a set of labels
                if isinstance(entry, (set, frozenset)):
                    labels.update(entry)
                elif entry is not None:
                    labels.add(entry)
    except TypeError:
        return
    _constraints.check_scheme_labels(spec, sorted(labels, key=repr))


def encode_training(X, hashing):
    """(vectorizer, corpus) of the training X: a new vectorizer fitted on X,
    or the ``vectorizer`` of an EncodedCorpus X (which is the corpus)."""
    if isinstance(X, EncodedCorpus):
        if X.vectorizer is None:
            raise ValueError(
                "X is an EncodedCorpus without a vectorizer: fit needs the attribute "
                "names; encode X with SequenceVectorizer.fit_encode or encode"
            )
        if X.vectorizer.n_features != hashing:
            raise ValueError(
                f"X is an EncodedCorpus of a SequenceVectorizer with n_features="
                f"{X.vectorizer.n_features!r}, but this CRFTagger has hashing="
                f"{hashing!r}; give them the same value"
            )
        return X.vectorizer, X
    vectorizer = SequenceVectorizer(n_features=hashing)
    return vectorizer, vectorizer.fit_encode(X)


def without_zero_entries(corpus):
    """``corpus`` without its entries of value 0 (``zero_tok``, ``zero_attr``).

    They add nothing to a score: CRFsuite's layout rules count them (a pair
    seen only with value 0 gets a weight), the solvers never read them. On
    the tutorial's features (a False flag is a zero) they are about as many
    as the other entries, so the solve does not keep them.
    """
    if not len(corpus.zero_tok):
        return corpus
    return dataclasses.replace(corpus, zero_tok=np.zeros(0, dtype=np.int64),
                               zero_attr=np.zeros(0, dtype=np.int32))


def without_unit_values(corpus):
    """``corpus`` with an empty ``tok_val`` when every value is 1.

    How the batch solvers' objective reads all ones
    (:class:`~sklearn_crf._training.objective.CRFObjective`): the solve then
    keeps no array of ones, one float64 per entry. Not for the online
    solvers, which read the values.
    """
    if not len(corpus.tok_val) or not bool(np.all(corpus.tok_val == 1.0)):
        return corpus
    return dataclasses.replace(corpus, tok_val=np.zeros(0))


def training_problem(params, vectorizer, corpus, classes, labels, seq_weight, allowed=None):
    """The :class:`TrainingProblem` of an encoded corpus: its layout by
    CRFsuite's rules under ``params`` (``min_freq``, ``all_possible_*``) and
    the masks of ``constrain_training`` (the gold labels checked against them).
    ``allowed`` (n_tokens, n_classes) bool: partial labels, or None."""
    if allowed is not None and SOLVERS[params["solver"]].kind == "online":
        raise ValueError(
            f"y has partial labels (None or a set of labels), which solver="
            f"{params['solver']!r} cannot train on: its updates need one gold path; "
            "use solver='lbfgs' or 'l-bfgs-b'"
        )
    seq_weight = check_sequence_weight(seq_weight, corpus.n_sequences)
    if seq_weight is None:
        seq_weight = np.ones(corpus.n_sequences)
    layout = build_layout(
        corpus, labels, len(classes),
        min_freq=params["min_freq"],
        all_possible_states=params["all_possible_states"],
        all_possible_transitions=params["all_possible_transitions"],
        allowed=allowed,
    )
    masks = None
    if params["constrain_training"] and params["transition_constraints"] is not None:
        masks = _constraints.build_constraints(
            params["transition_constraints"], classes.tolist()
        )
        if allowed is None:
            _constraints.check_allowed_labels(masks, labels, corpus.seq_ptr,
                                              classes.tolist())
        else:  # some path the partial labels allow must be allowed
            L = len(classes)
            check_feasible(
                apply_constraints(np.zeros((corpus.n_tokens, L)), np.zeros((L, L)),
                                  corpus.seq_ptr, masks, allowed),
                "the partial labels of y and transition_constraints",
            )
    logger.debug(
        "%d sequences, %d tokens, %d attributes, %d dense features, %d labels, "
        "%d parameters", corpus.n_sequences, corpus.n_tokens, corpus.n_attributes,
        corpus.n_dense, len(classes), layout.n_params,
    )
    corpus = without_zero_entries(corpus)
    if SOLVERS[params["solver"]].kind == "batch":
        corpus = without_unit_values(corpus)
    return TrainingProblem(vectorizer, corpus, classes, labels, seq_weight, layout, masks,
                           allowed)


def _monitor(params, model, X_val, y_val, val_weight, n_threads, tagger_for):
    """The solver's :class:`ValidationMonitor` (None without a validation set)."""
    if X_val is None:
        return None
    score = validation_score(params["validation_scoring"], model, X_val, y_val, val_weight,
                             n_threads, tagger_for)
    return ValidationMonitor(
        score, params["n_iter_no_change"] if params["early_stopping"] else None
    )


def solve(params, problem, *, w0, X_val=None, y_val=None, val_weight=None,
          tagger_for=None, objectives=None, step_scale=None):
    """Run the solver of ``params`` on a :class:`TrainingProblem` from the
    weights ``w0``; returns a :class:`FitOutcome`. ``objectives`` (an
    :class:`~sklearn_crf._training.solvers.ObjectiveCache` of this problem, or
    None) lets the fits of a path share their objectives, and ``step_scale``
    (:func:`~sklearn_crf._training.optimize.warm_step_scale`) sizes the first
    step of a fit that starts from a neighbour's solution."""
    solver = SOLVERS[params["solver"]]
    model = FittedModel(problem.classes, problem.vectorizer, problem.layout, None)
    with thread_count(params["n_jobs"], problem.corpus.n_tokens) as n_threads:
        note_compilation()
        monitor = _monitor(params, model, X_val, y_val, val_weight, n_threads, tagger_for)
        result = solver.run(
            solver, TrainingData(problem.corpus, problem.layout, problem.labels,
                                 problem.seq_weight, problem.allowed),
            params, n_threads=n_threads, w0=w0, constraints=problem.constraints,
            monitor=monitor, verbose=params["verbose"], objectives=objectives,
            step_scale=step_scale,
        )
    return FitOutcome(model._replace(coef=result.w), result)


def fit_model(params, X, y, sample_weight=None, X_val=None, y_val=None, *, previous=None,
              tagger_for=None):
    """Fit a CRF on X, y under the estimator's ``params`` (its ``get_params``).

    ``previous`` (a :class:`FittedModel`, or None) gives the initial weights
    of the same features (warm start); ``tagger_for`` makes a fitted tagger
    of a :class:`FittedModel`, for validation scorers. Returns a
    :class:`FitOutcome`.
    """
    solver = SOLVERS[params["solver"]]
    if X_val is not None and not solver.early_stopping:
        raise ValueError(
            f"solver={params['solver']!r} takes no validation set (X_val, y_val): "
            "validation scores and early stopping need solver 'lbfgs' or 'l-bfgs-b'"
        )
    if (X_val is None) != (y_val is None):
        raise ValueError(
            "X_val and y_val must be given together: got only "
            + ("X_val" if y_val is None else "y_val")
        )
    with progress_logging(params["verbose"]):
        if isinstance(X, ShardedCorpus):
            return _fit_sharded(params, X, y, sample_weight, X_val, y_val, previous,
                                tagger_for)
        val_weight = None
        codes = isinstance(y, LabelCodes)  # a store's labels, as int32 codes
        if X_val is None and params["early_stopping"]:
            if codes:
                raise ValueError("early_stopping with y as LabelCodes needs X_val and y_val: "
                                 "no part of the codes is set aside")
            X, y, sample_weight, X_val, y_val, val_weight = split_validation(
                X, y, sample_weight, params["validation_fraction"], params["random_state"]
            )
        check_constraint_labels(params["transition_constraints"],
                                [y.classes.tolist()] if codes else y)
        vectorizer, corpus = encode_training(X, params["hashing"])
        if codes:  # one known label per token: nothing partial
            (classes, labels), allowed = checked_label_codes(y, corpus.n_tokens), None
        else:
            classes, labels, allowed = encode_partial_labels(y, corpus.seq_ptr)
        problem = training_problem(params, vectorizer, corpus, classes, labels,
                                   sample_weight, allowed)
        del corpus  # the problem's has no zero entries (nor ones): let the others go
        w0 = warm_start_weights(previous, vectorizer, classes, problem.layout)
        return solve(params, problem, w0=w0, X_val=X_val, y_val=y_val,
                     val_weight=val_weight, tagger_for=tagger_for)


def _fit_sharded(params, X, y, sample_weight, X_val, y_val, previous, tagger_for):
    """:func:`fit_model` on a :class:`~sklearn_crf.ShardedCorpus`: data-parallel
    on its Dask cluster (:mod:`sklearn_crf._training.distributed`)."""
    if y is not None or sample_weight is not None:
        raise ValueError(
            "X is a ShardedCorpus: its labels and sequence weights come with its "
            "shards; call fit(X, None) without sample_weight"
        )
    if X_val is None and params["early_stopping"]:
        raise ValueError(
            "early_stopping on a ShardedCorpus needs X_val and y_val: no part of "
            "the shards is set aside"
        )
    if params["constrain_training"] and params["transition_constraints"] is not None:
        raise ValueError("constrain_training is not supported on a ShardedCorpus")
    problem = prepare_sharded(X, params)
    try:
        check_constraint_labels(params["transition_constraints"], [problem.classes.tolist()])
        model = FittedModel(problem.classes, problem.vectorizer, problem.layout, None)
        with thread_count(params["n_jobs"], problem.n_tokens) as n_threads:
            monitor = _monitor(params, model, X_val, y_val, None, n_threads, tagger_for)
            fit = fit_sharded(
                problem, params,
                w0=warm_start_weights(previous, problem.vectorizer, problem.classes,
                                      problem.layout),
                monitor=monitor, verbose=params["verbose"],
            )
    finally:
        problem.close()
    return FitOutcome(FittedModel(fit.classes, fit.vectorizer, fit.layout, fit.result.w),
                      fit.result)
