"""Tune a CRF named-entity tagger on CoNLL-2002 Spanish with a randomized search
=============================================================================

The model is a pipeline ``SequenceFeaturizer -> CRFTagger`` fitted on the raw
tokens. ``RandomizedSearchCV`` draws ``c1`` and ``c2`` from log-uniform
distributions and the featurizer's context ``window`` from {0, 1, 2}, scores
every candidate by entity-level F1 (``sklearn_crf.metrics.get_scorer``) with
3-fold cross-validation on esp.train, refits the best pipeline on all of
esp.train and evaluates it on esp.testb.

Run it (``--help`` lists the flags and their defaults)::

    python examples/model_selection_conll2002.py                 # all of esp.train
    python examples/model_selection_conll2002.py --n-train 3000 --n-iter 6
    python examples/model_selection_conll2002.py --by-document   # GroupKFold by article
"""

import argparse
import time
import warnings

import numpy as np
from scipy.stats import loguniform
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold, KFold, RandomizedSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_classification_report, entity_f1_score, get_scorer




def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--n-train", type=int, default=None, help="first N training sentences, all if not given")
    parser.add_argument("--n-test", type=int, default=None, help="first N test sentences, all if not given")
    parser.add_argument("--n-iter", type=int, default=10, help="candidates to sample")
    parser.add_argument("--max-iter", type=int, default=100, help="CRF iterations per fit")
    parser.add_argument("--cv", type=int, default=3, help="number of folds")
    parser.add_argument("--n-jobs", type=int, default=-1, help="parallel fits (processes)")
    parser.add_argument("--by-document", action="store_true",
                        help="GroupKFold by news article instead of KFold")
    parser.add_argument("--random-state", type=int, default=0,
                        help="seed of the sampled candidates")
    args = parser.parse_args()

    train = load_conll2002("train", n_sentences=args.n_train)
    test = load_conll2002("testb", n_sentences=args.n_test)
    print(f"train (esp.train): {len(train.sentences)} sentences, "
          f"test (esp.testb): {len(test.sentences)} sentences")

    pipe = make_pipeline(
        SequenceFeaturizer(),
        CRFTagger(max_iter=args.max_iter, all_possible_transitions=True),
    )
    distributions = {
        "crftagger__c1": loguniform(1e-3, 1.0),
        "crftagger__c2": loguniform(1e-3, 1.0),
        "sequencefeaturizer__window": [0, 1, 2],
    }
    if args.by_document:
        groups = train.documents
        cv = GroupKFold(n_splits=args.cv)
        split = f"GroupKFold({args.cv}) over {len(np.unique(groups))} articles"
    else:
        groups, cv = None, KFold(n_splits=args.cv)
        split = f"KFold({args.cv})"
    search = RandomizedSearchCV(
        pipe,
        distributions,
        n_iter=args.n_iter,
        cv=cv,
        scoring={
            "entity_f1": get_scorer("entity_f1"),
            "token_accuracy": get_scorer("flat_accuracy"),
        },
        refit="entity_f1",
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        error_score="raise",
        verbose=2,  # one line per fit: the search's progress
    )
    print(f"searching {args.n_iter} candidates x {split} "
          f"({args.max_iter} iterations per fit, n_jobs={args.n_jobs}) ...", flush=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # --max-iter is a fixed budget (the published figures'), not convergence: silenced on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(train.sentences, train.tags, groups=groups)
    search_time = time.perf_counter() - start

    res = search.cv_results_
    print(f"search: {search_time:.1f} s (including the refit of the best candidate)\n")
    print(f"{'rank':>4}  {'c1':>8}  {'c2':>8}  {'window':>6}  "
          f"{'entity F1 (cv)':>16}  {'token acc (cv)':>14}  {'fit s':>6}")
    for i in np.argsort(res["rank_test_entity_f1"], kind="stable"):
        print(
            f"{res['rank_test_entity_f1'][i]:>4}  "
            f"{res['param_crftagger__c1'][i]:>8.4f}  "
            f"{res['param_crftagger__c2'][i]:>8.4f}  "
            f"{res['param_sequencefeaturizer__window'][i]:>6}  "
            f"{res['mean_test_entity_f1'][i]:>8.4f} ± {res['std_test_entity_f1'][i]:.4f}  "
            f"{res['mean_test_token_accuracy'][i]:>14.4f}  "
            f"{res['mean_fit_time'][i]:>6.1f}"
        )

    best = search.best_params_
    print(
        "\nbest parameters: "
        f"c1={best['crftagger__c1']:.4g}, c2={best['crftagger__c2']:.4g}, "
        f"window={best['sequencefeaturizer__window']}"
    )
    print(f"best cross-validated entity F1: {search.best_score_:.4f}")
    crf = search.best_estimator_[-1]
    print(f"refit on esp.train: {search.refit_time_:.1f} s, {crf.n_iter_} iterations, "
          f"{len(crf.state_features_)} non-zero state features")

    y_pred = search.predict(test.sentences)
    print(f"entity-level F1 (esp.testb): {entity_f1_score(test.tags, y_pred):.4f}")
    print(entity_classification_report(test.tags, y_pred, digits=3))


if __name__ == "__main__":
    main()
