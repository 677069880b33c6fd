"""retrieval_eval/widgets/ceiling.py: the precision@k ceiling widget, its report and figure.

Every number it shows is compared with the evaluation engine or with a value computed here from the
labels; the figure it shows is the one drawn fresh for the same settings, and hidden it is the same
empty axes whatever the retriever and the "what if".
"""

import re

import pytest

import helpers as h
from retrieval_eval.course.widgets.ceiling import (
    AS_LABELLED,
    WHAT_IF_MAX,
    CeilingFigure,
    ceiling_by_k,
    ceiling_report,
    hypothetical_qrels,
)


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.fixture(scope="module")
def ceiling(setup):
    return h.ceiling_widget(setup.qrels, setup.runs)


def test_the_ceiling_and_each_run_at_every_k(ceiling, setup):
    sizes = [len(h.relevant_ids(g)) for g in setup.qrels.values()]
    table = h.evaluate(setup.runs, setup.qrels, ks=range(1, 11))
    ceiling.reveal.value = True
    for k in range(1, 11):
        retriever = list(setup.runs)[k % len(setup.runs)]
        ceiling.retriever.value, ceiling.k.value = retriever, k
        expected = sum(min(n, k) / k for n in sizes) / len(sizes)
        assert ceiling.state["ceiling"] == pytest.approx(expected, abs=1e-12)
        precision, recall = table.loc[retriever, ("precision", k)], table.loc[retriever, ("recall", k)]
        shown = text(ceiling.sentence.value)
        assert f"{expected:.3f}" in shown and f"{retriever} reaches precision@{k} = {precision:.3f}" in shown
        assert f"recall@{k} = {recall:.3f}" in shown and f"<td>{precision:.3f}</td>" in ceiling.numbers.value
    ceiling.reset()


def test_hidden_the_widget_asks_and_shows_no_value(ceiling, setup):
    ceiling.reset()
    single = [len(h.relevant_ids(g)) for g in setup.qrels.values()].count(1)
    assert f"{single} of the {len(setup.qrels)} questions have 1 relevant chunk" in ceiling.sentence.value
    assert "Predict" in ceiling.sentence.value and f"{h.precision_ceiling(setup.qrels, 3):.3f}" not in ceiling.numbers.value


def test_what_if_moves_the_ceiling_and_not_the_measured_values(ceiling, setup):
    ceiling.reset()
    ceiling.reveal.value = True
    measured = ceiling.state["numbers"].drop(index="ceiling")
    for n in range(1, WHAT_IF_MAX + 1):
        ceiling.what_if.value = str(n)
        assert ceiling.state["what_if_ceiling"] == pytest.approx(min(n, 3) / 3)
        assert f"every question had {n} relevant chunk" in ceiling.sentence.value
        assert ceiling.state["numbers"].drop(index="ceiling").equals(measured)
    assert ceiling.moved() == {"what-if ceiling": f"{1 / 3:.3f} → 1.000"}  # counted from when it appeared, n = 1
    ceiling.reset()


def test_another_retriever_starts_a_new_round_and_the_change_line_says_so(ceiling, setup):
    ceiling.reset()
    ceiling.reveal.value = True
    ceiling.retriever.value = "vector"
    assert "Nothing has moved since the retriever was changed." in ceiling.change.value  # not "since the start"
    ceiling.k.value = 5
    assert "Since the retriever was changed:" in ceiling.change.value and "vector precision" in ceiling.change.value
    ceiling.reset()


def test_the_figure_shown_is_the_one_drawn_for_the_settings(ceiling, setup):
    fresh = CeilingFigure(setup.qrels, ceiling.table)
    ceiling.reveal.value = True
    for k, retriever, what_if in ((4, "hybrid", "2"), (7, "BM25", AS_LABELLED)):
        ceiling.k.value, ceiling.retriever.value, ceiling.what_if.value = k, retriever, what_if
        assert ceiling.plot.value == fresh.draw(k, retriever, None if what_if == AS_LABELLED else int(what_if), True)
    revealed = ceiling.plot.value
    ceiling.reveal.value = False
    hidden = ceiling.plot.value
    assert hidden != revealed and hidden == fresh.draw(7, "vector", 3, False)  # hidden: the axes at k only
    ceiling.reset()


def test_ceiling_by_k_is_in_the_static_copy_folded(ceiling, setup):
    table = ceiling_by_k(setup.qrels, ceiling.table)
    assert list(table["ceiling"]) == [h.precision_ceiling(setup.qrels, k) for k in range(1, 11)]
    before, _, folded = ceiling.static_html().partition("<details>")
    assert f"{table.loc[10, 'ceiling']:.3f}" in folded and f"{table.loc[3, 'ceiling']:.3f}" not in before


def test_ceiling_refuses_bad_input(ceiling, setup):
    with pytest.raises(ValueError, match="k = 11 is not a cut-off"):
        ceiling_report(setup.qrels, ceiling.table, 11, "BM25")
    with pytest.raises(ValueError, match="retriever 'splade' is not in the table"):
        ceiling_report(setup.qrels, ceiling.table, 3, "splade")
    with pytest.raises(ValueError, match="n_relevant must be >= 1"):
        hypothetical_qrels(setup.qrels, 0)
    with pytest.raises(ValueError, match="question 'q01'"):
        h.ceiling_widget(setup.qrels, {"broken": {**setup.runs["BM25"], "q01": ["no-such-chunk", "no-such-chunk"]}})


@pytest.mark.parametrize("k", [0, 11, 3.5])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(setup, k):
    with pytest.raises(ValueError, match=rf"k = {k!r} is outside the slider's range 1 to 10"):
        h.ceiling_widget(setup.qrels, setup.runs, k=k)
