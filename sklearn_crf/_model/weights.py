"""What a fitted model is, as named arrays: the currency between training,
inference and io.

* :class:`FittedModel` — a fit's result in the fit's own ids (labels, the
  vectorizer, the parameter layout, the weights);
* :class:`TaggerWeights` — the same by name, in any order: what model files
  hold and :meth:`CRFTagger.from_weights` reads.
"""

from typing import Any, NamedTuple

import numpy as np

from .layout import ParameterLayout


class FittedModel(NamedTuple):
    """What a fitted tagger's predictions depend on, in the fit's own ids.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        The labels; label code ``k`` is ``classes[k]``.
    vectorizer : SequenceVectorizer
        The fitted vectorizer (attribute names or hash slots).
    layout : ParameterLayout
        Which pairs carry a weight.
    coef : ndarray of shape (layout.n_params,), float64
        The weights.
    """

    classes: np.ndarray
    vectorizer: Any
    layout: ParameterLayout
    coef: np.ndarray


class TaggerWeights(NamedTuple):
    """Everything a fitted CRFTagger's predictions depend on, as plain arrays.

    The data that model files (CRFsuite's, this project's) hold, and that
    :meth:`CRFTagger.from_weights` builds a fitted tagger from.

    Attributes
    ----------
    classes : list
        The labels, sorted.
    attributes : list of str
        Distinct attribute names, in vocabulary order.
    state_attr, state_label : ndarray of shape (n_state_weights,), int64
        The (attribute index, label index) of each state weight.
    trans_from, trans_to : ndarray of shape (n_transition_weights,), int64
        The (from label, to label) index pair of each transition weight; all
        pairs distinct.
    coef : ndarray of shape (n_state_weights + n_transition_weights,), float64
        The state weights, then the transition weights, in that order.
    dense_coef : ndarray of shape (n_dense, n_classes), float64, default empty
        The weights of the dense token features: ``dense_coef[j, k]`` is the
        weight of dimension ``j`` for label ``classes[k]``. Empty (size 0)
        for a model without dense features.
    """

    classes: list
    attributes: list
    state_attr: np.ndarray
    state_label: np.ndarray
    trans_from: np.ndarray
    trans_to: np.ndarray
    coef: np.ndarray
    dense_coef: np.ndarray = np.zeros((0, 0))
