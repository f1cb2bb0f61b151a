"""Validation during a fit: the split of a validation set off the training
data, and the score of the solver's iterate on it.

A scorer name is scored on exactly what the tagger's ``predict`` returns for
the iterate's weights (its decoder and ``transition_constraints`` included):
the fit hands in ``tagger_for``, which makes a fitted tagger of a
:class:`~sklearn_crf._model.weights.FittedModel`, so no decoder is written
here. The validation set is encoded once, by the fit's vectorizer.
"""

import numpy as np
from sklearn.utils import check_random_state

from .._features.validation import (
    check_n_dense,
    check_sequence_weight,
    check_sequences,
    encode_partial_labels,
)
from .._features.forms import dense_array
from .._features.vectorizer import EncodedCorpus
from .objective import crf_objective


def n_training_sequences(X):
    """Number of sequences of a training X, after the checks of
    :func:`~sklearn_crf._features.validation.check_sequences` when X holds no
    dense array (the vectorizer checks the dense forms)."""
    if isinstance(X, EncodedCorpus):
        return X.n_sequences
    if isinstance(X, (list, tuple)) and any(dense_array(seq) is not None for seq in X):
        return len(X)
    check_sequences(X, "X")
    return len(X)


def split_validation(X, y, sample_weight, fraction, random_state):
    """Set aside ``ceil(fraction · n)`` random sequences as a validation set.

    Returns ``X, y, sample_weight`` of the training part and ``X_val, y_val,
    val_weight`` of the validation part, each in the input's order.
    """
    n = n_training_sequences(X)
    check_sequences(y, "y")
    if len(y) != n:
        raise ValueError(
            f"X and y have different numbers of sequences: {n} and {len(y)}"
        )
    n_val = int(np.ceil(fraction * n))
    if n_val >= n:
        raise ValueError(
            f"early_stopping needs at least 2 sequences to set "
            f"validation_fraction={fraction} of them aside, got {n}; lower "
            "validation_fraction or give X_val, y_val to fit"
        )
    perm = check_random_state(random_state).permutation(n)
    val = np.sort(perm[:n_val])
    train = np.sort(perm[n_val:])
    if sample_weight is None:
        weight_train = weight_val = None
    else:
        weights = check_sequence_weight(sample_weight, n)
        weight_train, weight_val = weights[train], weights[val]
    if isinstance(X, EncodedCorpus):
        X_train, X_val = X[train], X[val]
    else:
        X_train, X_val = [X[i] for i in train], [X[i] for i in val]
    return (
        X_train, [y[i] for i in train], weight_train,
        X_val, [y[i] for i in val], weight_val,
    )


def validation_score(scoring, model, X_val, y_val, weight, n_threads, tagger_for):
    """``score(w)``: the validation score of the weights w (higher is better).

    ``model`` is the fit's :class:`~sklearn_crf._model.weights.FittedModel`
    (its ``coef`` is not read). ``scoring`` None: minus the weighted negative
    log-likelihood per token of the validation set; otherwise the named
    scorer of :func:`sklearn_crf.metrics.get_scorer` on the predictions of
    ``tagger_for(model with coef=w)``. Called inside the fit's thread-count
    block (``n_threads`` in force).
    """
    corpus = model.vectorizer.encode(X_val)
    check_n_dense(corpus.n_dense, model.layout.n_dense, "X_val")
    val_classes, codes, val_allowed = encode_partial_labels(y_val, corpus.seq_ptr)
    if weight is None:
        weight = np.ones(corpus.n_sequences)
    weight = check_sequence_weight(weight, corpus.n_sequences)
    if scoring is None:
        return _loss_score(model, corpus, val_classes, codes, val_allowed, weight,
                           n_threads)

    from ..metrics import get_scorer

    scorer = get_scorer(scoring)
    kwargs = {} if np.all(weight == 1.0) else {"sample_weight": weight}

    def score(w):
        return scorer(tagger_for(model._replace(coef=w)), corpus, y_val, **kwargs)

    return score


def _loss_score(model, corpus, val_classes, codes, val_allowed, weight, n_threads):
    """``score(w)``: minus the weighted NLL per token of the encoded
    validation set (of its partial labels when ``val_allowed``, the labels
    each token may take, is not None)."""
    index = {label: i for i, label in enumerate(model.classes.tolist())}
    unseen = [label for label in val_classes.tolist() if label not in index]
    if unseen:
        raise ValueError(
            f"y_val has the label {unseen[0]!r}, which does not occur in the "
            "training labels: the validation loss is undefined; give "
            "validation_scoring a scorer name such as 'entity_f1'"
        )
    remap = np.array([index[label] for label in val_classes.tolist()], np.int32)
    labels = remap[codes]
    allowed = None
    if val_allowed is not None:  # the columns of the fit's labels
        allowed = np.zeros((corpus.n_tokens, len(index)), dtype=bool)
        allowed[:, remap] = val_allowed
    total = float(weight @ np.diff(corpus.seq_ptr))
    if not total > 0:
        raise ValueError(
            "the validation set has no (weighted) token: the validation loss "
            "per token is undefined"
        )
    objective = crf_objective(corpus, model.layout, labels, weight, allowed=allowed,
                              c2=0.0, n_chunks=n_threads)

    def score(w):
        return -objective.nll(w)[0] / total

    return score

