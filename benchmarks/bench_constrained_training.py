"""IOB2 constraints in training too (``constrain_training=True``) on CoNLL-2002
Spanish NER: entity F1 on esp.testb and fit times.

Fits the quickstart model (``SequenceFeaturizer()``, ``CRFTagger(c1=0.1,
c2=0.1, max_iter=100, all_possible_transitions=True,
transition_constraints="IOB2")``) on esp.train twice, with and without
``constrain_training``, and reports the fit times, the iterations, and the
entity F1 on esp.testb of each (both decoded under the IOB2 constraints), and
the time of one evaluation of each objective at w = 0.

    python benchmarks/bench_constrained_training.py                 # the full run
    python benchmarks/bench_constrained_training.py --n-train 500 --max-iter 20
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=None)
    parser.add_argument("--n-test", type=int, default=None)
    parser.add_argument("--max-iter", type=int, default=100)
    args = parser.parse_args()

    train = load_conll2002("train", n_sentences=args.n_train)
    test = load_conll2002("testb", n_sentences=args.n_test)
    featurizer = SequenceFeaturizer()
    X_train = featurizer.transform(train.sentences)
    X_test = featurizer.transform(test.sentences)
    print(f"train: {len(X_train)} sentences; esp.testb: {len(X_test)} sentences")

    results = {}
    for constrain in (False, True):
        crf = CRFTagger(
            c1=0.1, c2=0.1, max_iter=args.max_iter, all_possible_transitions=True,
            transition_constraints="IOB2", constrain_training=constrain,
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(X_train, train.tags)
        elapsed = time.perf_counter() - start
        f1 = entity_f1_score(test.tags, crf.predict(X_test))
        results[constrain] = crf
        print(f"constrain_training={constrain!s:5}  fit {elapsed:7.1f} s  "
              f"{crf.n_iter_} iterations  loss {crf.loss_:.1f}  "
              f"entity F1 (IOB2 at decode) {f1:.4f}")
    free = results[False]
    f1 = entity_f1_score(
        test.tags, free.set_params(transition_constraints=None).predict(X_test)
    )
    print(f"constrain_training=False, no constraints at decode: entity F1 {f1:.4f}")

    # one objective evaluation each, at w = 0, on the training data
    from sklearn_crf._model.constraints import build_constraints
    from sklearn_crf._training.objective import ConstrainedCRFObjective, CRFObjective
    from sklearn_crf._engine.threads import n_threads as _n_threads

    crf = results[True]
    corpus = crf.vectorizer_.encode(X_train)
    index = {label: i for i, label in enumerate(crf.classes_.tolist())}
    labels = np.array([index[t] for seq in train.tags for t in seq], dtype=np.int32)
    weight = np.ones(corpus.n_sequences)
    with _n_threads(None, corpus.n_tokens) as n:
        objectives = {
            "ordinary": CRFObjective(corpus, crf.layout_, labels, weight, c2=0.1,
                                     n_chunks=n),
            "constrained": ConstrainedCRFObjective(
                corpus, crf.layout_, labels, weight, c2=0.1,
                masks=build_constraints("IOB2", crf.classes_.tolist()), n_chunks=n,
            ),
        }
        w = np.zeros(crf.layout_.n_params)
        for name, objective in objectives.items():
            objective(w)  # compile
            times = []
            for _ in range(3):
                start = time.perf_counter()
                objective(w)
                times.append(time.perf_counter() - start)
            print(f"one evaluation, {name} objective: {min(times) * 1000:.0f} ms "
                  "(best of 3)")


if __name__ == "__main__":
    main()
