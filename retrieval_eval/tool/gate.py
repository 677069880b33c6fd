"""``retrieval-eval gate`` (and ``make gate``): is the candidate run worse than the baseline on the golden set? A
one-sided paired test over the questions, not a threshold: exit 0 not shown worse, 1 worse by more than ``MARGIN``
(``MODE=non-inferiority``: 1 unless shown within it), 2 bad input. Labels, run files and their checks are
``evaluate-runs``'s; :func:`~retrieval_eval.analysis.regression.gate` is the same check for a pytest. It writes
``summary.md`` (capped for a pull-request comment), ``gate.json`` and ``diff.csv`` (every question that changed), a
JUnit XML file with ``JUNIT``, and says how old the baseline is and whether it was scored alike (from ``HISTORY``)."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from ..analysis.regression import Verdict, gate
from ..core.paths import ROOT
from ..inputs.text import escape
from .cli import claim, evaluate_runs, read_parameters
from .history import append_history, baseline_notes, history_rows, settings_fingerprint
from .report import csv_text, write_file

SUMMARY_CHARS = 30_000  # two summaries fit one pull-request comment (GitHub's limit: 65,536 characters)


def _shown(path: Path) -> str:
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


def _ranks(row) -> tuple[str, str]:
    return str(row[3] or "—"), str(row[4] or "—")


PRINTED_LINES = 50  # the per-question diff a terminal shows; the rest is in diff.csv


def diff_lines(verdict: Verdict, limit: int = PRINTED_LINES) -> list[str]:
    """The per-question diff as printed: one line per question that lost or gained, largest losses first, at most
    ``limit`` of them and a line saying how many more diff.csv holds."""
    lines = [f"{'lost  ' if row.candidate < row.baseline else 'gained'} {row.question}: {row.baseline:.3f} → "
             f"{row.candidate:.3f} (first relevant at rank {' → '.join(_ranks(row))})"
             for row in verdict.diff.head(limit).itertuples(index=False)]
    more = len(verdict.diff) - len(lines)
    return lines + [f"… and {more:,} more of {len(verdict.diff):,} questions that changed: all of them are in diff.csv"] * (more > 0)


def summary_markdown(verdict: Verdict, baseline: str, candidate: str, limit: int = SUMMARY_CHARS) -> str:
    """The summary for a CI comment: the verdict, its sentence, and the per-question diff as a table, largest losses
    first, cut to at most ``limit`` characters ("… and N more": all of them are in diff.csv and gate.json)."""
    md = lambda text: escape(text, markdown=True)  # noqa: E731
    head = "\n".join([f"## Retrieval gate: {'❌' if verdict.worse else '✅'} {verdict.label}", "",
                      f"Baseline {md(baseline)}, candidate {md(candidate)}.", "", md(verdict.sentence), "", ""])
    if verdict.diff.empty:
        return head + "No question changed.\n"
    lines, size = ["| question | baseline | candidate | baseline rank | candidate rank |", "|---|---|---|---|---|"], len(head)
    size += sum(len(line) + 1 for line in lines) + 120  # room for the closing line
    for shown, row in enumerate(verdict.diff.itertuples(index=False)):
        line = f"| {md(row.question)} | {row.baseline:.3f} | {row.candidate:.3f} | {' | '.join(_ranks(row))} |"
        if size + len(line) + 1 > limit:
            lines += ["", f"… and {len(verdict.diff) - shown:,} more of {len(verdict.diff):,} questions that changed: all "
                          "of them are in diff.csv and gate.json."]
            break
        lines.append(line)
        size += len(line) + 1
    return head + "\n".join(lines) + "\n"


def junit_xml(verdict: Verdict, baseline: str, candidate: str) -> bytes:
    """The verdict as a JUnit XML report, one test case for the gated metric: a ``<failure>`` with the sentence as its
    message when the gate fails; the baseline's notes in ``<system-out>`` (what GitHub, GitLab and Jenkins show)."""
    failures = str(int(verdict.worse))
    suites = ET.Element("testsuites", name="retrieval gate", tests="1", failures=failures, errors="0")
    suite = ET.SubElement(suites, "testsuite", name="retrieval gate", tests="1", failures=failures, errors="0",
                          skipped="0", time="0")
    case = ET.SubElement(suite, "testcase", classname="retrieval gate", time="0",
                         name=f"{verdict.metric}: {candidate} against {baseline}")
    if verdict.worse:
        ET.SubElement(case, "failure", message=verdict.sentence, type=verdict.label).text = "\n".join(diff_lines(verdict))
    ET.SubElement(case, "system-out").text = "\n".join([verdict.sentence, *diff_lines(verdict)])
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True) + b"\n"


def main(environ: Mapping[str, str] | None = None) -> int:
    """``gate``: 0 not shown worse, 1 worse beyond the margin (or not shown within it), 2 bad input (one message)."""
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
        notes = baseline_notes(values["HISTORY"], paths[0], settings_fingerprint(ev), values["MAX_AGE"])
        verdict = dataclasses.replace(verdict, notes=notes)
        names = [_shown(path) for path in paths]
        folder = claim(output_dir, values["REPORT"] or f"gate-{paths[1].stem}"[:90], "REPORT" in values["given"])
        write_file(folder, "summary.md", summary_markdown(verdict, *names).encode("utf-8"), output_dir)
        write_file(folder, "gate.json", json.dumps(verdict.as_dict(), indent=1, default=str).encode("utf-8"), output_dir)
        write_file(folder, "diff.csv", csv_text(verdict.diff).encode("utf-8"), output_dir)
        if values["JUNIT"]:
            values["JUNIT"].write_bytes(junit_xml(verdict, *names))
        if values["HISTORY"]:
            rows = history_rows(ev, values["LABEL"], {"candidate": paths[1].name}, verdict.label, {"candidate": paths[1]})
            print(f"History {append_history(values['HISTORY'], rows)}")
    except (ValueError, OSError) as exc:
        print(f"gate: {exc}\ngate: bad input, nothing was compared (exit 2).", file=sys.stderr)
        return 2
    print(*diff_lines(verdict), sep="\n")
    print(f"{verdict.sentence}\nSummary: {folder / 'summary.md'}\nJSON: {folder / 'gate.json'}")
    if environ.get("GITHUB_ACTIONS") == "true":  # a warning on the run's page
        print(*(f"::warning title=retrieval gate::{note}" for note in notes if note.startswith("Warning")), sep="\n")
    return verdict.status


if __name__ == "__main__":
    sys.exit(main())
