"""The precision@k ceiling widget: pure functions (report, table, plot), then the ipywidgets view."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as w
import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..checks import check_ks, check_k, check_qrels
from ..evaluation import evaluate, precision_ceiling
from ..metrics import relevant_ids
from ._view import (
    FONT_PT, PX_PER_INCH, WidgetView, busy_sign, change_line, changes, check_start, figure_png, hidden, image_widget,
    num, png_html, reveal_details, table_html,
)

WHAT_IF_MAX = 5  # the "what if" control offers 1 .. WHAT_IF_MAX relevant chunks per question
AS_LABELLED = "as labelled"  # the "what if" control's "no what if" choice
FIGURE_SIZE = (5.6, 3.9)  # inches: shown at 560 × 390 CSS px beside the controls
RETRIEVER_STYLE = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")  # as the notebooks' plots
MARKERS = "osd^v"


def hypothetical_qrels(qrels: Mapping, n_relevant: int) -> dict:
    """The same questions, each given ``n_relevant`` made-up relevant chunks (gain 1): a "what if".

    The made-up chunk ids are ``"<question_id>/what-if-<i>"``; only the number per question matters,
    e.g. for :func:`precision_ceiling`.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``; only its question ids are used.
        n_relevant: made-up relevant chunks per question, an integer >= 1.

    Returns:
        ``{question_id: {"<question_id>/what-if-<i>": 1}}`` for i = 1 .. n_relevant.

    Raises:
        ValueError: ``n_relevant`` is not an integer >= 1, or the qrels fail
            :func:`~retrieval_eval.checks.check_qrels`.

    Taught in: notebook 07_widgets.
    """
    n_relevant = check_k(n_relevant, "n_relevant")
    check_qrels(qrels)
    return {qid: {f"{qid}/what-if-{i}": 1 for i in range(1, n_relevant + 1)} for qid in qrels}


def _relevant_counts_phrase(qrels: Mapping) -> str:
    """E.g. "46 of the 47 questions have 1 relevant chunk and 1 has 2"."""
    counts = pd.Series([len(relevant_ids(g)) for g in qrels.values()]).value_counts().sort_index()
    parts = []
    for i, (n, m) in enumerate(counts.items()):
        verb = "has" if m == 1 else "have"
        if i == 0:
            parts.append(f"{m} of the {len(qrels)} questions {verb} {n} relevant chunk{'s' if n > 1 else ''}")
        else:
            parts.append(f"{m} {verb} {n}")
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def ceiling_report(qrels: Mapping, table: pd.DataFrame, k: int, retriever: str, what_if: int | None = None) -> dict:
    """The precision@k ceiling at one cut-off beside the retrievers' precision@k and recall@k.

    The ceiling is :func:`precision_ceiling` of the qrels; the retrievers' values are read from
    ``table``. With ``what_if = n`` the ceiling is also computed as if every question had n
    relevant chunks (:func:`hypothetical_qrels`); the measured values stay as they are, since they
    were scored against the real labels.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        table: the output of :func:`evaluate`, with k among its cut-offs.
        k: the cut-off, an integer >= 1.
        retriever: the retriever the sentence is about (a row of ``table``).
        what_if: ``None`` (the labels only) or a number of relevant chunks per question, >= 1.

    Returns:
        A dict: ``k``, ``ceiling`` (float), ``what_if`` and ``what_if_ceiling`` (``None`` without
        a what-if), ``numbers`` (a DataFrame indexed by "ceiling" and the retrievers, columns
        ``precision@k``, ``recall@k``, ``share of the ceiling``), ``values`` (``{name: float}``:
        the ceiling, the what-if ceiling and the chosen retriever's precision and recall, the
        values whose changes the widget marks) and ``sentence`` (HTML: the ceiling explained from
        the labels, the chosen retriever judged against it, numbers marked for predict-then-reveal).

    Raises:
        ValueError: k is not a cut-off of ``table``, ``retriever`` is not a row of it, or
            ``what_if`` is not an integer >= 1.

    Taught in: notebook 07_widgets (through ceiling_widget).
    """
    k = check_k(k)
    ks = list(table["precision"].columns)
    if k not in ks:
        raise ValueError(f"k = {k} is not a cut-off of the table (it has {ks})")
    if retriever not in table.index:
        raise ValueError(f"retriever {retriever!r} is not in the table (it has {list(table.index)})")
    ceiling = precision_ceiling(qrels, k)
    what_if_ceiling = None if what_if is None else precision_ceiling(hypothetical_qrels(qrels, what_if), k)
    precision, recall = table[("precision", k)], table[("recall", k)]
    numbers = pd.DataFrame(
        {
            f"precision@{k}": [ceiling, *precision],
            f"recall@{k}": [float("nan"), *recall],
            "share of the ceiling": [1.0, *(precision / ceiling)],
        },
        index=pd.Index(["ceiling", *table.index], name=f"k = {k}"),
    )
    if ceiling < 1:
        sentence = (
            f"At k = {k}, no ranking can pass precision@{k} = <b>{num(ceiling)}</b> (the ceiling), not 1: "
            f"{_relevant_counts_phrase(qrels)}, and a question with n relevant chunks fills at most n of "
            f"the {k} slots."
        )
    else:
        sentence = (
            f"At k = {k}, the ceiling is <b>{num(ceiling)}</b>: every question has at least {k} relevant "
            f"chunk{'s' if k > 1 else ''}, so a perfect ranking fills "
            + ("the one slot." if k == 1 else f"all {k} slots.")
        )
    p, r = precision[retriever], recall[retriever]
    sentence += (
        f" <b>{retriever}</b> reaches precision@{k} = {num(p)}, {hidden(f'{p / ceiling:.0%}')} of the ceiling, "
        f"with recall@{k} = {num(r)}."
    )
    if what_if is not None:
        sentence += (
            f"<br><i>What if</i> every question had {what_if} relevant chunk{'s' if what_if > 1 else ''}? "
            f"Then the ceiling at k = {k} would be <b>{num(what_if_ceiling)}</b>. "
            "The measured values do not move: they were scored against the real labels."
        )
    values = {"ceiling": ceiling, f"{retriever} precision": p, f"{retriever} recall": r}
    if what_if is not None:
        values["what-if ceiling"] = what_if_ceiling
    return {
        "k": k, "ceiling": ceiling, "what_if": what_if, "what_if_ceiling": what_if_ceiling,
        "numbers": numbers, "values": values, "sentence": sentence,
    }


def ceiling_by_k(qrels: Mapping, table: pd.DataFrame) -> pd.DataFrame:
    """The precision@k ceiling and each retriever's precision@k and recall@k at every cut-off of ``table``.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        table: the output of :func:`evaluate` (its precision and recall columns, one per cut-off).

    Returns:
        A DataFrame indexed by k with columns ``ceiling``, ``<retriever> precision``, ``<retriever> recall``.

    Taught in: notebook 07_widgets (through ceiling_widget).
    """
    ks = list(table["precision"].columns)
    columns = {"ceiling": [precision_ceiling(qrels, k) for k in ks]}
    for metric in ("precision", "recall"):
        for retriever in table.index:
            columns[f"{retriever} {metric}"] = list(table.loc[retriever, metric])
    return pd.DataFrame(columns, index=pd.Index(ks, name="k"))


class CeilingFigure:
    """The figure of the ceiling widget, built once for a golden set and its table and then redrawn in
    place for each setting (:meth:`draw`): only the artists that change are touched, so an update
    costs one render, not a new figure. :func:`plot_ceiling` is one build and one draw.

    Not taught; used by ceiling_widget (notebook 07_widgets).
    """

    def __init__(self, qrels: Mapping, table: pd.DataFrame):
        self.qrels, self.table = qrels, table
        self.ks = list(table["precision"].columns)
        self.names = list(table.index)
        colours = [RETRIEVER_STYLE[i % len(RETRIEVER_STYLE)] for i in range(len(self.names))]
        n, ks = len(self.names), self.ks
        with mpl.rc_context({"font.size": FONT_PT, "axes.titlesize": FONT_PT, "legend.fontsize": FONT_PT}):
            self.fig = fig = Figure(figsize=FIGURE_SIZE)
            left = fig.add_axes((0.105, 0.335, 0.5, 0.59))
            right = fig.add_axes((0.71, 0.335, 0.28, 0.59))
            self.ceilings = [precision_ceiling(qrels, j) for j in ks]
            left.fill_between(ks, self.ceilings, 1.05, color="0.92", lw=0)
            left.text(ks[-1], 1.0, "out of reach", ha="right", va="top", color="0.35")
            self.band = left.axvspan(ks[0] - 0.4, ks[0] + 0.4, color="0.55", alpha=0.3, lw=0)
            self.lines = [left.plot(ks, table.loc[name, "precision"].values, marker=marker, color=colour)[0]
                          for name, marker, colour in zip(self.names, MARKERS, colours)]
            left.plot(ks, self.ceilings, "k--", lw=2)
            self.what_if_line, = left.plot([], [], ":", color="purple", lw=2.5)
            left.set(xlabel="cut-off k", xticks=ks, ylim=(0, 1.05), xlim=(0.5, ks[-1] + 0.5))
            left.set_title("precision@k and its ceiling")
            left.grid(alpha=0.3)

            x = np.arange(n)
            self.precision_bars = right.bar(x, np.zeros(n), 0.8, color=colours, lw=2)
            self.recall_bars = right.bar(x + n + 0.6, np.zeros(n), 0.8, color=colours, lw=2, hatch="//", alpha=0.8)
            self.ceiling_mark, = right.plot([-0.5, n - 0.5], [0, 0], "k--", lw=2)  # over the precision bars only
            self.what_if_mark, = right.plot([-0.5, n - 0.5], [0, 0], ":", color="purple", lw=2.5)
            right.set_xticks([(n - 1) / 2, n + 0.6 + (n - 1) / 2], ["", ""])
            right.set(ylim=(0, 1.05), xlim=(-0.7, 2 * n + 0.2))
            right.grid(alpha=0.3, axis="y")
            self.right = right

            handles = [Line2D([], [], color=c, marker=m, lw=1.2, label=name)
                       for name, m, c in zip(self.names, MARKERS, colours)]
            handles += [Line2D([], [], color="k", ls="--", lw=2, label="ceiling (labels)"),
                        Line2D([], [], color="purple", ls=":", lw=2.5, label="ceiling if n relevant each"),
                        Line2D([], [], color="0.6", alpha=0.5, lw=8, label="k = 10")]
            self.legend = fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False,
                                     bbox_to_anchor=(0.5, 0.0), handlelength=1.8, columnspacing=1.0)

    def draw(self, k: int, retriever: str, what_if: int | None = None) -> Figure:
        """Set the figure to these settings (as :func:`plot_ceiling` describes) and return it.

        Args:
            k, retriever, what_if: as for :func:`ceiling_report`.

        Raises:
            ValueError: as :func:`ceiling_report`.

        Not taught; used by ceiling_widget (notebook 07_widgets).
        """
        report = ceiling_report(self.qrels, self.table, k, retriever, what_if)
        self.band.set_x(k - 0.4)
        for name, line in zip(self.names, self.lines):
            chosen = name == retriever
            line.set(lw=3 if chosen else 1.2, ms=7 if chosen else 4, alpha=1 if chosen else 0.55, zorder=3 if chosen else 2)
        hypothetical = None if what_if is None else hypothetical_qrels(self.qrels, what_if)
        self.what_if_line.set_data(self.ks, [precision_ceiling(hypothetical, j) for j in self.ks] if what_if else [None] * len(self.ks))
        numbers = report["numbers"].drop(index="ceiling")
        for bars, metric in ((self.precision_bars, "precision"), (self.recall_bars, "recall")):
            for bar, name in zip(bars, self.names):
                bar.set_height(numbers.loc[name, f"{metric}@{k}"])
                bar.set_edgecolor("black" if name == retriever else "none")
        self.ceiling_mark.set_ydata([report["ceiling"]] * 2)
        self.what_if_mark.set_ydata([report["what_if_ceiling"] if what_if else None] * 2)
        self.right.set_xticklabels([f"precision\n@{k}", f"recall\n@{k}"])
        self.right.set_title(f"at k = {k}")
        handles, texts = self.legend.legend_handles, self.legend.get_texts()
        for i, name in enumerate(self.names):
            handles[i].set_linewidth(3 if name == retriever else 1.2)
        texts[len(self.names) + 1].set_text(f"ceiling if {what_if} relevant each" if what_if else "what if: off")
        texts[len(self.names) + 2].set_text(f"k = {k}")
        return self.fig


def plot_ceiling(qrels: Mapping, table: pd.DataFrame, k: int, retriever: str, what_if: int | None = None) -> Figure:
    """Two panels: precision@k against k under its ceiling, and the values at the chosen k.

    Left: each retriever's precision@k (the chosen one bold), the ceiling from the labels (dashed,
    the area above it shaded: out of reach) and, with ``what_if``, the hypothetical ceiling
    (dotted); a grey band marks k. Right, at k: precision@k of each retriever (the chosen one
    outlined) with the ceiling drawn over the precision bars only, and recall@k (hatched; its
    ceiling is 1). The axes and the legend have fixed places, so nothing moves when a setting
    changes. Drawn at :data:`FIGURE_SIZE` with 12-pt text, to be shown at 100 CSS px per inch.

    Args:
        qrels, table, k, retriever, what_if: as for :func:`ceiling_report`.

    Returns:
        A matplotlib Figure (not registered with pyplot: nothing to close).

    Raises:
        ValueError: as :func:`ceiling_report`.

    Not taught; no notebook calls it (tests/test_widgets_ceiling.py does); ceiling_widget
    (notebook 07_widgets) draws the same figure with :class:`CeilingFigure`.
    """
    return CeilingFigure(qrels, table).draw(k, retriever, what_if)


class CeilingWidget(WidgetView):
    """The precision@k ceiling widget; build it with :func:`ceiling_widget`.

    Controls: ``k`` (IntSlider), ``retriever`` (ToggleButtons), ``what_if`` (SelectionSlider,
    "as labelled" or 1..``WHAT_IF_MAX`` relevant chunks per question), ``reveal`` and
    ``reset_control``. Shown: ``numbers`` (HTML table), ``plot`` (Image) and ``sentence`` (HTML).
    ``report`` holds the current :func:`ceiling_report`.

    Taught in: notebook 07_widgets (through ceiling_widget).
    """

    label = "precision@k ceiling widget"

    def __init__(self, qrels: Mapping, runs: Mapping, k: int = 3, ks: Sequence[int] = tuple(range(1, 11))):
        ks = check_ks(ks)
        check_start(k, "k", range(min(ks), max(ks) + 1))
        self.qrels, self.table = qrels, evaluate(runs, qrels, ks=ks)
        self.start = (k, list(runs)[0], AS_LABELLED)
        self.previous, self._pngs, self.figure = None, {}, CeilingFigure(qrels, self.table)
        self.k = w.IntSlider(value=k, min=min(ks), max=max(ks), description="cut-off k", continuous_update=False,
                             style={"description_width": "80px"}, layout=w.Layout(width="360px"))
        self.retriever = w.ToggleButtons(options=list(runs), description="retriever",
                                         style={"button_width": "86px", "description_width": "80px"})
        self.what_if = w.SelectionSlider(
            options=[AS_LABELLED, *(str(n) for n in range(1, WHAT_IF_MAX + 1))], value=AS_LABELLED,
            description="n =", continuous_update=False, style={"description_width": "40px"},
            layout=w.Layout(width="360px"),
        )
        self.reveal, self.reset_control = self.reveal_toggle(), self.reset_button()
        self.sentence, self.numbers = w.HTML(), w.HTML()
        self.plot = image_widget(round(FIGURE_SIZE[0] * PX_PER_INCH))
        for widget, name in ((self.k, "ceiling-k"), (self.retriever, "ceiling-retriever"),
                             (self.what_if, "ceiling-what-if"), (self.sentence, "ceiling-sentence"),
                             (self.numbers, "ceiling-numbers"), (self.plot, "ceiling-plot")):
            widget.add_class(name)  # CSS classes: handles for the browser test and the benchmark
        self.sentence.add_class("rw-sentence")
        for control in (self.k, self.retriever, self.what_if):
            control.observe(self._update, names="value")
        what_if_label = w.HTML("<b>What if</b> every question had n relevant chunks?")
        controls = w.VBox([self.k, self.retriever, what_if_label, self.what_if,
                           w.HBox([self.reveal, self.reset_control, busy_sign()], layout=w.Layout(flex_flow="row wrap")),
                           self.numbers], layout=w.Layout(flex="0 0 380px", width="380px"))
        width = round(FIGURE_SIZE[0] * PX_PER_INCH)
        picture = w.VBox([self.plot, self.sentence],
                         layout=w.Layout(flex=f"1 1 {width}px", min_width="0", max_width=f"{width}px"))
        self.sentence.layout.min_height = "7.2em"  # room for the longest sentence: the layout does not jump
        self.ui = self._root([w.HBox([controls, picture], layout=w.Layout(flex_flow="row nowrap", width="100%"))],
                             "ceiling-widget")
        self._update()

    def _settings(self) -> tuple:
        what_if = None if self.what_if.value == AS_LABELLED else int(self.what_if.value)
        return self.k.value, self.retriever.value, what_if

    def png(self, k: int, retriever: str, what_if: int | None) -> bytes:
        """The figure's PNG for these settings, drawn once (:func:`plot_ceiling`) and then reused.

        Args:
            k, retriever, what_if: as for :func:`ceiling_report`.

        Not taught; used by ceiling_widget (notebook 07_widgets).
        """
        key = (k, retriever, what_if)
        if key not in self._pngs:
            self._pngs[key] = figure_png(self.figure.draw(k, retriever, what_if), close=False)
        return self._pngs[key]

    def _restore_start(self) -> None:
        """The starting k, the first retriever, no "what if", numbers hidden."""
        self.k.value, self.retriever.value, self.what_if.value = self.start
        self.reveal.value = False

    def _update(self, change=None) -> None:
        if self._resetting:
            return
        k, retriever, what_if = self._settings()
        with self.busy():
            self.report = ceiling_report(self.qrels, self.table, k, retriever, what_if)
            self.plot.value = self.png(k, retriever, what_if)
            marked = changes(self.previous, self.report["values"])
            self.previous = self.report["values"]
            self.sentence.value = change_line(marked) + self.report["sentence"]
            self.numbers.value = self._numbers_html(retriever)

    def _numbers_html(self, retriever: str) -> str:
        numbers = self.report["numbers"].rename(columns={"share of the ceiling": "of ceiling"}).rename_axis(None)
        return table_html(numbers, formats={"of ceiling": "{:.0%}".format}, highlight=[retriever])

    def static_html(self) -> str:
        """The static copy: the figure, then (folded until clicked) the sentence, the numbers at k and at every k.

        Not taught; used by ceiling_widget (notebook 07_widgets).
        """
        k, retriever, what_if = self._settings()
        by_k = ceiling_by_k(self.qrels, self.table)
        width = round(FIGURE_SIZE[0] * PX_PER_INCH)
        return (png_html(self.png(k, retriever, what_if), width, "precision@k and its ceiling")
                + reveal_details(f"<p>{self.report['sentence']}</p>" + self._numbers_html(retriever)
                                 + "<p>At every k:</p>" + table_html(by_k.reset_index().set_index("k"), hide=False)))


def ceiling_widget(qrels: Mapping, runs: Mapping, k: int = 3) -> CeilingWidget:
    """The precision@k ceiling widget: k slider (1–10), retriever choice and a "what if" control.

    Numbers show "?" until "show the numbers" (predict first); changes are marked "old → new";
    "reset" returns to the start.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        runs: ``{retriever name: {question_id: ranking}}``.
        k: the starting cut-off, 1–10.

    Returns:
        A :class:`CeilingWidget`; display it (or end a cell with it) to show the widget, with its
        static copy (sentence, figure, and the numbers at every k) in the same output.

    Raises:
        ValueError: k is not an integer from 1 to 10 (the slider's range; it is refused, not moved
            into the range), or as :func:`evaluate` for the runs and qrels.

    Taught in: notebook 07_widgets.
    """
    return CeilingWidget(qrels, runs, k)
