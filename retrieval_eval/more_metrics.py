"""Beyond the four: success@k (hit rate), R-precision and average precision (MAP), as trec_eval computes them.

Learners meet them in tools' reports and in interviews, and ``make evaluate-runs`` reports them for an
engine's runs. Same arguments as :mod:`retrieval_eval.metrics`: a ranking (ids, best first) and the
relevant ids.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .checks import check_positive_int, check_ranking, check_relevant


def success_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Success@k: 1 when at least one relevant item is in the top k, else 0.

    success@k = 1 if |top-k ∩ relevant| >= 1 else 0. With one relevant item it equals recall@k
    (the "hit rate"); with several, recall@k counts how many were found and success@k only whether
    one was. Same as trec_eval's ``success_k`` (``-m success.k``).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: the cut-off, an integer >= 1.

    Returns:
        0.0 or 1.0.

    Raises:
        ValueError: k is not an integer >= 1, ``relevant`` is empty, or ``ranked`` repeats an id.

    Taught in: notebooks 09_chunking (success@k against recall@k when a chunk is copied) and
    10_convention_switchboard (through switchboard, as the hit rate).
    """
    k, relevant, ranked = check_positive_int(k), check_relevant(relevant), check_ranking(ranked)
    return 1.0 if relevant.intersection(ranked[:k]) else 0.0


def r_precision(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """R-precision: precision at rank R, where R is the number of relevant items.

    R-precision = |top-R ∩ relevant| / R. The cut-off adapts to each question, so a perfect ranking
    scores 1 whatever R is (precision@k cannot pass R/k). Manning, Raghavan & Schütze (2008),
    *Introduction to Information Retrieval*, §8.4. Same as trec_eval's ``Rprec``.

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than R or empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: ``relevant`` is empty or ``ranked`` repeats an id.

    Taught in: notebooks 02_precision_at_k and 10_convention_switchboard (through switchboard).
    """
    relevant, ranked = check_relevant(relevant), check_ranking(ranked)
    return len(relevant.intersection(ranked[: len(relevant)])) / len(relevant)


def average_precision(ranked: Sequence[str], relevant: Collection[str], k: int | None = None) -> float:
    """Average precision: the mean of precision@r over the ranks r of the relevant items.

    AP = (1 / |relevant|) × Σ precision@r over every rank r (≤ k, when a cut-off is given) that holds
    a relevant item. A relevant item that is never retrieved (or is below k) adds 0, so AP rewards
    finding all of them, high up; the denominator stays |relevant| with a cut-off too. Its mean over
    questions is MAP (Manning, Raghavan & Schütze 2008, §8.4). Same as trec_eval's ``map`` (no
    cut-off) and ``map_cut.k``. RAG tools' "context precision" is a variant of this rank-weighted
    measure, not precision@k (see :func:`retrieval_eval.conventions.context_precision`).

    Args:
        ranked: ids, best first (a list or tuple of str). May be empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: ``None`` (the whole ranking) or a cut-off, an integer >= 1.

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: ``relevant`` is empty, ``ranked`` repeats an id, or k is given but not an
            integer >= 1.

    Taught in: notebooks 03_mrr and 10_convention_switchboard.
    """
    relevant, ranked = check_relevant(relevant), check_ranking(ranked)
    if k is not None:
        ranked = ranked[: check_positive_int(k)]
    hits, total = 0, 0.0
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)
