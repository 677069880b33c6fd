"""retrieval_eval/widgets/depth.py: the two-stage widget reads rerank.two_stage_table and the first relevant ranks."""

import pytest

import helpers as h
from retrieval_eval.core.paths import RUNS_DIR
from retrieval_eval.course.widgets.depth import depth_widget, fixable
from retrieval_eval.inputs.trec import read_run
from retrieval_eval.retrieval.rerank import DEPTHS, oracle_rerank, two_stage_table


@pytest.fixture(scope="module")
def reranked():
    return {("hybrid", 10): read_run(RUNS_DIR / "hybrid_rerank.trec").rankings}


def test_numbers_and_questions_are_the_two_stage_table_s(setup, reranked):
    widget = depth_widget(setup.runs, setup.qrels, reranked, first_stage="hybrid")
    table = two_stage_table(setup.runs, setup.qrels, reranked, DEPTHS, 3)
    ranks = h.first_relevant_ranks(setup.runs, setup.qrels)
    widget.reveal.value = True
    for stage in setup.runs:
        for n in DEPTHS:
            widget.stage.value, widget.n.value = stage, n
            row, numbers, groups = table.loc[(stage, n)], widget.state["numbers"], widget.state["groups"]
            assert numbers.iat[0, 0] == row["recall@N (ceiling)"]
            assert list(numbers.loc["oracle reranker"]) == [row["recall@3, oracle"], row["MRR@3, oracle"]]
            assert ("reranker" in numbers.index) == ((stage, n) in reranked)
            assert (len(groups["could fix"]), len(groups["cannot fix"])) == (row["could fix"], row["cannot fix"])
            assert groups == fixable(ranks[stage], n, 3)
            assert " ".join(groups["could fix"]) in widget.questions.value
    widget.stage.value, widget.n.value = "vector", 20
    oracle = oracle_rerank(setup.runs["vector"], setup.qrels, 20)
    assert widget.state["numbers"].loc["oracle reranker"].iat[0] == pytest.approx(
        h.evaluate({"o": oracle}, setup.qrels, [3], ["recall"]).iat[0, 0])


def test_hidden_no_number_no_question_and_the_axes_only(setup, reranked):
    widget = depth_widget(setup.runs, setup.qrels, reranked, first_stage="hybrid")
    hidden_png = widget.plot.value
    assert "?" in widget.numbers.value and "0.957" not in widget.numbers.value + widget.sentence.value
    assert "q18" not in widget.questions.value and "Predict" in widget.sentence.value
    widget.reveal.value = True
    assert widget.plot.value != hidden_png and "0.957" in widget.sentence.value
    widget.n.value = 5
    assert widget.moved()["ceiling"].startswith("0.957 → ")


def test_any_run_names_and_bad_reranked_keys(setup):
    runs = {"mine": setup.runs["BM25"], "theirs": setup.runs["vector"]}
    widget = depth_widget(runs, setup.qrels, depths=[2, 4], k=1)
    assert widget.stage.value == "mine" and list(widget.n.options) == [2, 4]
    with pytest.raises(ValueError, match=r"reranked keys are \(first stage, N\).*got \('mine', 7\)"):
        depth_widget(runs, setup.qrels, {("mine", 7): runs["mine"]})
    with pytest.raises(ValueError, match="first_stage 'hybrid' is not a run"):
        depth_widget(runs, setup.qrels, first_stage="hybrid")
    with pytest.raises(ValueError, match="depths: k must be >= 1"):
        depth_widget(runs, setup.qrels, depths=[0, 3])
