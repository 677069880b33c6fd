"""The toy ranking playground: the pure scoring function and its HTML, then the ipywidgets view."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import ipywidgets as w
import pandas as pd

from ..checks import check_list, check_k
from ..metrics import dcg_at_k, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids
from ._view import WidgetView, changes, check_start, hidden, reveal_details

PLAYGROUND_START = (0, 2, 0, 1, 0, 0, 1, 0, 0, 0)  # the playground's first ranking: gains at ranks 1-10
PLAYGROUND_GAINS = {0: "not relevant", 1: "partly relevant (1)", 2: "fully relevant (2)"}
METRIC_NAMES = ("recall", "precision", "reciprocal rank", "nDCG")  # the keys of playground_scores()["scores"]
GAIN_LOOK = {0: ("#e9ecef", "#000"), 1: ("#a6dba0", "#000"), 2: ("#1b7837", "#fff")}  # as h.plot_rankings
TOP_K_FRAME = "3px solid #111"  # the frame of a result in the top k (the legend says so)


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
        ValueError: ``gains`` or ``missed`` is not a list, a gain is not 0, 1 or 2 (names its rank), a missed gain is not 1 or 2, k is
            not an integer >= 1, or no chunk is relevant (the metrics have no denominator).

    Taught in: notebook 07_widgets.
    """
    gains, missed = check_list(gains, "gains", "gains (one per rank)"), check_list(missed, "missed", "gains")
    for rank, gain in enumerate(gains, start=1):
        if isinstance(gain, bool) or gain not in PLAYGROUND_GAINS:
            raise ValueError(f"gain at rank {rank} must be 0, 1 or 2, got {gain!r}")
    for i, gain in enumerate(missed, start=1):
        if isinstance(gain, bool) or gain not in (1, 2):
            raise ValueError(f"missed relevant chunk {i} must have gain 1 or 2, got {gain!r}")
    k = check_k(k)
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


def metric_label(metric: str, k: int) -> str:
    """How the widgets name a metric at cut-off k, e.g. "recall@3" or "reciprocal rank (RR@3)".

    Args:
        metric: one of :data:`METRIC_NAMES`.
        k: the cut-off (an int).

    Raises:
        KeyError: ``metric`` is not one of :data:`METRIC_NAMES`.

    Not taught; used by playground_widget (notebooks 01_recall_at_k, 02_precision_at_k, 04_ndcg and 07_widgets).
    """
    return {"recall": f"recall@{k}", "precision": f"precision@{k}", "reciprocal rank": f"reciprocal rank (RR@{k})",
            "nDCG": f"nDCG@{k}"}[metric]


def playground_html(result: Mapping, k: int, metrics: Sequence[str] = METRIC_NAMES,
                    before: Mapping[str, float] | None = None) -> str:
    """HTML table of a :func:`playground_scores` result: metric, value, change, arithmetic.

    Values, changes and arithmetic are hidden until "show the numbers" (:func:`hidden`); the rows
    whose value changed since ``before`` (scores of the previous state) are marked "old → new".

    Args:
        result: a :func:`playground_scores` result.
        k: its cut-off, for the metric names.
        metrics: the metrics to show (rows), names from :data:`METRIC_NAMES`.
        before: the previous ``result["scores"]``, or ``None`` (nothing marked).

    Not taught; used by playground_widget (notebooks 01_recall_at_k, 02_precision_at_k, 04_ndcg and 07_widgets).
    """
    marked = changes(before, {m: result["scores"][m] for m in metrics})
    rows = []
    for m in metrics:
        value, arithmetic = f"{result['scores'][m]:.3f}", html.escape(result["arithmetic"][m])
        rows.append(
            f"<tr{' class=rw-changed' if m in marked else ''}><td class='rw-left'><b>{metric_label(m, k)}</b></td>"
            f"<td>{hidden(value)}</td><td>{hidden(marked[m]) if m in marked else ''}</td>"
            f"<td class='rw-left'>{hidden(f'<code>{arithmetic}</code>')}</td></tr>"
        )
    rows = "".join(rows)
    return ("<table class='rw-table'><tr><th>metric</th><th>value</th><th>change</th><th>arithmetic</th></tr>"
            f"{rows}</table>")


def gain_legend_html(max_gain: int = 2) -> str:
    """The playground's legend: the colour of each gain and the frame that marks the top k.

    Args:
        max_gain: 2 for graded gains (0, 1, 2), 1 for relevant or not.

    Not taught; used by playground_widget (notebooks 01_recall_at_k, 02_precision_at_k, 04_ndcg and 07_widgets).
    """
    names = PLAYGROUND_GAINS if max_gain == 2 else {0: "not relevant", 1: "relevant"}
    looks = {g: GAIN_LOOK[2 if (max_gain == 1 and g == 1) else g] for g in names}
    swatches = " ".join(
        f"<span style='background:{looks[g][0]};color:{looks[g][1]};padding:1px 6px'>{g} = {name}</span>"
        for g, name in names.items()
    )
    return (f"Click a result to change its gain: {swatches} "
            f"<span style='border:{TOP_K_FRAME};padding:0 6px'>framed = in the top k</span>")


def ranking_html(gains: Sequence[int], k: int, max_gain: int = 2) -> str:
    """The toy ranking as a row of boxes (rank and gain, coloured by gain, the top k framed): the static copy's picture.

    Args:
        gains: the gain at ranks 1, 2, ... (each 0 to ``max_gain``).
        k: the cut-off: ranks 1 .. k are framed.
        max_gain: 2 for graded gains, 1 for relevant or not (gain 1 then looks fully relevant).

    Not taught; used by playground_widget (notebooks 01, 02, 04 and 07) and rank_slider_widget (notebook 03_mrr).
    """
    boxes = []
    for rank, gain in enumerate(gains, start=1):
        background, colour = GAIN_LOOK[2 if (max_gain == 1 and gain == 1) else gain]
        frame = TOP_K_FRAME if rank <= k else "3px solid transparent"
        boxes.append(f"<span style='display:inline-block;width:64px;text-align:center;margin:2px;padding:4px 0;"
                     f"background:{background};color:{colour};border:{frame}'>#{rank} · {gain}</span>")
    return "<div>" + "".join(boxes) + "</div>"


class PlaygroundWidget(WidgetView):
    """The toy ranking playground; build it with :func:`playground_widget`.

    Controls: ``buttons`` (one per rank; a click cycles its gain 0 → 1 → … → ``max_gain`` → 0),
    ``k`` and ``missed`` (IntSliders), ``reveal`` (show the numbers) and ``reset_control``. Shown:
    ``scores_html`` (HTML). ``gains`` is the current ranking and ``result`` the current
    :func:`playground_scores` (``None`` while nothing is relevant).

    Taught in: notebooks 01_recall_at_k, 02_precision_at_k, 04_ndcg and 07_widgets (through playground_widget).
    """

    label = "ranking playground"

    def __init__(self, gains: Sequence[int] = PLAYGROUND_START, k: int = 5, metrics: Sequence[str] = METRIC_NAMES,
                 max_gain: int = 2):
        if max_gain not in (1, 2):
            raise ValueError(f"max_gain must be 1 (relevant or not) or 2 (graded), got {max_gain!r}")
        gains = check_list(gains, "gains", "gains (one per rank)")
        metrics = check_list(metrics, "metrics", "metric names")
        unknown = [m for m in metrics if m not in METRIC_NAMES]
        if unknown or not metrics:
            raise ValueError(f"metrics must be a non-empty selection of {list(METRIC_NAMES)}, got {list(metrics)}")
        too_high = [(rank, g) for rank, g in enumerate(gains, start=1) if not isinstance(g, bool) and g in (1, 2) and g > max_gain]
        if too_high:
            raise ValueError(f"gain at rank {too_high[0][0]} is {too_high[0][1]}, above max_gain = {max_gain}")
        playground_scores(gains, k)  # refuse a bad start early
        self.start, self.start_k = list(gains), k
        self.gains, self.metrics, self.max_gain = list(gains), list(metrics), max_gain
        self.previous = None
        n = len(self.gains)
        check_start(k, "k", range(1, n + 1))
        self.buttons = [w.Button(tooltip=f"click: gain 0 → … → {max_gain} → 0", layout=w.Layout(width="86px"))
                        for _ in range(n)]
        for i, button in enumerate(self.buttons):
            button.add_class(f"playground-rank-{i + 1}")
            button.on_click(lambda _button, i=i: self.set_gain(i + 1, (self.gains[i] + 1) % (self.max_gain + 1)))
        self.k = w.IntSlider(value=k, min=1, max=n, description="cut-off k", continuous_update=True)
        self.missed = w.IntSlider(value=0, min=0, max=3, description="relevant, not retrieved",
                                  style={"description_width": "initial"}, continuous_update=True)
        self.reveal, self.reset_control = self.reveal_toggle(), self.reset_button()
        self.scores_html = w.HTML()
        self.scores_html.add_class("playground-scores")
        self.k.add_class("playground-k")
        self.missed.add_class("playground-missed")
        self.k.observe(self._update, names="value")
        self.missed.observe(self._update, names="value")
        legend = w.HTML(gain_legend_html(max_gain))
        self.ui = self._root([legend, w.HBox(self.buttons, layout=w.Layout(flex_flow="row wrap")),
                              w.HBox([self.k, self.missed], layout=w.Layout(flex_flow="row wrap")),
                              w.HBox([self.reveal, self.reset_control]), self.scores_html], "playground-widget")
        self._update()

    def set_gain(self, rank: int, gain: int) -> None:
        """Set the gain (0 to ``max_gain``) at a rank (1 = top), as clicks on its button do.

        Args:
            rank: the rank, 1 = top (an int).
            gain: the new gain, 0 to ``max_gain`` (an int).

        Raises:
            ValueError: the rank is not 1..number of results, or the gain is not 0..``max_gain``.

        Not taught; used by playground_widget (its buttons; notebooks 01, 02, 04 and 07).
        """
        if isinstance(rank, bool) or rank not in range(1, len(self.gains) + 1):
            raise ValueError(f"rank must be 1 to {len(self.gains)}, got {rank!r}")
        if isinstance(gain, bool) or gain not in range(self.max_gain + 1):
            raise ValueError(f"gain must be 0 to {self.max_gain}, got {gain!r}")
        self.gains[rank - 1] = gain
        self._update()

    def _restore_start(self) -> None:
        """The starting ranking, k = the starting k, no missed chunk, numbers hidden."""
        self.gains = list(self.start)
        self.k.value, self.missed.value, self.reveal.value = self.start_k, 0, False

    def _update(self, change=None) -> None:
        if self._resetting:
            return
        for rank, (button, gain) in enumerate(zip(self.buttons, self.gains), start=1):
            button.description = f"#{rank} · {gain}"
            button.style.button_color, button.style.text_color = GAIN_LOOK[2 if (self.max_gain == 1 and gain) else gain]
            button.layout.border = TOP_K_FRAME if rank <= self.k.value else "3px solid transparent"
        try:
            self.result = playground_scores(self.gains, self.k.value, [1] * self.missed.value)
        except ValueError as exc:
            self.result = None
            self.scores_html.value = f"<p><b>{html.escape(str(exc))}</b></p>"
            self.previous = None
            return
        self.scores_html.value = playground_html(self.result, self.k.value, self.metrics, self.previous)
        self.previous = self.result["scores"]

    def static_html(self) -> str:
        """The static copy: the legend and the ranking as boxes, then the metrics folded until clicked
        (or the message when nothing is relevant).

        Not taught; used by playground_widget (notebooks 01_recall_at_k, 02_precision_at_k, 04_ndcg and 07_widgets).
        """
        picture = gain_legend_html(self.max_gain) + ranking_html(self.gains, self.k.value, self.max_gain)
        if self.result is None:
            return picture + self.scores_html.value
        return picture + reveal_details(playground_html(self.result, self.k.value, self.metrics))


def playground_widget(gains: Sequence[int] = PLAYGROUND_START, k: int = 5, metrics: Sequence[str] = METRIC_NAMES,
                      max_gain: int = 2) -> PlaygroundWidget:
    """The toy ranking playground: click results to set their gain, move k, read the metrics and their arithmetic.

    The numbers stay hidden ("?") until "show the numbers": predict first. After each change the
    metrics that moved are marked "old → new"; "reset" returns to the start.

    Args:
        gains: the starting gains at ranks 1, 2, ... (each 0 to ``max_gain``); ten by default.
        k: the starting cut-off.
        metrics: which of ``"recall"``, ``"precision"``, ``"reciprocal rank"``, ``"nDCG"`` to show
            (a notebook shows the ones taught so far).
        max_gain: 1 for relevant / not relevant (a click toggles), 2 for graded gains (0 → 1 → 2 → 0).

    Returns:
        A :class:`PlaygroundWidget`; display it (or end a cell with it) to show the widget, with
        its static copy for GitHub and nbviewer in the same output.

    Raises:
        ValueError: as :func:`playground_scores` for the starting ranking (e.g. nothing relevant), a
            gain above ``max_gain``, ``max_gain`` not 1 or 2, an unknown metric, or k larger than the
            number of results (the slider's end; it is refused, not moved).

    Taught in: notebooks 01_recall_at_k, 02_precision_at_k, 04_ndcg and 07_widgets.
    """
    return PlaygroundWidget(gains, k, metrics, max_gain)
