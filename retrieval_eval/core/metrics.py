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
