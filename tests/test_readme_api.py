"""README's "API at a glance" table names objects, parameters and attributes that exist."""

import importlib
import inspect
import pathlib
import re
import subprocess
import sys
import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning

import sklearn_crf
from sklearn_crf import CRFTagger

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def api_rows():
    """The first cell of each row of the table, as a list of its code spans."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## API at a glance", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = re.split(r"(?<!\\) \| ", line[2:], maxsplit=1)[0]
        rows.append([span.replace("\\|", "|") for span in re.findall(r"`([^`]+)`", first_cell)])
    return rows


def parameter_names(signature_text):
    """``"a, *, b=1, c"`` -> ``["a", "b", "c"]`` (``*`` and ``...`` are skipped)."""
    names = []
    for part in signature_text.split(","):
        name = part.split("=")[0].strip()
        if name and name not in ("*", "..."):
            names.append(name)
    return names


def resolve(dotted):
    obj = sklearn_crf
    for part in dotted.split("."):
        if inspect.ismodule(obj) and not hasattr(obj, part):
            importlib.import_module(f"{obj.__name__}.{part}")
        obj = getattr(obj, part)
    return obj


@pytest.fixture(scope="module")
def fitted():
    X = [[{"w": "John"}, {"w": "runs"}], [{"w": "Mary"}, {"w": "sleeps"}]] * 3
    y = [["B-PER", "O"], ["B-PER", "O"]] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return CRFTagger(c2=0.1, max_iter=5).fit(X, y, X_val=X[:2], y_val=y[:2])


def test_api_table_is_found():
    assert len(api_rows()) >= 20


def test_api_table_names_every_crftagger_parameter():
    row = next(spans for spans in api_rows() if spans[0].startswith("CRFTagger("))
    listed = parameter_names(row[0][len("CRFTagger("):-1])
    assert sorted(listed) == sorted(CRFTagger().get_params())


@pytest.mark.parametrize("spans", api_rows(), ids=lambda spans: spans[0][:40])
def test_api_table_row_exists(spans, fitted):
    if spans[0].startswith("sklearn-crf "):
        out = subprocess.run([sys.executable, "-m", "sklearn_crf", "--help"],
                             capture_output=True, text=True, check=True).stdout
        commands = spans[0].split(" (")[0].split(" ", 1)[1].split(" | ")
        for command in commands:
            assert command in out
        return
    module = ""
    for span in spans:
        match = re.fullmatch(r"(\.?)([\w.]+)(?:\((.*)\))?", span)
        assert match, span
        is_method, name, signature = match.groups()
        if is_method:
            obj = getattr(CRFTagger, name)
        elif "." in name:
            module = name.rsplit(".", 1)[0] + "."
            obj = resolve(name)
        elif name.endswith("_"):
            assert hasattr(fitted, name), name
            continue
        else:
            obj = resolve(module + name)
        if signature is None:
            continue
        declared = inspect.signature(obj).parameters
        for parameter in parameter_names(signature):
            assert parameter in declared, f"{span}: {parameter}"
