"""The code blocks of README.md and of the docs' pages, and how tests/test_docs.py runs them.

A page's blocks are found by their markup: fenced blocks (```` ```python ````) in
Markdown, ``.. code-block:: python`` directives in reStructuredText. Python
blocks run top to bottom as one script, in a fresh interpreter, as a person
pasting them into a file would run them; ``console`` blocks are a shell session
(the lines after ``$`` are the commands) and ``bash`` blocks are commands, run
one after another in a scratch folder. A block that cannot run here (a ``pip
install``, a command that needs a network or a cluster) is marked in the page's
source right before it, with its reason::

    <!-- skip-test: REASON -->           (Markdown)
    .. skip-test: REASON                 (reStructuredText: a comment)

Every run uses the data switch of :func:`sklearn_crf.datasets.load_conll2002`
(``SKLEARN_CRF_MAX_SENTENCES``, :data:`MAX_SENTENCES`), so the blocks run as
written on a subset of the bundled data.
"""

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]

#: what SKLEARN_CRF_MAX_SENTENCES is set to when the blocks run
MAX_SENTENCES = 150

#: languages whose blocks run; every other block is shown output (OUTPUT_LANGUAGES)
PYTHON_LANGUAGES = ("python",)
SHELL_LANGUAGES = ("console", "bash", "shell", "sh")
OUTPUT_LANGUAGES = ("", "text", "none", "json")

_MD_SKIP = re.compile(r"<!--\s*skip-test:\s*(.*?)\s*-->")
_MD_FENCE = re.compile(r"^(\s*)```\s*([\w-]*)")
_RST_SKIP = re.compile(r"^\s*\.\. skip-test:\s*(.*?)\s*$")
_RST_DIRECTIVE = re.compile(r"^(\s*)\.\. (?:code-block|code|sourcecode)::\s*([\w-]*)\s*$")


class Block(NamedTuple):
    """One code block of a page.

    Attributes
    ----------
    path : Path
        The page, relative to the repository root.
    line : int
        Line of the page where the block's code starts (1-based).
    language : str
        The block's language (``python``, ``console``, ``bash``, ``text``, ...).
    code : str
        The block's code, dedented, ending with a newline.
    skip : str or None
        The reason of the ``skip-test`` marker before the block, None if unmarked.
    """

    path: Path
    line: int
    language: str
    code: str
    skip: str | None

    @property
    def where(self):
        """``path:line`` of the block, for messages."""
        return f"{self.path}:{self.line}"


def pages():
    """README.md and every reStructuredText page of docs/ (not the generated ones)."""
    docs = sorted(
        p for p in (REPO / "docs").rglob("*.rst")
        if not {"_build", "generated", "auto_examples"} & set(p.relative_to(REPO / "docs").parts)
    )
    return [REPO / "README.md", *docs]


def blocks(path):
    """The code blocks of one page, in order."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    found = _markdown_blocks(lines) if path.suffix == ".md" else _rst_blocks(lines)
    try:
        relative = path.resolve().relative_to(REPO)
    except ValueError:
        relative = path
    return [Block(relative, line, language, code, skip) for line, language, code, skip in found]


def _marker_error(line):
    return ValueError(f"line {line}: a skip-test marker must come right before a code block")


def _markdown_blocks(lines):
    found, skip, skip_line, i = [], None, 0, 0
    while i < len(lines):
        line = lines[i]
        marker = _MD_SKIP.fullmatch(line.strip())
        fence = _MD_FENCE.match(line)
        if marker:
            skip, skip_line = marker.group(1), i + 1
        elif fence:
            indent, language = fence.group(1), fence.group(2)
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            found.append((start + 1, language, "\n".join(body) + "\n", skip))
            skip = None
        elif line.strip() and skip is not None:
            raise _marker_error(skip_line)
        i += 1
    if skip is not None:
        raise _marker_error(skip_line)
    return found


def _rst_blocks(lines):
    found, skip, skip_line, i = [], None, 0, 0
    while i < len(lines):
        line = lines[i]
        marker = _RST_SKIP.match(line)
        directive = _RST_DIRECTIVE.match(line)
        if marker:
            skip, skip_line = marker.group(1), i + 1
        elif directive:
            indent = len(directive.group(1))
            language = directive.group(2)
            i += 1
            while i < len(lines) and re.match(r"^\s+:[\w-]+:", lines[i]):  # options
                i += 1
            body, start = [], None
            while i < len(lines) and (not lines[i].strip() or
                                      len(lines[i]) - len(lines[i].lstrip()) > indent):
                if start is None and lines[i].strip():
                    start = i + 1
                if start is not None:
                    body.append(lines[i])
                i += 1
            code = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
            found.append((start or i, language, code, skip))
            skip = None
            continue
        elif line.strip() and skip is not None:
            raise _marker_error(skip_line)
        i += 1
    if skip is not None:
        raise _marker_error(skip_line)
    return found


def shell_commands(block):
    """The commands of a console or bash block, continuation lines joined."""
    commands, current = [], None
    for line in block.code.splitlines():
        if block.language == "console":
            if current is None:
                if not line.startswith("$ "):
                    continue  # output
                line = line[2:]
        elif current is None and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current = line if current is None else current + "\n" + line
        if not line.endswith("\\"):
            commands.append(current)
            current = None
    if current is not None:
        commands.append(current)
    return commands


def environment(**extra):
    """The environment the blocks run in: this checkout first on the path, the
    data switch on, figures to files, and this interpreter as ``python`` (its
    folder, where ``sklearn-crf`` is installed, first on PATH)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["SKLEARN_CRF_MAX_SENTENCES"] = str(MAX_SENTENCES)
    env["MPLBACKEND"] = "Agg"
    env.update(extra)
    return env


def _python_bin(workdir):
    """A folder holding ``python`` (this interpreter) and the ``sklearn-crf``
    entry point installed next to it, to put first on PATH."""
    folder = Path(workdir) / ".bin"
    folder.mkdir(exist_ok=True)
    python = folder / "python"
    if not python.exists():
        # a wrapper, not a symlink: a venv's interpreter reached through a
        # symlink elsewhere does not find its pyvenv.cfg (nor its packages)
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
        python.chmod(0o755)
    entry_point = Path(sys.executable).parent / "sklearn-crf"
    if not entry_point.exists():
        raise RuntimeError(f"the sklearn-crf entry point is not installed next to {sys.executable}")
    return folder, entry_point.parent


class Failure(AssertionError):
    """A block that did not run as written."""


def python_script(page_blocks):
    """One script of the page's Python blocks, each headed by a comment naming it.

    A ConvergenceWarning is an error (a documented setting must converge, or
    its block silences the warning in the open), and after the last block a
    check fails if a block left metadata routing switched on."""
    parts = [
        "# --- before the first block\n"
        "import warnings as _warnings\n"
        "from sklearn.exceptions import ConvergenceWarning as _ConvergenceWarning\n"
        "_warnings.simplefilter('error', _ConvergenceWarning)\n"
        "del _warnings, _ConvergenceWarning\n"
    ]
    for block in page_blocks:
        parts.append(f"# --- block {block.where}\n{block.code}")
    parts.append(
        "# --- after the last block\n"
        "import sklearn as _sklearn\n"
        "assert not _sklearn.get_config()['enable_metadata_routing'], "
        "'a block left enable_metadata_routing=True for everything after it'\n"
    )
    return "\n".join(parts)


def run_python(page_blocks, workdir, *, timeout=900, env=None):
    """Run the page's Python blocks as one script in ``workdir``; return its output.

    Raises Failure naming the block that failed and the end of its traceback."""
    workdir = Path(workdir)
    script = workdir / "page_blocks.py"
    script.write_text(python_script(page_blocks), encoding="utf-8")
    folder, scripts = _python_bin(workdir)
    env = env or environment()
    env["PATH"] = os.pathsep.join([str(folder), str(scripts), env.get("PATH", "")])
    result = subprocess.run(
        [sys.executable, script.name], cwd=workdir, env=env,
        capture_output=True, text=True, timeout=timeout,
    )
    if result.returncode != 0:
        raise Failure(f"{_failed_block(script, result.stderr)}: exit status "
                      f"{result.returncode}\n{_tail(result.stderr)}")
    return result.stdout


def _failed_block(script, stderr):
    """The block (``path:line``) of the last traceback line inside the script."""
    lines = script.read_text(encoding="utf-8").splitlines()
    numbers = [int(n) for n in re.findall(rf'File "[^"]*{re.escape(script.name)}", line (\d+)', stderr)]
    if not numbers:
        return "the page's script"
    where = "the page's script"
    for i in range(numbers[-1] - 1, -1, -1):
        if lines[i].startswith("# --- "):
            where = lines[i][len("# --- "):]
            offset = numbers[-1] - 1 - i - 1
            if where.startswith("block "):
                path, line = where[len("block "):].rsplit(":", 1)
                where = f"block {path}:{line} (its line {offset + 1}, page line {int(line) + offset})"
            break
    return where


def _tail(text, n=15):
    return "\n".join(text.strip().splitlines()[-n:])


def run_shell(block, workdir, *, timeout=900, env=None):
    """Run the commands of a console or bash block one after another in ``workdir``
    (``examples/`` of this checkout is linked there); return their output."""
    workdir = Path(workdir)
    link = workdir / "examples"
    if not link.exists():
        link.symlink_to(REPO / "examples")
    folder, scripts = _python_bin(workdir)
    env = env or environment()
    env["PATH"] = os.pathsep.join([str(folder), str(scripts), env.get("PATH", "")])
    outputs = []
    for command in shell_commands(block):
        if re.search(r"\bpip\b.*\binstall\b", command):
            raise Failure(f"{block.where}: {command!r} installs packages: mark the block "
                          "with a skip-test comment")
        result = subprocess.run(
            ["bash", "-c", command], cwd=workdir, env=env,
            capture_output=True, text=True, timeout=timeout,
        )
        if result.returncode != 0:
            raise Failure(f"{block.where}: {command!r} exited with status {result.returncode}\n"
                          f"{_tail(result.stderr)}")
        outputs.append((command, result.stdout, result.stderr))
    return outputs


def describe(command):
    """The program a shell command runs (its first word)."""
    return shlex.split(command)[0] if command.strip() else ""
