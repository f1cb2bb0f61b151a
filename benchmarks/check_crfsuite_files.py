"""CRFsuite model files on the full CoNLL-2002 data: import, compare, export.

python-crfsuite trains on esp.train (lbfgs, c1 = c2 = 0.1, 100 iterations by
default); ``load_crfsuite`` imports the model; Viterbi labels and marginals over
esp.testb are compared with python-crfsuite's ``Tagger`` on the same file; the
tagger is exported with ``save_crfsuite`` and python-crfsuite tags esp.testb
with the exported file; load -> save -> load is checked for bitwise stability.

    python benchmarks/check_crfsuite_files.py [--max-iter 100] [--c1 0.1] [--c2 0.1] [--n-train N]
"""

import argparse
import os
import tempfile
import time

import numpy as np
import pycrfsuite

from sklearn_crf import SequenceFeaturizer, load_crfsuite, save_crfsuite
from sklearn_crf.datasets import load_conll2002


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--c1", type=float, default=0.1)
    parser.add_argument("--c2", type=float, default=0.1)
    parser.add_argument("--n-train", type=int, default=None, help="default: all of esp.train")
    args = parser.parse_args()

    featurizer = SequenceFeaturizer()
    train = load_conll2002("train")
    test = load_conll2002("testb")
    n = args.n_train or len(train.sentences)
    X = featurizer.transform(train.sentences[:n])
    y = train.tags[:n]
    X_test = featurizer.transform(test.sentences)
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "esp.crfsuite")

    t0 = time.perf_counter()
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params({"c1": args.c1, "c2": args.c2, "max_iterations": args.max_iter})
    trainer.train(path)
    print(f"pycrfsuite trained on {n} sentences, c1={args.c1}, c2={args.c2}, "
          f"{args.max_iter} iterations: "
          f"{time.perf_counter() - t0:.1f} s, model file {os.path.getsize(path)} bytes")

    t0 = time.perf_counter()
    crf = load_crfsuite(path)
    print(f"load_crfsuite: {time.perf_counter() - t0:.3f} s; {len(crf.classes_)} labels, "
          f"{len(crf.vectorizer_.feature_names_)} attributes, {crf.layout_.n_state} state "
          f"and {len(crf.layout_.trans_from)} transition weights")

    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    labels = crf.classes_.tolist()
    ref_tags, ref_marg = [], []
    for xseq in X_test:
        ref_tags.append(tagger.tag(xseq))
        ref_marg.append([[tagger.marginal(lab, t) for lab in labels] for t in range(len(xseq))])
    pred = crf.predict(X_test)
    marg = crf.predict_marginals(X_test)
    n_tokens = sum(len(s) for s in X_test)
    same_seq = sum(a == b for a, b in zip(pred, ref_tags))
    diff = max(
        abs(m[lab] - r[k])
        for ms, rs in zip(marg, ref_marg) for m, r in zip(ms, rs) for k, lab in enumerate(labels)
    )
    print(f"esp.testb: {len(X_test)} sentences, {n_tokens} tokens; Viterbi labels identical "
          f"in {same_seq}/{len(X_test)} sentences; max |marginal - Tagger.marginal| = {diff:.3e}")

    out = os.path.join(tmp, "exported.crfsuite")
    t0 = time.perf_counter()
    save_crfsuite(crf, out)
    print(f"save_crfsuite: {time.perf_counter() - t0:.3f} s, {os.path.getsize(out)} bytes")
    back = pycrfsuite.Tagger()
    back.open(out)
    exported_tags = [back.tag(xseq) for xseq in X_test]
    same = sum(a == b for a, b in zip(exported_tags, ref_tags))
    print(f"python-crfsuite on the exported file: identical labels in {same}/{len(X_test)} "
          "sentences of esp.testb")

    again = load_crfsuite(out)
    out2 = os.path.join(tmp, "exported2.crfsuite")
    save_crfsuite(again, out2)
    with open(out, "rb") as f1, open(out2, "rb") as f2:
        same_bytes = f1.read() == f2.read()
    same_coef = again.coef_.tobytes() == crf.coef_.tobytes()
    print(f"load -> save -> load: file bytes identical {same_bytes}, coef_ bitwise "
          f"identical {same_coef}")
    state = crf.state_features_
    dumped = tagger.info().state_features
    print(f"sklearn-crfsuite-style 6-decimal dump vs imported float64 weights: max "
          f"difference {max(abs(dumped[k] - state[k]) for k in state):.2e}")
    assert same_seq == len(X_test) and diff <= 1e-12 and same == len(X_test)
    assert same_bytes and same_coef
    np.testing.assert_array_equal(again.coef_, crf.coef_)


if __name__ == "__main__":
    main()
