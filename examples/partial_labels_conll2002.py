"""Train a CRF on partially labelled CoNLL-2002 Spanish
====================================================

Real corpora are often partly annotated: only some entity types annotated in
each document, or an annotator who left some entities undecided. This script
hides a fraction of the entity annotations of esp.train and compares three
ways to train on what is left, by the entity-level F1 on esp.testb:

(a) **fully labelled only**: train on the sentences with no hidden label;
(b) **unknown as O**: every hidden label becomes ``"O"`` (what users do
    without partial-label training: the hidden entities become negatives);
(c) **partial labels**: the hidden labels are ``None`` in ``y``; ``fit``
    maximizes the total probability of the label paths that agree with the
    labels that are known.

The annotations are hidden in three ways, each at two rates:

* **random tokens**: each token of an entity (a label other than ``"O"``)
  loses its label with probability ``rate``;
* **types per document**: in each news article, each entity type (PER, LOC,
  ORG, MISC) loses all its labels with probability ``rate``;
* **types per doc., sets**: the same hidden types, as an annotator who
  annotated only the other types would leave them: every token of the
  article not annotated with one of those gets the set of labels it may
  have, ``"O"`` or a label of a hidden type (their ``"O"`` is not known
  either).

In the first two, the ``"O"`` labels stay known. The row "all labels" is the
model trained on the complete annotation. Every fit has the same settings (those of
``train_conll2002.py``, with a fixed budget of ``--max-iter`` iterations).

Run it (``--help`` lists the flags and their defaults)::

    python examples/partial_labels_conll2002.py                 # all of esp.train
    python examples/partial_labels_conll2002.py --n-train 1000  # a quick run
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_crf import CRFTagger, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score

WAYS = ("random tokens", "types per document", "types per doc., sets")


def entity_type(label):
    """The entity type of a label (``"B-PER"`` → ``"PER"``), None for ``"O"``."""
    return None if label == "O" else label.split("-", 1)[1]


def hide(tags, documents, way, rate, rng):
    """The tags with a fraction ``rate`` of the entity annotations hidden in
    one of the three ways (see the module docstring): None, or a set of the
    labels a token may have."""
    if way == "random tokens":
        return [[None if label != "O" and rng.random() < rate else label
                 for label in seq] for seq in tags]
    types = sorted({entity_type(label) for seq in tags for label in seq} - {None})
    hidden = {doc: {t for t in types if rng.random() < rate}
              for doc in np.unique(documents).tolist()}
    if way == "types per document":
        return [[None if entity_type(label) in hidden[doc] else label for label in seq]
                for seq, doc in zip(tags, documents.tolist())]
    unknown = {doc: frozenset({"O"} | {f"{p}-{t}" for t in types_ for p in "BI"})
               for doc, types_ in hidden.items() if types_}
    return [[unknown[doc] if doc in unknown and (label == "O" or entity_type(label)
                                                 in hidden[doc]) else label
             for label in seq] for seq, doc in zip(tags, documents.tolist())]


def is_known(label):
    """Whether a hidden tag is a label (not None, not a set)."""
    return label is not None and not isinstance(label, frozenset)


def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--n-train", type=int, default=None,
                        help="first N training sentences, all if not given")
    parser.add_argument("--n-test", type=int, default=None,
                        help="first N test sentences, all if not given")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.5, 0.8],
                        help="fractions of the entity annotations hidden")
    parser.add_argument("--max-iter", type=int, default=100,
                        help="iterations of every fit")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hiding")
    args = parser.parse_args()

    train = load_conll2002("train", n_sentences=args.n_train)
    test = load_conll2002("testb", n_sentences=args.n_test)
    featurizer = SequenceFeaturizer()
    X_train = featurizer.transform(train.sentences)
    X_test = featurizer.transform(test.sentences)
    n_entity_tokens = sum(label != "O" for seq in train.tags for label in seq)
    print(f"train: {len(X_train)} sentences ({n_entity_tokens} entity tokens), "
          f"test (esp.testb): {len(X_test)} sentences; {args.max_iter} iterations a fit")

    def f1(X, y):
        if not X:  # no fully labelled sentence: nothing to train on
            return float("nan"), 0.0
        crf = CRFTagger(c1=0.1, c2=0.1, max_iter=args.max_iter,
                        all_possible_transitions=True)
        start = time.perf_counter()
        with warnings.catch_warnings():  # a fixed budget: the rule is not met
            warnings.simplefilter("ignore", ConvergenceWarning)
            crf.fit(X, y)
        seconds = time.perf_counter() - start
        return entity_f1_score(test.tags, crf.predict(X_test)), seconds

    full, seconds = f1(X_train, train.tags)
    print(f"all labels: entity F1 {full:.4f} ({seconds:.0f} s)\n")
    header = (f"{'hidden':<22}{'rate':>5}{'hidden ent.':>12}{'full sent.':>11}"
              f"{'(a) full only':>15}{'(b) as O':>10}{'(c) partial':>13}")
    print(header)
    print("-" * len(header))
    for way in WAYS:
        for rate in args.rates:
            # one draw per rate: both "types per ..." ways hide the same types
            rng = np.random.default_rng([args.seed, round(rate * 1000)])
            partial = hide(train.tags, train.documents, way, rate, rng)
            n_hidden = sum(not is_known(label) and tag != "O"
                           for seq, tags in zip(partial, train.tags)
                           for label, tag in zip(seq, tags))
            full_only = [i for i, seq in enumerate(partial) if all(map(is_known, seq))]
            as_o = [[label if is_known(label) else "O" for label in seq] for seq in partial]
            scores = [
                f1([X_train[i] for i in full_only], [partial[i] for i in full_only]),
                f1(X_train, as_o),
                f1(X_train, partial),
            ]
            print(f"{way:<22}{rate:>5.0%}{n_hidden / max(n_entity_tokens, 1):>12.0%}"
                  f"{len(full_only):>11}"
                  + "".join(f"{f:>{w}.4f}" for (f, _), w in zip(scores, (15, 10, 13)))
                  + f"   ({', '.join(f'{s:.0f}' for _, s in scores)} s)", flush=True)


if __name__ == "__main__":
    main()
