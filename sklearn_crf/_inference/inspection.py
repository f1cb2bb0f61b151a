"""Named views of a fitted model's weights, in sklearn-crfsuite's formats.

Everything here is computed from a
:class:`~sklearn_crf._model.weights.FittedModel` (the tagger's ``coef_``,
``layout_``, ``vectorizer_`` and ``classes_``) on each call, so a fitted
tagger stores its weights only once.
As in a CRFsuite model (and so in sklearn-crfsuite), only the features with a
non-zero weight are listed: a pair that is absent has weight 0. The weights
of dense token features are not listed here (they have no attribute names):
they are ``CRFTagger.dense_coef_``.
"""

import numpy as np


def _nonzero_state_features(model):
    """(attribute ids, label codes, weights) of the non-zero state weights.

    In layout order: attribute-major, labels sorted within an attribute.
    """
    layout = model.layout
    weights = model.coef[: layout.n_state]
    keep = np.flatnonzero(weights)
    return layout.state_pairs()[keep], layout.attr_label[keep], weights[keep]


def _attribute_names(model):
    """The vectorizer's attribute names (a hashing vectorizer has none)."""
    names = getattr(model.vectorizer, "feature_names_", None)
    if names is None:
        raise AttributeError(
            "the attributes of this CRFTagger are hashed; there are no names to list"
        )
    return names


def attributes(model):
    """Names of the attributes with at least one non-zero state weight."""
    attrs, _, _ = _nonzero_state_features(model)
    names = _attribute_names(model)
    return [names[a] for a in np.unique(attrs).tolist()]


def state_features(model):
    """``{(attribute, label): weight}`` of the non-zero state weights."""
    attrs, labels, weights = _nonzero_state_features(model)
    names = _attribute_names(model)
    classes = model.classes.tolist()
    return {
        (names[a], classes[k]): w
        for a, k, w in zip(attrs.tolist(), labels.tolist(), weights.tolist())
    }


def transition_features(model):
    """``{(from_label, to_label): weight}`` of the non-zero transition weights."""
    layout = model.layout
    weights = layout.transition_weights(model.coef)
    keep = np.flatnonzero(weights)
    classes = model.classes.tolist()
    return {
        (classes[f], classes[t]): w
        for f, t, w in zip(
            layout.trans_from[keep].tolist(),
            layout.trans_to[keep].tolist(),
            weights[keep].tolist(),
        )
    }


def top_state_features(model, n):
    """The ``n`` largest positive and most negative state weights of each label.

    Returns ``{label: {"positive": [(attribute, weight), ...], "negative":
    [...]}}`` with the labels in ``classes_`` order, ``"positive"`` by
    decreasing weight and ``"negative"`` by increasing weight (most negative
    first); ties keep the attribute order of the vectorizer.
    """
    attrs, labels, weights = _nonzero_state_features(model)
    names = _attribute_names(model)
    top = {}
    for code, label in enumerate(model.classes.tolist()):
        mine = labels == code
        a, w = attrs[mine], weights[mine]
        pos = np.flatnonzero(w > 0)
        pos = pos[np.argsort(-w[pos], kind="stable")[:n]]
        neg = np.flatnonzero(w < 0)
        neg = neg[np.argsort(w[neg], kind="stable")[:n]]
        top[label] = {
            "positive": [(names[i], v) for i, v in zip(a[pos].tolist(), w[pos].tolist())],
            "negative": [(names[i], v) for i, v in zip(a[neg].tolist(), w[neg].tolist())],
        }
    return top
