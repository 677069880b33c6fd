"""The RRF explainer: why hybrid search wins or loses on one question. Pure functions, then the view."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import ipywidgets as w
import pandas as pd

from ..checks import check_ids, check_list, check_k, naming_question
from ..fusion import reciprocal_rank_fusion
from ..metrics import ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids
from ._view import (
    WidgetView, busy_sign, change_line, changes, check_start, num, reveal_details, scroll_panel, table_html,
)

FUSED = "hybrid"  # the name of the fused ranking, as in the notebooks' runs
RRF_K_MAX, DEPTH_MAX = 100, 20  # the sliders' ranges


def _first_relevant(ranking: Sequence[str], relevant: set) -> int | None:
    return next((rank for rank, chunk in enumerate(ranking, start=1) if chunk in relevant), None)


def rrf_explanation(rankings: Mapping[str, Sequence[str]], gains: Mapping[str, float], rrf_k: float = 60,
                    depth: int = 10, k: int = 3) -> dict:
    """Reciprocal rank fusion of two or more rankings of one question, term by term, with the metrics before and after.

    The fused ranking is :func:`reciprocal_rank_fusion` of the rankings (constant ``rrf_k``, top
    ``depth`` of each). For each chunk in it, the table gives its rank in each input (``None`` when
    the input does not rank it), the term 1 / (rrf_k + rank) that input adds (0 below ``depth``),
    their sum (the fused score) and its gain. Then recall@k, precision@k, RR@k and nDCG@k of each
    input and of the fused ranking, and a sentence on whether and why fusion helped: the rank of the
    first relevant chunk in the fused ranking against the best input's, and the chunks that
    outscored it, with their terms.

    Args:
        rankings: ``{retriever name: ranking}`` (at least two; rankings are lists of chunk ids, best first).
        gains: the question's judgements ``{chunk_id: gain}``; at least one gain above 0.
        rrf_k: the RRF constant, a number >= 0 (60 in Cormack et al.).
        depth: how many chunks from the top of each ranking take part, an integer >= 1.
        k: the cut-off of the metrics, an integer >= 1.

    Returns:
        A dict: ``fused`` (the fused ranking), ``table`` (a DataFrame indexed by fused rank: ``chunk``,
        ``<name> rank``, ``<name> term`` for each input, ``fused score``, ``gain``), ``metrics`` (a
        DataFrame indexed by the inputs and ``"hybrid"``: ``first relevant rank`` (no cut-off; ``<NA>``
        when none is ranked) and the four metrics at k), ``verdict`` (``"helps"``, ``"same"`` or
        ``"hurts"``: the fused first relevant rank against the best input's), ``tied`` (chunks fused above
        the first relevant one with an equal score, placed first by the tie rule: chunk id) and
        ``sentence`` (HTML).

    Raises:
        ValueError: fewer than two rankings, a name equal to ``"hybrid"``, no relevant chunk in
            ``gains``, or as :func:`reciprocal_rank_fusion` and the metric functions.

    Taught in: notebook 07_widgets (through rrf_widget).
    """
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
            row[f"{n} rank"] = rank
            row[f"{n} term"] = 1.0 / (rrf_k + rank) if rank is not None and rank <= depth else 0.0
        row["fused score"] = sum(row[f"{n} term"] for n in names)
        row["gain"] = gains.get(chunk, 0)
        rows.append(row)
    columns = ["chunk", *[f"{n} {c}" for n in names for c in ("rank", "term")], "fused score", "gain"]
    table = pd.DataFrame(rows, columns=columns, index=pd.RangeIndex(1, len(fused) + 1, name="fused rank"))
    table = table.astype({f"{n} rank": "Int64" for n in names})

    everything = {**{n: list(rankings[n]) for n in names}, FUSED: fused}
    metrics = pd.DataFrame(
        {
            "first relevant rank": [_first_relevant(r, relevant) for r in everything.values()],
            f"recall@{k}": [recall_at_k(r, relevant, k) for r in everything.values()],
            f"precision@{k}": [precision_at_k(r, relevant, k) for r in everything.values()],
            f"RR@{k}": [reciprocal_rank(r, relevant, k) for r in everything.values()],
            f"nDCG@{k}": [ndcg_at_k(r, gains, k) for r in everything.values()],
        },
        index=pd.Index(list(everything), name="ranking"),
    ).astype({"first relevant rank": "Int64"})
    verdict, sentence, tied = _explain(names, table, metrics, depth, positions)
    return {"fused": fused, "table": table, "metrics": metrics, "verdict": verdict, "tied": tied, "sentence": sentence}


def _rank_text(rank: int | None) -> str:
    return "not ranked" if rank is None or pd.isna(rank) else f"rank {int(rank)}"


def _explain(names, table, metrics, depth, positions) -> tuple[str, str, list]:
    """The verdict, the sentence and the tied chunks of :func:`rrf_explanation`."""
    first = {n: None if pd.isna(r) else int(r) for n, r in metrics["first relevant rank"].items()}
    inputs = {n: first[n] for n in names}
    found = {n: r for n, r in inputs.items() if r is not None}
    fused_rank = first[FUSED]
    best = min(found, key=found.get) if found else None
    best_rank = found.get(best)
    if fused_rank is None:
        verdict = "same" if best_rank is None else "hurts"
        where = ", ".join(f"{n}: {_rank_text(r)}" for n, r in inputs.items())
        return verdict, (
            f"No relevant chunk is in the top {depth} of any input ({where}), so the fused ranking, "
            f"built from the top {depth} of each, has none: fusion cannot find what no input found"
            + (f" that high. A greater depth would bring in {best}'s rank {best_rank}." if best is not None else ".")
        ), []
    verdict = "helps" if fused_rank < best_rank else "same" if fused_rank == best_rank else "hurts"
    chunk = table.loc[fused_rank, "chunk"]
    terms = " + ".join(num(table.loc[fused_rank, f"{n} term"], 4) for n in names)
    parts = ", ".join(f"{n} {_rank_text(positions[n].get(chunk))}" for n in names)
    placed = f"hybrid puts the first relevant chunk at rank {fused_rank}"
    head = {
        "helps": f"<b>Fusion helps</b>: {placed}, above the best input ({best}, rank {best_rank}).",
        "same": f"<b>Fusion keeps</b> the best input's place: rank {fused_rank}, as {best}.",
        "hurts": f"<b>Fusion hurts</b>: {placed}, below {best}'s rank {best_rank}.",
    }[verdict]
    why = (f" <code>{html.escape(chunk)}</code> ({parts}) scores {terms} = "
           f"<b>{num(table.loc[fused_rank, 'fused score'], 4)}</b>.")
    above = table.loc[: fused_rank - 1]
    score = table.loc[fused_rank, "fused score"]
    tied = [row["chunk"] for _, row in above.iterrows() if math.isclose(row["fused score"], score, rel_tol=1e-12)]
    if len(above):
        shown = above.head(2)
        beaten = "; ".join(
            f"<code>{html.escape(row['chunk'])}</code> ("
            + ", ".join(f"{n} {_rank_text(row[f'{n} rank'])}" for n in names)
            + f") {num(row['fused score'], 4)}"
            for _, row in shown.iterrows()
        )
        more = f" and {len(above) - len(shown)} more" if len(above) > len(shown) else ""
        both = sum(all(row[f"{n} term"] > 0 for n in names) for _, row in above.iterrows())
        why += f" Above it: {beaten}{more}"
        if len(above) == 1:
            why += ", which gets a term from every list." if both else ", which gets a term from one list only."
        else:
            why += f": {both} of these {len(above)} get a term from every list, {len(above) - both} from one only."
        if tied:
            why += (f" {', '.join(f'<code>{html.escape(c)}</code>' for c in tied)} ties with it on score; "
                    "ties go by chunk id, so it comes first.")
    return verdict, head + why, tied


def fusion_cases(runs: Mapping[str, Mapping[str, Sequence[str]]], qrels: Mapping, inputs: Sequence[str] = ("BM25", "vector"),
                 rrf_k: float = 60, depth: int = 10) -> pd.DataFrame:
    """For every question: the first relevant rank in each input and after fusion, and whether fusion helped.

    Args:
        runs: ``{retriever name: {question_id: ranking}}`` holding the inputs.
        qrels: ``{question_id: {chunk_id: gain}}``; every question in it is fused.
        inputs: the names of the runs to fuse (two or more).
        rrf_k, depth: as for :func:`rrf_explanation`.

    Returns:
        A DataFrame indexed by question id: one column per input and ``"hybrid"`` (first relevant
        rank, ``<NA>`` when none is ranked), ``verdict`` and ``tie`` (a tied chunk is fused above the
        first relevant one), as :func:`rrf_explanation`.

    Raises:
        ValueError: ``inputs`` is not a list of names of ``runs``, a question id is not a str, or as
            :func:`rrf_explanation`, naming the question.

    Taught in: notebook 07_widgets.
    """
    inputs = _check_inputs(runs, qrels, inputs)
    rows = {}
    for qid, gains in qrels.items():
        with naming_question(qid):
            result = rrf_explanation({n: runs[n][qid] for n in inputs}, gains, rrf_k, depth, k=1)
        rows[qid] = {**result["metrics"]["first relevant rank"].to_dict(), "verdict": result["verdict"],
                     "tie": bool(result["tied"])}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("question")
    return table.astype({name: "Int64" for name in [*inputs, FUSED]})


def _check_inputs(runs: Mapping, qrels: Mapping, inputs: Sequence[str]) -> list[str]:
    """``inputs`` as a list of names of ``runs``, after the str-id check of the qrels and those runs."""
    inputs = check_list(inputs, "inputs", "retriever names (keys of runs)")
    unknown = [name for name in inputs if name not in runs]
    if unknown:
        raise ValueError(f"inputs {unknown} are not runs (the runs are {list(runs)})")
    check_ids(qrels, "the qrels hold question id")
    for name in inputs:
        check_ids(runs[name], f"{name} holds question id")
    return inputs


def rrf_table_html(result: Mapping, names: Sequence[str], rrf_k: float, depth: int) -> str:
    """The fused table of an :func:`rrf_explanation` as HTML: relevant chunks marked, terms and scores hidden until revealed.

    Args:
        result: an :func:`rrf_explanation` result.
        names: the inputs' names, in the order of its table's columns.
        rrf_k: the RRF constant, for the column heads.
        depth: the depth, to mark ranks below it.

    Not taught; used by rrf_widget (notebook 07_widgets).
    """
    table = result["table"]
    head = ["fused rank", "chunk"]
    for n in names:
        head += [f"{n} rank", f"{n} 1/({rrf_k:g} + rank)"]
    head.append("fused score")
    rows = []
    for fused_rank, row in table.iterrows():
        cells = [f"<td>{fused_rank}</td>", f"<td class='rw-left'><code>{html.escape(row['chunk'])}</code>"
                 + (" <span style='background:#1b7837;color:#fff;padding:0 4px'>relevant</span>" if row["gain"] > 0 else "")
                 + "</td>"]
        for n in names:
            rank = row[f"{n} rank"]
            if pd.isna(rank):
                rank_text = "–"
            else:
                rank_text = f"{int(rank)}" + (" (below depth)" if rank > depth else "")
            cells += [f"<td>{rank_text}</td>", f"<td>{num(row[f'{n} term'], 4)}</td>"]
        cells.append(f"<td><b>{num(row['fused score'], 4)}</b></td>")
        marker = " style='background:#e3f4e1'" if row["gain"] > 0 else ""
        rows.append(f"<tr{marker}>" + "".join(cells) + "</tr>")
    header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return f"<table class='rw-table'><tr>{header}</tr>{''.join(rows)}</table>"


class RRFWidget(WidgetView):
    """The RRF explainer; build it with :func:`rrf_widget`.

    Controls: ``question`` (Dropdown), ``rrf_k`` (the RRF constant), ``depth`` and ``k`` (IntSliders),
    ``reveal`` and ``reset_control``. Shown: ``metrics_html``, ``sentence`` and ``fused_html`` (HTML).
    ``result`` holds the current :func:`rrf_explanation`.

    Taught in: notebook 07_widgets (through rrf_widget).
    """

    label = "RRF explainer"

    def __init__(self, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, inputs: Sequence[str] = ("BM25", "vector"),
                 question: str | None = None, k: int = 3, rrf_k: int = 60, depth: int = 10):
        check_start(rrf_k, "rrf_k", range(0, RRF_K_MAX + 1))
        check_start(depth, "depth", range(1, DEPTH_MAX + 1))
        check_start(k, "k", range(1, 11))

        inputs = _check_inputs(runs, qrels, inputs)
        self.runs, self.qrels, self.inputs = runs, qrels, inputs
        questions = golden.set_index("id")["question"]
        if question is None:  # the first question where fusion hurts within the cut-off, not by a tie
            cases = fusion_cases(runs, qrels, inputs, rrf_k, depth)
            best = cases[list(inputs)].min(axis=1)  # the better input's first relevant rank (NA: none ranked)
            hurt = list(cases.index[cases["verdict"] == "hurts"])
            clear = [q for q in hurt if not pd.isna(best[q]) and best[q] <= k and not cases.loc[q, "tie"]]
            question = (clear or hurt or list(cases.index))[0]
        if question not in qrels:
            raise ValueError(f"question {question!r} is not in the qrels")
        self.start, self.previous = (question, rrf_k, depth, k), None
        self.question = w.Dropdown(options=[(f"{q} · {questions[q]}", q) for q in qrels], value=question,
                                   description="question", style={"description_width": "75px"},
                                   layout=w.Layout(flex="1 1 auto", width="auto", min_width="0"))
        self.rrf_k = w.IntSlider(value=rrf_k, min=0, max=RRF_K_MAX, description="RRF constant", continuous_update=False,
                                 style={"description_width": "125px"}, layout=w.Layout(width="360px"))
        self.depth = w.IntSlider(value=depth, min=1, max=DEPTH_MAX, description="depth (top n)", continuous_update=False,
                                 style={"description_width": "120px"}, layout=w.Layout(width="330px"))
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False,
                             style={"description_width": "75px"}, layout=w.Layout(width="270px"))
        self.reveal, self.reset_control = self.reveal_toggle(), self.reset_button()
        self.metrics_html, self.sentence, self.fused_html = w.HTML(), w.HTML(), w.HTML()
        for widget, name in ((self.question, "rrf-question"), (self.rrf_k, "rrf-k"), (self.depth, "rrf-depth"),
                             (self.k, "rrf-cutoff"), (self.metrics_html, "rrf-metrics"), (self.sentence, "rrf-sentence"),
                             (self.fused_html, "rrf-fused")):
            widget.add_class(name)  # CSS classes: handles for the browser test and the benchmark
        self.sentence.add_class("rw-sentence")
        self.sentence.layout = w.Layout(flex="1 1 300px", min_width="300px", min_height="6.8em", margin="0 0 0 12px")
        for control in (self.question, self.rrf_k, self.depth, self.k):
            control.observe(self._update, names="value")
        self.ui = self._root([
            w.HBox([self.question], layout=w.Layout(width="100%")),
            w.HBox([self.rrf_k, self.depth, self.k], layout=w.Layout(flex_flow="row wrap")),
            w.HBox([self.reveal, self.reset_control, busy_sign()]),
            w.HBox([self.metrics_html, self.sentence], layout=w.Layout(flex_flow="row wrap")),
            scroll_panel(self.fused_html, 230),
        ], "rrf-widget")
        self._update()

    def _restore_start(self) -> None:
        """The starting question, RRF constant, depth and cut-off; numbers hidden."""
        self.question.value, self.rrf_k.value, self.depth.value, self.k.value = self.start
        self.reveal.value = False

    def _update(self, change=None) -> None:
        if self._resetting:
            return
        if change is not None and change["owner"] is self.question:
            self.previous = None  # another question: nothing to compare with
        qid = self.question.value
        with self.busy():
            self.result = rrf_explanation({n: self.runs[n][qid] for n in self.inputs}, self.qrels[qid],
                                          self.rrf_k.value, self.depth.value, self.k.value)
            metrics = self.result["metrics"]
            values = {f"hybrid {c}": metrics.loc[FUSED, c] for c in metrics.columns[1:]}
            marked = changes(self.previous, values)
            self.previous = values
            self.metrics_html.value = self._metrics_html()
            self.sentence.value = change_line(marked) + self.result["sentence"]
            self.fused_html.value = rrf_table_html(self.result, self.inputs, self.rrf_k.value, self.depth.value)

    def _metrics_html(self) -> str:
        metrics = self.result["metrics"].copy()
        metrics["first relevant rank"] = ["–" if pd.isna(r) else str(r) for r in metrics["first relevant rank"]]
        return table_html(metrics.rename(columns={"first relevant rank": "1st relevant"}), highlight=[FUSED])

    def static_html(self) -> str:
        """The static copy: the question and settings, then the metrics, the sentence and the fused table
        folded until clicked.

        Not taught; used by rrf_widget (notebook 07_widgets).
        """
        return (f"<p><b>{html.escape(self.question.value)}</b>, RRF constant {self.rrf_k.value}, depth "
                f"{self.depth.value}, cut-off k = {self.k.value}.</p>"
                + reveal_details(self._metrics_html() + f"<p>{self.result['sentence']}</p>"
                                 + rrf_table_html(self.result, self.inputs, self.rrf_k.value, self.depth.value)))


def rrf_widget(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, inputs: Sequence[str] = ("BM25", "vector"),
               question: str | None = None, k: int = 3, rrf_k: int = 60, depth: int = 10) -> RRFWidget:
    """The RRF explainer: pick a question, move the RRF constant and the depth, see why hybrid wins or loses.

    For each chunk in the top ``depth`` of either input: its rank in each, the two terms
    1 / (RRF constant + rank), the fused score and the fused order, the relevant chunk marked; the
    four metrics at the cut-off k for each input and for the fused ranking; a sentence on why (see
    :func:`rrf_explanation`). At the defaults (60, 10) the fused ranking is the notebooks' hybrid run.

    Args:
        runs: ``{retriever name: {question_id: ranking}}`` holding the inputs.
        qrels: ``{question_id: {chunk_id: gain}}``.
        golden: the golden set (for the question texts).
        inputs: the two (or more) runs to fuse.
        question: the question shown first; ``None`` for the first one where fusion hurts.
        k, rrf_k, depth: the starting cut-off, RRF constant and depth.

    Returns:
        An :class:`RRFWidget`; display it to show the widget, with its static copy in the same output.

    Raises:
        ValueError: k is not 1 to 10, ``rrf_k`` not 0 to 100 or ``depth`` not 1 to 20 (the sliders'
            ranges: refused, not moved), ``inputs`` are not names of ``runs``, ``question`` is not in
            the qrels, or as :func:`rrf_explanation` and :func:`fusion_cases`.

    Taught in: notebook 07_widgets.
    """
    return RRFWidget(runs, qrels, golden, inputs, question, k, rrf_k, depth)
