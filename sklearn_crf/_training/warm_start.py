"""Warm start: the weights of a previous fit carried over to a new layout.

A weight moves when the new model has the same feature: the same attribute
(by name, or by hash slot under the same ``hashing``) with the same label,
the same label pair, or the same dense dimension with the same label (when
the number of dense dimensions is unchanged). Every other weight starts at 0.
"""

import numpy as np


def attribute_map(old, new):
    """New attribute id of each old attribute id (-1 where it has none), for
    two fitted :class:`~sklearn_crf.SequenceVectorizer`."""
    if old.n_features is None and new.n_features is None:
        vocab = new.vocabulary_
        return np.array([vocab.get(name, -1) for name in old.feature_names_], dtype=np.int64)
    if old.n_features == new.n_features:  # the same hash slots
        ids = new.slot_ids_
        return np.array([ids.get(slot, -1) for slot in old.hash_slots_.tolist()],
                        dtype=np.int64)
    return np.full(old.n_attributes_, -1, dtype=np.int64)


def copy_matching(dest, dest_keys, src_keys, src_values):
    """dest[i] = src_values[j] wherever dest_keys[i] == src_keys[j] (unique keys)."""
    if len(src_keys) == 0 or len(dest_keys) == 0:
        return
    order = np.argsort(src_keys, kind="stable")
    sorted_keys = src_keys[order]
    pos = np.clip(np.searchsorted(sorted_keys, dest_keys), 0, len(sorted_keys) - 1)
    hit = sorted_keys[pos] == dest_keys
    dest[hit] = src_values[order[pos[hit]]]


def warm_start_weights(previous, vectorizer, classes, layout):
    """Initial weights (layout.n_params,) for a fit with ``vectorizer``,
    ``classes`` and ``layout``: zeros, or with ``previous`` (a
    :class:`~sklearn_crf._model.weights.FittedModel`) its weights of the same
    features."""
    w0 = np.zeros(layout.n_params)
    if previous is None:
        return w0
    old_layout, old_coef = previous.layout, previous.coef
    label_map = {label: i for i, label in enumerate(classes.tolist())}
    old_to_new_label = np.array(
        [label_map.get(label, -1) for label in previous.classes.tolist()], dtype=np.int64
    )
    old_to_new_attr = attribute_map(previous.vectorizer, vectorizer)
    L = len(classes)
    # state features: match (attribute, label) keys
    old_attr = old_to_new_attr[old_layout.state_pairs()]
    old_label = old_to_new_label[old_layout.attr_label]
    ok = (old_attr >= 0) & (old_label >= 0)
    old_keys = old_attr[ok] * L + old_label[ok]
    copy_matching(
        w0[: layout.n_state], layout.dense_index(), old_keys, old_coef[: old_layout.n_state][ok],
    )
    # transitions
    f = old_to_new_label[old_layout.trans_from]
    t = old_to_new_label[old_layout.trans_to]
    ok = (f >= 0) & (t >= 0)
    copy_matching(
        layout.transition_weights(w0),
        layout.trans_from.astype(np.int64) * L + layout.trans_to,
        f[ok] * L + t[ok],
        old_layout.transition_weights(old_coef)[ok],
    )
    # dense weights: the same dimensions (when their number is the same),
    # matched by label
    if layout.n_dense and old_layout.n_dense == layout.n_dense:
        ok = old_to_new_label >= 0
        layout.dense_matrix(w0)[:, old_to_new_label[ok]] = (
            old_layout.dense_matrix(old_coef)[:, ok]
        )
    return w0
