"""Reciprocal rank fusion (RRF): one ranking from several, by 1 / (k + rank)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from .checks import check_list, check_positive_int, check_question_ids, check_ranking, naming_question


TIE_RULES = ("id ascending", "id descending")  # ours first; the second is trec_eval's order for equal scores


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60, depth: int = 10, ties: str = TIE_RULES[0]) -> list[str]:
    """Fuse rankings with reciprocal rank fusion (Cormack, Clarke & Büttcher 2009).

    Each id gets score(d) = Σ over rankings of 1 / (k + rank(d)), ranks counted from 1, using only
    the top ``depth`` of each ranking; a ranking that does not hold d adds nothing.
    Ties: equal fused scores are ordered by id, ascending (deterministic and independent of the
    order in which the rankings are passed); ``ties="id descending"`` orders them the other way, as
    trec_eval orders equal scores, to show what the rule decides. The scores are summed as exact fractions
    (``fractions.Fraction``; a float k is converted exactly), so two scores that are equal are
    equal, whatever the order of the sum: floating-point rounding never decides a tie.

    Args:
        rankings: two or more rankings (lists of ids, best first).
        k: the RRF constant (60 in the paper), a number >= 0.
        depth: how many ids from the top of each ranking take part, an integer >= 1.
        ties: the order of equal fused scores, ``"id ascending"`` or ``"id descending"``.

    Returns:
        The fused ranking: every id from the top ``depth`` of any input, best first.

    Raises:
        ValueError: ``rankings`` is not a list of rankings or is empty, a ranking holds an id that is
            not a str or repeats an id (names the ranking by its position, from 1), ``k`` < 0,
            ``depth`` < 1 or an unknown tie rule.

    Taught in: notebooks 05_three_retrievers (through HybridRetriever) and 07_widgets.
    """
    rankings = check_list(rankings, "rankings", "rankings (one list of ids per retriever)")
    for position, ranked in enumerate(rankings, start=1):
        try:
            rankings[position - 1] = check_ranking(ranked)
        except ValueError as exc:
            raise ValueError(f"ranking {position}: {exc}") from None
    if not rankings:
        raise ValueError("rankings is empty: nothing to fuse")
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) or not (0 <= k < math.inf):
        raise ValueError(f"k must be a finite number >= 0, got {k!r}")
    depth = check_positive_int(depth, "depth")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {list(TIE_RULES)}, got {ties!r}")
    k = Fraction(int(k)) if isinstance(k, (int, np.integer)) else Fraction(float(k))  # exact, also for floats
    scores: dict[str, Fraction] = {}
    for ranked in rankings:
        for rank, doc_id in enumerate(ranked[:depth], start=1):
            scores[doc_id] = scores.get(doc_id, 0) + 1 / (k + rank)
    by_id = sorted(scores, reverse=ties == "id descending")
    return sorted(by_id, key=lambda doc_id: -scores[doc_id])  # a stable sort keeps the id order within a tie


def fuse_runs(runs: Sequence[Mapping[str, Sequence[str]]], k: float = 60, depth: int = 10, ties: str = TIE_RULES[0]) -> dict[str, list[str]]:
    """RRF of several runs, question by question: ``{question_id: fused ranking}``.

    What :class:`~retrieval_eval.retrievers.HybridRetriever` returns, computed from stored runs
    instead of live retrievers (so a cached run can be fused without loading a model).

    Args:
        runs: two or more runs ``{question_id: ranking}`` over the same questions.
        k, depth, ties: as for :func:`reciprocal_rank_fusion`.

    Raises:
        ValueError: ``runs`` is not a list of runs, a question id is not a str, the runs hold
            different questions, or as
            :func:`reciprocal_rank_fusion` (names the question).

    Taught in: notebook 05_three_retrievers (through rrf_tie_effect), and every notebook (through
    evaluation_setup, whose hybrid run it makes).
    """
    runs = check_list(runs, "runs", "runs ({question_id: ranking}, one per retriever)")
    for position, run in enumerate(runs, start=1):
        check_question_ids(run, None, f"run {position}")
    questions = [list(run) for run in runs]
    if not runs or any(set(q) != set(questions[0]) for q in questions):
        raise ValueError("fuse runs over the same questions: the runs hold different question ids")
    fused = {}
    for qid in questions[0]:
        with naming_question(qid):
            fused[qid] = reciprocal_rank_fusion([run[qid] for run in runs], k=k, depth=depth, ties=ties)
    return fused
