"""retrieval_eval/widgets/playground.py: the ranking playground; click the gains, check the metrics it shows and marks."""

import pytest

import helpers as h


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
                    assert f"<td><span class='rw-num'>{value:.3f}</span></td>" in widget.scores_html.value


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
    with pytest.raises(ValueError, match="gain must be 0 to 2, got 3"):
        widget.set_gain(1, 3)
    with pytest.raises(ValueError, match="gain at rank 2 is 2, above max_gain = 1"):
        h.playground_widget([0, 2, 1], k=2, max_gain=1)
    with pytest.raises(ValueError, match="max_gain must be 1"):
        h.playground_widget(max_gain=3)
    with pytest.raises(ValueError, match="metrics must be a non-empty selection"):
        h.playground_widget(metrics=["MAP"])


def test_a_change_is_marked_old_to_new_and_reset_restores_the_start():
    widget = h.playground_widget(gains=[0, 2, 0, 1, 0, 0, 1, 0, 0, 0], k=5)
    assert "rw-changed" not in widget.scores_html.value  # nothing changed yet
    before = h.playground_scores([0, 2, 0, 1, 0, 0, 1, 0, 0, 0], 5)["scores"]
    widget.buttons[0].click()  # rank 1: 0 → 1
    after = h.playground_scores([1, 2, 0, 1, 0, 0, 1, 0, 0, 0], 5)["scores"]
    shown = widget.scores_html.value
    for metric in h.playground_scores([1], 1)["scores"]:
        mark = f"{before[metric]:.3f} → {after[metric]:.3f}"
        assert (mark in shown) == (f"{before[metric]:.3f}" != f"{after[metric]:.3f}"), metric
    assert "0.500 → 1.000" in shown  # the reciprocal rank doubles
    widget.k.value, widget.missed.value, widget.reveal.value = 2, 1, True
    widget.reset()
    assert widget.gains == [0, 2, 0, 1, 0, 0, 1, 0, 0, 0] and widget.k.value == 5 and widget.missed.value == 0
    assert widget.reveal.value is False and "rw-concealed" in widget.ui._dom_classes
    assert widget.result["scores"] == before and "rw-changed" not in widget.scores_html.value


def test_a_binary_playground_with_the_metrics_taught_so_far():
    widget = h.playground_widget(gains=[0, 0, 1, 0, 0, 1], k=3, metrics=["recall", "precision"], max_gain=1)
    shown = widget.scores_html.value
    assert "recall@3" in shown and "precision@3" in shown and "nDCG" not in shown and "RR@" not in shown
    button = widget.buttons[0]
    for expected in (1, 0, 1):  # a click toggles relevant / not relevant
        button.click()
        assert widget.gains[0] == expected
    assert widget.result["scores"]["recall"] == h.recall_at_k(["a", "b", "c", "d", "e", "f"], {"a", "c", "f"}, 3)


def test_the_top_k_is_framed_and_the_legend_says_so():
    widget = h.playground_widget(k=4)
    assert [b.layout.border for b in widget.buttons].count("3px solid #111") == 4
    assert all(b.layout.border == "3px solid #111" for b in widget.buttons[:4])
    assert "framed = in the top k" in widget.ui.children[0].value


@pytest.mark.parametrize("gains, k", [((0, 1, 2), 4), ((0, 2, 0, 1, 0, 0, 1, 0, 0, 0), 11)])
def test_a_starting_k_past_the_last_result_is_refused_not_moved(gains, k):
    """The slider ends at the last result; ipywidgets would quietly show k = len(gains) instead."""
    with pytest.raises(ValueError, match=rf"k = {k} is outside the slider's range 1 to {len(gains)}"):
        h.playground_widget(gains, k)
