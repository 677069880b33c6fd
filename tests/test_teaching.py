"""retrieval_eval/course/teaching.py, checker.py and widgets/key.py: teaching aids, random cases, the check-yourself checker and the teacher's key."""

import math
from decimal import Decimal
from fractions import Fraction

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from cases import examples
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

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


def test_rankings_text_is_readable_and_the_figure_no_wider_than_its_ids_need():
    toy = {f"question {q}": ["r", "c2", "c3", "c4", "c5"] for q in "ABCD"}
    fig = h.plot_rankings(toy, {"r": 1}, k=3, max_rank=5)
    assert min(t.get_fontsize() for t in fig.axes[0].texts) >= 12
    assert fig.get_figwidth() <= 9  # four short columns: not a 13-inch figure shrunk to fit the page
    long_id = "09_privacy_and_data_retention#00"  # the longest chunk id of the Polder corpus
    wide = h.plot_rankings({"BM25": [long_id, "a"], "vector": ["a", long_id]}, {"x": 1}, k=1, max_rank=2)
    renderer = wide.canvas.get_renderer()
    box = wide.axes[0].patches[0].get_window_extent(renderer)
    text = next(t for t in wide.axes[0].texts if t.get_text().replace("\n", "") == long_id).get_window_extent(renderer)
    assert box.x0 <= text.x0 and text.x1 <= box.x1  # the longest id fits inside its box
    missed = h.plot_rankings({"BM25": ["a"]}, {long_id: 1}, max_rank=1)
    assert ["not retrieved: " + long_id] == texts(missed)[-1:]  # a note that fits its column takes one line
    missed = h.plot_rankings({"BM25": ["a"], "vector": ["a"]}, {long_id: 1}, max_rank=1)
    assert texts(missed)[-3:] == ["not retrieved:", "  09_privacy_and_", "  data_retention#00"]  # else two or more


def test_rankings_text_is_at_least_16_px_as_a_notebook_shows_it(chunks, smallest_displayed_px):
    """Three columns of the longest Polder ids, with notes: long ids go on two lines, so the figure
    needs no shrinking; a four-column toy likewise."""
    ids = sorted((c["id"] for c in chunks), key=len, reverse=True)
    fig = h.plot_rankings({"BM25": ids[1:11], "vector": ids[11:21], "hybrid": ids[21:31]}, {ids[0]: 1}, k=3,
                          show=("recall", "MRR"), title="q06: My partner and I both want a bike at our place.")
    assert smallest_displayed_px(fig) >= 16
    assert any("\n" in t for t in texts(fig)) and fig.axes[0].get_title().startswith("q06")
    toy = {f"question {q}": ["r", "c2", "c3", "c4", "c5"] for q in "ABCD"}
    assert smallest_displayed_px(h.plot_rankings(toy, {"r": 1}, k=3, max_rank=5, title="Four toy questions")) >= 16


def test_a_long_id_splits_after_the_underscore_nearest_its_middle():
    from retrieval_eval.course.plots import _split_id

    assert _split_id("09_privacy_and_data_retention#00", 22) == "09_privacy_and_\ndata_retention#00"
    assert _split_id("10_faq#01", 22) == "10_faq#01"
    assert _split_id("x" * 30, 22) == "x" * 30  # nowhere to split: one line


def test_rankings_one_question_per_column():
    fig = h.plot_rankings({"q1": ["a", "b"], "q2": []}, {"q1": {"b": 2}, "q2": {"z": 1}}, k=1, show=("recall",))
    drawn = texts(fig)
    assert drawn.count("not retrieved: z") == 1 and "not retrieved: b" not in drawn  # each column its own qrels
    assert drawn.count("recall@1 = 0.000") == 2
    assert matplotlib.colors.to_hex(fig.axes[0].patches[1].get_facecolor()) == "#1b7837"  # b, gain 2
    with pytest.raises(ValueError, match="must name the columns"):
        h.plot_rankings({"q1": ["a"]}, {"q9": {"a": 1}})


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
        (dict(rankings={"A": ["a"]}, k=1, show=("ERR",)), r"unknown metric\(s\) \['ERR'\]"),
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


def test_discount_picture_has_its_title_and_readable_text(smallest_displayed_px):
    fig = h.plot_discount(max_rank=10, k=3, title="How much a relevant chunk counts at each rank")
    assert fig.axes[0].get_title() == "How much a relevant chunk counts at each rank"
    assert smallest_displayed_px(fig) >= 16


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


# --- check_answers: what a learner types is read generously, and never raises -----------------


def one(answer, solution):
    """Check one question quietly; return its verdict."""
    lines = []
    report = h.check_answers({"q": answer}, {"q": solution}, show=lines.append)
    assert len(lines) == 1 and lines[0] == report.verdicts["q"].message
    return report.verdicts["q"]


THIRD = [0.33, 0.333, 1 / 3, "0.33", " 0.333 ", "1/3", " 1 / 3 ", "2/6", Fraction(1, 3), Decimal("0.33"),
         np.float64(1 / 3), np.float32(0.3333), np.array(0.333), "33%", "33.3 %", "0.335", "\u22121/-3", "1.5/4.5", ".5/1.5"]


@pytest.mark.parametrize("answer", THIRD, ids=repr)
def test_one_third_is_right_in_every_spelling(answer):
    for solution in (1 / 3, Fraction(1, 3), np.float64(1 / 3)):
        assert one(answer, solution).status == "right"


def test_a_fraction_of_decimals_typed_as_text_is_read():
    assert one("0.8/3", 0.8 / 3).status == "right" and one("0.8 / 3", 0.8 / 3).status == "right"
    assert one("0.8/0", 0.5).status == "unreadable"


@pytest.mark.parametrize("answer", [0.34, 0.32, 0.3, "0.339", 1, "2/3", -1 / 3, 33])
def test_wrong_numbers_are_not_right(answer):
    verdict = one(answer, 1 / 3)
    assert verdict.status == "wrong" and verdict.message.startswith("question q: not yet:")


def test_the_boundary_is_half_a_unit_of_the_last_decimal_for_floats_and_text_alike():
    assert one(0.335, 0.33).status == one("0.335", 0.33).status == "right"
    assert one(0.325, 0.33).status == one("0.325", 0.33).status == "right"
    assert one(0.3351, 0.33).status == one("0.3351", 0.33).status == "wrong"


def test_decimals_and_tolerance_set_what_is_close_enough():
    assert one(0.667, h.Answer(2 / 3, decimals=3)).status == "right"
    short = one(0.67, h.Answer(2 / 3, decimals=3))
    assert short.status == "wrong" and "give 3 decimals" in short.message
    assert one(0.7, h.Answer(2 / 3, decimals=1)).status == "right"
    assert one(10.4, h.Answer(10, tolerance=0.5)).status == "right"
    assert one(10.6, h.Answer(10, tolerance=0.5)).status == "wrong"


def test_near_misses_get_a_note_on_what_went_wrong():
    assert "give 2 decimals" in one(0.3, 1 / 3).message  # the right value, too few decimals
    assert "give 2 decimals" in one(0.6, 0.631).message


@pytest.mark.parametrize("given, value", [(1, 0.631), (1.0, 0.613), (0, 0.16), (1, 0.583), (1, 0.9), (0, 0.389)])
def test_a_whole_number_is_not_nearly_right(given, value):
    """The six cases a learner met: a whole number that rounds to the answer was told "give 2 decimals"."""
    verdict = one(given, value)
    assert verdict.status == "wrong" and "is not it." in verdict.message and "decimals" not in verdict.message
    assert "close: check the rounding" in one(0.34, 1 / 3).message
    assert "percentage" in one(25, 0.25).message
    assert "use a dot" in one("0,33", 1 / 3).message


@pytest.mark.parametrize("answer", [True, np.True_, "yes", "a third", [0.33], (1, 3), np.array([0.33]),
                                    float("nan"), float("inf"), "1/0", 1j, b"0.33", object(), "1e99999999"])
def test_a_non_number_is_told_a_number_was_expected(answer):
    verdict = one(answer, 1 / 3)
    assert verdict.status == "unreadable" and "expected a number" in verdict.message


@pytest.mark.parametrize("answer", [True, np.True_, "True", " TRUE ", "yes", "Y", "t", 1, np.int64(1), "1"])
def test_true_in_every_spelling(answer):
    assert one(answer, True).status == one(answer, np.True_).status == "right"
    assert one(answer, False).status == "wrong"


@pytest.mark.parametrize("answer", [False, np.False_, "False", "no", "N", 0, "0"])
def test_false_in_every_spelling(answer):
    assert one(answer, np.False_).status == "right" and one(answer, True).status == "wrong"


@pytest.mark.parametrize("answer", ["maybe", 0.5, 2, "1/3", [True], np.array([True, False])])
def test_a_non_boolean_is_told_true_or_false_was_expected(answer):
    verdict = one(answer, True)
    assert verdict.status == "unreadable" and "expected True or False" in verdict.message


@pytest.mark.parametrize("answer", ["BM25", " bm25 ", "bm25.", "'bm25'", "Bm-25", "best  match 25"])
def test_text_ignores_case_spaces_quotes_and_a_final_full_stop(answer):
    assert one(answer, h.Answer("bm25", accept=("bm-25", "best match 25"))).status == "right"
    assert one("tf-idf", "bm25s").status == "wrong" and one(25, "bm25s").status == "unreadable"


@pytest.mark.parametrize("answer", [None, ..., "", "   "])
def test_blank_means_not_answered_yet(answer):
    assert one(answer, 0.5).message == "question q: not answered yet"


def test_missing_unknown_and_integer_named_questions(capsys):
    report = h.check_answers({1: 0.5, "9": 3}, {"1": 0.5, "2": True})
    assert capsys.readouterr().out.splitlines() == [
        "question 1: right",
        "question 2: not answered yet",
        "question 9: there is no question 9 (the questions are: 1, 2)",
    ]
    assert [v.status for v in report.verdicts.values()] == ["right", "unanswered", "unknown"]
    assert report.count("right") == 1
    assert repr(report) == "1 of 2 right, 1 not answered yet"  # what a notebook shows under the lines


def test_a_wrong_answer_gets_the_hint_and_never_the_solution():
    spec = h.Answer(3 / 7, hint="count the relevant chunks in the top 7")
    wrong = one(0.5, spec)
    assert wrong.message == "question q: not yet: 0.5 is not it. Hint: count the relevant chunks in the top 7"
    assert one("3/7", spec).message == "question q: right"
    assert not any(shown in wrong.message for shown in ("0.43", "0.429", "3/7"))


def test_an_invalid_solution_is_the_authors_error():
    with pytest.raises(ValueError, match="is not a number"):
        h.Answer("a third", kind="number")
    with pytest.raises(ValueError, match="kind must be"):
        h.Answer(0.5, kind="percent")


anything = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30), st.fractions(),
    st.decimals(), st.complex_numbers(), st.binary(max_size=5), st.lists(st.integers(), max_size=3),
    st.just(...), st.just(np.float32(0.5)), st.just(np.array([1, 2])),
)
solutions = st.one_of(st.floats(-1e6, 1e6), st.fractions(max_denominator=1000), st.booleans(), st.text(min_size=1, max_size=10))


@settings(max_examples=examples(200), deadline=None)
@given(anything, solutions)
def test_anything_typed_gets_one_line_and_no_exception(answer, solution):
    verdict = one(answer, solution)
    assert verdict.message.startswith("question q: ") and "\n" not in verdict.message
    assert verdict.status in {"right", "wrong", "unreadable", "unanswered"}


@settings(max_examples=examples(150), deadline=None)
@given(st.floats(-1000, 1000))
def test_any_value_written_with_two_or_more_decimals_is_right(x):
    for answer in (round(x, 2), f"{x:.2f}", f"{x:.3f}", np.float64(x), Fraction(x)):
        assert one(answer, x).status == "right", answer


@settings(max_examples=examples(150), deadline=None)
@given(st.floats(-1000, 1000), st.floats(0.0051, 100))
def test_anything_further_than_the_tolerance_is_not_right(x, off):
    assert one(x + off, x).status == "wrong"
    assert one(f"{x - off!r}", x).status == "wrong"


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(-50, 50), st.integers(1, 50))
def test_a_fraction_typed_as_text_equals_the_fraction(p, q):
    assert one(f"{p}/{q}", Fraction(p, q)).status == one(f"{p}/{q}", p / q).status == "right"


def test_a_set_of_solutions_accepts_any_member():
    """Where retrievers tie for the highest value, naming any of them is right (and nothing else is)."""
    tied = {"vector", "hybrid"}
    report = h.check_answers({"1": "vector", "2": "Hybrid ", "3": "BM25"}, {"1": tied, "2": tied, "3": tied},
                             show=lambda line: None)
    assert [v.status for v in report.verdicts.values()] == ["right", "right", "wrong"]


# --- text with options: an answer that names exactly one option is read as that option --------


@pytest.mark.parametrize("answer", ["vector", "Vector search", "vector search", "the vector retriever", "VECTOR."])
def test_a_retriever_is_right_under_the_names_the_notebooks_use(answer):
    assert one(answer, "vector").status == "right" and one(answer, {"vector", "hybrid"}).status == "right"
    assert one(answer, "hybrid").status == "wrong"  # it names another of the retrievers: not yet, with the hint


@pytest.mark.parametrize("answer", ["RRF", "rrf", "hybrid search (RRF)", "RRF."])
def test_rrf_names_hybrid_search(answer):
    """Notebooks 05 and 06 call hybrid search "hybrid search (RRF)", so "RRF" is read as hybrid."""
    assert one(answer, "hybrid").status == "right" and one(answer, {"vector", "hybrid"}).status == "right"
    assert one(answer, "vector").status == "wrong"


@pytest.mark.parametrize("answer", ["dense", "mistake 2", "BM25 or vector", "not vector", 3])
def test_a_text_naming_no_option_or_several_is_told_the_options(answer):
    verdict = one(answer, "vector")
    assert verdict.status == "unreadable"
    assert verdict.message.startswith("question q: expected one of 'BM25', 'vector' or 'hybrid', got ")


PRECISIONS = ("precision@k", "precision of returned")


@pytest.mark.parametrize("answer", ["precision of returned", "precision_of_returned", "precision of the returned",
                                    "Precision of returned chunks", "returned"])
def test_an_answer_naming_one_option_is_that_option(answer):
    assert one(answer, h.Answer("precision of returned", options=PRECISIONS)).status == "right"
    assert one(answer, h.Answer("precision@k", options=PRECISIONS)).status == "wrong"


def test_options_and_accepted_spellings_together():
    spec = h.Answer("duplicates", accept=("duplicate",), options=("ceiling", "duplicates", "ideal DCG"),
                    hint="which mistake pushes a value past 1?")
    assert one("duplicate ids", spec).status == one("Duplicates counted twice", spec).status == "right"
    assert one("ideal dcg", spec).message == "question q: not yet: 'ideal dcg' is not it. Hint: which mistake pushes a value past 1?"
    for vague in ("precision", "dupes", "6", "not the ceiling"):
        assert one(vague, spec).message.startswith("question q: expected one of 'ceiling', 'duplicates' or 'ideal DCG'")
    raise_or_lower = h.Answer("raise", options=("raise", "lower"))
    assert [one(a, raise_or_lower).status for a in ("raises", "it raises", "lower", "does not raise", "up")] == [
        "right", "right", "wrong", "unreadable", "unreadable"]


def test_a_text_solution_outside_its_options_is_the_authors_error():
    with pytest.raises(ValueError, match="not one of the options"):
        h.Answer("maybe", options=("raise", "lower"))


# --- a calculation typed as text is worked out (numbers, brackets and + - * / ** only) ---------


@pytest.mark.parametrize("answer, solution", [("(1 + 0.5) / 2", 0.75), ("(1 + 0.5 + 0) / 3", 0.5), ("2**2 - 1", 3),
                                              ("2^2 - 1", 3), ("2 × 3 ÷ 4", 1.5), ("-(1/3)", -1 / 3), ("10**-2", 0.01),
                                              ("1/2 + 1/3", 5 / 6), ("2/03", 2 / 3)])
def test_a_calculation_typed_as_text_is_worked_out(answer, solution):
    assert one(answer, solution).status == "right"


@pytest.mark.parametrize("answer", ["1/log2(3)", "2 + 1/log2(3)", "sqrt(2)", "__import__('os').getcwd()", "x + 1",
                                    "9**9**9", "((10**64)**64)**64", "2**0.5"])
def test_a_calculation_with_anything_else_is_not_run_and_asks_for_the_result(answer):
    verdict = one(answer, 0.631)
    assert verdict.status == "unreadable" and "type the result, not the calculation" in verdict.message


# --- answers that are not a dict get one line, never a traceback -------------------------------


@pytest.mark.parametrize("answers", [[0.25, True], (0.25,), None, "0.25", 0.25, {0.25}])
def test_answers_that_are_not_a_dict_get_one_friendly_line(answers):
    lines = []
    report = h.check_answers(answers, {"1": 0.25, "2": True}, show=lines.append)
    assert len(lines) == 1 and lines[0].startswith("the answers must be a dict with one entry per question")
    assert repr(report) == "0 of 2 right, 2 not answered yet"


def test_print_versions_names_the_scoring_packages_then_the_others_each_once(capsys):
    from retrieval_eval.course.teaching import TABLE_PACKAGES
    from retrieval_eval.inputs.models import SCORING_PACKAGES

    h.print_versions()
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 and out.startswith("Python ")
    names = [part.split()[0] for part in out.split("; ", 1)[1].split(", ")]
    assert names == [*SCORING_PACKAGES, *TABLE_PACKAGES]


# --- teacher_key --------------------------------------------------------------------------------


def test_the_teachers_key_agrees_with_the_metric_functions(setup):
    """Each guided step of the widgets, worked out again with the metric functions on the ranking the clicks make."""
    from retrieval_eval.course.widgets.key import teacher_key

    key = teacher_key(setup).set_index(["notebook", "step"])["expected"]
    assert key[("01", 1)] == f"{h.recall_at_k(['c3', 'c2', 'c1', 'c9', 'c4', 'c7'], {'c1', 'c2'}, 3):.3f}"
    assert key[("01", 2)] == f"{h.recall_at_k(['c3', 'c7', 'c1', 'c9', 'c4', 'c2'], {'c1', 'c2', 'c4'}, 3):.3f}"
    assert key[("02", 1)] == f"{h.precision_at_k(['c3', 'c7', 'c1', 'c9', 'c4'], {'c1'}, 5):.3f}"
    assert key[("02", 2)] == f"{h.precision_at_k(['a', 'b', 'c1', 'c9', 'c4'], {'a', 'b', 'c1'}, 5):.3f}"
    assert key[("03", 1)] == f"RR {h.reciprocal_rank(list('abcr'), {'r'}):.3f}, RR@3 {h.reciprocal_rank(list('abcr'), {'r'}, k=3):.3f}"
    graded = {"a": 2, "c": 1, "e": 1}  # 04: rank 1 clicked once (1 → 2), rank 3 twice (2 → 0 → 1)
    assert key[("04", 1)] == f"{h.ndcg_at_k(list('abcde'), graded, 3):.3f}"
    assert key[("04", 2)].startswith(f"{h.ndcg_at_k(list('abcde'), graded | {'missed': 1}, 3):.3f}")
    row = h.two_stage_table(setup.runs, setup.qrels, k=3).loc[("BM25", 10)]
    assert key[("06", 1)] == f"{row['recall@N (ceiling)']:.3f}; could fix {int(row['could fix'])}, cannot fix {int(row['cannot fix'])}"
    shares = {name: h.share_of_ceiling(run, setup.qrels, 3) for name, run in setup.runs.items()}
    best = h.evaluate(setup.runs, setup.qrels, ks=[3])[("precision", 3)].idxmax()
    assert key[("02", 5)] == f"{best}: {shares[best]:.0%}"


# --- make class ---------------------------------------------------------------------------------


@pytest.mark.notebook
def test_make_class_runs_each_core_notebook_and_leaves_the_committed_ones_as_they_are(tmp_path, capsys):
    import nbformat

    from retrieval_eval.course.teaching import machine, run_for_class

    for name, path in (("00_a.ipynb", "core"), ("08_b.ipynb", "deep dive")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")],
                                      metadata={"course": {"path": path, "minutes": 1, "answers": "?"}})
        nbformat.write(nb, tmp_path / name)
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.ipynb")}
    seconds = run_for_class(tmp_path, saved=tmp_path / "class")
    assert list(seconds) == ["00_a.ipynb"] and seconds["00_a.ipynb"] > 0
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.ipynb")} == before  # git status stays clean
    saved = nbformat.read(tmp_path / "class" / "00_a.ipynb", as_version=4)
    assert saved.cells[0].outputs[0]["text"] == "42\n" and "widgets" not in saved.metadata
    assert not (tmp_path / "class" / "08_b.ipynb").exists()  # a deep dive is left alone
    printed = capsys.readouterr().out
    assert machine() in printed and f"00_a.ipynb: {seconds['00_a.ipynb']:.0f} s" in printed


def test_make_class_stops_with_one_line_when_jupyterlab_cannot_draw_the_widgets(tmp_path):
    """The widget front-end disabled in the project's JupyterLab config folder (as a user or an admin can): one plain
    line and exit status 1, before anything runs."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter")}
    jupyter = Path(sys.executable).parent / "jupyter"
    subprocess.run([jupyter, "labextension", "disable", "--level=user", "@jupyter-widgets/jupyterlab-manager"], env=env,
                   check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", "from retrieval_eval.course.teaching import run_for_class; "
                           f"run_for_class({str(tmp_path)!r}, saved={str(tmp_path / 'class')!r})"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == "" and not (tmp_path / "class").exists()
    assert done.stderr.strip().splitlines() == ["make class: the JupyterLab extension @jupyter-widgets/jupyterlab-manager "
                                                "is disabled, so every widget shows only its static copy: jupyter "
                                                "labextension enable @jupyter-widgets/jupyterlab-manager"]


def test_fold_shows_tables_markdown_text_and_figures_in_one_closed_details_block():
    import matplotlib.pyplot as plt
    import pandas as pd
    from IPython.display import Markdown

    fig = plt.figure()
    folded = h.fold(pd.DataFrame({"recall@3": [0.5]}), Markdown("**47** questions"), "a < b", fig, summary="Show it")
    body = folded.data
    assert body.startswith("<details><summary>Show it</summary>") and body.endswith("</details>")
    assert body.count("<details") == 1 and "<details open" not in body
    assert "<table" in body and "<strong>47</strong> questions" in body and "<pre>a &lt; b</pre>" in body
    assert "data:image/png;base64," in body and not plt.fignum_exists(fig.number)  # shown once, inside the fold
