"""Datasets bundled with sklearn-crf."""

from ._conll2002 import load_conll2002

__all__ = ["load_conll2002"]
