"""Conventions side by side: the choices that make two tools report different numbers for one ranking. Each
variant scores one question ``(ranked, gains, k)`` and names the trec_eval measure that gives the same number
("none" if none; ``-M k`` cuts each ranking at k, ``-c`` scores a missing ranking 0); :func:`switchboard` puts
them side by side. R is a question's relevant set, hits@k how many of R are in the top k."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..core.checks import (
    check_gains,
    check_k,
    check_qrels,
    check_ranking,
    check_relevant,
    check_run,
    naming_question,
)
from ..core.metrics import (
    average_precision,
    context_precision,
    f1_at_k,
    ndcg_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
    relevant_ids,
    success_at_k,
)
from ..core.registry import METRICS


def _question(ranked, gains, k) -> tuple[list, set, int]:
    return check_ranking(ranked), check_relevant(relevant_ids(gains)), check_k(k)


def hit_rate(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Success@k on gains: 1 if any relevant chunk is in the top k. Tools often call it "recall"."""
    return success_at_k(ranked, relevant_ids(gains), k)


def capped_recall(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """hits@k / min(|R|, k): recall that a ranking of k can fill (trec_eval ``relative_P.k``, BEIR's "capped recall")."""
    ranked, relevant, k = _question(ranked, gains, k)
    return len(relevant.intersection(ranked[:k])) / min(len(relevant), k)


def precision_of_returned(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """hits@k / the number returned within k (some RAG tools): hides the ceiling; an empty ranking scores 0."""
    ranked, relevant, k = _question(ranked, gains, k)
    top = ranked[:k]
    return len(relevant.intersection(top)) / len(top) if top else 0.0


def exponential_gains(gains: Mapping[str, float]) -> dict:
    """Gains relabelled 2^g − 1 (the "Burges" nDCG): a grade of 2 weighs 3 times a grade of 1, not 2."""
    return {d: 2.0 ** g - 1 if g > 0 else 0.0 for d, g in check_gains(gains).items()}


def ndcg_retrieved_ideal(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k with the ideal built from the retrieved top k only (scikit-learn's ``ndcg_score``
    on the items passed): a ranking that misses every other relevant chunk can still score 1."""
    ranked, gains, k = check_ranking(ranked), check_gains(gains), check_k(k)
    gains = {d: gains.get(d, 0) for d in ranked[:k]}
    return ndcg_at_k(ranked, gains, k) if any(g > 0 for g in gains.values()) else 0.0


def macro_mean(score: Callable, run: Mapping, qrels: Mapping, k: int, drop_empty: bool = False) -> float:
    """The mean of a per-question score over questions, as trec_eval averages. An empty ranking scores 0
    (``-c``); ``drop_empty`` leaves it out, as pytrec_eval and trec_eval ≤ 9.0 without ``-c`` do."""
    qrels = check_qrels(qrels)
    missing = [q for q in qrels if q not in run]
    if missing:
        raise ValueError(f"no ranking for question(s) {missing[:5]}: give a question with no results an empty ranking []")
    kept = [q for q in qrels if run[q] or not drop_empty]
    if not kept:
        raise ValueError("every ranking is empty: nothing is left to average")
    total = 0.0
    for q in kept:
        with naming_question(q):
            total += score(run[q], qrels[q], k)
    return total / len(kept)


def micro_recall(run: Mapping, qrels: Mapping, k: int) -> float:
    """Σ hits@k / Σ |R| over questions: a question with more relevant chunks weighs more."""
    return _pooled(run, qrels, k, len)


def share_of_ceiling(run: Mapping, qrels: Mapping, k: int) -> float:
    """Σ hits@k / Σ min(|R|, k): mean precision@k divided by its ceiling (a ratio of means)."""
    k = check_k(k)
    return _pooled(run, qrels, k, lambda relevant: min(len(relevant), k))


def _pooled(run: Mapping, qrels: Mapping, k: int, most: Callable[[set], int]) -> float:
    hits = best = 0
    qrels = check_qrels(qrels)
    run = check_run(run, qrels)
    for q, gains in qrels.items():
        with naming_question(q):
            ranked, relevant, k = _question(run[q], gains, k)
        hits, best = hits + len(relevant.intersection(ranked[:k])), best + most(relevant)
    return hits / best


def published_metrics(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int = 3,
                      per_question: bool = False) -> pd.Series | pd.DataFrame:
    """The retrieval table of the Anthropic cookbook's RAG guide by its own formulas, on each top k: per question
    precision = hits / the number returned (not k), recall = hits / |R|, MRR = 1 / first relevant rank; the table
    holds their means and F1 of the mean P and R (:func:`published_summary`); ``per_question``: the rows instead."""
    k, qrels = check_k(k), check_qrels(qrels)
    rows = {}
    for q, gains in qrels.items():
        with naming_question(q):
            if q not in run:
                raise ValueError("no ranking: give a question with no results an empty ranking []")
            rows[q] = {"precision": precision_of_returned(run[q], gains, k), "recall": recall_at_k(run[q], relevant_ids(gains), k),
                       "MRR": reciprocal_rank(run[q], relevant_ids(gains), k)}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("question")
    return table if per_question else published_summary(table)


def published_summary(rows: pd.DataFrame) -> pd.Series:
    """The cookbook's summary of per-question rows: the three means, and F1 of mean precision and mean recall."""
    p, r, rr = (float(rows[c].mean()) for c in ("precision", "recall", "MRR"))
    return pd.Series({"precision": p, "recall": r, "F1": 2 * p * r / (p + r) if p + r else 0.0, "MRR": rr},
                     name="published formulas")


@dataclass(frozen=True)
class Variant:
    """A row of the switchboard: a per-question score and the trec_eval measure that gives the same number
    (``{k}`` filled in; ``cut_run``: on each ranking cut at k, ``-M k``; ``exponential``: on qrels relabelled 2^g − 1)."""

    name: str
    formula: str
    score: Callable[[Sequence[str], Mapping[str, float], int], float]
    measure: str = ""
    cut_run: bool = False
    exponential: bool = False

    def trec_eval(self, k: int) -> str:
        if not self.measure:
            return "none"
        return self.measure.format(k=k) + f" -M {k}" * self.cut_run + ", qrels relabelled 2^g − 1" * self.exponential


def variants() -> list[Variant]:
    """The registry's shown metrics at k, then every other convention that is not one of them (the same trec_eval measure)."""
    formulas = {"recall": "hits@k / |R|", "precision": "hits@k / k", "MRR": "1 / first relevant rank if ≤ k, else 0",
                "nDCG": "DCG@k / IDCG@k from all judged"}
    registered = [Variant(m.label.format(k="k"), formulas.get(m.name, ""), m.score, m.trec, cut_run="{k}" not in m.trec)
                  for m in METRICS.values() if m.shown]
    known = {_same(v) for v in registered}
    return registered + [v for v in _CONVENTIONS if _same(v) not in known]


def _same(variant: Variant):
    """What makes two variants one: their trec_eval measure as run, else their name."""
    return (variant.measure, variant.cut_run, variant.exponential) if variant.measure else variant.name


_CONVENTIONS = [
    Variant("hit rate (success@k)", "1 if hits@k > 0", hit_rate, "success.{k}"),
    Variant("capped recall@k", "hits@k / min(|R|, k)", capped_recall, "relative_P.{k}"),
    Variant("precision of returned", "hits@k / min(k, returned)", precision_of_returned, "set_P", cut_run=True),
    Variant("F1@k", "2·P@k·R@k / (P@k + R@k)", f1_at_k),
    Variant("R-precision", "hits@|R| / |R|", lambda r, g, k: r_precision(r, g), "Rprec"),
    Variant("RR (no cut-off)", "1 / first relevant rank", lambda r, g, k: reciprocal_rank(r, relevant_ids(g)), "recip_rank"),
    Variant("AP (no cut-off)", "Σ P@r over relevant r / |R|", lambda r, g, k: average_precision(r, g), "map"),
    Variant("AP@k", "Σ P@r over relevant r ≤ k / |R|", average_precision, "map_cut.{k}"),
    Variant("context precision (RAG tools)", "Σ P@r over relevant r ≤ k / hits@k", context_precision),
    Variant("nDCG@k, gain 2^g − 1", "DCG@k / IDCG@k, gains 2^g − 1",
            lambda r, g, k: ndcg_at_k(r, exponential_gains(g), k), "ndcg_cut.{k}", exponential=True),
    Variant("nDCG@k, ideal from retrieved", "DCG@k / IDCG@k of the top k", ndcg_retrieved_ideal),
]


def switchboard(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int) -> pd.DataFrame:
    """Every variant on one run: formula, trec_eval measure, per-question values and mean; then three rows over all
    questions at once (empty rankings dropped, micro recall, share of the ceiling)."""
    k, qrels = check_k(k), check_qrels(qrels)
    run = check_run(run, qrels)
    rows = {}
    for variant in variants():
        values = {}
        for q, gains in qrels.items():
            with naming_question(q, f"{variant.name}, "):
                values[q] = variant.score(run[q], gains, k)
        rows[variant.name] = {"formula": variant.formula, "trec_eval": variant.trec_eval(k), **values,
                              "mean": sum(values.values()) / len(values)}
    recall = METRICS["recall"].score
    rows["recall@k, empty rankings dropped"] = {"formula": "mean over non-empty rankings", "trec_eval": f"recall.{k} without -c",
                                                "mean": macro_mean(recall, run, qrels, k, drop_empty=True)}
    rows["recall@k, micro"] = {"formula": "Σ hits@k / Σ |R|", "trec_eval": f"num_rel_ret / num_rel, summed, -M {k}",
                               "mean": micro_recall(run, qrels, k)}
    rows["share of the ceiling"] = {"formula": "Σ hits@k / Σ min(|R|, k)", "trec_eval": "none",
                                    "mean": share_of_ceiling(run, qrels, k)}
    return pd.DataFrame.from_dict(rows, orient="index").reindex(columns=["formula", "trec_eval", *qrels, "mean"])


def trec_eval_means(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], k: int) -> pd.Series:
    """The switchboard's means as trec_eval (through pytrec_eval) computes them; NaN where it has no measure.
    The run goes over with scores falling with rank, so trec_eval reads our order; gains must be whole numbers."""
    import pytrec_eval
    k, qrels = check_k(k), check_qrels(qrels)
    run = check_run(run, qrels)  # pytrec_eval would drop a question without a ranking and an id given twice, silently
    fractional = [q for q, gains in qrels.items() if any(g != int(g) for g in gains.values())]
    if fractional:
        raise ValueError(f"trec_eval reads whole-number gains; question(s) {fractional[:5]} have others")
    labels = {q: {d: int(g) for d, g in gains.items()} for q, gains in qrels.items()}

    def per_question(measure: str, ranked: Mapping, judged: Mapping) -> dict:
        scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in ranked.items()}
        out = pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(scored)
        return {q: next(iter(values.values())) for q, values in out.items()}

    def mean(values: dict) -> float:
        return sum(values.values()) / len(values)

    cut = {q: list(r)[:k] for q, r in run.items()}
    means = {}
    for variant in variants():
        judged = ({q: {d: int(x) for d, x in exponential_gains(g).items()} for q, g in labels.items()}
                  if variant.exponential else labels)
        means[variant.name] = (mean(per_question(variant.measure.format(k=k), cut if variant.cut_run else run, judged))
                               if variant.measure else float("nan"))
    means["recall@k, empty rankings dropped"] = mean(per_question(f"recall.{k}", {q: r for q, r in run.items() if r}, labels))
    found, relevant = per_question("num_rel_ret", cut, labels), per_question("num_rel", run, labels)
    means["recall@k, micro"] = sum(found.values()) / sum(relevant.values())
    means["share of the ceiling"] = float("nan")
    return pd.Series(means, name="pytrec_eval")
