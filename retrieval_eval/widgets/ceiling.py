"""The precision@k ceiling widget: pure functions (report, table, plot), then the ipywidgets view."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import HTML

from ..checks import check_positive_int
from ..evaluation import evaluate, precision_ceiling
from ..metrics import relevant_ids
from ._view import WidgetView, check_start, redraw, table_html

WHAT_IF_MAX = 5  # the "what if" control offers 1 .. WHAT_IF_MAX relevant chunks per question


def hypothetical_qrels(qrels: Mapping, n_relevant: int) -> dict:
    """The same questions, each given ``n_relevant`` made-up relevant chunks (gain 1): a "what if".

    The made-up chunk ids are ``"<question_id>/what-if-<i>"``; only the number per question matters,
    e.g. for :func:`precision_ceiling`.

    Raises:
        ValueError: ``n_relevant`` is not an integer >= 1.

    Taught in: notebook 07_widgets.
    """
    n_relevant = check_positive_int(n_relevant, "n_relevant")
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
        ``precision@k``, ``recall@k``, ``share of the ceiling``) and ``sentence`` (HTML: the
        ceiling explained from the labels, then the chosen retriever judged against it).

    Raises:
        ValueError: k is not a cut-off of ``table``, ``retriever`` is not a row of it, or
            ``what_if`` is not an integer >= 1.

    Taught in: notebook 07_widgets.
    """
    k = check_positive_int(k)
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
            f"At k = {k}, no ranking can pass precision@{k} = <b>{ceiling:.3f}</b> (the ceiling), not 1: "
            f"{_relevant_counts_phrase(qrels)}, and a question with n relevant chunks fills at most n of "
            f"the {k} slots."
        )
    else:
        sentence = (
            f"At k = {k}, the ceiling is <b>{ceiling:.3f}</b>: every question has at least {k} relevant "
            f"chunk{'s' if k > 1 else ''}, so a perfect ranking fills "
            + ("the one slot." if k == 1 else f"all {k} slots.")
        )
    p, r = precision[retriever], recall[retriever]
    sentence += (
        f" <b>{retriever}</b> reaches precision@{k} = {p:.3f}, {p / ceiling:.0%} of the ceiling, "
        f"with recall@{k} = {r:.3f}."
    )
    if what_if is not None:
        sentence += (
            f"<br><i>What if</i> every question had {what_if} relevant chunk{'s' if what_if > 1 else ''}? "
            f"Then the ceiling at k = {k} would be <b>{what_if_ceiling:.3f}</b> instead of {ceiling:.3f}. "
            "The measured values do not move: they were scored against the real labels."
        )
    return {
        "k": k, "ceiling": ceiling, "what_if": what_if, "what_if_ceiling": what_if_ceiling,
        "numbers": numbers, "sentence": sentence,
    }


def ceiling_by_k(qrels: Mapping, table: pd.DataFrame) -> pd.DataFrame:
    """The precision@k ceiling and each retriever's precision@k and recall@k at every cut-off of ``table``.

    Returns:
        A DataFrame indexed by k with columns ``ceiling``, ``<retriever> precision``, ``<retriever> recall``.

    Taught in: notebook 07_widgets.
    """
    ks = list(table["precision"].columns)
    columns = {"ceiling": [precision_ceiling(qrels, k) for k in ks]}
    for metric in ("precision", "recall"):
        for retriever in table.index:
            columns[f"{retriever} {metric}"] = list(table.loc[retriever, metric])
    return pd.DataFrame(columns, index=pd.Index(ks, name="k"))


def plot_ceiling(qrels: Mapping, table: pd.DataFrame, k: int, retriever: str, what_if: int | None = None):
    """Two panels: precision@k against k with the ceiling, and the values at the chosen k.

    Left: each retriever's precision@k (the chosen one bold), the ceiling from the labels (dashed)
    and, with ``what_if``, the hypothetical ceiling (dotted); a grey band marks k. Right: at k,
    each retriever's precision@k and recall@k as bars, with the ceiling as a line.

    Returns:
        The matplotlib Figure.

    Taught in: notebook 07_widgets.
    """

    report = ceiling_report(qrels, table, k, retriever, what_if)
    ks = list(table["precision"].columns)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.6), constrained_layout=True,
                                      gridspec_kw={"width_ratios": [3, 2]})
    for name, marker in zip(table.index, "osd^v"):
        chosen = name == retriever
        left.plot(ks, table.loc[name, "precision"].values, marker=marker, label=name,
                  lw=2.5 if chosen else 1, alpha=1 if chosen else 0.4)
    left.plot(ks, [precision_ceiling(qrels, j) for j in ks], "k--", lw=1.5, label="ceiling (labels)")
    if what_if is not None:
        hypothetical = hypothetical_qrels(qrels, what_if)
        left.plot(ks, [precision_ceiling(hypothetical, j) for j in ks], ":", color="purple", lw=2,
                  label=f"ceiling if {what_if} relevant each")
    left.axvline(k, color="grey", lw=8, alpha=0.2)
    left.set(title="precision@k and its ceiling", xlabel="cut-off k", ylabel="mean over questions",
             xticks=ks, ylim=(0, 1.05))
    left.grid(alpha=0.3)
    left.legend(fontsize=8, loc="upper right")

    x = np.arange(len(table.index))
    numbers = report["numbers"].drop(index="ceiling")
    right.bar(x - 0.2, numbers[f"precision@{k}"], 0.4, label=f"precision@{k}", color="tab:blue")
    right.bar(x + 0.2, numbers[f"recall@{k}"], 0.4, label=f"recall@{k}", color="tab:orange")
    right.axhline(report["ceiling"], color="k", ls="--", lw=1.5, label=f"ceiling {report['ceiling']:.3f}")
    if what_if is not None:
        right.axhline(report["what_if_ceiling"], color="purple", ls=":", lw=2,
                      label=f"ceiling if {what_if} relevant each {report['what_if_ceiling']:.3f}")
    right.set_xticks(x, list(table.index))
    right.get_xticklabels()[list(table.index).index(retriever)].set_fontweight("bold")
    right.set(title=f"at k = {k}", ylim=(0, 1.05))
    right.grid(alpha=0.3, axis="y")
    right.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


class CeilingWidget(WidgetView):
    """The precision@k ceiling widget; build it with :func:`ceiling_widget`.

    Controls: ``k`` (IntSlider), ``retriever`` (ToggleButtons), ``what_if`` (SelectionSlider,
    "as labelled" or 1..``WHAT_IF_MAX`` relevant chunks per question). Shown: ``sentence`` and
    ``numbers`` (HTML) and ``plot`` (Output). ``report`` holds the current :func:`ceiling_report`.

    Taught in: notebook 07_widgets.
    """

    label = "precision@k ceiling widget"

    def __init__(self, qrels: Mapping, runs: Mapping, k: int = 3, ks: Sequence[int] = tuple(range(1, 11))):

        ks = [check_positive_int(k_, "a cut-off in ks") for k_ in ks]
        check_start(k, "k", range(min(ks), max(ks) + 1))
        self.qrels, self.table = qrels, evaluate(runs, qrels, ks=ks)
        self.k = w.IntSlider(value=k, min=min(ks), max=max(ks), description="cut-off k", continuous_update=False)
        self.retriever = w.ToggleButtons(options=list(runs), description="retriever")
        self.what_if = w.SelectionSlider(
            options=["as labelled", *(str(n) for n in range(1, WHAT_IF_MAX + 1))], value="as labelled",
            description="relevant chunks per question", continuous_update=False,
            style={"description_width": "initial"}, layout=w.Layout(width="420px"),
        )
        self.sentence, self.numbers, self.plot = w.HTML(), w.HTML(), w.Output()
        for widget, name in ((self.k, "ceiling-k"), (self.what_if, "ceiling-what-if"),
                             (self.sentence, "ceiling-sentence"), (self.numbers, "ceiling-numbers"),
                             (self.plot, "ceiling-plot")):
            widget.add_class(name)  # CSS classes: handles for the browser test
        for control in (self.k, self.retriever, self.what_if):
            control.observe(self._update, names="value")
        self.ui = w.VBox([w.HBox([self.k, self.what_if]), self.retriever, self.sentence, self.numbers, self.plot])
        self.ui.add_class("ceiling-widget")
        self._update()

    def _settings(self) -> tuple:
        what_if = None if self.what_if.value == "as labelled" else int(self.what_if.value)
        return self.k.value, self.retriever.value, what_if

    def _update(self, change=None) -> None:
        k, retriever, what_if = self._settings()
        self.report = ceiling_report(self.qrels, self.table, k, retriever, what_if)
        # The figure first: once the text shows the new settings, the figure already does.
        redraw(self.plot, plot_ceiling(self.qrels, self.table, k, retriever, what_if))
        self.sentence.value = f"<p style='font-size:14px;line-height:1.4'>{self.report['sentence']}</p>"
        self.numbers.value = table_html(self.report["numbers"], float_format="{:.3f}".format, na_rep="",
                                         formatters={"share of the ceiling": "{:.0%}".format})

    def static_fallback(self) -> list:

        k, retriever, what_if = self._settings()
        return [HTML(self.report["sentence"]), plot_ceiling(self.qrels, self.table, k, retriever, what_if),
                ceiling_by_k(self.qrels, self.table).round(3)]


def ceiling_widget(qrels: Mapping, runs: Mapping, k: int = 3) -> CeilingWidget:
    """The precision@k ceiling widget: k slider (1–10), retriever choice and a "what if" control.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        runs: ``{retriever name: {question_id: ranking}}``.
        k: the starting cut-off, 1–10.

    Returns:
        A :class:`CeilingWidget`; display it (or end a cell with it) to show the widget and its
        static fallback (the starting sentence and figure, and the ceiling table for k = 1..10).

    Raises:
        ValueError: k is not an integer from 1 to 10 (the slider's range; it is refused, not moved
            into the range), or as :func:`evaluate` for the runs and qrels.

    Taught in: notebook 07_widgets.
    """
    return CeilingWidget(qrels, runs, k)
