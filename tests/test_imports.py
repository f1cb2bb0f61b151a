"""``import sklearn_crf`` imports only what a fit needs; the rest loads on access."""

import json
import subprocess
import sys

import pytest

import sklearn_crf

#: imported on first access only: neither ``import sklearn_crf`` nor a fit and a
#: predict may import them
LAZY_MODULES = (
    "sklearn_crf.datasets",
    "sklearn_crf.metrics",
    "sklearn_crf.model_selection",
    "sklearn_crf._features.featurizer",
    "sklearn_crf._io.conll",
    "sklearn_crf._features.templates",
    "sklearn_crf._io.crfsuite",
    "sklearn_crf._io.persistence",
    "sklearn.metrics",
    "sklearn.model_selection",
)

#: what scikit-learn and numba import themselves, before the probes start
PRELUDE = "import sys\nimport numba, scipy.sparse, sklearn.base\nbefore = set(sys.modules)\n"


def _run(code):
    """The JSON object that ``code``, run after ``PRELUDE`` in a fresh interpreter, prints."""
    out = subprocess.run(
        [sys.executable, "-c", PRELUDE + code], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.splitlines()[-1])


def _new_lazy_modules():
    """Code that lists the ``LAZY_MODULES`` imported since ``before``."""
    return f"[m for m in {list(LAZY_MODULES)!r} if m in set(sys.modules) - before]"


def test_import_fit_and_predict_do_not_load_the_lazy_modules():
    code = (
        "import json\n"
        "import sklearn_crf\n"
        f"after_import = {_new_lazy_modules()}\n"
        "X = [[{'w': 'John'}, {'w': 'runs'}], [{'w': 'Mary'}, {'w': 'sleeps'}]]\n"
        "y = [['PER', 'O'], ['PER', 'O']]\n"
        "sklearn_crf.CRFTagger(c1=0.1, max_iter=5).fit(X, y).predict(X)\n"
        f"print(json.dumps([after_import, {_new_lazy_modules()}]))"
    )
    assert _run(code) == [[], []]


def test_lazy_names_load_their_modules_on_access():
    code = (
        "import json\n"
        "import sklearn_crf\n"
        "sklearn_crf.metrics.entity_f1_score\n"
        "sklearn_crf.model_selection.cross_val_predict\n"
        "from sklearn_crf import SequenceFeaturizer\n"
        "from sklearn_crf import read_conll, TemplateFeaturizer\n"
        "from sklearn_crf import load_crfsuite, save_model\n"
        "import sklearn_crf.datasets\n"
        f"print(json.dumps({_new_lazy_modules()}))"
    )
    assert _run(code) == list(LAZY_MODULES)


def test_lazy_names_are_the_submodules_objects():
    from sklearn_crf import SequenceFeaturizer, datasets, metrics, model_selection
    from sklearn_crf._features.featurizer import SequenceFeaturizer as featurizer_class
    from sklearn_crf.datasets import load_conll2002

    assert SequenceFeaturizer is featurizer_class
    assert sklearn_crf.SequenceFeaturizer is featurizer_class
    assert sklearn_crf.metrics is metrics and callable(metrics.entity_f1_score)
    assert sklearn_crf.model_selection is model_selection
    assert callable(model_selection.cross_val_predict)
    assert sklearn_crf.datasets is datasets and datasets.load_conll2002 is load_conll2002


def test_public_names():
    namespace = {}
    exec("from sklearn_crf import *", namespace)
    assert set(sklearn_crf.__all__) <= set(namespace)
    assert set(sklearn_crf.__all__) <= set(dir(sklearn_crf))
    assert all(hasattr(sklearn_crf, name) for name in sklearn_crf.__all__)


def test_unknown_attribute_raises_attribute_error():
    assert not hasattr(sklearn_crf, "no_such_name")
    with pytest.raises(AttributeError, match="no_such_name"):
        sklearn_crf.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        from sklearn_crf import no_such_name  # noqa: F401
