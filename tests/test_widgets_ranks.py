"""retrieval_eval/widgets/ranks.py: the per-question ranks widget, its filters and its view of one question.

Set the controls in Python and check what it shows: every rank it displays is compared with the
metric functions, so the widget cannot drift from the tables.
"""

import matplotlib
import pandas as pd
import pytest

import helpers as h
from retrieval_eval.widgets._view import figure_png
from retrieval_eval.widgets.ranks import ALL_SLICES, plot_rank_overview

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def ranks(runs, qrels, golden):
    return h.first_relevant_ranks(runs, qrels, golden)


def in_top_k(runs, qrels, retriever, qid, k):
    """Independent of first_relevant_ranks: is any relevant chunk in the top k?"""
    return h.recall_at_k(runs[retriever][qid], h.relevant_ids(qrels[qid]), k) > 0


def test_ranks_widget_starts_on_a_question_where_the_retrievers_disagree(runs, qrels, golden, chunks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    qid = widget.question.value
    assert len({in_top_k(runs, qrels, r, qid, 3) for r in runs}) == 2


def test_picking_a_question_shows_its_ranks_and_top_k(runs, qrels, golden, chunks, ranks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    for qid in ("q02", "q13", "q21"):
        widget.question.value = qid
        for k in (1, 5):
            widget.k.value = k
            view = widget.view
            assert view["id"] == qid and f"<b>{qid}</b>" in widget.rank_table.value
            for retriever, run in runs.items():
                expected = ranks.loc[qid, retriever]
                assert view["ranks"][retriever] == (None if pd.isna(expected) else int(expected))
                first = next((r for r, c in enumerate(run[qid], 1) if c in h.relevant_ids(qrels[qid])), None)
                assert view["ranks"][retriever] == first
                assert view["rank_table"].loc[retriever, f"in the top {k}?"] == (
                    "yes" if first is not None and first <= k else "no")
                shown = view["top"][retriever]
                assert [row["chunk_id"] for row in shown] == run[qid][:k]
                for row in shown:
                    assert row["relevant"] == (row["chunk_id"] in qrels[qid])
                    assert ("<mark>" in row["html"]) == row["relevant"]
                    assert row["chunk_id"] in widget.top_chunks.value
            assert widget.overview.outputs[0]["data"]["image/png"] == figure_png(
                plot_rank_overview(widget.ranks, list(runs), qid, k))


def test_search_slice_and_disagreement_filters(runs, qrels, golden, chunks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    widget.search.value = "frost"
    assert [value for _, value in widget.question.options] == ["q13"] and widget.question.value == "q13"
    assert widget.matches.value == f"1 of {len(golden)} questions match"
    widget.search.value = "Q2"  # ids match case-insensitively, as a substring
    assert all(value.startswith("q2") for _, value in widget.question.options)
    widget.search.value = ""
    widget.slice.value = "exact_term"
    assert {value for _, value in widget.question.options} == set(golden.loc[golden["slice"] == "exact_term", "id"])
    widget.slice.value = ALL_SLICES
    widget.disagree.value = True
    for k in (1, 3, 5):
        widget.k.value = k
        expected = [q for q in golden["id"] if len({in_top_k(runs, qrels, r, q, k) for r in runs}) == 2]
        assert [value for _, value in widget.question.options] == expected
    widget.search.value = "no question says this"
    assert widget.question.value is None and widget.view is None
    assert "No question matches" in widget.rank_table.value


def test_a_question_no_retriever_found_shows_as_not_found(runs, qrels, golden, chunks):
    relevant = h.relevant_ids(qrels["q05"])
    cut = {name: dict(run) for name, run in runs.items()}
    cut["hybrid"]["q05"] = [c for c in runs["hybrid"]["q05"] if c not in relevant]
    widget = h.ranks_widget(cut, qrels, golden, chunks, k=3, question="q05")
    assert widget.view["ranks"]["hybrid"] is None
    assert widget.view["rank_table"].loc["hybrid"].tolist() == ["not found", "no"]
    assert widget.overview.outputs[0]["data"]["image/png"]


def test_filters_and_view_refuse_bad_input(runs, qrels, golden, chunks, ranks):
    with pytest.raises(ValueError, match="slice 'poetry' is not in the golden set"):
        h.filter_questions(ranks, list(runs), slice_name="poetry")
    with pytest.raises(ValueError, match="question 'q99' is not in the golden set"):
        h.question_view("q99", runs, qrels, golden, chunks, 3)
    with pytest.raises(ValueError, match="k must be >= 1"):
        h.question_view("q01", runs, qrels, golden, chunks, 0)


@pytest.mark.parametrize("k", [0, 11, 2.5, True])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(runs, qrels, golden, chunks, k):
    with pytest.raises(ValueError, match=rf"k = {k!r} is outside the slider's range 1 to 10"):
        h.ranks_widget(runs, qrels, golden, chunks, k=k)


def test_a_starting_question_not_in_the_golden_set_is_refused_not_replaced(runs, qrels, golden, chunks):
    with pytest.raises(ValueError, match="question 'q99' is not in the golden set"):
        h.ranks_widget(runs, qrels, golden, chunks, question="q99")
