"""The ``--help`` texts of the examples, read in one child process.

``python examples/SCRIPT --help`` for every script would import sklearn_crf
(scikit-learn, numba) once per script; one fresh interpreter runs each script
as ``__main__`` with ``--help`` in turn instead (each script on a fresh
``sys.argv`` and a fresh namespace, as ``python SCRIPT --help`` would) and
reports each exit status and standard output.
"""

import functools
import json
import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"

_CHILD = """
import contextlib, io, json, runpy, sys
texts = {}
for path in sys.argv[1:]:
    sys.argv = [path, "--help"]
    sys.path[0] = path.rsplit("/", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(path, run_name="__main__")
            status = 0
        except SystemExit as exit:
            status = exit.code or 0
    texts[path.rsplit("/", 1)[-1]] = [status, out.getvalue()]
print(json.dumps(texts))
"""


@functools.cache
def help_texts():
    """``{script name: its --help output}`` of every example (each exited with status 0)."""
    scripts = sorted(str(p) for p in EXAMPLES.glob("*.py"))
    result = subprocess.run([sys.executable, "-c", _CHILD, *scripts], check=True,
                            capture_output=True, text=True, timeout=600)
    texts = json.loads(result.stdout.splitlines()[-1])
    failed = {name: status for name, (status, _) in texts.items() if status != 0}
    assert not failed, f"--help exited with a non-zero status: {failed}"
    return {name: text for name, (_, text) in texts.items()}
