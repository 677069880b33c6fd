"""retrieval_eval/widgets/ceiling.py: the precision@k ceiling widget, its report, plot and static table.

Set the controls in Python and check what it shows: every number it displays is compared with the
metric functions (or with a value computed here from the labels), so the widget cannot drift from the tables.
"""

import re

import pytest

import helpers as h
from retrieval_eval.widgets._view import figure_png
from retrieval_eval.widgets.ceiling import AS_LABELLED, WHAT_IF_MAX, plot_ceiling


def text(html: str) -> str:
    """What a reader sees once the numbers are shown: the HTML without its tags."""
    return re.sub(r"<[^>]+>", "", html)


def test_ceiling_at_every_k_equals_the_ceiling_from_the_labels(ceiling, qrels, runs):
    sizes = [len(h.relevant_ids(g)) for g in qrels.values()]
    table = h.evaluate(runs, qrels, ks=range(1, 11))
    ceiling.what_if.value = AS_LABELLED
    for k in range(1, 11):
        retriever = list(runs)[k % len(runs)]  # each retriever at several k
        ceiling.retriever.value, ceiling.k.value = retriever, k
        expected = sum(min(n, k) / k for n in sizes) / len(sizes)
        report, shown = ceiling.report, text(ceiling.sentence.value)
        assert report["ceiling"] == pytest.approx(expected, abs=1e-12)
        assert report["ceiling"] == h.precision_ceiling(qrels, k)
        assert f"At k = {k}," in shown and f"{expected:.3f}" in shown
        assert f"{expected:.3f}" in ceiling.numbers.value
        precision, recall = table.loc[retriever, ("precision", k)], table.loc[retriever, ("recall", k)]
        assert report["numbers"].loc[retriever, f"precision@{k}"] == pytest.approx(precision)
        assert report["numbers"].loc[retriever, f"recall@{k}"] == pytest.approx(recall)
        assert f"{retriever} reaches precision@{k} = {precision:.3f}" in shown
        assert f"recall@{k} = {recall:.3f}" in shown
        assert f"<span class='rw-num'>{precision:.3f}</span>" in ceiling.numbers.value  # hidden until revealed


def test_ceiling_sentence_names_the_counts_of_relevant_chunks(ceiling, qrels):
    ceiling.what_if.value, ceiling.k.value = AS_LABELLED, 3
    sizes = [len(h.relevant_ids(g)) for g in qrels.values()]
    single = sizes.count(1)
    assert f"{single} of the {len(sizes)} questions have 1 relevant chunk" in text(ceiling.sentence.value)
    ceiling.k.value = 1
    assert "the ceiling is 1.000" in text(ceiling.sentence.value)


def test_what_if_moves_the_ceiling_and_not_the_measured_values(ceiling, qrels):
    ceiling.retriever.value, ceiling.k.value = "vector", 3
    measured = ceiling.report["numbers"].drop(index="ceiling")
    for n in range(1, WHAT_IF_MAX + 1):
        ceiling.what_if.value = str(n)
        assert ceiling.report["what_if_ceiling"] == pytest.approx(min(n, 3) / 3)
        assert ceiling.report["ceiling"] == h.precision_ceiling(qrels, 3)
        assert f"every question had {n} relevant chunk" in ceiling.sentence.value
        assert ceiling.report["numbers"].drop(index="ceiling").equals(measured)
    ceiling.what_if.value = AS_LABELLED
    assert ceiling.report["what_if_ceiling"] is None and "What if" not in ceiling.sentence.value


def test_a_change_is_marked_old_to_new(ceiling, qrels):
    ceiling.what_if.value, ceiling.retriever.value, ceiling.k.value = AS_LABELLED, "BM25", 3
    ceiling.k.value = 4
    old, new = h.precision_ceiling(qrels, 3), h.precision_ceiling(qrels, 4)
    assert f"Changed: ceiling <span class='rw-num'>{old:.3f} → {new:.3f}</span>" in ceiling.sentence.value


def test_the_figure_shown_is_the_plot_for_the_settings(ceiling, qrels):
    """The widget redraws one figure in place; its PNG equals a fresh plot_ceiling for the same settings."""
    for k, retriever, what_if in ((4, "hybrid", "2"), (7, "BM25", AS_LABELLED), (4, "hybrid", "2")):
        ceiling.k.value, ceiling.retriever.value, ceiling.what_if.value = k, retriever, what_if
        expected = plot_ceiling(qrels, ceiling.table, k, retriever, None if what_if == AS_LABELLED else int(what_if))
        assert ceiling.plot.value == figure_png(expected)
    ceiling.what_if.value = AS_LABELLED


def test_reset_returns_to_the_start(ceiling):
    ceiling.k.value, ceiling.retriever.value, ceiling.what_if.value, ceiling.reveal.value = 8, "hybrid", "3", True
    ceiling.reset()
    assert (ceiling.k.value, ceiling.retriever.value, ceiling.what_if.value) == (3, "BM25", AS_LABELLED)
    assert "rw-concealed" in ceiling.ui._dom_classes and "Changed" not in ceiling.sentence.value


def test_ceiling_by_k_is_the_static_table(ceiling, qrels):
    table = h.ceiling_by_k(qrels, ceiling.table)
    assert list(table.index) == list(range(1, 11))
    assert list(table["ceiling"]) == [h.precision_ceiling(qrels, k) for k in range(1, 11)]
    assert list(table["BM25 recall"]) == list(ceiling.table.loc["BM25", "recall"])
    assert f"{table.loc[10, 'ceiling']:.3f}" in ceiling.static_html()


def test_ceiling_report_refuses_bad_input(ceiling, qrels):
    with pytest.raises(ValueError, match="k = 11 is not a cut-off"):
        h.ceiling_report(qrels, ceiling.table, 11, "BM25")
    with pytest.raises(ValueError, match="retriever 'splade' is not in the table"):
        h.ceiling_report(qrels, ceiling.table, 3, "splade")
    with pytest.raises(ValueError, match="n_relevant must be >= 1"):
        h.ceiling_report(qrels, ceiling.table, 3, "BM25", what_if=0)


@pytest.mark.parametrize("k", [0, 11, 3.5])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(qrels, runs, k):
    with pytest.raises(ValueError, match=rf"k = {k!r} is outside the slider's range 1 to 10"):
        h.ceiling_widget(qrels, runs, k=k)
