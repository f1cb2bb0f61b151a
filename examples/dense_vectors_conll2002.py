"""Word vectors as dense CRF features on CoNLL-2002 Spanish
========================================================

Three CRF named-entity taggers on the same data, compared by entity-level F1
on esp.testb:

* **hand-written**: the sklearn-crfsuite tutorial features
  (``SequenceFeaturizer()``);
* **vectors only**: each token's row is the word vectors of the word and of
  its neighbours (``vector_window``), nothing else;
* **both**: the tutorial features and the vectors, each sentence given as a
  ``(feature dicts, array)`` pair.

The vectors are trained here by gensim's ``Word2Vec`` (skip-gram) on the
lower-cased bundled text of esp.train and esp.testa (never esp.testb, the test
set), with a fixed seed, one worker thread and a fixed hash function, so the
run is reproducible. The vectors enter the CRF as dense features: one weight
per (dimension, label), regularized like the others, and computed with one
matrix product per batch instead of one dict entry per dimension. The "vectors
only" tagger sees the vectors of the lower-cased words and nothing else: no
bias, no capitalization, no suffixes. The end
shows an explained prediction of the "both" model: each term's share of the
predicted path's score, dense dimensions included.

Needs gensim (``pip install "sklearn-crf[vectors]"``). Run it (``--help``
lists the flags and their defaults)::

    python examples/dense_vectors_conll2002.py                 # all the data
    python examples/dense_vectors_conll2002.py --n-train 1000 --n-test 300 \\
        --w2v-sentences 3000                                   # a quick run
"""

import argparse
import logging
import time
import zlib

from sklearn_crf import CRFTagger, SequenceFeaturizer, WordVectors
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_f1_score


def stable_hash(text):
    """Word2Vec's seeding hash; Python's own ``hash`` changes between runs."""
    return zlib.crc32(text.encode("utf-8"))


def train_word_vectors(sentences, args):
    from gensim.models import Word2Vec

    model = Word2Vec(
        [[w.lower() for w in s] for s in sentences], vector_size=args.vector_size,
        window=5, min_count=2, sg=1, epochs=args.epochs, seed=0, workers=1,
        hashfxn=stable_hash,
    )
    return WordVectors(model.wv)


def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--n-train", type=int, default=None,
                        help="first N training sentences, all if not given")
    parser.add_argument("--n-test", type=int, default=None,
                        help="first N test sentences (esp.testb), all if not given")
    parser.add_argument("--w2v-sentences", type=int, default=None,
                        help="train the word vectors on the first N sentences of "
                             "esp.train + esp.testa, all if not given")
    parser.add_argument("--vector-size", type=int, default=100, help="word vector length")
    parser.add_argument("--epochs", type=int, default=5, help="Word2Vec epochs")
    parser.add_argument("--vector-window", type=int, default=1,
                        help="neighbours on each side whose vectors a token also gets")
    parser.add_argument("--c1", type=float, default=0.1, help="L1 penalty")
    parser.add_argument("--c2", type=float, default=0.1, help="L2 penalty")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="stop after this many iterations (None: CRFTagger's "
                             "stopping rule)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")

    train = load_conll2002("train", n_sentences=args.n_train)
    test = load_conll2002("testb", n_sentences=args.n_test)
    text = load_conll2002("train").sentences + load_conll2002("testa").sentences
    text = text[: args.w2v_sentences]
    start = time.perf_counter()
    table = train_word_vectors(text, args)
    print(f"Word2Vec on {len(text)} sentences: {len(table)} words x "
          f"{table.vector_size} ({table.dtype}), {time.perf_counter() - start:.1f} s")
    print(f"train: {len(train.sentences)} sentences (esp.train), "
          f"test: {len(test.sentences)} sentences (esp.testb)")

    vectors = dict(vectors=table, vector_lookup="lower", vector_window=args.vector_window)
    setups = [
        ("hand-written", SequenceFeaturizer()),
        ("vectors only", SequenceFeaturizer(**vectors, vectors_only=True)),
        ("both", SequenceFeaturizer(**vectors)),
    ]
    rows, models = [], {}
    for name, featurizer in setups:
        X_train = featurizer.transform(train.sentences)
        X_test = featurizer.transform(test.sentences)
        crf = CRFTagger(c1=args.c1, c2=args.c2, max_iter=args.max_iter,
                        all_possible_transitions=True)
        start = time.perf_counter()
        crf.fit(X_train, train.tags)
        fit_time = time.perf_counter() - start
        f1 = entity_f1_score(test.tags, crf.predict(X_test))
        n_attributes = len(crf.vectorizer_.feature_names_)
        n_dense = crf.vectorizer_.n_dense_features_
        rows.append((name, n_attributes, n_dense, f1, fit_time, crf.n_iter_))
        models[name] = (crf, X_test)

    print()
    print(f"{'features':<14} {'attributes':>10} {'dense dims':>10} "
          f"{'entity F1':>9} {'fit (s)':>8} {'iterations':>10}")
    for name, n_attributes, n_dense, f1, fit_time, n_iter in rows:
        print(f"{name:<14} {n_attributes:>10} {n_dense:>10} {f1:>9.4f} "
              f"{fit_time:>8.1f} {n_iter:>10}")

    # Explain one prediction of the "both" model: the first short test
    # sentence with at least two entities.
    crf, X_test = models["both"]
    s = next((i for i, tags in enumerate(test.tags)
              if len(tags) <= 15 and sum(tag.startswith("B-") for tag in tags) >= 2), 0)
    [explanation] = crf.explain_prediction(X_test[s : s + 1], top=4)
    print()
    print(f"explained prediction of the 'both' model, esp.testb sentence {s}:")
    print(" ".join(test.sentences[s]))
    print(explanation.to_text(top=4, words=test.sentences[s]))


if __name__ == "__main__":
    main()
