"""What a fitted model is, used by training, inference and io.

* :mod:`.schemes` — tagging schemes (IOB1, IOB2, BIOES, ...) and how labels split into role and type;
* :mod:`.constraints` — transition constraint masks from a scheme or explicit pairs.
"""
