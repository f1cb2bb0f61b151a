"""Effect of CRFTagger's hashing option on CoNLL-2002 Spanish NER (issue 4).

Fits CRFTagger with the vocabulary (``hashing=None``) and with attribute names
hashed into 2**14 ... 2**20 slots, on esp.train with the sklearn-crfsuite
tutorial features (c1 = c2 = 0.1, 100 iterations, all possible transitions),
and reports the number of columns and parameters, fit time, peak RSS growth of
the fit and entity-level F1 on esp.testb::

    python benchmarks/bench_hashing.py
    python benchmarks/bench_hashing.py --slots 16 18 20 --n-train 2000
"""

import argparse
import os
import resource
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _workloads as wl  # noqa: E402

wl.limit_blas_threads(os.environ)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, nargs="+", default=[14, 16, 18, 20],
                        help="log2 of the slot counts to try (default: 14 16 18 20)")
    parser.add_argument("--n-train", type=int, default=None)
    parser.add_argument("--max-iter", type=int, default=100)
    args = parser.parse_args()

    from sklearn.exceptions import ConvergenceWarning

    from sklearn_crf import CRFTagger
    from sklearn_crf.metrics import entity_f1_score

    corpus = wl.load_ner(n_train=args.n_train)
    print(f"command: {' '.join(sys.argv)}")
    print(f"esp.train: {len(corpus.X_train)} sentences; esp.testb: {len(corpus.X_test)}")
    print("| hashing | columns | parameters | fit (s) | entity F1 (esp.testb) |")
    print("|---|---:|---:|---:|---:|")
    for slots in [None] + [2**k for k in args.slots]:
        crf = CRFTagger(c1=0.1, c2=0.1, max_iter=args.max_iter,
                        all_possible_transitions=True, hashing=slots)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(corpus.X_train, corpus.y_train)
        fit_time = time.perf_counter() - start
        f1 = entity_f1_score(corpus.y_test, crf.predict(corpus.X_test))
        name = "vocabulary" if slots is None else f"2**{slots.bit_length() - 1}"
        print(f"| {name} | {crf.vectorizer_.n_attributes_:,} | {crf.coef_.size:,} | "
              f"{fit_time:.1f} | {f1:.4f} |", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the whole run: {peak:.0f} MB")


if __name__ == "__main__":
    main()
