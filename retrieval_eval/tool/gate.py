"""``make gate BASELINE=base.trec CANDIDATE=new.trec``: is the candidate run worse than the baseline on the golden set?
A one-sided paired test over the questions, not a threshold: exit 0 not shown worse, 1 worse by more than ``MARGIN``
(``MODE=non-inferiority``: 1 unless shown within it), 2 bad input. Labels, run files and their checks are ``make evaluate-runs``'s; :func:`~retrieval_eval.analysis.regression.gate`
is the same check for a pytest."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ..analysis.regression import Verdict, gate
from ..core.paths import ROOT
from ..inputs.text import escape
from .cli import claim, evaluate_runs, read_parameters
from .history import append_history, history_rows
from .report import write_file


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
    return "\n".join([f"## Retrieval gate: {'❌' if verdict.worse else '✅'} {verdict.label}", "",
                      f"Baseline {md(baseline)}, candidate {md(candidate)}.", "", md(verdict.sentence), "",
                      *(table if rows else ["No question changed."]), ""])


def main(environ: Mapping[str, str] | None = None) -> int:
    """``make gate``: 0 not shown worse, 1 worse beyond the margin (or not shown within it), 2 bad input (one message)."""
    environ = os.environ if environ is None else environ
    gc.disable()  # a run is a million objects and no cycle: the cyclic collector would walk them again and again (1 s)
    output_dir = Path(environ.get("RETRIEVAL_EVAL_OUTPUT") or ROOT / "output").absolute()
    cache_dir = Path(environ.get("RETRIEVAL_EVAL_CACHE") or ROOT / ".cache").absolute()
    try:
        values = read_parameters("gate", environ, output_dir, cache_dir)
        paths = [values["BASELINE"], values["CANDIDATE"]]
        ev = evaluate_runs({**values, "RUNS": paths, "KS": [values["K"]]}, cache_dir, names=["baseline", "candidate"])  # K only
        for what, n in ev.left_out["what"].value_counts(sort=False).items():
            print(f"note: {n:,} × {what}", file=sys.stderr)
        verdict = gate(ev.runs["baseline"], ev.runs["candidate"], ev.qrels, values["METRIC"], values["K"], values["MARGIN"],
                       ev.scores, values["MODE"])
        folder = claim(output_dir, values["REPORT"] or f"gate-{paths[1].stem}"[:90], "REPORT" in values["given"])
        write_file(folder, "summary.md", summary_markdown(verdict, *map(_shown, paths)).encode("utf-8"), output_dir)
        write_file(folder, "gate.json", json.dumps(verdict.as_dict(), indent=1, default=str).encode("utf-8"), output_dir)
        if values["HISTORY"]:
            rows = history_rows(ev, values["LABEL"], {"candidate": paths[1].name}, verdict.label)
            print(f"History {append_history(values['HISTORY'], rows)}")
    except (ValueError, OSError) as exc:
        print(f"make gate: {exc}\nmake gate: bad input, nothing was compared (exit 2).", file=sys.stderr)
        return 2
    print(*diff_lines(verdict), sep="\n")
    print(f"{verdict.sentence}\nSummary: {folder / 'summary.md'}\nJSON: {folder / 'gate.json'}")
    return verdict.status


if __name__ == "__main__":
    sys.exit(main())
