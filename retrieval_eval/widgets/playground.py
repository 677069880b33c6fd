"""The toy ranking playground: the pure scoring function, then the ipywidgets view."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import ipywidgets as w
import pandas as pd
from IPython.display import HTML

from ..checks import check_positive_int
from ..metrics import dcg_at_k, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids
from ._view import WidgetView, check_start

PLAYGROUND_START = (0, 2, 0, 1, 0, 0, 1, 0, 0, 0)  # the playground's first ranking: gains at ranks 1-10
PLAYGROUND_GAINS = {0: "not relevant", 1: "partly relevant (1)", 2: "fully relevant (2)"}


def playground_scores(gains: Sequence[int], k: int, missed: Sequence[int] = ()) -> dict:
    """The four metrics of one toy ranking, with the arithmetic written out.

    The ranking is ``gains`` in rank order (rank 1 first): 0 not relevant, 1 partly relevant,
    2 fully relevant. ``missed`` are the gains of relevant chunks the ranking did not return; they
    count in recall's denominator and in the ideal DCG. Recall, precision and reciprocal rank
    treat any gain > 0 as relevant; nDCG uses the gains. The values come from
    :func:`recall_at_k`, :func:`precision_at_k`, :func:`reciprocal_rank` (cut at k) and
    :func:`ndcg_at_k`; the DCG and IDCG shown come from :func:`dcg_at_k`.

    Args:
        gains: the gain at each rank, each 0, 1 or 2.
        k: the cut-off, an integer >= 1.
        missed: gains (1 or 2) of relevant chunks that are not in the ranking.

    Returns:
        A dict: ``scores`` (``{"recall", "precision", "reciprocal rank", "nDCG"}`` → float),
        ``arithmetic`` (the same keys → one line of arithmetic each) and ``table`` (a DataFrame,
        one row per rank: gain, in the top k, DCG term).

    Raises:
        ValueError: a gain is not 0, 1 or 2 (names its rank), a missed gain is not 1 or 2, k is
            not an integer >= 1, or no chunk is relevant (the metrics have no denominator).

    Taught in: notebook 07_widgets.
    """
    gains, missed = list(gains), list(missed)
    for rank, gain in enumerate(gains, start=1):
        if isinstance(gain, bool) or gain not in PLAYGROUND_GAINS:
            raise ValueError(f"gain at rank {rank} must be 0, 1 or 2, got {gain!r}")
    for i, gain in enumerate(missed, start=1):
        if isinstance(gain, bool) or gain not in (1, 2):
            raise ValueError(f"missed relevant chunk {i} must have gain 1 or 2, got {gain!r}")
    k = check_positive_int(k)
    ranked = [f"r{rank}" for rank in range(1, len(gains) + 1)]
    judged = {doc: gain for doc, gain in zip(ranked, gains) if gain > 0}
    judged.update({f"missed{i}": gain for i, gain in enumerate(missed, start=1)})
    if not judged:
        raise ValueError("no chunk is relevant: mark at least one result relevant (or add a missed one); "
                         "without a relevant chunk recall and nDCG have no denominator")
    relevant = relevant_ids(judged)
    scores = {
        "recall": recall_at_k(ranked, relevant, k),
        "precision": precision_at_k(ranked, relevant, k),
        "reciprocal rank": reciprocal_rank(ranked, relevant, k),
        "nDCG": ndcg_at_k(ranked, judged, k),
    }
    hits = sum(gain > 0 for gain in gains[:k])
    first = next((rank for rank, gain in enumerate(gains[:k], start=1) if gain > 0), None)

    def terms(gains_in_order):
        """The DCG terms written out for reading; the totals shown come from dcg_at_k."""
        pairs = [(g, r) for r, g in enumerate(gains_in_order[:k], start=1) if g > 0]
        if not pairs:
            return "0", "0"
        return (" + ".join(f"{g}/log2({r + 1})" for g, r in pairs),
                " + ".join(f"{g / math.log2(r + 1):.3f}" for g, r in pairs))

    ideal_order = sorted(judged.values(), reverse=True)
    dcg, ideal = dcg_at_k(gains, k), dcg_at_k(ideal_order, k)
    (dcg_formula, dcg_values), (ideal_formula, ideal_values) = terms(gains), terms(ideal_order)
    arithmetic = {
        "recall": f"relevant in the top {k} / all relevant = {hits} / {len(relevant)} = {scores['recall']:.3f}",
        "precision": f"relevant in the top {k} / k = {hits} / {k} = {scores['precision']:.3f}",
        "reciprocal rank": (f"1 / rank of the first relevant result = 1 / {first} = {scores['reciprocal rank']:.3f}"
                            if first else f"no relevant result in the top {k}, so 0"),
        "nDCG": (f"DCG / IDCG = ({dcg_formula}) / ({ideal_formula}) = ({dcg_values}) / ({ideal_values}) "
                 f"= {dcg:.3f} / {ideal:.3f} = {scores['nDCG']:.3f}"),
    }
    table = pd.DataFrame(
        {
            "gain": gains,
            f"in the top {k}": ["yes" if rank <= k else "" for rank in range(1, len(gains) + 1)],
            "DCG term": [f"{g}/log2({r + 1}) = {g / math.log2(r + 1):.3f}" if r <= k and g > 0 else ""
                         for r, g in enumerate(gains, start=1)],
        },
        index=pd.Index(range(1, len(gains) + 1), name="rank"),
    )
    return {"scores": scores, "arithmetic": arithmetic, "table": table}


def playground_html(result: Mapping, k: int) -> str:
    """HTML table of a :func:`playground_scores` result: metric, value, arithmetic.

    Taught in: notebook 07_widgets.
    """

    names = {"recall": f"recall@{k}", "precision": f"precision@{k}", "reciprocal rank": f"reciprocal rank (RR@{k})",
             "nDCG": f"nDCG@{k}"}
    rows = "".join(
        f"<tr><td style='text-align:left'><b>{names[m]}</b></td><td>{v:.3f}</td>"
        f"<td style='text-align:left'><code>{html.escape(result['arithmetic'][m])}</code></td></tr>"
        for m, v in result["scores"].items()
    )
    return ("<div class='jp-RenderedHTMLCommon'><table style='margin-left:0'><tr><th>metric</th><th>value</th>"
            f"<th style='text-align:left'>arithmetic</th></tr>{rows}</table></div>")


class PlaygroundWidget(WidgetView):
    """The toy ranking playground; build it with :func:`playground_widget`.

    Controls: ``buttons`` (one per rank; a click cycles its gain 0 → 1 → 2 → 0), ``k`` and
    ``missed`` (IntSliders). Shown: ``scores_html`` (HTML). ``gains`` is the current ranking and
    ``result`` the current :func:`playground_scores` (``None`` while nothing is relevant).

    Taught in: notebook 07_widgets.
    """

    label = "ranking playground"
    LOOK = {0: ("#e9ecef", "black"), 1: ("#b7e4c7", "black"), 2: ("#2d6a4f", "white")}

    def __init__(self, gains: Sequence[int] = PLAYGROUND_START, k: int = 5):

        self.gains = list(gains)
        playground_scores(self.gains, k)  # refuse a bad start early
        n = len(self.gains)
        check_start(k, "k", range(1, n + 1))
        self.buttons = [w.Button(tooltip="click: not relevant → partly (1) → fully (2)",
                                 layout=w.Layout(width="76px")) for _ in range(n)]
        for i, button in enumerate(self.buttons):
            button.add_class(f"playground-rank-{i + 1}")
            button.on_click(lambda _button, i=i: self.set_gain(i + 1, (self.gains[i] + 1) % 3))
        self.k = w.IntSlider(value=k, min=1, max=n, description="cut-off k", continuous_update=False)
        self.missed = w.IntSlider(value=0, min=0, max=3, description="relevant, not retrieved (gain 1)",
                                  style={"description_width": "initial"}, layout=w.Layout(width="420px"),
                                  continuous_update=False)
        self.scores_html = w.HTML()
        self.scores_html.add_class("playground-scores")
        self.k.observe(self._update, names="value")
        self.missed.observe(self._update, names="value")
        legend = w.HTML("Click a result to change its gain: " + ", ".join(
            f"<span style='background:{self.LOOK[g][0]};color:{self.LOOK[g][1]};padding:0 4px'>{g} = {name}</span>"
            for g, name in PLAYGROUND_GAINS.items()))
        self.ui = w.VBox([legend, w.HBox(self.buttons), w.HBox([self.k, self.missed]), self.scores_html])
        self.ui.add_class("playground-widget")
        self.k.add_class("playground-k")
        self._update()

    def set_gain(self, rank: int, gain: int) -> None:
        """Set the gain (0, 1 or 2) at a rank (1 = top), as a click on its button does.

        Raises:
            ValueError: the rank is not 1..number of results, or the gain is not 0, 1 or 2.

        Taught in: notebook 07_widgets.
        """
        if isinstance(rank, bool) or rank not in range(1, len(self.gains) + 1):
            raise ValueError(f"rank must be 1 to {len(self.gains)}, got {rank!r}")
        if isinstance(gain, bool) or gain not in PLAYGROUND_GAINS:
            raise ValueError(f"gain must be 0, 1 or 2, got {gain!r}")
        self.gains[rank - 1] = gain
        self._update()

    def _update(self, change=None) -> None:
        for rank, (button, gain) in enumerate(zip(self.buttons, self.gains), start=1):
            button.description = f"#{rank} · {gain}"
            button.style.button_color, button.style.text_color = self.LOOK[gain]
            button.layout.border = "2px solid #333" if rank <= self.k.value else "2px solid transparent"
        try:
            self.result = playground_scores(self.gains, self.k.value, [1] * self.missed.value)
        except ValueError as exc:
            self.result = None
            self.scores_html.value = f"<p><b>{exc}</b></p>"
            return
        self.scores_html.value = playground_html(self.result, self.k.value)

    def static_fallback(self) -> list:

        if self.result is None:
            return [HTML(self.scores_html.value)]
        return [HTML(playground_html(self.result, self.k.value)), self.result["table"]]


def playground_widget(gains: Sequence[int] = PLAYGROUND_START, k: int = 5) -> PlaygroundWidget:
    """The toy ranking playground: click results to set their gain (0/1/2), move k, read the arithmetic.

    Args:
        gains: the starting gains at ranks 1, 2, ... (each 0, 1 or 2); ten by default.
        k: the starting cut-off.

    Returns:
        A :class:`PlaygroundWidget`; display it to show the widget and its static fallback (the
        four metrics with their arithmetic and the per-rank table for the starting ranking).

    Raises:
        ValueError: as :func:`playground_scores` for the starting ranking (e.g. nothing relevant),
            or k is larger than the number of results (the slider's end; it is refused, not moved).

    Taught in: notebook 07_widgets.
    """
    return PlaygroundWidget(gains, k)

