"""Evaluation tables: every registered metric for every run, question and cut-off k. One engine: the input is
checked once, each run becomes a questions × ranks matrix of gains (:func:`judge`), and each metric's batch
kernel reads it; the per-question definitions give the same values (tested)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import chain, islice

import numpy as np
import pandas as pd

from .checks import Qrels, Run, check_k, check_ks, check_list, check_qrels, check_runs
from .metrics import first_relevant_rank, relevant_ids
from .registry import METRICS, Judged, shown_metrics

KS = (1, 3, 5, 10)  # the cut-offs of the tables
RANK_COLUMNS = ("question", "slice", "n_relevant")  # first_relevant_ranks' own columns, before the runs'


def judge(run: Run, qrels: Qrels, depth: int) -> Judged:
    """The gains matrix of a checked run (questions in qrels order × ``depth`` ranks) and its ideal."""
    rankings = [run[qid] for qid in qrels]
    top = [judged.get(doc_id, 0) for judged, ranked in zip(qrels.values(), rankings) for doc_id in islice(ranked, depth)]
    gains, ideal = np.zeros((len(qrels), depth)), np.zeros((len(qrels), depth))
    gains[np.arange(depth) < np.fromiter(map(len, rankings), int, len(qrels))[:, None]] = top  # row by row
    values = np.fromiter(chain.from_iterable(map(dict.values, qrels.values())), float)  # every judgement, then
    row = np.repeat(np.arange(len(qrels)), np.fromiter(map(len, qrels.values()), int, len(qrels)))[values > 0]
    values = values[values > 0]
    order = np.lexsort((-values, row))  # each question's relevant gains, highest first
    n_relevant = np.bincount(row, minlength=len(qrels))
    rank = np.arange(len(row)) - np.repeat(np.cumsum(n_relevant) - n_relevant, n_relevant)
    kept = rank < depth
    ideal[row[order][kept], rank[kept]] = values[order][kept]
    return Judged(np.maximum(gains, 0), ideal, n_relevant.astype(float))


def _metrics(metrics: Sequence[str] | None) -> list[str]:
    names = shown_metrics() if metrics is None else check_list(metrics, "metrics", "metric names")
    unknown = [m for m in names if m not in METRICS]
    if unknown or not names:
        raise ValueError(f"metrics must name registered metrics {list(METRICS)}, got {names}")
    return names


def _scores(run: Run, qrels: Qrels, ks: list[int], metrics: list[str]) -> pd.DataFrame:
    judged = judge(run, qrels, max(ks))
    columns = {(m, k): METRICS[m].batch(judged, k) for m in metrics for k in ks}
    return pd.DataFrame(columns, index=pd.Index(list(qrels), name="question")).rename_axis(columns=["metric", "k"])


def batch_scores(run: Mapping, qrels: Mapping, ks: Sequence[int] = KS, metrics: Sequence[str] | None = None,
                 chunk_ids: Collection[str] | None = None) -> pd.DataFrame:
    """Every metric at every k for one run, indexed by question (qrels order), columns ``(metric, k)``; its
    ``.mean()`` is the run's row of :func:`evaluate`. Questions the qrels do not hold are ignored."""
    ks, metrics = check_ks(ks), _metrics(metrics)
    runs, qrels = check_runs({"run": run}, qrels, chunk_ids)
    return _scores(runs["run"], qrels, ks, metrics)


def per_question_scores(runs: Mapping, qrels: Mapping, ks: Sequence[int] = KS, metrics: Sequence[str] | None = None,
                        chunk_ids: Collection[str] | None = None) -> pd.DataFrame:
    """Long form, one row per run, question, metric and k: columns ``run, question, metric, k, value``
    (the layout of a report's ``scores.csv``). "MRR" rows hold the reciprocal rank at k."""
    ks, metrics = check_ks(ks), _metrics(metrics)
    runs, qrels = check_runs(runs, qrels, chunk_ids)
    parts = [_scores(run, qrels, ks, metrics).stack(["metric", "k"], future_stack=True).rename("value").reset_index()
             .assign(run=name) for name, run in runs.items()]
    return pd.concat(parts, ignore_index=True)[["run", "question", "metric", "k", "value"]]


def evaluate(runs: Mapping, qrels: Mapping, ks: Sequence[int] = KS, metrics: Sequence[str] | None = None,
             chunk_ids: Collection[str] | None = None) -> pd.DataFrame:
    """The summary table: each metric's mean over the questions, one row per run, columns ``(metric, k)``; with
    ``chunk_ids`` every id must be one of them."""
    ks, metrics = check_ks(ks), _metrics(metrics)
    runs, qrels = check_runs(runs, qrels, chunk_ids)
    table = pd.DataFrame({name: _scores(run, qrels, ks, metrics).mean() for name, run in runs.items()}).T
    return table.rename_axis("run")  # the columns keep _scores' names (metric, k)


def first_relevant_ranks(runs: Mapping, qrels: Mapping, golden: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per question (index ``question_id``, qrels order): ``question`` and ``slice`` (from ``golden``, when
    given), ``n_relevant``, then each run's rank of the first relevant chunk (``<NA>``: none in the ranking)."""
    runs, qrels = check_runs(runs, qrels)
    clash = set(RANK_COLUMNS) & set(runs)
    if clash:
        raise ValueError(f"run name(s) {sorted(clash)} clash with the table's own columns")
    table = pd.DataFrame(index=pd.Index(list(qrels), name="question_id"))
    if golden is not None:
        by_id = golden.set_index("id")
        missing = [q for q in qrels if q not in by_id.index]
        if missing:
            raise ValueError(f"question(s) {missing[:5]} of the qrels are not in the golden set")
        table["question"] = by_id.loc[table.index, "question"].values
        table["slice"] = by_id.loc[table.index, "slice"].values if "slice" in by_id else ""
    else:
        table["question"], table["slice"] = "", ""
    table["n_relevant"] = [len(relevant_ids(g)) for g in qrels.values()]
    for name, run in runs.items():
        table[name] = pd.array([first_relevant_rank(run[q], relevant_ids(g)) for q, g in qrels.items()], dtype="Int64")
    return table


def run_columns(ranks: pd.DataFrame) -> list[str]:
    """The run columns of a :func:`first_relevant_ranks` table."""
    return [c for c in ranks.columns if c not in RANK_COLUMNS]


def precision_ceiling(qrels: Mapping, k: int) -> float:
    """The highest mean precision@k any ranking can reach: the mean of min(|relevant|, k) / k."""
    k, qrels = check_k(k), check_qrels(qrels)
    return sum(min(len(relevant_ids(g)), k) / k for g in qrels.values()) / len(qrels)


def random_baseline(qrels: Mapping, n_chunks: int, k: int) -> pd.Series:
    """The exact expected value of each metric at k for a uniformly random order of ``n_chunks`` chunks,
    averaged over the questions (metrics that register a ``random`` formula)."""
    n, k, qrels = check_k(n_chunks, "n_chunks"), check_k(k), check_qrels(qrels)
    positives = {q: sorted((v for v in g.values() if v > 0), reverse=True) for q, g in qrels.items()}
    too_many = [q for q, p in positives.items() if len(p) > n]
    if too_many:
        raise ValueError(f"question(s) {too_many[:5]} have more relevant chunks than the {n} chunks ranked")
    return pd.Series({m.name: float(np.mean([m.random(p, n, k) for p in positives.values()]))
                      for m in map(METRICS.get, shown_metrics()) if m.random}, name="random order (expected)").rename_axis("metric")


def disagree_at_k(ranks: pd.DataFrame, k: int) -> pd.Series:
    """Per question: do the runs of a :func:`first_relevant_ranks` table disagree on a relevant chunk in the top k?"""
    k = check_k(k)
    return (ranks[run_columns(ranks)].fillna(k + 1) <= k).nunique(axis=1) > 1
