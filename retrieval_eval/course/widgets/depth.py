"""The two-stage widget: how many candidates N a reranker reads, and what that allows at the cut-off k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as w
import matplotlib.pyplot as plt
import pandas as pd

from ...core.checks import check_k, check_ks, check_runs
from ...core.evaluation import first_relevant_ranks
from ...core.registry import METRICS
from ...inputs.text import escape
from ...retrieval.rerank import DEPTHS, two_stage_table
from ..plots import plot_two_stage
from ._view import (
    FastFigure,
    WidgetView,
    beside_a_figure,
    details,
    png_html,
    shown_or_mask,
    slot_marks,
    table_html,
)


def fixable(ranks: pd.Series, n: int, k: int) -> dict[str, list[str]]:
    """Questions by what a reranker of the top ``n`` can do at k: ``in the top k`` already, ``could fix``
    (relevant in the top n), ``cannot fix`` (none in the top n)."""
    found = ranks.fillna(n + 1)
    return {"in the top k": list(ranks.index[found <= k]), "could fix": list(ranks.index[(found > k) & (found <= n)]),
            "cannot fix": list(ranks.index[found > n])}


class DepthWidget(WidgetView):
    """The two-stage lesson: pick a first stage and the N a second stage reorders; see the ceiling recall@N, the
    first stage's, the oracle's and (given ``reranked[(first stage, N)]``) a reranker's recall@k and MRR@k, and
    which questions a reranker could fix or cannot."""

    label = "two-stage widget"

    def __init__(self, runs: Mapping, qrels: Mapping, reranked: Mapping | None = None, k: int = 3,
                 depths: Sequence[int] = DEPTHS, first_stage: str | None = None):
        runs, qrels = check_runs(runs, qrels)
        self.k, self.depths = check_k(k), sorted(check_ks(depths, "depths"))
        reranked = dict(reranked or {})
        for key in reranked:
            if not (isinstance(key, tuple) and len(key) == 2 and key[0] in runs and key[1] in self.depths):
                raise ValueError(f"reranked keys are (first stage, N) with a run of {list(runs)} and N in "
                                 f"{self.depths}; got {key!r}")
        if first_stage is not None and first_stage not in runs:
            raise ValueError(f"first_stage {first_stage!r} is not a run (the runs are {list(runs)})")
        self.table = two_stage_table(runs, qrels, reranked, self.depths, self.k)
        self.ranks, self._figures, self._pngs = first_relevant_ranks(runs, qrels), {}, {}
        self.stage = w.ToggleButtons(options=list(runs), value=first_stage or list(runs)[0], description="first stage",
                                     style={"description_width": "6em"})
        self.n = w.SelectionSlider(options=self.depths, value=10 if 10 in self.depths else self.depths[0],
                                   description="N reranked", continuous_update=False,
                                   style={"description_width": "6em"}, layout=w.Layout(width="22em"))
        self.numbers, self.sentence, self.questions = w.HTML(), w.HTML(), w.HTML()
        body, self.plot = beside_a_figure([self.stage, self.n, self.numbers, self.questions])
        self._add_classes("depth", "stage", "n", "numbers", "sentence", "questions", "plot")
        self._build("depth-widget", [self.reveal_row(), body, self.sentence], [self.stage, self.n])

    def figure(self, stage: str) -> FastFigure:
        """The stage's :func:`plot_two_stage`, built once; its N band moves."""
        if stage not in self._figures:
            fig = plot_two_stage(self.table, stage, self.k, n=self.depths[0])
            plt.close(fig)  # drawn here, not by the notebook's inline backend
            ax = fig.axes[0]
            band = next(p for p in ax.patches if p.get_gid() == "chosen N")
            self._figures[stage] = FastFigure(fig, [*ax.lines, *ax.collections], [band], slot_marks(ax, self.depths))
            self._figures[stage].band = band
        return self._figures[stage]

    def png(self, stage: str, n: int, shown: bool) -> bytes:
        key = (stage, n, shown)
        if key not in self._pngs:
            figure = self.figure(stage)
            figure.band.set_x(n - 0.6)
            self._pngs[key] = figure.png(shown)
        return self._pngs[key]

    def _compute(self) -> dict:
        stage, n, k = self.stage.value, self.n.value, self.k
        row = self.table.loc[(stage, n)]
        recall, mrr = METRICS["recall"].at(k), METRICS["MRR"].at(k)
        rows = {f"ceiling (recall@{n})": (row["recall@N (ceiling)"], float("nan"))}
        for label, name in (("first stage alone", "first stage"), ("oracle reranker", "oracle"), ("reranker", "reranker")):
            if f"{recall}, {name}" in row and not pd.isna(row[f"{recall}, {name}"]):
                rows[label] = (row[f"{recall}, {name}"], row[f"{mrr}, {name}"])
        numbers = pd.DataFrame(rows, index=[recall, mrr]).T.rename_axis(None)
        groups = fixable(self.ranks[stage], n, k)
        values = {"ceiling": rows[f"ceiling (recall@{n})"][0]} | {
            f"{label} {metric}": value for label, pair in rows.items() if label[:7] != "ceiling"
            for metric, value in zip(("recall", "MRR"), pair)} | {g: len(ids) for g, ids in groups.items() if g != "in the top k"}
        return {"numbers": numbers, "groups": groups, "values": values}

    def _sentence(self, shown: bool) -> str:
        stage, n, k, numbers = escape(self.stage.value), self.n.value, self.k, self.state["numbers"]
        if not shown:
            return (f"<b>Predict:</b> the top {n} of {stage} are reranked and the top {k} go to the LLM. How high can "
                    f"recall@{k} go at best? How many questions could a reranker fix, and how many can it not?")
        ceiling, first = numbers.iat[0, 0], numbers.loc["first stage alone"].iat[0]
        text = (f"The top {n} of {stage} hold {ceiling:.3f} of the relevant chunks (recall@{n}): no reranker can pass "
                f"recall@{k} = {ceiling:.3f}. The first stage alone has {first:.3f}; the oracle, which sorts the {n} by "
                f"their labels, {numbers.loc['oracle reranker'].iat[0]:.3f}")
        if "reranker" in numbers.index:
            text += f"; the reranker {numbers.loc['reranker'].iat[0]:.3f}"
        return text + "."

    def _questions_html(self, shown: bool) -> str:
        n, k, groups = self.n.value, self.k, self.state["groups"]
        lines = (("could fix", f"relevant in the top {n}, not in the top {k}"), ("cannot fix", f"no relevant chunk in the top {n}"),
                 ("in the top k", f"a relevant chunk in the top {k} already"))
        return "".join(f"<div><b>{name}</b> ({why}): {shown_or_mask(str(len(groups[name])), shown)}"
                       f"{' · ' + ' '.join(escape(q) for q in groups[name]) if shown and name != 'in the top k' else ''}</div>"
                       for name, why in lines)

    def _draw(self, shown: bool) -> None:
        self.plot.value = self.png(self.stage.value, self.n.value, shown)
        self.numbers.value = table_html(self.state["numbers"], shown)
        self.sentence.value = self._sentence(shown)
        self.questions.value = self._questions_html(shown)

    def static_html(self) -> str:
        stage, n = self.stage.value, self.n.value
        return (png_html(self.png(stage, n, False), 640, f"the axes of recall@{self.k} against N") + self._sentence(False)
                + table_html(self.state["numbers"], False) + self._questions_html(False)
                + details(png_html(self.png(stage, n, True), 640, f"recall@{self.k} against N") + f"<p>{self._sentence(True)}</p>"
                          + table_html(self.state["numbers"], True) + self._questions_html(True)
                          + "<p>Every first stage and N:</p>" + table_html(self.table.reset_index(level=0).rename_axis("N"), True)))


depth_widget = DepthWidget
