"""retrieval_eval/widgets/ranks.py: the per-question ranks widget, its filters, heat map and view of one question.

Set the controls in Python and check what it shows: every rank it displays is compared with the
metric functions, so the widget cannot drift from the tables.
"""

import re

import pandas as pd
import pytest

import helpers as h
from retrieval_eval.widgets.ranks import ALL_SLICES, heatmap_frame_css, rank_heatmap_html


@pytest.fixture(scope="module")
def ranks(runs, qrels, golden):
    return h.first_relevant_ranks(runs, qrels, golden)


def in_top_k(runs, qrels, retriever, qid, k):
    """Independent of first_relevant_ranks: is any relevant chunk in the top k?"""
    return h.recall_at_k(runs[retriever][qid], h.relevant_ids(qrels[qid]), k) > 0


def first_relevant(run, relevant):
    return next((r for r, c in enumerate(run, 1) if c in relevant), None)


def heatmap_cells(shown: str) -> dict:
    """{(retriever, question): cell text} read back from the heat map's HTML."""
    cells = {}
    for table in re.findall(r"<table class='rw-heatmap'.*?</table>", shown):
        ids = re.findall(r"<th data-q='([^']+)'", table)
        for name, row in re.findall(r"<tr><th style='text-align:right'>([^<]+)</th>(.*?)</tr>", table):
            values = re.findall(r"<td data-q='([^']+)'[^>]*>([^<]*)</td>", row)
            assert [q for q, _ in values] == ids
            cells.update({(name, q): v for q, v in values})
    return cells


def test_ranks_widget_starts_on_a_question_where_the_retrievers_disagree(runs, qrels, golden, chunks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    qid = widget.question.value
    assert len({in_top_k(runs, qrels, r, qid, 3) for r in runs}) == 2


def test_heatmap_shows_every_first_relevant_rank(runs, qrels, golden, ranks):
    for k in (1, 3):
        cells = heatmap_cells(rank_heatmap_html(ranks, list(runs), k))
        assert len(cells) == len(runs) * len(golden)
        for name, run in runs.items():
            for qid in golden["id"]:
                rank = first_relevant(run[qid], h.relevant_ids(qrels[qid]))
                assert cells[(name, qid)] == ("–" if rank is None else str(rank)), (name, qid)


def test_heatmap_colours_the_top_k_blue_and_frames_the_picked_question(runs, ranks):
    shown = rank_heatmap_html(ranks, list(runs), 3, selected="q13", matches=["q13", "q02"])
    framed = set(re.findall(r"data-q='([^']+)' style='[^']*outline", shown))
    assert framed == {"q13"}
    faded = set(re.findall(r"data-q='([^']+)' style='[^']*opacity", shown))
    assert faded == set(ranks.index) - {"q13", "q02"}
    cells = re.findall(r"<td data-q='[^']+' style='background:(#[0-9a-f]+);[^>]*>([^<]*)</td>", shown)
    for background, value in cells:
        in_top = value not in ("–",) and int(value) <= 3
        assert (background not in ("#f1e4c8", "#ffffff")) == in_top, (background, value)
    assert len(re.findall(r"<table class='rw-heatmap'", shown)) == 2  # 47 questions in blocks of 24


def test_picking_a_question_moves_only_the_frame(runs, qrels, golden, chunks, ranks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    heatmap = widget.heatmap.value
    for qid in ("q02", "q13", "q21"):
        widget.question.value = qid
        assert widget.heatmap.value == heatmap  # drawn once for this k
        assert widget.frame.value == heatmap_frame_css(widget.scope, qid)
        assert f".{widget.scope} [data-q='{qid}']" in widget.frame.value
        assert widget.scope in widget.heatmap._dom_classes


def test_picking_a_question_shows_its_ranks_and_top_k(runs, qrels, golden, chunks, ranks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    for qid in ("q02", "q13", "q21"):
        widget.question.value = qid
        for k in (1, 5):
            widget.k.value = k
            view = widget.view
            assert view["id"] == qid and f"<b>{qid}</b>" in widget.head.value
            for retriever, run in runs.items():
                expected = ranks.loc[qid, retriever]
                assert view["ranks"][retriever] == (None if pd.isna(expected) else int(expected))
                first = first_relevant(run[qid], h.relevant_ids(qrels[qid]))
                assert view["ranks"][retriever] == first
                assert view["rank_table"].loc[retriever, f"in the top {k}?"] == (
                    "yes" if first is not None and first <= k else "no")
                phrase = "no relevant chunk ranked" if first is None else f"first relevant at rank {first}"
                assert f"<b>{retriever}</b>: {phrase}" in widget.top_chunks.value
                shown = view["top"][retriever]
                assert [row["chunk_id"] for row in shown] == run[qid][:k]
                for row in shown:
                    assert row["relevant"] == (row["chunk_id"] in qrels[qid])
                    assert ("<mark>" in row["html"]) == row["relevant"]
                    assert row["chunk_id"] in widget.top_chunks.value
            assert rank_heatmap_html(ranks, list(runs), k) in widget.heatmap.value


def test_search_slice_and_disagreement_filters(runs, qrels, golden, chunks):
    widget = h.ranks_widget(runs, qrels, golden, chunks, k=3)
    widget.search.value = "frost"  # no running event loop here: the search runs at once
    assert [value for _, value in widget.question.options] == ["q13"] and widget.question.value == "q13"
    assert widget.matches.value == f"1 of {len(golden)} questions match"
    assert "q01" in widget.frame.value and "opacity" in widget.frame.value  # the others are faded
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
    assert "No question matches" in widget.head.value
    widget.reset()
    assert widget.search.value == "" and widget.disagree.value is False and widget.k.value == 3
    assert widget.question.value == widget.start[1] and len(widget.question.options) == len(golden)


def test_a_question_no_retriever_found_shows_as_not_found(runs, qrels, golden, chunks):
    relevant = h.relevant_ids(qrels["q05"])
    cut = {name: dict(run) for name, run in runs.items()}
    cut["hybrid"]["q05"] = [c for c in runs["hybrid"]["q05"] if c not in relevant]
    widget = h.ranks_widget(cut, qrels, golden, chunks, k=3, question="q05")
    assert widget.view["ranks"]["hybrid"] is None
    assert widget.view["rank_table"].loc["hybrid"].tolist() == ["not found", "no"]
    assert heatmap_cells(widget.heatmap.value)[("hybrid", "q05")] == "–"
    assert "<b>hybrid</b>: no relevant chunk ranked" in widget.top_chunks.value


def test_filters_and_view_refuse_bad_input(runs, qrels, golden, chunks, ranks):
    with pytest.raises(ValueError, match="slice 'poetry' is not in the golden set"):
        h.filter_questions(ranks, list(runs), slice_name="poetry")
    with pytest.raises(ValueError, match="question 'q99' is not in the golden set"):
        h.question_view("q99", runs, qrels, golden, chunks, 3)
    with pytest.raises(ValueError, match="k must be >= 1"):
        h.question_view("q01", runs, qrels, golden, chunks, 0)
    with pytest.raises(ValueError, match="question 'q99' is not in the ranks table"):
        rank_heatmap_html(ranks, list(runs), 3, selected="q99")
    with pytest.raises(ValueError, match="columns must be >= 1"):
        rank_heatmap_html(ranks, list(runs), 3, columns=0)


@pytest.mark.parametrize("k", [0, 11, 2.5, True])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(runs, qrels, golden, chunks, k):
    with pytest.raises(ValueError, match=rf"k = {k!r} is outside the slider's range 1 to 10"):
        h.ranks_widget(runs, qrels, golden, chunks, k=k)


def test_a_starting_question_not_in_the_golden_set_is_refused_not_replaced(runs, qrels, golden, chunks):
    with pytest.raises(ValueError, match="question 'q99' is not in the golden set"):
        h.ranks_widget(runs, qrels, golden, chunks, question="q99")
