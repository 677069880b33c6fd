"""The 1/rank slider: one relevant result, moved down a ranking; reciprocal rank with and without a cut-off."""

from __future__ import annotations

from collections.abc import Mapping

import ipywidgets as w

from ..checks import check_k
from ..metrics import reciprocal_rank
from ._view import WidgetView, change_line, changes, check_start, hidden, num, reveal_details
from .playground import ranking_html

BAR_PX = 150  # the height of the 1/rank bar at rank 1


def rank_slider_scores(rank: int, k: int, n: int = 10) -> dict:
    """Reciprocal rank of a ranking of ``n`` results whose only relevant one sits at ``rank``.

    The values come from :func:`reciprocal_rank` on that ranking (ids ``c1`` .. ``cn``, the relevant
    one called ``r``), without a cut-off and at cut-off k.

    Args:
        rank: where the relevant result is, 1 .. n.
        k: the cut-off of RR@k, an integer >= 1.
        n: the length of the ranking, an integer >= 1.

    Returns:
        A dict: ``gains`` (1 at ``rank``, 0 elsewhere), ``scores`` (``{"RR": float, "RR@k": float}``)
        and ``arithmetic`` (the same keys → one line each).

    Raises:
        ValueError: n or k is not an integer >= 1, or rank is not 1 .. n.

    Taught in: notebook 03_mrr (through rank_slider_widget).
    """
    n, k = check_k(n, "n"), check_k(k)
    if isinstance(rank, bool) or rank not in range(1, n + 1):
        raise ValueError(f"rank must be an integer from 1 to n = {n}, got {rank!r}")
    ranking = [("r" if i == rank else f"c{i}") for i in range(1, n + 1)]
    rr, rr_k = reciprocal_rank(ranking, {"r"}), reciprocal_rank(ranking, {"r"}, k)
    return {
        "gains": [int(i == rank) for i in range(1, n + 1)],
        "scores": {"RR": rr, f"RR@{k}": rr_k},
        "arithmetic": {
            "RR": f"1 / rank = 1 / {rank} = {rr:.3f}",
            f"RR@{k}": (f"rank {rank} ≤ k = {k}: 1 / {rank} = {rr_k:.3f}" if rank <= k
                        else f"rank {rank} > k = {k}: the model never sees it, so 0"),
        },
    }


def rank_bars_html(rank: int, k: int, n: int = 10) -> str:
    """Bars of 1/r for r = 1 .. n, the relevant result's rank highlighted, ranks past k hatched: the shape of 1/rank.

    Args:
        rank: the relevant result's rank, 1 .. n.
        k: the cut-off: bars past it are hatched.
        n: how many bars (ranks).

    Not taught; used by rank_slider_widget (notebook 03_mrr).
    """
    bars = []
    for r in range(1, n + 1):
        colour = "#0b4f9c" if r == rank else "#9ecae1"
        past_k = (";background-image:repeating-linear-gradient(45deg,transparent 0 4px,rgba(255,255,255,.7) 4px 8px)"
                  if r > k else "")
        bars.append(
            "<div style='display:flex;flex-direction:column;justify-content:flex-end;align-items:center;width:56px'>"
            f"<div>1/{r}</div>"
            f"<div style='width:40px;height:{BAR_PX / r:.0f}px;background:{colour}{past_k}'></div>"
            f"<div{' style=font-weight:bold' if r == rank else ''}>{r}</div></div>"
        )
    return (f"<div style='display:flex;align-items:flex-end;height:{BAR_PX + 50}px'>{''.join(bars)}</div>"
            f"<div>rank → · bar height = 1/rank · hatched = below the cut-off k = {k} (RR@{k} counts them 0)</div>")


def rank_slider_html(result: Mapping, before: Mapping | None = None) -> str:
    """The readout of :func:`rank_slider_scores`: both values with their arithmetic, changes marked, numbers hidden until revealed.

    Args:
        result: a :func:`rank_slider_scores` result.
        before: the previous ``result["scores"]``, or ``None`` (nothing marked).

    Not taught; used by rank_slider_widget (notebook 03_mrr).
    """
    lines = "".join(f"<div><b>{name}</b> = {num(value)} &nbsp; {hidden(result['arithmetic'][name])}</div>"
                    for name, value in result["scores"].items())
    return change_line(changes(before, result["scores"])) + lines


class RankSliderWidget(WidgetView):
    """The 1/rank slider; build it with :func:`rank_slider_widget`.

    Controls: ``rank`` and ``k`` (IntSliders), ``reveal``, ``reset_control``. Shown: ``ranking``,
    ``bars`` and ``readout`` (HTML). ``result`` holds the current :func:`rank_slider_scores`.

    Taught in: notebook 03_mrr (through rank_slider_widget).
    """

    label = "1/rank slider"

    def __init__(self, rank: int = 1, k: int = 3, n: int = 10):
        rank_slider_scores(rank, k, n)  # refuse a bad start early
        check_start(k, "k", range(1, n + 1))
        self.start, self.n, self.previous = (rank, k), n, None
        self.rank = w.IntSlider(value=rank, min=1, max=n, description="relevant result at rank",
                                style={"description_width": "190px"}, layout=w.Layout(width="480px"))
        self.k = w.IntSlider(value=k, min=1, max=n, description="cut-off k", style={"description_width": "80px"},
                             layout=w.Layout(width="330px"))
        self.reveal, self.reset_control = self.reveal_toggle(), self.reset_button()
        self.ranking, self.bars, self.readout = w.HTML(), w.HTML(), w.HTML()
        for widget, name in ((self.rank, "rank-slider-rank"), (self.k, "rank-slider-k"),
                             (self.readout, "rank-slider-readout"), (self.bars, "rank-slider-bars")):
            widget.add_class(name)
        self.readout.add_class("rw-sentence")
        for control in (self.rank, self.k):
            control.observe(self._update, names="value")
        self.ui = self._root([w.HBox([self.rank, self.k], layout=w.Layout(flex_flow="row wrap")),
                              w.HBox([self.reveal, self.reset_control]), self.ranking,
                              w.HBox([self.bars, self.readout], layout=w.Layout(flex_flow="row wrap", align_items="flex-end"))],
                             "rank-slider-widget")
        self._update()

    def _restore_start(self) -> None:
        """The starting rank and k; numbers hidden."""
        (self.rank.value, self.k.value), self.reveal.value = self.start, False

    def _update(self, change=None) -> None:
        if self._resetting:
            return
        self.result = rank_slider_scores(self.rank.value, self.k.value, self.n)
        self.ranking.value = ("<div>The ranking (green = the relevant result, framed = in the top k):</div>"
                              + ranking_html(self.result["gains"], self.k.value, max_gain=1))
        self.bars.value = rank_bars_html(self.rank.value, self.k.value, self.n)
        self.readout.value = rank_slider_html(self.result, self.previous)
        self.previous = self.result["scores"]

    def static_html(self) -> str:
        """The static copy: the ranking, the 1/rank bars, then the values folded until clicked.

        Not taught; used by rank_slider_widget (notebook 03_mrr).
        """
        return (ranking_html(self.result["gains"], self.k.value, max_gain=1)
                + rank_bars_html(self.rank.value, self.k.value, self.n)
                + reveal_details(rank_slider_html(self.result)))


def rank_slider_widget(rank: int = 1, k: int = 3, n: int = 10) -> RankSliderWidget:
    """A slider for the rank of the one relevant result: reciprocal rank 1/rank, and RR@k that drops to 0 past k.

    Args:
        rank: the starting rank, 1 .. n.
        k: the starting cut-off.
        n: how many results the ranking has.

    Returns:
        A :class:`RankSliderWidget`; display it to show the widget, with its static copy in the same output.

    Raises:
        ValueError: as :func:`rank_slider_scores`.

    Taught in: notebook 03_mrr.
    """
    return RankSliderWidget(rank, k, n)
