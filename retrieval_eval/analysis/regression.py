"""Regression checks: is a candidate run worse than a baseline, question by question (:func:`gate`, behind ``make
gate``), and what an approximate index costs against exact search (:func:`ann_tradeoff`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..core.evaluation import per_question_scores
from ..core.metrics import first_relevant_rank, relevant_ids
from ..core.registry import METRICS
from .statistics import ALPHA, paired_test, permutation_test

DIFF_COLUMNS = ("question", "baseline", "candidate", "baseline rank", "candidate rank")


@dataclass(frozen=True)
class Verdict:
    """What :func:`gate` found: both means, the drop beyond the margin, the paired test and its one-sided ``p``
    (None when the candidate is not below baseline − margin: nothing to test), ``worse``, and the per-question
    ``diff`` (the questions whose value changed, losses first, with both first relevant ranks; 0 = none retrieved)."""

    metric: str
    margin: float
    n: int
    baseline: float
    candidate: float
    test: dict
    p: float | None
    worse: bool
    diff: pd.DataFrame

    @property
    def status(self) -> int:
        return 1 if self.worse else 0

    @property
    def sentence(self) -> str:
        lost = int((self.diff["candidate"] < self.diff["baseline"]).sum())
        change = (f"{self.metric} went from {self.baseline:.3f} to {self.candidate:.3f} on {self.n} questions "
                  f"({self.candidate - self.baseline:+.3f}; {lost} questions lost, {len(self.diff) - lost} gained)")
        if self.worse:
            return (f"Worse: {change}, more than the margin {self.margin:g} by a one-sided paired test "
                    f"({self.test['test']}, {self.test['method']}: p = {self.p:.2g} < {ALPHA}).")
        why = (f"p = {self.p:.2g} ≥ {ALPHA}" if self.p is not None
               else f"the candidate is not below the baseline minus the margin {self.margin:g}")
        return f"Not worse: {change}; a one-sided paired test does not show it worse by more than {self.margin:g} ({why})."

    def as_dict(self) -> dict:
        return {"verdict": "worse" if self.worse else "not worse", "exit": self.status, "sentence": self.sentence,
                "metric": self.metric, "margin": self.margin, "questions": self.n, "baseline": self.baseline,
                "candidate": self.candidate, "p_one_sided": self.p, "alpha": ALPHA, "test": self.test["test"],
                "method": self.test["method"],
                "diff": self.diff.to_dict(orient="records")}


def gate(baseline: Mapping[str, Sequence[str]], candidate: Mapping[str, Sequence[str]], qrels: Mapping,
         metric: str = "recall", k: int = 3, margin: float = 0.0) -> Verdict:
    """Is ``candidate`` worse than ``baseline`` (rankings by question) at ``metric``@``k`` by more than ``margin``?
    H0: the mean drop is at most the margin. The per-question drops minus the margin are tested one-sided with
    the paired test of :mod:`~retrieval_eval.analysis.statistics` (exact McNemar when the margin is 0 and the values
    0 or 1; else sign flips of the shifted drops, symmetric under H0), whose two-sided p halves."""
    if metric not in METRICS:
        raise ValueError(f"metric must be a registered metric {list(METRICS)}, got {metric!r}")
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
        raise ValueError(f"margin must be a number from 0 up to 1, got {margin!r}")
    scores = per_question_scores({"baseline": baseline, "candidate": candidate}, qrels, [k], [metric])
    table = scores.pivot(index="question", columns="run", values="value").reindex(list(qrels))
    base, cand = table["baseline"], table["candidate"]
    test = paired_test(base, cand) if margin == 0 else permutation_test(base - margin, cand)
    drop = float((base - cand).mean()) - margin
    p = test["p"] / 2 if drop > 1e-12 else None
    ranks = {name: [first_relevant_rank(run[q], relevant_ids(qrels[q])) or 0 for q in table.index]
             for name, run in (("baseline rank", baseline), ("candidate rank", candidate))}
    diff = table.rename_axis(columns=None).reset_index().assign(**ranks)[list(DIFF_COLUMNS)]
    diff = diff[diff["baseline"] != diff["candidate"]]
    diff = diff.assign(order=diff["candidate"] - diff["baseline"]).sort_values(["order", "question"], kind="stable")
    return Verdict(METRICS[metric].at(k), float(margin), len(table), float(base.mean()), float(cand.mean()), test, p,
                   p is not None and p < ALPHA, diff.drop(columns="order").reset_index(drop=True))
