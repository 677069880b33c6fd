"""Every picture of the series besides the widgets' own: toy rankings and the discount, and evaluation results. Figures
are at most 9 inches wide (a notebook shows them at full size) and 5.6 tall, so a whole figure fits a 1366 × 768
screen; one style (``STYLE``) draws all their text, the widgets' too, at ``FONT_PT`` or more: 16.7 px at the 100 dpi
a notebook shows them at, as a projector needs."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from functools import wraps
from itertools import cycle

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch, Rectangle

from ..core.checks import check_gains, check_k, check_ks, check_list, check_ranking
from ..core.evaluation import evaluate, precision_ceiling, run_columns
from ..core.metrics import RECALL_LEVELS, iprec_at_recall
from ..core.registry import METRICS

WIDTH, MAX_HEIGHT = 9, 5.6  # inches
MARKERS = "osd^vP*X"
DISPLAY_INCHES = 9  # a notebook shows a figure at most about 900 px (9 inches at 100 dpi) wide, else shrinks it
FONT_PT = 12  # the smallest text of every figure: 16.7 px at 100 dpi
STYLE = {"font.size": FONT_PT, "figure.dpi": 100,  # ticks, labels, legends "medium" (= FONT_PT), titles "large"
         "text.parse_math": False}  # a run name or a label is drawn as typed: "cost $5" is no mathtext
CHAR_IN = 0.08 * FONT_PT / 10  # inches an id's character takes


def styled(draw):
    """``draw`` inside ``STYLE``; its ticks laid out before it returns, so they keep the style."""
    @wraps(draw)
    def styled_draw(*args, **kwargs):
        with plt.rc_context(STYLE):
            fig = draw(*args, **kwargs)
            fig.draw_without_rendering()
            interactive = plt.isinteractive()
        plt.interactive(interactive)  # IPython's backend, chosen at a kernel's first figure, turns it on: kept on
        return fig

    return styled_draw


def _finish(fig, ax, title: str | None, **legend):
    """The end of a one-panel figure: its legend (``legend``: the options), its title when given, its layout."""
    ax.legend(**legend)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def _split_id(doc_id: str, room: int) -> str:
    """An id longer than ``room`` characters on two lines, split after the "_" nearest its middle."""
    if len(doc_id) <= room:
        return doc_id
    cuts = [i + 1 for i, c in enumerate(doc_id) if c == "_" and max(i + 1, len(doc_id) - i - 1) <= room]
    if not cuts:
        return doc_id
    cut = min(cuts, key=lambda i: abs(2 * i - len(doc_id)))
    return doc_id[:cut] + "\n" + doc_id[cut:]


def _gain_colour(gain: float, graded: bool) -> str:
    """Light grey not relevant; light green gain 1 of graded labels (answers partly), else dark green."""
    if gain <= 0:
        return "#f4f4f4"
    return "#a6dba0" if graded and gain < 2 else "#1b7837"


@styled
def plot_rankings(rankings: Mapping[str, Sequence[str]], gains: Mapping[str, float], k: int | None = None,
                  max_rank: int = 10, show: Sequence[str] = (), title: str | None = None):
    """Rankings as result lists side by side (rank 1 on top), relevant chunks coloured, the cut-off k marked. ``gains``:
    one question's ``{id: gain}``, or ``{column title: {id: gain}}``; gains above 1 get a second colour. A relevant
    chunk below ``max_rank`` or not retrieved is named under its column, so no miss is invisible. ``show`` names metrics
    printed under each column at k ("MRR" prints RR@k)."""
    if not isinstance(rankings, Mapping) or not rankings:
        raise ValueError("rankings must be a non-empty {title: ranking} mapping")
    columns = {label: check_ranking(ranked) for label, ranked in rankings.items()}
    max_rank = check_k(max_rank, "max_rank")
    k = None if k is None else check_k(k)
    show = check_list(show, "show", "metric names")
    unknown = [m for m in show if m not in METRICS]
    if unknown:
        raise ValueError(f"show names unknown metric(s) {unknown}; choose from {list(METRICS)}")
    if show and k is None:
        raise ValueError("show needs a cut-off k")
    per_column = bool(gains) and all(isinstance(g, Mapping) for g in gains.values())
    if per_column and set(gains) != set(columns):
        raise ValueError(f"gains per column must name the columns {list(columns)}, not {list(gains)}")
    judged = {label: check_gains(gains[label] if per_column else gains) for label in columns}
    relevant = {label: [d for d, g in judged[label].items() if g > 0] for label in columns}
    graded = any(g > 1 for each in judged.values() for g in each.values())

    width, gap = 1.0, 0.12
    # Ids too long for a figure DISPLAY_INCHES wide go on two lines, split after a "_".
    room = max(16, int(((DISPLAY_INCHES - 0.9) / (len(columns) * (width + gap) + 0.45) - 0.3) / CHAR_IN))
    shown = {str(d): _split_id(str(d), room) for ranked in columns.values() for d in ranked[:max_rank]}
    pairs = {label: [("not retrieved:", d) if d not in ranked else (f"rank {ranked.index(d) + 1}:", d)
                     for d in relevant[label] if d not in ranked[:max_rank]] for label, ranked in columns.items()}
    longest = max([len(line) for text in shown.values() for line in text.split("\n")]  # a note on one line if it fits
                  + [len(f"{a} {b}") if len(f"{a} {b}") <= room else len(b) + 2 for each in pairs.values() for a, b in each]
                  + [0])
    column_inches = max(1.6, 0.3 + CHAR_IN * min(longest, room))  # room for the longest line
    row = 0.47 if any("\n" in text for text in shown.values()) else 0.4  # inches per rank: two lines of FONT_PT fit
    notes = {}
    for label, ranked in columns.items():
        lines = pairs[label]
        # a note too long for its column goes on two lines
        fits = (column_inches - 0.2) / CHAR_IN  # characters
        lines = [[f"{a} {b}"] if len(a) + 1 + len(b) <= fits else [a] + [f"  {part}" for part in _split_id(b, int(fits) - 2).split("\n")]
                 for a, b in lines]
        notes[label] = sum(lines, []) + [f"{'RR' if m == 'MRR' else m}@{k} = {METRICS[m].score(ranked, judged[label], k):.3f}"
                                         for m in show]
    n_notes = max(len(lines) for lines in notes.values())
    note_step = 2 * CHAR_IN / row  # one note line is 2 characters' width high, whatever the row height

    fig_width = max(5.5, 0.9 + column_inches * (len(columns) * (width + gap) + 0.45))
    fig, ax = plt.subplots(figsize=(fig_width, 1.0 + row * max_rank + 2 * CHAR_IN * n_notes))
    for j, (label, ranked) in enumerate(columns.items()):
        x0 = j * (width + gap)
        ax.text(x0 + width / 2, 0.25, label, ha="center", va="bottom", weight="bold")
        for rank in range(1, max_rank + 1):
            y = -rank
            doc_id = ranked[rank - 1] if rank <= len(ranked) else None
            gain = judged[label].get(doc_id, 0) if doc_id is not None else 0
            face = _gain_colour(gain, graded) if doc_id is not None else "white"
            ax.add_patch(Rectangle((x0, y + 0.08), width, 0.84, facecolor=face, edgecolor="#999999", lw=0.8))
            dark = gain > 0 and (not graded or gain >= 2)
            ax.text(x0 + 0.03, y + 0.5, shown[str(doc_id)] if doc_id is not None else "(empty)", va="center",
                    linespacing=1.0, color="white" if dark else ("#999999" if doc_id is None else "black"))
        for i, line in enumerate(notes[label]):
            ax.text(x0 + 0.03, -max_rank - 0.55 * 0.4 / row - note_step * i, line, va="center")
    right = len(columns) * (width + gap) - gap
    if k is not None and k <= max_rank:
        ax.plot([-0.02, right + 0.02], [-k + 0.04, -k + 0.04], color="#d6604d", lw=2.2)
        ax.text(right + 0.04, -k + 0.04, f"cut-off\nk = {k}", color="#d6604d", va="center")
    ax.set_yticks([-r + 0.5 for r in range(1, max_rank + 1)], labels=[str(r) for r in range(1, max_rank + 1)])
    ax.set(ylabel="rank", xticks=[], xlim=(-0.05, right + 0.4),
           ylim=(-max_rank - 0.3 * 0.4 / row - note_step * n_notes, 0.8))
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=_gain_colour(2, False), label="relevant")] if not graded else [
        Patch(facecolor=_gain_colour(2, True), label="gain 2 (answers fully)"),
        Patch(facecolor=_gain_colour(1, True), label="gain 1 (answers partly)"),
    ]
    handles.append(Patch(facecolor=_gain_colour(0, graded), edgecolor="#999999", label="not relevant"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(handles), frameon=False)
    if title:
        ax.set_title(textwrap.fill(title, int(fig_width / (1.2 * CHAR_IN))), pad=24)
    fig.tight_layout()
    return fig


@styled
def plot_discount(max_rank: int = 10, k: int | None = None, title: str | None = None):
    """nDCG's discount 1/log2(rank + 1) beside reciprocal rank's 1/rank; ranks below ``k`` shaded.

    The discount is Burges et al. 2005's, as trec_eval uses (Järvelin & Kekäläinen 2002 discount by log_b(rank)
    only from rank b on)."""
    max_rank = check_k(max_rank, "max_rank")
    k = None if k is None else check_k(k)
    ranks = np.arange(1, max_rank + 1)
    discount = 1 / np.log2(ranks + 1)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(ranks, discount, "o-", color="#1b7837", label="nDCG discount 1/log2(rank + 1)")
    ax.plot(ranks, 1 / ranks, "s--", color="#762a83", label="reciprocal rank 1/rank")
    for r, d in zip(ranks[:5], discount[:5]):
        ax.annotate(f"{d:.2f}", (r, d), textcoords="offset points", xytext=(4, 6), color="#1b7837")
    if k is not None and k < max_rank:
        ax.axvspan(k + 0.5, max_rank + 0.5, color="grey", alpha=0.15, lw=0, label=f"below cut-off k = {k}: counts 0 in nDCG@{k}")
    ax.set(xticks=ranks, xlim=(0.5, max_rank + 0.5), ylim=(0, 1.08), xlabel="rank", ylabel="weight of a relevant item")
    ax.grid(alpha=0.3)
    return _finish(fig, ax, title)


@styled
def plot_metrics(table: pd.DataFrame, qrels: Mapping | None = None, k_llm: int | None = None):
    """One panel per metric of the table (any number, three a row), each against k, one line per run;
    the precision panel shows the ceiling when ``qrels`` are given, and ``k_llm`` is marked."""
    if not isinstance(table, pd.DataFrame) or table.columns.names != ["metric", "k"]:
        raise ValueError("table must be a table of evaluate (columns (metric, k), one row per run)")
    metrics = list(dict.fromkeys(table.columns.get_level_values("metric")))
    ncols = min(len(metrics), 4 if len(metrics) == 4 else 3)
    nrows = -(-len(metrics) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDTH, min(MAX_HEIGHT, 0.9 + 2.3 * nrows)), sharex=True,
                             sharey=True, layout="constrained", squeeze=False)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)
    for ax, metric in zip(axes.flat, metrics):
        ks = list(table[metric].columns)
        for run, marker in zip(table.index, cycle(MARKERS)):  # any number of runs
            ax.plot(ks, table.loc[run, metric].values, marker=marker, label=run)
        if metric == "precision" and qrels is not None:
            ax.plot(ks, [precision_ceiling(qrels, k) for k in ks], "k--", lw=1, label="ceiling")
        if k_llm is not None:
            ax.axvline(k_llm, color="grey", lw=4, alpha=0.25, label=f"k the LLM reads ({k_llm})")
        ax.set_title(METRICS[metric].at("k") if metric in METRICS else metric)
        ax.set(xticks=ks, ylim=(0, 1.05))
        ax.grid(alpha=0.3)
        ax.set_xlabel("cut-off k")
    handles, labels = max((ax.get_legend_handles_labels() for ax in axes.flat), key=lambda h: len(h[1]))
    fig.legend(handles, labels, loc="outside lower center", ncols=min(5, len(labels)), frameon=False)
    return fig


@styled
def plot_first_relevant_ranks(ranks: pd.DataFrame, k: int | None = None, max_rank: int = 10, as_mrr: bool = False,
                              title: str | None = None):
    """Per run, how many questions have their first relevant chunk at each rank (ranks past ``max_rank`` share a
    bar; "none": no relevant chunk ranked); with ``as_mrr``, what those questions add to MRR, so a run's bars add
    up to its MRR. Ranks up to k are shaded."""
    runs, max_rank = run_columns(ranks), check_k(max_rank, "max_rank")
    if not runs:
        raise ValueError("ranks has no run column; pass the output of first_relevant_ranks")
    n, positions, bar = len(ranks), np.arange(1, max_rank + 3), 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(WIDTH, 3.6))
    if k is not None:
        k = check_k(k)
        ax.axvspan(0.5, min(k, max_rank) + 0.5, color="#fddbc7", alpha=0.6, lw=0,
                   label=f"ranks 1 to {k}: " + (f"their bars add up to MRR@{k}" if as_mrr else f"inside the top {k}"))
    for i, name in enumerate(runs):
        found = ranks[name].dropna().astype(int)
        counts = [int((found == r).sum()) for r in range(1, max_rank + 1)]
        deep = found[found > max_rank]
        heights = ([c / r / n for r, c in enumerate(counts, start=1)] + [float((1 / deep).sum()) / n, 0.0] if as_mrr
                   else counts + [len(deep), n - len(found)])
        ax.bar(positions - 0.4 + bar * (i + 0.5), heights, width=bar,
               label=f"{name}: MRR = {sum(heights):.3f}" if as_mrr else name)
    ax.set_xticks(positions, labels=[str(r) for r in range(1, max_rank + 1)] + [f">{max_rank}", "none"])
    ax.set(xlim=(0.5, max_rank + 2.5), xlabel="rank of the first relevant chunk",
           ylabel=f"adds to MRR\n(questions × 1/rank ÷ {n})" if as_mrr else f"questions (of {n})")
    ax.grid(axis="y", alpha=0.3)
    return _finish(fig, ax, title)


@styled
def plot_precision_ceiling(qrels: Mapping, ks: Iterable[int] = range(1, 11), table: pd.DataFrame | None = None,
                           k: int | None = None, title: str | None = None):
    """Precision@k against k: the ceiling a perfect ranking reaches on these labels, 1/k, and the runs of ``table``."""
    ks = check_ks(ks)
    missing = [each for each in ks if table is not None and ("precision", each) not in table.columns]
    if missing or (k is not None and k not in ks):
        raise ValueError(f"the table has no precision at k = {missing}" if missing else f"k = {k} is not one of the ks {ks}")
    ceiling = [precision_ceiling(qrels, each) for each in ks]
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.fill_between(ks, ceiling, 1.05, color="grey", alpha=0.18, lw=0, label="unreachable with these labels")
    ax.plot(ks, ceiling, "-", color="#444444", lw=5, alpha=0.6, label="ceiling: a perfect ranking", zorder=2)
    ax.plot(ks, [1 / each for each in ks], "--", color="#d6604d", lw=1.8, label="1/k: one relevant chunk per question", zorder=4)
    for name, marker in zip([] if table is None else table.index, cycle(MARKERS)):
        ax.plot(ks, [table.loc[name, ("precision", each)] for each in ks], marker=marker, lw=1, label=name)
    if k is not None:
        value = precision_ceiling(qrels, check_k(k))
        ax.annotate(f"ceiling at k = {k}: {value:.3f}", (k, value), xytext=(k + 1, value + 0.3),
                    arrowprops={"arrowstyle": "->"})
    ax.set(xticks=ks, ylim=(0, 1.05), xlabel="cut-off k", ylabel="precision@k (mean over questions)")
    ax.grid(alpha=0.3)
    return _finish(fig, ax, title, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


@styled
def plot_precision_recall(runs: Mapping, qrels: Mapping, max_k: int = 10, title: str | None = None):
    """Left, the trade-off as k grows: mean precision@k against mean recall@k for k = 1 … ``max_k``, per run.
    Right, the precision–recall curve: mean interpolated precision at the 11 standard recall levels (trec_eval's
    ``iprec_at_recall``; each ranking read to its end)."""
    ks = list(range(1, check_k(max_k) + 1))
    table = evaluate(runs, qrels, ks=ks, metrics=["recall", "precision"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH, 4.2), sharey=True, layout="constrained")
    for i, (name, marker) in enumerate(zip(table.index, cycle(MARKERS))):
        recall, precision = table.loc[name, "recall"].values, table.loc[name, "precision"].values
        left.plot(recall, precision, marker=marker, label=name)
        for k in (1, max_k) if i == 0 else (1,):
            left.annotate(f"k={k}", (recall[k - 1], precision[k - 1]), textcoords="offset points", xytext=(4, 4))
        curve = pd.DataFrame([iprec_at_recall(runs[name][q], gains) for q, gains in qrels.items()]).mean()
        right.plot(curve.index, curve.values, marker=marker, label=name)
    left.set(xlabel="recall@k (mean)", ylabel="precision (mean)", title="precision@k against recall@k as k grows")
    right.set(xlabel="recall level", title="interpolated precision (P–R curve)", xticks=RECALL_LEVELS[::2])
    for ax in (left, right):
        ax.set(xlim=(0, 1.05), ylim=(0, 1.05))
        ax.grid(alpha=0.3)
    right.legend(frameon=False)
    if title:
        fig.suptitle(title)
    return fig


@styled
def plot_intervals(intervals: pd.DataFrame, title: str | None = None):
    """Each run's mean and 95% interval, one panel per metric (an :func:`~retrieval_eval.comparisons.interval_table`)."""
    if not isinstance(intervals, pd.DataFrame) or intervals.index.names != ["run", "metric"]:
        raise ValueError("intervals must be a table of interval_table (rows (run, metric))")
    metrics = list(dict.fromkeys(intervals.index.get_level_values("metric")))
    runs = list(dict.fromkeys(intervals.index.get_level_values("run")))
    fig, axes = plt.subplots(1, len(metrics), figsize=(WIDTH, 0.9 + 0.45 * len(runs)), sharey=True, layout="constrained",
                             squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        part = intervals.xs(metric, level="metric").reindex(runs)
        y = np.arange(len(runs))
        ax.errorbar(part["mean"], y, xerr=[part["mean"] - part["low"], part["high"] - part["mean"]], fmt="o", capsize=4)
        ax.set_yticks(y, runs)
        ax.set(ylim=(len(runs) - 0.5, -0.5), xlim=(0, 1))
        ax.set_title(metric)
        ax.grid(axis="x", alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig


@styled
def plot_two_stage(table: pd.DataFrame, first_stage: str, k: int = 3, n: int | None = None):
    """Recall@k against the pool N for one first stage of a ``two_stage_table``: the ceiling recall@N (above it
    shaded), the first stage alone, the oracle and a real reranker; ``n`` marks one N."""
    if first_stage not in table.index.get_level_values("first stage"):
        raise ValueError(f"the table holds no first stage {first_stage!r}; it holds {list(dict.fromkeys(table.index.get_level_values(0)))}")
    part = table.xs(first_stage, level="first stage")
    ns = list(part.index)
    fig, ax = plt.subplots(figsize=(6.4, 3.9), layout="constrained")
    if n is not None:
        ax.axvspan(n - 0.6, n + 0.6, color="0.55", alpha=0.3, lw=0, gid="chosen N")
    ceiling = part["recall@N (ceiling)"]
    ax.fill_between(ns, ceiling, 1.05, color="0.92", lw=0)
    ax.plot(ns, ceiling, "-", color="#444444", lw=6, alpha=0.45, label="ceiling: recall@N of the first stage")
    for column, style, colour, label in ((f"recall@{k}, oracle", "o--", "k", "oracle reranker (reads the labels)"),
                                         (f"recall@{k}, reranker", "D-", "tab:green", "reranker"),
                                         (f"recall@{k}, first stage", "s:", "tab:orange", "first stage alone")):
        if column in part:
            ax.plot(ns, part[column], style, color=colour, lw=2, ms=7, label=label)
    ax.set(xticks=ns, ylim=(0, 1.05), xlim=(min(ns) - 1, max(ns) + 1), xlabel="candidates the reranker reads (N)",
           ylabel=f"recall@{k}")
    ax.set_title(f"{first_stage}: top N reranked, top {k} to the LLM")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncols=2, frameon=False)
    return fig


def recall_at_budget(settings: Mapping[str, object], ks: Sequence[int] = range(1, 11), plot: bool = False):
    """:func:`~retrieval_eval.analysis.answers.budget_table` (recall@k against the word pieces the LLM reads, per
    setting, run and k); with ``plot``, ``(table, figure)``: one line per setting and run, k marked, tokens on a log axis."""
    from ..analysis.answers import budget_table
    table = budget_table(settings, ks)
    return (table, _plot_budget(table)) if plot else table


@styled
def _plot_budget(table: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(WIDTH, 5), layout="constrained")
    for ((setting, run), rows), marker in zip(table.groupby(["setting", "run"], sort=False), cycle(MARKERS)):
        line, = ax.plot(rows["tokens"], rows["recall"], marker=marker, ms=6, label=f"{setting}, {run}")
        ax.fill_between(rows["tokens"], rows["low"], rows["high"], color=line.get_color(), alpha=0.12, lw=0)
        for _, row in rows.iloc[[0, 2, -1]].iterrows() if len(rows) > 2 else rows.iterrows():
            ax.annotate(f"k={row['k']}", (row["tokens"], row["recall"]), textcoords="offset points", xytext=(4, -14))
    ax.set(xscale="log", ylim=(0, 1.05), xlabel="word pieces the LLM reads (mean over questions, log scale)",
           ylabel="recall@k")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", frameon=False)
    return fig
