"""``make gate BASELINE=base.trec CANDIDATE=new.trec``: is the candidate run worse than the baseline on the golden set?
A one-sided paired test over the questions, not a threshold: exit 0 not worse, 1 worse by more than ``MARGIN``, 2 bad
input. Labels, run files and their checks are ``make evaluate-runs``'s; :func:`gate` is the same check for a pytest."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.statistics import ALPHA, paired_test, permutation_test
from ..core.evaluation import per_question_scores
from ..core.metrics import first_relevant_rank, relevant_ids
from ..core.paths import ROOT
from ..core.registry import METRICS
from ..inputs.text import escape
from .cli import claim, evaluate_runs, read_parameters
from .history import append_history, history_rows
from .report import write_file

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


def _shown(path: Path) -> str:
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


def diff_lines(verdict: Verdict) -> list[str]:
    """The per-question diff as printed: one line per question that lost or gained."""
    return [f"{'lost  ' if row.candidate < row.baseline else 'gained'} {row.question}: {row.baseline:.3f} → "
            f"{row.candidate:.3f} (first relevant at rank {row._3 or '—'} → {row._4 or '—'})"
            for row in verdict.diff.itertuples(index=False)]


def summary_markdown(verdict: Verdict, baseline: str, candidate: str) -> str:
    """The summary for a CI comment: the verdict, its sentence, and the per-question diff as a table."""
    md = lambda text: escape(text, markdown=True)  # noqa: E731
    rows = [f"| {md(r.question)} | {r.baseline:.3f} | {r.candidate:.3f} | {r._3 or '—'} | {r._4 or '—'} |"
            for r in verdict.diff.itertuples(index=False)]
    table = ["| question | baseline | candidate | baseline rank | candidate rank |", "|---|---|---|---|---|", *rows]
    return "\n".join([f"## Retrieval gate: {'❌ worse' if verdict.worse else '✅ not worse'}", "",
                      f"Baseline {md(baseline)}, candidate {md(candidate)}.", "", md(verdict.sentence), "",
                      *(table if rows else ["No question changed."]), ""])


def main(environ: Mapping[str, str] | None = None) -> int:
    """``make gate``: 0 not worse, 1 worse beyond the margin, 2 bad input (one message)."""
    environ = os.environ if environ is None else environ
    output_dir = Path(environ.get("RETRIEVAL_EVAL_OUTPUT") or ROOT / "output").absolute()
    cache_dir = Path(environ.get("RETRIEVAL_EVAL_CACHE") or ROOT / ".cache").absolute()
    try:
        values = read_parameters("gate", environ, output_dir, cache_dir)
        paths = [values["BASELINE"], values["CANDIDATE"]]
        ev = evaluate_runs({**values, "RUNS": paths}, cache_dir, names=["baseline", "candidate"])
        for what, n in ev.left_out["what"].value_counts(sort=False).items():
            print(f"note: {n:,} × {what}", file=sys.stderr)
        verdict = gate(ev.runs["baseline"], ev.runs["candidate"], ev.qrels, values["METRIC"], values["K"], values["MARGIN"])
        folder = claim(output_dir, values["REPORT"] or f"gate-{paths[1].stem}"[:90], "REPORT" in values["given"])
        write_file(folder, "summary.md", summary_markdown(verdict, *map(_shown, paths)).encode("utf-8"), output_dir)
        write_file(folder, "gate.json", json.dumps(verdict.as_dict(), indent=1, default=str).encode("utf-8"), output_dir)
        if values["HISTORY"]:
            rows = history_rows(ev, values["LABEL"], {"candidate": paths[1].name}, "worse" if verdict.worse else "not worse")
            print(f"History {append_history(values['HISTORY'], rows)}")
    except (ValueError, OSError) as exc:
        print(f"make gate: {exc}\nmake gate: bad input, nothing was compared (exit 2).", file=sys.stderr)
        return 2
    print(*diff_lines(verdict), sep="\n")
    print(f"{verdict.sentence}\nSummary: {folder / 'summary.md'}\nJSON: {folder / 'gate.json'}")
    return verdict.status


if __name__ == "__main__":
    sys.exit(main())
