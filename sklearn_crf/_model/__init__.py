"""What a fitted model is, used by training, inference and io.

* :mod:`.layout` — ParameterLayout and CRFsuite's rules that choose the weights;
* :mod:`.weights` — FittedModel (a fit's arrays) and TaggerWeights (the same by name);
* :mod:`.schemes` — tagging schemes (IOB1, IOB2, BIOES, ...) and how labels split into role and type;
* :mod:`.constraints` — transition constraint masks from a scheme or explicit pairs.
"""
