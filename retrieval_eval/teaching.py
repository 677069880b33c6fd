"""Teaching aids for the notebooks: pictures of rankings and of the discount, random cases for a
reader's own metric code, the evidence highlight, the interview lines, the teacher's key and the
check-yourself checker."""

from __future__ import annotations

import ast
import html
import json
import math
import numbers
import operator
import platform
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch, Rectangle

from .checks import check_gains, check_list, check_k, check_ranking
from .evaluation import evaluate, first_relevant_ranks, precision_ceiling
from .metrics import METRICS, relevant_ids
from .models import SCORING_PACKAGES, scoring_versions
from .paths import ROOT
from .text import locate_evidence


# The packages behind the numbers besides those that score (models.SCORING_PACKAGES): the tables
# (pandas), the chunks (langchain-text-splitters) and the statistics (scipy, statsmodels).
TABLE_PACKAGES = ("pandas", "langchain-text-splitters", "scipy", "statsmodels")


def print_versions() -> None:
    """One line: Python and the versions of the packages the numbers depend on ("-" where one is not installed)."""
    versions = scoring_versions((*SCORING_PACKAGES, *TABLE_PACKAGES), missing="-")
    print(f"Python {platform.python_version()}; " + ", ".join(f"{p} {v}" for p, v in versions.items()))


def course_map(folder=None, markdown: bool = False, link: str = ""):
    """One row per notebook from its ``"course"`` metadata (path, minutes, answers), core first; the
    notebook as a Markdown link with ``link`` before its file name. ``markdown``: the text of a Markdown table."""
    rows = []
    for path in sorted(Path(folder or ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        course = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("course")
        if not course:
            raise ValueError(f"{path.name} has no course metadata (path, minutes, answers)")
        rows.append({"notebook": f"[{path.stem}]({link}{path.name})", "path": course["path"], "minutes": course["minutes"],
                     "answers": course["answers"]})
    table = pd.DataFrame(rows).sort_values("path", key=lambda p: p != "core", kind="stable").reset_index(drop=True)
    return markdown_table(table) if markdown else table


def markdown_table(table) -> str:
    """The text of a Markdown table of a DataFrame's columns (its index left out; "|" in a cell escaped)."""
    def cell(value) -> str:
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(cell, row)) + " |" for row in table.itertuples(index=False)])


def interview_lines(setup, k: int = 3) -> dict[str, str]:
    """The interview answers (notebook 07, the sheet): at most 30 words each, every figure from ``setup``,
    whose runs must hold BM25, vector and hybrid. The reranker's figures come from the run "hybrid + rerank"
    when there is one, else hybrid's top 10 are reranked here by the SentenceReranker."""
    from .comparisons import against_chance, paired_comparisons
    from .golden import graded_labels
    from .rerank import SentenceReranker, rerank
    runs, qrels, golden, chunks = setup.runs, setup.qrels, setup.golden, setup.chunks
    missing = [name for name in ("BM25", "vector", "hybrid") if name not in runs]
    if missing:
        raise ValueError(f"interview_lines needs the runs BM25, vector and hybrid; the setup has no {missing}")
    k = check_k(k)
    three = {name: runs[name] for name in ("BM25", "vector", "hybrid")}
    reranked = runs.get("hybrid + rerank") or rerank(runs["hybrid"], SentenceReranker(), {c["id"]: c["text"] for c in chunks},
                                                     dict(zip(golden["id"], golden["question"])), 10)
    table = evaluate(three, qrels, ks=[1, k, 10]).loc["hybrid"]
    after = evaluate({"hybrid + rerank": reranked}, qrels, ks=[1, k]).iloc[0]
    found = int((first_relevant_ranks({"hybrid": runs["hybrid"]}, qrels)["hybrid"].fillna(k + 1) <= k).sum())
    graded = evaluate({"hybrid": runs["hybrid"]}, graded_labels(golden, chunks), ks=[k]).iloc[0]
    single, n = sum(len(relevant_ids(g)) == 1 for g in qrels.values()), len(qrels)
    pair = paired_comparisons(three, qrels, k=k).loc[("BM25 − hybrid", "recall")]
    chance = against_chance(three, qrels, len(setup.chunk_ids), k)
    lines = {
        "Which metric do you read first?": f"Recall at the k my LLM reads: hybrid's recall@{k} is "
            f"{table[('recall', k)]:.2f}, a relevant chunk in the top {k} for {found} of {n} questions.",
        "Why is your precision so low?": f"{single} of {n} questions have one relevant chunk, so precision@{k} "
            f"cannot pass {precision_ceiling(qrels, k):.2f}. Ours is {table[('precision', k)]:.2f}.",
        "MRR or recall?": f"Recall says the evidence arrived; MRR says how high. Hybrid's MRR@{k} is "
            f"{table[('MRR', k)]:.2f}, its recall@{k} {table[('recall', k)]:.2f}.",
        "When do you use nDCG?": f"When some chunks answer better than others. With graded labels, hybrid's nDCG@{k} is "
            f"{graded[('nDCG', k)]:.2f}; the ideal holds every judged chunk.",
        "How did you label relevance?": f"A chunk is relevant if it contains the question's evidence string, copied "
            f"from the corpus: automatic and strict. {single} of {n} questions have one relevant chunk.",
        "How would you evaluate a reranker?": f"Same candidates before and after, beside an oracle. Our stand-in "
            f"moved recall@{k} {table[('recall', k)]:.2f} to {after[('recall', k)]:.2f}, recall@1 "
            f"{table[('recall', 1)]:.2f} to {after[('recall', 1)]:.2f}; recall@10, {table[('recall', 10)]:.2f}, caps it.",
        "Is your improvement real?": f"I compare question by question. Hybrid beats BM25 on {pair['losses']} "
            f"questions and loses {pair['wins']} of {n}: {pair['verdict']}. "
            + ("Both beat random clearly." if (chance.loc[["BM25", "hybrid"], "p"] < 0.001).all() else ""),
    }
    too_long = {q: len(a.split()) for q, a in lines.items() if len(a.split()) > 30}
    if too_long:
        raise ValueError(f"interview lines over 30 words: {too_long}")
    return lines


def teacher_key(setup, k: int = 3):
    """The expected value of every guided step of the core notebooks' widgets, got by driving the widgets
    (clicks, sliders) from the notebooks' starts. One row per step: notebook, step, what to ask, expected."""
    from .widgets.ceiling import CeilingWidget
    from .widgets.depth import DepthWidget
    from .widgets.playground import PlaygroundWidget
    from .widgets.rank_slider import RankSliderWidget, rank_slider_scores
    from .widgets.rrf import FUSED, RRFWidget
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
    toy.k.value = 6
    step("01", "reset, then k = 6: recall@6", f"{toy.state['values']['recall']:.3f}")
    toy = PlaygroundWidget([0, 0, 1, 1, 0], k=k, metrics=["recall", "precision"], max_gain=1)  # 02: c1 and c9 at 3 and 4
    toy.k.value = 5
    step("02", "precision@5 (k to 5)", f"{toy.state['values']['precision']:.3f}")
    step("02", "ranks 1 and 2 marked relevant too: precision@5", f"{clicks(toy, 1, 2)['precision']:.3f}")
    best = precision_ceiling({"toy": {f"r{i}": 1 for i in range(4)}}, 5)
    step("02", "the most precision@5 can reach with those 4 relevant chunks", f"{best:.3f}")
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


def evidence_html(text: str, evidence: str, max_chars: int | None = None) -> str:
    """A chunk's text as escaped HTML with the evidence string in ``<mark>``; ``max_chars`` keeps about
    that many characters around the evidence."""
    span = locate_evidence(text, evidence)
    if span is None:
        return f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"
    start, end = span
    before, after = text[:start], text[end:]
    if max_chars is not None:
        room = max(0, (max_chars - (end - start)) // 2)
        if len(before) > room:
            before = "…" + before[len(before) - room :]
        if len(after) > room:
            after = after[:room] + "…"
    marked = f"{html.escape(before)}<mark>{html.escape(text[start:end])}</mark>{html.escape(after)}"
    return f"<pre style='white-space:pre-wrap'>{marked}</pre>"


DISPLAY_INCHES = 9  # a notebook shows a figure at most about 900 px (9 inches at 100 dpi) wide, else shrinks it


def _split_id(doc_id: str, room: int) -> str:
    """An id longer than ``room`` characters on two lines, split after the "_" nearest its middle."""
    if len(doc_id) <= room:
        return doc_id
    cuts = [i + 1 for i, c in enumerate(doc_id) if c == "_" and max(i + 1, len(doc_id) - i - 1) <= room]
    if not cuts:
        return doc_id
    cut = min(cuts, key=lambda i: abs(2 * i - len(doc_id)))
    return doc_id[:cut] + "\n" + doc_id[cut:]


def _gain_colour(gain: float, graded: bool) -> str:
    """Light grey not relevant; light green gain 1 of graded labels (answers partly), else dark green."""
    if gain <= 0:
        return "#f4f4f4"
    return "#a6dba0" if graded and gain < 2 else "#1b7837"


def plot_rankings(rankings: Mapping[str, Sequence[str]], gains: Mapping[str, float], k: int | None = None,
                  max_rank: int = 10, show: Sequence[str] = (), title: str | None = None):
    """Rankings as result lists side by side (rank 1 on top), relevant chunks coloured, the cut-off k marked. ``gains``:
    one question's ``{id: gain}``, or ``{column title: {id: gain}}``; gains above 1 get a second colour. A relevant
    chunk below ``max_rank`` or not retrieved is named under its column, so no miss is invisible. ``show`` names metrics
    printed under each column at k ("MRR" prints RR@k)."""
    if not isinstance(rankings, Mapping) or not rankings:
        raise ValueError("rankings must be a non-empty {title: ranking} mapping")
    columns = {label: check_ranking(ranked) for label, ranked in rankings.items()}
    max_rank = check_k(max_rank, "max_rank")
    k = None if k is None else check_k(k)
    show = check_list(show, "show", "metric names")
    unknown = [m for m in show if m not in METRICS]
    if unknown:
        raise ValueError(f"show names unknown metric(s) {unknown}; choose from {list(METRICS)}")
    if show and k is None:
        raise ValueError("show needs a cut-off k")
    per_column = bool(gains) and all(isinstance(g, Mapping) for g in gains.values())
    if per_column and set(gains) != set(columns):
        raise ValueError(f"gains per column must name the columns {list(columns)}, not {list(gains)}")
    judged = {label: check_gains(gains[label] if per_column else gains) for label in columns}
    relevant = {label: [d for d, g in judged[label].items() if g > 0] for label in columns}
    graded = any(g > 1 for each in judged.values() for g in each.values())

    width, gap = 1.0, 0.12
    # Ids too long for a figure DISPLAY_INCHES wide at 10 pt go on two lines, split after a "_".
    room = max(16, int(((DISPLAY_INCHES - 0.9) / (len(columns) * (width + gap) + 0.45) - 0.3) / 0.08))
    shown = {str(d): _split_id(str(d), room) for ranked in columns.values() for d in ranked[:max_rank]}
    longest = max([len(line) for text in shown.values() for line in text.split("\n")]
                  + [len(str(d)) + 2 for ids in relevant.values() for d in ids if str(d) not in shown] + [0])  # a note indents 2
    column_inches = max(1.6, 0.3 + 0.08 * min(longest, room))  # room for the longest line at 10 pt
    row = 0.62 if any("\n" in text for text in shown.values()) else 0.4  # inches per rank
    notes = {}
    for label, ranked in columns.items():
        lines = []
        for doc_id in relevant[label]:
            if doc_id not in ranked:
                lines.append(("not retrieved:", doc_id))
            elif ranked.index(doc_id) >= max_rank:
                lines.append((f"rank {ranked.index(doc_id) + 1}:", doc_id))
        # a note too long for its column goes on two lines
        fits = (column_inches - 0.2) / 0.08  # characters at 10 pt
        lines = [[f"{a} {b}"] if len(a) + 1 + len(b) <= fits else [a] + [f"  {part}" for part in _split_id(b, int(fits) - 2).split("\n")]
                 for a, b in lines]
        notes[label] = sum(lines, []) + [f"{'RR' if m == 'MRR' else m}@{k} = {METRICS[m].score(ranked, judged[label], k):.3f}"
                                         for m in show]
    n_notes = max(len(lines) for lines in notes.values())
    note_step = 0.5 * 0.4 / row  # one note line is 0.2 inches, whatever the row height

    fig_width = max(5.5, 0.9 + column_inches * (len(columns) * (width + gap) + 0.45))
    fig, ax = plt.subplots(figsize=(fig_width, 1.0 + row * max_rank + 0.2 * n_notes))
    for j, (label, ranked) in enumerate(columns.items()):
        x0 = j * (width + gap)
        ax.text(x0 + width / 2, 0.25, label, ha="center", va="bottom", fontsize=11, weight="bold")
        for rank in range(1, max_rank + 1):
            y = -rank
            doc_id = ranked[rank - 1] if rank <= len(ranked) else None
            gain = judged[label].get(doc_id, 0) if doc_id is not None else 0
            face = _gain_colour(gain, graded) if doc_id is not None else "white"
            ax.add_patch(Rectangle((x0, y + 0.08), width, 0.84, facecolor=face, edgecolor="#999999", lw=0.8))
            dark = gain > 0 and (not graded or gain >= 2)
            ax.text(x0 + 0.03, y + 0.5, shown[str(doc_id)] if doc_id is not None else "(empty)", va="center",
                    fontsize=10, linespacing=1.1, color="white" if dark else ("#999999" if doc_id is None else "black"))
        for i, line in enumerate(notes[label]):
            ax.text(x0 + 0.03, -max_rank - 0.55 * 0.4 / row - note_step * i, line, va="center", fontsize=10)
    right = len(columns) * (width + gap) - gap
    if k is not None and k <= max_rank:
        ax.plot([-0.02, right + 0.02], [-k + 0.04, -k + 0.04], color="#d6604d", lw=2.2)
        ax.text(right + 0.04, -k + 0.04, f"cut-off\nk = {k}", color="#d6604d", va="center", fontsize=10)
    ax.set_yticks([-r + 0.5 for r in range(1, max_rank + 1)], labels=[str(r) for r in range(1, max_rank + 1)])
    ax.set(ylabel="rank", xticks=[], xlim=(-0.05, right + 0.4),
           ylim=(-max_rank - 0.3 * 0.4 / row - note_step * n_notes, 0.8))
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=_gain_colour(2, False), label="relevant")] if not graded else [
        Patch(facecolor=_gain_colour(2, True), label="gain 2 (answers fully)"),
        Patch(facecolor=_gain_colour(1, True), label="gain 1 (answers partly)"),
    ]
    handles.append(Patch(facecolor=_gain_colour(0, graded), edgecolor="#999999", label="not relevant"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(handles),
              fontsize=10, frameon=False)
    if title:
        ax.set_title(textwrap.fill(title, int(fig_width * 10)), pad=24, fontsize=11.5)
    fig.tight_layout()
    return fig


def plot_discount(max_rank: int = 10, k: int | None = None, title: str | None = None):
    """nDCG's discount 1/log2(rank + 1) beside reciprocal rank's 1/rank; ranks below ``k`` shaded.

    The discount is Burges et al. 2005's, as trec_eval uses (Järvelin & Kekäläinen 2002 discount by log_b(rank)
    only from rank b on)."""
    max_rank = check_k(max_rank, "max_rank")
    k = None if k is None else check_k(k)
    ranks = np.arange(1, max_rank + 1)
    discount = 1 / np.log2(ranks + 1)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(ranks, discount, "o-", color="#1b7837", label="nDCG discount 1/log2(rank + 1)")
    ax.plot(ranks, 1 / ranks, "s--", color="#762a83", label="reciprocal rank 1/rank")
    for r, d in zip(ranks[:5], discount[:5]):
        ax.annotate(f"{d:.2f}", (r, d), textcoords="offset points", xytext=(4, 6), fontsize=10, color="#1b7837")
    if k is not None and k < max_rank:
        ax.axvspan(k + 0.5, max_rank + 0.5, color="grey", alpha=0.15, lw=0, label=f"below cut-off k = {k}: counts 0 in nDCG@{k}")
    ax.set(xticks=ranks, xlim=(0.5, max_rank + 0.5), ylim=(0, 1.08), xlabel="rank", ylabel="weight of a relevant item")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=10)
    if title:
        ax.set_title(title, fontsize=11.5)
    fig.tight_layout()
    return fig


def random_cases(n: int = 1000, seed: int = 0, n_ids: int = 12, max_gain: int = 1) -> list[tuple[list[str], dict, int]]:
    """``n`` random ``(ranking, gains, k)`` cases to compare a reader's metric with this package's: rankings
    of 0 to ``n_ids`` ids (empty or shorter than k sometimes), 1 to 4 judged ids with gains 1 to ``max_gain``
    (some never retrieved), k from 1 to ``n_ids + 3``. The same seed gives the same cases."""
    n, max_gain = check_k(n, "n"), check_k(max_gain, "max_gain")
    if check_k(n_ids, "n_ids") < 4:
        raise ValueError(f"n_ids must be >= 4, got {n_ids}")
    rng = np.random.default_rng(seed)
    ids = [f"d{i:02d}" for i in range(n_ids)]
    cases = []
    for _ in range(n):
        ranking = [str(d) for d in rng.permutation(ids)[: rng.integers(0, n_ids + 1)]]
        judged = rng.choice(ids, size=rng.integers(1, 5), replace=False)
        gains = {str(d): int(rng.integers(1, max_gain + 1)) for d in judged}
        cases.append((ranking, gains, int(rng.integers(1, n_ids + 4))))
    return cases


# --- the check-yourself checker ----------------------------------------------------------------
# Reads answers the way a learner types them and always answers with one friendly line per question.

_TRUE_WORDS, _FALSE_WORDS = {"true", "yes", "y", "t", "1"}, {"false", "no", "n", "f", "0"}
_EXPECTED = {
    "number": "a number (like 0.25, 1/4 or 25%)",
    "bool": "True or False (yes / no also work)",
    "text": "a word or short text in quotes",
}
RETRIEVERS = ("BM25", "vector", "hybrid")  # the series' three, as a text answer may name them
_ARTICLES = {"the", "a", "an"}  # "the vector retriever" is "vector retriever"
_RETRIEVER_ALIASES = {"rrf": "hybrid"}  # the series names hybrid search "hybrid search (RRF)" (notebooks 05, 06)
_NEGATIONS = {"not", "no", "never", "neither", "nor", "none", "nothing"}  # "not hybrid" names no option
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: operator.pow}
_MAX_BITS = 4000  # a calculation's numbers stay below 2**4000, so no typed power takes ages
_CALCULATION_NOTE = " (type the result, not the calculation: only numbers and + - * / ** are worked out)"


@dataclass(frozen=True)
class Answer:
    """What a check-yourself question expects when a plain solution value is not enough. ``value`` may be a set of
    texts, any one right (tied leaders from ``rank_groups``); ``kind`` defaults from its type; a number is right within
    half a unit of ``decimals`` unless ``tolerance`` is given; ``hint`` must not give it away. ``options``: a text
    question's choices (the solution is one; naming exactly one counts); a retriever name gets the retrievers."""

    value: object
    kind: str | None = None
    decimals: int = 2
    tolerance: float | None = None
    hint: str = ""
    accept: tuple[str, ...] = ()
    options: tuple[str, ...] = ()

    def __post_init__(self):
        if isinstance(self.value, (set, frozenset)):  # any one of these texts is right (e.g. tied leaders)
            first, *others = sorted(self.value)
            object.__setattr__(self, "value", first)
            object.__setattr__(self, "accept", (*others, *self.accept))
            object.__setattr__(self, "kind", self.kind or "text")
        if self.kind is None:
            value = _unwrap(self.value)
            kind = "bool" if isinstance(value, bool) else "text" if isinstance(value, str) else "number"
            object.__setattr__(self, "kind", kind)
        if self.kind not in _EXPECTED:
            raise ValueError(f"kind must be 'number', 'bool' or 'text', not {self.kind!r}")
        if self.kind == "number" and _as_number(self.value) is None:
            raise ValueError(f"the solution {self.value!r} is not a number")
        if self.kind != "text":
            return
        retrievers = {_as_text(name) for name in RETRIEVERS}
        if not self.options and {_as_text(t) for t in (self.value, *self.accept)} <= retrievers:
            object.__setattr__(self, "options", RETRIEVERS)
        if self.options and _as_text(self.value) not in {_as_text(o) for o in self.options}:
            raise ValueError(f"the solution {self.value!r} is not one of the options {list(self.options)}")


@dataclass(frozen=True)
class Verdict:
    """One question's result: ``status`` is right, wrong, unreadable (not the kind of answer asked for),
    unanswered or unknown (no such question); ``message`` is the line printed."""

    question: str
    status: str
    message: str


@dataclass(frozen=True, repr=False)
class Report:
    """One :class:`Verdict` per question, in the solutions' order; shown as "1 of 3 right, 2 not answered yet"."""

    verdicts: dict[str, Verdict]

    def count(self, status: str) -> int:
        return sum(v.status == status for v in self.verdicts.values())

    def __repr__(self) -> str:
        asked = len(self.verdicts) - self.count("unknown")
        blank = self.count("unanswered")
        return f"{self.count('right')} of {asked} right" + (f", {blank} not answered yet" if blank else "")


def check_answers(answers: Mapping[object, object], solutions: Mapping[object, object], *,
                  show: Callable[[str], object] = print) -> Report:
    """Check a reader's "check yourself" answers, one line each via ``show``: a wrong one gets "not yet", a note and
    the hint, never the solution; nothing typed raises. Numbers (``0.33``, ``"1/3"``, ``"33%"``, arithmetic, ``^`` as
    ``**``) are right within half a unit of the decimals asked; ``"yes"`` is True; text ignores case, spaces, quotes,
    ``_``, ``-``, a final stop, articles. None, ``...``, blank: unanswered. A bad :class:`Answer` raises ValueError."""
    specs = {str(q): s if isinstance(s, Answer) else Answer(s) for q, s in solutions.items()}
    if not isinstance(answers, Mapping):
        what = "None" if answers is None else f"a {type(answers).__name__}"
        line = ("the answers must be a dict with one entry per question, like {\"1\": 0.25, \"2\": \"yes\"}, "
                f"not {what}: fill in the answers cell and run it again")
        show(line)
        return Report({q: Verdict(q, "unanswered", line) for q in specs})
    given = {str(q): a for q, a in answers.items()}
    verdicts = {q: _verdict(q, given.get(q), spec) for q, spec in specs.items()}
    for q in given.keys() - specs.keys():
        verdicts[q] = Verdict(q, "unknown", f"question {q}: there is no question {q} (the questions are: {', '.join(specs)})")
    for verdict in verdicts.values():
        show(verdict.message)
    return Report(verdicts)


def _verdict(q: str, given, spec: Answer) -> Verdict:
    line = f"question {q}: "
    if given is None or given is Ellipsis or (isinstance(given, str) and not given.strip()):
        return Verdict(q, "unanswered", line + "not answered yet")
    try:
        status, note = _judge(given, spec)
    except Exception:  # noqa: BLE001 - whatever was typed, the reader gets a line, not a traceback
        status, note = "unreadable", ""
    if status == "right":
        return Verdict(q, status, line + "right")
    if status == "unreadable":
        return Verdict(q, status, line + f"expected {_expected(spec)}, got {_shown(given)}{note}")
    hint = f" Hint: {spec.hint}" if spec.hint else ""
    return Verdict(q, status, line + f"not yet: {_shown(given)} is not it{note}.{hint}")


def _expected(spec: Answer) -> str:
    if spec.kind == "text" and spec.options:
        *first, last = [repr(o) for o in spec.options]
        return f"one of {', '.join(first)} or {last}" if first else repr(last)
    return _EXPECTED[spec.kind]


def _judge(given, spec: Answer) -> tuple[str, str]:
    """``(status, note)`` for one answer."""
    if spec.kind == "bool":
        answer = _as_bool(given)
        return ("unreadable", "") if answer is None else ("right" if answer == _as_bool(spec.value) else "wrong", "")
    if spec.kind == "text":
        return _judge_text(given, spec), ""
    answer = _as_number(given)
    if answer is None:
        if isinstance(given, str) and re.fullmatch(r"\s*[-+]?\d+,\d+\s*", given):
            return "unreadable", " (use a dot for decimals: 0.25, not 0,25)"
        return "unreadable", _CALCULATION_NOTE if isinstance(given, str) and _is_calculation(given) else ""
    expected = _as_number(spec.value)
    allowed = _as_number(spec.tolerance) if spec.tolerance is not None else Fraction(1, 2 * 10**spec.decimals)
    if abs(answer - expected) <= allowed:
        return "right", ""
    places = next((p for p in range(13) if (answer * 10**p).denominator == 1), 13)
    if spec.tolerance is None and places < spec.decimals and round(expected, places) == answer:
        return "wrong", f" exactly (give {spec.decimals} decimals)"
    if abs(answer - expected) <= 2 * allowed:
        return "wrong", " (close: check the rounding)"
    if expected and abs(answer / 100 - expected) <= allowed:
        return "wrong", f" (it looks like a percentage: write {_shown(given)}% as {float(answer / 100):g})"
    return "wrong", ""


def _judge_text(given, spec: Answer) -> str:
    """right, wrong or unreadable. With options, an answer that names exactly one of them is that option."""
    answer = _as_text(given)
    if answer is None:
        return "unreadable"
    if {_as_text(o) for o in spec.options} == {_as_text(name) for name in RETRIEVERS}:  # "RRF" names hybrid
        for alias, name in _RETRIEVER_ALIASES.items():
            answer = re.sub(rf"(?<!\w){alias}(?!\w)", name, answer)
    right = {_as_text(t) for t in (spec.value, *spec.accept)}
    if answer in right:
        return "right"
    if not spec.options:
        return "wrong"
    others = {_as_text(o) for o in spec.options} - right
    if answer in others:
        return "wrong"
    if _NEGATIONS & set(answer.split()) or "n't" in answer:
        return "unreadable"

    def names(spelling: str) -> bool:  # "vector search" names "vector", "returned" names "precision of returned"
        return bool(re.search(rf"(?<!\w){re.escape(spelling)}", answer)
                    or len(answer) >= 3 and re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", spelling))

    named_right, named_others = any(map(names, right)), [o for o in others if names(o)]
    if named_right + len(named_others) != 1:
        return "unreadable"
    return "right" if named_right else "wrong"


def _unwrap(value):
    """NumPy scalars and 0-d arrays as Python values; anything else as it is."""
    try:
        return value.item() if getattr(value, "shape", None) == () and hasattr(value, "item") else value
    except Exception:  # noqa: BLE001 - an odd object: read it as it is
        return value


def _as_number(value) -> Fraction | None:
    """An exact number, or None. A float is read as the decimal it prints as (0.335 is 335/1000)."""
    value = _unwrap(value)
    try:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, float):
            return Fraction(repr(value)) if math.isfinite(value) else None
        if isinstance(value, numbers.Rational):
            return Fraction(value)
        if isinstance(value, Decimal):
            return _as_number(str(value))
        if isinstance(value, numbers.Real):
            return _as_number(float(value))
        if isinstance(value, str):
            text = _as_formula(value)
            if text.endswith("%"):
                inner = _as_number(text[:-1])
                return None if inner is None else inner / 100
            return _calculate(ast.parse(text, mode="eval").body)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError, SyntaxError, RecursionError):
        return None
    return None


def _as_formula(text: str) -> str:
    """Typed text as Python arithmetic: the minus sign, × ÷ ^ as - * / **, no leading zeros ("007")."""
    text = text.strip().replace("\u2212", "-").replace("×", "*").replace("÷", "/").replace("^", "**")
    return re.sub(r"(?<![\d.eE])0+(?=\d)", "", text)


def _calculate(node: ast.AST) -> Fraction | None:
    """The exact value of a parsed calculation of numbers, brackets and + - * / **; None for anything else."""
    if isinstance(node, ast.Constant):
        return _as_number(node.value) if isinstance(node.value, (int, float)) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _calculate(node.operand)
        return None if inner is None else inner if isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _calculate(node.left), _calculate(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow) and (right.denominator != 1 or abs(right) > 64):
            return None  # whole powers up to 64 only: 9**9**9 would take ages
        value = _OPERATORS[type(node.op)](left, right)
        return value if max(value.numerator.bit_length(), value.denominator.bit_length()) <= _MAX_BITS else None
    return None


def _is_calculation(text: str) -> bool:
    """True for text that parses as arithmetic with something besides numbers in it, e.g. "1/log2(3)"."""
    try:
        tree = ast.parse(_as_formula(text), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return False
    return any(isinstance(n, (ast.BinOp, ast.Call)) for n in ast.walk(tree))


def _as_bool(value) -> bool | None:
    value = _unwrap(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else None
    return None


def _as_text(value) -> str | None:
    value = _unwrap(value)
    if not isinstance(value, str):
        return None
    text = value.strip().strip("\"'").rstrip(".!?").replace("_", " ").replace("-", " ").casefold()
    return " ".join(word for word in text.split() if word not in _ARTICLES)


def _shown(value) -> str:
    """A short rendering of what the reader typed (at most 40 characters)."""
    try:
        text = repr(_unwrap(value))
    except Exception:  # noqa: BLE001
        text = f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."
