"""Early stopping on CoNLL-2002 Spanish NER against a fixed 100 iterations.

The model is the benchmark's (``SequenceFeaturizer()`` features,
``CRFTagger(c1=0.1, c2=0.1, all_possible_transitions=True)``), trained on
esp.train and evaluated (entity-level F1) on esp.testb. Runs:

  fixed100      max_iter=100 (the default tol rule does not stop it before)
  split/<score> early_stopping=True on a random 10% of esp.train
                (validation_fraction=0.1, random_state=0): trains on the other 90%
  testa/<score> early_stopping=True on esp.testa given as X_val: trains on all
                of esp.train

``<score>`` is the validation score: ``loss`` (minus the validation NLL per
token, ``validation_scoring=None``) and ``entity_f1``. Every early-stopped fit
has max_iter=1000 and n_iter_no_change=10, so the loss rule (tol=1e-3) may stop
it first. For each run the script prints the iterations run, the best
iteration (the weights kept), the fit wall time and the entity F1 on esp.testb.

    python benchmarks/bench_early_stopping.py                 # all runs
    python benchmarks/bench_early_stopping.py --n-train 2000  # a quicker look
    python benchmarks/bench_early_stopping.py --only fixed100,testa/loss
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score

RUNS = ("fixed100", "split/loss", "split/entity_f1", "testa/loss", "testa/entity_f1")
MODEL = dict(c1=0.1, c2=0.1, all_possible_transitions=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=None,
                        help="train on the first N sentences of esp.train only")
    parser.add_argument("--only", default=",".join(RUNS),
                        help=f"comma-separated runs among {', '.join(RUNS)}")
    parser.add_argument("--n-iter-no-change", type=int, default=10)
    args = parser.parse_args(argv)
    runs = args.only.split(",")
    unknown = sorted(set(runs) - set(RUNS))
    if unknown:
        parser.error(f"unknown runs {unknown}; choose among {list(RUNS)}")

    print("$", " ".join([os.path.basename(sys.executable)] + sys.argv))
    print(time.strftime("%Y-%m-%d %H:%M:%S"), f"nproc={os.cpu_count()}",
          "load average %.2f %.2f %.2f" % os.getloadavg())
    featurizer = SequenceFeaturizer()
    train = load_conll2002("train", n_sentences=args.n_train)
    testa = load_conll2002("testa")
    testb = load_conll2002("testb")
    X_train = featurizer.transform(train.sentences)
    X_testa = featurizer.transform(testa.sentences)
    X_testb = featurizer.transform(testb.sentences)
    print(f"esp.train {len(X_train)} sentences, esp.testa {len(X_testa)}, "
          f"esp.testb {len(X_testb)}")
    print(f"{'run':<18}{'iterations':>11}{'best':>6}{'fit s':>9}{'F1 testb':>10}")
    for run in runs:
        if run == "fixed100":
            crf = CRFTagger(**MODEL, max_iter=100)
            fit_kwargs = {}
        else:
            where, score = run.split("/")
            crf = CRFTagger(
                **MODEL, early_stopping=True, n_iter_no_change=args.n_iter_no_change,
                validation_scoring=None if score == "loss" else score,
                validation_fraction=0.1, random_state=0,
            )
            fit_kwargs = dict(X_val=X_testa, y_val=testa.tags) if where == "testa" else {}
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(X_train, train.tags, **fit_kwargs)
        seconds = time.perf_counter() - start
        f1 = entity_f1_score(testb.tags, crf.predict(X_testb))
        best = "-" if crf.best_iteration_ is None else str(crf.best_iteration_)
        print(f"{run:<18}{crf.n_iter_:>11}{best:>6}{seconds:>9.1f}{f1:>10.4f}", flush=True)
        if crf.validation_scores_ is not None:
            curve = np.round(crf.validation_scores_, 4)
            print(f"  validation scores every 10th iteration: {curve[::10].tolist()}")


if __name__ == "__main__":
    main()
