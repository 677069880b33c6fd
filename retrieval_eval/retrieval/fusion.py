"""Reciprocal rank fusion (RRF): one ranking from several, by Σ 1 / (k + rank); and :class:`Fusion`, its stage in the
registry (hybrid search is RRF of BM25's and vector search's top 10)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..core.checks import (
    Run,
    check_ids,
    check_k,
    check_list,
    check_ranking,
    naming_question,
)
from ..core.evaluation import evaluate, first_relevant_ranks
from .stages import Context, Stage

TIE_RULES = ("id ascending", "id descending")  # ours first; the second is trec_eval's order for equal scores


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: float = 60, depth: int = 10,
                           ties: str = TIE_RULES[0]) -> list[str]:
    """Fuse rankings (Cormack, Clarke & Büttcher 2009): score(d) = Σ 1 / (k + rank of d) over the top ``depth``
    of each. Summed as exact fractions, so equal scores are equal whatever the order; ties by id ascending
    (``ties="id descending"`` is trec_eval's order)."""
    rankings = check_list(rankings, "rankings", "rankings (one list of ids per retriever)")
    if not rankings:
        raise ValueError("rankings is empty: nothing to fuse")
    for position, ranked in enumerate(rankings, start=1):
        try:
            rankings[position - 1] = check_ranking(ranked)
        except ValueError as exc:
            raise ValueError(f"ranking {position}: {exc}") from None
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) or not 0 <= k < math.inf:
        raise ValueError(f"k must be a finite number >= 0, got {k!r}")
    depth = check_k(depth, "depth")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {list(TIE_RULES)}, got {ties!r}")
    k = Fraction(int(k)) if isinstance(k, (int, np.integer)) else Fraction(float(k))
    scores: dict[str, Fraction] = {}
    for ranked in rankings:
        for rank, doc_id in enumerate(ranked[:depth], start=1):
            scores[doc_id] = scores.get(doc_id, 0) + 1 / (k + rank)
    by_id = sorted(scores, reverse=ties == TIE_RULES[1])
    return sorted(by_id, key=lambda doc_id: -scores[doc_id])  # stable: the id order stays within a tie


def fuse_runs(runs: Sequence[Mapping[str, Sequence[str]]], k: float = 60, depth: int = 10, ties: str = TIE_RULES[0]) -> Run:
    """RRF question by question: ``{question id: fused ranking}`` for runs over the same questions."""
    runs = check_list(runs, "runs", "runs ({question_id: ranking}, one per retriever)")
    if not runs:
        raise ValueError("runs is empty: nothing to fuse")
    for position, run in enumerate(runs, start=1):
        if not isinstance(run, Mapping):
            raise ValueError(f"run {position} must be a mapping {{question_id: ranking}}, not {type(run).__name__} {run!r:.60}")
        check_ids(run, f"run {position} holds question id")
    if any(set(run) != set(runs[0]) for run in runs):
        raise ValueError("fuse runs over the same questions: the runs hold different question ids")
    fused = {}
    for qid in runs[0]:
        with naming_question(qid):
            fused[qid] = reciprocal_rank_fusion([run[qid] for run in runs], k=k, depth=depth, ties=ties)
    return fused


@dataclass(frozen=True)
class Fusion(Stage):
    """Reciprocal rank fusion of named runs in the registry: hybrid search is ``Fusion(("BM25", "vector"))``, RRF of
    each one's top 10."""

    inputs: tuple = ("BM25", "vector")
    depth: int = 10
    rrf_k: float = 60
    cached = False

    @property
    def reads(self) -> tuple:
        return tuple(self.inputs)

    def run(self, context: Context) -> Run:
        return fuse_runs([context.runs[name] for name in self.inputs], k=self.rrf_k, depth=self.depth)


class TieEffect(NamedTuple):
    """What the tie rule of RRF decides (:func:`tie_effect`)."""

    means: pd.DataFrame  #: each metric at k under each tie rule, and their spread
    questions: pd.DataFrame  #: the questions whose first relevant rank the rule decides, with both ranks
    k: int


def tie_effect(runs: Sequence[Run], qrels: Mapping, k: int = 3, rrf_k: float = 60, depth: int = 10) -> TieEffect:
    """Fuse under either tie rule and compare: RRF sums such as 1/61 + 1/64 tie exactly (ranks 1 and 4
    against 4 and 1), and then the rule alone orders the two chunks."""
    fused = {rule: fuse_runs(runs, k=rrf_k, depth=depth, ties=rule) for rule in TIE_RULES}
    means = evaluate(fused, qrels, ks=[check_k(k)]).xs(k, axis=1, level="k")
    means.loc["spread"] = means.loc[TIE_RULES[1]] - means.loc[TIE_RULES[0]]
    ranks = first_relevant_ranks(fused, qrels)[list(TIE_RULES)]
    differ = ranks[TIE_RULES[0]].fillna(0) != ranks[TIE_RULES[1]].fillna(0)
    return TieEffect(means.rename_axis(f"hybrid at k = {k}"), ranks[differ], k)
