"""retrieval_eval/widgets/ranks.py: every question's first relevant rank, and one question's top k."""

import re

import pandas as pd
import pytest

import helpers as h
from retrieval_eval.core.evaluation import disagree_at_k
from retrieval_eval.course.widgets.ranks import (
    filter_questions,
    question_html,
    question_view,
    rank_heatmap_html,
    snippet_html,
)


@pytest.fixture(scope="module")
def ranks(setup):
    return h.first_relevant_ranks(setup.runs, setup.qrels, setup.golden)


def cells(html: str, qid: str) -> list[str]:
    return re.findall(rf"<td data-q='{qid}'[^>]*>([^<]*)</td>", html)


def test_the_heat_map_shows_every_first_relevant_rank_only_when_shown(ranks, setup):
    shown, hidden = rank_heatmap_html(ranks, 3, True), rank_heatmap_html(ranks, 3, False)
    for qid in ranks.index:
        expected = ["–" if pd.isna(r) else str(int(r)) for r in ranks.loc[qid, list(setup.runs)]]
        assert cells(shown, qid) == expected
        assert cells(hidden, qid) == ["?"] * len(setup.runs)
    assert "#f1e4c8" in shown and "#f1e4c8" not in hidden  # below k, sand: only once shown


def test_a_question_shows_each_run_s_top_k_and_marks_relevance_only_when_shown(ranks, setup):
    view = question_view("q02", setup.runs, setup.qrels, setup.golden, setup.chunks, 3, ranks)
    assert {name: [r["chunk_id"] for r in rows] for name, rows in view["top"].items()} == {
        name: run["q02"][:3] for name, run in setup.runs.items()}
    head, hidden = question_html(view, False)
    _, shown = question_html(view, True)
    assert view["evidence"] in head.replace("&amp;", "&") and "<mark>" not in hidden and "rw-relevant" not in hidden
    for name, rank in view["ranks"].items():
        assert f"{name}</b>: first relevant at rank ?" in hidden
        assert (f"first relevant at rank {rank}" if rank else "no relevant chunk ranked") in shown
    assert ("<mark>" in shown) == any(r["relevant"] for rows in view["top"].values() for r in rows)


def test_snippets_are_one_paragraph_from_the_evidence_on():
    text = "First line.\n\nSecond   line with the answer: 42 days.\n" + "more " * 200
    assert snippet_html(text).startswith("First line. Second line")
    marked = snippet_html(text, "the answer: 42 days")
    assert marked.startswith("… <mark>the answer: 42 days</mark>. more more")  # the evidence in the first line
    assert snippet_html("the answer and more", "the answer").startswith("<mark>the answer</mark>")
    assert snippet_html("<b>", None) == "&lt;b&gt;"


def test_search_slice_and_disagreement_filter_the_questions(ranks, setup):
    assert filter_questions(ranks, "FROST") == [q for q in ranks.index if "frost" in ranks.loc[q, "question"].lower()]
    a_slice = sorted(set(ranks["slice"]))[0]
    assert filter_questions(ranks, slice_name=a_slice) == list(ranks.index[ranks["slice"] == a_slice])
    assert filter_questions(ranks, disagree_k=3) == list(ranks.index[disagree_at_k(ranks, 3)])
    widget = h.ranks_widget(setup.runs, setup.qrels, setup.golden, setup.chunks)
    assert widget.question.value == filter_questions(ranks, disagree_k=3)[0]
    widget.search.value = "frost"
    assert widget.matches.value.startswith(f"{len(filter_questions(ranks, 'frost'))} of {len(ranks)}")
    assert "opacity: 0.25" in widget.frame.value
    widget.search.value = "no question says this"
    assert "No question matches" in widget.head.value
    widget.reset()
    assert widget.search.value == "" and widget.question.value == filter_questions(ranks, disagree_k=3)[0]


def test_a_click_on_a_question_s_column_picks_it_and_clears_a_filter_that_hides_it(ranks, setup):
    widget = h.ranks_widget(setup.runs, setup.qrels, setup.golden, setup.chunks)
    other = next(q for q in ranks.index if q != widget.question.value)
    widget.picker.picked = other  # what the click sends (the browser test clicks: tests/test_browser.py)
    assert widget.question.value == other and widget.head.value.startswith(f"<b>{other}</b>")
    widget.slice.value = next(s for s in sorted(set(ranks["slice"])) if s != ranks.loc[other, "slice"])
    widget.pick(other)
    assert widget.slice.value == "all slices" and widget.question.value == other
    assert f"[data-q='{other}'] {{ outline" in widget.frame.value


def test_ranks_widget_refuses_bad_input(ranks, setup):
    with pytest.raises(ValueError, match="slice 'poetry' is not in the golden set"):
        filter_questions(ranks, slice_name="poetry")
    with pytest.raises(ValueError, match="question 'q99' is not in the golden set"):
        question_view("q99", setup.runs, setup.qrels, setup.golden, setup.chunks, 3, ranks)
    with pytest.raises(ValueError, match="columns must be >= 1"):
        rank_heatmap_html(ranks, 3, True, columns=0)
    with pytest.raises(ValueError, match="question 'q99' is not in the golden set"):
        h.ranks_widget(setup.runs, setup.qrels, setup.golden, setup.chunks, question="q99")
    with pytest.raises(ValueError, match=r"k = 0 is outside the slider's range 1 to 10"):
        h.ranks_widget(setup.runs, setup.qrels, setup.golden, setup.chunks, k=0)
    with pytest.raises(ValueError, match="no-such-chunk"):
        h.ranks_widget({"x": {**setup.runs["BM25"], "q01": ["no-such-chunk"]}}, setup.qrels, setup.golden, setup.chunks)
