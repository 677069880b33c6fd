"""The four metrics of the series (recall@k, precision@k, reciprocal rank / MRR, nDCG@k), each for one question with
its formula: the readable truth. trec_eval's conventions; terms: :mod:`.checks`. The registry every table reads, with
each metric's kernel for all questions at once, is :mod:`.registry`."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from .checks import (
    check_gains,
    check_k,
    check_list,
    check_ranking,
    check_relevant,
    finite_number,
)


def first_relevant_rank(ranked: Sequence[str], relevant: Collection[str]) -> int | None:
    """The rank (from 1) of the first relevant id in ``ranked``; ``None`` when there is none."""
    ranked, relevant = check_ranking(ranked), check_relevant(relevant)
    return next((rank for rank, doc_id in enumerate(ranked, start=1) if doc_id in relevant), None)


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Recall@k = |top k ∩ relevant| / |relevant|: the share of the relevant chunks in the top k.
    trec_eval's ``recall_k``."""
    ranked, relevant, k = check_ranking(ranked), check_relevant(relevant), check_k(k)
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Precision@k = |top k ∩ relevant| / k, divided by k even when fewer are returned (trec_eval's ``P_k``): with
    one relevant chunk it can never pass 1/k, its ceiling."""
    ranked, relevant, k = check_ranking(ranked), check_relevant(relevant), check_k(k)
    return len(relevant.intersection(ranked[:k])) / k


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str], k: int | None = None) -> float:
    """Reciprocal rank = 1 / rank of the first relevant chunk, 0 when there is none (Voorhees 1999). With k (RR@k)
    one below rank k counts 0; without, the whole ranking is read, as trec_eval's ``recip_rank``."""
    ranked, relevant = check_ranking(ranked), check_relevant(relevant)
    rank = first_relevant_rank(ranked if k is None else ranked[: check_k(k)], relevant)
    return 1 / rank if rank else 0.0


def mrr(rankings: Sequence[Sequence[str]], relevants: Sequence[Collection[str]], k: int | None = None) -> float:
    """Mean reciprocal rank over questions (two lists in the same order); an empty ranking counts 0, as
    ``trec_eval -c``."""
    rankings, relevants = check_list(rankings, "rankings", "rankings"), check_list(relevants, "relevants", "relevant sets")
    if not rankings or len(rankings) != len(relevants):
        raise ValueError(f"give one set of relevant ids per ranking, at least one: {len(rankings)} rankings, "
                         f"{len(relevants)} relevant sets")
    total = 0.0
    for position, (ranked, relevant) in enumerate(zip(rankings, relevants)):
        try:
            total += reciprocal_rank(ranked, relevant, k)
        except ValueError as exc:
            raise ValueError(f"question at position {position}: {exc}") from None
    return total / len(rankings)


def dcg_at_k(gains_in_rank_order: Iterable[float], k: int) -> float:
    """DCG@k = Σ_{rank i ≤ k} gain_i / log2(i + 1) (Järvelin & Kekäläinen 2002; trec_eval's discount).
    Gains <= 0 add nothing."""
    gains, k = check_list(gains_in_rank_order, "gains_in_rank_order", "gains (one per rank)"), check_k(k)
    bad = next((rank for rank, g in enumerate(gains, start=1) if not finite_number(g)), None)
    if bad:
        raise ValueError(f"gains_in_rank_order: the gain at rank {bad} must be a finite number, got {gains[bad - 1]!r}")
    return sum(max(g, 0) / math.log2(rank + 1) for rank, g in enumerate(gains[:k], start=1))


def ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k = DCG@k of the ranking / DCG@k of the ideal ranking, gains linear (trec_eval's ``ndcg_cut``). The
    ideal sorts *every judged gain* of the question, highest first, not only what was retrieved."""
    ranked, gains, k = check_ranking(ranked), check_gains(gains), check_k(k)
    ideal = dcg_at_k(sorted(gains.values(), reverse=True), k)
    if ideal <= 0:
        raise ValueError("no gain > 0 in gains: a question with no relevant item cannot be scored")
    return dcg_at_k([gains.get(doc_id, 0) for doc_id in ranked], k) / ideal


def success_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Success@k (the hit rate): 1 when any relevant chunk is in the top k, else 0 (trec_eval's ``success_k``)."""
    ranked, relevant, k = check_ranking(ranked), check_relevant(relevant), check_k(k)
    return float(not relevant.isdisjoint(ranked[:k]))


def relevant_ids(gains: Mapping[str, float]) -> set:
    """The ids with gain > 0 (what trec_eval counts as relevant)."""
    return {doc_id for doc_id, gain in check_gains(gains).items() if gain > 0}


# --- beyond the four (deep dive 14; registered shown=False: a table shows them when they are named) ---


def average_precision(ranked: Sequence[str], gains: Mapping[str, float], k: int | None = None) -> float:
    """AP@k = Σ precision@r over the ranks r ≤ k that hold a relevant chunk, / |R| (trec_eval ``map_cut.k``; without
    k ``map``). MAP is its mean over questions: unlike MRR it rewards finding every relevant chunk, early."""
    ranked, relevant = check_ranking(ranked), check_relevant(relevant_ids(gains))
    ranked = ranked if k is None else ranked[: check_k(k)]
    ranks = [rank for rank, doc_id in enumerate(ranked, start=1) if doc_id in relevant]
    return sum(hits / rank for hits, rank in enumerate(ranks, start=1)) / len(relevant)


def r_precision(ranked: Sequence[str], gains: Mapping[str, float], k: int | None = None) -> float:
    """R-precision = precision@|R|: a cut-off that adapts to each question, where precision and recall are equal
    (trec_eval ``Rprec``). With k, on the ranking cut at k (``-M k``)."""
    ranked, relevant = check_ranking(ranked), check_relevant(relevant_ids(gains))
    top = ranked[: len(relevant) if k is None else min(len(relevant), check_k(k))]
    return len(relevant.intersection(top)) / len(relevant)


def f1_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """F1@k = 2·P@k·R@k / (P@k + R@k) = 2·hits@k / (k + |R|), 0 without a hit (trec_eval has no F at k)."""
    ranked, relevant, k = check_ranking(ranked), check_relevant(relevant_ids(gains)), check_k(k)
    return 2 * len(relevant.intersection(ranked[:k])) / (k + len(relevant))


def context_precision(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Context precision@k as RAG tools (Ragas) define it, from our labels instead of an LLM judge: Σ precision@r
    over the relevant ranks r ≤ k / hits@k, 0 without a hit. Rank-weighted like AP, but divided by what was found
    (= AP@k / recall@k): it is not precision@k."""
    ranked, relevant, k = check_ranking(ranked), check_relevant(relevant_ids(gains)), check_k(k)
    hits = len(relevant.intersection(ranked[:k]))
    return average_precision(ranked, gains, k) * len(relevant) / hits if hits else 0.0


RECALL_LEVELS = tuple(i / 10 for i in range(11))  # trec_eval's 11 standard recall levels


def iprec_at_recall(ranked: Sequence[str], gains: Mapping[str, float]) -> dict[float, float]:
    """Interpolated precision at the 11 standard recall levels (trec_eval ``iprec_at_recall``): at level ρ, the
    highest precision at any rank whose recall is at least ρ (0 when the ranking never reaches ρ). As trec_eval, ρ is
    reached at ⌊ρ·|R| + 0.9⌋ hits (its historical rounding, floating point included)."""
    ranked, relevant = check_ranking(ranked), check_relevant(relevant_ids(gains))
    ranks = [rank for rank, doc_id in enumerate(ranked, start=1) if doc_id in relevant]
    points = [(hits, hits / rank) for hits, rank in enumerate(ranks, start=1)]
    return {level: max((p for hits, p in points if hits >= int(level * len(relevant) + 0.9)), default=0.0)
            for level in RECALL_LEVELS}
