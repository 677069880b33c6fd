"""examples/ci/retrieval-gate.yml: the steps with an id run as written (bash -e, the workflow's env, GitHub's
variables stood in for) on a worse and an equal candidate: the job fails on the worse one, and the summary and the
history row land where the workflow says."""

import os
import re
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


@pytest.mark.parametrize("lost, failed", [(20, True), (0, False)])
def test_the_workflow_gates_a_pull_requests_run(tmp_path, lost, failed):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = {step["id"]: step for step in workflow["jobs"]["gate"]["steps"] if "id" in step}
    assert list(steps) == ["gate", "summary"] and steps["summary"]["if"] == "always()"
    (tmp_path / "eval").mkdir()
    write_trec_qrels(QRELS, tmp_path / workflow["env"]["QRELS"])
    write_trec_run(BASELINE, tmp_path / workflow["env"]["BASELINE"], "main")
    candidate = {q: (r[1:] + r[:1] if i < lost else r) for i, (q, r) in enumerate(BASELINE.items())}
    write_trec_run(candidate, tmp_path / workflow["env"]["CANDIDATE"], "pr")
    inherited = {name: value for name, value in os.environ.items() if name not in {*PARAMETERS, "START_DIR"}}  # make exports them
    env = {**inherited, **workflow["env"], "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "step_summary.md"), "GITHUB_SHA": "0123456789abcdef"}
    env.pop("PWD", None)
    status = {name: subprocess.run(["bash", "-e", "-c", re.sub(r"\$\{\{ github\.event\.number \}\}", "7", step["run"])],
                                   cwd=tmp_path, env=env, capture_output=True, text=True).returncode
              for name, step in steps.items()}
    assert status == {"gate": 1 if failed else 0, "summary": 0}
    summary = (tmp_path / "step_summary.md").read_text()
    assert summary.startswith("## Retrieval gate: " + ("❌ worse" if failed else "✅ not shown worse"))
    [row] = read_history(tmp_path / workflow["env"]["HISTORY"])
    assert (row["label"], row["gate"], row["run"]) == ("PR 7 0123456", "worse" if failed else "not shown worse", "candidate.trec")
