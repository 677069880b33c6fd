"""The RRF explainer: why fusion wins or loses on one question, term by term."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import ipywidgets as w
import pandas as pd

from ...core.checks import check_k, check_list, check_runs, naming_question
from ...core.metrics import first_relevant_rank, relevant_ids
from ...core.registry import METRICS, shown_metrics
from ...inputs.text import escape
from ...retrieval.fusion import reciprocal_rank_fusion
from ...retrieval.setup import fusion_inputs
from ._view import WidgetView, check_start, details, shown_or_mask, table_html
from .playground import short_name

FUSED = "fused (RRF)"  # the fused ranking's row
RRF_K_MAX, DEPTH_MAX = 100, 20  # the sliders' ranges
ROWS = 4  # candidate rows shown before "all candidates" (relevant ones always show)


def rrf_explanation(rankings: Mapping[str, Sequence[str]], gains: Mapping[str, float], rrf_k: float = 60,
                    depth: int = 10, k: int = 3) -> dict:
    """RRF of two or more rankings of one question, with every registered metric at k before and after: ``fused``,
    ``table`` (per fused chunk: rank and term 1 / (rrf_k + rank) in each input, 0 below ``depth``; score; gain),
    ``metrics`` (first relevant rank and each metric, per input and :data:`FUSED`), ``verdict`` ("helps", "same",
    "hurts" against the best), ``tied`` (above the first relevant by id on an equal score), ``sentence`` (HTML)."""
    names = list(rankings)
    if len(names) < 2:
        raise ValueError(f"fusion needs at least two rankings, got {names}")
    if FUSED in names:
        raise ValueError(f"{FUSED!r} names the fused ranking; call the inputs something else (got {names})")
    depth, k = check_k(depth, "depth"), check_k(k)
    relevant = relevant_ids(gains)
    if not relevant:
        raise ValueError("the question has no relevant chunk (no gain above 0): nothing to explain")
    fused = reciprocal_rank_fusion([rankings[n] for n in names], k=rrf_k, depth=depth)
    positions = {n: {chunk: rank for rank, chunk in enumerate(rankings[n], start=1)} for n in names}
    rows = []
    for chunk in fused:
        row = {"chunk": chunk}
        for n in names:
            rank = positions[n].get(chunk)
            row[f"{n} rank"], row[f"{n} term"] = rank, 1.0 / (rrf_k + rank) if rank is not None and rank <= depth else 0.0
        rows.append(row | {"fused score": sum(row[f"{n} term"] for n in names), "gain": gains.get(chunk, 0)})
    table = pd.DataFrame(rows, index=pd.RangeIndex(1, len(fused) + 1, name="fused rank"))
    table = table.astype({f"{n} rank": "Int64" for n in names})
    everything = {**{n: list(rankings[n]) for n in names}, FUSED: fused}
    metrics = pd.DataFrame({"first relevant rank": [first_relevant_rank(r, relevant) for r in everything.values()]}
                           | {m.at(k): [m.score(r, gains, k) for r in everything.values()] for m in map(METRICS.get, shown_metrics())},
                           index=pd.Index(list(everything), name="ranking")).astype({"first relevant rank": "Int64"})
    verdict, sentence, tied = _explain(names, table, metrics, depth, positions)
    return {"fused": fused, "table": table, "metrics": metrics, "verdict": verdict, "tied": tied, "sentence": sentence}


def _rank_text(rank) -> str:
    return "not ranked" if rank is None or pd.isna(rank) else f"rank {int(rank)}"


def _explain(names, table, metrics, depth, positions) -> tuple[str, str, list]:
    first = {n: None if pd.isna(r) else int(r) for n, r in metrics["first relevant rank"].items()}
    found = {n: first[n] for n in names if first[n] is not None}
    best = min(found, key=found.get) if found else None
    fused_rank, best_rank, shown_best = first[FUSED], found.get(best), escape(best)
    if fused_rank is None:
        where = ", ".join(f"{escape(n)}: {_rank_text(first[n])}" for n in names)
        return ("same" if best is None else "hurts"), (
            f"No relevant chunk is in the top {depth} of any input ({where}), so the fused ranking, built from the "
            f"top {depth} of each, has none: fusion cannot find what no input found"
            + (f" that high. A greater depth would bring in {shown_best}'s rank {best_rank}." if best else ".")), []
    verdict = "helps" if fused_rank < best_rank else "same" if fused_rank == best_rank else "hurts"
    chunk, score = table.loc[fused_rank, "chunk"], table.loc[fused_rank, "fused score"]
    placed = f"fusion puts the first relevant chunk at rank {fused_rank}"
    sentence = {"helps": f"<b>Fusion helps</b>: {placed}, above the best input ({shown_best}, rank {best_rank}).",
                "same": f"<b>Fusion keeps</b> the best input's place: rank {fused_rank}, as {shown_best}.",
                "hurts": f"<b>Fusion hurts</b>: {placed}, below {shown_best}'s rank {best_rank}."}[verdict]
    terms = " + ".join(f"{table.loc[fused_rank, f'{n} term']:.4f}" for n in names)
    sentence += (f" <code>{escape(chunk)}</code> ({', '.join(f'{escape(n)} {_rank_text(positions[n].get(chunk))}' for n in names)}) "
                 f"scores {terms} = <b>{score:.4f}</b>.")
    above = table.loc[: fused_rank - 1]
    tied = [row["chunk"] for _, row in above.iterrows() if math.isclose(row["fused score"], score, rel_tol=1e-12)]
    if len(above):
        beaten = "; ".join(f"<code>{escape(row['chunk'])}</code> ("
                           + ", ".join(f"{escape(n)} {_rank_text(row[f'{n} rank'])}" for n in names)
                           + f") {row['fused score']:.4f}" for _, row in above.head(2).iterrows())
        more = f" and {len(above) - 2} more" if len(above) > 2 else ""
        both = sum(all(row[f"{n} term"] > 0 for n in names) for _, row in above.iterrows())
        sentence += f" Above it: {beaten}{more}"
        if len(above) == 1:
            sentence += ", which gets a term from every list." if both else ", which gets a term from one list only."
        else:
            sentence += f": {both} of these {len(above)} get a term from every list, {len(above) - both} from one only."
        if tied:
            sentence += (f" {', '.join(f'<code>{escape(c)}</code>' for c in tied)} ties with it on score; ties go by "
                         "chunk id, so it comes first.")
    return verdict, sentence, tied


def _check_inputs(runs: Mapping, inputs: Sequence[str] | None) -> list[str]:
    inputs = fusion_inputs(runs) if inputs is None else check_list(inputs, "inputs", "run names (keys of runs)")
    unknown = [name for name in inputs if name not in runs]
    if unknown:
        raise ValueError(f"inputs {unknown} are not runs (the runs are {list(runs)})")
    return inputs


def fusion_cases(runs: Mapping, qrels: Mapping, inputs: Sequence[str] | None = None, rrf_k: float = 60,
                 depth: int = 10) -> pd.DataFrame:
    """Per question: the first relevant rank in each input and fused, the ``verdict``, and whether a ``tie`` decides."""
    runs, qrels = check_runs(runs, qrels)
    inputs = _check_inputs(runs, inputs)
    rows = {}
    for qid, gains in qrels.items():
        with naming_question(qid):
            result = rrf_explanation({n: runs[n][qid] for n in inputs}, gains, rrf_k, depth, k=1)
        rows[qid] = result["metrics"]["first relevant rank"].to_dict() | {"verdict": result["verdict"], "tie": bool(result["tied"])}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("question")
    return table.astype({name: "Int64" for name in [*inputs, FUSED]})


def rrf_table_html(result: Mapping, names: Sequence[str], rrf_k: float, depth: int, shown: bool, limit: bool = True,
                   static: bool = False) -> str:
    """The candidates in fused order with their rank and term in each input and the fused score; hidden, in
    best-input-rank order with terms and scores "?". Rows past :data:`ROWS` need "all candidates", relevant ones not;
    ``static`` (a static copy, which has no such button) leaves them out."""
    table = result["table"]
    if not shown:
        best = table[[f"{n} rank" for n in names]].min(axis=1).fillna(10 ** 9)
        table = table.assign(best=best.values).sort_values(["best", "chunk"])
    head = ["fused", "chunk", *[h for n in names for h in (f"{n} rank", f"{n} term")], "score"]
    rows, dropped = [], 0
    for i, (fused_rank, row) in enumerate(table.iterrows(), start=1):
        cells = [shown_or_mask(str(fused_rank), shown),
                 escape(row["chunk"]) + (" <span class=rw-relevant>relevant</span>" if row["gain"] > 0 else "")]
        for n in names:
            rank = row[f"{n} rank"]
            cells += ["–" if pd.isna(rank) else f"{int(rank)}" + ("↓" if rank > depth else ""),
                      shown_or_mask(f"{row[f'{n} term']:.4f}", shown)]
        cells.append(f"<b>{shown_or_mask(format(row['fused score'], '.4f'), shown)}</b>")
        more = " class='rw-more'" if limit and i > ROWS and row["gain"] <= 0 else ""
        if more and static:
            dropped += 1
            continue
        rows.append(f"<tr{more}>" + "".join(f"<td{' class=rw-left style=white-space:nowrap' if j == 1 else ''}>{c}</td>"
                                            for j, c in enumerate(cells)) + "</tr>")
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    more = sum("rw-more" in r for r in rows) + dropped
    more = (f" · {more} more candidates in the live widget" if static else
            f"<span class='rw-fewer'> · {more} more candidates: “all candidates”</span>") if more else ""
    return (f"<table class='rw-table rrf-table'><caption style='caption-side:bottom;text-align:left'>term = 1 / "
            f"({rrf_k:g} + rank); ↓ below the depth {depth}: adds 0{more}</caption><tr>{header}</tr>{''.join(rows)}</table>")


class RRFWidget(WidgetView):
    """The RRF explainer: pick a question, move the RRF constant, the depth and k, see why fusing ``inputs``
    (the registered fusion's inputs unless named: hybrid's BM25 and vector) wins or loses. Starts where fusion hurts."""

    label = "RRF explainer"

    def __init__(self, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, inputs: Sequence[str] | None = None,
                 question: str | None = None, k: int = 3, rrf_k: int = 60, depth: int = 10):
        check_start(rrf_k, "rrf_k", range(0, RRF_K_MAX + 1))
        check_start(depth, "depth", range(1, DEPTH_MAX + 1))
        check_start(k, "k", range(1, 11))
        self.runs, self.qrels = check_runs(runs, qrels)
        self.inputs = _check_inputs(self.runs, inputs)
        if question is None:  # the first question where fusion hurts within the cut-off, not by a tie
            cases = fusion_cases(self.runs, self.qrels, self.inputs, rrf_k, depth)
            best = cases[self.inputs].min(axis=1)
            hurt = list(cases.index[cases["verdict"] == "hurts"])
            clear = [q for q in hurt if not pd.isna(best[q]) and best[q] <= k and not cases.loc[q, "tie"]]
            question = (clear or hurt or list(cases.index))[0]
        if question not in self.qrels:
            raise ValueError(f"question {question!r} is not in the qrels")
        texts = golden.set_index("id")["question"]
        self.question = w.Dropdown(options=[(f"{q} · {texts.get(q, '')}", q) for q in self.qrels], value=question,
                                   description="question", style={"description_width": "5em"},
                                   layout=w.Layout(flex="1 1 18em", width="auto", min_width="0"))
        self.rrf_k = w.IntSlider(value=rrf_k, min=0, max=RRF_K_MAX, description="RRF constant", continuous_update=False,
                                 style={"description_width": "7em"}, layout=w.Layout(width="19em"))
        self.depth = w.IntSlider(value=depth, min=1, max=DEPTH_MAX, description="depth (top n)", continuous_update=False,
                                 style={"description_width": "7em"}, layout=w.Layout(width="19em"))
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False,
                             style={"description_width": "5em"}, layout=w.Layout(width="16em"))
        self.full = w.ToggleButton(description="all candidates", layout=w.Layout(width="max-content"))
        self.full.observe(lambda change: (self.ui.add_class if change["new"] else self.ui.remove_class)("rw-full"), "value")
        self.metrics, self.sentence, self.fused = w.HTML(), w.HTML(), w.HTML()
        self.sentence.layout = w.Layout(flex="1 1 20em", min_width="0", margin="0 0 0 12px")
        self._add_classes("rrf", "question", "depth", "metrics", "sentence", "fused", "full", rrf_k="rrf-k",
                          k="rrf-cutoff")
        self.new_round = (self.question,)
        rows = [w.HBox([self.question], layout=w.Layout(width="100%")),
                w.HBox([self.rrf_k, self.depth, self.k], layout=w.Layout(flex_flow="row wrap")), self.reveal_row(self.full),
                w.HBox([self.metrics, self.sentence], layout=w.Layout(flex_flow="row wrap", width="100%")), self.fused]
        self._build("rrf-widget", rows, [self.question, self.rrf_k, self.depth, self.k])

    def _restore(self) -> None:
        self.full.value = False

    def _compute(self) -> dict:
        qid = self.question.value
        result = rrf_explanation({n: self.runs[n][qid] for n in self.inputs}, self.qrels[qid], self.rrf_k.value,
                                 self.depth.value, self.k.value)
        fused = result["metrics"].loc[FUSED]
        return result | {"values": {f"fused {short_name(m)}": fused[METRICS[m].at(self.k.value)] for m in shown_metrics()}}

    def _metrics_html(self, shown: bool) -> str:
        metrics = self.state["metrics"].rename(columns={"first relevant rank": "1st relevant"})
        metrics["1st relevant"] = ["–" if pd.isna(r) else str(r) for r in metrics["1st relevant"]]
        return table_html(metrics.T.rename_axis(None), shown)  # a row per metric: narrow, beside the sentence

    def _draw(self, shown: bool) -> None:
        self.metrics.value = self._metrics_html(shown)
        self.sentence.value = self.state["sentence"] if shown else (
            "<b>Predict:</b> which chunk does fusion put first, and at which rank does it put the first relevant "
            "chunk? Read each chunk's rank in the inputs below, then show the numbers.")
        self.fused.value = rrf_table_html(self.state, self.inputs, self.rrf_k.value, self.depth.value, shown)

    def static_html(self) -> str:
        settings = (f"<p><b>{escape(self.question.value)}</b>, RRF constant {self.rrf_k.value}, depth {self.depth.value}, "
                    f"cut-off k = {self.k.value}.</p>")
        hidden, shown = (rrf_table_html(self.state, self.inputs, self.rrf_k.value, self.depth.value, s, static=True)
                         for s in (False, True))
        return (settings + "<p><b>Predict:</b> which chunk does fusion put first, and at which rank the first relevant one? "
                "Read each chunk's rank in the inputs below.</p>" + hidden
                + details(self._metrics_html(True) + f"<p>{self.state['sentence']}</p>" + shown))


rrf_widget = RRFWidget
