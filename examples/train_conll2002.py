"""Train a CRF named-entity tagger on CoNLL-2002 Spanish and evaluate it
=====================================================================

The features are the classic sklearn-crfsuite tutorial ones (what
``SequenceFeaturizer()`` produces by default): lower-cased word, 2- and
3-letter suffixes, isupper/istitle/isdigit, the same flags for the previous and
next word, BOS/EOS and a bias. c1 = c2 = 0.1 and all possible transitions, the
settings of sklearn-crfsuite's tutorial; the solver runs until CRFTagger's
stopping rule is met (no ``ConvergenceWarning``). ``--max-iter 100`` is the
fixed budget of the side-by-side benchmark against sklearn-crfsuite: the
warning then says, rightly, that the rule was not met.

Run it (``--help`` lists the flags and their defaults)::

    python examples/train_conll2002.py                # the whole training set
    python examples/train_conll2002.py --n-train 500  # a quick run on a subset
"""

import argparse
import logging
import time

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import (
    entity_classification_report,
    entity_f1_score,
    flat_f1_score,
)


def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--n-train", type=int, default=None, help="first N training sentences, all if not given")
    parser.add_argument("--n-test", type=int, default=None, help="first N test sentences, all if not given")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="stop after this many iterations (None: CRFTagger's default, "
                             "stop when the stopping rule is met)")
    parser.add_argument("--verbose", action="store_true", help="log every iteration")
    args = parser.parse_args()
    # the library logs (INFO): with this, a first run says when it compiles the
    # numba kernels, and --verbose shows every iteration
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    train = load_conll2002("train", n_sentences=args.n_train)
    test = load_conll2002("testb", n_sentences=args.n_test)
    featurizer = SequenceFeaturizer()
    X_train = featurizer.transform(train.sentences)
    X_test = featurizer.transform(test.sentences)
    print(f"train: {len(X_train)} sentences, test (esp.testb): {len(X_test)} sentences")

    crf = CRFTagger(
        c1=0.1, c2=0.1, max_iter=args.max_iter, all_possible_transitions=True,
        verbose=args.verbose,
    )
    print(f"fitting {crf!r} ...", flush=True)
    start = time.perf_counter()
    crf.fit(X_train, train.tags)
    fit_time = time.perf_counter() - start

    start = time.perf_counter()
    y_pred = crf.predict(X_test)
    predict_time = time.perf_counter() - start

    labels = [c for c in crf.classes_.tolist() if c != "O"]
    entity_f1 = entity_f1_score(test.tags, y_pred)
    token_f1 = flat_f1_score(test.tags, y_pred, average="weighted", labels=labels)
    n_active = int((crf.coef_ != 0).sum())
    print(f"fit: {fit_time:.1f} s, {crf.n_iter_} iterations, "
          f"{n_active} of {crf.coef_.size} weights non-zero")
    print(f"predict: {predict_time:.2f} s")
    print(f"entity-level F1 (esp.testb): {entity_f1:.4f}")
    print(f"token F1 (weighted, without O): {token_f1:.4f}")
    print(entity_classification_report(test.tags, y_pred, digits=3))


if __name__ == "__main__":
    main()
