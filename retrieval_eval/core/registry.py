"""The registry of metrics, :data:`METRICS`, which every table, plot, widget, paired test and report reads (a fifth
metric is one :func:`register_metric` call), and each metric's batch kernel: the same value as its readable definition
in :mod:`.metrics` (a test checks they agree), for every question at once."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .metrics import (
    average_precision,
    context_precision,
    f1_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
    relevant_ids,
)


class Judged(NamedTuple):
    """Every question at once, as the batch kernels read it: row = question, column r − 1 = rank r."""

    gains: np.ndarray  #: the judged gain at each rank (0: unjudged, not relevant or no chunk), questions × depth
    ideal: np.ndarray  #: each question's judged gains, highest first (the ideal ranking), questions × depth
    n_relevant: np.ndarray  #: how many chunks of each question have gain > 0

    def hits(self, k: int) -> np.ndarray:
        return (self.gains[:, :k] > 0).sum(axis=1)


def _discount(k: int) -> np.ndarray:
    return 1 / np.log2(np.arange(2, k + 2))


def _first_within(judged: Judged, k: int) -> np.ndarray:
    """The rank of the first relevant chunk, per question; 0 when none is in the top k."""
    relevant = judged.gains[:, :k] > 0
    return np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, 0)


@dataclass(frozen=True)
class Metric:
    """One metric, once: its name in tables, its label, trec_eval's measure (``{k}`` filled in; without ``{k}``, on
    the run cut at k), and how it is computed. ``score(ranking, gains, k)`` is the readable definition for one
    question; ``batch(judged, k)`` the same for every question at once (a test checks they agree).
    ``random(positive_gains, n_chunks, k)``: the exact expected value in a uniformly random order of n chunks.
    ``shown``: in every table, plot, widget and report unless other metrics are named (False: only when named);
    ``tested``: also compared in pairs and given an interval (:func:`~retrieval_eval.analysis.comparisons.
    paired_comparisons`, the report)."""

    name: str
    label: str
    trec: str
    score: Callable[[Sequence[str], Mapping[str, float], int], float]
    batch: Callable[[Judged, int], np.ndarray]
    random: Callable[[list, int, int], float] | None = None
    shown: bool = True
    tested: bool = True

    def at(self, k: int) -> str:
        return self.label.format(k=k)


METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (or replace the one of the same name): every table shows it from then on."""
    if not isinstance(metric, Metric):
        raise ValueError(f"register a Metric, not {type(metric).__name__}")
    METRICS[metric.name] = metric
    return metric


def _random_rr(positive: list, n: int, k: int) -> float:
    """Σ over ranks r of P(first relevant chunk at rank r) / r, for R relevant chunks among n."""
    r_count = len(positive)
    return sum(math.comb(n - r, r_count - 1) / math.comb(n, r_count) / r for r in range(1, min(k, n - r_count + 1) + 1))


def _random_ndcg(positive: list, n: int, k: int) -> float:
    """Every rank's expected gain is the mean gain over the n chunks."""
    discounts = _discount(min(k, n))
    return float(discounts.sum() * sum(positive) / n / (np.asarray(positive[:k]) @ _discount(k)[: len(positive[:k])]))


register_metric(Metric(
    "recall", "recall@{k}", "recall.{k}",
    lambda ranked, gains, k: recall_at_k(ranked, relevant_ids(gains), k),
    lambda judged, k: judged.hits(k) / judged.n_relevant,
    lambda positive, n, k: min(k, n) / n,
))
register_metric(Metric(
    "precision", "precision@{k}", "P.{k}",
    lambda ranked, gains, k: precision_at_k(ranked, relevant_ids(gains), k),
    lambda judged, k: judged.hits(k) / k,
    lambda positive, n, k: len(positive) * min(k, n) / n / k,
    tested=False,  # hits@k / k: in pairs it counts the same hits as recall@k
))
register_metric(Metric(
    "MRR", "MRR@{k}", "recip_rank",
    lambda ranked, gains, k: reciprocal_rank(ranked, relevant_ids(gains), k),
    lambda judged, k: np.divide(1.0, _first_within(judged, k), out=np.zeros(len(judged.gains)), where=_first_within(judged, k) > 0),
    _random_rr,
))
register_metric(Metric(
    "nDCG", "nDCG@{k}", "ndcg_cut.{k}",
    ndcg_at_k,
    lambda judged, k: (judged.gains[:, :k] @ _discount(k)) / (judged.ideal[:, :k] @ _discount(k)),
    _random_ndcg,
))


def _precision_at_relevant(judged: Judged, k: int) -> np.ndarray:
    """precision@r at each rank r ≤ k that holds a relevant chunk, 0 elsewhere (questions × k)."""
    relevant = judged.gains[:, :k] > 0
    return relevant * np.cumsum(relevant, axis=1) / np.arange(1, k + 1)


# Beyond the four (deep dive 14): only in a table that names them, e.g. make evaluate METRICS="recall MAP F1".
# trec "": trec_eval has no such measure (the tests build it from P, recall and map_cut).
for _metric in (
    Metric("MAP", "MAP@{k}", "map_cut.{k}", average_precision,
           lambda judged, k: _precision_at_relevant(judged, k).sum(axis=1) / judged.n_relevant, shown=False),
    Metric("R-precision", "R-precision@{k}", "Rprec", r_precision, lambda judged, k: (
        (judged.gains[:, :k] > 0) & (np.arange(k) < judged.n_relevant[:, None])).sum(axis=1) / judged.n_relevant,
        shown=False),  # the relevant chunks among the top min(|R|, k)
    Metric("F1", "F1@{k}", "", f1_at_k, lambda judged, k: 2 * judged.hits(k) / (k + judged.n_relevant), shown=False),
    Metric("context-precision", "context precision@{k}", "", context_precision, lambda judged, k: np.divide(
        _precision_at_relevant(judged, k).sum(axis=1), judged.hits(k), out=np.zeros(len(judged.gains)),
        where=judged.hits(k) > 0), shown=False),
):
    register_metric(_metric)


def shown_metrics() -> list[str]:
    """The registered metrics every table, plot, widget and report shows unless others are named, in registry order."""
    return [name for name, metric in METRICS.items() if metric.shown]


def tested_metrics() -> list[str]:
    """The shown metrics also compared in pairs and given intervals, in registry order."""
    return [name for name, metric in METRICS.items() if metric.shown and metric.tested]
