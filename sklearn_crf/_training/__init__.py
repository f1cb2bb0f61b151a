"""Training: from an encoded corpus and a parameter layout to weights.

* :mod:`.fit` — the one fit entry point (local and sharded data);
* :mod:`.validation` — the validation split and the iterate's score through predict;
* :mod:`.warm_start` — a previous fit's weights on a new layout;
* :mod:`.path` — the regularization path's order and fold data (CRFTaggerCV);
* :mod:`.objective` — the negative log-likelihood and its gradient over the engine;
* :mod:`.optimize` — L-BFGS-B, OWL-QN, the stopping rules and progress logging;
* :mod:`.online` — CRFsuite's online solvers (l2sgd, averaged perceptron, PA, AROW);
* :mod:`.solvers` — the table of solvers: what each reads and how it runs;
* :mod:`.distributed` — the same fit over shards on Dask workers.
"""
