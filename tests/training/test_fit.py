"""The fit entry point (sklearn_crf._training.fit)."""

import numpy as np
import pytest

from sklearn_crf import CRFTagger, SequenceVectorizer
from sklearn_crf._features.validation import encode_labels
from sklearn_crf._model.layout import build_layout
from sklearn_crf._training.fit import (
    training_problem,
    without_unit_values,
    without_zero_entries,
)

# "lone" is seen with value 0 only, and only with label A: CRFsuite still
# gives (lone, A) a weight
X = [[{"w": "a", "lone": 0}, {"w": "b", "up": 1.5}], [{"w": "a"}, {"up": 0, "w": "c"}]]
Y = [["A", "B"], ["A", "B"]]


def test_the_problem_keeps_no_zero_entries_but_their_layout():
    vectorizer = SequenceVectorizer()
    corpus = vectorizer.fit_encode(X)
    assert len(corpus.zero_tok) == 2
    classes, labels = encode_labels(Y, corpus.seq_ptr)
    params = CRFTagger().get_params()
    problem = training_problem(params, vectorizer, corpus, classes, labels, None)
    expected = build_layout(corpus, labels, len(classes), min_freq=0,
                            all_possible_states=False, all_possible_transitions=False)
    assert len(problem.corpus.zero_tok) == len(problem.corpus.zero_attr) == 0
    lone = vectorizer.vocabulary_["lone"]
    start, stop = problem.layout.attr_ptr[lone:lone + 2]
    assert classes[problem.layout.attr_label[start:stop]].tolist() == ["A"]
    np.testing.assert_array_equal(problem.layout.attr_ptr, expected.attr_ptr)
    np.testing.assert_array_equal(problem.layout.attr_label, expected.attr_label)
    for name in ("tok_ptr", "tok_attr", "tok_val", "seq_ptr"):
        assert getattr(problem.corpus, name) is getattr(corpus, name)


def test_without_zero_entries_keeps_nothing_of_them():
    corpus = SequenceVectorizer().fit_encode(X)
    trimmed = without_zero_entries(corpus)
    # new empty arrays, not views that would keep the old ones alive
    assert trimmed.zero_tok.base is None and trimmed.zero_attr.base is None
    assert trimmed.zero_tok.dtype == np.int64 and trimmed.zero_attr.dtype == np.int32
    assert without_zero_entries(trimmed) is trimmed


@pytest.mark.parametrize("solver, kept", [("lbfgs", False), ("l-bfgs-b", False),
                                          ("ap", True)])
def test_a_batch_problem_keeps_no_values_of_one(solver, kept):
    """Values all 1: the batch solvers' corpus has an empty tok_val (its
    objective reads it as ones), the online solvers' keeps them."""
    ones = [[{"w": "a", "up": True}, {"w": "b"}], [{"w": "a"}, {"w": "c"}]]
    vectorizer = SequenceVectorizer()
    corpus = vectorizer.fit_encode(ones)
    classes, labels = encode_labels(Y, corpus.seq_ptr)
    params = CRFTagger(solver=solver).get_params()
    problem = training_problem(params, vectorizer, corpus, classes, labels, None)
    assert (problem.corpus.tok_val is corpus.tok_val) == kept
    if not kept:
        assert problem.corpus.tok_val.shape == (0,)
        np.testing.assert_array_equal(problem.corpus.tok_attr, corpus.tok_attr)


def test_without_unit_values_keeps_values_other_than_one():
    corpus = SequenceVectorizer().fit_encode(X)  # a value of 1.5
    assert without_unit_values(corpus) is corpus
    ones = without_unit_values(SequenceVectorizer().fit_encode([[{"w": "a"}]]))
    assert ones.tok_val.shape == (0,) and without_unit_values(ones) is ones
