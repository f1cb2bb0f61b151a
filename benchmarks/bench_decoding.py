"""Decoding beyond one best path on CoNLL-2002 Spanish NER (esp.testb).

Fits the quickstart model (``SequenceFeaturizer()``, ``CRFTagger(c1=0.1,
c2=0.1, max_iter=100, all_possible_transitions=True)``) on esp.train and
reports, on esp.testb:

* the entity spans of unconstrained Viterbi that are invalid in IOB2 (read by
  the default, conlleval, rules but not by seqeval's strict IOB2 mode) and the
  sentences that contain one;
* entity F1 without constraints and with ``transition_constraints="IOB2"`` at
  decode time (Viterbi and posterior decoders);
* the oracle entity F1 of the n-best lists at n = 1, 5, 10 (per sentence the
  candidate with the most correct entities, then the fewest predicted ones,
  then the most probable);
* the times of ``predict_nbest(n=10)`` and ``predict_entities`` relative to
  ``predict`` (best of ``--repeats`` runs, features computed beforehand);
* a calibration table of the entity confidences of ``predict_entities``.

    python benchmarks/bench_decoding.py                   # the full run
    python benchmarks/bench_decoding.py --n-train 500 --max-iter 20   # quick
"""

import argparse
import copy
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score, get_entities


def with_params(crf, **params):
    """A copy of the fitted tagger with other decode-time parameters."""
    other = copy.deepcopy(crf)
    other.set_params(**params)
    return other


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def invalid_spans(y_pred):
    """Entities of the default reading that strict IOB2 does not read, and the
    number of sentences with at least one."""
    spans = sentences = 0
    for labels in y_pred:
        lenient = set(get_entities(labels))
        strict = set(get_entities(labels, mode="strict", scheme="IOB2"))
        bad = len(lenient - strict)
        spans += bad
        sentences += bad > 0
    return spans, sentences


def oracle(nbest, y_true, n):
    """Per sentence the candidate (among the first n) with the most correct
    entities, then the fewest predicted, then the most probable."""
    chosen = []
    for candidates, gold in zip(nbest, y_true):
        gold_entities = set(get_entities(gold))
        best, best_key = None, None
        for rank, (labels, _) in enumerate(candidates[:n]):
            pred = set(get_entities(labels))
            key = (len(pred & gold_entities), -len(pred), -rank)
            if best_key is None or key > best_key:
                best, best_key = labels, key
        chosen.append(best)
    return entity_f1_score(y_true, chosen)


def calibration(entities, y_true, edges):
    gold = [set(get_entities(t)) for t in y_true]
    conf, correct = [], []
    for ents, g in zip(entities, gold):
        for type_, a, b, p in ents:
            conf.append(p)
            correct.append((type_, a, b) in g)
    conf = np.array(conf)
    correct = np.array(correct, dtype=float)
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf >= lo) & ((conf < hi) if hi < 1 else (conf <= hi))
        if inside.any():
            rows.append((lo, hi, int(inside.sum()), conf[inside].mean(), correct[inside].mean()))
        else:
            rows.append((lo, hi, 0, np.nan, np.nan))
    ece = sum(r[2] * abs(r[3] - r[4]) for r in rows if r[2]) / max(len(conf), 1)
    return rows, ece, len(conf)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=None)
    parser.add_argument("--n-test", type=int, default=None)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    train = load_conll2002("train", n_sentences=args.n_train)
    test = load_conll2002("testb", n_sentences=args.n_test)
    featurizer = SequenceFeaturizer()
    X_train = featurizer.transform(train.sentences)
    X_test = featurizer.transform(test.sentences)
    y_test = test.tags
    print(f"train: {len(X_train)} sentences; esp.testb: {len(X_test)} sentences, "
          f"{sum(map(len, y_test))} tokens, "
          f"{sum(len(get_entities(t)) for t in y_test)} gold entities")

    crf = CRFTagger(c1=0.1, c2=0.1, max_iter=args.max_iter, all_possible_transitions=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf.fit(X_train, train.tags)
    print(f"fit: {time.perf_counter() - start:.1f} s, {crf.n_iter_} iterations")

    iob2 = with_params(crf, transition_constraints="IOB2")
    iob2_post = with_params(crf, transition_constraints="IOB2", decoder="posterior")
    free_post = with_params(crf, decoder="posterior")

    y_free = crf.predict(X_test)
    y_iob2 = iob2.predict(X_test)
    spans, sentences = invalid_spans(y_free)
    print(f"\nunconstrained Viterbi: {spans} invalid IOB2 entity spans in "
          f"{sentences} sentences (constrained: {invalid_spans(y_iob2)[0]})")
    print("\nentity F1 (esp.testb)")
    print(f"  no constraints, Viterbi      {entity_f1_score(y_test, y_free):.4f}")
    print(f"  IOB2 at decode, Viterbi      {entity_f1_score(y_test, y_iob2):.4f}")
    for name, tagger in (("no constraints", free_post), ("IOB2 at decode", iob2_post)):
        print(f"  {name}, posterior    {entity_f1_score(y_test, tagger.predict(X_test)):.4f}")
    print("  IOB2 in training too         (see bench_constrained_training.py)")

    print("\noracle entity F1 of the n-best lists")
    for name, tagger in (("no constraints", crf), ("IOB2 at decode", iob2)):
        nbest = tagger.predict_nbest(X_test, n=10)
        figures = "  ".join(f"n={n}: {oracle(nbest, y_test, n):.4f}" for n in (1, 5, 10))
        print(f"  {name:16s} {figures}")

    t_predict = best_time(lambda: crf.predict(X_test), args.repeats)
    t_nbest = best_time(lambda: crf.predict_nbest(X_test, n=10), args.repeats)
    t_ent = best_time(lambda: crf.predict_entities(X_test), args.repeats)
    t_predict_c = best_time(lambda: iob2.predict(X_test), args.repeats)
    t_nbest_c = best_time(lambda: iob2.predict_nbest(X_test, n=10), args.repeats)
    t_ent_c = best_time(lambda: iob2.predict_entities(X_test), args.repeats)
    print(f"\ntimes, best of {args.repeats} (features computed beforehand)")
    print(f"  {'':16s} {'predict':>10s} {'nbest(10)':>16s} {'entities':>16s}")
    for name, a, b, c in (("no constraints", t_predict, t_nbest, t_ent),
                          ("IOB2 at decode", t_predict_c, t_nbest_c, t_ent_c)):
        print(f"  {name:16s} {a:9.3f}s {b:8.3f}s ({b / a:4.1f}x) {c:8.3f}s ({c / a:4.1f}x)")

    edges = [0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0]
    for name, tagger in (("no constraints", crf), ("IOB2 at decode", iob2)):
        rows, ece, total = calibration(tagger.predict_entities(X_test), y_test, edges)
        print(f"\ncalibration of predict_entities confidences ({name}, {total} entities, "
              f"expected calibration error {ece:.3f})")
        print("  | confidence | entities | mean confidence | fraction correct |")
        print("  |---|---|---|---|")
        for lo, hi, count, mean_conf, frac in rows:
            print(f"  | {lo:.2f}-{hi:.2f} | {count} | {mean_conf:.3f} | {frac:.3f} |")


if __name__ == "__main__":
    main()
