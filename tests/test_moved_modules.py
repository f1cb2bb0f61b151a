"""Files written before the package layout (module names such as
``sklearn_crf._vectorizer``) still load, through :mod:`sklearn_crf._moved`.

The pickles, the skops file and ``expected.json`` in ``data/pre_layout`` were
written by commit 897c592 (the last one before the layout), which also
computed the predictions and marginals in ``expected.json``.
"""

import importlib
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import sklearn_crf
from sklearn_crf._moved import MOVED, MOVED_NAMES

DATA = Path(__file__).parent / "data" / "pre_layout"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def _check(model, name):
    expected = EXPECTED[name]
    X = expected["X"]
    assert [list(s) for s in model.predict(X)] == expected["predict"]
    tagger = model[-1] if hasattr(model, "steps") else model
    Xt = model[:-1].transform(X) if hasattr(model, "steps") else X
    for got, want in zip(tagger.predict_marginals(Xt), expected["marginals"]):
        for g, w in zip(got, want):
            assert g.keys() == w.keys()
            np.testing.assert_allclose([g[k] for k in w], list(w.values()), rtol=1e-12)


@pytest.mark.parametrize("name", ["tagger", "crf", "pipe", "tpl"])
def test_a_pickle_written_before_the_layout_loads_and_predicts_as_it_did(name):
    with open(DATA / f"{name}.pkl", "rb") as f:
        model = pickle.load(f)
    _check(model, name)


def test_a_skops_file_written_before_the_layout_loads_with_the_types_it_lists():
    sio = pytest.importorskip("skops.io")
    path = DATA / "tagger.skops"
    untrusted = sio.get_untrusted_types(file=path)
    assert "sklearn_crf._vectorizer.SequenceVectorizer" in untrusted
    _check(sio.load(path, trusted=untrusted), "tagger")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_name_gives_the_objects_of_its_new_home(old):
    module = importlib.import_module(f"sklearn_crf.{old}")
    new = importlib.import_module(f"sklearn_crf.{MOVED[old]}")
    public = [n for n, v in vars(new).items()
              if callable(v) and getattr(v, "__module__", None) == new.__name__]
    assert public, new.__name__
    for name in public:
        assert getattr(module, name) is getattr(new, name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        module.no_such_name


def test_a_name_that_moved_out_of_a_module_is_found_through_it():
    for module_name, names in MOVED_NAMES.items():
        module = importlib.import_module(f"sklearn_crf.{module_name}")
        for name, home in names.items():
            assert getattr(module, name) is getattr(
                importlib.import_module(f"sklearn_crf.{home}"), name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        sklearn_crf._tagger.no_such_name


def test_other_missing_modules_are_still_missing():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("sklearn_crf._no_such_module")
