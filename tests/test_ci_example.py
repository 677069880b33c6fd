"""examples/ci/retrieval-gate.yml: actionlint (with shellcheck) finds nothing in it; the steps with an id run as
written (bash -e, the workflow's and the step's env, GitHub's variables stood in for, a stand-in for gh that keeps one
comment) in three builds: a push to main that records main's run, then two pushes to one pull request, the second
on a worse or an equal candidate. The job fails on the worse one, the comment is posted once and then updated, and the
summaries and the history rows (restored from the cache, appended) land where the workflow says."""

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
BIN = Path(sys.executable).parent
QRELS = {f"q{i:02d}": {f"d{i}": 1} for i in range(40)}
BASELINE = {q: [*g, "x1", "x2", "x3"] for q, g in QRELS.items()}
FAKE_GH = """#!/bin/bash
# gh api, as the workflow calls it: the comment list answers the id kept in $GH_STATE once a comment was posted
printf '%s\\n' "$*" >> "$GH_LOG"
case " $* " in
  *" --method POST "*) echo 4242 > "$GH_STATE" ;;
  *" --jq "*) if [ -f "$GH_STATE" ]; then cat "$GH_STATE"; fi ;;
esac
"""


def test_actionlint_and_shellcheck_find_nothing():
    done = subprocess.run([BIN / "actionlint", "-shellcheck", BIN / "shellcheck", WORKFLOW], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def github(text: str, number: int) -> str:
    return re.sub(r"\$\{\{ github\.event\.number \}\}", str(number), text).replace("${{ github.token }}", "token")


def build(folder: Path, workflow: dict, candidate: dict, event: str, number: int = 0) -> dict:
    """One CI run in a fresh checkout ``folder``: the steps with an id whose ``if`` holds for ``event``, as written;
    their exit statuses."""
    (folder / "eval").mkdir(parents=True)
    write_trec_qrels(QRELS, folder / workflow["env"]["QRELS"])
    for name, run in (("BASELINE", BASELINE), ("RELEASE", BASELINE), ("CANDIDATE", candidate)):  # main's bytes, as main wrote them
        write_trec_run(run, folder / workflow["env"][name], "engine")
    (folder / "bin").mkdir()
    (folder / "bin" / "gh").write_text(FAKE_GH)
    (folder / "bin" / "gh").chmod(0o755)
    inherited = {name: value for name, value in os.environ.items() if name not in {*PARAMETERS, "START_DIR"}}  # make exports them
    env = {**inherited, **workflow["env"], "PATH": f"{folder / 'bin'}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_STEP_SUMMARY": str(folder / "step_summary.md"), "GITHUB_SHA": "0123456789abcdef",
           "GITHUB_REPOSITORY": "your-org/engine", "GH_LOG": str(folder.parent / "gh.log"), "GH_STATE": str(folder.parent / "gh.state")}
    env.pop("PWD", None)
    status = {}
    for step in workflow["jobs"]["gate"]["steps"]:
        if "id" in step and f"github.event_name == '{event}'" in step.get("if", ""):
            step_env = {name: github(str(value), number) for name, value in step.get("env", {}).items()}
            status[step["id"]] = subprocess.run(["bash", "-e", "-c", github(step["run"], number)], cwd=folder,
                                                env={**env, **step_env}, capture_output=True, text=True).returncode
    return status


@pytest.mark.slow  # the workflow's steps in bash, each a command in its own process
@pytest.mark.parametrize("lost, failed", [(20, True), (0, False)])
def test_the_workflow_gates_a_pull_requests_run_and_the_cached_history_builds_up(tmp_path, lost, failed):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = [step for step in workflow["jobs"]["gate"]["steps"]]
    assert [s["id"] for s in steps if "id" in s] == ["record", "gate", "release", "summary", "comment"]
    assert all(s["if"].startswith("always()") for s in steps if s.get("id") in ("release", "summary", "comment"))
    cached = [s["with"]["path"] for s in steps if s.get("uses", "").startswith("actions/cache/")]
    assert cached == ["history", "history"] and Path(workflow["env"]["HISTORY"]).parent == Path("history")
    candidate = {q: (r[1:] + r[:1] if i < lost else r) for i, (q, r) in enumerate(BASELINE.items())}
    assert build(tmp_path / "0", workflow, BASELINE, "push") == {"record": 0}  # main's run: the baseline's bytes
    shutil.copytree(tmp_path / "0" / "history", tmp_path / "1" / "history")  # what the cache restores
    assert build(tmp_path / "1", workflow, BASELINE, "pull_request", 6) == {"gate": 0, "release": 0, "summary": 0, "comment": 0}
    shutil.copytree(tmp_path / "1" / "history", tmp_path / "2" / "history")
    status = build(tmp_path / "2", workflow, candidate, "pull_request", 6)
    assert status == {"gate": 1 if failed else 0, "release": 1 if failed else 0, "summary": 0, "comment": 0}
    summary = (tmp_path / "2" / "step_summary.md").read_text()
    assert summary.startswith("## Retrieval gate: " + ("❌ worse" if failed else "✅ not shown worse"))
    assert summary.count("## Retrieval gate: ") == 2 and summary.count("The baseline was recorded 0\\.0 days ago") == 2
    calls = (tmp_path / "gh.log").read_text()
    assert calls.count("--method POST repos/your-org/engine/issues/6/comments") == 1  # then updated, not posted again
    assert calls.count("--method PATCH repos/your-org/engine/issues/comments/4242") == 1
    assert "body=<!-- retrieval-gate -->" in calls and calls.count("## Retrieval gate: ") == 4
    assert (tmp_path / "2" / "gate-output" / "gate.xml").read_text().count("<failure") == int(failed)
    verdict = "worse" if failed else "not shown worse"
    rows = read_history(tmp_path / "2" / workflow["env"]["HISTORY"])
    assert [(row["label"], row["gate"], row["run"]) for row in rows] == [
        ("main 0123456", None, "candidate.trec"),
        ("PR 6 0123456", "not shown worse", "candidate.trec"), ("release vs PR 6 0123456", "not shown worse", "candidate.trec"),
        ("PR 6 0123456", verdict, "candidate.trec"), ("release vs PR 6 0123456", verdict, "candidate.trec")]
