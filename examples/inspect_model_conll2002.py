"""Inspect a CRF NER tagger trained on CoNLL-2002 Spanish: what did it learn?
==========================================================================

Fits the quick start's tagger (L1 + L2, so many weights are exactly zero),
then prints:

* how many weights L1 kept, overall and per feature template (the part of an
  attribute name before ":", e.g. ``word.lower()`` or ``-1:word.istitle()``);
* ``crf.top_features(n)``: for each label, the attributes with the largest
  positive and the most negative weights;
* ``crf.transition_matrix_``: the weight of each label followed by each label
  (rows: from, columns: to), and the strongest and weakest transitions from
  ``crf.transition_features_``.

Run it (``--help`` lists the flags and their defaults)::

    python examples/inspect_model_conll2002.py                 # all of esp.train
    python examples/inspect_model_conll2002.py --n-train 2000 --labels B-PER I-PER

On all of esp.train, an excerpt::

    $ python examples/inspect_model_conll2002.py
    fitted on 8323 sentences: c1=0.1, c2=0.1, 100 iterations
    76386 attributes seen, 16961 with a non-zero weight; 26885 non-zero state weights, 79 non-zero transition weights

    feature template      weights   sum |w|
    word.lower()             8111    5838.6
    +1:word.lower()          6141    3006.1
    -1:word.lower()          5009    2974.4
    word[-3:]                5234    2912.6
    [...]
    B-PER: strongest positive | most negative
       +4.370 -1:word.lower():según          |  -3.320 -1:word.lower():del
       +4.060 word.lower():valedor           |  -2.470 word[-3:]:nes
    [...]
    most likely transitions:   B-LOC -> I-LOC +7.94, B-ORG -> I-ORG +7.64, I-MISC -> I-MISC +7.55, [...]
    least likely transitions:  O -> I-PER -4.27, O -> I-ORG -4.08, O -> I-LOC -3.95, O -> I-MISC -3.67, [...]
"""

import argparse
import warnings
from collections import defaultdict

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002


def template(attribute, keys):
    """The feature template (feature dict key) of an attribute name.

    A str feature value makes the attribute ``key:value`` (``word.lower():madrid``,
    ``word[-3:]:ida``), other values keep the key as it is (``word.istitle()``).
    """
    return max((k for k in keys if attribute == k or attribute.startswith(k + ":")), key=len)


def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--n-train", type=int, default=None, help="first N training sentences, all if not given")
    parser.add_argument("--max-iter", type=int, default=100,
                        help="CRF iterations (a fixed budget, as in the published figures)")
    parser.add_argument("--c1", type=float, default=0.1, help="L1 penalty")
    parser.add_argument("--c2", type=float, default=0.1, help="L2 penalty")
    parser.add_argument("--top", type=int, default=6, help="features of each sign per label")
    parser.add_argument("--labels", nargs="+", default=None,
                        help="labels to list features for (None: every label)")
    args = parser.parse_args()

    train = load_conll2002("train", n_sentences=args.n_train)
    X_train = SequenceFeaturizer().transform(train.sentences)
    crf = CRFTagger(c1=args.c1, c2=args.c2, max_iter=args.max_iter,
                    all_possible_transitions=True)
    print(f"fitting on {len(X_train)} sentences, {args.max_iter} iterations ...", flush=True)
    with warnings.catch_warnings():
        # --max-iter is a fixed budget (the published figures'), not convergence: silenced on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf.fit(X_train, train.tags)
    print(f"fitted on {len(X_train)} sentences: c1={args.c1}, c2={args.c2}, "
          f"{crf.n_iter_} iterations")

    state = crf.state_features_                 # {(attribute, label): weight}, non-zero only
    print(f"{len(crf.vectorizer_.feature_names_)} attributes seen, "
          f"{len(crf.attributes_)} with a non-zero weight; "
          f"{len(state)} non-zero state weights, "
          f"{len(crf.transition_features_)} non-zero transition weights\n")

    keys = {key for sentence in X_train for token in sentence for key in token}
    mass, count = defaultdict(float), defaultdict(int)
    for (attribute, _), weight in state.items():
        name = template(attribute, keys)
        mass[name] += abs(weight)
        count[name] += 1
    print(f"{'feature template':<20} {'weights':>8} {'sum |w|':>9}")
    for name in sorted(mass, key=mass.get, reverse=True):
        print(f"{name:<20} {count[name]:>8} {mass[name]:>9.1f}")

    top = crf.top_features(n=args.top)
    for label in args.labels or crf.classes_:
        print(f"\n{label}: strongest positive | most negative")
        positive, negative = top[label]["positive"], top[label]["negative"]
        for i in range(max(len(positive), len(negative))):
            left = f"{positive[i][1]:+7.3f} {positive[i][0]}" if i < len(positive) else ""
            right = f"{negative[i][1]:+7.3f} {negative[i][0]}" if i < len(negative) else ""
            print(f"  {left:<38} | {right}")

    labels = list(crf.classes_)
    matrix = crf.transition_matrix_             # [from, to]
    print("\ntransition weights (rows: from, columns: to)")
    print(" " * 7 + "".join(f"{label:>7}" for label in labels))
    for label, row in zip(labels, matrix):
        print(f"{label:>7}" + "".join(f"{w:7.2f}" for w in row))

    transitions = sorted(crf.transition_features_.items(), key=lambda item: item[1])
    k = min(args.top, len(transitions))
    print("\nmost likely transitions:   " + ", ".join(
        f"{a} -> {b} {w:+.2f}" for (a, b), w in transitions[::-1][:k]))
    print("least likely transitions:  " + ", ".join(
        f"{a} -> {b} {w:+.2f}" for (a, b), w in transitions[:k]))
    invalid = [(a, b) for a in labels for b in labels
               if b.startswith("I-") and a[2:] != b[2:]]
    weights = np.array([matrix[labels.index(a), labels.index(b)] for a, b in invalid])
    print(f"IOB2-invalid transitions (X -> I-T with X not B-T or I-T): {len(invalid)}, "
          f"mean weight {weights.mean():+.2f}, largest {weights.max():+.2f}")


if __name__ == "__main__":
    main()
