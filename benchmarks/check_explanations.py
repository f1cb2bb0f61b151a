"""Issue 21's check: on every sentence of esp.testb, the contributions of explain_prediction sum to the path score (log p(y|x) + log Z(x)) to 1e-9, for the predicted and the gold path, on a model with feature dicts and 16-dimensional dense features (run: python benchmarks/check_explanations.py)."""
import math, time, warnings
import numpy as np
from sklearn_crf import CRFTagger, SequenceFeaturizer, WordVectors
from sklearn_crf.datasets import load_conll2002

train, test = load_conll2002("train"), load_conll2002("testb")
rng = np.random.default_rng(0)
words = sorted({w.lower() for s in train.sentences[:2000] for w in s})
vectors = WordVectors({w: rng.normal(size=16) for w in words})
feat = SequenceFeaturizer(vectors=vectors, vector_lookup="lower")
X = feat.fit_transform(train.sentences[:2000])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    crf = CRFTagger(c1=0.1, c2=0.1, max_iter=50, all_possible_transitions=True).fit(X, train.tags[:2000])
Xt = feat.transform(test.sentences)
t = time.process_time()
worst = 0.0
n = 0
for labels in (None, test.tags):
    for ex in crf.explain_prediction(Xt, labels):
        terms = math.fsum(r["contribution"] for r in ex.to_records())
        ref = ex.log_probability + ex.log_partition
        scale = max(1.0, abs(ex.score))
        worst = max(worst, abs(terms - ex.score) / scale, abs(ref - ex.score) / scale)
        n += 1
print(f"{n} explanations ({len(test.sentences)} sentences x predicted and gold paths), "
      f"worst relative gap {worst:.2e}; {time.process_time() - t:.1f} s CPU")
assert worst <= 1e-9
