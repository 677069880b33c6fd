"""retrieval_eval/widgets/ceiling.py: the precision@k ceiling widget, its report, plot and static table.

Set the controls in Python and check what it shows: every number it displays is compared with the
metric functions (or with a value computed here from the labels), so the widget cannot drift from the tables.
"""

import matplotlib
import pytest

import helpers as h
from retrieval_eval.widgets._view import figure_png
from retrieval_eval.widgets.ceiling import WHAT_IF_MAX, plot_ceiling

matplotlib.use("Agg")


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
    for n in range(1, WHAT_IF_MAX + 1):
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
    assert shown == figure_png(plot_ceiling(qrels, ceiling.table, 4, "hybrid", 2))
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


@pytest.mark.parametrize("k", [0, 11, 3.5])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(qrels, runs, k):
    with pytest.raises(ValueError, match=rf"k = {k!r} is outside the slider's range 1 to 10"):
        h.ceiling_widget(qrels, runs, k=k)
