"""Metric conventions side by side: the choices that make two tools report different numbers.

The same ranking gets different scores when tools choose differently what counts as found, what
precision divides by, whether reciprocal rank has a cut-off, where the ideal DCG comes from, which
gain a grade gets, how questions are averaged, and whether a question with no results counts.
Each function below is one variant, its docstring gives the formula, the source and the trec_eval
measure that computes the same number ("none" when trec_eval has none). The variants that are the
series' own metrics come from :mod:`retrieval_eval.metrics`; :data:`VARIANTS` lists every
per-question variant for :func:`switchboard`, the side-by-side table.

Per question: ``ranked`` is a ranking (ids, best first), ``gains`` the judged gains ``{id: gain}`` of
the question (gain > 0 is relevant, trec_eval's default relevance level), ``k`` the cut-off; R is
the set of relevant ids and hits@k the number of them in the top k. Missing ranks of a ranking
shorter than k count as not relevant. Over questions: a run ``{question_id: ranking}`` and qrels
``{question_id: {id: gain}}``.

trec_eval measure names and the files defining them are those of github.com/usnistgov/trec_eval
(``m_*.c``), the trec_eval inside pytrec_eval; "-M k"
is its option that reads only the top k of each ranking, "-c" the one that scores a question with
no ranking 0 instead of leaving it out of the mean.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from .checks import (
    check_gains, check_positive_int, check_qrels, check_question_ids, check_ranking, check_relevant, naming_question,
)
from .metrics import dcg_at_k, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids
from .more_metrics import average_precision, r_precision, success_at_k


def _question(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> tuple[list, set, int]:
    """The checked inputs of one question: the ranking as a list, the relevant ids, k."""
    return check_ranking(ranked), check_relevant(relevant_ids(gains)), check_positive_int(k)


def _hits(ranked: list, relevant: set, k: int) -> int:
    return len(relevant.intersection(ranked[:k]))


# --- found or not: hit rate, recall and capped recall ----------------------------------------


def hit_rate(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Hit rate (success@k): 1 when at least one relevant id is in the top k, else 0.

    success@k = 1[hits@k > 0] (:func:`~retrieval_eval.more_metrics.success_at_k`, taking the
    question's gains like every variant here). Its mean is the share of questions with a hit. It
    equals recall@k for a question with one relevant id and exceeds it when a question has several
    and only some are found — which is why a tool that calls it "recall" reports more.
    trec_eval: ``success.k`` (m_success.c).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: k is not an integer >= 1, no gain is > 0, or ``ranked`` repeats an id.

    Taught in: notebooks 01_recall_at_k, 06_mistakes_and_interview and
    10_convention_switchboard (through switchboard).
    """
    return success_at_k(ranked, relevant_ids(gains), k)


def capped_recall(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Capped recall@k: hits@k / min(|R|, k), so that a full top k scores 1 even when |R| > k.

    It is precision@k up to k = |R| and recall@k after. trec_eval: ``relative_P.k`` (m_rel_P.c,
    "precision at cutoff relative to the maximum possible precision at that cutoff"); its mean over
    questions is a mean of ratios (compare :func:`share_of_ceiling`, a ratio of means).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`hit_rate`.

    Taught in: notebooks 02_precision_at_k and 10_convention_switchboard.
    """
    ranked, relevant, k = _question(ranked, gains, k)
    return _hits(ranked, relevant, k) / min(len(relevant), k)


# --- what precision divides by ----------------------------------------------------------------


def precision_of_returned(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Precision of what was returned: hits@k / min(k, number returned), 0 when nothing was returned.

    What some RAG tools call precision@k; it hides the ceiling and rewards returning fewer results
    (trec_eval's ``P.k`` divides by k). trec_eval: ``set_P`` on the ranking cut at k (``-M k``;
    m_set_P.c does not "fill in with nonrel docs if less than [k] docs retrieved").

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`hit_rate`.

    Taught in: notebooks 02_precision_at_k, 06_mistakes_and_interview and 10_convention_switchboard.
    """
    ranked, relevant, k = _question(ranked, gains, k)
    returned = min(k, len(ranked))
    return _hits(ranked, relevant, k) / returned if returned else 0.0


def f1_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """F1@k: the harmonic mean of precision@k (divided by k) and recall@k, 0 when both are 0.

    F1@k = 2 · P@k · R@k / (P@k + R@k) (van Rijsbergen 1979, F with β = 1). It inherits precision's
    ceiling: with one relevant id and k = 3 it is at most 2 · (1/3) · 1 / (4/3) = 0.5.
    trec_eval: none (``set_F`` divides precision by the number returned).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`hit_rate`.

    Taught in: notebooks 02_precision_at_k and 10_convention_switchboard (through switchboard).
    """
    relevant = check_relevant(relevant_ids(gains))
    p, r = precision_at_k(ranked, relevant, k), recall_at_k(ranked, relevant, k)
    return 2 * p * r / (p + r) if p + r else 0.0


# --- rank-aware: AP@k and its RAG-tool cousin ---------------------------------------------------


def ap_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """AP@k from the question's gains: :func:`~retrieval_eval.more_metrics.average_precision` cut at k.

    The per-question form every variant here has (``(ranked, gains, k)``), for :func:`macro_mean`
    and the switchboard; its mean over questions is MAP@k. trec_eval: ``map_cut.k`` (m_map_cut.c).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`hit_rate`.

    Taught in: notebooks 03_mrr and 10_convention_switchboard (through switchboard).
    """
    return average_precision(ranked, relevant_ids(gains), k)


def context_precision(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """"Context precision" as RAG tools compute it: AP@k divided by hits@k instead of by |R|.

    context precision@k = Σ over relevant ids at rank r ≤ k of P@r, divided by hits@k; 0 with no
    hit (Ragas documentation, "Context Precision": the sum of precision@r × relevance at r over the
    top K, divided by the number of relevant items in the top K). It is rank-weighted like AP, not
    precision@k, and a relevant id the retriever missed costs nothing. trec_eval: none.

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`hit_rate`.

    Taught in: notebooks 03_mrr and 10_convention_switchboard (through switchboard).
    """
    ranked, relevant, k = _question(ranked, gains, k)
    hits = _hits(ranked, relevant, k)
    return average_precision(ranked, relevant, k) * len(relevant) / hits if hits else 0.0


# --- nDCG: where the ideal comes from, which gain ----------------------------------------------


def exponential_gains(gains: Mapping[str, float]) -> dict:
    """The gains relabelled g → 2^g − 1 (Burges et al. 2005): grade 1 stays 1, grade 2 becomes 3.

    Pass them to :func:`~retrieval_eval.metrics.ndcg_at_k` for nDCG with exponential gain;
    trec_eval's ``ndcg_cut.k`` gives the same on qrels relabelled this way (m_ndcg_cut.c: "if you
    want different gains, change the qrels file"). Binary labels do not change (2^1 − 1 = 1).

    Args:
        gains: ``{id: gain}`` for one question's judged ids (finite numbers).

    Raises:
        ValueError: as :func:`~retrieval_eval.checks.check_gains`.

    Taught in: notebooks 04_ndcg and 10_convention_switchboard (through switchboard).
    """
    return {doc_id: 2**gain - 1 for doc_id, gain in check_gains(gains).items()}


def ndcg_retrieved_ideal(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k with the ideal DCG built from the retrieved top k only (re-sorted): a known mistake.

    A relevant id the retriever never returned is missing from this ideal, so a ranking that found
    one partial answer and nothing else scores 1. It is what scikit-learn's ``ndcg_score`` computes
    when given only the retrieved items. 0 when no relevant id was retrieved. trec_eval: none
    (``ndcg_cut.k`` builds the ideal from every judged id, as :func:`~retrieval_eval.metrics.ndcg_at_k`).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        gains: ``{id: gain}`` for the question's judged ids (finite numbers; at least one > 0).
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`hit_rate`.

    Taught in: notebooks 04_ndcg, 06_mistakes_and_interview and
    10_convention_switchboard (through switchboard).
    """
    ranked, _, k = _question(ranked, gains, k)
    top = [gains.get(doc_id, 0) for doc_id in ranked[:k]]
    ideal = dcg_at_k(sorted(top, reverse=True), k)
    return dcg_at_k(top, k) / ideal if ideal > 0 else 0.0


# --- over questions: macro and micro means, empty rankings, ratio of means ----------------------


def _check_questions(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]]) -> None:
    """The checks every function over questions shares: str ids everywhere (the question ids, each
    ranking and each question's judged ids, as the per-question functions and the batch evaluator
    check them), and the same questions in the run and the qrels."""
    check_qrels(qrels)
    check_question_ids(run, None)
    for q in qrels:
        if q in run:
            with naming_question(q):
                check_ranking(run[q])
    missing, extra = [q for q in qrels if q not in run], [q for q in run if q not in qrels]
    if missing or extra:
        raise ValueError(
            f"the run and the qrels must hold the same questions: no ranking for {missing[:5]}, "
            f"not in the qrels {extra[:5]} (give a question with no results an empty ranking [])"
        )
    if not qrels:
        raise ValueError("qrels is empty: there is no question to average over")


def macro_mean(score: Callable, run: Mapping, qrels: Mapping, k: int, drop_empty: bool = False) -> float:
    """The mean of a per-question score over questions (macro average), as trec_eval averages.

    An empty ranking scores 0 and stays in the mean: trec_eval ``-c``. With ``drop_empty=True``
    questions with an empty ranking are left out, as trec_eval up to 9.0 without ``-c`` and
    pytrec_eval (it has no ``-c``) leave out a question missing from the run; trec_eval 10.0 without
    ``-c`` stops with an error instead.

    Args:
        score: a per-question function ``(ranked, gains, k) -> float``, e.g. :func:`hit_rate`.
        run: ``{question_id: ranking}`` with every question of ``qrels``.
        qrels: ``{question_id: {id: gain}}``.
        k: the cut-off, an integer >= 1.
        drop_empty: leave questions with an empty ranking out of the mean.

    Raises:
        ValueError: an id is not a str (:func:`~retrieval_eval.checks.check_ids`: question ids, the
            rankings and the judged ids, checked as the per-question functions check them), the
            run and the qrels hold different questions, every ranking is empty with ``drop_empty``,
            or a question's input is invalid (names the question).

    Taught in: notebooks 01_recall_at_k to 03_mrr and 10_convention_switchboard (through switchboard, for recall@k with empty rankings dropped).
    """
    _check_questions(run, qrels)
    kept = [q for q in qrels if run[q] or not drop_empty]
    if not kept:
        raise ValueError("every ranking is empty: nothing is left to average")
    total = 0.0
    for q in kept:
        with naming_question(q):
            total += score(run[q], qrels[q], k)
    return total / len(kept)


def micro_recall(run: Mapping, qrels: Mapping, k: int) -> float:
    """Micro-averaged recall@k: Σ hits@k / Σ |R| over questions, so questions with many relevant ids weigh more.

    The macro mean (:func:`macro_mean` of recall@k, what trec_eval and this series report) gives
    every question the same weight. trec_eval: its summary line ("all") sums ``num_rel_ret`` and
    ``num_rel`` over questions; on the run cut at k (``-M k``) their ratio is this number.

    Args:
        run: ``{question_id: ranking}`` with every question of ``qrels`` (``[]`` for no results).
        qrels: ``{question_id: {id: gain}}``, every question with a gain > 0.
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`macro_mean`.

    Taught in: notebooks 01_recall_at_k and 10_convention_switchboard (through switchboard).
    """
    return _pooled(run, qrels, k, lambda relevant: len(relevant))


def share_of_ceiling(run: Mapping, qrels: Mapping, k: int) -> float:
    """Mean precision@k divided by the precision@k ceiling: Σ hits@k / Σ min(|R|, k), a ratio of means.

    The ceiling is the mean of min(|R|, k) / k (:func:`~retrieval_eval.evaluation.precision_ceiling`).
    trec_eval: none; its ``relative_P.k`` is the mean of the per-question ratios
    (:func:`capped_recall`), which weighs every question alike.

    Args:
        run: ``{question_id: ranking}`` with every question of ``qrels`` (``[]`` for no results).
        qrels: ``{question_id: {id: gain}}``, every question with a gain > 0.
        k: the cut-off, an integer >= 1.

    Raises:
        ValueError: as :func:`macro_mean`.

    Taught in: notebooks 02_precision_at_k and 10_convention_switchboard (through switchboard).
    """
    k = check_positive_int(k)
    return _pooled(run, qrels, k, lambda relevant: min(len(relevant), k))


def _pooled(run: Mapping, qrels: Mapping, k: int, most: Callable[[set], int]) -> float:
    """Σ hits@k / Σ most(R) over questions."""
    _check_questions(run, qrels)
    hits = best = 0
    for q, gains in qrels.items():
        with naming_question(q):
            ranked, relevant, k = _question(run[q], gains, k)
        hits, best = hits + _hits(ranked, relevant, k), best + most(relevant)
    return hits / best


# --- the switchboard ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One row of the switchboard: a per-question score and how trec_eval computes the same number.

    ``measure`` is the trec_eval measure ("" when there is none), with ``{k}`` for the cut-off;
    ``cut_run`` says trec_eval must read the ranking cut at k (``-M k``); ``exponential`` that it
    must read qrels relabelled with :func:`exponential_gains`.

    Not taught; the rows of switchboard (notebook 10_convention_switchboard).
    """

    name: str
    formula: str
    score: Callable[[Sequence[str], Mapping[str, float], int], float]
    measure: str = ""
    cut_run: bool = False
    exponential: bool = False

    def trec_eval(self, k: int) -> str:
        """The trec_eval measure and options as a reader would type them, or "none".

        Args:
            k: the cut-off written into the measure name, an integer.

        Not taught; used by switchboard (notebook 10_convention_switchboard).
        """
        if not self.measure:
            return "none"
        options = [" -M " + str(k)] * self.cut_run + [", qrels relabelled 2^g − 1"] * self.exponential
        return self.measure.format(k=k) + "".join(options)


VARIANTS = [
    Variant("hit rate (success@k)", "1 if hits@k > 0", hit_rate, "success.{k}"),
    Variant("recall@k", "hits@k / |R|", lambda r, g, k: recall_at_k(r, relevant_ids(g), k), "recall.{k}"),
    Variant("capped recall@k", "hits@k / min(|R|, k)", capped_recall, "relative_P.{k}"),
    Variant("precision@k", "hits@k / k", lambda r, g, k: precision_at_k(r, relevant_ids(g), k), "P.{k}"),
    Variant("precision of returned", "hits@k / min(k, returned)", precision_of_returned, "set_P", cut_run=True),
    Variant("F1@k", "2·P@k·R@k / (P@k + R@k)", f1_at_k),
    Variant("R-precision", "hits@|R| / |R|", lambda r, g, k: r_precision(r, relevant_ids(g)), "Rprec"),
    Variant("RR (no cut-off)", "1 / first relevant rank", lambda r, g, k: reciprocal_rank(r, relevant_ids(g)),
            "recip_rank"),
    Variant("RR@k", "RR if that rank ≤ k, else 0", lambda r, g, k: reciprocal_rank(r, relevant_ids(g), k),
            "recip_rank", cut_run=True),
    Variant("AP (no cut-off)", "Σ P@r over relevant r / |R|", lambda r, g, k: average_precision(r, relevant_ids(g)),
            "map"),
    Variant("AP@k", "Σ P@r over relevant r ≤ k / |R|", ap_at_k, "map_cut.{k}"),
    Variant("context precision (RAG tools)", "Σ P@r over relevant r ≤ k / hits@k", context_precision),
    Variant("nDCG@k", "DCG@k / IDCG@k from all judged", ndcg_at_k, "ndcg_cut.{k}"),
    Variant("nDCG@k, gain 2^g − 1", "the same, gains 2^g − 1", lambda r, g, k: ndcg_at_k(r, exponential_gains(g), k),
            "ndcg_cut.{k}", exponential=True),
    Variant("nDCG@k, ideal from retrieved", "DCG@k / IDCG@k of the top k", ndcg_retrieved_ideal),
]


def switchboard(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int) -> pd.DataFrame:
    """Every variant on one run, side by side: per-question values, the mean, the trec_eval measure.

    One row per :data:`VARIANTS` entry (its per-question values and their macro mean, an empty
    ranking counting 0 as with trec_eval ``-c``), then three rows computed over all questions at
    once: recall@k with empty rankings dropped (pytrec_eval, and trec_eval up to 9.0 without ``-c``;
    trec_eval 10.0 without ``-c`` stops with an error), micro recall@k
    (:func:`micro_recall`) and the share of the ceiling (:func:`share_of_ceiling`), whose
    per-question cells are empty.

    Args:
        run: ``{question_id: ranking}`` with every question of ``qrels`` (``[]`` for no results).
        qrels: ``{question_id: {id: gain}}``, every question with a gain > 0.
        k: the cut-off, an integer >= 1.

    Returns:
        A DataFrame indexed by variant name with columns ``formula``, ``trec_eval``, one column per
        question and ``mean``.

    Raises:
        ValueError: as :func:`macro_mean` (names the question).

    Taught in: notebook 10_convention_switchboard.
    """
    _check_questions(run, qrels)
    k = check_positive_int(k)
    rows = {}
    for variant in VARIANTS:
        values = {}
        for q, gains in qrels.items():
            with naming_question(q, f"{variant.name}, "):
                values[q] = variant.score(run[q], gains, k)
        rows[variant.name] = {"formula": variant.formula, "trec_eval": variant.trec_eval(k), **values,
                              "mean": sum(values.values()) / len(values)}
    recall = VARIANTS[1].score
    rows["recall@k, empty rankings dropped"] = {"formula": "mean over non-empty rankings",
                                                "trec_eval": f"recall.{k} without -c (≤ 9.0)",
                                                "mean": macro_mean(recall, run, qrels, k, drop_empty=True)}
    rows["recall@k, micro"] = {"formula": "Σ hits@k / Σ |R|", "trec_eval": f"num_rel_ret / num_rel, summed, -M {k}",
                               "mean": micro_recall(run, qrels, k)}
    rows["share of the ceiling"] = {"formula": "Σ hits@k / Σ min(|R|, k)", "trec_eval": "none",
                                    "mean": share_of_ceiling(run, qrels, k)}
    return pd.DataFrame.from_dict(rows, orient="index").reindex(columns=["formula", "trec_eval", *qrels, "mean"])


def trec_eval_means(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int) -> pd.Series:
    """The switchboard's means as trec_eval (through pytrec_eval) computes them; NaN where it has no measure.

    The run is handed over with scores strictly decreasing with rank, so trec_eval reads our order;
    a question with an empty ranking is handed over empty, which pytrec_eval scores 0 (as ``-c``),
    or left out for the "empty rankings dropped" row. Gains must be whole numbers (trec_eval reads
    integer labels).

    Args:
        run: ``{question_id: ranking}`` with every question of ``qrels`` (``[]`` for no results).
        qrels: ``{question_id: {id: gain}}`` with whole-number gains, every question with a gain > 0.
        k: the cut-off, an integer >= 1.

    Returns:
        A Series indexed like :func:`switchboard`'s rows.

    Raises:
        ValueError: as :func:`macro_mean`, before pytrec_eval is called (it would stop with a
            ``TypeError`` on an id that is not a str).

    Taught in: notebook 10_convention_switchboard.
    """
    import pytrec_eval  # the reference, imported only when asked for

    _check_questions(run, qrels)
    k = check_positive_int(k)
    labels = {q: {d: int(g) for d, g in gains.items()} for q, gains in qrels.items()}

    def per_question(measure: str, ranked: Mapping, judged: Mapping) -> dict:
        scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in ranked.items()}
        out = pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(scored)
        return {q: next(iter(values.values())) for q, values in out.items()}

    def mean(values: dict) -> float:
        return sum(values.values()) / len(values)

    cut = {q: list(r)[:k] for q, r in run.items()}
    means = {}
    for variant in VARIANTS:
        if variant.measure:
            judged = {q: exponential_gains(g) for q, g in labels.items()} if variant.exponential else labels
            means[variant.name] = mean(per_question(variant.measure.format(k=k), cut if variant.cut_run else run, judged))
        else:
            means[variant.name] = float("nan")
    non_empty = {q: r for q, r in run.items() if r}
    means["recall@k, empty rankings dropped"] = mean(per_question(f"recall.{k}", non_empty, labels))
    found, relevant = per_question("num_rel_ret", cut, labels), per_question("num_rel", run, labels)
    means["recall@k, micro"] = sum(found.values()) / sum(relevant.values())
    means["share of the ceiling"] = float("nan")
    return pd.Series(means, name="pytrec_eval")
