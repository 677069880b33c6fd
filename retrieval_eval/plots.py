"""Plots of evaluation results: metrics against k, first relevant ranks, the ceiling, slices, intervals,
recall against the token budget per chunking.

The only modules besides :mod:`retrieval_eval.teaching` and the widgets that import matplotlib.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .checks import check_ks, check_positive_int
from .evaluation import METRICS, RANK_TABLE_COLUMNS, precision_ceiling
from .teaching import DISPLAY_INCHES


def plot_metrics(table: pd.DataFrame, qrels: Mapping | None = None, k_model: int | None = None):
    """Four panels (recall, precision, MRR, nDCG) in a 2 × 2 grid, each metric against k, one line per retriever.

    9 inches wide, so that a notebook shows it at full size (a wider figure is shrunk to the column,
    and its text with it) and every text is at least 10 pt as shown.

    Args:
        table: the output of :func:`evaluate`.
        qrels: when given, the precision panel also shows the precision@k ceiling.
        k_model: when given, a vertical line marks the k passed to the model.

    Returns:
        The matplotlib Figure.

    Taught in: notebook 05_three_retrievers.
    """
    fig, axes = plt.subplots(2, 2, figsize=(DISPLAY_INCHES, 6.8), sharex=True, sharey=True, layout="constrained")
    for ax, metric in zip(axes.flat, METRICS):
        ks = list(table[metric].columns)
        for retriever, marker in zip(table.index, "osd^v"):
            ax.plot(ks, table.loc[retriever, metric].values, marker=marker, label=retriever)
        if metric == "precision" and qrels is not None:
            ax.plot(ks, [precision_ceiling(qrels, k) for k in ks], "k--", lw=1, label="ceiling")
        if k_model is not None:
            ax.axvline(k_model, color="grey", lw=4, alpha=0.25, label=f"k the model reads ({k_model})")
        ax.set_title(f"{metric}@k", fontsize=11)
        ax.set_xticks(ks)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("cut-off k", fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("mean over questions", fontsize=10)
    handles, labels = axes[0][1].get_legend_handles_labels()  # the precision panel has every line
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), fontsize=10, frameon=False)
    return fig


def plot_first_relevant_ranks(
    ranks: pd.DataFrame, k: int | None = None, max_rank: int = 10, show_rr: bool = False, as_mrr: bool = False,
    title: str | None = None,
):
    """Bar chart: at which rank each retriever puts its first relevant chunk, over all questions.

    With ``as_mrr=False`` each bar counts questions: the share of questions left of the cut-off k
    is recall@k when every question has one relevant chunk. With ``as_mrr=True`` each bar is what
    those questions add to MRR, count × (1/rank) / number of questions, so one retriever's bars add
    up to its MRR (no cut-off) and the bars up to rank k to its MRR@k; misses add 0.

    Args:
        ranks: the output of :func:`first_relevant_ranks` (one integer column per retriever,
            ``<NA>`` when no relevant chunk is in the ranking).
        k: when given, the ranks up to k are shaded.
        max_rank: the last rank with its own bar, an integer >= 1; ranks above it share the bar
            ">max_rank", and questions with no relevant chunk ranked have the bar "none".
        show_rr: add a top axis with the reciprocal rank 1/rank of each bar.
        as_mrr: draw each bar's share of MRR instead of its count of questions (the legend then
            gives each retriever's MRR, the sum of its bars).
        title: the figure title.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: ``ranks`` has no retriever column, or k / ``max_rank`` is not an integer >= 1.

    Taught in: notebooks 01_recall_at_k and 03_mrr.
    """
    retrievers = [c for c in ranks.columns if c not in RANK_TABLE_COLUMNS]  # a toy table may have no slice column
    if not retrievers:
        raise ValueError("ranks has no retriever column; pass the output of first_relevant_ranks")
    max_rank = check_positive_int(max_rank, "max_rank")
    k = None if k is None else check_positive_int(k)
    n = len(ranks)
    positions = np.arange(1, max_rank + 3)  # ranks 1..max_rank, then "> max_rank", then "none"
    bar = 0.8 / len(retrievers)
    fig, ax = plt.subplots(figsize=(DISPLAY_INCHES, 3.8))
    if k is not None:
        inside = "the bars here add up to MRR@" + str(k) if as_mrr else f"inside the cut-off k = {k}"
        ax.axvspan(0.5, min(k, max_rank) + 0.5, color="#fddbc7", alpha=0.6, lw=0, label=f"ranks 1 to {k}: {inside}")
    for i, name in enumerate(retrievers):
        found = ranks[name].dropna().astype(int)
        counts = [int((found == r).sum()) for r in range(1, max_rank + 1)]
        deep = found[found > max_rank]
        if as_mrr:
            heights = [c / r / n for r, c in enumerate(counts, start=1)] + [float((1 / deep).sum()) / n, 0.0]
            label = f"{name}: MRR = {sum(heights):.3f}"
        else:
            heights = counts + [len(deep), n - len(found)]
            label = name
        ax.bar(positions - 0.4 + bar * (i + 0.5), heights, width=bar, label=label)
    ax.set_xticks(positions, labels=[str(r) for r in range(1, max_rank + 1)] + [f">{max_rank}", "none"])
    ax.set_xlim(0.5, max_rank + 2.5)
    ax.set_xlabel("rank of the first relevant chunk")
    ax.set_ylabel(f"adds to MRR\n(questions × 1/rank ÷ {n})" if as_mrr else f"questions (of {n})")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=10)
    if show_rr:
        top = ax.twiny()
        top.set_xlim(ax.get_xlim())
        labels = [f"{1 / r:.2f}" for r in range(1, max_rank + 1)] + [f"<{1 / max_rank:.2f}", "0"]
        top.set_xticks(positions, labels=labels, fontsize=10)
        top.set_xlabel("reciprocal rank 1/rank")
    if title:  # above the top axis when there is one
        fig.suptitle(title, fontsize=11.5)
    fig.tight_layout()
    return fig


def plot_precision_ceiling(
    qrels: Mapping, ks: Iterable[int] = range(1, 11), table: pd.DataFrame | None = None, k: int | None = None,
    title: str | None = None,
):
    """Precision@k against k: the ceiling computed from the labels, 1/k, and optionally the retrievers.

    The ceiling is :func:`precision_ceiling` at each k, the best precision@k any ranking can reach
    on these qrels; above it is shaded as unreachable.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        ks: the cut-offs to draw (integers >= 1).
        table: when given, the output of :func:`evaluate` with at least these ks; each retriever's
            precision@k is drawn.
        k: when given (one of ``ks``), the ceiling at this cut-off is labelled with its value.
        title: the figure title.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: ``ks`` is not a list of distinct integers >= 1 (:func:`~retrieval_eval.checks.check_ks`), ``table`` lacks precision at one of the ks, or
            ``k`` is not one of the ks.

    Taught in: notebook 02_precision_at_k.
    """
    ks = check_ks(ks)
    if k is not None and k not in ks:
        raise ValueError(f"k = {k!r} is not one of the ks {ks}")
    if table is not None:
        missing = [each for each in ks if ("precision", each) not in table.columns]
        if missing:
            raise ValueError(f"table has no precision at k = {missing}; evaluate with ks={ks}")
    ceiling = [precision_ceiling(qrels, k) for k in ks]
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    ax.fill_between(ks, ceiling, 1.05, color="grey", alpha=0.18, lw=0, label="unreachable with these labels")
    ax.plot(ks, ceiling, "-", color="#444444", lw=5, alpha=0.6, label="ceiling: a perfect ranking", zorder=2)
    # 1/k on top of the ceiling: with one relevant chunk for almost every question the two nearly coincide.
    ax.plot(ks, [1 / each for each in ks], "--", color="#d6604d", lw=1.8, label="1/k: every question one relevant chunk",
            zorder=4)
    if table is not None:
        for name, marker in zip(table.index, "osd^v"):
            ax.plot(ks, [table.loc[name, ("precision", each)] for each in ks], marker=marker, lw=1, label=name)
    if k is not None:
        value = precision_ceiling(qrels, k)
        right_of = k + 1 <= max(ks)  # the label right of the point, unless k is the last cut-off
        ax.annotate(f"ceiling at k = {k}: {value:.3f}", (k, value), xytext=(k + 1 if right_of else k - 0.5, value + 0.3),
                    ha="left" if right_of else "right", arrowprops={"arrowstyle": "->"}, fontsize=10)
    ax.set_xticks(ks)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("cut-off k")
    ax.set_ylabel("precision@k (mean over questions)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)  # below: the plot stays clear
    if title:
        ax.set_title(title, fontsize=11.5)
    fig.tight_layout()
    return fig


def plot_slices(report: pd.DataFrame, metric: str = "recall", k: int = 3):
    """Bars of one metric per slice (groups) and retriever (bars), with the slice sizes.

    Args:
        report: the output of :func:`slice_report`.
        metric: one of recall, precision, MRR, nDCG.
        k: the cut-off the report was computed at (for the labels).

    Taught in: notebook 08_beyond_the_averages.
    """
    retrievers = list(dict.fromkeys(report.index.get_level_values("retriever")))
    values = report[metric].unstack("retriever")[retrievers]
    sizes = report["questions"].groupby(level="slice").first()
    fig, ax = plt.subplots(figsize=(7, 3.2), constrained_layout=True)
    values.plot.bar(ax=ax, rot=0, width=0.8)
    ax.set_xticklabels([f"{s}\n({sizes[s]} questions)" for s in values.index])
    ax.set_xlabel("")
    ax.set_ylabel(f"{metric}@{k}")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title=None, ncols=len(values.columns), loc="upper center", bbox_to_anchor=(0.5, 1.18), frameon=False)
    return fig


def plot_intervals(intervals: pd.DataFrame, k: int = 3):
    """Each retriever's mean and 95% interval, one panel per metric (the output of :func:`interval_table`).

    At most three panels a row, 9 inches wide, so that a notebook shows the figure at full size and
    every text is at least 10 pt as shown.

    Args:
        intervals: the output of :func:`~retrieval_eval.comparisons.interval_table`: indexed by
            ``(retriever, metric)``, with columns ``mean``, ``low`` and ``high`` (floats in [0, 1]).
        k: the cut-off, for the panel titles ("recall@3").

    Returns:
        The matplotlib Figure.

    Taught in: notebook 08_beyond_the_averages.
    """
    metrics = list(dict.fromkeys(intervals.index.get_level_values("metric")))
    retrievers = list(dict.fromkeys(intervals.index.get_level_values("retriever")))
    ncols = min(3, len(metrics))
    nrows = -(-len(metrics) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(DISPLAY_INCHES, 0.4 + (0.5 + 0.4 * len(retrievers)) * nrows),
                             sharex=True, sharey=True, layout="constrained", squeeze=False)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)
    for ax, metric in zip(axes.flat, metrics):
        part = intervals.xs(metric, level="metric").reindex(retrievers)
        y = np.arange(len(retrievers))
        ax.errorbar(part["mean"], y, xerr=[part["mean"] - part["low"], part["high"] - part["mean"]], fmt="o", capsize=4)
        ax.set_yticks(y, retrievers)
        ax.set_ylim(len(retrievers) - 0.5, -0.5)  # first retriever on top, half a row of room above and below
        ax.set_title(f"{metric}@{k}", fontsize=11)
        ax.set_xlim(0, 1)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelbottom=True)  # every panel keeps its 0-to-1 scale, also above a hidden one
    return fig


def plot_chunking_budget(curves: pd.DataFrame, budget: int | None = None, title: str | None = None):
    """Recall@k against the word pieces the generator reads (k × chunk size), one line per chunking.

    One panel per retriever; one colour per chunk size, a solid line without overlap and a dashed
    one with it, a marker at every k. Read along a vertical line: every chunking at the same
    budget, the comparison that matters for RAG (at the same k, smaller chunks give the model less).
    The figure is 9 inches wide, so a notebook shows its text at full size (10 pt and more).

    Args:
        curves: the ``curves`` table of :func:`~retrieval_eval.chunking.chunking_experiment`
            (columns ``setting, chunk size, overlap, retriever, budget, recall``).
        budget: when given, a vertical line marks this budget (word pieces).
        title: the figure title.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: ``curves`` misses one of those columns (names them).

    Taught in: notebook 09_chunking.
    """
    missing = [c for c in ("setting", "chunk size", "overlap", "retriever", "budget", "recall") if c not in curves.columns]
    if missing:
        raise ValueError(f"curves misses the column(s) {missing}: pass the curves table of chunking_experiment")
    retrievers = list(dict.fromkeys(curves["retriever"]))
    sizes = sorted(curves["chunk size"].unique())
    colours = dict(zip(sizes, ["#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e"]))
    fig, axes = plt.subplots(1, len(retrievers), figsize=(DISPLAY_INCHES, 4.8), sharey=True, constrained_layout=True, squeeze=False)
    for ax, retriever in zip(axes[0], retrievers):
        part = curves[curves["retriever"] == retriever]
        for setting, line in part.groupby("setting", sort=False):
            size, overlap = line["chunk size"].iloc[0], line["overlap"].iloc[0]
            ax.plot(line["budget"], line["recall"], "--" if overlap else "-", marker="o" if overlap else "s",
                    markersize=3.5, lw=1.6, color=colours[size], alpha=0.75 if overlap else 1.0, label=setting)
        if budget is not None:
            ax.axvline(budget, color="grey", lw=5, alpha=0.25, label=f"budget {budget} word pieces")
        ax.set_title(retriever, fontsize=11)
        ax.set_xticks(sorted({*range(0, int(curves["budget"].max()) + 1, max(sizes))}))
        ax.tick_params(labelsize=10)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("recall@k (mean over questions)", fontsize=10)
    axes[0][len(retrievers) // 2].set_xlabel("word pieces the model reads (k × chunk size)", fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)), fontsize=10, frameon=False)
    if title:
        fig.suptitle(title, fontsize=11.5)
    return fig
