"""The precision@k ceiling widget: the best precision@k any ranking can reach on these labels, beside each run."""

from __future__ import annotations

from collections.abc import Mapping

import ipywidgets as w
import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ...core.checks import check_k, check_qrels, check_runs
from ...core.evaluation import evaluate, precision_ceiling
from ...core.metrics import relevant_ids
from ...core.registry import METRICS
from ...inputs.text import escape
from ._view import (
    FONT_PT,
    FastFigure,
    WidgetView,
    beside_a_figure,
    check_start,
    details,
    png_html,
    slot_marks,
    table_html,
)

WHAT_IF_MAX = 5  # the "what if" control offers 1 .. WHAT_IF_MAX relevant chunks per question
AS_LABELLED = "as labelled"
KS = range(1, 11)
FIGURE_INCHES = (6.4, 3.9)
COLOURS, MARKERS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"), "osd^vP"


def hypothetical_qrels(qrels: Mapping, n_relevant: int) -> dict:
    """The same questions, each with ``n_relevant`` made-up relevant chunks ``"<question>/what-if-<i>"``."""
    n_relevant = check_k(n_relevant, "n_relevant")
    return {q: {f"{q}/what-if-{i}": 1 for i in range(1, n_relevant + 1)} for q in check_qrels(qrels)}


def _counts_phrase(qrels: Mapping) -> str:
    """E.g. "46 of the 47 questions have 1 relevant chunk and 1 has 2"."""
    counts = pd.Series([len(relevant_ids(g)) for g in qrels.values()]).value_counts().sort_index()
    parts = [f"{m} {'has' if m == 1 else 'have'} {n}" for n, m in counts.items()]
    n, m = counts.index[0], counts.iloc[0]
    parts[0] = f"{m} of the {len(qrels)} questions {'has' if m == 1 else 'have'} {n} relevant chunk{'s' if n > 1 else ''}"
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def ceiling_report(qrels: Mapping, table: pd.DataFrame, k: int, retriever: str, what_if: int | None = None) -> dict:
    """The precision@k ceiling beside each run's precision@k and recall@k: ``numbers``, ``values`` (what the
    change line follows), ``sentence`` and ``prompt`` (asked before the reveal); with ``what_if = n`` also the
    ceiling if every question had n relevant chunks."""
    k = check_k(k)
    if k not in table["precision"].columns:
        raise ValueError(f"k = {k} is not a cut-off of the table (it has {list(table['precision'].columns)})")
    if retriever not in table.index:
        raise ValueError(f"retriever {retriever!r} is not in the table (it has {list(table.index)})")
    ceiling = precision_ceiling(qrels, k)
    what_if_ceiling = None if what_if is None else precision_ceiling(hypothetical_qrels(qrels, what_if), k)
    precision, recall = table[("precision", k)], table[("recall", k)]
    p_label, r_label = METRICS["precision"].at(k), METRICS["recall"].at(k)
    numbers = pd.DataFrame({p_label: [ceiling, *precision], r_label: [float("nan"), *recall],
                            "of ceiling": [1.0, *(precision / ceiling)]},
                           index=pd.Index(["ceiling", *table.index], name=f"k = {k}"))
    name, p, r = escape(retriever), precision[retriever], recall[retriever]
    prompt = (f"{_counts_phrase(qrels)}. <b>Predict:</b> what is the best {p_label} any ranking could reach "
              f"here (the ceiling)? How close does <b>{name}</b> come?")
    if ceiling < 1:
        sentence = (f"At k = {k} no ranking can pass {p_label} = <b>{ceiling:.3f}</b>, not 1: {_counts_phrase(qrels)}, "
                    f"and a question with n relevant chunks fills at most n of the {k} slots.")
    else:
        sentence = f"At k = {k} the ceiling is <b>{ceiling:.3f}</b>: every question has at least {k} relevant chunk{'s' * (k > 1)}."
    sentence += f" <b>{name}</b> reaches {p_label} = {p:.3f}, {p / ceiling:.0%} of the ceiling, with {r_label} = {r:.3f}."
    values = {"ceiling": ceiling, f"{retriever} precision": p, f"{retriever} recall": r}
    if what_if is not None:
        prompt += f"<br><i>What if</i> every question had {what_if} relevant chunk{'s' * (what_if > 1)}: predict that ceiling."
        sentence += (f"<br><i>What if</i> every question had {what_if} relevant chunk{'s' * (what_if > 1)}? The ceiling "
                     f"would be <b>{what_if_ceiling:.3f}</b>. The measured values do not move: they were scored "
                     "against the real labels.")
        values["what-if ceiling"] = what_if_ceiling
    return {"k": k, "ceiling": ceiling, "what_if_ceiling": what_if_ceiling, "numbers": numbers, "values": values,
            "sentence": sentence, "prompt": prompt}


def ceiling_by_k(qrels: Mapping, table: pd.DataFrame) -> pd.DataFrame:
    """The ceiling and each run's precision@k and recall@k at every cut-off of ``table`` (the static copy's table)."""
    ks = list(table["precision"].columns)
    columns = {"ceiling": [precision_ceiling(qrels, k) for k in ks]}
    for metric in ("precision", "recall"):
        columns |= {f"{name} {metric}": list(table.loc[name, metric]) for name in table.index}
    return pd.DataFrame(columns, index=pd.Index(ks, name="k"))


class CeilingFigure(FastFigure):
    """precision@k against k: each run (the chosen one bold), the ceiling (dashed, out of reach shaded),
    the "what if" ceiling (dotted) and a band at k; hidden, only the axes, the band and the slots."""

    def __init__(self, qrels: Mapping, table: pd.DataFrame):
        self.qrels, self.names, self.ks = qrels, list(table.index), list(table["precision"].columns)
        with mpl.rc_context({"font.size": FONT_PT, "axes.titlesize": FONT_PT, "legend.fontsize": FONT_PT, "text.parse_math": False}):
            fig = Figure(figsize=FIGURE_INCHES, layout="constrained")
            ax = fig.add_subplot()
            ks, ceilings = self.ks, [precision_ceiling(qrels, k) for k in self.ks]
            self.band = ax.axvspan(ks[0] - 0.4, ks[0] + 0.4, color="0.55", alpha=0.3, lw=0)
            self.lines = [ax.plot(ks, table.loc[name, "precision"].values, marker=MARKERS[i % 6], color=COLOURS[i % 6])[0]
                          for i, name in enumerate(self.names)]
            self.what_if_line, = ax.plot(ks, ceilings, ":", color="purple", lw=2.5)
            values = [ax.fill_between(ks, ceilings, 1.05, color="0.92", lw=0), ax.plot(ks, ceilings, "k--", lw=2)[0],
                      ax.text(ks[-1], 1.0, "out of reach", ha="right", va="top", color="0.35"), *self.lines,
                      self.what_if_line]
            ax.set(xlabel="cut-off k", ylabel="precision@k", xticks=ks, ylim=(0, 1.05), xlim=(0.5, ks[-1] + 0.5))
            ax.set_title("precision@k and its ceiling")
            ax.grid(alpha=0.3)
            handles = [Line2D([], [], color=line.get_color(), marker=line.get_marker(), label=name)
                       for name, line in zip(self.names, self.lines)]
            handles += [Line2D([], [], color="k", ls="--", lw=2, label="ceiling (labels)"),
                        Line2D([], [], color="purple", ls=":", lw=2.5, label="ceiling if n relevant each"),
                        Line2D([], [], color="0.6", alpha=0.5, lw=8, label="chosen k")]
            fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False, handlelength=1.8)
            super().__init__(fig, values, moving=[self.band], slots=slot_marks(ax, ks))

    def draw(self, k: int, retriever: str, what_if: int | None, shown: bool) -> bytes:
        self.band.set_x(k - 0.4)
        for name, line in zip(self.names, self.lines):
            chosen = name == retriever
            line.set(lw=3 if chosen else 1.2, ms=7 if chosen else 4, alpha=1 if chosen else 0.5, zorder=3 if chosen else 2)
        self.what_if_line.set_visible(what_if is not None)
        if what_if is not None:
            self.what_if_line.set_ydata([precision_ceiling(hypothetical_qrels(self.qrels, what_if), j) for j in self.ks])
        return self.png(shown)


class CeilingWidget(WidgetView):
    """The precision@k ceiling widget: k (1–10), a retriever, and "what if" every question had n relevant chunks."""

    label = "precision@k ceiling widget"

    def __init__(self, qrels: Mapping, runs: Mapping, k: int = 3):
        check_start(k, "k", KS)
        runs, qrels = check_runs(runs, qrels)
        self.qrels, self.table = qrels, evaluate(runs, qrels, ks=KS, metrics=["precision", "recall"])
        self.figure, self._pngs = CeilingFigure(qrels, self.table), {}
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False,
                             style={"description_width": "5em"}, layout=w.Layout(width="22em"))
        self.retriever = w.ToggleButtons(options=list(runs), description="retriever", style={"description_width": "5em"})
        self.what_if = w.SelectionSlider(options=[AS_LABELLED, *map(str, range(1, WHAT_IF_MAX + 1))], value=AS_LABELLED,
                                         description="what if n =", continuous_update=False,
                                         style={"description_width": "6em"}, layout=w.Layout(width="22em"))
        self.numbers, self.sentence = w.HTML(), w.HTML()
        what_if = w.HTML("<i>what if</i>: every question had n relevant chunks")
        body, self.plot = beside_a_figure([self.k, self.retriever, self.what_if, what_if, self.numbers])
        self._add_classes("ceiling", "k", "retriever", "what_if", "sentence", "numbers", "plot")
        self.new_round = (self.retriever,)  # another retriever's numbers: predicted afresh
        self._build("ceiling-widget", [self.reveal_row(), body, self.sentence], [self.k, self.retriever, self.what_if])

    def settings(self) -> tuple:
        return self.k.value, self.retriever.value, None if self.what_if.value == AS_LABELLED else int(self.what_if.value)

    def png(self, k: int, retriever: str, what_if: int | None, shown: bool) -> bytes:
        """The figure for these settings, drawn once and kept (hidden, it depends on k only)."""
        key = (k, retriever, what_if, True) if shown else (k, False)
        if key not in self._pngs:
            self._pngs[key] = self.figure.draw(k, retriever, what_if, shown)
        return self._pngs[key]

    def _compute(self) -> dict:
        return ceiling_report(self.qrels, self.table, *self.settings())

    def _draw(self, shown: bool) -> None:
        self.plot.value = self.png(*self.settings(), shown)
        self.numbers.value = self._numbers_html(shown)
        self.sentence.value = self.state["sentence" if shown else "prompt"]

    def _numbers_html(self, shown: bool) -> str:
        return table_html(self.state["numbers"].rename_axis(None), shown, {"of ceiling": "{:.0%}".format},
                          highlight=[self.retriever.value])

    def static_html(self) -> str:
        width, by_k = self.figure.width_px, ceiling_by_k(self.qrels, self.table)
        return (png_html(self.png(*self.settings(), False), width, "the axes of precision@k and its ceiling")
                + f"<p>{self.state['prompt']}</p>" + self._numbers_html(False)
                + details(png_html(self.png(*self.settings(), True), width, "precision@k and its ceiling")
                          + f"<p>{self.state['sentence']}</p>" + self._numbers_html(True)
                          + "<p>At every k:</p>" + table_html(by_k, True)))


ceiling_widget = CeilingWidget
