"""retrieval_eval/widgets/playground.py: the toy ranking playground reads every value from the metric registry."""

import pytest

import helpers as h
from retrieval_eval.core.registry import METRICS, shown_metrics
from retrieval_eval.course.widgets.playground import playground_scores


def registry(gains, k, missed=()):
    ranking = [f"r{i}" for i in range(1, len(gains) + 1)]
    judged = {d: g for d, g in zip(ranking, gains) if g} | {f"m{i}": g for i, g in enumerate(missed)}
    return {name: metric.score(ranking, judged, k) for name, metric in METRICS.items()}


@pytest.mark.parametrize("gains, k, missed", [((0, 2, 0, 1, 0, 0, 1, 0, 0, 0), 5, ()), ((2, 0, 0), 1, (1,)),
                                              ((0, 0, 1, 2), 2, (2, 1)), ((0, 0, 0, 0, 0, 0, 0, 0, 0, 1), 10, ())])
def test_scores_are_the_registry_s_and_the_arithmetic_adds_up(gains, k, missed):
    result = playground_scores(list(gains), k, list(missed))
    assert result["scores"] == registry(gains, k, missed)
    for metric, line in result["arithmetic"].items():
        assert line.endswith(f"{result['scores'][metric]:.3f}"), (metric, line)
    hits = sum(g > 0 for g in gains[:k])
    assert result["arithmetic"]["precision"] == f"{hits} / {k} = {result['scores']['precision']:.3f}"


def test_clicks_cycle_the_gains_and_the_table_follows():
    playground = h.playground_widget(k=3)
    playground.rank_buttons[0].click()
    assert playground.gains[0] == 1 and playground.rank_buttons[0].description == "#1 · 1"
    playground.rank_buttons[0].click()
    playground.rank_buttons[0].click()
    assert playground.gains[0] == 0
    playground.reveal.value = True
    for metric in shown_metrics():  # the table shows the four; a metric beyond them when named (metrics=)
        assert f"<td>{registry(playground.gains, 3)[metric]:.3f}</td>" in playground.scores.value, metric
    assert playground.rank_buttons[2].layout.border.startswith("3px solid #111")  # in the top k: framed
    assert "transparent" in playground.rank_buttons[3].layout.border


def test_nothing_relevant_says_so_and_recovers():
    playground = h.playground_widget([0, 1, 0], k=2, max_gain=1)
    playground.set_gain(2, 0)
    assert "no chunk is relevant" in playground.scores.value and playground.state["values"] == {}
    playground.missed.value = 1
    assert "no chunk is relevant" not in playground.scores.value


def test_a_binary_playground_shows_the_metrics_taught_so_far():
    playground = h.playground_widget([1, 0, 0, 1], k=2, metrics=["recall"], max_gain=1)
    playground.reveal.value = True
    assert "recall@2" in playground.scores.value and "precision" not in playground.scores.value
    assert "relevant</span>" in playground.static_html() and "partly" not in playground.static_html()
    playground.rank_buttons[1].click()
    assert playground.gains[1] == 1


def test_playground_refuses_bad_input():
    with pytest.raises(ValueError, match="gain at rank 2 must be 0, 1 or 2, got 3"):
        playground_scores([0, 3], 1)
    with pytest.raises(ValueError, match="gain at rank 1 must be 0, 1 or 2, got True"):
        playground_scores([True], 1)
    with pytest.raises(ValueError, match="missed relevant chunk 1 must have gain 1 or 2"):
        playground_scores([1], 1, [0])
    with pytest.raises(ValueError, match="no chunk is relevant"):
        playground_scores([0, 0], 1)
    with pytest.raises(ValueError, match="k must be >= 1"):
        playground_scores([1], 0)
    with pytest.raises(ValueError, match="gains must be a list"):
        playground_scores("012", 1)
    playground = h.playground_widget()
    with pytest.raises(ValueError, match="rank must be 1 to 10, got 0"):
        playground.set_gain(0, 1)
    with pytest.raises(ValueError, match="gain must be 0 to 2, got 3"):
        playground.set_gain(1, 3)
    with pytest.raises(ValueError, match="gain at rank 2 is 2, above max_gain = 1"):
        h.playground_widget([0, 2], k=1, max_gain=1)
    with pytest.raises(ValueError, match="max_gain must be 1"):
        h.playground_widget(max_gain=3)
    with pytest.raises(ValueError, match="metrics must be a non-empty selection"):
        h.playground_widget(metrics=["ERR"])


@pytest.mark.parametrize("k", [0, 11, 2.5])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(k):
    with pytest.raises(ValueError, match=r"k must be|outside the slider's range 1 to 10"):
        h.playground_widget(k=k)
