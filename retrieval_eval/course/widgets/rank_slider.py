"""The 1/rank slider: one relevant result moved down a ranking; reciprocal rank with and without a cut-off."""

from __future__ import annotations

import ipywidgets as w

from ...core.checks import check_k
from ...core.registry import METRICS
from ._view import MASK, WidgetView, check_start, details, shown_or_mask
from .playground import ranking_html

BAR_PX = 150  # the 1/rank bar at rank 1


def rank_slider_scores(rank: int, k: int, n: int = 10) -> dict:
    """RR and RR@k (the registry's "MRR" of one question) of ``n`` results whose only relevant one is at ``rank``."""
    n, k = check_k(n, "n"), check_k(k)
    if isinstance(rank, bool) or rank not in range(1, n + 1):
        raise ValueError(f"rank must be an integer from 1 to n = {n}, got {rank!r}")
    ranking = [("r" if i == rank else f"c{i}") for i in range(1, n + 1)]
    rr, rr_k = METRICS["MRR"].score(ranking, {"r": 1}, n), METRICS["MRR"].score(ranking, {"r": 1}, k)
    return {
        "gains": [int(i == rank) for i in range(1, n + 1)],
        "scores": {"RR": rr, f"RR@{k}": rr_k},
        "arithmetic": {"RR": f"1 / {rank} = {rr:.3f}",
                       f"RR@{k}": f"rank {rank} ≤ k = {k}: 1 / {rank} = {rr_k:.3f}" if rank <= k
                       else f"rank {rank} > k = {k}: the LLM never sees it, so 0.000"},
    }


def rank_bars_html(rank: int, k: int, n: int, shown: bool) -> str:
    """Bars of 1/r for r = 1 .. n (ranks past k hatched), the relevant result's rank in dark blue;
    hidden: empty slots of one height."""
    bars = []
    for r in range(1, n + 1):
        colour = "#0b4f9c" if r == rank else "#9ecae1"
        if shown:
            hatch = (";background-image:repeating-linear-gradient(45deg,transparent 0 4px,rgba(255,255,255,.7) 4px 8px)"
                     if r > k else "")
            bar = f"<div>1/{r}</div><div style='width:40px;height:{BAR_PX / r:.0f}px;background:{colour}{hatch}'></div>"
        else:
            bar = (f"<div style='width:36px;height:{BAR_PX}px;border:2px dashed {colour};display:flex;"
                   f"align-items:center;justify-content:center;color:#555'>{MASK}</div>")
        bars.append("<div class='rw-bar' style='display:flex;flex-direction:column;justify-content:flex-end;align-items:center;"
                    f"width:52px'>{bar}<div{' style=font-weight:bold' if r == rank else ''}>{r}</div></div>")
    caption = (f"bar height = 1/rank · hatched = below the cut-off k = {k} (RR@{k} counts them 0)" if shown
               else "Predict the height of each bar: what does the relevant result add at each rank?")
    return f"<div class='rw-bars' style='display:flex;align-items:flex-end;height:{BAR_PX + 50}px'>{''.join(bars)}</div><div>{caption}</div>"


def readout_html(result: dict, shown: bool) -> str:
    return "".join(f"<div><b>{name}</b> = {shown_or_mask(f'{value:.3f}', shown)} &nbsp; "
                   f"{shown_or_mask(result['arithmetic'][name], shown)}</div>" for name, value in result["scores"].items())


class RankSliderWidget(WidgetView):
    """A slider for the rank of the one relevant result: RR = 1/rank, and RR@k, which drops to 0 past k."""

    label = "1/rank slider"

    def __init__(self, rank: int = 1, k: int = 3, n: int = 10):
        rank_slider_scores(rank, k, n)  # refuse a bad start early
        check_start(k, "k", range(1, n + 1))
        self.n = n
        self.rank = w.IntSlider(value=rank, min=1, max=n, description="relevant result at rank",
                                style={"description_width": "12.5em"}, layout=w.Layout(width="30em"))
        self.k = w.IntSlider(value=k, min=1, max=n, description="cut-off k", style={"description_width": "5em"},
                             layout=w.Layout(width="21em"))
        self.ranking, self.bars, self.readout = w.HTML(), w.HTML(), w.HTML()
        self._add_classes("rank-slider", "rank", "k", "readout", "bars")
        rows = [w.HBox([self.rank, self.k], layout=w.Layout(flex_flow="row wrap")), self.reveal_row(), self.ranking,
                w.HBox([self.bars, self.readout], layout=w.Layout(flex_flow="row wrap", align_items="flex-end"))]
        self._build("rank-slider-widget", rows, [self.rank, self.k])

    def _compute(self) -> dict:
        result = rank_slider_scores(self.rank.value, self.k.value, self.n)
        return {**result, "values": {"RR": result["scores"]["RR"], "RR@k": list(result["scores"].values())[1]}}

    def _draw(self, shown: bool) -> None:
        self.ranking.value = ("<div>The ranking (green = the relevant result, framed = in the top k):</div>"
                              + ranking_html(self.state["gains"], self.k.value, max_gain=1))
        self.bars.value = rank_bars_html(self.rank.value, self.k.value, self.n, shown)
        self.readout.value = readout_html(self.state, shown)

    def static_html(self) -> str:
        return (ranking_html(self.state["gains"], self.k.value, max_gain=1)
                + rank_bars_html(self.rank.value, self.k.value, self.n, False) + readout_html(self.state, False)
                + details(rank_bars_html(self.rank.value, self.k.value, self.n, True) + readout_html(self.state, True)))


rank_slider_widget = RankSliderWidget
