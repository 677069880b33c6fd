"""The four metrics of the series: recall@k, precision@k, reciprocal rank / MRR and nDCG@k, and
three more that engines' reports use: success@k, R-precision and average precision.

The file to read in one sitting: each function is the definition, with its formula and source in
the docstring. Conventions follow trec_eval (NIST) unless a docstring says otherwise. Input checks
live in :mod:`retrieval_eval.checks`; the NumPy version for many questions at once is
:func:`retrieval_eval.batch.batch_scores`.

Terms: a *ranking* is a sequence of chunk ids, best first (rank 1 is the first element); the
*relevant* ids are those with gain > 0 in the qrels; the *cut-off k* is how many ranks are read.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from .checks import check_gains, check_positive_int, check_ranking, check_relevant


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Recall@k: the share of the relevant items that appear in the top k of the ranking.

    recall@k = |top-k ∩ relevant| / |relevant|. With one relevant item it is 1 or 0 (the "hit
    rate"). Same as trec_eval's ``recall_k``.

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: the cut-off, an integer >= 1.

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: k is not an integer >= 1, ``relevant`` is empty, or ``ranked`` repeats an id
            (trec_eval refuses such a run; we raise instead of counting the id twice).

    Taught in: notebook 01_recall_at_k.
    """
    k, relevant, ranked = check_positive_int(k), check_relevant(relevant), check_ranking(ranked)
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Precision@k: the share of the top k slots that hold a relevant item.

    precision@k = |top-k ∩ relevant| / k. As in trec_eval's ``P_k``, the denominator is k even when
    the ranking holds fewer than k items: missing slots count as not relevant. So with one relevant
    item, precision@k can never pass 1/k (its *ceiling*).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: the cut-off, an integer >= 1.

    Returns:
        A float in [0, min(|relevant|, k) / k].

    Raises:
        ValueError: k is not an integer >= 1, ``relevant`` is empty, or ``ranked`` repeats an id
            (trec_eval refuses a run with duplicates; we raise instead of counting the id twice).

    Taught in: notebook 02_precision_at_k.
    """
    k, relevant, ranked = check_positive_int(k), check_relevant(relevant), check_ranking(ranked)
    return len(relevant.intersection(ranked[:k])) / k


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str], k: int | None = None) -> float:
    """Reciprocal rank: 1 / (rank of the first relevant item), 0 if none is found (Voorhees 1999).

    With ``k=None`` the whole ranking is searched, as trec_eval's ``recip_rank``; with a cut-off k
    only the top k (RR@k): a first relevant item below rank k scores 0.

    Args:
        ranked: ids, best first (a list or tuple of str). May be empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: ``None`` or a cut-off, an integer >= 1.

    Returns:
        A float in {0} ∪ {1/r : r = 1, 2, ...}.

    Raises:
        ValueError: k is given but not an integer >= 1, ``relevant`` is empty, or ``ranked``
            repeats an id (trec_eval refuses a run with duplicates; we raise).

    Taught in: notebook 03_mrr.
    """
    relevant, ranked = check_relevant(relevant), check_ranking(ranked)
    if k is not None:
        ranked = ranked[: check_positive_int(k)]
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id in relevant:
            return 1.0 / rank
    return 0.0


def mrr(rankings: Sequence[Sequence[str]], relevants: Sequence[Collection[str]], k: int | None = None) -> float:
    """Mean reciprocal rank over questions (Voorhees 1999, TREC-8 QA track).

    Args:
        rankings: one ranking per question (a list of lists of ids), in the same order as
            ``relevants``. A question with an empty ranking scores 0; it is not dropped (trec_eval
            leaves a question with no ranked item out of its mean unless run with ``-c``).
        relevants: one non-empty collection of relevant ids per question.
        k: ``None`` (no cut-off, trec_eval's ``recip_rank``) or a cut-off >= 1 (MRR@k).

    Returns:
        The mean of :func:`reciprocal_rank` over questions, a float in [0, 1].

    Raises:
        ValueError: ``rankings`` is empty, the two sequences differ in length, or any question's
            input is invalid (the message names the question's position).

    Taught in: notebook 03_mrr.
    """
    if isinstance(rankings, Mapping) or isinstance(relevants, Mapping):
        raise ValueError("pass rankings and relevants as two lists in the same question order, not dicts")
    if k is not None:
        k = check_positive_int(k)
    if rankings is None or relevants is None:
        raise ValueError("pass rankings and relevants as two lists in the same question order")
    rankings, relevants = list(rankings), list(relevants)
    if not rankings:
        raise ValueError("rankings is empty: MRR needs at least one question")
    if len(rankings) != len(relevants):
        raise ValueError(f"{len(rankings)} rankings but {len(relevants)} sets of relevant ids")
    total = 0.0
    for i, (ranked, relevant) in enumerate(zip(rankings, relevants)):
        try:
            total += reciprocal_rank(ranked, relevant, k)
        except ValueError as exc:
            raise ValueError(f"question at position {i}: {exc}") from None
    return total / len(rankings)


def dcg_at_k(gains_in_rank_order: Iterable[float], k: int) -> float:
    """Discounted cumulative gain of the top k: Σ gain_i / log2(i + 1), ranks i from 1.

    Järvelin & Kekäläinen (2002), with the log2(i + 1) discount used by trec_eval. Gains <= 0 add
    nothing (trec_eval treats negative labels as not relevant).

    Args:
        gains_in_rank_order: the gain at rank 1, 2, ... (floats).
        k: the cut-off, an integer >= 1.

    Returns:
        DCG@k, a float >= 0 (in units of gain).

    Raises:
        ValueError: k is not an integer >= 1.

    Taught in: notebook 04_ndcg.
    """
    k = check_positive_int(k)
    return sum(
        max(gain, 0.0) / math.log2(rank + 1)
        for rank, gain in enumerate(list(gains_in_rank_order)[:k], start=1)
    )


def ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k: DCG of the ranking divided by the ideal DCG (Järvelin & Kekäläinen 2002).

    Gain is the judged label itself (linear gain, as trec_eval's ``ndcg_cut``); unjudged ids have
    gain 0; the discount is 1/log2(rank + 1). The ideal DCG (IDCG) sorts *all judged gains* from
    the qrels, highest first, and cuts at k — not only the items that were retrieved.

    Args:
        ranked: ids, best first (a list or tuple of str). May be empty (scores 0).
        gains: ``{id: gain}`` for the judged items (floats; <= 0 means not relevant).
        k: the cut-off, an integer >= 1.

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: k is not an integer >= 1, no gain is > 0 (IDCG would be 0), or ``ranked``
            repeats an id (trec_eval refuses a run with duplicates; a duplicate counted twice
            would push nDCG above 1).

    Taught in: notebook 04_ndcg.
    """
    k, ranked, gains = check_positive_int(k), check_ranking(ranked), check_gains(gains)
    ideal = dcg_at_k(sorted(gains.values(), reverse=True), k)
    if ideal <= 0:
        raise ValueError("no gain > 0 in gains: a question with no relevant item cannot be scored")
    return dcg_at_k([gains.get(doc_id, 0.0) for doc_id in ranked], k) / ideal


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

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
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

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    relevant, ranked = check_relevant(relevant), check_ranking(ranked)
    return len(relevant.intersection(ranked[: len(relevant)])) / len(relevant)


def average_precision(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """Average precision: the mean of precision@r over the ranks r of the relevant items.

    AP = (1 / |relevant|) × Σ precision@r over every rank r that holds a relevant item. A relevant
    item that is never retrieved adds 0, so AP rewards finding all of them, high up. Its mean over
    questions is MAP (Manning, Raghavan & Schütze 2008, §8.4). Same as trec_eval's ``map`` (no
    cut-off). RAG tools' "context precision" is a variant of this rank-weighted measure, not precision@k.

    Args:
        ranked: ids, best first (a list or tuple of str). May be empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: ``relevant`` is empty or ``ranked`` repeats an id.

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    relevant, ranked = check_relevant(relevant), check_ranking(ranked)
    hits, total = 0, 0.0
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def relevant_ids(gains: Mapping[str, float]) -> set:
    """The ids with gain > 0 (what trec_eval counts as relevant at relevance level 1).

    Raises:
        ValueError: ``gains`` is not a mapping, or a gain is not a finite number (names the id).

    Taught in: notebooks 01_recall_at_k and 04_ndcg.
    """
    return {doc_id for doc_id, gain in check_gains(gains).items() if gain > 0}

