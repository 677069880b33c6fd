"""The one-page sheet (``make sheet`` → ``output/sheet.pdf``) and the one-screen recap (:func:`recap`, the end of
notebook 07): the definitions, the precision ceiling, the five rules, the measures interviews ask beside the four, the
five mistakes, ten lines of code, five interview lines (the sheet names their test: Holm) and the golden set's numbers,
computed from the run. A4, one page, no type under 8 pt: a sheet that would not fit is
refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib as mpl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..analysis.answers import answer_by_retrieval
from ..analysis.comparisons import paired_comparisons
from ..core.checks import check_k
from ..core.evaluation import (
    evaluate,
    first_relevant_ranks,
    precision_ceiling,
    random_baseline,
)
from ..core.metrics import relevant_ids
from ..core.paths import OUTPUT_DIR
from ..core.registry import shown_metrics
from ..inputs.golden import graded_labels
from ..retrieval.setup import RETRIEVERS, evaluation_setup

A4_INCHES, MARGIN = (8.27, 11.69), 0.45
BODY_PT, SMALL_PT = 9, 8.5
RULES = (
    "The reader's k is the k passed to the LLM (here 3).",
    "Recall@k is the main RAG number; recall at a first stage's depth matters when a second stage reads it.",
    "Precision is judged against its ceiling, not against 1.",
    "MRR and nDCG show ranking gains: how high the evidence sits.",
    "Never compare numbers across golden sets or relevance rules; report per slice, with uncertainty.",
)
DEFINITIONS = (
    ("recall@k", r"$\dfrac{|\mathrm{relevant\ in\ top}\ k|}{|\mathrm{relevant}|}$", "did the evidence reach the LLM at all?"),
    ("precision@k", r"$\dfrac{|\mathrm{relevant\ in\ top}\ k|}{k}$",
     "how much of what the LLM reads is relevant? The denominator is k, always."),
    ("RR@k, MRR@k", r"$\dfrac{1}{\mathrm{rank\ of\ the\ first\ relevant}}$",
     "0 when none is in the top k; MRR is the mean over questions: how high is the first hit?"),
    ("nDCG@k", r"$\dfrac{\mathrm{DCG@}k}{\mathrm{IDCG@}k}$",
     "DCG@k adds gain / log2(rank + 1) over the top k; the ideal DCG ranks every judged chunk, retrieved or not."),
)
ALSO = (  # what interviews ask beside the four (deep dive 14)
    ("AP@k, MAP", "precision@r averaged over the relevant ranks r ≤ k, per relevant chunk; MAP: its mean"),
    ("hit rate, success@k", "1 when any relevant chunk is in the top k"),
    ("Ragas context precision", "AP@k / recall@k: not precision@k"),
    ("Ragas context recall", "the reference's claims the context supports: here recall@k"),
)
MISTAKES = ("a chunk counted twice", "ties broken by input order", "set precision reported as precision@k",
            "questions with no result dropped from the mean", "a tuned baseline called the baseline")  # notebook 07

CODE = """from math import log2
def hits(ranked, relevant, k): return len(relevant & set(ranked[:k]))
def recall_at_k(ranked, relevant, k): return hits(ranked, relevant, k) / len(relevant)
def precision_at_k(ranked, relevant, k): return hits(ranked, relevant, k) / k  # k, always
def rr_at_k(ranked, relevant, k):
    return next((1 / r for r, d in enumerate(ranked[:k], 1) if d in relevant), 0.0)
def dcg(gains_in_order, k): return sum(g / log2(r + 1) for r, g in enumerate(gains_in_order[:k], 1))
def ndcg_at_k(ranked, gains, k):
    ideal = dcg(sorted(gains.values(), reverse=True), k)  # every judged chunk, retrieved or not
    return dcg([gains.get(d, 0) for d in ranked], k) / ideal"""  # the four, in ten lines (a test checks them)


def recap_lines(setup, k: int = 3) -> list[str]:
    """Five interview lines of at most 20 words each, every figure from ``setup`` (runs BM25, vector and hybrid)."""
    runs, qrels, n = setup.runs, setup.qrels, len(setup.qrels)
    table = evaluate({"hybrid": runs["hybrid"]}, qrels, ks=[k]).loc["hybrid"]
    found = int((first_relevant_ranks({"hybrid": runs["hybrid"]}, qrels)["hybrid"].fillna(k + 1) <= k).sum())
    single = sum(len(relevant_ids(g)) == 1 for g in qrels.values())
    family = paired_comparisons({name: runs[name] for name in ("BM25", "vector", "hybrid")}, qrels, k=k)  # as 07's
    pair = family.loc[("BM25 − hybrid", "recall")]
    graded = evaluate({"hybrid": runs["hybrid"]}, graded_labels(setup.golden, setup.chunks), ks=[k]).iloc[0][("nDCG", k)]
    lines = [f"Recall@{k} first: hybrid puts the evidence in the LLM's top {k} for {found} of {n} questions.",
             f"Precision@{k} is {table[('precision', k)]:.2f} of a ceiling {precision_ceiling(qrels, k):.2f}: "
             f"{single} of {n} questions have one relevant chunk.",
             f"MRR@{k}, {table[('MRR', k)]:.2f}, says how high the first hit sits; recall says whether it arrived.",
             f"nDCG@{k} with graded labels, {graded:.2f}, when some chunks answer better; its ideal ranks every judged chunk.",
             f"Hybrid against BM25 on recall@{k}: {pair['losses']} wins, {pair['wins']} losses, {pair['verdict']} "
             f"({len(family)} tests judged together)."]
    too_long = [line for line in lines if len(line.split()) > 20]
    if too_long:
        raise ValueError(f"recap lines over 20 words: {too_long}")
    return lines


VERT = r" \vert "  # a "|" would end a Markdown table's cell


def recap(setup, k: int = 3):
    """The one-screen recap (the end of notebook 07, the sheet): the four definitions with formulas, ten lines of
    code, the precision ceiling and five interview lines, every figure from ``setup``."""
    from IPython.display import Markdown

    k, qrels = check_k(k), setup.qrels
    rows = "\n".join(f"| {name} | {formula.replace('|', VERT)} | {meaning} |" for name, formula, meaning in DEFINITIONS)
    single = sum(len(relevant_ids(g)) == 1 for g in qrels.values())
    return Markdown(
        f"**The four definitions** (one question; a golden set's metric is the mean over its questions)\n\n"
        f"| metric | formula | asks |\n|---|---|---|\n{rows}\n\n**Ten lines of code**\n\n```python\n{CODE}\n```\n\n"
        f"**The precision ceiling**: {single} of {len(qrels)} questions have one relevant chunk, so no ranking passes "
        f"precision@{k} = {precision_ceiling(qrels, k):.3f}.\n\n**Also asked**: "
        + "; ".join(f"*{name}*: {meaning}" for name, meaning in ALSO)
        + ".\n\n**Five mistakes** (07): " + "; ".join(MISTAKES) + ".\n\n**Five interview lines**\n\n"
        + "\n".join(f"{i}. {line}" for i, line in enumerate(recap_lines(setup, k), start=1)))


class Page:
    """Text placed from the top of an A4 page down, each piece measured; :meth:`text` refuses to pass the bottom margin."""

    def __init__(self):
        self.fig = Figure(figsize=A4_INCHES)
        self.renderer = FigureCanvasAgg(self.fig).get_renderer()
        self.y = A4_INCHES[1] - MARGIN  # inches from the bottom

    def text(self, words: str, size: float = BODY_PT, x: float = 0.0, weight: str = "normal", wrap: bool = True,
             gap: float = 0.0, width: float | None = None, **style) -> None:
        """``words`` at ``x`` inches from the left margin, wrapped to ``width`` inches (to the right margin by default)."""
        width = (width or A4_INCHES[0] - 2 * MARGIN - x) * 72 / (0.52 * size)  # characters per line at this size
        placed = self.fig.text((MARGIN + x) / A4_INCHES[0], self.y / A4_INCHES[1], textwrap.fill(words, int(width)) if wrap else words,
                               fontsize=size, weight=weight, va="top", linespacing=1.3, **style)
        self.y -= placed.get_window_extent(self.renderer).height / self.fig.dpi + size * 0.12 / 72 + gap
        if self.y < MARGIN:
            raise ValueError(f"the sheet does not fit one A4 page: no room left for {words[:40]!r}")

    def row(self, *pieces: tuple[str, dict], height: float = 0.0) -> None:
        """Pieces of text side by side, the next line under the longest but at least ``height`` inches down (the
        PDF draws a formula a little taller than it measures here)."""
        top, bottoms = self.y, []
        for words, style in pieces:
            self.y = top
            self.text(words, **style)
            bottoms.append(self.y)
        self.y = min(bottoms + [top - height])
        if self.y < MARGIN:
            raise ValueError("the sheet does not fit one A4 page")

    def heading(self, words: str) -> None:
        self.y -= 0.08
        self.text(words, 11, weight="bold", color="#0b4f9c", gap=0.03)


def numbers_table(setup, k: int = 3):
    """Each built-in retriever's metrics at k and recall@10, the questions found in the top k, and a random order's."""
    runs = {name: setup.runs[name] for name in RETRIEVERS if name in setup.runs}
    qrels, n = setup.qrels, len(setup.chunk_ids)
    columns = [(m, k) for m in shown_metrics()] + [("recall", 10)]
    out = evaluate(runs, qrels, ks=[k, 10])[columns].set_axis([f"{m}@{j}" for m, j in columns], axis=1)
    ranks = first_relevant_ranks(runs, qrels)
    out[f"found in top {k}"] = [int((ranks[name].fillna(k + 1) <= k).sum()) for name in runs]
    chance = random_baseline(qrels, n, k)
    out.loc["random order"] = [*(chance.get(m, float("nan")) for m, _ in columns[:-1]),
                               random_baseline(qrels, n, 10)["recall"], float("nan")]
    return out


def write_sheet(setup, path: str | Path | None = None, k: int = 3) -> Path:
    """Write the sheet for ``setup`` to ``path`` (default ``output/sheet.pdf``); the path."""
    path = Path(path or OUTPUT_DIR / "sheet.pdf")
    qrels = setup.qrels
    n, single = len(qrels), sum(len(relevant_ids(g)) == 1 for g in qrels.values())
    with mpl.rc_context({"pdf.fonttype": 42, "font.family": "DejaVu Sans"}):
        page = Page()
        page.text("Retrieval metrics for RAG: the one-page sheet", 15, weight="bold")
        page.text(f"Polder golden set: {n} questions, {len(setup.chunk_ids)} chunks; k = {k}, the k passed to the LLM. "
                  "Every number below is computed from the run.", SMALL_PT, gap=0.04)
        page.heading("Four definitions (one question; a golden set's metric is their mean)")
        page.y -= 0.1  # a formula draws above its anchor
        for name, formula, meaning in DEFINITIONS:
            page.row((name, {"size": BODY_PT + 1, "weight": "bold"}), (formula, {"size": 12, "x": 1.3, "wrap": False}),
                     (meaning, {"x": 3.9}), height=0.52)
        page.text("Also asked: " + "; ".join(f"{name}: {meaning}" for name, meaning in ALSO) + ".", SMALL_PT, gap=0.02)
        page.heading("The precision ceiling")
        ceiling = precision_ceiling(qrels, k)
        page.text(f"A question with R relevant chunks fills at most min(R, k) of the k slots, so no ranking can pass the mean "
                  f"of min(R, k) / k. Here {single} of {n} questions have one relevant chunk: the precision@{k} ceiling is "
                  f"{ceiling:.3f}. Report precision as a share of it.")
        page.heading("Five rules of the course")
        right = answer_by_retrieval()["share"]  # the cookbook's basic RAG, k = 3
        for i, rule in enumerate(RULES, start=1):
            page.text(f"{i}. {rule}" + (f" The cookbook's answers: {right.iloc[0]:.2f} right with evidence in the top 3, "
                                        f"{right.iloc[1]:.2f} without." if i == 2 else ""), x=0.1)
        page.text("Five mistakes (07): " + "; ".join(MISTAKES) + ".", SMALL_PT, x=0.1)
        page.heading(f"The golden set's numbers (k = {k})")
        table = numbers_table(setup, k)
        widths = [1.25] + [min(0.95, (A4_INCHES[0] - 2 * MARGIN - 1.25) / len(table.columns))] * len(table.columns)
        xs = [sum(widths[:i]) for i in range(len(widths))]
        page.row(*((label, {"size": SMALL_PT, "x": x, "weight": "bold", "wrap": False}) for x, label in zip(xs, ["", *table.columns])))
        for name, values in table.iterrows():
            shown = [name] + ["–" if v != v else f"{v:.0f}" if column.startswith("found") else f"{v:.3f}" for column, v in values.items()]
            page.row(*((text, {"size": SMALL_PT, "x": x, "wrap": False}) for x, text in zip(xs, shown)))
        page.text(f"Found in top {k}: questions whose evidence reaches the LLM. Random order: a random ranking's exact expected "
                  "value, the control to beat. nDCG here reads the binary labels; the interview's the graded ones.", SMALL_PT, gap=0.02)
        page.heading("Ten lines of code")
        page.text(CODE, SMALL_PT, wrap=False, family="DejaVu Sans Mono")
        page.heading("Five interview lines (the fifth's tests are judged together by Holm's correction)")
        for i, line in enumerate(recap_lines(setup, k), start=1):
            page.text(f"{i}. {line}", SMALL_PT, x=0.1)
        path.parent.mkdir(parents=True, exist_ok=True)
        page.fig.savefig(path, format="pdf")
    return path


if __name__ == "__main__":
    print(write_sheet(evaluation_setup(reranker="sentence")))
