"""The four metrics of the series: recall@k, precision@k, reciprocal rank / MRR and nDCG@k.

The file to read in one sitting: each function is the definition, with its formula and source in
the docstring. Conventions follow trec_eval (NIST) unless a docstring says otherwise. Input checks
live in :mod:`retrieval_eval.checks`; the NumPy version for many questions at once is
:func:`retrieval_eval.batch.batch_scores`; success@k, R-precision and average precision, which
trec_eval and engines' reports add, are in :mod:`retrieval_eval.more_metrics`.

Terms: a *ranking* is a sequence of chunk ids, best first (rank 1 is the first element); the
*relevant* ids are those with gain > 0 in the qrels; the *cut-off k* is how many ranks are read.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from .checks import check_gain_list, check_gains, check_positive_int, check_questions, check_ranking, check_relevant


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
            ``relevants``. A question with an empty ranking scores 0; it is not dropped (as with
            trec_eval ``-c``; without it, trec_eval up to 9.0 and pytrec_eval leave a question with
            no ranked item out of the mean, and trec_eval 10.0 stops with an error).
        relevants: one non-empty collection of relevant ids per question.
        k: ``None`` (no cut-off, trec_eval's ``recip_rank``) or a cut-off >= 1 (MRR@k).

    Returns:
        The mean of :func:`reciprocal_rank` over questions, a float in [0, 1].

    Raises:
        ValueError: the input fails :func:`~retrieval_eval.checks.check_questions` (e.g. ``rankings``
            is empty, or the two lists differ in length), or a question's input is invalid (the
            message names the question's position).

    Taught in: notebook 03_mrr.
    """
    rankings, relevants, k = check_questions(rankings, relevants, k)
    total = 0.0
    for i, (ranked, relevant) in enumerate(zip(rankings, relevants)):
        try:
            total += reciprocal_rank(ranked, relevant, k)
        except ValueError as exc:
            raise ValueError(f"question at position {i}: {exc}") from None
    return total / len(rankings)


def dcg_at_k(gains_in_rank_order: Iterable[float], k: int) -> float:
    """Discounted cumulative gain of the top k: Σ gain_i / log2(i + 1), ranks i from 1.

    Järvelin & Kekäläinen (2002), with the discount 1/log2(i + 1) of Burges et al. (2005) that trec_eval
    uses (Järvelin & Kekäläinen's own leaves ranks up to a base b undiscounted). Gains <= 0 add
    nothing (trec_eval treats negative labels as not relevant).

    Args:
        gains_in_rank_order: the gain at rank 1, 2, ... (floats).
        k: the cut-off, an integer >= 1.

    Returns:
        DCG@k, a float >= 0 (in units of gain).

    Raises:
        ValueError: k is not an integer >= 1, or ``gains_in_rank_order`` is not a list of finite
            numbers (:func:`~retrieval_eval.checks.check_gain_list`; a NaN or infinite gain names its rank).

    Taught in: notebook 04_ndcg.
    """
    k = check_positive_int(k)
    gains = check_gain_list(gains_in_rank_order)
    return sum(max(gain, 0.0) / math.log2(rank + 1) for rank, gain in enumerate(gains[:k], start=1))


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


def relevant_ids(gains: Mapping[str, float]) -> set:
    """The ids with gain > 0 (what trec_eval counts as relevant at relevance level 1).

    Args:
        gains: ``{id: gain}`` for the judged items of one question (str ids, finite numbers).

    Returns:
        The set of ids whose gain is > 0 (empty when none is).

    Raises:
        ValueError: ``gains`` is not a mapping, or a gain is not a finite number (names the id).

    Taught in: notebooks 01_recall_at_k to 03_mrr and 06_mistakes_and_interview.
    """
    return {doc_id for doc_id, gain in check_gains(gains).items() if gain > 0}

