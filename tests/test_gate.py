"""retrieval_eval/tool/gate.py and make gate: a candidate clearly worse, slightly worse within the margin, equal and
better; the exit codes, the per-question diff, the files for a CI comment, and a malformed file named by file and line.
retrieval_eval/tool/history.py and make history: rows appended and read back, never rewritten, a damaged row named."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.regression import SIMULATED, _simulated, decide, gate, gate_error_rates
from retrieval_eval.analysis.statistics import CORRECTION, SIDES, _score, fewest_losses, margin_test, wilson_ci
from retrieval_eval.core.evaluation import per_question_scores
from retrieval_eval.inputs.text import escape
from retrieval_eval.inputs.trec import write_trec_qrels, write_trec_run
from retrieval_eval.tool import cli
from retrieval_eval.tool import gate as gate_module
from retrieval_eval.tool import history as history_module
from retrieval_eval.tool.history import append_history, read_history

N = 40
QRELS = {f"q{i:02d}": {f"d{i}": 1} for i in range(N)}
BASELINE = {q: [next(iter(g)), "x1", "x2", "x3"] for q, g in QRELS.items()}  # every evidence at rank 1


def losing(n: int, rank: int = 5) -> dict:
    """The baseline with the first ``n`` questions' relevant chunk moved from rank 1 to ``rank``."""
    moved = {q: ["x1", "x2", "x3", "x4"][: rank - 1] + [r[0]] for q, r in list(BASELINE.items())[:n]}
    return {**BASELINE, **moved}


def test_a_clearly_worse_candidate_fails_by_mcnemars_one_sided_exact_test():
    verdict = gate(BASELINE, losing(20), QRELS)
    assert verdict.worse and verdict.status == 1
    assert verdict.p == pytest.approx(0.5**20)  # 20 losses, no win: P(all 20 one way) one-sided
    assert (verdict.baseline, verdict.candidate) == (1.0, 0.5)
    assert verdict.sentence.startswith("Worse: recall@3 went from 1.000 to 0.500 on 40 questions (-0.500; 20 questions lost")


def test_worse_beyond_a_margin_is_tested_on_the_shifted_drops():
    assert gate(BASELINE, losing(20), QRELS, margin=0.1).worse  # a drop of 0.5 is far beyond 0.1
    verdict = gate(BASELINE, losing(6), QRELS, margin=0.1)  # 0.15: beyond the margin, but 6 of 40 proves nothing
    assert not verdict.worse and 0.05 < verdict.p < 0.5


def test_slightly_worse_within_the_margin_passes_with_its_score_test():
    verdict = gate(BASELINE, losing(2), QRELS, margin=0.1)
    assert not verdict.worse and verdict.p > 0.5 and verdict.bound < 0.05 and verdict.status == 0
    assert "does not show it worse by more than the margin 0.1 (p = 0.94 ≥ 0.05)" in verdict.sentence
    without = gate(BASELINE, losing(2), QRELS)  # no margin: two losses of two differing questions, p = 1/4
    assert not without.worse and without.p == pytest.approx(0.25)


def test_a_large_loss_fails_at_a_margin_below_it():
    """The issue's case: 60 of 300 lost, none gained (a drop of 0.2), margin 0.05."""
    qrels = {f"q{i:03d}": {f"d{i}": 1} for i in range(300)}
    base = {q: [next(iter(g)), "x"] for q, g in qrels.items()}
    cand = {q: (r[::-1] if i < 60 else r) for i, (q, r) in enumerate(base.items())}
    verdict = gate(base, cand, qrels, "recall", k=1, margin=0.05)
    assert verdict.worse and verdict.p < 1e-9 and 0.05 < verdict.bound < 0.2
    assert verdict.sentence.startswith("Worse: recall@1 went from 1.000 to 0.800 on 300 questions")


@pytest.mark.parametrize("n, margin, fewest", [(40, 0, 5), (47, 0.05, 7), (47, 0.10, 10), (300, 0.05, 23)])
def test_the_smallest_loss_shown_is_the_fewest_losses_for_the_margin_in_use(n, margin, fewest):
    assert fewest_losses(n, margin) == fewest
    qrels = {f"q{i:03d}": {f"d{i}": 1} for i in range(n)}
    base = {q: [next(iter(g)), "x"] for q, g in qrels.items()}
    lose = lambda m: {q: (r[::-1] if i < m else r) for i, (q, r) in enumerate(base.items())}  # noqa: E731
    assert gate(base, lose(fewest), qrels, "recall", 1, margin).worse
    below = gate(base, lose(fewest - 1), qrels, "recall", 1, margin)
    assert not below.worse and f"a loss of {fewest} questions with none gained" in below.sentence


def test_not_shown_worse_says_the_smallest_loss_the_set_can_see():
    four = gate(BASELINE, losing(4), QRELS)  # 4 lost, 0 gained: p = 1/16 passes
    assert not four.worse and four.p == pytest.approx(1 / 16) and four.label == "not shown worse"
    assert "can see at best a loss of 5 questions with none gained (0.125)" in four.sentence  # 0.5^5 < 0.05 < 0.5^4
    assert gate(BASELINE, losing(5), QRELS).worse


def test_non_inferiority_fails_unless_the_drops_upper_bound_is_below_the_margin():
    four = gate(BASELINE, losing(4), QRELS, margin=0.05, mode="non-inferiority")
    assert four.worse and four.bound > 0.1 and four.label == "not shown within the margin"  # 4 of 40 lost: 0.1 mean drop
    equal = gate(BASELINE, BASELINE, QRELS, margin=0.15, mode="non-inferiority")
    assert not equal.worse and 0 < equal.bound == equal.smallest < 0.15 and equal.sentence.startswith("Within the margin: ")
    one = gate(BASELINE, losing(1), QRELS, margin=0.15, mode="non-inferiority")  # a drop of 0.025, bound below 0.15
    assert not one.worse and 0.025 <= one.bound < 0.15
    with pytest.raises(ValueError, match="non-inferiority needs a margin above 0"):
        gate(BASELINE, BASELINE, QRELS, mode="non-inferiority")


@pytest.mark.parametrize("n, margin, passes", [(5, 0.01, False), (47, 0.10, True), (47, 0.05, False)])
def test_non_inferiority_without_evidence_is_not_a_pass(n, margin, passes):
    """Nothing changed is not evidence on few questions: the upper bound of an unchanged candidate is far from 0."""
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(n)}
    run = {q: [next(iter(g))] for q, g in qrels.items()}
    verdict = gate(run, run, qrels, "recall", 1, margin, mode="non-inferiority")
    assert verdict.worse != passes and verdict.bound > 1 - 0.05 ** (1 / n) - 0.01  # near the exact bound 1 − α^(1/n)
    assert f"even an unchanged candidate's bound is {verdict.bound:.3f}" in verdict.sentence


def exact_size(n: int, margin: float, correction: float, side: str) -> float:
    """The largest chance, over the gain rate, that margin_test rejects when the true drop is exactly the margin:
    every (lost, gained) of n questions, weighted by its multinomial chance."""
    from scipy import stats
    lost, gained = (a.ravel() for a in np.meshgrid(np.arange(n + 1), np.arange(n + 1)))
    keep = lost + gained <= n
    lost, gained = lost[keep], gained[keep]
    score = _score(lost, gained, n, margin, correction if side == "non-inferiority" else -correction)
    critical = stats.norm.ppf(0.95)
    rejects = score > critical if side == "worse" else score < -critical
    worst = 0.0
    for gain_rate in np.linspace(0.001, (1 - margin) / 2, 60):
        chances = stats.multinomial.pmf(np.stack([lost, gained, n - lost - gained], 1), n,
                                        [gain_rate + margin, gain_rate, 1 - 2 * gain_rate - margin])
        worst = max(worst, float(chances[rejects].sum()))
    return worst


@pytest.mark.parametrize("n", [5, 20, 47, 100, 300, 500])
def test_the_score_tests_exact_size_is_at_most_alpha_and_needs_its_correction(n):
    """The grid margin_test's docstring states: below α with the correction, about 0.09 at worst without it."""
    for margin in (0.005, 0.01, 0.05, 0.2):
        for side in SIDES:
            assert exact_size(n, margin, CORRECTION, side) < 0.05, (n, margin, side)
    if n == 300:
        assert 0.08 < exact_size(n, 0.01, 0.0, "worse") < 0.095  # the uncorrected score test is liberal


@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.0, 0.0, 0.5, 1.0]), min_size=3, max_size=60),
       st.sampled_from([0.01, 0.05, 0.2]), st.sampled_from(SIDES))
@settings(max_examples=150, deadline=None)
def test_the_bound_and_the_p_value_agree(drops, margin, side):
    result = margin_test(drops, margin, side)
    beyond = result["bound"] > margin if side == "worse" else result["bound"] < margin
    assert (result["p"] < 0.05) == beyond or abs(result["bound"] - margin) < 1e-9


def test_the_simulated_error_rates_follow_the_gates_own_decision():
    """gate_error_rates vectorises decide(): the same candidates, one at a time through decide, fail alike."""
    rng = np.random.default_rng(1)
    for kind in SIMULATED:
        lost, gained = _simulated(rng, kind, 47, 0.05, 0.1, 200)
        for L, G in zip(lost, gained):  # the sums are all the score test reads: whole questions and one remainder
            drops = [1.0] * int(L) + [L % 1] + [-1.0] * int(G) + [-(G % 1)]
            base = np.clip(np.array(drops + [0.0] * (47 - len(drops))), 0, None)
            cand = base - np.array(drops + [0.0] * (47 - len(drops)))
            for mode, fails in (("worse", _score(L, G, 47, 0.05, -CORRECTION) > 1.6448536269514722),
                                ("non-inferiority", not _score(L, G, 47, 0.05, CORRECTION) < -1.6448536269514722)):
                assert decide(base, cand, 0.05, mode)[3] == fails


def test_the_gates_error_rates_by_simulation_are_at_most_alpha():
    table = gate_error_rates()
    kept = table[table["at most α"].notna()]
    assert len(kept) == 2 * 5 * 2 + 5 and kept["at most α"].all()  # at most α within the simulation's error
    assert (table.xs("fail at drop 0 (non-inferiority)", level="error")["rate"].xs("0/1").loc[[5, 10_000]].to_list()
            == [1.0, 0.0])  # the price of non-inferiority: 5 questions never pass a margin of 0.05, 10,000 always do


def test_equal_and_better_candidates_pass_with_nothing_to_test():
    equal = gate(BASELINE, BASELINE, QRELS)
    assert not equal.worse and equal.p is None and equal.diff.empty
    better = gate(losing(10), BASELINE, QRELS, metric="MRR", k=10)
    assert not better.worse and better.p is None and len(better.diff) == 10
    assert better.metric == "MRR@10" and (better.diff["candidate rank"] == 1).all()


def test_the_diff_lists_losses_first_with_both_ranks():
    candidate = {**losing(2, rank=4), "q39": ["x1", "x2", "x3"]}  # q39's evidence no longer retrieved at all
    verdict = gate(BASELINE, candidate, QRELS)
    assert verdict.diff.to_dict(orient="list") == {
        "question": ["q00", "q01", "q39"], "baseline": [1.0] * 3, "candidate": [0.0] * 3,
        "baseline rank": [1, 1, 1], "candidate rank": [4, 4, 0]}
    assert gate_module.diff_lines(verdict)[2] == "lost   q39: 1.000 → 0.000 (first relevant at rank 1 → —)"
    capped = gate_module.diff_lines(gate(BASELINE, losing(30), QRELS), limit=25)  # the terminal's list is capped
    assert len(capped) == 26 and capped[-1].startswith("… and 5 more of 30 questions that changed")


def test_the_scores_at_hand_give_the_same_verdict():
    """make gate passes the evaluation's per-question scores (every shown metric at K) instead of scoring again."""
    runs = {"baseline": BASELINE, "candidate": losing(6, rank=2)}
    scores = per_question_scores(runs, QRELS, [1, 3])
    for metric, k in (("recall", 3), ("MRR", 1), ("MAP", 3)):  # MAP is not in the shown metrics' scores: scored anew
        assert gate(*runs.values(), QRELS, metric, k, scores=scores).as_dict() == gate(*runs.values(), QRELS, metric, k).as_dict()


def test_bad_arguments_are_refused_naming_them():
    with pytest.raises(ValueError, match="margin must be a number from 0 up to 1"):
        gate(BASELINE, BASELINE, QRELS, margin=1.5)
    with pytest.raises(ValueError, match="metric must be a registered metric"):
        gate(BASELINE, BASELINE, QRELS, metric="ERR")


def files(tmp_path: Path, candidate: dict) -> dict:
    write_trec_qrels(QRELS, tmp_path / "qrels.txt")
    (tmp_path / "new").mkdir(exist_ok=True)  # the same file name in two folders
    write_trec_run(BASELINE, tmp_path / "run.trec", "base")
    write_trec_run(candidate, tmp_path / "new" / "run.trec", "new")
    return {"QRELS": str(tmp_path / "qrels.txt"), "BASELINE": str(tmp_path / "run.trec"),
            "CANDIDATE": str(tmp_path / "new" / "run.trec"), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output"),
            "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache"), "PWD": str(Path.cwd())}


@pytest.mark.parametrize("candidate, margin, status", [(losing(20), "", 1), (losing(2), "0.1", 0), (BASELINE, "", 0)])
def test_make_gate_exits_with_the_verdict_and_writes_the_summary_and_json(tmp_path, capsys, candidate, margin, status):
    assert gate_module.main({**files(tmp_path, candidate), "MARGIN": margin}) == status
    out = capsys.readouterr().out
    folder = tmp_path / "output" / "gate-run"
    result = json.loads((folder / "gate.json").read_text())
    assert result["exit"] == status and result["sentence"] in out and escape(result["sentence"], markdown=True) in (folder / "summary.md").read_text()
    assert len(result["diff"]) == out.count("lost ") == sum(q in candidate and candidate[q] != BASELINE[q] for q in QRELS)


@pytest.mark.parametrize("which, line, problem", [
    ("CANDIDATE", "q00 Q0 d0 1 high new", "score 'high' is not a number"),
    ("QRELS", "q00 0 d0 yes", "relevance 'yes' is not an integer"),
])
def test_a_malformed_run_or_qrels_file_is_exit_2_naming_file_and_line(tmp_path, capsys, which, line, problem):
    environ = files(tmp_path, BASELINE)
    path = Path(environ[which])
    number = len(path.read_text().splitlines()) + 1
    path.write_text(path.read_text() + line + "\n")
    assert gate_module.main(environ) == 2
    err = capsys.readouterr().err
    assert f"{path}:{number}:" in err and problem in err and "exit 2" in err
    assert not (tmp_path / "output").exists()


def test_missing_runs_are_one_line_each(tmp_path, capsys):
    environ = files(tmp_path, BASELINE)
    del environ["BASELINE"], environ["CANDIDATE"]
    assert gate_module.main({**environ, "METRIC": "ERR"}) == 2
    err = capsys.readouterr().err
    assert "BASELINE is missing" in err and "CANDIDATE is missing" in err and "METRIC='ERR': must be a registered" in err


# --- the history -----------------------------------------------------------------------------------


def test_builds_append_rows_that_read_back_and_never_rewrite_earlier_ones(tmp_path, capsys):
    environ = files(tmp_path, BASELINE)
    history = tmp_path / "history.jsonl"
    for label, candidate, status in (("build 1", BASELINE, 0), ("build 2", losing(2), 0), ("build 3", losing(20), 1)):
        write_trec_run(candidate, tmp_path / "new" / "run.trec", "new")
        before = history.read_bytes() if history.exists() else b""
        assert gate_module.main({**environ, "HISTORY": str(history), "LABEL": label, "REPORT": label}) == status
        assert history.read_bytes().startswith(before)
    rows = read_history(history)
    assert [(r["label"], r["run"], r["gate"], r["questions"]) for r in rows] == [
        ("build 1", "run.trec", "not shown worse", N), ("build 2", "run.trec", "not shown worse", N), ("build 3", "run.trec", "worse", N)]
    assert [r["metrics"]["recall@3"]["mean"] for r in rows] == [1.0, 1 - 2 / N, 0.5]
    low, high = rows[2]["metrics"]["recall@3"]["low"], rows[2]["metrics"]["recall@3"]["high"]
    assert (low, high) == pytest.approx(wilson_ci(20, N)[1:])  # 0/1 per question: the Wilson interval
    assert len({r["settings"] for r in rows}) == 1  # the same labels and k: one fingerprint
    assert history_module.main({"HISTORY": str(history), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output")}) == 0
    png = tmp_path / "output" / "history-history.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "3 rows, 3 builds" in capsys.readouterr().out


def test_a_damaged_row_is_named_by_file_and_line_and_nothing_is_appended(tmp_path, capsys):
    environ = files(tmp_path, BASELINE)
    history = tmp_path / "history.jsonl"
    assert gate_module.main({**environ, "HISTORY": str(history)}) == 0
    history.write_text(history.read_text() + '{"time": "2026-01-01", "label": "cut off by a full disk"\n')
    damaged = history.read_bytes()
    with pytest.raises(ValueError, match=f"{history}:2: is not a JSON row of a history"):
        read_history(history)
    assert gate_module.main({**environ, "HISTORY": str(history), "REPORT": "again"}) == 2
    assert f"HISTORY='{history}': {history}:2: is not a JSON row" in capsys.readouterr().err
    assert history.read_bytes() == damaged
    history.write_text(history.read_text().splitlines()[0].replace('"questions": 40', '"questions": "40"') + "\n")
    assert history_module.main({"HISTORY": str(history), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output")}) == 2
    assert f"{history}:1: a history row without a valid questions" in capsys.readouterr().err


def test_make_evaluate_runs_appends_one_row_per_run(tmp_path, capsys):
    environ = files(tmp_path, losing(20))
    runs = f"{environ.pop('BASELINE')} {environ.pop('CANDIDATE')}".replace("new/run.trec", "new/run2.trec")
    (tmp_path / "new" / "run.trec").rename(tmp_path / "new" / "run2.trec")
    history = tmp_path / "history.jsonl"
    assert cli.main(["evaluate-runs"], {**environ, "RUNS": runs, "HISTORY": str(history), "LABEL": "nightly"}) == 0
    rows = read_history(history)
    assert [(r["run"], r["label"], r["gate"], r["metrics"]["recall@3"]["mean"]) for r in rows] == [
        ("run.trec", "nightly", None, 1.0), ("run2.trec", "nightly", None, 0.5)]


def test_make_gate_mode_non_inferiority_fails_what_is_not_shown_within_the_margin(tmp_path, capsys):
    assert gate_module.main({**files(tmp_path, losing(4)), "MARGIN": "0.05"}) == 0  # not shown worse
    assert gate_module.main({**files(tmp_path, losing(4)), "MARGIN": "0.05", "MODE": "non-inferiority",
                             "REPORT": "ni"}) == 1
    assert "Not shown within the margin: " in capsys.readouterr().out
    assert gate_module.main({**files(tmp_path, losing(4)), "MODE": "better"}) == 2
    assert "MODE" in capsys.readouterr().err


def history_row(**changes) -> dict:
    return {"time": "2026-12-08T00:00:00+00:00", "label": "build", "run": "r", "settings": "s", "questions": 3, "k": 3,
            "metrics": {"recall@3": {"mean": 0.5, "low": 0.1, "high": 0.9}}, "gate": None, **changes}


@pytest.mark.parametrize("second, problem", [
    (b'{"time": "caf\xe9"}', "is not valid UTF-8 (byte 0xe9)"),
    (json.dumps(history_row()).replace("0.5", "NaN").encode(), "NaN is not a finite number"),
    (json.dumps(history_row()).replace("0.9", "Infinity").encode(), "Infinity is not a finite number"),
])
def test_every_problem_of_a_history_is_named_by_file_and_line(tmp_path, capsys, second, problem):
    history = tmp_path / "h.jsonl"
    history.write_bytes(json.dumps(history_row()).encode() + b"\n" + second + b"\n")
    with pytest.raises(ValueError, match=re.escape(f"{history}:2: ") + ".*" + re.escape(problem)):
        read_history(history)
    assert history_module.main({"HISTORY": str(history), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "out")}) == 2
    assert f"{history}:2:" in capsys.readouterr().err


def test_blank_lines_are_skipped_and_two_builds_in_one_second_stay_two(tmp_path, capsys):
    history = tmp_path / "h.jsonl"
    rows = [history_row(build="a"), history_row(build="b")]  # one time, one label, two builds
    history.write_text("\n" + json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n\n", encoding="utf-8")
    assert read_history(history) == rows
    append_history(history, [history_row(label="next", build="c")])
    assert [r["build"] for r in read_history(history)] == ["a", "b", "c"]
    assert history_module.main({"HISTORY": str(history), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "out")}) == 0
    assert "3 rows, 3 builds" in capsys.readouterr().out


@pytest.mark.parametrize("candidate, status", [
    ({"q00": ["x1", "x2"]}, 0),  # one question, lost: a total regression in the labels' ids, gated (too few to show)
    ({q: ["x1", "x2"] for q in QRELS}, 1),  # every question lost: worse
    ({q: [f"doc-{i}#00"] for i, q in enumerate(QRELS)}, 2),  # ids of another space: bad input
])
def test_a_total_regression_is_gated_and_only_a_foreign_id_space_is_bad_input(tmp_path, capsys, candidate, status):
    environ = files(tmp_path, candidate)
    if len(candidate) == 1:
        write_trec_qrels({"q00": QRELS["q00"]}, tmp_path / "qrels.txt")
        write_trec_run({"q00": BASELINE["q00"]}, tmp_path / "run.trec", "base")
    assert gate_module.main(environ) == status
    assert ("none of its ids is judged" in capsys.readouterr().err) == (status == 2)
