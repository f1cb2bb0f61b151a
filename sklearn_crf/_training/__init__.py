"""Training: from an encoded corpus and a parameter layout to weights.

* :mod:`.objective` — the negative log-likelihood and its gradient over the engine;
* :mod:`.optimize` — L-BFGS-B, OWL-QN, the stopping rules and progress logging;
* :mod:`.online` — CRFsuite's online solvers (l2sgd, averaged perceptron, PA, AROW);
* :mod:`.solvers` — the table of solvers: what each reads and how it runs;
* :mod:`.distributed` — the same fit over shards on Dask workers.
"""
