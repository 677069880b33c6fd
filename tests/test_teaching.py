"""retrieval_eval/teaching.py: teaching pictures, random cases and the check-yourself checker."""

import math

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import helpers as h  # noqa: E402

pytestmark = pytest.mark.usefixtures("close_figures")


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


# --- plot_rankings ----------------------------------------------------------------------------


def test_rankings_mark_relevant_items_and_name_misses():
    fig = h.plot_rankings({"A": ["a", "b", "c"], "B": ["c", "x"]}, {"b": 1, "z": 1}, k=2, max_rank=3, show=("recall", "MRR"))
    drawn = texts(fig)
    assert {"A", "B", "a", "b", "c", "x", "(empty)"} <= set(drawn)
    assert drawn.count("not retrieved: z") == 2
    assert "recall@2 = 0.500" in drawn and "RR@2 = 0.500" in drawn  # column A: b at rank 2 of {b, z}
    assert "recall@2 = 0.000" in drawn and "RR@2 = 0.000" in drawn  # column B
    assert "cut-off\nk = 2" in drawn
    # Relevant boxes are coloured, the others are not.
    faces = [matplotlib.colors.to_hex(p.get_facecolor()) for p in fig.axes[0].patches]
    assert faces[:3] == ["#f4f4f4", "#1b7837", "#f4f4f4"]


def test_rankings_name_relevant_item_below_max_rank():
    ranked = [f"d{i}" for i in range(30)]
    fig = h.plot_rankings({"run": ranked}, {"d28": 1}, max_rank=10)
    assert "rank 29: d28" in texts(fig)


def test_rankings_graded_legend_tells_grades_apart():
    fig = h.plot_rankings({"run": ["a", "b"]}, {"a": 2, "b": 1}, k=2, show=("nDCG",))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["gain 2 (answers fully)", "gain 1 (answers partly)", "not relevant"]
    assert "nDCG@2 = 1.000" in texts(fig)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rankings={}), "non-empty"),
        (dict(rankings=[["a"]]), "non-empty"),
        (dict(rankings={"A": ["a", "a"]}), "duplicate id 'a'"),
        (dict(rankings={"A": ["a"]}, k=0), "k must be >= 1"),
        (dict(rankings={"A": ["a"]}, max_rank=0), "max_rank must be >= 1"),
        (dict(rankings={"A": ["a"]}, k=1, show=("MAP",)), r"unknown metric\(s\) \['MAP'\]"),
        (dict(rankings={"A": ["a"]}, show=("recall",)), "show needs a cut-off k"),
    ],
)
def test_rankings_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        h.plot_rankings(gains={"a": 1}, **kwargs)


# --- plot_discount ----------------------------------------------------------------------------


def test_discount_curves_are_the_definitions():
    fig = h.plot_discount(max_rank=6, k=3)
    ndcg_line, rr_line = fig.axes[0].lines[:2]
    assert list(ndcg_line.get_ydata()) == pytest.approx([1 / math.log2(r + 1) for r in range(1, 7)])
    assert list(rr_line.get_ydata()) == pytest.approx([1 / r for r in range(1, 7)])
    with pytest.raises(ValueError, match="max_rank must be >= 1"):
        h.plot_discount(max_rank=0)


# --- random_cases -----------------------------------------------------------------------------


def test_random_cases_are_valid_and_reproducible():
    cases = h.random_cases(n=500, seed=7, n_ids=10, max_gain=2)
    assert cases == h.random_cases(n=500, seed=7, n_ids=10, max_gain=2)
    assert cases != h.random_cases(n=500, seed=8, n_ids=10, max_gain=2)
    for ranking, gains, k in cases:
        assert len(set(ranking)) == len(ranking) <= 10
        assert 1 <= len(gains) <= 4 and all(g in (1, 2) for g in gains.values())
        assert 1 <= k <= 13
    # The cases cover the edges the metrics must handle.
    assert any(not r for r, _, _ in cases) and any(len(r) < k for r, _, k in cases)
    assert any(set(g) - set(r) for r, g, _ in cases)
    assert {g for _, gains, _ in cases for g in gains.values()} == {1, 2}


def test_random_cases_bad_arguments():
    with pytest.raises(ValueError, match="n_ids must be >= 4"):
        h.random_cases(n_ids=3)
    with pytest.raises(ValueError, match="n must be >= 1"):
        h.random_cases(n=0)


# --- check_answers ----------------------------------------------------------------------------


def test_check_answers_blank_answers_do_not_fail(capsys):
    h.check_answers({"1": None, "2": None}, {"1": 0.5, "2": True})
    assert capsys.readouterr().out == "question 1: not answered yet\nquestion 2: not answered yet\n"


def test_check_answers_accepts_right_answers(capsys):
    answers = {"1": 0.3333, "2": " Recall@3", "3": False, "4": {"a", "b"}, "5": None}
    solutions = {"1": 1 / 3, "2": "recall@3", "3": False, "4": {"b", "a"}, "5": 2}
    h.check_answers(answers, solutions)
    assert capsys.readouterr().out.splitlines() == [
        "question 1: right", "question 2: right", "question 3: right", "question 4: right", "question 5: not answered yet"
    ]


@pytest.mark.parametrize(
    "given, solution",
    [(0.34, 1 / 3), (1, True), (True, 1.0), ("recall@10", "recall@3"), ({"a"}, {"a", "b"})],
)
def test_check_answers_raises_on_a_wrong_answer(given, solution, capsys):
    with pytest.raises(AssertionError, match="question 2: .* is not right"):
        h.check_answers({"1": None, "2": given}, {"1": 0.5, "2": solution})
    assert "question 1: not answered yet" in capsys.readouterr().out


def test_check_answers_questions_must_match():
    with pytest.raises(ValueError, match=r"answers name questions \['1'\] but the solutions \['1', '2'\]"):
        h.check_answers({"1": None}, {"1": 0.5, "2": 1})


def test_check_answers_accepts_any_member_of_a_set_of_solutions(capsys):
    """Where retrievers tie for the highest value, naming any of them is right."""
    h.check_answers({"1": "vector", "2": "Hybrid "}, {"1": {"vector", "hybrid"}, "2": {"vector", "hybrid"}})
    assert capsys.readouterr().out == "question 1: right\nquestion 2: right\n"
    with pytest.raises(AssertionError, match="question 1: 'BM25' is not right"):
        h.check_answers({"1": "BM25"}, {"1": {"vector", "hybrid"}})
