"""examples/ci/retrieval-gate.yml: the steps with an id run as written (bash -e, the workflow's env, GitHub's
variables stood in for) in two builds, the second on a worse or an equal candidate: the job fails on the worse one, and
the summaries and the history rows (restored from the cache, appended) land where the workflow says."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from retrieval_eval.inputs.trec import write_trec_qrels, write_trec_run
from retrieval_eval.tool.cli import PARAMETERS
from retrieval_eval.tool.history import read_history

WORKFLOW = Path(__file__).resolve().parent.parent / "examples" / "ci" / "retrieval-gate.yml"
QRELS = {f"q{i:02d}": {f"d{i}": 1} for i in range(40)}
BASELINE = {q: [*g, "x1", "x2", "x3"] for q, g in QRELS.items()}


def build(folder: Path, steps: dict, workflow: dict, candidate: dict, number: int) -> dict:
    """One CI run in a fresh checkout ``folder``: the steps with an id, as written; their exit statuses."""
    (folder / "eval").mkdir(parents=True)
    write_trec_qrels(QRELS, folder / workflow["env"]["QRELS"])
    write_trec_run(BASELINE, folder / workflow["env"]["BASELINE"], "main")
    write_trec_run(BASELINE, folder / workflow["env"]["RELEASE"], "release")
    write_trec_run(candidate, folder / workflow["env"]["CANDIDATE"], "pr")
    inherited = {name: value for name, value in os.environ.items() if name not in {*PARAMETERS, "START_DIR"}}  # make exports them
    env = {**inherited, **workflow["env"], "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_STEP_SUMMARY": str(folder / "step_summary.md"), "GITHUB_SHA": "0123456789abcdef"}
    env.pop("PWD", None)
    return {name: subprocess.run(["bash", "-e", "-c", re.sub(r"\$\{\{ github\.event\.number \}\}", str(number), step["run"])],
                                 cwd=folder, env=env, capture_output=True, text=True).returncode
            for name, step in steps.items()}


@pytest.mark.slow  # the workflow's steps in bash, each a make target in its own process
@pytest.mark.parametrize("lost, failed", [(20, True), (0, False)])
def test_the_workflow_gates_a_pull_requests_run_and_the_cached_history_builds_up(tmp_path, lost, failed):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = {step["id"]: step for step in workflow["jobs"]["gate"]["steps"] if "id" in step}
    assert list(steps) == ["gate", "release", "summary"] and steps["release"]["if"] == steps["summary"]["if"] == "always()"
    cached = [s["with"]["path"] for s in workflow["jobs"]["gate"]["steps"] if s.get("uses", "").startswith("actions/cache/")]
    assert cached == ["history", "history"] and Path(workflow["env"]["HISTORY"]).parent == Path("history")
    candidate = {q: (r[1:] + r[:1] if i < lost else r) for i, (q, r) in enumerate(BASELINE.items())}
    assert build(tmp_path / "1", steps, workflow, BASELINE, 6) == {"gate": 0, "release": 0, "summary": 0}
    shutil.copytree(tmp_path / "1" / "history", tmp_path / "2" / "history")  # what the cache restores
    status = build(tmp_path / "2", steps, workflow, candidate, 7)
    assert status == {"gate": 1 if failed else 0, "release": 1 if failed else 0, "summary": 0}
    summary = (tmp_path / "2" / "step_summary.md").read_text()
    assert summary.startswith("## Retrieval gate: " + ("❌ worse" if failed else "✅ not shown worse"))
    assert summary.count("## Retrieval gate: ") == 2
    verdict = "worse" if failed else "not shown worse"
    rows = read_history(tmp_path / "2" / workflow["env"]["HISTORY"])
    assert [(row["label"], row["gate"], row["run"]) for row in rows] == [
        ("PR 6 0123456", "not shown worse", "candidate.trec"), ("release vs PR 6 0123456", "not shown worse", "candidate.trec"),
        ("PR 7 0123456", verdict, "candidate.trec"), ("release vs PR 7 0123456", verdict, "candidate.trec")]
