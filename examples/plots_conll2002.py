"""Plots of a CRF NER tagger on CoNLL-2002 Spanish, written as PNG files
=====================================================================

Needs matplotlib (``pip install "sklearn-crf[plot]"``). Writes to ``--out``:

* ``loss_curve.png``: the training loss (``crf.loss_curve_``) and the entity
  F1 on a validation set (esp.testa, ``crf.validation_scores_`` from
  ``fit(X, y, X_val=..., y_val=...)`` with ``validation_scoring="entity_f1"``)
  after each iteration, with the best iteration (``crf.best_iteration_``);
* ``transitions.png``: a heatmap of the transition weights
  (``crf.transition_matrix_``, rows: from label, columns: to label);
* ``entity_scores.png``: precision, recall and F1 of each entity type on
  esp.testb (``entity_precision_recall_fscore_support``);
* ``c1_c2_grid.png``: the cross-validated entity F1 (``GridSearchCV``,
  ``GroupKFold`` by article) over a grid of c1 x c2;
* ``validation_curve.png``: the same search by ``CRFTaggerCV`` (one encoding,
  warm-started fits along the regularization path): the entity F1 of each
  fold and their mean against c1 (at the best c2) and against c2 (at the best
  c1).

Run it (``--help`` lists the flags and their defaults)::

    python examples/plots_conll2002.py --out plots            # all of esp.train
    python examples/plots_conll2002.py --n-train 2000 --grid-n-train 1000 --grid-size 3 --out plots

On all of the data (one 2-core machine shared with other jobs)::

    $ python examples/plots_conll2002.py --out plots
    esp.train: 8323, esp.testa (validation): 1915, esp.testb (test): 1517 sentences
    fit: 204.4 s, 100 iterations, final loss 7612.8
    validation entity F1 (esp.testa): best 0.7348 at iteration 59, last 0.7320
    grid: 5 x 5 values x 3 folds on 2000 sentences, 50 iterations per fit: 639.5 s
    best: c1=0.01, c2=0.1, entity F1 0.6844
    wrote plots/loss_curve.png
    wrote plots/transitions.png
    wrote plots/entity_scores.png
    wrote plots/c1_c2_grid.png

(``validation_curve.png`` and its ``path:`` line came later; see
``docs/user_guide/model_selection.rst`` for its figures.)
"""

import argparse
import pathlib
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, GroupKFold

from sklearn_crf import CRFTagger, CRFTaggerCV, SequenceFeaturizer
from sklearn_crf.datasets import load_conll2002
from sklearn_crf.metrics import entity_precision_recall_fscore_support, get_scorer

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
except ImportError as exc:  # pragma: no cover - the "plot" extra installs it
    raise SystemExit('this example needs matplotlib: pip install "sklearn-crf[plot]"') from exc


def spread(values, k):
    """k of the values, the first and the last among them, evenly spaced in the list."""
    if k < 1:
        raise SystemExit(f"--grid-size must be at least 1, got {k}")
    if k >= len(values):
        return list(values)
    return [values[i] for i in np.linspace(0, len(values) - 1, k).round().astype(int)]


def plot_loss_curve(crf, path):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    iterations = np.arange(1, len(crf.loss_curve_) + 1)
    ax.plot(iterations, crf.loss_curve_, color="tab:blue", label="training loss")
    ax.set_xlabel("iteration")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("training loss (objective)", color="tab:blue")
    ax.set_yscale("log")
    ax.tick_params(axis="y", labelcolor="tab:blue")
    handles = ax.get_legend_handles_labels()[0]
    scores = crf.validation_scores_
    ax2 = ax.twinx()
    handles += ax2.plot(np.arange(1, len(scores) + 1), scores, color="tab:orange",
                        label="validation entity F1 (esp.testa)")
    ax2.set_ylabel("validation entity F1", color="tab:orange")
    ax2.tick_params(axis="y", labelcolor="tab:orange")
    best = crf.best_iteration_
    handles.append(ax2.axvline(best, color="gray", linestyle="--",
                               label=f"best iteration {best}: F1 {scores[best - 1]:.3f}"))
    ax.set_title("Training loss and validation entity F1 per iteration")
    ax.legend(handles=handles, loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)  # the figure stays open: the docs' gallery shows it


def plot_transitions(crf, path):
    labels = [str(label) for label in crf.classes_]
    matrix = crf.transition_matrix_
    vmax = np.abs(matrix).max() or 1.0
    fig, ax = plt.subplots(figsize=(7, 6))
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("to label")
    ax.set_ylabel("from label")
    for i in range(len(labels)):
        for j in range(len(labels)):
            ax.text(j, i, f"{matrix[i, j]:.1f}", ha="center", va="center", fontsize=8,
                    color="white" if abs(matrix[i, j]) > 0.6 * vmax else "black")
    fig.colorbar(image, ax=ax, label="transition weight")
    ax.set_title("Transition weights (from row label to column label)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)  # the figure stays open: the docs' gallery shows it


def plot_entity_scores(y_true, y_pred, path, title):
    types = sorted({label[2:] for seq in y_true for label in seq if label != "O"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # types never predicted on a small subset: 0 precision
        p, r, f, support = entity_precision_recall_fscore_support(y_true, y_pred, zero_division=0)
        micro = entity_precision_recall_fscore_support(
            y_true, y_pred, average="micro", zero_division=0)
    names = [f"{t}\n({n})" for t, n in zip(types, support)] + [f"all\n({support.sum()})"]
    values = np.column_stack([np.append(p, micro[0]), np.append(r, micro[1]),
                              np.append(f, micro[2])])
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, (name, color) in enumerate(zip(("precision", "recall", "F1"),
                                          ("tab:blue", "tab:orange", "tab:green"))):
        bars = ax.bar(x + (k - 1) * 0.27, values[:, k], 0.27, label=name, color=color)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("score")
    ax.set_xlabel("entity type (number of true entities)")
    ax.set_title(title)
    ax.legend(loc="upper center", ncols=3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)  # the figure stays open: the docs' gallery shows it


def plot_grid(search, c1_values, c2_values, n_sequences, path):
    scores = np.full((len(c1_values), len(c2_values)), np.nan)
    for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
        scores[c1_values.index(params["c1"]), c2_values.index(params["c2"])] = score
    fig, ax = plt.subplots(figsize=(7, 5.5))
    image = ax.imshow(scores, cmap="viridis", origin="lower", aspect="auto")
    ax.set_xticks(range(len(c2_values)), [f"{v:g}" for v in c2_values])
    ax.set_yticks(range(len(c1_values)), [f"{v:g}" for v in c1_values])
    ax.set_xlabel("c2 (L2)")
    ax.set_ylabel("c1 (L1)")
    best = np.unravel_index(np.nanargmax(scores), scores.shape)
    middle = np.nanmin(scores) + 0.5 * (np.nanmax(scores) - np.nanmin(scores))
    for i in range(len(c1_values)):
        for j in range(len(c2_values)):
            ax.text(j, i, f"{scores[i, j]:.3f}", ha="center", va="center",
                    fontweight="bold" if (i, j) == best else "normal",
                    color="black" if scores[i, j] > middle else "white")
    fig.colorbar(image, ax=ax, label="mean cross-validated entity F1")
    ax.set_title(f"Cross-validated entity F1 over c1 x c2\n({n_sequences} sentences, "
                 f"{search.n_splits_}-fold GroupKFold by article)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)  # the figure stays open: the docs' gallery shows it
    return scores


def plot_validation_curve(model, path):
    """Entity F1 of each fold and their mean against c1 (at the best c2) and
    against c2 (at the best c1), from ``CRFTaggerCV``'s ``scores_``."""
    scores = model.scores_  # (n_splits, len(c1s_), len(c2s_))
    i, j = list(model.c1s_).index(model.c1_), list(model.c2s_).index(model.c2_)
    curves = [("c1 (L1)", model.c1s_, scores[:, :, j], f"c2 = {model.c2_:g}"),
              ("c2 (L2)", model.c2s_, scores[:, i, :], f"c1 = {model.c1_:g}")]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharey=True)
    for ax, (name, values, fold_scores, fixed) in zip(axes, curves):
        x = np.arange(len(values))
        for k, row in enumerate(fold_scores):
            ax.plot(x, row, color="tab:gray", alpha=0.6, marker=".",
                    label="folds" if k == 0 else None)
        mean, std = fold_scores.mean(axis=0), fold_scores.std(axis=0)
        ax.fill_between(x, mean - std, mean + std, color="tab:blue", alpha=0.15)
        ax.plot(x, mean, color="tab:blue", marker="o", label="mean ± std")
        ax.set_xticks(x, [f"{v:g}" for v in values])
        ax.set_xlabel(name)
        ax.set_title(f"against {name.split()[0]} ({fixed})")
    axes[0].set_ylabel("cross-validated entity F1")
    axes[0].legend(loc="lower left")
    fig.suptitle(f"Validation curves of CRFTaggerCV ({model.n_splits_} folds, "
                 f"best c1={model.c1_:g}, c2={model.c2_:g})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)  # the figure stays open: the docs' gallery shows it


def main():
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().partition("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("plots"),
                        help="directory for the PNG files")
    parser.add_argument("--n-train", type=int, default=None, help="first N training sentences, all if not given")
    parser.add_argument("--n-val", type=int, default=None, help="first N sentences of esp.testa, all if not given")
    parser.add_argument("--n-test", type=int, default=None, help="first N sentences of esp.testb, all if not given")
    parser.add_argument("--max-iter", type=int, default=100,
                        help="CRF iterations (a fixed budget, as in the published figures)")
    parser.add_argument("--grid-n-train", type=int, default=2000,
                        help="first N training sentences for the c1 x c2 grid, all if not given")
    parser.add_argument("--grid-max-iter", type=int, default=50,
                        help="CRF iterations per fit of the grid (a fixed budget)")
    parser.add_argument("--c1", type=float, nargs="+", default=[0.0, 0.01, 0.1, 0.5, 2.0],
                        help="c1 values of the grid")
    parser.add_argument("--c2", type=float, nargs="+", default=[0.001, 0.01, 0.1, 0.5, 2.0],
                        help="c2 values of the grid")
    parser.add_argument("--grid-size", type=int, default=None,
                        help="keep K values of --c1 and of --c2, spread over each list "
                             "(a K x K grid; None: every value)")
    parser.add_argument("--cv", type=int, default=3, help="folds of the grid (GroupKFold)")
    parser.add_argument("--n-jobs", type=int, default=1, help="parallel fits of the grid (GridSearchCV), cores of CRFTaggerCV")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.grid_size is not None:
        args.c1, args.c2 = spread(args.c1, args.grid_size), spread(args.c2, args.grid_size)

    featurizer = SequenceFeaturizer()
    train = load_conll2002("train", n_sentences=args.n_train)
    val = load_conll2002("testa", n_sentences=args.n_val)
    test = load_conll2002("testb", n_sentences=args.n_test)
    X_train, X_val, X_test = (featurizer.transform(d.sentences) for d in (train, val, test))
    print(f"esp.train: {len(X_train)}, esp.testa (validation): {len(X_val)}, "
          f"esp.testb (test): {len(X_test)} sentences")

    print(f"fitting on {len(X_train)} sentences, {args.max_iter} iterations, scoring "
          f"esp.testa after each one ...", flush=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # a fixed iteration budget (the published figures'), not convergence: silenced on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        # X_val without early_stopping: the scores are recorded, all iterations kept
        crf = CRFTagger(c1=0.1, c2=0.1, max_iter=args.max_iter,
                        all_possible_transitions=True, validation_scoring="entity_f1")
        crf.fit(X_train, train.tags, X_val=X_val, y_val=val.tags)
    print(f"fit: {time.perf_counter() - start:.1f} s, {crf.n_iter_} iterations, "
          f"final loss {crf.loss_curve_[-1]:.1f}")
    best = crf.best_iteration_
    print(f"validation entity F1 (esp.testa): best {crf.validation_scores_[best - 1]:.4f} "
          f"at iteration {best}, last {crf.validation_scores_[-1]:.4f}")
    plot_loss_curve(crf, args.out / "loss_curve.png")
    plot_transitions(crf, args.out / "transitions.png")
    y_pred = crf.predict(X_test)
    plot_entity_scores(test.tags, y_pred, args.out / "entity_scores.png",
                       f"Entity scores on esp.testb ({len(X_test)} sentences)")

    grid_train = load_conll2002("train", n_sentences=args.grid_n_train)
    X_grid = featurizer.transform(grid_train.sentences)
    search = GridSearchCV(
        CRFTagger(max_iter=args.grid_max_iter, all_possible_transitions=True),
        {"c1": args.c1, "c2": args.c2},
        scoring=get_scorer("entity_f1"),
        cv=GroupKFold(n_splits=args.cv),
        n_jobs=args.n_jobs,
        refit=False,
        error_score="raise",
        verbose=2,  # one line per fit: the grid's progress
    )
    print(f"grid: {len(args.c1)} x {len(args.c2)} values x {args.cv} folds = "
          f"{len(args.c1) * len(args.c2) * args.cv} fits on {len(X_grid)} sentences ...",
          flush=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed budget per fit, as above
        search.fit(X_grid, grid_train.tags, groups=grid_train.documents)
    print(f"grid: {len(args.c1)} x {len(args.c2)} values x {args.cv} folds on "
          f"{len(X_grid)} sentences, {args.grid_max_iter} iterations per fit: "
          f"{time.perf_counter() - start:.1f} s")
    scores = plot_grid(search, args.c1, args.c2, len(X_grid), args.out / "c1_c2_grid.png")
    print(f"best: c1={search.best_params_['c1']:g}, c2={search.best_params_['c2']:g}, "
          f"entity F1 {np.nanmax(scores):.4f}")

    # the same search along a warm-started path: X encoded once, each fit
    # starting from a neighbour's solution (with a fixed budget of iterations
    # per fit, as above, the path's fits get further than the cold ones)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        path = CRFTaggerCV(
            c1s=args.c1, c2s=args.c2, cv=GroupKFold(n_splits=args.cv),
            scoring="entity_f1", max_iter=args.grid_max_iter,
            all_possible_transitions=True, refit=False, n_jobs=args.n_jobs,
        ).fit(X_grid, grid_train.tags, groups=grid_train.documents)
    print(f"path: the same grid by CRFTaggerCV in {time.perf_counter() - start:.1f} s, "
          f"best c1={path.c1_:g}, c2={path.c2_:g}, entity F1 {path.best_score_:.4f}")
    plot_validation_curve(path, args.out / "validation_curve.png")

    for name in ("loss_curve", "transitions", "entity_scores", "c1_c2_grid",
                 "validation_curve"):
        print(f"wrote {args.out / (name + '.png')}")


if __name__ == "__main__":
    main()
