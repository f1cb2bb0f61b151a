"""Per-token cost of SequenceVectorizer's encoding: the working tree against a git revision.

For users who bring their own ``word2features``: the cost of turning feature
dicts into an EncodedCorpus. The revision's vectorizer module (``git show``)
is loaded next to the working tree's, in this one process, as a module of the working tree's package (so its
relative imports are the working tree's), and the two alternate (A B, B A, ...)
on the same feature dicts: ``SequenceFeaturizer()`` of CoNLL-2002 esp.train and
esp.testb. Both suffer the same load, so their ratio is fair on a busy machine
too; and the clock is this process's CPU time (``time.process_time``), which
other jobs on the machine disturb less than wall time. Measures, each per
token (µs of CPU), median over ``--repeats``:

  fit_encode   fit_encode(esp.train): the vocabulary and memo being built
  encode_train encode(esp.train) after fit: every (key, value) item hits the memo
  encode_test  encode(esp.testb) after fit: hits, and misses for unseen values
  hashing      SequenceVectorizer(n_features=2**18).fit_encode(esp.train)
  encode_one   encode([x]) for each of the first 500 sentences of esp.testb in turn
               (the serving path: a sentence at a time)

and checks that both give bitwise the same arrays (and, fitting, the same
vocabulary, memo and hash slots, in the same order).

    python benchmarks/bench_encode.py                  # against main, 5 repeats
    python benchmarks/bench_encode.py --rev HEAD~1 --n-train 2000
    python benchmarks/bench_encode.py --quick          # smoke run
    python benchmarks/bench_encode.py --measures fit_encode,encode_one --repeats 9
"""

import argparse
import gc
import importlib
import importlib.abc
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

#: sentences of the one-at-a-time measure
ONE = 500
MEASURES = ("fit_encode", "encode_train", "encode_test", "hashing", "encode_one")
FIELDS = ("tok_ptr", "tok_attr", "tok_val", "seq_ptr", "zero_tok", "zero_attr")


def git_source(rev, path):
    """The text of ``path`` at ``rev``, or None where the revision has no such file."""
    result = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"],
                            capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


class RevisionModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``sklearn_crf`` modules that the working tree no longer has
    (e.g. ``_kernels``, which an old revision's vectorizer imports) from the revision."""

    def __init__(self, rev):
        self.rev = rev
        self.dir = tempfile.mkdtemp(prefix="bench_encode_")  # numba caches need real files

    @staticmethod
    def _path(fullname):
        return fullname.replace(".", "/") + ".py"

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("sklearn_crf."):
            return None
        if os.path.exists(os.path.join(ROOT, self._path(fullname))):
            return None
        if git_source(self.rev, self._path(fullname)) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def exec_module(self, module):
        source = git_source(self.rev, self._path(module.__name__))
        module.__file__ = os.path.join(self.dir, module.__name__ + ".py")
        with open(module.__file__, "w", encoding="utf-8") as f:
            f.write(source)
        exec(compile(source, module.__file__, "exec"), module.__dict__)


#: where the vectorizer module lived: (path, its package), newest layout first
VECTORIZER_PATHS = (
    ("sklearn_crf/_features/vectorizer.py", "sklearn_crf._features"),
    ("sklearn_crf/_vectorizer.py", "sklearn_crf"),
)


def _read(path):
    """The text of a working-tree file, or None where it does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def load_revision(rev):
    """The revision's vectorizer module, inside the working tree's package
    (modules it imports that the working tree no longer has come from the revision)."""
    for path, package in VECTORIZER_PATHS:
        source = git_source(rev, path)
        if source is not None:
            break
    else:
        raise SystemExit(f"{rev} has no vectorizer module ({', '.join(p for p, _ in VECTORIZER_PATHS)})")
    import sklearn_crf

    # the vectorizer's sibling modules come from the working tree: a revision
    # whose siblings differ would be measured with the working tree's loop
    folder = os.path.dirname(path)
    listing = subprocess.run(["git", "-C", ROOT, "ls-tree", "--name-only", f"{rev}:{folder}"],
                             capture_output=True, text=True, check=True).stdout.split()
    changed = [name for name in listing if name.endswith(".py") and name != "vectorizer.py"
               and name != "_vectorizer.py" and folder.endswith("_features")
               and git_source(rev, f"{folder}/{name}") != _read(os.path.join(ROOT, folder, name))]
    if changed:
        raise SystemExit(
            f"{rev}'s {folder} differs from the working tree's in {', '.join(changed)}: "
            "this script swaps in the vectorizer module only; compare whole revisions "
            "with bench_regression.py"
        )
    sys.meta_path.append(RevisionModules(rev))
    name = package + "._vectorizer_rev"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    module.__file__ = f"<{rev}:{path}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    assert sklearn_crf.__file__.startswith(ROOT), sklearn_crf.__file__
    return module


def measures(vectorizer_class, X_train, X_test, chosen=MEASURES):
    """name → callable of the ``chosen`` measures, for one vectorizer class."""
    fitted = vectorizer_class().fit(X_train)
    calls = {
        "fit_encode": lambda: vectorizer_class().fit_encode(X_train),
        "encode_train": lambda: fitted.encode(X_train),
        "encode_test": lambda: fitted.encode(X_test),
        "hashing": lambda: vectorizer_class(n_features=2**18).fit_encode(X_train),
        "encode_one": lambda: [fitted.encode([x]) for x in X_test[:ONE]],
    }
    return {m: calls[m] for m in chosen}


def same_state(a, b):
    """Whether the corpora's vectorizers have the same fitted state, dicts compared
    item by item in their order (the vocabulary, the memo, the hash slots)."""
    sa, sb = vars(a.vectorizer), vars(b.vectorizer)
    if sa.keys() != sb.keys():
        return False
    for name in sa:
        x, y = sa[name], sb[name]
        if isinstance(x, dict):
            same = list(x.items()) == list(y.items())
        elif hasattr(x, "tobytes"):
            same = x.dtype == y.dtype and x.tobytes() == y.tobytes()
        else:
            same = x == y
        if not same:
            return False
    return True


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="main")
    parser.add_argument("--repeats", type=int, default=None, help="default 5, 1 with --quick")
    parser.add_argument("--n-train", type=int, default=None,
                        help="first N sentences of esp.train (default all, 300 with --quick)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--measures", default=",".join(MEASURES),
                        help=f"comma-separated, among {','.join(MEASURES)} (default all)")
    args = parser.parse_args(argv)
    chosen = args.measures.split(",")
    if set(chosen) - set(MEASURES):
        parser.error(f"unknown measure(s): {', '.join(sorted(set(chosen) - set(MEASURES)))}")
    repeats = args.repeats or (1 if args.quick else 5)
    n_train = args.n_train or (300 if args.quick else None)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", args.rev], check=True,
                            capture_output=True, text=True).stdout.strip()

    from sklearn_crf import SequenceFeaturizer, SequenceVectorizer
    from sklearn_crf.datasets import load_conll2002

    old = load_revision(args.rev).SequenceVectorizer
    featurizer = SequenceFeaturizer()
    X_train = featurizer.transform(load_conll2002("train", n_sentences=n_train).sentences)
    X_test = featurizer.transform(load_conll2002("testb", n_sentences=n_train).sentences)
    n_tokens = {"fit_encode": sum(map(len, X_train)), "encode_train": sum(map(len, X_train)),
                "encode_test": sum(map(len, X_test)), "hashing": sum(map(len, X_train)),
                "encode_one": sum(map(len, X_test[:ONE]))}
    print(f"# bench_encode: working tree ({ROOT}) against {args.rev} = {commit}")
    print(f"data: esp.train {len(X_train)} sentences, esp.testb {len(X_test)} sentences "
          f"(SequenceFeaturizer() dicts); {repeats} repeats, the versions alternating; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    versions = {"tree": measures(SequenceVectorizer, X_train, X_test, chosen),
                "rev": measures(old, X_train, X_test, chosen)}
    times = {key: {m: [] for m in versions[key]} for key in versions}
    for m in versions["tree"]:  # bitwise the same corpus (and warms both up)
        a, b = versions["tree"][m](), versions["rev"][m]()
        if m == "encode_one":
            a, b = a[-1], b[-1]
        same = all(getattr(a, f).dtype == getattr(b, f).dtype
                   and getattr(a, f).tobytes() == getattr(b, f).tobytes() for f in FIELDS)
        print(f"  {m}: EncodedCorpus bitwise equal: {'yes' if same else 'NO'}"
              + (f"; fitted state equal, in order: {'yes' if same_state(a, b) else 'NO'}"
                 if m in ("fit_encode", "hashing") else ""))
    for r in range(repeats):
        order = ("tree", "rev") if r % 2 == 0 else ("rev", "tree")
        for m in versions["tree"]:
            for key in order:
                gc.collect()
                t0 = time.process_time()
                versions[key][m]()
                times[key][m].append(time.process_time() - t0)
    print()
    print(f"| µs of CPU per token (median) | working tree | {args.rev} | ratio |")
    print("|---|---:|---:|---:|")
    for m in versions["tree"]:
        a = median(times["tree"][m]) / n_tokens[m] * 1e6
        b = median(times["rev"][m]) / n_tokens[m] * 1e6
        print(f"| {m} | {a:.3f} | {b:.3f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
