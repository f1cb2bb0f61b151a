"""SequenceFeaturizer: its generated builders (``exec``) against plain loops (issue 9).

The featurizer builds the feature dicts of a sentence with small functions
generated as Python source and ``exec``-ed (one per layout: neighbours present,
first/last token). This script times ``transform`` on CoNLL-2002 esp.train
with those builders and with the same dicts built by plain loops over the
precomputed key lists (``featurize_sentence_plain`` below), checks that both
give equal output (same dicts, same key order), and prints the ratio::

    python benchmarks/bench_featurizer.py
    python benchmarks/bench_featurizer.py --repeat 7 --n-train 4000
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

#: featurizer settings measured: the default, and a wide one with shapes and a column
SETTINGS = {
    "default (tutorial features)": {},
    "window=2, shape, prefixes, all neighbours": dict(
        window=2, shape=True, prefixes=(1, 2), neighbor_features="all"
    ),
    "window=1, POS column": dict(columns=("pos",)),
}


def _plain_keys(plan):
    """Per offset: the (index in the word-feature tuple, feature name) pairs of the
    word features and the (column, feature name) pairs, computed once per plan."""
    keys = getattr(plan, "plain_keys", None)
    if keys is None:
        w = plan.window
        keys = {}
        for o in [*range(-w, 0), 0, *range(1, w + 1)]:
            prefix = f"{o:+d}:" if o else ""
            mask = [True] * len(plan.word_keys) if o == 0 else plan.neighbor_mask
            names = [prefix + key for key, used in zip(plan.word_keys, mask) if used]
            index = [k for k, used in enumerate(mask) if used]
            columns = [(c, prefix + name) for c, (name, _) in enumerate(plan.columns)]
            keys[o] = (names, index, all(mask), columns)
        plan.plain_keys = keys
    return keys


def featurize_sentence_plain(cols, plan, cache):
    """The feature dicts of one sentence by plain loops (same keys, same order)."""
    words = cols[0]
    n = len(words)
    if n == 0:
        return []
    rows = [cache[word] for word in words]
    extra = [cols[j] for _, j in plan.columns]
    w = plan.window
    keys = _plain_keys(plan)

    def add(d, o, j):
        names, index, full, columns = keys[o]
        row = rows[j]
        d.update(zip(names, row if full else [row[k] for k in index]))
        for c, name in columns:
            d[name] = extra[c][j]

    out = []
    for i in range(n):
        d = {"bias": 1.0} if plan.bias else {}
        add(d, 0, i)
        for o in range(1, min(i, w) + 1):
            add(d, -o, i - o)
        if i == 0 and plan.bos_eos:
            d["BOS"] = True
        for o in range(1, min(n - 1 - i, w) + 1):
            add(d, o, i + o)
        if i == n - 1 and plan.bos_eos:
            d["EOS"] = True
        out.append(d)
    return out


def best_time(func, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n-train", type=int, default=None)
    args = parser.parse_args()

    from sklearn_crf import _featurizer
    from sklearn_crf._featurizer import SequenceFeaturizer
    from sklearn_crf.datasets import load_conll2002

    data = load_conll2002("train", n_sentences=args.n_train)
    words = data.sentences
    n_tokens = sum(map(len, words))
    print(f"command: {' '.join(sys.argv)}")
    print(f"esp.train: {len(words)} sentences, {n_tokens} tokens; best of {args.repeat}")
    print("| features | generated (s) | plain loops (s) | plain / generated |")
    print("|---|---:|---:|---:|")
    generated = _featurizer._featurize_sentence
    for name, params in SETTINGS.items():
        X = words
        if "columns" in params:
            X = [list(zip(s, tags)) for s, tags in zip(words, data.tags)]  # a stand-in column
        featurizer = SequenceFeaturizer(**params)
        t_gen, out_gen = best_time(lambda: featurizer.transform(X), args.repeat)
        _featurizer._featurize_sentence = featurize_sentence_plain
        try:
            t_plain, out_plain = best_time(lambda: featurizer.transform(X), args.repeat)
        finally:
            _featurizer._featurize_sentence = generated
        same = out_gen == out_plain and all(
            list(a) == list(b) for sa, sb in zip(out_gen, out_plain) for a, b in zip(sa, sb)
        )
        if not same:
            raise SystemExit(f"{name}: the two implementations disagree")
        print(f"| {name} | {t_gen:.3f} | {t_plain:.3f} | {t_plain / t_gen:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
