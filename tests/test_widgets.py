"""The three classroom widgets without a browser: set their controls in Python, check what they show.

Every number a widget displays is compared with the metric functions of helpers.py (or with a
value computed here from the labels), so a widget cannot drift from the tables.
"""

import json
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

import helpers as h

matplotlib.use("Agg")

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "07_widgets.ipynb"


@pytest.fixture(scope="module")
def ceiling(qrels, runs):
    return h.ceiling_widget(qrels, runs)


@pytest.fixture(scope="module")
def ranks(runs, qrels, golden):
    return h.first_relevant_ranks(runs, qrels, golden)


# 1. The precision@k ceiling -----------------------------------------------------------------


def test_ceiling_at_every_k_equals_the_ceiling_from_the_labels(ceiling, qrels, runs):
    sizes = [len(h.relevant_ids(g)) for g in qrels.values()]
    table = h.evaluate(runs, qrels, ks=range(1, 11))
    ceiling.what_if.value = "as labelled"
    for k in range(1, 11):
        retriever = list(runs)[k % len(runs)]  # each retriever at several k
        ceiling.retriever.value, ceiling.k.value = retriever, k
        expected = sum(min(n, k) / k for n in sizes) / len(sizes)
        report, shown = ceiling.report, ceiling.sentence.value
        assert report["ceiling"] == pytest.approx(expected, abs=1e-12)
        assert report["ceiling"] == h.precision_ceiling(qrels, k)
        assert f"At k = {k}," in shown and f"<b>{expected:.3f}</b>" in shown
        assert f"{expected:.3f}" in ceiling.numbers.value
        precision, recall = table.loc[retriever, ("precision", k)], table.loc[retriever, ("recall", k)]
        assert report["numbers"].loc[retriever, f"precision@{k}"] == pytest.approx(precision)
        assert report["numbers"].loc[retriever, f"recall@{k}"] == pytest.approx(recall)
        assert f"<b>{retriever}</b> reaches precision@{k} = {precision:.3f}" in shown
        assert f"recall@{k} = {recall:.3f}" in shown


def test_ceiling_sentence_names_the_counts_of_relevant_chunks(ceiling):
    ceiling.what_if.value, ceiling.k.value = "as labelled", 3
    assert "46 of the 47 questions have 1 relevant chunk and 1 has 2" in ceiling.sentence.value
    ceiling.k.value = 1
    assert "the ceiling is <b>1.000</b>" in ceiling.sentence.value


def test_what_if_moves_the_ceiling_and_not_the_measured_values(ceiling, qrels):
    ceiling.retriever.value, ceiling.k.value = "vector", 3
    measured = ceiling.report["numbers"].drop(index="ceiling")
    for n in range(1, h.WHAT_IF_MAX + 1):
        ceiling.what_if.value = str(n)
        assert ceiling.report["what_if_ceiling"] == pytest.approx(min(n, 3) / 3)
        assert ceiling.report["ceiling"] == h.precision_ceiling(qrels, 3)
        assert f"every question had {n} relevant chunk" in ceiling.sentence.value
        assert ceiling.report["numbers"].drop(index="ceiling").equals(measured)
    ceiling.what_if.value = "as labelled"
    assert ceiling.report["what_if_ceiling"] is None and "What if" not in ceiling.sentence.value


def test_ceiling_plot_is_redrawn_for_the_settings(ceiling, qrels):
    ceiling.k.value, ceiling.retriever.value, ceiling.what_if.value = 4, "hybrid", "2"
    shown = ceiling.plot.outputs[0]["data"]["image/png"]
    assert shown == h.figure_png(h.plot_ceiling(qrels, ceiling.table, 4, "hybrid", 2))
    ceiling.what_if.value = "as labelled"


def test_ceiling_by_k_is_the_static_table(ceiling, qrels):
    table = h.ceiling_by_k(qrels, ceiling.table)
    assert list(table.index) == list(range(1, 11))
    assert list(table["ceiling"]) == [h.precision_ceiling(qrels, k) for k in range(1, 11)]
    assert list(table["BM25 recall"]) == list(ceiling.table.loc["BM25", "recall"])


def test_ceiling_report_refuses_bad_input(ceiling, qrels):
    with pytest.raises(ValueError, match="k = 11 is not a cut-off"):
        h.ceiling_report(qrels, ceiling.table, 11, "BM25")
    with pytest.raises(ValueError, match="retriever 'splade' is not in the table"):
        h.ceiling_report(qrels, ceiling.table, 3, "splade")
    with pytest.raises(ValueError, match="n_relevant must be >= 1"):
        h.ceiling_report(qrels, ceiling.table, 3, "BM25", what_if=0)


# 2. Per-question ranks ------------------------------------------------------------------------


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
            assert widget.overview.outputs[0]["data"]["image/png"] == h.figure_png(
                h.plot_rank_overview(widget.ranks, list(runs), qid, k))


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
    widget.slice.value = h.ALL_SLICES
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


# 3. The ranking playground ------------------------------------------------------------------


def expected_scores(gains, k, missed=()):
    """The four metrics straight from helpers' functions, on the same toy ranking."""
    ranked = [f"doc{i}" for i in range(len(gains))]
    judged = {d: g for d, g in zip(ranked, gains) if g > 0} | {f"gone{i}": g for i, g in enumerate(missed)}
    relevant = h.relevant_ids(judged)
    return {
        "recall": h.recall_at_k(ranked, relevant, k),
        "precision": h.precision_at_k(ranked, relevant, k),
        "reciprocal rank": h.reciprocal_rank(ranked, relevant, k),
        "nDCG": h.ndcg_at_k(ranked, judged, k),
    }


def test_playground_clicks_cycle_the_gains():
    widget = h.playground_widget(gains=[0] * 9 + [1], k=5)
    button = widget.buttons[2]
    assert button.description == "#3 · 0"
    for expected in (1, 2, 0, 1):
        button.click()
        assert widget.gains[2] == expected and button.description == f"#3 · {expected}"


def test_playground_numbers_equal_the_helpers_metrics():
    widget = h.playground_widget()
    cases = [
        [0, 2, 0, 1, 0, 0, 1, 0, 0, 0],
        [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [1, 1, 2, 0, 2, 1, 0, 0, 2, 0],
        [2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
    ]
    for gains in cases:
        for rank, gain in enumerate(gains, start=1):
            while widget.gains[rank - 1] != gain:
                widget.buttons[rank - 1].click()
        for missed in (0, 2):
            widget.missed.value = missed
            for k in range(1, 11):
                widget.k.value = k
                expected = expected_scores(gains, k, [1] * missed)
                assert widget.result["scores"] == pytest.approx(expected), (gains, k, missed)
                for metric, value in expected.items():
                    assert widget.result["arithmetic"][metric].endswith(f"{value:.3f}" if value else "0")
                    assert f"<td>{value:.3f}</td>" in widget.scores_html.value


def test_playground_arithmetic_adds_up():
    result = h.playground_scores([0, 2, 0, 1, 0, 0, 1, 0, 0, 0], k=5)
    assert result["arithmetic"]["recall"] == "relevant in the top 5 / all relevant = 2 / 3 = 0.667"
    assert result["arithmetic"]["precision"] == "relevant in the top 5 / k = 2 / 5 = 0.400"
    assert result["arithmetic"]["reciprocal rank"] == "1 / rank of the first relevant result = 1 / 2 = 0.500"
    dcg, ideal = h.dcg_at_k([0, 2, 0, 1, 0], 5), h.dcg_at_k([2, 1, 1], 5)
    assert result["arithmetic"]["nDCG"] == (
        "DCG / IDCG = (2/log2(3) + 1/log2(5)) / (2/log2(2) + 1/log2(3) + 1/log2(4)) "
        f"= (1.262 + 0.431) / (2.000 + 0.631 + 0.500) = {dcg:.3f} / {ideal:.3f} = {dcg / ideal:.3f}"
    )
    assert list(result["table"]["DCG term"])[:5] == ["", "2/log2(3) = 1.262", "", "1/log2(5) = 0.431", ""]


def test_playground_with_nothing_relevant_says_so():
    widget = h.playground_widget(gains=[0, 0, 1] + [0] * 7, k=3)
    widget.buttons[2].click()  # 1 → 2
    widget.buttons[2].click()  # 2 → 0: nothing relevant left
    assert widget.result is None
    assert "mark at least one result relevant" in widget.scores_html.value
    widget.missed.value = 1  # a relevant chunk the ranking missed: scorable again, all 0
    assert widget.result["scores"] == {"recall": 0.0, "precision": 0.0, "reciprocal rank": 0.0, "nDCG": 0.0}


def test_playground_refuses_bad_gains():
    with pytest.raises(ValueError, match="gain at rank 2 must be 0, 1 or 2, got 3"):
        h.playground_scores([0, 3], 1)
    with pytest.raises(ValueError, match="gain at rank 1 must be 0, 1 or 2, got True"):
        h.playground_scores([True], 1)
    with pytest.raises(ValueError, match="missed relevant chunk 1 must have gain 1 or 2"):
        h.playground_scores([1], 1, missed=[0])
    with pytest.raises(ValueError, match="no chunk is relevant"):
        h.playground_scores([0, 0], 1)
    with pytest.raises(ValueError, match="k must be >= 1"):
        h.playground_scores([1], 0)
    widget = h.playground_widget()
    with pytest.raises(ValueError, match="rank must be 1 to 10, got 0"):
        widget.set_gain(0, 1)
    with pytest.raises(ValueError, match="gain must be 0, 1 or 2, got 3"):
        widget.set_gain(1, 3)


# Static fallbacks and the committed notebook ------------------------------------------------


def test_every_widget_has_a_static_fallback(ceiling, runs, qrels, golden, chunks):
    import matplotlib.pyplot as plt

    for widget in (ceiling, h.ranks_widget(runs, qrels, golden, chunks), h.playground_widget()):
        items = widget.static_fallback()
        assert items and any(isinstance(i, (plt.Figure, pd.DataFrame)) for i in items), widget.label
        for item in items:
            if isinstance(item, plt.Figure):
                plt.close(item)


def test_committed_widget_notebook_has_no_widget_state_and_shows_fallbacks():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert "widgets" not in nb["metadata"], "saved widget state breaks rendering on GitHub: run `make notebooks`"
    widget_cells = [c for c in nb["cells"] if c["cell_type"] == "code" and "_widget(" in "".join(c["source"])]
    assert len(widget_cells) == 3
    for cell in widget_cells:
        kinds = [kind for output in cell["outputs"] for kind in output.get("data", {})]
        assert kinds[0] == "application/vnd.jupyter.widget-view+json"
        assert "image/png" in kinds or kinds.count("text/html") >= 1, "".join(cell["source"])
