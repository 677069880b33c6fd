"""The teacher's key: the expected value of every guided step of the core notebooks' widgets, got by driving them."""

from __future__ import annotations

import pandas as pd

from ...core.evaluation import first_relevant_ranks, precision_ceiling
from .ceiling import CeilingWidget
from .depth import DepthWidget
from .playground import PlaygroundWidget
from .rank_slider import RankSliderWidget, rank_slider_scores
from .rrf import FUSED, RRFWidget


def teacher_key(setup, k: int = 3):
    """The expected value of every guided step of the core notebooks' widgets, got by driving the widgets
    (clicks, sliders) from the notebooks' starts. One row per step: notebook, step, what to ask, expected."""
    runs = {name: setup.runs[name] for name in ("BM25", "vector", "hybrid")}
    qrels, rows = setup.qrels, []

    def step(notebook, ask, expected):
        rows.append((notebook, sum(r[0] == notebook for r in rows) + 1, ask, expected))

    def clicks(widget, *ranks):
        for rank in ranks:
            widget.rank_buttons[rank - 1].click()
        return widget.state["values"]

    toy = PlaygroundWidget([0, 0, 1, 0, 0, 1], k=k, metrics=["recall"], max_gain=1)  # 01: c1 and c2 at ranks 3 and 6
    step("01", f"recall@{k} when c2 moves up to rank 2 (click rank 6, then rank 2)", f"{clicks(toy, 6, 2)['recall']:.3f}")
    toy.reset()
    step("01", f"reset, then a third relevant chunk at rank 5 (click rank 5): recall@{k}", f"{clicks(toy, 5)['recall']:.3f}")
    toy = PlaygroundWidget([0, 0, 1, 1, 0], k=k, metrics=["recall", "precision"], max_gain=1)  # 02: c1 and c9 at 3 and 4
    clicks(toy, 4)
    toy.k.value = 5
    step("02", "c9 not relevant after all (click rank 4), then k to 5: precision@5", f"{toy.state['values']['precision']:.3f}")
    step("02", "ranks 1 and 2 marked relevant too: precision@5", f"{clicks(toy, 1, 2)['precision']:.3f}")
    best = precision_ceiling({"toy": {f"r{i}": 1 for i in range(3)}}, 5)
    step("02", "the most precision@5 can reach with those 3 relevant chunks", f"{best:.3f}")
    ceiling = CeilingWidget(qrels, runs, k=k)
    falls = []
    for j in (1, 2, 3, 5, 10):
        ceiling.k.value = j
        falls.append(f"k = {j}: {ceiling.state['ceiling']:.3f}")
    step("02", "ceiling widget: how fast does the precision@k ceiling fall from 1?", "; ".join(falls))
    ceiling.reset()
    top = ceiling.table[("precision", k)].idxmax()
    ceiling.retriever.value = top
    share = ceiling.state["numbers"].loc[top, "of ceiling"]
    step("02", f"ceiling widget: what share of its ceiling does the best retriever reach at k = {k}?", f"{top}: {share:.0%}")
    slider = RankSliderWidget(rank=3, k=k)
    slider.rank.value = 4
    values = slider.state["values"]
    step("03", f"rank slider, rank 3 → 4: RR and RR@{k}", f"RR {values['RR']:.3f}, RR@{k} {values['RR@k']:.3f}")
    rr = {r: rank_slider_scores(r, k)["scores"]["RR"] for r in (1, 2, 9, 10)}
    step("03", "which costs more: rank 1 → 2 or rank 9 → 10?", f"1 → 2 costs {rr[1] - rr[2]:.3f}; 9 → 10 costs {rr[9] - rr[10]:.3f}")
    toy = PlaygroundWidget([1, 0, 2, 0, 1], k=k)  # 04: c5, c2, c1, c7, c8 with c1 graded 2, c5 and c8 graded 1
    before = clicks(toy, 1, 3, 3)["nDCG"]
    step("04", f"nDCG@{k} with the full answer at rank 1 (click rank 1 once, rank 3 twice)", f"{before:.3f}")
    toy.missed.value = 1
    after = toy.state["values"]["nDCG"]
    step("04", "then one relevant chunk added that was not retrieved",
         f"{after:.3f}" + (f" (unchanged: the ideal top {k} already held gains as high)" if after == before else ""))
    ranks = first_relevant_ranks(runs, qrels)
    missed = {name: set(ranks.index[ranks[name].fillna(k + 1) > k]) for name in ("BM25", "vector")}
    step("05", f"ranks widget: are the questions BM25 misses in the top {k} the ones vector search misses?",
         f"BM25 misses {len(missed['BM25'])}, vector {len(missed['vector'])}, both {len(missed['BM25'] & missed['vector'])}")
    rrf = RRFWidget(runs, qrels, setup.golden, k=k)
    first = rrf.state["metrics"]["first relevant rank"]
    step("05", f"RRF widget on {rrf.question.value}: which chunk does fusion put first, and where the first relevant one?",
         f"{rrf.state['fused'][0]} first; first relevant at rank {first[FUSED]} (BM25 {first['BM25']}, vector "
         f"{first['vector']}): fusion {rrf.state['verdict']}")
    depth = DepthWidget(runs, qrels, k=k)
    values = depth.state["values"]
    step("06", f"depth widget, {depth.stage.value} and N = {depth.n.value}: the best recall@{k}, and how many questions "
         "a reranker could fix and cannot", f"{values['ceiling']:.3f}; could fix {values['could fix']}, cannot fix "
         f"{values['cannot fix']}")
    return pd.DataFrame(rows, columns=["notebook", "step", "what to ask", "expected"])
