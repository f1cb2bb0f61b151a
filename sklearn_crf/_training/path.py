"""A regularization path over ``c1`` and ``c2``: the order of its fits and the
training data of each cross-validation fold.

:class:`~sklearn_crf.CRFTaggerCV` encodes X once and, on each fold, fits the
grid's candidates one after another, each starting from the solution of a
neighbour already fitted on the same fold (:func:`path_steps`). A fold's
training data (:func:`fold_data`) is cut from the corpus encoded once, with
the labels a :class:`~sklearn_crf.CRFTagger` fitted on that fold's training
sequences alone would have.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np



@dataclass(frozen=True)
class PathStep:
    """One fit of a path.

    Attributes
    ----------
    i, j : int
        The candidate: ``c1s[i]``, ``c2s[j]``.
    start : int or None
        The index (in the path) of the step whose solution this fit starts
        from; None for the first step, which starts from zeros.
    """

    i: int
    j: int
    start: Optional[int]


def path_steps(c1s, c2s):
    """The fits of a path over the grid ``c1s`` × ``c2s``, strong to weak.

    The outer loop goes down ``c2``; the inner one runs along ``c1``, down
    on the first row, then back and forth (a snake): each fit starts from
    the fit just before it, a grid neighbour, and every row from the
    solution of a more strongly regularized row. The inner loop runs along
    ``c1`` because a step in ``c1`` moves the optimum less than a step in
    ``c2``; the snake saves the jump back to the start of the row. The
    other orders tried took more iterations, and weak to strong gave lower
    test scores (benchmarks/README.md, "The order of the path").

    Parameters
    ----------
    c1s, c2s : sequence of float
        The grid's values (any order, distinct).

    Returns
    -------
    steps : list of PathStep
        One per candidate.
    """
    rows = np.argsort(-np.asarray(c2s, dtype=np.float64), kind="stable").tolist()
    cols = np.argsort(-np.asarray(c1s, dtype=np.float64), kind="stable").tolist()
    steps = []
    for r, j in enumerate(rows):
        for i in (cols if r % 2 == 0 else cols[::-1]):
            steps.append(PathStep(i=i, j=j, start=len(steps) - 1 if steps else None))
    return steps


@dataclass(frozen=True)
class FoldData:
    """The training sequences of one fold, cut from the corpus encoded once.

    Attributes
    ----------
    corpus : EncodedCorpus
        The fold's training sequences, with the attribute ids (and the
        ``vectorizer``) of the whole corpus.
    labels : ndarray of int32, shape (n_tokens,)
        Their label codes among ``classes``.
    classes : ndarray of int64, shape (n_fold_labels,)
        The labels that occur in the fold's training sequences, as indices
        of the labels of all the data (sorted, as the labels of a tagger
        fitted on the fold are).
    seq_weight : ndarray of float64, shape (n_sequences,)
        The training sequences' weights.
    """

    corpus: object
    labels: np.ndarray
    classes: np.ndarray
    seq_weight: np.ndarray


def fold_data(corpus, labels, n_labels, train, seq_weight):
    """The training sequences ``train`` of a corpus encoded once, labelled as a
    tagger fitted on them alone labels them.

    A label that occurs only in the held-out sequences is not among the
    fold's labels (it gets no weight, and the fold's model never predicts
    it). The attribute ids stay those of the whole corpus: an attribute that
    occurs only in the held-out sequences gets no state weight from
    CRFsuite's rules on the training sequences, except under
    ``all_possible_states``, whose weights for it meet no data and so stay
    exactly 0 from a zero start, as if they did not exist; predictions on the
    held-out sequences are those of a tagger whose vocabulary lacks it.

    Parameters
    ----------
    corpus : EncodedCorpus
        All the sequences, encoded once.
    labels : ndarray of int32, shape (n_tokens,)
        Their label codes, in ``range(n_labels)``.
    n_labels : int
        Number of labels of all the data.
    train : ndarray of int
        The training sequences' indices.
    seq_weight : ndarray of float64, shape (n_sequences,)
        The weights of all the sequences.

    Returns
    -------
    data : FoldData
    """
    train = np.asarray(train, dtype=np.int64)
    train_corpus = corpus[train]
    starts = corpus.seq_ptr[train]
    lengths = corpus.seq_ptr[train + 1] - starts
    tokens = np.repeat(starts - train_corpus.seq_ptr[:-1], lengths) + np.arange(
        train_corpus.n_tokens
    )
    train_labels = labels[tokens]
    present = np.zeros(n_labels, dtype=bool)
    present[train_labels] = True
    code = np.cumsum(present) - 1
    return FoldData(
        corpus=train_corpus,
        labels=code[train_labels].astype(np.int32),
        classes=np.flatnonzero(present),
        seq_weight=np.ascontiguousarray(seq_weight[train], dtype=np.float64),
    )
