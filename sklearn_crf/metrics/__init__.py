"""Metrics and scorers for sequence labeling.

All functions take ``y_true`` and ``y_pred`` as lists of label sequences, one
list of labels per sequence (sequences may have different lengths), e.g. what
a sequence tagger's ``predict`` returns.

Three families of metrics are provided:

- token-level metrics (``flat_*``), which flatten the sequences and delegate
  to the corresponding :mod:`sklearn.metrics` function;
- :func:`sequence_accuracy_score`, the fraction of sequences predicted
  without any error;
- entity-level metrics (``entity_*``), which extract labeled spans (chunks)
  from IOB-style tags and compare them exactly. With the default
  ``mode=None`` they give the same numbers as ``seqeval`` and the CoNLL
  ``conlleval`` script; ``mode="strict"`` with a ``scheme`` gives the same
  numbers as ``seqeval``'s strict mode (and reads BMES, which seqeval
  does not).

Reports gather them: :func:`flat_classification_report` and
:func:`entity_classification_report` (scikit-learn's and seqeval's layout),
:func:`conlleval_report` (the CoNLL ``conlleval`` script's) and
:func:`crfsuite_holdout_report` (CRFsuite's evaluation of a development set).

The ``flat_*`` functions and :func:`sequence_accuracy_score` take the same
arguments as sklearn-crfsuite's and return the same values, with one
exception: when all sequences have the same length, sklearn-crfsuite's
``sequence_accuracy_score`` counts correct tokens instead of sequences.

Scorers usable as ``scoring`` in :func:`~sklearn.model_selection.cross_validate`
and :class:`~sklearn.model_selection.GridSearchCV` are available as module
attributes and through :func:`get_scorer`: ``entity_f1_scorer``,
``entity_precision_scorer``, ``entity_recall_scorer`` (micro averages),
``flat_f1_scorer`` (token F1 over all labels but ``"O"``, weighted by support),
``flat_accuracy_scorer`` and ``sequence_accuracy_scorer``. Scikit-learn's own
scorer names such as ``"f1"`` or ``"accuracy"`` cannot handle lists of label
sequences.

``sample_weight``, wherever accepted, holds one weight per sequence (finite
and non-negative, as for :meth:`CRFTagger.fit <sklearn_crf.CRFTagger.fit>`).

``y_true`` may hold partial labels, as ``CRFTagger.fit`` accepts them: a gold
label None or a set of several labels is unknown (a set of one label is that
label). The token-level metrics and the token counts of the reports leave the
unknown tokens out, and :func:`sequence_accuracy_score` counts a sequence as
correct when its known tokens are; the entity-level metrics read the gold
entities with ``"O"`` at the unknown tokens and leave out every entity, true
or predicted, that covers an unknown gold token or is next to one (there the
true entity is not known).
"""

from ._entity import (
    entity_f1_score,
    entity_fbeta_score,
    entity_precision_recall_fscore_support,
    entity_precision_score,
    entity_recall_score,
    get_entities,
)
from ._flat import (
    flat_accuracy_score,
    flat_f1_score,
    flat_fbeta_score,
    flat_precision_score,
    flat_recall_score,
    sequence_accuracy_score,
)
from ._reports import (
    LabelScore,
    conlleval_report,
    crfsuite_holdout_report,
    entity_classification_report,
    flat_classification_report,
)
from ._scorers import (
    entity_f1_scorer,
    entity_precision_scorer,
    entity_recall_scorer,
    flat_accuracy_scorer,
    flat_f1_scorer,
    get_scorer,
    get_scorer_names,
    sequence_accuracy_scorer,
)

__all__ = [
    "LabelScore",
    "conlleval_report",
    "crfsuite_holdout_report",
    "entity_classification_report",
    "entity_f1_score",
    "entity_f1_scorer",
    "entity_fbeta_score",
    "entity_precision_recall_fscore_support",
    "entity_precision_score",
    "entity_precision_scorer",
    "entity_recall_score",
    "entity_recall_scorer",
    "flat_accuracy_score",
    "flat_accuracy_scorer",
    "flat_classification_report",
    "flat_f1_score",
    "flat_f1_scorer",
    "flat_fbeta_score",
    "flat_precision_score",
    "flat_recall_score",
    "get_entities",
    "get_scorer",
    "get_scorer_names",
    "sequence_accuracy_score",
    "sequence_accuracy_scorer",
]
