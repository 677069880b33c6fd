"""The toy ranking playground: click results to set their gains, move k, read every metric of the registry."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as w

from ...core.checks import check_k, check_list
from ...core.metrics import dcg_at_k
from ...core.registry import METRICS, shown_metrics
from ...inputs.text import escape
from ._view import WidgetView, check_start, details, shown_or_mask

PLAYGROUND_START = (0, 2, 0, 1, 0, 0, 1, 0, 0, 0)  # gains at ranks 1-10
GAIN_NAMES = {0: "not relevant", 1: "partly relevant", 2: "fully relevant"}
GAIN_LOOK = {0: ("#e9ecef", "#000"), 1: ("#a6dba0", "#000"), 2: ("#1b7837", "#fff")}  # as teaching.plot_rankings
TOP_K_FRAME = "3px solid #111"
FORMULAS = {"recall": "relevant in the top k / all relevant", "precision": "relevant in the top k / k",
            "MRR": "1 / rank of the first relevant result in the top k", "nDCG": "DCG@k / IDCG@k"}


def short_name(metric: str) -> str:
    """A metric's name for one question: "MRR" of one question is its reciprocal rank, "RR"."""
    return "RR" if metric == "MRR" else metric


def playground_scores(gains: Sequence[int], k: int, missed: Sequence[int] = ()) -> dict:
    """Every registered metric of a toy ranking of ``gains`` (0, 1 or 2 at ranks 1, 2, ...), with the arithmetic of
    the four taught ones: ``{"scores", "arithmetic"}``. ``missed``: gains of relevant chunks not returned (they
    count in recall's denominator and the ideal DCG)."""
    gains, missed = check_list(gains, "gains", "gains (one per rank)"), check_list(missed, "missed", "gains")
    for rank, gain in enumerate(gains, start=1):
        if isinstance(gain, bool) or gain not in GAIN_NAMES:
            raise ValueError(f"gain at rank {rank} must be 0, 1 or 2, got {gain!r}")
    for i, gain in enumerate(missed, start=1):
        if isinstance(gain, bool) or gain not in (1, 2):
            raise ValueError(f"missed relevant chunk {i} must have gain 1 or 2, got {gain!r}")
    k = check_k(k)
    ranking = [f"r{rank}" for rank in range(1, len(gains) + 1)]
    judged = {doc: gain for doc, gain in zip(ranking, gains) if gain} | {f"missed{i}": g for i, g in enumerate(missed, 1)}
    if not judged:
        raise ValueError("no chunk is relevant: mark at least one result relevant (or add a missed one); "
                         "without a relevant chunk recall and nDCG have no denominator")
    scores = {name: metric.score(ranking, judged, k) for name, metric in METRICS.items()}
    top = gains[:k]
    hits, first = sum(g > 0 for g in top), next((r for r, g in enumerate(top, start=1) if g), None)

    def terms(order):
        return " + ".join(f"{g}/log2({r + 1})" for r, g in enumerate(order[:k], start=1) if g) or "0"

    ideal = sorted(judged.values(), reverse=True)
    arithmetic = {
        "recall": f"{hits} / {len(judged)} = {scores['recall']:.3f}",
        "precision": f"{hits} / {k} = {scores['precision']:.3f}",
        "MRR": f"1 / {first} = {scores['MRR']:.3f}" if first else f"none in the top {k}, so 0.000",
        "nDCG": (f"({terms(gains)}) / ({terms(ideal)}) = {dcg_at_k(gains, k):.3f} / {dcg_at_k(ideal, k):.3f} "
                 f"= {scores['nDCG']:.3f}"),
    }
    return {"scores": scores, "arithmetic": {m: a for m, a in arithmetic.items() if m in scores}}


def scores_html(result: dict, k: int, metrics: Sequence[str], shown: bool, changed=()) -> str:
    """The metrics table: name at k, value, formula = arithmetic; values and arithmetic "?" until shown."""
    rows = "".join(
        f"<tr{' class=rw-changed' if shown and short_name(m) in changed else ''}>"
        f"<td class='rw-left'><b>{escape(short_name(m))}@{k}</b></td>"
        f"<td>{shown_or_mask(format(result['scores'][m], '.3f'), shown)}</td><td class='rw-left'>"
        f"{escape(FORMULAS.get(m, ''))} = {shown_or_mask(escape(result['arithmetic'].get(m, '')), shown)}</td></tr>"
        for m in metrics)
    return f"<table class='rw-table'><tr><th>metric</th><th>value</th><th>formula = worked out</th></tr>{rows}</table>"


def gain_look(gain: int, max_gain: int) -> tuple[str, str]:
    """(background, text colour) of a result; with relevant-or-not gains, relevant looks fully relevant."""
    return GAIN_LOOK[2 if max_gain == 1 and gain else gain]


def legend_html(max_gain: int = 2) -> str:
    names = GAIN_NAMES if max_gain == 2 else {0: "not relevant", 1: "relevant"}
    swatches = " ".join(f"<span style='background:{gain_look(g, max_gain)[0]};color:{gain_look(g, max_gain)[1]};"
                        f"padding:1px 6px'>{g} = {name}</span>" for g, name in names.items())
    return f"Click a result to change its gain: {swatches} <span style='border:{TOP_K_FRAME};padding:0 6px'>framed = in the top k</span>"


def ranking_html(gains: Sequence[int], k: int, max_gain: int = 2) -> str:
    """The ranking as a row of boxes (rank · gain), the top k framed: the static copy's picture."""
    boxes = "".join(
        f"<span style='display:inline-block;width:72px;text-align:center;margin:2px;padding:4px 0;"
        f"background:{gain_look(g, max_gain)[0]};color:{gain_look(g, max_gain)[1]};"
        f"border:{TOP_K_FRAME if rank <= k else '3px solid transparent'}'>#{rank} · {g}</span>"
        for rank, g in enumerate(gains, start=1))
    return f"<div>{boxes}</div>"


class PlaygroundWidget(WidgetView):
    """The toy ranking playground: click results to set their gain (0 → 1 → 2 → 0; ``max_gain=1``: relevant or
    not), move k, add relevant chunks it missed; ``metrics``: which of the registry (all by default). ``set_gain``
    does what a click does."""

    label = "ranking playground"

    def __init__(self, gains: Sequence[int] = PLAYGROUND_START, k: int = 5, metrics: Sequence[str] | None = None,
                 max_gain: int = 2):
        if max_gain not in (1, 2):
            raise ValueError(f"max_gain must be 1 (relevant or not) or 2 (graded), got {max_gain!r}")
        gains = check_list(gains, "gains", "gains (one per rank)")
        metrics = shown_metrics() if metrics is None else check_list(metrics, "metrics", "metric names")
        if not metrics or any(m not in METRICS for m in metrics):
            raise ValueError(f"metrics must be a non-empty selection of {list(METRICS)}, got {metrics}")
        playground_scores(gains, k)  # refuse a bad start early
        too_high = next(((r, g) for r, g in enumerate(gains, start=1) if g > max_gain), None)
        if too_high:
            raise ValueError(f"gain at rank {too_high[0]} is {too_high[1]}, above max_gain = {max_gain}")
        check_start(k, "k", range(1, len(gains) + 1))
        self.first, self.gains, self.metrics, self.max_gain = list(gains), list(gains), metrics, max_gain
        self.rank_buttons = [w.Button(tooltip=f"click: gain 0 → … → {max_gain} → 0", layout=w.Layout(width="5.4em"))
                        for _ in gains]
        for i, button in enumerate(self.rank_buttons):
            button.add_class(f"playground-rank-{i + 1}")
            button.on_click(lambda _button, i=i: self.set_gain(i + 1, (self.gains[i] + 1) % (max_gain + 1)))
        self.k = w.IntSlider(value=k, min=1, max=len(gains), description="cut-off k", layout=w.Layout(width="21em"))
        self.missed = w.IntSlider(value=0, min=0, max=3, description="relevant, not retrieved",
                                  style={"description_width": "initial"}, layout=w.Layout(width="24em"))
        self.scores = w.HTML()
        self._add_classes("playground", "k", "missed", "scores")
        rows = [w.HTML(legend_html(max_gain)), w.HBox(self.rank_buttons, layout=w.Layout(flex_flow="row wrap")),
                w.HBox([self.k, self.missed], layout=w.Layout(flex_flow="row wrap")), self.reveal_row(), self.scores]
        self._build("playground-widget", rows, [self.k, self.missed])

    def set_gain(self, rank: int, gain: int) -> None:
        """Set the gain at a rank (1 = top), as clicks on its button do."""
        if isinstance(rank, bool) or rank not in range(1, len(self.gains) + 1):
            raise ValueError(f"rank must be 1 to {len(self.gains)}, got {rank!r}")
        if isinstance(gain, bool) or gain not in range(self.max_gain + 1):
            raise ValueError(f"gain must be 0 to {self.max_gain}, got {gain!r}")
        self.gains[rank - 1] = gain
        self._update()

    def _restore(self) -> None:
        self.gains = list(self.first)

    def _compute(self) -> dict:
        try:
            result = playground_scores(self.gains, self.k.value, [1] * self.missed.value)
        except ValueError as exc:
            return {"error": str(exc), "values": {}}
        return {**result, "values": {short_name(m): result["scores"][m] for m in self.metrics}}

    def _draw(self, shown: bool) -> None:
        for rank, (button, gain) in enumerate(zip(self.rank_buttons, self.gains), start=1):
            button.description = f"#{rank} · {gain}"
            button.style.button_color, button.style.text_color = gain_look(gain, self.max_gain)
            button.layout.border = TOP_K_FRAME if rank <= self.k.value else "3px solid transparent"
        if "error" in self.state:
            self.scores.value = f"<p><b>{escape(self.state['error'])}</b></p>"
        else:
            self.scores.value = scores_html(self.state, self.k.value, self.metrics, shown, self.moved())

    def static_html(self) -> str:
        picture = legend_html(self.max_gain) + ranking_html(self.gains, self.k.value, self.max_gain)
        if "error" in self.state:
            return picture + self.scores.value
        return (picture + scores_html(self.state, self.k.value, self.metrics, False)
                + details(scores_html(self.state, self.k.value, self.metrics, True)))


playground_widget = PlaygroundWidget
