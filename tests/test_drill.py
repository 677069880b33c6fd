"""retrieval_eval/course/drill.py and data/interview_drill.json: at least 40 questions of three kinds, every model
answer at most 40 words with its figures filled in from the run, every toy value computed and accepted by the checker,
and a mock interview of ten drawn with a seed."""

import json
import math

import pytest

import helpers as h
from retrieval_eval.course.drill import DRILL_PATH, run_figures, toy_value

QUESTIONS = json.loads(DRILL_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def drill(setup):
    return h.mock_interview(setup, n=None)


def test_at_least_40_questions_of_the_three_kinds_each_answered_in_at_most_40_words(drill):
    assert len(QUESTIONS) >= 40 and len({q["id"] for q in QUESTIONS}) == len(QUESTIONS)
    assert {q["kind"] for q in QUESTIONS} == {"compute", "explain", "diagnose"}
    assert not [q["id"] for q in QUESTIONS if q["question"].lower().startswith("the same")]  # each stands alone when drawn
    assert [q["id"] for q in drill.questions] == [q["id"] for q in QUESTIONS]
    for q in QUESTIONS:
        answer = drill.answers[q["id"]]
        assert len(answer.split()) <= 40 and "{" not in answer and "nan" not in answer, q["id"]


def test_every_numeric_answer_is_computed_and_accepted_by_the_checker(drill):
    compute = [q["id"] for q in QUESTIONS if q["kind"] == "compute"]
    assert list(drill.solutions) == compute and len(compute) >= 15
    lines = []
    report = h.check_answers({i: f"{a.value:.3f}" for i, a in drill.solutions.items()}, drill.solutions, show=lines.append)
    assert report.count("right") == len(compute), lines
    two = {i: f"{a.value:.2f}" for i, a in drill.solutions.items()} | {"c07": "33%"}  # as the README promises
    assert h.check_answers(two, drill.solutions, show=lines.append).count("right") == len(compute), lines
    assert f"{drill.solutions['c04'].value:.3f}" in drill.answers["c04"]  # the value shown is the value checked


@pytest.mark.parametrize("qid, by_hand", [
    ("c04", 8 / 18), ("c05", 8 / 20), ("c06", 2 * 8 / (18 + 20)), ("c08", (1 + 1 / 2 + 1 / 4) / 3), ("c09", (1 + 1 / 2) / 3),
    ("c10", (1 + 2 / 3 + 3 / 6) / 3), ("c11", (1 + 2 / 3) / 3), ("c13", 1 / 3), ("c16", (1 / 2 + 2 / 3) / 2), ("c17", 1.0),
    ("c14", (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))), ("c15", 1 / (1 + 1 / math.log2(3))), ("c18", 0.5),
    ("c19", (6 / 3 + 4 * 2 / 3) / 10), ("c20", 0.5),
])
def test_the_toys_equal_the_arithmetic_their_answers_show(qid, by_hand):
    assert toy_value(next(q for q in QUESTIONS if q["id"] == qid)) == pytest.approx(by_hand)


def test_the_figures_cited_are_the_runs(setup, drill):
    figures = run_figures(setup)
    table = h.evaluate(setup.runs, setup.qrels, ks=[3, 10])
    assert figures["hybrid recall@3"] == table.loc["hybrid", ("recall", 3)]
    assert f"{table.loc['hybrid', ('recall', 10)]:.2f}" in drill.answers["g10"]
    assert f"{h.precision_ceiling(setup.qrels, 3):.2f}" in drill.answers["e06"]


def test_a_mock_interview_draws_ten_with_its_seed(setup):
    one, again, other = (h.mock_interview(setup, seed=s) for s in (7, 7, 8))
    assert len(one.questions) == 10 and one.questions == again.questions and one.questions != other.questions
    assert set(one.solutions) == {q["id"] for q in one.questions if q["kind"] == "compute"}
    text = one._repr_markdown_()
    assert all(q["question"] in text and one.answers[q["id"]] in text for q in one.questions)
