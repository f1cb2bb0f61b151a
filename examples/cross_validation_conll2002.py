"""Cross-validate a CRF NER tagger by news article and analyse its out-of-fold errors
==================================================================================

CoNLL-2002 sentences come from news articles; sentences of one article share
names, so a random split leaks them between training and test folds.
``GroupKFold`` with ``groups=train.documents`` keeps each article on one side.
``sklearn_crf.model_selection.cross_val_predict`` returns, for every sentence,
the labels predicted by the model of the fold that did not see its article
(scikit-learn's own ``cross_val_predict`` fails on label sequences). The
script scores each fold, then analyses the out-of-fold errors: per-type
scores, a confusion of entity types (same span, other type), boundary errors,
missed and spurious entities, the most frequent errors and the most frequent
token label confusions.

Run it (``--help`` lists the flags and their defaults)::

    python examples/cross_validation_conll2002.py                  # all of esp.train
    python examples/cross_validation_conll2002.py --n-train 2000 --max-iter 50

On all of esp.train (one 2-core machine shared with other jobs, so the times are high), an excerpt::

    $ python examples/cross_validation_conll2002.py
    esp.train: 8323 sentences from 654 articles, GroupKFold(3) by article
    cross_val_predict: 264.3 s (100 iterations per fit)

    fold 0:  2775 sentences, 218 articles, entity F1 0.7725
    fold 1:  2774 sentences, 218 articles, entity F1 0.7620
    fold 2:  2774 sentences, 218 articles, entity F1 0.7564
    mean entity F1 over folds: 0.7636 ± 0.0067
    [... out-of-fold entity_classification_report ...]
    18798 true entities: 14056 correct, 2602 type, 1472 boundary, 668 missed; 230 spurious predicted entities

    entity type confusion (rows: true type, columns: predicted type; same span)
                     LOC     MISC      ORG      PER (missed)
            LOC     3742       49      421      186       57
           MISC      102      949      375       91      238
            ORG      570      152     5815      226      194
            PER      282       16      132     3550      179
     (spurious)       32       46      130       22

    10 most frequent entity errors (kind, text, true type -> predicted):
       23  type      'España': ORG -> LOC
       21  type      'Francia': ORG -> LOC
       16  spurious  'EFE': - -> ORG
       15  type      'China': LOC -> ORG
    [...]
    token errors: 9385 of 264715 tokens; most frequent (true -> predicted):
      801  I-MISC -> O
      616  O -> I-MISC
      590  B-ORG -> B-LOC
    [...]
"""

import argparse
import time
import warnings
from collections import Counter

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_classification_report, entity_f1_score, get_entities
from sklearn_crf.model_selection import cross_val_predict

MISSED, SPURIOUS = "(missed)", "(spurious)"


def classify_entities(true_entities, pred_entities):
    """Match one sentence's true and predicted entities.

    Returns a list of ``(kind, true_entity, pred_entity)`` with kind one of
    "correct", "type" (same span, other type), "boundary" (overlapping spans
    that differ), "missed" and "spurious"; the missing side is None.
    """
    def overlaps(a, b):
        return a[1] < b[2] and b[1] < a[2]

    outcome = []
    pred_by_span = {(start, end): kind for kind, start, end in pred_entities}
    for entity in true_entities:
        span = entity[1:]
        if span in pred_by_span:
            pred = (pred_by_span[span], *span)
            outcome.append(("correct" if pred == entity else "type", entity, pred))
            continue
        overlapping = [p for p in pred_entities if overlaps(entity, p)]
        if overlapping:
            outcome.append(("boundary", entity, overlapping[0]))
        else:
            outcome.append(("missed", entity, None))
    true_spans = {entity[1:] for entity in true_entities}
    for pred in pred_entities:
        if pred[1:] not in true_spans and not any(overlaps(pred, t) for t in true_entities):
            outcome.append(("spurious", None, pred))
    return outcome


def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--n-train", type=int, default=None, help="first N training sentences, all if not given")
    parser.add_argument("--max-iter", type=int, default=100, help="CRF iterations per fit")
    parser.add_argument("--cv", type=int, default=3, help="number of folds (GroupKFold)")
    parser.add_argument("--n-jobs", type=int, default=1, help="folds fitted in parallel")
    parser.add_argument("--top", type=int, default=10, help="most frequent errors to list")
    args = parser.parse_args()

    train = load_conll2002("train", n_sentences=args.n_train)
    groups = train.documents
    cv = GroupKFold(n_splits=args.cv)
    print(f"esp.train: {len(train.sentences)} sentences from {len(np.unique(groups))} "
          f"articles, GroupKFold({args.cv}) by article")

    pipe = make_pipeline(
        SequenceFeaturizer(),
        CRFTagger(c1=0.1, c2=0.1, max_iter=args.max_iter, all_possible_transitions=True),
    )
    print(f"cross_val_predict: {args.cv} fits of {args.max_iter} iterations on "
          f"{len(train.sentences) * (args.cv - 1) // args.cv} sentences each ...", flush=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # --max-iter is a fixed budget (the published figures'), not convergence: silenced on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        y_oof = cross_val_predict(
            pipe, train.sentences, train.tags, groups=groups, cv=cv, n_jobs=args.n_jobs
        )
    print(f"cross_val_predict: {time.perf_counter() - start:.1f} s "
          f"({args.max_iter} iterations per fit)\n")

    # the same folds again (GroupKFold is deterministic): each fold's score
    fold_scores = []
    for fold, (_, test_idx) in enumerate(cv.split(train.sentences, train.tags, groups)):
        score = entity_f1_score([train.tags[i] for i in test_idx], [y_oof[i] for i in test_idx])
        fold_scores.append(score)
        print(f"fold {fold}: {len(test_idx):5d} sentences, "
              f"{len(np.unique(groups[test_idx])):3d} articles, entity F1 {score:.4f}")
    print(f"mean entity F1 over folds: {np.mean(fold_scores):.4f} ± {np.std(fold_scores):.4f}\n")

    print("out-of-fold entity scores per type:")
    print(entity_classification_report(train.tags, y_oof, digits=3))

    outcomes = Counter()
    confusion = Counter()
    errors = Counter()
    for tokens, y_true, y_pred in zip(train.sentences, train.tags, y_oof):
        for kind, true, pred in classify_entities(get_entities(y_true), get_entities(y_pred)):
            outcomes[kind] += 1
            if kind in ("correct", "type"):
                confusion[true[0], pred[0]] += 1
            elif kind == "missed":
                confusion[true[0], MISSED] += 1
            elif kind == "spurious":
                confusion[SPURIOUS, pred[0]] += 1
            if kind != "correct":
                entity = true if true is not None else pred
                text = " ".join(tokens[entity[1]:entity[2]])
                shown_pred = "-" if pred is None else (
                    f"{pred[0]} '{' '.join(tokens[pred[1]:pred[2]])}'" if kind == "boundary"
                    else pred[0])
                errors[kind, text, "-" if true is None else true[0], shown_pred] += 1

    n_true = sum(n for kind, n in outcomes.items() if kind != "spurious")
    print(f"{n_true} true entities: " + ", ".join(
        f"{outcomes[k]} {k}" for k in ("correct", "type", "boundary", "missed")
    ) + f"; {outcomes['spurious']} spurious predicted entities")

    types = sorted({t for t, _ in confusion if t != SPURIOUS})
    rows, cols = types + [SPURIOUS], types + [MISSED]
    print("\nentity type confusion (rows: true type, columns: predicted type; same span)")
    width = max(len(c) for c in cols) + 1
    print(" " * 11 + "".join(f"{c:>{width}}" for c in cols))
    for r in rows:
        print(f"{r:>11}" + "".join(
            f"{'' if (r, c) == (SPURIOUS, MISSED) else confusion[r, c]:>{width}}" for c in cols))

    print(f"\n{args.top} most frequent entity errors (kind, text, true type -> predicted):")
    for (kind, text, true, pred), count in errors.most_common(args.top):
        print(f"{count:5d}  {kind:<9} {text!r}: {true} -> {pred}")

    token_errors = Counter(
        (t, p) for y_true, y_pred in zip(train.tags, y_oof)
        for t, p in zip(y_true, y_pred) if t != p
    )
    n_tokens = sum(len(y) for y in train.tags)
    print(f"\ntoken errors: {sum(token_errors.values())} of {n_tokens} tokens; "
          f"most frequent (true -> predicted):")
    for (t, p), count in token_errors.most_common(args.top):
        print(f"{count:5d}  {t} -> {p}")


if __name__ == "__main__":
    main()
