"""Every code block of README.md and of the docs runs as written.

Each page's Python blocks run top to bottom as one script in a fresh
interpreter, then its console and bash blocks command by command, in a scratch
folder, on the first ``_blocks.MAX_SENTENCES`` sentences of each part of the
bundled data (``SKLEARN_CRF_MAX_SENTENCES``). A ConvergenceWarning is an error
in the Python blocks, and so is metadata routing left switched on after the
last block. Blocks marked ``skip-test`` are reported as skipped, with their
reason. See tests/_blocks.py.
"""

import importlib.util
import inspect
import re

import pytest

import sklearn_crf
import sklearn_crf.datasets
import sklearn_crf.metrics
import sklearn_crf.model_selection
from sklearn_crf import CRFTagger

import _blocks
import _examples

PAGES = _blocks.pages()
ALL_BLOCKS = [block for page in PAGES for block in _blocks.blocks(page)]
RUNNABLE = _blocks.PYTHON_LANGUAGES + _blocks.SHELL_LANGUAGES


def page_id(path):
    return str(path.relative_to(_blocks.REPO))


def runnable_blocks(page):
    return [b for b in _blocks.blocks(page) if b.language in RUNNABLE and b.skip is None]


def test_pages_are_found():
    names = {page_id(p) for p in PAGES}
    assert {"README.md", "docs/install.rst", "docs/user_guide/cli.rst",
            "docs/user_guide/persistence.rst", "docs/user_guide/migration.rst"} <= names
    assert sum(b.language == "python" for b in ALL_BLOCKS) >= 30


def test_every_block_has_a_known_language():
    known = set(RUNNABLE) | set(_blocks.OUTPUT_LANGUAGES)
    unknown = [f"{b.where}: {b.language!r}" for b in ALL_BLOCKS if b.language not in known]
    assert not unknown, "blocks that would be neither run nor output: " + ", ".join(unknown)


def test_code_in_rst_pages_is_in_code_blocks():
    """A doctest prompt or a Python statement in a plain ``::`` literal block
    would not be run: code goes in ``.. code-block::`` directives."""
    for page in PAGES:
        if page.suffix != ".rst":
            continue
        text = page.read_text(encoding="utf-8")
        assert ">>> " not in text, f"{page_id(page)}: a doctest prompt outside the docstrings"
        for match in re.finditer(r"::\n\n((?:[ ]{3,}.*\n|\n)+)", text):
            literal = match.group(1)
            preceding = text[:match.start()].rsplit("\n", 1)[-1]
            if ".. " in preceding:
                continue  # a directive's body
            assert not re.search(r"^\s+(import |from \w+ import |\w+ = )", literal, re.M), (
                f"{page_id(page)}: Python in a literal block: {literal[:80]!r}")


@pytest.mark.parametrize("page", [p for p in PAGES if runnable_blocks(p)], ids=page_id)
def test_page_runs_as_written(page, tmp_path):
    blocks = runnable_blocks(page)
    python = [b for b in blocks if b.language in _blocks.PYTHON_LANGUAGES]
    if python:
        _blocks.run_python(python, tmp_path)
    for block in blocks:
        if block.language in _blocks.SHELL_LANGUAGES:
            _blocks.run_shell(block, tmp_path)


@pytest.mark.parametrize(
    "block", [b for b in ALL_BLOCKS if b.skip is not None], ids=lambda b: b.where)
def test_skipped_block(block):
    """Each skipped block is listed with its reason (``-ra`` shows them)."""
    assert block.skip, f"{block.where}: a skip-test marker needs a reason"
    pytest.skip(f"{block.where} ({block.language}): {block.skip}")


def test_skip_markers_are_found_and_attached(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- skip-test: needs a network -->\n\n```bash\npip install x\n```\n"
                    "\n```python\nx = 1\n```\n", encoding="utf-8")
    assert [(b.language, b.skip) for b in _blocks.blocks(page)] == [
        ("bash", "needs a network"), ("python", None)]
    page.write_text("<!-- skip-test: lost -->\n\nsome text\n\n```python\nx = 1\n```\n",
                    encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: a skip-test marker must come right before"):
        _blocks.blocks(page)
    page = tmp_path / "page.rst"
    page.write_text("Title\n=====\n\n.. skip-test: installs\n\n.. code-block:: bash\n\n"
                    "   pip install x\n\n.. code-block:: python\n   :caption: c\n\n"
                    "   x = 1\n   if x:\n\n       y = 2\n\nafter\n", encoding="utf-8")
    found = _blocks.blocks(page)
    assert [(b.language, b.skip, b.line) for b in found] == [
        ("bash", "installs", 8), ("python", None, 13)]
    assert found[1].code == "x = 1\nif x:\n\n    y = 2\n"


def test_a_failing_block_is_named(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n```python\ny = x\nz = undefined_name\n```\n",
                    encoding="utf-8")
    with pytest.raises(_blocks.Failure, match=r"(?s)page.md:6 \(its line 2, page line 7\).*NameError"):
        _blocks.run_python(_blocks.blocks(page), tmp_path)


def test_metadata_routing_left_on_is_a_failure(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nimport sklearn\nsklearn.set_config(enable_metadata_routing=True)\n"
                    "```\n", encoding="utf-8")
    with pytest.raises(_blocks.Failure, match="left enable_metadata_routing=True"):
        _blocks.run_python(_blocks.blocks(page), tmp_path)


def test_a_failing_command_is_named(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```console\n$ sklearn-crf data train -o out.conll\nsklearn-crf data: wrote\n"
                    "$ sklearn-crf tag -m missing.skcrf out.conll\n```\n", encoding="utf-8")
    (block,) = _blocks.blocks(page)
    assert _blocks.shell_commands(block) == [
        "sklearn-crf data train -o out.conll", "sklearn-crf tag -m missing.skcrf out.conll"]
    with pytest.raises(_blocks.Failure, match="'sklearn-crf tag -m missing.skcrf out.conll' exited"):
        _blocks.run_shell(block, tmp_path)
    # the data switch reached the real entry point
    assert len((tmp_path / "out.conll").read_text().split("\n\n")) <= _blocks.MAX_SENTENCES + 1


# --- stumble 6: the quick start's settings converge -----------------------------


def test_readme_quick_start_fits_without_a_convergence_warning(tmp_path):
    """README's quick start, as written, on 2,000 training sentences: enough for
    max_iter=100 (the old quick start's) to stop before the stopping rule."""
    quick_start = next(b for b in _blocks.blocks(_blocks.REPO / "README.md")
                       if b.language == "python")
    assert "CRFTagger(" in quick_start.code
    _blocks.run_python([quick_start], tmp_path,
                       env=_blocks.environment(SKLEARN_CRF_MAX_SENTENCES="2000"))


# --- the API reference and the table of defaults ---------------------------------


def api_names():
    text = (_blocks.REPO / "docs" / "api.rst").read_text(encoding="utf-8")
    names, module = set(), "sklearn_crf"
    for line in text.splitlines():
        if line.startswith(".. currentmodule:: "):
            module = line.split()[-1]
        elif re.fullmatch(r"   [A-Za-z]\w*", line):
            names.add(f"{module}.{line.strip()}")
    return names


def public_functions(module):
    return {f"{module.__name__}.{n}" for n in module.__all__
            if inspect.isfunction(getattr(module, n))}


def test_api_reference_lists_every_public_name():
    expected = {f"sklearn_crf.{n}" for n in sklearn_crf.__all__
                if not n.startswith("_") and not inspect.ismodule(getattr(sklearn_crf, n))}
    for module in (sklearn_crf.metrics, sklearn_crf.model_selection, sklearn_crf.datasets):
        expected |= public_functions(module)
    assert api_names() == expected
    text = (_blocks.REPO / "docs" / "api.rst").read_text(encoding="utf-8")
    for module in ("metrics", "model_selection", "datasets", "scorers"):
        assert f".. automodule:: sklearn_crf.{module}" in text


def load_docs_extension():
    spec = importlib.util.spec_from_file_location(
        "crf_docs", _blocks.REPO / "docs" / "_ext" / "crf_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_defaults_table_is_get_params_in_signature_order():
    rows = load_docs_extension().defaults_rows()
    params = CRFTagger().get_params()
    assert dict(rows) == params
    assert [name for name, _ in rows] == list(inspect.signature(CRFTagger).parameters)


def test_model_page_shows_the_defaults_table():
    text = (_blocks.REPO / "docs" / "user_guide" / "model.rst").read_text(encoding="utf-8")
    assert "\n.. crftagger-defaults::\n" in text


def test_gallery_flags_are_flags_of_the_examples():
    extension = load_docs_extension()
    for script, argv in extension.GALLERY_ARGV.items():
        out = _examples.help_texts()[script]
        for flag in argv:
            if flag.startswith("--"):
                assert flag in out, f"{script}: {flag}"
