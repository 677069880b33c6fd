"""The documented commands themselves, in their own processes: ``retrieval-eval`` (the console command the package
installs) with its verbs, flags and exit statuses 0 / 1 / 2, the gate's JUnit file and capped summary, the baseline's
age and settings from the history, and ``make gate``, which reports any failure as 2."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from retrieval_eval.analysis.regression import gate
from retrieval_eval.inputs.trec import write_trec_qrels, write_trec_run
from retrieval_eval.tool.cli import PARAMETERS
from retrieval_eval.tool.gate import SUMMARY_CHARS, summary_markdown
from retrieval_eval.tool.history import baseline_notes, read_history

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).parent / "retrieval-eval"
CLEAN = {name: value for name, value in os.environ.items() if name not in {*PARAMETERS, "START_DIR", "MAKEFLAGS", "MFLAGS"}}


def golden(folder: Path, n: int, lost: int = 0) -> list[str]:
    """qrels.txt, base.trec and new.trec for n questions, the candidate's first ``lost`` relevant chunks moved out of
    the top 3; the gate's flags for them."""
    qrels = {f"q{i:03d}": {f"d{i}": 1} for i in range(n)}
    base = {q: [next(iter(g)), "x1", "x2", "x3"] for q, g in qrels.items()}
    new = {q: (r[1:] + r[:1] if i < lost else r) for i, (q, r) in enumerate(base.items())}
    write_trec_qrels(qrels, folder / "qrels.txt")
    write_trec_run(base, folder / "base.trec", "base")
    write_trec_run(new, folder / "new.trec", "new")
    return ["--qrels", "qrels.txt", "--baseline", "base.trec", "--candidate", "new.trec"]


def run(folder: Path, *args: str, command=(str(COMMAND),)) -> subprocess.CompletedProcess:
    env = {**CLEAN, "RETRIEVAL_EVAL_OUTPUT": str(folder / "output"), "RETRIEVAL_EVAL_CACHE": str(folder / "cache")}
    return subprocess.run([*command, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # a process per case
@pytest.mark.parametrize("n, lost, flags, status", [
    (40, 20, [], 1), (40, 0, [], 0), (40, 2, ["--margin", "0.1"], 0),
    (5, 0, ["--margin", "0.01", "--mode", "non-inferiority"], 1),  # no evidence on 5 questions
    (47, 0, ["--margin", "0.10", "--mode", "non-inferiority"], 0),
    (40, 0, ["--margin", "2"], 2), (40, 0, ["--mode", "non-inferiority"], 2), (40, 0, ["--metric", "ERR"], 2),
])
def test_retrieval_eval_gate_exits_with_the_verdict(tmp_path, n, lost, flags, status):
    done = run(tmp_path, "gate", *golden(tmp_path, n, lost), *flags, "--junit", "gate.xml")
    assert done.returncode == status, done.stderr
    if status == 2:
        assert "bad input, nothing was compared (exit 2)" in done.stderr and not (tmp_path / "gate.xml").exists()
        return
    result = json.loads(next((tmp_path / "output").glob("*/gate.json")).read_text())
    assert result["exit"] == status and result["sentence"] in done.stdout
    suite = ET.parse(tmp_path / "gate.xml").getroot()
    assert suite.tag == "testsuites" and suite.get("failures") == str(status)
    (case,) = suite.iter("testcase")
    failures = case.findall("failure")
    assert len(failures) == status and all(f.get("message") == result["sentence"] for f in failures)
    assert case.get("name").startswith("recall@3: new.trec against base.trec")


@pytest.mark.slow
def test_a_malformed_file_is_exit_2_naming_file_and_line(tmp_path):
    flags = golden(tmp_path, 10)
    with open(tmp_path / "new.trec", "a") as handle:
        handle.write("q001 Q0 d1 1 high new\n")
    done = run(tmp_path, "gate", *flags)
    assert done.returncode == 2 and "new.trec:41:" in done.stderr and "score 'high' is not a number" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["evaluate", "evaluate-runs", "gate", "history"])
def test_each_verb_has_help_with_its_flags_and_exit_statuses(tmp_path, verb):
    done = run(tmp_path, verb, "--help")
    assert done.returncode == 0 and "exit status: 0" in done.stdout
    expected = {"gate": ["--baseline", "--candidate", "--qrels", "--metric", "--k", "--margin", "--mode", "--junit"],
                "evaluate-runs": ["--runs", "--qrels", "--ks"], "evaluate": ["--corpus", "--golden", "--chunk-size"],
                "history": ["--history"]}[verb]
    assert all(flag in done.stdout for flag in expected)
    assert run(tmp_path, verb, "--bogus").returncode == 2


@pytest.mark.slow
def test_make_gate_reports_a_worse_run_as_2(tmp_path):
    """GNU make turns a failed recipe into status 2: CI calls retrieval-eval gate, which exits 1 (the test above)."""
    golden(tmp_path, 40, 20)
    make = ["make", "-C", str(ROOT), "--no-print-directory", "gate"]
    params = [f"QRELS={tmp_path / 'qrels.txt'}", f"BASELINE={tmp_path / 'base.trec'}", f"CANDIDATE={tmp_path / 'new.trec'}"]
    worse, equal = run(tmp_path, *params, command=make), run(tmp_path, *params[:2], f"CANDIDATE={tmp_path / 'base.trec'}", command=make)
    assert (worse.returncode, equal.returncode) == (2, 0), worse.stderr + equal.stderr
    assert "Worse: recall@3" in worse.stdout


def test_the_summary_stays_under_the_cap_at_100000_questions():
    n = 100_000
    qrels = {f"question-{i:06d}": {f"d{i}": 1} for i in range(n)}
    base = {q: [next(iter(g))] for q, g in qrels.items()}
    cand = {q: (["x"] if i % 2 else r) for i, (q, r) in enumerate(base.items())}  # half of them lost
    verdict = gate(base, cand, qrels, "recall", 1)
    text = summary_markdown(verdict, "base.trec", "new.trec")
    assert verdict.worse and len(text) <= SUMMARY_CHARS < 2**20
    assert text.rstrip().endswith("of 50,000 questions that changed: all of them are in diff.csv and gate.json.")
    assert text.count("| 1.000 | 0.000 |") + int(text.split("… and ")[1].split(" more")[0].replace(",", "")) == n // 2


def test_the_baseline_is_dated_and_its_settings_compared_by_the_history(tmp_path):
    flags = golden(tmp_path, 40)
    done = run(tmp_path, "gate", *flags, "--history", "h.jsonl")
    assert done.returncode == 0 and "Warning: no row of the history h.jsonl holds the baseline base.trec" in done.stdout
    assert run(tmp_path, "evaluate-runs", "--runs", "base.trec", "--qrels", "qrels.txt", "--history", "h.jsonl").returncode == 0
    (row,) = [r for r in read_history(tmp_path / "h.jsonl") if r["run"] == "base.trec"]
    fresh = baseline_notes(tmp_path / "h.jsonl", tmp_path / "base.trec", row["settings"], 7)
    assert len(fresh) == 1 and fresh[0].startswith("The baseline was recorded 0.0 days ago")
    later = datetime.fromisoformat(row["time"]) + timedelta(days=9)
    stale = baseline_notes(tmp_path / "h.jsonl", tmp_path / "base.trec", "other", 7, now=later.astimezone(timezone.utc))
    assert [note[:28] for note in stale] == ["The baseline was recorded 9.", "Warning: the baseline is 9 d", "Warning: the baseline was sc"]
    assert "9 days old, more than MAX_AGE = 7" in stale[1] and "scored with other settings" in stale[2]
    done = run(tmp_path, "gate", *flags, "--history", "h.jsonl", "--max-age", "1", "--junit", "g.xml")
    assert done.returncode == 0 and "The baseline was recorded 0.0 days ago" in done.stdout
    assert "The baseline was recorded" in ET.parse(tmp_path / "g.xml").getroot().find(".//system-out").text
