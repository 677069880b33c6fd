"""retrieval_eval/widgets/rank_slider.py: the 1/rank slider of notebook 03, checked against reciprocal_rank."""

import pytest

import helpers as h


def test_every_rank_and_cut_off_gives_the_reciprocal_rank():
    widget = h.rank_slider_widget(rank=1, k=3)
    for k in (1, 3, 10):
        for rank in range(1, 11):
            widget.rank.value, widget.k.value = rank, k
            ranking = ["r" if i == rank else f"x{i}" for i in range(1, 11)]
            scores = widget.result["scores"]
            assert scores["RR"] == h.reciprocal_rank(ranking, {"r"}) == pytest.approx(1 / rank)
            assert scores[f"RR@{k}"] == h.reciprocal_rank(ranking, {"r"}, k) == (1 / rank if rank <= k else 0)
            assert f"<span class='rw-num'>{1 / rank:.3f}</span>" in widget.readout.value
            assert widget.result["gains"] == [int(i == rank) for i in range(1, 11)]


def test_moving_the_relevant_result_marks_the_change():
    widget = h.rank_slider_widget(rank=3, k=3)
    widget.rank.value = 4
    assert "RR <span class='rw-num'>0.333 → 0.250</span>" in widget.readout.value
    assert "RR@3 <span class='rw-num'>0.333 → 0.000</span>" in widget.readout.value
    assert "rank 4 &gt; k = 3" in widget.readout.value or "rank 4 > k = 3" in widget.readout.value
    widget.reset()
    assert (widget.rank.value, widget.k.value) == (3, 3) and "Changed" not in widget.readout.value


def test_rank_slider_refuses_bad_input():
    with pytest.raises(ValueError, match="rank must be an integer from 1 to n = 10, got 11"):
        h.rank_slider_scores(11, 3)
    with pytest.raises(ValueError, match="k must be >= 1"):
        h.rank_slider_scores(1, 0)
    with pytest.raises(ValueError, match="rank must be an integer from 1 to n = 10, got True"):
        h.rank_slider_widget(rank=True)


@pytest.mark.parametrize("k", [0, 11, 2.5])
def test_a_starting_k_outside_the_slider_is_refused_not_moved(k):
    with pytest.raises(ValueError, match=r"outside the slider.s range 1 to 10|k must be"):
        h.rank_slider_widget(rank=3, k=k)
